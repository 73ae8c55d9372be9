//! The schema, as numbered SQL files applied in order, each once, in one transaction with the
//! row that records it in `taxi_fiscal_migrations`. The migration transaction takes its own
//! advisory lock first, so two nodes starting at once apply each file once; PostgreSQL's DDL is
//! transactional, so a failed file leaves the database as it was.
//!
//! A database is recognised by that table: one that holds other tables and not it is refused
//! (it belongs to something else), as is one migrated by a newer server.

use tokio::runtime::Runtime;

use crate::Result;
use taxi_fiscal_store::StoreError;

/// The advisory lock key of the migration transaction ("TFMG").
const MIGRATION_LOCK: i64 = 0x5446_4d47;

/// The files, in order; the number is the position (1-based).
const MIGRATIONS: &[(&str, &str)] = &[
    ("001_schema", include_str!("migrations/001_schema.sql")),
    (
        "002_web_sessions",
        include_str!("migrations/002_web_sessions.sql"),
    ),
    (
        "003_login_failures",
        include_str!("migrations/003_login_failures.sql"),
    ),
];

/// The schema version this build writes.
pub(crate) const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`LATEST_VERSION`].
pub(crate) fn migrate(client: &mut tokio_postgres::Client, rt: &Runtime, what: &str) -> Result<()> {
    let open_err = |reason: String| {
        crate::Error::Store(StoreError::Open {
            path: what.to_owned(),
            reason,
        })
    };
    let tx = rt.block_on(client.transaction())?;
    rt.block_on(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]))?;
    let known: bool = rt
        .block_on(tx.query_one(
            "SELECT to_regclass('taxi_fiscal_migrations') IS NOT NULL",
            &[],
        ))?
        .try_get(0)?;
    let version: i64 = if known {
        rt.block_on(tx.query_one(
            "SELECT coalesce(max(version), 0) FROM taxi_fiscal_migrations",
            &[],
        ))?
        .try_get(0)?
    } else {
        let tables: i64 = rt
            .block_on(tx.query_one(
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema()",
                &[],
            ))?
            .try_get(0)?;
        if tables > 0 {
            return Err(open_err(format!(
                "o banco já tem {tables} tabela(s) e não é um banco do taxi-fiscal; \
                 use um banco vazio"
            )));
        }
        rt.block_on(tx.batch_execute(
            "CREATE TABLE taxi_fiscal_migrations (\
                 version BIGINT PRIMARY KEY, \
                 name TEXT NOT NULL, \
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
        ))?;
        0
    };
    if version > LATEST_VERSION {
        return Err(open_err(format!(
            "o banco está na versão {version} do esquema, mais nova que a deste servidor \
             ({LATEST_VERSION}); atualize o servidor"
        )));
    }
    for (n, (name, sql)) in (1_i64..).zip(MIGRATIONS) {
        if n <= version {
            continue;
        }
        rt.block_on(tx.batch_execute(sql))?;
        rt.block_on(tx.execute(
            "INSERT INTO taxi_fiscal_migrations (version, name) VALUES ($1, $2)",
            &[&n, name],
        ))?;
        tracing::info!(version = n, name, "migration applied");
    }
    rt.block_on(tx.commit())?;
    Ok(())
}
