//! Two server nodes on one PostgreSQL database, as a city runs them behind a load balancer:
//! devices sync to node A while the office works on node B; A is SIGKILLed in the middle of
//! syncs and the devices finish on B; every record is stored once, the devices and both nodes
//! hold the same heads, the audit chain verifies from either node's command line, and the
//! office's logins — API tokens and browser sessions alike, opened on either node — outlive A.
//!
//! The nodes share the database and two secrets, as the production guide says: the access
//! tokens' key (`TAXI_FISCAL_JWT_SECRET`) and the receipts' signing key (the file copied from
//! A's data directory to B's).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use chrono::Duration as Days;
use e2e::api::{ADMIN, OFFICE, OfficeSession};
use e2e::{Api, Device, Server};

/// Kill rounds, and the records each of two devices writes before each round's sync.
const KILL_ROUNDS: u32 = 4;
const RECORDS_PER_ROUND: usize = 20;

/// The tokens' key both nodes are given (at least 32 bytes).
const SHARED_SECRET: &str = "segredo-compartilhado-pelos-dois-nos-0123456789";

struct Nodes {
    a: Server,
    b: Server,
    _dir: tempfile::TempDir,
}

/// Node A on a new database, then node B on the same one with A's signing key.
fn two_nodes() -> Nodes {
    let dir = tempfile::tempdir().unwrap();
    let url = e2e::pg::fresh_database();
    let env = || vec![("TAXI_FISCAL_JWT_SECRET", SHARED_SECRET.to_owned())];
    // A seeds the demo registry and users into the empty database; B finds them there.
    let a = Server::start_demo_pg(&dir.path().join("a"), &url, env());
    let b_data = dir.path().join("b");
    std::fs::create_dir_all(&b_data).unwrap();
    let key = taxi_fiscal_server::store::receipts::SIGNING_KEY_FILE;
    std::fs::copy(a.data.join(key), b_data.join(key)).unwrap();
    let b = Server::start_demo_pg(&b_data, &url, env());
    Nodes { a, b, _dir: dir }
}

/// Records on the server, by id, with their heads (through `office`'s node).
fn records(office: &Api) -> BTreeMap<String, Vec<String>> {
    let all = office.all_records();
    let n = all.len();
    let map: BTreeMap<String, Vec<String>> = all.into_iter().collect();
    assert_eq!(map.len(), n, "a record twice on the server");
    map
}

/// Each device writes `RECORDS_PER_ROUND` autos, then both sync at once to their node; when
/// `kill` is given, `node` is SIGKILLed that long after the syncs start. The syncs that failed.
fn write_and_sync(
    devices: &mut [&mut Device],
    node: &mut Server,
    taxi: (&str, &str),
    round: u32,
    created: &mut BTreeSet<String>,
    kill: Option<Duration>,
) -> (Duration, usize) {
    for (k, d) in devices.iter_mut().enumerate() {
        for i in 0..RECORDS_PER_ROUND {
            let r = d.infraction(
                taxi.0,
                taxi.1,
                &format!("Auto {i} do aparelho {k}, rodada {round}."),
            );
            created.insert(r.id);
        }
    }
    let t = Instant::now();
    let failed = std::thread::scope(|scope| {
        let syncs: Vec<_> = devices
            .iter_mut()
            .map(|d| scope.spawn(move || d.sync()))
            .collect();
        if let Some(delay) = kill {
            std::thread::sleep(delay);
            node.kill();
        }
        syncs
            .into_iter()
            .map(|s| s.join().unwrap())
            .filter(|s| !s.ok)
            .count()
    });
    (t.elapsed(), failed)
}

#[test]
fn two_nodes_on_one_database_lose_nothing_when_one_is_killed_mid_sync() {
    let Nodes { mut a, b, _dir } = two_nodes();
    // The office works on B: the API and the pages. Its logins were made before any kill.
    let office_b = Api::login(&b.url, OFFICE);
    let pages_b = OfficeSession::login(&b.url);
    // A browser session opened on A is served by B (sessions are in the database), and one
    // opened on B by A: no sticky sessions needed.
    let pages_a = OfficeSession::login(&a.url);
    assert!(
        pages_a
            .on(&b.url)
            .page("/escritorio")
            .contains("Caixa de entrada")
    );
    assert!(
        pages_b
            .on(&a.url)
            .page("/escritorio")
            .contains("Caixa de entrada")
    );
    // A login made on A is good on B (same key, refresh tokens in the shared database).
    let mut office_from_a = Api::login(&a.url, OFFICE);
    office_from_a.url = b.url.clone();
    assert_eq!(office_from_a.get("/v1/records?limit=1").0, 200);

    let admin = Api::login(&a.url, ADMIN);
    admin.add_user_with_device(
        "fiscal2",
        "fiscal2-senha",
        "officer",
        None,
        "tablet-fiscal-02",
    );
    let mut d1 = Device::login(
        "fiscal",
        &a.url,
        "tablet-fiscal-01",
        "fiscal",
        "fiscal-demo",
        Days::zero(),
    );
    let mut d2 = Device::login(
        "fiscal2",
        &a.url,
        "tablet-fiscal-02",
        "fiscal2",
        "fiscal2-senha",
        Days::zero(),
    );
    for d in [&mut d1, &mut d2] {
        let s = d.sync_ok();
        assert!(s.registry.is_some() && s.numbers.is_some(), "{s:?}");
    }
    // A taxi of the registry both devices downloaded from A.
    let reg = d1.store.export_registry().unwrap();
    let permit = &reg.permits[0];
    let plate = reg
        .vehicles
        .iter()
        .find(|v| v.id == permit.vehicle_id)
        .unwrap()
        .plate
        .canonical()
        .to_owned();
    let cpf = reg
        .people
        .iter()
        .find(|p| p.id == permit.holder_id)
        .unwrap()
        .cpf
        .as_str()
        .to_owned();
    let taxi = (plate.as_str(), cpf.as_str());

    // 1. Synced to A, seen on B at once: one database.
    let mut created = BTreeSet::new();
    let (whole, failed) =
        write_and_sync(&mut [&mut d1, &mut d2], &mut a, taxi, 0, &mut created, None);
    assert_eq!(failed, 0);
    let on_b = records(&office_b);
    for id in &created {
        assert!(on_b.contains_key(id), "record {id} synced to A is not on B");
    }

    // 2. A is killed across the exchange (before the request, while it decodes and commits,
    //    after the commit and before the answer); the devices finish on B, then A comes back.
    let mut interrupted = 0;
    for round in 1..=KILL_ROUNDS {
        let delay = whole * (2 * round - 1) / (2 * KILL_ROUNDS);
        let (_, failed) = write_and_sync(
            &mut [&mut d1, &mut d2],
            &mut a,
            taxi,
            round,
            &mut created,
            Some(delay),
        );
        interrupted += failed;
        for d in [&mut d1, &mut d2] {
            d.use_url(&b.url);
            d.sync_ok();
        }
        let on_b = records(&office_b);
        assert_eq!(
            on_b.len(),
            created.len(),
            "round {round}: every record exactly once on B"
        );
        a.restart();
        for d in [&mut d1, &mut d2] {
            d.use_url(&a.url);
        }
    }
    assert!(
        interrupted > 0,
        "no kill landed during a sync (one sync: {whole:?})"
    );

    // 3. Converged: the devices and both nodes hold the same heads for every record.
    let on_b = records(&office_b);
    let mut office_a = Api::login(&a.url, OFFICE);
    assert_eq!(records(&office_a), on_b, "the two nodes disagree");
    office_a.url = b.url.clone();
    for d in [&d1, &d2] {
        assert_eq!(d.client().status(&d.store).unwrap().pending_records, 0);
        for id in d.record_ids() {
            assert_eq!(
                Some(&d.heads(&id)),
                on_b.get(&id),
                "{}: record {id}",
                d.name
            );
        }
    }
    assert_eq!(on_b.len(), created.len());

    // 4. The chain verifies from either node's command line; the office's logins made before
    //    the kills still work on B.
    for node in [&a, &b] {
        let (ok, out) = node.audit_verify();
        assert!(ok, "audit verify on {}: {out}", node.url);
    }
    assert_eq!(office_b.get("/v1/records?limit=1").0, 200);
    assert_eq!(office_from_a.get("/v1/records?limit=1").0, 200);
    assert!(pages_b.page("/escritorio").contains("Caixa de entrada"));
    // The session opened on A before its kills lives on, on B and on the restarted A.
    assert!(
        pages_a
            .on(&b.url)
            .page("/escritorio")
            .contains("Caixa de entrada")
    );
    assert!(pages_a.page("/escritorio").contains("Caixa de entrada"));
}
