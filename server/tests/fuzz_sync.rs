//! Bounded fuzzing of `POST /v1/sync`, on stable, in every test run: the corpus files that
//! found bugs are replayed, then property tests send `taxi_fiscal_server::fuzzing::sync_request`
//! mutations of a valid request — of its JSON text, of the Automerge bytes inside it, zstd
//! compressed or not — through the real router and a SQLite store. The server must never
//! answer with an internal error (a caught panic is a 500). The same entry point is the
//! cargo-fuzz target `sync_request` for longer runs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;

use base64::Engine;
use proptest::prelude::*;
use taxi_fiscal_server::fuzzing::{seed_request, sync_answer, sync_request};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn the_corpus_replays_without_an_internal_error() {
    let files = corpus("sync_request");
    assert!(!files.is_empty(), "the corpus of sync_request is empty");
    for (path, bytes) in files {
        eprintln!("{}", path.display());
        sync_request(&bytes);
    }
}

/// The record bytes of the seed request, to mutate inside valid JSON.
fn seed_parts() -> (serde_json::Value, Vec<u8>) {
    let json: serde_json::Value = serde_json::from_slice(&seed_request()).unwrap();
    let doc = json["new_records"][0]["doc"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(doc)
        .unwrap();
    (json, bytes)
}

fn with_doc(mut json: serde_json::Value, doc: &[u8]) -> Vec<u8> {
    json["new_records"][0]["doc"] =
        serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(doc));
    serde_json::to_vec(&json).unwrap()
}

fn flip(mut b: Vec<u8>, flips: &[(usize, u8)], cut: Option<usize>) -> Vec<u8> {
    let n = b.len().max(1);
    for (at, x) in flips {
        if let Some(v) = b.get_mut(at % n) {
            *v ^= x;
        }
    }
    if let Some(c) = cut {
        b.truncate(c % n);
    }
    b
}

#[test]
fn the_seed_request_is_accepted() {
    // The mutations below start from a request the server takes: otherwise they would only
    // exercise the first refusal.
    let seed = seed_request();
    let (status, body) = sync_answer(&seed);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["accepted"].as_array().map(Vec::len), Some(1), "{body}");
    assert!(body.get("rejections").is_none(), "{body}");
    sync_request(&zstd::encode_all(&seed[..], 3).unwrap());
}

/// Writes the corpus files of the attacks the record sync now refuses: a record whose bytes
/// make automerge panic next to a good one, a record nested 500 deep, facts of 2 MB (zstd).
/// Run by hand (`cargo test -p taxi-fiscal-server --test fuzz_sync -- --ignored write_corpus`).
#[test]
#[ignore = "writes corpus files"]
fn write_corpus() {
    use automerge::transaction::Transactable;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/sync_request");
    let (json, good) = seed_parts();
    let doc_of = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    // The library panic, beside a good record.
    let panicking = std::fs::read_dir(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus/record_doc"),
    )
    .unwrap()
    .map(|e| e.unwrap().path())
    .find(|p| {
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("automerge-panic")
    })
    .map(|p| std::fs::read(p).unwrap())
    .unwrap();
    let mut two = json.clone();
    two["new_records"] = serde_json::json!([
        { "record_id": uuid::Uuid::now_v7().to_string(), "doc": doc_of(&panicking) },
        json["new_records"][0].clone(),
    ]);
    std::fs::write(
        dir.join("library-panic-beside-a-good-record.json"),
        serde_json::to_vec(&two).unwrap(),
    )
    .unwrap();
    // Nested 500 deep, and facts of 2 MB, each as a change after the good record's creation.
    let edited = |edit: &dyn Fn(&mut automerge::AutoCommit)| {
        let mut am = automerge::AutoCommit::load(&good).unwrap();
        edit(&mut am);
        am.commit();
        with_doc(json.clone(), &am.save())
    };
    let deep = edited(&|am| {
        let mut obj = am
            .put_object(automerge::ROOT, "x", automerge::ObjType::Map)
            .unwrap();
        for _ in 1..500 {
            obj = am.put_object(&obj, "x", automerge::ObjType::Map).unwrap();
        }
    });
    std::fs::write(dir.join("nested-500-deep.json"), deep).unwrap();
    let huge = edited(&|am| {
        am.put(automerge::ROOT, "facts", "a".repeat(2 * 1024 * 1024))
            .unwrap()
    });
    std::fs::write(
        dir.join("facts-2mb.json.zst"),
        zstd::encode_all(&huge[..], 19).unwrap(),
    )
    .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Mutated record bytes inside a well-formed request (the path to Automerge and the vetting).
    #[test]
    fn mutated_records_inside_a_request_never_fail_the_server(
        flips in prop::collection::vec((any::<usize>(), 1u8..), 1..6),
        cut in prop::option::of(any::<usize>()),
        compress in any::<bool>(),
    ) {
        let (json, doc) = seed_parts();
        let body = with_doc(json, &flip(doc, &flips, cut));
        let body = if compress { zstd::encode_all(&body[..], 3).unwrap() } else { body };
        sync_request(&body);
    }

    /// Mutated bytes of the whole body (the JSON, base64 and zstd decoders).
    #[test]
    fn mutated_bodies_never_fail_the_server(
        flips in prop::collection::vec((any::<usize>(), 1u8..), 1..4),
        cut in prop::option::of(any::<usize>()),
        compress in any::<bool>(),
    ) {
        let body = seed_request();
        let body = if compress { zstd::encode_all(&body[..], 3).unwrap() } else { body };
        sync_request(&flip(body, &flips, cut));
    }
}
