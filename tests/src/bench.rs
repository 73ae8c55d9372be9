//! What the benches share: their knobs, device stores on a RAM disk, a big registry imported
//! through `taxi-fiscal import`, issued autos written quickly, latency statistics, and the
//! memory and CPU time of a process read from `/proc`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Duration as Days;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sync_core::client::ClientOptions;
use sync_core::domain::{DriverId, Person, Plate, Registry};
use sync_core::field::NewInfraction;
use sync_core::records::{LegalBasis, Position, Signature};
use sync_core::rules::{Observation, RuleId, VehicleQuery};
use sync_core::store::Store;

use crate::{Api, Device, Server};

/// `TAXI_FISCAL_BENCH_QUICK=1`: a smoke run of the bench itself (e.g. in a debug build).
pub fn quick() -> bool {
    std::env::var("TAXI_FISCAL_BENCH_QUICK").is_ok_and(|v| v == "1")
}

/// Tenfold smaller with `TAXI_FISCAL_BENCH_QUICK=1`.
pub fn scale(n: usize) -> usize {
    if quick() { n / 10 } else { n }
}

/// A count from the environment, `default` when unset or not a number.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Milliseconds since `t`.
pub fn ms(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap()
}

/// A directory for device stores, on the RAM disk if the machine has one: writing the records
/// to be measured is then fast (the measured exchanges commit one transaction per response
/// either way).
pub fn device_dir() -> tempfile::TempDir {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(&shm)
    {
        return d;
    }
    tempfile::tempdir().unwrap()
}

/// The password of every user a bench creates.
pub const BENCH_PASSWORD: &str = "senha-bench";

/// A new officer `name` with the tablet `tablet-{name}`, logged in on an empty store in `dir`.
pub fn new_device(server: &Server, admin: &Api, name: &str, dir: &Path) -> Device {
    new_device_on(
        server,
        admin,
        name,
        Store::open(dir.join(format!("{name}.db"))).unwrap(),
    )
    .0
}

/// [`new_device`] on a store that is already open (e.g. a copy of a [`Template`]), and the
/// new user's id.
fn new_device_on(server: &Server, admin: &Api, name: &str, store: Store) -> (Device, String) {
    let user_id = admin.add_user_with_device(
        name,
        BENCH_PASSWORD,
        "officer",
        None,
        &format!("tablet-{name}"),
    );
    let mut d = Device::with_store(
        name,
        store,
        &server.url,
        &format!("tablet-{name}"),
        Days::zero(),
    );
    d.login_again(name, BENCH_PASSWORD);
    (d, user_id)
}

/// A device store holding only the server's registry (no identity, no key, no session):
/// copied for each new device, which then has its replica without downloading it. A copy
/// logs in as its own user on its own device id and makes its own key.
#[derive(Debug)]
pub struct Template {
    path: PathBuf,
}

impl Template {
    /// The registry as `office` reads it, applied to a store in `dir`.
    pub fn new(office: &Api, dir: &Path) -> Self {
        let path = dir.join("template.db");
        let mut store = Store::open(&path).unwrap();
        store
            .apply_snapshot(&office.registry(), Utc::now())
            .unwrap();
        drop(store); // closed: its WAL checkpointed into the file that is copied
        Self { path }
    }

    /// A new officer `name` on a copy of the template in `dir`, logged in.
    pub fn device(&self, server: &Server, admin: &Api, name: &str, dir: &Path) -> Device {
        self.officer(server, admin, name, dir).0
    }

    /// [`Template::device`], and the new officer's user id.
    pub fn officer(
        &self,
        server: &Server,
        admin: &Api,
        name: &str,
        dir: &Path,
    ) -> (Device, String) {
        let path = dir.join(format!("{name}.db"));
        std::fs::copy(&self.path, &path).unwrap();
        new_device_on(server, admin, name, Store::open(&path).unwrap())
    }
}

/// A taxi as the officers check it: its plate, its holder at the wheel, its stand.
#[derive(Debug, Clone)]
pub struct Taxi {
    pub plate: Plate,
    pub driver: DriverId,
    pub stand: String,
}

/// Every permit's taxi with its holder at the wheel, in the registry's order.
pub fn taxis(registry: &Registry) -> Vec<Taxi> {
    let people: std::collections::BTreeMap<&str, &Person> =
        registry.people.iter().map(|p| (p.id.as_str(), p)).collect();
    let vehicles: std::collections::BTreeMap<&str, &Plate> = registry
        .vehicles
        .iter()
        .map(|v| (v.id.as_str(), &v.plate))
        .collect();
    registry
        .permits
        .iter()
        .map(|p| Taxi {
            plate: vehicles[p.vehicle_id.as_str()].clone(),
            driver: DriverId::Cpf(people[p.holder_id.as_str()].cpf.clone()),
            stand: p.stand_id.clone(),
        })
        .collect()
}

/// The registry the server holds, extended with generated permits until it has `permits`
/// ([`crate::registry_gen::extend`]).
pub fn big_registry(server: &Server, permits: usize) -> Registry {
    let mut registry = Api::login(&server.url, crate::api::OFFICE).registry();
    crate::registry_gen::extend(&mut registry, permits);
    registry
}

/// How a registry load went.
#[derive(Debug, Clone, Copy)]
pub struct Imported {
    /// From writing the file to the server answering again.
    pub ms: u64,
    /// Peak resident memory of the loading process, when it could be read.
    pub peak_rss_kb: Option<u64>,
}

/// Stops the server, runs `cmd` on its data (it must succeed, its peak memory measured),
/// and starts the server again; the time is counted from `t`.
fn while_stopped(server: &mut Server, t: Instant, cmd: Command) -> Imported {
    server.kill();
    let what = cmd.get_program().to_string_lossy().into_owned();
    let (out, peak_rss_kb) = run_with_peak_rss(cmd);
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    server.restart();
    Imported {
        ms: ms(t),
        peak_rss_kb,
    }
}

/// Runs `cmd` to its end and returns its output and peak resident memory in kB: what
/// `/usr/bin/time -v` reports when the machine has it, else the last `VmHWM` read from
/// `/proc` while it ran (every 5 ms, so a peak in its last moments may be missed).
pub fn run_with_peak_rss(cmd: Command) -> (std::process::Output, Option<u64>) {
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let out = Command::new(time)
            .arg("-v")
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .output()
            .unwrap();
        let kb = String::from_utf8_lossy(&out.stderr).lines().find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes):")
                .and_then(|v| v.trim().parse().ok())
        });
        return (out, kb);
    }
    let mut cmd = cmd;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let mut peak = None;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if let Some((_, hwm)) = rss_kb(child.id()) {
            peak = Some(hwm);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let out = std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (out, peak)
}

/// Replaces the server's registry by `registry` (e.g. a generated city of 40,000 permits)
/// with the real `taxi-fiscal import` of its CSV export, the server stopped: its time and
/// peak memory. The office first turns the art. 14 cap (R23) off (`PUT /v1/law/rules`): the
/// import is judged under the registry's own law parameters, whose bounds admit no census
/// that would hold a generated city of thousands of taxis.
pub fn import_cli(server: &mut Server, work: &Path, registry: &Registry) -> Imported {
    let office = Api::login(&server.url, crate::api::OFFICE);
    let (status, view) = office.get("/v1/law");
    assert_eq!(status, 200, "{view}");
    let mut rules = view["parameters"]["rules"].clone();
    let disabled = rules["disabled_rules"]
        .as_array_mut()
        .expect("disabled_rules");
    if !disabled.iter().any(|r| r == "R23") {
        disabled.push(json!("R23"));
        let (status, update) = office.put("/v1/law/rules", &rules);
        assert_eq!(status, 200, "{update}");
    }
    let t = Instant::now();
    let csv = work.join("cadastro.csv");
    std::fs::write(
        &csv,
        taxi_fiscal_server::registry::csv::export(registry).unwrap(),
    )
    .unwrap();
    let mut cmd = Command::new(server.bin());
    cmd.arg("import").arg(&csv).arg("--data").arg(&server.data);
    while_stopped(server, t, cmd)
}

/// Leases one block of 5,000 auto numbers (the server's largest).
fn lease_block(d: &mut Device) {
    d.set_options(ClientOptions {
        number_low_water: u64::MAX,
        number_block_size: Some(5_000),
        ..ClientOptions::default()
    });
    d.top_up_numbers().expect("a block");
    d.set_options(ClientOptions::default());
}

/// An auto de infração as an officer writes it on the spot: the taxi by its plate with its
/// driver, confirmed, issued without the driver's signature.
#[derive(Debug, Clone)]
pub struct Auto {
    pub plate: Plate,
    pub driver: DriverId,
    pub at: DateTime<Utc>,
    pub monotonic: u64,
    /// The stand where the taxi was found, if at one.
    pub stand: Option<String>,
    pub position: Option<Position>,
    /// The legal basis the officer adds to the check's findings.
    pub rule: RuleId,
    pub facts: String,
}

impl Auto {
    /// An auto for a refused passenger (R24) on `taxi`, at no stand or position.
    pub fn refused_passenger(
        taxi: &Taxi,
        at: DateTime<Utc>,
        monotonic: u64,
        facts: String,
    ) -> Self {
        Self {
            plate: taxi.plate.clone(),
            driver: taxi.driver.clone(),
            at,
            monotonic,
            stand: None,
            position: None,
            rule: RuleId::R24,
            facts,
        }
    }

    /// What the device's field records take.
    pub fn infraction(self) -> NewInfraction {
        NewInfraction {
            vehicle: VehicleQuery::Plate(self.plate),
            driver: self.driver,
            driver_name: None,
            at: self.at,
            monotonic: self.monotonic,
            observation: Observation {
                at_stand: self.stand,
                ..Observation::default()
            },
            position: self.position,
            facts: Some(self.facts),
            extra_legal_basis: vec![LegalBasis::of(self.rule)],
            witnesses: Vec::new(),
            photos: Vec::new(),
            confirm_vehicle: true,
            issue: Some(Signature::Missing {
                reason: "recusou-se a assinar".into(),
            }),
        }
    }
}

/// Writes `autos` on the device, each its own durable transaction and with its auto number,
/// leasing a block whenever the numbers run out; returns their ids. The server leases a device
/// another block only while fewer than 1,000 of its numbers are unused as far as it knows, so
/// when a block runs out with records still to write the device first syncs the records it
/// wrote: with more than one block's worth, not all of them are left pending. The time printed
/// counts the writes only.
pub fn create_autos(d: &mut Device, autos: Vec<Auto>) -> Vec<String> {
    let n = autos.len();
    let mut writing = Duration::ZERO;
    let mut ids = Vec::with_capacity(n);
    let mut autos = autos.into_iter();
    while ids.len() < n {
        if d.store.numbers_left().unwrap() == 0 {
            if !ids.is_empty() {
                let r = d.sync_records();
                assert_eq!(r.rejected, 0, "{}: {r:?}", d.name);
            }
            lease_block(d);
        }
        let left = usize::try_from(d.store.numbers_left().unwrap()).unwrap();
        assert!(left > 0, "{}: the lease gave no numbers", d.name);
        let t = Instant::now();
        for a in autos.by_ref().take(left) {
            ids.push(d.field().create_infraction(a.infraction()).unwrap().id);
        }
        writing += t.elapsed();
    }
    eprintln!(
        "{}: {n} records created in {} ms",
        d.name,
        writing.as_millis()
    );
    ids
}

/// `n` issued autos for a refused passenger (R24), at the device's now, on taxis taken
/// 7,919 apart.
pub fn create_records(d: &mut Device, n: usize, taxis: &[Taxi]) -> Vec<String> {
    let autos = (0..n)
        .map(|i| {
            Auto::refused_passenger(
                &taxis[(i * 7_919) % taxis.len()],
                d.now(),
                i as u64,
                format!("Auto de teste {i}: recusa de passageiro."),
            )
        })
        .collect();
    create_autos(d, autos)
}

/// Resident memory of a process (kB), and its peak so far.
pub fn rss_kb(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// CPU time a process has used so far, user and system, all threads (ms; `/proc/PID/stat`
/// counts in USER_HZ, 100 a second on Linux).
pub fn cpu_ms(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split_whitespace();
    // Fields 14 and 15 (utime, stime) are the 12th and 13th after the name.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) * 10)
}

/// The `p` quantile (0–1) of sorted latencies in µs, in ms: the nearest rank.
pub fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

/// Latencies of repeated runs of one operation.
#[derive(Debug, Default, Clone)]
pub struct Latencies(Vec<u32>);

impl Latencies {
    pub fn add(&mut self, took: Duration) {
        self.0
            .push(u32::try_from(took.as_micros()).unwrap_or(u32::MAX));
    }

    /// Runs `f` `runs` times, or fewer once `budget` has passed (at least `min_runs`).
    pub fn measure(
        runs: usize,
        min_runs: usize,
        budget: Duration,
        mut f: impl FnMut(usize),
    ) -> Self {
        let mut l = Self::default();
        let start = Instant::now();
        for i in 0..runs {
            if i >= min_runs && start.elapsed() > budget {
                break;
            }
            let t = Instant::now();
            f(i);
            l.add(t.elapsed());
        }
        l
    }

    fn sorted(&self) -> Vec<u32> {
        let mut s = self.0.clone();
        s.sort_unstable();
        s
    }

    pub fn p50_ms(&self) -> f64 {
        percentile(&self.sorted(), 0.5)
    }

    pub fn p99_ms(&self) -> f64 {
        percentile(&self.sorted(), 0.99)
    }

    /// `runs`, `p50_ms`, `p99_ms`, `min_ms`, `max_ms` (to the hundredth of a ms).
    pub fn json(&self) -> Value {
        let s = self.sorted();
        let r = |v: f64| (v * 100.0).round() / 100.0;
        json!({"runs": s.len(), "p50_ms": r(percentile(&s, 0.5)),
               "p99_ms": r(percentile(&s, 0.99)), "min_ms": r(percentile(&s, 0.0)),
               "max_ms": r(percentile(&s, 1.0))})
    }
}
