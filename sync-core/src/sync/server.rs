//! The server's half of the protocol as pure logic: a request and the server's current state in,
//! a response and the effects to persist out. The server crate implements `ServerSyncStore` over one
//! database transaction: `handle` reads through it and hands it every `ServerEffect` to persist
//! (`persist`), in order, a window of records at a time; the caller commits before sending the
//! response. If anything fails, the caller rolls the whole exchange back and the device simply
//! retries.
//!
//! Flow of `ServerSync::handle`:
//! 1. refuse the request as a whole if its protocol or device is not the authenticated one;
//! 2. for each record the device sent (a whole `NewRecord` or a sync `DocMessage`), in order:
//!    load the server's copy; refuse it unseen if the device may not see that record
//!    (`not_visible`); refuse it undecoded if its bytes and the server's copy exceed
//!    `MAX_RECORD_BYTES` (`too_large`); decode the bytes into a scratch copy (`malformed` if they
//!    do not decode); list the changes the server lacks; read from the store what it knows of
//!    the actors and auto numbers they use; vet them change by change (`vetting`); refuse them
//!    all if the record would then hold a number outside the device's leased blocks
//!    (`number_not_leased`) or one another record holds (`number_taken`); store the accepted
//!    ones (`StoreRecord`, with the next change sequence number); refuse the rest (`Rejection`
//!    with the server's document, `Quarantine`); acknowledge the heads and reply with the
//!    changes the device lacks;
//! 3. push the records changed since the device's `cursor` that it may see and does not have
//!    yet (`visible_changes`), as sync messages or, for records it never had, whole;
//! 4. remember per (device, record) what the device has (`PeerState`).
//!
//! The decoding and vetting of each record run contained (`contained`): automerge panics on
//! some corrupt bytes, and such a record is refused as `malformed`, kept in quarantine, while
//! the exchange goes on for the others.
//!
//! Step 2 runs a window of records at a time: the pure work (decoding, vetting) on `workers`
//! scoped threads, each taking the next record when it is free, while the calling thread hands
//! the previous window's effects to the store (sync bench: the SQLite writes of a
//! large request then overlap the decoding instead of following it). Results are committed in
//! request order, so the outcome is the same for any number of workers.
//!
//! Why the server tracks what each device has rather than running a stock Automerge exchange:
//! the stock protocol needs a round trip to learn the peer's heads before sending changes. Here
//! a device's message carries its heads, which the server has after applying it, so the reply
//! holds exactly the changes the device lacks; and for records the device did not mention, the
//! server uses the heads it last *confirmed* the device has. A reply is confirmed when the
//! device's next request carries a cursor at least that of the response that carried it (the
//! device stores a response's cursor in the same transaction as its contents), so a lost
//! response is simply sent again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock, PoisonError};

use automerge::sync::{Have, Message, State, SyncDoc};
use automerge::{AutoCommit, ChangeHash, ReadDoc};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::vetting::{
    BindingError, ChangeMeta, Refusal, RegistryAccess, VetFailure, changes_after, malformed,
    vet_changes,
};
use super::wire::{
    Ack, Bytes, DocMessage, NewRecord, PROTOCOL_VERSION, Rejection, RejectionCode, SyncRequest,
    SyncResponse, heads_from_hex, heads_to_hex, sorted,
};
use super::{SyncError, boxed};
use crate::domain::{Registry, RegistryIndex, StandId};
use crate::limits::MAX_RECORD_BYTES;
use crate::records::{Agent, RecordDoc, RecordError, RecordKind, RecordView, UserRole};

/// Who is syncing, as the server authenticated them (never as the request claims).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// User, role and the authenticated device.
    pub agent: Agent,
    /// For a coordinator, the stand they coordinate (art. 17).
    pub stand: Option<StandId>,
    /// Every Ed25519 key the authenticated device registered (at login), oldest first: a
    /// record it issues must be sealed with one of them (`records::seal`).
    pub device_keys: Vec<RegisteredKey>,
}

/// A device's public key as the server registered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredKey {
    pub public_key: [u8; 32],
    pub registered_at: DateTime<Utc>,
}

/// Whether `sender` may receive `record` (and send changes to it). Mirrored in SQL by the
/// server's `visible_changes`:
/// - anyone: records they wrote (the same user on any of their devices);
/// - a coordinator: also the transgression reports of their stand;
/// - the office: everything;
/// - an admin: nothing (administrators write no records).
pub fn may_see(sender: &Sender, record: &RecordView) -> bool {
    match sender.agent.role {
        UserRole::Office => true,
        UserRole::Admin => false,
        UserRole::Coordinator => {
            record.author.user_id == sender.agent.user_id
                || (record.kind == RecordKind::Transgression
                    && sender.stand.is_some()
                    && record.stand_id == sender.stand)
        }
        UserRole::GuardaMunicipal | UserRole::SecretariaInspector => {
            record.author.user_id == sender.agent.user_id
        }
    }
}

/// What the server knows a device has of one record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PeerState {
    /// Heads the device is known to have (hex, sorted); empty: nothing known.
    #[serde(default)]
    pub known_heads: Vec<String>,
    /// Heads sent in the response with `cursor`, confirmed once the device's cursor reaches it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<SentHeads>,
}

/// Heads a response carried to the device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SentHeads {
    pub cursor: u64,
    pub heads: Vec<String>,
}

impl PeerState {
    /// Promotes `sent` to `known_heads` when the device's cursor shows it applied that response.
    pub fn confirmed(mut self, device_cursor: u64) -> Self {
        if let Some(sent) = self.sent.take() {
            if device_cursor >= sent.cursor {
                self.known_heads = sent.heads;
            } else {
                self.sent = Some(sent);
            }
        }
        self
    }

    fn known(&self) -> Option<Vec<ChangeHash>> {
        heads_from_hex(&self.known_heads)
            .map(sorted)
            .filter(|h| !h.is_empty())
    }

    /// JSON, for a TEXT column.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| String::from("{}"))
    }

    /// Inverse of `to_json`; an unreadable state is "nothing known" (the device then gets whole
    /// documents again, which is always safe).
    pub fn from_json(s: &str) -> Self {
        serde_json::from_str(s).unwrap_or_default()
    }
}

/// A record as the server stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRecord {
    /// `save()` of the document (or a save followed by incremental chunks).
    pub doc: Vec<u8>,
    /// Change sequence number of its last change.
    pub seq: u64,
}

/// A record changed after some cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Changed {
    pub record_id: Uuid,
    pub seq: u64,
}

/// What `ServerSync` reads and writes. The server implements it over one transaction, so that
/// what was read is what is written over.
pub trait ServerSyncStore {
    type Error: std::error::Error + Send + Sync + 'static;
    fn record(&mut self, id: Uuid) -> Result<Option<ServerRecord>, Self::Error>;
    fn peer_state(
        &mut self,
        device_id: Uuid,
        record_id: Uuid,
    ) -> Result<Option<PeerState>, Self::Error>;
    /// The device an Automerge actor (hex) was bound to, if any.
    fn actor_device(&mut self, actor: &str) -> Result<Option<Uuid>, Self::Error>;
    /// The highest change sequence number given so far (0 when none).
    fn current_seq(&mut self) -> Result<u64, Self::Error>;
    /// Records `sender` may see (`may_see`) with `after < seq <= up_to`, ascending by seq, at
    /// most `limit`. (`up_to` leaves out what this exchange itself has persisted so far.)
    fn visible_changes(
        &mut self,
        sender: &Sender,
        after: u64,
        up_to: u64,
        limit: usize,
    ) -> Result<Vec<Changed>, Self::Error>;
    /// Whether auto number `number` lies in a block the server leased to the device
    /// `device_id` (the authenticated device's protocol UUID).
    fn number_leased(&mut self, device_id: Uuid, number: u64) -> Result<bool, Self::Error>;
    /// The record holding auto number `number` (as written in it), if any.
    fn number_holder(&mut self, number: &str) -> Result<Option<Uuid>, Self::Error>;
    /// Persists `effects` in order, in the same transaction as the reads. Called several times
    /// per exchange; a record's effects are never split between calls.
    fn persist(&mut self, effects: Vec<ServerEffect>) -> Result<(), Self::Error>;
}

/// Accepted changes of one record: what the server writes, with its projection and an audit
/// row, in one transaction.
#[derive(Debug, Clone)]
pub struct StoredChange {
    pub record_id: Uuid,
    /// The change sequence number to store the record under (strictly increasing).
    pub seq: u64,
    /// True when these changes create the record on the server.
    pub created: bool,
    /// `save()` of the whole record after the changes.
    pub doc: Vec<u8>,
    /// Only the accepted changes (loadable over the previous document), for an append-only log.
    pub changes: Vec<u8>,
    /// Hex hashes of the accepted changes, in causal order (the audit row's content).
    pub change_hashes: Vec<String>,
    /// Heads after the changes (hex, sorted).
    pub heads: Vec<String>,
    /// The record after the changes, for the SQL projection.
    pub view: RecordView,
    /// Who sent them (user, role, device).
    pub by: Agent,
    pub at: DateTime<Utc>,
}

/// Refused bytes kept as evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarantineEntry {
    pub record_id: Uuid,
    pub device_id: Uuid,
    pub user_id: String,
    pub role: UserRole,
    pub code: RejectionCode,
    pub message: String,
    /// Hex hashes of the refused changes; empty when the bytes did not decode.
    pub change_hashes: Vec<String>,
    /// The refused changes (concatenated, loadable over the record), or the raw bytes received
    /// when they did not decode.
    pub bytes: Vec<u8>,
    pub at: DateTime<Utc>,
}

/// What the server must persist, in order, in the transaction it read in.
#[derive(Debug, Clone)]
pub enum ServerEffect {
    StoreRecord(Box<StoredChange>),
    /// First use of an actor: bind it to the device (another device using it is then refused).
    BindActor {
        actor: String,
        device_id: Uuid,
    },
    Quarantine(QuarantineEntry),
    SavePeerState {
        device_id: Uuid,
        record_id: Uuid,
        state: PeerState,
    },
}

/// The response being built, and effects not yet handed to the store.
#[derive(Debug)]
struct Outgoing {
    response: SyncResponse,
    effects: Vec<ServerEffect>,
}

/// The result of a server-side edit (`ServerSync::edit`).
#[derive(Debug, Clone)]
pub enum EditOutcome {
    /// Stored (persist the effects); the new view.
    Applied {
        view: Box<RecordView>,
        effects: Vec<ServerEffect>,
    },
    /// The edit made no change.
    Unchanged,
    /// Refused by the same vetting as a device's change.
    Refused {
        code: RejectionCode,
        message: String,
    },
}

/// The server's protocol logic. Holds only limits; all state is read through the store.
#[derive(Debug, Clone)]
pub struct ServerSync {
    /// Records pushed per response at most (then `more`).
    pub push_limit: usize,
    /// Approximate bytes of pushed documents and messages per response (then `more`).
    pub push_bytes: usize,
    /// Threads that decode and vet the records of one request (1: all on the caller's thread).
    /// The outcome is the same for any value: only the pure work is spread, and its results
    /// are committed in request order.
    pub workers: usize,
}

impl Default for ServerSync {
    fn default() -> Self {
        Self {
            push_limit: 200,
            push_bytes: 2 * 1024 * 1024,
            workers: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        }
    }
}

/// Records decoded and vetted together before their results are committed: bounds how many
/// decoded documents are held at once (a 10,000-record request must not hold 10,000).
const WINDOW: usize = 128;

/// Runs `f` over `items` on up to `workers` scoped threads, and `beside` on the calling thread
/// meanwhile; results in the order of `items`. Each thread takes the next item when it is free
/// (records of one request differ in cost: a new record, a one-change message, a refusal), so
/// no thread waits on another's longer share.
fn par_map_beside<T: Send, R: Send, B>(
    items: Vec<T>,
    workers: usize,
    f: impl Fn(T) -> R + Sync,
    beside: impl FnOnce() -> B,
) -> (Vec<R>, B) {
    let n = items.len();
    let workers = workers.clamp(1, n.max(1));
    if workers == 1 {
        let b = beside();
        return (items.into_iter().map(f).collect(), b);
    }
    let queue = Mutex::new(items.into_iter().enumerate());
    let (f, queue) = (&f, &queue);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
                        let Some((i, item)) = next else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        let b = beside();
        let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(n).collect();
        for h in handles {
            match h.join() {
                Ok(done) => {
                    for (i, r) in done {
                        slots[i] = Some(r);
                    }
                }
                // A panic in the pure work is a bug; surface it on the caller's thread as it
                // would have been without threads.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (slots.into_iter().flatten().collect(), b)
    })
}

/// One record of the request, decoded.
#[derive(Clone, Copy)]
enum Incoming<'a> {
    Whole(&'a [u8]),
    Message(&'a [u8]),
}

impl<'a> Incoming<'a> {
    fn bytes(self) -> &'a [u8] {
        match self {
            Incoming::Whole(b) | Incoming::Message(b) => b,
        }
    }
}

/// Runs the pure work on one incoming record (decoding it, vetting it), containing a panic of
/// the document library: automerge 0.12 panics on some corrupt bytes instead of returning an
/// error. `Ok(Err(_))`: it panicked, and the record is refused as malformed with its bytes kept
/// as evidence, while the other records of the request go on. Everything `f` builds from the
/// incoming bytes (the scratch copy, the vetting's forks) is its own and dropped with the panic;
/// what it borrows (the sender, the actor bindings read before) it only reads, which is why
/// asserting unwind safety is sound. No server document goes back with the refusal: where the
/// panic happened is unknown, so nothing is disclosed.
fn contained<T>(
    incoming: Incoming<'_>,
    now: DateTime<Utc>,
    f: impl FnOnce() -> Result<T, SyncError>,
) -> Result<Result<T, Examined>, SyncError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r.map(Ok),
        Err(_) => Ok(Err(Examined::refused(
            evidence(incoming.bytes()),
            malformed(crate::records::LIBRARY_PANIC),
            None,
            now,
        ))),
    }
}

/// The refused bytes kept as evidence: whole up to the record limit, else its first
/// `MAX_RECORD_BYTES` (what an oversized upload holds beyond that says nothing more, and
/// storing it whole would let anyone fill the quarantine).
fn evidence(raw: &[u8]) -> Vec<u8> {
    raw[..raw.len().min(MAX_RECORD_BYTES)].to_vec()
}

fn too_large() -> Refusal {
    super::vetting::record_refusal(&RecordError::TooLarge {
        what: "o registro",
        limit: format!("{} KB", MAX_RECORD_BYTES / 1024),
    })
}

/// What receiving one record tells about the device's copy.
#[derive(Debug, Default)]
struct Received {
    /// Heads it will have after applying the response.
    will_have: Option<Vec<String>>,
    /// Heads it showed it has.
    has: Option<Vec<String>>,
}

/// One incoming record after `decode_step`.
enum Step<'a> {
    /// Nothing to vet: refused unseen, malformed, or nothing new.
    Done(Box<Examined>),
    Ready(Box<Ready<'a>>),
}

/// A decoded record with changes to vet.
struct Ready<'a> {
    incoming: Incoming<'a>,
    /// The server's copy (`None`: new to the server) and its heads.
    server: Option<RecordDoc>,
    server_view: Option<RecordView>,
    server_heads: Vec<ChangeHash>,
    /// The server's copy plus everything that arrived.
    scratch: AutoCommit,
    /// Heads the device has, and the changes it asked for.
    device_heads: Vec<ChangeHash>,
    need: Vec<ChangeHash>,
    /// The changes the server lacks, in causal order.
    new_changes: Vec<ChangeMeta>,
    /// The auto numbers the record holds once they are applied (`RecordDoc::claimed_numbers`).
    numbers: Vec<String>,
}

/// What the store says of one auto number, read before the vetting (which runs without it).
#[derive(Debug, Clone, Copy, Default)]
struct NumberFacts {
    /// In a block leased to the sender's device.
    leased: bool,
    /// The record that holds it: stored, or claimed first by another record of this request.
    holder: Option<Uuid>,
}

/// Reads what the store knows of `number` for `sender`.
fn number_facts<S: ServerSyncStore>(
    store: &mut S,
    sender: &Sender,
    number: &str,
) -> Result<NumberFacts, SyncError> {
    let leased = match number.trim().parse::<u64>() {
        Ok(n) => store
            .number_leased(sender.agent.device_id, n)
            .map_err(boxed)?,
        Err(_) => false,
    };
    Ok(NumberFacts {
        leased,
        holder: store.number_holder(number).map_err(boxed)?,
    })
}

/// Whether `record_id` may take auto number `number`: a number is unique across records, and
/// one a device writes must come from a block the server leased to that device (the office
/// numbers records by hand, outside the blocks). `None`: it may.
fn number_refusal(
    sender: &Sender,
    record_id: Uuid,
    number: &str,
    facts: Option<&NumberFacts>,
) -> Option<Refusal> {
    let facts = facts.copied().unwrap_or_default();
    if facts.holder.is_some_and(|h| h != record_id) {
        return Some(Refusal {
            code: RejectionCode::NumberTaken,
            message: format!("o número de auto {number} já pertence a outro registro"),
        });
    }
    if sender.agent.role != UserRole::Office && !facts.leased {
        return Some(Refusal {
            code: RejectionCode::NumberNotLeased,
            message: format!(
                "o número de auto {number} não está em nenhum bloco de números concedido a este \
                 aparelho"
            ),
        });
    }
    None
}

/// The auto numbers of a request as read before its vetting.
struct Numbers<'a> {
    numbers: &'a HashMap<String, NumberFacts>,
    /// Which record of the request claims each number first.
    claimed: &'a HashMap<String, Uuid>,
}

/// Everything receiving one record decided, committed later in request order.
#[derive(Default)]
struct Examined {
    /// Actors to bind to the sender's device.
    bindings: Vec<String>,
    /// Accepted changes to store (its `seq` is given at commit).
    stored: Option<Box<StoredChange>>,
    refusal: Option<RefusalOut>,
    /// Heads to acknowledge (hex, sorted), and a reply with what the device lacks.
    ack: Option<Vec<String>>,
    message: Option<Vec<u8>>,
    received: Received,
}

/// A refusal as `ServerSync::reject` takes it.
struct RefusalOut {
    change_hashes: Vec<String>,
    bytes: Vec<u8>,
    refusal: Refusal,
    server_doc: Option<Vec<u8>>,
    at: DateTime<Utc>,
}

impl Examined {
    /// Refused unseen: no change hashes, the raw bytes kept as evidence.
    fn refused(
        bytes: Vec<u8>,
        refusal: Refusal,
        server_doc: Option<Vec<u8>>,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            refusal: Some(RefusalOut {
                change_hashes: Vec::new(),
                bytes,
                refusal,
                server_doc,
                at,
            }),
            ..Self::default()
        }
    }
}

/// Per-record bookkeeping while handling one request.
struct Touched {
    /// Heads the device will have after applying the response (hex, sorted); `None`: leave the
    /// state as it is.
    will_have: Option<Vec<String>>,
    /// Heads the device showed it has (its message or document).
    has: Option<Vec<String>>,
    /// As stored before this request.
    loaded: Option<PeerState>,
}

impl ServerSync {
    /// Handles one request from `sender`, persisting its effects through `store`, and returns
    /// the response to send once the caller has committed. On an error, some effects may have
    /// been persisted: the caller rolls the exchange back. `registry` is what incoming records
    /// are checked against: the permits they name, and a coordinator's art. 17 scope (indexed
    /// on first need, once per request).
    pub fn handle<S: ServerSyncStore>(
        &self,
        store: &mut S,
        sender: &Sender,
        registry: Option<&Registry>,
        request: &SyncRequest,
        now: DateTime<Utc>,
    ) -> Result<SyncResponse, SyncError> {
        let lazy_index = OnceLock::new();
        let registry = RegistryAccess {
            registry,
            given: None,
            lazy: Some(&lazy_index),
        };
        self.exchange(store, sender, &registry, request, now)
    }

    /// As [`ServerSync::handle`], with the registry's indexes already built — what a server
    /// keeps once per registry version — so that no check of the exchange scans the city's
    /// permits: a record's permit and a coordinator's stand are point lookups.
    pub fn handle_indexed<S: ServerSyncStore>(
        &self,
        store: &mut S,
        sender: &Sender,
        index: &RegistryIndex<'_>,
        request: &SyncRequest,
        now: DateTime<Utc>,
    ) -> Result<SyncResponse, SyncError> {
        let registry = RegistryAccess {
            registry: Some(index.registry),
            given: Some(index),
            lazy: None,
        };
        self.exchange(store, sender, &registry, request, now)
    }

    fn exchange<S: ServerSyncStore>(
        &self,
        store: &mut S,
        sender: &Sender,
        registry: &RegistryAccess<'_, '_>,
        request: &SyncRequest,
        now: DateTime<Utc>,
    ) -> Result<SyncResponse, SyncError> {
        if request.protocol != PROTOCOL_VERSION {
            return Err(SyncError::Protocol {
                got: request.protocol,
                supported: PROTOCOL_VERSION,
            });
        }
        if request.device_id != sender.agent.device_id {
            return Err(SyncError::DeviceMismatch {
                claimed: request.device_id,
                authenticated: sender.agent.device_id,
            });
        }
        let mut seen = BTreeSet::new();
        let items: Vec<(Uuid, Incoming<'_>)> = request
            .new_records
            .iter()
            .map(|r| (r.record_id, Incoming::Whole(r.doc.as_slice())))
            .chain(
                request
                    .messages
                    .iter()
                    .map(|m| (m.record_id, Incoming::Message(m.message.as_slice()))),
            )
            .collect();
        for (id, _) in &items {
            if !seen.insert(*id) {
                return Err(SyncError::DuplicateRecord(*id));
            }
        }

        let device = sender.agent.device_id;
        let mut seq = store.current_seq().map_err(boxed)?;
        // What this exchange persists gets sequence numbers above this one.
        let seq_before = seq;
        // A cursor from the future (another server, a restored database) would hide changes
        // from the device; start it over instead: every push is idempotent.
        let cursor_in = if request.cursor > seq {
            0
        } else {
            request.cursor
        };
        let mut out = Outgoing {
            response: SyncResponse {
                cursor: 0,
                accepted: Vec::new(),
                messages: Vec::new(),
                new_records: Vec::new(),
                rejections: Vec::new(),
                more: false,
            },
            effects: Vec::new(),
        };
        let mut touched: BTreeMap<Uuid, Touched> = BTreeMap::new();
        let mut bound: BTreeSet<String> = BTreeSet::new();

        // 2. What the device sent, a window at a time: read what the store holds of each
        //    record, decode them (in parallel, while the previous window's effects are
        //    persisted), look up the actors they use, vet them (in parallel), then commit each
        //    result in request order.
        let mut actors: HashMap<String, Option<Uuid>> = HashMap::new();
        let mut numbers: HashMap<String, NumberFacts> = HashMap::new();
        let mut claimed: HashMap<String, Uuid> = HashMap::new();
        let mut items = items.into_iter().peekable();
        while items.peek().is_some() {
            let window: Vec<(Uuid, Incoming<'_>)> = items.by_ref().take(WINDOW).collect();
            let mut reads = Vec::with_capacity(window.len());
            for (record_id, incoming) in window {
                let stored = store.record(record_id).map_err(boxed)?;
                let loaded = store.peer_state(device, record_id).map_err(boxed)?;
                reads.push((record_id, incoming, stored, loaded));
            }
            let previous = std::mem::take(&mut out.effects);
            let (decoded, persisted) = par_map_beside(
                reads,
                self.workers,
                |(record_id, incoming, stored, loaded)| {
                    let step = contained(incoming, now, || {
                        self.decode_step(sender, record_id, incoming, stored.as_ref(), now)
                    })
                    .map(|step| step.unwrap_or_else(|ex| Step::Done(Box::new(ex))));
                    (record_id, loaded, step)
                },
                || persist(store, previous),
            );
            persisted?;
            let mut ready = Vec::with_capacity(decoded.len());
            for (record_id, loaded, step) in decoded {
                let step = step?;
                if let Step::Ready(r) = &step {
                    for c in &r.new_changes {
                        let actor = c.actor.to_hex_string();
                        if let std::collections::hash_map::Entry::Vacant(slot) = actors.entry(actor)
                        {
                            let device = store.actor_device(slot.key()).map_err(boxed)?;
                            slot.insert(device);
                        }
                    }
                    for n in &r.numbers {
                        if !numbers.contains_key(n) {
                            let facts = number_facts(store, sender, n)?;
                            numbers.insert(n.clone(), facts);
                        }
                        // Two records of one request with the same number: the first, in
                        // request order, may take it.
                        claimed.entry(n.clone()).or_insert(record_id);
                    }
                }
                ready.push((record_id, loaded, step));
            }
            let actors = &actors;
            let (numbers, claimed) = (&numbers, &claimed);
            let (examined, ()) = par_map_beside(
                ready,
                self.workers,
                |(record_id, loaded, step)| {
                    let ex = match step {
                        Step::Done(ex) => Ok(*ex),
                        Step::Ready(r) => {
                            let incoming = r.incoming;
                            contained(incoming, now, || {
                                let numbers = Numbers { numbers, claimed };
                                self.vet_step(
                                    sender, registry, record_id, *r, actors, &numbers, now,
                                )
                            })
                            .map(|ex| ex.unwrap_or_else(|refused| refused))
                        }
                    };
                    (record_id, loaded, ex)
                },
                || (),
            );
            for (record_id, loaded, ex) in examined {
                let t = self.commit(ex?, sender, record_id, &mut seq, &mut bound, &mut out);
                touched.insert(
                    record_id,
                    Touched {
                        will_have: t.will_have,
                        has: t.has,
                        loaded,
                    },
                );
            }
        }

        persist(store, std::mem::take(&mut out.effects))?;

        // 3. What changed on the server since the device's cursor (before this exchange: what
        //    it stored, the device has or is answered about above).
        let rows = store
            .visible_changes(
                sender,
                cursor_in,
                seq_before,
                self.push_limit.saturating_add(1),
            )
            .map_err(boxed)?;
        let mut budget = self.push_bytes;
        let mut last_seq = cursor_in;
        let mut truncated = false;
        for (i, row) in rows.iter().enumerate() {
            if i >= self.push_limit || budget == 0 {
                truncated = true;
                break;
            }
            last_seq = row.seq;
            if touched.contains_key(&row.record_id) {
                continue;
            }
            let Some(stored) = store.record(row.record_id).map_err(boxed)? else {
                continue;
            };
            let mut doc = load_stored(row.record_id, &stored.doc)?;
            let view = doc.view().map_err(|source| SyncError::Stored {
                record_id: row.record_id,
                source,
            })?;
            // The store's filter is SQL; check again with the rule itself.
            if !may_see(sender, &view) {
                continue;
            }
            // Cursor 0 is a device that holds nothing of the server's yet: a first sync, or
            // the same device identity with a new, empty store (reinstalled app, restored
            // phone). What was once sent to that identity says nothing about this store, so
            // the remembered state is ignored and every visible record goes whole.
            let loaded = if cursor_in == 0 {
                None
            } else {
                store.peer_state(device, row.record_id).map_err(boxed)?
            };
            let prior = loaded.clone().unwrap_or_default().confirmed(cursor_in);
            let heads = sorted(doc.heads());
            let sent = match prior.known() {
                Some(known) if known == heads => 0,
                Some(known) if has_all(&mut doc, &known) => {
                    match reply_message(&mut doc, &known, &[]) {
                        Some(bytes) => {
                            let n = bytes.len();
                            out.response.messages.push(DocMessage {
                                record_id: row.record_id,
                                message: Bytes(bytes),
                            });
                            n
                        }
                        None => 0,
                    }
                }
                // Never had it, or what it had is unknown here: send it whole.
                _ => {
                    let bytes = doc.save();
                    let n = bytes.len();
                    out.response.new_records.push(NewRecord {
                        record_id: row.record_id,
                        doc: Bytes(bytes),
                    });
                    n
                }
            };
            budget = budget.saturating_sub(sent);
            if sent > 0 {
                touched.insert(
                    row.record_id,
                    Touched {
                        will_have: Some(heads_to_hex(&heads)),
                        has: None,
                        loaded,
                    },
                );
            }
        }
        if !truncated && rows.len() > self.push_limit {
            truncated = true;
        }
        out.response.more = truncated;
        // Everything up to this cursor was handled: pushed, skipped as invisible, or already
        // on the device. Untruncated, the device is current with every change including its own.
        out.response.cursor = if truncated { last_seq } else { seq };

        // 4. What each device has, for the next exchange.
        for (record_id, t) in touched {
            let mut state = t.loaded.clone().unwrap_or_default().confirmed(cursor_in);
            if let Some(has) = t.has {
                state.known_heads = has;
            }
            if let Some(heads) = t.will_have {
                if heads == state.known_heads {
                    state.sent = None;
                } else {
                    state.sent = Some(SentHeads {
                        cursor: out.response.cursor,
                        heads,
                    });
                }
            }
            let unchanged = match &t.loaded {
                Some(l) => *l == state,
                None => state == PeerState::default(),
            };
            if !unchanged {
                out.effects.push(ServerEffect::SavePeerState {
                    device_id: device,
                    record_id,
                    state,
                });
            }
        }
        persist(store, out.effects)?;
        Ok(out.response)
    }

    /// First half of receiving one record, without the store: the server's copy (as read
    /// before), visibility, and the incoming bytes decoded into a scratch copy with the changes
    /// the server lacks. Pure, so the records of a request run it in parallel.
    fn decode_step<'a>(
        &self,
        sender: &Sender,
        record_id: Uuid,
        incoming: Incoming<'a>,
        stored: Option<&ServerRecord>,
        now: DateTime<Utc>,
    ) -> Result<Step<'a>, SyncError> {
        let raw = incoming.bytes();
        let mut server = match stored {
            Some(r) => Some(load_stored(record_id, &r.doc)?),
            None => None,
        };
        // The server's view, kept for the vetting's first step.
        let server_view = match &server {
            Some(doc) => Some(
                doc.view()
                    .map_err(|source| SyncError::Stored { record_id, source })?,
            ),
            None => None,
        };
        if let Some(view) = &server_view
            && !may_see(sender, view)
        {
            return Ok(Step::Done(Box::new(Examined::refused(
                evidence(raw),
                Refusal {
                    code: RejectionCode::NotVisible,
                    message: String::from(
                        "este registro não pertence a este usuário nem ao seu ponto",
                    ),
                },
                None,
                now,
            ))));
        }
        // Over the record limit, counted before anything is decoded: what arrived, plus what
        // the server holds (a bound of the record after the merge). A record refused here
        // costs a comparison, however it would inflate.
        if raw.len() + stored.map_or(0, |r| r.doc.len()) > MAX_RECORD_BYTES {
            let server_doc = server.as_mut().map(RecordDoc::save);
            return Ok(Step::Done(Box::new(Examined::refused(
                evidence(raw),
                too_large(),
                server_doc,
                now,
            ))));
        }
        // A whole record must not inflate beyond the limit either (`records::check_inflated`:
        // the library would inflate it without a bound).
        if let Incoming::Whole(bytes) = incoming
            && let Err(e) = crate::records::check_inflated(bytes)
        {
            let server_doc = server.as_mut().map(RecordDoc::save);
            return Ok(Step::Done(Box::new(Examined::refused(
                evidence(raw),
                super::vetting::record_refusal(&e),
                server_doc,
                now,
            ))));
        }
        let server_heads = match &mut server {
            Some(d) => sorted(d.heads()),
            None => Vec::new(),
        };

        // Decode into a scratch copy: the server's document plus whatever arrived.
        let mut scratch = match &server {
            Some(d) => d.automerge().clone(),
            None => AutoCommit::new(),
        };
        let (device_heads, need) = match decode_into(&mut scratch, record_id, incoming) {
            Ok(x) => x,
            Err(reason) => {
                let server_doc = server.as_mut().map(RecordDoc::save);
                return Ok(Step::Done(Box::new(Examined::refused(
                    evidence(raw),
                    malformed(reason),
                    server_doc,
                    now,
                ))));
            }
        };
        // Changes whose dependencies never arrived: the device's idea of what the server has
        // is wrong. Neither accept nor refuse; the device sends the record whole next time.
        if !scratch.get_missing_deps(&[]).is_empty() || !has_all_am(&mut scratch, &device_heads) {
            return Ok(Step::Done(Box::default()));
        }
        let new_changes = changes_after(&mut scratch, &server_heads);
        if new_changes.is_empty() && server.is_none() {
            return Ok(Step::Done(Box::default()));
        }
        let numbers = RecordDoc::claimed_numbers(&scratch);
        Ok(Step::Ready(Box::new(Ready {
            incoming,
            server,
            server_view,
            server_heads,
            scratch,
            device_heads,
            need,
            new_changes,
            numbers,
        })))
    }

    /// Second half, also without the store: vets the new changes (actor bindings from
    /// `actors`, read beforehand for every actor they use) and works out what to store, what
    /// to refuse and what to answer.
    #[allow(clippy::too_many_arguments)]
    fn vet_step(
        &self,
        sender: &Sender,
        registry: &RegistryAccess<'_, '_>,
        record_id: Uuid,
        r: Ready<'_>,
        actors: &HashMap<String, Option<Uuid>>,
        numbers: &Numbers<'_>,
        now: DateTime<Utc>,
    ) -> Result<Examined, SyncError> {
        let Ready {
            incoming,
            server,
            server_view,
            server_heads,
            scratch,
            device_heads,
            need,
            new_changes,
            numbers: _,
        } = r;
        let number_before = server_view.as_ref().and_then(|v| v.number.clone());
        let mut lookup = |actor: &str| -> Result<Option<Uuid>, BindingError> {
            actors.get(actor).copied().ok_or_else(|| {
                BindingError(format!("ator {actor} não foi lido antes da conferência").into())
            })
        };
        let vetted = match vet_changes(
            server.as_ref().zip(server_view),
            scratch,
            &server_heads,
            new_changes,
            sender,
            registry,
            &mut lookup,
            now,
        ) {
            Ok(v) => v,
            Err(VetFailure::Bindings(BindingError(e))) => return Err(SyncError::Store(e)),
            Err(VetFailure::NoRegistry) => return Err(SyncError::RegistryUnavailable),
        };
        let mut ex = Examined {
            bindings: vetted.new_bindings,
            ..Examined::default()
        };
        let mut doc = vetted.doc;
        if !vetted.accepted.is_empty()
            && let Some(d) = doc.as_mut()
        {
            // A new record accepted whole: the bytes the device sent are a save of exactly this
            // document (they loaded into it), so they are stored as they came instead of being
            // encoded and compressed again (sync bench).
            let as_sent = match incoming {
                Incoming::Whole(bytes) if server.is_none() && vetted.refused.is_none() => {
                    Some(bytes)
                }
                _ => None,
            };
            // The sequence number is given at commit, in request order.
            ex.stored = Some(Box::new(stored_change(
                d,
                vetted.view,
                as_sent,
                record_id,
                0,
                server.is_none(),
                &server_heads,
                &vetted.accepted,
                &sender.agent,
                now,
            )?));
        }
        // What the store must judge of the record as it would be stored: its bytes, measured
        // exactly (the check before decoding bounds them only approximately: a merge
        // compresses differently than its parts), and an auto number it newly holds.
        let refuse_all = ex.stored.as_ref().and_then(|st| {
            if st.doc.len() > MAX_RECORD_BYTES {
                return Some(too_large());
            }
            let n = st.view.number.as_deref()?;
            if number_before.as_deref() == Some(n) {
                return None;
            }
            let mut facts = numbers.numbers.get(n).copied();
            if let (Some(f), Some(first)) = (facts.as_mut(), numbers.claimed.get(n))
                && f.holder.is_none()
                && *first != record_id
            {
                f.holder = Some(*first);
            }
            number_refusal(sender, record_id, n, facts.as_ref())
        });
        if let Some(refusal) = refuse_all {
            let mut hashes: Vec<String> = vetted.accepted.iter().map(|h| h.to_string()).collect();
            if let Some((refused, _)) = &vetted.refused {
                hashes.extend(refused.iter().map(|c| c.hash().to_string()));
            }
            ex.stored = None;
            let mut server = server;
            ex.received.will_have = server.as_mut().map(|d| heads_to_hex(&sorted(d.heads())));
            ex.refusal = Some(RefusalOut {
                change_hashes: hashes,
                bytes: evidence(incoming.bytes()),
                refusal,
                server_doc: server.as_mut().map(RecordDoc::save),
                at: now,
            });
            return Ok(ex);
        }
        let device_has = Some(heads_to_hex(&sorted(device_heads.clone())));
        if let Some((refused, refusal)) = vetted.refused {
            let hashes: Vec<String> = refused.iter().map(|c| c.hash().to_string()).collect();
            let bytes: Vec<u8> = refused
                .iter()
                .flat_map(|c| c.raw_bytes().to_vec())
                .collect();
            let server_doc = doc.as_mut().map(RecordDoc::save);
            // The device resets to the server's document (or drops a refused creation).
            ex.received.will_have = doc.as_mut().map(|d| heads_to_hex(&sorted(d.heads())));
            ex.refusal = Some(RefusalOut {
                change_hashes: hashes,
                bytes,
                refusal,
                server_doc,
                at: now,
            });
            return Ok(ex);
        }
        let Some(mut doc) = doc else {
            return Ok(ex);
        };
        let heads = heads_to_hex(&sorted(doc.heads()));
        ex.message = reply_message(&mut doc, &device_heads, &need);
        ex.received = Received {
            will_have: Some(heads.clone()),
            has: device_has,
        };
        ex.ack = Some(heads);
        Ok(ex)
    }

    /// Commits one examined record, in request order: actor bindings (once per request),
    /// the stored change with the next sequence number, then the refusal or the answer.
    fn commit(
        &self,
        ex: Examined,
        sender: &Sender,
        record_id: Uuid,
        seq: &mut u64,
        bound: &mut BTreeSet<String>,
        out: &mut Outgoing,
    ) -> Received {
        for actor in ex.bindings {
            if bound.insert(actor.clone()) {
                out.effects.push(ServerEffect::BindActor {
                    actor,
                    device_id: sender.agent.device_id,
                });
            }
        }
        if let Some(mut stored) = ex.stored {
            *seq += 1;
            stored.seq = *seq;
            out.effects.push(ServerEffect::StoreRecord(stored));
        }
        if let Some(r) = ex.refusal {
            self.reject(
                out,
                sender,
                record_id,
                r.change_hashes,
                r.bytes,
                r.refusal,
                r.server_doc,
                r.at,
            );
        }
        if let Some(heads) = ex.ack {
            out.response.accepted.push(Ack { record_id, heads });
        }
        if let Some(bytes) = ex.message {
            out.response.messages.push(DocMessage {
                record_id,
                message: Bytes(bytes),
            });
        }
        ex.received
    }

    #[allow(clippy::too_many_arguments)]
    fn reject(
        &self,
        out: &mut Outgoing,
        sender: &Sender,
        record_id: Uuid,
        change_hashes: Vec<String>,
        bytes: Vec<u8>,
        refusal: Refusal,
        server_doc: Option<Vec<u8>>,
        now: DateTime<Utc>,
    ) {
        out.effects.push(ServerEffect::Quarantine(QuarantineEntry {
            record_id,
            device_id: sender.agent.device_id,
            user_id: sender.agent.user_id.clone(),
            role: sender.agent.role,
            code: refusal.code,
            message: refusal.message.clone(),
            change_hashes: change_hashes.clone(),
            bytes,
            at: now,
        }));
        out.response.rejections.push(Rejection {
            record_id,
            change_hashes,
            code: refusal.code,
            message: refusal.message,
            server_doc: server_doc.map(Bytes),
        });
    }

    /// A change made on the server itself (the office appending a review or penalty event from
    /// its desk), through the same vetting and effects as a device's: `edit` runs on a copy of
    /// the record under `sender`'s actor; what it changed is vetted, then stored with the next
    /// sequence number. Devices receive it on their next sync.
    pub fn edit<S, F>(
        &self,
        store: &mut S,
        sender: &Sender,
        registry: Option<&RegistryIndex<'_>>,
        record_id: Uuid,
        now: DateTime<Utc>,
        edit: F,
    ) -> Result<EditOutcome, SyncError>
    where
        S: ServerSyncStore,
        F: FnOnce(&mut RecordDoc) -> Result<(), RecordError>,
    {
        let stored = store
            .record(record_id)
            .map_err(boxed)?
            .ok_or(SyncError::UnknownRecord(record_id))?;
        let mut server = load_stored(record_id, &stored.doc)?;
        let view = server
            .view()
            .map_err(|source| SyncError::Stored { record_id, source })?;
        if !may_see(sender, &view) {
            return Ok(EditOutcome::Refused {
                code: RejectionCode::NotVisible,
                message: String::from("este registro não pertence a este usuário"),
            });
        }
        let server_heads = sorted(server.heads());
        let mut scratch = server.fork();
        if let Err(e) = edit(&mut scratch) {
            return Ok(EditOutcome::Refused {
                code: code_of_record_error(&e),
                message: e.to_string(),
            });
        }
        let changes = changes_after(scratch.automerge_mut(), &server_heads);
        if changes.is_empty() {
            return Ok(EditOutcome::Unchanged);
        }
        let mut lookup = |actor: &str| -> Result<Option<Uuid>, BindingError> {
            store
                .actor_device(actor)
                .map_err(|e| BindingError(Box::new(e)))
        };
        let registry = RegistryAccess {
            registry: registry.map(|i| i.registry),
            given: registry,
            lazy: None,
        };
        let vetted = match vet_changes(
            Some((&server, view)),
            scratch.into_automerge(),
            &server_heads,
            changes,
            sender,
            &registry,
            &mut lookup,
            now,
        ) {
            Ok(v) => v,
            Err(VetFailure::Bindings(BindingError(e))) => return Err(SyncError::Store(e)),
            Err(VetFailure::NoRegistry) => return Err(SyncError::RegistryUnavailable),
        };
        if let Some((_, refusal)) = vetted.refused {
            // Nothing of a refused server-side edit is stored: it was never sent by anyone,
            // so there is no evidence to keep, only an error to show.
            return Ok(EditOutcome::Refused {
                code: refusal.code,
                message: refusal.message,
            });
        }
        let Some(mut doc) = vetted.doc else {
            return Ok(EditOutcome::Unchanged);
        };
        let seq = store.current_seq().map_err(boxed)? + 1;
        let mut effects: Vec<ServerEffect> = vetted
            .new_bindings
            .into_iter()
            .map(|actor| ServerEffect::BindActor {
                actor,
                device_id: sender.agent.device_id,
            })
            .collect();
        let stored = stored_change(
            &mut doc,
            vetted.view,
            None,
            record_id,
            seq,
            false,
            &server_heads,
            &vetted.accepted,
            &sender.agent,
            now,
        )?;
        let view = Box::new(stored.view.clone());
        effects.push(ServerEffect::StoreRecord(Box::new(stored)));
        Ok(EditOutcome::Applied { view, effects })
    }
}

/// Decodes what arrived into `scratch`. Returns the heads the device has and what it asked for.
fn decode_into(
    scratch: &mut AutoCommit,
    record_id: Uuid,
    incoming: Incoming<'_>,
) -> Result<(Vec<ChangeHash>, Vec<ChangeHash>), String> {
    match incoming {
        Incoming::Whole(bytes) if scratch.get_heads().is_empty() => {
            // A record new to the server: the loaded document becomes the scratch copy as it
            // is. Not viewed here (sync bench): the vetting views the record after
            // each of its changes anyway, and refuses as malformed whatever is not a record.
            let mut am = AutoCommit::load(bytes).map_err(|e| e.to_string())?;
            let id = RecordDoc::claimed_id(&am);
            if id != Some(record_id) {
                return Err(format!(
                    "o documento não é do registro {record_id} ({})",
                    id.map_or_else(|| String::from("sem identificador"), |i| i.to_string())
                ));
            }
            let heads = am.get_heads();
            *scratch = am;
            Ok((heads, Vec::new()))
        }
        Incoming::Whole(bytes) => {
            let mut doc = RecordDoc::load(bytes).map_err(|e| e.to_string())?;
            if doc.id() != record_id {
                return Err(format!(
                    "o documento é do registro {}, não de {record_id}",
                    doc.id()
                ));
            }
            let heads = doc.heads();
            scratch
                .merge(doc.automerge_mut())
                .map_err(|e| e.to_string())?;
            Ok((heads, Vec::new()))
        }
        Incoming::Message(bytes) => {
            let msg = Message::decode(bytes).map_err(|e| e.to_string())?;
            // The changes travel as raw chunks and are inflated when applied: bound them first.
            crate::records::check_inflated_parts(msg.changes.iter()).map_err(|e| e.to_string())?;
            let heads = msg.heads.clone();
            let need = msg.need.clone();
            scratch
                .sync()
                .receive_sync_message(&mut State::new(), msg)
                .map_err(|e| e.to_string())?;
            // Whatever arrived must still be this record (whether it still reads as a record
            // at all, the vetting judges change by change).
            if let Some(id) = RecordDoc::claimed_id(scratch)
                && id != record_id
            {
                return Err(format!("a mensagem é do registro {id}, não de {record_id}"));
            }
            Ok((heads, need))
        }
    }
}

/// A sync message with every change of `doc` that a peer holding `peer_heads` lacks (plus any
/// it asked for in `need`); `None` when there is none.
pub(crate) fn reply_message(
    doc: &mut RecordDoc,
    peer_heads: &[ChangeHash],
    need: &[ChangeHash],
) -> Option<Vec<u8>> {
    let am = doc.automerge_mut();
    // The peer's state as we know it, so that Automerge sends exactly what it lacks without
    // first asking for its heads (which costs a round trip).
    let mut state = State::new();
    state.shared_heads = peer_heads.to_vec();
    state.their_heads = Some(peer_heads.to_vec());
    state.their_have = Some(vec![Have {
        last_sync: peer_heads.to_vec(),
        bloom: Default::default(),
    }]);
    state.their_need = Some(need.to_vec());
    let msg = am.sync().generate_sync_message(&mut state)?;
    if msg.changes.is_empty() {
        return None;
    }
    Some(msg.encode())
}

/// Hands `effects` to the store (nothing to do for none).
fn persist<S: ServerSyncStore>(store: &mut S, effects: Vec<ServerEffect>) -> Result<(), SyncError> {
    if effects.is_empty() {
        return Ok(());
    }
    store.persist(effects).map_err(boxed)
}

fn has_all(doc: &mut RecordDoc, heads: &[ChangeHash]) -> bool {
    has_all_am(doc.automerge_mut(), heads)
}

fn has_all_am(doc: &mut AutoCommit, heads: &[ChangeHash]) -> bool {
    doc.get_missing_deps(heads).is_empty()
}

fn load_stored(record_id: Uuid, bytes: &[u8]) -> Result<RecordDoc, SyncError> {
    RecordDoc::load(bytes).map_err(|source| SyncError::Stored { record_id, source })
}

#[allow(clippy::too_many_arguments)]
fn stored_change(
    doc: &mut RecordDoc,
    // The view of `doc` if the caller has it (vetting computed it): not materialised twice.
    view: Option<RecordView>,
    // The whole record as the device sent it, when that is exactly `doc` (a new record with
    // every change accepted): then it is both the save and the change log entry.
    as_sent: Option<&[u8]>,
    record_id: Uuid,
    seq: u64,
    created: bool,
    before_heads: &[ChangeHash],
    accepted: &[ChangeHash],
    by: &Agent,
    at: DateTime<Utc>,
) -> Result<StoredChange, SyncError> {
    let view = match view {
        Some(v) => v,
        None => doc
            .view()
            .map_err(|source| SyncError::Stored { record_id, source })?,
    };
    let (saved, changes) = match as_sent {
        Some(bytes) => (bytes.to_vec(), bytes.to_vec()),
        None => (doc.save(), doc.automerge_mut().save_after(before_heads)),
    };
    let heads = sorted(doc.heads());
    Ok(StoredChange {
        record_id,
        seq,
        created,
        doc: saved,
        changes,
        change_hashes: accepted.iter().map(ChangeHash::to_string).collect(),
        heads: heads_to_hex(&heads),
        view,
        by: by.clone(),
        at,
    })
}

/// The rejection code matching a refusal of the records API (for server-side edits).
fn code_of_record_error(e: &RecordError) -> RejectionCode {
    match e {
        RecordError::Sealed { .. } | RecordError::AlreadyIssued => RejectionCode::SealedField,
        RecordError::RoleNotAllowed { .. } | RecordError::NotAuthor { .. } => {
            RejectionCode::RoleForbidden
        }
        RecordError::OutsideStand { .. } => RejectionCode::OutsideStand,
        RecordError::EventRefused { .. }
        | RecordError::OnlyLightSettled
        | RecordError::WitnessRequired
        | RecordError::NoConflict { .. } => RejectionCode::InvalidEvent,
        RecordError::TooLarge { .. } => RejectionCode::TooLarge,
        // An invalid input to the office's own action (a value that is not among a conflict's)
        // is not evidence: it keeps the code the records API has always answered.
        _ => RejectionCode::Malformed,
    }
}
