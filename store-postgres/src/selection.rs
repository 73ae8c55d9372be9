//! The editais de chamamento in PostgreSQL: table `editais`, one row per edital with its state
//! as JSON and its version.
//!
//! A save checks the version inside the write transaction (the write lock makes the check and
//! the write one step, across nodes too), writes the state, commits the registry version it
//! carries through `registry::commit` — the same function as `Store::commit_registry`, with its
//! change log and audit row — and appends the edital's own audit row; any failure rolls the
//! whole transaction back. A save that carries a read set (opening an edital) first checks that
//! the registry version and every other edital's version are still those the step read.

use crate::pool::Conn;
use crate::{Result, parse_time};
use taxi_fiscal_store::audit::{AuditEntry, format_at};
use taxi_fiscal_store::selection::{
    EditalRow, EditalSave, EditalSaved, MAX_EDITAIS_LISTED, ReadSet, edital_payload_hash,
};
use taxi_fiscal_store::{RegistryCommitted, StoreError};

fn corrupt(reason: impl ToString) -> crate::Error {
    crate::corrupt("edital", reason)
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
pub(crate) fn edital(conn: &Conn<'_>, id: &str) -> Result<Option<EditalRow>> {
    conn.query_opt(
        "SELECT version, state, updated_at FROM editais WHERE id = $1",
        &[&id],
    )?
    .map(|r| row_of(id.to_owned(), r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
    .transpose()
}

/// The newest editais, at most [`MAX_EDITAIS_LISTED`].
pub(crate) fn list(conn: &Conn<'_>) -> Result<Vec<EditalRow>> {
    conn.query(
        "SELECT id, version, state, updated_at FROM editais \
         ORDER BY created_at DESC, id DESC LIMIT $1",
        &[&i64::try_from(MAX_EDITAIS_LISTED).unwrap_or(i64::MAX)],
    )?
    .iter()
    .map(|r| row_of(r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?))
    .collect()
}

/// `VersionConflict` when the registry or the other editais are no longer what `read` saw.
fn check_read(tx: &Conn<'_>, id: &str, read: &ReadSet) -> Result<()> {
    let (registry, _) = crate::registry::version(tx)?;
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
    let mut now = tx
        .query("SELECT id, version FROM editais WHERE id <> $1", &[&id])?
        .iter()
        .map(|r| -> Result<(String, u64)> {
            Ok((
                r.try_get(0)?,
                u64::try_from(r.try_get::<_, i64>(1)?).map_err(corrupt)?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    now.sort();
    let mut seen = read.editais.clone();
    seen.sort();
    if now != seen {
        return conflict(registry);
    }
    Ok(())
}

/// Writes one step of an edital (see the module doc).
pub(crate) fn save(tx: &Conn<'_>, save: EditalSave) -> Result<EditalSaved> {
    let id = save.edital.id.as_str();
    let current = tx
        .query_opt("SELECT version FROM editais WHERE id = $1", &[&id])?
        .map(|r| r.try_get::<_, i64>(0))
        .transpose()?;
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
        tx.execute(
            "INSERT INTO editais (id, version, state, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $4)",
            &[&id, &v, &state, &at],
        )?;
    } else {
        tx.execute(
            "UPDATE editais SET version = $2, state = $3, updated_at = $4 WHERE id = $1",
            &[&id, &v, &state, &at],
        )?;
    }
    // The grant's registry version: the registry's own commit (version check, entities, log,
    // audit row), so that nothing distinguishes it from any other registry write.
    let registry = match save.registry {
        Some(commit) => {
            let version = crate::registry::commit(tx, &commit)?;
            Some(RegistryCommitted {
                version,
                changes: commit.changes.changes,
            })
        }
        None => None,
    };
    crate::audit::append(
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
