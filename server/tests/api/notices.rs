//! The papers of the procedure: notifications of penalty (`/v1/office/records/{id}/notifications`,
//! `/v1/office/notifications/{id}`), the ciência that names the notification signed or
//! delivered, the case file, and the public verification page (`/verificar`).

use axum::http::{Method, StatusCode};
use documents::VerificationCode;
use serde_json::{Value, json};

use crate::common::{App, app};
use crate::office::{Auto, auto, registry, review_and_propose, two_officers};

/// An issued auto of permit 0003 driven by its first auxiliary (so the holder is charged too,
/// art. 32 § 2), reviewed and with `penalty` proposed; returns its id.
async fn auxiliary_case(app: &App, office: &str, penalty: Value) -> String {
    let (mut a, _) = two_officers(app).await;
    let id = a
        .auto(
            app,
            Auto {
                auxiliary: true,
                ..auto("0003")
            },
        )
        .await;
    review_and_propose(app, office, &id, penalty).await;
    id
}

async fn decide(app: &App, office: &str, id: &str, penalty: Value) {
    app.post(
        &format!("/v1/office/records/{id}/decide"),
        office,
        json!({ "penalty": penalty }),
    )
    .await
    .ok(StatusCode::OK);
}

async fn generate(app: &App, office: &str, id: &str, body: Value) -> crate::common::Resp {
    app.post(
        &format!("/v1/office/records/{id}/notifications"),
        office,
        body,
    )
    .await
}

async fn public(app: &App, path: &str) -> crate::common::Resp {
    app.request(Method::GET, path, None, None).await
}

/// The office's clerk, as the office functions take them.
pub(crate) async fn clerk_auth(app: &App) -> taxi_fiscal_server::auth::Auth {
    let users = app.state.store().list_users().await.unwrap();
    let clerk = users.iter().find(|u| u.username == "escritorio").unwrap();
    taxi_fiscal_server::auth::Auth {
        user_id: clerk.id.clone(),
        username: clerk.username.clone(),
        role: taxi_fiscal_server::auth::Role::Office,
        stand_id: None,
        device_id: String::from("web"),
    }
}

fn text(r: &crate::common::Resp) -> String {
    String::from_utf8(r.body.to_vec()).unwrap()
}

#[tokio::test]
async fn a_notification_needs_a_decision_and_goes_to_each_person_charged() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "fine" })).await;
    // Proposed, not decided: refused, nothing stored.
    let footprint = app.footprint().await;
    let e = generate(&app, &office, &id, json!({}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "nothing_to_notify");
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("depois da decisão da penalidade"), "{msg}");
    assert_eq!(app.footprint().await, footprint, "nothing stored");

    decide(&app, &office, &id, json!({ "kind": "fine" })).await;
    let audit_before = app.audit_rows().await;
    let made = generate(&app, &office, &id, json!({}))
        .await
        .ok(StatusCode::OK);
    let list = made["notifications"].as_array().unwrap();
    assert_eq!(list.len(), 2, "driver and holder (art. 32 § 2): {made:#}");
    assert_eq!(
        app.audit_rows().await,
        audit_before + 2,
        "one audit row each"
    );
    let numbers: Vec<&str> = list.iter().map(|n| n["number"].as_str().unwrap()).collect();
    assert_eq!(numbers, ["NP-2026-000001", "NP-2026-000002"]);

    let reg = registry(&app).await;
    let permit = reg.permits.iter().find(|p| p.number == "0003").unwrap();
    let aux = &permit.auxiliaries[0].person_id;
    let name_of = |pid: &str| {
        reg.people
            .iter()
            .find(|p| p.id == pid)
            .unwrap()
            .name
            .clone()
    };
    let driver = &list[0]["content"];
    assert_eq!(driver["addressee"]["name"], name_of(aux));
    assert!(
        driver["addressee"]["role"]
            .as_str()
            .unwrap()
            .contains("motorista auxiliar"),
        "{driver:#}"
    );
    let holder = &list[1]["content"];
    assert_eq!(holder["addressee"]["name"], name_of(&permit.holder_id));
    assert!(
        holder["addressee"]["role"]
            .as_str()
            .unwrap()
            .contains("art. 32, § 2º")
    );
    for n in [driver, holder] {
        assert_eq!(n["decision"]["penalty"], "multa");
        assert_eq!(n["decision"]["citation"], "Lei 4.019/2004, art. 32, II");
        assert_eq!(n["appeal_days"], 10);
        // The fine of art. 32 II in force in 2026 (R$ 240,00 of 2004 by the IPCA).
        assert_eq!(n["amount"]["amount"], "797.02");
        assert_eq!(n["autos"][0]["plate"], driver["autos"][0]["plate"]);
        assert!(!n["filing_place"].as_str().unwrap().is_empty());
        assert!(n["addressee"]["document"].is_null(), "no CPF on paper");
    }
    // The code in the content is the row's, and the JSON and list routes agree.
    let nid = list[0]["id"].as_str().unwrap();
    let one = app
        .get(&format!("/v1/office/notifications/{nid}"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(one["code"], list[0]["code"]);
    assert_eq!(one["content"]["verification"]["code"], list[0]["code"]);
    let all = app
        .get(&format!("/v1/office/records/{id}/notifications"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(all.as_array().unwrap().len(), 2);

    // Again for the same decision: 409 naming the ones that exist, nothing stored.
    let footprint = app.footprint().await;
    let e = generate(&app, &office, &id, json!({}))
        .await
        .error(StatusCode::CONFLICT, "notification_exists");
    assert!(e["message"].as_str().unwrap().contains("NP-2026-000001"));
    assert_eq!(app.footprint().await, footprint);
    // Someone not charged: refused.
    generate(&app, &office, &id, json!({ "person": "registry:P99" }))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "not_charged");
    // An officer may not generate one.
    let officer = app.login("fiscal").await;
    let r = generate(&app, &officer, &id, json!({})).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_ciencia_by_signature_names_a_notification_of_this_record() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "written_warning" })).await;
    decide(&app, &office, &id, json!({ "kind": "written_warning" })).await;
    let notify = |body: Value| {
        let app = &app;
        let office = office.clone();
        let id = id.clone();
        async move {
            app.post(&format!("/v1/office/records/{id}/notify"), &office, body)
                .await
        }
    };
    let footprint = app.footprint().await;
    // The auto was not signed on the spot: a signature without a notification is refused.
    for method in ["personal_signature", "postal_receipt"] {
        let e = notify(json!({ "method": method, "on": "2026-11-30" }))
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "notification_required");
        assert!(
            e["message"].as_str().unwrap().contains("notificação"),
            "{e}"
        );
    }
    // A number that is not this record's.
    let e = notify(json!({ "method": "personal_signature", "on": "2026-11-30",
                            "notification": "NP-2026-000099" }))
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "notification_required");
    assert!(e["message"].as_str().unwrap().contains("NP-2026-000099"));
    // The generic events route asks the same of a ciência.
    app.post(
        &format!("/v1/records/{id}/events"),
        &office,
        json!({ "event": { "kind": "notified", "method": "personal_signature",
                           "on": "2026-11-30" } }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "notification_required");
    assert_eq!(app.footprint().await, footprint, "nothing stored");

    let made = generate(&app, &office, &id, json!({}))
        .await
        .ok(StatusCode::OK);
    let number = made["notifications"][0]["number"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = notify(json!({ "method": "personal_signature", "on": "2026-11-30",
                           "notification": number }))
    .await
    .ok(StatusCode::OK);
    let events = r["case"]["record"]["events"].as_array().unwrap();
    let notified = events
        .iter()
        .find(|e| e["event"]["kind"] == "notified")
        .unwrap();
    assert_eq!(notified["event"]["notification"], number);
    // A publication names none.
    let app = crate::common::app().await;
    let office = app.login("escritorio").await;
    let other = auxiliary_case(&app, &office, json!({ "kind": "written_warning" })).await;
    decide(&app, &office, &other, json!({ "kind": "written_warning" })).await;
    app.post(
        &format!("/v1/office/records/{other}/notify"),
        &office,
        json!({ "method": "publication", "on": "2026-11-30" }),
    )
    .await
    .ok(StatusCode::OK);
}

#[tokio::test]
async fn verificar_shows_only_the_paper_and_the_state_and_nothing_for_other_codes() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "fine" })).await;
    decide(&app, &office, &id, json!({ "kind": "fine" })).await;
    let made = generate(&app, &office, &id, json!({}))
        .await
        .ok(StatusCode::OK);
    let n = &made["notifications"][0];
    let code = VerificationCode::parse(n["code"].as_str().unwrap()).unwrap();
    let number = n["number"].as_str().unwrap();

    let page = public(&app, &format!("/verificar/{code}")).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = text(&page);
    assert!(html.contains("Documento autêntico"), "{html}");
    assert!(html.contains(number));
    assert!(
        html.contains("Penalidade decidida; aguarda a ciência."),
        "{html}"
    );
    assert!(html.contains(n["content"]["addressee"]["name"].as_str().unwrap()));
    let reg = registry(&app).await;
    for p in &reg.people {
        assert!(!html.contains(p.cpf.as_str()), "a CPF on the public page");
    }
    // The form's query and the compact code find it too.
    let q = public(&app, &format!("/verificar?codigo={}", code.compact())).await;
    assert_eq!(q.status, StatusCode::OK);

    // After the ciência naming it, the page says so.
    app.post(
        &format!("/v1/office/records/{id}/notify"),
        &office,
        json!({ "method": "postal_receipt", "on": "2026-11-30", "notification": number }),
    )
    .await
    .ok(StatusCode::OK);
    let html = text(&public(&app, &format!("/verificar/{code}")).await);
    assert!(html.contains("ciência em 30/11/2026"), "{html}");
    assert!(
        html.contains("Ciência desta notificação em 30/11/2026"),
        "{html}"
    );
    assert!(!html.contains("verificacao-substituida"));
    // A reconsideration replaces the decision: the old paper is still authentic, and the
    // page says a later decision replaced it.
    app.post(
        &format!("/v1/office/records/{id}/reconsideration"),
        &office,
        json!({ "on": "2026-11-30" }),
    )
    .await
    .ok(StatusCode::OK);
    app.post(
        &format!("/v1/office/records/{id}/reconsideration/decision"),
        &office,
        json!({ "outcome": "modified", "penalty": { "kind": "written_warning" } }),
    )
    .await
    .ok(StatusCode::OK);
    let html = text(&public(&app, &format!("/verificar/{code}")).await);
    assert!(html.contains("verificacao-substituida"), "{html}");
    assert!(html.contains("Reconsideração decidida."), "{html}");

    // One character altered, a malformed code and an unknown one: the same 404 page.
    let s = code.compact().to_owned();
    let last = s.chars().last().unwrap();
    let altered = format!(
        "{}{}",
        &s[..s.len() - 1],
        if last == '0' { '1' } else { '0' }
    );
    let unknown = VerificationCode::derive(b"taxi-fiscal/notification/v1", b"nothing");
    let mut bodies = Vec::new();
    for path in [
        format!("/verificar/{altered}"),
        String::from("/verificar/nao-e-um-codigo"),
        format!("/verificar/{}", "A".repeat(500)),
        format!("/verificar/{unknown}"),
        String::from("/verificar?codigo=XXXX"),
    ] {
        let r = public(&app, &path).await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{path}");
        let html = text(&r);
        assert!(html.contains("Código não encontrado."), "{html}");
        assert!(!html.contains(number), "{path}");
        bodies.push(html);
    }
    assert!(
        bodies.windows(2).all(|w| w[0] == w[1]),
        "malformed and unknown look the same"
    );
}

#[tokio::test]
async fn verificar_finds_an_auto_registered_by_its_code() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let id = a.auto(&app, auto("0001")).await;
    let code = VerificationCode::derive(b"taxi-fiscal/auto/v1", id.as_bytes());
    let r = public(&app, &format!("/verificar/{code}")).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "not registered yet");
    app.state
        .store()
        .register_auto_code(code.clone(), id.clone(), app.state.clock().now())
        .await
        .unwrap();
    // Registering again for the same record changes nothing.
    app.state
        .store()
        .register_auto_code(code.clone(), id.clone(), app.state.clock().now())
        .await
        .unwrap();
    let r = public(&app, &format!("/verificar/{code}")).await;
    assert_eq!(r.status, StatusCode::OK);
    let html = text(&r);
    assert!(html.contains("auto de infração"), "{html}");
    assert!(
        html.contains("Lavrado; aguarda análise da Unidade de Transportes."),
        "{html}"
    );
    let reg = registry(&app).await;
    let permit = reg.permits.iter().find(|p| p.number == "0001").unwrap();
    let plate = reg
        .vehicles
        .iter()
        .find(|v| v.id == permit.vehicle_id)
        .unwrap()
        .plate
        .canonical()
        .to_owned();
    assert!(html.contains(&plate), "{html}");
    for p in &reg.people {
        assert!(!html.contains(p.cpf.as_str()));
        // Not even the driver's name: the auto's page shows what identifies the paper.
        assert!(!html.contains(&p.name), "{}", p.name);
    }
    // The case file prints the auto with its code.
    let auth = clerk_auth(&app).await;
    let file = taxi_fiscal_server::office::notices::case_file(app.state.services(), &auth, &id)
        .await
        .unwrap();
    assert_eq!(file.auto.verification.map(|v| v.code), Some(code.clone()));
    // The office annuls it: the page says so.
    let office = app.login("escritorio").await;
    app.post(
        &format!("/v1/office/records/{id}/annul"),
        &office,
        json!({ "reason": "lavrado em duplicidade" }),
    )
    .await
    .ok(StatusCode::OK);
    let html = text(&public(&app, &format!("/verificar/{code}")).await);
    assert!(html.contains("Anulado"), "{html}");
}

#[tokio::test]
async fn verificar_is_rate_limited_per_address_at_its_edge() {
    let app = app().await;
    let unknown = VerificationCode::derive(b"x", b"y");
    // The form alone costs nothing.
    for _ in 0..3 {
        assert_eq!(public(&app, "/verificar").await.status, StatusCode::OK);
    }
    for i in 0..taxi_fiscal_server::limits::VERIFY_LOOKUPS_PER_ADDRESS_BURST {
        let r = public(&app, &format!("/verificar/{unknown}")).await;
        assert_eq!(
            r.status,
            StatusCode::NOT_FOUND,
            "lookup {i} within the budget"
        );
    }
    let r = public(&app, &format!("/verificar/{unknown}")).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(
        (1..=taxi_fiscal_server::limits::VERIFY_LOOKUP_REPLENISH.as_secs()).contains(&retry),
        "{retry}"
    );
    assert!(text(&r).contains("Muitas consultas deste endereço"));
}

/// The text of a PDF, through poppler's `pdftotext` (Debian's `poppler-utils`).
pub(crate) fn pdf_text(bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.pdf");
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new("pdftotext")
        .args(["-layout", path.to_str().unwrap(), "-"])
        .output()
        .expect("pdftotext (apt-get install poppler-utils)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whitespace folded, so words a PDF line wraps still match.
pub(crate) fn folded(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[tokio::test]
async fn the_notification_and_the_case_file_come_back_as_pdfs_that_say_it() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "fine" })).await;
    decide(&app, &office, &id, json!({ "kind": "fine" })).await;
    let made = generate(&app, &office, &id, json!({}))
        .await
        .ok(StatusCode::OK);
    let n = &made["notifications"][0];
    let nid = n["id"].as_str().unwrap();
    let number = n["number"].as_str().unwrap();
    let name = n["content"]["addressee"]["name"].as_str().unwrap();
    let code = VerificationCode::parse(n["code"].as_str().unwrap()).unwrap();

    let r = app
        .get(&format!("/v1/office/notifications/{nid}/pdf"), &office)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", text(&r));
    assert_eq!(r.headers["content-type"], "application/pdf");
    let cd = r.headers["content-disposition"].to_str().unwrap();
    assert!(cd.contains(&format!("{number}.pdf")), "{cd}");
    assert!(r.body.starts_with(b"%PDF"));
    let t = folded(&pdf_text(&r.body));
    assert!(t.contains(name), "addressee: {t}");
    assert!(t.contains("art. 32, II"), "article: {t}");
    assert!(t.contains(&code.to_string()), "code {code}: {t}");
    assert!(t.contains(number), "{t}");

    let r = app
        .get(&format!("/v1/office/records/{id}/case-file"), &office)
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", text(&r));
    assert_eq!(r.headers["content-type"], "application/pdf");
    assert!(r.body.starts_with(b"%PDF"));
    let t = folded(&pdf_text(&r.body));
    let holder = made["notifications"][1]["content"]["addressee"]["name"]
        .as_str()
        .unwrap();
    assert!(t.contains(holder), "the holder in the auto: {t}");
    assert!(t.contains("art. 32, II"), "the decision's article: {t}");
    assert!(t.contains(number), "the notifications: {t}");
    assert!(t.contains(&code.to_string()), "their codes: {t}");

    // Officers do not read the office's papers.
    let officer = app.login("fiscal").await;
    let r = app
        .get(&format!("/v1/office/records/{id}/case-file"), &officer)
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    app.get("/v1/office/notifications/nao-existe", &office)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn the_case_file_holds_the_auto_the_verdict_the_history_and_the_notifications() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "fine" })).await;
    decide(&app, &office, &id, json!({ "kind": "fine" })).await;
    let made = generate(&app, &office, &id, json!({}))
        .await
        .ok(StatusCode::OK);
    let users = app.state.store().list_users().await.unwrap();
    let clerk = users.iter().find(|u| u.username == "escritorio").unwrap();
    let auth = clerk_auth(&app).await;
    let file = taxi_fiscal_server::office::notices::case_file(app.state.services(), &auth, &id)
        .await
        .unwrap();
    let reg = registry(&app).await;
    let permit = reg.permits.iter().find(|p| p.number == "0003").unwrap();
    let holder = reg
        .people
        .iter()
        .find(|p| p.id == permit.holder_id)
        .unwrap();
    assert_eq!(file.auto.permit_number.as_deref(), Some("0003"));
    assert_eq!(file.auto.holder.as_ref().unwrap().name, holder.name);
    assert!(!file.auto.legal_basis.is_empty());
    assert!(!file.auto.legal_basis[0].description.is_empty());
    assert_eq!(file.generated_by, clerk.display_name);
    // The history in Portuguese, by staff names, never the events' internal names.
    let whats: Vec<&str> = file.timeline.iter().map(|t| t.what.as_str()).collect();
    assert!(whats.iter().any(|w| w.starts_with("Decisão")), "{whats:?}");
    assert!(
        whats
            .iter()
            .any(|w| w.contains("multa (Lei 4.019/2004, art. 32, II)")),
        "{whats:?}"
    );
    for w in &whats {
        assert!(
            !w.contains("penalty_decided") && !w.contains("reviewed"),
            "{w}"
        );
    }
    assert!(
        file.timeline
            .iter()
            .any(|t| t.who.contains(&clerk.display_name))
    );
    // The auto was written without a verdict: one line says so.
    assert_eq!(file.verdict.len(), 1, "{:?}", file.verdict);
    assert_eq!(file.notifications.len(), 2);
    assert!(file.notifications[0].contains(made["notifications"][0]["number"].as_str().unwrap()));
}

#[tokio::test]
async fn an_auto_signed_on_the_spot_stands_for_the_signature_of_the_ciencia() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let (mut a, _) = two_officers(&app).await;
    let id = a
        .auto(
            &app,
            Auto {
                signed: true,
                ..auto("0001")
            },
        )
        .await;
    review_and_propose(&app, &office, &id, json!({ "kind": "written_warning" })).await;
    decide(&app, &office, &id, json!({ "kind": "written_warning" })).await;
    // A postal receipt still names the notification delivered.
    app.post(
        &format!("/v1/office/records/{id}/notify"),
        &office,
        json!({ "method": "postal_receipt", "on": "2026-11-30" }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "notification_required");
    let r = app
        .post(
            &format!("/v1/office/records/{id}/notify"),
            &office,
            json!({ "method": "personal_signature", "on": "2026-11-30" }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["case"]["record"]["status"], "notified");
}

#[tokio::test]
async fn the_driver_and_the_holder_each_take_notice_once() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "written_warning" })).await;
    decide(&app, &office, &id, json!({ "kind": "written_warning" })).await;
    let made = generate(&app, &office, &id, json!({}))
        .await
        .ok(StatusCode::OK);
    let numbers: Vec<String> = made["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["number"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(numbers.len(), 2, "driver and holder: {made}");
    let notify = |number: &str, on: &str| {
        let body = json!({ "method": "personal_signature", "on": on, "notification": number });
        let app = &app;
        let office = office.clone();
        let id = id.clone();
        async move {
            app.post(&format!("/v1/office/records/{id}/notify"), &office, body)
                .await
        }
    };
    // The server's clock is the decision's day: both take notice on it (the kernel's tests
    // move the deadline to the later of two ciências on different days).
    let first = notify(&numbers[0], "2026-11-30").await.ok(StatusCode::OK);
    let first_deadline = first["case"]["record"]["appeal_deadline"].clone();
    // The same paper twice: refused, nothing stored.
    let footprint = app.footprint().await;
    let e = notify(&numbers[0], "2026-11-30")
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "already_notified");
    assert!(e["message"].as_str().unwrap().contains(&numbers[0]), "{e}");
    assert_eq!(app.footprint().await, footprint, "nothing stored");
    // The other person charged takes notice too: accepted, not flagged.
    let second = notify(&numbers[1], "2026-11-30").await.ok(StatusCode::OK);
    let record = &second["case"]["record"];
    let valid_notices = record["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["kind"] == "notified" && e["valid"] == true)
        .count();
    assert_eq!(valid_notices, 2, "{record}");
    assert_eq!(record["notified_on"], "2026-11-30");
    assert_eq!(record["appeal_deadline"], first_deadline);
    assert_eq!(record["invalid_events"], json!([]), "{record}");
}

#[tokio::test]
async fn garbage_and_oversized_notification_and_ciencia_bodies_are_refused_and_store_nothing() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let id = auxiliary_case(&app, &office, json!({ "kind": "written_warning" })).await;
    decide(&app, &office, &id, json!({ "kind": "written_warning" })).await;
    let footprint = app.footprint().await;
    for body in [
        json!({ "person": 42 }),
        json!({ "persona": "registry:P02" }),
    ] {
        generate(&app, &office, &id, body)
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    }
    // A person reference far longer than any real one names nobody charged.
    generate(
        &app,
        &office,
        &id,
        json!({ "person": "registry:".repeat(10_000) }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "not_charged");
    let req = axum::http::Request::builder()
        .method(Method::POST)
        .uri(format!("/v1/office/records/{id}/notifications"))
        .header("authorization", format!("Bearer {office}"))
        .header("content-type", "application/json")
        .body(axum::body::Body::from("{não é json"))
        .unwrap();
    app.send(req)
        .await
        .error(StatusCode::BAD_REQUEST, "malformed_json");
    // A ciência naming an oversized, unknown notification.
    app.post(
        &format!("/v1/office/records/{id}/notify"),
        &office,
        json!({ "method": "personal_signature", "on": "2026-11-30",
                "notification": "NP-".repeat(10_000) }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "notification_required");
    assert_eq!(app.footprint().await, footprint, "nothing stored");
}
