//! A small connection pool for rusqlite, which is blocking: one writer connection behind a
//! mutex, and reader connections taken from an idle list (opened on demand, at most
//! `MAX_IDLE_READERS` kept). Every call runs on tokio's blocking pool (`spawn_blocking`).
//!
//! Why not deadpool/r2d2: their SQLite adapters pin an older rusqlite, and only one
//! libsqlite3-sys may be linked. Why one writer: SQLite has one writer at a
//! time anyway; serialising writers in-process means they queue on a mutex instead of spinning
//! on `SQLITE_BUSY`, and a write transaction starts `IMMEDIATE` so it never has to upgrade a read
//! lock. Readers see a consistent snapshot per transaction (WAL) and never block the writer.
//!
//! Connections: WAL, `synchronous=FULL` (a committed change survives a power cut: it may be an
//! audit row), `foreign_keys=ON`, a busy timeout for other processes (the CLI) on the same
//! file; readers are `query_only`.
//!
//! Checkpoints run on their own thread (`checkpointer`): SQLite's automatic checkpoint runs
//! inside the commit that crosses 1,000 WAL pages, so whichever request made that commit (a
//! device's sync of a few hundred records, sync bench) waited ~10–20 ms for the copy into
//! the database file and its fsync. The writer's WAL hook replaces the automatic checkpoint and
//! only wakes the thread, which runs a `PASSIVE` checkpoint (it never blocks the writer or the
//! readers) on its own connection. If that thread is gone, the hook checkpoints inline as
//! SQLite would have.

use crate::Result;
use std::ffi::c_int;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;
use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use taxi_fiscal_store::StoreError;

const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
const MAX_IDLE_READERS: usize = 8;
/// WAL pages after which a commit asks for a checkpoint: SQLite's own automatic threshold.
const CHECKPOINT_PAGES: c_int = 1_000;

/// The pool; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Mutex<Vec<Connection>>,
    /// Checkpoints the background thread completed (it holds the other reference; only the
    /// checkpoint test reads this one).
    #[cfg_attr(not(test), allow(dead_code))]
    checkpoints: Arc<AtomicU64>,
    checkpointer: Option<JoinHandle<()>>,
}

impl Drop for Inner {
    /// Stops the checkpoint thread and waits for it to close its connection, so that the last
    /// connection to close is one of the pool's: SQLite then checkpoints everything and removes
    /// the WAL, leaving one complete database file (what an operator copies as a backup).
    fn drop(&mut self) {
        let writer = self
            .writer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        // Dropping the hook drops the only sender: the thread's loop ends.
        if let Err(e) = writer.wal_hook(None::<fn(&mut Wal, c_int) -> rusqlite::Result<()>>) {
            tracing::warn!(error = %e, "could not remove the WAL hook");
        }
        if let Some(t) = self.checkpointer.take()
            && t.join().is_err()
        {
            tracing::warn!("the checkpoint thread had panicked");
        }
    }
}

/// Opens a connection with the pragmas every connection needs.
pub(super) fn connect(path: &Path, reader: bool) -> Result<Connection> {
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
    // Deleted rows are overwritten with zeros, not left in free pages: erasing a witness's
    // personal data (LGPD) must remove it from the file, not only from the tables.
    conn.pragma_update(None, "secure_delete", true)?;
    conn.set_prepared_statement_cache_capacity(64);
    if reader {
        conn.pragma_update(None, "query_only", true)?;
    }
    Ok(conn)
}

impl Pool {
    /// Wraps an already-migrated writer connection, and starts the checkpoint thread (which
    /// ends when the pool is dropped).
    pub(super) fn new(path: &Path, mut writer: Connection) -> Result<Self> {
        let checkpoints = Arc::new(AtomicU64::new(0));
        let (wake, woken) = sync_channel::<()>(1);
        let thread_path = path.to_owned();
        let done = Arc::clone(&checkpoints);
        let checkpointer = std::thread::Builder::new()
            .name(String::from("sqlite-checkpoint"))
            .spawn(move || checkpointer(&thread_path, &woken, &done))
            .map_err(|e| StoreError::Task(format!("checkpoint thread: {e}")))?;
        writer.wal_hook(Some(move |wal: &mut Wal, pages: c_int| {
            if pages < CHECKPOINT_PAGES {
                return Ok(());
            }
            match wake.try_send(()) {
                // Woken, or already due to wake up.
                Ok(()) | Err(TrySendError::Full(())) => Ok(()),
                Err(TrySendError::Disconnected(())) => wal.checkpoint(),
            }
        }))?;
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                writer: Mutex::new(writer),
                readers: Mutex::new(Vec::new()),
                checkpoints,
                checkpointer: Some(checkpointer),
            }),
        })
    }

    /// How many checkpoints the background thread has completed (the checkpoint test).
    #[cfg(test)]
    pub(crate) fn checkpoints(&self) -> u64 {
        self.inner.checkpoints.load(Ordering::Relaxed)
    }

    /// Runs `f` in an `IMMEDIATE` transaction on the writer, on the blocking pool; commits when
    /// `f` returns `Ok`, rolls back otherwise. This is where other modules (record sync) run
    /// their writes, calling `audit::append` with the same transaction.
    pub(crate) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let pool = self.clone();
        tokio::task::spawn_blocking(move || pool.write_blocking(f))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// [`Pool::write`] on the current thread (command line, start-up).
    pub(crate) fn write_blocking<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Transaction<'_>) -> Result<T>,
    {
        Ok(self.write_now(f)?)
    }

    /// [`Pool::write_blocking`], failing with this backend's own error.
    fn write_now<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Transaction<'_>) -> Result<T>,
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
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let pool = self.clone();
        tokio::task::spawn_blocking(move || pool.read_blocking(f))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// [`Pool::read`] on the current thread.
    pub(crate) fn read_blocking<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        F: FnOnce(&Transaction<'_>) -> Result<T>,
    {
        Ok(self.read_now(f)?)
    }

    /// [`Pool::read_blocking`], failing with this backend's own error.
    fn read_now<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&Transaction<'_>) -> Result<T>,
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

/// The checkpoint thread: one `PASSIVE` checkpoint each time the writer's hook wakes it (the
/// channel holds at most one wake-up, so a burst of commits costs one checkpoint). A failure is
/// logged and retried at the next wake-up: the WAL keeps everything meanwhile.
fn checkpointer(path: &Path, woken: &Receiver<()>, done: &AtomicU64) {
    let mut conn: Option<Connection> = None;
    while woken.recv().is_ok() {
        if conn.is_none() {
            match connect(path, false) {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    tracing::warn!(error = %e, "checkpoint: could not open the database");
                    continue;
                }
            }
        }
        if let Some(c) = &conn {
            match c.wal_checkpoint_v2(Some("main"), CheckpointMode::PASSIVE) {
                Ok(_) => {
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) => tracing::warn!(error = %e, "checkpoint of the WAL failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn wal_len(path: &Path) -> u64 {
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        std::fs::metadata(wal).map_or(0, |m| m.len())
    }

    #[test]
    fn a_commit_past_the_threshold_is_checkpointed_by_the_background_thread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = connect(&path, false).unwrap();
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let pool = Pool::new(&path, conn).unwrap();
        pool.write_blocking(|tx| Ok(tx.execute_batch("CREATE TABLE t (b BLOB)")?))
            .unwrap();
        let fill = |n: usize| {
            pool.write_blocking(|tx| {
                for _ in 0..n {
                    tx.execute("INSERT INTO t VALUES (zeroblob(4000))", [])?;
                }
                Ok(())
            })
            .unwrap();
        };
        // Below the threshold: nobody is woken.
        fill(10);
        assert_eq!(pool.checkpoints(), 0);
        // ~1,100 pages in one commit: past it.
        fill(1_100);
        let big_wal = wal_len(&path);
        let deadline = Instant::now() + Duration::from_secs(60);
        while pool.checkpoints() == 0 {
            assert!(Instant::now() < deadline, "no checkpoint within 60 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Everything checkpointed: the next commit starts the WAL over instead of growing it.
        fill(10);
        assert!(wal_len(&path) <= big_wal, "{} > {big_wal}", wal_len(&path));
        let rows: i64 = pool
            .read_blocking(|tx| Ok(tx.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(rows, 1_120);

        // Closed: one complete database file, no WAL left beside it.
        drop(pool);
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        assert!(!Path::new(&wal).exists());
        let conn = Connection::open(&path).unwrap();
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1_120);
    }
}
