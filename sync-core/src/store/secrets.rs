//! Secrets at rest: what a lost phone must not give away.
//!
//! The device store holds the registry replica (names, CPFs and CNHs of every driver of the
//! city), the records, the session's tokens and the device's signing key. Opened with
//! [`Store::open_encrypted`] and a [`SecretVault`] — the app's door to the platform keystore
//! (Android Keystore, iOS Keychain) —:
//!
//! 1. the file is encrypted page by page with SQLCipher (AES-256 with an HMAC per page, the
//!    header included), under a 32-byte random key that only the vault holds
//!    ([`DATABASE_KEY`], created with the file). A raw key, not a passphrase: no key derivation
//!    at every open, and nothing an officer types;
//! 2. the device's Ed25519 secret ([`DEVICE_SIGNING_KEY`]) and the session's access and
//!    refresh tokens ([`SESSION_TOKENS`]) live in the vault, not in the file: even the
//!    decrypted file cannot sign an auto or talk to the server;
//! 3. a file left in plain SQLite by a build without encryption is encrypted in place at its
//!    first encrypted open (a copy made by SQLCipher's `sqlcipher_export`, renamed over the
//!    original: a crash leaves either file whole), and secrets found in it move to the vault.
//!
//! Without the vault's key the file is noise: [`Store::open`] refuses it as unreadable and
//! `open_encrypted` with another key as [`StoreError::WrongKey`], both without writing to it.
//! A build whose SQLite is not SQLCipher refuses `open_encrypted`
//! ([`StoreError::EncryptionUnavailable`]) rather than silently storing plain text.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::{Store, StoreError, StoreResult};

/// The vault's entry holding the database key (32 bytes).
pub const DATABASE_KEY: &str = "database-key";
/// The vault's entry holding the device's Ed25519 secret (32 bytes).
pub const DEVICE_SIGNING_KEY: &str = "device-signing-key";
/// The vault's entry holding the session's tokens (JSON: `access_token`, `refresh_token`).
pub const SESSION_TOKENS: &str = "session-tokens";
/// Length of the database key: AES-256.
pub const DATABASE_KEY_LEN: usize = 32;

/// Where the app keeps the device's secrets: the platform keystore. Implementations must be
/// durable (a `save` that returned is there after a reboot) and may be slow (milliseconds):
/// the store calls it at open, when a session is saved or read, and when a record is signed.
/// Errors are the platform's words; the store wraps them with the entry's name.
pub trait SecretVault: Send + Sync {
    /// The entry `name`, or `None` if there is none.
    fn load(&self, name: &str) -> Result<Option<Vec<u8>>, String>;
    /// Creates or replaces the entry `name`.
    fn save(&self, name: &str, value: &[u8]) -> Result<(), String>;
    /// Deletes the entry `name`; deleting an absent one is not an error.
    fn delete(&self, name: &str) -> Result<(), String>;
}

/// A vault in memory, for tests and tools: its secrets die with the process.
#[derive(Debug, Default)]
pub struct MemoryVault {
    entries: Mutex<HashMap<String, Vec<u8>>>,
}

impl MemoryVault {
    /// Names of the entries held, sorted (what a test checks).
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }
}

impl SecretVault for MemoryVault {
    fn load(&self, name: &str) -> Result<Option<Vec<u8>>, String> {
        Ok(self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned())
    }

    fn save(&self, name: &str, value: &[u8]) -> Result<(), String> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), value.to_vec());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<(), String> {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
        Ok(())
    }
}

/// The store's handle on the app's vault, with the entry's name in every error.
#[derive(Clone)]
pub(super) struct Vault(Arc<dyn SecretVault>);

impl fmt::Debug for Vault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Vault(…)")
    }
}

impl Vault {
    pub(super) fn load(&self, name: &'static str) -> StoreResult<Option<Vec<u8>>> {
        self.0
            .load(name)
            .map_err(|reason| StoreError::Vault { name, reason })
    }

    pub(super) fn save(&self, name: &'static str, value: &[u8]) -> StoreResult<()> {
        self.0
            .save(name, value)
            .map_err(|reason| StoreError::Vault { name, reason })
    }

    pub(super) fn delete(&self, name: &'static str) -> StoreResult<()> {
        self.0
            .delete(name)
            .map_err(|reason| StoreError::Vault { name, reason })
    }
}

/// The database key, as SQLCipher takes a raw key: `x'<64 hex digits>'`.
pub(super) struct DatabaseKey(String);

impl DatabaseKey {
    fn new(bytes: &[u8]) -> StoreResult<Self> {
        if bytes.len() != DATABASE_KEY_LEN {
            return Err(StoreError::Vault {
                name: DATABASE_KEY,
                reason: format!(
                    "a chave tem {} bytes, e não {DATABASE_KEY_LEN}",
                    bytes.len()
                ),
            });
        }
        Ok(Self(format!("x'{}'", hex::encode(bytes))))
    }

    /// Keys `conn` (before its first read) and checks that its SQLite is SQLCipher: plain
    /// SQLite ignores `PRAGMA key` without a word and would store plain text.
    pub(super) fn apply(&self, conn: &Connection) -> StoreResult<()> {
        // A wrong key is answered with `WrongKey`; SQLCipher's own log lines about it (to
        // stderr, logcat) would only repeat it.
        conn.execute_batch("PRAGMA cipher_log_level = NONE;")?;
        conn.pragma_update(None, "key", &self.0)?;
        if !is_sqlcipher(conn, "main")? {
            return Err(StoreError::EncryptionUnavailable);
        }
        Ok(())
    }
}

impl Drop for DatabaseKey {
    fn drop(&mut self) {
        // Best effort: the hex text does not outlive its use in this process's heap.
        let zeros = "0".repeat(self.0.len());
        self.0.replace_range(.., &zeros);
    }
}

/// Whether this build's SQLite is SQLCipher (asked of a connection in memory).
fn cipher_available() -> StoreResult<bool> {
    is_sqlcipher(&Connection::open_in_memory()?, "main")
}

/// Whether `schema` of `conn` answers `cipher_version`: SQLCipher does, plain SQLite ignores
/// the pragma without a row.
fn is_sqlcipher(conn: &Connection, schema: &str) -> StoreResult<bool> {
    let cipher: Option<String> = conn
        .query_row(&format!("PRAGMA {schema}.cipher_version"), [], |r| r.get(0))
        .optional()?;
    Ok(cipher.is_some_and(|c| !c.is_empty()))
}

/// What is at `path` before an encrypted open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileState {
    /// No file, or an empty one: a new store.
    New,
    /// A plain SQLite file (its header readable): encrypted in place.
    Plain,
    /// Anything else: an encrypted store (or noise), opened with the vault's key.
    Opaque,
}

fn file_state(path: &Path) -> StoreResult<FileState> {
    match std::fs::metadata(path) {
        Ok(m) if m.len() == 0 => Ok(FileState::New),
        Ok(_) => Ok(if super::sniff_header(path).is_ok() {
            FileState::Plain
        } else {
            FileState::Opaque
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileState::New),
        Err(source) => Err(StoreError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

impl Store {
    /// Opens the store at `path` encrypted with the key `vault` holds, creating both (file and
    /// key) when there is no file, and keeping the device's signing key and the session's
    /// tokens in the vault (module doc). A plain file of this app is migrated and encrypted in
    /// place first; a file of another app is refused untouched, as by [`Store::open`].
    pub fn open_encrypted(
        path: impl AsRef<Path>,
        vault: Arc<dyn SecretVault>,
    ) -> StoreResult<Self> {
        let path = path.as_ref();
        // Before anything is created or asked of the vault.
        if !cipher_available()? {
            return Err(StoreError::EncryptionUnavailable);
        }
        let vault = Vault(vault);
        let state = file_state(path)?;
        let key = match vault.load(DATABASE_KEY)? {
            Some(bytes) => DatabaseKey::new(&bytes)?,
            None if state == FileState::Opaque => {
                return Err(StoreError::KeyMissing {
                    path: path.to_owned(),
                });
            }
            None => {
                let mut bytes = [0u8; DATABASE_KEY_LEN];
                getrandom::fill(&mut bytes).map_err(|e| StoreError::Vault {
                    name: DATABASE_KEY,
                    reason: e.to_string(),
                })?;
                // Saved before a byte is encrypted with it: a crash never leaves a file whose
                // key is lost.
                vault.save(DATABASE_KEY, &bytes)?;
                DatabaseKey::new(&bytes)?
            }
        };
        if state == FileState::Plain {
            // Recognised and migrated as a plain store first: a foreign or newer file is
            // refused here, before anything is copied.
            drop(Self::open(path)?);
            encrypt_in_place(path, &key)?;
        }
        let mut store = Self::open_at(path, super::LATEST_VERSION, Some(&key))?;
        store.vault = Some(vault);
        store.move_secrets_into_vault()?;
        Ok(store)
    }

    /// Secrets a plain file held (a store encrypted in place) go to the vault and leave the
    /// file. Each is saved in the vault before it is blanked here.
    fn move_secrets_into_vault(&mut self) -> StoreResult<()> {
        let Some(vault) = self.vault.clone() else {
            return Ok(());
        };
        let secret: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT secret FROM device_key WHERE id = 1 AND length(secret) > 0",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(secret) = secret {
            vault.save(DEVICE_SIGNING_KEY, &secret)?;
            self.conn
                .execute("UPDATE device_key SET secret = x'' WHERE id = 1", [])?;
        }
        let tokens: Option<(String, String)> = self
            .conn
            .query_row(
                "SELECT access_token, refresh_token FROM client_session
                 WHERE id = 1 AND (access_token <> '' OR refresh_token <> '')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((access, refresh)) = tokens {
            vault.save(SESSION_TOKENS, &tokens_json(&access, &refresh)?)?;
            self.conn.execute(
                "UPDATE client_session SET access_token = '', refresh_token = '' WHERE id = 1",
                [],
            )?;
        }
        Ok(())
    }

    /// The vault, when the store was opened with one.
    pub(super) fn vault(&self) -> Option<&Vault> {
        self.vault.as_ref()
    }
}

/// The session's tokens as the vault keeps them.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Tokens {
    pub(super) access_token: String,
    pub(super) refresh_token: String,
}

pub(super) fn tokens_json(access: &str, refresh: &str) -> StoreResult<Vec<u8>> {
    serde_json::to_vec(&Tokens {
        access_token: access.to_owned(),
        refresh_token: refresh.to_owned(),
    })
    .map_err(|e| StoreError::Decode {
        table: "vault",
        key: String::from(SESSION_TOKENS),
        detail: e.to_string(),
    })
}

pub(super) fn tokens_from(bytes: &[u8]) -> StoreResult<Tokens> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Decode {
        table: "vault",
        key: String::from(SESSION_TOKENS),
        detail: e.to_string(),
    })
}

/// `<path>.encrypting`: the encrypted copy before it replaces the original.
fn copy_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".encrypting");
    PathBuf::from(name)
}

/// Encrypts the plain store at `path` under `key`: SQLCipher copies schema and rows into a new
/// encrypted file, which is synced and renamed over the original. Until the rename the
/// original is untouched; after it, the encrypted file is whole.
fn encrypt_in_place(path: &Path, key: &DatabaseKey) -> StoreResult<()> {
    let copy = copy_path(path);
    let io = |source| StoreError::Io {
        path: copy.clone(),
        source,
    };
    match std::fs::remove_file(&copy) {
        // A copy left by a crash before its rename: the original is still whole.
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    {
        // CREATE: an attached database is opened with the main one's flags, and the copy is
        // new (`path` itself exists: it was just opened as a plain store).
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|source| StoreError::Open {
            path: path.to_owned(),
            source,
        })?;
        conn.busy_timeout(super::BUSY_TIMEOUT)?;
        let copy_text = copy.to_str().ok_or_else(|| StoreError::Io {
            path: copy.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "caminho do banco não é texto UTF-8",
            ),
        })?;
        conn.execute(
            "ATTACH DATABASE ?1 AS encrypted KEY ?2",
            params![copy_text, key.0],
        )?;
        if !is_sqlcipher(&conn, "encrypted")? {
            return Err(StoreError::EncryptionUnavailable);
        }
        conn.query_row("SELECT sqlcipher_export('encrypted')", [], |_| Ok(()))?;
        // The export copies schema and rows; the file's identity is set here.
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        let app: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
        conn.execute_batch(&format!(
            "PRAGMA encrypted.user_version = {version}; PRAGMA encrypted.application_id = {app};"
        ))?;
        conn.execute_batch("DETACH DATABASE encrypted")?;
        conn.close().map_err(|(_, e)| StoreError::Sqlite(e))?;
    }
    // The plain file's WAL was checkpointed into it and removed at close; one still there
    // belongs to another connection, whose pages the rename would mix with the encrypted file.
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if Path::new(&wal).exists() {
        let _ = std::fs::remove_file(&copy);
        return Err(StoreError::Busy {
            path: path.to_owned(),
        });
    }
    std::fs::File::open(&copy)
        .and_then(|f| f.sync_all())
        .map_err(io)?;
    std::fs::rename(&copy, path).map_err(io)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // The rename itself is durable once the directory is synced (not possible everywhere).
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}
