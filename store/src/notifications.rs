//! Notifications of penalty and verification codes, backend-independent: what the store keeps
//! and how a notification is sealed.
//!
//! Sealing ([`seal`]) happens inside the store's write transaction, because the number and the
//! audit row are only known there: the store numbers the notification (`NP-<year>-<seq>`, per
//! local year), computes [`content_digest`] (the content without its verification code),
//! appends the audit row whose payload hash is that digest, and derives the code from the
//! digest and the audit row's hash ([`code_of`]). The paper is thus bound to the audit chain:
//! a notification whose text was altered, or that no audit row records, has no code the
//! server knows.

use chrono::{DateTime, Utc};
use documents::{NotificationContent, VerificationCode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Domain of [`VerificationCode::derive`] for notifications.
pub const NOTIFICATION_CODE_DOMAIN: &[u8] = b"taxi-fiscal/notification/v1";

/// A notification to store: the content with a placeholder number and code, which the store
/// replaces in [`seal`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewNotification {
    pub record_id: String,
    /// `PersonRef::encode()` of the addressee (`registry:P02`).
    pub person: String,
    /// The event of the decision notified.
    pub decision_event_id: String,
    pub content: NotificationContent,
}

/// A stored notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NotificationRow {
    pub id: String,
    /// `NP-2026-000012`.
    pub number: String,
    pub record_id: String,
    pub person: String,
    pub decision_event_id: String,
    /// The `documents::NotificationContent` as printed.
    #[schemars(with = "serde_json::Value")]
    pub content: NotificationContent,
    /// SHA-256 (hex) of the content without its verification code.
    pub content_sha256: String,
    /// As printed, `XXXX-XXXX-XXXX-XXXX`.
    #[schemars(with = "String")]
    pub code: VerificationCode,
    pub created_at: DateTime<Utc>,
    /// User id of the clerk.
    pub created_by: String,
    /// The audit row that records it.
    pub audit_seq: u64,
}

/// What a verification code names.
#[derive(Debug, Clone, PartialEq)]
pub enum CodeTarget {
    /// A printed auto (its device-signed evidence reached the server).
    Auto {
        record_id: String,
    },
    Notification(Box<NotificationRow>),
}

/// The number of the `seq`-th notification of `year`.
pub fn number_of(year: i32, seq: u64) -> String {
    format!("NP-{year}-{seq:06}")
}

/// SHA-256 of the content as JSON with the verification code left out (the code is derived
/// from this digest, so it cannot be part of it). serde_json writes struct fields in
/// declaration order, so the same content always gives the same digest.
pub fn content_digest(content: &NotificationContent) -> [u8; 32] {
    let mut value = serde_json::to_value(content).unwrap_or(serde_json::Value::Null);
    if let Some(v) = value
        .get_mut("verification")
        .and_then(serde_json::Value::as_object_mut)
    {
        v.remove("code");
    }
    Sha256::digest(value.to_string().as_bytes()).into()
}

/// The code of a notification: its content digest followed by the hash of the audit row that
/// recorded it (hex, as stored).
pub fn code_of(digest: &[u8; 32], audit_hash: &str) -> VerificationCode {
    let mut bytes = digest.to_vec();
    bytes.extend_from_slice(audit_hash.as_bytes());
    VerificationCode::derive(NOTIFICATION_CODE_DOMAIN, &bytes)
}

/// A placeholder code for a content not yet sealed.
pub fn unsealed_code() -> VerificationCode {
    VerificationCode::derive(b"taxi-fiscal/unsealed", b"")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_padded_per_year() {
        assert_eq!(number_of(2026, 12), "NP-2026-000012");
        assert_eq!(number_of(2027, 1), "NP-2027-000001");
    }

    #[test]
    fn the_code_binds_the_content_and_the_audit_row() {
        let d1 = Sha256::digest(b"a").into();
        let d2 = Sha256::digest(b"b").into();
        let h = "ab".repeat(32);
        let c = code_of(&d1, &h);
        assert_eq!(c, code_of(&d1, &h));
        assert_ne!(c, code_of(&d2, &h));
        assert_ne!(c, code_of(&d1, &"cd".repeat(32)));
    }
}
