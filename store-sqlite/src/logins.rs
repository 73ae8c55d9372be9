//! The login failure budgets in SQLite (migration 022): see `taxi_fiscal_store::logins`, which
//! holds the budget logic. Each call runs in the pool's `IMMEDIATE` write transaction — the one
//! writer of the file, which also serialises other processes on the same file (two server nodes
//! on one data directory) — and only reads and writes rows: [`reserve`] prunes a bounded batch of
//! expired rows of each table, reads the attempt's two rows, and writes back what
//! `logins::reserve` answers; [`settle`] does the same with `logins::settle`.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{Result, opt_time, parse_time};
use taxi_fiscal_store::audit::format_at;
use taxi_fiscal_store::logins::{
    self, BudgetRow, LoginCounts, LoginKey, PRUNE_BATCH, Policies, Policy, Settle, Write,
};

/// A stored count (never negative by the schema's checks, far below `u32::MAX`).
fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<BudgetRow> {
    Ok(BudgetRow {
        attempts: count(r.get(0)?),
        window_start: parse_time(&r.get::<_, String>(1)?)?,
        locked_until: opt_time(r.get(2)?)?,
        strikes: count(r.get(3)?),
    })
}

fn pair_row(c: &Connection, key: &LoginKey) -> Result<Option<BudgetRow>> {
    Ok(c.prepare_cached(
        "SELECT attempts, window_start, locked_until, strikes FROM login_pair_budgets
         WHERE username = ?1 AND address = ?2",
    )?
    .query_row(params![key.username, key.address], row_from)
    .optional()?)
}

fn username_row(c: &Connection, key: &LoginKey) -> Result<Option<BudgetRow>> {
    Ok(c.prepare_cached(
        "SELECT attempts, window_start, locked_until, strikes FROM login_username_budgets
         WHERE username = ?1",
    )?
    .query_row(params![key.username], row_from)
    .optional()?)
}

fn write_pair(tx: &Transaction<'_>, key: &LoginKey, write: Write, p: &Policy) -> Result<()> {
    match write {
        Write::Keep => {}
        Write::Put(row) => {
            tx.prepare_cached(
                "INSERT INTO login_pair_budgets
                     (username, address, attempts, window_start, locked_until, strikes, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (username, address) DO UPDATE SET
                     attempts = excluded.attempts, window_start = excluded.window_start,
                     locked_until = excluded.locked_until, strikes = excluded.strikes,
                     expires_at = excluded.expires_at",
            )?
            .execute(params![
                key.username,
                key.address,
                i64::from(row.attempts),
                format_at(row.window_start),
                row.locked_until.map(format_at),
                i64::from(row.strikes),
                format_at(row.expires_at(p)),
            ])?;
        }
        Write::Delete => {
            tx.prepare_cached(
                "DELETE FROM login_pair_budgets WHERE username = ?1 AND address = ?2",
            )?
            .execute(params![key.username, key.address])?;
        }
    }
    Ok(())
}

fn write_username(tx: &Transaction<'_>, key: &LoginKey, write: Write, p: &Policy) -> Result<()> {
    match write {
        Write::Keep => {}
        Write::Put(row) => {
            tx.prepare_cached(
                "INSERT INTO login_username_budgets
                     (username, attempts, window_start, locked_until, strikes, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (username) DO UPDATE SET
                     attempts = excluded.attempts, window_start = excluded.window_start,
                     locked_until = excluded.locked_until, strikes = excluded.strikes,
                     expires_at = excluded.expires_at",
            )?
            .execute(params![
                key.username,
                i64::from(row.attempts),
                format_at(row.window_start),
                row.locked_until.map(format_at),
                i64::from(row.strikes),
                format_at(row.expires_at(p)),
            ])?;
        }
        Write::Delete => {
            tx.prepare_cached("DELETE FROM login_username_budgets WHERE username = ?1")?
                .execute(params![key.username])?;
        }
    }
    Ok(())
}

/// Deletes at most [`PRUNE_BATCH`] rows of each table expired at `now`, oldest first.
fn prune(tx: &Transaction<'_>, now: &str) -> Result<()> {
    let batch = i64::try_from(PRUNE_BATCH).unwrap_or(i64::MAX);
    tx.prepare_cached(
        "DELETE FROM login_pair_budgets WHERE rowid IN (
             SELECT rowid FROM login_pair_budgets WHERE expires_at <= ?1
             ORDER BY expires_at LIMIT ?2)",
    )?
    .execute(params![now, batch])?;
    tx.prepare_cached(
        "DELETE FROM login_username_budgets WHERE rowid IN (
             SELECT rowid FROM login_username_budgets WHERE expires_at <= ?1
             ORDER BY expires_at LIMIT ?2)",
    )?
    .execute(params![now, batch])?;
    Ok(())
}

/// Prunes, then reserves one attempt of `key` (`Err(seconds)`: refused).
pub(super) fn reserve(
    tx: &Transaction<'_>,
    key: &LoginKey,
    policies: &Policies,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Result<(), u64>> {
    let now = logins::instant(now);
    prune(tx, &format_at(now))?;
    let (writes, verdict) =
        logins::reserve(pair_row(tx, key)?, username_row(tx, key)?, policies, now);
    write_pair(tx, key, writes.pair, &policies.pair)?;
    write_username(tx, key, writes.username, &policies.username)?;
    Ok(verdict)
}

/// Settles an attempt of `key` (`Some(seconds)`: that failure locked a budget).
pub(super) fn settle(
    tx: &Transaction<'_>,
    key: &LoginKey,
    outcome: Settle,
    policies: &Policies,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<u64>> {
    let (writes, locked) = logins::settle(
        pair_row(tx, key)?,
        username_row(tx, key)?,
        outcome,
        policies,
        now,
    );
    write_pair(tx, key, writes.pair, &policies.pair)?;
    write_username(tx, key, writes.username, &policies.username)?;
    Ok(locked)
}

/// Attempts counted for `key`, and the rows of each table.
pub(super) fn counts(c: &Connection, key: &LoginKey) -> Result<LoginCounts> {
    let tracked = |sql: &str| -> Result<u64> {
        let n: i64 = c.prepare_cached(sql)?.query_row([], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    };
    Ok(LoginCounts {
        pair: pair_row(c, key)?.map_or(0, |r| r.attempts),
        username: username_row(c, key)?.map_or(0, |r| r.attempts),
        pairs_tracked: tracked("SELECT count(*) FROM login_pair_budgets")?,
        usernames_tracked: tracked("SELECT count(*) FROM login_username_budgets")?,
    })
}
