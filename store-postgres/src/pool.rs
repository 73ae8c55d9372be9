//! Connections and units of work.
//!
//! Every `Store` method is one closure run by [`Pool::read`] or [`Pool::write`] on tokio's
//! blocking pool, given a [`Conn`]: one transaction on one pooled connection, with a blocking
//! API over the async driver (each call waits on the runtime's handle). Blocking, because the
//! record sync runs `ServerSync` — CPU work over Automerge documents — which asks the store for
//! what it needs through a synchronous trait (`ServerSyncStore`) while it runs; the same
//! closures then read as the SQLite backend's do, SQL beside SQL.
//!
//! Writers are serialised across every node: a write transaction first takes one
//! transaction-scoped advisory lock ([`WRITE_LOCK`]). The audit chain is one sequence (each row
//! hashes the previous one), the auto numbers are leased after the highest ever leased, the
//! registry moves one version at a time: each write reads what the previous one wrote. This is
//! the SQLite backend's one-writer discipline, held by the database instead of a mutex, so two
//! nodes behave as one (ADR 0034). Reads run in `REPEATABLE READ READ ONLY` transactions: one
//! snapshot for the whole read, as SQLite's read transactions give, and never blocked.

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, RecyclingMethod, Runtime};
use tokio::runtime::Handle;
use tokio_postgres::types::ToSql;
use tokio_postgres::{IsolationLevel, NoTls, Row};

use crate::Result;
use taxi_fiscal_store::StoreError;

/// Connections one server node keeps open at most. Requests beyond wait for one
/// ([`CONNECT_TIMEOUT`] at most). Two nodes need twice this within the server's
/// `max_connections` (100 by default).
pub const MAX_CONNECTIONS: usize = 16;

/// How long a request waits for a connection (a new one, or one freed by another request).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The advisory lock key every write transaction takes first ("TFSV", the SQLite file's
/// application id).
pub const WRITE_LOCK: i64 = 0x5446_5356;

/// Parameters of one statement.
pub(crate) type Params<'p> = [&'p (dyn ToSql + Sync)];

/// The pool of connections to one database.
#[derive(Clone)]
pub(crate) struct Pool {
    pool: deadpool_postgres::Pool,
    /// The database, for messages (host, port and name; never the password).
    what: String,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let status = self.pool.status();
        f.debug_struct("Pool")
            .field("size", &status.size)
            .field("available", &status.available)
            .finish()
    }
}

impl Pool {
    /// A pool for `config` (no connection is made yet).
    pub(crate) fn new(config: tokio_postgres::Config, what: String) -> Result<Self> {
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                // A connection handed back is reused as is unless it is closed: no round trip
                // per request (a broken one fails its next statement, and that request only).
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(MAX_CONNECTIONS)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Open {
                path: String::from("PostgreSQL"),
                reason: e.to_string(),
            })?;
        Ok(Self { pool, what })
    }

    async fn client(&self) -> Result<deadpool_postgres::Object> {
        self.pool.get().await.map_err(|e| {
            let why = match &e {
                deadpool_postgres::PoolError::Timeout(_) => format!(
                    "nenhuma conexão livre em {} s ({MAX_CONNECTIONS} em uso)",
                    CONNECT_TIMEOUT.as_secs()
                ),
                deadpool_postgres::PoolError::Backend(e) => chain(e),
                other => other.to_string(),
            };
            crate::Error::Store(StoreError::Backend(Box::from(format!(
                "sem conexão com o {}: {why}",
                self.what
            ))))
        })
    }

    /// Runs `f` in a write transaction (after the write lock), committed when `f` succeeds and
    /// rolled back otherwise.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T> + Send + 'static,
    {
        self.run(true, f).await
    }

    /// Runs `f` in a read-only snapshot.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T> + Send + 'static,
    {
        self.run(false, f).await
    }

    async fn run<T, F>(&self, write: bool, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T> + Send + 'static,
    {
        let mut client = self.client().await?;
        let rt = Handle::current();
        tokio::task::spawn_blocking(move || -> Result<T> {
            let tx = if write {
                let tx = rt.block_on(client.transaction())?;
                rt.block_on(tx.execute("SELECT pg_advisory_xact_lock($1)", &[&WRITE_LOCK]))?;
                tx
            } else {
                rt.block_on(
                    client
                        .build_transaction()
                        .isolation_level(IsolationLevel::RepeatableRead)
                        .read_only(true)
                        .start(),
                )?
            };
            let conn = Conn { tx, rt };
            let out = f(&conn)?;
            let Conn { tx, rt } = conn;
            if write {
                rt.block_on(tx.commit())?;
            } else {
                rt.block_on(tx.rollback())?;
            }
            Ok(out)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
        .map_err(StoreError::from)
    }

    /// One connection outside any unit of work, for the migrations (which take their own lock).
    pub(crate) async fn with_client<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut tokio_postgres::Client, &Handle) -> Result<T> + Send + 'static,
    {
        let mut client = self.client().await?;
        let rt = Handle::current();
        tokio::task::spawn_blocking(move || f(&mut client, &rt))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
            .map_err(StoreError::from)
    }
}

/// An error and its causes, on one line: the driver's own display of a server error is only
/// "db error", its cause says which ("database \"x\" does not exist").
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// One transaction, with blocking calls. Statements written in the code (fixed text) are
/// prepared once per connection and cached ([`Conn::query`] and friends); SQL assembled at run
/// time from a filter goes through [`Conn::query_dynamic`], which is not cached, so the cache
/// stays bounded by the code's own statements.
pub(crate) struct Conn<'a> {
    tx: deadpool_postgres::Transaction<'a>,
    rt: Handle,
}

impl Conn<'_> {
    fn prepared(&self, sql: &str) -> Result<tokio_postgres::Statement> {
        Ok(self.rt.block_on(self.tx.prepare_cached(sql))?)
    }

    /// Every row of a statement of the code.
    pub(crate) fn query(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>> {
        let stmt = self.prepared(sql)?;
        Ok(self.rt.block_on(self.tx.query(&stmt, params))?)
    }

    /// At most one row (more is an error).
    pub(crate) fn query_opt(&self, sql: &str, params: &Params<'_>) -> Result<Option<Row>> {
        let stmt = self.prepared(sql)?;
        Ok(self.rt.block_on(self.tx.query_opt(&stmt, params))?)
    }

    /// Exactly one row.
    pub(crate) fn query_one(&self, sql: &str, params: &Params<'_>) -> Result<Row> {
        let stmt = self.prepared(sql)?;
        Ok(self.rt.block_on(self.tx.query_one(&stmt, params))?)
    }

    /// Runs a statement; the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &Params<'_>) -> Result<u64> {
        let stmt = self.prepared(sql)?;
        Ok(self.rt.block_on(self.tx.execute(&stmt, params))?)
    }

    /// Every row of SQL assembled at run time (not cached).
    pub(crate) fn query_dynamic(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>> {
        Ok(self.rt.block_on(self.tx.query(sql, params))?)
    }

    /// Runs several statements without parameters.
    pub(crate) fn batch_execute(&self, sql: &str) -> Result<()> {
        Ok(self.rt.block_on(self.tx.batch_execute(sql))?)
    }
}
