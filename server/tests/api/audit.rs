//! The audit chain: one row per accepted change, none for a refused one, and tampering is found
//! at the row that was changed.

use axum::http::StatusCode;
use serde_json::json;
use taxi_fiscal_server::config::DB_FILE;

use crate::common::app;

#[tokio::test]
async fn every_change_is_chained_and_refusals_leave_no_row() {
    let app = app().await;
    // Seeding: the registry, 4 users and 4 devices.
    assert_eq!(app.audit_rows().await, 9);
    let t = app.login("escritorio").await;
    app.post(
        "/v1/fines",
        &t,
        json!({"permit_number": "0011", "amount": "10.00"}),
    )
    .await
    .ok(StatusCode::CREATED);
    app.post("/v1/permits/0019/renewal", &t, json!({"year": 2026}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(app.audit_rows().await, 10);
    let report = app.state.store().verify_audit().await.unwrap();
    assert!(report.ok);
    assert_eq!(report.head.as_deref().map(str::len), Some(64));
}

#[tokio::test]
async fn tampering_is_detected_at_that_row() {
    let app = app().await;
    let t = app.login("escritorio").await;
    for n in ["0011", "0012", "0013"] {
        app.post(
            "/v1/fines",
            &t,
            json!({"permit_number": n, "amount": "10.00"}),
        )
        .await
        .ok(StatusCode::CREATED);
    }
    assert_eq!(app.audit_rows().await, 12);
    let db = app.dir.path().join(DB_FILE);
    let conn = rusqlite::Connection::open(&db).unwrap();
    // The table refuses changes...
    let refused = conn.execute(
        "UPDATE audit_log SET subject = 'permit:9999' WHERE seq = 11",
        [],
    );
    assert!(refused.unwrap_err().to_string().contains("append-only"));
    assert!(
        conn.execute("DELETE FROM audit_log WHERE seq = 11", [])
            .is_err()
    );
    // ...so an attacker with the file drops the trigger first; the chain still tells.
    conn.execute_batch(
        "DROP TRIGGER audit_log_no_update; \
         UPDATE audit_log SET subject = 'permit:9999' WHERE seq = 11;",
    )
    .unwrap();
    let report = app.state.store().verify_audit().await.unwrap();
    assert!(!report.ok);
    let broken = report.first_broken.unwrap();
    assert_eq!(broken.seq, 11);
    assert!(broken.reason.contains("hash"), "{}", broken.reason);

    // Recomputing that row's hash moves the break to the next link, never hides it.
    let row: taxi_fiscal_server::audit::AuditRow = conn
        .query_row(
            "SELECT seq, at, user_id, device_id, action, subject, payload_hash, prev_hash, hash \
             FROM audit_log WHERE seq = 11",
            [],
            |r| {
                Ok(taxi_fiscal_server::audit::AuditRow {
                    seq: r.get::<_, i64>(0)? as u64,
                    at: r.get(1)?,
                    user_id: r.get(2)?,
                    device_id: r.get(3)?,
                    action: r.get(4)?,
                    subject: r.get(5)?,
                    payload_hash: r.get(6)?,
                    prev_hash: r.get(7)?,
                    hash: r.get(8)?,
                })
            },
        )
        .unwrap();
    let rehashed = taxi_fiscal_server::audit::row_hash(&row);
    conn.execute("UPDATE audit_log SET hash = ?1 WHERE seq = 11", [rehashed])
        .unwrap();
    let report = app.state.store().verify_audit().await.unwrap();
    assert_eq!(report.first_broken.unwrap().seq, 12);
}
