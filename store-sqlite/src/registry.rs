//! The registry in SQLite: whole entities as JSON by (kind, key), the current version in
//! `registry_meta`, and every version's changes in `registry_log`.
//!
//! A commit checks that the registry is still at the version the change was computed from,
//! writes the upserts and deletes of the batch, logs the batch, bumps the version and appends
//! the audit row — one transaction. "Changes since N" concatenates the logged batches after N
//! and keeps only the last change of each entity (applying the result gives the same registry
//! as applying every batch in turn; a delete followed by a re-insert becomes the upsert).

use crate::Result;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Transaction};
use sync_core::domain::Registry;
use sync_core::feed::{self, RegistryChange, RegistryChanges};

use super::opt_time;
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash_of_parts};
use taxi_fiscal_store::{ChangesSince, RegistryCommit, StoreError};

fn corrupt(reason: impl ToString) -> crate::Error {
    crate::Error::Store(StoreError::Corrupt {
        what: "cadastro",
        reason: reason.to_string(),
    })
}

fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(corrupt)
}

use taxi_fiscal_store::entities::LAW_PARAMETERS;

/// `(kind, key, body)` of a change as stored (`taxi_fiscal_store::entities`); body `None` for a
/// delete.
pub(super) fn entity_of(c: &RegistryChange) -> Result<(&'static str, String, Option<String>)> {
    taxi_fiscal_store::entities::entity_of(c).map_err(corrupt)
}

/// Current version and when it was produced.
pub(super) fn version(conn: &Connection) -> Result<(u64, Option<DateTime<Utc>>)> {
    let (v, at): (i64, Option<String>) = conn.query_row(
        "SELECT version, generated_at FROM registry_meta WHERE id = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok((v.max(0) as u64, opt_time(at)?))
}

/// The whole registry, sorted (`feed::sorted`), as the cache and snapshots hold it.
pub(super) fn load(conn: &Connection) -> Result<Registry> {
    let (version, generated_at) = version(conn)?;
    let mut reg = Registry {
        version,
        generated_at,
        ..Registry::default()
    };
    let mut stmt = conn.prepare("SELECT kind, body FROM registry_entities")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let kind: String = row.get(0)?;
        let body: String = row.get(1)?;
        let text = body.as_str();
        match kind.as_str() {
            "person" => reg
                .people
                .push(serde_json::from_str(text).map_err(corrupt)?),
            "vehicle" => reg
                .vehicles
                .push(serde_json::from_str(text).map_err(corrupt)?),
            "stand" => reg
                .stands
                .push(serde_json::from_str(text).map_err(corrupt)?),
            "permit" => reg
                .permits
                .push(serde_json::from_str(text).map_err(corrupt)?),
            "penalty" => reg
                .penalties
                .push(serde_json::from_str(text).map_err(corrupt)?),
            "fine" => reg.fines.push(serde_json::from_str(text).map_err(corrupt)?),
            "transfer" => reg
                .transfers
                .push(serde_json::from_str(text).map_err(corrupt)?),
            LAW_PARAMETERS => reg.parameters = Some(serde_json::from_str(text).map_err(corrupt)?),
            other => return Err(corrupt(format!("tipo de entidade desconhecido {other:?}"))),
        }
    }
    Ok(feed::sorted(reg))
}

/// Writes a new version; see the module doc.
pub(super) fn commit(tx: &Transaction<'_>, c: &RegistryCommit) -> Result<u64> {
    let (current, _) = version(tx)?;
    if current != c.expected_version || c.changes.from_version != current {
        return Err(crate::Error::Store(StoreError::VersionConflict {
            expected: c.expected_version,
            found: current,
        }));
    }
    let new_version = current + 1;
    if c.changes.to_version != new_version || c.registry.version != new_version {
        return Err(corrupt(format!(
            "versão nova inconsistente: lote até {}, cadastro {}, esperado {new_version}",
            c.changes.to_version, c.registry.version
        )));
    }
    let v = new_version as i64;
    {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO registry_entities (kind, key, body, version) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (kind, key) DO UPDATE SET body = excluded.body, version = excluded.version",
        )?;
        let mut delete =
            tx.prepare_cached("DELETE FROM registry_entities WHERE kind = ?1 AND key = ?2")?;
        for change in &c.changes.changes {
            match entity_of(change)? {
                (kind, key, Some(body)) => {
                    upsert.execute(rusqlite::params![kind, key, body, v])?;
                }
                (kind, key, None) => {
                    delete.execute(rusqlite::params![kind, key])?;
                }
            }
        }
    }
    let changes_json = json(&c.changes.changes)?;
    let at = c.registry.generated_at.unwrap_or(c.actor.at);
    tx.execute(
        "INSERT INTO registry_log (version, from_version, at, user_id, device_id, action, \
         subject, changes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        rusqlite::params![
            v,
            current as i64,
            format_at(at),
            c.actor.user_id,
            c.actor.device_id,
            c.action,
            c.subject,
            changes_json
        ],
    )?;
    tx.execute(
        "UPDATE registry_meta SET version = ?1, generated_at = ?2 WHERE id = 1",
        rusqlite::params![v, format_at(at)],
    )?;
    // The payload covers the version as well as the changes: replaying a batch under another
    // version number would not match.
    super::audit::append(
        tx,
        &AuditEntry {
            at: c.actor.at,
            user_id: c.actor.user_id.clone(),
            device_id: c.actor.device_id.clone(),
            action: c.action.clone(),
            subject: c.subject.clone(),
            payload_hash: payload_hash_of_parts(&[
                format!("{new_version}\n").as_bytes(),
                changes_json.as_bytes(),
            ]),
        },
    )?;
    Ok(new_version)
}

/// What changed after `since`, or why a snapshot is needed.
pub(super) fn changes_since(conn: &Connection, since: u64, max_span: u64) -> Result<ChangesSince> {
    let (current, generated_at) = version(conn)?;
    if since > current {
        return Ok(ChangesSince::Unknown { since, current });
    }
    if since == current {
        return Ok(ChangesSince::Changes(RegistryChanges {
            from_version: since,
            to_version: current,
            generated_at,
            changes: Vec::new(),
        }));
    }
    let oldest: Option<i64> = conn
        .query_row("SELECT min(from_version) FROM registry_log", [], |r| {
            r.get(0)
        })
        .optional()?
        .flatten();
    let too_old = current - since > max_span || oldest.is_none_or(|o| (since as i64) < o);
    if too_old {
        return Ok(ChangesSince::TooOld { since, current });
    }
    let mut stmt =
        conn.prepare("SELECT changes FROM registry_log WHERE version > ?1 ORDER BY version")?;
    let mut rows = stmt.query([since as i64])?;
    let mut all: Vec<RegistryChange> = Vec::new();
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        let batch: Vec<RegistryChange> = serde_json::from_str(&text).map_err(corrupt)?;
        all.extend(batch);
    }
    Ok(ChangesSince::Changes(RegistryChanges {
        from_version: since,
        to_version: current,
        generated_at,
        changes: compact(all)?,
    }))
}

/// Keeps the last change of each entity, in the order of those last changes.
fn compact(all: Vec<RegistryChange>) -> Result<Vec<RegistryChange>> {
    taxi_fiscal_store::entities::compact(all).map_err(corrupt)
}
