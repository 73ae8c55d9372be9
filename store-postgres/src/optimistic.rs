//! A record sync prepared outside the writer, committed by it: optimistic concurrency over the
//! one writer (the database-wide write lock, `pool`), so that parallel devices — on any node —
//! decode, merge and vet at the same time and only the writes are serialised.
//!
//! Flow of `Store::sync_records`:
//! 1. [`prepare`], in one read-only `REPEATABLE READ` transaction (a snapshot), without the
//!    write lock: the caller's records role and device keys, then
//!    `ServerSync::handle_indexed` over [`Snapshot`], which reads through the snapshot and
//!    *keeps* the effects instead of writing them (a later read of the same exchange sees
//!    them: a record it stored, an actor it bound, a number it claimed), and notes what it
//!    read: each record's sequence number (or its absence), this device's state of each
//!    record, actor bindings and auto-number holders ([`ReadSet`]). An exchange with no effect
//!    (a no-op sync, a device only catching up) is answered here and never takes the lock.
//! 2. [`commit`], in a write transaction after the lock: every read is checked again (each
//!    statement of a `READ COMMITTED` transaction sees every commit made before it, so what
//!    the check reads is what the writes go over); if one changed (another device's change to
//!    the same record, a number claimed meanwhile, the officer's body bound by another
//!    request), the exchange is run again the serial way, inside this transaction
//!    (`records::sync`), so the outcome is always what a serial run gives. Otherwise the kept
//!    effects are written, their sequence numbers moved above what other exchanges committed
//!    meanwhile (`delta`), and — when that happened — the response's cursor is set back to the
//!    snapshot's, so that the device's next request still asks for those other changes: a
//!    cursor never passes a change the device did not get.
//!
//! The same module as the SQLite backend's, over `Conn`; the lock is PostgreSQL's, so the
//! check-then-write holds across nodes too.

use crate::Result;
use crate::pool::Conn;
use std::collections::BTreeMap;

use sync_core::records::UserRole;
use sync_core::sync::{
    Changed, PeerState, RegisteredKey, Sender, ServerEffect, ServerRecord, ServerSyncStore,
    SyncError, SyncResponse,
};
use uuid::Uuid;

use super::records::{
    ReceiptContext, apply, bind_body, claims_of, device_keys, read_actor, read_current_seq,
    read_number_holder, read_number_leased, read_peer, read_record, resolve_role, store_error,
    uuid_of, visible_changes,
};
use taxi_fiscal_store::records::{Caller, SyncJob, SyncOutcome, sender_of};

/// What an exchange read, as it read it, to be checked again at commit.
#[derive(Debug, Default)]
pub(crate) struct ReadSet {
    /// Record id → its sequence number (`None`: absent).
    records: BTreeMap<String, Option<u64>>,
    /// (device UUID, record id) → the stored state (JSON).
    peers: BTreeMap<(String, String), Option<String>>,
    /// Actor → the device UUID it is bound to.
    actors: BTreeMap<String, Option<String>>,
    /// Auto number → the record holding it.
    numbers: BTreeMap<String, Option<String>>,
}

/// `ServerSyncStore` over the read snapshot: reads are noted, effects are kept.
struct Snapshot<'a, 'c> {
    conn: &'a Conn<'c>,
    caller: &'a Caller,
    reads: ReadSet,
    effects: Vec<ServerEffect>,
    snapshot_seq: Option<u64>,
}

impl Snapshot<'_, '_> {
    fn kept_record(&self, id: Uuid) -> Option<ServerRecord> {
        self.effects.iter().rev().find_map(|e| match e {
            ServerEffect::StoreRecord(s) if s.record_id == id => Some(ServerRecord {
                doc: s.doc.clone(),
                seq: s.seq,
            }),
            _ => None,
        })
    }
}

impl ServerSyncStore for Snapshot<'_, '_> {
    type Error = crate::Error;

    fn record(&mut self, id: Uuid) -> Result<Option<ServerRecord>> {
        if let Some(kept) = self.kept_record(id) {
            return Ok(Some(kept));
        }
        let key = id.to_string();
        let found = read_record(self.conn, &key)?;
        self.reads
            .records
            .entry(key)
            .or_insert(found.as_ref().map(|r| r.seq));
        Ok(found)
    }

    fn peer_state(&mut self, device: Uuid, record: Uuid) -> Result<Option<PeerState>> {
        let kept = self.effects.iter().rev().find_map(|e| match e {
            ServerEffect::SavePeerState {
                device_id,
                record_id,
                state,
            } if *device_id == device && *record_id == record => Some(state.clone()),
            _ => None,
        });
        if kept.is_some() {
            return Ok(kept);
        }
        let key = (device.to_string(), record.to_string());
        let found = read_peer(self.conn, &key.0, &key.1)?;
        let state = found.as_deref().map(PeerState::from_json);
        self.reads.peers.entry(key).or_insert(found);
        Ok(state)
    }

    fn actor_device(&mut self, actor: &str) -> Result<Option<Uuid>> {
        let kept = self.effects.iter().find_map(|e| match e {
            ServerEffect::BindActor {
                actor: a,
                device_id,
            } if a == actor => Some(*device_id),
            _ => None,
        });
        if kept.is_some() {
            return Ok(kept);
        }
        let found = read_actor(self.conn, actor)?;
        self.reads
            .actors
            .entry(actor.to_owned())
            .or_insert(found.clone());
        found.map(|s| uuid_of("actor_bindings", &s)).transpose()
    }

    fn current_seq(&mut self) -> Result<u64> {
        let stored = read_current_seq(self.conn)?;
        self.snapshot_seq.get_or_insert(stored);
        let kept = self
            .effects
            .iter()
            .filter_map(|e| match e {
                ServerEffect::StoreRecord(s) => Some(s.seq),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Ok(stored.max(kept))
    }

    fn visible_changes(
        &mut self,
        sender: &Sender,
        after: u64,
        up_to: u64,
        limit: usize,
    ) -> Result<Vec<Changed>> {
        visible_changes(self.conn, sender, after, up_to, limit)
    }

    /// Not checked again at commit: leases are only ever added, by the device itself, and a
    /// lease the snapshot missed only made a number look unleased (refused, the device retries).
    fn number_leased(&mut self, device: Uuid, number: u64) -> Result<bool> {
        read_number_leased(self.conn, self.caller, device, number)
    }

    fn number_holder(&mut self, number: &str) -> Result<Option<Uuid>> {
        let kept = self.effects.iter().find_map(|e| match e {
            ServerEffect::StoreRecord(s) if s.view.number.as_deref() == Some(number) => {
                Some(s.record_id)
            }
            _ => None,
        });
        if kept.is_some() {
            return Ok(kept);
        }
        let found = read_number_holder(self.conn, number)?;
        self.reads
            .numbers
            .entry(number.to_owned())
            .or_insert(found.clone());
        found.map(|s| uuid_of("record_numbers", &s)).transpose()
    }

    fn persist(&mut self, effects: Vec<ServerEffect>) -> Result<()> {
        self.effects.extend(effects);
        Ok(())
    }
}

/// An exchange prepared on the snapshot.
#[derive(Debug)]
pub(crate) enum Prepared {
    /// Nothing to write: the answer as it is (a no-op or catching-up sync, a refusal).
    Answer(SyncOutcome),
    /// Effects to write once the reads are checked again.
    Effects(Box<Exchange>),
}

#[derive(Debug)]
pub(crate) struct Exchange {
    response: SyncResponse,
    effects: Vec<ServerEffect>,
    reads: ReadSet,
    snapshot_seq: u64,
    role: UserRole,
    /// The officer's body was not bound yet (it is bound by the first record stored).
    unbound: bool,
    device_keys: Vec<RegisteredKey>,
}

/// Step 1 (see the module doc): runs the exchange on a read snapshot.
pub(crate) fn prepare(tx: &Conn<'_>, job: &SyncJob) -> Result<Prepared> {
    let caller = &job.caller;
    let (role, unbound) = resolve_role(tx, caller, claims_of(job))?;
    let role = role.unwrap_or(UserRole::Admin);
    let mut sender = sender_of(caller, role);
    sender.device_keys = device_keys(tx, &caller.device_id)?;
    let mut store = Snapshot {
        conn: tx,
        caller,
        reads: ReadSet::default(),
        effects: Vec::new(),
        snapshot_seq: None,
    };
    let outcome = job.logic.handle_indexed(
        &mut store,
        &sender,
        &job.registry.index(),
        &job.request,
        job.now,
    );
    let response = match outcome {
        Ok(response) => response,
        Err(SyncError::Store(e)) => return Err(store_error(e)),
        // Refused as a whole: nothing was written, nothing is kept.
        Err(e) => return Ok(Prepared::Answer(Err(e))),
    };
    if store.effects.is_empty() {
        return Ok(Prepared::Answer(Ok(response)));
    }
    let snapshot_seq = match store.snapshot_seq {
        Some(s) => s,
        None => read_current_seq(tx)?,
    };
    Ok(Prepared::Effects(Box::new(Exchange {
        response,
        effects: store.effects,
        reads: store.reads,
        snapshot_seq,
        role,
        unbound,
        device_keys: sender.device_keys,
    })))
}

/// Whether everything the exchange read is still as it read it.
fn still_valid(tx: &Conn<'_>, caller: &Caller, x: &Exchange) -> Result<bool> {
    for (id, seq) in &x.reads.records {
        if read_record_seq(tx, id)? != *seq {
            return Ok(false);
        }
    }
    for ((device, record), state) in &x.reads.peers {
        if read_peer(tx, device, record)? != *state {
            return Ok(false);
        }
    }
    for (actor, device) in &x.reads.actors {
        if read_actor(tx, actor)? != *device {
            return Ok(false);
        }
    }
    for (number, holder) in &x.reads.numbers {
        if read_number_holder(tx, number)? != *holder {
            return Ok(false);
        }
    }
    if x.unbound && caller.role == taxi_fiscal_store::Role::Officer {
        let bound: bool = tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM officer_bodies WHERE user_id = $1)",
                &[&caller.user_id],
            )?
            .try_get(0)?;
        if bound {
            return Ok(false);
        }
    }
    Ok(device_keys(tx, &caller.device_id)? == x.device_keys)
}

/// A record's sequence number (`None`: absent): the check reads the number only, not the
/// document `read_record` would send over the wire.
fn read_record_seq(tx: &Conn<'_>, id: &str) -> Result<Option<u64>> {
    tx.query_opt("SELECT seq FROM records WHERE id = $1", &[&id])?
        .map(|r| Ok(crate::to_u64(r.try_get(0)?)))
        .transpose()
}

/// Step 2 (see the module doc): checks the reads again and writes the effects, or runs the
/// exchange again inside this transaction when something it read changed.
pub(crate) fn commit(tx: &Conn<'_>, job: &SyncJob, prepared: Prepared) -> Result<SyncOutcome> {
    let x = match prepared {
        Prepared::Answer(outcome) => return Ok(outcome),
        Prepared::Effects(x) => x,
    };
    let now_seq = read_current_seq(tx)?;
    if now_seq < x.snapshot_seq || !still_valid(tx, &job.caller, &x)? {
        tracing::debug!(device = %job.caller.device_id, "sync: leitura mudou; refeita em série");
        return super::records::sync(tx, job);
    }
    let Exchange {
        mut response,
        mut effects,
        role,
        unbound,
        snapshot_seq,
        ..
    } = *x;
    let delta = now_seq - snapshot_seq;
    if delta > 0 {
        for e in &mut effects {
            if let ServerEffect::StoreRecord(s) = e {
                s.seq += delta;
            }
        }
        if !response.more {
            // Other exchanges committed changes numbered after the snapshot: the device is
            // current only up to the snapshot, and must ask from there.
            let promised = response.cursor;
            response.cursor = snapshot_seq;
            for e in &mut effects {
                if let ServerEffect::SavePeerState { state, .. } = e
                    && let Some(sent) = &mut state.sent
                    && sent.cursor == promised
                {
                    sent.cursor = snapshot_seq;
                }
            }
        }
    }
    let created = effects
        .iter()
        .any(|e| matches!(e, ServerEffect::StoreRecord(s) if s.created));
    let receipts = ReceiptContext {
        key: &job.server_key,
        device_clock: job.request.device_clock,
    };
    apply(
        tx,
        &job.caller,
        effects,
        "record.sync",
        job.now,
        Some(&receipts),
    )?;
    if unbound && created && role.is_inspector() {
        bind_body(tx, &job.caller, role, job.now)?;
    }
    Ok(Ok(response))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::PgStore;
    use taxi_fiscal_store::conformance::{About, field_user, issued_record, job_of, request_of};
    use taxi_fiscal_store::{Role, Store};

    async fn fresh() -> PgStore {
        PgStore::open(&crate::test_db::fresh().await).await.unwrap()
    }

    /// Another device commits between the preparation and the commit of an exchange that read
    /// nothing it wrote: the exchange's record is numbered after it, and its cursor goes back to
    /// the snapshot's, below the other change, so the device still asks for it next time.
    #[tokio::test]
    async fn a_commit_in_between_moves_the_numbers_and_holds_the_cursor_back() {
        let store = fresh().await;
        let ana = field_user(&store, "ana", Role::Office, None, "mesa-ana").await;
        let bia = field_user(&store, "bia", Role::Officer, None, "tablet-bia").await;
        let cia = field_user(&store, "cia", Role::Officer, None, "tablet-cia").await;
        let mut a = issued_record(&bia.agent, &About::plate("ABC1D23", 30));
        let mut b = issued_record(&cia.agent, &About::plate("DEF4G56", 20));
        // Bia's exchange is prepared.
        let job = Arc::new(job_of(&store, &bia, request_of(&bia, &mut [&mut a], 0)).await);
        let j = Arc::clone(&job);
        let prepared = store.pool.read(move |tx| prepare(tx, &j)).await.unwrap();
        assert!(matches!(prepared, Prepared::Effects(_)));
        // Meanwhile another officer's record is committed by a whole exchange.
        let other = job_of(&store, &cia, request_of(&cia, &mut [&mut b], 0)).await;
        let first = store.sync_records(other).await.unwrap().unwrap();
        assert_eq!(first.cursor, 1);
        let j = Arc::clone(&job);
        let response = store
            .pool
            .write(move |tx| commit(tx, &j, prepared))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response.accepted.len(), 1);
        assert_eq!(
            response.cursor, 0,
            "held back to the snapshot, before seq 1"
        );
        let id = a.id().to_string();
        let seq: i64 = store
            .pool
            .read(move |tx| {
                Ok(tx
                    .query_one("SELECT seq FROM records WHERE id = $1", &[&id])?
                    .try_get(0)?)
            })
            .await
            .unwrap();
        assert_eq!(seq, 2, "numbered after the change committed meanwhile");
        // The office's device, from cursor 0, gets both.
        let all = store
            .sync_records(job_of(&store, &ana, request_of(&ana, &mut [], 0)).await)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(all.new_records.len(), 2);
        assert_eq!(all.cursor, 2);
        assert!(store.verify_audit().await.unwrap().ok);
    }

    /// An exchange whose read changed before its commit (the same new record stored meanwhile,
    /// as a retried request racing the first) is run again serially: the record is stored once.
    #[tokio::test]
    async fn a_changed_read_runs_the_exchange_again_serially() {
        let store = fresh().await;
        let bia = field_user(&store, "bia", Role::Officer, None, "tablet-bia").await;
        let mut a = issued_record(&bia.agent, &About::plate("ABC1D23", 30));
        let request = request_of(&bia, &mut [&mut a], 0);
        let job = Arc::new(job_of(&store, &bia, request.clone()).await);
        let j = Arc::clone(&job);
        let prepared = store.pool.read(move |tx| prepare(tx, &j)).await.unwrap();
        let again = job_of(&store, &bia, request).await;
        store.sync_records(again).await.unwrap().unwrap();
        let j = Arc::clone(&job);
        let response = store
            .pool
            .write(move |tx| commit(tx, &j, prepared))
            .await
            .unwrap()
            .unwrap();
        assert!(response.rejections.is_empty(), "{:?}", response.rejections);
        assert_eq!(response.accepted.len(), 1);
        let (rows, creates): (i64, i64) = store
            .pool
            .read(|tx| {
                Ok((
                    tx.query_one("SELECT count(*) FROM records", &[])?
                        .try_get(0)?,
                    tx.query_one(
                        "SELECT count(*) FROM audit_log WHERE action = 'record.sync.create'",
                        &[],
                    )?
                    .try_get(0)?,
                ))
            })
            .await
            .unwrap();
        assert_eq!((rows, creates), (1, 1));
        assert!(store.verify_audit().await.unwrap().ok);
    }

    /// A device already current takes no write at all: its exchange is answered from the
    /// snapshot.
    #[tokio::test]
    async fn a_no_op_exchange_is_answered_without_the_writer() {
        let store = fresh().await;
        let bia = field_user(&store, "bia", Role::Officer, None, "tablet-bia").await;
        let mut a = issued_record(&bia.agent, &About::plate("ABC1D23", 30));
        let first = store
            .sync_records(job_of(&store, &bia, request_of(&bia, &mut [&mut a], 0)).await)
            .await
            .unwrap()
            .unwrap();
        let job = job_of(&store, &bia, request_of(&bia, &mut [], first.cursor)).await;
        let prepared = store.pool.read(move |tx| prepare(tx, &job)).await.unwrap();
        match prepared {
            Prepared::Answer(Ok(r)) => {
                assert!(r.new_records.is_empty() && r.messages.is_empty());
                assert_eq!(r.cursor, first.cursor);
            }
            other => panic!("{other:?}"),
        }
    }

    /// Two server nodes on one database (ADR 0034): officers' exchanges go through either,
    /// in parallel, while the office's device follows through the other. Every record is
    /// stored once under its own sequence number, the office's cursor passes none, and the
    /// chain holds: the write lock is the database's, so the check-then-write of `commit`
    /// holds across nodes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_nodes_lose_nothing() {
        const DEVICES: usize = 4;
        const RECORDS: usize = 4;
        let url = crate::test_db::fresh().await;
        let a = Arc::new(PgStore::open(&url).await.unwrap());
        let b = Arc::new(PgStore::open(&url).await.unwrap());
        let office = field_user(&*a, "mesa", Role::Office, None, "mesa-escritorio").await;
        let mut tasks = Vec::new();
        for i in 0..DEVICES {
            let officer = field_user(
                &*a,
                &format!("fiscal{i}"),
                Role::Officer,
                None,
                &format!("t-{i}"),
            )
            .await;
            let node = Arc::clone(if i % 2 == 0 { &a } else { &b });
            tasks.push(tokio::spawn(async move {
                let mut ids = Vec::new();
                for k in 0..RECORDS {
                    let about = About::plate("ABC1D23", i64::try_from(10 * i + k).unwrap());
                    let mut doc = issued_record(&officer.agent, &about);
                    let job =
                        job_of(&*node, &officer, request_of(&officer, &mut [&mut doc], 0)).await;
                    let r = node.sync_records(job).await.unwrap().unwrap();
                    assert!(r.rejections.is_empty(), "{:?}", r.rejections);
                    ids.push(doc.id().to_string());
                }
                ids
            }));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut cursor = 0;
        loop {
            let done = tasks.iter().all(|t| t.is_finished());
            let job = job_of(&*b, &office, request_of(&office, &mut [], cursor)).await;
            let r = b.sync_records(job).await.unwrap().unwrap();
            seen.extend(r.new_records.iter().map(|n| n.record_id.to_string()));
            seen.extend(r.messages.iter().map(|m| m.record_id.to_string()));
            cursor = r.cursor;
            if done && !r.more {
                break;
            }
            tokio::task::yield_now().await;
        }
        let mut all = std::collections::BTreeSet::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        assert_eq!(all.len(), DEVICES * RECORDS);
        assert_eq!(seen, all, "the office's device got every record");
        let seqs: (i64, i64) = a
            .pool
            .read(|c| {
                let r = c.query_one("SELECT count(*), count(DISTINCT seq) FROM records", &[])?;
                Ok((r.try_get(0)?, r.try_get(1)?))
            })
            .await
            .unwrap();
        let n = i64::try_from(DEVICES * RECORDS).unwrap();
        assert_eq!(seqs, (n, n), "one row and one sequence number per record");
        assert!(b.verify_audit().await.unwrap().ok);
    }
}
