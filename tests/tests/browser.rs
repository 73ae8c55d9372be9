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
    step("#decidir");
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
    let events = browser.text_of("#tabela-eventos");
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
        .find_all("#tabela-eventos tbody tr")
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
