//! Sync benchmark: `cargo bench --bench sync` (build the server first in release:
//! `cargo build --release -p taxi-fiscal-server --bin taxi-fiscal`; or set TAXI_FISCAL_BIN).
//!
//! The real server on loopback (a demo data directory whose registry is replaced by a
//! generated one of 40,000 permits, loaded by the real `taxi-fiscal import` of its CSV),
//! real device stores (on a RAM
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

use std::time::Instant;

use automerge::Automerge;
use automerge::sync::{Message, State, SyncDoc};
use e2e::api::ADMIN;
use e2e::bench::{self, create_records, env_number, ms, new_device, scale};
use e2e::{Api, Device, Server};
use serde_json::json;

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
    // The records still pending: the last ones written (`create_records` syncs between blocks
    // of auto numbers, the server leasing no block to a device with 1,000 unused numbers).
    let pending = d.client().status(&d.store).unwrap().pending_records as usize;
    if pending < ids.len() {
        eprintln!(
            "  note: {} of the {} records were synced between number blocks; the exchange \
             measured carries the last {pending}",
            ids.len() - pending,
            ids.len()
        );
    }
    let ids = &ids[ids.len() - pending..];
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

    // The registry of a big city in place of the demo's.
    let registry = bench::big_registry(&server, permits);
    let taxis = bench::taxis(&registry);
    let import = bench::import_cli(&mut server, data_dir.path(), &registry);
    eprintln!("registry of {permits} permits imported in {} ms", import.ms);
    let admin = Api::login(&server.url, ADMIN);

    // registry_bootstrap
    let dirs = bench::device_dir();
    let mut small = new_device(&server, &admin, "bench1k", dirs.path());
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
        let mut again = new_device(&server, &admin, &format!("bench1k-{i}"), dirs.path());
        again.pull_registry();
        let ids = create_records(&mut again, scale(1_000), &taxis);
        sync_new(&mut again, &ids);
    }
    if std::env::var("TAXI_FISCAL_BENCH_SKIP_10K").is_ok_and(|v| v == "1") {
        return;
    }

    // sync_new, 10,000 records, then sync_noop on the same device
    let mut big = new_device(&server, &admin, "bench10k", dirs.path());
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
