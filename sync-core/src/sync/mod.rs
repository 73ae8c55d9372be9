//! The sync protocol between devices and the server, sans-IO: requests, responses, documents
//! and store contents in; requests, responses and writes (effects) out. No sockets, no clock
//! (instants are passed in); the only threads are the scoped ones on which the server decodes
//! and vets a large request's records. The device (`DeviceSync` over the device `Store`) and the
//! server (`ServerSync` over the server's database, reads and writes through `ServerSyncStore`)
//! run the two halves; HTTP is the caller's.
//!
//! # One exchange
//!
//! ```text
//! device                                                   server
//!   build_request(store) ──── POST /v1/sync: SyncRequest ────▶ handle(store, sender, request)
//!     cursor                      new_records: whole docs        per record: decode, vet each
//!     new_records (never acked)   messages: Automerge sync        change, store the accepted
//!     messages (heads moved)      messages                        ones, refuse the rest
//!                                                                 + records changed since
//!                                                                   cursor that it may see
//!   apply_response(store) ◀──────── SyncResponse ──────────── effects persisted, then sent
//!     one transaction:            cursor, accepted (heads),
//!     acks → shared heads         messages, new_records,
//!     merge, insert, reset        rejections, more
//!     quarantine, cursor
//! ```
//!
//! The request may carry the device's clock (`SyncRequest::device_clock`, stamped by the HTTP
//! client): the server keeps its offset with the receipt of each record the exchange issues.
//!
//! Keep exchanging while `SyncReport::again` (the server said `more`, or something sent was
//! not acknowledged). A device in sync sends only its cursor: one round trip of a few hundred
//! bytes.
//!
//! # Round trips
//!
//! - **New record**: its whole `save()` goes in `new_records`; the server vets and stores it and
//!   answers with an `Ack` of its heads. One round trip, and the document is sent once.
//! - **Changed record**: the device knows the heads the server acknowledged last, so it
//!   generates the Automerge sync message as if the server had just told it those heads: the
//!   first message carries the changes. The server applies them and replies, in the same
//!   response, with the changes the device lacks (computed from the heads in the device's
//!   message, which the server then has). One round trip.
//! - **Changed on the server only** (the office appended an event; the officer's other device
//!   added a witness): the device sends nothing for the record; the server finds it among the
//!   records changed after the device's `cursor` and sends the changes since the heads it last
//!   confirmed the device has, or the whole document if the device never had it. One round trip.
//!
//! # Cursor
//!
//! The server numbers every stored change of a record with a global, increasing sequence
//! number. A response's `cursor` is the number up to which the device is current; the device
//! stores it in the same transaction as the response's contents and sends it back. So it is
//! also an acknowledgement: a response whose cursor the device sends back was applied, and
//! what it carried is confirmed on the server (`PeerState`); a lost response is sent again.
//!
//! # Vetting, rejection, reset
//!
//! The server applies a device's changes to a copy of its record one at a time and judges
//! each (module `vetting`): the actor must be the authenticated device's, the role policy of
//! `records::vet` must hold (sealed evidence, who creates and completes what, office-only
//! events), a coordinator stays within their stand, events must be ones the sender's own
//! copy allowed, and the change that issues a record must carry the author device's seal,
//! verified with a key that device registered (`Sender::device_keys`, `records::seal`). The changes before the first refused one are stored; the refused one and
//! everything after it are not applied, go to the server's quarantine, and come back as a
//! `Rejection` (code, Portuguese message, change hashes, the server's document). The device
//! then resets the record to the server's document, keeps the refused local changes in its own
//! quarantine as evidence, and shows a `SyncIssue`. A refused *creation* (no server document)
//! removes the record from the device's list, kept in quarantine too.
//!
//! # Retries
//!
//! Everything is idempotent: changes the server already has are not new, so a replayed request
//! stores nothing and writes no audit row; a lost response leaves the device's state and cursor
//! where they were, so the next request repeats the same exchange and converges.

mod device;
mod observed;
mod server;
mod vetting;
mod wire;

pub use device::{
    DeviceBatch, DeviceSync, DeviceSyncStore, DeviceWrite, Prepared, SERVER_PEER, SyncIssue,
    SyncReport, heads_bytes, hex_heads, meta_of,
};
pub use observed::{
    DETAIL_ADDRESS, DETAIL_DOCUMENT, DETAIL_PHONE, ObservedIdentity, ObservedPersonsUpload,
    UploadRefused, check_upload, observed_ids,
};
pub use server::{
    Changed, EditOutcome, PeerState, QuarantineEntry, RegisteredKey, Sender, SentHeads,
    ServerEffect, ServerRecord, ServerSync, ServerSyncStore, StoredChange, may_see,
};
pub use wire::{
    Ack, Bytes, DocMessage, NewRecord, PROTOCOL_VERSION, Rejection, RejectionCode, SyncRequest,
    SyncResponse, heads_from_hex, heads_to_hex,
};

use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::records::RecordError;

/// The UUID a registered device id stands for in the protocol: its Automerge actor
/// (`records::actor_for_device`) and `SyncRequest::device_id`. Device ids are chosen by the
/// administrator when registering a device (e.g. `tablet-fiscal-01`); a UUID string maps to
/// itself, any other id to a name-based UUID (version 8: the first 16 bytes of
/// SHA-256(`taxi-fiscal-device:` + id)), so the app and the server derive the same actor from
/// the same id without storing anything.
pub fn device_uuid(device_id: &str) -> Uuid {
    if let Ok(u) = Uuid::parse_str(device_id) {
        return u;
    }
    let digest = Sha256::digest(format!("taxi-fiscal-device:{device_id}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

/// Why an exchange failed as a whole (as opposed to a record being refused, which is a
/// `Rejection` inside a successful response). Nothing was applied on either side.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(
        "versão {got} do protocolo de sincronização não suportada (o servidor usa a {supported}): \
         atualize o aplicativo"
    )]
    Protocol { got: u32, supported: u32 },
    #[error("o pedido diz vir do aparelho {claimed}, mas a sessão é do aparelho {authenticated}")]
    DeviceMismatch { claimed: Uuid, authenticated: Uuid },
    #[error("o registro {0} aparece mais de uma vez no mesmo pedido")]
    DuplicateRecord(Uuid),
    #[error("registro {0} não encontrado")]
    UnknownRecord(Uuid),
    #[error(
        "o cadastro não está disponível para conferir o ponto do coordenador; tente mais tarde"
    )]
    RegistryUnavailable,
    #[error("a cópia guardada do registro {record_id} está ilegível: {source}")]
    Stored {
        record_id: Uuid,
        #[source]
        source: RecordError,
    },
    #[error("registro {record_id}: {source}")]
    Record {
        record_id: String,
        #[source]
        source: RecordError,
    },
    #[error("erro do armazenamento: {0}")]
    Store(#[source] Box<dyn std::error::Error + Send + Sync>),
}

pub(crate) fn boxed<E: std::error::Error + Send + Sync + 'static>(e: E) -> SyncError {
    SyncError::Store(Box::new(e))
}
