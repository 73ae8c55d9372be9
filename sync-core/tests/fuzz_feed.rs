//! The fuzz target `registry_feed` on stable, within a fixed budget: every input checked in
//! under `fuzz/corpus/registry_feed/` is replayed, then proptest runs a fixed number of
//! hostile variants of a real snapshot and a real batch of changes — JSON values replaced or
//! removed, byte flips, truncations, splices, either part zstd-compressed or a zstd bomb — as a
//! hostile server would send them. Needs the `client` feature (the zstd decode), which the
//! workspace build enables. Longer runs: `fuzz/README.md`.
#![cfg(feature = "client")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::io::Read;
use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::Value;
use sync_core::feed::{self, RegistryChanges};
use sync_core::fuzzing::{FeedInput, registry_feed};
use sync_core::testkit::sample_registry;

/// Cases per property: each opens a device store (a few ms in debug) and applies up to two
/// bodies, so each test stays well under 20 s.
const CASES: u32 = 96;

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/registry_feed");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file() {
            out.push((path.clone(), std::fs::read(&path).unwrap()));
        }
    }
    out.sort();
    out
}

/// The sample registry as a snapshot at version 3, and the batch from 3 to 4 that renames a
/// person, deletes a penalty and adds a fine.
fn seeds() -> (Value, Value) {
    let mut old = sample_registry();
    old.version = 3;
    let mut new = old.clone();
    new.version = 4;
    new.people[0].name = String::from("Nome Novo");
    new.penalties.pop();
    if let Some(f) = new.fines.first().cloned() {
        let mut f = f;
        f.id = String::from("FINE-NEW");
        new.fines.push(f);
    }
    let changes: RegistryChanges = feed::diff(&old, &new);
    assert!(!changes.changes.is_empty());
    (
        serde_json::to_value(&old).unwrap(),
        serde_json::to_value(&changes).unwrap(),
    )
}

fn input(snapshot: &Value, changes: &Value, snapshot_zstd: bool, changes_zstd: bool) -> Vec<u8> {
    let enc = |v: &Value, z: bool| {
        let bytes = serde_json::to_vec(v).unwrap();
        if z {
            zstd::encode_all(bytes.as_slice(), 3).unwrap()
        } else {
            bytes
        }
    };
    FeedInput {
        snapshot: enc(snapshot, snapshot_zstd),
        snapshot_zstd,
        changes: enc(changes, changes_zstd),
        changes_zstd,
    }
    .to_bytes()
}

/// A hostile value where a field was.
fn hostile_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(Value::from(u64::MAX)),
        Just(Value::from(-1)),
        Just(Value::from(1e308)),
        Just(Value::from("")),
        Just(Value::from("P01")),
        Just(Value::from("0001")),
        Just(Value::from("9999-12-31")),
        Just(Value::from("x".repeat(100_000))),
        Just(Value::Array(vec![])),
        Just(serde_json::json!({})),
        "\\PC{0,24}".prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

/// One change to the JSON of a body: the `pick`-th node (in document order) replaced, removed
/// from its parent, or duplicated in its array.
#[derive(Debug, Clone)]
enum Edit {
    Replace(usize, Value),
    Remove(usize),
    Duplicate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), hostile_value()).prop_map(|(i, v)| Edit::Replace(i, v)),
        any::<usize>().prop_map(Edit::Remove),
        any::<usize>().prop_map(Edit::Duplicate),
    ]
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(o) => o.values().map(count).sum(),
        _ => 0,
    }
}

/// Applies `e` to the `n`-th node under `v` (0 = `v` itself, which only `Replace` touches).
fn edit_at(v: &mut Value, n: &mut usize, e: &Edit) -> bool {
    if *n == 0 {
        if let Edit::Replace(_, new) = e {
            *v = new.clone();
        }
        return true;
    }
    *n -= 1;
    match v {
        Value::Array(a) => {
            for i in 0..a.len() {
                if *n == 0 {
                    match e {
                        Edit::Remove(_) => {
                            a.remove(i);
                            return true;
                        }
                        Edit::Duplicate(_) => {
                            let copy = a[i].clone();
                            a.insert(i, copy);
                            return true;
                        }
                        Edit::Replace(..) => {}
                    }
                }
                if edit_at(&mut a[i], n, e) {
                    return true;
                }
            }
            false
        }
        Value::Object(o) => {
            let keys: Vec<String> = o.keys().cloned().collect();
            for k in keys {
                if *n == 0 && matches!(e, Edit::Remove(_)) {
                    o.remove(&k);
                    return true;
                }
                if let Some(child) = o.get_mut(&k)
                    && edit_at(child, n, e)
                {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

fn edited(v: &Value, edits: &[Edit]) -> Value {
    let mut v = v.clone();
    for e in edits {
        let i = match e {
            Edit::Replace(i, _) | Edit::Remove(i) | Edit::Duplicate(i) => *i,
        };
        let mut n = i % count(&v);
        edit_at(&mut v, &mut n, e);
    }
    v
}

#[test]
fn registry_feed_corpus_replays() {
    let inputs = corpus();
    assert!(!inputs.is_empty(), "no corpus checked in");
    for (path, data) in inputs {
        eprintln!("{}", path.display());
        registry_feed(&data);
    }
}

/// Found by the mutations below: a snapshot naming one penalty id twice was accepted and
/// stored as one penalty. Now refused whole, and the target's model agrees.
#[test]
fn a_snapshot_with_a_penalty_twice_is_refused() {
    let (mut snapshot, changes) = seeds();
    let penalties = snapshot["penalties"].as_array_mut().unwrap();
    let first = penalties[0].clone();
    penalties.push(first);
    let snap: sync_core::domain::Registry = serde_json::from_value(snapshot.clone()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut store = sync_core::store::Store::open(dir.path().join("device.db")).unwrap();
    let at = "2026-11-30T09:00:00Z".parse().unwrap();
    let e = store.apply_snapshot(&snap, at).unwrap_err().to_string();
    assert!(e.contains("penalidade duplicada"), "{e}");
    registry_feed(&input(&snapshot, &changes, false, false));
}

#[test]
fn the_seeds_apply_and_a_zstd_bomb_is_refused() {
    let (snapshot, changes) = seeds();
    // The seeds are good (or the mutations would only test the parse): a device takes both.
    let dir = tempfile::tempdir().unwrap();
    let mut store = sync_core::store::Store::open(dir.path().join("device.db")).unwrap();
    let at = "2026-11-30T09:00:00Z".parse().unwrap();
    let snap: sync_core::domain::Registry = serde_json::from_value(snapshot.clone()).unwrap();
    store.apply_snapshot(&snap, at).unwrap();
    let batch: RegistryChanges = serde_json::from_value(changes.clone()).unwrap();
    assert_eq!(store.apply_changes(&batch, at).unwrap().version, 4);
    // Accepted as sent: the target compares the replica with the model after each step.
    registry_feed(&input(&snapshot, &changes, false, false));
    registry_feed(&input(&snapshot, &changes, true, true));
    // 1 KiB that inflates past the client's bound: refused, not decoded whole.
    let bomb = zstd::encode_all(
        std::io::repeat(b' ').take(sync_core::client::MAX_RESPONSE_BYTES as u64 + 1),
        3,
    )
    .unwrap();
    assert!(bomb.len() < 64 * 1024, "{}", bomb.len());
    registry_feed(
        &FeedInput {
            snapshot: bomb.clone(),
            snapshot_zstd: true,
            changes: bomb,
            changes_zstd: true,
        }
        .to_bytes(),
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: CASES,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_hostile_snapshot_or_batch_never_crashes_the_device(
        snapshot_edits in proptest::collection::vec(edit(), 0..4),
        changes_edits in proptest::collection::vec(edit(), 0..4),
        zstd in 0u8..4,
    ) {
        let (snapshot, changes) = seeds();
        registry_feed(&input(
            &edited(&snapshot, &snapshot_edits),
            &edited(&changes, &changes_edits),
            zstd & 1 != 0,
            zstd & 2 != 0,
        ));
    }

    #[test]
    fn damaged_bytes_never_crash_the_device(
        zstd in 0u8..4,
        flips in proptest::collection::vec((any::<usize>(), 0u8..8), 0..8),
        cut in proptest::option::of(any::<usize>()),
        splice in proptest::option::of((any::<usize>(), proptest::collection::vec(any::<u8>(), 1..32))),
    ) {
        let (snapshot, changes) = seeds();
        let mut data = input(&snapshot, &changes, zstd & 1 != 0, zstd & 2 != 0);
        let len = data.len();
        for (at, bit) in flips {
            data[at % len] ^= 1 << bit;
        }
        if let Some((at, bytes)) = splice {
            let at = at % data.len();
            data.splice(at..at, bytes);
        }
        if let Some(at) = cut {
            data.truncate(at % (data.len() + 1));
        }
        registry_feed(&data);
    }
}

/// Regenerates the checked-in seeds: `cargo test -p sync-core --features client --test
/// fuzz_feed -- --ignored write_seed_corpus`.
#[test]
#[ignore = "writes fuzz/corpus"]
fn write_seed_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/registry_feed");
    std::fs::create_dir_all(&dir).unwrap();
    let (snapshot, changes) = seeds();
    for (name, s, c) in [("plain", false, false), ("zstd", true, true)] {
        std::fs::write(
            dir.join(format!("seed-{name}")),
            input(&snapshot, &changes, s, c),
        )
        .unwrap();
    }
}
