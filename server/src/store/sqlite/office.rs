//! The office workflow in SQLite (`crate::store::office`): the inbox query, the duplicate
//! candidates, and [`apply`] — office events plus their registry effect in one transaction.
//!
//! [`apply`] runs inside the pool's `IMMEDIATE` write transaction and opens a savepoint: every
//! step goes through [`records::append_office_event`] (vetting, projection, audit row), then the
//! job's effect function reads the record's view and the registry as they are *inside* this
//! transaction and may return a new registry, which is committed with
//! [`registry::commit`](super::registry::commit) (change log, version bump, audit row). Any
//! refusal rolls back to the savepoint, so a refused job leaves nothing behind; an error rolls
//! back the whole transaction.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::Duration;
use rusqlite::{Connection, Transaction, params_from_iter};
use sync_core::domain::Registry;
use sync_core::feed;

use super::parse_time;
use super::records::{
    ROW_COLUMNS, append_office_event, corrupt, record, row_from, rules_of, to_u64,
};
use crate::store::office::{InboxPage, InboxRow, OfficeJob, OfficeOutcome, RegistryApplied};
use crate::store::records::{EventOutcome, RecordDoc, RecordFilter, view_of};
use crate::store::{Actor, RegistryCommit, StoreError};

/// One page of the inbox, its total and the counts per status (see `Store::office_inbox`).
pub(super) fn inbox(conn: &Connection, f: &RecordFilter) -> Result<InboxPage, StoreError> {
    let sel = super::projection::select(f);
    let total: i64 = conn.query_row(&sel.total.0, params_from_iter(sel.total.1.iter()), |r| {
        r.get(0)
    })?;
    let (page, page_args) = sel.page_query(&format!("{ROW_COLUMNS}, rules"), f);
    let mut stmt = conn.prepare(&page)?;
    let items = stmt
        .query_map(params_from_iter(page_args.iter()), |r| {
            let rules: Option<String> = r.get(16)?;
            Ok(InboxRow {
                row: row_from(r)?,
                rules: rules
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare(&sel.counts.0)?;
    let counts = stmt
        .query_map(params_from_iter(sel.counts.1.iter()), |r| {
            Ok((r.get::<_, String>(0)?, to_u64(r.get(1)?)))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(InboxPage {
        total: to_u64(total),
        counts,
        items,
    })
}

/// Records sharing a canonical plate with a record of another device at most `window_seconds`
/// apart; drafts and closed records left out (see `Store::duplicate_candidates`).
pub(super) fn duplicate_candidates(
    conn: &Connection,
    window_seconds: i64,
) -> Result<Vec<RecordDoc>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, plate, author_device_id, occurred_at FROM records
         WHERE plate IS NOT NULL
           AND status NOT IN ('draft', 'annulled', 'archived', 'merged_as_duplicate')
         ORDER BY plate, occurred_at, id",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                parse_time(&r.get::<_, String>(3)?)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let window = Duration::seconds(window_seconds.max(0));
    let mut ids = BTreeSet::new();
    // Sorted by plate then time: each row only needs the rows after it of the same plate
    // within the window.
    for (i, (id, plate, device, at)) in rows.iter().enumerate() {
        for (other, plate2, device2, at2) in &rows[i + 1..] {
            if plate2 != plate || *at2 - *at > window {
                break;
            }
            if device2 != device {
                ids.insert(id.clone());
                ids.insert(other.clone());
            }
        }
    }
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(doc) = record(conn, &id)? {
            out.push(doc);
        }
    }
    Ok(out)
}

/// Runs an office job (see the module doc). Returns the outcome and, when a registry version
/// was written, the new registry (for the store's cache).
pub(super) fn apply(
    tx: &Transaction<'_>,
    job: &OfficeJob,
) -> Result<(OfficeOutcome, Option<Arc<Registry>>), StoreError> {
    tx.execute_batch("SAVEPOINT office_job")?;
    match run(tx, job)? {
        (outcome @ OfficeOutcome::Applied { .. }, registry) => {
            tx.execute_batch("RELEASE office_job")?;
            Ok((outcome, registry))
        }
        (refused, _) => {
            tx.execute_batch("ROLLBACK TO office_job; RELEASE office_job")?;
            Ok((refused, None))
        }
    }
}

fn run(
    tx: &Transaction<'_>,
    job: &OfficeJob,
) -> Result<(OfficeOutcome, Option<Arc<Registry>>), StoreError> {
    let index = job.registry.index();
    let mut touched: Vec<String> = Vec::new();
    for step in &job.steps {
        let outcome = append_office_event(
            tx,
            &job.caller,
            &index,
            &step.record_id,
            step.event.clone(),
            step.at,
            job.now,
        )?;
        match outcome {
            Ok(()) => {}
            Err(EventOutcome::Refused { code, message }) => {
                return Ok((
                    OfficeOutcome::Refused {
                        record_id: step.record_id.clone(),
                        code,
                        message,
                    },
                    None,
                ));
            }
            Err(_) => {
                return Ok((
                    OfficeOutcome::NotFound {
                        record_id: step.record_id.clone(),
                    },
                    None,
                ));
            }
        }
        if !touched.contains(&step.record_id) {
            touched.push(step.record_id.clone());
        }
    }
    let mut applied = None;
    let mut new_registry = None;
    if let Some((id, effect)) = &job.effect {
        let Some(doc) = record(tx, id)? else {
            return Ok((
                OfficeOutcome::NotFound {
                    record_id: id.clone(),
                },
                None,
            ));
        };
        let view = view_of(&doc).map_err(|e| corrupt("records", e))?;
        // The job's registry unless a newer version was committed since it was read: the
        // whole city is loaded inside the write transaction only then.
        let current = match super::registry::version(tx)?.0 {
            v if v == job.registry.version() => Arc::clone(job.registry.registry()),
            _ => Arc::new(super::registry::load(tx)?),
        };
        let edit = match effect(&view, &current) {
            Ok(edit) => edit,
            Err(refusal) => return Ok((OfficeOutcome::EffectRefused(refusal), None)),
        };
        if let Some(edit) = edit {
            let mut next = feed::sorted(edit.registry);
            next.version = current.version + 1;
            next.generated_at = Some(job.now);
            let changes = feed::diff(&current, &next);
            if !changes.changes.is_empty() {
                let listed = changes.changes.clone();
                let next = Arc::new(next);
                let version = super::registry::commit(
                    tx,
                    &RegistryCommit {
                        expected_version: current.version,
                        registry: next.clone(),
                        changes,
                        action: edit.action,
                        subject: edit.subject,
                        actor: Actor {
                            user_id: Some(job.caller.user_id.clone()),
                            device_id: Some(job.caller.device_id.clone()),
                            at: job.now,
                        },
                    },
                )?;
                applied = Some(RegistryApplied {
                    version,
                    changes: listed,
                });
                new_registry = Some(next);
            }
        }
        if !touched.contains(id) {
            touched.push(id.clone());
        }
    }
    let mut docs = Vec::with_capacity(touched.len());
    for id in &touched {
        match record(tx, id)? {
            Some(doc) => docs.push(doc),
            None => {
                return Ok((
                    OfficeOutcome::NotFound {
                        record_id: id.clone(),
                    },
                    None,
                ));
            }
        }
    }
    Ok((
        OfficeOutcome::Applied {
            docs,
            registry: applied,
        },
        new_registry,
    ))
}

/// Fills the `rules` column of rows written before migration 006, from their documents.
/// Idempotent; a document that no longer reads is left NULL (it shows with no rules).
pub(super) fn backfill_rules(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let pending: Vec<(String, Vec<u8>)> = {
        let mut stmt = tx.prepare("SELECT id, doc FROM records WHERE rules IS NULL")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?
    };
    for (id, doc) in pending {
        let Ok(view) = sync_core::records::RecordDoc::load(&doc).and_then(|d| d.view()) else {
            tracing::warn!(record = %id, "registro ilegível: regras não preenchidas");
            continue;
        };
        let rules = rules_of(&view);
        tx.execute(
            "UPDATE records SET rules = ?1 WHERE id = ?2",
            rusqlite::params![rules, id],
        )?;
        let p = super::records::project(&view);
        super::projection::write_rules(&tx, &id, &rules, p.status, &p.occurred_at)?;
    }
    tx.commit()?;
    Ok(())
}
