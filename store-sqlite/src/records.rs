//! Field records in SQLite: the record sync run inside one write transaction, and the office's
//! queries over the projection.
//!
//! A device's exchange is first prepared on a reader and committed by the writer
//! (`super::optimistic`); [`sync`] is the serial way, taken when a read changed between the
//! two, and the reads and [`apply`] below are what both share.
//!
//! Flow of [`sync`] (one `IMMEDIATE` transaction, so what `ServerSync` read is what its effects
//! are written over):
//! 1. resolve the caller's records role (an officer's body from `officer_bodies`);
//! 2. run `ServerSync::handle` under a savepoint; it reads through [`TxStore`] (records,
//!    per-device state, actor bindings, the change sequence, the records this device may see)
//!    and hands it its effects in order, a window of records at a time (`TxStore::persist`,
//!    while it decodes the next window);
//! 3. each effect is written by [`apply`]: an accepted batch rewrites the record's document
//!    and projection, logs the batch in `record_changes` (its change hashes — the bytes stay only in the
//!    document —, sender and time) and one row to the audit chain
//!    (payload: the digest of its change hashes) and claims its auto number in
//!    `record_numbers` (the vetting checked it against the device's leased blocks and the
//!    numbers held, reading them through [`TxStore`]); refused changes go to
//!    `record_quarantine` (a replay finds them already there) while the device is within its
//!    quarantine quota (`taxi_fiscal_store::limits`); actor bindings and per-device state are upserted;
//!    a batch that issues a record with a device seal (the vetting verified it against the
//!    device's registered keys, read into `Sender::device_keys`) also gets its receipt,
//!    countersigned by the server key with the receive time and device clock offset, and an
//!    audit row carrying the receipt digest (`write_receipt`, `taxi_fiscal_store::receipts`);
//! 4. the pool commits, then the handler answers. Any error rolls everything back (an exchange
//!    refused as a whole, to the savepoint) and the device retries the same request later.

use crate::Result;
use chrono::{DateTime, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params, params_from_iter};
use sync_core::records::{EventKind, UserRole};
use sync_core::sync::{
    Changed, EditOutcome, PeerState, ServerEffect, ServerRecord, ServerSyncStore, StoredChange,
    SyncError,
};
use uuid::Uuid;

use super::{bad_text, parse_time};
use taxi_fiscal_store::Role;
use taxi_fiscal_store::StoreError;
use taxi_fiscal_store::audit::{
    AuditEntry, AuditRow, change_hashes_digest, format_at, payload_hash,
};
use taxi_fiscal_store::limits::{MAX_QUARANTINE_BYTES_PER_DEVICE, MAX_QUARANTINE_ROWS_PER_DEVICE};
use taxi_fiscal_store::records::{
    Caller, EventJob, EventOutcome, QuarantineRow, RecordDoc, RecordFilter, RecordPage, RecordRow,
    SyncJob, SyncOutcome, record_role, sender_of,
};

/// `ServerSyncStore` over the write transaction.
struct TxStore<'a, 'c> {
    tx: &'a Transaction<'c>,
    /// Who the effects are persisted for (audit rows), and as what action.
    caller: &'a Caller,
    action: &'static str,
    now: DateTime<Utc>,
    /// Whether a persisted effect created a record.
    created: bool,
    /// How to countersign a record the effects issue (`None`: server-side edits, which never
    /// issue).
    receipts: Option<&'a ReceiptContext<'a>>,
}

/// What the receipt of a record issued in this exchange needs besides the record.
pub(super) struct ReceiptContext<'a> {
    pub(super) key: &'a taxi_fiscal_store::receipts::ServerKey,
    /// The device clock the request carried.
    pub(super) device_clock: Option<DateTime<Utc>>,
}

pub(super) fn corrupt(what: &'static str, reason: impl ToString) -> crate::Error {
    crate::Error::Store(StoreError::Corrupt {
        what,
        reason: reason.to_string(),
    })
}

pub(super) fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The records `sender` may see with `after < seq <= up_to`, ascending, at most `limit`
/// (see `TxStore::visible_changes`).
pub(super) fn visible_changes(
    conn: &Connection,
    sender: &sync_core::sync::Sender,
    after: u64,
    up_to: u64,
    limit: usize,
) -> Result<Vec<Changed>> {
    let role = sender.agent.role;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let (after, up_to) = (to_i64(after), to_i64(up_to));
    let rows: Vec<(String, i64)> = match (role, sender.stand.as_deref()) {
        (UserRole::Admin, _) => return Ok(Vec::new()),
        (UserRole::Office, _) => conn
            .prepare_cached(
                "SELECT id, seq FROM records WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3",
            )?
            .query_map(params![after, up_to, limit], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?,
        (UserRole::Coordinator, Some(stand)) => conn
            .prepare_cached(
                "SELECT id, seq FROM (
                     SELECT id, seq FROM records INDEXED BY records_author_seq
                     WHERE author_user_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4)
                 UNION
                 SELECT id, seq FROM (
                     SELECT id, seq FROM records INDEXED BY records_stand_transgressions_seq
                     WHERE kind = 'transgression' AND stand_id = ?5 AND seq > ?2 AND seq <= ?3
                     ORDER BY seq LIMIT ?4)
                 ORDER BY seq LIMIT ?4",
            )?
            .query_map(
                params![sender.agent.user_id, after, up_to, limit, stand],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .collect::<Result<_, _>>()?,
        _ => conn
            .prepare_cached(
                "SELECT id, seq FROM records INDEXED BY records_author_seq
                 WHERE author_user_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4",
            )?
            .query_map(params![sender.agent.user_id, after, up_to, limit], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<_, _>>()?,
    };
    rows.into_iter()
        .map(|(id, seq)| {
            Ok(Changed {
                record_id: Uuid::parse_str(&id).map_err(|e| corrupt("records", e))?,
                seq: to_u64(seq),
            })
        })
        .collect()
}

// The reads of `ServerSync`, over any connection: the write transaction (`TxStore`) or the
// read snapshot of an exchange prepared outside the writer (`super::optimistic`).

pub(super) fn read_record(conn: &Connection, id: &str) -> Result<Option<ServerRecord>> {
    Ok(conn
        .prepare_cached("SELECT doc, seq FROM records WHERE id = ?1")?
        .query_row([id], |r| {
            Ok(ServerRecord {
                doc: r.get(0)?,
                seq: to_u64(r.get(1)?),
            })
        })
        .optional()?)
}

/// The stored per-device state (JSON), as stored.
pub(super) fn read_peer(conn: &Connection, device: &str, record: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT state FROM record_peers WHERE device_uuid = ?1 AND record_id = ?2")?
        .query_row([device, record], |r| r.get(0))
        .optional()?)
}

/// The device UUID (text) an actor is bound to.
pub(super) fn read_actor(conn: &Connection, actor: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT device_uuid FROM actor_bindings WHERE actor = ?1")?
        .query_row([actor], |r| r.get(0))
        .optional()?)
}

pub(super) fn read_current_seq(conn: &Connection) -> Result<u64> {
    let n: i64 = conn.query_row("SELECT coalesce(max(seq), 0) FROM records", [], |r| {
        r.get(0)
    })?;
    Ok(to_u64(n))
}

/// Blocks are leased to registered device ids; the protocol UUID is derived from the one the
/// caller authenticated with, so another device's UUID has none.
pub(super) fn read_number_leased(
    conn: &Connection,
    caller: &Caller,
    device: Uuid,
    number: u64,
) -> Result<bool> {
    if sync_core::sync::device_uuid(&caller.device_id) != device {
        return Ok(false);
    }
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM number_blocks
             WHERE device_id = ?1 AND ?2 BETWEEN start_no AND end_no",
        )?
        .exists(params![caller.device_id, to_i64(number)])?)
}

/// The record (id text) holding an auto number.
pub(super) fn read_number_holder(conn: &Connection, number: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT record_id FROM record_numbers WHERE number = ?1")?
        .query_row([number], |r| r.get(0))
        .optional()?)
}

pub(super) fn uuid_of(what: &'static str, s: &str) -> Result<Uuid> {
    Uuid::parse_str(s).map_err(|e| corrupt(what, e))
}

impl ServerSyncStore for TxStore<'_, '_> {
    type Error = crate::Error;

    fn record(&mut self, id: Uuid) -> Result<Option<ServerRecord>> {
        read_record(self.tx, &id.to_string())
    }

    fn peer_state(&mut self, device: Uuid, record: Uuid) -> Result<Option<PeerState>> {
        let s = read_peer(self.tx, &device.to_string(), &record.to_string())?;
        Ok(s.map(|s| PeerState::from_json(&s)))
    }

    fn actor_device(&mut self, actor: &str) -> Result<Option<Uuid>> {
        read_actor(self.tx, actor)?
            .map(|s| uuid_of("actor_bindings", &s))
            .transpose()
    }

    fn current_seq(&mut self) -> Result<u64> {
        read_current_seq(self.tx)
    }

    /// Mirrors `sync_core::sync::may_see` (which `ServerSync` checks again on each record).
    /// Each scope reads its own index range on `seq` (migration 014), so a device's scan costs
    /// the changes it may see since its cursor, not every record changed since then: the
    /// office the whole range, anyone else their own records, a coordinator also their
    /// stand's transgressions — each arm cut at `limit` before the merge, which keeps the
    /// first `limit` of the union.
    fn visible_changes(
        &mut self,
        sender: &sync_core::sync::Sender,
        after: u64,
        up_to: u64,
        limit: usize,
    ) -> Result<Vec<Changed>> {
        visible_changes(self.tx, sender, after, up_to, limit)
    }

    fn number_leased(&mut self, device: Uuid, number: u64) -> Result<bool> {
        read_number_leased(self.tx, self.caller, device, number)
    }

    fn number_holder(&mut self, number: &str) -> Result<Option<Uuid>> {
        read_number_holder(self.tx, number)?
            .map(|s| uuid_of("record_numbers", &s))
            .transpose()
    }

    fn persist(&mut self, effects: Vec<ServerEffect>) -> Result<()> {
        self.created |= effects
            .iter()
            .any(|e| matches!(e, ServerEffect::StoreRecord(s) if s.created));
        apply(
            self.tx,
            self.caller,
            effects,
            self.action,
            self.now,
            self.receipts,
        )
    }
}

/// The caller's records role: an officer's body is bound by their first record (or, before
/// that, claimed by the records in this request), Guarda Municipal by default.
pub(super) fn resolve_role(
    tx: &Transaction<'_>,
    caller: &Caller,
    claims: impl Iterator<Item = UserRole>,
) -> Result<(Option<UserRole>, bool)> {
    if caller.role != Role::Officer {
        return Ok((record_role(caller.role, None), false));
    }
    let bound: Option<String> = tx
        .prepare_cached("SELECT record_role FROM officer_bodies WHERE user_id = ?1")?
        .query_row([&caller.user_id], |r| r.get(0))
        .optional()?;
    if let Some(b) = bound {
        let role = UserRole::parse(&b).ok_or_else(|| corrupt("officer_bodies", &b))?;
        return Ok((Some(role), false));
    }
    let mut claims = claims.filter(|r| r.is_inspector());
    Ok((record_role(Role::Officer, claims.next()), true))
}

/// Runs one sync exchange and persists its effects (see the module doc).
pub(super) fn sync(tx: &Transaction<'_>, job: &SyncJob) -> Result<SyncOutcome> {
    let caller = &job.caller;
    // What the request's new records say about their author's body (only for an officer
    // without a bound body; the vetting still checks every record against the resulting role).
    let claims = job.request.new_records.iter().filter_map(|r| {
        let view = sync_core::records::RecordDoc::load(r.doc.as_slice())
            .ok()?
            .view()
            .ok()?;
        (view.author.user_id == caller.user_id).then_some(view.author.role)
    });
    let (role, unbound) = resolve_role(tx, caller, claims)?;
    let role = role.unwrap_or(UserRole::Admin);
    let mut sender = sender_of(caller, role);
    sender.device_keys = device_keys(tx, &caller.device_id)?;
    let receipts = ReceiptContext {
        key: &job.server_key,
        device_clock: job.request.device_clock,
    };
    // Incoming changes are checked against the registry: the permit a record names, and a
    // coordinator's art. 17 scope (`ServerSync` indexes the registry only for that).
    let mut store = TxStore {
        tx,
        caller,
        action: "record.sync",
        now: job.now,
        created: false,
        receipts: Some(&receipts),
    };
    // `handle` persists as it goes. An exchange refused midway (a stored record that no longer
    // loads, a coordinator's report without a registry) answers an error and must leave
    // nothing behind: it runs under a savepoint, rolled back then. A store error fails the
    // whole transaction instead (the pool rolls it back).
    tx.execute_batch("SAVEPOINT sync_exchange")?;
    let outcome = job.logic.handle_indexed(
        &mut store,
        &sender,
        &job.registry.index(),
        &job.request,
        job.now,
    );
    let response = match outcome {
        Ok(response) => {
            tx.execute_batch("RELEASE sync_exchange")?;
            response
        }
        Err(SyncError::Store(e)) => {
            return Err(match e.downcast::<crate::Error>() {
                Ok(e) => *e,
                Err(e) => StoreError::Task(e.to_string()).into(),
            });
        }
        Err(e) => {
            tx.execute_batch("ROLLBACK TO sync_exchange; RELEASE sync_exchange")?;
            return Ok(Err(e));
        }
    };
    if unbound && store.created && role.is_inspector() {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO officer_bodies (user_id, record_role, bound_at)
             VALUES (?1, ?2, ?3)",
        )?
        .execute(params![caller.user_id, role.as_str(), format_at(job.now)])?;
    }
    Ok(Ok(response))
}

/// An office event through the same vetting and effects as a device's change.
pub(super) fn office_event(tx: &Transaction<'_>, job: &EventJob) -> Result<EventOutcome> {
    let index = job.registry.index();
    if let Err(refused) = append_office_event(
        tx,
        &job.caller,
        &index,
        &job.record_id,
        job.event.clone(),
        job.at,
        job.now,
    )? {
        return Ok(refused);
    }
    match record(tx, &job.record_id)? {
        Some(doc) => Ok(EventOutcome::Applied(Box::new(doc))),
        None => Ok(EventOutcome::NotFound),
    }
}

/// One office event, vetted and stored with its projection and audit row, in the caller's
/// transaction. `Ok(Err(_))`: refused or not found (`EventOutcome::Refused` / `NotFound`),
/// nothing written.
pub(super) fn append_office_event(
    tx: &Transaction<'_>,
    caller: &Caller,
    index: &sync_core::domain::RegistryIndex<'_>,
    record_id: &str,
    event: EventKind,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Result<(), EventOutcome>> {
    let Ok(record_id) = Uuid::parse_str(record_id) else {
        return Ok(Err(EventOutcome::NotFound));
    };
    let Some(role) = record_role(caller.role, None) else {
        return Ok(Err(EventOutcome::Refused {
            code: sync_core::sync::RejectionCode::RoleForbidden,
            message: String::from("administradores não escrevem em registros"),
        }));
    };
    let sender = sender_of(caller, role);
    let agent = sender.agent.clone();
    let outcome = {
        let mut store = TxStore {
            tx,
            caller,
            action: "record.office",
            now,
            created: false,
            receipts: None,
        };
        sync_core::sync::ServerSync::default().edit(
            &mut store,
            &sender,
            Some(index),
            record_id,
            now,
            move |d| match event {
                EventKind::ConflictResolved { field, value } => {
                    d.resolve_conflict(&agent, at, &field, &value).map(|_| ())
                }
                other => d.append_event(&agent, at, other).map(|_| ()),
            },
        )
    };
    match outcome {
        Ok(EditOutcome::Applied { effects, .. }) => {
            apply(tx, caller, effects, "record.office", now, None)?;
        }
        Ok(EditOutcome::Unchanged) => {}
        Ok(EditOutcome::Refused { code, message }) => {
            return Ok(Err(EventOutcome::Refused { code, message }));
        }
        Err(SyncError::UnknownRecord(_)) => return Ok(Err(EventOutcome::NotFound)),
        Err(SyncError::Store(e)) => {
            return Err(match e.downcast::<crate::Error>() {
                Ok(e) => *e,
                Err(e) => StoreError::Task(e.to_string()).into(),
            });
        }
        Err(e) => return Err(corrupt("records", e)),
    }
    Ok(Ok(()))
}

/// Persists `ServerSync`'s effects in order.
pub(super) fn apply(
    tx: &Transaction<'_>,
    caller: &Caller,
    effects: Vec<ServerEffect>,
    action: &str,
    at: DateTime<Utc>,
    receipts: Option<&ReceiptContext<'_>>,
) -> Result<()> {
    let now = format_at(at);
    for effect in effects {
        match effect {
            ServerEffect::StoreRecord(s) => {
                store_change(tx, caller, &s, action)?;
                if let Some(ctx) = receipts {
                    write_receipt(tx, caller, &s, ctx, at)?;
                }
            }
            ServerEffect::BindActor { actor, device_id } => {
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO actor_bindings (actor, device_uuid, device_id, bound_at)
                     VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![
                    actor,
                    device_id.to_string(),
                    caller.device_id,
                    now
                ])?;
            }
            ServerEffect::Quarantine(q) => {
                if !quarantine_has_room(tx, &q.device_id.to_string(), q.bytes.len())? {
                    // Still refused (the device is told); only the evidence is not kept.
                    tracing::warn!(
                        device = %caller.device_id,
                        record = %q.record_id,
                        code = q.code.as_str(),
                        "quarantine quota reached: refused change not stored"
                    );
                    continue;
                }
                let hashes = serde_json::to_string(&q.change_hashes)
                    .map_err(|e| corrupt("record_quarantine", e))?;
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO record_quarantine (record_id, device_id, user_id, role,
                         code, message, change_hashes, bytes, bytes_sha256, at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )?
                .execute(params![
                    q.record_id.to_string(),
                    q.device_id.to_string(),
                    q.user_id,
                    q.role.as_str(),
                    q.code.as_str(),
                    q.message,
                    hashes,
                    q.bytes,
                    payload_hash(&q.bytes),
                    format_at(q.at)
                ])?;
            }
            ServerEffect::SavePeerState {
                device_id,
                record_id,
                state,
            } => {
                tx.prepare_cached(
                    "INSERT INTO record_peers (device_uuid, record_id, state, updated_at)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (device_uuid, record_id) DO UPDATE SET state = excluded.state,
                         updated_at = excluded.updated_at",
                )?
                .execute(params![
                    device_id.to_string(),
                    record_id.to_string(),
                    state.to_json(),
                    now
                ])?;
            }
        }
    }
    Ok(())
}

/// Whether the device (protocol UUID) may have one more quarantine row of `len` bytes under
/// the quotas of `taxi_fiscal_store::limits` (the oldest rows are kept, none is ever deleted).
fn quarantine_has_room(tx: &Transaction<'_>, device: &str, len: usize) -> Result<bool> {
    let (rows, bytes): (i64, i64) = tx
        .prepare_cached(
            "SELECT count(*), coalesce(sum(length(bytes)), 0) FROM record_quarantine
             WHERE device_id = ?1",
        )?
        .query_row([device], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let rows = u64::try_from(rows).unwrap_or(0);
    let bytes = u64::try_from(bytes).unwrap_or(0);
    Ok(rows < MAX_QUARANTINE_ROWS_PER_DEVICE
        && bytes.saturating_add(len as u64) <= MAX_QUARANTINE_BYTES_PER_DEVICE)
}

/// The projection columns of a record (shared by the backends: `taxi_fiscal_store::records`).
pub(crate) use taxi_fiscal_store::records::{project, rules_of};

/// An accepted batch: document, projection, change log and audit row, in the caller's
/// transaction.
fn store_change(
    tx: &Transaction<'_>,
    caller: &Caller,
    s: &StoredChange,
    action: &str,
) -> Result<()> {
    let id = s.record_id.to_string();
    let p = project(&s.view);
    let heads = serde_json::to_string(&s.heads).map_err(|e| corrupt("records", e))?;
    let at = format_at(s.at);
    tx.prepare_cached(
        "INSERT INTO records (id, kind, seq, doc, heads, number, status, plate, stand_id,
             permit_number, author_user_id, author_role, author_device_id, occurred_at, sealed,
             invalid_events, conflicts, created_at, updated_at, rules)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
             ?18, ?18, ?19)
         ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, doc = excluded.doc,
             heads = excluded.heads, number = excluded.number, status = excluded.status,
             plate = excluded.plate, stand_id = excluded.stand_id,
             permit_number = excluded.permit_number, sealed = excluded.sealed,
             invalid_events = excluded.invalid_events, conflicts = excluded.conflicts,
             updated_at = excluded.updated_at, rules = excluded.rules",
    )?
    .execute(params![
        id,
        s.view.kind.as_str(),
        to_i64(s.seq),
        s.doc,
        heads,
        p.number,
        p.status,
        p.plate,
        p.stand_id,
        p.permit_number,
        p.author_user_id,
        p.author_role,
        p.author_device_id,
        p.occurred_at,
        p.sealed,
        p.invalid_events,
        p.conflicts,
        at,
        p.rules
    ])?;
    super::projection::write_rules(tx, &id, &p.rules, p.status, &p.occurred_at)?;
    if let Some(number) = &s.view.number {
        claim_number(tx, &id, number)?;
    }
    super::observed::note_merge(tx, &id, s.view.duplicate_of.as_deref())?;
    super::office::refresh_duplicate_candidates(tx, &id)?;
    let what = if s.created { "create" } else { "change" };
    let row = super::audit::append(
        tx,
        &AuditEntry {
            at: s.at,
            user_id: Some(caller.user_id.clone()),
            device_id: Some(caller.device_id.clone()),
            action: format!("{action}.{what}"),
            subject: format!("record:{id}"),
            payload_hash: change_hashes_digest(&s.change_hashes),
        },
    )?;
    let hashes = serde_json::to_string(&s.change_hashes).map_err(|e| corrupt("records", e))?;
    tx.prepare_cached(
        "INSERT INTO record_changes (record_id, seq, change_hashes, user_id, device_id, at,
             audit_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        id,
        to_i64(s.seq),
        hashes,
        caller.user_id,
        caller.device_id,
        at,
        to_i64(row.seq)
    ])?;
    Ok(())
}

/// The receipt of a record this batch issued with a device seal (the vetting verified it):
/// countersigned, anchored in the audit chain, written once. Nothing for a record without a
/// seal (issued by an app before device keys) or one already receipted.
fn write_receipt(
    tx: &Transaction<'_>,
    caller: &Caller,
    s: &StoredChange,
    ctx: &ReceiptContext<'_>,
    now: DateTime<Utc>,
) -> Result<()> {
    let Some(seal) = &s.view.seal else {
        return Ok(());
    };
    let id = s.record_id.to_string();
    let exists = tx
        .prepare_cached("SELECT 1 FROM record_receipts WHERE record_id = ?1")?
        .exists([&id])?;
    if exists {
        return Ok(());
    }
    let code = seal
        .verification_code()
        .map_err(|e| corrupt("records", e))?;
    let issued_at = s
        .view
        .events
        .iter()
        .find(|e| matches!(e.event, EventKind::Issued))
        .map_or(s.view.occurred_at, |e| e.at);
    let mut receipt = taxi_fiscal_store::receipts::Receipt {
        record_id: id.clone(),
        verification_code: code.compact().to_owned(),
        device_id: caller.device_id.clone(),
        device_public_key: seal.public_key.clone(),
        device_signature: seal.signature.clone(),
        evidence_sha256: seal.evidence_sha256.clone(),
        issued_at,
        received_at: now,
        device_clock_offset_ms: ctx.device_clock.map(|d| (now - d).num_milliseconds()),
        server_public_key: String::new(),
        server_signature: String::new(),
        receipt_sha256: String::new(),
        audit_seq: 0,
    };
    receipt.sign(ctx.key);
    let row = super::audit::append(
        tx,
        &AuditEntry {
            at: now,
            user_id: Some(caller.user_id.clone()),
            device_id: Some(caller.device_id.clone()),
            action: String::from("record.receipt"),
            subject: format!("record:{id}"),
            payload_hash: receipt.receipt_sha256.clone(),
        },
    )?;
    tx.prepare_cached(
        "INSERT INTO record_receipts (record_id, verification_code, device_id,
             device_public_key, device_signature, evidence_sha256, issued_at, received_at,
             device_clock_offset_ms, server_public_key, server_signature, receipt_sha256,
             audit_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        receipt.record_id,
        receipt.verification_code,
        receipt.device_id,
        receipt.device_public_key,
        receipt.device_signature,
        receipt.evidence_sha256,
        format_at(receipt.issued_at),
        format_at(receipt.received_at),
        receipt.device_clock_offset_ms,
        receipt.server_public_key,
        receipt.server_signature,
        receipt.receipt_sha256,
        to_i64(row.seq)
    ])?;
    // The public verification page finds printed autos and notifications through one table.
    super::notifications::register_auto_code(tx, &code, &id, now)?;
    Ok(())
}

/// The keys a device registered, oldest first (`Sender::device_keys`).
pub(super) fn device_keys(
    tx: &Transaction<'_>,
    device_id: &str,
) -> Result<Vec<sync_core::sync::RegisteredKey>> {
    let mut stmt = tx.prepare_cached(
        "SELECT public_key, registered_at FROM device_keys WHERE device_id = ?1
         ORDER BY registered_at, public_key",
    )?;
    let rows = stmt.query_map([device_id], |r| {
        Ok((r.get::<_, String>(0)?, parse_time(&r.get::<_, String>(1)?)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (key, registered_at) = row?;
        let public_key = hex::decode(&key)
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| corrupt("device_keys", &key))?;
        out.push(sync_core::sync::RegisteredKey {
            public_key,
            registered_at,
        });
    }
    Ok(out)
}

/// Registers a device's key at login (see `Store::register_device_key`).
pub(super) fn register_device_key(
    tx: &Transaction<'_>,
    device_id: &str,
    public_key: &str,
    at: DateTime<Utc>,
) -> Result<taxi_fiscal_store::KeyRegistration> {
    use taxi_fiscal_store::KeyRegistration;
    let owner: Option<String> = tx
        .prepare_cached("SELECT device_id FROM device_keys WHERE public_key = ?1")?
        .query_row([public_key], |r| r.get(0))
        .optional()?;
    match owner {
        Some(d) if d == device_id => return Ok(KeyRegistration::Known),
        Some(_) => return Ok(KeyRegistration::OtherDevice),
        None => {}
    }
    tx.prepare_cached(
        "INSERT INTO device_keys (public_key, device_id, registered_at) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![public_key, device_id, format_at(at)])?;
    super::audit::append(
        tx,
        &AuditEntry {
            at,
            user_id: None,
            device_id: Some(device_id.to_owned()),
            action: String::from("device.key.register"),
            subject: format!("device:{device_id}"),
            payload_hash: payload_hash(public_key.as_bytes()),
        },
    )?;
    Ok(KeyRegistration::Registered)
}

const RECEIPT_COLUMNS: &str = "record_id, verification_code, device_id, device_public_key,
    device_signature, evidence_sha256, issued_at, received_at, device_clock_offset_ms,
    server_public_key, server_signature, receipt_sha256, audit_seq";

fn receipt_from(r: &Row<'_>) -> rusqlite::Result<taxi_fiscal_store::receipts::Receipt> {
    Ok(taxi_fiscal_store::receipts::Receipt {
        record_id: r.get(0)?,
        verification_code: r.get(1)?,
        device_id: r.get(2)?,
        device_public_key: r.get(3)?,
        device_signature: r.get(4)?,
        evidence_sha256: r.get(5)?,
        issued_at: parse_time(&r.get::<_, String>(6)?)?,
        received_at: parse_time(&r.get::<_, String>(7)?)?,
        device_clock_offset_ms: r.get(8)?,
        server_public_key: r.get(9)?,
        server_signature: r.get(10)?,
        receipt_sha256: r.get(11)?,
        audit_seq: to_u64(r.get(12)?),
    })
}

/// The receipt of one record.
pub(super) fn receipt_of(
    conn: &Connection,
    record_id: &str,
) -> Result<Option<taxi_fiscal_store::receipts::Receipt>> {
    let sql = format!("SELECT {RECEIPT_COLUMNS} FROM record_receipts WHERE record_id = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([record_id], receipt_from)
        .optional()?)
}

/// The receipt of the auto whose verification code is `code`.
pub(super) fn receipt_by_code(
    conn: &Connection,
    code: &documents::VerificationCode,
) -> Result<Option<taxi_fiscal_store::receipts::Receipt>> {
    let sql = format!("SELECT {RECEIPT_COLUMNS} FROM record_receipts WHERE verification_code = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([code.compact()], receipt_from)
        .optional()?)
}

/// Records that `id` holds auto number `number`, in the same transaction as the record. The
/// vetting refused a number another record holds; the table's keys guard it again, and a
/// clash here (a bug, or a write that raced the vetting) fails the whole exchange instead of
/// storing a second auto with the same number.
fn claim_number(tx: &Transaction<'_>, id: &str, number: &str) -> Result<()> {
    // The number as an integer when it is one (device blocks), for counting a device's unused
    // numbers (`store::sqlite::field::unused_numbers`).
    let value = number.trim().parse::<u64>().ok().map(to_i64);
    tx.prepare_cached(
        "INSERT OR IGNORE INTO record_numbers (number, record_id, value) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![number, id, value])?;
    let holder: Option<String> = tx
        .prepare_cached("SELECT record_id FROM record_numbers WHERE number = ?1")?
        .query_row([number], |r| r.get(0))
        .optional()?;
    if holder.as_deref() != Some(id) {
        return Err(corrupt(
            "record_numbers",
            format!("auto number {number} already held by another record"),
        ));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------ reading

pub(super) const ROW_COLUMNS: &str = "id, kind, number, status, plate, stand_id, permit_number,
    author_user_id, author_role, occurred_at, sealed, invalid_events, conflicts, created_at,
    updated_at, seq";

pub(super) fn row_from(r: &Row<'_>) -> rusqlite::Result<RecordRow> {
    Ok(RecordRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        number: r.get(2)?,
        status: r.get(3)?,
        plate: r.get(4)?,
        stand_id: r.get(5)?,
        permit_number: r.get(6)?,
        author_user_id: r.get(7)?,
        author_role: r.get(8)?,
        occurred_at: parse_time(&r.get::<_, String>(9)?)?,
        sealed: r.get(10)?,
        invalid_events: u32::try_from(r.get::<_, i64>(11)?).map_err(|_| bad_text(11, "records"))?,
        conflicts: u32::try_from(r.get::<_, i64>(12)?).map_err(|_| bad_text(12, "records"))?,
        created_at: parse_time(&r.get::<_, String>(13)?)?,
        updated_at: parse_time(&r.get::<_, String>(14)?)?,
        seq: to_u64(r.get(15)?),
    })
}

/// One record with its document.
pub(super) fn record(conn: &Connection, id: &str) -> Result<Option<RecordDoc>> {
    let sql = format!("SELECT {ROW_COLUMNS}, doc, heads FROM records WHERE id = ?1");
    let found = conn
        .prepare_cached(&sql)?
        .query_row([id], |r| {
            Ok((
                row_from(r)?,
                r.get::<_, Vec<u8>>(16)?,
                r.get::<_, String>(17)?,
            ))
        })
        .optional()?;
    found
        .map(|(row, doc, heads)| {
            Ok(RecordDoc {
                row,
                doc,
                heads: serde_json::from_str(&heads).map_err(|e| corrupt("records", e))?,
            })
        })
        .transpose()
}

/// The `WHERE` clause of a filter and its arguments; `with_status: false` leaves the status
/// out (the inbox's counts per status).
pub(super) fn where_of(f: &RecordFilter, with_status: bool) -> (String, Vec<SqlValue>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut args: Vec<SqlValue> = Vec::new();
    let mut push = |clause: &'static str, v: SqlValue| {
        clauses.push(clause.to_owned());
        args.push(v);
    };
    if let Some(s) = f.status.as_ref().filter(|_| with_status) {
        push("status = ?", SqlValue::Text(s.clone()));
    }
    if let Some(k) = &f.kind {
        push("kind = ?", SqlValue::Text(k.clone()));
    }
    if let Some(s) = &f.stand_id {
        push("stand_id = ?", SqlValue::Text(s.clone()));
    }
    if let Some(o) = &f.officer {
        push("author_user_id = ?", SqlValue::Text(o.clone()));
    }
    if let Some(p) = &f.plate {
        push("plate = ?", SqlValue::Text(p.clone()));
    }
    if let Some(t) = f.from {
        push("occurred_at >= ?", SqlValue::Text(format_at(t)));
    }
    if let Some(t) = f.to {
        push("occurred_at < ?", SqlValue::Text(format_at(t)));
    }
    if let Some(r) = &f.rule {
        // Through `record_rules`' key (migration 015): the records of that rule, not a search
        // of every row's space-separated `rules`; `R2` does not match `R24`.
        push(
            "id IN (SELECT record_id FROM record_rules WHERE rule = ?)",
            SqlValue::Text(r.trim().to_uppercase()),
        );
    }
    if !f.statuses.is_empty() {
        push(
            "status IN (SELECT value FROM json_each(?))",
            json_list(&f.statuses),
        );
    }
    if !f.not_statuses.is_empty() {
        push(
            "status NOT IN (SELECT value FROM json_each(?))",
            json_list(&f.not_statuses),
        );
    }
    // One clause per word, each an OR over the columns; `instr`, not LIKE, so that `%` and `_`
    // typed in the search mean themselves. The lists are bound as JSON arrays: one parameter
    // each, whatever their length.
    for w in &f.search {
        clauses.push(
            "(instr(coalesce(number, ''), ?) > 0
              OR instr(upper(coalesce(permit_number, '')), ?) > 0
              OR instr(coalesce(plate, ''), ?) > 0
              OR plate = ?
              OR permit_number IN (SELECT value FROM json_each(?))
              OR author_user_id IN (SELECT value FROM json_each(?)))"
                .to_owned(),
        );
        let text = SqlValue::Text(w.text.clone());
        args.push(text.clone());
        args.push(text.clone());
        args.push(text);
        args.push(w.plate.clone().map_or(SqlValue::Null, SqlValue::Text));
        args.push(json_list(&w.permits));
        args.push(json_list(&w.authors));
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    (filter, args)
}

fn json_list(items: &[String]) -> SqlValue {
    SqlValue::Text(serde_json::to_string(items).unwrap_or_else(|_| "[]".to_owned()))
}

/// The `ORDER BY` of a page and its arguments (bound after the `WHERE`'s). The expressions are
/// fixed strings chosen by the enum; only the rank lists are bound. Missing values last, then
/// newest first and the id, so that every order is total and pages do not overlap.
pub(super) fn order_of(o: &taxi_fiscal_store::records::RecordOrder) -> (String, Vec<SqlValue>) {
    use taxi_fiscal_store::records::RecordSort as S;
    let rank = "(SELECT key FROM json_each(?) WHERE value = {col})";
    let (expr, args) = match &o.by {
        S::Occurred => ("occurred_at".to_owned(), vec![]),
        S::Number => (
            "CASE WHEN number GLOB '[0-9]*' AND NOT number GLOB '*[^0-9]*'
                THEN CAST(number AS INTEGER) END"
                .to_owned(),
            vec![],
        ),
        S::Kind => ("kind".to_owned(), vec![]),
        S::Plate => ("plate".to_owned(), vec![]),
        S::Permit => ("permit_number".to_owned(), vec![]),
        S::Rules => ("nullif(rules, '')".to_owned(), vec![]),
        S::Pending => ("(conflicts + invalid_events)".to_owned(), vec![]),
        S::Stand(ids) => (
            rank.replace("{col}", "records.stand_id"),
            vec![json_list(ids)],
        ),
        S::Author(ids) => (
            rank.replace("{col}", "records.author_user_id"),
            vec![json_list(ids)],
        ),
        S::Status(ids) => (
            rank.replace("{col}", "records.status"),
            vec![json_list(ids)],
        ),
    };
    let dir = if o.desc { "DESC" } else { "ASC" };
    // Numbers that are not integers sort after the integers, by their text.
    let then_text = if matches!(o.by, S::Number) {
        format!(", number {dir} NULLS LAST")
    } else {
        String::new()
    };
    if matches!(o.by, S::Occurred) {
        // `occurred_at` is never null: the order the `records_occurred` index holds (read
        // forward or backward), with no sort of the tied rows in a temporary B-tree.
        return (format!("occurred_at {dir}, id {dir}"), args);
    }
    (
        format!("{expr} {dir} NULLS LAST{then_text}, occurred_at DESC, id DESC"),
        args,
    )
}

/// The projection, filtered, newest first, with the total.
pub(super) fn list(conn: &Connection, f: &RecordFilter) -> Result<RecordPage> {
    let sel = super::projection::select(f);
    let total: i64 = conn.query_row(&sel.total.0, params_from_iter(sel.total.1.iter()), |r| {
        r.get(0)
    })?;
    let (page, page_args) = sel.page_query(ROW_COLUMNS, f);
    let mut stmt = conn.prepare(&page)?;
    let items = stmt
        .query_map(params_from_iter(page_args.iter()), row_from)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(RecordPage {
        total: to_u64(total),
        items,
    })
}

/// Audit rows of one record, oldest first.
pub(super) fn audit(conn: &Connection, id: &str) -> Result<Vec<AuditRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, at, user_id, device_id, action, subject, payload_hash, prev_hash, hash
         FROM audit_log WHERE subject = ?1 ORDER BY seq",
    )?;
    let rows = stmt.query_map([format!("record:{id}")], |r| {
        Ok(AuditRow {
            seq: to_u64(r.get(0)?),
            at: r.get(1)?,
            user_id: r.get(2)?,
            device_id: r.get(3)?,
            action: r.get(4)?,
            subject: r.get(5)?,
            payload_hash: r.get(6)?,
            prev_hash: r.get(7)?,
            hash: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

/// Refused changes of one record, oldest first.
pub(super) fn quarantine(conn: &Connection, id: &str) -> Result<Vec<QuarantineRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, record_id, device_id, user_id, role, code, message, change_hashes,
             length(bytes), at
         FROM record_quarantine WHERE record_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([id], |r| {
        let hashes: String = r.get(7)?;
        Ok(QuarantineRow {
            id: to_u64(r.get(0)?),
            record_id: r.get(1)?,
            device_uuid: r.get(2)?,
            user_id: r.get(3)?,
            role: r.get(4)?,
            code: r.get(5)?,
            message: r.get(6)?,
            change_hashes: serde_json::from_str(&hashes).map_err(|_| bad_text(7, "quarantine"))?,
            size: to_u64(r.get(8)?),
            at: parse_time(&r.get::<_, String>(9)?)?,
        })
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use rusqlite::Connection;

    use super::quarantine_has_room;
    use taxi_fiscal_store::limits::{
        MAX_QUARANTINE_BYTES_PER_DEVICE, MAX_QUARANTINE_ROWS_PER_DEVICE,
    };

    fn record_row(conn: &Connection, seq: i64, author: &str, kind: &str, stand: Option<&str>) {
        conn.execute(
            "INSERT INTO records (id, kind, seq, doc, heads, status, stand_id, author_user_id,
                 author_role, author_device_id, occurred_at, sealed, created_at, updated_at)
             VALUES (?1, ?2, ?3, x'00', '[]', 'issued', ?4, ?5, 'guarda_municipal', 'd',
                 '2026-01-01T00:00:00Z', 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
            rusqlite::params![
                uuid::Uuid::from_u128(seq as u128).to_string(),
                kind,
                seq,
                stand,
                author
            ],
        )
        .unwrap();
    }

    fn sender(
        user: &str,
        role: sync_core::records::UserRole,
        stand: Option<&str>,
    ) -> sync_core::sync::Sender {
        sync_core::sync::Sender {
            agent: sync_core::records::Agent::new(user, role, uuid::Uuid::nil()),
            stand: stand.map(String::from),
            device_keys: Vec::new(),
        }
    }

    /// Each scope's scan returns exactly what `may_see` lets the sender see, in `seq` order
    /// and cut at the limit, whatever the cursor: compared with the plain filter over every
    /// row, for an officer, a coordinator (own records and the stand's transgressions, one
    /// of them both), a coordinator without a stand, the office and the administrator.
    #[test]
    fn each_scope_sees_what_may_see_allows_in_seq_order() {
        use sync_core::records::UserRole;
        let conn = db();
        let authors = ["ana", "bia", "caio"];
        let stands = [Some("p1"), Some("p2"), None];
        let mut rows = Vec::new();
        for seq in 1..=240_i64 {
            let author = authors[(seq as usize * 7) % 3];
            let kind = if seq % 3 == 0 {
                "transgression"
            } else {
                "infraction"
            };
            let stand = stands[(seq as usize * 5) % 3];
            record_row(&conn, seq, author, kind, stand);
            rows.push((seq as u64, author, kind, stand));
        }
        let senders = [
            sender("ana", UserRole::GuardaMunicipal, None),
            sender("bia", UserRole::Coordinator, Some("p1")),
            sender("caio", UserRole::Coordinator, None),
            sender("ofc", UserRole::Office, None),
            sender("adm", UserRole::Admin, None),
        ];
        for s in &senders {
            for (after, up_to, limit) in [
                (0, 240, 1000),
                (0, 240, 7),
                (37, 200, 11),
                (239, 240, 5),
                (240, 240, 5),
            ] {
                let want: Vec<u64> = rows
                    .iter()
                    .filter(|(seq, author, kind, stand)| {
                        *seq > after
                            && *seq <= up_to
                            && match s.agent.role {
                                UserRole::Admin => false,
                                UserRole::Office => true,
                                UserRole::Coordinator => {
                                    *author == s.agent.user_id
                                        || (*kind == "transgression"
                                            && stand.is_some()
                                            && stand.map(String::from) == s.stand)
                                }
                                _ => *author == s.agent.user_id,
                            }
                    })
                    .map(|r| r.0)
                    .take(limit)
                    .collect();
                let got: Vec<u64> = super::visible_changes(&conn, s, after, up_to, limit)
                    .unwrap()
                    .into_iter()
                    .map(|c| c.seq)
                    .collect();
                assert_eq!(
                    got, want,
                    "{:?} after {after} up to {up_to} limit {limit}",
                    s.agent
                );
                if s.agent.role != UserRole::Admin && after == 0 && limit == 1000 {
                    assert!(!got.is_empty());
                }
            }
        }
    }

    /// A non-office device's scan reads its own index ranges, never the whole table since its
    /// cursor (which is every record for a new device).
    #[test]
    fn a_devices_scan_reads_its_own_index_ranges() {
        let conn = db();
        for sql in [
            "EXPLAIN QUERY PLAN SELECT id, seq FROM records INDEXED BY records_author_seq
             WHERE author_user_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4",
            "EXPLAIN QUERY PLAN SELECT id, seq FROM records INDEXED BY records_stand_transgressions_seq
             WHERE kind = 'transgression' AND stand_id = ?1 AND seq > ?2 AND seq <= ?3
             ORDER BY seq LIMIT ?4",
        ] {
            let plan: Vec<String> = conn
                .prepare(sql)
                .unwrap()
                .query_map(rusqlite::params!["u", 0, 10, 5], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            assert!(plan.iter().any(|p| p.contains("USING INDEX") && p.contains("seq>?")), "{plan:?}");
            assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "{plan:?}");
        }
    }

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn, ":memory:", true).unwrap();
        conn
    }

    fn row(conn: &Connection, n: u64, device: &str, len: usize) {
        conn.execute(
            "INSERT INTO record_quarantine (record_id, device_id, user_id, role, code, message,
                 change_hashes, bytes, bytes_sha256, at)
             VALUES ('r', ?1, 'u', 'guarda_municipal', 'malformed', 'm', '[]', ?2, ?3, 't')",
            rusqlite::params![device, vec![0u8; len], format!("{n}")],
        )
        .unwrap();
    }

    #[test]
    fn quarantine_rows_per_device_are_bounded() {
        let mut conn = db();
        let tx = conn.transaction().unwrap();
        for n in 0..MAX_QUARANTINE_ROWS_PER_DEVICE - 1 {
            row(&tx, n, "d1", 1);
        }
        assert!(quarantine_has_room(&tx, "d1", 1).unwrap());
        row(&tx, 1_000_000, "d1", 1);
        assert!(!quarantine_has_room(&tx, "d1", 1).unwrap());
        assert!(quarantine_has_room(&tx, "d2", 1).unwrap());
    }

    #[test]
    fn quarantine_bytes_per_device_are_bounded() {
        let mut conn = db();
        let tx = conn.transaction().unwrap();
        let big = usize::try_from(MAX_QUARANTINE_BYTES_PER_DEVICE).unwrap() - 10;
        row(&tx, 1, "d1", big);
        assert!(quarantine_has_room(&tx, "d1", 10).unwrap());
        assert!(!quarantine_has_room(&tx, "d1", 11).unwrap());
    }
}
