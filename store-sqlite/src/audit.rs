//! The audit chain in SQLite: [`append`] inside the caller's write transaction, [`verify`] over
//! the whole table. Hashing and the canonical encoding are in `taxi_fiscal_store::audit`.
//!
//! Appending reads the chain's head and inserts the next row in the same `IMMEDIATE`
//! transaction as the change it records, so two appends never race for a `seq` and a rolled-back
//! change leaves no row behind.

use crate::Result;
use rusqlite::{Connection, OptionalExtension, Transaction};

use taxi_fiscal_store::audit::{self, AuditEntry, AuditReport, AuditRow, ChainHead};

/// Appends the row recording `entry`; call it in the transaction of the change itself.
pub(crate) fn append(tx: &Transaction<'_>, entry: &AuditEntry) -> Result<AuditRow> {
    // Cached statements: a sync appends one row per accepted record, thousands per request.
    let head: Option<(i64, String)> = tx
        .prepare_cached("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let head = head.map(|(seq, hash)| (seq.max(0) as u64, hash));
    let row = audit::next_row(head.as_ref().map(|(s, h)| (*s, h.as_str())), entry);
    tx.prepare_cached(
        "INSERT INTO audit_log (seq, at, user_id, device_id, action, subject, payload_hash, \
         prev_hash, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(rusqlite::params![
        row.seq as i64,
        row.at,
        row.user_id,
        row.device_id,
        row.action,
        row.subject,
        row.payload_hash,
        row.prev_hash,
        row.hash
    ])?;
    Ok(row)
}

/// Walks every row in `seq` order.
pub(crate) fn verify(conn: &Connection) -> Result<AuditReport> {
    let mut stmt = conn.prepare(
        "SELECT seq, at, user_id, device_id, action, subject, payload_hash, prev_hash, hash \
         FROM audit_log ORDER BY seq",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(AuditRow {
            seq: r.get::<_, i64>(0)?.max(0) as u64,
            at: r.get(1)?,
            user_id: r.get(2)?,
            device_id: r.get(3)?,
            action: r.get(4)?,
            subject: r.get(5)?,
            payload_hash: r.get(6)?,
            prev_hash: r.get(7)?,
            hash: r.get(8)?,
        })
    })?;
    Ok(audit::verify_rows(rows)?)
}

/// The chain's head (`ChainHead::genesis` when it is empty).
pub(crate) fn head(conn: &Connection) -> Result<ChainHead> {
    let head: Option<(i64, String)> = conn
        .prepare_cached("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(
        head.map_or_else(ChainHead::genesis, |(seq, hash)| ChainHead {
            seq: seq.max(0) as u64,
            hash,
        }),
    )
}

/// The hash of row `seq`, if there is one.
pub(crate) fn row_hash(conn: &Connection, seq: u64) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT hash FROM audit_log WHERE seq = ?1")?
        .query_row([i64::try_from(seq).unwrap_or(i64::MAX)], |r| r.get(0))
        .optional()?)
}

/// Why the chain does not hold `anchor` (see `audit::anchor_problem`), or `None`.
pub(crate) fn anchor_problem(conn: &Connection, anchor: &ChainHead) -> Result<Option<String>> {
    let last = head(conn)?.seq;
    let hash = row_hash(conn, anchor.seq)?;
    Ok(audit::anchor_problem(anchor, last, hash.as_deref()))
}
