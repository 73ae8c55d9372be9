//! Device store benchmark: `cargo bench -p sync-core --bench device`.
//!
//! Builds a 40,000-permit replica (generated here: valid CPF/CNH/RENAVAM check digits, plates
//! `AAA0A00`… derived from the index) in a temporary file, then prints one JSON line per
//! measurement:
//!
//! - `lookup_check`: `Store::check` by plate (random permits, old and Mercosul spellings, the
//!   holder, an auxiliary or another permit's holder at the wheel, sometimes at another stand)
//!   — plate lookup plus the full verdict, in-process through the store API;
//! - `sqlite_point_query`: a bare indexed query on the same `reg_permits` table in the same run
//!   (the baseline the lookup is compared with);
//! - `record_create`: real autos de infração through `FieldRecords::create_infraction` — field
//!   check, verdict sealed into a new Automerge document (~1 KB), issued when irregular, an auto
//!   number taken — each its own committed (fsync'd) transaction.
//!
//! Before timing, a sample of store verdicts is compared with `rules::check_registry` on the whole
//! in-memory registry: the benchmark measures the real answer. Diagnostics go to stderr: how
//! long the snapshot took, the split of a check between reading its facts from SQLite
//! (`Store::check_facts`) and evaluating the rules, and the disk's own flush rate, which bounds
//! `record_create`.
//!
//! `DEVICE_BENCH_ENCRYPTED=1` with `--features encryption` runs the same on the store as the
//! phone keeps it: encrypted with SQLCipher (`Store::open_encrypted`, a key in memory), the
//! bare query on a connection keyed alike.
//!
//! `DEVICE_BENCH_SAMPLES=N` (for runs under `valgrind --tool=callgrind`, whose instruction
//! counts do not depend on the machine's load): N timed checks and bare queries after N/10 of
//! warm-up, and no `record_create`. Without it the figures are the ones above. The timed loops
//! are the functions `time_checks` and `time_bare_queries`, for callgrind's `--toggle-collect`.

use std::error::Error;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use rusqlite::{Connection, OpenFlags};
use rust_decimal::Decimal;
use sync_core::domain::{
    AuxiliaryDriver, CnhNumber, Cpf, DriverId, DriverLicence, Fine, LicenceKind, Penalty,
    PenaltyKind, Permit, PermitState, Person, Plate, Registry, Renavam, ServiceKind, Stand,
    StandSchedule, Taximeter, Vehicle, VehicleCategory,
};
use sync_core::field::{FieldRecords, NewInfraction};
use sync_core::records::{Position, Signature, UserRole};
use sync_core::rules::{self, CheckInput, Observation, RulesConfig, VehicleQuery};
use sync_core::store::{DeviceIdentity, SecretVault, Store};

type Res<T> = Result<T, Box<dyn Error>>;

const PERMITS: usize = 40_000;
const STANDS: usize = 120;
const WARMUP: usize = 2_000;
const SAMPLES: usize = 20_000;
/// Overrides `SAMPLES` (and scales `WARMUP`), skipping `record_create`: see the module doc.
const SAMPLES_ENV: &str = "DEVICE_BENCH_SAMPLES";
const RECORDS: usize = 2_000;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The `N` decimal digits of `n`, most significant first (left-padded with zeros).
fn digits<const N: usize>(mut n: u64) -> [u8; N] {
    let mut d = [0u8; N];
    for slot in d.iter_mut().rev() {
        *slot = (n % 10) as u8;
        n /= 10;
    }
    d
}

// Check digits come from sync-core's `from_base`: the one implementation of D01–D03.

/// CPF with check digits (D01) from a 9-digit base.
fn cpf(base: u64) -> Res<Cpf> {
    Cpf::from_base(digits(base)).ok_or_else(|| format!("CPF base {base} inválida").into())
}

/// CNH registro with check digits (D02) from a 9-digit base.
fn cnh(base: u64) -> Res<CnhNumber> {
    CnhNumber::from_base(digits(base)).ok_or_else(|| format!("CNH base {base} inválida").into())
}

/// RENAVAM with its check digit (D03) from a 10-digit base.
fn renavam(base: u64) -> Res<Renavam> {
    Renavam::from_base(digits(base)).ok_or_else(|| format!("RENAVAM base {base} inválida").into())
}

/// `LLL9L99` from the index: unique for every index below 26³·10·26·100.
fn plate_of(i: usize) -> Res<Plate> {
    let mut n = i;
    let d67 = n % 100;
    n /= 100;
    let l5 = n % 26;
    n /= 26;
    let d4 = n % 10;
    n /= 10;
    let letter = |k: usize| char::from(b'A' + (k % 26) as u8);
    let s = format!(
        "{}{}{}{d4}{}{d67:02}",
        letter(n / 676),
        letter(n / 26),
        letter(n),
        letter(l5)
    );
    Ok(Plate::parse(&s)?)
}

fn date(y: i32, m: u32, d: u32) -> Res<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d).ok_or_else(|| "bad date".into())
}

fn person(k: usize) -> Res<Person> {
    Ok(Person {
        id: format!("P{k:06}"),
        name: format!("Motorista {k}"),
        cpf: cpf(100_000_000 + k as u64 * 7)?,
        birth_date: date(
            1960 + (k % 40) as i32,
            1 + (k % 12) as u32,
            1 + (k % 28) as u32,
        )?,
        licence: DriverLicence {
            number: cnh(300_000_000 + k as u64 * 3)?,
            category: if k.is_multiple_of(4) { "AB" } else { "B" }.into(),
            first_licence_date: date(2000 + (k % 20) as i32, 3, 1)?,
            expiry: date(2027 + (k % 5) as i32, 6, 30)?,
            kind: LicenceKind::D,
            observations: vec!["EAR".into()],
        },
    })
}

/// The registry: 40,000 permits, one holder each, one auxiliary on two thirds of them and a
/// second on every fifth, 120 stands, some suspensions, revocations, warnings and unpaid fines.
fn registry() -> Res<Registry> {
    let mut r = Registry {
        version: 1_000,
        generated_at: Some("2026-11-30T06:00:00Z".parse()?),
        ..Registry::default()
    };
    for s in 0..STANDS {
        r.stands.push(Stand {
            id: format!("S{s:03}"),
            name: format!("Ponto {s}"),
            address: format!("Rua {s}, Americana-SP"),
            schedule: if s.is_multiple_of(6) {
                StandSchedule::Extended
            } else {
                StandSchedule::Day
            },
            service: if s % 10 == 9 {
                ServiceKind::RadioTaxi
            } else {
                ServiceKind::Common
            },
            vacancies: 20,
            coordinator_id: None,
            latitude: None,
            longitude: None,
        });
    }
    let mut next_person = 0;
    for i in 0..PERMITS {
        let holder = person(next_person)?;
        next_person += 1;
        let mut auxiliaries = Vec::new();
        for extra in [!i.is_multiple_of(3), i.is_multiple_of(5)] {
            if extra {
                let a = person(next_person)?;
                next_person += 1;
                auxiliaries.push(AuxiliaryDriver {
                    person_id: a.id.clone(),
                    licence_number: format!("{:05}-A{}", i + 1, auxiliaries.len() + 1),
                    registered_on: date(2020, 2, 10)?,
                });
                r.people.push(a);
            }
        }
        let stand = &r.stands[i % STANDS];
        let number = format!("{:05}", i + 1);
        r.vehicles.push(Vehicle {
            id: format!("V{i:06}"),
            plate: plate_of(i)?,
            renavam: renavam(5_000_000_000 + i as u64 * 13)?,
            make_model: "Chevrolet Spin 1.8".into(),
            colour: "Prata".into(),
            year_of_manufacture: 2018 + (i % 8) as i32,
            doors: 4,
            capacity_incl_driver: 7,
            licensing_municipality: "AMERICANA".into(),
            licensing_uf: "SP".into(),
            category: VehicleCategory::Aluguel,
            owner_cpf: holder.cpf.clone(),
            taximeter: Some(Taximeter {
                certificate_number: Some(format!("IPEM-{i}")),
                verified_on: date(2026, 3, 2)?,
                valid_until_year: Some(2027),
                seal_intact: true,
            }),
        });
        let state = if i.is_multiple_of(211) {
            PermitState::Revoked {
                on: date(2026, 6, 1)?,
            }
        } else if i.is_multiple_of(97) {
            PermitState::Suspended {
                from: date(2026, 11, 20)?,
                until: date(2026, 12, 4)?,
            }
        } else {
            PermitState::Active
        };
        if i.is_multiple_of(97) {
            r.penalties.push(Penalty {
                id: format!("PEN-S{i}"),
                permit_number: number.clone(),
                person_id: Some(holder.id.clone()),
                kind: PenaltyKind::Suspension { days: 15 },
                decided_on: date(2026, 11, 10)?,
                starts_on: date(2026, 11, 20)?,
                record_id: None,
            });
        }
        if i.is_multiple_of(50) {
            r.penalties.push(Penalty {
                id: format!("PEN-W{i}"),
                permit_number: number.clone(),
                person_id: Some(holder.id.clone()),
                kind: PenaltyKind::WrittenWarning,
                decided_on: date(2025, 5, 10)?,
                starts_on: date(2025, 5, 10)?,
                record_id: None,
            });
        }
        if i.is_multiple_of(40) {
            r.fines.push(Fine {
                id: format!("FINE-{i}"),
                permit_number: number.clone(),
                amount: Decimal::new(76_445, 2),
                issued_on: date(2025, 9, 1)?,
                paid_on: None,
            });
        }
        r.permits.push(Permit {
            number,
            holder_id: holder.id.clone(),
            auxiliaries,
            vehicle_id: format!("V{i:06}"),
            stand_id: stand.id.clone(),
            service: stand.service,
            issued_on: date(2015, 6, 1)?,
            renewal_year: if i.is_multiple_of(13) { 2025 } else { 2026 },
            edital_date: Some(date(2015, 3, 2)?),
            state,
            illness_authorisation: None,
        });
        r.people.push(holder);
    }
    Ok(r)
}

/// A random field check: plate in either spelling; at the wheel the holder (70 %), an
/// auxiliary (15 %) or the holder of another permit (15 %); sometimes idle at another stand.
fn random_input(rng: &mut Rng, r: &Registry, at: DateTime<Utc>) -> Res<CheckInput> {
    let i = rng.below(PERMITS);
    let permit = &r.permits[i];
    let plate = &r.vehicles[i].plate;
    let spelled = match (rng.below(2), plate.old_form()) {
        (0, Some(old)) => Plate::parse(&format!("{}-{}", &old[..3], &old[3..]))?,
        _ => plate.clone(),
    };
    let roll = rng.below(100);
    let driver_id = if roll < 70 || permit.auxiliaries.is_empty() && roll < 85 {
        permit.holder_id.clone()
    } else if roll < 85 {
        permit.auxiliaries[0].person_id.clone()
    } else {
        r.permits[rng.below(PERMITS)].holder_id.clone()
    };
    // Person ids are P{k:06} with k their index in generation order, not in `r.people`.
    let k: usize = driver_id[1..].parse()?;
    let cpf = person(k)?.cpf;
    let observation = if rng.below(5) == 0 {
        Observation {
            at_stand: Some(format!("S{:03}", rng.below(STANDS))),
            idle: true,
            ..Observation::default()
        }
    } else {
        Observation::default()
    };
    Ok(CheckInput {
        vehicle: VehicleQuery::Plate(spelled),
        driver: DriverId::Cpf(cpf),
        at,
        observation,
        registry_refreshed_at: None,
    })
}

fn percentile_us(sorted: &[Duration], p: f64) -> f64 {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)].as_secs_f64() * 1e6
}

/// `1`: the store encrypted as on the phone (module doc).
const ENCRYPTED_ENV: &str = "DEVICE_BENCH_ENCRYPTED";

fn main() -> Res<()> {
    let quick: Option<usize> = match std::env::var(SAMPLES_ENV) {
        Ok(n) => Some(n.parse::<usize>()?.max(1)),
        Err(_) => None,
    };
    let (warmup, samples) = quick.map_or((WARMUP, SAMPLES), |n| (n / 10, n));
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("device.db");
    let reg = registry()?;
    let refreshed: DateTime<Utc> = "2026-11-30T09:00:00Z".parse()?;
    let at: DateTime<Utc> = "2026-11-30T15:30:00Z".parse()?;
    let config = RulesConfig::default();

    let encrypted = std::env::var_os(ENCRYPTED_ENV).is_some_and(|v| v == "1");
    let vault = std::sync::Arc::new(sync_core::store::MemoryVault::default());
    let mut store = if encrypted {
        Store::open_encrypted(&path, vault.clone())?
    } else {
        Store::open(&path)?
    };
    eprintln!("store encrypted (SQLCipher): {encrypted}");
    let t0 = Instant::now();
    store.apply_snapshot(&reg, refreshed)?;
    let load_s = t0.elapsed().as_secs_f64();
    eprintln!(
        "snapshot of {PERMITS} permits, {} people applied in {load_s:.2} s; file {} MB",
        reg.people.len(),
        std::fs::metadata(&path)?.len() / 1_000_000
    );

    // The store's answer is the engine's answer on the whole registry.
    {
        let index = reg.index();
        let mut rng = Rng(0x1234_5678_9ABC_DEF1);
        for _ in 0..300 {
            let mut input = random_input(&mut rng, &reg, at)?;
            let from_store = store.check(&input)?;
            input.registry_refreshed_at = Some(refreshed);
            if from_store != rules::check_registry(&index, &input, &config) {
                return Err(format!("store verdict differs for {input:?}").into());
            }
        }
    }

    // lookup_check
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let inputs: Vec<CheckInput> = (0..warmup + samples)
        .map(|_| random_input(&mut rng, &reg, at))
        .collect::<Res<_>>()?;
    let (mut times, mut irregular) = time_checks(&store, &inputs, warmup)?;
    times.sort_unstable();
    let (check_p50, check_p99) = (percentile_us(&times, 0.50), percentile_us(&times, 0.99));
    eprintln!("{irregular} of {samples} verdicts irregular");

    // Breakdown (stderr): reading the facts from SQLite vs evaluating the rules on them.
    let (mut facts_t, mut engine_t) = (Vec::new(), Vec::new());
    for (n, input) in inputs.iter().enumerate() {
        let t = Instant::now();
        let facts = store.check_facts(input)?;
        let t1 = Instant::now();
        let v = rules::check(&facts, &config);
        let t2 = Instant::now();
        if n >= warmup {
            facts_t.push(t1 - t);
            engine_t.push(t2 - t1);
            irregular -= usize::from(v.overall == rules::Overall::Irregular);
        }
    }
    facts_t.sort_unstable();
    engine_t.sort_unstable();
    eprintln!(
        "breakdown: facts from SQLite p50 {:.2} µs p99 {:.2} µs; rules::check p50 {:.2} µs p99 {:.2} µs",
        percentile_us(&facts_t, 0.5),
        percentile_us(&facts_t, 0.99),
        percentile_us(&engine_t, 0.5),
        percentile_us(&engine_t, 0.99)
    );
    if irregular != 0 {
        return Err("check and check_facts + rules::check disagree".into());
    }

    // sqlite_point_query: same file, same table, bare indexed query, body read but not parsed.
    // Same I/O path as the store (memory-mapped reads), so the ratio compares work, not setup.
    let conn = Connection::open_with_flags(
        &path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    if let Some(key) = vault.load(sync_core::store::DATABASE_KEY)? {
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        conn.pragma_update(None, "key", format!("x'{hex}'"))?;
    }
    conn.pragma_update(None, "mmap_size", 256i64 * 1024 * 1024)?;
    let numbers: Vec<String> = (0..warmup + samples)
        .map(|_| format!("{:05}", rng.below(PERMITS) + 1))
        .collect();
    let mut stmt = conn.prepare_cached("SELECT body FROM reg_permits WHERE number = ?1")?;
    let (mut times, bytes) = time_bare_queries(&mut stmt, &numbers, warmup)?;
    drop(stmt);
    times.sort_unstable();
    let (bare_p50, bare_p99) = (percentile_us(&times, 0.50), percentile_us(&times, 0.99));
    eprintln!("bare query read {} KB of permit bodies", bytes / 1024);

    println!(
        "{}",
        serde_json::json!({"bench": "lookup_check", "permits": PERMITS, "encrypted": encrypted,
            "p50_us": round2(check_p50), "p99_us": round2(check_p99)})
    );
    println!(
        "{}",
        serde_json::json!({"bench": "sqlite_point_query", "permits": PERMITS, "encrypted": encrypted,
            "p50_us": round2(bare_p50), "p99_us": round2(bare_p99)})
    );
    if quick.is_some() {
        return Ok(());
    }

    // record_create: real autos de infração through the field-records layer — the check,
    // the verdict sealed into a new Automerge document, issued when irregular, an auto number
    // taken — each write its own durable (fsync'd) transaction.
    store.set_device_identity(
        &DeviceIdentity {
            device_id: uuid::Uuid::now_v7(),
            user_id: "U-GM-BENCH".into(),
            role: UserRole::GuardaMunicipal,
            stand_id: None,
            issuing_body: None,
        },
        at,
    )?;
    store.add_number_block(1, 1_000_000)?;
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut autos = Vec::with_capacity(RECORDS);
    for n in 0..RECORDS {
        let input = random_input(&mut rng, &reg, at)?;
        let irregular = store.check(&input)?.overall == rules::Overall::Irregular;
        autos.push(NewInfraction {
            vehicle: input.vehicle,
            driver: input.driver,
            driver_name: None,
            at,
            monotonic: n as u64,
            observation: input.observation,
            position: Some(Position {
                lat: -22.74,
                lon: -47.33,
                accuracy_m: 6.0,
            }),
            facts: None,
            extra_legal_basis: Vec::new(),
            witnesses: Vec::new(),
            photos: Vec::new(),
            confirm_vehicle: true,
            issue: irregular.then(|| Signature::Missing {
                reason: "recusou-se a assinar".into(),
            }),
        });
    }
    let mut field = FieldRecords::open(&mut store)?;
    let t = Instant::now();
    for auto in autos {
        field.create_infraction(auto)?;
    }
    let secs = t.elapsed().as_secs_f64();
    let sizes: Vec<usize> = store
        .list_records()?
        .iter()
        .map(|r| {
            store
                .load_record_bytes(&r.id)
                .map(|p| p.iter().map(Vec::len).sum())
        })
        .collect::<Result<_, _>>()?;
    let avg_bytes = sizes.iter().sum::<usize>() as f64 / sizes.len().max(1) as f64;
    eprintln!(
        "records: {} stored, {:.0} bytes on average (min {}, max {}); numbers left {}",
        sizes.len(),
        avg_bytes,
        sizes.iter().min().unwrap_or(&0),
        sizes.iter().max().unwrap_or(&0),
        store.numbers_left()?
    );
    eprintln!(
        "disk flush ceiling here: {:.0} fdatasync/s (each durable commit needs one)",
        flush_ceiling(dir.path())?
    );
    println!(
        "{}",
        serde_json::json!({"bench": "record_create", "records": RECORDS, "encrypted": encrypted,
            "per_sec": (RECORDS as f64 / secs).round(), "avg_bytes": avg_bytes.round()})
    );
    Ok(())
}

// The two timed loops are functions of their own, never inlined, so that callgrind can count
// exactly their instructions: `--collect-atstart=no --toggle-collect=device::time_checks`.

/// `Store::check` of every input: the time of each after the first `warmup`, and how many of
/// those verdicts are irregular.
#[inline(never)]
fn time_checks(store: &Store, inputs: &[CheckInput], warmup: usize) -> Res<(Vec<Duration>, usize)> {
    let mut times = Vec::with_capacity(inputs.len().saturating_sub(warmup));
    let mut irregular = 0usize;
    for (n, input) in inputs.iter().enumerate() {
        let t = Instant::now();
        let v = store.check(input)?;
        let dt = t.elapsed();
        if n >= warmup {
            times.push(dt);
            irregular += usize::from(v.overall == rules::Overall::Irregular);
        }
    }
    Ok((times, irregular))
}

/// The bare query for every number: the time of each after the first `warmup`, and the bytes
/// of permit bodies read.
#[inline(never)]
fn time_bare_queries(
    stmt: &mut rusqlite::CachedStatement<'_>,
    numbers: &[String],
    warmup: usize,
) -> Res<(Vec<Duration>, usize)> {
    let mut times = Vec::with_capacity(numbers.len().saturating_sub(warmup));
    let mut bytes = 0usize;
    for (n, number) in numbers.iter().enumerate() {
        let t = Instant::now();
        let len = stmt.query_row([number], |r| Ok(r.get_ref(0)?.as_bytes()?.len()))?;
        let dt = t.elapsed();
        bytes += len;
        if n >= warmup {
            times.push(dt);
        }
    }
    Ok((times, bytes))
}

/// How many append + `fdatasync` cycles per second the disk under the store sustains: the upper
/// bound of durable, one-transaction-each writes (SQLite's WAL commit is one such cycle).
fn flush_ceiling(dir: &std::path::Path) -> Res<f64> {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("flush-probe"))?;
    let block = [7u8; 4096];
    let n = 300;
    let t = Instant::now();
    for _ in 0..n {
        f.write_all(&block)?;
        f.sync_data()?;
    }
    Ok(f64::from(n) / t.elapsed().as_secs_f64())
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
