//! Device store: one SQLite file (rusqlite, bundled SQLite, WAL) holding everything a device
//! keeps offline — the registry replica, field records as Automerge bytes, auto-number blocks,
//! photos and sync state.
//!
//! Flow:
//! 1. [`Store::open`] recognises the file before writing a byte to it: a non-SQLite file is
//!    refused as corrupt, an SQLite file with another `application_id` (or with tables and no id)
//!    as foreign, a file whose `user_version` is newer than this code as too new. Only then does
//!    it switch the file to WAL and run the numbered migrations in `migrations/`, each in its own
//!    transaction together with the `user_version` bump (module `migrations`). The app opens
//!    it with [`Store::open_encrypted`] instead: the same steps on a file SQLCipher encrypts
//!    under a key from the platform keystore, which also keeps the device's signing key and
//!    the session's tokens (module `secrets`).
//! 2. The registry arrives as a snapshot or a batch of changes (`crate::feed`), each applied in
//!    one transaction (module `replica`), stamped with its version and the device's refresh time.
//! 3. Lookups and checks (module `lookup`) read the permit's precomputed check bundle (module
//!    `bundle`, written with the replica in step 2) by canonical plate or number — one indexed
//!    row — and hand it to `crate::rules::check` with the law's parameters of the same replica
//!    version (module `parameters`: the office's rules configuration, calendar and IPCA, as the
//!    feed delivered them); the verdict is stamped with the replica's version and age.
//! 4. The field-records layer (`crate::field`) writes each record change as an incremental
//!    Automerge chunk, in the same transaction as the auto number it may take, the photos and
//!    observed people it names (module `records`, `Store::edit_record_with`); photos are stored
//!    by SHA-256 (module `photos`); the device's identity — the actor of every change — is one
//!    row (module `identity`).
//!
//! Durability: WAL with `synchronous=FULL`, so a committed transaction survives a power cut (with
//! NORMAL the last commits before a crash may roll back — not acceptable for an auto de
//! infração); `foreign_keys=ON`; a busy timeout so that the app and a CLI on the same file wait
//! for each other instead of failing. Writers open `BEGIN IMMEDIATE` transactions so that two
//! connections never deadlock upgrading a read lock.

// Precomputed check bundles and driver rows, kept with the replica.
mod bundle;
// Sync client's session, photo upload marks and sync status.
mod client_state;
mod error;
mod identity;
mod lookup;
mod migrations;
// The law's parameters of the replica, and the check's copy of them.
mod parameters;
mod photos;
mod purge;
mod records;
mod replica;
// Encryption at rest and the secrets kept in the platform keystore.
mod secrets;
mod sync_store;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};
use serde::Serialize;

pub use client_state::{ClientSession, PendingPhoto, SyncStatus};
pub use error::{StoreError, StoreResult};
pub use identity::DeviceIdentity;
pub use lookup::{PermitView, PersonPermits};
pub use migrations::{APPLICATION_ID, LATEST_VERSION};
pub use photos::{PhotoReport, PhotoStatus, sha256_hex};
pub use purge::PurgeReport;
pub use records::{
    ObservedPerson, RecordBytes, RecordEdit, RecordExtras, RecordMeta, RecordSummary, RecordWrite,
};
pub use replica::{ApplyReport, ReplicaInfo};
pub use secrets::{
    DATABASE_KEY, DATABASE_KEY_LEN, DEVICE_SIGNING_KEY, MemoryVault, SESSION_TOKENS, SecretVault,
};
pub use sync_store::QuarantinedChange;

/// Bytes of the file SQLite may memory-map (256 MiB; a city's replica is a few MB).
const MMAP_SIZE: i64 = 256 * 1024 * 1024;

/// Page cache of an encrypted store, in KiB (SQLite's negative `cache_size`): 16 MiB, against
/// the default 2 MiB (measured with the device bench, README's mobile section).
const ENCRYPTED_CACHE_KIB: i64 = -16 * 1024;

/// How long a statement waits for another connection's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The device's database. Not `Sync`: one connection, used from one thread at a time (wrap it
/// in a `Mutex` to share it).
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The replica's law parameters as last parsed, by generation (module `parameters`).
    parameters: parameters::Memo,
    /// The platform keystore holding the device key and the tokens (module `secrets`);
    /// `None`: they are in the file.
    vault: Option<secrets::Vault>,
}

/// What `status` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreStatus {
    pub path: String,
    pub schema_version: i64,
    /// `None` until a snapshot was applied.
    pub registry: Option<ReplicaInfo>,
    pub counts: StoreCounts,
}

/// Row counts, for `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoreCounts {
    pub people: u64,
    pub vehicles: u64,
    pub stands: u64,
    pub permits: u64,
    pub penalties: u64,
    pub fines: u64,
    pub transfers: u64,
    pub records: u64,
    pub records_waiting_for_number: u64,
    pub record_chunks: u64,
    pub numbers_left: u64,
    pub photos: u64,
    pub observed_people: u64,
}

impl Store {
    /// Opens (creating if absent) the store at `path`, migrating it to the latest schema.
    pub fn open(path: impl AsRef<Path>) -> StoreResult<Self> {
        Self::open_at(path.as_ref(), LATEST_VERSION, None)
    }

    /// Opens a store migrated only up to `version`: for migration tests, which need a database
    /// as an older app left it.
    #[cfg(any(test, feature = "testkit"))]
    pub fn open_at_version(path: impl AsRef<Path>, version: i64) -> StoreResult<Self> {
        Self::open_at(path.as_ref(), version.clamp(0, LATEST_VERSION), None)
    }

    /// Opens with `key` (SQLCipher) or without: an encrypted file has no readable header, so
    /// the header sniff is for plain opens only, and "not a database" means the wrong key.
    fn open_at(path: &Path, target: i64, key: Option<&secrets::DatabaseKey>) -> StoreResult<Self> {
        let exists_non_empty = match std::fs::metadata(path) {
            Ok(m) => m.len() > 0,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(source) => {
                return Err(StoreError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        if exists_non_empty && key.is_none() {
            sniff_header(path)?;
        }
        // Never let SQLite create a file over something that exists; create only when absent.
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if !path.exists() {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|source| StoreError::Open {
                path: path.to_owned(),
                source,
            })?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| classify(path, e))?;
        if let Some(key) = key {
            key.apply(&conn)?;
        }

        // Identify the file with reads only: nothing below writes until it is known to be ours.
        let found = identify(&conn, path).map_err(|e| match e {
            StoreError::Corrupt { path, .. } if key.is_some() => StoreError::WrongKey { path },
            e => e,
        })?;
        if found > LATEST_VERSION {
            return Err(StoreError::TooNew {
                path: path.to_owned(),
                found,
                supported: LATEST_VERSION,
            });
        }

        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(|e| classify(path, e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Pragma {
                pragma: "journal_mode=WAL",
                got: mode,
            });
        }
        conn.pragma_update(None, "synchronous", "FULL")?;
        // Reads through a memory map instead of read() into the page cache: a check touches a
        // dozen random pages, and mapping them cut its median by ~25 % on the 40,000-permit
        // bench (a larger page cache did not help). It is address space, not memory; SQLite
        // falls back to read() if the map cannot be made.
        conn.pragma_update(None, "mmap_size", MMAP_SIZE)?;
        if key.is_some() {
            // SQLCipher cannot memory-map an encrypted file: every page read is decrypted into
            // the page cache, so a larger cache keeps the hot pages of lookups decrypted.
            conn.pragma_update(None, "cache_size", ENCRYPTED_CACHE_KIB)?;
        }
        // Hot statements of lookups and writes stay prepared (the default 16 is tight).
        conn.set_prepared_statement_cache_capacity(64);
        // Query planner stability: plans must not depend on bound values. Without it, SQLite
        // marks joins whose plan *could* depend on a parameter, and rusqlite's statement cache
        // (which clears bindings on return) then forces a full re-prepare on every use —
        // measured at ~40 µs of a ~55 µs check. Our plans are index equalities either way.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;

        migrations::migrate(&mut conn, found, target)?;
        if target == LATEST_VERSION {
            // Check bundles in this build's encoding (rebuilt once after migration 6).
            bundle::ensure(&mut conn)?;
        }

        conn.pragma_update(None, "foreign_keys", true)?;
        let fk: i64 = conn.pragma_query_value(None, "foreign_keys", |r| r.get(0))?;
        if fk != 1 {
            return Err(StoreError::Pragma {
                pragma: "foreign_keys=ON",
                got: fk.to_string(),
            });
        }
        Ok(Self {
            conn,
            path: path.to_owned(),
            parameters: parameters::Memo::default(),
            vault: None,
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Schema version (`PRAGMA user_version`).
    pub fn schema_version(&self) -> StoreResult<i64> {
        Ok(self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))?)
    }

    /// Registry version and refresh time, row counts.
    pub fn status(&self) -> StoreResult<StoreStatus> {
        let count = |sql: &str| -> StoreResult<u64> {
            let n: i64 = self.conn.query_row(sql, [], |r| r.get(0))?;
            Ok(u64::try_from(n).unwrap_or(0))
        };
        Ok(StoreStatus {
            path: self.path.display().to_string(),
            schema_version: self.schema_version()?,
            registry: self.replica_info()?,
            counts: StoreCounts {
                people: count("SELECT count(*) FROM reg_people")?,
                vehicles: count("SELECT count(*) FROM reg_vehicles")?,
                stands: count("SELECT count(*) FROM reg_stands")?,
                permits: count("SELECT count(*) FROM reg_permits")?,
                penalties: count("SELECT count(*) FROM reg_penalties")?,
                fines: count("SELECT count(*) FROM reg_fines")?,
                transfers: count("SELECT count(*) FROM reg_transfers")?,
                records: count("SELECT count(*) FROM records")?,
                records_waiting_for_number: count(
                    "SELECT count(*) FROM records WHERE wants_number = 1 AND number IS NULL",
                )?,
                record_chunks: count("SELECT count(*) FROM record_chunks")?,
                numbers_left: count(
                    "SELECT coalesce(sum(last_number - next_number + 1), 0) FROM number_blocks",
                )?,
                photos: count("SELECT count(*) FROM photos")?,
                observed_people: count(
                    "SELECT count(*) FROM observed_people WHERE erased_at IS NULL",
                )?,
            },
        })
    }

    /// SQLite's own consistency check of the whole file (slow on a big replica: on demand only).
    /// Returns the problems found; empty means intact.
    pub fn integrity_check(&self) -> StoreResult<Vec<String>> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        Ok(rows.into_iter().filter(|r| r != "ok").collect())
    }
}

/// The 16 bytes every SQLite 3 database starts with.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Refuses a non-empty file that is not an SQLite database, without opening it with SQLite.
fn sniff_header(path: &Path) -> StoreResult<()> {
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).map_err(|source| StoreError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut read = 0;
    while read < header.len() {
        match file.read(&mut header[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(StoreError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        }
    }
    if read < header.len() || &header[..16] != SQLITE_MAGIC {
        return Err(StoreError::Corrupt {
            path: path.to_owned(),
            detail: String::from(
                "cabeçalho SQLite ausente: arquivo cifrado (abra com a chave) ou de outro tipo",
            ),
        });
    }
    Ok(())
}

/// Reads `application_id`, `user_version` and the table count; decides whether the file is
/// ours (returns its schema version), new (0) or foreign.
fn identify(conn: &Connection, path: &Path) -> StoreResult<i64> {
    let read = || -> rusqlite::Result<(i32, i64, i64)> {
        let app: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        let objects: i64 =
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        Ok((app, version, objects))
    };
    let (app, version, objects) = read().map_err(|e| classify(path, e))?;
    if app == APPLICATION_ID {
        return Ok(version);
    }
    if app != 0 {
        return Err(StoreError::Foreign {
            path: path.to_owned(),
            detail: format!("application_id {app:#x}"),
        });
    }
    if objects > 0 || version != 0 {
        return Err(StoreError::Foreign {
            path: path.to_owned(),
            detail: format!("{objects} tabela(s) ou índice(s) desconhecidos, sem identificação"),
        });
    }
    Ok(0)
}

/// SQLite's "not a database" and "corrupt" become `Corrupt`; anything else stays an open error.
fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_owned(),
            detail: e.to_string(),
        },
        _ => StoreError::Open {
            path: path.to_owned(),
            source: e,
        },
    }
}

/// Instants are stored as RFC 3339 UTC with microseconds: sortable as text, exact both ways.
fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn parse_ts(table: &'static str, key: &str, s: &str) -> StoreResult<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| StoreError::Decode {
            table,
            key: key.to_owned(),
            detail: format!("data-hora {s:?}: {e}"),
        })
}

fn parse_opt_ts(
    table: &'static str,
    key: &str,
    s: Option<String>,
) -> StoreResult<Option<DateTime<Utc>>> {
    s.map(|s| parse_ts(table, key, &s)).transpose()
}

/// u64 ↔ SQLite INTEGER (i64). Values above i64::MAX never come from the law's domain; they are
/// refused rather than wrapped.
fn to_i64(v: u64, what: &'static str) -> StoreResult<i64> {
    i64::try_from(v).map_err(|_| StoreError::Decode {
        table: what,
        key: v.to_string(),
        detail: String::from("valor acima do limite do SQLite"),
    })
}

fn to_u64(v: i64, table: &'static str) -> StoreResult<u64> {
    u64::try_from(v).map_err(|_| StoreError::Decode {
        table,
        key: v.to_string(),
        detail: String::from("valor negativo"),
    })
}

/// `Option` helper over rusqlite's `QueryReturnedNoRows`.
fn optional<T>(r: rusqlite::Result<T>) -> StoreResult<Option<T>> {
    Ok(r.optional()?)
}
