//! Photos, content-addressed: the key is the SHA-256 of the bytes, computed when the photo is
//! stored (at capture), and the record document holds only that hash (ARCHITECTURE.md, Records).
//!
//! The bytes live in the database (table `photos`), not in files beside it: a photo and the
//! record naming it commit in the same WAL, a backup is one file, and a crash cannot leave a
//! half-written or orphaned file. `verify_photo` recomputes the hash, so a row damaged or edited
//! after capture is reported, never silently uploaded as evidence.

use chrono::Utc;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{Store, StoreError, StoreResult, to_i64, to_u64, ts};

/// Result of verifying one photo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum PhotoStatus {
    /// The bytes hash to their key.
    Intact,
    /// The bytes changed since capture: `actual` is what they hash to now.
    Tampered { actual: String },
    /// No photo with that hash on this device.
    Missing,
}

/// One line of `verify_photos`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhotoReport {
    pub hash: String,
    pub size: u64,
    #[serde(flatten)]
    pub status: PhotoStatus,
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn normalise_hash(hash: &str) -> StoreResult<String> {
    let h = hash.trim().to_ascii_lowercase();
    if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(h)
    } else {
        Err(StoreError::PhotoHash(hash.to_owned()))
    }
}

/// `Store::put_photo` on a connection (or inside a record's write transaction).
pub(super) fn put_photo_in(conn: &Connection, bytes: &[u8]) -> StoreResult<String> {
    let hash = sha256_hex(bytes);
    let size = to_i64(bytes.len() as u64, "photos")?;
    let inserted = conn
        .prepare_cached(
            "INSERT INTO photos (hash, bytes, size, created_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (hash) DO NOTHING",
        )?
        .execute(params![hash, bytes, size, ts(Utc::now())])?;
    if inserted == 0 && verify_in(conn, &hash)? != PhotoStatus::Intact {
        conn.prepare_cached("UPDATE photos SET bytes = ?2, size = ?3 WHERE hash = ?1")?
            .execute(params![hash, bytes, size])?;
    }
    Ok(hash)
}

fn verify_in(conn: &Connection, hash: &str) -> StoreResult<PhotoStatus> {
    let h = normalise_hash(hash)?;
    let mut stmt = conn.prepare_cached("SELECT bytes FROM photos WHERE hash = ?1")?;
    let mut rows = stmt.query([&h])?;
    let Some(row) = rows.next()? else {
        return Ok(PhotoStatus::Missing);
    };
    // Hash straight from SQLite's buffer: photos are megabytes, no copy needed.
    let bytes = row.get_ref(0)?.as_bytes().map_err(rusqlite::Error::from)?;
    let actual = sha256_hex(bytes);
    Ok(if actual == h {
        PhotoStatus::Intact
    } else {
        PhotoStatus::Tampered { actual }
    })
}

impl Store {
    /// Stores a photo and returns its hash. Idempotent: storing the same bytes again changes
    /// nothing — except that it repairs a stored copy that no longer matches its hash.
    pub fn put_photo(&mut self, bytes: &[u8]) -> StoreResult<String> {
        put_photo_in(&self.conn, bytes)
    }

    /// The photo's bytes, if stored (not verified: call `verify_photo` before trusting them).
    pub fn photo(&self, hash: &str) -> StoreResult<Option<Vec<u8>>> {
        let h = normalise_hash(hash)?;
        Ok(self
            .conn
            .prepare_cached("SELECT bytes FROM photos WHERE hash = ?1")?
            .query_row([h], |r| r.get(0))
            .optional()?)
    }

    /// Recomputes the hash of a stored photo.
    pub fn verify_photo(&self, hash: &str) -> StoreResult<PhotoStatus> {
        verify_in(&self.conn, hash)
    }

    /// Verifies every stored photo, one at a time (memory stays at one photo).
    pub fn verify_photos(&self) -> StoreResult<Vec<PhotoReport>> {
        let mut stmt = self
            .conn
            .prepare("SELECT hash, bytes, size FROM photos ORDER BY hash")?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            let hash: String = row.get(0)?;
            let bytes = row.get_ref(1)?.as_bytes().map_err(rusqlite::Error::from)?;
            let actual = sha256_hex(bytes);
            let status = if actual == hash {
                PhotoStatus::Intact
            } else {
                PhotoStatus::Tampered { actual }
            };
            out.push(PhotoReport {
                size: to_u64(row.get(2)?, "photos")?,
                hash,
                status,
            });
        }
        Ok(out)
    }
}
