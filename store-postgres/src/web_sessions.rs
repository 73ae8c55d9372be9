//! The office pages' browser sessions in PostgreSQL (table `web_sessions`, migration 002): what
//! `taxi_fiscal_store::web_sessions` describes, function for function as the SQLite backend's.
//! Each function runs inside the transaction the pool gives it, except [`touch`], which reads
//! first and takes the write lock only when the touch must write: a page view must not queue
//! behind another node's record sync for nothing.

use chrono::{DateTime, Utc};
use tokio_postgres::Row;

use crate::pool::{Conn, Pool};
use crate::{Result, parse_time, to_u64};
use taxi_fiscal_store::StoreError;
use taxi_fiscal_store::audit::format_at;
use taxi_fiscal_store::web_sessions::{
    Flash, MAX_WEB_SESSIONS_PER_USER, Timeouts, Touch, WebSessionRow, touch_action,
};

macro_rules! columns {
    () => {
        "key, user_id, username, device_id, display_name, csrf, created_at, last_seen, \
         flash_ok, flash_message"
    };
}

fn flash_of(ok: Option<bool>, message: Option<String>) -> Option<Flash> {
    Some(Flash {
        ok: ok?,
        message: message?,
    })
}

/// A row selected as `columns!()`.
fn from_row(r: &Row) -> Result<WebSessionRow> {
    Ok(WebSessionRow {
        key: r.try_get(0)?,
        user_id: r.try_get(1)?,
        username: r.try_get(2)?,
        device_id: r.try_get(3)?,
        display_name: r.try_get(4)?,
        csrf: r.try_get(5)?,
        created_at: parse_time(r.try_get(6)?)?,
        last_seen: parse_time(r.try_get(7)?)?,
        flash: flash_of(r.try_get(8)?, r.try_get(9)?),
    })
}

/// Deletes the expired sessions, inserts `s`, then trims its user's sessions to the cap.
pub(crate) fn open(c: &Conn<'_>, s: &WebSessionRow, timeouts: Timeouts) -> Result<()> {
    let (idle, absolute) = timeouts.cutoffs(s.created_at);
    // Stored instants are `format_at` text, fixed width, `COLLATE "C"`: they compare as the
    // instants do.
    c.execute(
        "DELETE FROM web_sessions WHERE last_seen < $1 OR created_at < $2",
        &[&format_at(idle), &format_at(absolute)],
    )?;
    c.execute(
        concat!(
            "INSERT INTO web_sessions (",
            columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ),
        &[
            &s.key,
            &s.user_id,
            &s.username,
            &s.device_id,
            &s.display_name,
            &s.csrf,
            &format_at(s.created_at),
            &format_at(s.last_seen),
            &s.flash.as_ref().map(|f| f.ok),
            &s.flash.as_ref().map(|f| f.message.as_str()),
        ],
    )
    .map_err(|e| match e {
        crate::Error::Postgres(e) => crate::unique_violation(e, "sessão"),
        other => other,
    })?;
    // The new one stays, with the user's newest others up to the cap.
    let others = i64::try_from(MAX_WEB_SESSIONS_PER_USER.saturating_sub(1)).unwrap_or(i64::MAX);
    c.execute(
        "DELETE FROM web_sessions WHERE user_id = $1 AND key <> $2 AND key NOT IN (\
             SELECT key FROM web_sessions WHERE user_id = $1 AND key <> $2 \
             ORDER BY created_at DESC, key DESC LIMIT $3)",
        &[&s.user_id, &s.key, &others],
    )?;
    Ok(())
}

/// The session of `key`, as stored.
fn get(c: &Conn<'_>, key: &str) -> Result<Option<WebSessionRow>> {
    c.query_opt(
        concat!("SELECT ", columns!(), " FROM web_sessions WHERE key = $1"),
        &[&key],
    )?
    .as_ref()
    .map(from_row)
    .transpose()
}

/// The touch, under the write lock: decided again on the row as it is now (another request, on
/// any node, may have touched, flashed or ended it since the read).
fn touch_now(
    c: &Conn<'_>,
    key: &str,
    now: DateTime<Utc>,
    timeouts: Timeouts,
) -> Result<Option<WebSessionRow>> {
    let Some(mut row) = get(c, key)? else {
        return Ok(None);
    };
    match touch_action(&row, now, timeouts) {
        Touch::Keep => Ok(Some(row)),
        Touch::Refresh => {
            c.execute(
                "UPDATE web_sessions SET last_seen = $2 WHERE key = $1",
                &[&key, &format_at(now)],
            )?;
            row.last_seen = now;
            Ok(Some(row))
        }
        Touch::Expired => {
            end(c, key)?;
            Ok(None)
        }
    }
}

/// `Store::touch_web_session`: a read, then a write only when the touch writes.
pub(crate) async fn touch(
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
    pool.write(move |c| touch_now(c, &key, now, timeouts)).await
}

pub(crate) fn end(c: &Conn<'_>, key: &str) -> Result<bool> {
    Ok(c.execute("DELETE FROM web_sessions WHERE key = $1", &[&key])? > 0)
}

pub(crate) fn end_user(c: &Conn<'_>, user_id: &str, keep: Option<&str>) -> Result<u64> {
    c.execute(
        "DELETE FROM web_sessions WHERE user_id = $1 AND ($2::text IS NULL OR key <> $2)",
        &[&user_id, &keep],
    )
}

pub(crate) fn set_flash(c: &Conn<'_>, key: &str, flash: &Flash) -> Result<bool> {
    Ok(c.execute(
        "UPDATE web_sessions SET flash_ok = $2, flash_message = $3 WHERE key = $1",
        &[&key, &flash.ok, &flash.message],
    )? > 0)
}

pub(crate) fn take_flash(c: &Conn<'_>, key: &str) -> Result<Option<Flash>> {
    // Read and cleared under the write lock: two pages racing show it once.
    let Some(row) = c.query_opt(
        "SELECT flash_ok, flash_message FROM web_sessions \
         WHERE key = $1 AND flash_message IS NOT NULL",
        &[&key],
    )?
    else {
        return Ok(None);
    };
    c.execute(
        "UPDATE web_sessions SET flash_ok = NULL, flash_message = NULL WHERE key = $1",
        &[&key],
    )?;
    Ok(flash_of(row.try_get(0)?, row.try_get(1)?))
}

pub(crate) fn count(c: &Conn<'_>) -> Result<u64> {
    let n: i64 = c
        .query_one("SELECT count(*) FROM web_sessions", &[])?
        .try_get(0)?;
    Ok(to_u64(n))
}
