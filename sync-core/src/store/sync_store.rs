//! The device store's side of the sync protocol (`crate::sync::DeviceSyncStore`): which records
//! have something to send, their bytes and sync state, and applying a whole response in ONE
//! `BEGIN IMMEDIATE` transaction — merged chunks, new records, resets to the server's version,
//! removals, quarantine rows, per-record sync state and the peer's cursor commit together or not
//! at all. A crash mid-way leaves the device exactly as before the response, and the next
//! request repeats the exchange.
//!
//! A record "has something to send" when it has no `sync_state` row for the peer, or its
//! `write_seq` moved past the row's `synced_write_seq` (set to the record's `write_seq` when a
//! response left it in sync, 0 otherwise). Local writes bump `write_seq`, so an edit made while
//! a request was in flight is caught on the next round.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, Transaction, TransactionBehavior, params};

use super::{Store, StoreError, StoreResult, parse_ts, to_i64, to_u64, ts};
use crate::store::RecordMeta;
use crate::sync::{DeviceBatch, DeviceSyncStore, DeviceWrite};

/// A refused change kept on the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarantinedChange {
    pub record_id: String,
    pub peer: String,
    pub code: String,
    pub message: String,
    pub change_hashes: Vec<String>,
    pub bytes: Vec<u8>,
    pub created_at: DateTime<Utc>,
}

impl Store {
    /// Refused changes kept as evidence, oldest first (`record_id`: only that record's).
    pub fn sync_quarantine(&self, record_id: Option<&str>) -> StoreResult<Vec<QuarantinedChange>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT record_id, peer, code, message, change_hashes, bytes, created_at
             FROM sync_quarantine WHERE ?1 IS NULL OR record_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([record_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, Vec<u8>>(5)?,
                r.get::<_, String>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (record_id, peer, code, message, hashes, bytes, created) = row?;
            out.push(QuarantinedChange {
                change_hashes: serde_json::from_str(&hashes).map_err(|e| StoreError::Decode {
                    table: "sync_quarantine",
                    key: record_id.clone(),
                    detail: e.to_string(),
                })?,
                created_at: parse_ts("sync_quarantine", &record_id, &created)?,
                record_id,
                peer,
                code,
                message,
                bytes,
            });
        }
        Ok(out)
    }
}

impl DeviceSyncStore for Store {
    type Error = StoreError;

    fn sync_cursor(&self, peer: &str) -> StoreResult<u64> {
        let c: Option<i64> = self
            .conn
            .prepare_cached("SELECT cursor FROM sync_peers WHERE peer = ?1")?
            .query_row([peer], |r| r.get(0))
            .optional()?;
        c.map_or(Ok(0), |c| to_u64(c, "sync_peers"))
    }

    fn sync_candidates(&self, peer: &str) -> StoreResult<Vec<String>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT r.id FROM records r
                 LEFT JOIN sync_state s ON s.record_id = r.id AND s.peer = ?1
                 WHERE s.record_id IS NULL OR r.write_seq > s.synced_write_seq
                 ORDER BY r.write_seq",
            )?
            .query_map([peer], |r| r.get(0))?
            .collect::<Result<_, _>>()?)
    }

    fn record_parts(&self, record_id: &str) -> StoreResult<Option<Vec<Vec<u8>>>> {
        match self.load_record_bytes(record_id) {
            Ok(parts) => Ok(Some(parts)),
            Err(StoreError::RecordNotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn record_sync_state(&self, record_id: &str, peer: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self
            .load_sync_state(record_id, peer)?
            .map(|(state, _)| state)
            // An empty blob is a forgotten state (see `DeviceWrite::State`).
            .filter(|s| !s.is_empty()))
    }

    // The `heads` column written with every record change (lets an acknowledgement
    // be applied without loading the document).
    fn record_heads(&self, record_id: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self
            .conn
            .prepare_cached("SELECT heads FROM records WHERE id = ?1")?
            .query_row([record_id], |r| r.get(0))
            .optional()?)
    }

    fn apply_sync(&mut self, peer: &str, batch: &DeviceBatch) -> StoreResult<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let at = ts(batch.at);
        for w in &batch.writes {
            match w {
                DeviceWrite::Append {
                    record_id,
                    kind,
                    chunk,
                    meta,
                } => append(&tx, record_id, kind, chunk, meta)?,
                DeviceWrite::Insert {
                    record_id,
                    kind,
                    doc,
                    meta,
                }
                | DeviceWrite::Replace {
                    record_id,
                    kind,
                    doc,
                    meta,
                } => put_whole(&tx, record_id, kind, doc, meta)?,
                DeviceWrite::Remove { record_id } => {
                    // Chunks and sync state go with it (ON DELETE CASCADE).
                    tx.prepare_cached("DELETE FROM records WHERE id = ?1")?
                        .execute([record_id])?;
                }
                DeviceWrite::Quarantine {
                    record_id,
                    code,
                    message,
                    change_hashes,
                    bytes,
                } => {
                    let hashes = serde_json::to_string(change_hashes).map_err(|e| {
                        StoreError::RecordWrite {
                            id: record_id.clone(),
                            detail: e.to_string(),
                        }
                    })?;
                    tx.prepare_cached(
                        "INSERT INTO sync_quarantine
                             (record_id, peer, code, message, change_hashes, bytes, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )?
                    .execute(params![
                        record_id,
                        peer,
                        code.as_str(),
                        message,
                        hashes,
                        bytes,
                        at
                    ])?;
                }
                DeviceWrite::State {
                    record_id,
                    state,
                    in_sync,
                } => {
                    let write_seq: Option<i64> = tx
                        .prepare_cached("SELECT write_seq FROM records WHERE id = ?1")?
                        .query_row([record_id], |r| r.get(0))
                        .optional()?;
                    // The record may be gone (removed above, or deleted meanwhile).
                    let Some(write_seq) = write_seq else { continue };
                    let synced = if *in_sync { write_seq } else { 0 };
                    let blob: &[u8] = state.as_deref().unwrap_or_default();
                    tx.prepare_cached(
                        "INSERT INTO sync_state (record_id, peer, state, synced_write_seq, updated_at)
                         VALUES (?1, ?2, ?3, ?4, ?5)
                         ON CONFLICT (record_id, peer) DO UPDATE SET state = excluded.state,
                             synced_write_seq = excluded.synced_write_seq,
                             updated_at = excluded.updated_at",
                    )?
                    .execute(params![record_id, peer, blob, synced, at])?;
                }
            }
        }
        let cursor = to_i64(batch.cursor, "sync_peers")?;
        tx.prepare_cached(
            "INSERT INTO sync_peers (peer, cursor, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (peer) DO UPDATE SET cursor = excluded.cursor,
                 updated_at = excluded.updated_at",
        )?
        .execute(params![peer, cursor, at])?;
        tx.commit()?;
        Ok(())
    }
}

fn next_write_seq(tx: &Transaction<'_>) -> StoreResult<i64> {
    Ok(tx
        .prepare_cached("SELECT coalesce(max(write_seq), 0) + 1 FROM records")?
        .query_row([], |r| r.get(0))?)
}

/// Appends received changes as the record's next chunk (as `write_record` does for local ones).
fn append(
    tx: &Transaction<'_>,
    id: &str,
    kind: &str,
    chunk: &[u8],
    meta: &RecordMeta,
) -> StoreResult<()> {
    let existing: Option<(String, i64)> = tx
        .prepare_cached("SELECT kind, last_chunk_seq FROM records WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((stored_kind, last)) = existing else {
        return Err(StoreError::RecordNotFound(id.to_owned()));
    };
    if stored_kind != kind {
        return Err(StoreError::RecordKind {
            id: id.to_owned(),
            stored: stored_kind,
            given: kind.to_owned(),
        });
    }
    let seq = last + 1;
    let write_seq = next_write_seq(tx)?;
    tx.prepare_cached("INSERT INTO record_chunks (record_id, seq, bytes) VALUES (?1, ?2, ?3)")?
        .execute(params![id, seq, chunk])?;
    tx.prepare_cached(
        "UPDATE records SET status = ?2, summary = ?3, heads = ?4, last_chunk_seq = ?5,
             updated_at = ?6, write_seq = ?7
         WHERE id = ?1",
    )?
    .execute(params![
        id,
        meta.status,
        meta.summary.to_string(),
        meta.heads,
        seq,
        ts(meta.at),
        write_seq
    ])?;
    Ok(())
}

/// Inserts a record whole, or replaces an existing one's bytes with `doc` (its chunks dropped;
/// `last_chunk_seq` keeps counting so that a late `compact_record` cannot mistake new chunks
/// for covered ones). The number and `wants_number` of an existing row stay.
fn put_whole(
    tx: &Transaction<'_>,
    id: &str,
    kind: &str,
    doc: &[u8],
    meta: &RecordMeta,
) -> StoreResult<()> {
    let write_seq = next_write_seq(tx)?;
    let at = ts(meta.at);
    let updated = tx
        .prepare_cached(
            "UPDATE records SET doc = ?2, status = ?3, summary = ?4, heads = ?5, updated_at = ?6,
                 write_seq = ?7
             WHERE id = ?1 AND kind = ?8",
        )?
        .execute(params![
            id,
            doc,
            meta.status,
            meta.summary.to_string(),
            meta.heads,
            at,
            write_seq,
            kind
        ])?;
    if updated > 0 {
        tx.prepare_cached("DELETE FROM record_chunks WHERE record_id = ?1")?
            .execute([id])?;
        return Ok(());
    }
    let stored_kind: Option<String> = tx
        .prepare_cached("SELECT kind FROM records WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?;
    if let Some(stored) = stored_kind {
        return Err(StoreError::RecordKind {
            id: id.to_owned(),
            stored,
            given: kind.to_owned(),
        });
    }
    tx.prepare_cached(
        "INSERT INTO records (id, kind, status, summary, heads, doc, created_at, updated_at,
             write_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8)",
    )?
    .execute(params![
        id,
        kind,
        meta.status,
        meta.summary.to_string(),
        meta.heads,
        doc,
        at,
        write_seq
    ])?;
    Ok(())
}
