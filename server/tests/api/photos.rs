//! Content-addressed photos: verified on receipt, idempotent, size-limited, role-limited.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use sha2::{Digest, Sha256};

use crate::common::{App, Resp, app};

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

async fn put(app: &App, token: &str, hash: &str, query: &str, body: Vec<u8>) -> Resp {
    let req = Request::builder()
        .method(Method::PUT)
        .uri(format!("/v1/photos/{hash}{query}"))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "image/jpeg")
        .body(Body::from(body))
        .unwrap();
    app.send(req).await
}

fn jpeg(n: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0];
    b.extend((0..n).map(|i| (i * 31 % 251) as u8));
    b
}

#[tokio::test]
async fn upload_is_verified_idempotent_and_readable_by_the_office() {
    let app = app().await;
    let officer = app.login("fiscal").await;
    let office = app.login("escritorio").await;
    let photo = jpeg(50_000);
    let h = sha(&photo);
    let before = app.audit_rows().await;
    let r = put(
        &app,
        &officer,
        &h,
        "?record_id=AUTO-2026-000123",
        photo.clone(),
    )
    .await
    .ok(StatusCode::CREATED);
    assert_eq!(r["stored"], true);
    assert_eq!(r["size"], photo.len());
    assert_eq!(r["record_id"], "AUTO-2026-000123");
    assert_eq!(app.audit_rows().await, before + 1);
    // Again (a retried upload): 200, nothing new.
    let r = put(&app, &officer, &h, "", photo.clone())
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["stored"], false);
    assert_eq!(r["record_id"], "AUTO-2026-000123");
    assert_eq!(app.audit_rows().await, before + 1);
    // The coordinator and the office may upload too; upper-case hashes are the same photo.
    let coordinator = app.login("coordenador").await;
    put(&app, &coordinator, &h.to_uppercase(), "", photo.clone())
        .await
        .ok(StatusCode::OK);

    let got = app.get(&format!("/v1/photos/{h}"), &office).await;
    assert_eq!(got.status, StatusCode::OK);
    assert_eq!(got.headers["content-type"], "image/jpeg");
    assert_eq!(got.headers["etag"], format!("\"{h}\"").as_str());
    assert_eq!(&got.body[..], &photo[..]);
    let admin = app.login("admin").await;
    app.get(&format!("/v1/photos/{h}"), &admin).await;
    app.get(&format!("/v1/photos/{}", sha(b"other")), &office)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn a_hash_mismatch_is_422_and_stores_nothing() {
    let app = app().await;
    let officer = app.login("fiscal").await;
    let office = app.login("escritorio").await;
    let photo = jpeg(10_000);
    let claimed = sha(b"what the device hashed");
    let before = app.audit_rows().await;
    let e = put(&app, &officer, &claimed, "", photo.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "hash_mismatch");
    assert_eq!(e["details"]["expected"], claimed);
    assert_eq!(e["details"]["received"], sha(&photo));
    assert_eq!(app.audit_rows().await, before);
    app.get(&format!("/v1/photos/{claimed}"), &office)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
    app.get(&format!("/v1/photos/{}", sha(&photo)), &office)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
    // Not a hash at all.
    put(&app, &officer, "abc", "", photo.clone())
        .await
        .error(StatusCode::BAD_REQUEST, "invalid_hash");
    app.get("/v1/photos/zz", &office)
        .await
        .error(StatusCode::BAD_REQUEST, "invalid_hash");
    put(&app, &officer, &sha(&photo), "?record_id=", photo)
        .await
        .error(StatusCode::BAD_REQUEST, "invalid_record_id");
}

#[tokio::test]
async fn photos_over_10_mb_are_413() {
    let app = app().await;
    let officer = app.login("fiscal").await;
    let big = jpeg(10 * 1024 * 1024 + 1);
    let before = app.audit_rows().await;
    let e = put(&app, &officer, &sha(&big), "", big)
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(e["details"]["limit_bytes"], 10 * 1024 * 1024);
    assert_eq!(app.audit_rows().await, before);
    // Just under the limit passes (the global 16 MB limit does not apply to photos: 10 does).
    let fits = jpeg(10 * 1024 * 1024 - 8);
    put(&app, &officer, &sha(&fits), "", fits)
        .await
        .ok(StatusCode::CREATED);
}
