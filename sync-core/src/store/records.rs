//! Field records as opaque Automerge bytes, auto numbers, sync state and observed people.
//!
//! Flow of a write (`write_record_with`), all in ONE `BEGIN IMMEDIATE` transaction:
//! 1. read the record's row (kind, number) if it exists;
//! 2. if a number is wanted and the record has none, take the next one from the leased blocks
//!    (`number_blocks.next_number += 1`); with none left the record is marked as waiting;
//! 3. call the caller's closure with that number, which returns the incremental Automerge save
//!    (it can write the number into the document) and the row's metadata;
//! 4. append the bytes as the record's next chunk, upsert the row, bump the store-wide
//!    `write_seq`; COMMIT (fsync'd: `synchronous=FULL`).
//!
//! A crash before COMMIT loses the whole write including the number taken, so a number is never
//! handed out twice and never skipped by a record that exists; `records.number` is UNIQUE on
//! top of that.
//!
//! `edit_record_with` is the same write for the field-records layer (`crate::field`): its closure
//! also receives the record's bytes read inside the transaction (so the change is made on what
//! is persisted, never on a copy another process may have moved past), may return a full save
//! that compacts the record in the same commit, and observed people and photos named by the
//! change (`RecordExtras`) are inserted in that commit too.
//!
//! Reading returns the last full save followed by every chunk since, in order; concatenated
//! they are a valid input to `Automerge::load`. `compact_record` replaces the full save and
//! drops the chunks it covers (by sequence number, so a chunk appended after the caller loaded
//! the document survives a late compaction).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::photos::put_photo_in;
use super::{Store, StoreError, StoreResult, optional, parse_ts, to_i64, to_u64, ts};

pub use crate::records::RecordMeta;

/// What the closure of `write_record_with` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordWrite {
    pub meta: RecordMeta,
    /// The incremental save of this change (may be empty: then no chunk is appended).
    pub incremental: Vec<u8>,
}

/// What the closure of `edit_record_with` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordEdit {
    pub meta: RecordMeta,
    /// The incremental save of this change (may be empty: then no chunk is appended).
    pub incremental: Vec<u8>,
    /// A full save of the record *including* this change: when present it becomes the stored
    /// save and every chunk is dropped (compaction in the same commit as the write), and
    /// `incremental` is not stored.
    pub full: Option<Vec<u8>>,
}

/// Rows that commit together with a record change: the observed people it refers to (by the
/// ids the document uses) and the photos it names (content-addressed, see `put_photo`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordExtras<'a> {
    pub observed_people: Vec<(String, ObservedPerson)>,
    pub photos: Vec<&'a [u8]>,
}

/// A record's stored bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordBytes {
    /// Last full save; empty before the first compaction.
    pub full: Vec<u8>,
    /// Incremental saves since, oldest first.
    pub chunks: Vec<Vec<u8>>,
    /// Sequence number of the last chunk in `chunks` (or of the last compacted one); pass it to
    /// `compact_record` with a save made from exactly these bytes.
    pub last_chunk_seq: i64,
}

impl RecordBytes {
    /// Full save (if any) then the chunks: the parts to load and merge, in order.
    pub fn parts(self) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(self.chunks.len() + 1);
        if !self.full.is_empty() {
            out.push(self.full);
        }
        out.extend(self.chunks);
        out
    }
}

/// A record as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordSummary {
    pub id: String,
    pub kind: String,
    pub number: Option<u64>,
    /// True while the record waits for an auto number.
    pub waiting_for_number: bool,
    pub status: String,
    pub summary: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Chunks not yet compacted.
    pub chunks: u64,
    pub write_seq: i64,
}

pub use crate::records::ObservedPerson;

const RECORD_COLUMNS: &str = "id, kind, number, wants_number, status, summary, created_at,
     updated_at, (SELECT count(*) FROM record_chunks c WHERE c.record_id = records.id), write_seq";

impl Store {
    /// Writes one change of a record: `incremental` appended as a chunk, the row upserted, and
    /// an auto number taken if `number_wanted` and the record has none — one transaction.
    /// Returns the record's number after the write (`None`: still waiting for a block).
    pub fn write_record(
        &mut self,
        id: &str,
        kind: &str,
        meta: &RecordMeta,
        incremental: &[u8],
        number_wanted: bool,
    ) -> StoreResult<Option<u64>> {
        self.write_record_with(id, kind, number_wanted, |_| {
            Ok::<_, std::convert::Infallible>(RecordWrite {
                meta: meta.clone(),
                incremental: incremental.to_vec(),
            })
        })
    }

    /// Like `write_record`, but the change is produced inside the transaction by `make`, which
    /// receives the record's number (newly taken or already held): the number can go into the
    /// document in the same commit that consumes it. An error from `make` rolls everything
    /// back, including the number.
    pub fn write_record_with<E, F>(
        &mut self,
        id: &str,
        kind: &str,
        number_wanted: bool,
        make: F,
    ) -> StoreResult<Option<u64>>
    where
        E: std::fmt::Display,
        F: FnOnce(Option<u64>) -> Result<RecordWrite, E>,
    {
        let (number, ()) = self.write_in_tx(
            id,
            kind,
            number_wanted,
            false,
            &RecordExtras::default(),
            |number, _| {
                let w = make(number).map_err(|e| StoreError::RecordWrite {
                    id: id.to_owned(),
                    detail: e.to_string(),
                })?;
                Ok::<_, StoreError>((
                    RecordEdit {
                        meta: w.meta,
                        incremental: w.incremental,
                        full: None,
                    },
                    (),
                ))
            },
        )?;
        Ok(number)
    }

    /// The records layer's write: like `write_record_with`, but `make` also receives the
    /// record's stored bytes as they are inside the transaction (`None`: a new record), so the
    /// change is made on exactly what is persisted — a second process writing the same record
    /// waits for this one instead of both continuing the device's actor from the same point.
    /// `make` may return a full save to compact the record (`RecordEdit::full`), and `extras`
    /// (observed people, photos) are written in the same transaction. `make`'s own value `T`
    /// is handed back; its error type is the caller's.
    pub fn edit_record_with<T, E, F>(
        &mut self,
        id: &str,
        kind: &str,
        number_wanted: bool,
        extras: &RecordExtras<'_>,
        make: F,
    ) -> Result<(Option<u64>, T), E>
    where
        E: From<StoreError>,
        F: FnOnce(Option<u64>, Option<RecordBytes>) -> Result<(RecordEdit, T), E>,
    {
        self.write_in_tx(id, kind, number_wanted, true, extras, make)
    }

    fn write_in_tx<T, E, F>(
        &mut self,
        id: &str,
        kind: &str,
        number_wanted: bool,
        load_bytes: bool,
        extras: &RecordExtras<'_>,
        make: F,
    ) -> Result<(Option<u64>, T), E>
    where
        E: From<StoreError>,
        F: FnOnce(Option<u64>, Option<RecordBytes>) -> Result<(RecordEdit, T), E>,
    {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(StoreError::from)?;
        let existing: Option<(String, Option<i64>, i64, bool)> = tx
            .prepare_cached(
                "SELECT kind, number, last_chunk_seq, wants_number FROM records WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                    .optional()
            })
            .map_err(StoreError::from)?;
        if let Some((stored, ..)) = &existing
            && stored != kind
        {
            return Err(StoreError::RecordKind {
                id: id.to_owned(),
                stored: stored.clone(),
                given: kind.to_owned(),
            }
            .into());
        }
        let held = existing
            .as_ref()
            .and_then(|e| e.1)
            .map(|n| to_u64(n, "records"))
            .transpose()?;
        // A record that already waits for a number keeps wanting one on later writes.
        let wanted = number_wanted || existing.as_ref().is_some_and(|e| e.3);
        let number = match held {
            Some(n) => Some(n),
            None if wanted => take_number_in(&tx)?,
            None => None,
        };
        let bytes = match &existing {
            Some(_) if load_bytes => Some(load_record_in(&tx, id)?),
            _ => None,
        };
        let (write, out) = make(number, bytes)?;
        let waiting = number.is_none() && wanted;
        let write_seq: i64 = tx
            .prepare_cached("SELECT coalesce(max(write_seq), 0) + 1 FROM records")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(StoreError::from)?;
        let mut chunk_seq = existing.as_ref().map_or(0, |e| e.2);
        if !write.incremental.is_empty() {
            chunk_seq += 1;
        }
        let summary = write.meta.summary.to_string();
        let number_i64 = number.map(|n| to_i64(n, "records")).transpose()?;
        let at = ts(write.meta.at);
        for (oid, person) in &extras.observed_people {
            insert_observed_in(&tx, oid, person, Some(id), write.meta.at)?;
        }
        for photo in &extras.photos {
            put_photo_in(&tx, photo)?;
        }
        let rows = if existing.is_some() {
            tx.prepare_cached(
                "UPDATE records SET number = ?2, wants_number = ?3,
                     status = ?4, summary = ?5, heads = ?6, last_chunk_seq = ?7, updated_at = ?8,
                     write_seq = ?9
                 WHERE id = ?1",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    number_i64,
                    waiting,
                    write.meta.status,
                    summary,
                    write.meta.heads,
                    chunk_seq,
                    at,
                    write_seq
                ])
            })
        } else {
            tx.prepare_cached(
                "INSERT INTO records (id, kind, number, wants_number, status, summary, heads,
                     last_chunk_seq, created_at, updated_at, write_seq)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, ?10)",
            )
            .and_then(|mut s| {
                s.execute(params![
                    id,
                    kind,
                    number_i64,
                    waiting,
                    write.meta.status,
                    summary,
                    write.meta.heads,
                    chunk_seq,
                    at,
                    write_seq
                ])
            })
        };
        rows.map_err(StoreError::from)?;
        let appended = match &write.full {
            // A full save that includes this change replaces the stored one and every chunk it
            // covers — all of them, since `make` saw the bytes inside this transaction.
            Some(full) => tx
                .prepare_cached("UPDATE records SET doc = ?2 WHERE id = ?1")
                .and_then(|mut s| s.execute(params![id, full]))
                .and_then(|_| {
                    tx.prepare_cached(
                        "DELETE FROM record_chunks WHERE record_id = ?1 AND seq <= ?2",
                    )
                })
                .and_then(|mut s| s.execute(params![id, chunk_seq])),
            None if !write.incremental.is_empty() => tx
                .prepare_cached(
                    "INSERT INTO record_chunks (record_id, seq, bytes) VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut s| s.execute(params![id, chunk_seq, write.incremental])),
            None => Ok(0),
        };
        appended.map_err(StoreError::from)?;
        tx.commit().map_err(StoreError::from)?;
        Ok((number, out))
    }

    /// The record's bytes: full save then chunks.
    pub fn load_record(&self, id: &str) -> StoreResult<RecordBytes> {
        load_record_in(&self.conn, id)
    }

    /// The parts to load and merge, in order (full save if any, then chunks).
    pub fn load_record_bytes(&self, id: &str) -> StoreResult<Vec<Vec<u8>>> {
        self.load_record(id).map(RecordBytes::parts)
    }

    /// Replaces the full save with `full` (made from the bytes `load_record` returned) and drops
    /// the chunks up to `through_chunk_seq`, which `full` covers. One transaction.
    pub fn compact_record(
        &mut self,
        id: &str,
        full: &[u8],
        through_chunk_seq: i64,
    ) -> StoreResult<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = tx
            .prepare_cached("UPDATE records SET doc = ?2 WHERE id = ?1")?
            .execute(params![id, full])?;
        if n == 0 {
            return Err(StoreError::RecordNotFound(id.to_owned()));
        }
        tx.prepare_cached("DELETE FROM record_chunks WHERE record_id = ?1 AND seq <= ?2")?
            .execute(params![id, through_chunk_seq])?;
        tx.commit()?;
        Ok(())
    }

    /// Every record, oldest first.
    pub fn list_records(&self) -> StoreResult<Vec<RecordSummary>> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM records ORDER BY created_at, id");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(summary_of(row)?);
        }
        Ok(out)
    }

    /// One record's row.
    pub fn record_summary(&self, id: &str) -> StoreResult<Option<RecordSummary>> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM records WHERE id = ?1");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([id])?;
        rows.next()?.map(summary_of).transpose()
    }

    /// Ids of records waiting for an auto number, oldest first: after `add_number_block`, the
    /// records layer writes each again with `number_wanted` to give it one.
    pub fn records_waiting_for_number(&self) -> StoreResult<Vec<String>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id FROM records WHERE wants_number = 1 AND number IS NULL
                 ORDER BY created_at, id",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?)
    }

    /// Clears a record's wait for an auto number (its document got one elsewhere, e.g. from
    /// the office). Returns false if the record is unknown.
    pub fn stop_waiting_for_number(&mut self, id: &str) -> StoreResult<bool> {
        let n = self
            .conn
            .prepare_cached("UPDATE records SET wants_number = 0 WHERE id = ?1")?
            .execute([id])?;
        Ok(n > 0)
    }

    /// Adds a block of auto numbers `first..=last` leased by the server. Refused if it overlaps
    /// any block ever received (numbers must never repeat).
    pub fn add_number_block(&mut self, first: u64, last: u64) -> StoreResult<()> {
        let invalid = |reason| StoreError::NumberBlockInvalid {
            first,
            last,
            reason,
        };
        if first == 0 {
            return Err(invalid("a numeração começa em 1"));
        }
        if first > last {
            return Err(invalid("o início é maior que o fim"));
        }
        let (f, l) = (
            to_i64(first, "number_blocks")?,
            to_i64(last, "number_blocks")?,
        );
        if l == i64::MAX {
            return Err(invalid("fim grande demais"));
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let overlap: Option<(i64, i64)> = tx
            .prepare_cached(
                "SELECT first_number, last_number FROM number_blocks
                 WHERE first_number <= ?2 AND last_number >= ?1 ORDER BY first_number LIMIT 1",
            )?
            .query_row(params![f, l], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((of, ol)) = overlap {
            return Err(StoreError::NumberBlockOverlap {
                first,
                last,
                other_first: to_u64(of, "number_blocks")?,
                other_last: to_u64(ol, "number_blocks")?,
            });
        }
        tx.prepare_cached(
            "INSERT INTO number_blocks (first_number, last_number, next_number, granted_at)
             VALUES (?1, ?2, ?1, ?3)",
        )?
        .execute(params![f, l, ts(Utc::now())])?;
        tx.commit()?;
        Ok(())
    }

    /// Takes the next auto number in its own transaction (`write_record` takes it in the
    /// record's). `None` when every block is used up.
    pub fn take_number(&mut self) -> StoreResult<Option<u64>> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let n = take_number_in(&tx)?;
        tx.commit()?;
        Ok(n)
    }

    /// Numbers still available across all blocks.
    pub fn numbers_left(&self) -> StoreResult<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT coalesce(sum(last_number - next_number + 1), 0) FROM number_blocks",
            [],
            |r| r.get(0),
        )?;
        to_u64(n, "number_blocks")
    }

    /// Persists the Automerge sync state of a record with a peer, and the `write_seq` it
    /// reflects.
    pub fn save_sync_state(
        &mut self,
        record_id: &str,
        peer: &str,
        state: &[u8],
        synced_write_seq: i64,
    ) -> StoreResult<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO sync_state (record_id, peer, state, synced_write_seq, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (record_id, peer) DO UPDATE SET state = excluded.state,
                     synced_write_seq = excluded.synced_write_seq, updated_at = excluded.updated_at",
            )?
            .execute(params![record_id, peer, state, synced_write_seq, ts(Utc::now())])?;
        Ok(())
    }

    /// The persisted sync state of a record with a peer, and the `write_seq` it reflects.
    pub fn load_sync_state(
        &self,
        record_id: &str,
        peer: &str,
    ) -> StoreResult<Option<(Vec<u8>, i64)>> {
        optional(
            self.conn
                .prepare_cached(
                    "SELECT state, synced_write_seq FROM sync_state
                     WHERE record_id = ?1 AND peer = ?2",
                )?
                .query_row([record_id, peer], |r| Ok((r.get(0)?, r.get(1)?))),
        )
    }

    /// Stores an observed person; returns the id records refer to. (The records layer writes
    /// them with the record that names them, through `edit_record_with`'s extras.)
    pub fn put_observed_person(
        &mut self,
        person: &ObservedPerson,
        at: DateTime<Utc>,
    ) -> StoreResult<String> {
        let id = uuid::Uuid::now_v7().to_string();
        insert_observed_in(&self.conn, &id, person, None, at)?;
        Ok(id)
    }

    /// An observed person, `None` if unknown; an erased one comes back with every field empty.
    pub fn observed_person(&self, id: &str) -> StoreResult<Option<ObservedPerson>> {
        type Row = (Option<String>, Option<String>, Option<String>, String);
        let row: Option<Row> = optional(
            self.conn
                .prepare_cached(
                    "SELECT name, cpf, cnh, details FROM observed_people WHERE id = ?1",
                )?
                .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))),
        )?;
        row.map(|(name, cpf, cnh, details)| {
            Ok(ObservedPerson {
                name,
                cpf,
                cnh,
                details: serde_json::from_str(&details).map_err(|e| StoreError::Decode {
                    table: "observed_people",
                    key: id.to_owned(),
                    detail: e.to_string(),
                })?,
            })
        })
        .transpose()
    }

    /// Erases an observed person's data (LGPD), keeping the id so references still resolve.
    /// Returns false if the id is unknown. The record's set is sent to the server again, so the
    /// server forgets the person too.
    pub fn erase_observed_person(&mut self, id: &str, at: DateTime<Utc>) -> StoreResult<bool> {
        let n = self
            .conn
            .prepare_cached(
                "UPDATE observed_people SET name = NULL, cpf = NULL, cnh = NULL, details = '{}',
                     erased_at = coalesce(erased_at, ?2), uploaded_at = NULL
                 WHERE id = ?1",
            )?
            .execute(params![id, ts(at)])?;
        Ok(n > 0)
    }
}

impl Store {
    /// Records whose observed people the server has not confirmed since they last changed.
    pub fn records_with_pending_observed(&self) -> StoreResult<Vec<String>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT DISTINCT record_id FROM observed_people
                 WHERE record_id IS NOT NULL AND uploaded_at IS NULL ORDER BY record_id",
            )?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?)
    }

    /// Every observed person a record's changes named, by id (erased ones with empty fields).
    pub fn observed_people_of_record(
        &self,
        record_id: &str,
    ) -> StoreResult<Vec<(String, ObservedPerson)>> {
        let ids: Vec<String> = self
            .conn
            .prepare_cached("SELECT id FROM observed_people WHERE record_id = ?1 ORDER BY id")?
            .query_map([record_id], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(p) = self.observed_person(&id)? {
                out.push((id, p));
            }
        }
        Ok(out)
    }

    /// The server holds the record's set as read (`ids`, every row read for the upload, erased
    /// ones included): those rows are no longer pending. A row written meanwhile stays pending.
    pub fn mark_observed_uploaded(
        &mut self,
        record_id: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<u64> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        for id in ids {
            n += tx
                .prepare_cached(
                    "UPDATE observed_people SET uploaded_at = ?3
                     WHERE record_id = ?1 AND id = ?2 AND uploaded_at IS NULL",
                )?
                .execute(params![record_id, id, ts(at)])?;
        }
        tx.commit()?;
        Ok(n as u64)
    }
}

/// Full save and chunks of a record, read on `conn` (inside a write transaction or not).
fn load_record_in(conn: &Connection, id: &str) -> StoreResult<RecordBytes> {
    let (full, last_chunk_seq): (Vec<u8>, i64) = optional(
        conn.prepare_cached("SELECT doc, last_chunk_seq FROM records WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?))),
    )?
    .ok_or_else(|| StoreError::RecordNotFound(id.to_owned()))?;
    let chunks = conn
        .prepare_cached("SELECT bytes FROM record_chunks WHERE record_id = ?1 ORDER BY seq")?
        .query_map([id], |r| r.get::<_, Vec<u8>>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RecordBytes {
        full,
        chunks,
        last_chunk_seq,
    })
}

fn insert_observed_in(
    conn: &Connection,
    id: &str,
    person: &ObservedPerson,
    record_id: Option<&str>,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    let details = if person.details.is_null() {
        String::from("{}")
    } else {
        person.details.to_string()
    };
    conn.prepare_cached(
        "INSERT INTO observed_people (id, name, cpf, cnh, details, created_at, record_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        id,
        person.name,
        person.cpf,
        person.cnh,
        details,
        ts(at),
        record_id
    ])?;
    Ok(())
}

/// The lowest block with numbers left gives its next one.
fn take_number_in(conn: &Connection) -> StoreResult<Option<u64>> {
    let row: Option<(i64, i64)> = conn
        .prepare_cached(
            "SELECT first_number, next_number FROM number_blocks
             WHERE next_number <= last_number ORDER BY first_number LIMIT 1",
        )?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((block, next)) = row else {
        return Ok(None);
    };
    conn.prepare_cached(
        "UPDATE number_blocks SET next_number = next_number + 1 WHERE first_number = ?1",
    )?
    .execute([block])?;
    to_u64(next, "number_blocks").map(Some)
}

fn summary_of(row: &rusqlite::Row<'_>) -> StoreResult<RecordSummary> {
    let id: String = row.get(0)?;
    let number: Option<i64> = row.get(2)?;
    let summary: String = row.get(5)?;
    let created: String = row.get(6)?;
    let updated: String = row.get(7)?;
    let chunks: i64 = row.get(8)?;
    Ok(RecordSummary {
        kind: row.get(1)?,
        number: number.map(|n| to_u64(n, "records")).transpose()?,
        waiting_for_number: row.get::<_, i64>(3)? == 1 && number.is_none(),
        status: row.get(4)?,
        summary: serde_json::from_str(&summary).map_err(|e| StoreError::Decode {
            table: "records",
            key: id.clone(),
            detail: e.to_string(),
        })?,
        created_at: parse_ts("records", &id, &created)?,
        updated_at: parse_ts("records", &id, &updated)?,
        chunks: to_u64(chunks, "record_chunks")?,
        write_seq: row.get(9)?,
        id,
    })
}
