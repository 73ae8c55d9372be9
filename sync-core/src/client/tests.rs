//! The client against a scripted transport: each test lists the server's answers in order and
//! checks the requests the client made, the delays it waited (recorded, never slept) and what
//! it stored. The real server is exercised by the end-to-end tests in `tests/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;

use super::*;
use crate::store::Store;

#[derive(Debug)]
enum Scripted {
    Respond(u16, Vec<(&'static str, String)>, Vec<u8>),
    Fail(TransportErrorKind),
}

#[derive(Debug, Default)]
struct Script {
    answers: Mutex<VecDeque<Scripted>>,
    seen: Mutex<Vec<HttpRequest>>,
}

impl Script {
    fn json(&self, status: u16, body: serde_json::Value) -> &Self {
        self.answers.lock().unwrap().push_back(Scripted::Respond(
            status,
            vec![("content-type", "application/json".into())],
            serde_json::to_vec(&body).unwrap(),
        ));
        self
    }
    fn raw(&self, status: u16, headers: Vec<(&'static str, String)>, body: Vec<u8>) -> &Self {
        self.answers
            .lock()
            .unwrap()
            .push_back(Scripted::Respond(status, headers, body));
        self
    }
    fn fail(&self, kind: TransportErrorKind) -> &Self {
        self.answers.lock().unwrap().push_back(Scripted::Fail(kind));
        self
    }
    fn paths(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|r| format!("{} {}", r.method.as_str(), r.path))
            .collect()
    }
    fn request(&self, i: usize) -> HttpRequest {
        self.seen.lock().unwrap()[i].clone()
    }
}

impl Transport for Script {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, TransportError> {
        self.seen.lock().unwrap().push(request.clone());
        match self.answers.lock().unwrap().pop_front() {
            Some(Scripted::Respond(status, headers, body)) => Ok(HttpResponse {
                status,
                headers: headers
                    .into_iter()
                    .map(|(n, v)| (n.to_owned(), v))
                    .collect(),
                body,
            }),
            Some(Scripted::Fail(kind)) => Err(TransportError {
                kind,
                detail: "scripted".into(),
            }),
            None => panic!("unscripted request {request:?}"),
        }
    }
    fn base_url(&self) -> &str {
        "http://server.test"
    }
}

#[derive(Debug, Default)]
struct RecordingSleeper(Mutex<Vec<Duration>>);

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration, cancel: &CancelToken) -> Result<(), Cancelled> {
        self.0.lock().unwrap().push(d);
        if cancel.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}

#[derive(Debug)]
struct Fixed(Mutex<DateTime<Utc>>);

impl Clock for Fixed {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap()
    }
}

impl Fixed {
    fn advance(&self, d: chrono::Duration) {
        let mut t = self.0.lock().unwrap();
        *t += d;
    }
}

fn t0() -> DateTime<Utc> {
    "2026-11-30T15:00:00Z".parse().unwrap()
}

struct Rig {
    script: Arc<Script>,
    sleeper: Arc<RecordingSleeper>,
    clock: Arc<Fixed>,
    client: SyncClient,
    store: Store,
    _dir: tempfile::TempDir,
}

fn rig() -> Rig {
    let script = Arc::new(Script::default());
    let sleeper = Arc::new(RecordingSleeper::default());
    // The device clock is a day behind the server's: validity must not depend on it.
    let clock = Arc::new(Fixed(Mutex::new(t0() - chrono::Duration::days(1))));
    let client = SyncClient::with_transport(script.clone())
        .with_sleeper(sleeper.clone())
        .with_clock(clock.clone())
        .with_retry(RetryPolicy {
            attempts: 4,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
            jitter_seed: None,
        });
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("d.db")).unwrap();
    Rig {
        script,
        sleeper,
        clock,
        client,
        store,
        _dir: dir,
    }
}

fn tokens(n: u32) -> serde_json::Value {
    json!({
        "access_token": format!("access-{n}"),
        "token_type": "Bearer",
        "expires_in": 900,
        "expires_at": "2026-11-30T15:15:00Z",
        "refresh_token": format!("refresh-{n}"),
        "refresh_expires_at": "2026-12-30T15:00:00Z",
        "user": {"id": "U-7", "username": "fiscal", "display_name": "Fiscal", "role": "officer",
                 "stand_id": null, "active": true, "created_at": "2026-11-01T00:00:00Z"},
        "device_id": "7d8b2a4e-3c1f-4b6a-9e2d-0a1b2c3d4e5f"
    })
}

fn logged_in() -> Rig {
    let mut r = rig();
    r.script.json(200, tokens(1));
    r.client
        .login(
            &mut r.store,
            "fiscal",
            "fiscal-demo",
            Some("7d8b2a4e-3c1f-4b6a-9e2d-0a1b2c3d4e5f"),
        )
        .unwrap();
    r
}

#[test]
fn login_stores_the_session_on_the_device_clock_and_sets_the_identity() {
    let r = logged_in();
    // The device's public key goes with every login, for the server to register.
    let body: serde_json::Value = serde_json::from_slice(&r.script.request(0).body).unwrap();
    assert_eq!(
        body["device_public_key"],
        hex::encode(r.store.device_public_key().unwrap())
    );
    let s = r.store.client_session().unwrap().unwrap();
    assert_eq!(s.access_token, "access-1");
    assert_eq!(s.refresh_token, "refresh-1");
    // 900 s from the *device's* now, less the margin — not the server's expires_at.
    assert_eq!(
        s.access_valid_until,
        t0() - chrono::Duration::days(1) + chrono::Duration::seconds(900 - 60)
    );
    let id = r.store.device_identity().unwrap().unwrap();
    assert_eq!(
        id.device_id.to_string(),
        "7d8b2a4e-3c1f-4b6a-9e2d-0a1b2c3d4e5f"
    );
    assert_eq!(id.user_id, "U-7");
    assert_eq!(id.role, crate::records::UserRole::GuardaMunicipal);
    let body: serde_json::Value = serde_json::from_slice(&r.script.request(0).body).unwrap();
    assert_eq!(body["device_id"], "7d8b2a4e-3c1f-4b6a-9e2d-0a1b2c3d4e5f");
    // Debug never shows a token.
    assert!(!format!("{s:?}").contains("access-1"));
}

#[test]
fn a_non_uuid_device_id_gets_a_stable_derived_actor() {
    let mut r = rig();
    let mut t = tokens(1);
    t["device_id"] = json!("tablet-fiscal-01");
    r.script.json(200, t);
    let s = r
        .client
        .login(
            &mut r.store,
            "fiscal",
            "fiscal-demo",
            Some("tablet-fiscal-01"),
        )
        .unwrap();
    let a = crate::sync::device_uuid("tablet-fiscal-01");
    assert_eq!(s.device_id, a);
    assert_eq!(r.store.device_identity().unwrap().unwrap().device_id, a);
    assert_eq!(a.get_version_num(), 8);
}

#[test]
fn wrong_password_is_a_server_error_with_its_code() {
    let mut r = rig();
    r.script.json(
        401,
        json!({"error": {"code": "bad_credentials", "message": "Usuário ou senha incorretos."}}),
    );
    let e = r
        .client
        .login(&mut r.store, "fiscal", "x", Some("d1"))
        .unwrap_err();
    match e {
        ClientError::Http { status, code, .. } => {
            assert_eq!((status, code.as_str()), (401, "bad_credentials"));
        }
        other => panic!("{other:?}"),
    }
    assert!(r.store.client_session().unwrap().is_none());
}

#[test]
fn an_expired_access_token_is_refreshed_before_the_request() {
    let mut r = logged_in();
    r.store
        .apply_snapshot(&crate::testkit::sample_registry(), r.clock.now())
        .unwrap();
    let v = r.store.replica_info().unwrap().unwrap().version;
    r.clock.advance(chrono::Duration::minutes(20));
    r.script.json(200, tokens(2)).json(
        200,
        json!({"from_version": v, "to_version": v, "changes": []}),
    );
    let pull = r.client.pull_registry(&mut r.store).unwrap();
    assert_eq!(pull.mode, RegistryMode::Current);
    assert_eq!(
        r.script.paths(),
        vec![
            "POST /v1/auth/login".to_owned(),
            "POST /v1/auth/refresh".to_owned(),
            format!("GET /v1/registry/changes?since={v}"),
        ]
    );
    assert_eq!(
        r.script.request(2).header_value("authorization"),
        Some("Bearer access-2")
    );
    let s = r.store.client_session().unwrap().unwrap();
    assert_eq!(s.refresh_token, "refresh-2");
}

#[test]
fn a_401_forces_one_refresh_and_a_refused_refresh_asks_for_login() {
    let mut r = logged_in();
    r.store
        .apply_snapshot(&crate::testkit::sample_registry(), r.clock.now())
        .unwrap();
    r.script
        .json(
            401,
            json!({"error": {"code": "token_expired", "message": "Sessão expirada."}}),
        )
        .json(
            401,
            json!({"error": {"code": "refresh_reused", "message": "Sessão encerrada."}}),
        );
    let e = r.client.pull_registry(&mut r.store).unwrap_err();
    assert!(matches!(e, ClientError::LoginRequired(_)), "{e:?}");
    assert_eq!(e.kind(), ErrorKind::LoginRequired);
    assert!(r.store.client_session().unwrap().is_none());
}

#[test]
fn transport_errors_and_5xx_are_retried_with_backoff_then_given_up() {
    let mut r = logged_in();
    r.store
        .apply_snapshot(&crate::testkit::sample_registry(), r.clock.now())
        .unwrap();
    let v = r.store.replica_info().unwrap().unwrap().version;
    r.script
        .fail(TransportErrorKind::Io)
        .json(
            503,
            json!({"error": {"code": "unavailable", "message": "x"}}),
        )
        .raw(429, vec![("retry-after", "1".into())], Vec::new())
        .json(
            200,
            json!({"from_version": v, "to_version": v, "changes": []}),
        );
    r.client.pull_registry(&mut r.store).unwrap();
    assert_eq!(
        *r.sleeper.0.lock().unwrap(),
        vec![
            Duration::from_millis(100),
            Duration::from_millis(200),
            // Retry-After: 1 s beats the 400 ms backoff.
            Duration::from_secs(1),
        ]
    );
    assert_eq!(r.client.wire_stats().retries, 3);

    for _ in 0..4 {
        r.script.fail(TransportErrorKind::Connect);
    }
    let e = r.client.pull_registry(&mut r.store).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Offline);
    assert!(e.stops_sync());
}

#[test]
fn cancel_stops_between_requests() {
    let mut r = logged_in();
    r.store
        .apply_snapshot(&crate::testkit::sample_registry(), r.clock.now())
        .unwrap();
    r.script.fail(TransportErrorKind::Timeout);
    r.client.cancel_token().cancel();
    let e = r.client.pull_registry(&mut r.store).unwrap_err();
    assert!(matches!(e, ClientError::Cancelled));
    // Nothing was even sent.
    assert_eq!(r.script.paths().len(), 1);
}

#[test]
fn a_410_falls_back_to_the_zstd_snapshot_and_a_304_only_refreshes() {
    let mut r = logged_in();
    let mut old = crate::testkit::sample_registry();
    old.version = 2;
    r.store.apply_snapshot(&old, r.clock.now()).unwrap();
    let mut new = crate::testkit::sample_registry();
    new.version = 9;
    let json_bytes = serde_json::to_vec(&new).unwrap();
    let zipped = zstd::encode_all(json_bytes.as_slice(), 3).unwrap();
    r.script
        .json(
            410,
            json!({"error": {"code": "snapshot_required", "message": "baixe o snapshot"}}),
        )
        .raw(
            200,
            vec![
                ("content-type", "application/json".into()),
                ("content-encoding", "zstd".into()),
            ],
            zipped.clone(),
        );
    let pull = r.client.pull_registry(&mut r.store).unwrap();
    assert_eq!(pull.mode, RegistryMode::Snapshot);
    assert_eq!((pull.from_version, pull.version), (Some(2), 9));
    assert_eq!(pull.bytes, zipped.len() as u64);
    let snap_req = r.script.request(2);
    assert_eq!(snap_req.header_value("accept-encoding"), Some("zstd"));
    assert_eq!(
        snap_req.header_value("if-none-match"),
        Some("\"registry-2\"")
    );

    r.clock.advance(chrono::Duration::minutes(5));
    r.script
        .json(
            410,
            json!({"error": {"code": "snapshot_required", "message": "x"}}),
        )
        .raw(304, Vec::new(), Vec::new());
    let pull = r.client.pull_registry(&mut r.store).unwrap();
    assert_eq!(pull.mode, RegistryMode::Current);
    let info = r.store.replica_info().unwrap().unwrap();
    assert_eq!(info.version, 9);
    assert_eq!(info.refreshed_at, r.clock.now());
}

#[test]
fn numbers_are_topped_up_below_the_low_water_mark_only() {
    let mut r = logged_in();
    r.script.json(
        201,
        json!({"device_id": "d", "start": 1001, "end": 1500, "size": 500,
               "leased_at": "2026-11-30T15:00:00Z"}),
    );
    let t = r.client.top_up_numbers(&mut r.store).unwrap().unwrap();
    assert_eq!((t.start, t.end, t.numbers_left), (1001, 1500, 500));
    assert_eq!(
        r.script.paths()[1],
        "POST /v1/devices/7d8b2a4e-3c1f-4b6a-9e2d-0a1b2c3d4e5f/number-blocks"
    );
    // 500 left ≥ 100: nothing asked.
    assert!(r.client.top_up_numbers(&mut r.store).unwrap().is_none());
    assert_eq!(r.script.paths().len(), 2);
}

#[test]
fn photos_already_on_the_server_are_not_sent_again_and_each_upload_is_marked() {
    let mut r = logged_in();
    let a = r.store.put_photo(b"photo a").unwrap();
    let b = r.store.put_photo(b"photo b").unwrap();
    let c = r.store.put_photo(b"photo c").unwrap();
    r.script
        .json(200, json!({"have": [b.clone(), "f".repeat(64)]}))
        .json(201, json!({"sha256": a, "size": 7, "stored": true}))
        .fail(TransportErrorKind::Io)
        .json(200, json!({"sha256": c, "size": 7, "stored": false}));
    let up = r.client.upload_photos(&mut r.store).unwrap();
    assert_eq!((up.uploaded, up.already_on_server), (2, 1));
    assert!(r.store.pending_photos().unwrap().is_empty());
    for h in [&a, &b, &c] {
        assert!(r.store.photo_uploaded_at(h).unwrap().is_some());
    }
    let puts: Vec<String> = r
        .script
        .paths()
        .into_iter()
        .filter(|p| p.starts_with("PUT"))
        .collect();
    assert_eq!(puts.len(), 3, "a, then c twice (the first attempt was cut)");
    assert!(!puts.iter().any(|p| p.ends_with(&b)));
    // Nothing pending: no request at all.
    let n = r.script.paths().len();
    r.client.upload_photos(&mut r.store).unwrap();
    assert_eq!(r.script.paths().len(), n);
}

#[test]
fn sync_without_a_session_reports_login_required_and_keeps_the_error_in_the_status() {
    let mut r = rig();
    let s = r.client.sync(&mut r.store).unwrap();
    assert!(!s.ok && s.stopped);
    assert_eq!(s.errors[0].kind, ErrorKind::LoginRequired);
    assert_eq!(s.errors[0].step, Step::Session);
    let st = r.client.status(&r.store).unwrap();
    assert!(st.last_error.is_some());
    assert!(st.last_success_at.is_none());
    assert!(st.last_attempt_at.is_some());
}

#[test]
fn records_wait_for_a_login_that_registered_the_device_key() {
    let r = logged_in();
    // A session as an app from before device keys left it: valid, but the key never sent.
    let session = r.store.client_session().unwrap().unwrap();
    let mut fresh = rig();
    fresh.store.save_client_session(&session).unwrap();
    fresh
        .store
        .set_device_identity(&r.store.device_identity().unwrap().unwrap(), t0())
        .unwrap();
    let e = fresh.client.sync_records(&mut fresh.store).unwrap_err();
    assert!(
        matches!(&e, ClientError::LoginRequired(m) if m.contains("chave de assinatura")),
        "{e}"
    );
    assert!(fresh.script.paths().is_empty(), "nothing sent");
    // After the login, which registered it, the same store may send its records.
    assert_eq!(
        r.store.device_key_registered_with().unwrap().as_deref(),
        Some(format!("{} {}", session.server_url, session.server_device_id).as_str())
    );
}

fn enrolment(device: &str) -> serde_json::Value {
    json!({
        "device_id": device,
        "device": {"id": device, "user_id": "U-9", "label": "Tablet novo",
                   "registered_at": "2026-11-30T15:00:00Z", "registered_by": "U-1",
                   "revoked": false, "revoked_at": null, "revoked_by": null},
        "user": {"id": "U-9", "username": "joana", "display_name": "Joana", "role": "coordinator",
                 "stand_id": "S04", "active": true, "created_at": "2026-11-01T00:00:00Z"}
    })
}

#[test]
fn enrolment_stores_the_given_device_id_and_the_next_login_uses_it() {
    let mut r = logged_in();
    let device = "0b9c8d7e-6f5a-4b3c-8d2e-1f0a9b8c7d6e";
    r.script.json(201, enrolment(device));
    let s = r
        .client
        .enrol(&mut r.store, " 29d1-0405 ", " Tablet novo ")
        .unwrap();
    assert_eq!(s.server_device_id, device);
    assert_eq!(s.device_id.to_string(), device);
    assert_eq!(
        (s.user_id.as_str(), s.role.as_str()),
        ("U-9", "coordinator")
    );
    // Sent without a token, trimmed.
    let req = r.script.request(1);
    assert_eq!(req.path, "/v1/devices/enrol");
    assert!(
        !req.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
    );
    let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(
        body,
        json!({"code": "29d1-0405", "device_name": "Tablet novo"})
    );
    // The identity is the enrolled device's; the old device's session is forgotten.
    let id = r.store.device_identity().unwrap().unwrap();
    assert_eq!(id.device_id.to_string(), device);
    assert_eq!(
        (id.user_id.as_str(), id.stand_id.as_deref()),
        ("U-9", Some("S04"))
    );
    assert_eq!(id.role, crate::records::UserRole::Coordinator);
    assert!(r.store.client_session().unwrap().is_none());
    // The next login names no device: it is the enrolled one.
    let mut t = tokens(2);
    t["device_id"] = json!(device);
    r.script.json(200, t);
    r.client
        .login(&mut r.store, "joana", "senha-da-joana", None)
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&r.script.request(2).body).unwrap();
    assert_eq!(body["device_id"], device);
}

#[test]
fn a_refused_enrolment_changes_nothing_and_says_why() {
    let mut r = logged_in();
    let before = r.store.device_identity().unwrap();
    r.script.json(
        422,
        json!({"error": {"code": "code_expired", "message": "Este código expirou: peça um novo ao administrador."}}),
    );
    let e = r.client.enrol(&mut r.store, "29d1", "Tablet").unwrap_err();
    assert!(e.to_string().contains("expirou"), "{e}");
    assert_eq!(r.store.device_identity().unwrap(), before);
    assert!(r.store.client_session().unwrap().is_some());
}

/// The photos step as a sync runs it, with what it told its listener.
fn upload_photos_seen(r: &mut Rig) -> (PhotoUpload, Vec<Progress>) {
    let mut seen = Vec::new();
    let mut listener = |p: &Progress| seen.push(*p);
    let up = {
        let mut reporter = Reporter::new(&r.client, Some(&mut listener));
        reporter.begin(Step::Photos);
        r.client
            .upload_photos_reporting(&mut r.store, &mut reporter)
            .unwrap()
    };
    (up, seen)
}

#[test]
fn each_photo_uploaded_is_one_progress_event_with_growing_bytes_and_right_totals() {
    let mut r = logged_in();
    // Sizes differ, so a count of photos and a count of bytes cannot agree by accident.
    let photos: Vec<Vec<u8>> = [1_000usize, 3_000, 500, 2_200]
        .iter()
        .enumerate()
        .map(|(i, n)| vec![i as u8 + 1; *n])
        .collect();
    let hashes: Vec<String> = photos
        .iter()
        .map(|p| r.store.put_photo(p).unwrap())
        .collect();
    let total_bytes: u64 = photos.iter().map(|p| p.len() as u64).sum();
    // The server holds none; the second upload is cut once and sent again.
    r.script.json(200, json!({"have": []}));
    for (i, h) in hashes.iter().enumerate() {
        if i == 1 {
            r.script.fail(TransportErrorKind::Io);
        }
        r.script.json(
            201,
            json!({"sha256": h, "size": photos[i].len(), "stored": true}),
        );
    }
    let wire_before = r.client.wire_stats();
    let (up, seen) = upload_photos_seen(&mut r);
    assert_eq!(up.uploaded, 4);

    // The step's start, with its totals and nothing done, then one event per photo.
    assert_eq!(seen.len(), 1 + photos.len(), "{seen:#?}");
    for p in &seen {
        assert_eq!((p.step, p.step_index, p.step_count), (Step::Photos, 4, 5));
        assert_eq!((p.photos_total, p.photo_bytes_total), (4, total_bytes));
        assert_eq!((p.records_done, p.records_total), (0, 0));
    }
    assert_eq!((seen[0].photos_done, seen[0].photo_bytes_done), (0, 0));
    // Told before the `have` question goes: nothing on the wire yet.
    assert_eq!((seen[0].bytes_sent, seen[0].bytes_received), (0, 0));
    let mut expected = 0;
    for (i, pair) in seen.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        expected += photos[i].len() as u64;
        assert_eq!(after.photos_done, i as u64 + 1, "photo {i}");
        assert_eq!(after.photo_bytes_done, expected, "photo {i}");
        assert!(after.bytes_sent > before.bytes_sent, "photo {i}");
        assert!(after.bytes_received > before.bytes_received, "photo {i}");
        if i > 0 {
            // The photo's body, twice for the one whose first attempt was cut.
            let times = if i == 1 { 2 } else { 1 };
            assert_eq!(
                after.bytes_sent - before.bytes_sent,
                times * photos[i].len() as u64,
                "photo {i}"
            );
        }
    }
    let last = seen.last().unwrap();
    assert_eq!(
        (last.photos_done, last.photo_bytes_done),
        (last.photos_total, last.photo_bytes_total)
    );
    let wire = r.client.wire_stats();
    assert_eq!(
        (last.bytes_sent, last.bytes_received),
        (
            wire.bytes_up - wire_before.bytes_up,
            wire.bytes_down - wire_before.bytes_down
        )
    );
}

#[test]
fn photos_the_server_holds_count_as_done_at_once_and_a_refused_one_still_moves_the_bar() {
    let mut r = logged_in();
    let held = r.store.put_photo(&[7u8; 4_000]).unwrap();
    let sent = r.store.put_photo(&[8u8; 900]).unwrap();
    r.script.json(200, json!({"have": [held.clone()]})).json(
        422,
        json!({"error": {"code": "too_large", "message": "grande demais"}}),
    );
    let (up, seen) = upload_photos_seen(&mut r);
    assert_eq!(
        (up.uploaded, up.already_on_server, up.issues.len()),
        (0, 1, 1)
    );
    assert_eq!(up.issues[0].hash, sent);
    let done: Vec<(u64, u64)> = seen
        .iter()
        .map(|p| (p.photos_done, p.photo_bytes_done))
        .collect();
    // Start, after `have` (the held one), after the refused one.
    assert_eq!(done, vec![(0, 0), (1, 4_000), (2, 4_900)]);
    assert!(seen.iter().all(|p| p.photo_bytes_total == 4_900));
}

#[test]
fn a_whole_sync_reports_each_step_in_order_and_ends_with_the_wire_totals() {
    let mut r = logged_in();
    let a = r.store.put_photo(&[1u8; 1_500]).unwrap();
    let b = r.store.put_photo(&[2u8; 2_500]).unwrap();
    let registry = serde_json::to_vec(&crate::testkit::sample_registry()).unwrap();
    r.script
        .json(
            201,
            json!({"device_id": "d", "start": 1, "end": 500, "size": 500,
                   "leased_at": "2026-11-30T15:00:00Z"}),
        )
        .json(200, json!({"cursor": 0}))
        .json(200, json!({"have": []}))
        .json(201, json!({"sha256": a, "size": 1_500, "stored": true}))
        .json(201, json!({"sha256": b, "size": 2_500, "stored": true}))
        .raw(
            200,
            vec![("content-type", "application/json".into())],
            registry.clone(),
        );
    let mut seen = Vec::new();
    let summary = r
        .client
        .sync_with_progress(&mut r.store, &mut |p| seen.push(*p))
        .unwrap();
    assert!(summary.ok, "{:?}", summary.errors);

    // Each step told once as it starts, in order, 1..=5 of 5.
    let mut starts: Vec<(Step, u32)> = Vec::new();
    for p in &seen {
        assert_eq!(p.step_count, Step::COUNT);
        assert_eq!(p.step_index, p.step.index());
        if starts.last().map(|(s, _)| *s) != Some(p.step) {
            starts.push((p.step, p.step_index));
        }
    }
    assert_eq!(
        starts,
        vec![
            (Step::Session, 1),
            (Step::Numbers, 2),
            (Step::Records, 3),
            (Step::Photos, 4),
            (Step::Registry, 5),
        ]
    );
    // Start of each step, the one (empty) exchange of records, each photo, and the end.
    assert_eq!(seen.len(), 5 + 1 + 2 + 1, "{seen:#?}");
    assert_eq!(
        seen.iter().filter(|p| p.step == Step::Photos).count(),
        1 + 2
    );
    // Bytes never go down, and the last value is the summary's wire count, the registry's
    // body included.
    for pair in seen.windows(2) {
        assert!(pair[1].bytes_sent >= pair[0].bytes_sent, "{pair:?}");
        assert!(pair[1].bytes_received >= pair[0].bytes_received, "{pair:?}");
    }
    let last = seen.last().unwrap();
    assert_eq!(
        (last.bytes_sent, last.bytes_received),
        (summary.wire.bytes_up, summary.wire.bytes_down)
    );
    assert!(last.bytes_received >= registry.len() as u64);
    assert!(last.bytes_sent >= 4_000);
    assert_eq!(
        (last.photos_done, last.photos_total, last.photo_bytes_done),
        (2, 2, 4_000)
    );
    assert_eq!((last.records_done, last.records_total), (0, 0));
}
