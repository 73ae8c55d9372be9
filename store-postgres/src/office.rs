//! The office workflow in PostgreSQL (`taxi_fiscal_store::office`): the inbox query, the
//! duplicate candidates (kept as records are stored: [`refresh_duplicate_candidates`]), and
//! [`apply`] — office events plus their registry effect in one transaction.
//!
//! [`apply`] runs inside the pool's write transaction (after the write lock) and opens a
//! savepoint: every step goes through `records::append_office_event` (vetting, projection,
//! audit row), then the job's effect function reads the record's view and the registry as they
//! are *inside* this transaction and may return a new registry, which is committed with
//! `registry::commit` (change log, version bump, audit row). Any refusal rolls back to the
//! savepoint, so a refused job leaves nothing behind while the transaction still commits; an
//! error rolls back the whole transaction.
//!
//! Differs from SQLite: nothing to backfill. The SQLite backend fills the `rules` column of
//! files written before its migration 006 when it opens one; a PostgreSQL schema starts
//! complete, every record written with its rules.

use crate::pool::Conn;
use crate::projection::{params, select};
use crate::records::{ROW_COLUMNS, append_office_event, record, row_from};
use crate::{Result, corrupt, parse_time, to_u64};
use chrono::Duration;
use std::collections::BTreeSet;
use std::sync::Arc;
use sync_core::domain::Registry;
use taxi_fiscal_store::audit::format_at;
use taxi_fiscal_store::office::{
    CandidatePage, CandidateQuery, DUPLICATE_WINDOW_MINUTES, InboxPage, InboxRow, OfficeJob,
    OfficeOutcome, RegistryApplied,
};
use taxi_fiscal_store::records::{EventOutcome, RecordFilter, view_of};
use taxi_fiscal_store::{Actor, RegistryCommit};

/// One page of the inbox, its total and the counts per status (see `Store::office_inbox`).
/// The SQL is assembled from the filter (`projection::select`), so it runs uncached.
pub(crate) fn inbox(conn: &Conn<'_>, f: &RecordFilter) -> Result<InboxPage> {
    let sel = select(f);
    let total: i64 = conn
        .query_dynamic(&sel.total.0, &params(&sel.total.1))?
        .first()
        .map(|r| r.try_get(0))
        .transpose()?
        .unwrap_or(0);
    let (page, page_args) = sel.page_query(&format!("{ROW_COLUMNS}, rules"), f);
    let items = conn
        .query_dynamic(&page, &params(&page_args))?
        .iter()
        .map(|r| {
            let rules: Option<String> = r.try_get(16)?;
            Ok(InboxRow {
                row: row_from(r)?,
                rules: rules
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let counts = conn
        .query_dynamic(&sel.counts.0, &params(&sel.counts.1))?
        .iter()
        .map(|r| Ok((r.try_get(0)?, to_u64(r.try_get(1)?))))
        .collect::<Result<Vec<_>>>()?;
    Ok(InboxPage {
        total: to_u64(total),
        counts,
        items,
    })
}

/// Runs an office job (see the module doc). Returns the outcome and, when a registry version
/// was written, the new registry (for the store's cache).
pub(crate) fn apply(
    tx: &Conn<'_>,
    job: &OfficeJob,
) -> Result<(OfficeOutcome, Option<Arc<Registry>>)> {
    tx.batch_execute("SAVEPOINT office_job")?;
    match run(tx, job)? {
        (outcome @ OfficeOutcome::Applied { .. }, registry) => {
            tx.batch_execute("RELEASE office_job")?;
            Ok((outcome, registry))
        }
        (refused, _) => {
            tx.batch_execute("ROLLBACK TO office_job; RELEASE office_job")?;
            Ok((refused, None))
        }
    }
}

fn run(tx: &Conn<'_>, job: &OfficeJob) -> Result<(OfficeOutcome, Option<Arc<Registry>>)> {
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
        let current = match crate::registry::version(tx)?.0 {
            v if v == job.registry.version() => Arc::clone(job.registry.registry()),
            _ => Arc::new(crate::registry::load(tx)?),
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
            let version = crate::registry::commit(tx, &commit)?;
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

/// Open statuses: a draft is not yet a record, and a closed one is no longer a candidate. A
/// macro, so that the statements that use it stay literals (prepared once, cached).
macro_rules! open {
    () => {
        "status NOT IN ('draft', 'annulled', 'archived', 'merged_as_duplicate')"
    };
}

/// Keeps `duplicate_candidates` true after record `id` was stored (created, changed, closed):
/// the records whose candidacy can change are `id` and those of its plate — the one it had and
/// the one it has — within the window of its time then and now; each is re-judged by one
/// query over `records_plate`. Cost: the records of one plate within a few hours, never the
/// table.
pub(crate) fn refresh_duplicate_candidates(tx: &Conn<'_>, id: &str) -> Result<()> {
    let window = Duration::minutes(DUPLICATE_WINDOW_MINUTES);
    let old = tx.query_opt(
        "SELECT plate, occurred_at FROM duplicate_candidates WHERE record_id = $1",
        &[&id],
    )?;
    let new = tx.query_opt(
        "SELECT plate, occurred_at FROM records WHERE id = $1 AND plate IS NOT NULL",
        &[&id],
    )?;
    let mut touched = BTreeSet::from([id.to_owned()]);
    for row in old.iter().chain(new.iter()) {
        let plate: &str = row.try_get(0)?;
        let at = parse_time(row.try_get(1)?)?;
        let ids = tx.query(
            "SELECT id FROM records WHERE plate = $1 AND occurred_at >= $2 AND occurred_at <= $3",
            &[&plate, &format_at(at - window), &format_at(at + window)],
        )?;
        for other in ids {
            touched.insert(other.try_get(0)?);
        }
    }
    for record in touched {
        judge_candidate(tx, &record, window)?;
    }
    Ok(())
}

/// Puts `id` in `duplicate_candidates` or takes it out, by what `records` says now.
fn judge_candidate(tx: &Conn<'_>, id: &str, window: Duration) -> Result<()> {
    let row = tx.query_opt(
        concat!(
            "SELECT plate, occurred_at, author_device_id FROM records
             WHERE id = $1 AND plate IS NOT NULL AND ",
            open!()
        ),
        &[&id],
    )?;
    let candidate = match &row {
        None => None,
        Some(r) => {
            let plate: String = r.try_get(0)?;
            let at: String = r.try_get(1)?;
            let device: &str = r.try_get(2)?;
            let t = parse_time(&at)?;
            let found: bool = tx
                .query_one(
                    concat!(
                        "SELECT EXISTS (SELECT 1 FROM records
                         WHERE plate = $1 AND occurred_at >= $2 AND occurred_at <= $3
                           AND author_device_id <> $4 AND id <> $5 AND ",
                        open!(),
                        ")"
                    ),
                    &[
                        &plate,
                        &format_at(t - window),
                        &format_at(t + window),
                        &device,
                        &id,
                    ],
                )?
                .try_get(0)?;
            found.then_some((plate, at))
        }
    };
    match candidate {
        Some((plate, at)) => {
            // The `WHERE` leaves a row that already says this alone: a record is judged at
            // each of its changes and its neighbours', mostly to the same answer.
            tx.execute(
                "INSERT INTO duplicate_candidates (record_id, plate, occurred_at)
                 VALUES ($1, $2, $3)
                 ON CONFLICT (record_id) DO UPDATE
                 SET plate = excluded.plate, occurred_at = excluded.occurred_at
                 WHERE duplicate_candidates.plate <> excluded.plate
                    OR duplicate_candidates.occurred_at <> excluded.occurred_at",
                &[&id, &plate, &at],
            )?;
        }
        None => {
            tx.execute(
                "DELETE FROM duplicate_candidates WHERE record_id = $1",
                &[&id],
            )?;
        }
    }
    Ok(())
}

/// A page of duplicate candidates (see `Store::duplicate_candidates`): the plates newest
/// occurrence first, then the documents of their candidates.
pub(crate) fn duplicate_candidates(
    conn: &Conn<'_>,
    query: &CandidateQuery,
) -> Result<CandidatePage> {
    let limit = i64::from(query.limit);
    let offset = i64::from(query.offset);
    let max_records = i64::from(query.max_records);
    // One plate or all of them: two statements rather than SQLite's `?1 IS NULL OR plate = ?1`,
    // so that each cached plan fits its case.
    let (plates_total, plates) = match &query.plate {
        Some(p) => (
            conn.query_one(
                "SELECT count(DISTINCT plate) FROM duplicate_candidates WHERE plate = $1",
                &[p],
            )?,
            conn.query(
                "SELECT plate, count(*) FROM duplicate_candidates WHERE plate = $1
                 GROUP BY plate ORDER BY max(occurred_at) DESC, plate LIMIT $2 OFFSET $3",
                &[p, &limit, &offset],
            )?,
        ),
        None => (
            conn.query_one(
                "SELECT count(DISTINCT plate) FROM duplicate_candidates",
                &[],
            )?,
            conn.query(
                "SELECT plate, count(*) FROM duplicate_candidates
                 GROUP BY plate ORDER BY max(occurred_at) DESC, plate LIMIT $1 OFFSET $2",
                &[&limit, &offset],
            )?,
        ),
    };
    let plates_total: i64 = plates_total.try_get(0)?;
    let mut docs = Vec::new();
    let mut complete = true;
    for row in plates {
        let plate: &str = row.try_get(0)?;
        let count: i64 = row.try_get(1)?;
        if !docs.is_empty() && docs.len() as i64 + count > max_records {
            complete = false;
            break;
        }
        let ids = conn.query(
            "SELECT record_id FROM duplicate_candidates WHERE plate = $1
             ORDER BY occurred_at, record_id LIMIT $2",
            &[&plate, &max_records],
        )?;
        if count > max_records {
            complete = false;
        }
        for id in ids {
            let id: &str = id.try_get(0)?;
            if let Some(doc) = record(conn, id)? {
                docs.push(doc);
            }
        }
    }
    Ok(CandidatePage {
        plates: to_u64(plates_total),
        docs,
        complete,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::PgStore;
    use crate::pool::Conn;

    fn insert(tx: &Conn<'_>, id: &str, plate: &str, device: &str, at: &str, status: &str) {
        tx.execute(
            "INSERT INTO records (id, kind, seq, doc, heads, status, plate, author_user_id,
                 author_role, author_device_id, occurred_at, sealed, created_at, updated_at)
             VALUES ($1, 'infraction', (SELECT coalesce(max(seq), 0) + 1 FROM records),
                 '\\x00', '[]', $5, $2, 'u', 'guarda_municipal', $3, $4, FALSE, $4, $4)",
            &[&id, &plate, &device, &at, &status],
        )
        .unwrap();
        super::refresh_duplicate_candidates(tx, id).unwrap();
    }

    fn candidates(tx: &Conn<'_>) -> Vec<String> {
        tx.query(
            "SELECT record_id FROM duplicate_candidates ORDER BY record_id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
    }

    /// The candidates as records arrive and change, to the microsecond: same plate, another
    /// device, open, at most two hours apart (the SQLite backend's test of its migration 017,
    /// which fills the same table from records stored before it, by the same rule).
    #[tokio::test]
    async fn candidates_follow_the_records_as_they_are_stored() {
        let store = PgStore::open(&crate::test_db::fresh().await).await.unwrap();
        let found = store
            .pool
            .write(|tx| {
                insert(
                    tx,
                    "a",
                    "ABC1D23",
                    "d1",
                    "2026-11-30T10:00:00.000000Z",
                    "issued",
                );
                insert(
                    tx,
                    "b",
                    "ABC1D23",
                    "d2",
                    "2026-11-30T12:00:00.000000Z",
                    "issued",
                );
                insert(
                    tx,
                    "c",
                    "ABC1D23",
                    "d2",
                    "2026-11-30T12:00:00.001000Z",
                    "issued",
                );
                insert(
                    tx,
                    "d",
                    "ABC1D23",
                    "d1",
                    "2026-11-30T15:00:00.000000Z",
                    "issued",
                );
                insert(
                    tx,
                    "e",
                    "ABC1D23",
                    "d3",
                    "2026-11-30T15:30:00.000000Z",
                    "draft",
                );
                insert(
                    tx,
                    "f",
                    "DEF4G56",
                    "d1",
                    "2026-11-30T15:10:00.000000Z",
                    "issued",
                );
                insert(
                    tx,
                    "g",
                    "DEF4G56",
                    "d1",
                    "2026-11-30T15:20:00.000000Z",
                    "issued",
                );
                // a–b are exactly two hours apart (in), a–c a millisecond more (out); d has no
                // open record of another device near it (e is a draft); f and g share a device.
                let first = candidates(tx);
                // e issued: d and e become candidates (c is more than two hours before e, but
                // within two hours of d: d–c are 3 h apart, out).
                tx.execute("UPDATE records SET status = 'issued' WHERE id = 'e'", &[])
                    .unwrap();
                super::refresh_duplicate_candidates(tx, "e").unwrap();
                let issued = candidates(tx);
                // b moved to another plate: a loses its pair, b has none there.
                tx.execute("UPDATE records SET plate = 'XYZ9Z99' WHERE id = 'b'", &[])
                    .unwrap();
                super::refresh_duplicate_candidates(tx, "b").unwrap();
                let moved = candidates(tx);
                // e annulled: d is alone again.
                tx.execute("UPDATE records SET status = 'annulled' WHERE id = 'e'", &[])
                    .unwrap();
                super::refresh_duplicate_candidates(tx, "e").unwrap();
                Ok((first, issued, moved, candidates(tx)))
            })
            .await
            .unwrap();
        assert_eq!(found.0, ["a", "b"]);
        assert_eq!(found.1, ["a", "b", "d", "e"]);
        assert_eq!(found.2, ["d", "e"]);
        assert!(found.3.is_empty(), "{:?}", found.3);
    }
}
