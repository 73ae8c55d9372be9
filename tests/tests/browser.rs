//! The office's web pages in a real browser: headless Chromium (through chromedriver) on the
//! pages of the real `taxi-fiscal demo` process, with real device stores syncing around it.
//!
//! The story: an officer writes an auto offline on the tablet and syncs; on the phone (the same
//! officer's second device) the draft's facts are rewritten while the tablet rewrites them too
//! and issues it, so the server's record has two concurrent versions of the facts. The office
//! logs in through the login form (typing, Enter), opens the record, keeps one version, reviews,
//! proposes and decides a 15-day suspension, registers the ciência (the page computes the art. 35
//! deadline) and an appeal. The tablet's next sync brings the suspension in the registry, and
//! its check of that taxi is irregular, citing it. A screenshot of the record page is kept as a
//! test artifact. The clerk also changes the password from the page header's link, logs out and
//! logs in with the new one. Every wait has a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use chrono::Duration;
use e2e::api::{ADMIN, OFFICE};
use e2e::browser::Element;
use e2e::browser::{Browser, ENTER, is_png};
use e2e::{Api, Device, Server};
use serde_json::json;
use sync_core::domain::{DriverId, Plate};
use sync_core::field::NewInfraction;
use sync_core::records::{LegalBasis, Signature};
use sync_core::rules::{CheckInput, Observation, Overall, RulesConfig, VehicleQuery, Verdict};

const FACTS_TABLET: &str = "Condutor recusou corrida curta ao Hospital Municipal e ofendeu o \
    passageiro (versão do tablet).";
/// A photo of the scene (the demo's drawing of a taxi): a real PNG the page must display.
const SCENE_PHOTO: &[u8] = include_bytes!("../../server/src/demo/foto-1.png");
const FACTS_PHONE: &str = "Condutor recusou corrida curta (versão do celular).";

/// A taxi of stand S03 whose holder may drive it today: (plate, holder's CPF).
fn regular_taxi_of_s03(d: &Device) -> (String, String) {
    let reg = d.store.export_registry().unwrap();
    for p in reg.permits.iter().filter(|p| p.stand_id == "S03") {
        let holder = reg.people.iter().find(|x| x.id == p.holder_id).unwrap();
        let vehicle = reg.vehicles.iter().find(|v| v.id == p.vehicle_id).unwrap();
        let taxi = (
            vehicle.plate.canonical().to_owned(),
            holder.cpf.as_str().to_owned(),
        );
        if check(d, &taxi).overall == Overall::Regular {
            return taxi;
        }
    }
    panic!("no regular taxi at S03 in the demo registry");
}

fn check(d: &Device, (plate, cpf): &(String, String)) -> Verdict {
    d.store
        .check(&CheckInput {
            vehicle: VehicleQuery::Plate(Plate::parse(plate).unwrap()),
            driver: DriverId::parse(cpf).unwrap(),
            at: d.now(),
            observation: Observation::default(),
            registry_refreshed_at: None,
        })
        .unwrap()
}

#[test]
fn the_office_resolves_a_conflict_and_decides_a_suspension_that_reaches_the_device() {
    let dir = tempfile::tempdir().unwrap();
    // The demo as users start it: its sample records (duplicates, a conflict) are there too.
    let server = Server::start_demo_with_samples(&dir.path().join("dados"));
    let admin = Api::login(&server.url, ADMIN);
    let (s, v) = admin.post(
        "/v1/devices",
        &json!({"id": "celular-fiscal-teste", "user_id": "u-fiscal",
                "label": "Celular de teste do fiscal"}),
    );
    assert_eq!(s, 201, "{v}");
    let mut tablet = Device::login(
        "tablet",
        &server.url,
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    let mut phone = Device::login(
        "celular",
        &server.url,
        "celular-fiscal-teste",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    tablet.sync_ok();
    phone.sync_ok();
    let taxi = regular_taxi_of_s03(&tablet);
    assert_eq!(check(&tablet, &taxi).overall, Overall::Regular);

    // Offline on the tablet: a draft auto, then back online.
    let at = tablet.now();
    let draft = tablet
        .field()
        .create_infraction(NewInfraction {
            vehicle: VehicleQuery::Plate(Plate::parse(&taxi.0).unwrap()),
            driver: DriverId::parse(&taxi.1).unwrap(),
            driver_name: None,
            at,
            monotonic: u64::try_from(at.timestamp_millis()).unwrap(),
            observation: Observation::default(),
            position: None,
            facts: Some("Condutor recusou corrida.".into()),
            extra_legal_basis: vec![LegalBasis {
                rule_id: "R28".into(),
                citation: "Lei 4.019/2004, art. 19, VIII; art. 31, VII".into(),
            }],
            witnesses: Vec::new(),
            photos: vec![SCENE_PHOTO.to_vec()],
            confirm_vehicle: true,
            issue: None,
        })
        .unwrap();
    let id = draft.id.clone();
    assert_eq!(tablet.sync_ok().records.unwrap().acked, 1);
    phone.sync_ok();
    assert!(phone.has(&id), "the phone received the draft");
    // Both devices rewrite the facts without seeing each other; the tablet issues.
    let at = phone.now();
    phone.field().set_facts(&id, at, FACTS_PHONE).unwrap();
    let now = tablet.now();
    tablet.field().set_facts(&id, now, FACTS_TABLET).unwrap();
    tablet
        .field()
        .issue(
            &id,
            now,
            Signature::Missing {
                reason: "recusou-se a assinar".into(),
            },
        )
        .unwrap();
    phone.sync_ok();
    tablet.sync_ok();
    phone.sync_ok();
    let office = Api::login(&server.url, OFFICE);
    let detail = office.record(&id);
    let conflicts = detail["record"]["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{detail}");
    assert_eq!(conflicts[0]["field"], "facts");
    let number = detail["record"]["number"].as_str().unwrap().to_owned();

    // ------------------------------------------------------------------ the browser
    let browser = Browser::start();
    let record_url = format!("{}/escritorio/registros/{id}", server.url);
    browser.goto(&record_url);
    // Not logged in: the login form, which returns to the record after login.
    browser.wait_for("#form-login");
    let html_lang = browser.execute("return document.documentElement.lang", vec![]);
    assert_eq!(html_lang, json!("pt-BR"));
    browser.fill("#usuario", "escritorio");
    let password = browser.wait_for("#senha");
    browser.send_keys(&password, "escritorio-demo");
    browser.type_and_wait(&password, ENTER);
    browser.wait_for("#conflito-facts");
    assert!(
        browser
            .current_url()
            .ends_with(&format!("/escritorio/registros/{id}"))
    );
    assert!(
        browser.text_of("#registro-numero").contains(&number),
        "{}",
        browser.text_of("#registro-numero")
    );
    // The two versions side by side; keep the tablet's.
    let values: Vec<String> = browser
        .find_all("#conflito-facts .valor pre")
        .iter()
        .map(|e| browser.text(e))
        .collect();
    assert_eq!(values.len(), 2, "{values:?}");
    assert!(values.iter().any(|v| v == FACTS_PHONE), "{values:?}");
    let n = values.iter().position(|v| v == FACTS_TABLET).unwrap() + 1;
    let keep = browser.wait_for(&format!("#conflito-facts-escolher-{n}"));
    browser.click_and_wait(&keep);
    browser.wait_for("#aviso");
    assert!(
        browser.find("#conflito-facts").is_none(),
        "conflict resolved"
    );
    assert!(browser.text_of("#prova-fatos").contains(FACTS_TABLET));
    // The photo went up after its record and the page shows its thumbnail (decoded by the
    // browser, at the thumbnail's size: the original is 480 px wide).
    let img = browser.wait_for("#foto-1");
    let width = browser.wait_until("the photo to load", || {
        let w = browser.property(&img, "naturalWidth").as_u64().unwrap_or(0);
        (w > 0).then_some(w)
    });
    assert_eq!(
        u32::try_from(width).unwrap(),
        taxi_fiscal_server::limits::THUMBNAIL_MAX_SIDE_PX
    );

    // Review, proposal and decision of a 15-day suspension (art. 32, III).
    let step = |button: &str| {
        let b = browser.wait_for(button);
        browser.click_and_wait(&b);
        if let Some(e) = browser.find("#erro-acao") {
            panic!("{button} refused: {}", browser.text(&e));
        }
        browser.wait_for("#aviso");
    };
    step("#analisar");
    browser.select("#proposta-penalidade", "suspensao-15");
    step("#propor");
    browser.select("#decisao-penalidade", "suspensao-15");
    // A suspension changes the registry: the confirmation page says how, then it is stored.
    let decide = browser.wait_for("#decidir");
    browser.click_and_wait(&decide);
    let effect = browser.text_of("#efeitos-cadastro");
    assert!(effect.contains("ficará suspenso de"), "{effect}");
    step("#confirmar");
    let decision = browser.text_of("#decisao-vigente");
    assert!(
        decision.contains("15 dias") && decision.contains("art. 32, III"),
        "{decision}"
    );

    // The notification of the decision, for everyone charged; the page links its PDF and
    // the ciência offers it.
    step("#gerar-notificacao");
    assert!(
        browser.text_of("#aviso").contains("NP-"),
        "{}",
        browser.text_of("#aviso")
    );
    assert!(browser.find("#tabela-notificacoes").is_some());
    // Ciência today by the notification's signature: the page computes the art. 35 deadline.
    browser.select("#ciencia-meio", "assinatura");
    step("#registrar-ciencia");
    let events = browser.text_of("#linha-do-tempo");
    assert!(events.contains("notificação NP-"), "{events}");
    let today = sync_core::time::local_date(chrono::Utc::now());
    let deadline =
        sync_core::rules::deadline::appeal_deadline(today, &RulesConfig::default().calendar)
            .unwrap()
            .deadline;
    assert_eq!(
        browser.text_of("#prazo-recurso-data"),
        deadline.format("%d/%m/%Y").to_string()
    );
    // The appeal to the Prefeito (art. 33), filed today: within the deadline.
    step("#interpor-recurso");
    let prazo = browser.text_of("#prazo-recurso");
    assert!(prazo.contains("recurso interposto"), "{prazo}");
    let kinds: Vec<String> = browser
        .find_all("#linha-do-tempo li")
        .iter()
        .map(|e| browser.text(e))
        .collect();
    assert!(kinds.len() >= 7, "{kinds:?}");
    assert!(
        browser.find_all("#tabela-eventos tr.invalido").is_empty(),
        "no refused event: {kinds:?}"
    );

    // The record page as the office saw it, kept as an artifact.
    let shot = browser.save_screenshot("record-page.png");
    println!("screenshot of the record page: {}", shot.display());
    assert!(is_png(&shot), "{}", shot.display());

    // Anyone holding the notification checks it on the public page, typing its code: authentic,
    // and the appeal filed since is its current state.
    let code = browser.text_of("#tabela-notificacoes tbody tr td code");
    browser.goto(&format!("{}/verificar", server.url));
    browser.fill("#verificar-codigo", &code.to_lowercase());
    let submit = browser.wait_for("#verificar");
    browser.click_and_wait(&submit);
    let ok = browser.text_of("#verificacao-autentica");
    assert!(ok.contains("autêntico"), "{ok}");
    let state = browser.text_of("#verificacao-situacao");
    assert!(state.to_lowercase().contains("recurso"), "{state}");
    // An appeal filed, not yet ruled on, replaces nothing.
    assert!(browser.find("#verificacao-substituida").is_none());
    assert!(
        !browser.source().contains(&taxi.1),
        "no CPF on the public page"
    );
    let shot = browser.save_screenshot("verification-page.png");
    assert!(is_png(&shot), "{}", shot.display());
    drop(browser);

    // The device: its next sync brings the suspension, and its check of the taxi cites it.
    let s = tablet.sync_ok();
    assert!(s.registry.is_some(), "{s:?}");
    let verdict = check(&tablet, &taxi);
    assert_eq!(verdict.overall, Overall::Irregular, "{verdict:?}");
    assert!(
        verdict
            .findings
            .iter()
            .any(|f| f.message.to_lowercase().contains("suspens")),
        "{:?}",
        verdict.findings
    );
    // The audit chain of the whole story verifies.
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

#[test]
fn the_demo_sample_records_show_as_duplicates_and_a_conflict_in_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_with_samples(&dir.path().join("dados"));
    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    // The inbox lists the three sample records; the duplicates page groups two of them.
    browser.wait_for("#tabela-registros");
    let total = browser.text_of("#total-registros");
    assert!(total.starts_with("3 registro"), "{total}");
    let menu = browser.wait_for("#menu-duplicatas");
    browser.click_and_wait(&menu);
    let groups = browser.find_all("[id^=\"grupo-\"]");
    assert_eq!(groups.len(), 1, "{}", browser.source());
    // The sample record with a conflict shows both versions of the facts, each with its device.
    let office = Api::login(&server.url, OFFICE);
    let (_, page) = office.get("/v1/records?limit=10");
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{page}");
    let conflicted: Vec<&str> = items
        .iter()
        .filter(|r| r["conflicts"].as_u64() > Some(0))
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(conflicted.len(), 1, "{page}");
    browser.goto(&format!(
        "{}/escritorio/registros/{}",
        server.url, conflicted[0]
    ));
    browser.wait_for("#conflito-facts");
    let versions = browser.find_all("#conflito-facts .valor");
    assert_eq!(versions.len(), 2);
    let texts: Vec<String> = versions.iter().map(|v| browser.text(v)).collect();
    assert!(
        texts[0].contains("Tablet do fiscal 02") || texts[1].contains("Tablet do fiscal 02"),
        "{texts:?}"
    );
    assert!(
        texts[0].contains("Celular do fiscal 02") || texts[1].contains("Celular do fiscal 02"),
        "{texts:?}"
    );
    // The registry pages: search a permit by number and open it.
    let menu = browser.wait_for("#menu-alvaras");
    browser.click_and_wait(&menu);
    browser.fill("#busca-alvaras", "7");
    let search = browser.wait_for("#buscar-alvaras");
    browser.click_and_wait(&search);
    let link = browser.wait_for("#abrir-alvara-0007");
    browser.click_and_wait(&link);
    let situacao = browser.text_of("#situacao-alvara");
    assert!(situacao.contains("suspenso"), "{situacao}");
    // A renewal the law refuses (unpaid fine, art. 17, § 2º, III): the page says why, cites
    // the rule, and keeps the typed year.
    browser.goto(&format!("{}/escritorio/alvaras/0019", server.url));
    let year = sync_core::time::local_date(chrono::Utc::now())
        .format("%Y")
        .to_string();
    browser.fill("#renovacao-ano", &year);
    let renew = browser.wait_for("#renovar");
    browser.click_and_wait(&renew);
    let refusal = browser.text_of("#erro-renovacao");
    assert!(
        refusal.contains("R27") && refusal.contains("art. 17"),
        "{refusal}"
    );
    let typed = browser.property(&browser.wait_for("#renovacao-ano"), "value");
    assert_eq!(typed, json!(year));
    let shot = browser.save_screenshot("permit-page-refusal.png");
    println!("screenshot of a refused renewal: {}", shot.display());
    assert!(is_png(&shot));
    // Keyboard: the skip link is the first stop of Tab and leads to the content.
    let body = browser.wait_for("body");
    browser.send_keys(&body, "\u{E004}");
    let skip = browser.wait_for("a.pular");
    assert!(
        browser.is_focused(&skip),
        "the skip link takes the first Tab"
    );
}

/// The law's parameters page (`/escritorio/lei`) in the browser: an absurd IPCA is refused in
/// Portuguese with what was typed kept and nothing stored; a municipal holiday entered through
/// the form is listed, and a device's next sync brings it in its replica's parameters.
#[test]
fn the_office_enters_a_holiday_on_the_law_page_and_the_device_receives_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let mut tablet = Device::login(
        "tablet",
        &server.url,
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    tablet.sync_ok();
    let office = Api::login(&server.url, OFFICE);
    let version = |api: &Api| {
        api.get("/v1/registry/status").1["version"]
            .as_u64()
            .unwrap()
    };
    let before = version(&office);

    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    browser.goto(&format!("{}/escritorio/lei", server.url));
    browser.wait_for("#lei-ipca");
    let next = browser.text_of("#lei-proximo-ipca");

    // 426 typed for 4,26: refused on the page, the form keeps it, nothing stored.
    browser.fill("#ipca-ano", &next);
    browser.fill("#ipca-indice", "426");
    let send = browser.wait_for("#cadastrar-ipca");
    browser.click_and_wait(&send);
    let error = browser.wait_for("#erro-form-ipca");
    assert!(!browser.text(&error).is_empty());
    let typed = browser.wait_for("#ipca-indice");
    assert_eq!(browser.property(&typed, "value"), json!("426"));
    assert_eq!(version(&office), before, "a refused index stores nothing");

    // A municipal holiday through the form: listed, a new registry version.
    browser.select("#feriado-tipo", "municipal");
    browser.fill("#feriado-dia", "27/08");
    browser.fill("#feriado-nome", "Aniversário de Americana");
    let add = browser.wait_for("#incluir-feriado");
    browser.click_and_wait(&add);
    browser.wait_text("#lei-feriados", "Aniversário de Americana");
    assert_eq!(version(&office), before + 1);

    // The tablet's next sync brings it with the registry's parameters.
    tablet.sync_ok();
    let store = sync_core::store::Store::open(tablet.path()).unwrap();
    let parameters = store.law_parameters().unwrap();
    assert!(
        parameters
            .rules
            .calendar
            .municipal
            .iter()
            .any(|h| h.name == "Aniversário de Americana" && h.month == 8 && h.day == 27),
        "{:?}",
        parameters.rules.calendar
    );
}

/// Pay a fine then renew: a permit whose renewal the law refuses for an unpaid fine (art. 17,
/// § 2º, III); the clerk follows the refusal's link to the fines page, records the payment
/// there, and the same renewal then succeeds on the permit page. A screenshot of the fines page
/// is kept as an artifact.
#[test]
fn the_clerk_pays_a_fine_on_the_fines_page_then_renews_the_permit() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let office = Api::login(&server.url, OFFICE);
    let permit = "0020";
    let (s, p) = office.get(&format!("/v1/permits/{permit}"));
    assert_eq!(s, 200, "{p}");
    let next_year = p["renewal_year"].as_i64().unwrap() + 1;
    let unpaid_of = |api: &Api| -> Vec<String> {
        let (s, fines) = api.get("/v1/fines");
        assert_eq!(s, 200, "{fines}");
        fines
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["permit_number"] == permit && f["paid_on"].is_null())
            .map(|f| f["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        unpaid_of(&office).is_empty(),
        "the demo's 0020 owes nothing"
    );
    let (s, v) = office.post(
        "/v1/fines",
        &json!({"permit_number": permit, "amount": "130.50"}),
    );
    assert_eq!(s, 201, "{v}");
    let fine = unpaid_of(&office).pop().unwrap();

    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    browser.wait_for("#menu-multas");
    let renew = |browser: &Browser| {
        browser.goto(&format!("{}/escritorio/alvaras/{permit}", server.url));
        browser.fill("#renovacao-ano", &next_year.to_string());
        let button = browser.wait_for("#renovar");
        browser.click_and_wait(&button);
    };

    // Refused for the unpaid fine, which the refusal names and links.
    renew(&browser);
    let refusal = browser.text_of("#erro-renovacao");
    assert!(
        refusal.contains("R27") && refusal.contains(&fine) && refusal.contains("art. 17"),
        "{refusal}"
    );
    let shot = browser.save_screenshot("renewal-refused-unpaid-fine.png");
    assert!(is_png(&shot), "{}", shot.display());
    let link = browser.wait_for(&format!("#erro-renovacao-multa-{fine}"));
    browser.click_and_wait(&link);
    browser.wait_for("#form-pagamento");
    let typed = browser.property(&browser.wait_for("#pagamento-multa"), "value");
    assert_eq!(typed, json!(fine), "the link fills in the fine");
    let row = browser.text_of(&format!("#multa-{fine}"));
    assert!(row.contains("não paga") && row.contains("130,50"), "{row}");
    let shot = browser.save_screenshot("fines-page.png");
    println!("screenshot of the fines page: {}", shot.display());
    assert!(is_png(&shot), "{}", shot.display());

    // The payment, dated today (the date left empty), through the page.
    let pay = browser.wait_for("#pagar");
    browser.click_and_wait(&pay);
    if let Some(e) = browser.find("#erro-pagamento") {
        panic!("payment refused: {}", browser.text(&e));
    }
    let aviso = browser.text_of("#aviso");
    assert!(
        aviso.contains(&format!("Pagamento da multa {fine}")),
        "{aviso}"
    );
    let row = browser.text_of(&format!("#multa-{fine}"));
    assert!(row.contains("paga em"), "{row}");
    assert!(unpaid_of(&office).is_empty(), "the registry has it paid");

    // The same renewal now goes through.
    renew(&browser);
    if let Some(e) = browser.find("#erro-renovacao") {
        panic!("renewal refused after the payment: {}", browser.text(&e));
    }
    let aviso = browser.text_of("#aviso");
    assert!(
        aviso.contains(&format!("renovado para {next_year}")),
        "{aviso}"
    );
    let shot = browser.save_screenshot("permit-renewed.png");
    assert!(is_png(&shot), "{}", shot.display());
    let (_, p) = office.get(&format!("/v1/permits/{permit}"));
    assert_eq!(p["renewal_year"].as_i64(), Some(next_year), "{p}");
    drop(browser);
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

#[test]
fn the_clerk_changes_the_password_on_the_page_and_logs_in_with_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let browser = Browser::start();
    let login = |password: &str| {
        browser.goto(&format!("{}/login", server.url));
        browser.fill("#usuario", "escritorio");
        browser.fill("#senha", password);
        let enter = browser.wait_for("#entrar");
        browser.click_and_wait(&enter);
    };
    login("escritorio-demo");

    // From the header, next to the user's name.
    let link = browser.wait_for("#minha-senha");
    browser.click_and_wait(&link);
    browser.wait_for("#form-senha");
    assert!(browser.title().starts_with("Alterar minha senha"));
    browser.fill("#senha-atual", "escritorio-demo");
    browser.fill("#senha-nova", "balcao-da-unidade-2026");
    browser.fill("#senha-confirmacao", "balcao-da-unidade-2026");
    let send = browser.wait_for("#alterar-senha");
    browser.click_and_wait(&send);
    browser.wait_text("#aviso", "Senha alterada");
    let shot = browser.save_screenshot("senha-alterada.png");
    assert!(is_png(&shot));

    let out = browser.wait_for("#sair");
    browser.click_and_wait(&out);
    browser.wait_for("#usuario");
    // The old password no longer opens a session; the new one does.
    login("escritorio-demo");
    browser.wait_text("#erro-login", "incorretos");
    login("balcao-da-unidade-2026");
    browser.wait_text("#usuario-atual", "Unidade de Transportes");
}

/// The ids of the forms "Próximo passo" offers (annulment and archiving, folded away, apart).
fn next_forms(browser: &Browser) -> Vec<String> {
    browser
        .find_all("#proximo-passo form")
        .iter()
        .filter_map(|f| browser.attr(f, "id"))
        .filter(|id| id != "form-anulacao" && id != "form-arquivamento")
        .collect()
}

/// Every control of the page's forms has a label, and nothing forces a tab order.
fn assert_keyboard_ready(browser: &Browser) {
    let unlabelled = browser.execute(
        "return [...document.querySelectorAll('form input:not([type=hidden]), form select, form textarea')]
            .filter(e => !e.id || !document.querySelector('label[for=\"' + e.id + '\"]'))
            .map(e => e.name)",
        vec![],
    );
    assert_eq!(unlabelled, json!([]), "controls without a label");
    let positive = browser.execute(
        "return [...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0).length",
        vec![],
    );
    assert_eq!(positive, json!(0), "a positive tabindex");
}

/// Reaches `button` with Tab from the top of the page and presses Enter, as a keyboard-only
/// clerk does; fails on a refusal.
fn keyboard_submit(browser: &Browser, button: &str) {
    assert_keyboard_ready(browser);
    let _: Element = browser.tab_to(button);
    browser.enter_and_wait();
    if let Some(e) = browser.find("#erro-acao") {
        panic!("{button} refused: {}", browser.text(&e));
    }
}

#[test]
fn a_full_procedure_from_the_inbox_to_a_decided_appeal_using_only_the_guided_steps() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let mut tablet = Device::login(
        "tablet",
        &server.url,
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    tablet.sync_ok();
    let taxi = regular_taxi_of_s03(&tablet);
    let at = tablet.now();
    let auto = tablet
        .field()
        .create_infraction(NewInfraction {
            vehicle: VehicleQuery::Plate(Plate::parse(&taxi.0).unwrap()),
            driver: DriverId::parse(&taxi.1).unwrap(),
            driver_name: None,
            at,
            monotonic: u64::try_from(at.timestamp_millis()).unwrap(),
            observation: Observation::default(),
            position: None,
            facts: Some("Condutor recusou corrida curta.".into()),
            extra_legal_basis: vec![LegalBasis {
                rule_id: "R28".into(),
                citation: "Lei 4.019/2004, art. 19, VIII; art. 31, VII".into(),
            }],
            witnesses: Vec::new(),
            photos: Vec::new(),
            confirm_vehicle: true,
            issue: None,
        })
        .unwrap();
    let id = auto.id.clone();
    let now = tablet.now();
    tablet
        .field()
        .issue(
            &id,
            now,
            Signature::Missing {
                reason: "recusou-se a assinar".into(),
            },
        )
        .unwrap();
    tablet.sync_ok();

    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    let password = browser.wait_for("#senha");
    browser.send_keys(&password, "escritorio-demo");
    browser.type_and_wait(&password, ENTER);
    // The inbox: the auto is there; open it with the keyboard.
    browser.wait_for("#tabela-registros");
    let shot = browser.save_screenshot("procedimento-01-caixa.png");
    assert!(is_png(&shot), "{}", shot.display());
    browser.tab_to(&format!("#abrir-{id}"));
    browser.enter_and_wait();
    let title = browser.text_of("h1");
    assert!(title.starts_with("Auto nº "), "{title}");

    // Each phase: exactly the forms the law allows, then the step through the keyboard.
    let phase = |shot: &str, expected: &[&str]| {
        let forms = next_forms(&browser);
        assert_eq!(forms, expected, "{shot}");
        let path = browser.save_screenshot(shot);
        assert!(is_png(&path), "{}", path.display());
    };
    phase(
        "procedimento-02-emitido.png",
        &["form-analise", "form-classificacao"],
    );
    keyboard_submit(&browser, "#analisar");
    phase(
        "procedimento-03-em-analise.png",
        &["form-classificacao", "form-proposta"],
    );
    browser.fill("#classificacao-regras", "R28");
    keyboard_submit(&browser, "#classificar");
    browser.select("#proposta-penalidade", "suspensao-15");
    keyboard_submit(&browser, "#propor");
    phase(
        "procedimento-04-proposta.png",
        &["form-classificacao", "form-proposta", "form-decisao"],
    );
    browser.select("#decisao-penalidade", "suspensao-15");
    keyboard_submit(&browser, "#decidir");
    // The confirmation: what the registry will say, and nothing stored yet.
    let effect = browser.text_of("#efeitos-cadastro");
    assert!(effect.contains("ficará suspenso de"), "{effect}");
    let shot = browser.save_screenshot("procedimento-05-confirmacao.png");
    assert!(is_png(&shot), "{}", shot.display());
    let office = Api::login(&server.url, OFFICE);
    assert_eq!(office.record(&id)["record"]["status"], "penalty_proposed");
    keyboard_submit(&browser, "#confirmar");
    browser.wait_for("#aviso");
    assert_eq!(office.record(&id)["record"]["status"], "penalty_decided");
    phase("procedimento-06-decidido.png", &["form-ciencia"]);
    keyboard_submit(&browser, "#gerar-notificacao");
    browser.select("#ciencia-meio", "assinatura");
    keyboard_submit(&browser, "#registrar-ciencia");
    phase(
        "procedimento-07-ciencia.png",
        &["form-ciencia", "form-reconsideracao", "form-recurso"],
    );
    keyboard_submit(&browser, "#interpor-recurso");
    phase("procedimento-08-recurso.png", &["form-decisao-recurso"]);
    browser.select("#recurso-resultado", "cancelada");
    keyboard_submit(&browser, "#decidir-recurso");
    let effect = browser.text_of("#efeitos-cadastro");
    assert!(effect.contains("sai do cadastro"), "{effect}");
    keyboard_submit(&browser, "#confirmar");
    browser.wait_for("#aviso");
    assert!(
        browser
            .text_of("#registro-situacao")
            .contains("recurso decidido")
    );
    phase("procedimento-09-recurso-decidido.png", &["form-ciencia"]);
    // The dated timeline holds every step, in order.
    let timeline = browser.text_of("#linha-do-tempo");
    let mut from = 0;
    for step in [
        "Emissão",
        "Análise",
        "Classificação",
        "Proposta de penalidade",
        "Decisão de penalidade",
        "Ciência",
        "Recurso",
        "Decisão do recurso",
    ] {
        let at = timeline[from..]
            .find(step)
            .unwrap_or_else(|| panic!("{step} after {from} in {timeline}"));
        from += at + step.len();
    }
    assert_eq!(office.record(&id)["record"]["status"], "appeal_decided");
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

/// Logs the clerk in through the login form.
fn office_login(browser: &Browser, server: &Server) {
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    browser.wait_for("#menu-pessoas");
}

/// Add an auxiliary: on the permit page the clerk chooses a person of the registry (the holder
/// of 0001, which art. 8 allows) as auxiliary driver of 0002; a third auxiliary on 0003 is
/// refused citing art. 8 with the choice kept; then the auxiliary is removed with its button.
/// Screenshots of the permit page at each step are kept.
#[test]
fn the_clerk_adds_and_removes_an_auxiliary_driver_on_the_permit_page() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let office = Api::login(&server.url, OFFICE);
    let browser = Browser::start();
    office_login(&browser, &server);
    let auxiliaries = |number: &str| -> Vec<String> {
        let (s, p) = office.get(&format!("/v1/permits/{number}"));
        assert_eq!(s, 200, "{p}");
        p["auxiliaries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["person_id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(auxiliaries("0002").is_empty());
    assert_eq!(auxiliaries("0003").len(), 2);

    // A third on 0003: refused by art. 8, the person still chosen.
    browser.goto(&format!("{}/escritorio/alvaras/0003", server.url));
    browser.select("#auxiliar-pessoa", "P0001");
    let add = browser.wait_for("#incluir-auxiliar");
    browser.click_and_wait(&add);
    let refusal = browser.text_of("#erro-auxiliar");
    assert!(
        refusal.contains("R13") && refusal.contains("art. 8"),
        "{refusal}"
    );
    let chosen = browser.property(&browser.wait_for("#auxiliar-pessoa"), "value");
    assert_eq!(chosen, json!("P0001"));
    let shot = browser.save_screenshot("auxiliary-refused-art-8.png");
    assert!(is_png(&shot), "{}", shot.display());
    assert_eq!(auxiliaries("0003").len(), 2, "nothing stored");

    // On 0002, which has none: added (the auxiliary's alvará number comes filled in).
    browser.goto(&format!("{}/escritorio/alvaras/0002", server.url));
    let licence = browser.property(&browser.wait_for("#auxiliar-alvara"), "value");
    assert_eq!(licence, json!("0002-A1"));
    browser.select("#auxiliar-pessoa", "P0001");
    let add = browser.wait_for("#incluir-auxiliar");
    browser.click_and_wait(&add);
    if let Some(e) = browser.find("#erro-auxiliar") {
        panic!("auxiliary refused: {}", browser.text(&e));
    }
    browser.wait_text("#aviso", "incluído como motorista auxiliar do alvará 0002");
    browser.wait_for("#auxiliar-P0001");
    let shot = browser.save_screenshot("auxiliary-added.png");
    assert!(is_png(&shot), "{}", shot.display());
    assert_eq!(auxiliaries("0002"), vec!["P0001".to_owned()]);

    // Removed with the button on its row.
    let remove = browser.wait_for("#remover-auxiliar-P0001");
    browser.click_and_wait(&remove);
    browser.wait_text("#aviso", "deixou de ser motorista auxiliar do alvará 0002");
    assert!(browser.find("#auxiliar-P0001").is_none());
    let shot = browser.save_screenshot("auxiliary-removed.png");
    assert!(is_png(&shot), "{}", shot.display());
    assert!(auxiliaries("0002").is_empty());
    drop(browser);
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

/// Grant a permit: the holder and the vehicle in their name are in the registry; the clerk
/// revokes permit 0010 on its page (its place at the stand stays open), opens "Conceder um
/// alvará" from the permits list, is refused at a stand without a free place (art. 14, the
/// choices kept), then grants the permit at the open place. Screenshots of each page are kept.
#[test]
fn the_clerk_grants_a_permit_at_an_open_place_after_a_refusal_at_a_full_stand() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let office = Api::login(&server.url, OFFICE);
    let today = sync_core::time::local_date(chrono::Utc::now());
    let cpf = sync_core::domain::Cpf::from_base([9, 8, 7, 6, 5, 4, 3, 2, 1]).unwrap();
    let cnh = sync_core::domain::CnhNumber::from_base([1, 3, 5, 7, 9, 2, 4, 6, 8]).unwrap();
    let (s, v) = office.post(
        "/v1/people",
        &json!({
            "id": "P9001", "name": "Rita de Cássia Moraes", "cpf": cpf.as_str(),
            "birth_date": "1980-05-17",
            "licence": {"number": cnh.as_str(), "category": "B", "first_licence_date": "2010-03-01",
                        "expiry": (today + Duration::days(900)).to_string(), "kind": "D",
                        "observations": ["EAR"]}
        }),
    );
    assert_eq!(s, 201, "{v}");
    let renavam = sync_core::domain::Renavam::from_base([2, 2, 3, 4, 5, 6, 7, 8, 9, 1]).unwrap();
    let (s, v) = office.post(
        "/v1/vehicles",
        &json!({
            "id": "V9001", "plate": "RDC2B34", "renavam": renavam.as_str(),
            "make_model": "Chevrolet Spin", "colour": "Branco", "year_of_manufacture": 2024,
            "doors": 4, "capacity_incl_driver": 5, "licensing_municipality": "AMERICANA",
            "licensing_uf": "SP", "category": "aluguel", "owner_cpf": cpf.as_str(),
            "taximeter": {"certificate_number": "IPEM-SP-424242",
                          "verified_on": (today - Duration::days(30)).to_string(),
                          "valid_until_year": 2027, "seal_intact": true}
        }),
    );
    assert_eq!(s, 201, "{v}");
    let (_, p10) = office.get("/v1/permits/0010");
    let open = p10["stand_id"].as_str().unwrap().to_owned();
    let full = if open == "S01" { "S02" } else { "S01" };

    let browser = Browser::start();
    office_login(&browser, &server);
    // 0010 revoked today on its page: its place is open.
    browser.goto(&format!("{}/escritorio/alvaras/0010", server.url));
    browser.select("#situacao-nova", "cassado");
    let change = browser.wait_for("#mudar-situacao");
    browser.click_and_wait(&change);
    browser.wait_text("#aviso", "cassado em");
    let shot = browser.save_screenshot("permit-revoked.png");
    assert!(is_png(&shot), "{}", shot.display());

    // From the permits list to the grant page.
    browser.goto(&format!("{}/escritorio/alvaras", server.url));
    let link = browser.wait_for("#conceder-alvara");
    browser.click_and_wait(&link);
    browser.wait_for("#form-concessao");
    let number = browser.property(&browser.wait_for("#concessao-numero"), "value");
    assert_eq!(number, json!("0122"));
    browser.select("#concessao-titular", "P9001");
    browser.select("#concessao-veiculo", "V9001");
    browser.select("#concessao-ponto", full);
    let grant = browser.wait_for("#conceder");
    browser.click_and_wait(&grant);
    let refusal = browser.text_of("#erro-concessao");
    assert!(
        refusal.contains("R23") && refusal.contains("art. 14"),
        "{refusal}"
    );
    for (id, value) in [
        ("#concessao-titular", "P9001"),
        ("#concessao-veiculo", "V9001"),
        ("#concessao-ponto", full),
    ] {
        assert_eq!(
            browser.property(&browser.wait_for(id), "value"),
            json!(value),
            "{id}"
        );
    }
    let shot = browser.save_screenshot("grant-refused-full-stand.png");
    assert!(is_png(&shot), "{}", shot.display());
    let (s, _) = office.get("/v1/permits/0122");
    assert_eq!(s, 404, "nothing granted");

    // At the open place: granted, and the new permit's page says so.
    browser.select("#concessao-ponto", &open);
    let grant = browser.wait_for("#conceder");
    browser.click_and_wait(&grant);
    if let Some(e) = browser.find("#erro-concessao") {
        panic!("grant refused: {}", browser.text(&e));
    }
    browser.wait_text("#aviso", "Alvará 0122 concedido.");
    assert!(browser.title().starts_with("Alvará 0122"));
    let shot = browser.save_screenshot("permit-granted.png");
    assert!(is_png(&shot), "{}", shot.display());
    // The holder, the vehicle and the stand from the menu, each with its page.
    let menu = browser.wait_for("#menu-pessoas");
    browser.click_and_wait(&menu);
    let search = browser.wait_for("#busca-pessoas");
    browser.type_and_wait(&search, &format!("{}{ENTER}", cpf.masked()));
    let open_person = browser.wait_for("#abrir-pessoa-P9001");
    browser.click_and_wait(&open_person);
    let links = browser.text_of("#vinculos-pessoa");
    assert!(
        links.contains("Titular do alvará 0122") && links.contains("RDC2B34"),
        "{links}"
    );
    let shot = browser.save_screenshot("person-page.png");
    assert!(is_png(&shot), "{}", shot.display());
    let menu = browser.wait_for("#menu-veiculos");
    browser.click_and_wait(&menu);
    let search = browser.wait_for("#busca-veiculos");
    browser.type_and_wait(&search, &format!("rdc-2b34{ENTER}"));
    let open_vehicle = browser.wait_for("#abrir-veiculo-V9001");
    browser.click_and_wait(&open_vehicle);
    assert!(browser.text_of("#dados-veiculo").contains("0122"));
    let shot = browser.save_screenshot("vehicle-page.png");
    assert!(is_png(&shot), "{}", shot.display());
    let menu = browser.wait_for("#menu-pontos");
    browser.click_and_wait(&menu);
    let open_stand = browser.wait_for(&format!("#abrir-ponto-{open}"));
    browser.click_and_wait(&open_stand);
    browser.wait_for("#form-coordenador");
    let shot = browser.save_screenshot("stand-page.png");
    assert!(is_png(&shot), "{}", shot.display());
    let (s, p) = office.get("/v1/permits/0122");
    assert_eq!(s, 200, "{p}");
    assert_eq!(p["holder_id"], "P9001");
    assert_eq!(p["stand_id"], json!(open));
    drop(browser);
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

/// The administrator's session in `browser`.
fn admin_logs_in(browser: &Browser, server: &Server) {
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "admin");
    browser.fill("#senha", "admin-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    browser.wait_for("#menu-usuarios");
}

#[test]
fn the_admin_gives_a_reset_link_and_the_user_sets_a_new_password_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let browser = Browser::start();
    admin_logs_in(&browser, &server);
    let menu = browser.wait_for("#menu-usuarios");
    browser.click_and_wait(&menu);
    browser.wait_for("#tabela-usuarios");
    assert!(is_png(&browser.save_screenshot("usuarios.png")));
    let reset = browser.wait_for("#redefinir-fiscal");
    browser.click_and_wait(&reset);
    let link = browser.wait_for("#link-redefinicao");
    let url = browser.attr(&link, "href").unwrap();
    assert!(
        url.starts_with(&format!("{}/redefinir-senha/", server.url)),
        "{url}"
    );
    assert!(is_png(&browser.save_screenshot("codigo-redefinicao.png")));
    let out = browser.wait_for("#sair");
    browser.click_and_wait(&out);

    // The user opens the link (no session), chooses the new password, and logs in with it.
    browser.goto(&url);
    browser.wait_text("#form-redefinir", "Nova senha");
    assert!(is_png(&browser.save_screenshot("redefinir-senha.png")));
    browser.fill("#senha-nova", "rua-das-palmeiras-77");
    browser.fill("#senha-confirmacao", "rua-das-palmeiras-77");
    let send = browser.wait_for("#redefinir");
    browser.click_and_wait(&send);
    browser.wait_text("#senha-redefinida", "redefinida");
    // The link was for once.
    browser.goto(&url);
    browser.wait_text("#erro-redefinicao", "já foi usado");
    let login = |password: &str| {
        browser.goto(&format!("{}/login", server.url));
        browser.fill("#usuario", "fiscal");
        browser.fill("#senha", password);
        let enter = browser.wait_for("#entrar");
        browser.click_and_wait(&enter);
    };
    login("fiscal-demo");
    browser.wait_text("#erro-login", "incorretos");
    login("rua-das-palmeiras-77");
    browser.wait_text("#usuario-atual", "fiscal");
    // An officer's "Sem permissão" page has the header only, no office menu.
    assert!(browser.find("nav").is_none(), "{}", browser.source());
    assert!(is_png(&browser.save_screenshot("sem-permissao-fiscal.png")));
    // The tablet logs in with it too.
    Api::login(
        &server.url,
        ("fiscal", "rua-das-palmeiras-77", "tablet-fiscal-01"),
    );
}

#[test]
fn the_admin_enrols_a_tablet_with_a_code_and_its_record_reaches_the_office() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let browser = Browser::start();
    admin_logs_in(&browser, &server);
    let menu = browser.wait_for("#menu-dispositivos");
    browser.click_and_wait(&menu);
    browser.wait_for("#tabela-dispositivos");
    browser.select("#codigo-usuario", "u-fiscal");
    let generate = browser.wait_for("#gerar-codigo-cadastro");
    browser.click_and_wait(&generate);
    let code = browser.text_of("#codigo-cadastro");
    assert!(browser.find("#qr-cadastro svg").is_some());
    assert!(is_png(&browser.save_screenshot("codigo-cadastro.png")));

    // The tablet reads the code, enrols, logs in on the device it got, and syncs an auto.
    let mut tablet = Device::enrol(
        "tablet-novo",
        &server.url,
        code.trim(),
        "Tablet novo da GM",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    tablet.sync_ok();
    let (plate, cpf) = regular_taxi_of_s03(&tablet);
    let id = tablet
        .infraction(
            &plate,
            &cpf,
            "Condutor recusou corrida (tablet cadastrado por código).",
        )
        .id;
    assert_eq!(tablet.sync_ok().records.unwrap().acked, 1);

    // The devices page lists it; revoking asks first.
    browser.goto(&format!("{}/escritorio/dispositivos", server.url));
    let row = format!("#dispositivo-{}", tablet.server_device_id);
    browser.wait_text(&row, "Tablet novo da GM");
    assert!(is_png(&browser.save_screenshot("dispositivos.png")));
    let revoke = browser.wait_for(&format!("#revogar-{}", tablet.server_device_id));
    browser.click_and_wait(&revoke);
    browser.wait_for("#confirmar-revogacao");
    assert!(is_png(&browser.save_screenshot("revogar-dispositivo.png")));
    let back = browser.wait_for("#cancelar-revogacao");
    browser.click_and_wait(&back);
    browser.wait_text(&row, "Ativo");
    let out = browser.wait_for("#sair");
    browser.click_and_wait(&out);

    // The record is in the office's inbox.
    browser.wait_for("#usuario");
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    browser.wait_for(&format!("#abrir-{id}"));
    assert!(browser.find("#menu-usuarios").is_none());
}
// ----- accessibility: axe-core on every page, 800 px, keyboard only -----------------------

/// Every office page the accessibility test opens, logged in as the office: (artifact name,
/// path). `{registro}` is a record's id (one notified, so the appeal deadline shows), `{alvara}`
/// a permit's number. Add a line for each new page.
const OFFICE_PAGES: &[(&str, &str)] = &[
    ("caixa-de-entrada", "/escritorio"),
    (
        "caixa-filtrada",
        "/escritorio?busca=a&situacao=notified&ordem=placa&sentido=desc",
    ),
    (
        "caixa-prazos-vencendo",
        "/escritorio?vencendo=1&ordem=prazo",
    ),
    ("registro", "/escritorio/registros/{registro}"),
    ("duplicatas", "/escritorio/duplicatas"),
    ("alvaras", "/escritorio/alvaras"),
    (
        "alvaras-suspensos",
        "/escritorio/alvaras?situacao=suspenso&ordem=titular",
    ),
    ("alvara", "/escritorio/alvaras/{alvara}"),
    ("multas", "/escritorio/multas"),
    (
        "multas-nao-pagas",
        "/escritorio/multas?situacao=nao-pagas&ordem=valor&sentido=desc",
    ),
    ("lei", "/escritorio/lei"),
    ("importar-cadastro", "/escritorio/cadastro/importar"),
    ("alterar-senha", "/escritorio/senha"),
    ("conceder-alvara", "/escritorio/alvaras/novo"),
    ("pessoas", "/escritorio/pessoas"),
    ("pessoas-busca", "/escritorio/pessoas?busca=silva"),
    ("pessoa", "/escritorio/pessoas/{pessoa}"),
    ("nova-pessoa", "/escritorio/pessoas/nova"),
    ("veiculos", "/escritorio/veiculos"),
    ("veiculo", "/escritorio/veiculos/{veiculo}"),
    ("novo-veiculo", "/escritorio/veiculos/novo"),
    ("pontos", "/escritorio/pontos"),
    ("ponto", "/escritorio/pontos/{ponto}"),
    ("novo-ponto", "/escritorio/pontos/novo"),
];

/// The administrator's pages, and the office's as the administrator reads them ("somente
/// leitura" in place of the forms): (artifact name, path).
const ADMIN_PAGES: &[(&str, &str)] = &[
    ("admin-usuarios", "/escritorio/usuarios"),
    ("admin-dispositivos", "/escritorio/dispositivos"),
    ("admin-alvara", "/escritorio/alvaras/{alvara}"),
    ("admin-registro", "/escritorio/registros/{registro}"),
    ("admin-lei", "/escritorio/lei"),
];

/// Pages seen without a session: (artifact name, path); `{codigo}` is a notification's
/// verification code.
const PUBLIC_PAGES: &[(&str, &str)] = &[
    ("login", "/login"),
    ("verificar", "/verificar"),
    ("verificacao-resultado", "/verificar/{codigo}"),
    ("redefinir-senha", "/redefinir-senha"),
];

/// Opens `path` (placeholders filled), checks it with axe-core and saves its screenshot as
/// `a11y-{name}.png`; the report of serious or critical violations, if any.
fn visit(
    browser: &Browser,
    base: &str,
    name: &str,
    path: &str,
    fill: &[(&str, &str)],
) -> Option<String> {
    let mut path = path.to_owned();
    for (k, v) in fill {
        path = path.replace(k, v);
    }
    browser.goto(&format!("{base}{path}"));
    browser.wait_for("main h1");
    // Minor and moderate findings are printed for the record, not failed on.
    for v in browser.axe().iter().filter(|v| !v.is_blocking()) {
        println!("axe on {name}: [{}] {}: {}", v.impact, v.id, v.help);
    }
    let mut report = e2e::browser::accessibility_report(browser, name);
    let weak = browser.weak_control_borders();
    if !weak.is_empty() {
        let line = format!(
            "form controls on {name} with borders under 3:1 against white (WCAG 1.4.11): {}",
            weak.join(", ")
        );
        report = Some(report.map_or(line.clone(), |r| format!("{r}\n{line}")));
    }
    let shot = browser.save_screenshot(&format!("a11y-{name}.png"));
    assert!(is_png(&shot), "{}", shot.display());
    report
}

fn log_in(browser: &Browser, base: &str, user: &str, password: &str) {
    browser.goto(&format!("{base}/login"));
    browser.fill("#usuario", user);
    browser.fill("#senha", password);
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
}

/// A sample record taken through review, decision, notification and ciência with the API:
/// its id and the notification's verification code.
fn notified_sample_record(office: &Api) -> (String, String) {
    let (_, page) = office.get("/v1/records?limit=10");
    let id = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["conflicts"].as_u64() == Some(0))
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("a sample record without conflicts: {page}"));
    let warning = json!({"kind": "written_warning"});
    for (step, body) in [
        ("review", json!({})),
        ("propose", json!({ "penalty": warning })),
        ("decide", json!({ "penalty": warning })),
    ] {
        let (s, v) = office.post(&format!("/v1/office/records/{id}/{step}"), &body);
        assert_eq!(s, 200, "{step}: {v}");
    }
    let (s, v) = office.post(
        &format!("/v1/office/records/{id}/notifications"),
        &json!({}),
    );
    assert_eq!(s, 200, "{v}");
    let n = &v["notifications"][0];
    let today = sync_core::time::local_date(chrono::Utc::now());
    let (s, v) = office.post(
        &format!("/v1/office/records/{id}/notify"),
        &json!({"method": "personal_signature", "on": today, "notification": n["number"]}),
    );
    assert_eq!(s, 200, "{v}");
    (id, n["code"].as_str().unwrap().to_owned())
}

#[test]
fn every_page_passes_axe_core_and_the_inbox_fits_800_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_with_samples(&dir.path().join("dados"));
    let office = Api::login(&server.url, OFFICE);
    let (record, code) = notified_sample_record(&office);
    let registry = office.registry();
    let first = &registry.permits[0];
    let (permit, person, vehicle, stand) = (
        first.number.clone(),
        first.holder_id.to_string(),
        first.vehicle_id.to_string(),
        first.stand_id.to_string(),
    );
    let fill = [
        ("{registro}", record.as_str()),
        ("{alvara}", permit.as_str()),
        ("{codigo}", code.as_str()),
        ("{pessoa}", person.as_str()),
        ("{veiculo}", vehicle.as_str()),
        ("{ponto}", stand.as_str()),
    ];
    let browser = Browser::start();
    let mut failures = Vec::new();
    for (name, path) in PUBLIC_PAGES {
        failures.extend(visit(&browser, &server.url, name, path, &fill));
    }
    log_in(&browser, &server.url, "escritorio", "escritorio-demo");
    for (name, path) in OFFICE_PAGES {
        failures.extend(visit(&browser, &server.url, name, path, &fill));
    }
    // The notified record's appeal deadline is in the inbox.
    browser.goto(&format!("{}/escritorio?ordem=prazo", server.url));
    let deadline = browser.text_of(&format!("#prazo-{record}"));
    assert!(deadline.starts_with("até "), "{deadline}");

    // At 800 px the inbox does not scroll sideways: the table scrolls in its own box.
    browser.set_window_size(800, 900);
    browser.goto(&format!("{}/escritorio", server.url));
    browser.wait_for("#tabela-registros");
    let widths = browser.execute(
        "return [document.documentElement.scrollWidth, window.innerWidth]",
        vec![],
    );
    let (scroll, inner) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    assert!(inner <= 800 && inner > 0, "{widths}");
    if scroll > inner {
        failures.push(format!(
            "the inbox overflows at 800 px: the document is {scroll} px wide in {inner} px"
        ));
    }
    let png = browser.screenshot();
    let shot = e2e::browser::artifacts_dir().join("a11y-caixa-800px.png");
    std::fs::write(&shot, png).unwrap();
    assert!(is_png(&shot));
    failures.extend(e2e::browser::accessibility_report(&browser, "caixa-800px"));
    browser.set_window_size(1366, 900);

    // The administrator's pages, and office pages read by the administrator.
    let sair = browser.wait_for("#sair");
    browser.click_and_wait(&sair);
    log_in(&browser, &server.url, "admin", "admin-demo");
    for (name, path) in ADMIN_PAGES {
        failures.extend(visit(&browser, &server.url, name, path, &fill));
    }

    // An officer signed in sees "Sem permissão" on the office pages.
    let sair = browser.wait_for("#sair");
    browser.click_and_wait(&sair);
    log_in(&browser, &server.url, "fiscal", "fiscal-demo");
    browser.goto(&format!("{}/escritorio", server.url));
    browser.wait_for("#sem-permissao");
    failures.extend(e2e::browser::accessibility_report(
        &browser,
        "sem-permissao",
    ));
    let shot = browser.save_screenshot("a11y-sem-permissao.png");
    assert!(is_png(&shot));

    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_inbox_filter_and_a_fine_payment_work_with_the_keyboard_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_with_samples(&dir.path().join("dados"));
    let office = Api::login(&server.url, OFFICE);
    let unpaid = office
        .registry()
        .fines
        .iter()
        .find(|f| f.paid_on.is_none())
        .map(|f| f.id.clone())
        .expect("an unpaid fine in the demo registry");
    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.wait_for("#form-login");
    browser.tab_to("#usuario");
    browser.press("escritorio");
    browser.tab_to("#senha");
    browser.press("escritorio-demo");
    browser.press_and_wait(ENTER);
    browser.wait_for("#form-filtros");

    // The inbox's search, typed and sent with Enter; then its checkbox ticked with Space. The
    // focused field shows a ring.
    browser.tab_to("#filtro-busca");
    let ring = browser.focus_outline_px();
    assert!(ring >= 2.0, "focus ring of {ring} px on the search field");
    browser.press("zzzz");
    browser.press_and_wait(ENTER);
    assert!(
        browser.current_url().contains("busca=zzzz"),
        "{}",
        browser.current_url()
    );
    browser.wait_for("#sem-registros");
    browser.tab_to("#filtro-vencendo");
    browser.press(" ");
    browser.tab_to("#filtrar");
    browser.press_and_wait(ENTER);
    assert!(
        browser.current_url().contains("vencendo=1"),
        "{}",
        browser.current_url()
    );

    // A fine's payment: number typed, date left empty (today), sent with Enter on the button.
    browser.goto(&format!("{}/escritorio/multas", server.url));
    browser.wait_for("#form-pagamento");
    browser.tab_to("#pagamento-multa");
    browser.press(&unpaid);
    browser.tab_to("#pagar");
    browser.press_and_wait(ENTER);
    let done = browser.text_of("#aviso");
    assert!(done.contains(&unpaid), "{done}");
    let reg = office.registry();
    let fine = reg.fines.iter().find(|f| f.id == unpaid).unwrap();
    assert!(fine.paid_on.is_some(), "{fine:?}");
}

#[test]
fn axe_core_reports_what_a_page_gets_wrong() {
    // The harness itself: a page with an image without a text alternative and a field without
    // a label, which axe-core calls critical; and a grey field border of 1.8:1.
    let browser = Browser::start();
    browser.goto(
        "data:text/html;charset=utf-8,<!doctype html><html lang=\"pt-BR\"><head><title>t</title></head>\
         <body><main><h1>t</h1><img src=\"x.png\"><input type=\"text\" id=\"campo\" \
         style=\"border:2px solid %23b8c0c8\"></main></body></html>",
    );
    browser.wait_for("main h1");
    let found = browser.axe();
    let blocking: Vec<&str> = found
        .iter()
        .filter(|v| v.is_blocking())
        .map(|v| v.id.as_str())
        .collect();
    assert!(blocking.contains(&"image-alt"), "{found:?}");
    assert!(blocking.contains(&"label"), "{found:?}");
    assert!(e2e::browser::accessibility_report(&browser, "teste").is_some());
    let weak = browser.weak_control_borders();
    assert_eq!(weak.len(), 1, "{weak:?}");
    assert!(weak[0].starts_with("campo: 1.8"), "{weak:?}");
}

/// The law's parameters by keyboard: on `/escritorio/lei` the clerk types a 15-day CNH grace
/// into its field, switches R24 off with the space bar on its checkbox and sends the form with
/// Enter. The page shows the new grace and the rule unchecked, and the devices' `GET /v1/law`
/// has both at the new registry version. A screenshot of the page is kept.
#[test]
fn the_clerk_changes_the_cnh_grace_and_switches_a_rule_off_by_keyboard() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let officer = Api::login(&server.url, ("fiscal", "fiscal-demo", "tablet-fiscal-01"));
    let before = officer.get("/v1/law").1["version"].as_u64().unwrap();
    let browser = Browser::start();
    office_login(&browser, &server);
    // The menu link followed with Enter.
    let menu = browser.wait_for("#menu-lei");
    browser.type_and_wait(&menu, ENTER);
    browser.wait_for("#form-regras");

    let rule = sync_core::rules::RuleId::R24;
    let grace = browser.wait_for("#regras-tolerancia");
    browser.fill("#regras-tolerancia", "15");
    let checkbox = browser.wait_for(&format!("#regra-{}", rule.as_str()));
    assert_eq!(browser.property(&checkbox, "checked"), json!(true));
    browser.send_keys(&checkbox, " ");
    assert!(
        browser.is_focused(&checkbox),
        "the space bar acted on the focused box"
    );
    assert_eq!(browser.property(&checkbox, "checked"), json!(false));
    browser.type_and_wait(&grace, ENTER);

    if let Some(e) = browser.find("#erro-form-regras") {
        panic!("refused: {}", browser.text(&e));
    }
    browser.wait_text("#aviso", "Configuração das regras alterada");
    assert!(browser.text_of("#lei-regras").contains("15 dias"));
    let field = browser.wait_for("#regras-tolerancia");
    assert_eq!(browser.property(&field, "value"), json!("15"));
    let checkbox = browser.wait_for(&format!("#regra-{}", rule.as_str()));
    assert_eq!(browser.property(&checkbox, "checked"), json!(false));
    let shot = browser.save_screenshot("law-parameters.png");
    assert!(is_png(&shot), "{}", shot.display());

    // What the devices read.
    let (s, view) = officer.get("/v1/law");
    assert_eq!(s, 200, "{view}");
    assert_eq!(view["version"].as_u64().unwrap(), before + 1);
    assert_eq!(view["parameters"]["rules"]["cnh_grace_days"], 15);
    let disabled = view["parameters"]["rules"]["disabled_rules"]
        .as_array()
        .unwrap();
    assert!(disabled.contains(&json!(rule.as_str())), "{disabled:?}");
    drop(browser);
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

/// A second drawing of the scene, as the other patrol's photo.
const SCENE_PHOTO_2: &[u8] = include_bytes!("../../server/src/demo/foto-2.png");

#[test]
fn the_clerk_compares_duplicates_photo_to_photo_and_the_kept_record_keeps_the_merged_photos() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let admin = Api::login(&server.url, ADMIN);
    let (s, v) = admin.post(
        "/v1/devices",
        &json!({"id": "celular-fiscal-teste", "user_id": "u-fiscal",
                "label": "Celular de teste do fiscal"}),
    );
    assert_eq!(s, 201, "{v}");
    let mut tablet = Device::login(
        "tablet",
        &server.url,
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    let mut phone = Device::login(
        "celular",
        &server.url,
        "celular-fiscal-teste",
        "fiscal",
        "fiscal-demo",
        Duration::zero(),
    );
    tablet.sync_ok();
    phone.sync_ok();
    let taxi = regular_taxi_of_s03(&tablet);
    // The same taxi seen by two patrols a few metres apart, each with its photo.
    let write = |d: &mut Device, photo: &[u8], lat: f64, facts: &str| {
        let at = d.now();
        let out = d
            .field()
            .create_infraction(NewInfraction {
                vehicle: VehicleQuery::Plate(Plate::parse(&taxi.0).unwrap()),
                driver: DriverId::parse(&taxi.1).unwrap(),
                driver_name: None,
                at,
                monotonic: u64::try_from(at.timestamp_millis()).unwrap(),
                observation: Observation::default(),
                position: Some(sync_core::records::Position {
                    lat,
                    lon: -47.3317,
                    accuracy_m: 8.0,
                }),
                facts: Some(facts.into()),
                extra_legal_basis: vec![LegalBasis {
                    rule_id: "R28".into(),
                    citation: "Lei 4.019/2004, art. 19, VIII; art. 31, VII".into(),
                }],
                witnesses: Vec::new(),
                photos: vec![photo.to_vec()],
                confirm_vehicle: true,
                issue: Some(Signature::Missing {
                    reason: "recusou-se a assinar".into(),
                }),
            })
            .unwrap();
        let s = d.sync_ok();
        assert_eq!(s.photos.unwrap().uploaded, 1);
        out.id
    };
    let first = write(
        &mut tablet,
        SCENE_PHOTO,
        -22.7395,
        "Recusou corrida (tablet).",
    );
    let second = write(
        &mut phone,
        SCENE_PHOTO_2,
        -22.7397,
        "Recusou corrida (celular).",
    );

    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    browser.goto(&format!("{}/escritorio/duplicatas", server.url));
    browser.wait_for("#comparar-grupo-1");
    // Both records side by side, each photo a loaded thumbnail linking the original.
    let loaded_width = |css: &str| {
        let img = browser.wait_for(css);
        browser.wait_until(&format!("{css} to load"), || {
            let w = browser.property(&img, "naturalWidth").as_u64().unwrap_or(0);
            (w > 0).then_some(w)
        })
    };
    let side = u64::from(taxi_fiscal_server::limits::THUMBNAIL_MAX_SIDE_PX);
    for id in [&first, &second] {
        assert_eq!(loaded_width(&format!("#miniatura-{id}-1")), side);
        let card = browser.text_of(&format!("#comparar-{id}"));
        assert!(card.contains("ver no mapa"), "{card}");
    }
    assert!(
        browser
            .text_of(&format!("#comparar-{first}"))
            .contains("(tablet)")
    );
    assert!(
        browser
            .text_of(&format!("#comparar-{second}"))
            .contains("(celular)")
    );
    let link = browser.wait_for(&format!("#comparar-{first}-mapa"));
    assert_eq!(browser.attr(&link, "target").as_deref(), Some("_blank"));
    assert!(
        browser
            .attr(&link, "href")
            .unwrap()
            .starts_with("https://www.openstreetmap.org/?mlat=-22.739500&mlon=-47.331700")
    );
    let shot = browser.save_screenshot("duplicates-side-by-side.png");
    assert!(is_png(&shot));

    // Keep the tablet's record (checked first) and merge the other into it.
    let merge = browser.wait_for("#juntar-grupo-1");
    browser.click_and_wait(&merge);
    browser.wait_for("#sem-duplicatas");
    browser.goto(&format!("{}/escritorio/registros/{first}", server.url));
    browser.wait_for("#juntados");
    assert!(browser.text_of("#juntados").contains("(celular)"));
    assert_eq!(loaded_width(&format!("#miniatura-{second}-1")), side);
    assert_eq!(loaded_width("#foto-1"), side);
    let shot = browser.save_screenshot("merged-record-photos.png");
    assert!(is_png(&shot));
}

/// Opens `url`, logging in again as the office when the session ended meanwhile (the test's
/// clock jumps weeks, past a web session's life).
fn goto_as_office(browser: &Browser, url: &str) {
    browser.goto(url);
    if browser.current_url().contains("/login") {
        browser.fill("#usuario", "escritorio");
        browser.fill("#senha", "escritorio-demo");
        let enter = browser.wait_for("#entrar");
        browser.click_and_wait(&enter);
    }
    browser.wait_for("#etapa-edital");
}

/// Sets a date input (`aaaa-mm-dd`) as a date picker would: typing into one depends on the
/// browser's locale.
fn set_date(browser: &Browser, css: &str, date: &str) {
    browser.wait_for(css);
    browser.execute(
        "document.querySelector(arguments[0]).value = arguments[1];",
        vec![json!(css), json!(date)],
    );
}

/// A whole edital in the office pages, on the in-process server whose clock the test moves:
/// the registry at the art. 14 cap gets one place back by a revocation; the clerk opens an
/// edital for it (first with too short a notice: refused, what was typed kept), registers a
/// current holder by CPF alone (the rest comes from the registry) and a newcomer with every
/// document, publishes the list, draws with the seed, publishes the result, and after the
/// appeal window grants the place: the holder's permit moves to the stand. The pages pass axe.
#[test]
fn the_clerk_runs_an_edital_from_opening_to_grant_in_the_pages() {
    use sync_core::domain::{PermitState, Registry};
    let day = |y, m, d| chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let server = e2e::InProcServer::start_demo("2027-02-01T15:00:00Z".parse().unwrap());
    let office = Api::login(&server.url, OFFICE);
    let reg: Registry = office.registry();
    let rules = reg.law().rules.clone();
    // A holder of S03 in order moves to S02, where a revocation opens one place.
    let holder = reg
        .permits
        .iter()
        .filter(|p| p.stand_id == "S03" && p.state == PermitState::Active)
        .filter(|p| p.auxiliaries.is_empty())
        .filter(|p| !reg.penalties.iter().any(|x| x.permit_number == p.number))
        .filter(|p| !reg.fines.iter().any(|x| x.permit_number == p.number))
        .find_map(|p| {
            let person = reg.people.iter().find(|x| x.id == p.holder_id)?;
            sync_core::rules::office::driver_requirements(person, day(2027, 3, 16), &rules)
                .is_empty()
                .then(|| (person.clone(), p.number.clone()))
        })
        .expect("a holder in order at S03");
    let revoked = reg
        .permits
        .iter()
        .find(|p| p.stand_id == "S02" && p.state == PermitState::Active)
        .unwrap();
    let penalty = json!({"permit_number": revoked.number, "person_id": revoked.holder_id,
                         "kind": {"kind": "revocation"}, "decided_on": "2027-02-01"});
    assert_eq!(office.post("/v1/penalties", &penalty).0, 201);
    let state = json!({"state": "revoked", "on": "2027-02-01"});
    let path = format!("/v1/permits/{}/state", revoked.number);
    assert_eq!(office.put(&path, &state).0, 200);

    let browser = Browser::start();
    browser.goto(&format!("{}/login", server.url));
    browser.fill("#usuario", "escritorio");
    browser.fill("#senha", "escritorio-demo");
    let enter = browser.wait_for("#entrar");
    browser.click_and_wait(&enter);
    let menu = browser.wait_for("#menu-editais");
    browser.click_and_wait(&menu);
    e2e::browser::assert_accessible(&browser, "editais");

    let fill_opening = |applications_from: &str| {
        browser.fill("#edital-id", "2027-01");
        browser.fill("#edital-numero", "001/2027");
        set_date(&browser, "#edital-publicacao", "2027-02-01");
        set_date(&browser, "#edital-inicio", applications_from);
        set_date(&browser, "#edital-fim", "2027-03-05");
        set_date(&browser, "#edital-sorteio", "2027-03-10");
        browser.fill(
            "#edital-semente-fonte",
            "os cinco prêmios da extração nº 6.012 da Loteria Federal",
        );
        browser.fill("#vagas-S02", "1");
        let open = browser.wait_for("#abrir-edital");
        browser.click_and_wait(&open);
    };
    fill_opening("2027-02-15");
    let refusal = browser.text_of("#erro-abrir-edital");
    assert!(
        refusal.contains("20 dias") && refusal.contains("R42"),
        "{refusal}"
    );
    assert_eq!(
        browser.property(&browser.wait_for("#edital-numero"), "value"),
        json!("001/2027")
    );
    fill_opening("2027-02-22");
    browser.wait_text("#aviso", "Edital 2027-01 aberto");
    browser.wait_text("#etapa-edital", "inscrições ainda não abertas");

    // Applications: the holder by CPF alone, a newcomer with everything.
    server.advance_to(day(2027, 2, 22));
    let page = format!("{}/escritorio/editais/2027-01", server.url);
    goto_as_office(&browser, &page);
    let documents = |browser: &Browser| {
        set_date(browser, "#inscricao-residencia", "2009-03-01");
        set_date(browser, "#inscricao-antecedentes", "2027-02-15");
        browser.click(&browser.wait_for("#inscricao-antecedentes-ok"));
        set_date(browser, "#inscricao-atestado", "2027-02-15");
        browser.click(&browser.wait_for("#inscricao-atestado-ok"));
    };
    browser.fill("#inscricao-cpf", holder.0.cpf.as_str());
    documents(&browser);
    let register = browser.wait_for("#inscrever");
    browser.click_and_wait(&register);
    browser.wait_text("#aviso", "inscrito sob o nº 001");
    assert!(browser.text_of("#candidato-001").contains(&holder.0.name));
    let cpf = sync_core::domain::Cpf::from_base([7, 3, 0, 2, 0, 2, 7, 9, 1]).unwrap();
    browser.fill("#inscricao-cpf", cpf.as_str());
    browser.fill("#inscricao-nome", "Vera Lúcia Prado");
    set_date(&browser, "#inscricao-nascimento", "1984-07-09");
    browser.fill("#inscricao-cnh", "40271900991");
    browser.fill("#inscricao-categoria", "B");
    set_date(&browser, "#inscricao-primeira", "2012-05-10");
    set_date(&browser, "#inscricao-validade", "2031-08-01");
    browser.fill("#inscricao-observacoes", "EAR");
    documents(&browser);
    let register = browser.wait_for("#inscrever");
    browser.click_and_wait(&register);
    browser.wait_text("#aviso", "inscrito sob o nº 002");

    // The list, the draw, the result.
    server.advance_to(day(2027, 3, 6));
    goto_as_office(&browser, &page);
    let publish = browser.wait_for("#publicar-lista");
    browser.click_and_wait(&publish);
    browser.wait_text("#aviso", "Lista publicada");
    let holder_line = browser.text_of("#lista-001");
    assert!(holder_line.contains(&holder.1), "{holder_line}");
    assert!(browser.text_of("#lista-002").contains("III"));
    browser.wait_text("#sorteio-aguarda", "10/03/2027");
    server.advance_to(day(2027, 3, 10));
    goto_as_office(&browser, &page);
    browser.fill("#sorteio-semente", " 48213 07654  91027 33580 66142 ");
    let draw = browser.wait_for("#sortear");
    browser.click_and_wait(&draw);
    browser.wait_text("#semente-sorteio", "48213 07654 91027 33580 66142");
    let result = browser.wait_for("#publicar-resultado");
    browser.click_and_wait(&result);
    browser.wait_text("#aviso", "recursos ao Prefeito até 15/03/2027");
    assert!(
        browser
            .text_of("#classificado-001")
            .contains("Terminal Rodoviário")
    );
    assert!(
        browser
            .text_of("#classificado-002")
            .contains("lista de espera")
    );
    browser.wait_text("#concessao-aguarda", "art. 6º");
    e2e::browser::assert_accessible(&browser, "edital-resultado");

    // After the window: the grant moves the holder's permit to S02.
    server.advance_to(day(2027, 3, 16));
    goto_as_office(&browser, &page);
    let grant = browser.wait_for("#conceder-001");
    browser.click_and_wait(&grant);
    browser.wait_text("#aviso", &format!("Alvará {} concedido", holder.1));
    assert!(browser.text_of("#tabela-concessoes").contains(&holder.1));
    let (_, permit) = office.get(&format!("/v1/permits/{}", holder.1));
    assert_eq!(permit["stand_id"], json!("S02"), "{permit}");
    e2e::browser::assert_accessible(&browser, "edital-concessao");
}
