//! `load-registry --data DIR FILE.json`: replaces the registry of a stopped server's data
//! directory by a registry snapshot (JSON), through the server library's own registry commit —
//! validated, diffed into the change log, audited and anchored, as `taxi-fiscal import` writes
//! a CSV — but without the CSV's 5,000-row limit of one import, so that the benchmarks can load
//! a city of 40,000 or 200,000 generated permits. Permits' penalties, fines, transfers and the
//! law parameters stay the registry's own, as in an import. A separate process so that the
//! bench can read its peak memory; the allocator is the server binary's. Prints one JSON line.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // a bench's helper

use std::path::PathBuf;
use std::sync::Arc;

use taxi_fiscal_server::store::Actor;
use taxi_fiscal_server::store::sqlite::SqliteStore;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (data, file) = match args.as_slice() {
        [flag, data, file] if flag == "--data" => (PathBuf::from(data), PathBuf::from(file)),
        _ => panic!("usage: load-registry --data DIR FILE.json"),
    };
    let text = std::fs::read_to_string(&file).expect("the registry file");
    let wanted = sync_core::feed::snapshot_from_json(&text).expect("a registry snapshot");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        taxi_fiscal_server::server::create_data_dir(&data).unwrap();
        let path = data.join(taxi_fiscal_server::config::DB_FILE);
        let store = Arc::new(SqliteStore::open(&path).unwrap());
        let update = taxi_fiscal_server::registry::commit(
            store.as_ref(),
            Actor::cli(chrono::Utc::now()),
            "registry.import",
            "registry",
            |current| {
                let mut next = wanted.clone();
                next.version = current.version;
                next.generated_at = current.generated_at;
                next.penalties.clone_from(&current.penalties);
                next.fines.clone_from(&current.fines);
                next.transfers.clone_from(&current.transfers);
                next.parameters.clone_from(&current.parameters);
                Ok(next)
            },
        )
        .await
        .expect("the registry commit");
        taxi_fiscal_server::server::anchor_audit_head(store.as_ref(), &data, "cli", None).await;
        println!(
            "{}",
            serde_json::json!({"version": update.version, "changed": update.changed,
                               "changes": update.changes.len(), "permits": wanted.permits.len()})
        );
    });
}
