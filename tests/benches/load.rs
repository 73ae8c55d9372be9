//! Load benchmark: `cargo bench --bench load` (build the server first in release:
//! `cargo build --release -p taxi-fiscal-server --bin taxi-fiscal`; or set TAXI_FISCAL_BIN).
//!
//! The real `taxi-fiscal demo` on loopback and `TAXI_FISCAL_LOAD_CLIENTS` (default 50)
//! concurrent clients, each a thread with its own HTTP connection pool, in two phases of
//! `TAXI_FISCAL_LOAD_SECS` seconds each (default 60):
//!
//! 1. `mixed`: what a city's working day sends — office reads of permits
//!    (`GET /v1/permits/{n}`, 40 % of the clients), real device syncs with nothing new
//!    (`sync_noop`, 25 %), a device recording one auto and syncing it (`sync_small`, 25 %) and
//!    logins with the right password (`login`, 10 %);
//! 2. `storm`: the same clients, plus `TAXI_FISCAL_LOAD_STORM` (default 300) attackers sending
//!    logins for made-up usernames with wrong passwords as fast as the server answers. All
//!    clients share 127.0.0.1, so the server runs with the per-address login budget lifted
//!    (`TAXI_FISCAL_AUTH_ADDRESS_BURST`): the attackers stand for many addresses.
//!
//! One JSON line per (phase, operation) on stdout: requests, requests/s, p50 and p99 latency in
//! ms, and the HTTP statuses seen (a refused login is a 401 or 429, a success 200); then one
//! line per phase with the server's peak resident memory, sampled every 50 ms from
//! `/proc/PID/status`. The comparison with the targets goes to stderr: RSS under 1 GB in the
//! storm, and the other routes' p99 in the storm within twice their p99 of the mixed phase.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench: fail loudly

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Duration as Days;
use e2e::api::{ADMIN, OFFICE};
use e2e::bench::{self, Auto, Taxi, env_number, percentile, rss_kb};
use e2e::{Api, Device, Server};
use serde_json::json;
use sync_core::client::ClientOptions;
use sync_core::store::Store;

const PHASES: [&str; 2] = ["mixed", "storm"];
/// Phase index while the clients are being set up or have stopped: samples are not kept.
const NO_PHASE: usize = usize::MAX;

/// What each client thread saw, per phase and operation.
#[derive(Default)]
struct Samples {
    /// (phase, op) → latencies in µs.
    latencies: BTreeMap<(usize, &'static str), Vec<u32>>,
    /// (phase, op, status; 0 = no answer) → count.
    statuses: BTreeMap<(usize, &'static str, u16), u64>,
}

impl Samples {
    fn add(&mut self, phase: usize, op: &'static str, took: Duration, status: u16) {
        if phase == NO_PHASE {
            return;
        }
        let us = u32::try_from(took.as_micros()).unwrap_or(u32::MAX);
        self.latencies.entry((phase, op)).or_default().push(us);
        *self.statuses.entry((phase, op, status)).or_default() += 1;
    }

    fn merge(&mut self, other: Samples) {
        for (k, mut v) in other.latencies {
            self.latencies.entry(k).or_default().append(&mut v);
        }
        for (k, n) in other.statuses {
            *self.statuses.entry(k).or_default() += n;
        }
    }
}

/// The phase clients are in, and whether they should stop.
struct Clock {
    phase: AtomicUsize,
    stop: AtomicBool,
}

impl Clock {
    fn phase(&self) -> usize {
        self.phase.load(Ordering::Relaxed)
    }
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }
}

/// The status of an answer, after reading its body as a client would; 0 when none came.
fn answered(r: reqwest::Result<reqwest::blocking::Response>) -> u16 {
    r.map(|r| {
        let status = r.status().as_u16();
        let _ = r.bytes();
        status
    })
    .unwrap_or(0)
}

fn http() -> reqwest::blocking::Client {
    e2e::tls::http(None)
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Office reads of permits, round-robin over the demo's 121.
fn reader(url: String, token: String, clock: Arc<Clock>, seed: usize) -> Samples {
    let http = http();
    let mut s = Samples::default();
    let mut n = seed;
    while clock.running() {
        let phase = clock.phase();
        n = n % 121 + 1;
        let t = Instant::now();
        let status = answered(
            http.get(format!("{url}/v1/permits/{n:04}"))
                .bearer_auth(&token)
                .send(),
        );
        s.add(phase, "permit_read", t.elapsed(), status);
    }
    s
}

/// Logins with the right password for a real officer on a registered device.
fn login(url: String, user: String, device: String, clock: Arc<Clock>) -> Samples {
    let http = http();
    let mut s = Samples::default();
    let body = json!({"username": user, "password": "senha-carga", "device_id": device});
    while clock.running() {
        let phase = clock.phase();
        let t = Instant::now();
        let status = answered(http.post(format!("{url}/v1/auth/login")).json(&body).send());
        s.add(phase, "login", t.elapsed(), status);
        // A refused login (throttled) is retried after a pause, as an app would: without it
        // the thread would measure only how fast the server says no.
        if status != 200 {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    s
}

/// Made-up usernames and wrong passwords, as fast as the server answers.
fn attacker(url: String, clock: Arc<Clock>, seed: usize, sent: Arc<AtomicU64>) -> Samples {
    let http = http();
    let mut s = Samples::default();
    let mut i = 0usize;
    while clock.running() {
        let phase = clock.phase();
        i += 1;
        let body = json!({"username": format!("invasor-{seed}-{i}"), "password": "chute",
                          "device_id": "desktop-admin"});
        let t = Instant::now();
        let status = answered(http.post(format!("{url}/v1/auth/login")).json(&body).send());
        sent.fetch_add(1, Ordering::Relaxed);
        s.add(phase, "login_storm", t.elapsed(), status);
    }
    s
}

/// A device syncing its records; with `record`, it first writes one auto.
fn syncer(mut d: Device, taxis: Arc<Vec<Taxi>>, record: bool, clock: Arc<Clock>) -> Samples {
    let op = if record { "sync_small" } else { "sync_noop" };
    let mut s = Samples::default();
    let mut i = 0usize;
    while clock.running() {
        let phase = clock.phase();
        if record {
            i += 1;
            let auto = Auto::refused_passenger(
                &taxis[i % taxis.len()],
                d.now(),
                i as u64,
                format!("Auto de carga {i}: recusa de passageiro."),
            );
            d.field().create_infraction(auto.infraction()).unwrap();
        }
        let t = Instant::now();
        let r = d.try_sync_records();
        let status = match &r {
            Ok(rs) if rs.rejected == 0 => 200,
            Ok(_) => 422,
            Err(_) => 0,
        };
        s.add(phase, op, t.elapsed(), status);
        if r.is_err() {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    s
}

fn main() {
    let clients = env_number("TAXI_FISCAL_LOAD_CLIENTS", 50).max(10);
    let storm = env_number("TAXI_FISCAL_LOAD_STORM", 300);
    let secs = env_number("TAXI_FISCAL_LOAD_SECS", 60) as u64;
    let data_dir = tempfile::tempdir().unwrap();
    // Every client of the bench comes from 127.0.0.1, so the per-address login budget is
    // lifted: the storm then stands for attackers spread over many addresses (a botnet),
    // and what holds it is the bounded password-hashing pool.
    let server = Server::start_demo_with_env(
        &data_dir.path().join("dados"),
        vec![("TAXI_FISCAL_AUTH_ADDRESS_BURST", "100000".into())],
    );
    let pid = server.pid().unwrap();
    eprintln!(
        "server {} ({}), pid {pid}",
        server.url,
        server.bin().display()
    );

    let readers = clients * 4 / 10;
    let syncers = clients * 25 / 100;
    let logins = clients - readers - 2 * syncers;
    let admin = Api::login(&server.url, ADMIN);
    let office_token = Api::login(&server.url, OFFICE).token().to_owned();
    let registry = admin.registry();
    let active: Vec<bool> = registry
        .permits
        .iter()
        .map(|p| p.state == sync_core::domain::PermitState::Active)
        .collect();
    let taxis: Vec<Taxi> = bench::taxis(&registry)
        .into_iter()
        .zip(active)
        .filter_map(|(t, active)| active.then_some(t))
        .collect();
    let taxis = Arc::new(taxis);

    // Officers and their tablets; each syncing device has the registry and auto numbers.
    let dirs = tempfile::tempdir().unwrap();
    let users = 2 * syncers + logins;
    for k in 0..users {
        admin.add_user_with_device(
            &format!("carga{k}"),
            "senha-carga",
            "officer",
            None,
            &format!("tablet-carga{k}"),
        );
    }
    let mut devices = Vec::new();
    for k in 0..2 * syncers {
        let name = format!("carga{k}");
        let store = Store::open(dirs.path().join(format!("{name}.db"))).unwrap();
        let mut d = Device::with_store(
            &name,
            store,
            &server.url,
            &format!("tablet-{name}"),
            Days::zero(),
        );
        d.login_again(&name, "senha-carga");
        d.pull_registry();
        d.set_options(ClientOptions {
            number_low_water: 1_000,
            number_block_size: Some(1_000),
            ..ClientOptions::default()
        });
        d.top_up_numbers();
        d.sync_records();
        devices.push(d);
    }
    eprintln!(
        "{readers} readers, {syncers} idle devices, {syncers} recording devices, {logins} \
         logins; then {storm} attackers; {secs} s a phase"
    );

    let clock = Arc::new(Clock {
        phase: AtomicUsize::new(NO_PHASE),
        stop: AtomicBool::new(false),
    });
    let mut threads = Vec::new();
    for k in 0..readers {
        let (url, token, c) = (server.url.clone(), office_token.clone(), clock.clone());
        threads.push(std::thread::spawn(move || reader(url, token, c, k * 13)));
    }
    for (k, d) in devices.into_iter().enumerate() {
        let (t, c) = (taxis.clone(), clock.clone());
        threads.push(std::thread::spawn(move || syncer(d, t, k % 2 == 1, c)));
    }
    for k in 2 * syncers..users {
        let (url, c) = (server.url.clone(), clock.clone());
        let (user, device) = (format!("carga{k}"), format!("tablet-carga{k}"));
        threads.push(std::thread::spawn(move || login(url, user, device, c)));
    }

    let mut peaks = [0u64; 2];
    let sample = |until: Instant, peak: &mut u64| {
        while Instant::now() < until {
            if let Some((rss, _)) = rss_kb(pid) {
                *peak = (*peak).max(rss);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    let sent = Arc::new(AtomicU64::new(0));
    let mut durations = [0f64; 2];
    for (phase, peak) in peaks.iter_mut().enumerate() {
        let start = Instant::now();
        clock.phase.store(phase, Ordering::Relaxed);
        if phase == 1 {
            for k in 0..storm {
                let (url, c, n) = (server.url.clone(), clock.clone(), sent.clone());
                threads.push(std::thread::spawn(move || attacker(url, c, k, n)));
            }
        }
        sample(start + Duration::from_secs(secs), peak);
        durations[phase] = start.elapsed().as_secs_f64();
    }
    clock.phase.store(NO_PHASE, Ordering::Relaxed);
    clock.stop.store(true, Ordering::Relaxed);
    let mut all = Samples::default();
    for t in threads {
        all.merge(t.join().unwrap());
    }
    let hwm = rss_kb(pid).map_or(0, |(_, h)| h);

    let mut p99 = BTreeMap::new();
    for ((phase, op), mut lat) in all.latencies {
        lat.sort_unstable();
        let statuses: BTreeMap<String, u64> = all
            .statuses
            .iter()
            .filter(|((p, o, _), _)| *p == phase && *o == op)
            .map(|((_, _, st), n)| (st.to_string(), *n))
            .collect();
        let (p50, q99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
        p99.insert((phase, op), q99);
        println!(
            "{}",
            json!({"bench": "load", "phase": PHASES[phase], "op": op, "requests": lat.len(),
                   "rps": (lat.len() as f64 / durations[phase]).round(),
                   "p50_ms": (p50 * 10.0).round() / 10.0, "p99_ms": (q99 * 10.0).round() / 10.0,
                   "statuses": statuses})
        );
    }
    for (phase, peak) in peaks.iter().enumerate() {
        println!(
            "{}",
            json!({"bench": "load", "phase": PHASES[phase], "server_peak_rss_mb": peak / 1024,
                   "server_vmhwm_mb": hwm / 1024})
        );
    }
    eprintln!(
        "  storm: server peak RSS {} MB (< 1024 MB); {} attacker requests",
        peaks[1] / 1024,
        sent.load(Ordering::Relaxed)
    );
    for op in ["permit_read", "sync_noop", "sync_small", "login"] {
        if let (Some(a), Some(b)) = (p99.get(&(0, op)), p99.get(&(1, op))) {
            eprintln!(
                "  {op}: p99 {a:.1} ms mixed, {b:.1} ms in the storm ({:.2} ×, ≤ 2 ×)",
                b / a.max(0.001)
            );
        }
    }
}
