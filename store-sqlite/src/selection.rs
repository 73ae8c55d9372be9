//! The editais de chamamento in SQLite: table `editais` (migration 020), one row per edital
//! with its state as JSON and its version.
//!
//! A save checks the version inside the write transaction (the single writer makes the check
//! and the write one step), writes the state, commits the registry version it carries through
//! `registry::commit` — the same function as `Store::commit_registry`, with its change log and
//! audit row — and appends the edital's own audit row; any failure rolls the whole transaction
//! back. A save that carries a read set (opening an edital) first checks that the registry
//! version and every other edital's version are still those the step read.

use crate::Result;
use rusqlite::{Connection, OptionalExtension, Transaction};

use taxi_fiscal_store::audit::{AuditEntry, format_at};
use taxi_fiscal_store::selection::{
    EditalRow, EditalSave, EditalSaved, MAX_EDITAIS_LISTED, ReadSet, edital_payload_hash,
};
use taxi_fiscal_store::{RegistryCommitted, StoreError};

use super::parse_time;

fn corrupt(reason: impl ToString) -> crate::Error {
    crate::Error::Store(StoreError::Corrupt {
        what: "edital",
        reason: reason.to_string(),
    })
}

fn row_of(id: String, version: i64, state: &str, updated_at: &str) -> Result<EditalRow> {
    Ok(EditalRow {
        id,
        version: u64::try_from(version).map_err(corrupt)?,
        edital: serde_json::from_str(state).map_err(corrupt)?,
        updated_at: parse_time(updated_at)?,
    })
}

/// The edital `id`, if stored.
pub(super) fn edital(conn: &Connection, id: &str) -> Result<Option<EditalRow>> {
    let found: Option<(i64, String, String)> = conn
        .prepare_cached("SELECT version, state, updated_at FROM editais WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    found
        .map(|(v, state, at)| row_of(id.to_owned(), v, &state, &at))
        .transpose()
}

/// The newest editais, at most [`MAX_EDITAIS_LISTED`].
pub(super) fn list(conn: &Connection) -> Result<Vec<EditalRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, version, state, updated_at FROM editais \
         ORDER BY created_at DESC, id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map(
        [i64::try_from(MAX_EDITAIS_LISTED).unwrap_or(i64::MAX)],
        |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        },
    )?;
    let mut out = Vec::new();
    for row in rows {
        let (id, v, state, at) = row?;
        out.push(row_of(id, v, &state, &at)?);
    }
    Ok(out)
}

/// `VersionConflict` when the registry or the other editais are no longer what `read` saw.
fn check_read(tx: &Transaction<'_>, id: &str, read: &ReadSet) -> Result<()> {
    let (registry, _) = super::registry::version(tx)?;
    let conflict = |found| {
        Err(StoreError::VersionConflict {
            expected: read.registry_version,
            found,
        }
        .into())
    };
    if registry != read.registry_version {
        return conflict(registry);
    }
    let mut stmt = tx.prepare_cached("SELECT id, version FROM editais WHERE id <> ?1")?;
    let rows = stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    let mut now = Vec::new();
    for row in rows {
        let (other, v) = row?;
        now.push((other, u64::try_from(v).map_err(corrupt)?));
    }
    now.sort();
    let mut seen = read.editais.clone();
    seen.sort();
    if now != seen {
        return conflict(registry);
    }
    Ok(())
}

/// Writes one step of an edital (see the module doc).
pub(super) fn save(tx: &Transaction<'_>, save: EditalSave) -> Result<EditalSaved> {
    let id = save.edital.id.as_str();
    let current: Option<i64> = tx
        .prepare_cached("SELECT version FROM editais WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?;
    let current = current.map(u64::try_from).transpose().map_err(corrupt)?;
    let version = match (save.expected_version, current) {
        (None, Some(_)) => return Err(StoreError::Duplicate { what: "edital" }.into()),
        (Some(_), None) => return Err(StoreError::NotFound { what: "edital" }.into()),
        (Some(expected), Some(found)) if expected != found => {
            return Err(StoreError::VersionConflict { expected, found }.into());
        }
        (Some(found), Some(_)) => found + 1,
        (None, None) => 1,
    };
    if let Some(read) = &save.read {
        check_read(tx, id, read)?;
    }
    let state = serde_json::to_string(&save.edital).map_err(corrupt)?;
    let at = format_at(save.actor.at);
    let v = i64::try_from(version).map_err(corrupt)?;
    if version == 1 {
        tx.prepare_cached(
            "INSERT INTO editais (id, version, state, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?4)",
        )?
        .execute(rusqlite::params![id, v, state, at])?;
    } else {
        tx.prepare_cached(
            "UPDATE editais SET version = ?2, state = ?3, updated_at = ?4 WHERE id = ?1",
        )?
        .execute(rusqlite::params![id, v, state, at])?;
    }
    // The grant's registry version: the registry's own commit (version check, entities, log,
    // audit row), so that nothing distinguishes it from any other registry write.
    let registry = match save.registry {
        Some(commit) => {
            let version = super::registry::commit(tx, &commit)?;
            Some(RegistryCommitted {
                version,
                changes: commit.changes.changes,
            })
        }
        None => None,
    };
    super::audit::append(
        tx,
        &AuditEntry {
            at: save.actor.at,
            user_id: save.actor.user_id.clone(),
            device_id: save.actor.device_id.clone(),
            action: save.action.clone(),
            subject: save.subject.clone(),
            payload_hash: edital_payload_hash(version, &state),
        },
    )?;
    Ok(EditalSaved { version, registry })
}
