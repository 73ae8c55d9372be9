//! Record sync: `crate::sync::DeviceSync` over `POST /v1/sync`, repeated until the device has
//! nothing left to send and the server nothing left to give.
//!
//! One round: `build_request` reads every record with something to send; if the request would
//! exceed `max_request_bytes` uncompressed, only the first records that fit go now (the rest
//! stay candidates and go in the next round; a 413 from the server sets that budget to half the
//! refused request and the round is tried again); the JSON body is zstd-compressed; the server's
//! answer (zstd if it chose to) is applied by `apply_response` in one store transaction, which
//! also stores the new cursor. A lost answer leaves the store as it was: the next round repeats
//! the exchange and the server, having the changes already, only acknowledges them.
//!
//! The rounds stop when `SyncReport::again` is false and nothing was held back, or after
//! `max_rounds` (`NotConverged`: a guard against a protocol loop, never hit in a healthy
//! exchange).

use std::collections::BTreeSet;
use std::time::Instant;

use serde::Serialize;

use super::{ClientError, HttpRequest, Method, Reporter, SyncClient, decoded_body, http_error};
use crate::store::Store;
use crate::sync::{
    DeviceSync, DeviceSyncStore, RejectionCode, SERVER_PEER, SyncRequest, SyncResponse,
};

/// Bytes of JSON around each entry of a request besides its base64 (id, keys, punctuation).
const ENTRY_OVERHEAD: usize = 80;

/// A record the officer should hear about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RecordIssue {
    pub record_id: String,
    pub code: RejectionCode,
    /// Portuguese, ready to show.
    pub message: String,
}

/// What a record sync did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecordSync {
    /// `POST /v1/sync` exchanges that were applied.
    pub rounds: u64,
    /// Records sent whole, and as changes.
    pub sent_new: u64,
    pub sent_changes: u64,
    /// Acknowledged by the server.
    pub acked: u64,
    /// Received from the server (changes or whole records).
    pub received: u64,
    /// Refused by the server (reset to the server's version, refused changes quarantined).
    pub rejected: u64,
    /// Records whose local copy changed: screens showing them must reload.
    pub changed: Vec<String>,
    pub issues: Vec<RecordIssue>,
    /// The server cursor after the last exchange.
    pub cursor: u64,
    /// Where the time went (ms): building requests from the store, the exchanges on the wire
    /// (the server's work included), applying the answers to the store.
    pub ms_prepare: u64,
    pub ms_exchange: u64,
    pub ms_apply: u64,
}

impl SyncClient {
    /// Syncs the records until nothing is left to exchange.
    pub fn sync_records(&self, store: &mut Store) -> Result<RecordSync, ClientError> {
        self.sync_records_reporting(store, &mut Reporter::new(self, None))
    }

    /// `sync_records`, telling `progress` as it starts and after each exchange.
    pub(crate) fn sync_records_reporting(
        &self,
        store: &mut Store,
        progress: &mut Reporter<'_>,
    ) -> Result<RecordSync, ClientError> {
        if progress.listening() {
            // The records the first exchange will look at; corrected as each is prepared.
            progress.progress().records_total = store.sync_candidates(SERVER_PEER)?.len() as u64;
        }
        progress.emit();
        let identity = store
            .device_identity()?
            .ok_or(ClientError::Field(crate::field::FieldError::NoIdentity))?;
        // The server accepts an issued record only with the seal of a key this device
        // registered at a password login; a session opened without one (an app updated from a
        // version without keys) must log in again before it sends any.
        let session = store.client_session()?.ok_or_else(|| {
            ClientError::LoginRequired(String::from("nenhuma sessão neste aparelho"))
        })?;
        if store.device_key_registered_with()?.as_deref()
            != Some(super::session::key_registration(&session).as_str())
        {
            return Err(ClientError::LoginRequired(String::from(
                "entre com a senha para registrar a chave de assinatura deste aparelho no servidor",
            )));
        }
        let device = DeviceSync::new(identity.device_id);
        let mut out = RecordSync::default();
        let mut changed: BTreeSet<String> = BTreeSet::new();
        let mut seen_issues: BTreeSet<(String, String)> = BTreeSet::new();
        let mut budget = self.options.max_request_bytes;
        for _ in 0..self.options.max_rounds.max(1) {
            if self.cancel.is_cancelled() {
                return Err(ClientError::Cancelled);
            }
            let t = Instant::now();
            let prepared = device.build_request(store)?;
            // Everything still to send is in this request before `fit` splits it.
            let to_send =
                (prepared.request.new_records.len() + prepared.request.messages.len()) as u64;
            let p = progress.progress();
            p.records_total = p.records_done + to_send;
            for i in prepared.issues {
                if seen_issues.insert((i.record_id.clone(), i.message.clone())) {
                    out.issues.push(RecordIssue {
                        record_id: i.record_id,
                        code: i.code,
                        message: i.message,
                    });
                }
            }
            let (mut request, held_back, size) = fit(prepared.request, budget);
            // The device clock as the request leaves: the server keeps its offset with the
            // receipt of every record issued.
            request.device_clock = Some(self.clock.now());
            out.ms_prepare += elapsed_ms(t);
            let t = Instant::now();
            let entries = request.new_records.len() + request.messages.len();
            let response = match self.exchange(store, &request) {
                // Over the server's body limit (a server configured tighter than this client
                // expects): halve the batch — what was sent, not the budget, which may be far
                // above it — and try again, down to one record per request.
                Err(ClientError::Http { status: 413, .. }) if entries > 1 => {
                    budget = (size / 2).max(1);
                    out.ms_exchange += elapsed_ms(t);
                    continue;
                }
                r => r?,
            };
            out.ms_exchange += elapsed_ms(t);
            let t = Instant::now();
            let report = device.apply_response(store, &request, &response, self.clock.now())?;
            out.ms_apply += elapsed_ms(t);
            out.rounds += 1;
            out.sent_new += request.new_records.len() as u64;
            out.sent_changes += request.messages.len() as u64;
            progress.progress().records_done += entries as u64;
            out.acked += report.acked as u64;
            out.received += report.received as u64;
            out.rejected += report.rejected as u64;
            out.cursor = response.cursor;
            changed.extend(report.changed);
            for i in report.issues {
                if seen_issues.insert((i.record_id.clone(), i.message.clone())) {
                    out.issues.push(RecordIssue {
                        record_id: i.record_id,
                        code: i.code,
                        message: i.message,
                    });
                }
            }
            progress.emit();
            if !report.again && !held_back {
                out.changed = changed.into_iter().collect();
                return Ok(out);
            }
        }
        Err(ClientError::NotConverged(self.options.max_rounds))
    }

    /// One `POST /v1/sync`.
    fn exchange(
        &self,
        store: &mut Store,
        request: &SyncRequest,
    ) -> Result<SyncResponse, ClientError> {
        let json = serde_json::to_vec(request).map_err(|e| ClientError::BadResponse {
            what: "pedido de sincronização",
            detail: e.to_string(),
        })?;
        let body = zstd::bulk::compress(&json, self.options.compression_level).map_err(|e| {
            ClientError::BadResponse {
                what: "pedido de sincronização",
                detail: format!("zstd: {e}"),
            }
        })?;
        let http = HttpRequest::new(Method::Post, "/v1/sync")
            .header("content-type", "application/json")
            .header("content-encoding", "zstd")
            .header("accept", "application/json")
            .header("accept-encoding", "zstd")
            .body(body);
        let response = self.call(store, http, true)?;
        if response.status != 200 {
            return Err(http_error("a sincronização dos registros", &response));
        }
        let body = decoded_body(&response).map_err(|detail| ClientError::BadResponse {
            what: "a sincronização dos registros",
            detail,
        })?;
        serde_json::from_slice(&body).map_err(|e| ClientError::BadResponse {
            what: "a sincronização dos registros",
            detail: e.to_string(),
        })
    }
}

fn elapsed_ms(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Keeps the first entries of `request` that fit in `budget` bytes of JSON (always at least
/// one, so a single huge record still goes); says whether any were held back, and the JSON
/// size it estimates for what it kept.
fn fit(mut request: SyncRequest, budget: usize) -> (SyncRequest, bool, usize) {
    let size = |len: usize| len.div_ceil(3) * 4 + ENTRY_OVERHEAD;
    let mut used = 128;
    let mut keep_new = 0;
    for r in &request.new_records {
        let s = size(r.doc.len());
        if keep_new > 0 && used + s > budget {
            break;
        }
        used += s;
        keep_new += 1;
    }
    let mut keep_msg = 0;
    if keep_new == request.new_records.len() {
        for m in &request.messages {
            let s = size(m.message.len());
            if (keep_new > 0 || keep_msg > 0) && used + s > budget {
                break;
            }
            used += s;
            keep_msg += 1;
        }
    }
    let held = keep_new < request.new_records.len() || keep_msg < request.messages.len();
    request.new_records.truncate(keep_new);
    request.messages.truncate(keep_msg);
    (request, held, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sync::{Bytes, DocMessage, NewRecord, PROTOCOL_VERSION};
    use uuid::Uuid;

    fn req(new: usize, msgs: usize, size: usize) -> SyncRequest {
        SyncRequest {
            protocol: PROTOCOL_VERSION,
            device_id: Uuid::nil(),
            cursor: 0,
            device_clock: None,
            new_records: (0..new)
                .map(|i| NewRecord {
                    record_id: Uuid::from_u128(i as u128),
                    doc: Bytes(vec![0; size]),
                })
                .collect(),
            messages: (0..msgs)
                .map(|i| DocMessage {
                    record_id: Uuid::from_u128(1000 + i as u128),
                    message: Bytes(vec![0; size]),
                })
                .collect(),
        }
    }

    #[test]
    fn fit_splits_by_size_and_never_sends_nothing() {
        let (r, held, _) = fit(req(3, 2, 300), 1 << 20);
        assert_eq!((r.new_records.len(), r.messages.len(), held), (3, 2, false));
        // ~480 B per entry: a 1,200 B budget keeps two.
        let (r, held, _) = fit(req(3, 2, 300), 1200);
        assert_eq!((r.new_records.len(), r.messages.len(), held), (2, 0, true));
        let (r, held, _) = fit(req(0, 2, 10_000), 100);
        assert_eq!((r.new_records.len(), r.messages.len(), held), (0, 1, true));
        let (r, held, _) = fit(req(0, 0, 0), 100);
        assert_eq!((r.new_records.len(), r.messages.len(), held), (0, 0, false));
        // The serialised size stays within the estimate, which stays within the budget.
        let (r, _, size) = fit(req(40, 0, 500), 10_000);
        let json = serde_json::to_vec(&r).unwrap().len();
        assert!(json <= size && size <= 10_000, "{json} {size}");
        // Half the estimate of what was kept keeps about half the entries (the 413 path).
        let (all, _, size) = fit(req(40, 0, 500), 1 << 20);
        let (half, held, _) = fit(all, size / 2);
        assert!(
            held && (19..=20).contains(&half.new_records.len()),
            "{}",
            half.new_records.len()
        );
    }
}
