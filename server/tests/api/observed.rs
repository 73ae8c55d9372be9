//! `/v1/records/{id}/observed-persons`: the author's device sends the identity and contact of
//! the witnesses of a record apart from its history; only the office reads them; the office
//! erases them once the case ended, and the rows really leave the database file.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use chrono::Duration;
use serde_json::{Value, json};
use sync_core::limits::{MAX_OBSERVED_PERSONS, MAX_PERSON_NAME_CHARS};
use sync_core::records::{PersonRef, WitnessInput};
use taxi_fiscal_server::limits::OBSERVED_PERSONS_BODY_LIMIT;

use crate::common::{App, NOW, app};
use crate::notices::{folded, pdf_text};
use crate::office::{Phone, auto, two_officers};

fn path(id: &str) -> String {
    format!("/v1/records/{id}/observed-persons")
}

/// An auto of `p` with the observed witness `w1`, synced.
async fn auto_with_witness(app: &App, p: &mut Phone) -> String {
    let id = p.auto(app, auto("0001")).await;
    let at: chrono::DateTime<chrono::Utc> = NOW.parse().unwrap();
    p.edit(&id, |d, a| {
        d.add_witness(
            a,
            at - Duration::hours(2),
            &WitnessInput {
                person: PersonRef::Observed("w1".into()),
                statement: "Vi o táxi parado fora do ponto.".into(),
            },
        )
        .unwrap();
    });
    p.sync_all(app).await;
    id
}

fn maria() -> Value {
    json!({ "persons": [{
        "id": "w1", "name": "Maria da Silva", "cpf": "123.456.789-09",
        "phone": "(19) 99999-0000", "address": "Rua das Flores, 10, Centro"
    }] })
}

async fn raw(app: &App, token: &str, id: &str, ct: &str, body: Vec<u8>) -> crate::common::Resp {
    app.send(
        Request::builder()
            .method(Method::PUT)
            .uri(path(id))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", ct)
            .body(Body::from(body))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn only_the_author_sends_and_only_the_office_reads() {
    let app = app().await;
    let (mut fiscal, other) = two_officers(&app).await;
    let id = auto_with_witness(&app, &mut fiscal).await;
    let office = app.login("escritorio").await;
    let admin = app.login("admin").await;
    let coordinator = app.login("coordenador").await;

    // Nothing yet.
    let held = app.get(&path(&id), &office).await.ok(StatusCode::OK);
    assert_eq!(held["persons"], json!([]));

    let before = app.audit_rows().await;
    let r = app
        .put(&path(&id), fiscal.token(), maria())
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["persons"], 1);
    assert_eq!(r["changed"], true);
    assert_eq!(app.audit_rows().await, before + 1);
    // A repeat (a lost answer) stores nothing new and writes no audit row.
    let r = app
        .put(&path(&id), fiscal.token(), maria())
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["changed"], false);
    assert_eq!(app.audit_rows().await, before + 1);
    // The audit row names the act, never the person.
    let audit = app
        .get(&format!("/v1/records/{id}/audit"), &office)
        .await
        .ok(StatusCode::OK);
    let text = audit.to_string();
    assert!(text.contains("record.observed_persons.upload"), "{text}");
    assert!(!text.contains("Maria"), "{text}");

    for token in [&office, &admin] {
        let held = app.get(&path(&id), token).await.ok(StatusCode::OK);
        assert_eq!(held["persons"][0]["name"], "Maria da Silva");
        assert_eq!(held["persons"][0]["phone"], "(19) 99999-0000");
        assert_eq!(held["persons"][0]["address"], "Rua das Flores, 10, Centro");
    }
    // Other officers, coordinators and even the author (who holds them on the device) never
    // read them from the server.
    for token in [other.token(), coordinator.as_str(), fiscal.token()] {
        app.get(&path(&id), token)
            .await
            .error(StatusCode::FORBIDDEN, "forbidden");
    }
    // Nor does anyone but the author send them.
    for token in [
        other.token(),
        coordinator.as_str(),
        office.as_str(),
        admin.as_str(),
    ] {
        app.put(
            &path(&id),
            token,
            json!({ "persons": [{ "id": "w1", "name": "Outra" }] }),
        )
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    }
    // The record itself, as any reader or device gets it, carries no name.
    let detail = app
        .get(&format!("/v1/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    assert!(!detail.to_string().contains("Maria"));
    let held = app.get(&path(&id), &office).await.ok(StatusCode::OK);
    assert_eq!(held["persons"][0]["name"], "Maria da Silva");
    assert_eq!(held["persons"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn unknown_ids_limits_and_garbage_are_refused_and_store_nothing() {
    let app = app().await;
    let (mut fiscal, _) = two_officers(&app).await;
    let id = auto_with_witness(&app, &mut fiscal).await;
    let office = app.login("escritorio").await;
    let t = fiscal.token().to_owned();
    app.put(&path(&id), &t, maria()).await.ok(StatusCode::OK);
    let rows = app.audit_rows().await;
    // An id the record does not name, or named twice.
    let e = app
        .put(
            &path(&id),
            &t,
            json!({ "persons": [{ "id": "w2", "name": "Intrusa" }] }),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_observed_persons");
    assert!(
        e["message"].as_str().unwrap().contains("não é testemunha"),
        "{e}"
    );
    app.put(
        &path(&id),
        &t,
        json!({ "persons": [{ "id": "w1", "name": "A" }, { "id": "w1", "name": "B" }] }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_observed_persons");

    // The name at its limit passes, one character more is refused.
    let at = "á".repeat(MAX_PERSON_NAME_CHARS);
    app.put(
        &path(&id),
        &t,
        json!({ "persons": [{ "id": "w1", "name": at }] }),
    )
    .await
    .ok(StatusCode::OK);
    let over = "á".repeat(MAX_PERSON_NAME_CHARS + 1);
    let e = app
        .put(
            &path(&id),
            &t,
            json!({ "persons": [{ "id": "w1", "name": over }] }),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_observed_persons");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("o nome passa de 200"),
        "{e}"
    );
    app.put(&path(&id), &t, maria()).await.ok(StatusCode::OK);
    let rows = rows + 2; // the long name, then Maria again

    // At the count limit the list is read (and refused for its ids); one more is refused for
    // its length before any id is looked at.
    let many = |n: usize| json!({ "persons": (0..n).map(|i| json!({ "id": format!("x{i}"), "name": "X" })).collect::<Vec<_>>() });
    let e = app
        .put(&path(&id), &t, many(MAX_OBSERVED_PERSONS))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_observed_persons");
    assert!(
        e["message"].as_str().unwrap().contains("não é testemunha"),
        "{e}"
    );
    let e = app
        .put(&path(&id), &t, many(MAX_OBSERVED_PERSONS + 1))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_observed_persons");
    assert!(
        e["message"].as_str().unwrap().contains("no máximo 25"),
        "{e}"
    );

    // The body at its limit is read; one byte more is 413.
    let mut body = serde_json::to_vec(&maria()).unwrap();
    body.resize(OBSERVED_PERSONS_BODY_LIMIT, b' ');
    let r = raw(&app, &t, &id, "application/json", body.clone()).await;
    assert_eq!(r.ok(StatusCode::OK)["changed"], false);
    body.push(b' ');
    raw(&app, &t, &id, "application/json", body)
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");

    // Garbage.
    raw(&app, &t, &id, "application/json", b"{nao e json".to_vec())
        .await
        .error(StatusCode::BAD_REQUEST, "malformed_json");
    raw(
        &app,
        &t,
        &id,
        "text/plain",
        serde_json::to_vec(&maria()).unwrap(),
    )
    .await
    .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    app.put(
        &path(&id),
        &t,
        json!({ "persons": [{ "id": "w1", "cor": "azul" }] }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    app.put(
        &path(&id),
        &t,
        json!({ "persons": [{ "id": "w1", "name": "A\u{0}B" }] }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_observed_persons");
    app.put(&path("nao-existe"), &t, maria())
        .await
        .error(StatusCode::NOT_FOUND, "not_found");

    // Nothing of it was stored.
    assert_eq!(app.audit_rows().await, rows);
    let held = app.get(&path(&id), &office).await.ok(StatusCode::OK);
    assert_eq!(held["persons"][0]["name"], "Maria da Silva");
    assert_eq!(held["persons"].as_array().unwrap().len(), 1);
}

/// Bytes of the database file and its WAL, after a checkpoint.
fn file_bytes(app: &App) -> Vec<u8> {
    let db = app.dir.path().join(taxi_fiscal_server::config::DB_FILE);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .unwrap();
    let mut all = std::fs::read(&db).unwrap();
    if let Ok(w) = std::fs::read(db.with_extension("db-wal")) {
        all.extend(w);
    }
    all
}

async fn case_file_text(app: &App, office: &str, id: &str) -> String {
    let r = app
        .get(&format!("/v1/office/records/{id}/case-file"), office)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    folded(&pdf_text(&r.body))
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn the_office_erases_them_once_the_case_ended_and_they_leave_the_file() {
    let app = app().await;
    let (mut fiscal, _) = two_officers(&app).await;
    let id = auto_with_witness(&app, &mut fiscal).await;
    let office = app.login("escritorio").await;
    app.put(&path(&id), fiscal.token(), maria())
        .await
        .ok(StatusCode::OK);
    assert!(contains(&file_bytes(&app), "Maria da Silva"));
    // The case file names the witness and how to reach her.
    let pdf = case_file_text(&app, &office, &id).await;
    assert!(pdf.contains("Identificação das testemunhas"), "{pdf}");
    assert!(
        pdf.contains("Maria da Silva — testemunha — CPF 123.456.789-09; telefone (19) 99999-0000"),
        "{pdf}"
    );

    // Not while the case runs; not by the admin or an officer.
    let e = app
        .request(Method::DELETE, &path(&id), Some(&office), None)
        .await
        .error(StatusCode::CONFLICT, "record_not_finished");
    assert!(e["message"].as_str().unwrap().contains("arquivado"), "{e}");
    let admin = app.login("admin").await;
    app.request(Method::DELETE, &path(&id), Some(&admin), None)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");

    app.post(
        &format!("/v1/office/records/{id}/archive"),
        &office,
        json!({}),
    )
    .await
    .ok(StatusCode::OK);
    let e = app
        .request(Method::DELETE, &path(&id), Some(&office), None)
        .await
        .ok(StatusCode::OK);
    assert_eq!(e["persons"], 1);
    // Idempotent: the same erasure again.
    let again = app
        .request(Method::DELETE, &path(&id), Some(&office), None)
        .await
        .ok(StatusCode::OK);
    assert_eq!(again, e);

    let held = app.get(&path(&id), &office).await.ok(StatusCode::OK);
    assert_eq!(held["persons"], json!([]));
    assert_eq!(held["erasure"]["persons"], 1);
    // The rows are gone from the tables and from the file (secure_delete), the audit chain
    // still verifies and records the erasure.
    let db = app.dir.path().join(taxi_fiscal_server::config::DB_FILE);
    let n: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM observed_persons", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
    let bytes = file_bytes(&app);
    for gone in ["Maria da Silva", "99999-0000", "Rua das Flores"] {
        assert!(!contains(&bytes, gone), "{gone} still in the file");
    }
    app.audit_rows().await;
    let pdf = case_file_text(&app, &office, &id).await;
    assert!(!pdf.contains("Maria"), "{pdf}");
    assert!(
        pdf.contains("Dados pessoais das testemunhas apagados em"),
        "{pdf}"
    );
    let audit = app
        .get(&format!("/v1/records/{id}/audit"), &office)
        .await
        .ok(StatusCode::OK);
    assert!(audit.to_string().contains("record.observed_persons.erase"));

    // The device sending them again (it never heard of the erasure) stores nothing.
    app.put(&path(&id), fiscal.token(), maria())
        .await
        .error(StatusCode::CONFLICT, "observed_persons_erased");
    let held = app.get(&path(&id), &office).await.ok(StatusCode::OK);
    assert_eq!(held["persons"], json!([]));
}
