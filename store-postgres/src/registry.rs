//! The registry in PostgreSQL: whole entities as JSON by (kind, key), the current version in
//! `registry_meta`, and every version's changes in `registry_log`.
//!
//! A commit checks that the registry is still at the version the change was computed from,
//! writes the upserts and deletes of the batch, logs the batch, bumps the version and appends
//! the audit row — one transaction, after the write lock (`pool`), so the version read at the
//! start is still the current one when the new one is written, whichever node commits.
//! "Changes since N" concatenates the logged batches after N and keeps only the last change of
//! each entity (applying the result gives the same registry as applying every batch in turn; a
//! delete followed by a re-insert becomes the upsert).
//!
//! Where this differs from SQLite: SQLite writes the batch's changes one statement each (a
//! function call away). Here each statement is a round trip, so the batch is first reduced to
//! the last change of each entity — the same end state, as each (kind, key) row only holds its
//! last write — and written as one multi-row upsert and one multi-row delete over arrays.
//! The reduction is also what lets the upsert be one statement: PostgreSQL refuses an
//! `ON CONFLICT DO UPDATE` that touches one row twice.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use sync_core::domain::Registry;
use sync_core::feed::{self, RegistryChange, RegistryChanges};

use crate::pool::Conn;
use crate::{Result, opt_time, to_i64, to_u64};
use taxi_fiscal_store::audit::{AuditEntry, format_at, payload_hash_of_parts};
use taxi_fiscal_store::{ChangesSince, RegistryCommit, StoreError};

fn corrupt(reason: impl ToString) -> crate::Error {
    crate::corrupt("cadastro", reason)
}

fn json<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(corrupt)
}

use taxi_fiscal_store::entities::LAW_PARAMETERS;

/// `(kind, key, body)` of a change as stored (`taxi_fiscal_store::entities`); body `None` for a
/// delete.
pub(crate) fn entity_of(c: &RegistryChange) -> Result<(&'static str, String, Option<String>)> {
    taxi_fiscal_store::entities::entity_of(c).map_err(corrupt)
}

/// Current version and when it was produced.
pub(crate) fn version(conn: &Conn<'_>) -> Result<(u64, Option<DateTime<Utc>>)> {
    let row = conn.query_one(
        "SELECT version, generated_at FROM registry_meta WHERE id = 1",
        &[],
    )?;
    let v: i64 = row.try_get(0)?;
    let at: Option<String> = row.try_get(1)?;
    Ok((to_u64(v), opt_time(at)?))
}

/// The whole registry, sorted (`feed::sorted`), as the cache and snapshots hold it.
pub(crate) fn load(conn: &Conn<'_>) -> Result<Registry> {
    let (version, generated_at) = version(conn)?;
    let mut reg = Registry {
        version,
        generated_at,
        ..Registry::default()
    };
    for row in conn.query("SELECT kind, body FROM registry_entities", &[])? {
        let kind: &str = row.try_get(0)?;
        let text: &str = row.try_get(1)?;
        match kind {
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
pub(crate) fn commit(tx: &Conn<'_>, c: &RegistryCommit) -> Result<u64> {
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
    let v = to_i64(new_version);
    write_entities(tx, &c.changes.changes, v)?;
    let changes_json = json(&c.changes.changes)?;
    let at = format_at(c.registry.generated_at.unwrap_or(c.actor.at));
    tx.execute(
        "INSERT INTO registry_log (version, from_version, at, user_id, device_id, action, \
         subject, changes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &v,
            &to_i64(current),
            &at,
            &c.actor.user_id,
            &c.actor.device_id,
            &c.action,
            &c.subject,
            &changes_json,
        ],
    )?;
    tx.execute(
        "UPDATE registry_meta SET version = $1, generated_at = $2 WHERE id = 1",
        &[&v, &at],
    )?;
    // The payload covers the version as well as the changes: replaying a batch under another
    // version number would not match.
    crate::audit::append(
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

/// Applies a batch to `registry_entities` as version `v`: the last change of each entity, the
/// upserts in one statement and the deletes in another (see the module doc).
fn write_entities(tx: &Conn<'_>, changes: &[RegistryChange], v: i64) -> Result<()> {
    let mut seen: HashSet<(&'static str, String)> = HashSet::with_capacity(changes.len());
    let (mut up_kinds, mut up_keys, mut up_bodies) = (Vec::new(), Vec::new(), Vec::new());
    let (mut del_kinds, mut del_keys) = (Vec::new(), Vec::new());
    for change in changes.iter().rev() {
        let (kind, key, body) = entity_of(change)?;
        if !seen.insert((kind, key.clone())) {
            continue;
        }
        match body {
            Some(body) => {
                up_kinds.push(kind);
                up_keys.push(key);
                up_bodies.push(body);
            }
            None => {
                del_kinds.push(kind);
                del_keys.push(key);
            }
        }
    }
    if !up_kinds.is_empty() {
        tx.execute(
            "INSERT INTO registry_entities (kind, key, body, version) \
             SELECT kind, key, body, $4 FROM unnest($1::text[], $2::text[], $3::text[]) \
             AS u (kind, key, body) \
             ON CONFLICT (kind, key) DO UPDATE SET body = excluded.body, version = excluded.version",
            &[&up_kinds, &up_keys, &up_bodies, &v],
        )?;
    }
    if !del_kinds.is_empty() {
        tx.execute(
            "DELETE FROM registry_entities AS e USING unnest($1::text[], $2::text[]) \
             AS d (kind, key) WHERE e.kind = d.kind AND e.key = d.key",
            &[&del_kinds, &del_keys],
        )?;
    }
    Ok(())
}

/// What changed after `since`, or why a snapshot is needed.
pub(crate) fn changes_since(conn: &Conn<'_>, since: u64, max_span: u64) -> Result<ChangesSince> {
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
        .query_one("SELECT min(from_version) FROM registry_log", &[])?
        .try_get(0)?;
    let too_old = current - since > max_span || oldest.is_none_or(|o| to_i64(since) < o);
    if too_old {
        return Ok(ChangesSince::TooOld { since, current });
    }
    let rows = conn.query(
        "SELECT changes FROM registry_log WHERE version > $1 ORDER BY version",
        &[&to_i64(since)],
    )?;
    let mut all: Vec<RegistryChange> = Vec::new();
    for row in rows {
        let text: &str = row.try_get(0)?;
        let batch: Vec<RegistryChange> = serde_json::from_str(text).map_err(corrupt)?;
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use chrono::{DateTime, Utc};
    use sync_core::domain::{Registry, ServiceKind, Stand, StandSchedule};
    use sync_core::feed::{RegistryChange, RegistryChanges};

    use crate::PgStore;
    use taxi_fiscal_store::{Actor, ChangesSince, RegistryCommit};

    fn at() -> DateTime<Utc> {
        "2026-11-30T15:00:00Z".parse().unwrap()
    }

    fn stand(id: &str, name: &str) -> Stand {
        Stand {
            id: id.to_owned(),
            name: name.to_owned(),
            address: format!("Rua do ponto {id}"),
            schedule: StandSchedule::Day,
            service: ServiceKind::Common,
            vacancies: 4,
            coordinator_id: None,
            latitude: None,
            longitude: None,
        }
    }

    fn up(id: &str, name: &str) -> RegistryChange {
        RegistryChange::UpsertStand {
            stand: stand(id, name),
        }
    }

    fn del(id: &str) -> RegistryChange {
        RegistryChange::DeleteStand { id: id.to_owned() }
    }

    fn commit(from: u64, changes: Vec<RegistryChange>) -> RegistryCommit {
        RegistryCommit {
            expected_version: from,
            registry: Arc::new(Registry {
                version: from + 1,
                generated_at: Some(at()),
                ..Registry::default()
            }),
            changes: RegistryChanges {
                from_version: from,
                to_version: from + 1,
                generated_at: Some(at()),
                changes,
            },
            action: String::from("registry.stand.edit"),
            subject: String::from("stand:*"),
            actor: Actor::cli(at()),
        }
    }

    /// A batch that touches one entity several times ends as its last change does, as SQLite's
    /// statement-per-change writing leaves it (the batch is written reduced, in two statements).
    #[tokio::test]
    async fn a_batch_touching_an_entity_twice_ends_as_its_last_change() {
        let store = PgStore::open(&crate::test_db::fresh().await).await.unwrap();
        let reg = store
            .pool
            .write(|tx| {
                super::commit(tx, &commit(0, vec![up("S01", "a"), up("S02", "a")]))?;
                let batch = vec![
                    up("S01", "b"),
                    up("S01", "c"),
                    del("S02"),
                    up("S02", "d"),
                    up("S03", "e"),
                    del("S03"),
                    del("S99"),
                ];
                assert_eq!(super::commit(tx, &commit(1, batch.clone()))?, 2);
                // Read back from the log: the last change of each entity, in that order.
                match super::changes_since(tx, 1, 100)? {
                    ChangesSince::Changes(c) => assert_eq!(
                        c.changes,
                        vec![up("S01", "c"), up("S02", "d"), del("S03"), del("S99")]
                    ),
                    other => panic!("{other:?}"),
                }
                super::load(tx)
            })
            .await
            .unwrap();
        assert_eq!(reg.version, 2);
        let stands: Vec<(&str, &str)> = reg
            .stands
            .iter()
            .map(|s| (s.id.as_str(), s.name.as_str()))
            .collect();
        assert_eq!(stands, [("S01", "c"), ("S02", "d")]);
    }
}
