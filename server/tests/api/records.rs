//! Record sync (`POST /v1/sync`) and the office's records API, with real device stores
//! (sync-core's `Store` in temporary directories) driving the exchanges: vetting and its
//! rejections leave nothing on the server but the quarantine row; accepted changes write the
//! projection and one audit row in the same transaction; replays write nothing.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sync_core::domain::{DriverRole, Plate};
use sync_core::records::{
    Agent, DeviceKey, Gravity, InfractionDraft, LegalBasis, PersonRef, RecordDoc, Signature,
    TransgressionDraft, UserRole, WitnessInput,
};
use sync_core::store::Store;
use sync_core::sync::{DeviceSync, SyncReport, SyncRequest, SyncResponse, device_uuid, meta_of};
use uuid::Uuid;

use crate::common::{App, NOW, Resp, app};

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap()
}

/// A device of a demo user: its own store, logged in.
struct Phone {
    agent: Agent,
    token: String,
    store: Store,
    sync: DeviceSync,
    _dir: tempfile::TempDir,
}

async fn phone(app: &App, username: &str) -> Phone {
    let login = app.login_full(username).await;
    let token = login["access_token"].as_str().unwrap().to_owned();
    let user_id = login["user"]["id"].as_str().unwrap().to_owned();
    let device = login["device_id"].as_str().unwrap().to_owned();
    let role = match login["user"]["role"].as_str().unwrap() {
        "officer" => UserRole::GuardaMunicipal,
        "coordinator" => UserRole::Coordinator,
        "office" => UserRole::Office,
        other => panic!("{other}"),
    };
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("device.db")).unwrap();
    let uuid = device_uuid(&device);
    Phone {
        agent: Agent::new(user_id, role, uuid),
        token,
        store,
        sync: DeviceSync::new(uuid),
        _dir: dir,
    }
}

impl Phone {
    fn persist(&mut self, doc: &mut RecordDoc) -> String {
        let id = doc.id().to_string();
        let meta = meta_of(doc, now()).unwrap();
        let chunk = doc.save_incremental();
        self.store
            .write_record(&id, doc.kind().as_str(), &meta, &chunk, false)
            .unwrap();
        id
    }

    fn doc(&self, id: &str) -> RecordDoc {
        RecordDoc::load(&self.store.load_record_bytes(id).unwrap().concat()).unwrap()
    }

    fn edit(&mut self, id: &str, f: impl FnOnce(&mut RecordDoc, &Agent)) {
        let mut d = self.doc(id);
        let agent = self.agent.clone();
        f(&mut d, &agent);
        self.persist(&mut d);
    }

    fn request(&self) -> SyncRequest {
        let p = self.sync.build_request(&self.store).unwrap();
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        p.request
    }
}

async fn post_sync(app: &App, token: &str, req: &SyncRequest) -> Resp {
    app.post("/v1/sync", token, serde_json::to_value(req).unwrap())
        .await
}

/// One round trip, applied on the device.
async fn exchange(app: &App, p: &mut Phone) -> (SyncRequest, SyncResponse, SyncReport) {
    let req = p.request();
    let resp: SyncResponse =
        serde_json::from_value(post_sync(app, &p.token, &req).await.ok(StatusCode::OK)).unwrap();
    let report = p
        .sync
        .apply_response(&mut p.store, &req, &resp, now())
        .unwrap();
    (req, resp, report)
}

async fn sync_all(app: &App, p: &mut Phone) -> Vec<SyncReport> {
    let mut out = Vec::new();
    for _ in 0..10 {
        let (_, _, r) = exchange(app, p).await;
        let again = r.again;
        out.push(r);
        if !again {
            return out;
        }
    }
    panic!("no convergence");
}

fn draft(at: DateTime<Utc>, plate: &str) -> InfractionDraft {
    InfractionDraft {
        id: Uuid::now_v7(),
        // Numbers are the subject of their own tests (they must come from a leased block).
        number: None,
        issuing_body: "Guarda Municipal de Americana".into(),
        occurred_at: at,
        monotonic: 99,
        position: None,
        stand_id: Some("S02".into()),
        plate: Plate::parse(plate).unwrap(),
        driver: PersonRef::Observed("obs-1".into()),
        driver_role: DriverRole::Unauthorised,
        permit_number: None,
        holder_id: None,
        facts: "Transporte remunerado sem alvará.".into(),
        legal_basis: vec![LegalBasis {
            rule_id: "R01".into(),
            citation: "Lei 4.019/2004, art. 1".into(),
        }],
        verdict: None,
        witnesses: Vec::new(),
        photos: Vec::new(),
    }
}

fn issued(agent: &Agent, plate: &str) -> RecordDoc {
    let at = now() - Duration::hours(2);
    let mut r = RecordDoc::new_infraction(draft(at, plate), agent).unwrap();
    r.confirm_vehicle(agent, at + Duration::minutes(1)).unwrap();
    r.issue_unsealed(
        agent,
        at + Duration::minutes(5),
        Signature::Missing {
            reason: "condutor ausente".into(),
        },
    )
    .unwrap();
    r
}

fn witness() -> WitnessInput {
    WitnessInput {
        person: PersonRef::Observed("w-1".into()),
        statement: "Presenciei a cobrança da corrida.".into(),
    }
}

/// Appends an event with no local check, as a faulty client could.
fn raw_event(d: &mut RecordDoc, a: &Agent, at: DateTime<Utc>, kind: &str, payload: &str) {
    use automerge::transaction::Transactable;
    use automerge::{ObjType, ROOT, ReadDoc, ScalarValue};
    let am = d.automerge_mut();
    am.set_actor(a.actor_id());
    let (_, list) = am.get(ROOT, "events").unwrap().unwrap();
    let len = am.length(&list);
    let o = am.insert_object(&list, len, ObjType::Map).unwrap();
    am.put(&o, "id", Uuid::now_v7().to_string()).unwrap();
    am.put(&o, "kind", kind).unwrap();
    am.put(&o, "at", ScalarValue::Timestamp(at.timestamp_millis()))
        .unwrap();
    am.put(&o, "user_id", a.user_id.as_str()).unwrap();
    am.put(&o, "role", a.role.as_str()).unwrap();
    am.put(&o, "device_id", a.device_id.to_string()).unwrap();
    if !payload.is_empty() {
        am.put(&o, "payload", payload).unwrap();
    }
    am.commit();
}

/// What a refused exchange must leave unchanged: heads, the projection row, audit rows.
async fn footprint(app: &App, office: &str, id: &str) -> (Value, Value, u64) {
    let r = app.get(&format!("/v1/records/{id}"), office).await;
    let v = r.ok(StatusCode::OK);
    (v["heads"].clone(), v["row"].clone(), app.audit_rows().await)
}

async fn quarantine(app: &App, office: &str, id: &str) -> Vec<Value> {
    app.get(&format!("/v1/records/{id}/quarantine"), office)
        .await
        .ok(StatusCode::OK)
        .as_array()
        .unwrap()
        .clone()
}

// -------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_good_sync_writes_projection_and_audit_and_a_replay_writes_nothing() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "abc-1d23");
    let id = p.persist(&mut r);
    let audit_before = app.audit_rows().await;

    let req = p.request();
    assert_eq!(req.new_records.len(), 1);
    let body = post_sync(&app, &p.token, &req).await.ok(StatusCode::OK);
    let resp: SyncResponse = serde_json::from_value(body).unwrap();
    assert_eq!(resp.accepted.len(), 1);
    assert!(resp.rejections.is_empty());
    assert_eq!(app.audit_rows().await, audit_before + 1);

    // Replayed (the device never heard): same answer, nothing new.
    let again: SyncResponse =
        serde_json::from_value(post_sync(&app, &p.token, &req).await.ok(StatusCode::OK)).unwrap();
    assert_eq!(again.accepted, resp.accepted);
    assert_eq!(app.audit_rows().await, audit_before + 1);
    let report = p
        .sync
        .apply_response(&mut p.store, &req, &again, now())
        .unwrap();
    assert!(!report.again && report.issues.is_empty());

    // The projection, found by any spelling of the plate.
    for plate in ["ABC1D23", "abc-1d23", "ABC 1D23"] {
        let page = app
            .get(
                &format!("/v1/records?plate={}", plate.replace(' ', "%20")),
                &office,
            )
            .await
            .ok(StatusCode::OK);
        assert_eq!(page["total"], 1, "{plate}");
        assert_eq!(page["items"][0]["id"], id.as_str());
    }
    let page = app
        .get("/v1/records?status=issued&stand=S02", &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(page["total"], 1);
    let item = &page["items"][0];
    assert_eq!(item["kind"], "infraction");
    assert_eq!(item["status"], "issued");
    assert_eq!(item["plate"], "ABC1D23");
    assert_eq!(item["author_user_id"], p.agent.user_id.as_str());
    assert!(item["number"].is_null());
    for q in [
        "status=draft",
        "stand=S01",
        "officer=nobody",
        "to=2026-11-29",
    ] {
        let page = app
            .get(&format!("/v1/records?{q}"), &office)
            .await
            .ok(StatusCode::OK);
        assert_eq!(page["total"], 0, "{q}");
    }
    let page = app
        .get("/v1/records?from=2026-11-30&to=2026-11-30", &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(page["total"], 1);
    app.get("/v1/records?plate=XX", &office)
        .await
        .error(StatusCode::BAD_REQUEST, "invalid_plate");

    // One record: fields and events; its audit rows.
    let one = app
        .get(&format!("/v1/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(one["record"]["status"], "issued");
    assert_eq!(one["record"]["events"].as_array().unwrap().len(), 1);
    let audit = app
        .get(&format!("/v1/records/{id}/audit"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(audit.as_array().unwrap().len(), 1);
    assert_eq!(audit[0]["action"], "record.sync.create");
    assert_eq!(audit[0]["device_id"], "tablet-fiscal-01");
    let report = app.state.store().verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
    // And from the command line, as an auditor would run it.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_taxi-fiscal"))
        .args(["audit", "verify", "--data"])
        .arg(app.dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["ok"], true);
    assert_eq!(cli["rows"], report.rows);

    // Field roles do not read the office's API.
    app.get("/v1/records", &p.token)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");

    // Now in sync: a noop exchange sends only the cursor.
    let (req, resp, _) = exchange(&app, &mut p).await;
    assert!(req.new_records.is_empty() && req.messages.is_empty());
    assert!(resp.accepted.is_empty() && resp.messages.is_empty());
    assert!(serde_json::to_vec(&req).unwrap().len() < 2048);
}

#[tokio::test]
async fn sealed_field_edit_is_rejected_and_leaves_only_a_quarantine_row() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "ABC1D23");
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    let before = footprint(&app, &office, &id).await;

    p.edit(&id, |d, a| {
        use automerge::transaction::Transactable;
        let am = d.automerge_mut();
        am.set_actor(a.actor_id());
        am.put(automerge::ROOT, "facts", "Outra história").unwrap();
        am.commit();
    });
    let (_, resp, report) = exchange(&app, &mut p).await;
    assert_eq!(resp.rejections.len(), 1);
    let rej = &resp.rejections[0];
    assert_eq!(rej.code.as_str(), "sealed_field");
    assert!(rej.message.contains("lacrado"));
    assert!(rej.server_doc.is_some());
    assert_eq!(
        footprint(&app, &office, &id).await,
        before,
        "nothing changed"
    );
    let q = quarantine(&app, &office, &id).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q[0]["code"], "sealed_field");
    assert_eq!(q[0]["change_hashes"][0], rej.change_hashes[0].as_str());
    // The device went back to the server's version, kept the refused change, told the officer.
    assert!(report.issues[0].message.contains("foi recusada"));
    assert_eq!(
        p.doc(&id).view().unwrap().facts,
        "Transporte remunerado sem alvará."
    );
    assert_eq!(p.store.sync_quarantine(Some(&id)).unwrap().len(), 1);
    // A replay of the refused request adds no second quarantine row.
    let mut replay = p.request();
    assert!(replay.messages.is_empty());
    replay.cursor = 0;
    post_sync(&app, &p.token, &replay).await.ok(StatusCode::OK);
    assert_eq!(quarantine(&app, &office, &id).await.len(), 1);
}

#[tokio::test]
async fn foreign_actor_and_truncated_bytes_are_rejected_and_store_nothing() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let agent = p.agent.clone();
    let mut r = RecordDoc::new_infraction(draft(now(), "ABC1D23"), &agent).unwrap();
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    let before = footprint(&app, &office, &id).await;

    // A draft edit under another device's actor.
    p.edit(&id, |d, _| {
        use automerge::transaction::Transactable;
        let am = d.automerge_mut();
        am.set_actor(automerge::ActorId::from(
            device_uuid("celular-coordenador-s01").as_bytes(),
        ));
        am.put(automerge::ROOT, "facts", "Fatos reescritos")
            .unwrap();
        am.commit();
    });
    let req = p.request();
    let resp: SyncResponse =
        serde_json::from_value(post_sync(&app, &p.token, &req).await.ok(StatusCode::OK)).unwrap();
    assert_eq!(resp.rejections[0].code.as_str(), "foreign_actor");
    assert_eq!(footprint(&app, &office, &id).await, before);

    // The same message cut short, and garbage: malformed, nothing stored.
    for bytes in [
        req.messages[0].message.0[..req.messages[0].message.len() / 2].to_vec(),
        vec![0x42, 0xde, 0xad, 0xbe, 0xef],
    ] {
        let mut bad = req.clone();
        bad.messages[0].message.0 = bytes;
        let resp: SyncResponse =
            serde_json::from_value(post_sync(&app, &p.token, &bad).await.ok(StatusCode::OK))
                .unwrap();
        assert_eq!(resp.rejections[0].code.as_str(), "malformed");
        assert_eq!(footprint(&app, &office, &id).await, before);
    }
    // A new record whose bytes are truncated: refused, no record, no audit row.
    let mut other = issued(&agent, "DEF4G56");
    let full = other.save();
    let other_id = other.id();
    let audit = app.audit_rows().await;
    let bad = SyncRequest {
        protocol: sync_core::sync::PROTOCOL_VERSION,
        device_id: agent.device_id,
        cursor: 0,
        new_records: vec![sync_core::sync::NewRecord {
            record_id: other_id,
            doc: full[..full.len() - 7].to_vec().into(),
        }],
        messages: Vec::new(),
        device_clock: None,
    };
    let resp: SyncResponse =
        serde_json::from_value(post_sync(&app, &p.token, &bad).await.ok(StatusCode::OK)).unwrap();
    assert_eq!(resp.rejections[0].code.as_str(), "malformed");
    assert!(resp.rejections[0].server_doc.is_none());
    app.get(&format!("/v1/records/{other_id}"), &office)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.audit_rows().await, audit);
    // Base64 that is not base64 is a 422 of the body, nothing stored.
    let mut v = serde_json::to_value(&bad).unwrap();
    v["new_records"][0]["doc"] = json!("***");
    app.post("/v1/sync", &p.token, v)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
}

#[tokio::test]
async fn coordinator_for_another_stand_is_refused() {
    let app = app().await;
    let mut c = phone(&app, "coordenador").await;
    let registry = app.state.store().registry().await.unwrap();
    let index = registry.index();
    // A permit of another stand than the coordinator's (S01), and its holder.
    let permit = registry
        .permits
        .iter()
        .find(|p| p.stand_id != "S01")
        .unwrap();
    let draft = TransgressionDraft {
        id: Uuid::now_v7(),
        occurred_at: now() - Duration::hours(1),
        monotonic: 5,
        position: None,
        permit_number: permit.number.clone(),
        driver_id: permit.holder_id.clone(),
        gravity: Gravity::Light,
        facts: "Discussão no ponto.".into(),
        legal_basis: Vec::new(),
        witnesses: Vec::new(),
        photos: Vec::new(),
    };
    // The app believed it coordinated that stand; the server knows better.
    let agent = c.agent.clone();
    let mut r = RecordDoc::new_transgression(draft, &agent, &index, &permit.stand_id).unwrap();
    let id = c.persist(&mut r);
    let audit = app.audit_rows().await;
    let (_, resp, report) = exchange(&app, &mut c).await;
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].code.as_str(), "outside_stand");
    assert!(resp.rejections[0].message.contains("art. 17"));
    assert_eq!(app.audit_rows().await, audit);
    assert!(report.issues[0].message.contains("retirado da lista"));
    let office = app.login("escritorio").await;
    assert_eq!(quarantine(&app, &office, &id).await.len(), 1);

    // Its own stand's driver: accepted.
    let permit = registry
        .permits
        .iter()
        .find(|p| p.stand_id == "S01")
        .unwrap();
    let draft = TransgressionDraft {
        id: Uuid::now_v7(),
        occurred_at: now() - Duration::hours(1),
        monotonic: 6,
        position: None,
        permit_number: permit.number.clone(),
        driver_id: permit.holder_id.clone(),
        gravity: Gravity::Light,
        facts: "Veículo fora da fila.".into(),
        legal_basis: Vec::new(),
        witnesses: Vec::new(),
        photos: Vec::new(),
    };
    let mut ok = RecordDoc::new_transgression(draft, &agent, &index, "S01").unwrap();
    c.persist(&mut ok);
    let reports = sync_all(&app, &mut c).await;
    assert!(reports.iter().all(|r| r.issues.is_empty()));
    assert_eq!(app.audit_rows().await, audit + 1);
}

#[tokio::test]
async fn events_the_officer_may_not_write_are_refused() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "ABC1D23");
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    let before = footprint(&app, &office, &id).await;

    // Office-only event from an officer.
    p.edit(&id, |d, a| raw_event(d, a, now(), "reviewed", ""));
    let (_, resp, _) = exchange(&app, &mut p).await;
    assert_eq!(resp.rejections[0].code.as_str(), "role_forbidden");
    assert_eq!(footprint(&app, &office, &id).await, before);

    // Out of order on the officer's own copy: a ciência with no decision. Chosen semantics
    // (ADR 0009): refused when the sender's own copy refuses it; kept and flagged only when a
    // concurrent change elsewhere made it invalid after the merge.
    p.edit(&id, |d, a| {
        raw_event(
            d,
            a,
            now(),
            "notified",
            r#"{"method":"personal_signature","on":"2026-11-30"}"#,
        );
    });
    let (_, resp, _) = exchange(&app, &mut p).await;
    assert_eq!(resp.rejections[0].code.as_str(), "invalid_event");
    assert_eq!(footprint(&app, &office, &id).await, before);
    assert_eq!(quarantine(&app, &office, &id).await.len(), 2);
}

#[tokio::test]
async fn office_events_are_vetted_audited_and_reach_the_device() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "ABC1D23");
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    let audit = app.audit_rows().await;

    let url = format!("/v1/records/{id}/events");
    let r = app
        .post(
            &url,
            &office,
            json!({"event": {"kind": "reviewed", "note": "ok"}}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(r["record"]["status"], "under_review");
    assert_eq!(r["row"]["status"], "under_review");
    assert_eq!(app.audit_rows().await, audit + 1);
    // Out of order: a decision with nothing proposed.
    app.post(
        &url,
        &office,
        json!({"event": {"kind": "penalty_decided", "penalty": {"kind": "fine"}}}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    // The author's event is not the office's.
    app.post(&url, &office, json!({"event": {"kind": "issued"}}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    // Officers do not append office events through this API.
    app.post(&url, &p.token, json!({"event": {"kind": "archived"}}))
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    app.post(
        "/v1/records/00000000-0000-7000-8000-000000000000/events",
        &office,
        json!({"event": {"kind": "archived"}}),
    )
    .await
    .error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.audit_rows().await, audit + 1);

    // The officer, meanwhile, adds a witness offline; both meet on the next sync.
    p.edit(&id, |d, a| {
        d.add_witness(a, now() + Duration::minutes(1), &witness())
            .unwrap();
    });
    let reports = sync_all(&app, &mut p).await;
    assert_eq!(reports.len(), 1);
    let local = p.doc(&id).view().unwrap();
    assert_eq!(local.status.as_str(), "under_review");
    assert_eq!(local.witnesses.len(), 1);
    let one = app
        .get(&format!("/v1/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    let mut local_doc = p.doc(&id);
    assert_eq!(
        one["heads"],
        json!(sync_core::sync::hex_heads(&mut local_doc))
    );
    assert_eq!(one["record"]["witnesses"].as_array().unwrap().len(), 1);
    assert!(app.state.store().verify_audit().await.unwrap().ok);
}

#[tokio::test]
async fn concurrent_values_are_shown_and_resolved_by_the_office() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let admin = app.login("admin").await;
    let mut p = phone(&app, "fiscal").await;
    // The same officer's second device.
    app.post(
        "/v1/devices",
        &admin,
        json!({"id": "celular-fiscal-02", "user_id": p.agent.user_id, "label": "Celular 2"}),
    )
    .await
    .ok(StatusCode::CREATED);
    let login = app
        .request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(json!({"username": "fiscal", "password": "fiscal-demo",
                        "device_id": "celular-fiscal-02"})),
        )
        .await
        .ok(StatusCode::OK);
    let dir = tempfile::tempdir().unwrap();
    let mut p2 = Phone {
        agent: Agent::new(
            p.agent.user_id.clone(),
            UserRole::GuardaMunicipal,
            device_uuid("celular-fiscal-02"),
        ),
        token: login["access_token"].as_str().unwrap().to_owned(),
        store: Store::open(dir.path().join("d.db")).unwrap(),
        sync: DeviceSync::new(device_uuid("celular-fiscal-02")),
        _dir: dir,
    };
    let agent = p.agent.clone();
    let mut r = RecordDoc::new_infraction(draft(now(), "ABC1D23"), &agent).unwrap();
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    sync_all(&app, &mut p2).await;
    // Both devices rewrite the draft's facts offline.
    p.edit(&id, |d, a| {
        d.set_facts(a, now(), "Versão do celular 1").unwrap()
    });
    p2.edit(&id, |d, a| {
        d.set_facts(a, now(), "Versão do celular 2").unwrap()
    });
    sync_all(&app, &mut p).await;
    sync_all(&app, &mut p2).await;

    let conflicts = app
        .get(&format!("/v1/records/{id}/conflicts"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(conflicts.as_array().unwrap().len(), 1);
    assert_eq!(conflicts[0]["field"], "facts");
    assert_eq!(conflicts[0]["values"].as_array().unwrap().len(), 2);
    let page = app.get("/v1/records", &office).await.ok(StatusCode::OK);
    assert_eq!(page["items"][0]["conflicts"], 1);

    app.post(
        &format!("/v1/records/{id}/events"),
        &office,
        json!({"event": {"kind": "conflict_resolved", "field": "facts",
                         "value": "Versão do celular 2"}}),
    )
    .await
    .ok(StatusCode::CREATED);
    let conflicts = app
        .get(&format!("/v1/records/{id}/conflicts"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(conflicts, json!([]));
    sync_all(&app, &mut p).await;
    assert_eq!(p.doc(&id).view().unwrap().facts, "Versão do celular 2");
}

#[tokio::test]
async fn photo_links_only_to_a_record_the_caller_may_write() {
    let app = app().await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "ABC1D23");
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    let photo = b"\xFF\xD8\xFF\xE0 uma foto".to_vec();
    let h = hex::encode(Sha256::digest(&photo));
    let put = |token: String, record: String| {
        let req = Request::builder()
            .method(Method::PUT)
            .uri(format!("/v1/photos/{h}?record_id={record}"))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "image/jpeg")
            .body(Body::from(photo.clone()))
            .unwrap();
        app.send(req)
    };
    let coordinator = app.login("coordenador").await;
    put(coordinator, id.clone())
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    put(p.token.clone(), id.clone())
        .await
        .ok(StatusCode::CREATED);
    // A record the server does not have yet (the photo goes up before the record).
    let other = Uuid::now_v7().to_string();
    put(p.token.clone(), other).await.ok(StatusCode::OK);
}

#[tokio::test]
async fn compressed_bodies_and_refused_exchanges() {
    let app = app().await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "ABC1D23");
    p.persist(&mut r);
    let req = p.request();
    let json = serde_json::to_vec(&req).unwrap();
    let zstd = zstd::encode_all(&json[..], 3).unwrap();
    let send = |body: Vec<u8>, encoding: Option<&'static str>, token: String| {
        let mut b = Request::builder()
            .method(Method::POST)
            .uri("/v1/sync")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json");
        if let Some(e) = encoding {
            // Compressed up, compressed down.
            b = b.header("content-encoding", e).header("accept-encoding", e);
        }
        app.send(b.body(Body::from(body)).unwrap())
    };
    let res = send(zstd.clone(), Some("zstd"), p.token.clone()).await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.headers["content-encoding"], "zstd");
    let body = zstd::decode_all(&res.body[..]).unwrap();
    let resp: SyncResponse = serde_json::from_slice(&body).unwrap();
    assert_eq!(resp.accepted.len(), 1);
    eprintln!(
        "one new record over HTTP: JSON {} B, zstd {} B",
        json.len(),
        zstd.len()
    );

    // Admins write no records; another device's request; another protocol.
    let admin = app.login("admin").await;
    send(json.clone(), None, admin)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    let coordinator = app.login("coordenador").await;
    send(json.clone(), None, coordinator)
        .await
        .error(StatusCode::FORBIDDEN, "device_mismatch");
    let mut old = req.clone();
    old.protocol = 0;
    post_sync(&app, &p.token, &old)
        .await
        .error(StatusCode::CONFLICT, "protocol_unsupported");
}

#[tokio::test]
async fn an_exchange_refused_midway_leaves_nothing_behind() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let mut first = issued(&p.agent.clone(), "abc-1d23");
    let first_id = p.persist(&mut first);
    sync_all(&app, &mut p).await;
    let total = |page: Value| page["total"].as_u64().unwrap();
    let before = total(app.get("/v1/records", &office).await.ok(StatusCode::OK));
    assert_eq!(before, 1);

    // More new records than one window of the server holds (their effects are persisted while
    // the next window is decoded), then a change to a record whose stored copy no longer loads.
    for _ in 0..130 {
        let mut r = issued(&p.agent.clone(), "abc-1d23");
        p.persist(&mut r);
    }
    p.edit(&first_id, |d, a| {
        d.add_witness(a, now() + Duration::minutes(5), &witness())
            .unwrap();
    });
    let conn = rusqlite::Connection::open(app.dir.path().join(taxi_fiscal_server::config::DB_FILE))
        .unwrap();
    conn.execute(
        "UPDATE records SET doc = x'00ff' WHERE id = ?1",
        [first_id.as_str()],
    )
    .unwrap();
    let audit = app.audit_rows().await;

    let req = p.request();
    assert_eq!((req.new_records.len(), req.messages.len()), (130, 1));
    let r = post_sync(&app, &p.token, &req).await;
    assert_eq!(
        r.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{:?}",
        r.json()
    );
    // None of the 130 records, no audit row, no per-device state: the device retries it all.
    assert_eq!(
        total(app.get("/v1/records", &office).await.ok(StatusCode::OK)),
        before
    );
    assert_eq!(app.audit_rows().await, audit);
    let peers: i64 = conn
        .query_row("SELECT count(*) FROM record_peers", [], |r| r.get(0))
        .unwrap();
    let bound: i64 = conn
        .query_row("SELECT count(*) FROM record_changes", [], |r| r.get(0))
        .unwrap();
    assert_eq!((peers, bound), (1, 1), "only the first record's rows");
}

/// A record's bytes are stored once, in its document: the batch log keeps the change hashes
/// (what the audit row covers), not the bytes again; `audit verify` checks that every change a
/// batch names is in the document.
#[tokio::test]
async fn a_records_bytes_are_stored_once_and_every_batch_is_in_its_document() {
    let app = app().await;
    let mut p = phone(&app, "fiscal").await;
    let mut r = issued(&p.agent.clone(), "abc-1d23");
    let id = p.persist(&mut r);
    sync_all(&app, &mut p).await;
    p.edit(&id, |d, a| {
        d.add_witness(a, now() + Duration::minutes(5), &witness())
            .unwrap();
    });
    sync_all(&app, &mut p).await;
    let db = app.dir.path().join(taxi_fiscal_server::config::DB_FILE);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let batches: i64 = conn
        .query_row(
            "SELECT count(*) FROM record_changes WHERE record_id = ?1",
            [id.as_str()],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(batches, 2);
    let columns: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('record_changes')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(columns.contains(&"change_hashes".to_owned()), "{columns:?}");
    assert!(!columns.contains(&"changes".to_owned()), "{columns:?}");
    let check = || async {
        taxi_fiscal_server::store::Store::check_consistency(
            &taxi_fiscal_server::store::sqlite::SqliteStore::open(&db).unwrap(),
        )
        .await
        .unwrap()
        .mismatches
    };
    assert_eq!(check().await, Vec::new());
    // What each mismatch names: the row and the column.
    let subjects = |found: Vec<taxi_fiscal_server::store::sqlite::consistency::Mismatch>| {
        found
            .into_iter()
            .map(|m| (m.subject, m.column))
            .collect::<Vec<(String, String)>>()
    };
    // A batch that names a change the document does not hold is reported (and, its hashes no
    // longer being the audited ones, so is its audit digest).
    conn.execute(
        "UPDATE record_changes SET change_hashes = ?1
         WHERE id = (SELECT max(id) FROM record_changes WHERE record_id = ?2)",
        rusqlite::params![format!("[\"{}\"]", "0".repeat(64)), id],
    )
    .unwrap();
    let found = subjects(check().await);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(
        found[0],
        (format!("record:{id}"), "record_changes".to_owned())
    );
    assert_eq!(found[1].1, "change_hashes");
    // The inbox's counters are checked against a count of the rows.
    conn.execute(
        "UPDATE record_status_counts SET n = n + 1 WHERE status = 'issued'",
        [],
    )
    .unwrap();
    let found = subjects(check().await);
    assert!(
        found.contains(&("record_status_counts:issued".to_owned(), "n".to_owned())),
        "{found:?}"
    );
    // And the rule filter's, against a count of the rows of each rule: a record counted
    // under a rule no record has.
    let (rule, status) = ("R99", "issued");
    conn.execute(
        "INSERT INTO record_rule_counts (rule, status, n) VALUES (?1, ?2, 1)",
        [rule, status],
    )
    .unwrap();
    let found = subjects(check().await);
    assert!(
        found.contains(&(
            format!("record_rule_counts:{rule}:{status}"),
            "n".to_owned()
        )),
        "{found:?}"
    );
}

/// Leases a block of `size` numbers to the phone's device; its first and last number.
async fn lease(app: &App, p: &Phone, device: &str, size: u64) -> Resp {
    app.post(
        &format!("/v1/devices/{device}/number-blocks"),
        &p.token,
        json!({ "size": size }),
    )
    .await
}

#[tokio::test]
async fn auto_numbers_must_come_from_the_devices_blocks_and_be_unique() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let mut p = phone(&app, "fiscal").await;
    let block = lease(&app, &p, "tablet-fiscal-01", 100)
        .await
        .ok(StatusCode::CREATED);
    let (start, end) = (
        block["start"].as_u64().unwrap(),
        block["end"].as_u64().unwrap(),
    );
    let numbered = |p: &Phone, n: String| {
        let mut d = draft(now() - Duration::minutes(5), "ABC1D23");
        d.number = Some(n);
        RecordDoc::new_infraction(d, &p.agent).unwrap()
    };
    let mut first = numbered(&p, start.to_string());
    let mut last = numbered(&p, end.to_string());
    let mut outside = numbered(&p, (end + 1).to_string());
    let mut not_a_number = numbered(&p, format!("GM-{start}"));
    let first_id = p.persist(&mut first);
    let last_id = p.persist(&mut last);
    let outside_id = p.persist(&mut outside);
    let text_id = p.persist(&mut not_a_number);
    let (_, resp, _) = exchange(&app, &mut p).await;
    let code = |id: &str| {
        resp.rejections
            .iter()
            .find(|r| r.record_id.to_string() == id)
            .map(|r| r.code.as_str())
    };
    assert_eq!(code(&first_id), None, "{resp:?}");
    assert_eq!(code(&last_id), None, "{resp:?}");
    assert_eq!(code(&outside_id), Some("number_not_leased"));
    assert_eq!(code(&text_id), Some("number_not_leased"));
    assert_eq!(quarantine(&app, &office, &outside_id).await.len(), 1);
    app.get(&format!("/v1/records/{outside_id}"), &office)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");

    // A second auto with a number already stored: refused, the first keeps it.
    let mut twice = numbered(&p, start.to_string());
    let twice_id = p.persist(&mut twice);
    let (_, resp, _) = exchange(&app, &mut p).await;
    let rej = resp
        .rejections
        .iter()
        .find(|r| r.record_id.to_string() == twice_id)
        .expect("refused");
    assert_eq!(rej.code.as_str(), "number_taken");
    assert!(rej.message.contains(&start.to_string()), "{}", rej.message);
    let page = app
        .get("/v1/records?plate=ABC1D23", &office)
        .await
        .ok(StatusCode::OK);
    let with_start: Vec<_> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["number"] == start.to_string().as_str())
        .collect();
    assert_eq!(with_start.len(), 1);
    assert_eq!(with_start[0]["id"], first_id.as_str());
}

#[tokio::test]
async fn a_device_holding_too_many_unused_numbers_gets_no_new_block() {
    use taxi_fiscal_server::limits::MAX_UNUSED_NUMBERS_PER_DEVICE;
    let app = app().await;
    let p = phone(&app, "fiscal").await;
    // One under the quota: another block is still granted.
    lease(
        &app,
        &p,
        "tablet-fiscal-01",
        MAX_UNUSED_NUMBERS_PER_DEVICE - 1,
    )
    .await
    .ok(StatusCode::CREATED);
    lease(&app, &p, "tablet-fiscal-01", 1)
        .await
        .ok(StatusCode::CREATED);
    // At the quota: refused, with a Portuguese reason.
    let refused = lease(&app, &p, "tablet-fiscal-01", 1)
        .await
        .error(StatusCode::TOO_MANY_REQUESTS, "quota_exceeded");
    assert!(
        refused["message"].as_str().unwrap().contains("sem uso"),
        "{refused}"
    );

    // Using a number frees room for one more block.
    let mut p = p;
    let mut d = draft(now() - Duration::minutes(5), "ABC1D23");
    d.number = Some("1".into());
    let mut r = RecordDoc::new_infraction(d, &p.agent).unwrap();
    p.persist(&mut r);
    let (_, resp, _) = exchange(&app, &mut p).await;
    assert!(resp.rejections.is_empty(), "{resp:?}");
    lease(&app, &p, "tablet-fiscal-01", 1)
        .await
        .ok(StatusCode::CREATED);
}

// ------------------------------------------------------------------ device seals and receipts

/// A demo user's device logged in with `key` registered, as the app logs in.
async fn keyed_phone(app: &App, username: &str, key: &DeviceKey) -> Phone {
    let u = crate::common::demo_user(username);
    let login = app
        .request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(json!({"username": u.username, "password": u.password,
                        "device_id": u.device_id,
                        "device_public_key": hex::encode(key.public_key())})),
        )
        .await
        .ok(StatusCode::OK);
    let mut p = phone(app, username).await;
    p.token = login["access_token"].as_str().unwrap().to_owned();
    p
}

/// One round trip with the device clock `clock` stamped on the request, as the client does.
async fn exchange_at(app: &App, p: &mut Phone, clock: DateTime<Utc>) -> SyncReport {
    let mut req = p.request();
    req.device_clock = Some(clock);
    let resp: SyncResponse =
        serde_json::from_value(post_sync(app, &p.token, &req).await.ok(StatusCode::OK)).unwrap();
    p.sync
        .apply_response(&mut p.store, &req, &resp, now())
        .unwrap()
}

#[tokio::test]
async fn a_sealed_record_gets_a_receipt_countersigned_by_the_server_key() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let key = DeviceKey::generate().unwrap();
    let mut p = keyed_phone(&app, "fiscal", &key).await;
    let agent = p.agent.clone();
    let issued_at = now() - Duration::hours(1);
    let mut r = RecordDoc::new_infraction(draft(issued_at, "ABC1D23"), &agent).unwrap();
    r.confirm_vehicle(&agent, issued_at).unwrap();
    r.issue(
        &agent,
        issued_at,
        Signature::Missing {
            reason: "condutor ausente".into(),
        },
        &key,
    )
    .unwrap();
    let seal = r.view().unwrap().seal.unwrap();
    let id = p.persist(&mut r);
    // The device clock 10 minutes behind the server's: past the plausible gap.
    let report = exchange_at(&app, &mut p, now() - Duration::minutes(10)).await;
    assert!(report.issues.is_empty(), "{:?}", report.issues);

    let server_key = app
        .request(Method::GET, "/v1/server-key", None, None)
        .await
        .ok(StatusCode::OK);
    let public_key: [u8; 32] = hex::decode(server_key["public_key"].as_str().unwrap())
        .unwrap()
        .try_into()
        .unwrap();
    let detail = app
        .get(&format!("/v1/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    let receipt: taxi_fiscal_server::receipts::Receipt =
        serde_json::from_value(detail["receipt"].clone()).unwrap();
    assert!(receipt.verify(&public_key), "countersignature verifies");
    let mut forged = receipt.clone();
    forged.received_at -= Duration::days(1);
    assert!(!forged.verify(&public_key), "a moved receive time does not");
    assert_eq!(
        receipt.verification_code,
        seal.verification_code().unwrap().compact()
    );
    assert_eq!(receipt.device_signature, seal.signature);
    assert_eq!(receipt.evidence_sha256, seal.evidence_sha256);
    assert_eq!(receipt.issued_at, issued_at);
    assert_eq!(receipt.received_at, now());
    assert_eq!(receipt.device_clock_offset_ms, Some(10 * 60 * 1000));
    assert!(receipt.clock_implausible());
    // Anchored in the audit chain: the receipt's digest is the payload of its row.
    let audit = app
        .get(&format!("/v1/records/{id}/audit"), &office)
        .await
        .ok(StatusCode::OK);
    let row = audit
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["action"] == "record.receipt")
        .expect("receipt audit row");
    assert_eq!(row["payload_hash"], receipt.receipt_sha256.as_str());
    assert_eq!(row["seq"], receipt.audit_seq);
    // The verification page's lookup finds it by the printed code.
    let by_code = app
        .state
        .store()
        .receipt_by_code(seal.verification_code().unwrap())
        .await
        .unwrap();
    assert_eq!(by_code, Some(receipt.clone()));
    // The code the device printed offline verifies on the public page once the record arrived,
    // and the same code with one character changed names nothing.
    let code = seal.verification_code().unwrap();
    let page = app
        .request(Method::GET, &format!("/verificar/{code}"), None, None)
        .await;
    assert_eq!(page.status, StatusCode::OK);
    let html = String::from_utf8(page.body.to_vec()).unwrap();
    assert!(html.contains("Documento autêntico"), "{html}");
    let mut altered = code.compact().to_owned();
    let last = if altered.ends_with('0') { "1" } else { "0" };
    altered.replace_range(altered.len() - 1.., last);
    let page = app
        .request(Method::GET, &format!("/verificar/{altered}"), None, None)
        .await;
    assert_eq!(page.status, StatusCode::NOT_FOUND);
    // `audit verify` checks receipts against their audit rows: an edited receive time shows.
    let db = app.dir.path().join(taxi_fiscal_server::config::DB_FILE);
    let check = || async {
        taxi_fiscal_server::store::Store::check_consistency(
            &taxi_fiscal_server::store::sqlite::SqliteStore::open(&db).unwrap(),
        )
        .await
        .unwrap()
        .mismatches
    };
    assert_eq!(check().await, Vec::new());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "DROP TRIGGER record_receipts_no_update;
         UPDATE record_receipts SET received_at = '2026-11-29T12:00:00.000Z'
         WHERE record_id = '{id}';"
    ))
    .unwrap();
    let columns: Vec<String> = check().await.into_iter().map(|m| m.column).collect();
    assert_eq!(columns, ["receipt_sha256", "server_signature"]);
    conn.execute(
        "UPDATE record_receipts SET received_at = ?1 WHERE record_id = ?2",
        rusqlite::params![
            taxi_fiscal_server::audit::format_at(receipt.received_at),
            id
        ],
    )
    .unwrap();
    assert_eq!(check().await, Vec::new());
    // Evidence added later syncs, and the receipt stays the one of the issue.
    p.edit(&id, |d, a| d.add_witness(a, now(), &witness()).unwrap());
    let report = exchange_at(&app, &mut p, now()).await;
    assert!(report.issues.is_empty(), "{:?}", report.issues);
    let again = app
        .get(&format!("/v1/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(again["receipt"], detail["receipt"]);
}

#[tokio::test]
async fn a_tampered_device_signature_is_refused_at_sync_and_quarantined() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let key = DeviceKey::generate().unwrap();
    let mut p = keyed_phone(&app, "fiscal", &key).await;
    let agent = p.agent.clone();
    let at = now() - Duration::hours(1);
    let mut r = RecordDoc::new_infraction(draft(at, "ABC1D23"), &agent).unwrap();
    r.confirm_vehicle(&agent, at).unwrap();
    let id = p.persist(&mut r);
    let report = exchange_at(&app, &mut p, now()).await;
    assert!(report.issues.is_empty(), "{:?}", report.issues);
    // The device's issuing change, as a tampering client writes it: a real seal of this
    // record (made on a copy) whose signature is altered, with the signature and the `issued`
    // event, in one change.
    p.edit(&id, |d, a| {
        let mut copy = d.fork();
        copy.issue(
            a,
            at,
            Signature::Missing {
                reason: "condutor ausente".into(),
            },
            &key,
        )
        .unwrap();
        let mut seal = serde_json::to_value(copy.view().unwrap().seal.unwrap()).unwrap();
        let sig = seal["signature"].as_str().unwrap().to_owned();
        let flipped = if sig.starts_with('0') { "1" } else { "0" };
        seal["signature"] = format!("{flipped}{}", &sig[1..]).into();
        use automerge::transaction::Transactable;
        use automerge::{ObjType, ROOT, ReadDoc, ScalarValue};
        let am = d.automerge_mut();
        am.set_actor(a.actor_id());
        am.put(
            ROOT,
            "signature",
            r#"{"state":"missing","reason":"condutor ausente"}"#,
        )
        .unwrap();
        am.put(ROOT, "seal", seal.to_string()).unwrap();
        let (_, list) = am.get(ROOT, "events").unwrap().unwrap();
        let len = am.length(&list);
        let o = am.insert_object(&list, len, ObjType::Map).unwrap();
        am.put(&o, "id", Uuid::now_v7().to_string()).unwrap();
        am.put(&o, "kind", "issued").unwrap();
        am.put(&o, "at", ScalarValue::Timestamp(at.timestamp_millis()))
            .unwrap();
        am.put(&o, "user_id", a.user_id.as_str()).unwrap();
        am.put(&o, "role", a.role.as_str()).unwrap();
        am.put(&o, "device_id", a.device_id.to_string()).unwrap();
        am.commit();
    });
    let report = exchange_at(&app, &mut p, now()).await;
    assert_eq!(report.issues.len(), 1, "{:?}", report.issues);
    assert_eq!(report.issues[0].code.as_str(), "seal_invalid");
    let q = quarantine(&app, &office, &id).await;
    assert_eq!(q.len(), 1);
    assert_eq!(q[0]["code"], "seal_invalid");
    assert!(
        q[0]["message"]
            .as_str()
            .unwrap()
            .contains("não confere com a prova"),
        "{}",
        q[0]["message"]
    );
    // The server kept the draft, unissued and without a receipt.
    let detail = app
        .get(&format!("/v1/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(detail["record"]["sealed"], false);
    assert!(detail.get("receipt").is_none());
}

#[tokio::test]
async fn login_refuses_a_malformed_device_key_and_one_bound_to_another_device() {
    let app = app().await;
    let login = |username: &'static str, key: Value| {
        let u = crate::common::demo_user(username);
        json!({"username": u.username, "password": u.password, "device_id": u.device_id,
               "device_public_key": key})
    };
    for bad in [
        json!(hex::encode([7u8; 31])),
        json!(hex::encode([7u8; 33])),
        json!("isto não é uma chave"),
    ] {
        let e = app
            .request(
                Method::POST,
                "/v1/auth/login",
                None,
                Some(login("fiscal", bad)),
            )
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_device_key");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("chave pública do aparelho"),
            "{e}"
        );
    }
    let key = hex::encode(DeviceKey::generate().unwrap().public_key());
    for _ in 0..2 {
        // Registered once; the same key again is no change.
        app.request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(login("fiscal", json!(key))),
        )
        .await
        .ok(StatusCode::OK);
    }
    // Base64 of 32 bytes is a key too (a reinstall's new key: the device keeps both).
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD
        .encode(DeviceKey::generate().unwrap().public_key());
    app.request(
        Method::POST,
        "/v1/auth/login",
        None,
        Some(login("fiscal", json!(b64))),
    )
    .await
    .ok(StatusCode::OK);
    let e = app
        .request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(login("coordenador", json!(key))),
        )
        .await
        .error(StatusCode::CONFLICT, "device_key_taken");
    assert!(e["message"].as_str().unwrap().contains("outro dispositivo"));
}
