//! The server's countersignature of device-sealed records: its key, and the receipt it signs.
//!
//! # Flow
//!
//! 1. At start the server loads its Ed25519 key from `server-signing.key` in the data
//!    directory (`Config::signing_key_path`), creating it (32 random bytes, mode 0600) the
//!    first time. Its public key is served at `GET /v1/server-key` and in every receipt.
//! 2. The sync's vetting has checked the device seal of a record being issued
//!    (`sync_core::records::seal`). In the same transaction that stores the issuing batch, the
//!    store builds a [`Receipt`]: the auto's verification code, the device, its key and
//!    signature, the evidence digest, the issue instant on the device clock, the server's
//!    receive instant and the device clock's offset; signs [`Receipt::canonical`] with the
//!    server key; appends an audit row (`record.receipt`) whose payload is the receipt digest;
//!    and writes the row with that audit seq (`record_receipts`, migration 009).
//! 3. Anyone holding the server's public key can check a receipt: rebuild the canonical bytes
//!    from its fields and verify `server_signature` ([`Receipt::verify`]). A record issued
//!    offline thereby gets a trusted "received no later than" instant.

use std::io::Write;
use std::path::Path;

use chrono::{DateTime, Utc};
use ed25519_dalek::{Signer, SigningKey};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sync_core::records::seal::{Canon, verify_signature};

/// File of the server's signing key in the data directory.
pub const SIGNING_KEY_FILE: &str = "server-signing.key";

/// Prefix of the canonical receipt bytes.
pub const RECEIPT_DOMAIN: &[u8] = b"taxi-fiscal/receipt/v1\n";

/// A device clock further than this from the server's when it sent the issuing batch is
/// flagged on the office page. Five minutes: phones set their clock from the network to within
/// seconds, so minutes of gap mean a clock set by hand or a device long offline with a drifting
/// clock, which the office should weigh before trusting the device's times.
pub const MAX_PLAUSIBLE_CLOCK_OFFSET: chrono::Duration = chrono::Duration::minutes(5);

/// The server's Ed25519 key. `Debug` shows only the public key.
pub struct ServerKey(SigningKey);

impl std::fmt::Debug for ServerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerKey")
            .field("public_key", &self.public_key_hex())
            .finish_non_exhaustive()
    }
}

/// Why the key file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("chave de assinatura do servidor {path}: {reason}")]
    File { path: String, reason: String },
}

impl ServerKey {
    /// Loads the key at `path`, or creates it (mode 0600) when the file does not exist.
    pub fn load_or_create(path: &Path) -> Result<Self, KeyFileError> {
        let err = |reason: String| KeyFileError::File {
            path: path.display().to_string(),
            reason,
        };
        match std::fs::read(path) {
            Ok(bytes) => {
                let secret: [u8; 32] = bytes.try_into().map_err(|b: Vec<u8>| {
                    err(format!("o arquivo tem {} bytes, esperados 32", b.len()))
                })?;
                Ok(Self(SigningKey::from_bytes(&secret)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut secret = [0u8; 32];
                getrandom::fill(&mut secret).map_err(|e| err(e.to_string()))?;
                let mut options = std::fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    options.mode(0o600);
                }
                let mut file = options.open(path).map_err(|e| err(e.to_string()))?;
                file.write_all(&secret)
                    .and_then(|()| file.sync_all())
                    .map_err(|e| err(e.to_string()))?;
                Ok(Self(SigningKey::from_bytes(&secret)))
            }
            Err(e) => Err(err(e.to_string())),
        }
    }

    /// A key that lives only in memory (tests, the demo's scratch stores).
    pub fn ephemeral() -> Result<Self, KeyFileError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| KeyFileError::File {
            path: String::from("(memória)"),
            reason: e.to_string(),
        })?;
        Ok(Self(SigningKey::from_bytes(&secret)))
    }

    pub fn public_key(&self) -> [u8; 32] {
        self.0.verifying_key().to_bytes()
    }

    pub fn public_key_hex(&self) -> String {
        hex::encode(self.public_key())
    }

    fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

/// The server's receipt of a device-sealed record (one row of `record_receipts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Receipt {
    pub record_id: String,
    /// The auto's verification code (derived from the device signature), canonical form.
    pub verification_code: String,
    /// The registered device id that sent the issuing batch.
    pub device_id: String,
    /// Hex of the device's public key.
    pub device_public_key: String,
    /// Hex of the device's signature over the evidence.
    pub device_signature: String,
    pub evidence_sha256: String,
    /// When the device says it issued the record (its clock).
    pub issued_at: DateTime<Utc>,
    /// Server clock: the record was received no later than this.
    pub received_at: DateTime<Utc>,
    /// Server clock minus device clock when the batch was sent, ms (`None`: not sent).
    pub device_clock_offset_ms: Option<i64>,
    /// Hex of the server's public key.
    pub server_public_key: String,
    /// Hex of the server's signature over `canonical()`.
    pub server_signature: String,
    /// SHA-256 (hex) of `canonical()`: the payload of the audit row `audit_seq`.
    pub receipt_sha256: String,
    pub audit_seq: u64,
}

impl Receipt {
    /// The bytes the server signs: every field but the signature, the digest and the audit
    /// seq (the audit row carries the digest, so it cannot be inside it).
    pub fn canonical(&self) -> Vec<u8> {
        let mut c = Canon::new(RECEIPT_DOMAIN);
        c.str("record_id", &self.record_id)
            .str("verification_code", &self.verification_code)
            .str("device_id", &self.device_id)
            .str("device_public_key", &self.device_public_key)
            .str("device_signature", &self.device_signature)
            .str("evidence_sha256", &self.evidence_sha256)
            .time("issued_at", self.issued_at)
            .time("received_at", self.received_at);
        if let Some(ms) = self.device_clock_offset_ms {
            c.i64("device_clock_offset_ms", ms);
        }
        c.str("server_public_key", &self.server_public_key);
        c.into_bytes()
    }

    /// Fills `server_public_key`, `server_signature` and `receipt_sha256`.
    pub fn sign(&mut self, key: &ServerKey) {
        self.server_public_key = key.public_key_hex();
        let bytes = self.canonical();
        self.receipt_sha256 = hex::encode(Sha256::digest(&bytes));
        self.server_signature = hex::encode(key.sign(&bytes));
    }

    /// Whether `server_signature` is the signature of `public_key` over the canonical bytes.
    pub fn verify(&self, public_key: &[u8; 32]) -> bool {
        let Ok(sig) = hex::decode(&self.server_signature) else {
            return false;
        };
        let Ok(sig) = <[u8; 64]>::try_from(sig) else {
            return false;
        };
        hex::encode(public_key) == self.server_public_key
            && verify_signature(public_key, &self.canonical(), &sig)
    }

    /// Whether the device clock was implausibly far from the server's, or the issue instant
    /// falls after the receipt (a device clock ahead).
    pub fn clock_implausible(&self) -> bool {
        let off = self.device_clock_offset_ms.is_some_and(|ms| {
            ms.unsigned_abs() > MAX_PLAUSIBLE_CLOCK_OFFSET.num_milliseconds().unsigned_abs()
        });
        off || self.issued_at > self.received_at
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn receipt(offset: Option<i64>, issued_after: bool) -> Receipt {
        let received: DateTime<Utc> = "2026-11-30T15:00:00Z".parse().unwrap();
        let issued = if issued_after {
            received + chrono::Duration::seconds(1)
        } else {
            received - chrono::Duration::hours(3)
        };
        Receipt {
            record_id: "r".into(),
            verification_code: "C".into(),
            device_id: "d".into(),
            device_public_key: "k".into(),
            device_signature: "s".into(),
            evidence_sha256: "e".into(),
            issued_at: issued,
            received_at: received,
            device_clock_offset_ms: offset,
            server_public_key: String::new(),
            server_signature: String::new(),
            receipt_sha256: String::new(),
            audit_seq: 1,
        }
    }

    #[test]
    fn a_signed_receipt_verifies_and_any_changed_field_does_not() {
        let key = ServerKey::ephemeral().unwrap();
        let mut r = receipt(Some(1_000), false);
        r.sign(&key);
        assert!(r.verify(&key.public_key()));
        let mut moved = r.clone();
        moved.received_at += chrono::Duration::seconds(1);
        assert!(!moved.verify(&key.public_key()));
        let other = ServerKey::ephemeral().unwrap();
        assert!(!r.verify(&other.public_key()));
        assert!(!format!("{key:?}").contains(&hex::encode(key.0.to_bytes())));
    }

    #[test]
    fn the_clock_gap_is_flagged_just_past_the_limit_and_for_an_issue_after_receipt() {
        let limit = MAX_PLAUSIBLE_CLOCK_OFFSET.num_milliseconds();
        assert!(!receipt(Some(limit), false).clock_implausible());
        assert!(!receipt(Some(-limit), false).clock_implausible());
        assert!(receipt(Some(limit + 1), false).clock_implausible());
        assert!(receipt(Some(-limit - 1), false).clock_implausible());
        assert!(!receipt(None, false).clock_implausible());
        assert!(receipt(None, true).clock_implausible());
    }

    #[test]
    fn the_key_file_is_created_private_once_and_loaded_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(SIGNING_KEY_FILE);
        let a = ServerKey::load_or_create(&path).unwrap();
        let b = ServerKey::load_or_create(&path).unwrap();
        assert_eq!(a.public_key(), b.public_key());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, [1u8; 31]).unwrap();
        let e = ServerKey::load_or_create(&path).unwrap_err().to_string();
        assert!(e.contains("31 bytes"), "{e}");
    }
}
