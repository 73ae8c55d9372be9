//! Connections and units of work.
//!
//! Every `Store` method is one closure run by [`Pool::read`] or [`Pool::write`], given a
//! [`Conn`]: one transaction on one connection, with blocking calls. Blocking, because the record
//! sync runs `ServerSync` — CPU work over Automerge documents — which asks the store for what it
//! needs through a synchronous trait (`ServerSyncStore`) while it runs; the same closures then
//! read as the SQLite backend's do, SQL beside SQL.
//!
//! Each connection is owned by a thread of its own, which drives the connection's I/O on its own
//! single-threaded runtime and runs the closures handed to it: a statement is one round trip on
//! that thread (≈ 40 µs on loopback), with no hand-off to the server's runtime. The first version
//! used `deadpool-postgres`, whose connections are driven by tasks on the server's runtime: while
//! that runtime was busy with requests, every statement of a transaction waited for a worker to
//! poll its connection (≈ 0.9 ms a round trip instead of 0.04 ms with two busy workers, measured),
//! and a write holds the database-wide lock below for dozens of statements. At most
//! [`MAX_CONNECTIONS`] threads and connections exist; a request waits [`CONNECT_TIMEOUT`] at most
//! for one, and idle ones are kept for the next.
//!
//! Writers are serialised across every node: a write transaction first takes one
//! transaction-scoped advisory lock ([`WRITE_LOCK`]). The audit chain is one sequence (each row
//! hashes the previous one), the auto numbers are leased after the highest ever leased, the
//! registry moves one version at a time: each write reads what the previous one wrote. This is
//! the SQLite backend's one-writer discipline, held by the database instead of a mutex, so two
//! nodes behave as one (ADR 0034). Reads run in `REPEATABLE READ READ ONLY` transactions: one
//! snapshot for the whole read, as SQLite's read transactions give, and never blocked.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::runtime::Runtime;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, IsolationLevel, NoTls, Row, Statement};

use crate::Result;
use taxi_fiscal_store::StoreError;

/// Connections (each with its thread) one server node keeps open at most. Requests beyond wait
/// for one ([`CONNECT_TIMEOUT`] at most). Two nodes need twice this within the server's
/// `max_connections` (100 by default).
pub const MAX_CONNECTIONS: usize = 16;

/// How long a request waits for a connection (one freed by another request), and how long
/// opening a new one may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection idle this long is checked with one round trip before its next unit of work
/// (`connection_thread`). Under load connections are reused within microseconds and never
/// checked; a connection ended by the server is found before a request uses it.
pub const CHECK_IDLE_AFTER: Duration = Duration::from_secs(1);

/// The advisory lock key every write transaction takes first ("TFSV", the SQLite file's
/// application id).
pub const WRITE_LOCK: i64 = 0x5446_5356;

/// Parameters of one statement.
pub(crate) type Params<'p> = [&'p (dyn ToSql + Sync)];

/// The pool of connections to one database.
#[derive(Clone)]
pub(crate) struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    config: tokio_postgres::Config,
    /// The database, for messages (host, port and name; never the password).
    what: String,
    /// Connections waiting for work.
    idle: Mutex<Vec<Worker>>,
    /// One per connection that may exist.
    permits: Arc<Semaphore>,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("database", &self.inner.what)
            .field("idle", &self.idle_count())
            .field("free", &self.inner.permits.available_permits())
            .finish()
    }
}

/// A unit of work, run on a connection's thread with its session (or why there is none).
type Job = Box<dyn FnOnce(Result<&mut Session>) + Send>;

/// The sending end of a connection's thread. Dropping the last one ends the thread, which
/// closes the connection.
struct Worker {
    jobs: mpsc::Sender<Job>,
}

/// What a connection's thread owns: its runtime (which drives the connection's I/O whenever the
/// thread waits on it), the client, and the statements prepared on this connection.
struct Session {
    rt: Runtime,
    client: Client,
    statements: RefCell<HashMap<String, Statement>>,
    /// When its last unit of work ended.
    last_used: std::time::Instant,
}

impl Pool {
    /// A pool for `config` (no connection is made yet).
    pub(crate) fn new(mut config: tokio_postgres::Config, what: String) -> Result<Self> {
        config.connect_timeout(CONNECT_TIMEOUT);
        Ok(Self {
            inner: Arc::new(Inner {
                config,
                what,
                idle: Mutex::new(Vec::new()),
                permits: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            }),
        })
    }

    fn idle_count(&self) -> usize {
        self.inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn backend_error(&self, why: String) -> StoreError {
        StoreError::Backend(Box::from(format!(
            "sem conexão com o {}: {why}",
            self.inner.what
        )))
    }

    /// Runs `f` in a write transaction (after the write lock), committed when `f` succeeds and
    /// rolled back otherwise.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T> + Send + 'static,
    {
        self.submit(move |session| session.unit(true, f)).await
    }

    /// Runs `f` in a read-only snapshot.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Conn<'_>) -> Result<T> + Send + 'static,
    {
        self.submit(move |session| session.unit(false, f)).await
    }

    /// One connection outside any unit of work, for the migrations (which take their own lock).
    pub(crate) async fn with_client<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Client, &Runtime) -> Result<T> + Send + 'static,
    {
        self.submit(move |session| f(&mut session.client, &session.rt))
            .await
    }

    /// Hands `work` to an idle connection's thread (or a new one), and waits for its answer.
    async fn submit<T, W>(&self, work: W) -> Result<T, StoreError>
    where
        T: Send + 'static,
        W: FnOnce(&mut Session) -> Result<T> + Send + 'static,
    {
        let permit = tokio::time::timeout(
            CONNECT_TIMEOUT,
            Arc::clone(&self.inner.permits).acquire_owned(),
        )
        .await
        .map_err(|_| {
            self.backend_error(format!(
                "nenhuma conexão livre em {} s ({MAX_CONNECTIONS} em uso)",
                CONNECT_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| StoreError::Task(e.to_string()))?;
        let (answer, answered) = oneshot::channel();
        let idle = self
            .inner
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let worker = match idle {
            Some(w) => w,
            None => self.spawn_worker()?,
        };
        let job = self.job(worker.jobs.clone(), permit, answer, work);
        // The thread of an idle worker only ends when its sender is dropped, or if a unit of work
        // panicked on it: then the job comes back and a new connection takes it.
        if let Err(mpsc::SendError(job)) = worker.jobs.send(job) {
            let fresh = self.spawn_worker()?;
            fresh
                .jobs
                .send(job)
                .map_err(|_| StoreError::Task(String::from("conexão encerrada")))?;
        }
        drop(worker);
        answered
            .await
            .map_err(|_| StoreError::Task(String::from("unidade de trabalho interrompida")))?
            .map_err(StoreError::from)
    }

    /// The job that runs `work` on the thread of `jobs`, answers, and gives the connection back
    /// to the idle list (when it is still open) and its permit back to the pool — even when the
    /// caller stopped waiting.
    fn job<T, W>(
        &self,
        jobs: mpsc::Sender<Job>,
        permit: OwnedSemaphorePermit,
        answer: oneshot::Sender<Result<T>>,
        work: W,
    ) -> Job
    where
        T: Send + 'static,
        W: FnOnce(&mut Session) -> Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        Box::new(move |session: Result<&mut Session>| {
            let (out, healthy) = match session {
                Ok(session) => {
                    let out = work(session);
                    (out, !session.client.is_closed())
                }
                Err(e) => (Err(e), false),
            };
            if healthy {
                inner
                    .idle
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(Worker { jobs });
            }
            drop(permit);
            let _ = answer.send(out);
        })
    }

    /// A new connection thread. It connects when its first job arrives (that job gets the error
    /// if it cannot), then runs jobs until its last sender is dropped.
    fn spawn_worker(&self) -> Result<Worker, StoreError> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let config = self.inner.config.clone();
        let what = self.inner.what.clone();
        std::thread::Builder::new()
            .name(String::from("postgres-conn"))
            .spawn(move || connection_thread(&config, &what, &inbox))
            .map_err(|e| StoreError::Task(format!("thread da conexão: {e}")))?;
        Ok(Worker { jobs })
    }
}

/// The life of one connection's thread.
fn connection_thread(config: &tokio_postgres::Config, what: &str, inbox: &mpsc::Receiver<Job>) {
    let mut session: Option<Session> = None;
    while let Ok(job) = inbox.recv() {
        // Nothing drives a connection while it waits for work: one that waited long may have
        // been ended by the server (a restart, an administrator) without this thread knowing.
        // It is checked with one round trip before use, so a request does not fail on it.
        if let Some(s) = &session
            && s.last_used.elapsed() >= CHECK_IDLE_AFTER
            && s.rt.block_on(s.client.simple_query("")).is_err()
        {
            drop(session.take());
        }
        if session.as_ref().is_none_or(|s| s.client.is_closed()) {
            // A closed connection (the server went away) is replaced before the job runs.
            drop(session.take());
            match Session::connect(config, what) {
                Ok(s) => session = Some(s),
                Err(e) => {
                    job(Err(e));
                    // Without a connection this thread is of no use; the next request makes a
                    // new one.
                    return;
                }
            }
        }
        if let Some(s) = session.as_mut() {
            job(Ok(s));
            s.last_used = std::time::Instant::now();
        }
    }
}

impl Session {
    fn connect(config: &tokio_postgres::Config, what: &str) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Task(format!("runtime da conexão: {e}")))?;
        let (client, connection) = rt.block_on(config.connect(NoTls)).map_err(|e| {
            StoreError::Backend(Box::from(format!(
                "sem conexão com o {what}: {}",
                chain(&e)
            )))
        })?;
        // Driven by this thread's runtime whenever the thread waits on it.
        rt.spawn(connection);
        Ok(Self {
            rt,
            client,
            statements: RefCell::new(HashMap::new()),
            last_used: std::time::Instant::now(),
        })
    }

    /// One transaction around `f`: committed when `f` succeeds (a write) or rolled back.
    fn unit<T, F>(&mut self, write: bool, f: F) -> Result<T>
    where
        F: FnOnce(&Conn<'_>) -> Result<T>,
    {
        let Session {
            rt,
            client,
            statements,
            ..
        } = self;
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
        let conn = Conn { tx, rt, statements };
        let out = f(&conn);
        let Conn { tx, rt, .. } = conn;
        match out {
            Ok(v) if write => {
                rt.block_on(tx.commit())?;
                Ok(v)
            }
            Ok(v) => {
                rt.block_on(tx.rollback())?;
                Ok(v)
            }
            Err(e) => {
                // A failed rollback leaves a broken connection, which the pool then drops.
                let _ = rt.block_on(tx.rollback());
                Err(e)
            }
        }
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
    tx: tokio_postgres::Transaction<'a>,
    rt: &'a Runtime,
    statements: &'a RefCell<HashMap<String, Statement>>,
}

impl Conn<'_> {
    fn prepared(&self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let stmt = self.rt.block_on(self.tx.prepare(sql))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_owned(), stmt.clone());
        Ok(stmt)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::{MAX_CONNECTIONS, Pool};

    async fn pool() -> (Pool, String) {
        let url = crate::test_db::fresh().await;
        (
            Pool::new(url.parse().unwrap(), String::from("teste")).unwrap(),
            url,
        )
    }

    fn one(c: &super::Conn<'_>) -> crate::Result<i64> {
        Ok(c.query_one("SELECT 1::bigint", &[])?.try_get(0)?)
    }

    /// At most `MAX_CONNECTIONS` connections exist however many units of work run at once, and
    /// they are kept for the next ones.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_are_bounded_and_reused() {
        let (pool, url) = pool().await;
        let runs: Vec<_> = (0..3 * MAX_CONNECTIONS)
            .map(|_| {
                let pool = pool.clone();
                tokio::spawn(async move {
                    pool.read(|c| {
                        c.query_one("SELECT pg_sleep(0.02)::text", &[])?;
                        one(c)
                    })
                    .await
                })
            })
            .collect();
        for r in runs {
            assert_eq!(r.await.unwrap().unwrap(), 1);
        }
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let db = url.rsplit('/').next().unwrap().to_owned();
        let open: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&db],
            )
            .await
            .unwrap()
            .get(0);
        assert!(
            open >= 1 && open <= MAX_CONNECTIONS as i64,
            "{open} connections"
        );
        assert_eq!(
            pool.idle_count() as i64,
            open,
            "every connection kept for reuse"
        );
    }

    /// Connections the server ended while idle (a restart, an administrator) are replaced
    /// without failing the next request.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn connections_ended_by_the_server_are_replaced() {
        let (pool, url) = pool().await;
        assert_eq!(pool.write(one).await.unwrap(), 1);
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let db = url.rsplit('/').next().unwrap().to_owned();
        let ended: i64 = client
            .query_one(
                "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()) t",
                &[&db],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(ended, 1);
        // Idle past the check: the next unit of work finds the connection ended and replaces it.
        tokio::time::sleep(super::CHECK_IDLE_AFTER).await;
        assert_eq!(pool.write(one).await.unwrap(), 1);
        assert_eq!(pool.read(one).await.unwrap(), 1);
    }

    /// A unit of work that fails is rolled back and its connection serves the next one.
    #[tokio::test]
    async fn a_failed_unit_is_rolled_back_and_the_connection_reused() {
        let (pool, _) = pool().await;
        pool.write(|c| {
            c.execute("CREATE TABLE t (x bigint PRIMARY KEY)", &[])?;
            Ok(())
        })
        .await
        .unwrap();
        let e = pool
            .write(|c| {
                c.execute("INSERT INTO t VALUES (1)", &[])?;
                c.execute("INSERT INTO t VALUES (1)", &[])?;
                Ok(())
            })
            .await
            .unwrap_err();
        assert!(e.to_string().contains("banco de dados"), "{e}");
        let n: i64 = pool
            .read(|c| Ok(c.query_one("SELECT count(*) FROM t", &[])?.try_get(0)?))
            .await
            .unwrap();
        assert_eq!(n, 0, "the first insert was rolled back with the second");
        assert_eq!(pool.idle_count(), 1);
    }
}
