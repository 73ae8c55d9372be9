//! End to end: the real `taxi-fiscal demo` server process, three or more real device stores
//! (two officers, a stand coordinator; a second tablet of the first officer) driven by the
//! sync client, the office at its desk through the HTTP API, and a proxy that breaks the
//! connection on purpose. Each test starts its own server on a free port and a temporary
//! data directory; every wait has a deadline; retries never sleep. The documents story: an auto
//! printed offline carries a code that names nothing until the record syncs, then verifies on
//! the public page, as does the notification the office generates from its decision.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Duration;

use automerge::ROOT;
use automerge::transaction::Transactable;
use chrono::Duration as Days;
use e2e::api::{ADMIN, OFFICE, OfficeSession};
use e2e::{Api, Device, Fault, Proxy, ProxyEvent, Server};
use serde_json::{Value, json};
use sync_core::client::ErrorKind;
use sync_core::domain::{DriverId, Plate};
use sync_core::field::WitnessEntry;
use sync_core::rules::{CheckInput, Observation, Overall, VehicleQuery};
use sync_core::sync::{RejectionCode, meta_of};

const EVENT_WAIT: Duration = Duration::from_secs(30);

/// A taxi of stand S01 that is in order, and its holder.
#[derive(Debug, Clone)]
struct Taxi {
    permit: String,
    plate: String,
    holder_id: String,
    holder_cpf: String,
}

struct World {
    server: Server,
    office: Api,
    admin: Api,
    officer1: Device,
    officer2: Device,
    coordinator: Device,
    taxi: Taxi,
    _dir: tempfile::TempDir,
}

/// The demo officer on their first tablet, logged in (nothing synced yet).
fn fiscal_tablet(server: &Server) -> Device {
    Device::login(
        "fiscal",
        &server.url,
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Days::zero(),
    )
}

/// The demo server, a second officer registered by the admin, three devices logged in and
/// synced once (registry, number blocks), and the taxi every scenario is about.
fn world(officer2_clock: Days) -> World {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let admin = Api::login(&server.url, ADMIN);
    admin.add_user_with_device(
        "fiscal2",
        "fiscal2-senha",
        "officer",
        None,
        "tablet-fiscal-02",
    );
    let office = Api::login(&server.url, OFFICE);
    let mut officer1 = fiscal_tablet(&server);
    let mut officer2 = Device::login(
        "fiscal2",
        &server.url,
        "tablet-fiscal-02",
        "fiscal2",
        "fiscal2-senha",
        officer2_clock,
    );
    let mut coordinator = Device::login(
        "coordenador",
        &server.url,
        "celular-coordenador-s01",
        "coordenador",
        "coordenador-demo",
        Days::zero(),
    );
    for d in [&mut officer1, &mut officer2, &mut coordinator] {
        let s = d.sync_ok();
        assert!(s.registry.is_some() && s.numbers.is_some(), "{s:?}");
    }
    let taxi = regular_taxi_of_s01(&officer1);
    World {
        server,
        office,
        admin,
        officer1,
        officer2,
        coordinator,
        taxi,
        _dir: dir,
    }
}

fn check(d: &Device, taxi: &Taxi) -> sync_core::rules::Verdict {
    d.store
        .check(&CheckInput {
            vehicle: VehicleQuery::Plate(Plate::parse(&taxi.plate).unwrap()),
            driver: DriverId::parse(&taxi.holder_cpf).unwrap(),
            at: d.now(),
            observation: Observation::default(),
            registry_refreshed_at: None,
        })
        .unwrap()
}

/// The first permit of S01 (not the coordinator's own) whose holder may drive it today.
fn regular_taxi_of_s01(d: &Device) -> Taxi {
    let reg = d.store.export_registry().unwrap();
    for p in reg
        .permits
        .iter()
        .filter(|p| p.stand_id == "S01" && p.number != "0001")
    {
        let holder = reg.people.iter().find(|x| x.id == p.holder_id).unwrap();
        let vehicle = reg.vehicles.iter().find(|v| v.id == p.vehicle_id).unwrap();
        let taxi = Taxi {
            permit: p.number.clone(),
            plate: vehicle.plate.canonical().to_owned(),
            holder_id: holder.id.clone(),
            holder_cpf: holder.cpf.as_str().to_owned(),
        };
        if check(d, &taxi).overall == Overall::Regular {
            return taxi;
        }
    }
    panic!("no regular taxi at S01 in the demo registry");
}

/// Every record on the server exists once, every device holds exactly the records it should
/// (its user's, and for the coordinator the reports of the stand) with the server's heads, and
/// the audit chain verifies.
fn assert_converged(w: &World, devices: &[&Device], created: &BTreeSet<String>) {
    let on_server = w.office.all_records();
    let ids: Vec<&String> = on_server.iter().map(|(id, _)| id).collect();
    let unique: BTreeSet<&String> = ids.iter().copied().collect();
    assert_eq!(ids.len(), unique.len(), "a record twice on the server");
    let server: BTreeMap<String, Vec<String>> = on_server.into_iter().collect();
    for id in created {
        assert!(server.contains_key(id), "record {id} missing on the server");
    }
    for d in devices {
        assert_eq!(
            d.client().status(&d.store).unwrap().pending_records,
            0,
            "{} still has records to send",
            d.name
        );
        for id in d.record_ids() {
            let heads = server
                .get(&id)
                .unwrap_or_else(|| panic!("{}: record {id} not on the server", d.name));
            assert_eq!(&d.heads(&id), heads, "{}: record {id} differs", d.name);
        }
    }
    let (ok, out) = w.server.audit_verify();
    assert!(ok, "audit verify failed: {out}");
}

fn event_kinds(detail: &Value) -> Vec<String> {
    detail["record"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["kind"]
                .as_str()
                .or_else(|| e["event"]["kind"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

// ------------------------------------------------------------------------------ the story

#[test]
fn offline_records_office_decides_a_suspension_and_the_device_check_cites_it() {
    let mut w = world(Days::zero());
    let taxi = w.taxi.clone();
    assert_eq!(check(&w.officer1, &taxi).overall, Overall::Regular);

    // Offline: both officers on the same taxi, the coordinator at its stand.
    let photo = b"\xff\xd8\xff\xe0 foto da cena (JPEG de teste)".to_vec();
    let a = w.officer1.infraction_with_photos(
        &taxi.plate,
        &taxi.holder_cpf,
        "Recusou passageiro no ponto.",
        vec![photo.clone()],
    );
    let b = w.officer2.infraction(
        &taxi.plate,
        &taxi.holder_cpf,
        "Taxímetro desligado em corrida.",
    );
    let c = w.coordinator.transgression(
        &taxi.permit,
        &taxi.holder_cpf,
        "Abandonou o ponto no horário obrigatório.",
    );
    for d in [&w.officer1, &w.officer2, &w.coordinator] {
        assert_eq!(d.client().status(&d.store).unwrap().pending_records, 1);
    }

    assert_eq!(
        w.officer1
            .client()
            .status(&w.officer1.store)
            .unwrap()
            .pending_photos,
        1
    );

    // Everyone comes back online.
    for d in [&mut w.officer1, &mut w.officer2, &mut w.coordinator] {
        let s = d.sync_ok();
        let r = s.records.unwrap();
        assert_eq!((r.sent_new, r.acked, r.rejected), (1, 1, 0), "{}", d.name);
        assert_eq!(r.rounds, 1);
    }
    // The photo went up after its record, verified by hash, and the office can see it.
    let hash = sync_core::store::sha256_hex(&photo);
    assert!(w.officer1.store.photo_uploaded_at(&hash).unwrap().is_some());
    let (s, _) = w.office.get(&format!("/v1/photos/{hash}"));
    assert_eq!(s, 200);
    let fiscal = Api::login(&w.server.url, ("fiscal", "fiscal-demo", "tablet-fiscal-01"));
    let (s, have) = fiscal.post(
        "/v1/photos/have",
        &json!({"hashes": [hash, "0".repeat(64)]}),
    );
    assert_eq!((s, have["have"].clone()), (200, json!([hash])));
    let (s, page) = w.office.get(&format!("/v1/records?plate={}", taxi.plate));
    assert_eq!(s, 200);
    assert_eq!(page["total"], 3, "{page}");

    // The office reviews the coordinator's report and decides a 15-day suspension …
    for event in [
        json!({"kind": "reviewed", "note": "Comunicação com testemunha; autos do mesmo dia."}),
        json!({"kind": "penalty_proposed", "penalty": {"kind": "suspension", "days": 15}}),
        json!({"kind": "penalty_decided", "penalty": {"kind": "suspension", "days": 15}}),
    ] {
        let (s, v) = w.office.record_event(&c.id, event);
        assert_eq!(s, 201, "{v}");
    }
    // … and registers it in the registry: a new registry version.
    let (s, before) = w.office.get("/v1/registry/status");
    assert_eq!(s, 200);
    let (s, v) = w.office.post(
        "/v1/penalties",
        &json!({"permit_number": taxi.permit, "person_id": taxi.holder_id,
                "kind": {"kind": "suspension", "days": 15}, "record_id": c.id}),
    );
    assert!(s == 200 || s == 201, "{v}");
    let (_, after) = w.office.get("/v1/registry/status");
    let version = after["version"].as_u64().unwrap();
    assert!(version > before["version"].as_u64().unwrap());

    // The next sync brings both: the decision on the report, the suspension in the registry.
    let s = w.officer1.sync_ok();
    let reg = s.registry.unwrap();
    assert_eq!(reg.version, version);
    let verdict = check(&w.officer1, &taxi);
    assert_eq!(verdict.overall, Overall::Irregular, "{verdict:?}");
    let r32 = verdict
        .findings
        .iter()
        .find(|f| f.rule_id == "R32")
        .unwrap_or_else(|| panic!("no R32 in {:?}", verdict.rule_ids()));
    assert!(r32.citation.contains("art. 32"), "{}", r32.citation);
    assert_eq!(verdict.registry.version, version);

    let s = w.coordinator.sync_ok();
    assert_eq!(
        s.records.unwrap().received,
        1,
        "the office's events reach the coordinator"
    );
    let view = w.coordinator.doc(&c.id).view().unwrap();
    assert_eq!(view.status.as_str(), "penalty_decided");
    w.officer2.sync_ok();
    let created: BTreeSet<String> = [a.id, b.id, c.id].into_iter().collect();
    assert_converged(&w, &[&w.officer1, &w.officer2, &w.coordinator], &created);
}

// ------------------------------------------------------------------------------ concurrency

#[test]
fn a_witness_added_offline_and_a_concurrent_office_review_are_both_kept_everywhere() {
    let mut w = world(Days::zero());
    let taxi = w.taxi.clone();
    // The same officer's second tablet.
    let (s, users) = w.admin.get("/v1/users");
    assert_eq!(s, 200);
    let fiscal_id = users
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "fiscal")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (s, v) = w.admin.post(
        "/v1/devices",
        &json!({"id": "celular-fiscal-01", "user_id": fiscal_id, "label": "celular do fiscal"}),
    );
    assert_eq!(s, 201, "{v}");
    let mut tablet2 = Device::login(
        "fiscal-celular",
        &w.server.url,
        "celular-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Days::zero(),
    );

    let rec = w
        .officer1
        .infraction(&taxi.plate, &taxi.holder_cpf, "Veículo sem vistoria.");
    w.officer1.sync_ok();

    // Each side offline from the other: the officer adds a witness, the office reviews.
    let at = w.officer1.now();
    w.officer1
        .field()
        .add_witness(
            &rec.id,
            at,
            WitnessEntry::named("Comerciante", "Presenciei a abordagem."),
        )
        .unwrap();
    let (s, v) = w
        .office
        .record_event(&rec.id, json!({"kind": "reviewed", "note": "Em análise."}));
    assert_eq!(s, 201, "{v}");

    let s = w.officer1.sync_ok();
    let r = s.records.unwrap();
    assert_eq!((r.sent_changes, r.acked, r.received), (1, 1, 1), "{r:?}");
    assert_eq!(r.rounds, 1, "one round trip for an edit crossing an edit");
    tablet2.sync_ok();

    let detail = w.office.record(&rec.id);
    assert!(
        event_kinds(&detail).contains(&"reviewed".to_owned()),
        "{detail}"
    );
    assert_eq!(detail["record"]["witnesses"].as_array().unwrap().len(), 1);
    for d in [&w.officer1, &tablet2] {
        let view = d.doc(&rec.id).view().unwrap();
        assert_eq!(view.witnesses.len(), 1, "{}", d.name);
        assert!(
            view.events.iter().any(|e| e.event.name() == "reviewed"),
            "{}",
            d.name
        );
    }
    let created: BTreeSet<String> = [rec.id].into_iter().collect();
    assert_converged(&w, &[&w.officer1, &tablet2], &created);
}

// ------------------------------------------------------------------------------ rejection

#[test]
fn an_edit_of_a_sealed_field_is_refused_the_rest_syncs_and_the_server_is_unchanged() {
    let mut w = world(Days::zero());
    let taxi = w.taxi.clone();
    let sealed = w
        .officer1
        .infraction(&taxi.plate, &taxi.holder_cpf, "Fatos originais.");
    w.officer1.sync_ok();
    let server_heads = w.office.record_heads(&sealed.id);
    let facts_before = w.office.record(&sealed.id)["record"]["facts"].clone();

    // A tampered app rewrites the sealed facts under the device's own actor …
    let agent = w.officer1.store.device_identity().unwrap().unwrap().agent();
    let mut doc = w.officer1.doc(&sealed.id);
    {
        let am = doc.automerge_mut();
        am.set_actor(agent.actor_id());
        am.put(ROOT, "facts", "Fatos reescritos depois de lacrados.")
            .unwrap();
        am.commit();
    }
    let meta = meta_of(&mut doc, w.officer1.now()).unwrap();
    let chunk = doc.save_incremental();
    w.officer1
        .store
        .write_record(&sealed.id, "infraction", &meta, &chunk, false)
        .unwrap();
    // … and records something legitimate too.
    let fine = w
        .officer1
        .infraction(&taxi.plate, &taxi.holder_cpf, "Outro auto, legítimo.");

    let s = w.officer1.sync_ok();
    let r = s.records.unwrap();
    assert_eq!(r.rejected, 1, "{r:?}");
    let issue = r.issues.iter().find(|i| i.record_id == sealed.id).unwrap();
    assert_eq!(issue.code, RejectionCode::SealedField);
    assert!(issue.message.contains("recusada"), "{}", issue.message);

    // The other record synced; the server's copy of the sealed one did not move.
    assert!(w.office.record_heads(&fine.id).len() == 1);
    assert_eq!(w.office.record_heads(&sealed.id), server_heads);
    assert_eq!(w.office.record(&sealed.id)["record"]["facts"], facts_before);
    let (s, q) = w
        .office
        .get(&format!("/v1/records/{}/quarantine", sealed.id));
    assert_eq!(s, 200);
    assert_eq!(q.as_array().unwrap().len(), 1, "{q}");

    // The device went back to the server's version and kept its refused change as evidence.
    assert_eq!(w.officer1.heads(&sealed.id), server_heads);
    assert_eq!(
        w.officer1
            .store
            .sync_quarantine(Some(&sealed.id))
            .unwrap()
            .len(),
        1
    );
    let status = w.officer1.client().status(&w.officer1.store).unwrap();
    assert_eq!((status.pending_records, status.quarantined_changes), (0, 1));
    let created: BTreeSet<String> = [sealed.id, fine.id].into_iter().collect();
    assert_converged(&w, &[&w.officer1], &created);
}

// ------------------------------------------------------------------------------ faults

#[test]
fn cut_dropped_replayed_killed_and_a_day_off_clock_lose_nothing() {
    // The second officer's clock is a day ahead.
    let mut w = world(Days::days(1));
    let taxi = w.taxi.clone();
    let proxy = Proxy::start(w.server.addr);
    for d in [&mut w.officer1, &mut w.officer2, &mut w.coordinator] {
        d.use_url(&proxy.url);
    }
    let mut created = BTreeSet::new();

    // 1. Cut on the way up: the server sees half a request and stores nothing; the retry
    //    goes through.
    for i in 0..2 {
        let r = w.officer1.infraction(
            &taxi.plate,
            &taxi.holder_cpf,
            &format!("Auto {i} do fiscal 1."),
        );
        created.insert(r.id);
    }
    proxy.push("POST /v1/sync", Fault::CutRequest(300));
    let s = w.officer1.sync_ok();
    assert!(s.wire.retries >= 1, "{:?}", s.wire);
    assert!(matches!(
        proxy.next_event(EVENT_WAIT),
        ProxyEvent::Faulted {
            fault: Fault::CutRequest(300),
            ..
        }
    ));

    // 2. Cut on the way down, from the device whose clock is a day off: the server stored the
    //    record, the device never heard; the retry is acknowledged without a second copy.
    let ahead = w.officer2.infraction(
        &taxi.plate,
        &taxi.holder_cpf,
        "Auto com o relógio adiantado.",
    );
    let r = ahead.clone();
    created.insert(r.id.clone());
    proxy.push("POST /v1/sync", Fault::CutResponse(0));
    let s = w.officer2.sync_ok();
    assert!(s.wire.retries >= 1);
    let rs = s.records.unwrap();
    assert_eq!((rs.acked, rs.rejected), (1, 0), "{rs:?}");
    let (_, audit) = w.office.get(&format!("/v1/records/{}/audit", r.id));
    // One row for the stored record and one for the receipt of its device seal: no second
    // copy of either.
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["record.sync.create", "record.receipt"],
        "one audit row each: {audit}"
    );

    // 3. The same request twice (replayed by the network).
    let t = w
        .coordinator
        .transgression(&taxi.permit, &taxi.holder_cpf, "Recusa de corrida curta.");
    created.insert(t.id.clone());
    proxy.push("POST /v1/sync", Fault::Duplicate);
    w.coordinator.sync_ok();
    let (_, audit) = w.office.get(&format!("/v1/records/{}/audit", t.id));
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["action"].as_str().unwrap())
        .collect();
    // The report's witness is an observed person: her identity follows the record, once.
    assert_eq!(
        actions,
        [
            "record.sync.create",
            "record.receipt",
            "record.observed_persons.upload"
        ],
        "a replay writes no audit row: {audit}"
    );

    // 4. The server is killed (SIGKILL) in the middle of a sync, then restarted on its data.
    let r = w.officer1.infraction(
        &taxi.plate,
        &taxi.holder_cpf,
        "Auto durante a queda do servidor.",
    );
    created.insert(r.id.clone());
    proxy.drain_events();
    proxy.push("POST /v1/sync", Fault::PauseMidRequest);
    let summary = std::thread::scope(|scope| {
        let officer1 = &mut w.officer1;
        let syncing = scope.spawn(move || officer1.sync());
        loop {
            match proxy.next_event(EVENT_WAIT) {
                ProxyEvent::Paused { .. } => break,
                _ => continue,
            }
        }
        w.server.kill();
        proxy.resume();
        syncing.join().unwrap()
    });
    assert!(!summary.ok && summary.stopped, "{summary:?}");
    assert_eq!(summary.errors[0].kind, ErrorKind::Offline, "{summary:?}");
    let status = w.officer1.client().status(&w.officer1.store).unwrap();
    assert_eq!(status.pending_records, 1);
    assert!(status.last_error.is_some());
    w.server.restart();
    let s = w.officer1.sync_ok();
    assert_eq!(s.records.unwrap().acked, 1);
    let status = w.officer1.client().status(&w.officer1.store).unwrap();
    assert!(status.last_error.is_none() && status.last_success_at.is_some());

    // Everyone syncs once more, straight to the server; nothing lost, nothing doubled.
    for d in [&mut w.officer1, &mut w.officer2, &mut w.coordinator] {
        d.use_url(&w.server.url);
        d.sync_ok();
    }
    assert_eq!(proxy.pending(), 0);
    // The device a day ahead wrote what its clock said; the server kept it as written.
    let on_server = w.office.record(&ahead.id);
    let written: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(on_server["record"]["occurred_at"].clone()).unwrap();
    assert!(written > chrono::Utc::now() + Days::hours(23), "{written}");
    let (_, all) = w.office.get("/v1/records?limit=500");
    assert_eq!(all["total"].as_u64().unwrap(), created.len() as u64);
    assert_converged(&w, &[&w.officer1, &w.officer2, &w.coordinator], &created);
}

#[test]
fn a_backlog_over_the_servers_body_limit_goes_in_smaller_requests() {
    // A server configured tighter than the client expects: 64 KiB of (decompressed) body.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_with_env(
        &dir.path().join("dados"),
        vec![("TAXI_FISCAL_BODY_LIMIT", String::from("65536"))],
    );
    let office = Api::login(&server.url, OFFICE);
    let mut officer = fiscal_tablet(&server);
    officer.sync_ok();
    let taxi = regular_taxi_of_s01(&officer);
    // ~1.5 KB of JSON each: about 180 KB in all, three times the limit.
    let mut created = BTreeSet::new();
    for i in 0..120 {
        let r = officer.infraction(
            &taxi.plate,
            &taxi.holder_cpf,
            &format!("Auto {i} de um plantão inteiro sem sinal."),
        );
        created.insert(r.id);
    }
    officer.client().reset_wire_stats();
    let rs = officer.sync_records();
    let wire = officer.client().wire_stats();
    assert_eq!((rs.acked, rs.rejected), (120, 0), "{rs:?}");
    // Refused with 413 first, then in rounds of what fits. Each 413 halves what was sent, not
    // the client's 15 MiB budget: two or three refusals (180 → 90 → 45 KB), not nine.
    assert!(rs.rounds >= 3, "{rs:?}");
    let refused = wire.requests - wire.retries - rs.rounds;
    assert!(
        (1..=3).contains(&refused),
        "{refused} refused: {wire:?} {rs:?}"
    );
    assert_eq!(
        officer
            .client()
            .status(&officer.store)
            .unwrap()
            .pending_records,
        0
    );
    let (_, all) = office.get("/v1/records?limit=500");
    assert_eq!(all["total"].as_u64().unwrap(), 120);
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
    assert_eq!(
        officer.record_ids().into_iter().collect::<BTreeSet<_>>(),
        created
    );
}

// ------------------------------------------------------------------------------ CLI

#[test]
fn the_device_cli_logs_in_syncs_and_shows_its_status_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let db = dir.path().join("tablet.db");
    let run = |args: &[&str]| -> Value {
        let out = Command::new(server.bin())
            .arg("device")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let login = run(&[
        "login",
        "--server",
        &server.url,
        "--user",
        "fiscal",
        "--password",
        "fiscal-demo",
        "--device",
        "tablet-fiscal-01",
    ]);
    assert_eq!(login["username"], "fiscal");
    assert!(login.get("access_token").is_none(), "tokens never printed");
    let sync = run(&["sync", "--server", &server.url]);
    assert_eq!(sync["ok"], true, "{sync}");
    assert_eq!(sync["registry"]["mode"], "snapshot");
    assert!(sync["wire"]["bytes_down"].as_u64().unwrap() > 0);
    // The stored session is enough for the next one.
    let again = run(&["sync"]);
    assert_eq!(again["registry"]["mode"], "current");
    assert_eq!(again["records"]["rounds"], 1);
    let status = run(&["sync", "--status"]);
    assert_eq!(status["pending_records"], 0);
    assert!(status["registry_version"].as_u64().is_some());
    assert!(status["last_success_at"].is_string());
}

#[test]
fn the_device_cli_enrols_with_a_code_then_logs_in_without_a_device_id_and_syncs() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let admin = Api::login(&server.url, ADMIN);
    let (status, code) = admin.post(
        "/v1/devices/enrolment-codes",
        &json!({"user_id": "u-fiscal"}),
    );
    assert_eq!(status, 201, "{code}");
    let db = dir.path().join("tablet-novo.db");
    let run = |args: &[&str]| -> Value {
        let out = Command::new(server.bin())
            .arg("device")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let enrolled = run(&[
        "enrol",
        "--server",
        &server.url,
        "--code",
        code["code"].as_str().unwrap(),
        "--name",
        "Tablet da viatura 12",
    ]);
    assert_eq!(enrolled["username"], "fiscal");
    let device = enrolled["server_device_id"].as_str().unwrap().to_owned();
    let login = run(&[
        "login",
        "--server",
        &server.url,
        "--user",
        "fiscal",
        "--password",
        "fiscal-demo",
    ]);
    assert_eq!(login["server_device_id"], device.as_str());
    let sync = run(&["sync"]);
    assert_eq!(sync["ok"], true, "{sync}");
    // The code was for once.
    let out = Command::new(server.bin())
        .args(["device", "--db"])
        .arg(dir.path().join("outro.db"))
        .args(["enrol", "--server", &server.url, "--code"])
        .arg(code["code"].as_str().unwrap())
        .args(["--name", "Outro"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("já foi usado"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Kill rounds of the repeated SIGKILL test, and the records each of two devices writes before
/// each round's sync.
const KILL_ROUNDS: u32 = 8;
const RECORDS_PER_ROUND: usize = 20;

/// Two devices write records and sync at once.
fn write_and_sync_both(
    w: &mut World,
    round: u32,
    created: &mut BTreeSet<String>,
    kill_after: Option<Duration>,
) -> (Duration, usize) {
    let taxi = w.taxi.clone();
    for (k, d) in [&mut w.officer1, &mut w.officer2].into_iter().enumerate() {
        for i in 0..RECORDS_PER_ROUND {
            let r = d.infraction(
                &taxi.plate,
                &taxi.holder_cpf,
                &format!("Auto {i} do aparelho {k}, rodada {round}."),
            );
            created.insert(r.id);
        }
    }
    let server = &mut w.server;
    let t = std::time::Instant::now();
    let failed = std::thread::scope(|scope| {
        let syncs: Vec<_> = [&mut w.officer1, &mut w.officer2]
            .into_iter()
            .map(|d| scope.spawn(move || d.sync()))
            .collect();
        if let Some(delay) = kill_after {
            std::thread::sleep(delay);
            server.kill();
        }
        // Either outcome is fine here: what matters is what the server kept.
        syncs
            .into_iter()
            .map(|s| s.join().unwrap())
            .filter(|s| !s.ok)
            .count()
    });
    (t.elapsed(), failed)
}

#[test]
fn repeated_sigkills_mid_sync_lose_nothing_acknowledged_and_store_nothing_twice() {
    let mut w = world(Days::zero());
    let mut created = BTreeSet::new();
    let total = |w: &World| {
        let office = Api::login(&w.server.url, OFFICE);
        let (s, all) = office.get("/v1/records?limit=1");
        assert_eq!(s, 200, "{all}");
        all["total"].as_u64().unwrap()
    };
    // How long one such sync takes on this machine, so that the kills land across the whole
    // exchange (before the request, while the server decodes and commits, after the commit
    // and before the answer) whatever the machine's speed.
    let (whole, failed) = write_and_sync_both(&mut w, 0, &mut created, None);
    assert_eq!(failed, 0);
    let mut interrupted = 0;
    for round in 1..=KILL_ROUNDS {
        let delay = whole * (2 * round - 1) / (2 * KILL_ROUNDS);
        let (_, failed) = write_and_sync_both(&mut w, round, &mut created, Some(delay));
        interrupted += failed;
        let acknowledged: u64 = [&w.officer1, &w.officer2]
            .iter()
            .map(|d| {
                let pending = d.client().status(&d.store).unwrap().pending_records;
                d.record_ids().len() as u64 - pending
            })
            .sum();
        w.server.restart();
        let on_server = total(&w);
        assert!(
            on_server >= acknowledged,
            "round {round}: the devices hold {acknowledged} records as acknowledged, the \
             restarted server has {on_server}"
        );
        let (ok, out) = w.server.audit_verify();
        assert!(
            ok,
            "round {round}: audit verify failed after the kill: {out}"
        );
    }
    assert!(
        interrupted > 0,
        "no kill landed during a sync (one sync: {whole:?})"
    );
    for d in [&mut w.officer1, &mut w.officer2, &mut w.coordinator] {
        d.sync_ok();
    }
    assert_eq!(total(&w), created.len() as u64, "every record exactly once");
    assert_converged(&w, &[&w.officer1, &w.officer2, &w.coordinator], &created);
}

/// The office sets a non-default configuration through the API; the feed carries it; every
/// device's verdict on every taxi of the registry (holder at the wheel, idle at its stand and
/// away from any) is then the law kernel's verdict on the server's copy under the server's
/// parameters — and the new parameters changed some verdicts, so the devices did not keep
/// judging by the defaults.
#[test]
fn devices_and_server_judge_alike_under_parameters_set_by_the_office() {
    let mut w = world(Days::zero());
    let (status, view) = w.office.get("/v1/law");
    assert_eq!(status, 200, "{view}");
    let mut rules = view["parameters"]["rules"].clone();
    rules["max_vehicle_age_years"] = json!(1);
    rules["taximeter_period_years"] = json!(1);
    rules["cnh_grace_days"] = json!(90);
    rules["ear_missing"] = json!("irregular");
    let (status, update) = w.office.put("/v1/law/rules", &rules);
    assert_eq!(status, 200, "{update}");
    let version = update["version"].as_u64().unwrap();

    let server = w.office.registry();
    assert_eq!(server.version, version);
    let server_rules = server.law().rules.clone();
    assert_eq!(server_rules.max_vehicle_age_years, 1);
    let mut changed_by_parameters = 0;
    let mut compared = 0;
    for d in [&mut w.officer1, &mut w.coordinator] {
        d.sync_ok();
        assert_eq!(d.store.replica_info().unwrap().unwrap().version, version);
        assert_eq!(d.store.law_parameters().unwrap().rules, server_rules);
        for p in &server.permits {
            let holder = server.people.iter().find(|x| x.id == p.holder_id).unwrap();
            for observation in [
                Observation::default(),
                Observation {
                    at_stand: Some(p.stand_id.clone()),
                    idle: true,
                    ..Observation::default()
                },
            ] {
                let mut input = CheckInput {
                    vehicle: VehicleQuery::Permit(p.number.clone()),
                    driver: DriverId::parse(&format!("cpf:{}", holder.cpf.as_str())).unwrap(),
                    at: d.now(),
                    observation,
                    registry_refreshed_at: None,
                };
                let on_device = d.store.check(&input).unwrap();
                input.registry_refreshed_at = on_device.registry.refreshed_at;
                let on_server =
                    sync_core::rules::check_registry(&server.index(), &input, &server_rules);
                assert_eq!(on_device, on_server, "{} {}", d.name, p.number);
                let by_default = sync_core::rules::check_registry(
                    &server.index(),
                    &input,
                    &sync_core::rules::RulesConfig::default(),
                );
                if by_default.rule_ids() != on_server.rule_ids() {
                    changed_by_parameters += 1;
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 20, "{compared}");
    assert!(
        changed_by_parameters > 0,
        "the parameters changed no verdict: the test shows nothing"
    );
}

// ------------------------------------------------------------------------------ documents

/// GET without a login (the public verification page): status and body.
fn public_get(server: &Server, path: &str) -> (u16, String) {
    let http = e2e::tls::http(None).build().unwrap();
    let r = http.get(format!("{}{path}", server.url)).send().unwrap();
    (r.status().as_u16(), r.text().unwrap())
}

#[test]
fn an_auto_printed_offline_and_its_notification_verify_at_the_server_and_altered_codes_do_not() {
    let mut w = world(Days::zero());
    let taxi = w.taxi.clone();
    let a = w.officer1.infraction(
        &taxi.plate,
        &taxi.holder_cpf,
        "Recusou passageiro no ponto.",
    );

    // Printed with no signal: the code on the paper is read back from the PDF's text.
    let pdf = sync_core::print::render_record(
        &w.officer1.store,
        &a.id,
        sync_core::print::Format::PdfA4,
        w.officer1.now(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("auto.pdf");
    std::fs::write(&file, &pdf).unwrap();
    let out = Command::new("pdftotext")
        .arg(&file)
        .arg("-")
        .output()
        .expect("pdftotext (Debian's poppler-utils; ./scripts/test installs it)");
    let text = String::from_utf8(out.stdout).unwrap();
    let printed = text
        .split_whitespace()
        .find_map(|w| sync_core::print::VerificationCode::parse(w).filter(|_| w.len() == 19))
        .unwrap_or_else(|| panic!("no code on the paper: {text}"));
    let view = w.officer1.doc(&a.id).view().unwrap();
    assert_eq!(
        Some(&printed),
        sync_core::print::verification_code_of(&view).as_ref()
    );
    // The server has not seen the record yet: the code names nothing.
    let path = format!("/verificar/{printed}");
    assert_eq!(public_get(&w.server, &path).0, 404);

    // Synced: the seal verifies, the receipt is written, the paper is authentic.
    let r = w.officer1.sync_ok().records.unwrap();
    assert_eq!((r.acked, r.rejected), (1, 0));
    let (s, page) = public_get(&w.server, &path);
    assert_eq!(s, 200, "{page}");
    assert!(page.contains("Documento autêntico"), "{page}");
    assert!(page.contains(view.number.as_deref().unwrap()), "{page}");
    assert!(
        !page.contains(&taxi.holder_cpf),
        "no CPF on the public page"
    );
    let detail = w.office.record(&a.id);
    assert_eq!(detail["receipt"]["verification_code"], printed.compact());
    // One character changed: nothing, exactly as for an unknown code.
    let mut altered = printed.compact().to_owned();
    let last = if altered.ends_with('0') { "1" } else { "0" };
    altered.replace_range(altered.len() - 1.., last);
    let (s, body) = public_get(&w.server, &format!("/verificar/{altered}"));
    assert_eq!(s, 404);
    assert_eq!(body, public_get(&w.server, "/verificar/0000000000000000").1);

    // The office decides and notifies; the notification's code verifies, with its ciência.
    for event in [
        json!({"kind": "reviewed"}),
        json!({"kind": "penalty_proposed", "penalty": {"kind": "written_warning"}}),
        json!({"kind": "penalty_decided", "penalty": {"kind": "written_warning"}}),
    ] {
        let (s, v) = w.office.record_event(&a.id, event);
        assert_eq!(s, 201, "{v}");
    }
    let (s, made) = w.office.post(
        &format!("/v1/office/records/{}/notifications", a.id),
        &json!({}),
    );
    assert_eq!(s, 200, "{made}");
    let n = &made["notifications"][0];
    let code = n["code"].as_str().unwrap().to_owned();
    let (s, page) = public_get(&w.server, &format!("/verificar/{code}"));
    assert_eq!(s, 200, "{page}");
    assert!(page.contains(n["number"].as_str().unwrap()), "{page}");
    assert!(!page.contains("Ciência desta notificação"), "{page}");
    let local_today = sync_core::time::local_date(w.officer1.now());
    let today = local_today.to_string();
    let (s, v) = w.office.post(
        &format!("/v1/office/records/{}/notify", a.id),
        &json!({"method": "personal_signature", "on": today, "notification": n["number"]}),
    );
    assert_eq!(s, 200, "{v}");
    let (_, page) = public_get(&w.server, &format!("/verificar/{code}"));
    let shown = format!(
        "Ciência desta notificação em {}",
        local_today.format("%d/%m/%Y")
    );
    assert!(page.contains(&shown), "the ciência is shown: {page}");
    let (ok, report) = w.server.audit_verify();
    assert!(ok, "{report}");
}

// ------------------------------------------------------------------------------ witnesses

#[test]
fn a_witness_heard_on_the_spot_reaches_the_office_page_and_an_erasure_is_final() {
    let mut w = world(Days::zero());
    let taxi = w.taxi.clone();
    let mut person = sync_core::store::ObservedPerson {
        name: Some("Rosa Comerciante".into()),
        ..Default::default()
    };
    person.details = json!({ "telefone": "(19) 97777-2222", "endereco": "Rua 7 de Setembro, 50" });
    let witness = WitnessEntry {
        person: sync_core::field::PersonInput::Observed(person),
        statement: "Vi o táxi recusar a corrida.".into(),
    };
    let rec = w.officer1.infraction_with_witnesses(
        &taxi.plate,
        &taxi.holder_cpf,
        "Recusou passageiro.",
        vec![witness],
    );
    let s = w.officer1.sync_ok();
    let o = s.observed.unwrap();
    assert_eq!((o.records, o.persons), (1, 1), "{o:?}");
    // Nothing pending any more: the next sync sends nothing.
    let o = w.officer1.sync_ok().observed.unwrap();
    assert_eq!((o.records, o.persons), (0, 0), "{o:?}");

    // The office's page names the witness and how to reach her; the record itself does not.
    let office = OfficeSession::login(&w.server.url);
    let page = office.page(&format!("/escritorio/registros/{}", rec.id));
    assert!(page.contains("Rosa Comerciante"), "{page}");
    assert!(page.contains("(19) 97777-2222"));
    assert!(page.contains("Rua 7 de Setembro, 50"));
    assert!(!w.office.record(&rec.id).to_string().contains("Rosa"));
    // Another officer's device, syncing, never receives her.
    w.officer2.sync_ok();
    assert!(
        w.officer2
            .store
            .observed_people_of_record(&rec.id)
            .unwrap()
            .is_empty()
    );

    // A second record's witness is written, but the device syncs only the records; the office
    // closes that case and erases before the identity arrives: the device's upload is refused
    // as erased, the device stops sending it, and the server keeps nothing.
    let rec2 = w.officer1.infraction_with_witnesses(
        &taxi.plate,
        &taxi.holder_cpf,
        "Segunda ocorrência.",
        vec![WitnessEntry::named("Pedro Vizinho", "Presenciei.")],
    );
    w.officer1.sync_records();
    let (s, v) = w.office.post(
        &format!("/v1/office/records/{}/archive", rec2.id),
        &json!({}),
    );
    assert_eq!(s, 200, "{v}");
    let (s, v) = w
        .office
        .delete(&format!("/v1/records/{}/observed-persons", rec2.id));
    assert_eq!(s, 200, "{v}");
    let o = w.officer1.sync_ok().observed.unwrap();
    assert_eq!((o.records, o.erased_on_server), (0, 1), "{o:?}");
    let o = w.officer1.sync_ok().observed.unwrap();
    assert_eq!(o, sync_core::client::ObservedUpload::default());
    let (s, held) = w
        .office
        .get(&format!("/v1/records/{}/observed-persons", rec2.id));
    assert_eq!(s, 200);
    assert_eq!(held["persons"], json!([]));
    let page = office.page(&format!("/escritorio/registros/{}", rec2.id));
    assert!(page.contains("foram apagados em"), "{page}");
    assert!(!page.contains("Pedro Vizinho"));
}

#[test]
fn a_lost_answer_to_the_witness_upload_is_retried_and_stored_once() {
    let mut w = world(Days::zero());
    let taxi = w.taxi.clone();
    let proxy = Proxy::start(w.server.addr);
    w.officer1.use_url(&proxy.url);
    let rec = w.officer1.infraction_with_witnesses(
        &taxi.plate,
        &taxi.holder_cpf,
        "Recusou passageiro.",
        vec![WitnessEntry::named("Rosa Comerciante", "Vi a recusa.")],
    );
    // The server stores the set, the device never hears: the retry finds it stored.
    proxy.push("PUT /v1/records/", Fault::CutResponse(0));
    let s = w.officer1.sync_ok();
    assert!(s.wire.retries >= 1, "{:?}", s.wire);
    let o = s.observed.unwrap();
    assert_eq!((o.records, o.persons), (1, 1), "{o:?}");
    let faulted = loop {
        match proxy.next_event(EVENT_WAIT) {
            ProxyEvent::Faulted { request, fault } => break (request, fault),
            ProxyEvent::Forwarded { .. } => continue,
            other => panic!("{other:?}"),
        }
    };
    assert!(faulted.0.starts_with("PUT /v1/records/"), "{faulted:?}");
    assert!(matches!(faulted.1, Fault::CutResponse(0)));
    let (_, audit) = w.office.get(&format!("/v1/records/{}/audit", rec.id));
    let uploads = audit
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["action"] == "record.observed_persons.upload")
        .count();
    assert_eq!(uploads, 1, "{audit}");
    let (_, held) = w
        .office
        .get(&format!("/v1/records/{}/observed-persons", rec.id));
    assert_eq!(held["persons"][0]["name"], "Rosa Comerciante");
    assert_eq!(held["persons"].as_array().unwrap().len(), 1);
}

#[test]
fn over_https_a_device_trusting_the_city_ca_syncs_and_an_untrusted_certificate_is_not_retried() {
    let ca = e2e::TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_tls(&dir.path().join("dados"), &ca);
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );

    // The officer's tablet, told to trust the city's CA: login, registry, numbers over TLS.
    let mut d = Device::login_trusting(
        "fiscal",
        &server.url,
        Some(&ca.ca_pem),
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Days::zero(),
    );
    let first = d.sync_ok();
    assert_eq!(
        first.registry.unwrap().mode,
        sync_core::client::RegistryMode::Snapshot
    );
    let taxi = regular_taxi_of_s01(&d);
    d.infraction(
        &taxi.plate,
        &taxi.holder_cpf,
        "Recusou passageiro no ponto.",
    );

    // The same tablet trusting only the public roots: the certificate is refused at once, as
    // untrusted (not "offline"), with no retry, and the record stays pending.
    d.trust(None);
    d.client().reset_wire_stats();
    let refused = d.sync();
    assert!(!refused.ok && refused.stopped, "{refused:?}");
    let e = &refused.errors[0];
    assert_eq!(e.kind, ErrorKind::Untrusted, "{e:?}");
    assert!(
        e.message.contains("não confia no certificado"),
        "{}",
        e.message
    );
    assert_eq!(refused.wire.requests, 1, "one attempt: {:?}", refused.wire);
    assert_eq!(refused.wire.retries, 0);
    assert_eq!(refused.status.pending_records, 1);

    // Trusting the CA again, the record goes up; nothing was lost.
    d.trust(Some(&ca.ca_pem));
    let s = d.sync_ok();
    let r = s.records.unwrap();
    assert_eq!((r.sent_new, r.acked, r.rejected), (1, 1, 0));
    assert_eq!(s.status.pending_records, 0);

    // The office logs in over HTTPS: the session cookie is `Secure`.
    let http = e2e::tls::http(Some(&ca.ca_pem))
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let r = http
        .post(format!("{}/login", server.url))
        .header("origin", &server.url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("usuario=escritorio&senha=escritorio-demo&next=%2Fescritorio")
        .send()
        .unwrap();
    assert_eq!(r.status(), 303);
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(cookie.contains("; Secure"), "{cookie}");
    // The plain-http origin of the same address is not this server's.
    let foreign = http
        .post(format!("{}/login", server.url))
        .header("origin", server.url.replacen("https://", "http://", 1))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("usuario=escritorio&senha=escritorio-demo&next=%2Fescritorio")
        .send()
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let (ok, out) = server.audit_verify();
    assert!(ok, "{out}");
}

/// Makes the device's access token run out on its own clock, so its next request refreshes.
fn expire_access(d: &mut Device) -> String {
    let mut session = d.store.client_session().unwrap().unwrap();
    session.access_valid_until = d.now() - Days::seconds(1);
    d.store.save_client_session(&session).unwrap();
    session.refresh_token
}

#[test]
fn a_refresh_whose_answer_is_lost_keeps_the_officer_logged_in_and_a_later_replay_ends_the_login() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let proxy = Proxy::start(server.addr);
    let mut d = fiscal_tablet(&server);
    d.sync_ok();
    d.use_url(&proxy.url);

    // The refresh reaches the server, which rotates the token; the answer never arrives.
    let spent = expire_access(&mut d);
    proxy.push("POST /v1/auth/refresh", Fault::CutResponse(0));
    let taxi = regular_taxi_of_s01(&d);
    d.infraction(
        &taxi.plate,
        &taxi.holder_cpf,
        "Auto enviado com sinal fraco.",
    );
    let s = d.sync_ok();
    assert!(s.wire.retries >= 1, "{:?}", s.wire);
    assert_eq!(s.records.unwrap().acked, 1);
    assert!(matches!(
        proxy.next_event(EVENT_WAIT),
        ProxyEvent::Faulted {
            fault: Fault::CutResponse(0),
            ..
        }
    ));
    let successor = d.store.client_session().unwrap().unwrap().refresh_token;
    assert_ne!(successor, spent);

    // The successor it got by repeating the request rotates normally: the login lives on.
    expire_access(&mut d);
    d.sync_ok();
    let current = d.store.client_session().unwrap().unwrap().refresh_token;
    assert_ne!(current, successor);

    // The first token presented again, now that its successor was used: a replay. The server
    // ends every token of that login, and the device is asked for the password.
    let http = e2e::tls::http(None).build().unwrap();
    let r = http
        .post(format!("{}/v1/auth/refresh", server.url))
        .json(&json!({ "refresh_token": spent }))
        .send()
        .unwrap();
    assert_eq!(r.status(), 401);
    let body: Value = r.json().unwrap();
    assert_eq!(body["error"]["code"], "refresh_reused", "{body}");
    d.use_url(&server.url);
    expire_access(&mut d);
    let out = d.sync();
    assert!(!out.ok, "{out:?}");
    assert_eq!(out.errors[0].kind, ErrorKind::LoginRequired, "{out:?}");
}

#[test]
fn behind_a_proxy_the_office_logs_in_and_each_forwarded_client_has_its_own_budget() {
    let public = "https://taxi.americana.example";
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_with_env(
        &dir.path().join("dados"),
        vec![
            ("TAXI_FISCAL_PUBLIC_URL", public.to_owned()),
            ("TAXI_FISCAL_TRUSTED_PROXIES", String::from("127.0.0.1")),
            ("TAXI_FISCAL_AUTH_ADDRESS_BURST", String::from("3")),
        ],
    );
    let http = e2e::tls::http(None)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    // What nginx sends with its usual recipe: the upstream's Host, the browser's Origin, the
    // client in X-Forwarded-For, the scheme in X-Forwarded-Proto.
    let proxied = |req: reqwest::blocking::RequestBuilder, client: &str| {
        req.header("host", server.addr.to_string())
            .header("x-forwarded-for", client)
            .header("x-forwarded-proto", "https")
            .header("x-real-ip", client)
    };
    let r = proxied(http.post(format!("{}/login", server.url)), "203.0.113.9")
        .header("origin", public)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("usuario=escritorio&senha=escritorio-demo&next=%2Fescritorio")
        .send()
        .unwrap();
    assert_eq!(r.status(), 303, "{:?}", r.text());
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(
        cookie.contains("; Secure"),
        "the public origin is https: {cookie}"
    );
    let session = cookie.split(';').next().unwrap().to_owned();
    let page = proxied(
        http.get(format!("{}/escritorio", server.url)),
        "203.0.113.9",
    )
    .header("cookie", &session)
    .send()
    .unwrap();
    assert_eq!(page.status(), 200);

    // The budget is per forwarded client: one client spends its three attempts and is told to
    // wait, another behind the same proxy still gets an answer about the password.
    let login = |client: &str| {
        proxied(http.post(format!("{}/v1/auth/login", server.url)), client)
            .json(&json!({
                "username": "fiscal", "password": "errada", "device_id": "tablet-fiscal-01"
            }))
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    // The form login above spent one attempt of 203.0.113.9.
    assert_eq!([login("203.0.113.9"), login("203.0.113.9")], [401, 401]);
    assert_eq!(login("203.0.113.9"), 429);
    assert_eq!(login("198.51.100.7"), 401);
    // A forged header from a client that is not the proxy changes nothing: there is no other
    // peer here than 127.0.0.1, so this is checked in the unit tests of `auth::proxy`.

    // Without a metrics token, only this machine reads `/metrics`: not a client the proxy
    // forwards from outside.
    let metrics = |client: Option<&str>| {
        let mut req = http.get(format!("{}/metrics", server.url));
        if let Some(c) = client {
            req = proxied(req, c);
        }
        let r = req.send().unwrap();
        (r.status().as_u16(), r.text().unwrap())
    };
    assert_eq!(metrics(Some("203.0.113.9")).0, 403);
    let (s, text) = metrics(None);
    assert_eq!(s, 200);
    assert!(
        text.contains("taxi_fiscal_http_requests_total{method=\"POST\",route=\"/v1/auth/login\",status=\"4xx\"}"),
        "{text}"
    );
}

#[test]
fn a_backup_taken_while_the_server_runs_restores_into_a_server_that_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo_with_samples(&dir.path().join("dados"));
    let mut d = fiscal_tablet(&server);
    d.sync_ok();
    let taxi = regular_taxi_of_s01(&d);
    let issued = d.infraction(&taxi.plate, &taxi.holder_cpf, "Auto antes do backup.");
    d.sync_ok();

    // Taken while the server runs; a second backup to the same file is refused.
    let file = dir.path().join("copia.db");
    let out = server.cli(&["backup", "--out", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let taken: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(taken["verified"], true, "{taken}");
    assert!(taken["audit_rows"].as_u64().unwrap() > 0);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the copy holds CPFs: owner only");
    }
    let again = server.cli(&["backup", "--out", file.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("já existe"));

    // Restored into a new directory: the same chain head, and `audit verify` passes there.
    let restored = dir.path().join("restaurado");
    let run = |args: &[&str]| Command::new(server.bin()).args(args).output().unwrap();
    let restore = |from: &std::path::Path, data: &std::path::Path| {
        run(&[
            "restore",
            "--from",
            from.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ])
    };
    let out = restore(&file, &restored);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let put: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(put["head"], taken["head"]);
    let verify = run(&["audit", "verify", "--data", restored.to_str().unwrap()]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );

    // A restore never overwrites a database: the second one is refused and changes nothing.
    let db = restored.join("taxi-fiscal.db");
    let before = std::fs::read(&db).unwrap();
    let out = restore(&file, &restored);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nunca sobrescreve"));
    assert_eq!(std::fs::read(&db).unwrap(), before);

    // A truncated backup is refused, and nothing is left behind.
    let bytes = std::fs::read(&file).unwrap();
    let cut = dir.path().join("cortado.db");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let elsewhere = dir.path().join("outro");
    let out = restore(&cut, &elsewhere);
    assert_eq!(out.status.code(), Some(2));
    assert!(!elsewhere.join("taxi-fiscal.db").exists());

    // The restored server serves the record synced before the backup.
    drop(server);
    let mut back = Server::start_demo(&restored);
    let office = Api::login(&back.url, OFFICE);
    let (s, _) = office.get(&format!("/v1/office/records/{}", issued.id));
    assert_eq!(s, 200);
    back.kill();
}

#[test]
fn a_revoked_device_deletes_what_the_server_has_and_keeps_what_it_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_demo(&dir.path().join("dados"));
    let mut d = fiscal_tablet(&server);
    d.sync_ok();
    let taxi = regular_taxi_of_s01(&d);
    let photo = b"\xff\xd8\xff\xe0 foto enviada antes da perda".to_vec();
    let sent = d.infraction_with_photos(
        &taxi.plate,
        &taxi.holder_cpf,
        "Auto enviado antes da perda do aparelho.",
        vec![photo],
    );
    d.sync_ok();
    let kept = d.infraction(&taxi.plate, &taxi.holder_cpf, "Auto escrito sem sinal.");
    // The server counted the record it accepted (`/metrics`, read from this machine).
    let http = e2e::tls::http(None).build().unwrap();
    let text = http
        .get(format!("{}/metrics", server.url))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(
        text.contains("taxi_fiscal_sync_records_total{outcome=\"accepted\"} 1\n"),
        "{text}"
    );
    let before = d.store.status().unwrap();
    assert!(before.counts.permits > 100 && before.counts.photos == 1);

    // The tablet is lost; the administrator revokes it.
    let admin = Api::login(&server.url, ADMIN);
    let (s, _) = admin.post("/v1/devices/tablet-fiscal-01/revoke", &json!({}));
    assert_eq!(s, 200);

    // At its next contact it deletes what the server has and says so.
    let out = d.sync();
    assert!(!out.ok && out.stopped, "{out:?}");
    let e = &out.errors[0];
    assert_eq!(e.kind, ErrorKind::Revoked, "{e:?}");
    assert!(e.message.contains("revogado"), "{}", e.message);
    assert!(
        e.message.contains("1 registro ainda não enviado"),
        "{}",
        e.message
    );
    let after = d.store.status().unwrap();
    assert_eq!(after.registry, None, "no registry replica left");
    assert_eq!(
        (
            after.counts.people,
            after.counts.permits,
            after.counts.vehicles
        ),
        (0, 0, 0)
    );
    assert_eq!(after.counts.photos, 0, "the uploaded photo is gone");
    assert_eq!(d.record_ids(), std::slice::from_ref(&kept.id));
    assert!(!d.has(&sent.id));
    assert!(
        d.store.client_session().unwrap().is_none(),
        "no tokens left"
    );
    assert_eq!(
        d.client().status(&d.store).unwrap().pending_records,
        1,
        "the evidence the server never got stays"
    );
    // The server still has the record the device sent.
    let office = Api::login(&server.url, OFFICE);
    let (s, _) = office.get(&format!("/v1/office/records/{}", sent.id));
    assert_eq!(s, 200);
}
