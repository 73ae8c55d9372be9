//! Field records in PostgreSQL: the record sync run inside one write transaction, and the
//! office's queries over the projection.
//!
//! Flow of [`sync`] (one write transaction, after the database-wide write lock (`pool`), so
//! what `ServerSync` read is what its effects are written over — the SQLite backend's
//! `IMMEDIATE` transaction, held across nodes):
//! 1. resolve the caller's records role (an officer's body from `officer_bodies`);
//! 2. run `ServerSync::handle_indexed` under a savepoint; it reads through [`TxStore`]
//!    (records, per-device state, actor bindings, the change sequence, the records this device
//!    may see) — synchronous calls on the `Conn`, whose blocking API is what lets the pure
//!    protocol code ask the async driver — and hands it its effects in order, a window of
//!    records at a time (`TxStore::persist`, while it decodes the next window);
//! 3. each effect is written by [`apply`]: an accepted batch rewrites the record's document
//!    and projection, logs the batch in `record_changes` (its change hashes — the bytes stay
//!    only in the document —, sender and time) and one row to the audit chain (payload: the
//!    digest of its change hashes) and claims its auto number in `record_numbers` (the vetting
//!    checked it against the device's leased blocks and the numbers held, reading them through
//!    [`TxStore`]); refused changes go to `record_quarantine` (a replay finds them already
//!    there) while the device is within its quarantine quota (`taxi_fiscal_store::limits`);
//!    actor bindings and per-device state are upserted; a batch that issues a record with a
//!    device seal (the vetting verified it against the device's registered keys, read into
//!    `Sender::device_keys`) also gets its receipt, countersigned by the server key with the
//!    receive time and device clock offset, and an audit row carrying the receipt digest
//!    (`write_receipt`, `taxi_fiscal_store::receipts`);
//! 4. the pool commits, then the handler answers. Any error rolls everything back (an exchange
//!    refused as a whole, to the savepoint) and the device retries the same request later.
//!
//! The reads `ServerSync` makes are plain functions over any `Conn` (`read_record`, …), so
//! that an exchange prepared on a read snapshot (`super::optimistic`) reads the same way.
//!
//! Where PostgreSQL differs: lists bound for `json_each` in SQLite are `text[]` parameters
//! (`= ANY(?)`, `array_position`); `instr` is `strpos`; an all-digits auto number sorts as
//! `numeric` (no overflow on a long one, where a `bigint` cast would fail the query); SQLite's
//! `INDEXED BY` hints are left to the planner (the same indexes exist); the filter's SQL is
//! written with `?` and numbered once finished (`projection::numbered`).

use crate::Result;
use crate::pool::Conn;
use crate::projection::{SqlValue, list as list_arg, opt_text, params, text};
use chrono::{DateTime, Utc};
use sync_core::records::{EventKind, UserRole};
use sync_core::sync::{
    Changed, EditOutcome, PeerState, ServerEffect, ServerRecord, ServerSyncStore, StoredChange,
    SyncError,
};
use tokio_postgres::Row;
use uuid::Uuid;

use crate::parse_time;
pub(crate) use crate::{corrupt, to_i64, to_u64};
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
    tx: &'a Conn<'c>,
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
pub(crate) struct ReceiptContext<'a> {
    pub(crate) key: &'a taxi_fiscal_store::receipts::ServerKey,
    /// The device clock the request carried.
    pub(crate) device_clock: Option<DateTime<Utc>>,
}

/// The records `sender` may see with `after < seq <= up_to`, ascending, at most `limit`
/// (see `TxStore::visible_changes`).
pub(crate) fn visible_changes(
    conn: &Conn<'_>,
    sender: &sync_core::sync::Sender,
    after: u64,
    up_to: u64,
    limit: usize,
) -> Result<Vec<Changed>> {
    let role = sender.agent.role;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let (after, up_to) = (to_i64(after), to_i64(up_to));
    let rows = match (role, sender.stand.as_deref()) {
        (UserRole::Admin, _) => return Ok(Vec::new()),
        (UserRole::Office, _) => conn.query(
            "SELECT id, seq FROM records WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3",
            &[&after, &up_to, &limit],
        )?,
        // Each arm reads its own index (`records_author_seq`, the partial
        // `records_stand_transgressions_seq`), cut at `limit` before the merge.
        (UserRole::Coordinator, Some(stand)) => conn.query(
            "(SELECT id, seq FROM records
                  WHERE author_user_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4)
             UNION
             (SELECT id, seq FROM records
                  WHERE kind = 'transgression' AND stand_id = $5 AND seq > $2 AND seq <= $3
                  ORDER BY seq LIMIT $4)
             ORDER BY seq LIMIT $4",
            &[&sender.agent.user_id, &after, &up_to, &limit, &stand],
        )?,
        _ => conn.query(
            "SELECT id, seq FROM records
             WHERE author_user_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
            &[&sender.agent.user_id, &after, &up_to, &limit],
        )?,
    };
    rows.iter()
        .map(|r| {
            let id: String = r.try_get(0)?;
            Ok(Changed {
                record_id: Uuid::parse_str(&id).map_err(|e| corrupt("records", e))?,
                seq: to_u64(r.try_get(1)?),
            })
        })
        .collect()
}

// The reads of `ServerSync`, over any transaction: the write transaction (`TxStore`) or the
// read snapshot of an exchange prepared outside the writer (`super::optimistic`).

pub(crate) fn read_record(conn: &Conn<'_>, id: &str) -> Result<Option<ServerRecord>> {
    conn.query_opt("SELECT doc, seq FROM records WHERE id = $1", &[&id])?
        .map(|r| {
            Ok(ServerRecord {
                doc: r.try_get(0)?,
                seq: to_u64(r.try_get(1)?),
            })
        })
        .transpose()
}

/// The stored per-device state (JSON), as stored.
pub(crate) fn read_peer(conn: &Conn<'_>, device: &str, record: &str) -> Result<Option<String>> {
    conn.query_opt(
        "SELECT state FROM record_peers WHERE device_uuid = $1 AND record_id = $2",
        &[&device, &record],
    )?
    .map(|r| r.try_get(0))
    .transpose()
    .map_err(Into::into)
}

/// The device UUID (text) an actor is bound to.
pub(crate) fn read_actor(conn: &Conn<'_>, actor: &str) -> Result<Option<String>> {
    conn.query_opt(
        "SELECT device_uuid FROM actor_bindings WHERE actor = $1",
        &[&actor],
    )?
    .map(|r| r.try_get(0))
    .transpose()
    .map_err(Into::into)
}

pub(crate) fn read_current_seq(conn: &Conn<'_>) -> Result<u64> {
    let n: i64 = conn
        .query_one("SELECT coalesce(max(seq), 0) FROM records", &[])?
        .try_get(0)?;
    Ok(to_u64(n))
}

/// Blocks are leased to registered device ids; the protocol UUID is derived from the one the
/// caller authenticated with, so another device's UUID has none.
pub(crate) fn read_number_leased(
    conn: &Conn<'_>,
    caller: &Caller,
    device: Uuid,
    number: u64,
) -> Result<bool> {
    if sync_core::sync::device_uuid(&caller.device_id) != device {
        return Ok(false);
    }
    Ok(conn
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM number_blocks
                 WHERE device_id = $1 AND $2 BETWEEN start_no AND end_no)",
            &[&caller.device_id, &to_i64(number)],
        )?
        .try_get(0)?)
}

/// The record (id text) holding an auto number.
pub(crate) fn read_number_holder(conn: &Conn<'_>, number: &str) -> Result<Option<String>> {
    conn.query_opt(
        "SELECT record_id FROM record_numbers WHERE number = $1",
        &[&number],
    )?
    .map(|r| r.try_get(0))
    .transpose()
    .map_err(Into::into)
}

pub(crate) fn uuid_of(what: &'static str, s: &str) -> Result<Uuid> {
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
    /// Each scope reads its own index range on `seq`, so a device's scan costs the changes it
    /// may see since its cursor, not every record changed since then: the office the whole
    /// range, anyone else their own records, a coordinator also their stand's transgressions —
    /// each arm cut at `limit` before the merge, which keeps the first `limit` of the union.
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
pub(crate) fn resolve_role(
    tx: &Conn<'_>,
    caller: &Caller,
    claims: impl Iterator<Item = UserRole>,
) -> Result<(Option<UserRole>, bool)> {
    if caller.role != Role::Officer {
        return Ok((record_role(caller.role, None), false));
    }
    let bound: Option<String> = tx
        .query_opt(
            "SELECT record_role FROM officer_bodies WHERE user_id = $1",
            &[&caller.user_id],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
    if let Some(b) = bound {
        let role = UserRole::parse(&b).ok_or_else(|| corrupt("officer_bodies", &b))?;
        return Ok((Some(role), false));
    }
    let mut claims = claims.filter(|r| r.is_inspector());
    Ok((record_role(Role::Officer, claims.next()), true))
}

/// What the request's new records say about their author's body (only for an officer without
/// a bound body; the vetting still checks every record against the resulting role).
pub(crate) fn claims_of<'a>(job: &'a SyncJob) -> impl Iterator<Item = UserRole> + 'a {
    job.request.new_records.iter().filter_map(|r| {
        let view = sync_core::records::RecordDoc::load(r.doc.as_slice())
            .ok()?
            .view()
            .ok()?;
        (view.author.user_id == job.caller.user_id).then_some(view.author.role)
    })
}

/// Binds an officer's body, claimed by the first record they stored.
pub(crate) fn bind_body(
    tx: &Conn<'_>,
    caller: &Caller,
    role: UserRole,
    at: DateTime<Utc>,
) -> Result<()> {
    tx.execute(
        "INSERT INTO officer_bodies (user_id, record_role, bound_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
        &[&caller.user_id, &role.as_str(), &format_at(at)],
    )?;
    Ok(())
}

/// A store error `ServerSync` carried back, as this crate's error again.
pub(crate) fn store_error(e: Box<dyn std::error::Error + Send + Sync>) -> crate::Error {
    match e.downcast::<crate::Error>() {
        Ok(e) => *e,
        Err(e) => StoreError::Task(e.to_string()).into(),
    }
}

/// Runs one sync exchange and persists its effects (see the module doc).
pub(crate) fn sync(tx: &Conn<'_>, job: &SyncJob) -> Result<SyncOutcome> {
    let caller = &job.caller;
    let (role, unbound) = resolve_role(tx, caller, claims_of(job))?;
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
    tx.batch_execute("SAVEPOINT sync_exchange")?;
    let outcome = job.logic.handle_indexed(
        &mut store,
        &sender,
        &job.registry.index(),
        &job.request,
        job.now,
    );
    let response = match outcome {
        Ok(response) => {
            tx.batch_execute("RELEASE SAVEPOINT sync_exchange")?;
            response
        }
        Err(SyncError::Store(e)) => return Err(store_error(e)),
        Err(e) => {
            tx.batch_execute(
                "ROLLBACK TO SAVEPOINT sync_exchange; RELEASE SAVEPOINT sync_exchange",
            )?;
            return Ok(Err(e));
        }
    };
    if unbound && store.created && role.is_inspector() {
        bind_body(tx, caller, role, job.now)?;
    }
    Ok(Ok(response))
}

/// An office event through the same vetting and effects as a device's change.
pub(crate) fn office_event(tx: &Conn<'_>, job: &EventJob) -> Result<EventOutcome> {
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
pub(crate) fn append_office_event(
    tx: &Conn<'_>,
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
        Err(SyncError::Store(e)) => return Err(store_error(e)),
        Err(e) => return Err(corrupt("records", e)),
    }
    Ok(Ok(()))
}

/// Persists `ServerSync`'s effects in order.
pub(crate) fn apply(
    tx: &Conn<'_>,
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
                tx.execute(
                    "INSERT INTO actor_bindings (actor, device_uuid, device_id, bound_at)
                     VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                    &[&actor, &device_id.to_string(), &caller.device_id, &now],
                )?;
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
                tx.execute(
                    "INSERT INTO record_quarantine (record_id, device_id, user_id, role, code,
                         message, change_hashes, bytes, bytes_sha256, at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                     ON CONFLICT DO NOTHING",
                    &[
                        &q.record_id.to_string(),
                        &q.device_id.to_string(),
                        &q.user_id,
                        &q.role.as_str(),
                        &q.code.as_str(),
                        &q.message,
                        &hashes,
                        &q.bytes,
                        &payload_hash(&q.bytes),
                        &format_at(q.at),
                    ],
                )?;
            }
            ServerEffect::SavePeerState {
                device_id,
                record_id,
                state,
            } => {
                tx.execute(
                    "INSERT INTO record_peers (device_uuid, record_id, state, updated_at)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (device_uuid, record_id) DO UPDATE SET state = excluded.state,
                         updated_at = excluded.updated_at",
                    &[
                        &device_id.to_string(),
                        &record_id.to_string(),
                        &state.to_json(),
                        &now,
                    ],
                )?;
            }
        }
    }
    Ok(())
}

/// Whether the device (protocol UUID) may have one more quarantine row of `len` bytes under
/// the quotas of `taxi_fiscal_store::limits` (the oldest rows are kept, none is ever deleted).
pub(crate) fn quarantine_has_room(tx: &Conn<'_>, device: &str, len: usize) -> Result<bool> {
    let r = tx.query_one(
        "SELECT count(*), coalesce(sum(octet_length(bytes)), 0)::bigint FROM record_quarantine
         WHERE device_id = $1",
        &[&device],
    )?;
    let rows = to_u64(r.try_get(0)?);
    let bytes = to_u64(r.try_get(1)?);
    Ok(rows < MAX_QUARANTINE_ROWS_PER_DEVICE
        && bytes.saturating_add(len as u64) <= MAX_QUARANTINE_BYTES_PER_DEVICE)
}

/// The projection columns of a record (shared by the backends: `taxi_fiscal_store::records`).
pub(crate) use taxi_fiscal_store::records::project;

/// An accepted batch: document, projection, change log and audit row, in the caller's
/// transaction.
fn store_change(tx: &Conn<'_>, caller: &Caller, s: &StoredChange, action: &str) -> Result<()> {
    let id = s.record_id.to_string();
    let p = project(&s.view);
    let heads = serde_json::to_string(&s.heads).map_err(|e| corrupt("records", e))?;
    let at = format_at(s.at);
    tx.execute(
        "INSERT INTO records (id, kind, seq, doc, heads, number, status, plate, stand_id,
             permit_number, author_user_id, author_role, author_device_id, occurred_at, sealed,
             invalid_events, conflicts, created_at, updated_at, rules)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
             $18, $18, $19)
         ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, doc = excluded.doc,
             heads = excluded.heads, number = excluded.number, status = excluded.status,
             plate = excluded.plate, stand_id = excluded.stand_id,
             permit_number = excluded.permit_number, sealed = excluded.sealed,
             invalid_events = excluded.invalid_events, conflicts = excluded.conflicts,
             updated_at = excluded.updated_at, rules = excluded.rules",
        &[
            &id,
            &s.view.kind.as_str(),
            &to_i64(s.seq),
            &s.doc,
            &heads,
            &p.number,
            &p.status,
            &p.plate,
            &p.stand_id,
            &p.permit_number,
            &p.author_user_id,
            &p.author_role,
            &p.author_device_id,
            &p.occurred_at,
            &p.sealed,
            &p.invalid_events,
            &p.conflicts,
            &at,
            &p.rules,
        ],
    )?;
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
    tx.execute(
        "INSERT INTO record_changes (record_id, seq, change_hashes, user_id, device_id, at,
             audit_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &id,
            &to_i64(s.seq),
            &hashes,
            &caller.user_id,
            &caller.device_id,
            &at,
            &to_i64(row.seq),
        ],
    )?;
    Ok(())
}

/// The receipt of a record this batch issued with a device seal (the vetting verified it):
/// countersigned, anchored in the audit chain, written once. Nothing for a record without a
/// seal (issued by an app before device keys) or one already receipted.
fn write_receipt(
    tx: &Conn<'_>,
    caller: &Caller,
    s: &StoredChange,
    ctx: &ReceiptContext<'_>,
    now: DateTime<Utc>,
) -> Result<()> {
    let Some(seal) = &s.view.seal else {
        return Ok(());
    };
    let id = s.record_id.to_string();
    let exists: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM record_receipts WHERE record_id = $1)",
            &[&id],
        )?
        .try_get(0)?;
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
    tx.execute(
        "INSERT INTO record_receipts (record_id, verification_code, device_id,
             device_public_key, device_signature, evidence_sha256, issued_at, received_at,
             device_clock_offset_ms, server_public_key, server_signature, receipt_sha256,
             audit_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        &[
            &receipt.record_id,
            &receipt.verification_code,
            &receipt.device_id,
            &receipt.device_public_key,
            &receipt.device_signature,
            &receipt.evidence_sha256,
            &format_at(receipt.issued_at),
            &format_at(receipt.received_at),
            &receipt.device_clock_offset_ms,
            &receipt.server_public_key,
            &receipt.server_signature,
            &receipt.receipt_sha256,
            &to_i64(row.seq),
        ],
    )?;
    // The public verification page finds printed autos and notifications through one table.
    super::notifications::register_auto_code(tx, &code, &id, now)?;
    Ok(())
}

/// The keys a device registered, oldest first (`Sender::device_keys`).
pub(crate) fn device_keys(
    tx: &Conn<'_>,
    device_id: &str,
) -> Result<Vec<sync_core::sync::RegisteredKey>> {
    let rows = tx.query(
        "SELECT public_key, registered_at FROM device_keys WHERE device_id = $1
         ORDER BY registered_at, public_key",
        &[&device_id],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let key: String = r.try_get(0)?;
        let registered_at = parse_time(r.try_get::<_, &str>(1)?)?;
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
pub(crate) fn register_device_key(
    tx: &Conn<'_>,
    device_id: &str,
    public_key: &str,
    at: DateTime<Utc>,
) -> Result<taxi_fiscal_store::KeyRegistration> {
    use taxi_fiscal_store::KeyRegistration;
    let owner: Option<String> = tx
        .query_opt(
            "SELECT device_id FROM device_keys WHERE public_key = $1",
            &[&public_key],
        )?
        .map(|r| r.try_get(0))
        .transpose()?;
    match owner {
        Some(d) if d == device_id => return Ok(KeyRegistration::Known),
        Some(_) => return Ok(KeyRegistration::OtherDevice),
        None => {}
    }
    tx.execute(
        "INSERT INTO device_keys (public_key, device_id, registered_at) VALUES ($1, $2, $3)",
        &[&public_key, &device_id, &format_at(at)],
    )?;
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

fn receipt_from(r: &Row) -> Result<taxi_fiscal_store::receipts::Receipt> {
    Ok(taxi_fiscal_store::receipts::Receipt {
        record_id: r.try_get(0)?,
        verification_code: r.try_get(1)?,
        device_id: r.try_get(2)?,
        device_public_key: r.try_get(3)?,
        device_signature: r.try_get(4)?,
        evidence_sha256: r.try_get(5)?,
        issued_at: parse_time(r.try_get::<_, &str>(6)?)?,
        received_at: parse_time(r.try_get::<_, &str>(7)?)?,
        device_clock_offset_ms: r.try_get(8)?,
        server_public_key: r.try_get(9)?,
        server_signature: r.try_get(10)?,
        receipt_sha256: r.try_get(11)?,
        audit_seq: to_u64(r.try_get(12)?),
    })
}

/// The receipt of one record.
pub(crate) fn receipt_of(
    conn: &Conn<'_>,
    record_id: &str,
) -> Result<Option<taxi_fiscal_store::receipts::Receipt>> {
    let sql = format!("SELECT {RECEIPT_COLUMNS} FROM record_receipts WHERE record_id = $1");
    conn.query_opt(&sql, &[&record_id])?
        .as_ref()
        .map(receipt_from)
        .transpose()
}

/// The receipt of the auto whose verification code is `code`.
pub(crate) fn receipt_by_code(
    conn: &Conn<'_>,
    code: &documents::VerificationCode,
) -> Result<Option<taxi_fiscal_store::receipts::Receipt>> {
    let sql = format!("SELECT {RECEIPT_COLUMNS} FROM record_receipts WHERE verification_code = $1");
    conn.query_opt(&sql, &[&code.compact()])?
        .as_ref()
        .map(receipt_from)
        .transpose()
}

/// Records that `id` holds auto number `number`, in the same transaction as the record. The
/// vetting refused a number another record holds; the table's keys guard it again, and a
/// clash here (a bug, or a write that raced the vetting) fails the whole exchange instead of
/// storing a second auto with the same number.
fn claim_number(tx: &Conn<'_>, id: &str, number: &str) -> Result<()> {
    // The number as an integer when it is one (device blocks), for counting a device's unused
    // numbers (`field::unused_numbers`).
    let value = number.trim().parse::<u64>().ok().map(to_i64);
    // One round trip: the claim, and the holder when the number was held already (the
    // `SELECT` reads the statement's snapshot, which does not hold the row just inserted).
    let holder: Option<String> = tx
        .query(
            "WITH claimed AS (
                 INSERT INTO record_numbers (number, record_id, value) VALUES ($1, $2, $3)
                 ON CONFLICT DO NOTHING RETURNING record_id)
             SELECT record_id FROM claimed
             UNION ALL
             SELECT record_id FROM record_numbers WHERE number = $1",
            &[&number, &id, &value],
        )?
        .first()
        .map(|r| r.try_get(0))
        .transpose()?;
    if holder.as_deref() != Some(id) {
        return Err(corrupt(
            "record_numbers",
            format!("auto number {number} already held by another record"),
        ));
    }
    Ok(())
}

// ------------------------------------------------------------------------------------ reading

pub(crate) const ROW_COLUMNS: &str = "id, kind, number, status, plate, stand_id, permit_number,
    author_user_id, author_role, occurred_at, sealed, invalid_events, conflicts, created_at,
    updated_at, seq";

/// A row selected with [`ROW_COLUMNS`] first.
pub(crate) fn row_from(r: &Row) -> Result<RecordRow> {
    let count = |i: usize| -> Result<u32> {
        let n: i64 = r.try_get(i)?;
        u32::try_from(n).map_err(|e| corrupt("records", e))
    };
    Ok(RecordRow {
        id: r.try_get(0)?,
        kind: r.try_get(1)?,
        number: r.try_get(2)?,
        status: r.try_get(3)?,
        plate: r.try_get(4)?,
        stand_id: r.try_get(5)?,
        permit_number: r.try_get(6)?,
        author_user_id: r.try_get(7)?,
        author_role: r.try_get(8)?,
        occurred_at: parse_time(r.try_get::<_, &str>(9)?)?,
        sealed: r.try_get(10)?,
        invalid_events: count(11)?,
        conflicts: count(12)?,
        created_at: parse_time(r.try_get::<_, &str>(13)?)?,
        updated_at: parse_time(r.try_get::<_, &str>(14)?)?,
        seq: to_u64(r.try_get(15)?),
    })
}

/// One record with its document.
pub(crate) fn record(conn: &Conn<'_>, id: &str) -> Result<Option<RecordDoc>> {
    let sql = format!("SELECT {ROW_COLUMNS}, doc, heads FROM records WHERE id = $1");
    let Some(r) = conn.query_opt(&sql, &[&id])? else {
        return Ok(None);
    };
    let heads: &str = r.try_get(17)?;
    Ok(Some(RecordDoc {
        row: row_from(&r)?,
        doc: r.try_get(16)?,
        heads: serde_json::from_str(heads).map_err(|e| corrupt("records", e))?,
    }))
}

/// The `WHERE` clause of a filter (`?` placeholders, numbered by the caller once the statement
/// is whole: `projection::numbered`) and its arguments; `with_status: false` leaves the status
/// out (the inbox's counts per status).
pub(crate) fn where_of(f: &RecordFilter, with_status: bool) -> (String, Vec<SqlValue>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut args: Vec<SqlValue> = Vec::new();
    let mut push = |clause: &'static str, v: SqlValue| {
        clauses.push(clause.to_owned());
        args.push(v);
    };
    if let Some(s) = f.status.as_ref().filter(|_| with_status) {
        push("status = ?", text(s.clone()));
    }
    if let Some(k) = &f.kind {
        push("kind = ?", text(k.clone()));
    }
    if let Some(s) = &f.stand_id {
        push("stand_id = ?", text(s.clone()));
    }
    if let Some(o) = &f.officer {
        push("author_user_id = ?", text(o.clone()));
    }
    if let Some(p) = &f.plate {
        push("plate = ?", text(p.clone()));
    }
    if let Some(t) = f.from {
        push("occurred_at >= ?", text(format_at(t)));
    }
    if let Some(t) = f.to {
        push("occurred_at < ?", text(format_at(t)));
    }
    if let Some(r) = &f.rule {
        // Through `record_rules`' key: the records of that rule, not a search of every row's
        // space-separated `rules`; `R2` does not match `R24`.
        push(
            "id IN (SELECT record_id FROM record_rules WHERE rule = ?)",
            text(r.trim().to_uppercase()),
        );
    }
    if !f.statuses.is_empty() {
        push("status = ANY(?)", list_arg(&f.statuses));
    }
    if !f.not_statuses.is_empty() {
        push("status <> ALL(?)", list_arg(&f.not_statuses));
    }
    // One clause per word, each an OR over the columns; `strpos`, not LIKE, so that `%` and
    // `_` typed in the search mean themselves. The lists are bound as `text[]`: one parameter
    // each, whatever their length.
    for w in &f.search {
        clauses.push(
            "(strpos(coalesce(number, ''), ?) > 0
              OR strpos(upper(coalesce(permit_number, '')), ?) > 0
              OR strpos(coalesce(plate, ''), ?) > 0
              OR plate = ?
              OR permit_number = ANY(?)
              OR author_user_id = ANY(?))"
                .to_owned(),
        );
        args.push(text(w.text.clone()));
        args.push(text(w.text.clone()));
        args.push(text(w.text.clone()));
        args.push(opt_text(w.plate.clone()));
        args.push(list_arg(&w.permits));
        args.push(list_arg(&w.authors));
    }
    let filter = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    (filter, args)
}

/// The `ORDER BY` of a page and its arguments (bound after the `WHERE`'s; `?` placeholders).
/// The expressions are fixed strings chosen by the enum; only the rank lists are bound.
/// Missing values last, then newest first and the id, so that every order is total and pages
/// do not overlap.
pub(crate) fn order_of(o: &taxi_fiscal_store::records::RecordOrder) -> (String, Vec<SqlValue>) {
    use taxi_fiscal_store::records::RecordSort as S;
    // The position in the list (NULL when absent: last), as SQLite's `json_each` key.
    let rank = "array_position(?::text[], {col})";
    let (expr, args) = match &o.by {
        S::Occurred => ("occurred_at".to_owned(), vec![]),
        // All digits: by value (`numeric`, which no number overflows).
        S::Number => (
            "CASE WHEN number ~ '^[0-9]+$' THEN number::numeric END".to_owned(),
            vec![],
        ),
        S::Kind => ("kind".to_owned(), vec![]),
        S::Plate => ("plate".to_owned(), vec![]),
        S::Permit => ("permit_number".to_owned(), vec![]),
        S::Rules => ("nullif(rules, '')".to_owned(), vec![]),
        S::Pending => ("(conflicts + invalid_events)".to_owned(), vec![]),
        S::Stand(ids) => (
            rank.replace("{col}", "records.stand_id"),
            vec![list_arg(ids)],
        ),
        S::Author(ids) => (
            rank.replace("{col}", "records.author_user_id"),
            vec![list_arg(ids)],
        ),
        S::Status(ids) => (rank.replace("{col}", "records.status"), vec![list_arg(ids)]),
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
        // forward or backward), with no sort of the tied rows.
        return (format!("occurred_at {dir}, id {dir}"), args);
    }
    (
        format!("{expr} {dir} NULLS LAST{then_text}, occurred_at DESC, id DESC"),
        args,
    )
}

/// The projection, filtered, newest first, with the total.
pub(crate) fn list(conn: &Conn<'_>, f: &RecordFilter) -> Result<RecordPage> {
    let sel = super::projection::select(f);
    let total: i64 = conn
        .query_dynamic(&sel.total.0, &params(&sel.total.1))?
        .first()
        .map(|r| r.try_get(0))
        .transpose()?
        .unwrap_or(0);
    let (page, page_args) = sel.page_query(ROW_COLUMNS, f);
    let items = conn
        .query_dynamic(&page, &params(&page_args))?
        .iter()
        .map(row_from)
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordPage {
        total: to_u64(total),
        items,
    })
}

/// Audit rows of one record, oldest first.
pub(crate) fn audit(conn: &Conn<'_>, id: &str) -> Result<Vec<AuditRow>> {
    conn.query(
        "SELECT seq, at, user_id, device_id, action, subject, payload_hash, prev_hash, hash
         FROM audit_log WHERE subject = $1 ORDER BY seq",
        &[&format!("record:{id}")],
    )?
    .iter()
    .map(super::audit::row_from)
    .collect()
}

/// Refused changes of one record, oldest first.
pub(crate) fn quarantine(conn: &Conn<'_>, id: &str) -> Result<Vec<QuarantineRow>> {
    conn.query(
        "SELECT id, record_id, device_id, user_id, role, code, message, change_hashes,
             octet_length(bytes)::bigint, at
         FROM record_quarantine WHERE record_id = $1 ORDER BY id",
        &[&id],
    )?
    .iter()
    .map(|r| {
        let hashes: &str = r.try_get(7)?;
        Ok(QuarantineRow {
            id: to_u64(r.try_get(0)?),
            record_id: r.try_get(1)?,
            device_uuid: r.try_get(2)?,
            user_id: r.try_get(3)?,
            role: r.try_get(4)?,
            code: r.try_get(5)?,
            message: r.try_get(6)?,
            change_hashes: serde_json::from_str(hashes)
                .map_err(|e| corrupt("record_quarantine", e))?,
            size: to_u64(r.try_get(8)?),
            at: parse_time(r.try_get::<_, &str>(9)?)?,
        })
    })
    .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::quarantine_has_room;
    use crate::PgStore;
    use crate::pool::Conn;
    use taxi_fiscal_store::limits::{
        MAX_QUARANTINE_BYTES_PER_DEVICE, MAX_QUARANTINE_ROWS_PER_DEVICE,
    };

    async fn db() -> PgStore {
        PgStore::open(&crate::test_db::fresh().await).await.unwrap()
    }

    fn record_row(conn: &Conn<'_>, seq: i64, author: &str, kind: &str, stand: Option<&str>) {
        conn.execute(
            "INSERT INTO records (id, kind, seq, doc, heads, status, stand_id, author_user_id,
                 author_role, author_device_id, occurred_at, sealed, created_at, updated_at)
             VALUES ($1, $2, $3, '\\x00', '[]', 'issued', $4, $5, 'guarda_municipal', 'd',
                 '2026-01-01T00:00:00Z', FALSE, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
            &[
                &uuid::Uuid::from_u128(seq as u128).to_string(),
                &kind,
                &seq,
                &stand,
                &author,
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
    #[tokio::test]
    async fn each_scope_sees_what_may_see_allows_in_seq_order() {
        use sync_core::records::UserRole;
        let store = db().await;
        store
            .pool
            .write(|conn| {
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
                    record_row(conn, seq, author, kind, stand);
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
                        let got: Vec<u64> = super::visible_changes(conn, s, after, up_to, limit)
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
                Ok(())
            })
            .await
            .unwrap();
    }

    /// A non-office device's scan can read its own index ranges (`records_author_seq`, the
    /// partial `records_stand_transgressions_seq`), never needing the whole table since its
    /// cursor. (With sequential scans priced out: on a table this small the planner would
    /// rightly prefer one.)
    #[tokio::test]
    async fn a_devices_scan_reads_its_own_index_ranges() {
        let store = db().await;
        store
            .pool
            .write(|conn| {
                conn.batch_execute("SET LOCAL enable_seqscan = off")?;
                for (sql, index) in [
                    (
                        "EXPLAIN SELECT id, seq FROM records
                         WHERE author_user_id = 'u' AND seq > 0 AND seq <= 10
                         ORDER BY seq LIMIT 5",
                        "records_author_seq",
                    ),
                    (
                        "EXPLAIN SELECT id, seq FROM records
                         WHERE kind = 'transgression' AND stand_id = 'p' AND seq > 0
                             AND seq <= 10 ORDER BY seq LIMIT 5",
                        "records_stand_transgressions_seq",
                    ),
                ] {
                    let plan: Vec<String> = conn
                        .query_dynamic(sql, &[])?
                        .iter()
                        .map(|r| r.get::<_, String>(0))
                        .collect();
                    assert!(plan.iter().any(|p| p.contains(index)), "{plan:?}");
                    assert!(!plan.iter().any(|p| p.contains("Sort")), "{plan:?}");
                }
                Ok(())
            })
            .await
            .unwrap();
    }

    /// `n` quarantine rows of `len` bytes for `device`, in one statement.
    fn rows(conn: &Conn<'_>, n: i64, device: &str, len: i32, tag: &str) {
        conn.execute(
            "INSERT INTO record_quarantine (record_id, device_id, user_id, role, code, message,
                 change_hashes, bytes, bytes_sha256, at)
             SELECT 'r', $1, 'u', 'guarda_municipal', 'malformed', 'm', '[]',
                 decode(repeat('00', $2), 'hex'), $3 || i, 't'
             FROM generate_series(1, $4::bigint) AS i",
            &[&device, &len, &tag, &n],
        )
        .unwrap();
    }

    #[tokio::test]
    async fn quarantine_rows_per_device_are_bounded() {
        let store = db().await;
        store
            .pool
            .write(|tx| {
                let max = i64::try_from(MAX_QUARANTINE_ROWS_PER_DEVICE).unwrap();
                rows(tx, max - 1, "d1", 1, "a");
                assert!(quarantine_has_room(tx, "d1", 1)?);
                rows(tx, 1, "d1", 1, "b");
                assert!(!quarantine_has_room(tx, "d1", 1)?);
                assert!(quarantine_has_room(tx, "d2", 1)?);
                Ok(())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn quarantine_bytes_per_device_are_bounded() {
        let store = db().await;
        store
            .pool
            .write(|tx| {
                let big = i32::try_from(MAX_QUARANTINE_BYTES_PER_DEVICE).unwrap() - 10;
                rows(tx, 1, "d1", big, "a");
                assert!(quarantine_has_room(tx, "d1", 10)?);
                assert!(!quarantine_has_room(tx, "d1", 11)?);
                Ok(())
            })
            .await
            .unwrap();
    }
}
