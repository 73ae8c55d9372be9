//! Online backup and restore of the database file, for `taxi-fiscal backup` and `restore`.
//!
//! Flow of a backup ([`backup_file`]): the live database is opened read-only beside the running
//! server and copied with SQLite's online backup API **in one step**, i.e. inside one read
//! transaction: the copy is the database as of one instant, and under WAL the server keeps
//! writing meanwhile (a stepped copy would restart every time the server commits). The copy is
//! written at `OUT.partial` (0600), and the caller checks it (`audit verify` on the copy) before
//! [`publish`] syncs it and renames it to `OUT`, so `OUT` never names a torn or unchecked copy.
//!
//! Flow of a restore ([`restore_file`]): the backup is checked as a whole SQLite file, copied
//! with the same API to `DB.restoring` (0600), and published at `DB` only if `DB` does not exist:
//! a restore never overwrites a database (the operator moves the old one aside first, so
//! nothing is lost by a wrong command).

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use taxi_fiscal_store::StoreError;

use crate::file;

/// Times a backup step that found the database busy or locked is tried again, and the pause
/// between tries: a minute in all, far longer than any write or checkpoint of the server holds
/// its lock.
const BUSY_RETRIES: u32 = 600;
const BUSY_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// `path` + `.partial`: where a backup is written until it is checked.
pub fn partial_path(out: &Path) -> PathBuf {
    file::sibling(out, ".partial")
}

fn fail(path: &Path, reason: impl Into<String>) -> StoreError {
    StoreError::Open {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Copies `src` (an open-able SQLite database) into the new file `dst` in one backup step.
fn copy(src: &Path, dst: &Path) -> Result<u64, StoreError> {
    let source = Connection::open_with_flags(
        src,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| fail(src, e.to_string()))?;
    // The server's writer may hold its lock a moment; wait for it rather than fail.
    source
        .busy_timeout(std::time::Duration::from_secs(30))
        .map_err(|e| fail(src, e.to_string()))?;
    file::create_private(dst).map_err(StoreError::from)?;
    let mut target = Connection::open(dst).map_err(|e| fail(dst, e.to_string()))?;
    {
        let backup = rusqlite::backup::Backup::new(&source, &mut target)
            .map_err(|e| fail(dst, e.to_string()))?;
        // -1: every page in one step, one read transaction on the source. Busy or locked (the
        // server's writer mid-checkpoint): wait a little and try again, a bounded number of
        // times.
        let mut waits = 0;
        loop {
            match backup
                .step(-1)
                .map_err(|e| fail(src, format!("cópia interrompida: {e}")))?
            {
                rusqlite::backup::StepResult::Done => break,
                rusqlite::backup::StepResult::More => {}
                _ if waits < BUSY_RETRIES => {
                    waits += 1;
                    std::thread::sleep(BUSY_PAUSE);
                }
                _ => {
                    return Err(fail(
                        src,
                        "o banco de dados ficou ocupado durante toda a cópia; tente de novo",
                    ));
                }
            }
        }
    }
    // The backup writes through the target's own pager: once closed, the copy is one
    // self-contained file (the check that opens it next folds its WAL back when it closes).
    target.close().map_err(|(_, e)| fail(dst, e.to_string()))?;
    std::fs::metadata(dst)
        .map(|m| m.len())
        .map_err(|e| fail(dst, e.to_string()))
}

/// Writes a consistent copy of the live database `db` at [`partial_path`]`(out)` and returns
/// its size. `out` and the partial file must not exist (a leftover partial from a crashed
/// backup is replaced). The caller checks the copy, then calls [`publish`].
pub fn backup_file(db: &Path, out: &Path) -> Result<u64, StoreError> {
    if !db.exists() {
        return Err(fail(db, "não há banco de dados aqui"));
    }
    if out.exists() {
        return Err(fail(
            out,
            "o arquivo de backup já existe; escolha outro nome (um backup nunca é sobrescrito)",
        ));
    }
    let partial = partial_path(out);
    file::remove_leftovers(&partial).map_err(StoreError::from)?;
    file::check_existing(db).map_err(StoreError::from)?;
    copy(db, &partial)
}

/// Makes a checked copy durable and moves it to its final name (which must not exist).
pub fn publish(partial: &Path, out: &Path) -> Result<(), StoreError> {
    file::publish(partial, out).map_err(StoreError::from)
}

/// Discards a copy that failed its check.
pub fn discard(partial: &Path) -> Result<(), StoreError> {
    file::remove_leftovers(partial).map_err(StoreError::from)
}

/// The path a restore is built at before it is published as `db`.
pub fn restoring_path(db: &Path) -> PathBuf {
    file::sibling(db, ".restoring")
}

/// Copies the backup `from` to [`restoring_path`]`(db)`, refusing when `db` already exists.
/// The caller opens and checks the copy there, then [`publish`]es it as `db`.
pub fn restore_file(from: &Path, db: &Path) -> Result<u64, StoreError> {
    if db.exists() {
        return Err(fail(
            db,
            "já existe um banco de dados aqui; mova-o para outro lugar antes de restaurar (a \
             restauração nunca sobrescreve dados)",
        ));
    }
    file::check_existing(from).map_err(StoreError::from)?;
    let tmp = restoring_path(db);
    file::remove_leftovers(&tmp).map_err(StoreError::from)?;
    copy(from, &tmp)
}
