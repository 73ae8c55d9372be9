//! The sync protocol over a deterministic simulated network: one in-memory server (the pure
//! `ServerSync` plus a map standing in for its database) and several real device stores
//! (SQLite in temporary directories). Every request and response travels as JSON, exactly as
//! over HTTP; the network can tamper with, replay or lose them. No sockets, no sleeps.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::BTreeMap;
use std::convert::Infallible;

use automerge::transaction::Transactable;
use automerge::{ActorId, ObjType, ROOT, ReadDoc, ScalarValue};
use chrono::{DateTime, Duration, Utc};
use sync_core::domain::{DriverRole, PenaltyKind, Plate, Registry};
use sync_core::records::{
    Agent, DeviceKey, EventKind, Gravity, InfractionDraft, LegalBasis, PersonRef, RecordDoc,
    Signature, TransgressionDraft, UserRole, WitnessInput,
};
use sync_core::store::Store;
use sync_core::sync::{
    Changed, DeviceSync, EditOutcome, PeerState, RegisteredKey, RejectionCode, Sender,
    ServerEffect, ServerRecord, ServerSync, ServerSyncStore, StoredChange, SyncReport, SyncRequest,
    SyncResponse, hex_heads, may_see, meta_of,
};
use sync_core::testkit::sample_registry;
use uuid::Uuid;

// ------------------------------------------------------------------------------------ people

fn t0() -> DateTime<Utc> {
    "2026-11-30T15:00:00Z".parse().unwrap()
}

const GM17: &str = "U-GM-17";

fn officer_phone() -> Agent {
    Agent::new(GM17, UserRole::GuardaMunicipal, Uuid::from_u128(0xA1))
}
fn officer_tablet() -> Agent {
    Agent::new(GM17, UserRole::GuardaMunicipal, Uuid::from_u128(0xA2))
}
fn other_officer() -> Agent {
    Agent::new("U-GM-99", UserRole::GuardaMunicipal, Uuid::from_u128(0xA9))
}
fn office() -> Agent {
    Agent::new("U-UT-1", UserRole::Office, Uuid::from_u128(0xB1))
}
fn coordinator() -> Agent {
    Agent::new("U-COORD-P10", UserRole::Coordinator, Uuid::from_u128(0xC1))
}

/// The Ed25519 key of each test device, made once and kept for the process (a device keeps
/// its key for the life of its store).
fn key_of(agent: &Agent) -> &'static DeviceKey {
    static KEYS: std::sync::OnceLock<std::sync::Mutex<BTreeMap<Uuid, &'static DeviceKey>>> =
        std::sync::OnceLock::new();
    let mut keys = KEYS.get_or_init(Default::default).lock().unwrap();
    keys.entry(agent.device_id)
        .or_insert_with(|| Box::leak(Box::new(DeviceKey::generate().unwrap())))
}

/// The sender as the server authenticates it, with its device's registered key.
fn sender(agent: &Agent) -> Sender {
    Sender {
        agent: agent.clone(),
        stand: (agent.role == UserRole::Coordinator).then(|| "S01".to_owned()),
        device_keys: vec![RegisteredKey {
            public_key: key_of(agent).public_key(),
            registered_at: t0() - Duration::days(30),
        }],
    }
}

/// Auto numbers of the drafts: unique in the test process, as leased blocks make them.
static NEXT_NUMBER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000);

fn draft(n: u32, at: DateTime<Utc>) -> InfractionDraft {
    InfractionDraft {
        id: Uuid::now_v7(),
        number: Some(
            NEXT_NUMBER
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .to_string(),
        ),
        issuing_body: "Guarda Municipal de Americana".into(),
        occurred_at: at,
        monotonic: 1_000 + u64::from(n),
        position: None,
        stand_id: Some("S02".into()),
        plate: Plate::parse("GHI7J89").unwrap(),
        driver: PersonRef::Registry("P08".into()),
        driver_role: DriverRole::Auxiliary,
        permit_number: Some("0004".into()),
        holder_id: Some("P07".into()),
        facts: "Motorista auxiliar conduzindo com CNH vencida.".into(),
        legal_basis: vec![LegalBasis {
            rule_id: "R09".into(),
            citation: "Lei 4.019/2004, art. 8".into(),
        }],
        verdict: None,
        witnesses: Vec::new(),
        photos: Vec::new(),
    }
}

fn issued(agent: &Agent, n: u32) -> RecordDoc {
    let at = t0() + Duration::minutes(i64::from(n));
    let mut r = RecordDoc::new_infraction(draft(n, at), agent).unwrap();
    r.confirm_vehicle(agent, at).unwrap();
    r.issue(
        agent,
        at + Duration::minutes(1),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
        key_of(agent),
    )
    .unwrap();
    r
}

fn witness(id: &str) -> WitnessInput {
    WitnessInput {
        person: PersonRef::Observed(id.into()),
        statement: "Vi o condutor sem CNH válida.".into(),
    }
}

/// Appends an event with no check at all, as a faulty or hostile client could.
fn raw_event(doc: &mut RecordDoc, agent: &Agent, at: DateTime<Utc>, kind: &str, payload: &str) {
    let am = doc.automerge_mut();
    am.set_actor(agent.actor_id());
    let (_, list) = am.get(ROOT, "events").unwrap().unwrap();
    let len = am.length(&list);
    let obj = am.insert_object(&list, len, ObjType::Map).unwrap();
    am.put(&obj, "id", Uuid::now_v7().to_string()).unwrap();
    am.put(&obj, "kind", kind).unwrap();
    am.put(&obj, "at", ScalarValue::Timestamp(at.timestamp_millis()))
        .unwrap();
    am.put(&obj, "user_id", agent.user_id.as_str()).unwrap();
    am.put(&obj, "role", agent.role.as_str()).unwrap();
    am.put(&obj, "device_id", agent.device_id.to_string())
        .unwrap();
    if !payload.is_empty() {
        am.put(&obj, "payload", payload).unwrap();
    }
    am.commit();
}

// ------------------------------------------------------------------------------------ devices

struct Device {
    agent: Agent,
    store: Store,
    sync: DeviceSync,
    _dir: tempfile::TempDir,
}

impl Device {
    fn new(agent: Agent) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("device.db")).unwrap();
        Self {
            sync: DeviceSync::new(agent.device_id),
            agent,
            store,
            _dir: dir,
        }
    }

    /// Persists a record's unsaved changes, as the app's records layer does after each edit.
    fn persist(&mut self, doc: &mut RecordDoc) -> String {
        let id = doc.id().to_string();
        let meta = meta_of(doc, t0()).unwrap();
        let chunk = doc.save_incremental();
        self.store
            .write_record(&id, doc.kind().as_str(), &meta, &chunk, false)
            .unwrap();
        id
    }

    fn doc(&self, id: &str) -> RecordDoc {
        RecordDoc::load(&self.store.load_record_bytes(id).unwrap().concat()).unwrap()
    }

    fn has(&self, id: &str) -> bool {
        self.store.record_summary(id).unwrap().is_some()
    }

    fn edit(&mut self, id: &str, f: impl FnOnce(&mut RecordDoc, &Agent)) {
        let mut doc = self.doc(id);
        f(&mut doc, &self.agent.clone());
        self.persist(&mut doc);
    }
}

// ------------------------------------------------------------------------------------ server

/// The server's database as a map; effects applied in order as `handle` persists them, as the
/// server crate does in one transaction.
#[derive(Default, Clone)]
struct MemServer {
    records: BTreeMap<Uuid, ServerRecord>,
    peers: BTreeMap<(Uuid, Uuid), PeerState>,
    bindings: BTreeMap<String, Uuid>,
    quarantine: Vec<(Uuid, RejectionCode, Vec<String>)>,
    /// One row per accepted batch: (record, hashes).
    audit: Vec<(Uuid, Vec<String>)>,
    registry: Option<Registry>,
    /// Number blocks leased, `(device, first, last)`; `None`: every number counts as leased to
    /// every device (the tests that are not about numbers).
    leases: Option<Vec<(Uuid, u64, u64)>>,
    /// Which record holds each auto number.
    numbers: BTreeMap<String, Uuid>,
    /// Every effect persisted, in order (`Debug`), and how many `persist` calls brought them.
    persisted: Vec<String>,
    persist_calls: usize,
}

impl ServerSyncStore for MemServer {
    type Error = Infallible;

    fn record(&mut self, id: Uuid) -> Result<Option<ServerRecord>, Infallible> {
        Ok(self.records.get(&id).cloned())
    }
    fn peer_state(&mut self, d: Uuid, r: Uuid) -> Result<Option<PeerState>, Infallible> {
        Ok(self.peers.get(&(d, r)).cloned())
    }
    fn actor_device(&mut self, actor: &str) -> Result<Option<Uuid>, Infallible> {
        Ok(self.bindings.get(actor).copied())
    }
    fn current_seq(&mut self) -> Result<u64, Infallible> {
        Ok(self.records.values().map(|r| r.seq).max().unwrap_or(0))
    }
    fn visible_changes(
        &mut self,
        sender: &Sender,
        after: u64,
        up_to: u64,
        limit: usize,
    ) -> Result<Vec<Changed>, Infallible> {
        let mut rows: Vec<Changed> = self
            .records
            .iter()
            .filter(|(_, r)| r.seq > after && r.seq <= up_to)
            .filter(|(_, r)| may_see(sender, &RecordDoc::load(&r.doc).unwrap().view().unwrap()))
            .map(|(id, r)| Changed {
                record_id: *id,
                seq: r.seq,
            })
            .collect();
        rows.sort_by_key(|c| c.seq);
        rows.truncate(limit);
        Ok(rows)
    }
    fn number_leased(&mut self, device: Uuid, number: u64) -> Result<bool, Infallible> {
        Ok(match &self.leases {
            None => true,
            Some(l) => l
                .iter()
                .any(|(d, a, b)| *d == device && (*a..=*b).contains(&number)),
        })
    }
    fn number_holder(&mut self, number: &str) -> Result<Option<Uuid>, Infallible> {
        Ok(self.numbers.get(number).copied())
    }
    fn persist(&mut self, effects: Vec<ServerEffect>) -> Result<(), Infallible> {
        self.persist_calls += 1;
        self.persisted
            .extend(effects.iter().map(|e| format!("{e:?}")));
        self.apply(effects);
        Ok(())
    }
}

impl MemServer {
    fn apply(&mut self, effects: Vec<ServerEffect>) {
        for e in effects {
            match e {
                ServerEffect::StoreRecord(s) => {
                    if let Some(n) = &s.view.number {
                        let holder = *self.numbers.entry(n.clone()).or_insert(s.record_id);
                        assert_eq!(holder, s.record_id, "auto number {n} stored twice");
                    }
                    let StoredChange {
                        record_id,
                        seq,
                        doc,
                        change_hashes,
                        ..
                    } = *s;
                    assert!(seq > self.current_seq().unwrap(), "seq must grow");
                    self.records.insert(record_id, ServerRecord { doc, seq });
                    self.audit.push((record_id, change_hashes));
                }
                ServerEffect::BindActor { actor, device_id } => {
                    assert!(self.bindings.insert(actor, device_id).is_none());
                }
                ServerEffect::Quarantine(q) => {
                    self.quarantine.push((q.record_id, q.code, q.change_hashes))
                }
                ServerEffect::SavePeerState {
                    device_id,
                    record_id,
                    state,
                } => {
                    self.peers.insert((device_id, record_id), state);
                }
            }
        }
    }

    fn doc(&self, id: &str) -> RecordDoc {
        let id: Uuid = id.parse().unwrap();
        RecordDoc::load(&self.records[&id].doc).unwrap()
    }
}

// ------------------------------------------------------------------------------------ network

/// What the network does to one exchange.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    None,
    /// The response never reaches the device (the server applied and committed).
    LoseResponse,
    /// The request is delivered twice; the device gets the second response.
    Duplicate,
}

#[derive(Default)]
struct Traffic {
    round_trips: usize,
    up_json: usize,
    up_zstd: usize,
    down_json: usize,
}

struct Net {
    server: MemServer,
    logic: ServerSync,
    now: DateTime<Utc>,
    traffic: Traffic,
}

fn zstd_len(bytes: &[u8]) -> usize {
    zstd::encode_all(bytes, 3).unwrap().len()
}

impl Net {
    fn new() -> Self {
        Self {
            server: MemServer {
                registry: Some(sample_registry()),
                ..MemServer::default()
            },
            logic: ServerSync::default(),
            now: t0() + Duration::hours(1),
            traffic: Traffic::default(),
        }
    }

    fn tick(&mut self) -> DateTime<Utc> {
        self.now += Duration::seconds(1);
        self.now
    }

    /// The server's half: JSON in, JSON out, effects persisted before answering.
    fn serve(&mut self, who: &Sender, body: &[u8]) -> Vec<u8> {
        let request: SyncRequest = serde_json::from_slice(body).unwrap();
        let now = self.tick();
        let registry = self.server.registry.take();
        let response = self
            .logic
            .handle(&mut self.server, who, registry.as_ref(), &request, now)
            .unwrap();
        self.server.registry = registry;
        serde_json::to_vec(&response).unwrap()
    }

    /// One round trip; `tamper` edits the request in flight.
    fn exchange_with(
        &mut self,
        dev: &mut Device,
        fault: Fault,
        tamper: impl FnOnce(&mut SyncRequest),
    ) -> (SyncRequest, SyncResponse, Option<SyncReport>) {
        let prepared = dev.sync.build_request(&dev.store).unwrap();
        assert!(prepared.issues.is_empty(), "{:?}", prepared.issues);
        let sent = prepared.request.clone();
        let mut wire = prepared.request;
        tamper(&mut wire);
        let body = serde_json::to_vec(&wire).unwrap();
        self.traffic.round_trips += 1;
        self.traffic.up_json += body.len();
        self.traffic.up_zstd += zstd_len(&body);
        let who = sender(&dev.agent);
        let mut reply = self.serve(&who, &body);
        if fault == Fault::Duplicate {
            reply = self.serve(&who, &body);
        }
        self.traffic.down_json += reply.len();
        let response: SyncResponse = serde_json::from_slice(&reply).unwrap();
        if fault == Fault::LoseResponse {
            return (sent, response, None);
        }
        let now = self.tick();
        let report = dev
            .sync
            .apply_response(&mut dev.store, &sent, &response, now)
            .unwrap();
        (sent, response, Some(report))
    }

    fn exchange(&mut self, dev: &mut Device) -> (SyncRequest, SyncResponse, SyncReport) {
        let (q, r, rep) = self.exchange_with(dev, Fault::None, |_| {});
        (q, r, rep.unwrap())
    }

    /// Rounds until the device needs no more; returns every report.
    fn sync(&mut self, dev: &mut Device) -> Vec<SyncReport> {
        let mut reports = Vec::new();
        for _ in 0..20 {
            let (_, _, report) = self.exchange(dev);
            let again = report.again;
            reports.push(report);
            if !again {
                return reports;
            }
        }
        panic!("sync did not converge in 20 rounds");
    }

    /// The office appends an event from its desk (server-side edit).
    fn office_event(&mut self, id: &str, event: EventKind, at: DateTime<Utc>) {
        let agent = office();
        let now = self.tick();
        let out = self
            .logic
            .edit(
                &mut self.server,
                &sender(&agent),
                None,
                id.parse().unwrap(),
                now,
                |d| d.append_event(&agent, at, event).map(|_| ()),
            )
            .unwrap();
        match out {
            EditOutcome::Applied { effects, .. } => self.server.apply(effects),
            other => panic!("office edit not applied: {other:?}"),
        }
    }
}

/// The officer's phone with two issued autos, both synced to the server.
fn phone_with_two_synced_records(net: &mut Net) -> (Device, String, String) {
    let mut phone = Device::new(officer_phone());
    let mut a = issued(&phone.agent.clone(), 1);
    let mut b = issued(&phone.agent.clone(), 2);
    let a_id = phone.persist(&mut a);
    let b_id = phone.persist(&mut b);
    net.sync(&mut phone);
    (phone, a_id, b_id)
}

/// Rewrites the record's facts behind the records API's back (no sealing check on the device):
/// what a tampered or buggy app would send.
fn rewrite_sealed_facts(dev: &mut Device, id: &str) {
    dev.edit(id, |d, ag| {
        let am = d.automerge_mut();
        am.set_actor(ag.actor_id());
        am.put(ROOT, "facts", "Outra versão dos fatos").unwrap();
        am.commit();
    });
}

fn sorted_heads(doc: &mut RecordDoc) -> Vec<String> {
    hex_heads(doc)
}

fn issues_of(reports: &[SyncReport]) -> Vec<(RejectionCode, String)> {
    reports
        .iter()
        .flat_map(|r| r.issues.iter().map(|i| (i.code, i.message.clone())))
        .collect()
}

// ------------------------------------------------------------------------------------ tests

#[test]
fn new_records_take_one_round_trip_and_cost_about_their_saved_size() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut saved = 0;
    let mut ids = Vec::new();
    for n in 1..=20 {
        let mut r = issued(&phone.agent.clone(), n);
        if n % 3 == 0 {
            r.add_witness(&phone.agent.clone(), t0(), &witness(&format!("W{n}")))
                .unwrap();
        }
        saved += r.clone().save().len();
        ids.push(phone.persist(&mut r));
    }

    let (req, resp, report) = net.exchange(&mut phone);
    assert_eq!(req.new_records.len(), 20);
    assert!(req.messages.is_empty());
    assert_eq!(resp.accepted.len(), 20);
    assert!(resp.rejections.is_empty() && resp.messages.is_empty());
    assert!(!report.again, "one round trip is enough");
    assert_eq!(net.traffic.round_trips, 1);
    assert_eq!(net.server.records.len(), 20);
    assert_eq!(net.server.audit.len(), 20);
    for id in &ids {
        assert_eq!(
            sorted_heads(&mut phone.doc(id)),
            sorted_heads(&mut net.server.doc(id))
        );
    }
    let ratio_zstd = net.traffic.up_zstd as f64 / saved as f64;
    eprintln!(
        "20 new records: save() {saved} B, request JSON {} B, zstd {} B ({ratio_zstd:.2}×), \
         response JSON {} B",
        net.traffic.up_json, net.traffic.up_zstd, net.traffic.down_json
    );
    assert!(
        ratio_zstd <= 1.2,
        "bytes up {ratio_zstd:.2}× the saved size"
    );

    // Now in sync: the next exchange sends only the cursor.
    let (req, resp, report) = net.exchange(&mut phone);
    assert!(req.new_records.is_empty() && req.messages.is_empty());
    assert!(resp.accepted.is_empty() && resp.messages.is_empty() && resp.new_records.is_empty());
    assert!(!report.again);
}

#[test]
fn noop_sync_is_one_small_round_trip() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    phone.persist(&mut r);
    net.sync(&mut phone);

    let before = net.traffic.round_trips;
    let up = net.traffic.up_json;
    let reports = net.sync(&mut phone);
    assert_eq!(reports.len(), 1);
    assert_eq!(net.traffic.round_trips - before, 1);
    let body = net.traffic.up_json - up;
    eprintln!("noop request body: {body} B");
    assert!(body < 2048, "noop body {body} B");
    assert!(reports[0].changed.is_empty());
    // And it asks for nothing: exactly protocol, device and cursor.
    let prepared = phone.sync.build_request(&phone.store).unwrap();
    let json = serde_json::to_value(&prepared.request).unwrap();
    assert_eq!(json.as_object().unwrap().len(), 3, "{json}");
}

#[test]
fn concurrent_offline_edits_meet_on_every_side_with_identical_heads() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut tablet = Device::new(officer_tablet());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);
    net.sync(&mut phone);

    // Offline: the officer adds a witness; the office reviews the record.
    phone.edit(&id, |d, a| {
        d.add_witness(a, t0() + Duration::minutes(30), &witness("W1"))
            .unwrap();
    });
    net.office_event(
        &id,
        EventKind::Reviewed {
            note: Some("conferido".into()),
        },
        t0() + Duration::minutes(40),
    );

    let reports = net.sync(&mut phone);
    assert_eq!(
        reports.len(),
        1,
        "witness up and review down in one round trip"
    );
    assert!(issues_of(&reports).is_empty());
    assert_eq!(reports[0].changed, vec![id.clone()]);

    // The same officer's tablet has never seen the record: it arrives whole.
    let reports = net.sync(&mut tablet);
    assert_eq!(reports.len(), 1);
    assert!(tablet.has(&id));

    let mut on_phone = phone.doc(&id);
    let mut on_tablet = tablet.doc(&id);
    let mut on_server = net.server.doc(&id);
    let heads = sorted_heads(&mut on_server);
    assert_eq!(sorted_heads(&mut on_phone), heads);
    assert_eq!(sorted_heads(&mut on_tablet), heads);
    for doc in [&on_phone, &on_tablet, &on_server] {
        let v = doc.view().unwrap();
        assert_eq!(v.witnesses.len(), 1);
        assert_eq!(v.status.as_str(), "under_review");
    }
    // Server: the record's creation, the office's review, the witness — one audit row each.
    assert_eq!(net.server.audit.len(), 3);
    // Other officers get nothing of it.
    let mut stranger = Device::new(other_officer());
    net.sync(&mut stranger);
    assert!(!stranger.has(&id));

    // Both devices now in sync: nothing moves.
    let (req, resp, _) = net.exchange(&mut phone);
    assert!(req.messages.is_empty() && resp.messages.is_empty() && resp.new_records.is_empty());
    let (req, resp, _) = net.exchange(&mut tablet);
    assert!(req.messages.is_empty() && resp.messages.is_empty() && resp.new_records.is_empty());
}

#[test]
fn sealed_field_edit_is_rejected_and_reset_while_other_records_sync() {
    let mut net = Net::new();
    let (mut phone, a_id, b_id) = phone_with_two_synced_records(&mut net);
    let audit_before = net.server.audit.len();

    // Record A: a legitimate witness, then a rewrite of the sealed facts behind the API's back.
    phone.edit(&a_id, |d, ag| {
        d.add_witness(ag, t0() + Duration::minutes(20), &witness("W1"))
            .unwrap();
    });
    rewrite_sealed_facts(&mut phone, &a_id);
    // Record B: a legitimate witness.
    phone.edit(&b_id, |d, ag| {
        d.add_witness(ag, t0() + Duration::minutes(21), &witness("W2"))
            .unwrap();
    });

    let (_, resp, report) = net.exchange(&mut phone);
    assert_eq!(resp.rejections.len(), 1);
    let rej = &resp.rejections[0];
    assert_eq!(rej.record_id.to_string(), a_id);
    assert_eq!(rej.code, RejectionCode::SealedField);
    assert_eq!(
        rej.change_hashes.len(),
        1,
        "only the facts change is refused"
    );
    assert!(rej.message.contains("lacrado"), "{}", rej.message);
    assert!(rej.server_doc.is_some());
    assert_eq!(resp.accepted.len(), 1);
    assert_eq!(resp.accepted[0].record_id.to_string(), b_id);

    // The server kept the witness (before the bad change), refused the facts, quarantined them.
    let server_a = net.server.doc(&a_id).view().unwrap();
    assert_eq!(server_a.witnesses.len(), 1);
    assert_eq!(
        server_a.facts,
        "Motorista auxiliar conduzindo com CNH vencida."
    );
    assert_eq!(
        net.server.audit.len(),
        audit_before + 2,
        "A's witness, B's witness"
    );
    assert_eq!(net.server.quarantine.len(), 1);
    assert_eq!(net.server.quarantine[0].1, RejectionCode::SealedField);
    assert_eq!(net.server.quarantine[0].2, rej.change_hashes);

    // The device went back to the server's version and kept the refused change as evidence.
    assert_eq!(report.issues.len(), 1);
    assert!(
        report.issues[0].message.contains("foi recusada porque"),
        "{}",
        report.issues[0].message
    );
    let number_a = phone.doc(&a_id).view().unwrap().number.unwrap();
    assert!(report.issues[0].message.contains(&number_a));
    let mut local_a = phone.doc(&a_id);
    assert_eq!(
        sorted_heads(&mut local_a),
        sorted_heads(&mut net.server.doc(&a_id))
    );
    assert_eq!(
        local_a.view().unwrap().facts,
        "Motorista auxiliar conduzindo com CNH vencida."
    );
    let q = phone.store.sync_quarantine(Some(&a_id)).unwrap();
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].code, "sealed_field");
    assert_eq!(q[0].change_hashes, rej.change_hashes);
    // The quarantined bytes are exactly the refused change, loadable over the server's copy.
    let mut evidence = net.server.doc(&a_id);
    evidence.load_incremental(&q[0].bytes).unwrap();
    assert_eq!(evidence.view().unwrap().facts, "Outra versão dos fatos");

    // Nothing pending any more, and the officer can keep working on A.
    let (req, _, report) = net.exchange(&mut phone);
    assert!(req.messages.is_empty() && req.new_records.is_empty());
    assert!(report.issues.is_empty());
    phone.edit(&a_id, |d, ag| {
        d.add_witness(ag, t0() + Duration::minutes(50), &witness("W3"))
            .unwrap();
    });
    let reports = net.sync(&mut phone);
    assert!(issues_of(&reports).is_empty());
    assert_eq!(net.server.doc(&a_id).view().unwrap().witnesses.len(), 2);
}

#[test]
fn foreign_actor_is_rejected() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let agent = phone.agent.clone();
    let mut r = RecordDoc::new_infraction(draft(1, t0()), &agent).unwrap();
    let id = phone.persist(&mut r);
    net.sync(&mut phone);

    // A draft edit by the author, but written under the tablet's actor.
    phone.edit(&id, |d, _| {
        let am = d.automerge_mut();
        am.set_actor(ActorId::from(officer_tablet().device_id.as_bytes()));
        am.put(ROOT, "facts", "Fatos reescritos").unwrap();
        am.commit();
    });
    let (_, resp, report) = net.exchange(&mut phone);
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].code, RejectionCode::ForeignActor);
    assert_eq!(report.issues[0].code, RejectionCode::ForeignActor);
    assert_eq!(
        net.server.doc(&id).view().unwrap().facts,
        "Motorista auxiliar conduzindo com CNH vencida."
    );
    assert_eq!(net.server.audit.len(), 1);

    // A brand-new record written wholly under another device's actor is refused at creation:
    // the device drops it from its list and keeps it in quarantine.
    let mut forged = RecordDoc::new_infraction(draft(2, t0()), &officer_tablet()).unwrap();
    let forged_id = phone.persist(&mut forged);
    let (_, resp, report) = net.exchange(&mut phone);
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].code, RejectionCode::ForeignActor);
    assert!(resp.rejections[0].server_doc.is_none());
    assert!(!net.server.records.contains_key(&forged_id.parse().unwrap()));
    assert!(!phone.has(&forged_id));
    assert_eq!(
        phone.store.sync_quarantine(Some(&forged_id)).unwrap().len(),
        1
    );
    assert!(report.issues[0].message.contains("retirado da lista"));
}

#[test]
fn truncated_and_garbage_bytes_are_rejected_and_the_record_recovers() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);

    // The new record's bytes are cut in flight.
    let (_, resp, report) = net.exchange_with(&mut phone, Fault::None, |q| {
        let doc = &mut q.new_records[0].doc.0;
        doc.truncate(doc.len() / 2);
    });
    let report = report.unwrap();
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].code, RejectionCode::Malformed);
    assert!(net.server.records.is_empty() && net.server.audit.is_empty());
    assert_eq!(net.server.quarantine.len(), 1);
    assert!(
        phone.has(&id),
        "a malformed rejection never deletes the officer's record"
    );
    assert!(!report.again, "no tight loop on unreadable bytes");

    // Next sync: the record goes whole again and is accepted.
    let reports = net.sync(&mut phone);
    assert!(issues_of(&reports).is_empty());
    assert_eq!(net.server.records.len(), 1);

    // A message cut at every possible length: always a typed rejection, never a panic, and
    // nothing stored.
    phone.edit(&id, |d, a| {
        d.add_witness(a, t0() + Duration::minutes(9), &witness("W9"))
            .unwrap();
    });
    let prepared = phone.sync.build_request(&phone.store).unwrap();
    let message = prepared.request.messages[0].message.0.clone();
    let audit = net.server.audit.len();
    let mut accepted_cuts = Vec::new();
    for cut in 0..message.len() {
        let mut q = prepared.request.clone();
        q.messages[0].message.0.truncate(cut);
        let body = serde_json::to_vec(&q).unwrap();
        let resp: SyncResponse =
            serde_json::from_slice(&net.serve(&sender(&phone.agent), &body)).unwrap();
        if resp.accepted.is_empty() {
            assert_eq!(resp.rejections.len(), 1, "cut at {cut}");
            assert_eq!(
                resp.rejections[0].code,
                RejectionCode::Malformed,
                "cut at {cut}"
            );
        } else {
            accepted_cuts.push(cut);
        }
    }
    // Automerge's trailing capability flags are optional: a message cut just before them is a
    // whole, valid message. Any shorter cut is refused and stores nothing.
    assert!(
        accepted_cuts.iter().all(|c| *c + 4 >= message.len()),
        "{accepted_cuts:?} of {}",
        message.len()
    );
    assert!(net.server.audit.len() <= audit + 1);
    let mut garbage = prepared.request.clone();
    garbage.messages[0].message.0 = vec![0x42, 0xff, 0xff, 0xff, 0x01];
    let resp: SyncResponse = serde_json::from_slice(&net.serve(
        &sender(&phone.agent),
        &serde_json::to_vec(&garbage).unwrap(),
    ))
    .unwrap();
    assert_eq!(resp.rejections[0].code, RejectionCode::Malformed);

    // The real message still goes through (or already did, without its flags).
    let reports = net.sync(&mut phone);
    assert!(issues_of(&reports).is_empty());
    assert_eq!(net.server.doc(&id).view().unwrap().witnesses.len(), 1);
}

#[test]
fn a_replayed_request_is_harmless() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);
    let (_, _, report) = net.exchange_with(&mut phone, Fault::Duplicate, |_| {});
    assert!(report.unwrap().issues.is_empty());
    assert_eq!(net.server.audit.len(), 1, "the duplicate stored nothing");

    phone.edit(&id, |d, a| {
        d.add_witness(a, t0() + Duration::minutes(9), &witness("W1"))
            .unwrap();
    });
    let (_, resp, report) = net.exchange_with(&mut phone, Fault::Duplicate, |_| {});
    assert_eq!(resp.accepted.len(), 1);
    assert!(report.unwrap().issues.is_empty());
    assert_eq!(net.server.audit.len(), 2);
    assert_eq!(net.server.doc(&id).view().unwrap().witnesses.len(), 1);
    assert_eq!(
        sorted_heads(&mut phone.doc(&id)),
        sorted_heads(&mut net.server.doc(&id))
    );
}

#[test]
fn a_lost_response_recovers_on_the_next_round_without_duplicates() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);

    // The server stores the new record; the device never hears.
    net.exchange_with(&mut phone, Fault::LoseResponse, |_| {});
    assert_eq!(net.server.audit.len(), 1);
    let reports = net.sync(&mut phone);
    assert_eq!(reports.len(), 1);
    assert_eq!(net.server.audit.len(), 1, "resent, not stored twice");

    // Changes both ways, response lost.
    phone.edit(&id, |d, a| {
        d.add_witness(a, t0() + Duration::minutes(9), &witness("W1"))
            .unwrap();
    });
    net.office_event(
        &id,
        EventKind::Reviewed { note: None },
        t0() + Duration::minutes(10),
    );
    let audit = net.server.audit.len();
    net.exchange_with(&mut phone, Fault::LoseResponse, |_| {});
    assert_eq!(net.server.audit.len(), audit + 1, "the witness was stored");
    let reports = net.sync(&mut phone);
    assert_eq!(reports.len(), 1);
    assert_eq!(net.server.audit.len(), audit + 1);
    let v = phone.doc(&id).view().unwrap();
    assert_eq!(v.witnesses.len(), 1);
    assert_eq!(v.events.len(), 2, "issued + reviewed, once each");
    assert_eq!(
        sorted_heads(&mut phone.doc(&id)),
        sorted_heads(&mut net.server.doc(&id))
    );

    // A push lost on the way down arrives on the next round.
    net.office_event(
        &id,
        EventKind::PenaltyProposed {
            penalty: PenaltyKind::WrittenWarning,
        },
        t0() + Duration::minutes(20),
    );
    let (_, resp, _) = net.exchange_with(&mut phone, Fault::LoseResponse, |_| {});
    assert_eq!(resp.messages.len(), 1);
    let (_, resp, _) = net.exchange(&mut phone);
    assert_eq!(
        resp.messages.len(),
        1,
        "sent again: the cursor did not confirm it"
    );
    assert_eq!(phone.doc(&id).view().unwrap().events.len(), 3);
    let (_, resp, _) = net.exchange(&mut phone);
    assert!(
        resp.messages.is_empty(),
        "confirmed by the cursor: not sent a third time"
    );
}

#[test]
fn bytes_of_another_record_than_they_are_sent_under_are_refused() {
    let mut net = Net::new();
    let (mut phone, a, _) = phone_with_two_synced_records(&mut net);
    let stored = net.server.records.len();
    let audit = net.server.audit.len();

    // A whole new record sent under an id that is not its own.
    let mut c = issued(&phone.agent.clone(), 3);
    let c_id = phone.persist(&mut c);
    let elsewhere = Uuid::now_v7();
    let (_, resp, _) = net.exchange_with(&mut phone, Fault::None, |q| {
        q.new_records[0].record_id = elsewhere;
    });
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].code, RejectionCode::Malformed);
    assert!(
        resp.rejections[0]
            .message
            .contains(&format!("não é do registro {elsewhere} ({c_id})")),
        "{}",
        resp.rejections[0].message
    );

    // A change that rewrites a synced record's own id: the message no longer is that record.
    let before = sorted_heads(&mut net.server.doc(&a));
    let other = Uuid::now_v7();
    phone.edit(&a, |d, ag| {
        let am = d.automerge_mut();
        am.set_actor(ag.actor_id());
        am.put(ROOT, "id", other.to_string()).unwrap();
        am.commit();
    });
    let (req, resp, _) = net.exchange(&mut phone);
    let refused = resp
        .rejections
        .iter()
        .find(|r| r.record_id.to_string() == a)
        .unwrap_or_else(|| panic!("{req:?} {resp:?}"));
    assert_eq!(refused.code, RejectionCode::Malformed);
    assert!(
        refused
            .message
            .contains(&format!("a mensagem é do registro {other}, não de {a}")),
        "{}",
        refused.message
    );
    // Only the honest new record got in; the synced one is as it was.
    assert_eq!(sorted_heads(&mut net.server.doc(&a)), before);
    assert_eq!(net.server.records.len(), stored + 1);
    assert_eq!(net.server.audit.len(), audit + 1);
}

#[test]
fn office_only_event_from_an_officer_is_rejected() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);
    net.sync(&mut phone);
    phone.edit(&id, |d, a| {
        raw_event(d, a, t0() + Duration::minutes(30), "reviewed", "");
    });
    let (_, resp, report) = net.exchange(&mut phone);
    assert_eq!(resp.rejections[0].code, RejectionCode::RoleForbidden);
    assert_eq!(report.issues[0].code, RejectionCode::RoleForbidden);
    assert_eq!(phone.doc(&id).view().unwrap().events.len(), 1);
    assert_eq!(net.server.doc(&id).view().unwrap().events.len(), 1);
}

#[test]
fn events_are_judged_on_the_senders_own_copy() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);
    net.sync(&mut phone);

    // Out of order where it was written: ciência with no decision to notify → refused.
    phone.edit(&id, |d, a| {
        raw_event(
            d,
            a,
            t0() + Duration::minutes(30),
            "notified",
            r#"{"method":"personal_signature","on":"2026-11-30"}"#,
        );
    });
    let (_, resp, _) = net.exchange(&mut phone);
    assert_eq!(resp.rejections[0].code, RejectionCode::InvalidEvent);
    assert!(resp.rejections[0].message.contains("ciência"));

    // Valid where it was written, flagged only after a concurrent office decision: kept.
    for (i, e) in [
        EventKind::Reviewed { note: None },
        EventKind::PenaltyProposed {
            penalty: PenaltyKind::WrittenWarning,
        },
        EventKind::PenaltyDecided {
            penalty: PenaltyKind::WrittenWarning,
        },
    ]
    .into_iter()
    .enumerate()
    {
        net.office_event(&id, e, t0() + Duration::minutes(40 + i as i64));
    }
    net.sync(&mut phone);
    phone.edit(&id, |d, a| {
        d.append_event(
            a,
            t0() + Duration::minutes(60),
            EventKind::Notified {
                method: sync_core::records::NotificationMethod::PersonalSignature,
                on: "2026-11-30".parse().unwrap(),
                appeal_deadline: None,
                notification: None,
            },
        )
        .unwrap();
    });
    net.office_event(
        &id,
        EventKind::Annulled {
            reason: "erro na identificação".into(),
        },
        t0() + Duration::minutes(50),
    );
    let reports = net.sync(&mut phone);
    assert!(issues_of(&reports).is_empty(), "{:?}", issues_of(&reports));
    let v = net.server.doc(&id).view().unwrap();
    assert_eq!(v.status.as_str(), "annulled");
    assert_eq!(v.invalid_events.len(), 1, "the ciência is kept and flagged");
    assert_eq!(v.invalid_events[0].kind, "notified");
    assert_eq!(
        sorted_heads(&mut phone.doc(&id)),
        sorted_heads(&mut net.server.doc(&id))
    );
}

#[test]
fn coordinators_stay_within_their_stand() {
    let mut net = Net::new();
    let reg = sample_registry();
    let idx = reg.index();
    let agent = coordinator();
    let report = |permit: &str, driver: &str| TransgressionDraft {
        id: Uuid::now_v7(),
        occurred_at: t0(),
        monotonic: 7,
        position: None,
        permit_number: permit.into(),
        driver_id: driver.into(),
        gravity: Gravity::Light,
        facts: "Discussão no ponto (art. 19, VII).".into(),
        legal_basis: Vec::new(),
        witnesses: Vec::new(),
        photos: Vec::new(),
    };

    // Coordinator of S01 (as authenticated) reporting a driver of S01: accepted.
    let mut dev = Device::new(agent.clone());
    let mut ok = RecordDoc::new_transgression(report("0001", "P02"), &agent, &idx, "S01").unwrap();
    let ok_id = dev.persist(&mut ok);
    let reports = net.sync(&mut dev);
    assert!(issues_of(&reports).is_empty(), "{:?}", issues_of(&reports));
    assert!(net.server.records.contains_key(&ok_id.parse().unwrap()));

    // The same device, authenticated now as coordinator of S02 (reassigned): the report about
    // S01 is outside the stand — a new one is refused, edits to the old one too.
    let mut s02 = Sender {
        stand: Some("S02".into()),
        ..sender(&agent)
    };
    let mut other =
        RecordDoc::new_transgression(report("0001", "P03"), &agent, &idx, "S01").unwrap();
    let other_id = dev.persist(&mut other);
    let prepared = dev.sync.build_request(&dev.store).unwrap();
    let body = serde_json::to_vec(&prepared.request).unwrap();
    let resp: SyncResponse = serde_json::from_slice(&net.serve(&s02, &body)).unwrap();
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].record_id.to_string(), other_id);
    assert_eq!(resp.rejections[0].code, RejectionCode::OutsideStand);
    assert!(resp.rejections[0].message.contains("art. 17"));

    dev.edit(&ok_id, |d, a| {
        d.add_witness(a, t0() + Duration::minutes(5), &witness("W1"))
            .unwrap();
    });
    s02.stand = Some("S02".into());
    let prepared = dev.sync.build_request(&dev.store).unwrap();
    let body = serde_json::to_vec(&prepared.request).unwrap();
    let resp: SyncResponse = serde_json::from_slice(&net.serve(&s02, &body)).unwrap();
    let codes: Vec<_> = resp.rejections.iter().map(|r| r.code).collect();
    assert!(
        codes.iter().all(|c| *c == RejectionCode::OutsideStand),
        "{codes:?}"
    );
    assert_eq!(codes.len(), 2);
}

#[test]
fn another_users_record_is_not_disclosed() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);
    net.sync(&mut phone);

    // Another officer's device sends a copy of it (as if it had got the bytes somehow).
    let mut stranger = Device::new(other_officer());
    let mut copy = phone.doc(&id);
    stranger
        .store
        .write_record(
            &id,
            "infraction",
            &meta_of(&mut copy, t0()).unwrap(),
            &copy.save(),
            false,
        )
        .unwrap();
    let (_, resp, report) = net.exchange(&mut stranger);
    assert_eq!(resp.rejections.len(), 1);
    assert_eq!(resp.rejections[0].code, RejectionCode::NotVisible);
    assert!(resp.rejections[0].server_doc.is_none(), "nothing disclosed");
    assert!(resp.messages.is_empty() && resp.new_records.is_empty());
    assert!(!stranger.has(&id));
    assert_eq!(report.issues.len(), 1);
}

#[test]
fn many_records_page_through_more() {
    let mut net = Net::new();
    net.logic.push_limit = 3;
    let mut phone = Device::new(officer_phone());
    let mut ids = Vec::new();
    for n in 1..=8 {
        let mut r = issued(&phone.agent.clone(), n);
        ids.push(phone.persist(&mut r));
    }
    net.sync(&mut phone);
    let mut tablet = Device::new(officer_tablet());
    let reports = net.sync(&mut tablet);
    assert_eq!(reports.len(), 3, "8 records, 3 per response");
    assert!(reports[0].again && reports[1].again && !reports[2].again);
    for id in &ids {
        assert_eq!(
            sorted_heads(&mut tablet.doc(id)),
            sorted_heads(&mut net.server.doc(id))
        );
    }
    // The phone is told of nothing: it has all of them.
    let (_, resp, _) = net.exchange(&mut phone);
    assert!(resp.messages.is_empty() && resp.new_records.is_empty());
}

#[test]
fn wrong_protocol_or_device_fails_the_whole_request() {
    let mut net = Net::new();
    let phone = Device::new(officer_phone());
    let mut q = phone.sync.build_request(&phone.store).unwrap().request;
    q.protocol = 99;
    let err = net
        .logic
        .handle(&mut net.server, &sender(&phone.agent), None, &q, t0())
        .unwrap_err();
    assert!(err.to_string().contains("atualize o aplicativo"));
    q.protocol = sync_core::sync::PROTOCOL_VERSION;
    let err = net
        .logic
        .handle(&mut net.server, &sender(&other_officer()), None, &q, t0())
        .unwrap_err();
    assert!(matches!(
        err,
        sync_core::sync::SyncError::DeviceMismatch { .. }
    ));
}

#[test]
fn an_edit_made_while_a_request_is_in_flight_goes_in_the_next_round() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let id = phone.persist(&mut r);
    let prepared = phone.sync.build_request(&phone.store).unwrap();
    let body = serde_json::to_vec(&prepared.request).unwrap();
    let reply = net.serve(&sender(&phone.agent), &body);
    // The officer adds a witness before the response arrives.
    phone.edit(&id, |d, a| {
        d.add_witness(a, t0() + Duration::minutes(3), &witness("W1"))
            .unwrap();
    });
    let response: SyncResponse = serde_json::from_slice(&reply).unwrap();
    let report = phone
        .sync
        .apply_response(&mut phone.store, &prepared.request, &response, t0())
        .unwrap();
    assert!(report.again, "the witness still has to go");
    let (req, _, report) = net.exchange(&mut phone);
    assert_eq!(req.messages.len(), 1);
    assert!(
        req.new_records.is_empty(),
        "the record itself is not resent"
    );
    assert!(!report.again);
    assert_eq!(net.server.doc(&id).view().unwrap().witnesses.len(), 1);
}

#[test]
fn one_new_record_on_the_wire() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut r = issued(&phone.agent.clone(), 1);
    let saved = r.clone().save().len();
    phone.persist(&mut r);
    net.sync(&mut phone);
    eprintln!(
        "1 new record: save() {saved} B, request JSON {} B, zstd {} B, response JSON {} B",
        net.traffic.up_json, net.traffic.up_zstd, net.traffic.down_json
    );
    // The envelope (protocol, device, cursor, record id) is a fixed ~150 B on top.
    assert!(net.traffic.up_zstd <= saved * 12 / 10 + 150);
}

/// A new record whose last change breaks the seal arrives whole: the server reads each step
/// of the merged copy at its heads, accepts the steps before the bad one and keeps exactly the
/// record as it was then (the fork of the refusal path).
#[test]
fn a_new_record_whose_last_change_breaks_the_seal_is_kept_up_to_the_step_before() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut a = issued(&phone.agent.clone(), 1);
    let a_id = phone.persist(&mut a);
    phone.edit(&a_id, |d, ag| {
        d.add_witness(ag, t0() + Duration::minutes(20), &witness("W1"))
            .unwrap();
    });
    rewrite_sealed_facts(&mut phone, &a_id);

    let (_, resp, _) = net.exchange(&mut phone);
    assert_eq!(resp.rejections.len(), 1, "{:?}", resp.rejections);
    let rej = &resp.rejections[0];
    assert_eq!(rej.code, RejectionCode::SealedField);
    assert_eq!(
        rej.change_hashes.len(),
        1,
        "only the facts change is refused"
    );
    let mut server_a = net.server.doc(&a_id);
    let view = server_a.view().unwrap();
    assert!(view.sealed);
    assert_eq!(
        view.witnesses.len(),
        1,
        "the witness before the bad change is kept"
    );
    assert_eq!(view.facts, "Motorista auxiliar conduzindo com CNH vencida.");
    // What the server kept is a whole record at the heads before the refused change.
    let refused = rej.change_hashes[0].clone();
    assert!(!sorted_heads(&mut server_a).contains(&refused));
}

/// A device that starts over with an empty store (reinstalled app, same device identity)
/// syncs from cursor 0: the server must send it every record it may see again, whatever it
/// remembers having sent to that device before.
#[test]
fn a_fresh_store_of_the_same_device_receives_everything_again() {
    let mut net = Net::new();
    let (mut phone, a_id, b_id) = phone_with_two_synced_records(&mut net);
    net.sync(&mut phone);

    let mut reinstalled = Device::new(officer_phone());
    assert!(!reinstalled.has(&a_id));
    net.sync(&mut reinstalled);
    assert!(reinstalled.has(&a_id), "record A came back");
    assert!(reinstalled.has(&b_id), "record B came back");
    let mut got = reinstalled.doc(&a_id);
    assert_eq!(
        sorted_heads(&mut got),
        sorted_heads(&mut net.server.doc(&a_id))
    );
}

#[test]
fn decoding_and_vetting_in_parallel_changes_nothing_in_the_outcome() {
    let mut net = Net::new();
    let (mut phone, a, b) = phone_with_two_synced_records(&mut net);
    // A mixed request: a sealed-field edit (refused), a witness on a synced record (accepted
    // as a message), more new records than one window holds, and one whose bytes were cut.
    rewrite_sealed_facts(&mut phone, &a);
    phone.edit(&b, |d, ag| {
        d.add_witness(ag, t0() + Duration::minutes(30), &witness("W1"))
            .unwrap();
    });
    for n in 3..=150 {
        let mut r = issued(&phone.agent.clone(), n);
        phone.persist(&mut r);
    }
    let mut request = phone.sync.build_request(&phone.store).unwrap().request;
    let cut = &mut request.new_records[7].doc.0;
    cut.truncate(cut.len() / 2);
    let who = sender(&phone.agent);
    let now = net.tick();

    // Each run on its own copy of the server's state.
    let run = |workers: usize| {
        let logic = ServerSync {
            workers,
            ..ServerSync::default()
        };
        let mut server = net.server.clone();
        let response = logic
            .handle(&mut server, &who, None, &request, now)
            .unwrap();
        (response, server)
    };
    let (response_1, server_1) = run(1);
    let (response_3, server_3) = run(3);
    assert_eq!(
        serde_json::to_string(&response_1).unwrap(),
        serde_json::to_string(&response_3).unwrap()
    );
    let persisted = |s: &MemServer| s.persisted[net.server.persisted.len()..].to_vec();
    assert_eq!(persisted(&server_1), persisted(&server_3));
    // Persisted a window at a time (two windows of records, then the per-device state), not
    // all at the end.
    assert_eq!(server_3.persist_calls - net.server.persist_calls, 3);

    // And the outcome is the right one, not merely the same twice.
    let r = &response_3;
    assert_eq!(
        r.accepted.len(),
        147 + 1,
        "147 whole records and the witness"
    );
    let mut codes: Vec<RejectionCode> = r.rejections.iter().map(|x| x.code).collect();
    codes.sort_by_key(|c| format!("{c:?}"));
    assert_eq!(
        codes,
        vec![RejectionCode::Malformed, RejectionCode::SealedField]
    );
    let seqs: Vec<u64> = server_3
        .audit
        .iter()
        .skip(net.server.audit.len())
        .map(|(id, _)| server_3.records[id].seq)
        .collect();
    assert_eq!(seqs.len(), 148);
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "seq in request order"
    );
}

// ------------------------------------------------------------------- hostile records (limits)

/// Runs `handle` for `who` over these whole new records, on the calling thread only
/// (`workers = 1`), itself a thread with a 1 MiB stack — half a server thread's: a
/// walk that recursed with the input's nesting overflows it and kills the test process
/// instead of passing by luck on a larger stack.
fn serve_whole(net: &mut Net, who: &Sender, docs: Vec<(Uuid, Vec<u8>)>) -> SyncResponse {
    let request = SyncRequest {
        protocol: sync_core::sync::PROTOCOL_VERSION,
        device_id: who.agent.device_id,
        cursor: 0,
        new_records: docs
            .into_iter()
            .map(|(record_id, doc)| sync_core::sync::NewRecord {
                record_id,
                doc: sync_core::sync::Bytes(doc),
            })
            .collect(),
        messages: Vec::new(),
        device_clock: None,
    };
    let now = net.tick();
    let logic = ServerSync {
        workers: 1,
        ..ServerSync::default()
    };
    let server = &mut net.server;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn_scoped(scope, || {
                let registry = server.registry.take();
                let out = logic.handle(server, who, registry.as_ref(), &request, now);
                server.registry = registry;
                out
            })
            .unwrap()
            .join()
            .unwrap()
    })
    .unwrap()
}

/// A draft by the phone's officer, with `extra` written as one more change (as a hand-made
/// client could): its id and bytes.
fn hand_made(extra: impl FnOnce(&mut automerge::AutoCommit)) -> (Uuid, Vec<u8>) {
    let agent = officer_phone();
    let mut r = RecordDoc::new_infraction(draft(1, t0()), &agent).unwrap();
    let am = r.automerge_mut();
    am.set_actor(agent.actor_id());
    extra(am);
    am.commit();
    (r.id(), r.save())
}

/// A draft written field by field in one change, as a hand-made client could, with `edit`
/// applied in the same change: what an outsider can put into a record's creation.
fn hand_record(edit: impl FnOnce(&mut automerge::AutoCommit)) -> (Uuid, Vec<u8>) {
    let agent = officer_phone();
    let id = Uuid::now_v7();
    let mut am = automerge::AutoCommit::new().with_actor(agent.actor_id());
    am.put(ROOT, "schema_version", 1u64).unwrap();
    am.put(ROOT, "id", id.to_string()).unwrap();
    am.put(ROOT, "kind", "infraction").unwrap();
    am.put(ROOT, "issuing_body", "Guarda Municipal de Americana")
        .unwrap();
    let author = am.put_object(ROOT, "author", ObjType::Map).unwrap();
    am.put(&author, "user_id", agent.user_id.as_str()).unwrap();
    am.put(&author, "role", agent.role.as_str()).unwrap();
    am.put(&author, "device_id", agent.device_id.to_string())
        .unwrap();
    am.put(
        ROOT,
        "occurred_at",
        ScalarValue::Timestamp(t0().timestamp_millis()),
    )
    .unwrap();
    am.put(ROOT, "monotonic", 1u64).unwrap();
    let vehicle = am.put_object(ROOT, "vehicle", ObjType::Map).unwrap();
    am.put(&vehicle, "plate_raw", "GHI7J89").unwrap();
    am.put(&vehicle, "plate", "GHI7J89").unwrap();
    let driver = am.put_object(ROOT, "driver", ObjType::Map).unwrap();
    am.put(&driver, "person", "registry:P08").unwrap();
    am.put(&driver, "role", "auxiliary").unwrap();
    am.put(ROOT, "permit_number", "0004").unwrap();
    am.put(ROOT, "holder_id", "P07").unwrap();
    let charged = am.put_object(ROOT, "charged", ObjType::List).unwrap();
    am.insert(&charged, 0, "registry:P08").unwrap();
    am.insert(&charged, 1, "registry:P07").unwrap();
    am.put(
        ROOT,
        "facts",
        "Motorista auxiliar conduzindo com CNH vencida.",
    )
    .unwrap();
    am.put(
        ROOT,
        "legal_basis",
        r#"[{"rule_id":"R09","citation":"Lei 4.019/2004, art. 8"}]"#,
    )
    .unwrap();
    am.put_object(ROOT, "witnesses", ObjType::List).unwrap();
    am.put_object(ROOT, "photos", ObjType::List).unwrap();
    am.put_object(ROOT, "events", ObjType::List).unwrap();
    edit(&mut am);
    am.commit();
    (id, am.save())
}

/// Maps nested `depth` levels below the root, under the key `x`.
fn nest(am: &mut automerge::AutoCommit, depth: usize) {
    let mut obj = am.put_object(ROOT, "x", ObjType::Map).unwrap();
    for _ in 1..depth {
        obj = am.put_object(&obj, "x", ObjType::Map).unwrap();
    }
}

fn rejection_of(response: &SyncResponse, id: Uuid) -> Option<&sync_core::sync::Rejection> {
    response.rejections.iter().find(|r| r.record_id == id)
}

#[test]
fn a_record_nested_past_the_depth_limit_is_refused_as_malformed_not_a_stack_overflow() {
    use sync_core::limits::MAX_DOCUMENT_DEPTH;
    let mut net = Net::new();
    let who = sender(&officer_phone());
    let good = issued(&officer_phone(), 1).save();
    let good_id = RecordDoc::load(&good).unwrap().id();
    // About 2 KB that nest 500 levels: what took the server down.
    let (deep_id, deep) = hand_made(|am| nest(am, 500));
    let (edge_id, edge) = hand_made(|am| nest(am, MAX_DOCUMENT_DEPTH));
    let (over_id, over) = hand_made(|am| nest(am, MAX_DOCUMENT_DEPTH + 1));
    let response = serve_whole(
        &mut net,
        &who,
        vec![
            (good_id, good),
            (deep_id, deep),
            (edge_id, edge),
            (over_id, over),
        ],
    );
    assert!(response.accepted.iter().any(|a| a.record_id == good_id));
    for id in [deep_id, over_id] {
        let r = rejection_of(&response, id).expect("refused");
        assert_eq!(r.code, RejectionCode::Malformed, "{}", r.message);
        assert!(r.message.contains("aninhados"), "{}", r.message);
    }
    // At the limit the nesting itself is no reason to refuse (the record's creation is kept).
    assert!(
        rejection_of(&response, edge_id).is_none_or(|r| !r.message.contains("aninhados")),
        "{:?}",
        rejection_of(&response, edge_id)
    );
    assert!(net.server.records.contains_key(&good_id));
}

#[test]
fn an_over_limit_record_is_refused_alone_as_too_large_and_the_batch_goes_on() {
    use sync_core::limits::{MAX_FACTS_CHARS, MAX_RECORD_BYTES};
    let mut net = Net::new();
    let who = sender(&officer_phone());
    let good = issued(&officer_phone(), 1).save();
    let good_id = RecordDoc::load(&good).unwrap().id();
    // Facts one character over, written by hand (the app refuses them).
    let (long_id, long) = hand_made(|am| {
        am.put(ROOT, "facts", "é".repeat(MAX_FACTS_CHARS + 1))
            .unwrap();
    });
    // Exactly at the limit: accepted.
    let (edge_id, edge) = hand_made(|am| {
        am.put(ROOT, "facts", "é".repeat(MAX_FACTS_CHARS)).unwrap();
    });
    // Bytes over the record limit are refused before they are decoded.
    let huge_id = Uuid::now_v7();
    let huge = vec![0u8; MAX_RECORD_BYTES + 1];
    let response = serve_whole(
        &mut net,
        &who,
        vec![
            (good_id, good),
            (long_id, long),
            (edge_id, edge),
            (huge_id, huge),
        ],
    );
    assert!(response.accepted.iter().any(|a| a.record_id == good_id));
    assert!(response.accepted.iter().any(|a| a.record_id == edge_id));
    for id in [long_id, huge_id] {
        let r = rejection_of(&response, id).expect("refused");
        assert_eq!(r.code, RejectionCode::TooLarge, "{}", r.message);
    }
    assert_eq!(
        net.server
            .doc(&edge_id.to_string())
            .view()
            .unwrap()
            .facts
            .chars()
            .count(),
        MAX_FACTS_CHARS
    );
    // The long facts never reached the server's copy (the creation before them did).
    assert!(
        net.server
            .records
            .get(&long_id)
            .is_none_or(|r| RecordDoc::load(&r.doc).unwrap().view().unwrap().facts.len() < 100)
    );
}

#[test]
fn evidence_is_validated_on_the_server_with_the_devices_checks() {
    use automerge::AutoCommit;
    type Edit = Box<dyn FnOnce(&mut AutoCommit)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "placa com NUL e <script>",
            Box::new(|am: &mut AutoCommit| {
                let (_, v) = am.get(ROOT, "vehicle").unwrap().unwrap();
                am.put(&v, "plate_raw", "GHI7J89\0<script>").unwrap();
            }),
        ),
        (
            "alvará inexistente",
            Box::new(|am: &mut AutoCommit| am.put(ROOT, "permit_number", "9999").unwrap()),
        ),
        ("latitude 999", {
            Box::new(|am: &mut AutoCommit| {
                let p = am.put_object(ROOT, "position", ObjType::Map).unwrap();
                am.put(&p, "lat", 999.0).unwrap();
                am.put(&p, "lon", -47.3).unwrap();
                am.put(&p, "accuracy_m", 5.0).unwrap();
            })
        }),
        ("precisão negativa", {
            Box::new(|am: &mut AutoCommit| {
                let p = am.put_object(ROOT, "position", ObjType::Map).unwrap();
                am.put(&p, "lat", -22.7).unwrap();
                am.put(&p, "lon", -47.3).unwrap();
                am.put(&p, "accuracy_m", -5.0).unwrap();
            })
        }),
        (
            "veredito que não é JSON",
            Box::new(|am: &mut AutoCommit| am.put(ROOT, "verdict", "{não é json").unwrap()),
        ),
        (
            "ocorrência em 1970",
            Box::new(|am: &mut AutoCommit| {
                am.put(ROOT, "occurred_at", ScalarValue::Timestamp(0))
                    .unwrap();
            }),
        ),
    ];
    let mut net = Net::new();
    let who = sender(&officer_phone());
    let good = issued(&officer_phone(), 1).save();
    let good_id = RecordDoc::load(&good).unwrap().id();
    let (plain_id, plain) = hand_record(|_| {});
    let mut docs = vec![(good_id, good), (plain_id, plain)];
    let mut ids = Vec::new();
    for (what, edit) in cases {
        let (id, bytes) = hand_record(edit);
        ids.push((what, id));
        docs.push((id, bytes));
    }
    let response = serve_whole(&mut net, &who, docs);
    // The hand-made record without the bad value passes: the refusals are about the values.
    for id in [good_id, plain_id] {
        assert!(
            response.accepted.iter().any(|a| a.record_id == id),
            "{response:?}"
        );
    }
    for (what, id) in ids {
        let r = rejection_of(&response, id).unwrap_or_else(|| panic!("{what}: accepted"));
        assert_eq!(r.code, RejectionCode::InvalidField, "{what}: {}", r.message);
        assert!(!net.server.records.contains_key(&id), "{what}");
    }
}

#[test]
fn auto_numbers_must_come_from_the_devices_blocks_and_be_unique() {
    let mut net = Net::new();
    let phone = officer_phone();
    let other = other_officer();
    net.server.leases = Some(vec![
        (phone.device_id, 501, 600),
        (other.device_id, 601, 700),
    ]);
    let numbered = |agent: &Agent, number: &str| {
        let mut d = draft(1, t0());
        d.number = Some(number.to_owned());
        let mut r = RecordDoc::new_infraction(d, agent).unwrap();
        (r.id(), r.save())
    };
    // In the phone's block, at both edges: accepted.
    let (first, a) = numbered(&phone, "501");
    let (last, b) = numbered(&phone, "600");
    // Another device's block, outside every block, not a number at all: refused.
    let (foreign, c) = numbered(&phone, "650");
    let (outside, d) = numbered(&phone, "701");
    let (text, e) = numbered(&phone, "GM-501");
    // The same number twice in one request: the first keeps it.
    let (twice, f) = numbered(&phone, "501");
    let response = serve_whole(
        &mut net,
        &sender(&phone),
        vec![
            (first, a),
            (last, b),
            (foreign, c),
            (outside, d),
            (text, e),
            (twice, f),
        ],
    );
    for id in [first, last] {
        assert!(
            response.accepted.iter().any(|x| x.record_id == id),
            "{response:?}"
        );
    }
    for id in [foreign, outside, text] {
        let r = rejection_of(&response, id).expect("refused");
        assert_eq!(r.code, RejectionCode::NumberNotLeased, "{}", r.message);
        assert!(!net.server.records.contains_key(&id));
    }
    assert_eq!(
        rejection_of(&response, twice).expect("refused").code,
        RejectionCode::NumberTaken
    );
    // Another officer with 501 (leased to someone else, and held): refused as taken.
    let (other_501, g) = numbered(&other, "501");
    let (other_ok, h) = numbered(&other, "601");
    let response = serve_whole(
        &mut net,
        &sender(&other),
        vec![(other_501, g), (other_ok, h)],
    );
    assert_eq!(
        rejection_of(&response, other_501).expect("refused").code,
        RejectionCode::NumberTaken
    );
    assert!(response.accepted.iter().any(|x| x.record_id == other_ok));
    assert_eq!(net.server.numbers["501"], first);
}

#[test]
fn bytes_that_make_the_library_panic_are_one_malformed_record_not_a_failed_exchange() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/record_doc");
    let mut panicking: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("automerge-panic"))
        })
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert!(
        !panicking.is_empty(),
        "no automerge-panic input in {}",
        dir.display()
    );
    let bad = panicking.remove(0);
    assert!(
        std::panic::catch_unwind(|| automerge::AutoCommit::load(&bad)).is_err(),
        "the corpus input no longer makes the library panic"
    );
    let mut net = Net::new();
    let who = sender(&officer_phone());
    let good = issued(&officer_phone(), 1).save();
    let good_id = RecordDoc::load(&good).unwrap().id();
    let bad_id = Uuid::now_v7();
    for workers in [1, 4] {
        net.logic.workers = workers;
        let request = SyncRequest {
            protocol: sync_core::sync::PROTOCOL_VERSION,
            device_id: who.agent.device_id,
            cursor: 0,
            new_records: vec![
                sync_core::sync::NewRecord {
                    record_id: bad_id,
                    doc: sync_core::sync::Bytes(bad.clone()),
                },
                sync_core::sync::NewRecord {
                    record_id: good_id,
                    doc: sync_core::sync::Bytes(good.clone()),
                },
            ],
            messages: vec![sync_core::sync::DocMessage {
                record_id: Uuid::now_v7(),
                message: sync_core::sync::Bytes(bad.clone()),
            }],
            device_clock: None,
        };
        let body = serde_json::to_vec(&request).unwrap();
        let response: SyncResponse = serde_json::from_slice(&net.serve(&who, &body)).unwrap();
        assert!(response.accepted.iter().any(|a| a.record_id == good_id));
        let r = rejection_of(&response, bad_id).expect("refused");
        assert_eq!(r.code, RejectionCode::Malformed, "{}", r.message);
    }
    assert!(net.server.records.contains_key(&good_id));
    assert!(!net.server.records.contains_key(&bad_id));
    // Kept as evidence.
    assert!(
        net.server
            .quarantine
            .iter()
            .any(|(id, code, _)| *id == bad_id && *code == RejectionCode::Malformed)
    );
}

#[test]
fn a_response_whose_bytes_make_the_library_panic_does_not_crash_the_device() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/record_doc");
    let bad = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("automerge-panic"))
        })
        .map(|p| std::fs::read(p).unwrap())
        .unwrap();
    let mut net = Net::new();
    let (mut phone, a_id, _) = phone_with_two_synced_records(&mut net);
    let request = phone.sync.build_request(&phone.store).unwrap().request;
    let bad_id = Uuid::now_v7();
    let good = issued(&phone.agent.clone(), 3).save();
    let good_id = RecordDoc::load(&good).unwrap().id();
    // A hostile or broken server: a record whose bytes make automerge panic, the same bytes
    // as a message for a record the device has, and one good record.
    let response = SyncResponse {
        cursor: request.cursor,
        accepted: Vec::new(),
        messages: vec![sync_core::sync::DocMessage {
            record_id: a_id.parse().unwrap(),
            message: sync_core::sync::Bytes(bad.clone()),
        }],
        new_records: vec![
            sync_core::sync::NewRecord {
                record_id: bad_id,
                doc: sync_core::sync::Bytes(bad),
            },
            sync_core::sync::NewRecord {
                record_id: good_id,
                doc: sync_core::sync::Bytes(good),
            },
        ],
        rejections: Vec::new(),
        more: false,
    };
    let report = phone
        .sync
        .apply_response(&mut phone.store, &request, &response, t0())
        .unwrap();
    assert!(
        report
            .issues
            .iter()
            .any(|i| i.record_id == bad_id.to_string() && i.code == RejectionCode::Malformed),
        "{:?}",
        report.issues
    );
    assert!(!phone.has(&bad_id.to_string()));
    assert!(phone.has(&good_id.to_string()));
    // The record the bad message was about is as it was.
    phone.doc(&a_id).view().unwrap();
}

// ------------------------------------------------------------------------ device seals

/// A draft of `agent` and a seal made for it as it stands (by issuing a copy), to forge with.
fn draft_and_its_seal(agent: &Agent, key: &DeviceKey) -> (RecordDoc, serde_json::Value) {
    let at = t0();
    let mut d = RecordDoc::new_infraction(draft(1, at), agent).unwrap();
    d.confirm_vehicle(agent, at).unwrap();
    let mut copy = d.fork();
    copy.issue(agent, at + Duration::minutes(1), missing(), key)
        .unwrap();
    let seal = serde_json::to_value(copy.view().unwrap().seal.unwrap()).unwrap();
    (d, seal)
}

fn missing() -> Signature {
    Signature::Missing {
        reason: "recusou-se a assinar".into(),
    }
}

/// Issues `doc` by hand in one change with `seal` (`None`: no seal), as a hostile client could.
fn forge_issue(doc: &mut RecordDoc, agent: &Agent, seal: Option<&serde_json::Value>) {
    let am = doc.automerge_mut();
    am.set_actor(agent.actor_id());
    am.put(
        ROOT,
        "signature",
        serde_json::to_string(&missing()).unwrap(),
    )
    .unwrap();
    if let Some(seal) = seal {
        am.put(ROOT, "seal", seal.to_string()).unwrap();
    }
    am.commit();
    raw_event(doc, agent, t0() + Duration::minutes(1), "issued", "");
}

/// `forge_issue`, but the seal, signature and `issued` event in one change (as `issue` writes).
fn forge_issue_one_change(doc: &mut RecordDoc, agent: &Agent, seal: Option<&serde_json::Value>) {
    let am = doc.automerge_mut();
    am.set_actor(agent.actor_id());
    am.put(
        ROOT,
        "signature",
        serde_json::to_string(&missing()).unwrap(),
    )
    .unwrap();
    if let Some(seal) = seal {
        am.put(ROOT, "seal", seal.to_string()).unwrap();
    }
    let (_, list) = am.get(ROOT, "events").unwrap().unwrap();
    let len = am.length(&list);
    let obj = am.insert_object(&list, len, ObjType::Map).unwrap();
    am.put(&obj, "id", Uuid::now_v7().to_string()).unwrap();
    am.put(&obj, "kind", "issued").unwrap();
    let at = t0() + Duration::minutes(1);
    am.put(&obj, "at", ScalarValue::Timestamp(at.timestamp_millis()))
        .unwrap();
    am.put(&obj, "user_id", agent.user_id.as_str()).unwrap();
    am.put(&obj, "role", agent.role.as_str()).unwrap();
    am.put(&obj, "device_id", agent.device_id.to_string())
        .unwrap();
    am.commit();
}

fn refusal(net: &mut Net, who: &Sender, doc: &mut RecordDoc) -> Option<(RejectionCode, String)> {
    let id = doc.id();
    let response = serve_whole(net, who, vec![(id, doc.save())]);
    rejection_of(&response, id).map(|r| (r.code, r.message.clone()))
}

#[test]
fn a_record_sealed_by_the_authors_registered_key_is_accepted() {
    let mut net = Net::new();
    let phone = officer_phone();
    let (mut d, _) = draft_and_its_seal(&phone, key_of(&phone));
    d.issue(
        &phone,
        t0() + Duration::minutes(1),
        missing(),
        key_of(&phone),
    )
    .unwrap();
    assert_eq!(refusal(&mut net, &sender(&phone), &mut d), None);
    assert!(net.server.records.contains_key(&d.id()));
}

#[test]
fn tampered_facts_a_tampered_signature_or_an_unregistered_key_are_refused_at_sync() {
    let phone = officer_phone();
    let who = sender(&phone);
    // The facts changed after the device signed them.
    let (mut d, seal) = draft_and_its_seal(&phone, key_of(&phone));
    d.set_facts(&phone, t0(), "Outros fatos, não os assinados.")
        .unwrap();
    forge_issue_one_change(&mut d, &phone, Some(&seal));
    let (code, message) = refusal(&mut Net::new(), &who, &mut d).expect("refused");
    assert_eq!(code, RejectionCode::SealInvalid);
    assert!(message.contains("não confere com a prova"), "{message}");
    // The signature altered.
    let (mut d, mut seal) = draft_and_its_seal(&phone, key_of(&phone));
    let sig = seal["signature"].as_str().unwrap().to_owned();
    let flipped = if sig.starts_with('0') { "1" } else { "0" };
    seal["signature"] = format!("{flipped}{}", &sig[1..]).into();
    forge_issue_one_change(&mut d, &phone, Some(&seal));
    let (code, _) = refusal(&mut Net::new(), &who, &mut d).expect("refused");
    assert_eq!(code, RejectionCode::SealInvalid);
    // A valid seal by a key the server never registered for this device.
    let stranger = DeviceKey::generate().unwrap();
    let (mut d, _) = draft_and_its_seal(&phone, &stranger);
    d.issue(&phone, t0() + Duration::minutes(1), missing(), &stranger)
        .unwrap();
    let (code, message) = refusal(&mut Net::new(), &who, &mut d).expect("refused");
    assert_eq!(code, RejectionCode::SealInvalid);
    assert!(message.contains("não está registrada"), "{message}");
}

#[test]
fn a_seal_outside_the_issuing_change_or_missing_is_refused_unless_the_device_has_no_key() {
    let phone = officer_phone();
    let who = sender(&phone);
    // The seal written in one change and the issue in another: a seal outside the issue.
    let (mut d, seal) = draft_and_its_seal(&phone, key_of(&phone));
    forge_issue(&mut d, &phone, Some(&seal));
    let (code, message) = refusal(&mut Net::new(), &who, &mut d).expect("refused");
    assert_eq!(code, RejectionCode::SealInvalid, "{message}");
    // No seal from a device that registered a key before it issued.
    let (mut d, _) = draft_and_its_seal(&phone, key_of(&phone));
    d.issue_unsealed(&phone, t0() + Duration::minutes(1), missing())
        .unwrap();
    let (code, message) = refusal(&mut Net::new(), &who, &mut d).expect("refused");
    assert_eq!(code, RejectionCode::SealInvalid);
    assert!(message.contains("sem a assinatura"), "{message}");
    // The same from an app that never had a key (or issued before registering one): accepted.
    let legacy = Sender {
        device_keys: Vec::new(),
        ..sender(&phone)
    };
    assert_eq!(refusal(&mut Net::new(), &legacy, &mut d), None);
    let later = Sender {
        device_keys: vec![RegisteredKey {
            public_key: key_of(&phone).public_key(),
            registered_at: t0() + Duration::hours(1),
        }],
        ..sender(&phone)
    };
    assert_eq!(refusal(&mut Net::new(), &later, &mut d), None);
}

#[test]
fn a_seal_changed_after_issue_is_refused_as_sealed_evidence() {
    let mut net = Net::new();
    let phone = officer_phone();
    let who = sender(&phone);
    let mut d = issued(&phone, 1);
    assert_eq!(refusal(&mut net, &who, &mut d), None);
    let mut seal = serde_json::to_value(d.view().unwrap().seal.unwrap()).unwrap();
    seal["evidence_sha256"] = "0".repeat(64).into();
    let am = d.automerge_mut();
    am.set_actor(phone.actor_id());
    am.put(ROOT, "seal", seal.to_string()).unwrap();
    am.commit();
    let id = d.id();
    let response = serve_whole(&mut net, &who, vec![(id, d.save())]);
    let r = rejection_of(&response, id).expect("refused");
    assert_eq!(r.code, RejectionCode::SealedField, "{}", r.message);
}

#[test]
fn a_vehicle_confirmation_written_on_another_device_is_rejected_and_quarantined() {
    let mut net = Net::new();
    let mut phone = Device::new(officer_phone());
    let mut tablet = Device::new(officer_tablet());
    // A draft made on the phone, unconfirmed, reaches the officer's tablet.
    let mut r = RecordDoc::new_infraction(draft(1, t0()), &phone.agent.clone()).unwrap();
    let id = phone.persist(&mut r);
    net.sync(&mut phone);
    net.sync(&mut tablet);
    tablet.edit(&id, |d, ag| {
        // The API refuses it on the tablet; written behind its back, in the tablet's name.
        assert!(d.confirm_vehicle(ag, t0()).is_err());
        let json = serde_json::json!({
            "user_id": GM17,
            "device_id": ag.device_id,
            "at": t0(),
            "plate": "GHI7J89",
        })
        .to_string();
        let am = d.automerge_mut();
        am.set_actor(ag.actor_id());
        am.put(ROOT, "vehicle_confirmation", json).unwrap();
        am.commit();
    });
    let (_, resp, _) = net.exchange(&mut tablet);
    assert_eq!(resp.rejections.len(), 1, "{:?}", resp.rejections);
    assert!(
        resp.rejections[0]
            .message
            .contains("confirmação do veículo"),
        "{}",
        resp.rejections[0].message
    );
    assert!(
        net.server
            .doc(&id)
            .view()
            .unwrap()
            .vehicle_confirmation
            .is_none()
    );
    assert_eq!(net.server.quarantine.len(), 1);

    // The phone, where the record was made, confirms it: accepted.
    phone.edit(&id, |d, ag| {
        d.confirm_vehicle(ag, t0() + Duration::minutes(1)).unwrap();
    });
    let (_, resp, _) = net.exchange(&mut phone);
    assert!(resp.rejections.is_empty(), "{:?}", resp.rejections);
    assert!(net.server.doc(&id).view().unwrap().vehicle_confirmed());
}
