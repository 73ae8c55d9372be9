//! Backends and nodes benchmark: `cargo bench --bench nodes` (build the server first in
//! release: `cargo build --release -p taxi-fiscal-server --bin taxi-fiscal`; or set
//! TAXI_FISCAL_BIN), with a PostgreSQL server at `TAXI_FISCAL_TEST_POSTGRES_URL` (a throwaway
//! one: `./scripts/test-postgres start DIR` prints its URL; `stop DIR` ends it).
//!
//! `TAXI_FISCAL_NODES_DEVICES` (default 50) devices sync at once for `TAXI_FISCAL_NODES_SECS`
//! seconds (default 30), each writing one auto and syncing it, again and again, on three
//! set-ups: the embedded SQLite default (one node), PostgreSQL with one node, and PostgreSQL with
//! two nodes (the devices split between them, as a load balancer would). One JSON line per
//! set-up on stdout: syncs, syncs/s, p50 and p99 latency in ms, and the syncs that failed (an
//! exchange refused or not answered; there should be none).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench: fail loudly

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use e2e::api::ADMIN;
use e2e::bench::{self, Auto, Taxi, env_number, percentile};
use e2e::{Api, Device, Server};
use serde_json::json;
use sync_core::client::ClientOptions;

/// The access tokens' key both PostgreSQL nodes share.
const SHARED_SECRET: &str = "segredo-do-bench-de-dois-nos-0123456789abcdef";

/// One device syncing an auto at a time until `stop`: latencies in µs, and failures.
fn syncer(mut d: Device, taxis: Arc<Vec<Taxi>>, stop: Arc<AtomicBool>) -> (Vec<u32>, u64) {
    let mut latencies = Vec::new();
    let mut failed = 0;
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let auto = Auto::refused_passenger(
            &taxis[i % taxis.len()],
            d.now(),
            i as u64,
            format!("Auto do bench de nós {i}: recusa de passageiro."),
        );
        d.field().create_infraction(auto.infraction()).unwrap();
        let t = Instant::now();
        match d.try_sync_records() {
            Ok(rs) if rs.rejected == 0 => {
                latencies.push(u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX));
            }
            _ => failed += 1,
        }
    }
    (latencies, failed)
}

/// `devices` officers, each on the node `k % nodes.len()`, synced once (registry, numbers).
fn devices(nodes: &[Server], admin: &Api, devices: usize, dir: &std::path::Path) -> Vec<Device> {
    let template = bench::Template::new(&Api::login(&nodes[0].url, e2e::api::OFFICE), dir);
    (0..devices)
        .map(|k| {
            let node = &nodes[k % nodes.len()];
            let mut d = template.device(node, admin, &format!("nos{k}"), dir);
            d.set_options(ClientOptions {
                number_low_water: 1_000,
                number_block_size: Some(1_000),
                ..ClientOptions::default()
            });
            d.top_up_numbers();
            d.sync_records();
            d
        })
        .collect()
}

/// Runs the devices for `secs` and prints the set-up's line.
fn measure(setup: &str, nodes: &[Server], n: usize, secs: u64) {
    let admin = Api::login(&nodes[0].url, ADMIN);
    let taxis: Arc<Vec<Taxi>> = Arc::new(bench::taxis(&admin.registry()));
    let dir = bench::device_dir();
    let devices = devices(nodes, &admin, n, dir.path());
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let threads: Vec<_> = devices
        .into_iter()
        .map(|d| {
            let (t, s) = (taxis.clone(), stop.clone());
            std::thread::spawn(move || syncer(d, t, s))
        })
        .collect();
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    let mut failed = 0;
    for t in threads {
        let (mut l, f) = t.join().unwrap();
        all.append(&mut l);
        failed += f;
    }
    let took = start.elapsed().as_secs_f64();
    all.sort_unstable();
    println!(
        "{}",
        json!({"bench": "nodes", "setup": setup, "devices": n, "nodes": nodes.len(),
               "syncs": all.len(), "syncs_per_s": (all.len() as f64 / took).round(),
               "p50_ms": (percentile(&all, 0.5) * 10.0).round() / 10.0,
               "p99_ms": (percentile(&all, 0.99) * 10.0).round() / 10.0,
               "failed": failed})
    );
}

fn main() {
    let n = env_number("TAXI_FISCAL_NODES_DEVICES", 50).max(2);
    let secs = env_number("TAXI_FISCAL_NODES_SECS", 30) as u64;
    let data = tempfile::tempdir().unwrap();

    // Every device of the bench logs in from 127.0.0.1: the per-address login budget is
    // lifted, as in the load bench.
    let burst = || ("TAXI_FISCAL_AUTH_ADDRESS_BURST", String::from("100000"));
    let sqlite = Server::start_demo_with_env(&data.path().join("sqlite"), vec![burst()]);
    measure("sqlite", std::slice::from_ref(&sqlite), n, secs);
    drop(sqlite);

    let env = || {
        vec![
            ("TAXI_FISCAL_JWT_SECRET", SHARED_SECRET.to_owned()),
            burst(),
        ]
    };
    let url = e2e::pg::fresh_database();
    let one = Server::start_demo_pg(&data.path().join("pg1"), &url, env());
    measure("postgres_1_node", std::slice::from_ref(&one), n, secs);
    drop(one);

    let url = e2e::pg::fresh_database();
    let a = Server::start_demo_pg(&data.path().join("pg-a"), &url, env());
    let b_dir = data.path().join("pg-b");
    std::fs::create_dir_all(&b_dir).unwrap();
    let key = taxi_fiscal_server::store::receipts::SIGNING_KEY_FILE;
    std::fs::copy(a.data.join(key), b_dir.join(key)).unwrap();
    let b = Server::start_demo_pg(&b_dir, &url, env());
    measure("postgres_2_nodes", &[a, b], n, secs);
}
