//! Entry point for fuzzing the record sync as an outsider reaches it: the cargo-fuzz target
//! (`fuzz/fuzz_targets/sync_request.rs`) and the bounded property test that runs in CI on
//! stable (`server/tests/fuzz_sync.rs`) call the same function. Not an API: hidden from the
//! docs.
//!
//! [`sync_request`] sends its bytes as the body of `POST /v1/sync` through the real router
//! (zstd decompression under the body limit → JSON → base64 → Automerge → `ServerSync` →
//! SQLite) of a server in a temporary directory, seeded with the demo registry and accounts,
//! as the demo officer on their registered device. The contract: whatever the bytes, the
//! server answers without panicking and without an internal error (a 5xx other than 503 is a
//! bug: the panic catcher turns a panic into a 500), and keeps answering.

use std::io::Read;
use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use chrono::{DateTime, Utc};
use sync_core::domain::DriverRole;
use sync_core::records::{Agent, InfractionDraft, PersonRef, RecordDoc, UserRole};
use sync_core::sync::{Bytes, NewRecord, PROTOCOL_VERSION, SyncRequest, device_uuid};
use tower::ServiceExt;
use uuid::Uuid;

use crate::config::PasswordParams;
use crate::{AppState, Clock, Config, demo};

/// The demo officer whose session sends the bodies.
const OFFICER: &str = "fiscal";

/// The server's clock, fixed so that a corpus file replays the same way on any day.
const NOW: &str = "2026-11-30T15:00:00Z";

struct Fixture {
    runtime: tokio::runtime::Runtime,
    router: axum::Router,
    token: String,
    device: Uuid,
    body_limit: usize,
}

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap_or_default()
}

fn demo_officer() -> Option<&'static demo::DemoUser> {
    demo::USERS.iter().find(|u| u.username == OFFICER)
}

/// The server, started once per process.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| match start() {
        Ok(f) => f,
        // The fixture is the harness, not the code under test: failing to build it is a broken
        // environment, reported as loudly as a crash.
        Err(e) => panic!("fuzzing fixture: {e}"),
    })
}

fn start() -> Result<Fixture, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let dir = std::env::temp_dir().join(format!(
        "taxi-fiscal-fuzz-{}-{}",
        std::process::id(),
        Uuid::now_v7()
    ));
    let mut config = Config::new(&dir);
    config.clock = Clock::fixed(now());
    config.password_params = PasswordParams::insecure_fast();
    let body_limit = config.body_limit;
    let officer = demo_officer().ok_or("no demo officer")?;
    let (router, token) = runtime.block_on(async {
        let state = AppState::open(config, crate::store::sqlite::open)
            .await
            .map_err(|e| e.to_string())?;
        demo::seed(&state).await.map_err(|e| e.message.clone())?;
        let router = crate::router(state);
        let login = serde_json::json!({
            "username": officer.username,
            "password": officer.password,
            "device_id": officer.device_id,
        });
        let req = Request::post("/v1/auth/login")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(login.to_string()))
            .map_err(|e| e.to_string())?;
        let res = router
            .clone()
            .oneshot(req)
            .await
            .map_err(|e| e.to_string())?;
        let body = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .map_err(|e| e.to_string())?;
        let json: serde_json::Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
        let token = json["access_token"]
            .as_str()
            .ok_or_else(|| format!("login refused: {json}"))?
            .to_owned();
        Ok::<_, String>((router, token))
    })?;
    Ok(Fixture {
        runtime,
        router,
        token,
        device: device_uuid(officer.device_id),
        body_limit,
    })
}

/// Sends `data` as the body of `POST /v1/sync` (declared zstd when it starts with the zstd
/// magic number) and, when it decodes to a JSON object, once more with its `device_id` set to
/// the authenticated device's, so that fuzzed bodies reach the records and not only the
/// device check. Panics if the server answers with an internal error.
pub fn sync_request(data: &[u8]) {
    let f = fixture();
    let zstd = data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    send(f, data.to_vec(), zstd);
    let plain = if zstd {
        let mut out = Vec::new();
        let Ok(decoder) = zstd::stream::read::Decoder::new(data) else {
            return;
        };
        // Bounded like the server's own decompression: never more than the body limit.
        let limit = u64::try_from(f.body_limit).unwrap_or(u64::MAX);
        if decoder.take(limit + 1).read_to_end(&mut out).is_err() || out.len() > f.body_limit {
            return;
        }
        out
    } else {
        data.to_vec()
    };
    if let Ok(serde_json::Value::Object(mut body)) = serde_json::from_slice(&plain) {
        body.insert(
            "device_id".into(),
            serde_json::Value::String(f.device.to_string()),
        );
        send(
            f,
            serde_json::Value::Object(body).to_string().into_bytes(),
            false,
        );
    }
}

/// Sends a plain JSON body as [`sync_request`] does and returns the answer's status and JSON
/// body, for tests that check what the server made of a request.
pub fn sync_answer(body: &[u8]) -> (u16, serde_json::Value) {
    let f = fixture();
    let Ok(req) = Request::post("/v1/sync")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.token))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_vec()))
    else {
        return (0, serde_json::Value::Null);
    };
    f.runtime.block_on(async {
        let res = match f.router.clone().oneshot(req).await {
            Ok(res) => res,
            Err(never) => match never {},
        };
        let status = res.status().as_u16();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .unwrap_or_default();
        (status, serde_json::from_slice(&bytes).unwrap_or_default())
    })
}

fn send(f: &Fixture, body: Vec<u8>, zstd: bool) {
    let mut req = Request::post("/v1/sync")
        .header(header::AUTHORIZATION, format!("Bearer {}", f.token))
        .header(header::CONTENT_TYPE, "application/json");
    if zstd {
        req = req.header(header::CONTENT_ENCODING, "zstd");
    }
    let Ok(req) = req.body(Body::from(body)) else {
        return;
    };
    let status = f.runtime.block_on(async {
        match f.router.clone().oneshot(req).await {
            Ok(res) => res.status(),
            Err(never) => match never {},
        }
    });
    assert!(
        !status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE,
        "POST /v1/sync answered {status}"
    );
}

/// A valid request to mutate: one new auto de infração by the demo officer on their device,
/// about the first permit of the demo registry, as the app writes it (JSON, not compressed).
pub fn seed_request() -> Vec<u8> {
    let f = fixture();
    let Some(officer) = demo_officer() else {
        return Vec::new();
    };
    let registry = demo::registry(now().date_naive());
    let Some((permit, plate)) = registry.permits.iter().find_map(|p| {
        let v = registry.vehicles.iter().find(|v| v.id == p.vehicle_id)?;
        Some((p, v.plate.clone()))
    }) else {
        return Vec::new();
    };
    let agent = Agent::new(
        format!("u-{}", officer.username),
        UserRole::GuardaMunicipal,
        f.device,
    );
    let draft = InfractionDraft {
        id: Uuid::now_v7(),
        number: None,
        issuing_body: "Guarda Municipal de Americana".into(),
        occurred_at: now(),
        monotonic: 1,
        position: None,
        stand_id: None,
        plate,
        driver: PersonRef::Registry(permit.holder_id.clone()),
        driver_role: DriverRole::Holder,
        permit_number: Some(permit.number.clone()),
        holder_id: Some(permit.holder_id.clone()),
        facts: "Veículo sem vistoria no ponto.".into(),
        legal_basis: Vec::new(),
        verdict: None,
        witnesses: Vec::new(),
        photos: Vec::new(),
    };
    let Ok(mut doc) = RecordDoc::new_infraction(draft, &agent) else {
        return Vec::new();
    };
    let request = SyncRequest {
        protocol: PROTOCOL_VERSION,
        device_id: f.device,
        cursor: 0,
        new_records: vec![NewRecord {
            record_id: doc.id(),
            doc: Bytes(doc.save()),
        }],
        messages: Vec::new(),
        device_clock: None,
    };
    serde_json::to_vec(&request).unwrap_or_default()
}
