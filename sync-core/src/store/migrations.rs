//! Numbered schema migrations. `MIGRATIONS[i]` takes the schema from version `i` to `i + 1`;
//! `PRAGMA user_version` is the version a file is at. Each migration runs in its own `BEGIN
//! IMMEDIATE` transaction together with its `user_version` bump, so a crash leaves the file at a
//! whole version, and a second process opening the same file meanwhile sees the bump and skips.
//!
//! Rules for adding one: append a new file, never edit a shipped one (devices in the field have
//! run it); the test `migrated_from_v1_equals_fresh` in `tests/store.rs` checks that a file
//! migrated step by step ends with the same schema as a fresh one. Migrations run with foreign
//! keys off, as SQLite's table-rebuild procedure requires, and `PRAGMA foreign_key_check` must
//! be clean before each commit.

use rusqlite::{Connection, TransactionBehavior};

use super::{StoreError, StoreResult};

/// `PRAGMA application_id` of a taxi-fiscal device store: ASCII "TFIS".
pub const APPLICATION_ID: i32 = 0x5446_4953;

const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_registry.sql"),
    include_str!("migrations/0002_records.sql"),
    include_str!("migrations/0003_sync.sql"),
    include_str!("migrations/0004_device.sql"),
    include_str!("migrations/0005_client.sql"),
    include_str!("migrations/0006_check_bundles.sql"),
    include_str!("migrations/0007_law_parameters.sql"),
    include_str!("migrations/0008_device_key.sql"),
    include_str!("migrations/0009_observed_upload.sql"),
    include_str!("migrations/0010_key_in_vault.sql"),
];

/// The schema version this code writes.
pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn` from version `from` to `to` (both within `0..=LATEST_VERSION`).
pub(super) fn migrate(conn: &mut Connection, from: i64, to: i64) -> StoreResult<()> {
    if from >= to {
        return Ok(());
    }
    conn.pragma_update(None, "foreign_keys", false)?;
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= from || version > to {
            continue;
        }
        let fail = |source| StoreError::Migration { version, source };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        // Another process may have migrated between our read and this write lock.
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(fail)?;
        if current >= version {
            continue;
        }
        tx.execute_batch(sql).map_err(fail)?;
        if version == 1 {
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(fail)?;
        }
        tx.pragma_update(None, "user_version", version)
            .map_err(fail)?;
        let dangling = tx
            .prepare("PRAGMA foreign_key_check")
            .and_then(|mut s| s.exists([]))
            .map_err(fail)?;
        if dangling {
            return Err(StoreError::MigrationIntegrity { version });
        }
        tx.commit().map_err(fail)?;
    }
    Ok(())
}
