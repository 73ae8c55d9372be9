//! The database file itself, before SQLite opens it: what may be created and what must be
//! refused.
//!
//! - **Only a path that does not exist is created**, and atomically: a new database is built
//!   and migrated at `NAME.creating` (mode 0600), closed (SQLite folds its WAL back in), synced,
//!   then renamed into place. So the real path either does not exist or holds a migrated server
//!   database — a crash while creating leaves only the `.creating` file, started over next time.
//! - **An existing file is never initialised.** An empty file (a failed copy, `touch`, a full
//!   disk), a file that is not SQLite, or one shorter than its own header says (a truncated
//!   copy) is refused with the reason; `migrations::migrate` then refuses a SQLite file without
//!   the server's schema. Without this an empty file would start a brand-new empty server whose
//!   audit chain verifies.
//! - **Private**: the file is created 0600 (it holds CPFs and names); SQLite gives its `-wal` and
//!   `-shm` the database file's mode, and an existing database whose mode lets others read it is
//!   narrowed to 0600 at open (with its `-wal`/`-shm`).

use crate::Result;
use std::io::Read;
use std::path::{Path, PathBuf};

use taxi_fiscal_store::StoreError;

/// SQLite's file header starts with these 16 bytes.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";
/// Length of SQLite's file header.
const HEADER_LEN: usize = 100;

fn open_err(path: &Path, reason: impl Into<String>) -> crate::Error {
    crate::Error::Store(StoreError::Open {
        path: path.display().to_string(),
        reason: reason.into(),
    })
}

/// `path` with `suffix` appended to its file name (`x.db` → `x.db-wal`).
pub(super) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Checks that an existing file can be a SQLite database as a whole: not empty, SQLite's
/// header, and at least as long as the header says.
pub(super) fn check_existing(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| open_err(path, e.to_string()))?;
    if !meta.is_file() {
        return Err(open_err(path, "não é um arquivo de banco de dados"));
    }
    let len = meta.len();
    if len == 0 {
        return Err(open_err(
            path,
            "o arquivo do banco de dados existe mas está vazio (0 bytes); restaure o backup, ou \
             remova o arquivo para criar um banco novo",
        ));
    }
    let mut header = [0u8; HEADER_LEN];
    let read = std::fs::File::open(path)
        .and_then(|mut f| {
            let mut n = 0;
            while n < HEADER_LEN {
                match f.read(&mut header[n..])? {
                    0 => break,
                    k => n += k,
                }
            }
            Ok(n)
        })
        .map_err(|e| open_err(path, e.to_string()))?;
    if read < HEADER_LEN || &header[..16] != SQLITE_MAGIC {
        return Err(open_err(
            path,
            "o arquivo existe mas não é um banco de dados SQLite; restaure o backup",
        ));
    }
    let be16 = |i: usize| u16::from_be_bytes([header[i], header[i + 1]]);
    let be32 =
        |i: usize| u32::from_be_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
    let page_size = match be16(16) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    // The page count in the header is valid only when the change counter matches the
    // "version valid for" field (SQLite's file format, §1.3.8).
    let pages = u64::from(be32(28));
    let counted = pages > 0 && be32(24) == be32(92);
    if counted && page_size.is_power_of_two() && len < page_size * pages {
        return Err(open_err(
            path,
            format!(
                "o banco de dados está truncado: tem {len} bytes, o cabeçalho indica {}; \
                 restaure o backup",
                page_size * pages
            ),
        ));
    }
    Ok(())
}

/// Narrows an existing database (and its `-wal`/`-shm`) to 0600 if others may read it.
pub(super) fn make_private(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for p in [
            path.to_owned(),
            sibling(path, "-wal"),
            sibling(path, "-shm"),
        ] {
            let Ok(meta) = std::fs::metadata(&p) else {
                continue;
            };
            if meta.permissions().mode() & 0o077 != 0 {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).map_err(
                    |e| open_err(&p, format!("não foi possível restringir o acesso: {e}")),
                )?;
                tracing::warn!(path = %p.display(), "database file was readable by others: now 0600");
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// An empty file at `path`, readable by its owner only. Fails if it exists.
pub(super) fn create_private(path: &Path) -> Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)
        .map(drop)
        .map_err(|e| open_err(path, format!("não foi possível criar o arquivo: {e}")))
}

/// Makes a built database at `tmp` durable and moves it to `path` (which must not exist).
pub(super) fn publish(tmp: &Path, path: &Path) -> Result<()> {
    let io = |e: std::io::Error| open_err(path, e.to_string());
    std::fs::File::open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    if path.exists() {
        return Err(open_err(
            path,
            "o arquivo apareceu enquanto o banco era criado",
        ));
    }
    std::fs::rename(tmp, path).map_err(io)?;
    // The rename itself survives a power cut once the directory is synced.
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
    }
    Ok(())
}

/// Removes what a crashed creation left at `tmp`.
pub(super) fn remove_leftovers(tmp: &Path) -> Result<()> {
    for p in [tmp.to_owned(), sibling(tmp, "-wal"), sibling(tmp, "-shm")] {
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(open_err(&p, e.to_string())),
        }
    }
    Ok(())
}
