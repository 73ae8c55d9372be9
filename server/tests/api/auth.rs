//! Login, refresh, the token checks of the auth extractor, device revocation, rate limiting.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::json;
use taxi_fiscal_server::auth::Role;
use taxi_fiscal_server::auth::tokens::{Claims, TokenService};
use taxi_fiscal_server::config::PasswordParams;
use taxi_fiscal_server::limits::{
    AUTH_ATTEMPT_REPLENISH, AUTH_ATTEMPTS_PER_ADDRESS_BURST, LOGIN_BODY_LIMIT,
    PASSWORD_HASH_RETRY_AFTER_SECS,
};
use tower::ServiceExt;

use crate::common::{app, app_with, demo_user};

#[tokio::test]
async fn login_gives_tokens_and_me_says_who() {
    let app = app().await;
    let v = app.login_full("coordenador").await;
    assert_eq!(v["token_type"], "Bearer");
    assert_eq!(v["expires_in"], 900);
    assert_eq!(v["user"]["role"], "coordinator");
    assert_eq!(v["user"]["stand_id"], "S01");
    assert!(v["user"].get("password_hash").is_none());
    assert_eq!(v["device_id"], "celular-coordenador-s01");
    let token = v["access_token"].as_str().unwrap();
    let me = app.get("/v1/me", token).await.ok(StatusCode::OK);
    assert_eq!(me["username"], "coordenador");
    assert_eq!(me["role"], "coordinator");
    assert_eq!(me["stand_id"], "S01");
}

#[tokio::test]
async fn bad_credentials_look_the_same_and_lock_after_five() {
    let app = app().await;
    let login = |user: &str, password: &str| {
        let body = json!({"username": user, "password": password, "device_id": "tablet-fiscal-01"});
        app.request(Method::POST, "/v1/auth/login", None, Some(body))
    };
    let wrong = login("fiscal", "errada")
        .await
        .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    let unknown = login("ninguem", "errada")
        .await
        .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    assert_eq!(wrong["message"], unknown["message"]);
    for _ in 0..3 {
        login("fiscal", "errada")
            .await
            .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    }
    // The fifth failure locks the username; even the right password waits now.
    let r = login("fiscal", "errada").await;
    let e = r.error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    assert!(r.headers.get("retry-after").is_some());
    assert!(e["details"]["retry_after_seconds"].as_u64().unwrap() > 0);
    login("fiscal", "fiscal-demo")
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    // Other users are not affected; after the lockout the user can log in.
    app.login("escritorio").await;
    app.state.clock().advance(chrono::Duration::minutes(16));
    login("fiscal", "fiscal-demo").await.ok(StatusCode::OK);
}

#[tokio::test]
async fn login_needs_the_users_own_active_device() {
    let app = app().await;
    let u = demo_user("fiscal");
    let try_device = |device: &str| {
        app.request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(json!({"username": u.username, "password": u.password, "device_id": device})),
        )
    };
    try_device("no-such-device")
        .await
        .error(StatusCode::UNAUTHORIZED, "device_unknown");
    try_device("desktop-admin")
        .await
        .error(StatusCode::UNAUTHORIZED, "device_not_yours");
    let admin = app.login("admin").await;
    app.post("/v1/devices/tablet-fiscal-01/revoke", &admin, json!({}))
        .await
        .ok(StatusCode::OK);
    try_device(u.device_id)
        .await
        .error(StatusCode::UNAUTHORIZED, "device_revoked");
}

#[tokio::test]
async fn missing_malformed_forged_and_expired_tokens_are_401() {
    let app = app().await;
    app.request(Method::GET, "/v1/permits", None, None)
        .await
        .error(StatusCode::UNAUTHORIZED, "token_missing");
    let req = Request::builder()
        .uri("/v1/permits")
        .header("authorization", "Basic Zm9vOmJhcg==")
        .body(Body::empty())
        .unwrap();
    app.send(req)
        .await
        .error(StatusCode::UNAUTHORIZED, "token_invalid");
    app.get("/v1/permits", "not-a-jwt")
        .await
        .error(StatusCode::UNAUTHORIZED, "token_invalid");

    // Signed with another secret: forged.
    let now = app.state.clock().now();
    let forger = TokenService::new(
        b"some other secret, 32 bytes long!!",
        std::time::Duration::from_secs(900),
    )
    .unwrap();
    let forged = forger
        .sign(&Claims {
            iss: "taxi-fiscal".into(),
            sub: "u-admin".into(),
            usr: "admin".into(),
            role: Role::Admin,
            stand: None,
            dev: "desktop-admin".into(),
            fam: "f".into(),
            iat: now.timestamp(),
            exp: now.timestamp() + 900,
        })
        .unwrap();
    app.get("/v1/users", &forged)
        .await
        .error(StatusCode::UNAUTHORIZED, "token_invalid");

    // Our own signature but a role claim the database does not back: the role comes from the
    // database, so an officer token claiming admin is still an officer.
    let officer = app.login("fiscal").await;
    let family = app.state.tokens().verify(&officer, now).unwrap().fam;
    let lying = app
        .state
        .tokens()
        .sign(&Claims {
            iss: "taxi-fiscal".into(),
            sub: "u-fiscal".into(),
            usr: "fiscal".into(),
            role: Role::Admin,
            stand: None,
            dev: "tablet-fiscal-01".into(),
            fam: family,
            iat: now.timestamp(),
            exp: now.timestamp() + 900,
        })
        .unwrap();
    app.get("/v1/users", &lying)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");

    // Expired after 15 minutes.
    let token = app.login("fiscal").await;
    app.get("/v1/permits/0001", &token).await.ok(StatusCode::OK);
    app.state.clock().advance(chrono::Duration::minutes(15));
    app.get("/v1/permits/0001", &token)
        .await
        .error(StatusCode::UNAUTHORIZED, "token_expired");
}

#[tokio::test]
async fn refresh_rotates_and_a_replayed_token_ends_the_family() {
    let app = app().await;
    let first = app.login_full("fiscal").await;
    let r1 = first["refresh_token"].as_str().unwrap().to_owned();
    app.state.clock().advance(chrono::Duration::minutes(20));
    let second = app
        .request(
            Method::POST,
            "/v1/auth/refresh",
            None,
            Some(json!({"refresh_token": r1})),
        )
        .await
        .ok(StatusCode::OK);
    let r2 = second["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(r1, r2);
    let access = second["access_token"].as_str().unwrap();
    app.get("/v1/me", access).await.ok(StatusCode::OK);

    // The same refresh again at once, as a device whose answer was lost sends it: the same
    // successor, and nothing is revoked.
    let repeat = app
        .request(
            Method::POST,
            "/v1/auth/refresh",
            None,
            Some(json!({"refresh_token": r1})),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(repeat["refresh_token"], r2);
    assert_eq!(repeat["refresh_expires_at"], second["refresh_expires_at"]);
    app.get("/v1/me", access).await.ok(StatusCode::OK);
    // Past the reuse interval, the spent token is a replay.
    app.state.clock().advance(chrono::Duration::seconds(
        taxi_fiscal_server::store::limits::REFRESH_REUSE_INTERVAL_SECS + 1,
    ));

    // Another login of the same user on the same device is another family.
    let other_login = app.login("fiscal").await;
    let first_access = first["access_token"].as_str().unwrap().to_owned();

    // Replaying the spent token is refused and revokes its successor too.
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": r1})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "refresh_reused");
    // ... and ends the access tokens of that login on their very next request, the one handed
    // to whoever spent the token first included, not when they expire.
    app.get("/v1/me", access)
        .await
        .error(StatusCode::UNAUTHORIZED, "session_revoked");
    app.state.clock().advance(chrono::Duration::minutes(-20));
    app.get("/v1/me", &first_access)
        .await
        .error(StatusCode::UNAUTHORIZED, "session_revoked");
    app.state.clock().advance(chrono::Duration::minutes(20));
    // The other login of the same user and device is not touched.
    app.get("/v1/me", &other_login).await.ok(StatusCode::OK);
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": r2})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "refresh_invalid");
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": "x"})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "refresh_invalid");
    app.request(Method::POST, "/v1/auth/refresh", None, Some(json!({})))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");

    // A refresh token expires after 30 days.
    let third = app.login_full("fiscal").await;
    app.state.clock().advance(chrono::Duration::days(31));
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": third["refresh_token"]})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "refresh_expired");
}

#[tokio::test]
async fn a_revoked_device_stops_at_once() {
    let app = app().await;
    let session = app.login_full("fiscal").await;
    let token = session["access_token"].as_str().unwrap();
    app.get("/v1/registry/status", token)
        .await
        .ok(StatusCode::OK);
    let admin = app.login("admin").await;
    let before = app.audit_rows().await;
    let d = app
        .post("/v1/devices/tablet-fiscal-01/revoke", &admin, json!({}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(d["revoked"], true);
    assert_eq!(app.audit_rows().await, before + 1);
    // The very next request with the unexpired token is refused, with its own code.
    app.get("/v1/registry/status", token)
        .await
        .error(StatusCode::UNAUTHORIZED, "device_revoked");
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": session["refresh_token"]})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "device_revoked");
    // Revoking again changes nothing (idempotent, no audit row).
    app.post("/v1/devices/tablet-fiscal-01/revoke", &admin, json!({}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(app.audit_rows().await, before + 1);
}

#[tokio::test]
async fn every_guarded_area_refuses_the_wrong_role() {
    let app = app().await;
    let officer = app.login("fiscal").await;
    let office = app.login("escritorio").await;
    let admin = app.login("admin").await;
    let before = app.footprint().await;
    let e = app
        .get("/v1/users", &officer)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    assert_eq!(e["details"]["role"], "officer");
    app.get("/v1/devices", &office)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    app.post(
        "/v1/devices",
        &office,
        json!({"user_id": "u-fiscal", "label": "x"}),
    )
    .await
    .error(StatusCode::FORBIDDEN, "forbidden");
    app.post("/v1/devices/tablet-fiscal-01/revoke", &office, json!({}))
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    app.post("/v1/permits/0019/renewal", &officer, json!({"year": 2026}))
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    app.get("/v1/registry/export", &officer)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    app.get(&format!("/v1/photos/{}", "a".repeat(64)), &officer)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    let put = Request::builder()
        .method(Method::PUT)
        .uri(format!("/v1/photos/{}", "a".repeat(64)))
        .header("authorization", format!("Bearer {admin}"))
        .body(Body::from("x"))
        .unwrap();
    app.send(put)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    assert_eq!(app.footprint().await, before);
}

fn login_from(addr: &str, username: &str, password: &str) -> Request<Body> {
    let body = json!({"username": username, "password": password, "device_id": "desktop-admin"});
    let mut req = Request::builder()
        .method(Method::POST)
        .uri("/v1/auth/login")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let peer: SocketAddr = addr.parse().unwrap();
    req.extensions_mut().insert(ConnectInfo(peer));
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_logins_cannot_race_past_the_lockout() {
    // The address budget and the hashing pool's wait out of the way: this is about the
    // failure count. Real Argon2 cost, so the hashes overlap as in production.
    let app = app_with(|c| {
        c.auth_attempts_per_address_burst = 1_000;
        c.password_hash_wait = std::time::Duration::from_secs(60);
        c.password_params = PasswordParams::default();
    })
    .await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        let password = if i == 150 { "admin-demo" } else { "errada" };
        let req = login_from("203.0.113.9:5000", "admin", password);
        let router = app.router.clone();
        tasks.push(tokio::spawn(async move {
            router.oneshot(req).await.unwrap().status()
        }));
    }
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.unwrap());
    }
    let count = |s: StatusCode| statuses.iter().filter(|x| **x == s).count();
    assert_eq!(count(StatusCode::OK), 0, "the right password came too late");
    // Every attempt was counted before its hash: exactly five hashes ran.
    assert_eq!(app.state.hash_pool().verifications(), 5);
    // Each of the five was refused as bad credentials, or as locked when the failures still
    // running had already spent the budget; everybody else waited without a hash.
    assert!(count(StatusCode::UNAUTHORIZED) <= 4);
    assert_eq!(
        count(StatusCode::UNAUTHORIZED) + count(StatusCode::TOO_MANY_REQUESTS),
        200
    );
    let ip: std::net::IpAddr = "203.0.113.9".parse().unwrap();
    assert_eq!(
        app.state.limiter().counts("admin", ip).await.unwrap(),
        (5, 5)
    );
}

#[tokio::test]
async fn bad_attempts_from_one_address_do_not_lock_the_user_out_elsewhere() {
    let app = app().await;
    let send =
        |addr: &'static str, password: &'static str| app.send(login_from(addr, "admin", password));
    for _ in 0..4 {
        send("198.51.100.66:4000", "errada")
            .await
            .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    }
    send("198.51.100.66:4001", "errada")
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    send("198.51.100.66:4002", "admin-demo")
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    // The administrator, from the office's own address, is not locked out.
    send("10.0.0.7:5000", "admin-demo").await.ok(StatusCode::OK);
}

/// Two server nodes on one database — here two states on one SQLite data directory — count the
/// same failures: a guesser spreading attempts over both gets one budget, not one per node, the
/// lockout holds on both, and a restarted node still knows it.
#[tokio::test]
async fn two_nodes_on_one_database_share_the_lockout() {
    let node_a = app().await;
    let open_node = || {
        taxi_fiscal_server::AppState::open(
            crate::common::config(node_a.dir.path()),
            taxi_fiscal_server::store::sqlite::open,
        )
    };
    let state_b = open_node().await.unwrap();
    let node_b = taxi_fiscal_server::router(state_b.clone());
    let on_b = |addr: &'static str, password: &'static str| {
        let router = node_b.clone();
        async move {
            router
                .oneshot(login_from(addr, "admin", password))
                .await
                .unwrap()
                .status()
        }
    };
    let guesser = "198.51.100.66:4000";
    // Four failures, two on each node: the fifth, on either, spends the pair's budget.
    for _ in 0..2 {
        node_a
            .send(login_from(guesser, "admin", "errada"))
            .await
            .error(StatusCode::UNAUTHORIZED, "bad_credentials");
        assert_eq!(on_b(guesser, "errada").await, StatusCode::UNAUTHORIZED);
    }
    node_a
        .send(login_from(guesser, "admin", "errada"))
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    assert_eq!(
        on_b(guesser, "admin-demo").await,
        StatusCode::TOO_MANY_REQUESTS
    );
    let ip: std::net::IpAddr = "198.51.100.66".parse().unwrap();
    assert_eq!(
        node_a.state.limiter().counts("admin", ip).await.unwrap(),
        (5, 5)
    );
    assert_eq!(state_b.limiter().counts("admin", ip).await.unwrap(), (5, 5));
    assert_eq!(node_a.state.hash_pool().verifications(), 3);
    assert_eq!(state_b.hash_pool().verifications(), 2);
    // The office's own address is not locked out, on either node.
    assert_eq!(on_b("10.0.0.7:5000", "admin-demo").await, StatusCode::OK);
    // A node started again (a restart, a third node) knows the lockout.
    drop(node_b);
    drop(state_b);
    let state_c = open_node().await.unwrap();
    let status = taxi_fiscal_server::router(state_c)
        .oneshot(login_from(guesser, "admin", "admin-demo"))
        .await
        .unwrap()
        .status();
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn the_username_ceiling_holds_across_addresses() {
    let app = app_with(|c| c.login_max_failures_per_username = 8).await;
    let mut refused_at = None;
    for i in 0..20u8 {
        let addr: &'static str = Box::leak(format!("192.0.2.{i}:4000").into_boxed_str());
        let r = app.send(login_from(addr, "admin", "errada")).await;
        if r.status == StatusCode::TOO_MANY_REQUESTS {
            refused_at = Some(i);
            break;
        }
    }
    // Exactly at the ceiling the eighth failure locks; no ninth hash runs.
    assert_eq!(refused_at, Some(7));
    assert_eq!(app.state.hash_pool().verifications(), 8);
    app.send(login_from("192.0.2.200:4000", "admin", "admin-demo"))
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
}

#[tokio::test]
async fn an_address_gets_its_burst_then_429_with_retry_after() {
    let app = app().await;
    // Made-up usernames, so no failure budget is spent twice: only the address's budget.
    for i in 0..AUTH_ATTEMPTS_PER_ADDRESS_BURST {
        app.send(login_from("198.51.100.5:1", &format!("ninguem{i}"), "x"))
            .await
            .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    }
    let r = app
        .send(login_from("198.51.100.5:2", "admin", "admin-demo"))
        .await;
    let e = r.error(StatusCode::TOO_MANY_REQUESTS, "too_many_requests");
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(
        retry >= 1 && retry <= AUTH_ATTEMPT_REPLENISH.as_secs(),
        "{retry}"
    );
    assert_eq!(e["details"]["retry_after_seconds"], retry);
    // Refresh spends the same budget.
    let mut refresh = Request::builder()
        .method(Method::POST)
        .uri("/v1/auth/refresh")
        .header("content-type", "application/json")
        .body(Body::from(json!({"refresh_token": "x"}).to_string()))
        .unwrap();
    let peer: SocketAddr = "198.51.100.5:3".parse().unwrap();
    refresh.extensions_mut().insert(ConnectInfo(peer));
    app.send(refresh)
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_requests");
    // Another address is not affected; an IPv6 neighbour in another /64 neither.
    app.send(login_from("198.51.100.6:1", "admin", "admin-demo"))
        .await
        .ok(StatusCode::OK);
    // Unknown users cost one verification each, like known ones.
    assert_eq!(
        app.state.hash_pool().verifications(),
        u64::from(AUTH_ATTEMPTS_PER_ADDRESS_BURST) + 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logins_beyond_the_hashing_pool_wait_get_429_server_busy() {
    let app = app_with(|c| {
        c.password_hash_slots = 1;
        c.password_hash_wait = std::time::Duration::from_millis(1);
        c.password_params = PasswordParams::default();
        c.auth_attempts_per_address_burst = 1_000;
    })
    .await;
    let mut tasks = Vec::new();
    for i in 0..20 {
        let req = login_from("203.0.113.20:1", &format!("inventado{i}"), "x");
        let router = app.router.clone();
        tasks.push(tokio::spawn(async move {
            let res = router.oneshot(req).await.unwrap();
            let retry = res.headers().get("retry-after").cloned();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
            (v["error"]["code"].as_str().unwrap().to_owned(), retry)
        }));
    }
    let mut busy = 0;
    let mut checked = 0;
    for t in tasks {
        let (code, retry) = t.await.unwrap();
        match code.as_str() {
            "server_busy" => {
                busy += 1;
                assert_eq!(
                    retry.unwrap().to_str().unwrap(),
                    PASSWORD_HASH_RETRY_AFTER_SECS.to_string()
                );
            }
            "bad_credentials" => checked += 1,
            other => panic!("{other}"),
        }
    }
    assert!(busy > 0 && checked > 0, "busy {busy}, checked {checked}");
    assert_eq!(app.state.hash_pool().verifications(), checked);
    // A refused attempt was given back: nothing counted for those usernames.
    let ip: std::net::IpAddr = "203.0.113.20".parse().unwrap();
    let mut counted = 0;
    for i in 0..20 {
        counted += app
            .state
            .limiter()
            .counts(&format!("inventado{i}"), ip)
            .await
            .unwrap()
            .0;
    }
    assert_eq!(u64::from(counted), checked);
}

#[tokio::test]
async fn login_bodies_are_read_under_their_own_small_limit() {
    let app = app().await;
    let body_of = |len: usize| {
        let frame =
            json!({"username": "admin", "password": "", "device_id": "desktop-admin"}).to_string();
        let pad = "x".repeat(len - frame.len());
        let body =
            json!({"username": "admin", "password": pad, "device_id": "desktop-admin"}).to_string();
        assert_eq!(body.len(), len);
        body
    };
    let send = |path: &'static str, body: String| {
        let req = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        app.send(req)
    };
    // Exactly at the limit: read and checked (a wrong password).
    send("/v1/auth/login", body_of(LOGIN_BODY_LIMIT))
        .await
        .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    // One byte over: refused before any budget or hash.
    let e = send("/v1/auth/login", body_of(LOGIN_BODY_LIMIT + 1))
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(e["details"]["limit_bytes"], LOGIN_BODY_LIMIT);
    let token = format!(r#"{{"refresh_token": "{}"}}"#, "x".repeat(LOGIN_BODY_LIMIT));
    send("/v1/auth/refresh", token)
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(app.state.hash_pool().verifications(), 1);
    // The office's login form too.
    let form = format!("usuario=admin&senha={}", "x".repeat(LOGIN_BODY_LIMIT));
    let req = Request::builder()
        .method(Method::POST)
        .uri("/login")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(form))
        .unwrap();
    assert_eq!(app.send(req).await.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(app.state.hash_pool().verifications(), 1);
}

/// `POST /v1/me/password` with `token`.
async fn change_password(
    app: &crate::common::App,
    token: &str,
    current: &str,
    new: &str,
) -> crate::common::Resp {
    app.post(
        "/v1/me/password",
        token,
        json!({"current_password": current, "new_password": new}),
    )
    .await
}

fn login_body(username: &str, password: &str) -> serde_json::Value {
    let u = demo_user(username);
    json!({"username": u.username, "password": password, "device_id": u.device_id})
}

#[tokio::test]
async fn a_user_changes_the_password_and_the_old_one_no_longer_logs_in() {
    let app = app().await;
    let token = app.login("fiscal").await;
    let before = app.audit_rows().await;
    let r = change_password(&app, &token, "fiscal-demo", "nova-senha-forte").await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{:?}", r.body);
    // Audited once, under its own action, naming the user and no secret.
    assert_eq!(app.audit_rows().await, before + 1);
    let conn = rusqlite::Connection::open(app.dir.path().join(taxi_fiscal_server::config::DB_FILE))
        .unwrap();
    let (action, subject, user): (String, String, String) = conn
        .query_row(
            "SELECT action, subject, user_id FROM audit_log ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let fiscal = app.get("/v1/me", &token).await.ok(StatusCode::OK);
    assert_eq!(action, "user.password.change");
    assert_eq!(
        subject,
        format!("user:{}", fiscal["user_id"].as_str().unwrap())
    );
    assert_eq!(user, fiscal["user_id"].as_str().unwrap());
    let stored: String = conn
        .query_row(
            "SELECT password_hash FROM users WHERE username = 'fiscal'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(stored.starts_with("$argon2id$") && !stored.contains("nova-senha-forte"));

    app.request(
        Method::POST,
        "/v1/auth/login",
        None,
        Some(login_body("fiscal", "fiscal-demo")),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "bad_credentials");
    app.request(
        Method::POST,
        "/v1/auth/login",
        None,
        Some(login_body("fiscal", "nova-senha-forte")),
    )
    .await
    .ok(StatusCode::OK);
    // The session that changed it goes on.
    app.get("/v1/me", &token).await.ok(StatusCode::OK);
}

#[tokio::test]
async fn a_wrong_current_password_is_422_and_counts_as_a_failed_login() {
    let app = app().await;
    let token = app.login("fiscal").await;
    let footprint = app.footprint().await;
    let e = change_password(&app, &token, "errada", "nova-senha-forte")
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "wrong_password");
    assert!(
        e["message"].as_str().unwrap().contains("senha atual"),
        "{e}"
    );
    assert_eq!(
        app.state
            .limiter()
            .counts(
                "fiscal",
                taxi_fiscal_server::auth::throttle::ClientAddr::UNKNOWN.0
            )
            .await
            .unwrap()
            .0,
        1
    );
    for _ in 0..3 {
        change_password(&app, &token, "errada", "nova-senha-forte")
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "wrong_password");
    }
    // The fifth failure locks the user as five failed logins do: the right password waits too,
    // here and at the login.
    let r = change_password(&app, &token, "errada", "nova-senha-forte").await;
    r.error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    assert!(r.headers.get("retry-after").is_some());
    change_password(&app, &token, "fiscal-demo", "nova-senha-forte")
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    app.request(
        Method::POST,
        "/v1/auth/login",
        None,
        Some(login_body("fiscal", "fiscal-demo")),
    )
    .await
    .error(StatusCode::TOO_MANY_REQUESTS, "too_many_attempts");
    assert_eq!(app.footprint().await, footprint);
}

#[tokio::test]
async fn weak_same_and_garbage_are_422_and_nothing_is_hashed() {
    let app = app().await;
    let token = app.login("escritorio").await;
    let footprint = app.footprint().await;
    let hashed = app.state.hash_pool().verifications();
    // One character short of the minimum, then exactly at it with the wrong current password
    // (so the rule passed and the current password was checked).
    let short = "x".repeat(taxi_fiscal_server::auth::password::MIN_PASSWORD_LEN - 1);
    let e = change_password(&app, &token, "escritorio-demo", &short)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "weak_password");
    assert!(e["message"].as_str().unwrap().contains('8'), "{e}");
    change_password(&app, &token, "escritorio-demo", "escritorio-demo")
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "same_password");
    for body in [
        json!({}),
        json!({"current_password": "escritorio-demo"}),
        json!({"current_password": 1, "new_password": "nova-senha-forte"}),
        json!({"current_password": "escritorio-demo", "new_password": "nova-senha-forte", "x": 1}),
    ] {
        app.post("/v1/me/password", &token, body)
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    }
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/me/password")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(Body::from("{not json"))
        .unwrap();
    // Not JSON at all: the one answer of every JSON route.
    app.send(req)
        .await
        .error(StatusCode::BAD_REQUEST, "malformed_json");
    assert_eq!(app.state.hash_pool().verifications(), hashed);
    let at_min = "x".repeat(taxi_fiscal_server::auth::password::MIN_PASSWORD_LEN);
    change_password(&app, &token, "errada", &at_min)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "wrong_password");
    assert_eq!(app.state.hash_pool().verifications(), hashed + 1);
    assert_eq!(app.footprint().await, footprint);
    // Without a token: 401 before the body is read.
    app.request(
        Method::POST,
        "/v1/me/password",
        None,
        Some(json!({"current_password": "a", "new_password": "b"})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "token_missing");
}

#[tokio::test]
async fn a_change_ends_every_other_login_of_the_user() {
    let app = app().await;
    let mine = app.login_full("fiscal").await;
    let other = app.login_full("fiscal").await;
    let someone_else = app.login_full("escritorio").await;
    let token = mine["access_token"].as_str().unwrap();
    change_password(&app, token, "fiscal-demo", "nova-senha-forte")
        .await
        .ok_empty();
    // The other login: its access token refused at once, its refresh token spent for nothing.
    app.get("/v1/me", other["access_token"].as_str().unwrap())
        .await
        .error(StatusCode::UNAUTHORIZED, "session_revoked");
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": other["refresh_token"]})),
    )
    .await
    .error(StatusCode::UNAUTHORIZED, "refresh_invalid");
    // The login that changed it keeps working, refresh included.
    app.get("/v1/me", token).await.ok(StatusCode::OK);
    app.request(
        Method::POST,
        "/v1/auth/refresh",
        None,
        Some(json!({"refresh_token": mine["refresh_token"]})),
    )
    .await
    .ok(StatusCode::OK);
    // Another user's login is not touched.
    app.get("/v1/me", someone_else["access_token"].as_str().unwrap())
        .await
        .ok(StatusCode::OK);
}

#[tokio::test]
async fn password_change_bodies_are_read_under_the_login_limit() {
    let app = app().await;
    let token = app.login("admin").await;
    let body_of = |len: usize| {
        let frame = json!({"current_password": "admin-demo", "new_password": ""}).to_string();
        let pad = "x".repeat(len - frame.len());
        let body = json!({"current_password": "admin-demo", "new_password": pad}).to_string();
        assert_eq!(body.len(), len);
        body
    };
    let send = |body: String| {
        let req = Request::builder()
            .method(Method::POST)
            .uri("/v1/me/password")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        app.send(req)
    };
    let hashed = app.state.hash_pool().verifications();
    // One byte over: refused before any budget or hash.
    let e = send(body_of(LOGIN_BODY_LIMIT + 1))
        .await
        .error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    assert_eq!(e["details"]["limit_bytes"], LOGIN_BODY_LIMIT);
    assert_eq!(app.state.hash_pool().verifications(), hashed);
    // Exactly at the limit: read, checked and changed.
    send(body_of(LOGIN_BODY_LIMIT)).await.ok_empty();
    assert_eq!(app.state.hash_pool().verifications(), hashed + 1);
}

#[tokio::test]
async fn a_change_checked_against_a_replaced_hash_writes_nothing() {
    let app = app().await;
    let token = app.login("fiscal").await;
    let me = app.get("/v1/me", &token).await.ok(StatusCode::OK);
    let user = app
        .state
        .store()
        .user_by_username("fiscal".into())
        .await
        .unwrap()
        .unwrap();
    let footprint = app.footprint().await;
    let actor = taxi_fiscal_server::store::Actor::cli(app.state.clock().now());
    // Another change won the race: the hash this one verified is gone, so nothing is written
    // and no login ends.
    let changed = app
        .state
        .store()
        .change_password(
            user.id.clone(),
            "$argon2id$a-hash-replaced-meanwhile".into(),
            "$argon2id$new".into(),
            None,
            actor.clone(),
        )
        .await
        .unwrap();
    assert!(!changed);
    assert_eq!(app.footprint().await, footprint);
    app.get("/v1/me", &token).await.ok(StatusCode::OK);
    let same = app
        .state
        .store()
        .user_by_username("fiscal".into())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(same.password_hash, user.password_hash);
    assert_eq!(me["user_id"], user.id.as_str());
}
