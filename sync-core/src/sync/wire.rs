//! What travels in `POST /v1/sync`: one JSON request from the device, one JSON response from
//! the server (schemas `sync-request` and `sync-response`).
//!
//! Automerge bytes (whole saved documents, encoded `automerge::sync::Message`s) are base64
//! strings, standard alphabet with padding. The body travels with `Content-Encoding: zstd` (or
//! gzip), which takes back most of base64's third: the wire cost of a new record stays close to
//! its own `save()` size. Empty lists are left out of the JSON, so a device already in sync sends
//! `{"protocol":1,"device_id":"…","cursor":N}` and nothing else.

use std::borrow::Cow;
use std::fmt;

use automerge::ChangeHash;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// Version of this wire format. The server refuses a request of another version as a whole
/// (nothing applied), so an old app is told to update instead of being half-understood.
pub const PROTOCOL_VERSION: u32 = 1;

/// Opaque bytes, base64 in JSON.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl Bytes {
    pub fn as_slice(&self) -> &[u8] {
        &self.0
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Self {
        Self(v)
    }
}

impl fmt::Debug for Bytes {
    // A document in a log line as a size, not a wall of base64.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} B)", self.0.len())
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = Cow::<'de, str>::deserialize(d)?;
        STANDARD
            .decode(s.as_bytes())
            .map(Bytes)
            .map_err(|e| serde::de::Error::custom(format!("base64 inválido: {e}")))
    }
}

impl JsonSchema for Bytes {
    fn schema_name() -> Cow<'static, str> {
        "Base64".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "contentEncoding": "base64",
            "description": "Automerge bytes, base64 (standard alphabet, padded)."
        })
    }
}

/// A record the receiver has never had: the whole `save()` of the document, so that a new
/// record costs one round trip (an Automerge sync exchange would need two: heads first, then
/// changes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NewRecord {
    #[schemars(with = "String")]
    pub record_id: Uuid,
    pub doc: Bytes,
}

/// One record's Automerge sync message (`automerge::sync::Message::encode`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DocMessage {
    #[schemars(with = "String")]
    pub record_id: Uuid,
    pub message: Bytes,
}

/// The device's half of one exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SyncRequest {
    /// `PROTOCOL_VERSION` of the sender.
    pub protocol: u32,
    /// Must be the authenticated device.
    #[schemars(with = "String")]
    pub device_id: Uuid,
    /// The server change sequence this device has seen: the `cursor` of the last response it
    /// applied (0 at first). It also tells the server which of its replies arrived.
    pub cursor: u64,
    /// Records the server has never acknowledged, whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_records: Vec<NewRecord>,
    /// Records changed here since the server last acknowledged them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<DocMessage>,
    /// The device's clock when it built the request: the server keeps its offset from the
    /// server's clock with the receipt of each record issued, and flags an implausible gap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_clock: Option<chrono::DateTime<chrono::Utc>>,
}

/// The server accepted (or already had) everything the device sent for a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ack {
    #[schemars(with = "String")]
    pub record_id: Uuid,
    /// The server's heads for the record after merging (hex change hashes, sorted).
    pub heads: Vec<String>,
}

/// Why the server refused changes; stable codes the app can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RejectionCode {
    /// Bytes that do not decode (garbage, truncated, not a record, another record's id). The
    /// device keeps its copy and sends it whole on the next sync: nothing of it was judged.
    Malformed,
    /// A change written under an actor that is not the authenticated device's.
    ForeignActor,
    /// A change to sealed evidence, an immutable field, or a removal from an append-only list.
    SealedField,
    /// The sender's role may not make this change (create this kind, write this event, edit
    /// another author's draft, add evidence to another's record, number it).
    RoleForbidden,
    /// The record, its events or witnesses name another user, role or device than the sender.
    AuthorMismatch,
    /// A coordinator writing about a permit or record of another stand (art. 17).
    OutsideStand,
    /// An event its own author's copy of the record did not allow, or one that does not decode.
    InvalidEvent,
    /// A record this device may not see (another officer's): nothing of it is disclosed.
    NotVisible,
    /// The record would exceed a limit of `crate::limits` (its bytes, a text, a list).
    TooLarge,
    /// Evidence that fails the checks the device makes when recording (plate, position,
    /// time of the occurrence, verdict, permit, references, hashes).
    InvalidField,
    /// An auto number outside every block the server leased to the sending device.
    NumberNotLeased,
    /// An auto number another record already holds.
    NumberTaken,
    /// A record issued without a valid seal of the author's device: no seal from a device that
    /// registered a key, a signature that does not verify over the evidence, a key not
    /// registered to the sending device, a seal by another device.
    SealInvalid,
}

impl RejectionCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::ForeignActor => "foreign_actor",
            Self::SealedField => "sealed_field",
            Self::RoleForbidden => "role_forbidden",
            Self::AuthorMismatch => "author_mismatch",
            Self::OutsideStand => "outside_stand",
            Self::InvalidEvent => "invalid_event",
            Self::NotVisible => "not_visible",
            Self::TooLarge => "too_large",
            Self::InvalidField => "invalid_field",
            Self::NumberNotLeased => "number_not_leased",
            Self::NumberTaken => "number_taken",
            Self::SealInvalid => "seal_invalid",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Malformed,
            Self::ForeignActor,
            Self::SealedField,
            Self::RoleForbidden,
            Self::AuthorMismatch,
            Self::OutsideStand,
            Self::InvalidEvent,
            Self::NotVisible,
            Self::TooLarge,
            Self::InvalidField,
            Self::NumberNotLeased,
            Self::NumberTaken,
            Self::SealInvalid,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// Changes of one record that the server refused. They were not applied and are kept in the
/// server's quarantine. The device drops them too (into its own quarantine) and continues
/// from `server_doc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Rejection {
    #[schemars(with = "String")]
    pub record_id: Uuid,
    /// Hex hashes of the refused changes (the first offending one and every change after it
    /// that the device sent); empty when the bytes did not even decode.
    pub change_hashes: Vec<String>,
    pub code: RejectionCode,
    /// Why, in Portuguese, for the officer.
    pub message: String,
    /// The server's whole document to reset to; absent when the server has no such record
    /// (a refused creation) or the device may not see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_doc: Option<Bytes>,
}

/// The server's half of one exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SyncResponse {
    /// Send this back as the next request's `cursor`.
    pub cursor: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<Ack>,
    /// Changes the device lacks: replies to its messages and records changed on the server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<DocMessage>,
    /// Records this device should have and has never had (e.g. written on the same officer's
    /// other device).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub new_records: Vec<NewRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejections: Vec<Rejection>,
    /// The server held changes back (page limit): ask again.
    #[serde(default)]
    pub more: bool,
}

/// Change hashes as they travel and are stored: lower-case hex.
pub fn heads_to_hex(heads: &[ChangeHash]) -> Vec<String> {
    heads.iter().map(|h| h.to_string()).collect()
}

/// Inverse of `heads_to_hex`; `None` if any entry is not a change hash.
pub fn heads_from_hex(hex: &[String]) -> Option<Vec<ChangeHash>> {
    hex.iter().map(|h| h.parse().ok()).collect()
}

/// Heads in a canonical order, for comparison (Automerge returns them sorted, but a set read
/// back from storage or the wire may not be).
pub(crate) fn sorted(mut heads: Vec<ChangeHash>) -> Vec<ChangeHash> {
    heads.sort();
    heads.dedup();
    heads
}
