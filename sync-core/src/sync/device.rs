//! The device's half of the protocol: build one request from the store, apply one response to
//! it. No I/O of its own: the store is read and written through `DeviceSyncStore` (the device
//! `Store` implements it), the caller carries the bytes over HTTP and passes the time in.
//!
//! Per record and peer the store keeps an Automerge `sync::State` whose `shared_heads` are the
//! heads the server last acknowledged (absent: the server never acknowledged the record).
//!
//! `DeviceSync::build_request`: every record the store lists as a candidate (written since it
//! was last in sync) goes out as
//! - a `NewRecord` with its whole `save()` when the server never acknowledged it (one round
//!   trip for a new record), or when what the server acknowledged is not in the local copy;
//! - a `DocMessage` with the changes since the acknowledged heads when its heads differ from
//!   them (Automerge sync message, generated as if the server's heads had just been received,
//!   so that the changes go in the first message);
//! - nothing when its heads are the acknowledged ones.
//!
//! `DeviceSync::apply_response`, in ONE store transaction (`DeviceSyncStore::apply_sync`):
//! acknowledgements become the new shared heads; incoming messages and documents are merged
//! (new records inserted); a rejection resets the record to the server's document, with the
//! local changes the server lacks moved to the local quarantine as evidence, and becomes a
//! `SyncIssue` for the app (a refused creation removes the record, quarantined whole; unreadable
//! bytes keep it, to be sent whole next time); the cursor is stored. A record sent and neither
//! acknowledged nor refused (the server lacked changes it depended on) forgets its state and is
//! sent whole in the next round. `SyncReport::again` says whether another round is needed.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};

use automerge::sync::{Have, Message, State, SyncDoc};
use automerge::{ChangeHash, ReadDoc};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::wire::{
    Bytes, DocMessage, NewRecord, PROTOCOL_VERSION, RejectionCode, SyncRequest, SyncResponse,
    heads_from_hex, heads_to_hex, sorted,
};
use super::{SyncError, boxed};
use crate::limits::MAX_RECORD_BYTES;
use crate::records::{RecordDoc, RecordMeta};

/// Name of the central server as a sync peer in the store.
pub const SERVER_PEER: &str = "server";

/// What the device store offers the protocol.
pub trait DeviceSyncStore {
    type Error: std::error::Error + Send + Sync + 'static;
    /// The cursor of the last response applied from `peer` (0 if none).
    fn sync_cursor(&self, peer: &str) -> Result<u64, Self::Error>;
    /// Ids of records that may have something to send to `peer`: never in sync with it, or
    /// written locally since they last were.
    fn sync_candidates(&self, peer: &str) -> Result<Vec<String>, Self::Error>;
    /// A record's bytes (full save and chunks, in order), `None` if unknown.
    fn record_parts(&self, record_id: &str) -> Result<Option<Vec<Vec<u8>>>, Self::Error>;
    /// The persisted `sync::State` of a record with `peer`.
    fn record_sync_state(
        &self,
        record_id: &str,
        peer: &str,
    ) -> Result<Option<Vec<u8>>, Self::Error>;
    /// Applies every write of `batch` and stores its cursor, in one transaction.
    fn apply_sync(&mut self, peer: &str, batch: &DeviceBatch) -> Result<(), Self::Error>;
    /// The record's heads as stored with its row (`heads_bytes` of its sorted heads), if the
    /// store keeps them and the record exists; `None` makes the protocol load the document to
    /// learn them (the default, for stores that keep no such column).
    fn record_heads(&self, _record_id: &str) -> Result<Option<Vec<u8>>, Self::Error> {
        Ok(None)
    }
}

/// Everything one response changes on the device.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceBatch {
    /// The response's cursor, stored with the writes.
    pub cursor: u64,
    pub at: DateTime<Utc>,
    /// In order.
    pub writes: Vec<DeviceWrite>,
}

/// One write of a `DeviceBatch`.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceWrite {
    /// Changes received for a record the device has: append `chunk` to its log.
    Append {
        record_id: String,
        kind: String,
        chunk: Vec<u8>,
        meta: RecordMeta,
    },
    /// A record new to this device.
    Insert {
        record_id: String,
        kind: String,
        doc: Vec<u8>,
        meta: RecordMeta,
    },
    /// The record becomes `doc` (the server's version), its log dropped.
    Replace {
        record_id: String,
        kind: String,
        doc: Vec<u8>,
        meta: RecordMeta,
    },
    /// The record goes (its creation was refused); its bytes are in a `Quarantine` write.
    Remove { record_id: String },
    /// Local bytes the server refused, kept as evidence.
    Quarantine {
        record_id: String,
        code: RejectionCode,
        message: String,
        change_hashes: Vec<String>,
        bytes: Vec<u8>,
    },
    /// The record's sync state with the peer. `state: None` forgets it (the record is then sent
    /// whole); `in_sync` marks the record as having nothing to send as of this write.
    State {
        record_id: String,
        state: Option<Vec<u8>>,
        in_sync: bool,
    },
}

/// Something the officer should be told after a sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncIssue {
    pub record_id: String,
    pub code: RejectionCode,
    /// Portuguese, ready to show.
    pub message: String,
}

/// A request and what could not be put in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    pub request: SyncRequest,
    /// Records that could not be read or sent (e.g. a local id that is not a UUID).
    pub issues: Vec<SyncIssue>,
}

/// What applying a response did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncReport {
    /// Rejections and other problems, for the officer.
    pub issues: Vec<SyncIssue>,
    /// Records whose local copy changed: a screen showing one must reload it (and a live
    /// `RecordDoc` of it must be dropped and reloaded, see `RecordDoc`).
    pub changed: Vec<String>,
    pub acked: usize,
    pub received: usize,
    pub rejected: usize,
    /// Another round is needed: the server has more, or something sent was not acknowledged.
    pub again: bool,
}

/// The device side of the protocol for one device and one peer.
#[derive(Debug, Clone)]
pub struct DeviceSync {
    device_id: Uuid,
    peer: String,
}

/// One record being updated while a response is applied.
struct Working {
    doc: Option<RecordDoc>,
    /// Not on the device before this response.
    inserted: bool,
    /// Replaced by the server's document.
    replaced: bool,
    removed: bool,
    /// Whether a record left out of sync calls for another round now (not after unreadable
    /// bytes: that waits for the next sync, so a broken copy cannot loop).
    retry: bool,
    /// Heads the server has (`None`: leave the state; `Some(empty)`: forget it).
    shared: Option<Vec<ChangeHash>>,
    quarantine: Vec<DeviceWrite>,
}

impl DeviceSync {
    pub fn new(device_id: Uuid) -> Self {
        Self::with_peer(device_id, SERVER_PEER)
    }

    pub fn with_peer(device_id: Uuid, peer: impl Into<String>) -> Self {
        Self {
            device_id,
            peer: peer.into(),
        }
    }

    pub fn device_id(&self) -> Uuid {
        self.device_id
    }

    /// One request with every record that has something to send.
    pub fn build_request<S: DeviceSyncStore>(&self, store: &S) -> Result<Prepared, SyncError> {
        let cursor = store.sync_cursor(&self.peer).map_err(boxed)?;
        let mut request = SyncRequest {
            protocol: PROTOCOL_VERSION,
            device_id: self.device_id,
            cursor,
            new_records: Vec::new(),
            messages: Vec::new(),
            // Sans-IO: the caller stamps its clock (the HTTP client does, `client::records`).
            device_clock: None,
        };
        let mut issues = Vec::new();
        for id in store.sync_candidates(&self.peer).map_err(boxed)? {
            let Ok(record_id) = Uuid::parse_str(&id) else {
                issues.push(SyncIssue {
                    record_id: id.clone(),
                    code: RejectionCode::Malformed,
                    message: format!(
                        "o registro {id} tem identificador inválido e não pode ser enviado"
                    ),
                });
                continue;
            };
            let Some(mut parts) = store.record_parts(&id).map_err(boxed)? else {
                continue;
            };
            let state = store
                .record_sync_state(&id, &self.peer)
                .map_err(boxed)?
                .and_then(|b| State::decode(&b).ok());
            // A record the server never acknowledged and that is stored as one whole save (a
            // document chunk, as `FieldRecords` writes a new record) goes as stored: loading
            // and saving it again would produce the same document (sync bench: that round trip was most of the time spent preparing a backlog of
            // new records). Bytes the server cannot read come back as `malformed`, which keeps
            // the record here.
            if parts.len() == 1
                && is_document_chunk(&parts[0])
                && state.as_ref().is_none_or(|s| s.shared_heads.is_empty())
            {
                request.new_records.push(NewRecord {
                    record_id,
                    doc: Bytes(parts.remove(0)),
                });
                continue;
            }
            let mut doc = match RecordDoc::load(&parts.concat()) {
                Ok(d) => d,
                Err(e) => {
                    issues.push(SyncIssue {
                        record_id: id.clone(),
                        code: RejectionCode::Malformed,
                        message: format!(
                            "o registro {id} está ilegível neste aparelho e não foi enviado: {e}"
                        ),
                    });
                    continue;
                }
            };
            match outgoing(&mut doc, state) {
                Outgoing::Nothing => {}
                Outgoing::Whole(doc) => request.new_records.push(NewRecord {
                    record_id,
                    doc: Bytes(doc),
                }),
                Outgoing::Message(message) => request.messages.push(DocMessage {
                    record_id,
                    message: Bytes(message),
                }),
            }
        }
        Ok(Prepared { request, issues })
    }

    /// Applies the server's `response` to `request` (the request it answers), in one store
    /// transaction.
    pub fn apply_response<S: DeviceSyncStore>(
        &self,
        store: &mut S,
        request: &SyncRequest,
        response: &SyncResponse,
        now: DateTime<Utc>,
    ) -> Result<SyncReport, SyncError> {
        let mut report = SyncReport::default();
        let mut work: BTreeMap<String, Working> = BTreeMap::new();
        let sent: BTreeSet<Uuid> = request
            .new_records
            .iter()
            .map(|r| r.record_id)
            .chain(request.messages.iter().map(|m| m.record_id))
            .collect();
        let mut answered: BTreeSet<Uuid> = BTreeSet::new();

        for rejection in &response.rejections {
            answered.insert(rejection.record_id);
            report.rejected += 1;
            let id = rejection.record_id.to_string();
            let w = working(store, &mut work, &id)?;
            let label = w.doc.as_ref().map_or_else(|| short_id(&id), record_label);
            if rejection.code == RejectionCode::Malformed {
                // Nothing was judged: keep the record and send it whole next time. Not another
                // round now, so that a device whose copy the server cannot read does not loop.
                w.shared = Some(Vec::new());
                w.retry = false;
                report.issues.push(SyncIssue {
                    record_id: id.clone(),
                    code: rejection.code,
                    message: format!(
                        "O registro {label} chegou ilegível ao servidor ({}); ele continua neste \
                         aparelho e será reenviado inteiro na próxima sincronização.",
                        rejection.message
                    ),
                });
                continue;
            }
            let server = match &rejection.server_doc {
                Some(bytes) => match RecordDoc::load(bytes.as_slice()) {
                    Ok(d) => Some(d),
                    Err(e) => {
                        w.shared = Some(Vec::new());
                        w.retry = false;
                        report.issues.push(SyncIssue {
                            record_id: id.clone(),
                            code: RejectionCode::Malformed,
                            message: format!(
                                "O servidor recusou uma alteração no registro {label} ({}), mas \
                                 a versão do servidor chegou ilegível: {e}",
                                rejection.message
                            ),
                        });
                        continue;
                    }
                },
                None => None,
            };
            let local = w.doc.take();
            match server {
                Some(mut server) => {
                    let server_heads = sorted(server.heads());
                    if let Some(mut local) = local {
                        let (hashes, bytes) = changes_missing_from(&mut local, &mut server);
                        if !bytes.is_empty() {
                            w.quarantine.push(DeviceWrite::Quarantine {
                                record_id: id.clone(),
                                code: rejection.code,
                                message: rejection.message.clone(),
                                change_hashes: if rejection.change_hashes.is_empty() {
                                    hashes
                                } else {
                                    rejection.change_hashes.clone()
                                },
                                bytes,
                            });
                        }
                    } else {
                        w.inserted = true;
                    }
                    w.doc = Some(server);
                    w.replaced = !w.inserted;
                    w.shared = Some(server_heads);
                    report.issues.push(SyncIssue {
                        record_id: id.clone(),
                        code: rejection.code,
                        message: format!(
                            "A alteração no registro {label} foi recusada porque {}. O registro \
                             voltou à versão do servidor; a alteração recusada ficou guardada \
                             neste aparelho como prova.",
                            lower_first(&rejection.message)
                        ),
                    });
                }
                None => {
                    if let Some(mut local) = local {
                        w.quarantine.push(DeviceWrite::Quarantine {
                            record_id: id.clone(),
                            code: rejection.code,
                            message: rejection.message.clone(),
                            change_hashes: rejection.change_hashes.clone(),
                            bytes: local.save(),
                        });
                        w.removed = true;
                    }
                    let what = if rejection.code == RejectionCode::NotVisible {
                        "não pode ser sincronizado por este usuário"
                    } else {
                        "foi recusado pelo servidor"
                    };
                    report.issues.push(SyncIssue {
                        record_id: id.clone(),
                        code: rejection.code,
                        message: format!(
                            "O registro {label} {what} porque {}. Ele foi retirado da lista e \
                             guardado neste aparelho como prova.",
                            lower_first(&rejection.message)
                        ),
                    });
                }
            }
        }

        // Records the response only acknowledges (no message, document or rejection for them):
        // their new state needs only their heads, which the store keeps with the row, so they
        // are not loaded (sync bench: loading every acknowledged record was most of
        // the time spent applying the answer to a backlog).
        let touched: BTreeSet<Uuid> = response
            .rejections
            .iter()
            .map(|r| r.record_id)
            .chain(response.messages.iter().map(|m| m.record_id))
            .chain(response.new_records.iter().map(|r| r.record_id))
            .collect();
        let mut ack_writes: Vec<DeviceWrite> = Vec::new();
        for ack in &response.accepted {
            answered.insert(ack.record_id);
            report.acked += 1;
            let id = ack.record_id.to_string();
            if !touched.contains(&ack.record_id)
                && !work.contains_key(&id)
                && let Some(shared) = heads_from_hex(&ack.heads).map(sorted)
                && !shared.is_empty()
                && let Some(stored) = store.record_heads(&id).map_err(boxed)?
                && !stored.is_empty()
            {
                let in_sync = stored == heads_bytes(&shared);
                // Edited while the request was in flight: send it now.
                if !in_sync {
                    report.again = true;
                }
                let mut state = State::new();
                state.shared_heads = shared;
                ack_writes.push(DeviceWrite::State {
                    record_id: id,
                    state: Some(state.encode()),
                    in_sync,
                });
                continue;
            }
            let w = working(store, &mut work, &id)?;
            if w.doc.is_none() {
                continue;
            }
            w.shared = match heads_from_hex(&ack.heads) {
                Some(h) => Some(sorted(h)),
                None => Some(Vec::new()),
            };
        }

        for m in &response.messages {
            report.received += 1;
            let id = m.record_id.to_string();
            let w = working(store, &mut work, &id)?;
            // Bytes from the server are bytes from outside: a message that makes the document
            // library panic is one that does not apply (`receive` works on a copy).
            let applied = match w.doc.as_mut() {
                Some(doc) if m.message.len() <= MAX_RECORD_BYTES => crate::records::contain(|| {
                    Ok(Message::decode(m.message.as_slice())
                        .ok()
                        .and_then(|msg| receive(doc, msg)))
                })
                .ok()
                .flatten(),
                _ => None,
            };
            match applied {
                Some((doc, server_heads)) => {
                    w.doc = Some(doc);
                    // An ack of the same record carries the same heads; keep it if present.
                    if w.shared.is_none() {
                        w.shared = Some(server_heads);
                    }
                }
                None => {
                    // A message that does not apply (or a record gone meanwhile): forget the
                    // state, so the record goes whole next round and the server answers exactly.
                    w.shared = Some(Vec::new());
                    report.again = true;
                }
            }
        }

        for r in &response.new_records {
            report.received += 1;
            let id = r.record_id.to_string();
            let mut incoming = match RecordDoc::load(r.doc.as_slice()) {
                Ok(d) if d.id() == r.record_id => d,
                _ => {
                    report.issues.push(SyncIssue {
                        record_id: id.clone(),
                        code: RejectionCode::Malformed,
                        message: format!(
                            "O registro {} chegou ilegível do servidor e será pedido de novo.",
                            short_id(&id)
                        ),
                    });
                    continue;
                }
            };
            let w = working(store, &mut work, &id)?;
            let heads = sorted(incoming.heads());
            match w.doc.as_mut() {
                Some(local) => {
                    if local.merge(&mut incoming).is_err() {
                        continue;
                    }
                }
                None => {
                    w.doc = Some(incoming);
                    w.inserted = true;
                }
            }
            if w.shared.is_none() {
                w.shared = Some(heads);
            }
        }

        for id in sent.difference(&answered) {
            // Sent, neither acknowledged nor refused: the server lacked something the changes
            // depend on. Send it whole next round.
            let w = working(store, &mut work, &id.to_string())?;
            if w.doc.is_some() {
                w.shared = Some(Vec::new());
                report.again = true;
            }
        }

        let mut writes = ack_writes;
        for (id, w) in work {
            let changed = w.inserted || w.replaced || w.removed;
            writes.extend(w.quarantine);
            if w.removed {
                writes.push(DeviceWrite::Remove {
                    record_id: id.clone(),
                });
                report.changed.push(id);
                continue;
            }
            let Some(mut doc) = w.doc else { continue };
            let kind = doc.kind().as_str().to_owned();
            if w.inserted || w.replaced {
                let bytes = doc.save();
                let meta = meta_of(&mut doc, now)?;
                writes.push(if w.inserted {
                    DeviceWrite::Insert {
                        record_id: id.clone(),
                        kind,
                        doc: bytes,
                        meta,
                    }
                } else {
                    DeviceWrite::Replace {
                        record_id: id.clone(),
                        kind,
                        doc: bytes,
                        meta,
                    }
                });
            } else {
                let chunk = doc.save_incremental();
                if !chunk.is_empty() {
                    let meta = meta_of(&mut doc, now)?;
                    writes.push(DeviceWrite::Append {
                        record_id: id.clone(),
                        kind,
                        chunk,
                        meta,
                    });
                    report.changed.push(id.clone());
                }
            }
            if changed {
                report.changed.push(id.clone());
            }
            if let Some(shared) = w.shared {
                if shared.is_empty() {
                    writes.push(DeviceWrite::State {
                        record_id: id,
                        state: None,
                        in_sync: false,
                    });
                } else {
                    let in_sync = sorted(doc.heads()) == shared;
                    // Edited while the request was in flight: send it now.
                    if !in_sync && w.retry {
                        report.again = true;
                    }
                    let mut state = State::new();
                    state.shared_heads = shared;
                    writes.push(DeviceWrite::State {
                        record_id: id,
                        state: Some(state.encode()),
                        in_sync,
                    });
                }
            }
        }
        if response.more {
            report.again = true;
        }
        let batch = DeviceBatch {
            cursor: response.cursor,
            at: now,
            writes,
        };
        store.apply_sync(&self.peer, &batch).map_err(boxed)?;
        Ok(report)
    }
}

/// Whether `bytes` are one Automerge document chunk (what `save()` writes): magic, checksum,
/// then chunk type 0. Change chunks (incremental saves) are larger than a save of the same
/// changes, so they are not sent as they are.
fn is_document_chunk(bytes: &[u8]) -> bool {
    bytes.len() > 8 && bytes[..4] == [0x85, 0x6f, 0x4a, 0x83] && bytes[8] == 0
}

enum Outgoing {
    Nothing,
    Whole(Vec<u8>),
    Message(Vec<u8>),
}

/// What to send for one record, given its persisted state.
fn outgoing(doc: &mut RecordDoc, state: Option<State>) -> Outgoing {
    let shared = state.map(|s| sorted(s.shared_heads)).unwrap_or_default();
    if shared.is_empty() {
        return Outgoing::Whole(doc.save());
    }
    let heads = sorted(doc.heads());
    if heads == shared {
        return Outgoing::Nothing;
    }
    // What the server acknowledged must be here (it is, unless the store was restored from an
    // older copy): otherwise the changes to send cannot be computed from it.
    if !doc.automerge_mut().get_missing_deps(&shared).is_empty() {
        return Outgoing::Whole(doc.save());
    }
    // The server's heads are known (its last ack), so act as if its message had just arrived:
    // the first message then carries the changes, instead of only our heads.
    let mut s = State::new();
    s.shared_heads = shared.clone();
    s.their_heads = Some(shared.clone());
    s.their_have = Some(vec![Have {
        last_sync: shared,
        bloom: Default::default(),
    }]);
    s.their_need = Some(Vec::new());
    let msg = doc.automerge_mut().sync().generate_sync_message(&mut s);
    match msg {
        Some(msg) if !msg.changes.is_empty() => Outgoing::Message(msg.encode()),
        _ => Outgoing::Whole(doc.save()),
    }
}

/// Applies a server message on a copy; `None` if it does not apply cleanly (bad bytes, missing
/// dependencies, a result that is not this record). `doc` itself is only read (and cloned):
/// the caller runs this contained, and a panic leaves `doc` as it was.
fn receive(doc: &mut RecordDoc, msg: Message) -> Option<(RecordDoc, Vec<ChangeHash>)> {
    let server_heads = sorted(msg.heads.clone());
    let mut copy = doc.clone();
    copy.automerge_mut()
        .sync()
        .receive_sync_message(&mut State::new(), msg)
        .ok()?;
    if !copy.automerge_mut().get_missing_deps(&[]).is_empty()
        || !copy
            .automerge_mut()
            .get_missing_deps(&server_heads)
            .is_empty()
    {
        return None;
    }
    let check = RecordDoc::from_automerge(copy.automerge().clone()).ok()?;
    if check.id() != doc.id() {
        return None;
    }
    Some((copy, server_heads))
}

/// Local changes the server's copy lacks: their hashes and bytes (loadable over `server`).
fn changes_missing_from(local: &mut RecordDoc, server: &mut RecordDoc) -> (Vec<String>, Vec<u8>) {
    let mut hashes = Vec::new();
    let mut bytes = Vec::new();
    let theirs = server.automerge();
    for c in local.automerge_mut().get_changes(&[]) {
        if theirs.get_change_by_hash(&c.hash()).is_none() {
            hashes.push(c.hash().to_string());
            bytes.extend_from_slice(c.raw_bytes());
        }
    }
    (hashes, bytes)
}

fn working<'w, S: DeviceSyncStore>(
    store: &S,
    work: &'w mut BTreeMap<String, Working>,
    id: &str,
) -> Result<&'w mut Working, SyncError> {
    match work.entry(id.to_owned()) {
        Entry::Occupied(o) => Ok(o.into_mut()),
        Entry::Vacant(v) => {
            // A local copy that no longer reads is treated as absent: the server's version
            // (if any arrives) takes its place.
            let doc = match store.record_parts(id).map_err(boxed)? {
                Some(parts) => RecordDoc::load(&parts.concat()).ok(),
                None => None,
            };
            Ok(v.insert(Working {
                doc,
                inserted: false,
                replaced: false,
                removed: false,
                retry: true,
                shared: None,
                quarantine: Vec::new(),
            }))
        }
    }
}

/// The row the store keeps for lists, as the records layer would write it.
pub fn meta_of(doc: &mut RecordDoc, at: DateTime<Utc>) -> Result<RecordMeta, SyncError> {
    let view = doc.view().map_err(|source| SyncError::Record {
        record_id: doc.id().to_string(),
        source,
    })?;
    Ok(RecordMeta {
        status: view.status.as_str().to_owned(),
        summary: view.summary(),
        heads: heads_bytes(&sorted(doc.heads())),
        at,
    })
}

/// Heads as the store's opaque column: the 32-byte hashes, sorted, concatenated.
pub fn heads_bytes(heads: &[ChangeHash]) -> Vec<u8> {
    heads.iter().flat_map(|h| h.0).collect()
}

fn record_label(doc: &RecordDoc) -> String {
    match doc.view().ok().and_then(|v| v.number) {
        Some(n) => n,
        None => short_id(&doc.id().to_string()),
    }
}

fn short_id(id: &str) -> String {
    id.get(..8).unwrap_or(id).to_owned()
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Heads as hex, for logs and tests.
pub fn hex_heads(doc: &mut RecordDoc) -> Vec<String> {
    heads_to_hex(&sorted(doc.heads()))
}
