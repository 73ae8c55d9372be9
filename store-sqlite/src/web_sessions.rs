//! The office pages' browser sessions in SQLite (table `web_sessions`, migration 021): what
//! `taxi_fiscal_store::web_sessions` describes. Each function runs inside the transaction the
//! pool gives it, except [`touch`], which reads first and takes the writer only when the touch
//! must write (a page view must not queue behind a record sync for nothing).

use rusqlite::{Connection, OptionalExtension, Row, Transaction};

use crate::Result;
use crate::pool::Pool;
use crate::{parse_time, unique_violation};
use chrono::{DateTime, Utc};
use taxi_fiscal_store::StoreError;
use taxi_fiscal_store::audit::format_at;
use taxi_fiscal_store::web_sessions::{
    Flash, MAX_WEB_SESSIONS_PER_USER, Timeouts, Touch, WebSessionRow, touch_action,
};

const COLUMNS: &str = "key, user_id, username, device_id, display_name, csrf, created_at, \
                       last_seen, flash_ok, flash_message";

fn flash_of(ok: Option<bool>, message: Option<String>) -> Option<Flash> {
    Some(Flash {
        ok: ok?,
        message: message?,
    })
}

fn from_row(r: &Row<'_>) -> rusqlite::Result<WebSessionRow> {
    Ok(WebSessionRow {
        key: r.get(0)?,
        user_id: r.get(1)?,
        username: r.get(2)?,
        device_id: r.get(3)?,
        display_name: r.get(4)?,
        csrf: r.get(5)?,
        created_at: parse_time(&r.get::<_, String>(6)?)?,
        last_seen: parse_time(&r.get::<_, String>(7)?)?,
        flash: flash_of(r.get(8)?, r.get(9)?),
    })
}

/// Deletes the expired sessions, inserts `s`, then trims its user's sessions to the cap.
pub(super) fn open(tx: &Transaction<'_>, s: &WebSessionRow, timeouts: Timeouts) -> Result<()> {
    let (idle, absolute) = timeouts.cutoffs(s.created_at);
    // Stored instants are `format_at` text, fixed width: they compare as the instants do.
    tx.prepare_cached("DELETE FROM web_sessions WHERE last_seen < ?1 OR created_at < ?2")?
        .execute([format_at(idle), format_at(absolute)])?;
    tx.prepare_cached(&format!(
        "INSERT INTO web_sessions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    ))?
    .execute(rusqlite::params![
        s.key,
        s.user_id,
        s.username,
        s.device_id,
        s.display_name,
        s.csrf,
        format_at(s.created_at),
        format_at(s.last_seen),
        s.flash.as_ref().map(|f| f.ok),
        s.flash.as_ref().map(|f| f.message.as_str()),
    ])
    .map_err(|e| unique_violation(e, "sessão"))?;
    // The new one stays, with the user's newest others up to the cap.
    let others = i64::try_from(MAX_WEB_SESSIONS_PER_USER.saturating_sub(1)).unwrap_or(i64::MAX);
    tx.prepare_cached(
        "DELETE FROM web_sessions WHERE user_id = ?1 AND key <> ?2 AND key NOT IN (\
             SELECT key FROM web_sessions WHERE user_id = ?1 AND key <> ?2 \
             ORDER BY created_at DESC, key DESC LIMIT ?3)",
    )?
    .execute(rusqlite::params![s.user_id, s.key, others])?;
    Ok(())
}

/// The session of `key`, as stored.
fn get(conn: &Connection, key: &str) -> Result<Option<WebSessionRow>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM web_sessions WHERE key = ?1"
        ))?
        .query_row([key], from_row)
        .optional()?)
}

/// The touch, in the write transaction: decided again on the row as it is now (another request
/// may have touched, flashed or ended it since the read).
fn touch_now(
    tx: &Transaction<'_>,
    key: &str,
    now: DateTime<Utc>,
    timeouts: Timeouts,
) -> Result<Option<WebSessionRow>> {
    let Some(mut row) = get(tx, key)? else {
        return Ok(None);
    };
    match touch_action(&row, now, timeouts) {
        Touch::Keep => Ok(Some(row)),
        Touch::Refresh => {
            tx.prepare_cached("UPDATE web_sessions SET last_seen = ?2 WHERE key = ?1")?
                .execute([key, &format_at(now)])?;
            row.last_seen = now;
            Ok(Some(row))
        }
        Touch::Expired => {
            end(tx, key)?;
            Ok(None)
        }
    }
}

/// `Store::touch_web_session`: a read, then a write only when the touch writes.
pub(super) async fn touch(
    pool: &Pool,
    key: String,
    now: DateTime<Utc>,
    timeouts: Timeouts,
) -> Result<Option<WebSessionRow>, StoreError> {
    let read_key = key.clone();
    let Some(row) = pool.read(move |c| get(c, &read_key)).await? else {
        return Ok(None);
    };
    if touch_action(&row, now, timeouts) == Touch::Keep {
        return Ok(Some(row));
    }
    pool.write(move |tx| touch_now(tx, &key, now, timeouts))
        .await
}

pub(super) fn end(tx: &Transaction<'_>, key: &str) -> Result<bool> {
    Ok(tx
        .prepare_cached("DELETE FROM web_sessions WHERE key = ?1")?
        .execute([key])?
        > 0)
}

pub(super) fn end_user(tx: &Transaction<'_>, user_id: &str, keep: Option<&str>) -> Result<u64> {
    let n = tx
        .prepare_cached(
            "DELETE FROM web_sessions WHERE user_id = ?1 AND (?2 IS NULL OR key <> ?2)",
        )?
        .execute(rusqlite::params![user_id, keep])?;
    Ok(n as u64)
}

pub(super) fn set_flash(tx: &Transaction<'_>, key: &str, flash: &Flash) -> Result<bool> {
    Ok(tx
        .prepare_cached("UPDATE web_sessions SET flash_ok = ?2, flash_message = ?3 WHERE key = ?1")?
        .execute(rusqlite::params![key, flash.ok, flash.message])?
        > 0)
}

pub(super) fn take_flash(tx: &Transaction<'_>, key: &str) -> Result<Option<Flash>> {
    // Read and cleared in the one writer's transaction: two pages racing show it once.
    let pending = tx
        .prepare_cached(
            "SELECT flash_ok, flash_message FROM web_sessions \
             WHERE key = ?1 AND flash_message IS NOT NULL",
        )?
        .query_row([key], |r| Ok(flash_of(r.get(0)?, r.get(1)?)))
        .optional()?
        .flatten();
    if pending.is_some() {
        tx.prepare_cached(
            "UPDATE web_sessions SET flash_ok = NULL, flash_message = NULL WHERE key = ?1",
        )?
        .execute([key])?;
    }
    Ok(pending)
}

pub(super) fn count(conn: &Connection) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM web_sessions")?
        .query_row([], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}
