//! The login failure budgets in PostgreSQL (migration 003): see `taxi_fiscal_store::logins`,
//! which holds the budget logic; function for function as the SQLite backend's. Each call runs
//! in the pool's write transaction, after the database-wide write lock, so reserves from every
//! node are serialised and an attempt still running on one node counts on the other. [`reserve`]
//! prunes a bounded batch of expired rows of each table, reads the attempt's two rows and writes
//! back what `logins::reserve` answers; [`settle`] does the same with `logins::settle`.
//!
//! Differs from SQLite: the batch of expired rows is chosen by key (PostgreSQL rows have no
//! stable `rowid`).

use chrono::{DateTime, Utc};

use crate::pool::Conn;
use crate::{Result, opt_time, parse_time, to_i64, to_u64};
use taxi_fiscal_store::audit::format_at;
use taxi_fiscal_store::logins::{
    self, BudgetRow, LoginCounts, LoginKey, PRUNE_BATCH, Policies, Policy, Settle, Write,
};

/// A stored count (never negative by the schema's checks, far below `u32::MAX`).
fn count(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

fn row_from(r: &tokio_postgres::Row) -> Result<BudgetRow> {
    Ok(BudgetRow {
        attempts: count(r.try_get(0)?),
        window_start: parse_time(r.try_get(1)?)?,
        locked_until: opt_time(r.try_get(2)?)?,
        strikes: count(r.try_get(3)?),
    })
}

fn pair_row(c: &Conn<'_>, key: &LoginKey) -> Result<Option<BudgetRow>> {
    c.query_opt(
        "SELECT attempts, window_start, locked_until, strikes FROM login_pair_budgets
         WHERE username = $1 AND address = $2",
        &[&key.username, &key.address],
    )?
    .as_ref()
    .map(row_from)
    .transpose()
}

fn username_row(c: &Conn<'_>, key: &LoginKey) -> Result<Option<BudgetRow>> {
    c.query_opt(
        "SELECT attempts, window_start, locked_until, strikes FROM login_username_budgets
         WHERE username = $1",
        &[&key.username],
    )?
    .as_ref()
    .map(row_from)
    .transpose()
}

fn write_pair(tx: &Conn<'_>, key: &LoginKey, write: Write, p: &Policy) -> Result<()> {
    match write {
        Write::Keep => {}
        Write::Put(row) => {
            tx.execute(
                "INSERT INTO login_pair_budgets
                     (username, address, attempts, window_start, locked_until, strikes, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)
                 ON CONFLICT (username, address) DO UPDATE SET
                     attempts = excluded.attempts, window_start = excluded.window_start,
                     locked_until = excluded.locked_until, strikes = excluded.strikes,
                     expires_at = excluded.expires_at",
                &[
                    &key.username,
                    &key.address,
                    &i64::from(row.attempts),
                    &format_at(row.window_start),
                    &row.locked_until.map(format_at),
                    &i64::from(row.strikes),
                    &format_at(row.expires_at(p)),
                ],
            )?;
        }
        Write::Delete => {
            tx.execute(
                "DELETE FROM login_pair_budgets WHERE username = $1 AND address = $2",
                &[&key.username, &key.address],
            )?;
        }
    }
    Ok(())
}

fn write_username(tx: &Conn<'_>, key: &LoginKey, write: Write, p: &Policy) -> Result<()> {
    match write {
        Write::Keep => {}
        Write::Put(row) => {
            tx.execute(
                "INSERT INTO login_username_budgets
                     (username, attempts, window_start, locked_until, strikes, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (username) DO UPDATE SET
                     attempts = excluded.attempts, window_start = excluded.window_start,
                     locked_until = excluded.locked_until, strikes = excluded.strikes,
                     expires_at = excluded.expires_at",
                &[
                    &key.username,
                    &i64::from(row.attempts),
                    &format_at(row.window_start),
                    &row.locked_until.map(format_at),
                    &i64::from(row.strikes),
                    &format_at(row.expires_at(p)),
                ],
            )?;
        }
        Write::Delete => {
            tx.execute(
                "DELETE FROM login_username_budgets WHERE username = $1",
                &[&key.username],
            )?;
        }
    }
    Ok(())
}

/// Deletes at most [`PRUNE_BATCH`] rows of each table expired at `now`, oldest first.
fn prune(tx: &Conn<'_>, now: &str) -> Result<()> {
    let batch = to_i64(PRUNE_BATCH);
    tx.execute(
        "DELETE FROM login_pair_budgets WHERE (username, address) IN (
             SELECT username, address FROM login_pair_budgets WHERE expires_at <= $1
             ORDER BY expires_at LIMIT $2)",
        &[&now, &batch],
    )?;
    tx.execute(
        "DELETE FROM login_username_budgets WHERE username IN (
             SELECT username FROM login_username_budgets WHERE expires_at <= $1
             ORDER BY expires_at LIMIT $2)",
        &[&now, &batch],
    )?;
    Ok(())
}

/// Prunes, then reserves one attempt of `key` (`Err(seconds)`: refused).
pub(crate) fn reserve(
    tx: &Conn<'_>,
    key: &LoginKey,
    policies: &Policies,
    now: DateTime<Utc>,
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
pub(crate) fn settle(
    tx: &Conn<'_>,
    key: &LoginKey,
    outcome: Settle,
    policies: &Policies,
    now: DateTime<Utc>,
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
pub(crate) fn counts(c: &Conn<'_>, key: &LoginKey) -> Result<LoginCounts> {
    let tracked = |sql: &str| -> Result<u64> { Ok(to_u64(c.query_one(sql, &[])?.try_get(0)?)) };
    Ok(LoginCounts {
        pair: pair_row(c, key)?.map_or(0, |r| r.attempts),
        username: username_row(c, key)?.map_or(0, |r| r.attempts),
        pairs_tracked: tracked("SELECT count(*) FROM login_pair_budgets")?,
        usernames_tracked: tracked("SELECT count(*) FROM login_username_budgets")?,
    })
}
