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
//! (`device_key`): no API hands out the secret. A store opened with a vault keeps the secret
//! in the platform keystore instead (module `secrets`), and here only the public key.

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
    /// `FieldRecords::issue`, and the secret never leaves the store. With a vault (module
    /// `secrets`) the secret is the vault's and the row keeps the public key, which the
    /// vault's secret must match.
    pub(crate) fn device_key(&self) -> StoreResult<DeviceKey> {
        if let Some(key) = self.stored_device_key()? {
            return Ok(key);
        }
        // Created in a write transaction: the app's two connections (and a CLI) may ask at
        // once, and with a vault the secret is saved outside SQLite — only the transaction
        // that inserts the row may save it.
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        let exists: bool = tx
            .prepare_cached("SELECT 1 FROM device_key WHERE id = 1")?
            .exists([])?;
        if !exists {
            let key = DeviceKey::generate()?;
            let secret = match self.vault() {
                Some(vault) => {
                    vault.save(super::DEVICE_SIGNING_KEY, &key.secret())?;
                    Vec::new()
                }
                None => key.secret().to_vec(),
            };
            tx.prepare_cached(
                "INSERT INTO device_key (id, secret, public_key, created_at)
                 VALUES (1, ?1, ?2, ?3)",
            )?
            .execute(params![
                secret,
                hex::encode(key.public_key()),
                ts(chrono::Utc::now())
            ])?;
        }
        tx.commit()?;
        self.stored_device_key()?.ok_or_else(|| StoreError::Decode {
            table: "device_key",
            key: String::from("1"),
            detail: String::from("chave não gravada"),
        })
    }

    /// The key as stored: in the row, or in the vault (an empty `secret`).
    fn stored_device_key(&self) -> StoreResult<Option<DeviceKey>> {
        let row: Option<(Vec<u8>, String)> = self
            .conn
            .prepare_cached("SELECT secret, public_key FROM device_key WHERE id = 1")?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((mut secret, public_key)) = row else {
            return Ok(None);
        };
        let bad = |detail: &str| StoreError::Decode {
            table: "device_key",
            key: String::from("1"),
            detail: detail.to_owned(),
        };
        if secret.is_empty() {
            let vault = self
                .vault()
                .ok_or_else(|| bad("a chave está no cofre do aparelho, que não foi aberto"))?;
            secret = vault
                .load(super::DEVICE_SIGNING_KEY)?
                .ok_or_else(|| bad("a chave não está mais no cofre do aparelho"))?;
        }
        let bytes: [u8; 32] = secret.try_into().map_err(|_| bad("chave sem 32 bytes"))?;
        let key = DeviceKey::from_secret(&bytes);
        if hex::encode(key.public_key()) != public_key {
            return Err(bad("a chave do cofre não é a deste aparelho"));
        }
        Ok(Some(key))
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
