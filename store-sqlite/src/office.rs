//! The office workflow in SQLite (`taxi_fiscal_store::office`): the inbox query, the duplicate
//! candidates (kept as records are stored: [`refresh_duplicate_candidates`]), and [`apply`] — office events plus their registry effect in one transaction.
//!
//! [`apply`] runs inside the pool's `IMMEDIATE` write transaction and opens a savepoint: every
//! step goes through [`records::append_office_event`] (vetting, projection, audit row), then the
//! job's effect function reads the record's view and the registry as they are *inside* this
//! transaction and may return a new registry, which is committed with
//! [`registry::commit`](super::registry::commit) (change log, version bump, audit row). Any
//! refusal rolls back to the savepoint, so a refused job leaves nothing behind; an error rolls
//! back the whole transaction.

use crate::Result;
use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::Duration;
use rusqlite::{Connection, OptionalExtension, Transaction, params_from_iter};
use sync_core::domain::Registry;

use super::parse_time;
use super::records::{
    ROW_COLUMNS, append_office_event, corrupt, record, row_from, rules_of, to_u64,
};
use taxi_fiscal_store::audit::format_at;
use taxi_fiscal_store::office::{
    CandidatePage, CandidateQuery, DUPLICATE_WINDOW_MINUTES, InboxPage, InboxRow, OfficeJob,
    OfficeOutcome, RegistryApplied,
};
use taxi_fiscal_store::records::{EventOutcome, RecordFilter, view_of};
use taxi_fiscal_store::{Actor, RegistryCommit};

/// One page of the inbox, its total and the counts per status (see `Store::office_inbox`).
pub(super) fn inbox(conn: &Connection, f: &RecordFilter) -> Result<InboxPage> {
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

/// Open statuses: a draft is not yet a record, and a closed one is no longer a candidate.
const OPEN: &str = "status NOT IN ('draft', 'annulled', 'archived', 'merged_as_duplicate')";

/// Keeps `duplicate_candidates` true after record `id` was stored (created, changed, closed):
/// the records whose candidacy can change are `id` and those of its plate — the one it had and
/// the one it has — within the window of its time then and now; each is re-judged by one
/// query over `records_plate`. Cost: the records of one plate within a few hours, never the
/// table.
pub(super) fn refresh_duplicate_candidates(tx: &Transaction<'_>, id: &str) -> Result<()> {
    let window = Duration::minutes(DUPLICATE_WINDOW_MINUTES);
    let old: Option<(String, String)> = tx
        .prepare_cached("SELECT plate, occurred_at FROM duplicate_candidates WHERE record_id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let new: Option<(String, String)> = tx
        .prepare_cached(
            "SELECT plate, occurred_at FROM records WHERE id = ?1 AND plate IS NOT NULL",
        )?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let mut touched = BTreeSet::from([id.to_owned()]);
    for (plate, at) in old.iter().chain(new.iter()) {
        let at = parse_time(at)?;
        let mut stmt = tx.prepare_cached(
            "SELECT id FROM records WHERE plate = ?1 AND occurred_at >= ?2 AND occurred_at <= ?3",
        )?;
        let ids = stmt.query_map(
            rusqlite::params![plate, format_at(at - window), format_at(at + window)],
            |r| r.get::<_, String>(0),
        )?;
        for other in ids {
            touched.insert(other?);
        }
    }
    for record in touched {
        judge_candidate(tx, &record, window)?;
    }
    Ok(())
}

/// Puts `id` in `duplicate_candidates` or takes it out, by what `records` says now.
fn judge_candidate(tx: &Transaction<'_>, id: &str, window: Duration) -> Result<()> {
    let row: Option<(String, String, String)> = tx
        .prepare_cached(&format!(
            "SELECT plate, occurred_at, author_device_id FROM records
             WHERE id = ?1 AND plate IS NOT NULL AND {OPEN}"
        ))?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let candidate = match &row {
        None => false,
        Some((plate, at, device)) => {
            let t = parse_time(at)?;
            tx.prepare_cached(&format!(
                "SELECT EXISTS (SELECT 1 FROM records
                 WHERE plate = ?1 AND occurred_at >= ?2 AND occurred_at <= ?3
                   AND author_device_id != ?4 AND id != ?5 AND {OPEN})"
            ))?
            .query_row(
                rusqlite::params![
                    plate,
                    format_at(t - window),
                    format_at(t + window),
                    device,
                    id
                ],
                |r| r.get::<_, bool>(0),
            )?
        }
    };
    match row {
        Some((plate, at, _)) if candidate => {
            tx.prepare_cached(
                "INSERT INTO duplicate_candidates (record_id, plate, occurred_at)
                 VALUES (?1, ?2, ?3)
                 ON CONFLICT (record_id) DO UPDATE
                 SET plate = excluded.plate, occurred_at = excluded.occurred_at",
            )?
            .execute(rusqlite::params![id, plate, at])?;
        }
        _ => {
            tx.prepare_cached("DELETE FROM duplicate_candidates WHERE record_id = ?1")?
                .execute([id])?;
        }
    }
    Ok(())
}

/// A page of duplicate candidates (see `Store::duplicate_candidates`): the plates newest
/// occurrence first, then the documents of their candidates.
pub(super) fn duplicate_candidates(
    conn: &Connection,
    query: &CandidateQuery,
) -> Result<CandidatePage> {
    let plates_total: i64 = match &query.plate {
        Some(p) => conn.query_row(
            "SELECT count(DISTINCT plate) FROM duplicate_candidates WHERE plate = ?1",
            [p],
            |r| r.get(0),
        )?,
        None => conn.query_row(
            "SELECT count(DISTINCT plate) FROM duplicate_candidates",
            [],
            |r| r.get(0),
        )?,
    };
    let plates: Vec<(String, i64)> = {
        let mut stmt = conn.prepare_cached(
            "SELECT plate, count(*) FROM duplicate_candidates
             WHERE ?1 IS NULL OR plate = ?1
             GROUP BY plate ORDER BY max(occurred_at) DESC, plate LIMIT ?2 OFFSET ?3",
        )?;
        stmt.query_map(
            rusqlite::params![query.plate, query.limit, query.offset],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<Result<_, _>>()?
    };
    let mut docs = Vec::new();
    let mut complete = true;
    for (plate, count) in plates {
        if !docs.is_empty() && docs.len() as i64 + count > i64::from(query.max_records) {
            complete = false;
            break;
        }
        let ids: Vec<String> = conn
            .prepare_cached(
                "SELECT record_id FROM duplicate_candidates WHERE plate = ?1
                 ORDER BY occurred_at, record_id LIMIT ?2",
            )?
            .query_map(rusqlite::params![plate, query.max_records], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if count > i64::from(query.max_records) {
            complete = false;
        }
        for id in ids {
            if let Some(doc) = record(conn, &id)? {
                docs.push(doc);
            }
        }
    }
    Ok(CandidatePage {
        plates: u64::try_from(plates_total).unwrap_or(0),
        docs,
        complete,
    })
}

/// Runs an office job (see the module doc). Returns the outcome and, when a registry version
/// was written, the new registry (for the store's cache).
pub(super) fn apply(
    tx: &Transaction<'_>,
    job: &OfficeJob,
) -> Result<(OfficeOutcome, Option<Arc<Registry>>)> {
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

fn run(tx: &Transaction<'_>, job: &OfficeJob) -> Result<(OfficeOutcome, Option<Arc<Registry>>)> {
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
        let actor = Actor {
            user_id: Some(job.caller.user_id.clone()),
            device_id: Some(job.caller.device_id.clone()),
            at: job.now,
        };
        if let Some(commit) = edit.and_then(|edit| {
            RegistryCommit::next(&current, edit.registry, edit.action, edit.subject, actor)
        }) {
            let version = super::registry::commit(tx, &commit)?;
            applied = Some(RegistryApplied {
                version,
                changes: commit.changes.changes,
            });
            new_registry = Some(commit.registry);
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
pub(super) fn backfill_rules(conn: &mut Connection) -> Result<()> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rusqlite::Connection;

    /// Migration 017 fills the candidates of the records stored before it: same plate, another
    /// device, open, at most two hours apart (times as the server writes them, with
    /// microseconds and `Z`; this one-off pass reads them to the millisecond).
    #[test]
    fn the_migration_finds_the_candidates_stored_before_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        conn.execute_batch(
            "DROP TRIGGER record_rule_counts_insert; DROP TRIGGER record_rule_counts_update;
             DROP TRIGGER record_rule_counts_delete; DROP TABLE record_rule_counts;
             DROP TRIGGER record_status_counts_insert; DROP TRIGGER record_status_counts_update;
             DROP TRIGGER record_status_counts_delete; DROP TABLE record_status_counts; DROP TABLE duplicate_candidates;
             DROP TABLE editais;
             DROP TABLE web_sessions;
             DROP TABLE login_pair_budgets; DROP TABLE login_username_budgets;
             PRAGMA user_version = 16;",
        )
            .unwrap();
        let insert = |id: &str, plate: &str, device: &str, at: &str, status: &str| {
            conn.execute(
                "INSERT INTO records (id, kind, seq, doc, heads, status, plate, author_user_id,
                     author_role, author_device_id, occurred_at, sealed, created_at, updated_at)
                 VALUES (?1, 'infraction', (SELECT coalesce(max(seq), 0) + 1 FROM records),
                     x'00', '[]', ?5, ?2, 'u', 'guarda_municipal', ?3, ?4, 0, ?4, ?4)",
                rusqlite::params![id, plate, device, at, status],
            )
            .unwrap();
        };
        insert(
            "a",
            "ABC1D23",
            "d1",
            "2026-11-30T10:00:00.000000Z",
            "issued",
        );
        insert(
            "b",
            "ABC1D23",
            "d2",
            "2026-11-30T12:00:00.000000Z",
            "issued",
        );
        insert(
            "c",
            "ABC1D23",
            "d2",
            "2026-11-30T12:00:00.001000Z",
            "issued",
        );
        insert(
            "d",
            "ABC1D23",
            "d1",
            "2026-11-30T15:00:00.000000Z",
            "issued",
        );
        insert("e", "ABC1D23", "d3", "2026-11-30T15:30:00.000000Z", "draft");
        insert(
            "f",
            "DEF4G56",
            "d1",
            "2026-11-30T15:10:00.000000Z",
            "issued",
        );
        insert(
            "g",
            "DEF4G56",
            "d1",
            "2026-11-30T15:20:00.000000Z",
            "issued",
        );
        super::super::migrations::migrate(&mut conn, ":memory:", false).unwrap();
        let ids: Vec<String> = conn
            .prepare("SELECT record_id FROM duplicate_candidates ORDER BY record_id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // a–b are exactly two hours apart (in), a–c a millisecond more (out); d has no open
        // record of another device near it (e is a draft); f and g share a device.
        assert_eq!(ids, ["a", "b"]);
    }
}
