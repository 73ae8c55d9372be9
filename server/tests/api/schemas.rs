//! The server's payload schemas in `schemas/api/` match the types (like sync-core's
//! `tests/schemas.rs` for `schemas/`). `UPDATE_SNAPSHOTS=1` (or `UPDATE_SCHEMAS=1`) rewrites them.

use std::path::PathBuf;

use taxi_fiscal_server::api::openapi::payload_schemas;

#[test]
fn checked_in_api_schemas_match_types() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../schemas/api");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some()
        || std::env::var_os("UPDATE_SCHEMAS").is_some();
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut drift = Vec::new();
    let mut names = Vec::new();
    for (stem, schema) in payload_schemas() {
        let path = dir.join(format!("{stem}.schema.json"));
        names.push(format!("{stem}.schema.json"));
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
        "schemas/api out of date (rerun with UPDATE_SNAPSHOTS=1): {drift:?}"
    );
    // No stale files either.
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    names.sort();
    assert_eq!(on_disk, names);
}
