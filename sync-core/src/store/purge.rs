//! What a revoked device keeps: only the evidence the server has not received.
//!
//! A lost or stolen phone is revoked by the administrator; at its next contact the server
//! answers `device_revoked`, and the sync client calls [`Store::purge_after_revocation`]. In one
//! transaction the device deletes the registry replica (names, CPFs and CNHs of every driver of
//! the city) and its check bundles, every record the server already holds (acknowledged, not
//! changed since) with its chunks and sync state, the photos the server confirmed, the observed
//! people of the records it deleted, and the session's tokens (from the platform keystore too,
//! when the store keeps them there). What the server does not have yet
//! stays: records written or changed since their last acknowledgement, their photos not yet
//! uploaded, their observed people, and refused changes kept as evidence, for the office to
//! collect from the device (a revoked device sends nothing more: it may be in a thief's
//! hands). `secure_delete` zeroes the freed pages and the WAL is truncated afterwards, so the
//! deleted data does not linger in the file.
//!
//! The device's own signing key and number blocks stay: the kept records were signed with that
//! key and numbered from those blocks.

use rusqlite::TransactionBehavior;
use serde::Serialize;

use super::{Store, StoreResult};
use crate::sync::SERVER_PEER;

/// What [`Store::purge_after_revocation`] deleted and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PurgeReport {
    /// Records the server already had, deleted.
    pub records_removed: u64,
    /// Records the server has not received (new or changed), kept to be sent.
    pub records_kept: u64,
    /// Photos the server had confirmed, deleted.
    pub photos_removed: u64,
    /// Registry rows deleted (people, vehicles, stands, permits, penalties, fines, transfers).
    pub registry_rows_removed: u64,
}

impl Store {
    /// Deletes everything the server already has or the registry gave (see the module doc).
    pub fn purge_after_revocation(&mut self) -> StoreResult<PurgeReport> {
        // Freed pages are overwritten with zeros, not left readable in the file.
        self.conn.pragma_update(None, "secure_delete", true)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS purge_keep (id TEXT PRIMARY KEY NOT NULL);
             DELETE FROM purge_keep;",
        )?;
        let records_kept = tx.execute(
            "INSERT INTO purge_keep (id)
             SELECT r.id FROM records r
             LEFT JOIN sync_state s ON s.record_id = r.id AND s.peer = ?1
             WHERE s.record_id IS NULL OR r.write_seq > s.synced_write_seq",
            [SERVER_PEER],
        )? as u64;
        tx.execute(
            "DELETE FROM record_chunks WHERE record_id NOT IN (SELECT id FROM purge_keep)",
            [],
        )?;
        tx.execute(
            "DELETE FROM sync_state WHERE record_id NOT IN (SELECT id FROM purge_keep)",
            [],
        )?;
        let records_removed = tx.execute(
            "DELETE FROM records WHERE id NOT IN (SELECT id FROM purge_keep)",
            [],
        )? as u64;
        tx.execute(
            "DELETE FROM observed_people
             WHERE record_id IS NULL OR record_id NOT IN (SELECT id FROM purge_keep)",
            [],
        )?;
        let photos_removed =
            tx.execute("DELETE FROM photos WHERE uploaded_at IS NOT NULL", [])? as u64;
        let mut registry_rows_removed = 0u64;
        for table in [
            "reg_check_drivers",
            "reg_check_bundles",
            "reg_permit_people",
            "reg_penalties",
            "reg_fines",
            "reg_transfers",
            "reg_permits",
            "reg_stands",
            "reg_vehicles",
            "reg_people",
        ] {
            let n = tx.execute(&format!("DELETE FROM {table}"), [])? as u64;
            if table.starts_with("reg_check") {
                continue;
            }
            registry_rows_removed += n;
        }
        // No registry on this device: the next registration starts from a snapshot.
        tx.execute("DELETE FROM replica_meta", [])?;
        tx.execute("DELETE FROM client_session", [])?;
        tx.execute_batch("DROP TABLE purge_keep;")?;
        tx.commit()?;
        // The WAL still holds the deleted pages until it is checkpointed into the file.
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        if let Some(vault) = self.vault() {
            vault.delete(super::SESSION_TOKENS)?;
        }
        Ok(PurgeReport {
            records_removed,
            records_kept,
            photos_removed,
            registry_rows_removed,
        })
    }
}
