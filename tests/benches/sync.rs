//! Sync benchmark: `cargo bench --bench sync` (build the server first in release:
//! `cargo build --release -p taxi-fiscal-server --bin taxi-fiscal`; or set TAXI_FISCAL_BIN).
//!
//! The real server on loopback (a demo data directory whose registry is replaced by a
//! generated one of 40,000 permits through `taxi-fiscal import`), real device stores (on a RAM
//! disk when there is one, so that creating the records is fast; the measured exchanges commit
//! one transaction per response either way) and the real client. One JSON line per
//! measurement on stdout:
//!
//! - `registry_bootstrap`: a new device downloads and applies the whole registry (zstd
//!   snapshot); `bytes` = compressed body;
//! - `sync_new` (1,000 and 10,000 records): from "the device has N new records" to "the server
//!   has them all committed and the device stored the acknowledgements"; round trips and wire
//!   bytes (compressed bodies) counted by the client; baselines measured in the same run:
//!   `automerge_bytes` = Σ `save()` of the records, `inmem_ms` = a plain in-memory Automerge
//!   sync of the same documents into empty ones (messages encoded and decoded);
//! - `sync_noop`: the device with 10,000 records already in sync syncs again.
//!
//! Diagnostics and the comparison with the targets go to stderr. `TAXI_FISCAL_BENCH_QUICK=1`
//! shrinks everything tenfold (a smoke run of the bench itself, e.g. in a debug build);
//! `TAXI_FISCAL_BENCH_REPEAT=n` measures the 1,000-record exchange n times (fresh devices, the
//! same server) and `TAXI_FISCAL_BENCH_SKIP_10K=1` stops after it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench: fail loudly

use std::path::PathBuf;
use std::time::Instant;

use automerge::Automerge;
use automerge::sync::{Message, State, SyncDoc};
use chrono::Duration as Days;
use e2e::api::ADMIN;
use e2e::registry_gen;
use e2e::{Api, Device, Server};
use serde_json::json;
use sync_core::client::ClientOptions;
use sync_core::domain::{DriverId, Plate};
use sync_core::field::NewInfraction;
use sync_core::records::{LegalBasis, Signature};
use sync_core::rules::{Observation, RuleId, VehicleQuery};
use sync_core::store::Store;

/// Tenfold smaller with `TAXI_FISCAL_BENCH_QUICK=1`.
fn scale(n: usize) -> usize {
    if std::env::var("TAXI_FISCAL_BENCH_QUICK").is_ok_and(|v| v == "1") {
        n / 10
    } else {
        n
    }
}

/// A count from the environment, `default` when unset or not a number.
fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ms(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap()
}

/// A device store on the RAM disk if the machine has one.
fn device_dir() -> tempfile::TempDir {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(&shm)
    {
        return d;
    }
    tempfile::tempdir().unwrap()
}

fn new_device(server: &Server, admin: &Api, name: &str, dir: &tempfile::TempDir) -> Device {
    admin.add_user_with_device(
        name,
        "senha-bench",
        "officer",
        None,
        &format!("tablet-{name}"),
    );
    let store = Store::open(dir.path().join(format!("{name}.db"))).unwrap();
    let mut d = Device::with_store(
        name,
        store,
        &server.url,
        &format!("tablet-{name}"),
        Days::zero(),
    );
    d.login_again(name, "senha-bench");
    d
}

/// `n` issued autos de infração on generated permits, with enough auto numbers leased first.
fn create_records(d: &mut Device, n: usize, taxis: &[(Plate, DriverId)]) -> Vec<String> {
    d.set_options(ClientOptions {
        number_low_water: n as u64 + 1,
        number_block_size: Some(5_000),
        ..ClientOptions::default()
    });
    while d.store.numbers_left().unwrap() < n as u64 {
        d.top_up_numbers().expect("a block");
    }
    d.set_options(ClientOptions::default());
    let t = Instant::now();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let (plate, driver) = &taxis[(i * 7_919) % taxis.len()];
        let at = d.now();
        let out = d
            .field()
            .create_infraction(NewInfraction {
                vehicle: VehicleQuery::Plate(plate.clone()),
                driver: driver.clone(),
                driver_name: None,
                at,
                monotonic: i as u64,
                observation: Observation::default(),
                position: None,
                facts: Some(format!("Auto de teste {i}: recusa de passageiro.")),
                extra_legal_basis: vec![LegalBasis::of(RuleId::R24)],
                witnesses: Vec::new(),
                photos: Vec::new(),
                confirm_vehicle: true,
                issue: Some(Signature::Missing {
                    reason: "recusou-se a assinar".into(),
                }),
            })
            .unwrap();
        ids.push(out.id);
    }
    eprintln!("{}: {n} records created in {} ms", d.name, ms(t));
    ids
}

/// Σ save() of the records, and a plain in-memory Automerge sync of each into an empty doc.
fn baselines(d: &Device, ids: &[String]) -> (u64, u64) {
    let docs: Vec<Vec<u8>> = ids.iter().map(|id| d.doc(id).save()).collect();
    let bytes: u64 = docs.iter().map(|b| b.len() as u64).sum();
    let mut loaded: Vec<Automerge> = docs.iter().map(|b| Automerge::load(b).unwrap()).collect();
    let t = Instant::now();
    for a in &mut loaded {
        let mut b = Automerge::new();
        let (mut sa, mut sb) = (State::new(), State::new());
        loop {
            let mut moved = false;
            if let Some(m) = a.generate_sync_message(&mut sa) {
                b.receive_sync_message(&mut sb, Message::decode(&m.encode()).unwrap())
                    .unwrap();
                moved = true;
            }
            if let Some(m) = b.generate_sync_message(&mut sb) {
                a.receive_sync_message(&mut sa, Message::decode(&m.encode()).unwrap())
                    .unwrap();
                moved = true;
            }
            if !moved {
                break;
            }
        }
        assert_eq!(a.get_heads(), b.get_heads());
    }
    (bytes, ms(t))
}

fn sync_new(d: &mut Device, ids: &[String]) {
    let (automerge_bytes, inmem_ms) = baselines(d, ids);
    d.client().reset_wire_stats();
    let t = Instant::now();
    let r = d.sync_records();
    let took = ms(t);
    let wire = d.client().wire_stats();
    assert_eq!(r.acked as usize, ids.len(), "{r:?}");
    assert_eq!(r.rejected, 0);
    assert_eq!(d.client().status(&d.store).unwrap().pending_records, 0);
    println!(
        "{}",
        json!({"bench": "sync_new", "records": ids.len(), "round_trips": wire.requests,
               "bytes_up": wire.bytes_up, "bytes_down": wire.bytes_down, "ms": took,
               "automerge_bytes": automerge_bytes, "inmem_ms": inmem_ms})
    );
    eprintln!(
        "  sync_new {}: prepare {} ms, exchange {} ms, apply {} ms",
        ids.len(),
        r.ms_prepare,
        r.ms_exchange,
        r.ms_apply
    );
    eprintln!(
        "  sync_new {}: round trips {} (≤ 3), up/automerge {:.2} (≤ 1.2), ms/inmem {:.2} (≤ 2)",
        ids.len(),
        wire.requests,
        wire.bytes_up as f64 / automerge_bytes as f64,
        took as f64 / inmem_ms.max(1) as f64
    );
}

fn main() {
    let permits = scale(40_000);
    let data_dir = tempfile::tempdir().unwrap();
    let mut server = Server::start_demo(&data_dir.path().join("dados"));
    eprintln!("server {} ({})", server.url, server.bin().display());

    // The registry of a big city: replace the demo's through the import command, with a
    // configuration whose art. 14 cap admits it.
    let t = Instant::now();
    let mut registry = Api::login(&server.url, e2e::api::OFFICE).registry();
    registry_gen::extend(&mut registry, permits);
    // Every taxi with its holder at the wheel: what the officers check.
    let people: std::collections::BTreeMap<&str, &sync_core::domain::Person> =
        registry.people.iter().map(|p| (p.id.as_str(), p)).collect();
    let taxis: Vec<(Plate, DriverId)> = registry
        .permits
        .iter()
        .zip(&registry.vehicles)
        .map(|(p, v)| {
            assert_eq!(p.vehicle_id, v.id);
            (
                v.plate.clone(),
                DriverId::Cpf(people[p.holder_id.as_str()].cpf.clone()),
            )
        })
        .collect();
    let csv = taxi_fiscal_server::registry::csv::export(&registry).unwrap();
    let csv_path = data_dir.path().join("cadastro.csv");
    std::fs::write(&csv_path, csv).unwrap();
    server.kill();
    let rules_path = server.data.join("rules-config.json");
    let mut rules: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&rules_path).unwrap()).unwrap();
    rules["census_population"] = json!(100_000_000);
    rules["inhabitants_per_taxi"] = json!(1_000);
    std::fs::write(&rules_path, serde_json::to_vec_pretty(&rules).unwrap()).unwrap();
    let out = server.cli(&["import", csv_path.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "import: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    server.restart();
    eprintln!("registry of {permits} permits imported in {} ms", ms(t));
    let admin = Api::login(&server.url, ADMIN);

    // registry_bootstrap
    let dirs = device_dir();
    let mut small = new_device(&server, &admin, "bench1k", &dirs);
    small.client().reset_wire_stats();
    let t = Instant::now();
    let pull = small.pull_registry();
    let took = ms(t);
    assert_eq!(
        small.store.status().unwrap().counts.permits as usize,
        permits
    );
    println!(
        "{}",
        json!({"bench": "registry_bootstrap", "permits": permits, "bytes": pull.bytes,
               "ms": took})
    );
    eprintln!(
        "  registry_bootstrap: {:.2} MB (≤ 5 MB)",
        pull.bytes as f64 / 1e6
    );

    // sync_new, 1,000 records (again on fresh devices with `TAXI_FISCAL_BENCH_REPEAT=n`: one
    // exchange is a single sample, and the machine's noise is of the same order as the target)
    let ids = create_records(&mut small, scale(1_000), &taxis);
    sync_new(&mut small, &ids);
    for i in 1..env_number("TAXI_FISCAL_BENCH_REPEAT", 1) {
        let mut again = new_device(&server, &admin, &format!("bench1k-{i}"), &dirs);
        again.pull_registry();
        let ids = create_records(&mut again, scale(1_000), &taxis);
        sync_new(&mut again, &ids);
    }
    if std::env::var("TAXI_FISCAL_BENCH_SKIP_10K").is_ok_and(|v| v == "1") {
        return;
    }

    // sync_new, 10,000 records, then sync_noop on the same device
    let mut big = new_device(&server, &admin, "bench10k", &dirs);
    big.pull_registry();
    let ids = create_records(&mut big, scale(10_000), &taxis);
    sync_new(&mut big, &ids);

    big.client().reset_wire_stats();
    let t = Instant::now();
    let r = big.sync_records();
    let took = ms(t);
    let wire = big.client().wire_stats();
    assert_eq!((r.sent_new, r.sent_changes, r.received), (0, 0, 0), "{r:?}");
    println!(
        "{}",
        json!({"bench": "sync_noop", "records": ids.len(), "round_trips": wire.requests,
               "bytes": wire.bytes_up + wire.bytes_down, "ms": took})
    );
    eprintln!(
        "  sync_noop: round trips {} (1), {} B (≤ 2 KB)",
        wire.requests,
        wire.bytes_up + wire.bytes_down
    );
}
