//! A small connection pool for rusqlite, which is blocking: one writer connection behind a
//! mutex, and reader connections taken from an idle list (opened on demand, at most
//! `MAX_IDLE_READERS` kept). Every call runs on tokio's blocking pool (`spawn_blocking`).
//!
//! Why not deadpool/r2d2: their SQLite adapters pin an older rusqlite, and only one
//! libsqlite3-sys may be linked (notes/CRATES.md). Why one writer: SQLite has one writer at a
//! time anyway; serialising writers in-process means they queue on a mutex instead of spinning
//! on `SQLITE_BUSY`, and a write transaction starts `IMMEDIATE` so it never has to upgrade a read
//! lock. Readers see a consistent snapshot per transaction (WAL) and never block the writer.
//!
//! Connections: WAL, `synchronous=FULL` (a committed change survives a power cut: it may be an
//! audit row), `foreign_keys=ON`, a busy timeout for other processes (the CLI) on the same
//! file; readers are `query_only`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::store::StoreError;

const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_IDLE_READERS: usize = 8;

/// The pool; cheap to clone.
#[derive(Debug, Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
}

/// Opens a connection with the pragmas every connection needs.
pub(super) fn connect(path: &Path, reader: bool) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(|e| StoreError::Open {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.set_prepared_statement_cache_capacity(64);
    if reader {
        conn.pragma_update(None, "query_only", true)?;
    }
    Ok(conn)
}

impl Pool {
    /// Wraps an already-migrated writer connection.
    pub(super) fn new(path: &Path, writer: Connection) -> Self {
        Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                writer: Mutex::new(writer),
                readers: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` in an `IMMEDIATE` transaction on the writer, on the blocking pool; commits when
    /// `f` returns `Ok`, rolls back otherwise. This is where other modules (record sync) run
    /// their writes, calling `audit::append` with the same transaction.
    pub async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = self.clone();
        tokio::task::spawn_blocking(move || pool.write_blocking(f))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// [`Pool::write`] on the current thread (command line, start-up).
    pub fn write_blocking<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    {
        // A panic while holding the lock dropped its transaction (rolled back): the connection
        // is still sound, so a poisoned lock is taken over.
        let mut conn = self
            .inner
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` in a read transaction on a reader connection, on the blocking pool.
    pub async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = self.clone();
        tokio::task::spawn_blocking(move || pool.read_blocking(f))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// [`Pool::read`] on the current thread.
    pub fn read_blocking<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    {
        let idle = self
            .inner
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let mut conn = match idle {
            Some(c) => c,
            None => connect(&self.inner.path, true)?,
        };
        let out = {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
            let out = f(&tx);
            // Read-only: ending it either way releases the snapshot.
            tx.rollback()?;
            out
        };
        let mut readers = self
            .inner
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if readers.len() < MAX_IDLE_READERS {
            readers.push(conn);
        }
        out
    }
}
