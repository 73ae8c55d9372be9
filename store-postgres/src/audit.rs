//! The audit chain in PostgreSQL: [`append`] inside the caller's write transaction, [`verify`]
//! over the whole table. Hashing and the canonical encoding are in `taxi_fiscal_store::audit`.
//!
//! Appending reads the chain's head and inserts the next row in the same transaction as the
//! change it records, after the write lock (`pool`), so two appends — from two nodes too — never
//! race for a `seq` and a rolled-back change leaves no row behind.

use crate::pool::Conn;
use crate::{Result, to_i64, to_u64};

use taxi_fiscal_store::audit::{self, AuditEntry, AuditReport, AuditRow, ChainHead};

/// Rows read per query when the whole chain is walked: memory stays bounded by one batch.
const VERIFY_BATCH: i64 = 10_000;

/// Appends the row recording `entry`; call it in the transaction of the change itself.
pub(crate) fn append(tx: &Conn<'_>, entry: &AuditEntry) -> Result<AuditRow> {
    let head = tx
        .query_opt(
            "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1",
            &[],
        )?
        .map(|r| -> Result<(u64, String)> { Ok((to_u64(r.try_get(0)?), r.try_get(1)?)) })
        .transpose()?;
    let row = audit::next_row(head.as_ref().map(|(s, h)| (*s, h.as_str())), entry);
    tx.execute(
        "INSERT INTO audit_log (seq, at, user_id, device_id, action, subject, payload_hash, \
         prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &to_i64(row.seq),
            &row.at,
            &row.user_id,
            &row.device_id,
            &row.action,
            &row.subject,
            &row.payload_hash,
            &row.prev_hash,
            &row.hash,
        ],
    )?;
    Ok(row)
}

/// A row of `audit_log` selected as `SELECT seq, at, user_id, device_id, action, subject,
/// payload_hash, prev_hash, hash`.
pub(crate) fn row_from(r: &tokio_postgres::Row) -> Result<AuditRow> {
    Ok(AuditRow {
        seq: to_u64(r.try_get(0)?),
        at: r.try_get(1)?,
        user_id: r.try_get(2)?,
        device_id: r.try_get(3)?,
        action: r.try_get(4)?,
        subject: r.try_get(5)?,
        payload_hash: r.try_get(6)?,
        prev_hash: r.try_get(7)?,
        hash: r.try_get(8)?,
    })
}

/// Walks every row in `seq` order, a batch at a time.
pub(crate) fn verify(conn: &Conn<'_>) -> Result<AuditReport> {
    let mut after = 0_i64;
    let mut done = false;
    let batches = std::iter::from_fn(|| {
        if done {
            return None;
        }
        let batch = conn.query(
            "SELECT seq, at, user_id, device_id, action, subject, payload_hash, prev_hash, hash \
             FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2",
            &[&after, &VERIFY_BATCH],
        );
        match batch {
            Ok(rows) => {
                if (rows.len() as i64) < VERIFY_BATCH {
                    done = true;
                }
                if let Some(last) = rows.last() {
                    match last.try_get::<_, i64>(0) {
                        Ok(seq) => after = seq,
                        Err(e) => return Some(vec![Err(crate::Error::from(e))]),
                    }
                }
                Some(rows.iter().map(row_from).collect::<Vec<_>>())
            }
            Err(e) => {
                done = true;
                Some(vec![Err(e)])
            }
        }
    });
    audit::verify_rows(batches.flatten())
}

/// The chain's head (`ChainHead::genesis` when it is empty).
pub(crate) fn head(conn: &Conn<'_>) -> Result<ChainHead> {
    let head = conn.query_opt(
        "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1",
        &[],
    )?;
    Ok(match head {
        Some(r) => ChainHead {
            seq: to_u64(r.try_get(0)?),
            hash: r.try_get(1)?,
        },
        None => ChainHead::genesis(),
    })
}

/// The hash of row `seq`, if there is one.
pub(crate) fn row_hash(conn: &Conn<'_>, seq: u64) -> Result<Option<String>> {
    Ok(conn
        .query_opt("SELECT hash FROM audit_log WHERE seq = $1", &[&to_i64(seq)])?
        .map(|r| r.try_get(0))
        .transpose()?)
}

/// Why the chain does not hold `anchor` (see `audit::anchor_problem`), or `None`.
pub(crate) fn anchor_problem(conn: &Conn<'_>, anchor: &ChainHead) -> Result<Option<String>> {
    let last = head(conn)?.seq;
    let hash = row_hash(conn, anchor.seq)?;
    Ok(audit::anchor_problem(anchor, last, hash.as_deref()))
}
