//! Auto numbers stay unique and records intact when the writer dies mid-write.
//!
//! The test binary re-invokes itself (`current_exe`) with `CRASH_CHILD_DB` set: the child runs
//! `crash_writer_child`, which writes field records in a loop through `FieldRecords` — new
//! autos (some issued, some with a photo, numbers running out so that some wait), witnesses and
//! photos added to earlier records, compaction every few chunks — and prints one `COMMIT …`
//! line on stdout after each write returns (i.e. after COMMIT), and a `BEGIN` line before each.
//! The parent reads lines until the child has reported N writes and announced the next, then
//! SIGKILLs it (`Child::kill`): the kill lands inside that write — before its COMMIT, or now and
//! then just after it. Deterministic in what is checked (N reported writes); where exactly in
//! the write the kill lands varies, so it is repeated at several N.
//!
//! After each kill the parent reopens the file and requires: `PRAGMA integrity_check` ok;
//! every record loads from its full save + chunks with no missing change and heads equal to the
//! row's; every reported write is there (its number, witness, photo); document and row numbers
//! agree; no number is used twice and the next one is beyond every used one; photos named by a
//! record are intact. Then it writes on (a new block, pending numbers, a new auto, a witness on
//! a record of the dead child), and the next child continues the same device's actor.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use chrono::{DateTime, Duration, Utc};
use sync_core::domain::{DriverId, Plate};
use sync_core::field::{FieldRecords, NewInfraction, WitnessEntry};
use sync_core::records::{RecordDoc, Signature, UserRole};
use sync_core::rules::{Observation, VehicleQuery};
use sync_core::store::{DeviceIdentity, PhotoStatus, Store};
use sync_core::testkit::{STRANGER_CPF, sample_registry};
use uuid::Uuid;

const CHILD_ENV: &str = "CRASH_CHILD_DB";
const ROUND_ENV: &str = "CRASH_CHILD_ROUND";
/// The child stops by itself after this many writes, should the parent fail to kill it.
const CHILD_MAX_WRITES: usize = 2_000;

fn t0() -> DateTime<Utc> {
    "2026-11-30T15:00:00Z".parse().unwrap()
}

fn identity() -> DeviceIdentity {
    DeviceIdentity {
        device_id: Uuid::from_u128(0xD0_0001),
        user_id: "U-GM-17".into(),
        role: UserRole::GuardaMunicipal,
        stand_id: None,
        issuing_body: None,
    }
}

/// Taxi and driver pairs the sample registry finds irregular (so an auto can be issued), and
/// one driver it does not know (an observed person).
const CASES: [(&str, &str); 4] = [
    ("GHI7J89", "cpf:78000751925"),
    ("BRA2E19", "cpf:99940561580"),
    ("DEF4G56", "cpf:59765613148"),
    ("JKL1M23", STRANGER_CPF),
];

fn infraction(i: usize, at: DateTime<Utc>) -> NewInfraction {
    let (plate, driver) = CASES[i % CASES.len()];
    NewInfraction {
        vehicle: VehicleQuery::Plate(Plate::parse(plate).unwrap()),
        driver: DriverId::parse(driver).unwrap(),
        driver_name: Some(format!("Condutor {i}")),
        at,
        monotonic: i as u64,
        observation: Observation::default(),
        position: None,
        facts: Some(format!("Fatos do auto {i}.")),
        extra_legal_basis: Vec::new(),
        witnesses: Vec::new(),
        photos: if i.is_multiple_of(4) {
            vec![photo(&format!("criação {i}"))]
        } else {
            Vec::new()
        },
        confirm_vehicle: true,
        issue: i.is_multiple_of(2).then(|| Signature::Missing {
            reason: "recusou-se a assinar".into(),
        }),
    }
}

/// A few KB of photo, distinct per label.
fn photo(label: &str) -> Vec<u8> {
    let mut b = label.as_bytes().to_vec();
    b.resize(4096, b'.');
    b
}

/// The child: writes until killed, one `COMMIT op id number detail` line after each write.
#[test]
fn crash_writer_child() {
    let Some(db) = std::env::var_os(CHILD_ENV) else {
        return; // an ordinary test run: nothing to do
    };
    let round: usize = std::env::var(ROUND_ENV).unwrap().parse().unwrap();
    let mut store = Store::open(&db).unwrap();
    let mut out = std::io::stdout().lock();
    let mut ours: Vec<String> = Vec::new();
    for i in 0..CHILD_MAX_WRITES {
        let at = t0() + Duration::seconds((round * 5_000 + i) as i64);
        let mut f = FieldRecords::open(&mut store)
            .unwrap()
            .with_compaction_after(4);
        // Existing records: the earlier ones of this child and those of earlier rounds.
        let existing: Vec<String> = f.list().unwrap().into_iter().map(|r| r.id).collect();
        // Announce the write: the parent kills right after reading this, i.e. inside it.
        writeln!(out, "BEGIN {i}").unwrap();
        out.flush().unwrap();
        let line = match i % 5 {
            3 if !existing.is_empty() => {
                let id = &existing[(i * 7 + round) % existing.len()];
                let o = f
                    .add_witness(id, at, WitnessEntry::named("T", &format!("r{round} w{i}")))
                    .unwrap();
                format!("witness {id} {} {}", num(o.number), o.view.witnesses.len())
            }
            4 if !existing.is_empty() => {
                let id = &existing[(i * 3 + round) % existing.len()];
                let (hash, o) = f
                    .attach_photo(id, at, &photo(&format!("r{round} p{i}")))
                    .unwrap();
                format!("photo {id} {} {hash}", num(o.number))
            }
            _ => {
                let o = f.create_infraction(infraction(i, at)).unwrap();
                ours.push(o.id.clone());
                format!("create {} {} -", o.id, num(o.number))
            }
        };
        writeln!(out, "COMMIT {line}").unwrap();
        out.flush().unwrap();
    }
}

fn num(n: Option<u64>) -> String {
    n.map_or_else(|| "-".into(), |n| n.to_string())
}

/// One reported write.
#[derive(Debug)]
struct Reported {
    op: String,
    id: String,
    number: Option<u64>,
    detail: String,
}

fn parse(line: &str) -> Option<Reported> {
    let mut w = line.strip_prefix("COMMIT ")?.split(' ');
    let (op, id, number, detail) = (w.next()?, w.next()?, w.next()?, w.next()?);
    Some(Reported {
        op: op.into(),
        id: id.into(),
        number: number.parse().ok(),
        detail: detail.into(),
    })
}

/// Runs a child on `db` and SIGKILLs it once it has reported `n` writes and announced the
/// next one — so the kill lands inside that write (a durable write takes at least one fsync,
/// milliseconds; the kill follows the announcement within microseconds). Returns every write
/// it reported.
fn run_and_kill(db: &Path, round: usize, n: usize) -> Vec<Reported> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_writer_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, db)
        .env(ROUND_ENV, round.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut reported = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        let read = stdout.read_line(&mut line).unwrap();
        assert!(read > 0, "child ended after {} writes", reported.len());
        if let Some(r) = parse(line.trim_end()) {
            reported.push(r);
        } else if line.starts_with("BEGIN ") && reported.len() >= n {
            break;
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child was killed, not finished");
    // Lines printed before the kill are writes that committed too.
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    reported.extend(rest.lines().filter_map(parse));
    reported
}

/// Everything that must hold after a crash. Returns the numbers in use.
fn verify(db: &Path, reported: &[Reported], burned: &mut BTreeSet<u64>) -> BTreeSet<u64> {
    let mut store = Store::open(db).unwrap();
    assert_eq!(store.integrity_check().unwrap(), Vec::<String>::new());
    let rows = store.list_records().unwrap();
    let mut used = BTreeSet::new();
    let mut views = BTreeMap::new();
    for row in &rows {
        let mut all = Vec::new();
        for p in store.load_record_bytes(&row.id).unwrap() {
            all.extend(p);
        }
        let mut doc = RecordDoc::load(&all).unwrap();
        let am = doc.automerge_mut();
        assert!(
            am.get_missing_deps(&[]).is_empty(),
            "{}: chunk lost",
            row.id
        );
        // The device's actor wrote sequence numbers 1, 2, 3… with no gap or repeat.
        let mut seqs: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
        for c in am.get_changes(&[]) {
            seqs.entry(c.actor_id().to_bytes().to_vec())
                .or_default()
                .push(c.seq());
        }
        for s in seqs.values_mut() {
            s.sort_unstable();
            assert_eq!(*s, (1..=s.len() as u64).collect::<Vec<_>>(), "{}", row.id);
        }
        let mut heads = doc.heads();
        heads.sort();
        let heads: Vec<u8> = heads.iter().flat_map(|h| h.0).collect();
        let view = doc.view().unwrap();
        let doc_number = view.number.as_ref().map(|n| n.parse::<u64>().unwrap());
        assert_eq!(
            doc_number, row.number,
            "{}: document and row disagree",
            row.id
        );
        assert_eq!(row.waiting_for_number, row.number.is_none(), "{}", row.id);
        if let Some(n) = row.number {
            assert!(used.insert(n), "number {n} used twice");
            assert!(!burned.contains(&n), "number {n} was already handed out");
        }
        for h in &view.photos {
            assert_eq!(store.verify_photo(h).unwrap(), PhotoStatus::Intact, "{h}");
        }
        // The row's heads were written in the same transaction as the last chunk.
        let stored_heads = store_heads(db, &row.id);
        assert_eq!(stored_heads, heads, "{}: heads", row.id);
        views.insert(row.id.clone(), view);
    }
    for r in reported {
        let v = views
            .get(&r.id)
            .unwrap_or_else(|| panic!("reported {r:?} is missing"));
        match r.op.as_str() {
            "create" => {
                let row = rows.iter().find(|x| x.id == r.id).unwrap();
                // Numbered then, or numbered later from a block the parent added.
                if r.number.is_some() {
                    assert_eq!(row.number, r.number, "{r:?}");
                }
            }
            "witness" => {
                let n: usize = r.detail.parse().unwrap();
                assert!(v.witnesses.len() >= n, "{r:?}");
            }
            "photo" => assert!(v.photos.contains(&r.detail), "{r:?}"),
            other => panic!("{other}"),
        }
    }
    // The next number is beyond every number in use (numbers are never reused).
    if let Some(next) = store.take_number().unwrap() {
        assert!(
            used.iter().all(|u| *u < next),
            "next {next} ≤ a used number"
        );
        burned.insert(next);
    }
    used
}

fn max_write_seq(db: &Path) -> i64 {
    let store = Store::open(db).unwrap();
    let rows = store.list_records().unwrap();
    rows.iter().map(|r| r.write_seq).max().unwrap_or(0)
}

fn store_heads(db: &Path, id: &str) -> Vec<u8> {
    let c = rusqlite::Connection::open(db).unwrap();
    c.query_row("SELECT heads FROM records WHERE id = ?1", [id], |r| {
        r.get(0)
    })
    .unwrap()
}

#[test]
fn numbers_stay_unique_when_the_writer_is_killed_mid_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("device.db");
    {
        let mut store = Store::open(&db).unwrap();
        store.apply_snapshot(&sample_registry(), t0()).unwrap();
        store.set_device_identity(&identity(), t0()).unwrap();
        // Few numbers: they run out within the rounds, so records also wait for numbers.
        store.add_number_block(1, 15).unwrap();
    }
    let mut burned = BTreeSet::new();
    let mut all_reported = Vec::new();
    // Writes known to be committed. Every write sets its record's `write_seq` to one past the
    // highest, so the highest is the count of committed writes: after a kill it tells whether
    // the announced write was rolled back (count = reported) or had just committed (+1).
    let mut committed = 0i64;
    let mut rolled_back = 0;
    for (round, n) in [1usize, 9, 26, 47, 75].into_iter().enumerate() {
        let reported = run_and_kill(&db, round, n);
        assert!(reported.len() >= n);
        // The child committed exactly n writes before announcing the one it was killed in;
        // that one either rolled back or had just committed (its line may have been printed).
        let in_child = max_write_seq(&db) - committed;
        assert!(
            in_child == n as i64 || in_child == n as i64 + 1,
            "{in_child} writes committed, {n} reported before the kill"
        );
        assert!(reported.len() as i64 <= in_child);
        rolled_back += usize::from(in_child == n as i64);
        committed += in_child;
        all_reported.extend(reported);
        let used = verify(&db, &all_reported, &mut burned);

        // Life goes on after the crash: a new block, pending records numbered, a new auto and
        // a witness on a record the dead child wrote — all with the same device actor.
        let mut store = Store::open(&db).unwrap();
        let first = 1_000 * (round as u64 + 1);
        store.add_number_block(first, first + 11).unwrap();
        let mut f = FieldRecords::open(&mut store).unwrap();
        let at = t0() + Duration::hours(2 + round as i64);
        let numbered = f.assign_pending_numbers(at).unwrap();
        committed += numbered.len() as i64 + 2; // and the auto and the witness below
        for (_, n) in &numbered {
            assert!(*n >= first && !used.contains(n));
        }
        let o = f.create_infraction(infraction(round, at)).unwrap();
        assert!(o.number.is_some() || f.store().numbers_left().unwrap() == 0);
        let victim = &all_reported[0].id;
        let before = f.load(victim).unwrap().view().unwrap().witnesses.len();
        let w = f
            .add_witness(victim, at, WitnessEntry::named("Depois", "após a queda"))
            .unwrap();
        assert_eq!(w.view.witnesses.len(), before + 1);
        drop(store);
        verify(&db, &all_reported, &mut burned);
        assert_eq!(max_write_seq(&db), committed);
    }
    let store = Store::open(&db).unwrap();
    let status = store.status().unwrap();
    assert!(status.counts.records >= 80, "{status:?}");
    assert!(status.counts.photos > 10, "{status:?}");
    eprintln!(
        "crash test: {} reported writes, {} records, {} waiting, {} numbers burned by checks, \
         {rolled_back}/5 kills rolled the announced write back",
        all_reported.len(),
        status.counts.records,
        status.counts.records_waiting_for_number,
        burned.len()
    );
}
