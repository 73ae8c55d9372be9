//! Users, devices and auto-number blocks.

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::json;

use crate::common::{app, demo_user};

#[tokio::test]
async fn admin_creates_users_with_checks() {
    let app = app().await;
    let admin = app.login("admin").await;
    let before = app.audit_rows().await;
    let u = app
        .post(
            "/v1/users",
            &admin,
            json!({"username": "Maria.GM", "display_name": "Maria", "password": "senha-forte", "role": "officer"}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(u["username"], "maria.gm");
    assert!(u.get("password_hash").is_none());
    assert_eq!(app.audit_rows().await, before + 1);

    let bad = |body: serde_json::Value, status: StatusCode, code: &'static str| {
        let app = &app;
        let admin = admin.clone();
        async move {
            app.post("/v1/users", &admin, body)
                .await
                .error(status, code)
        }
    };
    bad(
        json!({"username": "maria.gm", "display_name": "M", "password": "senha-forte", "role": "office"}),
        StatusCode::CONFLICT,
        "already_exists",
    )
    .await;
    bad(
        json!({"username": "x", "display_name": "M", "password": "senha-forte", "role": "office"}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_username",
    )
    .await;
    bad(
        json!({"username": "ana", "display_name": "A", "password": "curta", "role": "office"}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "weak_password",
    )
    .await;
    bad(
        json!({"username": "ana", "display_name": "A", "password": "senha-forte", "role": "coordinator"}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "stand_required",
    )
    .await;
    bad(
        json!({"username": "ana", "display_name": "A", "password": "senha-forte", "role": "coordinator", "stand_id": "S99"}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "unknown_stand",
    )
    .await;
    bad(
        json!({"username": "ana", "display_name": "A", "password": "senha-forte", "role": "office", "stand_id": "S01"}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "stand_not_allowed",
    )
    .await;
    bad(
        json!({"username": "ana", "display_name": "A", "password": "senha-forte", "role": "chefe"}),
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_body",
    )
    .await;
    assert_eq!(app.audit_rows().await, before + 1);

    let users = app.get("/v1/users", &admin).await.ok(StatusCode::OK);
    let names: Vec<&str> = users
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["username"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["admin", "coordenador", "escritorio", "fiscal", "maria.gm"]
    );
    assert!(!users.to_string().contains("argon2"));
}

#[tokio::test]
async fn devices_are_registered_listed_and_used() {
    let app = app().await;
    let admin = app.login("admin").await;
    let user = app
        .post(
            "/v1/users",
            &admin,
            json!({"username": "joana", "display_name": "Joana", "password": "senha-forte", "role": "coordinator", "stand_id": "S04"}),
        )
        .await
        .ok(StatusCode::CREATED);
    let d = app
        .post(
            "/v1/devices",
            &admin,
            json!({"user_id": user["id"], "label": "Celular da Joana"}),
        )
        .await
        .ok(StatusCode::CREATED);
    let id = d["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("dev-"));
    assert_eq!(d["revoked"], false);
    app.post(
        "/v1/devices",
        &admin,
        json!({"id": id, "user_id": user["id"], "label": "de novo"}),
    )
    .await
    .error(StatusCode::CONFLICT, "already_exists");
    app.post(
        "/v1/devices",
        &admin,
        json!({"user_id": "u-ninguem", "label": "x"}),
    )
    .await
    .error(StatusCode::NOT_FOUND, "not_found");
    app.post(
        "/v1/devices",
        &admin,
        json!({"id": "com espaço", "user_id": user["id"], "label": "x"}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_id");
    let list = app.get("/v1/devices", &admin).await.ok(StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 5);
    app.post("/v1/devices/nao-existe/revoke", &admin, json!({}))
        .await
        .error(StatusCode::NOT_FOUND, "not_found");

    // The new user logs in on the new device.
    let session = app
        .request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(json!({"username": "joana", "password": "senha-forte", "device_id": id})),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(session["user"]["stand_id"], "S04");
}

async fn lease(
    app: &crate::common::App,
    device: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> crate::common::Resp {
    app.request(
        Method::POST,
        &format!("/v1/devices/{device}/number-blocks"),
        Some(token),
        body,
    )
    .await
}

#[tokio::test]
async fn number_blocks_follow_each_other_and_respect_ownership() {
    let app = app().await;
    let officer = app.login("fiscal").await;
    let admin = app.login("admin").await;
    let a = lease(&app, "tablet-fiscal-01", &officer, None)
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(
        (a["start"].as_u64(), a["end"].as_u64(), a["size"].as_u64()),
        (Some(1), Some(500), Some(500))
    );
    let b = lease(
        &app,
        "tablet-fiscal-01",
        &officer,
        Some(json!({"size": 20})),
    )
    .await
    .ok(StatusCode::CREATED);
    assert_eq!(
        (b["start"].as_u64(), b["end"].as_u64()),
        (Some(501), Some(520))
    );
    // Admin may lease for anyone's device; the officer not for another's.
    let c = lease(&app, "celular-coordenador-s01", &admin, None)
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(c["start"], 521);
    let before = app.audit_rows().await;
    lease(&app, "celular-coordenador-s01", &officer, None)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    lease(&app, "nao-existe", &admin, None)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
    lease(&app, "tablet-fiscal-01", &officer, Some(json!({"size": 0})))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_size");
    lease(
        &app,
        "tablet-fiscal-01",
        &officer,
        Some(json!({"size": 1_000_000})),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_size");
    let wrong_type = Request::builder()
        .method(Method::POST)
        .uri("/v1/devices/tablet-fiscal-01/number-blocks")
        .header("authorization", format!("Bearer {officer}"))
        .header("content-type", "text/plain")
        .body(Body::from("500"))
        .unwrap();
    app.send(wrong_type)
        .await
        .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    assert_eq!(app.audit_rows().await, before);
    // A revoked device gets no more numbers (the admin asks; the device itself could not).
    app.post(
        "/v1/devices/celular-coordenador-s01/revoke",
        &admin,
        json!({}),
    )
    .await
    .ok(StatusCode::OK);
    lease(&app, "celular-coordenador-s01", &admin, None)
        .await
        .error(StatusCode::CONFLICT, "device_not_active");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_leases_never_overlap() {
    let app = std::sync::Arc::new(app().await);
    let officer = app.login("fiscal").await;
    let coordinator = app.login("coordenador").await;
    let mut tasks = Vec::new();
    for i in 0..24 {
        let app = app.clone();
        let (device, token) = if i % 2 == 0 {
            ("tablet-fiscal-01", officer.clone())
        } else {
            ("celular-coordenador-s01", coordinator.clone())
        };
        tasks.push(tokio::spawn(async move {
            let size = 7 + (i % 5) * 13;
            let v = lease(&app, device, &token, Some(json!({ "size": size })))
                .await
                .ok(StatusCode::CREATED);
            (v["start"].as_u64().unwrap(), v["end"].as_u64().unwrap())
        }));
    }
    let mut blocks = Vec::new();
    for t in tasks {
        blocks.push(t.await.unwrap());
    }
    blocks.sort_unstable();
    let mut numbers = BTreeSet::new();
    for (start, end) in &blocks {
        for n in *start..=*end {
            assert!(numbers.insert(n), "number {n} leased twice: {blocks:?}");
        }
    }
    // Contiguous from 1: nothing lost either.
    assert_eq!(blocks[0].0, 1);
    for w in blocks.windows(2) {
        assert_eq!(w[0].1 + 1, w[1].0, "{blocks:?}");
    }
}

#[tokio::test]
async fn a_device_id_that_is_another_devices_actor_is_refused() {
    let app = app().await;
    let admin = app.login("admin").await;
    let fiscal = demo_user("fiscal");
    let register = |id: String| {
        app.post(
            "/v1/devices",
            &admin,
            json!({"id": id, "user_id": "u-fiscal", "label": "Tablet"}),
        )
    };
    let before = app.audit_rows().await;
    // The UUID the demo officer's tablet writes its records as, in every spelling the id
    // check lets through: the same actor, so the new device could write as the old one.
    let actor = sync_core::sync::device_uuid(fiscal.device_id);
    for id in [
        actor.to_string(),
        actor.to_string().to_uppercase(),
        actor.simple().to_string(),
    ] {
        let e = register(id.clone())
            .await
            .error(StatusCode::CONFLICT, "device_id_collision");
        assert_eq!(e["details"]["existing"], fiscal.device_id, "{id}");
        assert!(
            e["message"].as_str().unwrap().contains(fiscal.device_id),
            "{e}"
        );
    }
    assert_eq!(app.audit_rows().await, before, "nothing stored");

    // A UUID-shaped id that collides with nobody is registered; then its other spellings
    // collide with it.
    let fresh = "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    register(fresh.into()).await.ok(StatusCode::CREATED);
    register(fresh.to_uppercase())
        .await
        .error(StatusCode::CONFLICT, "device_id_collision");
    register(fresh.replace('-', ""))
        .await
        .error(StatusCode::CONFLICT, "device_id_collision");
    // The very same id is the plain duplicate.
    register(fresh.into())
        .await
        .error(StatusCode::CONFLICT, "already_exists");
}
