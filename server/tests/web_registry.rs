//! The registry pages of the office (`taxi_fiscal_server::web::registry`), in process: `oneshot`
//! on the whole router over a temporary data directory seeded with the demo registry and users,
//! a fixed clock and cheap password hashing. A cookie-keeping client logs in through the form,
//! reads the CSRF token from the pages and posts forms (urlencoded, or multipart for the CSV
//! file) with this site's Origin, as a browser does.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod web_support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use sync_core::domain::{PermitState, Registry};
use tower::ServiceExt;
use web_support::*;

fn plate_of(reg: &Registry, permit: &str) -> String {
    let p = reg.permits.iter().find(|p| p.number == permit).unwrap();
    let v = reg.vehicles.iter().find(|v| v.id == p.vehicle_id).unwrap();
    v.plate.canonical().to_owned()
}

fn rows(page: &Page) -> Vec<String> {
    page.body
        .match_indices("id=\"alvara-")
        .map(|(at, _)| {
            let s = &page.body[at + 11..];
            s[..s.find('"').unwrap()].to_owned()
        })
        .collect()
}

#[tokio::test]
async fn the_list_searches_by_plate_permit_cpf_name_and_stand() {
    let app = app().await;
    let reg = app.registry().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let all = c.get("/escritorio/alvaras").await;
    let html = all.html(StatusCode::OK);
    assert!(all.has("menu-alvaras") && all.has("form-busca-alvaras"));
    all.assert_labelled();
    assert!(
        html.contains("121 alvarás encontrados"),
        "{}",
        all.from("total-alvaras")
    );
    assert!(all.from("resumo-cadastro").contains("118 alvarás vigentes"));
    assert_eq!(rows(&all).len(), 50, "first page");
    assert!(all.has("pagina-seguinte"));

    // A plate in the other spelling (old form ↔ Mercosul) finds its permit.
    let plate = plate_of(&reg, "0007");
    let parsed = sync_core::domain::Plate::parse(&plate).unwrap();
    let other = parsed.old_form().unwrap_or_else(|| plate.to_lowercase());
    let p = c
        .get(&format!("/escritorio/alvaras?busca={}", urlencode(&other)))
        .await;
    assert_eq!(rows(&p), vec!["0007"], "{other}");
    assert!(p.from("alvara-0007").contains("suspenso de"));

    // "7" is permit 0007; the holder's CPF and a piece of the name without accents too.
    let p = c.get("/escritorio/alvaras?busca=7").await;
    assert_eq!(rows(&p), vec!["0007"]);
    let holder = reg
        .people
        .iter()
        .find(|x| {
            x.id == reg
                .permits
                .iter()
                .find(|p| p.number == "0012")
                .unwrap()
                .holder_id
        })
        .unwrap();
    let p = c
        .get(&format!(
            "/escritorio/alvaras?busca={}",
            urlencode(&holder.cpf.masked())
        ))
        .await;
    assert_eq!(rows(&p), vec!["0012"]);
    let folded = holder
        .name
        .to_lowercase()
        .replace(['ã', 'â', 'á'], "a")
        .replace(['é', 'ê'], "e")
        .replace(['ô', 'ó'], "o")
        .replace('í', "i");
    let p = c
        .get(&format!("/escritorio/alvaras?busca={}", urlencode(&folded)))
        .await;
    assert!(rows(&p).contains(&"0012".to_owned()), "{folded}");
    // Stand filter.
    let p = c.get("/escritorio/alvaras?ponto=S08").await;
    assert_eq!(rows(&p).len(), 20);
    assert!(rows(&p).contains(&"0102".to_owned()));
    // Nothing found is said.
    let p = c.get("/escritorio/alvaras?busca=ZZZ9Z99").await;
    assert!(p.has("sem-resultados") && rows(&p).is_empty());
}

#[tokio::test]
async fn the_permit_page_shows_holder_auxiliaries_vehicle_stand_penalties_and_fines() {
    let app = app().await;
    let reg = app.registry().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let p = c.get("/escritorio/alvaras/0007").await;
    p.html(StatusCode::OK);
    p.assert_labelled();
    assert!(p.body.contains("<title>Alvará 0007"));
    assert!(p.from("situacao-alvara").contains("suspenso de"));
    let pen = reg
        .penalties
        .iter()
        .find(|x| x.permit_number == "0007")
        .unwrap();
    let row = p.from(&format!("penalidade-{}", pen.id));
    assert!(
        row.contains("suspensão por 15 dias (art. 32, III)"),
        "{row}"
    );
    assert!(row.contains("em vigor"), "{row}");
    assert!(p.from("veiculo").contains(&plate_of(&reg, "0007")));
    let holder = reg.permits.iter().find(|x| x.number == "0007").unwrap();
    let holder = reg
        .people
        .iter()
        .find(|x| x.id == holder.holder_id)
        .unwrap();
    assert!(p.from("titular").contains(&holder.name));
    assert!(p.from("titular").contains(&holder.cpf.masked()));
    assert!(p.from("ponto").contains("S01"));

    let p = c.get("/escritorio/alvaras/0003").await;
    let permit = reg.permits.iter().find(|x| x.number == "0003").unwrap();
    assert_eq!(permit.auxiliaries.len(), 2);
    for a in &permit.auxiliaries {
        assert!(p.has(&format!("auxiliar-{}", a.person_id)));
    }
    let p = c.get("/escritorio/alvaras/0019").await;
    let fine = reg
        .fines
        .iter()
        .find(|f| f.permit_number == "0019")
        .unwrap();
    let row = p.from(&format!("multa-{}", fine.id));
    assert!(
        row.contains("R$ 797,02") && row.contains("não paga"),
        "{row}"
    );
    assert!(p.from("situacao-alvara").contains("não renovado para 2026"));

    let p = c.get("/escritorio/alvaras/9999").await;
    p.html(StatusCode::NOT_FOUND);
    assert!(p.body.contains("9999 não consta do cadastro"));
}

#[tokio::test]
async fn renewal_refused_by_law_names_rule_and_article_and_keeps_the_registry() {
    let app = app().await;
    let before = app.registry().await.version;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let page = "/escritorio/alvaras/0019";
    let p = c
        .post_form(
            page,
            "/escritorio/alvaras/0019/renovacao",
            &[("ano", "2026")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.from("erro-renovacao");
    // 0019 was last renewed for 2025 (deadline 31/01/2026 missed, art. 7) and has an unpaid
    // fine (art. 17 §2 III): both reasons.
    assert!(err.contains("R11") && err.contains("art. 7"), "{err}");
    assert!(err.contains("cassação automática"), "{err}");
    assert!(err.contains("R27"), "{err}");
    assert!(err.contains("art. 17"), "{err}");
    assert!(err.contains("Nada foi gravado"));
    // The typed year is still in the form, and nothing changed.
    assert!(
        p.from("renovacao-ano")
            .starts_with("id=\"renovacao-ano\" name=\"ano\" value=\"2026\"")
    );
    assert_eq!(app.registry().await.version, before);
    // A year that is not one is said, not a bare 400.
    let p = c
        .post_form(
            page,
            "/escritorio/alvaras/0019/renovacao",
            &[("ano", "dois mil")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-renovacao").contains("Ano inválido"));

    // Once the fine is paid (through the API), the lapse remains: still refused.
    let reg = app.registry().await;
    let fine = reg
        .fines
        .iter()
        .find(|f| f.permit_number == "0019")
        .unwrap();
    let api = api_token(&app).await;
    let res = app
        .router
        .clone()
        .oneshot(
            Request::post(format!("/v1/fines/{}/payment", fine.id))
                .header("authorization", format!("Bearer {api}"))
                .header("content-type", "application/json")
                .body(Body::from("{}"))
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    let paid = app.registry().await.version;
    let p = c
        .post_form(
            page,
            "/escritorio/alvaras/0019/renovacao",
            &[("ano", "2026")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.from("erro-renovacao");
    assert!(err.contains("R11") && !err.contains("R27"), "{err}");
    assert_eq!(app.registry().await.version, paid);

    // A permit renewed for 2026 renews for 2027 with the same form: a new registry version.
    let page = "/escritorio/alvaras/0020";
    let p = c
        .post_form(
            page,
            "/escritorio/alvaras/0020/renovacao",
            &[("ano", "2027")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), page);
    let reg = app.registry().await;
    assert_eq!(reg.version, paid + 1);
    let permit = reg.permits.iter().find(|x| x.number == "0020").unwrap();
    assert_eq!(permit.renewal_year, 2027);
    let after = c.get(page).await;
    assert!(
        after.from("aviso").contains("renovado para 2027"),
        "{}",
        after.body
    );
}

/// A JSON request to the API as the office, which must succeed.
async fn api_ok(app: &App, method: &str, path: &str, body: serde_json::Value) {
    let api = api_token(app).await;
    let res = app
        .router
        .clone()
        .oneshot(
            Request::builder()
                .method(method)
                .uri(path)
                .header("authorization", format!("Bearer {api}"))
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(
        res.status().is_success(),
        "{method} {path}: {}",
        res.status()
    );
}

async fn api_token(app: &App) -> String {
    let res = app
        .router
        .clone()
        .oneshot(
            Request::post("/v1/auth/login")
                .header("content-type", "application/json")
                .body(Body::from(
                    r#"{"username":"escritorio","password":"escritorio-demo","device_id":"desktop-escritorio"}"#,
                ))
                .unwrap(),
        )
        .await
        .unwrap();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    v["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn transfer_and_swap_use_the_registry_operations() {
    let app = app().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;

    // Art. 10, I: a permit issued a year ago cannot be transferred voluntarily.
    let reg = app.registry().await;
    let aux = reg
        .permits
        .iter()
        .find(|p| p.number == "0003")
        .unwrap()
        .auxiliaries[0]
        .person_id
        .clone();
    let p = c
        .post_form(
            "/escritorio/alvaras/0005",
            "/escritorio/alvaras/0005/transferencia",
            &[("para", &aux), ("motivo", "voluntaria")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.from("erro-transferencia");
    assert!(err.contains("R43") && err.contains("art. 10"), "{err}");
    assert!(
        p.body.contains(&format!("value=\"{aux}\"")),
        "typed value kept"
    );
    // Someone not in the registry.
    let p = c
        .post_form(
            "/escritorio/alvaras/0005",
            "/escritorio/alvaras/0005/transferencia",
            &[("para", "111.444.777-35"), ("motivo", "voluntaria")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-transferencia").contains("Ninguém no cadastro"));

    // Permit 0003 (issued years ago) to its own auxiliary, by CPF as typed on paper: refused
    // while the vehicle's CRLV is the former holder's (art. 30 III), the new holder would be
    // irregular at once.
    let receiver = reg.people.iter().find(|x| x.id == aux).unwrap();
    let p = c
        .post_form(
            "/escritorio/alvaras/0003",
            "/escritorio/alvaras/0003/transferencia",
            &[("para", &receiver.cpf.masked()), ("motivo", "voluntaria")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.from("erro-transferencia");
    assert!(err.contains("R40") && err.contains("art. 30, III"), "{err}");
    // The office records the new CRLV (through the API), then the transfer goes through; the
    // receiver stops being an auxiliary and the history shows it.
    let permit = reg.permits.iter().find(|p| p.number == "0003").unwrap();
    let mut vehicle = reg
        .vehicles
        .iter()
        .find(|v| v.id == permit.vehicle_id)
        .unwrap()
        .clone();
    vehicle.owner_cpf = receiver.cpf.clone();
    api_ok(
        &app,
        "PUT",
        &format!("/v1/vehicles/{}", vehicle.id),
        serde_json::to_value(&vehicle).unwrap(),
    )
    .await;
    let p = c
        .post_form(
            "/escritorio/alvaras/0003",
            "/escritorio/alvaras/0003/transferencia",
            &[("para", &receiver.cpf.masked()), ("motivo", "voluntaria")],
        )
        .await;
    assert_eq!(
        p.status,
        StatusCode::SEE_OTHER,
        "{}",
        p.from("erro-transferencia")
    );
    let after = app.registry().await;
    let permit = after.permits.iter().find(|p| p.number == "0003").unwrap();
    assert_eq!(permit.holder_id, aux);
    assert!(permit.auxiliaries.iter().all(|a| a.person_id != aux));
    let page = c.get("/escritorio/alvaras/0003").await;
    assert!(page.from("aviso").contains(&receiver.name));
    assert!(page.from("transferencias").contains("voluntária"));
    let reg = after;

    // Art. 11: a swap needs the fee; with it, the stands are exchanged.
    let (a, b) = ("0001", "0025");
    let stand = |reg: &Registry, n: &str| {
        reg.permits
            .iter()
            .find(|p| p.number == n)
            .unwrap()
            .stand_id
            .clone()
    };
    let (sa, sb) = (stand(&reg, a), stand(&reg, b));
    assert_ne!(sa, sb);
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/permuta",
            &[("com", b)],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.from("erro-permuta");
    assert!(err.contains("R44") && err.contains("art. 11"), "{err}");
    // Radio-taxi and common stands are not swapped (art. 28).
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/permuta",
            &[("com", "0102"), ("taxa", "sim")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        p.from("erro-permuta").contains("R38"),
        "{}",
        p.from("erro-permuta")
    );
    let p = c
        .post_form(
            "/escritorio/alvaras/0001",
            "/escritorio/alvaras/0001/permuta",
            &[("com", b), ("taxa", "sim")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let reg2 = app.registry().await;
    assert_eq!(reg2.version, reg.version + 1);
    assert_eq!((stand(&reg2, a), stand(&reg2, b)), (sb.clone(), sa.clone()));
    let page = c.get("/escritorio/alvaras/0001").await;
    assert!(page.from("aviso").contains("permutados"));
    assert!(page.from("ponto").contains(&sb));

    // The audit chain names the session's user and desk device.
    let audit = app.state.store().verify_audit().await.unwrap();
    assert!(audit.ok);
}

#[tokio::test]
async fn forms_without_the_session_token_or_from_elsewhere_change_nothing() {
    let app = app().await;
    let before = app.registry().await.version;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let p = c
        .post_raw(
            "/escritorio/alvaras/0001/permuta",
            "csrf=forjado&com=0025&taxa=sim",
            "application/x-www-form-urlencoded",
        )
        .await;
    p.html(StatusCode::FORBIDDEN);
    assert!(p.has("erro-csrf"));
    let csrf = c.get("/escritorio/cadastro/importar").await.csrf();
    let req = Request::builder()
        .method(Method::POST)
        .uri("/escritorio/cadastro/importar")
        .header("origin", "http://outro.site")
        .header("content-type", "multipart/form-data; boundary=x");
    let p = c
        .send(
            req,
            Body::from(format!(
                "--x\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n--x--\r\n"
            )),
        )
        .await;
    p.html(StatusCode::FORBIDDEN);
    let p = c
        .upload(b"permit_number\n0001\n", Some("forjado".into()))
        .await;
    p.html(StatusCode::FORBIDDEN);
    assert_eq!(app.registry().await.version, before);

    // An officer may log in but these pages are the office's.
    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    let p = officer.get("/escritorio/alvaras").await;
    p.html(StatusCode::FORBIDDEN);
    assert!(p.has("sem-permissao"));
    // No session: to the login page, then back.
    let mut anonymous = Client {
        app: &app,
        cookie: None,
    };
    let p = anonymous.get("/escritorio/alvaras/0001").await;
    assert_eq!(p.status, StatusCode::SEE_OTHER);
    assert_eq!(p.location(), "/login?next=/escritorio/alvaras/0001");
}

#[tokio::test]
async fn csv_export_and_import_report_every_bad_row_and_import_all_or_nothing() {
    let app = app().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let form = c.get("/escritorio/cadastro/importar").await;
    form.html(StatusCode::OK);
    form.assert_labelled();
    assert!(form.body.contains("enctype=\"multipart/form-data\""));
    let export = c.get("/escritorio/cadastro/exportar").await;
    assert_eq!(export.status, StatusCode::OK);
    assert!(
        export.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    assert!(
        export.headers["content-disposition"]
            .to_str()
            .unwrap()
            .contains("attachment")
    );
    let csv = export.body.clone();
    assert_eq!(csv.lines().count(), 122, "header + 121 permits");
    let version = app.registry().await.version;

    // The export imported back changes nothing.
    let p = c.upload(csv.as_bytes(), None).await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let shown = c.get("/escritorio/cadastro/importar").await;
    assert!(shown.from("aviso").contains("nada mudou"), "{}", shown.body);
    assert_eq!(app.registry().await.version, version);

    // Two bad rows: each is reported with its line and column; nothing is imported.
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let cpf = header.iter().position(|h| h == "holder_cpf").unwrap();
    let year = header.iter().position(|h| h == "vehicle_year").unwrap();
    let mut records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let edit = |r: &csv::StringRecord, col: usize, v: &str| -> csv::StringRecord {
        r.iter()
            .enumerate()
            .map(|(i, x)| if i == col { v } else { x })
            .collect()
    };
    records[0] = edit(&records[0], cpf, "123.456.789-00");
    records[4] = edit(&records[4], year, "dois mil e vinte");
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).unwrap();
    for r in &records {
        w.write_record(r).unwrap();
    }
    let bad = w.into_inner().unwrap();
    let p = c.upload(&bad, None).await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let report = p.from("erro-importacao");
    assert!(report.contains("Nada foi importado"), "{report}");
    assert!(p.from("total-erros").contains("2 problemas"));
    assert!(
        p.from("erro-linha-2").contains("holder_cpf"),
        "{}",
        p.from("erro-linha-2")
    );
    assert!(p.from("erro-linha-6").contains("vehicle_year"));
    assert!(!report.contains("123.456.789-00"), "no CPF in messages");
    assert_eq!(app.registry().await.version, version);

    // Reinstating a revoked permit in the file would exceed the art. 14 cap (118): the file as a
    // whole is refused, citing the article.
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).unwrap();
    for r in csv::Reader::from_reader(csv.as_bytes()).records() {
        let mut r = r.unwrap();
        if &r[col("permit_number")] == "0040" {
            r = edit(&r, col("permit_state"), "active");
            r = edit(&r, col("permit_state_from"), "");
            r = edit(&r, col("permit_state_until"), "");
        }
        w.write_record(&r).unwrap();
    }
    let p = c.upload(&w.into_inner().unwrap(), None).await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    let err = p.from("erro-importacao");
    assert!(err.contains("art. 14") && err.contains("118"), "{err}");
    assert!(
        err.contains("<td>arquivo</td>"),
        "a problem of the whole file: {err}"
    );
    assert_eq!(app.registry().await.version, version);

    // An empty file is said, not imported.
    let p = c.upload(b"", None).await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-importacao").contains("Escolha um arquivo CSV"));
    // Still in force: the suspended permit stayed suspended.
    let reg = app.registry().await;
    assert!(matches!(
        reg.permits
            .iter()
            .find(|p| p.number == "0007")
            .unwrap()
            .state,
        PermitState::Suspended { .. }
    ));
}

/// The law's parameters page: the series and calendar of the registry, the next year's IPCA
/// entered once the year is over, holidays added and removed; refusals say why and keep what
/// was typed; a officer has no access.
#[tokio::test]
async fn the_law_page_enters_the_next_ipca_and_holidays() {
    let app = app().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let p = c.get("/escritorio/lei").await;
    let body = p.html(StatusCode::OK);
    assert!(body.contains("id=\"menu-lei\""), "linked from the menu");
    assert!(p.from("lei-proximo-ipca").contains(">2026<"));
    assert!(p.from("lei-ipca").contains("4,26"));
    assert!(p.from("lei-feriados").contains("Consciência Negra"));
    p.assert_labelled();
    let before = app.registry().await.version;

    // 30 Nov 2026: the 2026 index is not known yet.
    let p = c
        .post_form(
            "/escritorio/lei",
            "/escritorio/lei/ipca",
            &[("ano", "2026"), ("indice", "4,50")],
        )
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        p.from("erro-form-ipca").contains("dezembro de 2026"),
        "{}",
        p.body
    );
    assert!(p.from("ipca-indice").contains("value=\"4,50\""));
    assert_eq!(app.registry().await.version, before);

    // A municipal holiday, once.
    let fields = [
        ("tipo", "municipal"),
        ("dia", "27/08"),
        ("nome", "Aniversário de Americana"),
    ];
    let p = c
        .post_form("/escritorio/lei", "/escritorio/lei/feriados", &fields)
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let p = c
        .post_form("/escritorio/lei", "/escritorio/lei/feriados", &fields)
        .await;
    p.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(p.from("erro-form-feriado").contains("Já há um feriado"));
    let reg = app.registry().await;
    assert_eq!(reg.version, before + 1);
    assert_eq!(
        reg.law().holidays().municipal[0].name,
        "Aniversário de Americana"
    );
    let p = c
        .post_form(
            "/escritorio/lei",
            "/escritorio/lei/feriados/excluir",
            &[("tipo", "municipal"), ("dia", "27/08")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert!(app.registry().await.law().holidays().municipal.is_empty());

    // January 2027: the office enters 2026 and the page asks for 2027 next.
    app.state.clock().advance(chrono::Duration::days(40));
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let p = c
        .post_form(
            "/escritorio/lei",
            "/escritorio/lei/ipca",
            &[("ano", "2026"), ("indice", "4,50")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let p = c.get("/escritorio/lei").await;
    assert!(p.from("aviso").contains("IPCA de 2026 cadastrado"));
    assert!(p.from("lei-proximo-ipca").contains(">2027<"));
}

/// The value attribute of the input with `id`.
#[tokio::test]
async fn the_fines_page_lists_filters_and_records_a_payment_once() {
    let app = app().await;
    let reg = app.registry().await;
    let unpaid = reg
        .fines
        .iter()
        .find(|f| f.permit_number == "0019")
        .unwrap()
        .clone();
    assert!(unpaid.paid_on.is_none());
    let paid = reg.fines.iter().find(|f| f.paid_on.is_some()).unwrap();
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;

    // The list: every fine with its permit, holder, amount and state; the menu leads here.
    let p = c.get("/escritorio/multas").await;
    p.html(StatusCode::OK);
    p.assert_labelled();
    assert!(p.has("menu-multas") && p.has("form-pagamento") && p.has("tabela-multas"));
    let row = p.from(&format!("multa-{}", unpaid.id));
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("0019") && row.contains("R$ 797,02"), "{row}");
    assert!(row.contains("não paga"), "{row}");
    assert!(
        row.contains(&format!("id=\"pagar-multa-{}\"", unpaid.id)),
        "{row}"
    );
    let row = p.from(&format!("multa-{}", paid.id));
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains("paga em") && !row.contains("pagar-multa-"),
        "{row}"
    );
    // The unpaid filter leaves the paid one out.
    let p = c.get("/escritorio/multas?situacao=nao-pagas").await;
    p.html(StatusCode::OK);
    assert!(p.has(&format!("multa-{}", unpaid.id)));
    assert!(!p.has(&format!("multa-{}", paid.id)));
    let total = p.from("total-multas");
    assert!(
        total.contains("1 multa listada; 1 não paga no cadastro."),
        "{total}"
    );
    // The permit page and its refused renewal link to the payment, which comes prefilled.
    let permit = c.get("/escritorio/alvaras/0019").await;
    assert!(permit.has(&format!("pagar-multa-{}", unpaid.id)));
    let refused = c
        .post_form(
            "/escritorio/alvaras/0019",
            "/escritorio/alvaras/0019/renovacao",
            &[("ano", "2026")],
        )
        .await;
    refused.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.has(&format!("erro-renovacao-multa-{}", unpaid.id)));
    let p = c
        .get(&format!("/escritorio/multas?multa={}", unpaid.id))
        .await;
    assert_eq!(p.value_of("pagamento-multa"), unpaid.id);

    // Refusals: said above the form, what was typed kept, nothing stored.
    let before = app.registry().await.version;
    let cases: &[(&str, &str, StatusCode, &str)] = &[
        (
            "MUL-1999-9999",
            "",
            StatusCode::UNPROCESSABLE_ENTITY,
            "não consta",
        ),
        (
            "",
            "",
            StatusCode::UNPROCESSABLE_ENTITY,
            "Informe o número da multa",
        ),
        (
            &unpaid.id,
            "ontem",
            StatusCode::UNPROCESSABLE_ENTITY,
            "Data de pagamento inválida: «ontem»",
        ),
        (
            &unpaid.id,
            "2026-12-01",
            StatusCode::UNPROCESSABLE_ENTITY,
            "não pode ser futura",
        ),
    ];
    for (fine, date, status, says) in cases {
        let p = c
            .post_form(
                "/escritorio/multas",
                "/escritorio/multas/pagamento",
                &[("multa", fine), ("data", date)],
            )
            .await;
        p.html(*status);
        let err = p.from("erro-pagamento");
        assert!(err.contains(says), "{fine} {date}: {err}");
        assert_eq!(p.value_of("pagamento-multa"), *fine);
        assert_eq!(p.value_of("pagamento-data"), *date);
        assert_eq!(app.registry().await.version, before, "{fine} {date}");
    }

    // The payment: one new version, the fine paid on the date typed, said on the list.
    let p = c
        .post_form(
            "/escritorio/multas",
            "/escritorio/multas/pagamento",
            &[("multa", &unpaid.id), ("data", "29/11/2026")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), "/escritorio/multas");
    let reg = app.registry().await;
    assert_eq!(reg.version, before + 1);
    let fine = reg.fines.iter().find(|f| f.id == unpaid.id).unwrap();
    assert_eq!(fine.paid_on, chrono::NaiveDate::from_ymd_opt(2026, 11, 29));
    let p = c.get("/escritorio/multas").await;
    let aviso = p.from("aviso");
    assert!(
        aviso.contains(&format!(
            "Pagamento da multa {} (alvará 0019) registrado em 29/11/2026",
            unpaid.id
        )),
        "{aviso}"
    );
    let row = p.from(&format!("multa-{}", unpaid.id));
    assert!(row[..row.find("</tr>").unwrap()].contains("paga em 29/11/2026"));

    // Paid again: refused with the date it was paid, nothing stored.
    let p = c
        .post_form(
            "/escritorio/multas",
            "/escritorio/multas/pagamento",
            &[("multa", &unpaid.id), ("data", "")],
        )
        .await;
    p.html(StatusCode::CONFLICT);
    let err = p.from("erro-pagamento");
    assert!(err.contains("já foi paga em 29/11/2026"), "{err}");
    assert_eq!(app.registry().await.version, before + 1);
    assert!(app.state.store().verify_audit().await.unwrap().ok);

    // Without the session's token nothing is paid; an officer cannot open the page.
    let p = c
        .post_raw(
            "/escritorio/multas/pagamento",
            format!("csrf=forjado&multa={}", paid.id),
            "application/x-www-form-urlencoded",
        )
        .await;
    p.html(StatusCode::FORBIDDEN);
    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    officer
        .get("/escritorio/multas")
        .await
        .html(StatusCode::FORBIDDEN);
}
