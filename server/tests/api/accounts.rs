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

// ----- the administrator's day: roles, deactivation, one-time codes ---------------------------

async fn user_id(app: &crate::common::App, username: &str) -> String {
    app.state
        .store()
        .user_by_username(username.to_owned())
        .await
        .unwrap()
        .unwrap()
        .id
}

async fn refresh(app: &crate::common::App, token: &str) -> crate::common::Resp {
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({ "refresh_token": token })),
    )
    .await
}

async fn login_with(
    app: &crate::common::App,
    username: &str,
    password: &str,
) -> crate::common::Resp {
    let u = demo_user(username);
    app.request(
        Method::POST,
        "/v1/auth/login",
        None,
        Some(json!({"username": username, "password": password, "device_id": u.device_id})),
    )
    .await
}

#[tokio::test]
async fn admin_changes_a_role_and_a_coordinators_stand() {
    let app = app().await;
    let admin = app.login("admin").await;
    let fiscal = user_id(&app, "fiscal").await;
    let path = format!("/v1/users/{fiscal}/role");
    let before = app.audit_rows().await;
    app.post(&path, &admin, json!({"role": "coordinator"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "stand_required");
    app.post(
        &path,
        &admin,
        json!({"role": "coordinator", "stand_id": "S99"}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "unknown_stand");
    app.post(&path, &admin, json!({"role": "office", "stand_id": "S01"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "stand_not_allowed");
    assert_eq!(app.audit_rows().await, before);
    let u = app
        .post(
            &path,
            &admin,
            json!({"role": "coordinator", "stand_id": "S01"}),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        (u["role"].as_str(), u["stand_id"].as_str()),
        (Some("coordinator"), Some("S01"))
    );
    assert_eq!(app.audit_rows().await, before + 1);
    // The role is the database's on the very next request of the user's existing token.
    let token = app.login("fiscal").await;
    let me = app.get("/v1/me", &token).await.ok(StatusCode::OK);
    assert_eq!(me["role"], "coordinator", "{me}");

    // Only an admin; never their own account; an unknown user is 404.
    let office = app.login("escritorio").await;
    app.post(&path, &office, json!({"role": "officer"}))
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    let own = user_id(&app, "admin").await;
    app.post(
        &format!("/v1/users/{own}/role"),
        &admin,
        json!({"role": "office"}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "own_account");
    app.post("/v1/users/u-nada/role", &admin, json!({"role": "office"}))
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
    app.post(&path, &admin, json!({"role": "chefe"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert_eq!(app.audit_rows().await, before + 1);
}

#[tokio::test]
async fn a_deactivated_user_cannot_log_in_and_their_sessions_end_at_once() {
    let app = app().await;
    let admin = app.login("admin").await;
    let login = app.login_full("fiscal").await;
    let access = login["access_token"].as_str().unwrap().to_owned();
    let refresh_token = login["refresh_token"].as_str().unwrap().to_owned();
    let fiscal = user_id(&app, "fiscal").await;

    let u = app
        .post(&format!("/v1/users/{fiscal}/deactivate"), &admin, json!({}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(u["active"], false);
    // The token already out is refused on its next request, the refresh token is spent, and
    // the password no longer opens a session.
    app.get("/v1/me", &access)
        .await
        .error(StatusCode::UNAUTHORIZED, "user_inactive");
    assert_eq!(
        refresh(&app, &refresh_token).await.status,
        StatusCode::UNAUTHORIZED
    );
    login_with(&app, "fiscal", demo_user("fiscal").password)
        .await
        .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    // Idempotent: a second deactivation writes nothing.
    let rows = app.audit_rows().await;
    app.post(&format!("/v1/users/{fiscal}/deactivate"), &admin, json!({}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(app.audit_rows().await, rows);
    // Nor a code for them.
    app.post(
        &format!("/v1/users/{fiscal}/password-reset"),
        &admin,
        json!({}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "user_inactive");

    // Reactivated: the password works again; the old refresh token stays dead.
    app.post(&format!("/v1/users/{fiscal}/reactivate"), &admin, json!({}))
        .await
        .ok(StatusCode::OK);
    login_with(&app, "fiscal", demo_user("fiscal").password)
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        refresh(&app, &refresh_token).await.status,
        StatusCode::UNAUTHORIZED
    );

    // An admin cannot deactivate themself, and an office user nobody.
    let own = user_id(&app, "admin").await;
    app.post(&format!("/v1/users/{own}/deactivate"), &admin, json!({}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "own_account");
    let office = app.login("escritorio").await;
    app.post(
        &format!("/v1/users/{fiscal}/deactivate"),
        &office,
        json!({}),
    )
    .await
    .error(StatusCode::FORBIDDEN, "forbidden");
}

/// Posts the public reset form as a browser without a session does.
async fn reset(app: &crate::common::App, code: &str, password: &str) -> crate::common::Resp {
    let body = serde_urlencoded::to_string([
        ("codigo", code),
        ("senha_nova", password),
        ("senha_confirmacao", password),
    ])
    .unwrap();
    app.send(
        Request::builder()
            .method(Method::POST)
            .uri("/redefinir-senha")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap(),
    )
    .await
}

fn text(r: &crate::common::Resp) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

#[tokio::test]
async fn a_reset_code_sets_a_new_password_once_and_ends_every_session() {
    let app = app().await;
    let admin = app.login("admin").await;
    let fiscal = user_id(&app, "fiscal").await;
    let login = app.login_full("fiscal").await;
    let old_access = login["access_token"].as_str().unwrap().to_owned();
    let old_refresh = login["refresh_token"].as_str().unwrap().to_owned();

    let issued = app
        .post(
            &format!("/v1/users/{fiscal}/password-reset"),
            &admin,
            json!({}),
        )
        .await
        .ok(StatusCode::CREATED);
    let code = issued["code"].as_str().unwrap().to_owned();
    assert_eq!(code.len(), 39, "{code}");
    assert!(
        issued["url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/redefinir-senha/{code}"))
    );
    // Only the hash is stored: the code is nowhere in the database file.
    let digits = code.replace('-', "");
    for file in ["taxi-fiscal.db", "taxi-fiscal.db-wal"] {
        let bytes = std::fs::read(app.dir.path().join(file)).unwrap_or_default();
        assert!(
            !bytes.windows(digits.len()).any(|w| w == digits.as_bytes()),
            "{file}"
        );
    }

    // The rule of every new password, then the code works once.
    let weak = reset(&app, &code, "curta").await;
    assert_eq!(weak.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        text(&weak).contains("ao menos 8 caracteres"),
        "{}",
        text(&weak)
    );
    let done = reset(&app, &code, "nova-senha-boa").await;
    assert_eq!(done.status, StatusCode::OK, "{}", text(&done));
    assert!(text(&done).contains("id=\"senha-redefinida\""));
    login_with(&app, "fiscal", "nova-senha-boa")
        .await
        .ok(StatusCode::OK);
    login_with(&app, "fiscal", demo_user("fiscal").password)
        .await
        .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    app.get("/v1/me", &old_access)
        .await
        .error(StatusCode::UNAUTHORIZED, "session_revoked");
    assert_eq!(
        refresh(&app, &old_refresh).await.status,
        StatusCode::UNAUTHORIZED
    );

    let reused = reset(&app, &code, "outra-senha-boa").await;
    assert_eq!(reused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(text(&reused).contains("já foi usado"), "{}", text(&reused));
    login_with(&app, "fiscal", "outra-senha-boa")
        .await
        .error(StatusCode::UNAUTHORIZED, "bad_credentials");
}

#[tokio::test]
async fn a_reset_code_expires_at_its_lifetime_and_a_new_one_replaces_it() {
    let app = app().await;
    let admin = app.login("admin").await;
    let fiscal = user_id(&app, "fiscal").await;
    let path = format!("/v1/users/{fiscal}/password-reset");
    let first = app
        .post(&path, &admin, json!({}))
        .await
        .ok(StatusCode::CREATED);
    let second = app
        .post(&path, &admin, json!({}))
        .await
        .ok(StatusCode::CREATED);
    let replaced = reset(&app, first["code"].as_str().unwrap(), "nova-senha-boa").await;
    assert_eq!(replaced.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        text(&replaced).contains("substituído"),
        "{}",
        text(&replaced)
    );

    let code = second["code"].as_str().unwrap().to_owned();
    let ttl =
        chrono::Duration::minutes(taxi_fiscal_server::limits::PASSWORD_RESET_CODE_TTL_MINUTES);
    let expires: chrono::DateTime<chrono::Utc> =
        second["expires_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(expires - app.state.clock().now(), ttl);
    // One second before its end the link opens; at its end it has expired.
    app.state
        .clock()
        .advance(ttl - chrono::Duration::seconds(1));
    let open = app
        .request(Method::GET, &format!("/redefinir-senha/{code}"), None, None)
        .await;
    assert_eq!(open.status, StatusCode::OK, "{}", text(&open));
    assert!(text(&open).contains("Nova senha para"));
    app.state.clock().advance(chrono::Duration::seconds(1));
    let late = reset(&app, &code, "nova-senha-boa").await;
    assert_eq!(late.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(text(&late).contains("expirou"), "{}", text(&late));
}

#[tokio::test]
async fn guessing_codes_is_throttled_per_address() {
    let app = app().await;
    let burst = taxi_fiscal_server::limits::CODE_ATTEMPTS_PER_ADDRESS_BURST;
    let guess = "0000-0000-0000-0000-0000-0000-0000-0000";
    for _ in 0..burst {
        let r = reset(&app, guess, "nova-senha-boa").await;
        assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(text(&r).contains("não existe"), "{}", text(&r));
    }
    let r = reset(&app, guess, "nova-senha-boa").await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(r.headers.get("retry-after").is_some());
    // The same budget covers the enrolment exchange: a right code is refused too now.
    app.request(
        Method::POST,
        "/v1/devices/enrol",
        None,
        Some(json!({"code": guess, "device_name": "Tablet"})),
    )
    .await
    .error(StatusCode::TOO_MANY_REQUESTS, "too_many_requests");
}

async fn enrol(app: &crate::common::App, body: serde_json::Value) -> crate::common::Resp {
    app.request(Method::POST, "/v1/devices/enrol", None, Some(body))
        .await
}

#[tokio::test]
async fn an_enrolment_code_registers_a_device_once_and_the_user_logs_in_on_it() {
    let app = app().await;
    let admin = app.login("admin").await;
    let fiscal = user_id(&app, "fiscal").await;
    let issued = app
        .post(
            "/v1/devices/enrolment-codes",
            &admin,
            json!({"user_id": fiscal}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert!(issued["url"].is_null());
    let code = issued["code"].as_str().unwrap().to_owned();
    let expires: chrono::DateTime<chrono::Utc> =
        issued["expires_at"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        expires - app.state.clock().now(),
        chrono::Duration::minutes(taxi_fiscal_server::limits::ENROLMENT_CODE_TTL_MINUTES)
    );
    let before = app.audit_rows().await;

    // A name too long or empty is refused and the code is not spent.
    let max = taxi_fiscal_server::limits::MAX_DEVICE_LABEL_CHARS;
    enrol(
        &app,
        json!({"code": code, "device_name": "é".repeat(max + 1)}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_label");
    enrol(&app, json!({"code": code, "device_name": "  "}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_label");
    assert_eq!(app.audit_rows().await, before);

    let r = enrol(
        &app,
        json!({"code": code.to_uppercase(), "device_name": "é".repeat(max)}),
    )
    .await
    .ok(StatusCode::CREATED);
    let device = r["device_id"].as_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&device).is_ok(), "{device}");
    assert_eq!(r["device"]["user_id"], fiscal.as_str());
    assert_eq!(
        r["device"]["registered_by"],
        user_id(&app, "admin").await.as_str()
    );
    assert_eq!(r["user"]["username"], "fiscal");
    assert_eq!(app.audit_rows().await, before + 1);
    // The user logs in on it.
    app.request(
        Method::POST,
        "/v1/auth/login",
        None,
        Some(json!({"username": "fiscal", "password": demo_user("fiscal").password, "device_id": device})),
    )
    .await
    .ok(StatusCode::OK);
    // Once only.
    enrol(&app, json!({"code": code, "device_name": "Outro"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "code_used");
    let all = app.state.store().list_devices().await.unwrap();
    assert!(all.iter().all(|d| d.label != "Outro"));

    // Expired at its lifetime.
    let late = app
        .post(
            "/v1/devices/enrolment-codes",
            &admin,
            json!({"user_id": fiscal}),
        )
        .await
        .ok(StatusCode::CREATED);
    app.state.clock().advance(chrono::Duration::minutes(
        taxi_fiscal_server::limits::ENROLMENT_CODE_TTL_MINUTES,
    ));
    enrol(&app, json!({"code": late["code"], "device_name": "Tablet"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "code_expired");
    // A reset code is no enrolment code.
    let admin = app.login("admin").await;
    let reset_code = app
        .post(
            &format!("/v1/users/{fiscal}/password-reset"),
            &admin,
            json!({}),
        )
        .await
        .ok(StatusCode::CREATED);
    enrol(
        &app,
        json!({"code": reset_code["code"], "device_name": "Tablet"}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "code_unknown");
    // Only an admin makes codes.
    let office = app.login("escritorio").await;
    app.post(
        "/v1/devices/enrolment-codes",
        &office,
        json!({"user_id": fiscal}),
    )
    .await
    .error(StatusCode::FORBIDDEN, "forbidden");
}

#[tokio::test]
async fn garbage_and_oversized_enrolments_are_refused_clearly() {
    let app = app().await;
    let before = app.footprint().await;
    let limit = taxi_fiscal_server::limits::ENROL_BODY_LIMIT;
    let send = |body: Vec<u8>, ct: &'static str| {
        let app = &app;
        async move {
            app.send(
                Request::builder()
                    .method(Method::POST)
                    .uri("/v1/devices/enrol")
                    .header("content-type", ct)
                    .body(Body::from(body))
                    .unwrap(),
            )
            .await
        }
    };
    send(b"{nada".to_vec(), "application/json")
        .await
        .error(StatusCode::BAD_REQUEST, "malformed_json");
    send(b"code=1".to_vec(), "application/x-www-form-urlencoded")
        .await
        .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    send(
        br#"{"code": "x", "device_name": "T", "extra": 1}"#.to_vec(),
        "application/json",
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    send(
        br#"{"code": 5, "device_name": "T"}"#.to_vec(),
        "application/json",
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    // Exactly at the limit the body is read (and the code refused); one byte over, 413.
    let body = r#"{"code": "x", "device_name": "T"}"#;
    let body = format!("{body}{}", " ".repeat(limit - body.len()));
    assert_eq!(body.len(), limit);
    send(body.into_bytes(), "application/json")
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "code_unknown");
    send(vec![b' '; limit + 1], "application/json")
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(app.footprint().await, before);
}
