//! The checked-in JSON Schemas in `schemas/` must match the Rust types.
//! `UPDATE_SCHEMAS=1 cargo test -p sync-core --test schemas` rewrites them and the example
//! registry fixture (generated from `sync_core::testkit::sample_registry`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas")
}

#[test]
fn checked_in_schemas_match_types() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut drift = Vec::new();
    for (stem, schema) in sync_core::schemas::all() {
        let path = dir().join(format!("{stem}.schema.json"));
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        if update {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(on_disk) if on_disk == text => {}
            _ => drift.push(path.display().to_string()),
        }
    }
    assert!(
        drift.is_empty(),
        "schemas out of date (rerun with UPDATE_SCHEMAS=1): {drift:?}"
    );
}

#[test]
fn example_registry_validates_and_matches_testkit() {
    let path = dir().join("examples/registry.json");
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        let sample = sync_core::testkit::sample_registry();
        std::fs::write(&path, serde_json::to_string_pretty(&sample).unwrap() + "\n").unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let reg = sync_core::domain::Registry::from_json(&text).unwrap();
    assert_eq!(reg, sync_core::testkit::sample_registry());
}
