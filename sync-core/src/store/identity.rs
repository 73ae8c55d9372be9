//! Who this device is: its registered id, the user signed in, their role and (for a stand
//! coordinator) their stand — one row, set once by `device init` and read by every record write.
//!
//! The device id is the Automerge actor of every change the device writes (ARCHITECTURE.md, Sync: the
//! server binds a change to the authenticated device by its actor). Changing it once records
//! exist would make the same device write under two actors and orphan the sequence numbers of
//! the first, so `set_device_identity` refuses it; the user and role may change (another officer
//! signs in on a shared phone).
//!
//! The device's Ed25519 key (`device_key`, one row) lives here too: created on the device the
//! first time it is asked for (`device_public_key`, which the client sends at login, or the
//! first issue), kept for the life of the store, and read only by the crate's own issuing code
//! (`device_key`): no API hands out the secret.

use chrono::{DateTime, Utc};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{Store, StoreError, StoreResult, ts};
use crate::domain::StandId;
use crate::records::{Agent, DeviceKey, UserRole};

/// The device's identity as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceIdentity {
    /// Registered device id; its bytes are the Automerge actor (`records::actor_for_device`).
    #[schemars(with = "String")]
    pub device_id: Uuid,
    /// User signed in on the device.
    pub user_id: String,
    pub role: UserRole,
    /// The stand a coordinator coordinates (art. 17); `None` for officers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stand_id: Option<StandId>,
    /// Órgão autuador printed on autos; `None`: the rules configuration's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuing_body: Option<String>,
}

impl DeviceIdentity {
    /// The agent every change of this device is written as.
    pub fn agent(&self) -> Agent {
        Agent::new(self.user_id.clone(), self.role, self.device_id)
    }
}

impl Store {
    /// This device's identity, `None` until `set_device_identity`.
    pub fn device_identity(&self) -> StoreResult<Option<DeviceIdentity>> {
        let body: Option<String> = self
            .conn
            .prepare_cached("SELECT body FROM device_identity WHERE id = 1")?
            .query_row([], |r| r.get(0))
            .optional()?;
        body.map(|b| {
            serde_json::from_str(&b).map_err(|e| StoreError::Decode {
                table: "device_identity",
                key: String::from("1"),
                detail: e.to_string(),
            })
        })
        .transpose()
    }

    /// Sets (or updates) the identity. Refused when it would change the device id of a store
    /// that already holds records: their changes were written under the old id's actor.
    pub fn set_device_identity(
        &mut self,
        identity: &DeviceIdentity,
        at: DateTime<Utc>,
    ) -> StoreResult<()> {
        if identity.user_id.trim().is_empty() {
            return Err(StoreError::IdentityInvalid {
                reason: String::from("usuário vazio"),
            });
        }
        if identity.device_id.is_nil() {
            return Err(StoreError::IdentityInvalid {
                reason: String::from("identificador do aparelho nulo"),
            });
        }
        if identity.role == UserRole::Coordinator
            && identity
                .stand_id
                .as_deref()
                .is_none_or(|s| s.trim().is_empty())
        {
            return Err(StoreError::IdentityInvalid {
                reason: String::from("coordenador sem ponto (art. 17: cada ponto tem o seu)"),
            });
        }
        let body = serde_json::to_string(identity).map_err(|e| StoreError::IdentityInvalid {
            reason: e.to_string(),
        })?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let old: Option<String> = tx
            .prepare_cached("SELECT device_id FROM device_identity WHERE id = 1")?
            .query_row([], |r| r.get(0))
            .optional()?;
        let new = identity.device_id.to_string();
        if let Some(old) = old.filter(|o| *o != new) {
            let records: i64 = tx.query_row("SELECT count(*) FROM records", [], |r| r.get(0))?;
            if records > 0 {
                return Err(StoreError::DeviceIdChange { old, new, records });
            }
        }
        tx.prepare_cached(
            "INSERT INTO device_identity (id, device_id, body, updated_at) VALUES (1, ?1, ?2, ?3)
             ON CONFLICT (id) DO UPDATE SET device_id = excluded.device_id, body = excluded.body,
                 updated_at = excluded.updated_at",
        )?
        .execute(params![new, body, ts(at)])?;
        tx.commit()?;
        Ok(())
    }
}

impl Store {
    /// The device's public key (created with the key on first use), for the server to register.
    pub fn device_public_key(&self) -> StoreResult<[u8; 32]> {
        Ok(self.device_key()?.public_key())
    }

    /// The device's signing key, created on first use. Crate-only: records are sealed through
    /// `FieldRecords::issue`, and the secret never leaves the store.
    pub(crate) fn device_key(&self) -> StoreResult<DeviceKey> {
        let read = |conn: &rusqlite::Connection| -> StoreResult<Option<DeviceKey>> {
            let secret: Option<Vec<u8>> = conn
                .prepare_cached("SELECT secret FROM device_key WHERE id = 1")?
                .query_row([], |r| r.get(0))
                .optional()?;
            secret
                .map(|s| {
                    let bytes: [u8; 32] = s.try_into().map_err(|_| StoreError::Decode {
                        table: "device_key",
                        key: String::from("1"),
                        detail: String::from("chave sem 32 bytes"),
                    })?;
                    Ok(DeviceKey::from_secret(&bytes))
                })
                .transpose()
        };
        if let Some(key) = read(&self.conn)? {
            return Ok(key);
        }
        let key = DeviceKey::generate()?;
        // OR IGNORE: another process of the same store may have created one meanwhile; the
        // row that won is the key, read back below.
        self.conn
            .prepare_cached(
                "INSERT OR IGNORE INTO device_key (id, secret, public_key, created_at)
                 VALUES (1, ?1, ?2, ?3)",
            )?
            .execute(params![
                key.secret().to_vec(),
                hex::encode(key.public_key()),
                ts(chrono::Utc::now())
            ])?;
        read(&self.conn)?.ok_or_else(|| StoreError::Decode {
            table: "device_key",
            key: String::from("1"),
            detail: String::from("chave não gravada"),
        })
    }
}

impl Store {
    /// Records that a password login registered this device's key with `with` (the server URL
    /// and the device's id there), so that the sync client knows it may send records.
    pub fn mark_device_key_registered(&self, with: &str, at: DateTime<Utc>) -> StoreResult<()> {
        self.device_key()?;
        self.conn
            .prepare_cached(
                "UPDATE device_key SET registered_with = ?1, registered_at = ?2 WHERE id = 1",
            )?
            .execute(params![with, ts(at)])?;
        Ok(())
    }

    /// Where a login last registered this device's key (`None`: nowhere yet).
    pub fn device_key_registered_with(&self) -> StoreResult<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT registered_with FROM device_key WHERE id = 1")?
            .query_row([], |r| r.get::<_, Option<String>>(0))
            .optional()?
            .flatten())
    }
}
