//! What the sync client keeps in the device store (migration 5): the session with the server,
//! which photos still have to be uploaded, and the sync status the app shows.
//!
//! Pure SQLite, no network: the client (`crate::client`, feature `client`) is the only writer,
//! but the status is readable by anyone holding the store — the app's status line, the
//! `taxi-fiscal device status` command — even in a build without the client.
//!
//! - **Session** (`client_session`, one row): server URL, the server's id for this device, who
//!   is logged in, the access and refresh tokens and until when each is good *on this device's
//!   clock* (see the migration). Saved in one statement, so a crash never leaves a refresh token
//!   half-written: a lost rotation only costs a new login.
//! - **Photos** (`photos.uploaded_at`): NULL until the server confirmed it holds the bytes.
//! - **Status** (`client_status`, one row): last attempt, last whole success, last error.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::{Store, StoreResult, parse_opt_ts, parse_ts, secrets, to_u64, ts};
use crate::sync::{DeviceSyncStore, SERVER_PEER};

/// The session with the server, as stored. `Debug` hides the tokens (they are bearer secrets
/// and must not reach a log line).
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSession {
    pub server_url: String,
    /// The device as registered on the server (`POST /v1/devices`).
    pub server_device_id: String,
    pub user_id: String,
    pub username: String,
    /// Server role: `officer`, `coordinator`, `office`, `admin`.
    pub role: String,
    pub stand_id: Option<String>,
    pub access_token: String,
    /// Device clock: refresh before this.
    pub access_valid_until: DateTime<Utc>,
    pub refresh_token: String,
    /// Device clock: log in again after this.
    pub refresh_valid_until: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSession")
            .field("server_url", &self.server_url)
            .field("server_device_id", &self.server_device_id)
            .field("user_id", &self.user_id)
            .field("username", &self.username)
            .field("role", &self.role)
            .field("stand_id", &self.stand_id)
            .field("access_token", &"…")
            .field("access_valid_until", &self.access_valid_until)
            .field("refresh_token", &"…")
            .field("refresh_valid_until", &self.refresh_valid_until)
            .finish()
    }
}

/// A photo the server has not confirmed yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingPhoto {
    pub hash: String,
    pub size: u64,
}

/// What the app shows about sync: what is still only on this device, how fresh the registry
/// is, and how the last attempt went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncStatus {
    /// Records with changes the server has not acknowledged.
    pub pending_records: u64,
    /// Photos not yet confirmed by the server, and their size.
    pub pending_photos: u64,
    pub pending_photo_bytes: u64,
    /// Records saved while no auto number was left (they get one after the next top-up).
    pub records_waiting_for_number: u64,
    pub numbers_left: u64,
    /// Refused changes kept on this device as evidence.
    pub quarantined_changes: u64,
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// Last sync whose every step succeeded.
    pub last_success_at: Option<DateTime<Utc>>,
    /// Last error (Portuguese), cleared by the next whole success.
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    /// Registry version held, when it was last refreshed, and how old that is now (seconds).
    pub registry_version: Option<u64>,
    pub registry_refreshed_at: Option<DateTime<Utc>>,
    pub registry_age_seconds: Option<i64>,
    /// Who is logged in, on which server (`None`: log in first).
    pub logged_in_as: Option<String>,
    pub server_url: Option<String>,
}

impl Store {
    /// The stored session, if any.
    pub fn client_session(&self) -> StoreResult<Option<ClientSession>> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT server_url, server_device_id, user_id, username, role, stand_id,
                        access_token, access_valid_until, refresh_token, refresh_valid_until,
                        updated_at
                 FROM client_session WHERE id = 1",
            )?
            .query_row([], |r| {
                Ok((
                    (
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, Option<String>>(5)?,
                    ),
                    (
                        r.get::<_, String>(6)?,
                        r.get::<_, String>(7)?,
                        r.get::<_, String>(8)?,
                        r.get::<_, String>(9)?,
                        r.get::<_, String>(10)?,
                    ),
                ))
            })
            .optional()?;
        let Some((
            (server_url, server_device_id, user_id, username, role, stand_id),
            (mut access_token, access_until, mut refresh_token, refresh_until, updated),
        )) = row
        else {
            return Ok(None);
        };
        if let Some(vault) = self.vault() {
            // The tokens are in the platform keystore; a keystore that lost them (wiped, or
            // restored without them) means a new login, like an expired session.
            let Some(bytes) = vault.load(secrets::SESSION_TOKENS)? else {
                return Ok(None);
            };
            let tokens = secrets::tokens_from(&bytes)?;
            access_token = tokens.access_token;
            refresh_token = tokens.refresh_token;
        }
        Ok(Some(ClientSession {
            access_valid_until: parse_ts("client_session", "access", &access_until)?,
            refresh_valid_until: parse_ts("client_session", "refresh", &refresh_until)?,
            updated_at: parse_ts("client_session", "updated", &updated)?,
            server_url,
            server_device_id,
            user_id,
            username,
            role,
            stand_id,
            access_token,
            refresh_token,
        }))
    }

    /// Stores (replaces) the session in one statement — its tokens first in the vault, when
    /// the store has one (then the row keeps empty tokens). Two writes then, not one: a crash
    /// between them pairs the new tokens with the old validity times, which at worst makes the
    /// client refresh early or log in again — never a half-written token.
    pub fn save_client_session(&mut self, s: &ClientSession) -> StoreResult<()> {
        let (access, refresh) = match self.vault() {
            Some(vault) => {
                vault.save(
                    secrets::SESSION_TOKENS,
                    &secrets::tokens_json(&s.access_token, &s.refresh_token)?,
                )?;
                ("", "")
            }
            None => (s.access_token.as_str(), s.refresh_token.as_str()),
        };
        self.conn
            .prepare_cached(
                "INSERT INTO client_session (id, server_url, server_device_id, user_id, username,
                     role, stand_id, access_token, access_valid_until, refresh_token,
                     refresh_valid_until, updated_at)
                 VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 ON CONFLICT (id) DO UPDATE SET server_url = excluded.server_url,
                     server_device_id = excluded.server_device_id, user_id = excluded.user_id,
                     username = excluded.username, role = excluded.role,
                     stand_id = excluded.stand_id, access_token = excluded.access_token,
                     access_valid_until = excluded.access_valid_until,
                     refresh_token = excluded.refresh_token,
                     refresh_valid_until = excluded.refresh_valid_until,
                     updated_at = excluded.updated_at",
            )?
            .execute(params![
                s.server_url,
                s.server_device_id,
                s.user_id,
                s.username,
                s.role,
                s.stand_id,
                access,
                ts(s.access_valid_until),
                refresh,
                ts(s.refresh_valid_until),
                ts(s.updated_at)
            ])?;
        Ok(())
    }

    /// Forgets the session (logout, or the server refused the refresh token). Records, photos
    /// and sync state stay: the next login continues where this one stopped.
    pub fn clear_client_session(&mut self) -> StoreResult<()> {
        self.conn
            .prepare_cached("DELETE FROM client_session")?
            .execute([])?;
        if let Some(vault) = self.vault() {
            vault.delete(secrets::SESSION_TOKENS)?;
        }
        Ok(())
    }

    /// Photos the server has not confirmed, oldest first.
    pub fn pending_photos(&self) -> StoreResult<Vec<PendingPhoto>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT hash, size FROM photos WHERE uploaded_at IS NULL ORDER BY created_at, hash",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (hash, size) = row?;
            out.push(PendingPhoto {
                hash,
                size: to_u64(size, "photos")?,
            });
        }
        Ok(out)
    }

    /// Marks photos as held by the server (after it confirmed them). Returns how many changed;
    /// photos already marked keep their first confirmation time.
    pub fn mark_photos_uploaded(
        &mut self,
        hashes: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        let tx = self.conn.transaction()?;
        let mut n = 0;
        {
            let mut stmt = tx.prepare_cached(
                "UPDATE photos SET uploaded_at = ?2 WHERE hash = ?1 AND uploaded_at IS NULL",
            )?;
            let at = ts(at);
            for h in hashes {
                n += stmt.execute(params![h.to_ascii_lowercase(), at])?;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// When a photo was confirmed by the server (`None`: not yet, or unknown).
    pub fn photo_uploaded_at(&self, hash: &str) -> StoreResult<Option<DateTime<Utc>>> {
        let at: Option<Option<String>> = self
            .conn
            .prepare_cached("SELECT uploaded_at FROM photos WHERE hash = ?1")?
            .query_row([hash.to_ascii_lowercase()], |r| r.get(0))
            .optional()?;
        parse_opt_ts("photos", hash, at.flatten())
    }

    /// A sync started.
    pub fn note_sync_attempt(&mut self, at: DateTime<Utc>) -> StoreResult<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO client_status (id, last_attempt_at) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET last_attempt_at = excluded.last_attempt_at",
            )?
            .execute([ts(at)])?;
        Ok(())
    }

    /// Every step of a sync succeeded: the last error is cleared.
    pub fn note_sync_success(&mut self, at: DateTime<Utc>) -> StoreResult<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO client_status (id, last_success_at) VALUES (1, ?1)
                 ON CONFLICT (id) DO UPDATE SET last_success_at = excluded.last_success_at,
                     last_error = NULL, last_error_at = NULL",
            )?
            .execute([ts(at)])?;
        Ok(())
    }

    /// A sync (or one of its steps) failed with `message`.
    pub fn note_sync_error(&mut self, at: DateTime<Utc>, message: &str) -> StoreResult<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO client_status (id, last_error, last_error_at) VALUES (1, ?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET last_error = excluded.last_error,
                     last_error_at = excluded.last_error_at",
            )?
            .execute(params![message, ts(at)])?;
        Ok(())
    }

    /// The sync status as of `now` (device clock).
    pub fn sync_status(&self, now: DateTime<Utc>) -> StoreResult<SyncStatus> {
        let count = |sql: &str| -> StoreResult<u64> {
            let n: i64 = self.conn.query_row(sql, [], |r| r.get(0))?;
            to_u64(n, "count")
        };
        let (last_attempt, last_success, last_error, last_error_at): (
            Option<String>,
            Option<String>,
            Option<String>,
            Option<String>,
        ) = self
            .conn
            .prepare_cached(
                "SELECT last_attempt_at, last_success_at, last_error, last_error_at
                 FROM client_status WHERE id = 1",
            )?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?
            .unwrap_or_default();
        let replica = self.replica_info()?;
        let session = self.client_session()?;
        Ok(SyncStatus {
            pending_records: self.sync_candidates(SERVER_PEER)?.len() as u64,
            pending_photos: count("SELECT count(*) FROM photos WHERE uploaded_at IS NULL")?,
            pending_photo_bytes: count(
                "SELECT coalesce(sum(size), 0) FROM photos WHERE uploaded_at IS NULL",
            )?,
            records_waiting_for_number: count(
                "SELECT count(*) FROM records WHERE wants_number = 1 AND number IS NULL",
            )?,
            numbers_left: self.numbers_left()?,
            quarantined_changes: count("SELECT count(*) FROM sync_quarantine")?,
            last_attempt_at: parse_opt_ts("client_status", "last_attempt_at", last_attempt)?,
            last_success_at: parse_opt_ts("client_status", "last_success_at", last_success)?,
            last_error,
            last_error_at: parse_opt_ts("client_status", "last_error_at", last_error_at)?,
            registry_version: replica.as_ref().map(|r| r.version),
            registry_refreshed_at: replica.as_ref().map(|r| r.refreshed_at),
            registry_age_seconds: replica
                .as_ref()
                .map(|r| (now - r.refreshed_at).num_seconds()),
            logged_in_as: session.as_ref().map(|s| s.username.clone()),
            server_url: session.map(|s| s.server_url),
        })
    }
}
