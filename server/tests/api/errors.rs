//! One JSON error shape everywhere: unknown routes, wrong methods, malformed or oversized bodies,
//! wrong content types — and no personal data in any of them.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::json;

use crate::common::{app, app_with};

#[tokio::test]
async fn unknown_route_and_wrong_method_are_json() {
    let app = app().await;
    app.request(Method::GET, "/nope", None, None)
        .await
        .error(StatusCode::NOT_FOUND, "route_not_found");
    let r = app.request(Method::DELETE, "/health", None, None).await;
    r.error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert!(r.headers.get("allow").is_some());
    let token = app.login("escritorio").await;
    app.request(Method::PATCH, "/v1/permits", Some(&token), None)
        .await
        .error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
}

#[tokio::test]
async fn malformed_json_wrong_type_and_bad_fields() {
    let app = app().await;
    let token = app.login("escritorio").await;
    let before = app.footprint().await;
    let raw = |ct: Option<&str>, body: &'static str| {
        let mut b = Request::builder()
            .method(Method::POST)
            .uri("/v1/permits/0001/auxiliaries")
            .header("authorization", format!("Bearer {token}"));
        if let Some(ct) = ct {
            b = b.header("content-type", ct);
        }
        app.send(b.body(Body::from(body)).unwrap())
    };
    let e = raw(Some("application/json"), "{\"person_id\": ")
        .await
        .error(StatusCode::BAD_REQUEST, "malformed_json");
    assert!(e["details"]["line"].is_number());
    raw(Some("text/plain"), "{}")
        .await
        .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    raw(None, "{}")
        .await
        .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let e = raw(
        Some("application/json"),
        r#"{"person_id": 3, "licence_number": "x"}"#,
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert_eq!(e["details"]["path"], "person_id");
    let e = raw(
        Some("application/json; charset=utf-8"),
        r#"{"licence_number": "x"}"#,
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert!(e["message"].as_str().unwrap().contains("person_id"));
    assert_eq!(app.footprint().await, before);
}

#[tokio::test]
async fn errors_never_echo_a_cpf_or_a_name() {
    let app = app().await;
    let token = app.login("escritorio").await;
    let mut person = app.get("/v1/people/P0001", &token).await.ok(StatusCode::OK);
    let cpf = person["cpf"].as_str().unwrap().to_owned();
    // A shape error inside the CPF: the message names the field, not the value.
    person["id"] = json!("P9999");
    person["cpf"] = json!("123.456");
    person["name"] = json!("Fulano Beltrano de Tal");
    let e = app
        .post("/v1/people", &token, person.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    let text = e.to_string();
    assert!(
        !text.contains("123.456") && !text.contains("Fulano"),
        "{text}"
    );
    // A duplicate CPF: the message says so without the number.
    person["cpf"] = json!(cpf);
    let e = app
        .post("/v1/people", &token, person)
        .await
        .error(StatusCode::CONFLICT, "cpf_taken");
    assert!(!e.to_string().contains(&cpf));
}

#[tokio::test]
async fn a_50_mb_body_is_413_and_stores_nothing() {
    let app = app().await;
    let token = app.login("escritorio").await;
    let before = app.footprint().await;
    // A valid JSON document of 50 MB: the limit, not the parser, must stop it.
    let mut big = String::with_capacity(50 * 1024 * 1024 + 64);
    big.push_str("{\"person_id\": \"P0002\", \"licence_number\": \"");
    big.push_str(&"x".repeat(50 * 1024 * 1024));
    big.push_str("\"}");
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/permits/0002/auxiliaries")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from(big))
        .unwrap();
    let e = app
        .send(req)
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(e["details"]["limit_bytes"], 16 * 1024 * 1024);
    // Same for a CSV import.
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/registry/import")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "text/csv")
        .body(Body::from(vec![b'a'; 50 * 1024 * 1024]))
        .unwrap();
    app.send(req)
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(app.footprint().await, before);
}

#[tokio::test]
async fn request_ids_are_generated_or_echoed() {
    let app = app().await;
    let r = app.request(Method::GET, "/health", None, None).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(r.headers.get("x-request-id").is_some());
    let req = Request::builder()
        .uri("/nope")
        .header("x-request-id", "abc-123")
        .body(Body::empty())
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.headers.get("x-request-id").unwrap(), "abc-123");
}

#[tokio::test]
async fn health_reports_the_registry_version() {
    let app = app().await;
    let v = app
        .request(Method::GET, "/health", None, None)
        .await
        .ok(StatusCode::OK);
    assert_eq!(v["status"], "ok");
    assert_eq!(v["backend"], "sqlite");
    assert_eq!(v["registry_version"], 1);
}

/// A request body whose `parts` arrive one every `pause`.
fn trickled(parts: Vec<Vec<u8>>, pause: std::time::Duration) -> Body {
    let (mut tx, body) =
        http_body_util::Channel::<axum::body::Bytes, std::convert::Infallible>::new(1);
    tokio::spawn(async move {
        for part in parts {
            tokio::time::sleep(pause).await;
            if tx.send_data(part.into()).await.is_err() {
                return;
            }
        }
    });
    Body::new(body)
}

/// Uploads run under their own, longer time limit: a photo whose bytes trickle in for longer
/// than the request timeout still arrives, while any other request that slow is answered 408
/// in the one JSON error shape.
#[tokio::test]
async fn an_upload_slower_than_the_request_timeout_still_arrives_within_its_own() {
    let pause = std::time::Duration::from_millis(150);
    let app = app_with(|c| {
        c.request_timeout = std::time::Duration::from_millis(300);
        c.upload_timeout = std::time::Duration::from_secs(30);
    })
    .await;
    let officer = app.login("fiscal").await;
    let mut photo = vec![0xFF, 0xD8, 0xFF, 0xE0];
    photo.extend((0..40_000u32).map(|i| (i % 251) as u8));
    let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&photo));
    let parts: Vec<Vec<u8>> = photo.chunks(10_001).map(<[u8]>::to_vec).collect();
    assert!(parts.len() >= 4, "longer than the request timeout in all");
    let req = Request::builder()
        .method(Method::PUT)
        .uri(format!("/v1/photos/{hash}"))
        .header("authorization", format!("Bearer {officer}"))
        .header("content-type", "image/jpeg")
        .body(trickled(parts, pause))
        .unwrap();
    let r = app.send(req).await.ok(StatusCode::CREATED);
    assert_eq!(r["size"], photo.len());

    let login = serde_json::to_vec(&json!({
        "username": "fiscal", "password": "fiscal-demo", "device_id": "tablet-fiscal-01"
    }))
    .unwrap();
    let parts: Vec<Vec<u8>> = login
        .chunks(login.len() / 4 + 1)
        .map(<[u8]>::to_vec)
        .collect();
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/auth/login")
        .header("content-type", "application/json")
        .body(trickled(parts, pause))
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.status, StatusCode::REQUEST_TIMEOUT);
    assert!(
        r.json()["error"]["code"].is_string(),
        "one JSON error shape"
    );
}
