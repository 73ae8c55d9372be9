//! Store benchmark: `cargo bench --bench store` — what the server's store costs as records and
//! permits grow. Build the server first in release (`cargo build --release -p
//! taxi-fiscal-server --bin taxi-fiscal`) or point `TAXI_FISCAL_BIN` at a binary.
//!
//! The real server on loopback, its data directory on the disk; a demo whose registry is
//! replaced by a generated one of 40,000 permits (200,000 at the end); officers' device stores on a RAM disk when there is one, each a copy of a store that
//! already holds the registry. The records are written by eight officers' devices at once and
//! synced in one go each, then topped up: 1,000, then 10,000, then 100,000 records on the same
//! server, measured at each count. They vary as a city's would: a taxi in five is one of the
//! 1 % of repeat offenders, the others spread over all permits; times over the past eleven months; six
//! rules (R24 in 40 %), a stand on 60 % and a position on half; one record in a hundred is the
//! same scene written a quarter of an hour later by a second patrol (a likely duplicate).
//!
//! One JSON line per figure on stdout; each has `bench`, `records` (on the server), `permits`,
//! and for latencies `runs`, `p50_ms`, `p99_ms`, `min_ms`, `max_ms` (nearest rank; each
//! series first warms up on a few requests it does not count):
//!
//! - `record_page`: `GET /v1/office/records/{id}` (the office's case view) over 200 records
//!   spread over all of them; `record_detail`: `GET /v1/records/{id}` on the same records,
//!   each read once before either series (so that both meet the same cache, also right after
//!   the restart that loads 200,000 permits). At each record count with 40,000 permits, and at
//!   the last with 200,000.
//! - `inbox_first_page` (`GET /v1/office/inbox`), `inbox_rule_filter` (`?rule=` the most common
//!   rule), `inbox_plate_filter` (`?plate=` the plate with most records); `matches` = the
//!   inbox's `total`.
//! - `duplicates_api` (`GET /v1/office/duplicates`, `groups`) and `duplicates_page` (the
//!   office's page `/escritorio/duplicatas`), with `bytes` of the answer.
//! - `sync_noop`: an officer's device already in sync syncs its records again.
//! - `sync_catch_up`: a new device's first record sync: `who` = `new_officer` (a new user: the
//!   server finds nothing to send) or `officer_new_tablet` (a new tablet of one of the eight
//!   officers, which receives all their records: `received`).
//! - `sync_parallel` (after the last count): 20 and 50 devices push 200 new records each, once
//!   one after another (`sequential_ms`) and once all at once (`parallel_ms`; `runs` etc. are the
//!   devices' own sync times); `server_cores_*` = the server's CPU time over the wall time, so
//!   2 means both cores were busy.
//! - `record_bytes`: the server's SQLite file compacted (`VACUUM INTO` a copy) less the same
//!   before any record, per record (`bytes_per_record`), beside Σ Automerge `save()` of the
//!   records per record (`automerge_bytes_per_record`); `file_bytes_per_record` is the growth of
//!   the live database and WAL files; `tables` the growth of each table and index per record
//!   (SQLite's `dbstat`).
//! - `registry_snapshot` (40,000 and 200,000 permits): the zstd snapshot a new device downloads
//!   (`bytes`, `bytes_per_permit`; `json_bytes` uncompressed), the time a new device takes to
//!   download and apply it (`bootstrap_ms`, null with `bootstrap_error` if it failed), and
//!   the load of that registry into the stopped server by the real `taxi-fiscal import` of its
//!   CSV (`load_ms`, `load_peak_rss_kb`: the command reads the file as a stream, up to
//!   250,000 permits).
//! - `registry_import`: the real `taxi-fiscal import` of a CSV of 5,000 permits (the most an
//!   upload may hold), first of all (`ms`, `peak_rss_kb`). The office turns the art. 14 cap
//!   off before each import. Peak memory is `/usr/bin/time -v`'s when the machine has it, else
//!   sampled from `/proc`.
//!
//! Diagnostics and each comparison with a target go to stderr. Knobs:
//! `TAXI_FISCAL_BENCH_QUICK=1` shrinks everything tenfold (a smoke run, also with a debug
//! build); `TAXI_FISCAL_BENCH_MAX_RECORDS=n` stops the record counts at `n` (after the
//! shrinking: e.g. `10000` skips the 100,000 step).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)] // a bench: fail loudly

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use e2e::api::{ADMIN, OFFICE, OfficeSession};
use e2e::bench::{self, Auto, BENCH_PASSWORD, Latencies, Taxi, Template, ms, scale};
use e2e::registry_gen;
use e2e::{Api, Device, Server};
use serde_json::{Value, json};
use sync_core::domain::Registry;
use sync_core::records::Position;
use sync_core::rules::RuleId;
use sync_core::store::Store;

/// The officers whose devices write the records.
const SEEDERS: usize = 8;
/// Latency series of cheap requests.
const PAGE_RUNS: usize = 200;
/// Requests not counted before each series.
const WARM_UP: usize = 5;

/// One JSON line: `fields` with `bench`, `records`, `permits` and the latencies' figures.
fn emit(bench: &str, records: usize, permits: usize, lat: Option<&Latencies>, fields: Value) {
    let mut line = json!({"bench": bench, "records": records, "permits": permits});
    let obj = line.as_object_mut().unwrap();
    if let Some(l) = lat {
        obj.extend(l.json().as_object().unwrap().clone());
    }
    obj.extend(fields.as_object().unwrap().clone());
    println!("{line}");
}

/// "met" when `value` is within `target`.
fn verdict(value: f64, target: f64) -> &'static str {
    if value <= target { "met" } else { "MISSED" }
}

/// How a figure compares with its target: "(target ≤ T): met" where the target is about this
/// figure, else where it applies.
fn target_note(applies: bool, value: f64, target: f64, applies_at: &str) -> String {
    if applies {
        format!(" (target ≤ {target}): {}", verdict(value, target))
    } else {
        format!(" (target ≤ {target} at {applies_at})")
    }
}

/// A pseudo-random 64-bit number of `x` (splitmix64): the same records in every run.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Record number `g` of the bench, whichever device writes it.
struct Plan {
    taxis: Vec<Taxi>,
    /// The officers' legal bases; the first is the most common.
    rules: Vec<RuleId>,
    now: DateTime<Utc>,
}

const FACTS: [&str; 4] = [
    "Recusou passageiro no ponto.",
    "Veículo estacionado fora do ponto no horário obrigatório.",
    "Condutor sem o crachá de identificação.",
    "Táxi sem o dispositivo luminoso aceso.",
];

impl Plan {
    fn new(taxis: Vec<Taxi>) -> Self {
        let candidates = [
            RuleId::R24,
            RuleId::R19,
            RuleId::R20,
            RuleId::R17,
            RuleId::R26,
            RuleId::R27,
            RuleId::R28,
            RuleId::R29,
            RuleId::R30,
            RuleId::R02,
        ];
        let rules: Vec<RuleId> = candidates
            .into_iter()
            .filter(|r| sync_core::rules::penalty::citable_in_law(r.as_str()).is_ok())
            .take(6)
            .collect();
        assert!(rules.len() >= 4, "citable rules: {rules:?}");
        assert_eq!(rules[0], RuleId::R24);
        Self {
            taxis,
            rules,
            now: Utc::now(),
        }
    }

    /// Every hundredth record (`g % 100 == 1`) is the scene of the one before, written by the
    /// next device a quarter of an hour later.
    fn is_twin(g: usize) -> bool {
        g % 100 == 1
    }

    fn taxi(&self, g: usize) -> &Taxi {
        let h = mix(g as u64);
        let n = self.taxis.len();
        if h.is_multiple_of(5) {
            // one of the repeat offenders: every hundredth taxi
            let hot = (n / 100).max(1);
            &self.taxis[((h >> 8) as usize % hot) * 100 % n]
        } else {
            &self.taxis[(h >> 8) as usize % n]
        }
    }

    fn rule(&self, g: usize) -> RuleId {
        let k = (mix(g as u64) >> 52) % 20;
        let i = match k {
            0..8 => 0,
            8..11 => 1,
            11..14 => 2,
            14..16 => 3,
            16..18 => 4,
            _ => 5,
        };
        self.rules[i % self.rules.len()]
    }

    fn auto(&self, g: usize) -> Auto {
        let scene = if Self::is_twin(g) { g - 1 } else { g };
        let h = mix(scene as u64);
        let taxi = self.taxi(scene);
        // The server takes occurrences of up to 365 days ago: these are within 330.
        let minutes_ago = 60 + (h >> 24) % (330 * 24 * 60);
        let mut at = self.now - chrono::Duration::minutes(i64::try_from(minutes_ago).unwrap());
        let stand = ((h >> 40) % 10 < 6).then(|| taxi.stand.clone());
        let jitter = |bits: u64| (bits % 1000) as f64 / 1000.0 * 0.06 - 0.03;
        let mut position = (h >> 44).is_multiple_of(2).then(|| Position {
            lat: -22.74 + jitter(h >> 46),
            lon: -47.33 + jitter(h >> 54),
            accuracy_m: 8.0,
        });
        if Self::is_twin(g) {
            at += chrono::Duration::minutes(17);
            if let Some(p) = &mut position {
                p.lat += 0.0004;
            }
        }
        Auto {
            plate: taxi.plate.clone(),
            driver: taxi.driver.clone(),
            at,
            monotonic: g as u64,
            stand,
            position,
            rule: self.rule(scene),
            facts: format!("{} (auto {g})", FACTS[(h >> 60) as usize % FACTS.len()]),
        }
    }

    /// The most common rule and the plate with most records among the first `n`.
    fn most_common(&self, n: usize) -> (RuleId, String, usize) {
        let mut rules: BTreeMap<RuleId, usize> = BTreeMap::new();
        let mut plates: BTreeMap<String, usize> = BTreeMap::new();
        for g in 0..n {
            let scene = if Self::is_twin(g) { g - 1 } else { g };
            *rules.entry(self.rule(scene)).or_default() += 1;
            *plates
                .entry(self.taxi(scene).plate.canonical().to_owned())
                .or_default() += 1;
        }
        let rule = rules.into_iter().max_by_key(|(_, c)| *c).unwrap().0;
        let (plate, count) = plates.into_iter().max_by_key(|(_, c)| *c).unwrap();
        (rule, plate, count)
    }
}

/// The server's SQLite file: live size, compacted size, and the compacted size per table.
#[derive(Debug, Default, Clone)]
struct StoreSize {
    file_bytes: u64,
    vacuum_bytes: u64,
    dir_bytes: u64,
    tables: BTreeMap<String, u64>,
}

fn file_len(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => dir_bytes(&e.path()),
                _ => file_len(&e.path()),
            })
            .sum()
    })
}

/// Measured while the server runs: `VACUUM INTO` reads one snapshot (WAL included) through a
/// read-only connection.
fn store_size(data: &Path, work: &Path) -> StoreSize {
    let db = data.join(taxi_fiscal_server::config::DB_FILE);
    let wal = data.join(format!("{}-wal", taxi_fiscal_server::config::DB_FILE));
    let copy = work.join("vacuumed.db");
    let _ = std::fs::remove_file(&copy);
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    conn.execute("VACUUM INTO ?1", [copy.to_str().unwrap()])
        .unwrap();
    drop(conn);
    let compact = rusqlite::Connection::open(&copy).unwrap();
    let tables: BTreeMap<String, u64> = compact
        .prepare("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name")
        .and_then(|mut st| {
            st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
                .map(|row| row.map(|(n, b)| (n, u64::try_from(b).unwrap_or(0))))
                .collect()
        })
        .unwrap_or_else(|e| {
            eprintln!("  (no dbstat in this SQLite: {e})");
            BTreeMap::new()
        });
    drop(compact);
    let size = StoreSize {
        file_bytes: file_len(&db) + file_len(&wal),
        vacuum_bytes: file_len(&copy),
        dir_bytes: dir_bytes(data),
        tables,
    };
    std::fs::remove_file(&copy).unwrap();
    size
}

/// Times `runs` GETs of `paths[i % len]` (after a warm-up on the first few), each answering 200.
fn time_gets(
    paths: &[String],
    runs: usize,
    get: impl Fn(&str) -> (u16, Vec<u8>),
) -> (Latencies, Vec<u8>) {
    let mut last = Vec::new();
    for p in paths.iter().cycle().take(WARM_UP) {
        let (status, body) = get(p);
        assert_eq!(status, 200, "{p}: {}", String::from_utf8_lossy(&body));
    }
    let lat = Latencies::measure(runs, runs.min(20), Duration::from_secs(60), |i| {
        let p = &paths[i % paths.len()];
        let (status, body) = get(p);
        assert_eq!(status, 200, "{p}");
        last = body;
    });
    (lat, last)
}

/// Everything the measurements share.
struct Bench {
    server: Server,
    admin: Api,
    office: Api,
    web: OfficeSession,
    plan: Plan,
    template: Template,
    dirs: tempfile::TempDir,
    work: tempfile::TempDir,
    permits: usize,
    /// Every record on the server, in the plan's order.
    ids: Vec<String>,
    /// Σ Automerge `save()` of those records.
    save_bytes: u64,
    seeders: Vec<Device>,
    seeder_user_ids: Vec<String>,
    /// Records on the server beside `ids` (those of `sync_parallel`).
    others: usize,
    /// Before any record.
    baseline: StoreSize,
    /// New devices made so far (for unique names).
    made: usize,
}

impl Bench {
    fn records(&self) -> usize {
        self.ids.len() + self.others
    }

    fn new_device(&mut self, prefix: &str) -> Device {
        self.made += 1;
        let name = format!("{prefix}{}", self.made);
        self.template
            .device(&self.server, &self.admin, &name, self.dirs.path())
    }

    /// Tops the server up to `target` records: each officer's device writes its share (record
    /// `g` is device `g % SEEDERS`'s), all devices at once, and syncs it in one go.
    fn seed(&mut self, target: usize) {
        let from = self.records();
        let t = Instant::now();
        let plan = &self.plan;
        let results: Vec<(Vec<(usize, String)>, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .seeders
                .iter_mut()
                .enumerate()
                .map(|(k, d)| {
                    s.spawn(move || {
                        let gs: Vec<usize> = (from..target).filter(|g| g % SEEDERS == k).collect();
                        let autos = gs.iter().map(|&g| plan.auto(g)).collect();
                        let ids = bench::create_autos(d, autos);
                        let bytes: u64 = ids.iter().map(|id| d.doc(id).save().len() as u64).sum();
                        // (create_autos synced the records of the blocks it used up)
                        let r = d.sync_records();
                        assert_eq!(r.rejected, 0, "{}: {r:?}", d.name);
                        let status = d.client().status(&d.store).unwrap();
                        assert_eq!(status.pending_records, 0, "{}: {r:?}", d.name);
                        (gs.into_iter().zip(ids).collect(), bytes)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut new: Vec<(usize, String)> = Vec::new();
        for (ids, bytes) in results {
            new.extend(ids);
            self.save_bytes += bytes;
        }
        new.sort();
        self.ids.extend(new.into_iter().map(|(_, id)| id));
        let (s, inbox) = self.office.get("/v1/office/inbox?limit=1");
        assert_eq!(s, 200, "{inbox}");
        assert_eq!(inbox["total"].as_u64(), Some(target as u64), "{inbox}");
        eprintln!(
            "{target} records on the server ({} new in {} ms)",
            target - from,
            ms(t)
        );
    }

    /// The case view and the record detail of 200 records spread over all of them.
    fn record_pages(&self) {
        let (n, permits) = (self.records(), self.permits);
        let sample: Vec<&String> = (0..PAGE_RUNS)
            .map(|i| &self.ids[i * self.ids.len() / PAGE_RUNS])
            .collect();
        // Each record read once first, not counted: both series then meet the same cache.
        // At 200,000 permits the server has just restarted (after the import), and the first
        // read of each record's pages would otherwise land on whichever series came first.
        for id in &sample {
            let (status, _) = self.office.get_raw(&format!("/v1/records/{id}"), None);
            assert_eq!(status, 200);
        }
        for (bench, prefix) in [
            ("record_page", "/v1/office/records/"),
            ("record_detail", "/v1/records/"),
        ] {
            let paths: Vec<String> = sample.iter().map(|id| format!("{prefix}{id}")).collect();
            let (lat, body) = time_gets(&paths, PAGE_RUNS, |p| self.office.get_raw(p, None));
            emit(
                bench,
                n,
                permits,
                Some(&lat),
                json!({"route": format!("GET {prefix}{{id}}"), "bytes": body.len()}),
            );
            let target = if bench == "record_page" {
                target_note(permits == scale(200_000), lat.p99_ms(), 5.0, "200k permits")
            } else {
                String::new()
            };
            eprintln!(
                "  {bench} p99 at {n} records, {permits} permits: {:.1} ms{target}",
                lat.p99_ms()
            );
        }
    }

    fn inbox(&self) {
        let n = self.records();
        let (rule, plate, planned) = self.plan.most_common(n);
        for (bench, query, extra) in [
            ("inbox_first_page", String::new(), json!({})),
            (
                "inbox_rule_filter",
                format!("?rule={rule}"),
                json!({"rule": rule.as_str()}),
            ),
            (
                "inbox_plate_filter",
                format!("?plate={plate}"),
                json!({"plate": plate, "planned": planned}),
            ),
        ] {
            let path = format!("/v1/office/inbox{query}");
            let (lat, body) =
                time_gets(std::slice::from_ref(&path), scale(PAGE_RUNS).max(20), |p| {
                    self.office.get_raw(p, None)
                });
            let page: Value = serde_json::from_slice(&body).unwrap();
            let mut fields = json!({"query": query, "matches": page["total"],
                                    "items": page["items"].as_array().map_or(0, Vec::len),
                                    "bytes": body.len()});
            fields
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            emit(bench, n, self.permits, Some(&lat), fields);
            let target = target_note(n == scale(100_000), lat.p99_ms(), 10.0, "100k records");
            eprintln!(
                "  {bench} p99 at {n} records: {:.1} ms{target}",
                lat.p99_ms()
            );
        }
    }

    fn duplicates(&self) {
        let n = self.records();
        let runs = 50;
        let budget = Duration::from_secs(20);
        let api = "/v1/office/duplicates".to_owned();
        self.office.get_raw(&api, None);
        let mut body = Vec::new();
        let lat = Latencies::measure(runs, 5, budget, |_| {
            let (s, b) = self.office.get_raw(&api, None);
            assert_eq!(s, 200);
            body = b;
        });
        // One page of plates (`DuplicatesPage`): its groups, and how many plates there are.
        let answer: Value = serde_json::from_slice(&body).unwrap();
        let groups = answer["groups"].as_array().unwrap();
        let plates = answer["plates"].as_u64().unwrap();
        let members: usize = groups
            .iter()
            .map(|g| g["records"].as_array().map_or(0, Vec::len))
            .sum();
        emit(
            "duplicates_api",
            n,
            self.permits,
            Some(&lat),
            json!({"route": "GET /v1/office/duplicates", "groups": groups.len(),
                   "plates": plates, "members": members, "bytes": body.len()}),
        );
        let api_p50 = lat.p50_ms();
        let page = "/escritorio/duplicatas".to_owned();
        self.web.get_raw(&page, None);
        let lat = Latencies::measure(runs, 5, budget, |_| {
            let (s, b) = self.web.get_raw(&page, None);
            assert_eq!(s, 200);
            body = b;
        });
        emit(
            "duplicates_page",
            n,
            self.permits,
            Some(&lat),
            json!({"route": "GET /escritorio/duplicatas", "bytes": body.len()}),
        );
        eprintln!(
            "  duplicates at {n} records: {} groups; API p50 {:.1} ms; page p50 {:.1} ms, {} KB",
            groups.len(),
            api_p50,
            lat.p50_ms(),
            body.len() / 1024
        );
    }

    fn syncs(&mut self) {
        let n = self.records();
        let d = &mut self.seeders[0];
        d.sync_records();
        let lat = Latencies::measure(30, 5, Duration::from_secs(20), |_| {
            d.client().reset_wire_stats();
            let r = d.sync_records();
            assert_eq!((r.sent_new, r.sent_changes, r.received), (0, 0, 0), "{r:?}");
        });
        let wire = d.client().wire_stats();
        let noop_p50 = lat.p50_ms();
        emit(
            "sync_noop",
            n,
            self.permits,
            Some(&lat),
            json!({"device_records": n / SEEDERS, "round_trips": wire.requests,
                   "bytes": wire.bytes_up + wire.bytes_down}),
        );

        // A new officer's new device: nothing to receive.
        let mut lat = Latencies::default();
        let mut received = 0;
        for _ in 0..3 {
            let mut d = self.new_device("novato");
            let t = Instant::now();
            let r = d.sync_records();
            lat.add(t.elapsed());
            received = r.received;
        }
        emit(
            "sync_catch_up",
            n,
            self.permits,
            Some(&lat),
            json!({"who": "new_officer", "received": received}),
        );
        // A second tablet of an officer who wrote an eighth of the records: receives them all.
        let mut lat = Latencies::default();
        let mut down = 0;
        for k in 0..3 {
            self.made += 1;
            let user = self.seeders[k].name.clone();
            let device_id = format!("tablet-{user}-novo{}", self.made);
            let (s, v) = self.admin.post(
                "/v1/devices",
                &json!({"id": device_id, "user_id": self.seeder_user_ids[k],
                        "label": "tablet novo"}),
            );
            assert_eq!(s, 201, "{v}");
            let store = Store::open(self.dirs.path().join(format!("{device_id}.db"))).unwrap();
            let mut d = Device::with_store(
                &device_id,
                store,
                &self.server.url,
                &device_id,
                chrono::Duration::zero(),
            );
            d.login_again(&user, BENCH_PASSWORD);
            let t = Instant::now();
            let r = d.sync_records();
            lat.add(t.elapsed());
            received = r.received;
            down = d.client().wire_stats().bytes_down;
            assert_eq!(d.record_ids().len(), self.seeders[k].record_ids().len());
        }
        emit(
            "sync_catch_up",
            n,
            self.permits,
            Some(&lat),
            json!({"who": "officer_new_tablet", "received": received, "bytes_down": down}),
        );
        eprintln!(
            "  sync at {n} records: noop p50 {noop_p50:.1} ms; a new tablet's catch-up of \
             {received} records p50 {:.0} ms",
            lat.p50_ms()
        );
    }

    fn record_bytes(&self) {
        let n = self.records();
        let now = store_size(&self.server.data, self.work.path());
        let per = |a: u64, b: u64| (a.saturating_sub(b) as f64 / n as f64).round();
        let tables: BTreeMap<&String, f64> = now
            .tables
            .iter()
            .map(|(t, b)| {
                (
                    t,
                    per(*b, self.baseline.tables.get(t).copied().unwrap_or(0)),
                )
            })
            .filter(|(_, b)| *b >= 1.0)
            .collect();
        let bytes_per_record = per(now.vacuum_bytes, self.baseline.vacuum_bytes);
        let automerge = (self.save_bytes as f64 / n as f64).round();
        emit(
            "record_bytes",
            n,
            self.permits,
            None,
            json!({"bytes_per_record": bytes_per_record,
                   "automerge_bytes_per_record": automerge,
                   "file_bytes_per_record": per(now.file_bytes, self.baseline.file_bytes),
                   "dir_bytes_per_record": per(now.dir_bytes, self.baseline.dir_bytes),
                   "vacuum_bytes": now.vacuum_bytes, "baseline_vacuum_bytes": self.baseline.vacuum_bytes,
                   "file_bytes": now.file_bytes, "tables": tables}),
        );
        eprintln!(
            "  record_bytes at {n} records: {bytes_per_record} B/record on disk (compacted) vs \
             {automerge} B of Automerge save(): {:.2} ×",
            bytes_per_record / automerge.max(1.0)
        );
    }

    /// `devices` new devices push `each` new records: one after another, then all at once.
    fn sync_parallel(&mut self, devices: usize, each: usize) {
        let pid = self.server.pid().unwrap();
        let mut fleet: Vec<Device> = (0..devices).map(|_| self.new_device("par")).collect();
        let mut next = 10_000_000 * devices;
        let plan = &self.plan;
        let mut write = |fleet: &mut Vec<Device>| {
            std::thread::scope(|s| {
                for d in fleet.iter_mut() {
                    let autos: Vec<Auto> = (next..next + each).map(|g| plan.auto(g)).collect();
                    next += each;
                    s.spawn(move || bench::create_autos(d, autos));
                }
            });
        };
        write(&mut fleet);
        let cpu0 = bench::cpu_ms(pid).unwrap();
        let t = Instant::now();
        for d in &mut fleet {
            let r = d.sync_records();
            assert_eq!(r.acked as usize, each, "{r:?}");
        }
        let sequential_ms = ms(t);
        let sequential_cpu = bench::cpu_ms(pid).unwrap() - cpu0;

        write(&mut fleet);
        let barrier = Barrier::new(devices + 1);
        let cpu0 = bench::cpu_ms(pid).unwrap();
        let (parallel_ms, lat) = std::thread::scope(|s| {
            let handles: Vec<_> = fleet
                .iter_mut()
                .map(|d| {
                    let barrier = &barrier;
                    s.spawn(move || {
                        barrier.wait();
                        let t = Instant::now();
                        let r = d.sync_records();
                        assert_eq!(r.acked as usize, each, "{r:?}");
                        t.elapsed()
                    })
                })
                .collect();
            barrier.wait();
            let t = Instant::now();
            let mut lat = Latencies::default();
            for h in handles {
                lat.add(h.join().unwrap());
            }
            (ms(t), lat)
        });
        let parallel_cpu = bench::cpu_ms(pid).unwrap() - cpu0;
        let cores = |cpu: u64, wall: u64| (cpu as f64 / wall.max(1) as f64 * 100.0).round() / 100.0;
        self.others += 2 * devices * each;
        let records = self.records();
        emit(
            "sync_parallel",
            records,
            self.permits,
            Some(&lat),
            json!({"devices": devices, "records_each": each,
                   "parallel_ms": parallel_ms, "sequential_ms": sequential_ms,
                   "speedup": (sequential_ms as f64 / parallel_ms.max(1) as f64 * 100.0).round() / 100.0,
                   "server_cpu_ms_parallel": parallel_cpu, "server_cpu_ms_sequential": sequential_cpu,
                   "server_cores_parallel": cores(parallel_cpu, parallel_ms),
                   "server_cores_sequential": cores(sequential_cpu, sequential_ms)}),
        );
        eprintln!(
            "  sync_parallel {devices} × {each}: {parallel_ms} ms at once vs {sequential_ms} ms one \
             after another ({:.2} ×); server used {:.2} cores at once, {:.2} in turn",
            sequential_ms as f64 / parallel_ms.max(1) as f64,
            cores(parallel_cpu, parallel_ms),
            cores(sequential_cpu, sequential_ms)
        );
    }
}

/// Imports `registry`, then a new device downloads it: one `registry_snapshot` line.
fn registry_snapshot(
    server: &mut Server,
    work: &Path,
    dirs: &Path,
    registry: &Registry,
    records: usize,
) {
    let permits = registry.permits.len();
    let import = bench::import_cli(server, work, registry);
    let admin = Api::login(&server.url, ADMIN);
    let name = format!("registro{permits}");
    let mut d = bench::new_device(server, &admin, &name, dirs);
    // The snapshot as the server sends it, compressed as devices ask for it and plain.
    let office = Api::login(&server.url, OFFICE);
    let snapshot = "/v1/registry/snapshot";
    let (status, zstd) = office.get_raw(snapshot, Some("zstd"));
    assert_eq!(status, 200);
    let (status, plain) = office.get_raw(snapshot, None);
    assert_eq!(status, 200);
    let t = Instant::now();
    let pull = d.try_pull_registry();
    let bootstrap_ms = ms(t);
    let (bootstrap_ms, error) = match &pull {
        Ok(p) => {
            assert_eq!(d.store.status().unwrap().counts.permits as usize, permits);
            assert_eq!(p.bytes as usize, zstd.len());
            (Some(bootstrap_ms), None)
        }
        Err(e) => (None, Some(e.to_string())),
    };
    let per_permit = zstd.len() as f64 / permits as f64;
    emit(
        "registry_snapshot",
        records,
        permits,
        None,
        json!({"bytes": zstd.len(), "bytes_per_permit": (per_permit * 10.0).round() / 10.0,
               "json_bytes": plain.len(), "bootstrap_ms": bootstrap_ms, "bootstrap_error": error,
               "load_ms": import.ms, "load_peak_rss_kb": import.peak_rss_kb}),
    );
    eprintln!(
        "  registry_snapshot at {permits} permits: {per_permit:.1} B/permit (target ≤ 60): {}; \
         {:.1} MB of JSON; bootstrap {}; load {} ms, loader's peak RSS {} MB",
        verdict(per_permit, 60.0),
        plain.len() as f64 / 1e6,
        bootstrap_ms.map_or_else(
            || format!("FAILED ({})", error.unwrap_or_default()),
            |t| format!("{t} ms")
        ),
        import.ms,
        import
            .peak_rss_kb
            .map_or("?".into(), |k| (k / 1024).to_string())
    );
}

fn main() {
    let permits = scale(40_000);
    let permits_big = scale(200_000);
    let max_records = bench::env_number("TAXI_FISCAL_BENCH_MAX_RECORDS", usize::MAX);
    let steps: Vec<usize> = [1_000, 10_000, 100_000]
        .into_iter()
        .map(scale)
        .filter(|&n| n <= max_records)
        .collect();
    let work = tempfile::tempdir().unwrap();
    let dirs = bench::device_dir();
    // Every bench client logs in from 127.0.0.1: the per-address login budget is lifted.
    let mut server = Server::start_demo_with_env(
        &work.path().join("dados"),
        vec![("TAXI_FISCAL_AUTH_ADDRESS_BURST", "100000".into())],
    );
    eprintln!("server {} ({})", server.url, server.bin().display());

    let demo = Api::login(&server.url, OFFICE).registry();
    // The real import command, at the most permits it takes in one file.
    let mut most = demo.clone();
    registry_gen::extend(&mut most, scale(5_000));
    let cli = bench::import_cli(&mut server, work.path(), &most);
    emit(
        "registry_import",
        0,
        most.permits.len(),
        None,
        json!({"command": "taxi-fiscal import", "ms": cli.ms, "peak_rss_kb": cli.peak_rss_kb}),
    );
    eprintln!(
        "  taxi-fiscal import of {} permits (the most a file may hold): {} ms, peak RSS {} MB",
        most.permits.len(),
        cli.ms,
        cli.peak_rss_kb
            .map_or("?".into(), |k| (k / 1024).to_string())
    );
    let mut registry = demo.clone();
    registry_gen::extend(&mut registry, permits);
    registry_snapshot(&mut server, work.path(), dirs.path(), &registry, 0);
    let plan = Plan::new(bench::taxis(&registry));
    eprintln!("rules of the records: {:?}", plan.rules);

    let admin = Api::login(&server.url, ADMIN);
    let office = Api::login(&server.url, OFFICE);
    let template = Template::new(&office, dirs.path());
    let baseline = store_size(&server.data, work.path());
    let mut seeders = Vec::new();
    let mut seeder_user_ids = Vec::new();
    for k in 0..SEEDERS {
        let (d, id) = template.officer(&server, &admin, &format!("fiscal{k}"), dirs.path());
        seeders.push(d);
        seeder_user_ids.push(id);
    }
    let mut b = Bench {
        web: OfficeSession::login(&server.url),
        server,
        admin,
        office,
        plan,
        template,
        dirs,
        work,
        permits,
        ids: Vec::new(),
        save_bytes: 0,
        seeders,
        seeder_user_ids,
        baseline,
        others: 0,
        made: 0,
    };

    for &n in &steps {
        b.seed(n);
        b.record_pages();
        b.inbox();
        b.duplicates();
        b.syncs();
        b.record_bytes();
    }
    for devices in [scale(20).max(2), scale(50).max(5)] {
        b.sync_parallel(devices, scale(200));
    }

    // The registry of a bigger city, then the case view again.
    let mut big = demo;
    registry_gen::extend(&mut big, permits_big);
    let records = b.records();
    registry_snapshot(&mut b.server, b.work.path(), b.dirs.path(), &big, records);
    b.permits = permits_big;
    b.office = Api::login(&b.server.url, OFFICE);
    b.record_pages();
}
