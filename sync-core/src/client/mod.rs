//! The sync client (feature `client`): drives the device store against the taxi-fiscal server
//! over HTTP — login and token refresh, auto-number top-up, record sync (`POST /v1/sync`, the
//! sans-IO `crate::sync::DeviceSync` doing the protocol), photo upload and the registry feed.
//!
//! # Blocking, cancellable (ADR 0010)
//!
//! Every call blocks the calling thread until done, failed or cancelled; the app calls it from
//! a background thread (never the UI thread) and stops it with a [`CancelToken`], which is
//! checked before every request and while waiting between retries. Requests time out
//! ([`Timeouts`]). The store is a plain `&mut Store`: one sync at a time per device file.
//!
//! # One sync ([`SyncClient::sync`])
//!
//! ```text
//! session   access token still good on the device clock? else POST /v1/auth/refresh
//! numbers   fewer than `number_low_water` left → POST /v1/devices/{id}/number-blocks,
//!           then number the records that were waiting for one
//! records   loop: DeviceSync::build_request → POST /v1/sync (zstd) → apply_response, one
//!           store transaction per response; until the report says nothing is left; then
//!           PUT /v1/records/{id}/observed-persons for each record whose witnesses' identity
//!           changed (apart from the document: `observed`)
//! photos    POST /v1/photos/have for what is pending → PUT /v1/photos/{sha256} for the rest,
//!           each marked `uploaded_at` as soon as the server confirms it
//! registry  GET /v1/registry/changes?since=V; 410 (too old or unknown) → GET
//!           /v1/registry/snapshot (zstd, If-None-Match); applied in one transaction
//! ```
//!
//! Records go before photos and the registry: they are the evidence, small, and what must
//! leave the phone first on a poor link. A step that the server refuses (4xx, or 5xx after
//! retries) is reported and the next steps still run; being offline, needing a new login, a
//! cancel or a broken device database stop the sync (the next steps would fail the same way).
//! The result is a [`SyncSummary`]; the store keeps the last attempt, last success and last
//! error for [`SyncStatus`].
//!
//! # Progress ([`SyncClient::sync_with_progress`])
//!
//! The app's progress bar gets a [`Progress`] — a small `Copy` value, no allocation — as each
//! step starts, after each exchange of records, after the photos the server already held and
//! after each photo (the transport sends a photo as one body, so a photo is the finest grain),
//! and once more when the sync ends. It says which step runs, how many records and photos are
//! done of how many, and the bytes on the wire so far.
//!
//! # Faults
//!
//! Each request is retried on transport errors, 408, 429 and 5xx with bounded exponential
//! backoff ([`RetryPolicy`]); a 401 triggers one token refresh. Every request is safe to
//! repeat: the sync protocol is idempotent (a replayed request stores nothing new, a lost
//! response is repeated because the cursor did not move), photos are content-addressed, a
//! number block whose answer was lost is only a gap in the numbering, and the registry applies
//! versions whole. A sync interrupted anywhere — connection cut, server killed, app killed —
//! leaves the device as it was after its last applied response, and the next sync continues.

mod error;
mod numbers;
mod observed;
mod photos;
mod records;
mod registry;
mod retry;
mod session;
pub mod tls;
mod transport;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use error::{ClientError, ErrorKind};
pub use numbers::NumberTopUp;
pub use observed::{ObservedIssue, ObservedUpload};
pub use photos::{PhotoIssue, PhotoUpload};
pub use records::{RecordIssue, RecordSync};
pub use registry::{RegistryMode, RegistryPull};
pub use retry::{
    CancelToken, Cancelled, Clock, OffsetClock, RetryPolicy, Sleeper, SystemClock, ThreadSleeper,
};
pub use session::{EnrolSummary, LoginSummary};
pub use transport::{
    HttpRequest, HttpResponse, HttpTransport, Method, Timeouts, Transport, TransportError,
    TransportErrorKind,
};

use crate::store::{Store, SyncStatus};

/// Tunables of the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Ask for a new block of auto numbers when fewer than this are left.
    pub number_low_water: u64,
    /// Size of the block asked for (`None`: the server's default).
    pub number_block_size: Option<u64>,
    /// Record-sync exchanges in one sync before giving up (a protocol loop guard; a normal
    /// sync needs one, a device with a large backlog a few).
    pub max_rounds: usize,
    /// Uncompressed size above which the records of one exchange are split over several
    /// (the server's limit, 16 MiB, applies to the decompressed body; a 413 halves it).
    pub max_request_bytes: usize,
    /// zstd level of request bodies (3: fast, and most of the gain on JSON with base64).
    pub compression_level: i32,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            number_low_water: 100,
            number_block_size: None,
            max_rounds: 64,
            max_request_bytes: 15 * 1024 * 1024,
            compression_level: 3,
        }
    }
}

/// Bytes and requests on the wire since the client was made (or `reset_wire_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireStats {
    /// HTTP requests sent, retries included.
    pub requests: u64,
    /// Of which retries.
    pub retries: u64,
    /// Request bodies as sent (compressed).
    pub bytes_up: u64,
    /// Response bodies as received (compressed).
    pub bytes_down: u64,
}

impl WireStats {
    // Saturating: `reset_wire_stats` from another thread during a sync must not panic it.
    fn since(self, before: WireStats) -> WireStats {
        WireStats {
            requests: self.requests.saturating_sub(before.requests),
            retries: self.retries.saturating_sub(before.retries),
            bytes_up: self.bytes_up.saturating_sub(before.bytes_up),
            bytes_down: self.bytes_down.saturating_sub(before.bytes_down),
        }
    }
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    retries: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
}

/// The steps of a sync, as named in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Session,
    Numbers,
    Records,
    Photos,
    Registry,
}

impl Step {
    /// How many steps a sync has.
    pub const COUNT: u32 = 5;

    /// 1-based position in a sync (`Session` is 1, `Registry` is [`Step::COUNT`]).
    pub fn index(self) -> u32 {
        match self {
            Self::Session => 1,
            Self::Numbers => 2,
            Self::Records => 3,
            Self::Photos => 4,
            Self::Registry => 5,
        }
    }
}

/// Where a sync is, for the app's progress bar ([`SyncClient::sync_with_progress`]).
///
/// Every count is of this sync and never goes down, but for a total that a closer look
/// corrects (see `records_total`). A total of 0 means nothing to do, or not known (yet): show
/// an indeterminate bar then. A count stays as it ended once its step is over, so the last
/// value of a sync that ran whole has `records_done == records_total`,
/// `photos_done == photos_total` and `photo_bytes_done == photo_bytes_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Progress {
    /// The step running (the last one begun, in the value sent when the sync ends).
    pub step: Step,
    /// `step`'s position, 1-based, of `step_count`.
    pub step_index: u32,
    pub step_count: u32,
    /// Records step: records sent whole or as changes and answered by the server, counted
    /// per exchange.
    pub records_done: u64,
    /// Records with something to send: counted as the step starts, then set to what is
    /// really sent as each exchange is prepared (a record saved during the sync goes with it
    /// and raises it; one with nothing new to say lowers it).
    pub records_total: u64,
    /// Photos step: photos dealt with — sent, found already on the server, or refused or
    /// damaged (`SyncSummary::photos` says which) — of those not yet on the server as the step
    /// starts.
    pub photos_done: u64,
    pub photos_total: u64,
    /// The same photos' sizes (what the step has to upload, at most).
    pub photo_bytes_done: u64,
    pub photo_bytes_total: u64,
    /// Bytes on the wire since the sync started, every step, retries included: request bodies
    /// as sent and response bodies as received (compressed), as `SyncSummary::wire` counts them.
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

impl Progress {
    fn new() -> Self {
        Self {
            step: Step::Session,
            step_index: Step::Session.index(),
            step_count: Step::COUNT,
            records_done: 0,
            records_total: 0,
            photos_done: 0,
            photos_total: 0,
            photo_bytes_done: 0,
            photo_bytes_total: 0,
            bytes_sent: 0,
            bytes_received: 0,
        }
    }
}

/// A sync's [`Progress`] and who hears about it. The step functions update it; a step called
/// on its own (`upload_photos`, …) has no listener, and then skips what only progress needs.
pub(crate) struct Reporter<'a> {
    client: &'a SyncClient,
    progress: Progress,
    before: WireStats,
    listener: Option<&'a mut dyn FnMut(&Progress)>,
}

impl<'a> Reporter<'a> {
    fn new(client: &'a SyncClient, listener: Option<&'a mut dyn FnMut(&Progress)>) -> Self {
        Self {
            client,
            progress: Progress::new(),
            before: client.wire_stats(),
            listener,
        }
    }

    /// Whether anyone listens (a count that costs a query is skipped otherwise).
    pub(crate) fn listening(&self) -> bool {
        self.listener.is_some()
    }

    fn begin(&mut self, step: Step) {
        self.progress.step = step;
        self.progress.step_index = step.index();
    }

    pub(crate) fn progress(&mut self) -> &mut Progress {
        &mut self.progress
    }

    /// Hands the listener the progress, with the wire's bytes as of now.
    pub(crate) fn emit(&mut self) {
        if let Some(listener) = self.listener.as_mut() {
            let wire = self.client.wire_stats().since(self.before);
            self.progress.bytes_sent = wire.bytes_up;
            self.progress.bytes_received = wire.bytes_down;
            listener(&self.progress);
        }
    }
}

/// A step that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepError {
    pub step: Step,
    pub kind: ErrorKind,
    /// Portuguese, ready to show.
    pub message: String,
}

/// What one sync did (the CLI prints it as JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncSummary {
    /// Every step succeeded.
    pub ok: bool,
    /// A step's error stopped the remaining ones (offline, login, cancel, device).
    pub stopped: bool,
    pub errors: Vec<StepError>,
    pub numbers: Option<NumberTopUp>,
    pub records: Option<RecordSync>,
    /// Identity and contact of witnesses and unregistered drivers, sent after the records.
    pub observed: Option<ObservedUpload>,
    pub photos: Option<PhotoUpload>,
    pub registry: Option<RegistryPull>,
    pub wire: WireStats,
    pub ms: u64,
    /// The status after this sync.
    pub status: SyncStatus,
}

/// The client of one server for one device store.
#[derive(Debug)]
pub struct SyncClient {
    transport: Arc<dyn Transport>,
    clock: Arc<dyn Clock>,
    sleeper: Arc<dyn Sleeper>,
    retry: RetryPolicy,
    cancel: CancelToken,
    options: ClientOptions,
    counters: Counters,
}

impl SyncClient {
    /// A client of the server at `base_url` (e.g. `https://taxi.americana.sp.gov.br`), with the
    /// real clock, sleeper and default timeouts.
    pub fn new(base_url: &str) -> Result<Self, ClientError> {
        Ok(Self::with_transport(Arc::new(HttpTransport::new(
            base_url,
            Timeouts::default(),
        )?)))
    }

    /// A client over any transport (tests script one).
    pub fn with_transport(transport: Arc<dyn Transport>) -> Self {
        Self {
            transport,
            clock: Arc::new(SystemClock),
            sleeper: Arc::new(ThreadSleeper),
            retry: RetryPolicy::default(),
            cancel: CancelToken::new(),
            options: ClientOptions::default(),
            counters: Counters::default(),
        }
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    pub fn with_options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// The flag that stops this client (clone it into the UI's cancel button).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    pub fn base_url(&self) -> &str {
        self.transport.base_url()
    }

    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    pub fn wire_stats(&self) -> WireStats {
        WireStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            retries: self.counters.retries.load(Ordering::Relaxed),
            bytes_up: self.counters.bytes_up.load(Ordering::Relaxed),
            bytes_down: self.counters.bytes_down.load(Ordering::Relaxed),
        }
    }

    pub fn reset_wire_stats(&self) {
        for c in [
            &self.counters.requests,
            &self.counters.retries,
            &self.counters.bytes_up,
            &self.counters.bytes_down,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// The device clock's now.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    /// What the app shows: pending records and photos, last sync, registry age, last error.
    pub fn status(&self, store: &Store) -> Result<SyncStatus, ClientError> {
        Ok(store.sync_status(self.clock.now())?)
    }

    /// Everything, in order (module docs). Always returns a summary unless the device's own
    /// database fails while recording the outcome; what failed is in `summary.errors` and in
    /// the stored status.
    pub fn sync(&self, store: &mut Store) -> Result<SyncSummary, ClientError> {
        self.sync_reporting(store, Reporter::new(self, None))
    }

    /// `sync`, calling `on_progress` on this thread as each step starts, after each exchange
    /// of records and each photo, and once at the end (module docs, [`Progress`]). The
    /// listener should return quickly: the sync waits for it.
    pub fn sync_with_progress(
        &self,
        store: &mut Store,
        on_progress: &mut dyn FnMut(&Progress),
    ) -> Result<SyncSummary, ClientError> {
        self.sync_reporting(store, Reporter::new(self, Some(on_progress)))
    }

    fn sync_reporting(
        &self,
        store: &mut Store,
        mut progress: Reporter<'_>,
    ) -> Result<SyncSummary, ClientError> {
        let started = Instant::now();
        let before = self.wire_stats();
        store.note_sync_attempt(self.clock.now())?;
        let mut errors: Vec<StepError> = Vec::new();
        let mut stopped = false;
        let fail = |step: Step, e: ClientError, errors: &mut Vec<StepError>| -> bool {
            let stop = e.stops_sync();
            errors.push(StepError {
                step,
                kind: e.kind(),
                message: e.to_string(),
            });
            stop
        };

        let mut numbers = None;
        let mut records = None;
        let mut observed = None;
        let mut photos = None;
        let mut registry = None;
        progress.begin(Step::Session);
        progress.emit();
        if let Err(e) = self.ensure_access(store) {
            stopped = fail(Step::Session, e, &mut errors);
        }
        if !stopped {
            progress.begin(Step::Numbers);
            progress.emit();
            match self.top_up_numbers(store) {
                Ok(n) => numbers = n,
                Err(e) => stopped = fail(Step::Numbers, e, &mut errors),
            }
        }
        if !stopped {
            // Records and photos tell their start themselves, once they know their totals.
            progress.begin(Step::Records);
            match self.sync_records_reporting(store, &mut progress) {
                Ok(r) => records = Some(r),
                Err(e) => stopped = fail(Step::Records, e, &mut errors),
            }
        }
        if !stopped {
            match self.upload_observed_persons(store) {
                Ok(o) => observed = Some(o),
                Err(e) => stopped = fail(Step::Records, e, &mut errors),
            }
        }
        if !stopped {
            progress.begin(Step::Photos);
            match self.upload_photos_reporting(store, &mut progress) {
                Ok(p) => photos = Some(p),
                Err(e) => stopped = fail(Step::Photos, e, &mut errors),
            }
        }
        if !stopped {
            progress.begin(Step::Registry);
            progress.emit();
            match self.pull_registry(store) {
                Ok(r) => registry = Some(r),
                Err(e) => stopped = fail(Step::Registry, e, &mut errors),
            }
        }
        // The end, stopped or not: the final counts and bytes (the registry's among them).
        progress.emit();
        let now = self.clock.now();
        match errors.first() {
            None => store.note_sync_success(now)?,
            Some(e) => store.note_sync_error(now, &e.message)?,
        }
        Ok(SyncSummary {
            ok: errors.is_empty(),
            stopped,
            errors,
            numbers,
            records,
            observed,
            photos,
            registry,
            wire: self.wire_stats().since(before),
            ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            status: store.sync_status(now)?,
        })
    }

    // ------------------------------------------------------------------ requests

    /// Sends `request` with retries (transport errors, 408, 429, 5xx) and, when `auth`, the
    /// access token — refreshed once on a 401. Returns the first response that is not worth
    /// retrying (2xx, 3xx or a definitive 4xx) for the caller to interpret.
    fn call(
        &self,
        store: &mut Store,
        mut request: HttpRequest,
        auth: bool,
    ) -> Result<HttpResponse, ClientError> {
        let mut refreshed = false;
        let mut retry: u32 = 0;
        loop {
            if self.cancel.is_cancelled() {
                return Err(ClientError::Cancelled);
            }
            if auth {
                let token = self.access_token(store, false)?;
                request.set_header("authorization", format!("Bearer {token}"));
            }
            self.counters.requests.fetch_add(1, Ordering::Relaxed);
            self.counters
                .bytes_up
                .fetch_add(request.body.len() as u64, Ordering::Relaxed);
            let (failure, retry_after) = match self.transport.send(&request) {
                Ok(response) => {
                    self.counters
                        .bytes_down
                        .fetch_add(response.body.len() as u64, Ordering::Relaxed);
                    match response.status {
                        401 if auth && !refreshed => {
                            // The server's clock or a revoked token disagrees with ours: one
                            // refresh, then the same request again (not counted as a retry).
                            refreshed = true;
                            self.access_token(store, true)?;
                            continue;
                        }
                        408 | 429 | 500 | 502 | 503 | 504 => {
                            let ra = response
                                .header("retry-after")
                                .and_then(|v| v.trim().parse::<u64>().ok())
                                .map(Duration::from_secs);
                            (Err(response), ra)
                        }
                        _ => return Ok(response),
                    }
                }
                // An untrusted certificate is the same at every attempt: no retry.
                Err(e) if e.kind == TransportErrorKind::Certificate => {
                    return Err(ClientError::Transport(e));
                }
                Err(e) => (Ok(e), None),
            };
            retry += 1;
            if retry >= self.retry.attempts.max(1) {
                return match failure {
                    Ok(transport) => Err(ClientError::Transport(transport)),
                    Err(response) => Ok(response),
                };
            }
            self.counters.retries.fetch_add(1, Ordering::Relaxed);
            self.sleeper
                .sleep(self.retry.delay(retry - 1, retry_after), &self.cancel)
                .map_err(|Cancelled| ClientError::Cancelled)?;
        }
    }
}

/// The server's error shape: `{"error": {"code", "message", "details"}}`.
#[derive(Debug, Deserialize)]
struct ErrorEnvelope {
    error: ErrorBody,
}

#[derive(Debug, Deserialize)]
struct ErrorBody {
    code: String,
    message: String,
}

/// A response that is not what `what` expected, as an error naming the server's code.
fn http_error(what: &'static str, response: &HttpResponse) -> ClientError {
    let body = decoded_body(response).unwrap_or_default();
    match serde_json::from_slice::<ErrorEnvelope>(&body) {
        Ok(e) => ClientError::Http {
            what,
            status: response.status,
            code: e.error.code,
            message: e.error.message,
        },
        Err(_) => ClientError::Http {
            what,
            status: response.status,
            code: String::from("http_error"),
            message: String::from_utf8_lossy(&body).chars().take(200).collect(),
        },
    }
}

/// Largest response body the client accepts, as received and once decompressed (bytes). A
/// registry snapshot of Americana is well under 1 MiB compressed and a few MiB as JSON, and a
/// sync response is paged by the server; 64 MiB is far above both, yet a phone can hold it. A
/// hostile or broken server's zstd bomb (1 KiB that inflates to gigabytes) or endless body is
/// refused here instead of exhausting the phone's memory.
pub const MAX_RESPONSE_BYTES: usize = 64 * 1024 * 1024;

/// zstd-decompresses `bytes`, refusing output over `limit` bytes without ever holding more than
/// `limit + 1` of it.
pub(crate) fn decode_zstd(bytes: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let decoder = zstd::stream::read::Decoder::new(bytes).map_err(|e| format!("zstd: {e}"))?;
    let mut out = Vec::new();
    decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("zstd: {e}"))?;
    if out.len() > limit {
        return Err(format!(
            "a resposta descompactada passa de {limit} bytes, o máximo aceito"
        ));
    }
    Ok(out)
}

/// Largest registry snapshot the client accepts once decompressed (bytes). The snapshot is
/// decoded and parsed as a stream, so this much text is never held at once: the phone holds
/// the compressed body (≈ 57 bytes a permit) and the registry being built. A permit takes about
/// 1.15 KB of JSON with its people and vehicle, so 320 MiB holds a city of over 250,000
/// permits — the most `taxi-fiscal import` loads — while a zstd bomb still stops here.
pub const MAX_SNAPSHOT_DECODED_BYTES: u64 = 320 * 1024 * 1024;

/// The body with any `Content-Encoding: zstd` undone (the only coding the client asks for).
fn decoded_body(response: &HttpResponse) -> Result<Vec<u8>, String> {
    match response.header("content-encoding").map(str::trim) {
        None | Some("") | Some("identity") => Ok(response.body.clone()),
        Some(c) if c.eq_ignore_ascii_case("zstd") => {
            decode_zstd(response.body.as_slice(), MAX_RESPONSE_BYTES)
        }
        Some(other) => Err(format!("codificação {other:?} não pedida")),
    }
}

/// The JSON body of a successful response.
fn json_body<T: serde::de::DeserializeOwned>(
    what: &'static str,
    response: &HttpResponse,
) -> Result<T, ClientError> {
    let body =
        decoded_body(response).map_err(|detail| ClientError::BadResponse { what, detail })?;
    serde_json::from_slice(&body).map_err(|e| ClientError::BadResponse {
        what,
        detail: e.to_string(),
    })
}

/// A JSON request body.
fn json_request<T: Serialize>(
    method: Method,
    path: impl Into<String>,
    body: &T,
) -> Result<HttpRequest, ClientError> {
    let bytes = serde_json::to_vec(body).map_err(|e| ClientError::BadResponse {
        what: "pedido",
        detail: e.to_string(),
    })?;
    Ok(HttpRequest::new(method, path)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .body(bytes))
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod bound_tests {
    use super::*;

    #[test]
    fn a_body_at_the_bound_decodes_and_one_byte_more_is_refused() {
        let at = vec![b'x'; MAX_RESPONSE_BYTES];
        let zipped = zstd::encode_all(at.as_slice(), 3).unwrap();
        assert_eq!(
            decode_zstd(&zipped, MAX_RESPONSE_BYTES).unwrap().len(),
            MAX_RESPONSE_BYTES
        );
        let over = vec![b'x'; MAX_RESPONSE_BYTES + 1];
        let zipped = zstd::encode_all(over.as_slice(), 3).unwrap();
        // A few KiB on the wire, refused without holding more than the bound.
        assert!(zipped.len() < 64 * 1024, "{}", zipped.len());
        let e = decode_zstd(&zipped, MAX_RESPONSE_BYTES).unwrap_err();
        assert!(e.contains("máximo"), "{e}");
        assert!(decode_zstd(b"not zstd", MAX_RESPONSE_BYTES).is_err());
    }
}
