//! The taxi-fiscal server's store: one trait ([`Store`]) that every backend implements, the
//! types it speaks, and what every backend must compute the same way — the audit chain's
//! hashing ([`audit`]), record receipts ([`receipts`]), the per-device quotas ([`limits`]) —
//! with the behaviour suite every backend runs (`conformance`, behind the feature of that
//! name). Backends are crates of their own (`taxi-fiscal-store-sqlite`, the embedded default;
//! a PostgreSQL one for a deployment with several server nodes, ADR 0008), chosen once by the
//! server binary; this crate names no driver (ADR 0028).
//!
//! Flow: handlers and services hold an `Arc<dyn Store>` and await its methods. Every method is
//! one unit of work — one transaction for a write — and every write that the audit chain must
//! record takes an [`Actor`] and appends its audit row in that same transaction. Methods return
//! boxed futures ([`StoreFuture`]) so the trait stays object-safe without a macro crate; the
//! SQLite backend runs its blocking driver calls on tokio's blocking pool. A driver's error
//! reaches callers as [`StoreError::Backend`]: nothing above the store names a driver.
//!
//! The registry is stored as whole entities keyed by kind and id, plus a log of the
//! [`RegistryChanges`] of every version. The registry service computes a new version in memory
//! (law checks, `Registry::validate`, `feed::diff`) and commits it with
//! [`Store::commit_registry`] under optimistic concurrency: the commit names the version it was
//! computed from and fails with [`StoreError::VersionConflict`] if another writer got there
//! first, and the service retries. This keeps the law out of the storage layer and works the
//! same on a single SQLite writer and on several PostgreSQL nodes.
//!
//! Editais de chamamento ([`selection`]) follow the same pattern: the kernel's whole `Edital`
//! saved under a version ([`Store::save_edital`]), a grant's registry version committed in the
//! same transaction.

pub mod audit;
#[cfg(feature = "conformance")]
pub mod conformance;
pub mod consistency;
pub mod entities;
pub mod limits;
pub mod logins;
pub mod notifications;
pub mod observed;
pub mod office;
pub mod receipts;
pub mod records;
mod role;
pub mod selection;
pub mod web_sessions;

pub use role::Role;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use sync_core::domain::Registry;
use sync_core::feed::RegistryChanges;

use crate::audit::AuditReport;
use crate::office::{InboxPage, OfficeJob, OfficeOutcome};
use crate::records::{
    EventJob, EventOutcome, QuarantineRow, RecordDoc, RecordFilter, RecordPage, SyncJob,
    SyncOutcome,
};
use crate::selection::{EditalRow, EditalSave, EditalSaved};

/// What every store method returns.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// Why a storage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{what} não encontrado(a)")]
    NotFound { what: &'static str },
    #[error("{what} já existe")]
    Duplicate { what: &'static str },
    #[error("dispositivo revogado")]
    DeviceNotActive,
    /// The id would be the same device as `existing` on the wire (`sync_core::sync::device_uuid`).
    #[error("o identificador {id} equivale, na sincronização, ao do dispositivo {existing}")]
    DeviceIdCollision { id: String, existing: String },
    #[error("o cadastro mudou durante a operação (esperada a versão {expected}, atual {found})")]
    VersionConflict { expected: u64, found: u64 },
    /// The backend itself failed (its driver, its file, a constraint it did not expect): for
    /// the log, never shown to a client beyond "internal error". Each backend converts its
    /// driver's error into this one, so nothing above the store names a driver.
    #[error("banco de dados: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    #[error("dado armazenado ilegível ({what}): {reason}")]
    Corrupt { what: &'static str, reason: String },
    #[error("{path}: {reason}")]
    Open { path: String, reason: String },
    #[error("tarefa de banco de dados interrompida: {0}")]
    Task(String),
    /// A per-device quota of `crate::limits` is reached; `message` says which, in Portuguese.
    #[error("{message}")]
    QuotaExceeded {
        message: String,
        /// Seconds until the quota frees up, when it is a window that moves.
        retry_after: Option<u64>,
    },
}

/// Who makes a change, for the audit chain. `user_id`/`device_id` are `None` for the command
/// line (`taxi-fiscal import`, `demo` seeding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    pub user_id: Option<String>,
    pub device_id: Option<String>,
    pub at: DateTime<Utc>,
}

impl Actor {
    /// The command line, acting at `at`.
    pub fn cli(at: DateTime<Utc>) -> Self {
        Self {
            user_id: None,
            device_id: None,
            at,
        }
    }
}

/// A user account, with its password hash (never serialised to clients).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: String,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    /// The stand a coordinator coordinates.
    pub stand_id: Option<String>,
    pub password_hash: String,
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

/// A registered device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceRow {
    pub id: String,
    /// The user the device belongs to; only that user logs in on it.
    pub user_id: String,
    pub label: String,
    pub registered_at: DateTime<Utc>,
    pub registered_by: Option<String>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub revoked_by: Option<String>,
}

/// A device to register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDevice {
    pub id: String,
    pub user_id: String,
    pub label: String,
}

/// What a one-time code of the administrator's day is for (`auth::codes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodePurpose {
    /// The user chooses a new password at `/redefinir-senha/{code}`.
    PasswordReset,
    /// The app exchanges it for its device registration (`POST /v1/devices/enrol`).
    DeviceEnrolment,
}

impl CodePurpose {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            CodePurpose::PasswordReset => "password_reset",
            CodePurpose::DeviceEnrolment => "device_enrolment",
        }
    }
}

/// A one-time code to store: only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAccountCode {
    pub code_hash: String,
    pub purpose: CodePurpose,
    pub user_id: String,
    pub expires_at: DateTime<Utc>,
}

/// Why a one-time code was not accepted. Unknown, spent and expired codes are told apart to the
/// person holding one (they can ask for a new one); guessing is bounded by the address budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeRefusal {
    /// No such code (or one of the other purpose).
    Unknown,
    /// Already used, or replaced by a newer code for the same user.
    Used,
    Expired,
    /// The user was deactivated after the code was made.
    UserInactive,
}

/// What the auth extractor learns in its one point query per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionState {
    pub user_active: bool,
    /// The user's role now (a token's role claim may be up to one token lifetime old).
    pub role: Role,
    pub stand_id: Option<String>,
    pub device_user_id: String,
    pub device_revoked: bool,
    /// False when the login the token came from (its refresh-token family, if asked about) has
    /// no live token left: revoked after a replay or with its device.
    pub family_live: bool,
}

/// A refresh token as stored: only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshTokenRow {
    pub token_hash: String,
    /// All tokens descending from one login; reuse of a spent one revokes the family.
    pub family_id: String,
    pub user_id: String,
    pub device_id: String,
    pub issued_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// The outcome of presenting a refresh token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RotateOutcome {
    /// Spent, and replaced by the new one.
    Rotated {
        user: UserRow,
        device_id: String,
        family_id: String,
    },
    Unknown,
    Expired,
    /// Spent within `limits::REFRESH_REUSE_INTERVAL_SECS` into this same successor, which is
    /// still unused: the answer of that rotation was lost. Nothing is written; the successor
    /// stands and is answered again (it expires at `next_expires_at`).
    Repeated {
        user: UserRow,
        device_id: String,
        family_id: String,
        next_expires_at: DateTime<Utc>,
    },
    /// Already spent (and not a repeat, above): someone replayed it. The whole family is now
    /// revoked.
    Reused,
    DeviceRevoked,
    UserInactive,
}

/// A leased block of auto numbers, inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberBlock {
    pub device_id: String,
    pub start: u64,
    pub end: u64,
    pub leased_at: DateTime<Utc>,
}

/// A stored photo's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhotoMeta {
    pub sha256: String,
    pub size: u64,
    pub content_type: String,
    pub uploaded_at: DateTime<Utc>,
    pub user_id: String,
    pub device_id: String,
    /// The record the photo was uploaded for, when the client said (checked by the sync layer).
    pub record_id: Option<String>,
}

/// Storing a photo the first time, or again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutPhoto {
    Stored(PhotoMeta),
    AlreadyStored(PhotoMeta),
}

/// A registry version committed: its number and the changes it made.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistryCommitted {
    pub version: u64,
    pub changes: Vec<sync_core::feed::RegistryChange>,
}

/// A new registry version to commit.
#[derive(Debug, Clone)]
pub struct RegistryCommit {
    /// The version the change was computed from (`changes.from_version`).
    pub expected_version: u64,
    /// The whole registry at the new version (`version` and `generated_at` set).
    pub registry: Arc<Registry>,
    /// What changed, as devices will receive it.
    pub changes: RegistryChanges,
    /// Audit action, e.g. `registry.permit.renew`.
    pub action: String,
    /// Audit subject, e.g. `permit:0012`.
    pub subject: String,
    pub actor: Actor,
}

impl RegistryCommit {
    /// The commit that takes `current` to `edited`: sorted as devices store it, numbered
    /// `current.version + 1`, dated by the actor, with the changes devices will receive; `None`
    /// when `edited` changes nothing. The one way a new version is computed — the registry
    /// service's operations and the office's effects (committed with their events) both use it.
    pub fn next(
        current: &Registry,
        edited: Registry,
        action: String,
        subject: String,
        actor: Actor,
    ) -> Option<Self> {
        let mut next = sync_core::feed::sorted(edited);
        next.version = current.version + 1;
        next.generated_at = Some(actor.at);
        let changes = sync_core::feed::diff(current, &next);
        if changes.changes.is_empty() {
            return None;
        }
        Some(Self {
            expected_version: current.version,
            registry: Arc::new(next),
            changes,
            action,
            subject,
            actor,
        })
    }
}

/// The answer to "what changed since N".
#[derive(Debug, Clone, PartialEq)]
pub enum ChangesSince {
    Changes(RegistryChanges),
    /// N is older than the log or the allowed span: take a snapshot.
    TooOld {
        since: u64,
        current: u64,
    },
    /// N is newer than anything this server published (another server, a reset database).
    Unknown {
        since: u64,
        current: u64,
    },
}

/// What registering a device key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRegistration {
    /// New for this device.
    Registered,
    /// The device had it already.
    Known,
    /// Another device registered it: refused.
    OtherDevice,
}

/// The storage of the server. Each method is one unit of work.
pub trait Store: Send + Sync + std::fmt::Debug + 'static {
    /// Backend name, for `/health`.
    fn backend(&self) -> &'static str;

    // ----- accounts -------------------------------------------------------------------------

    /// Number of user accounts (0 on a fresh data directory).
    fn count_users(&self) -> StoreFuture<'_, u64>;
    /// Creates a user; `Duplicate` when the username is taken. Audited.
    fn create_user(&self, user: UserRow, actor: Actor) -> StoreFuture<'_, UserRow>;
    /// A user by (lower-cased) username.
    fn user_by_username(&self, username: String) -> StoreFuture<'_, Option<UserRow>>;
    fn list_users(&self) -> StoreFuture<'_, Vec<UserRow>>;
    /// Replaces the password hash of `user_id` with `new_hash` if it is still `expected_hash`
    /// (the one the current password was just verified against: of two changes racing, one
    /// wins), and revokes every refresh token of the user but those of login `keep_family`, in
    /// one transaction. `Ok(false)`: the hash had changed meanwhile, nothing written. Audited as
    /// `user.password.change` (the payload names the user only: no hash, no password).
    fn change_password(
        &self,
        user_id: String,
        expected_hash: String,
        new_hash: String,
        keep_family: Option<String>,
        actor: Actor,
    ) -> StoreFuture<'_, bool>;

    /// A user by id.
    fn user_by_id(&self, id: String) -> StoreFuture<'_, Option<UserRow>>;
    /// Sets the role (and the coordinator's stand: `Some` exactly for a coordinator) of a user;
    /// `NotFound` for an unknown id. Audited as `user.role.change`.
    fn set_user_role(
        &self,
        user_id: String,
        role: Role,
        stand_id: Option<String>,
        actor: Actor,
    ) -> StoreFuture<'_, UserRow>;
    /// Deactivates or reactivates a user. Deactivating revokes every refresh token of the user
    /// in the same transaction (the auth extractor already refuses an inactive user's access
    /// tokens). Audited as `user.deactivate` / `user.reactivate` (only when it changes).
    fn set_user_active(
        &self,
        user_id: String,
        active: bool,
        actor: Actor,
    ) -> StoreFuture<'_, UserRow>;
    /// Stores a new one-time code and spends the user's unused codes of the same purpose (the
    /// newest is the only one that works). `NotFound` for an unknown user. Audited as
    /// `user.code.create` (payload: user and purpose, never the code).
    fn create_account_code(&self, code: NewAccountCode, actor: Actor) -> StoreFuture<'_, ()>;
    /// The user of a live code of `purpose`, or why it is not live at `now`. Writes nothing.
    fn account_code(
        &self,
        code_hash: String,
        purpose: CodePurpose,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<UserRow, CodeRefusal>>;
    /// Spends a live password-reset code: sets the user's password hash, revokes every refresh
    /// token of the user, in one transaction, audited as `user.password.reset` (actor: the
    /// user). The code is checked again inside the transaction (two redemptions racing: one
    /// wins).
    fn reset_password_with_code(
        &self,
        code_hash: String,
        new_hash: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<UserRow, CodeRefusal>>;
    /// Spends a live enrolment code: registers device `device_id` labelled `label` for the
    /// code's user exactly as `register_device` does (registered by the administrator who made
    /// the code), in one transaction with the code's use.
    fn enrol_device(
        &self,
        code_hash: String,
        device_id: String,
        label: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<DeviceRow, CodeRefusal>>;

    // ----- devices and sessions -------------------------------------------------------------

    /// Registers a device for an existing user; `Duplicate` for a known id,
    /// `DeviceIdCollision` for an id that stands for the same protocol UUID (and so the same
    /// Automerge actor) as a registered device's. Audited.
    fn register_device(&self, device: NewDevice, actor: Actor) -> StoreFuture<'_, DeviceRow>;
    fn device(&self, id: String) -> StoreFuture<'_, Option<DeviceRow>>;
    fn list_devices(&self) -> StoreFuture<'_, Vec<DeviceRow>>;
    /// For each device that ever sent a record change: when the last accepted one arrived
    /// (server clock). For the devices page: a device silent for days may be lost.
    fn devices_last_received(&self) -> StoreFuture<'_, Vec<(String, DateTime<Utc>)>>;
    /// Registers `public_key` (lower-case hex of an Ed25519 key) for the device at login.
    /// Idempotent for a key the device already has; `KeyRegistration::OtherDevice` when the key
    /// is bound to another device. Audited when new.
    fn register_device_key(
        &self,
        device_id: String,
        public_key: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, KeyRegistration>;
    /// The server's receipt of a device-sealed record, if it has one.
    fn receipt_of(&self, record_id: String) -> StoreFuture<'_, Option<crate::receipts::Receipt>>;
    /// The receipt whose auto carries `code` (for the public verification page).
    fn receipt_by_code(
        &self,
        code: documents::VerificationCode,
    ) -> StoreFuture<'_, Option<crate::receipts::Receipt>>;
    /// Revokes a device and every refresh token issued to it. Idempotent. Audited.
    fn revoke_device(&self, id: String, actor: Actor) -> StoreFuture<'_, DeviceRow>;
    /// The per-request check of the auth extractor: one indexed read. With `family`, also
    /// whether that refresh-token family is still live (`SessionState::family_live`).
    fn session(
        &self,
        user_id: String,
        device_id: String,
        family: Option<String>,
    ) -> StoreFuture<'_, Option<SessionState>>;
    fn insert_refresh_token(&self, row: RefreshTokenRow) -> StoreFuture<'_, ()>;
    /// Spends `presented_hash` and stores `next_hash` in its family, in one transaction. A
    /// spent token presented again with the successor it was spent into, within
    /// `limits::REFRESH_REUSE_INTERVAL_SECS` and while that successor is unused, is
    /// `Repeated` (nothing written); any other spent token is `Reused` and ends the family.
    fn rotate_refresh_token(
        &self,
        presented_hash: String,
        next_hash: String,
        next_expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, RotateOutcome>;

    // ----- registry ---------------------------------------------------------------------------

    /// The current registry (cached; one point query to see whether the cache is current).
    fn registry(&self) -> StoreFuture<'_, Arc<Registry>>;
    /// Commits a new version with its change log and audit row; `VersionConflict` if the
    /// registry is no longer at `expected_version`. Returns the new version and the commit's
    /// changes, handed back so that a caller that reports them need not copy them first (an
    /// import's are the whole registry).
    fn commit_registry(&self, commit: RegistryCommit) -> StoreFuture<'_, RegistryCommitted>;
    /// The changes from `since` to the current version, or why the client needs a snapshot.
    fn registry_changes(&self, since: u64, max_span: u64) -> StoreFuture<'_, ChangesSince>;

    // ----- field support ----------------------------------------------------------------------

    /// Leases `size` auto numbers after the highest ever leased, to an active device. Audited.
    fn lease_numbers(
        &self,
        device_id: String,
        size: u64,
        actor: Actor,
    ) -> StoreFuture<'_, NumberBlock>;
    /// Stores a photo whose hash the caller verified; idempotent. Audited when new.
    fn put_photo(&self, meta: PhotoMeta, bytes: Vec<u8>, actor: Actor)
    -> StoreFuture<'_, PutPhoto>;
    fn photo(&self, sha256: String) -> StoreFuture<'_, Option<(PhotoMeta, Vec<u8>)>>;
    /// Which of these (lower-case hex) hashes are stored; for the client's upload resume.
    fn photos_present(&self, hashes: Vec<String>) -> StoreFuture<'_, Vec<String>>;

    // ----- audit --------------------------------------------------------------------------------

    /// Walks the whole audit chain.
    fn verify_audit(&self) -> StoreFuture<'_, AuditReport>;

    /// The audit chain's head (its last row's seq and hash), for anchoring.
    fn audit_head(&self) -> StoreFuture<'_, crate::audit::ChainHead>;

    /// The hash of the audit row `seq`, if the chain has it (to check an anchor).
    fn audit_row_hash(&self, seq: u64) -> StoreFuture<'_, Option<String>>;

    /// Why the chain does not hold `anchor` (a cut tail, a rewritten chain), or `None`.
    fn audit_anchor_problem(
        &self,
        anchor: crate::audit::ChainHead,
    ) -> StoreFuture<'_, Option<String>>;

    /// Checks the derived tables against the documents and the chain (read-only): what
    /// `audit verify` reports beside the chain ([`consistency`]).
    fn check_consistency(&self) -> StoreFuture<'_, consistency::ConsistencyReport>;

    // ----- field records (module `records`) -----------------------------------------------------

    /// One record sync exchange: `ServerSync` run and its effects (accepted changes with their
    /// projection and audit rows, quarantine, bindings, per-device state) written in one
    /// transaction. `Ok(Err(_))`: the exchange was refused as a whole and nothing was written.
    fn sync_records(&self, job: SyncJob) -> StoreFuture<'_, SyncOutcome>;
    /// An office event appended server-side through the same vetting, in one transaction.
    fn record_event(&self, job: EventJob) -> StoreFuture<'_, EventOutcome>;
    /// The projection, filtered, newest first.
    fn list_records(&self, filter: RecordFilter) -> StoreFuture<'_, RecordPage>;
    /// One record with its document.
    fn record(&self, id: String) -> StoreFuture<'_, Option<RecordDoc>>;
    /// The audit rows of one record.
    fn record_audit(&self, id: String) -> StoreFuture<'_, Vec<crate::audit::AuditRow>>;
    /// The refused changes of one record.
    fn record_quarantine(&self, id: String) -> StoreFuture<'_, Vec<QuarantineRow>>;

    // ----- office workflow (module `office`) -------------------------------------------

    /// The office's inbox: one page of the projection, filtered (rule too), newest first, with
    /// the total and the counts per status, read in one snapshot.
    fn office_inbox(&self, filter: RecordFilter) -> StoreFuture<'_, InboxPage>;
    /// Records that may duplicate another — open (not drafts, annulled, archived or merged),
    /// sharing their canonical plate with an open record of another device made at most
    /// [`office::DUPLICATE_WINDOW_MINUTES`] apart — kept up to date as changes are stored, and
    /// read a page of plates at a time. The caller judges place and settled pairs on the views.
    fn duplicate_candidates(
        &self,
        query: office::CandidateQuery,
    ) -> StoreFuture<'_, office::CandidatePage>;
    /// Office events on one or more records and the registry effect of one of them, in one
    /// transaction (see [`office`]).
    fn office_apply(&self, job: OfficeJob) -> StoreFuture<'_, OfficeOutcome>;

    // ----- notifications of penalty and verification codes (`notifications`) -----

    /// Numbers, seals and stores notifications in one transaction with their audit rows and
    /// verification codes; [`StoreError::Duplicate`] (nothing stored) when one of them exists.
    fn create_notifications(
        &self,
        drafts: Vec<notifications::NewNotification>,
        actor: Actor,
    ) -> StoreFuture<'_, Vec<notifications::NotificationRow>>;
    /// The notifications of a record, oldest first.
    fn record_notifications(
        &self,
        record_id: String,
    ) -> StoreFuture<'_, Vec<notifications::NotificationRow>>;
    fn notification(&self, id: String) -> StoreFuture<'_, Option<notifications::NotificationRow>>;
    /// What a verification code names.
    fn verification_code(
        &self,
        code: documents::VerificationCode,
    ) -> StoreFuture<'_, Option<notifications::CodeTarget>>;
    /// The code registered for a record's printed auto, if any.
    fn record_auto_code(
        &self,
        record_id: String,
    ) -> StoreFuture<'_, Option<documents::VerificationCode>>;
    /// Registers the code printed on an auto (the sync path does it in its own transaction
    /// with its own backend function).
    fn register_auto_code(
        &self,
        code: documents::VerificationCode,
        record_id: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, ()>;

    // ----- observed persons of records (`observed`) -------------------------------------

    /// Replaces a record's observed persons with `persons` (already checked against the
    /// record), with its audit row; nothing when the set is the same or was erased.
    fn put_observed_persons(
        &self,
        record_id: String,
        persons: Vec<sync_core::sync::ObservedIdentity>,
        actor: Actor,
    ) -> StoreFuture<'_, observed::PutObserved>;
    /// What the server holds of a record's observed persons, and their erasure.
    fn observed_persons(&self, record_id: String) -> StoreFuture<'_, observed::ObservedPersons>;
    /// Deletes a record's observed persons and records the erasure (idempotent).
    fn erase_observed_persons(
        &self,
        record_id: String,
        actor: Actor,
    ) -> StoreFuture<'_, observed::Erasure>;
    /// Ids of the records merged as duplicates into `kept_id`.
    fn merged_into(&self, kept_id: String) -> StoreFuture<'_, Vec<String>>;

    // ----- editais de chamamento (`selection`) ------------------------------------------

    /// One edital with its version.
    fn edital(&self, id: String) -> StoreFuture<'_, Option<EditalRow>>;
    /// The editais, newest first (by creation, then id), at most
    /// [`selection::MAX_EDITAIS_LISTED`].
    fn list_editais(&self) -> StoreFuture<'_, Vec<EditalRow>>;
    /// Creates (`expected_version: None`; `Duplicate` for a known id) or replaces an edital
    /// under optimistic concurrency (`VersionConflict` when it is no longer at
    /// `expected_version`; `NotFound` when it does not exist), with its audit row and, when
    /// `registry` is given, that registry version (its own change log and audit row, exactly as
    /// [`Store::commit_registry`]; `VersionConflict` when the registry moved) — all in one
    /// transaction, or nothing.
    fn save_edital(&self, save: EditalSave) -> StoreFuture<'_, EditalSaved>;

    // ----- office browser sessions (`web_sessions`) -------------------------------------

    /// Stores a new browser session, in one write transaction that first deletes every expired
    /// session (anybody's, by `timeouts` at `session.created_at`), then inserts `session`, then
    /// deletes the user's oldest sessions (by `created_at`) beyond
    /// [`web_sessions::MAX_WEB_SESSIONS_PER_USER`], never the new one. `Duplicate` (nothing
    /// written) when the key is taken.
    fn open_web_session(
        &self,
        session: web_sessions::WebSessionRow,
        timeouts: web_sessions::Timeouts,
    ) -> StoreFuture<'_, ()>;
    /// The live session of `key` at `now`, as stored (with its pending flash, not taken). One
    /// read; then, only when [`web_sessions::touch_action`] says so, one write transaction
    /// that decides again on the row it reads: an expired session is deleted (`None`), a live
    /// one whose `last_seen` is [`web_sessions::TOUCH_INTERVAL`] old or older gets `now` as
    /// `last_seen` (returned so). Idle expiry is therefore exact to that interval.
    fn touch_web_session(
        &self,
        key: String,
        now: DateTime<Utc>,
        timeouts: web_sessions::Timeouts,
    ) -> StoreFuture<'_, Option<web_sessions::WebSessionRow>>;
    /// Deletes the session of `key` (logout, or a session whose user or device is out), in one
    /// write transaction; whether there was one.
    fn end_web_session(&self, key: String) -> StoreFuture<'_, bool>;
    /// Deletes every session of `user_id` but the one keyed `keep` (a password changed or reset,
    /// an account deactivated), in one write transaction; how many ended.
    fn end_user_web_sessions(&self, user_id: String, keep: Option<String>) -> StoreFuture<'_, u64>;
    /// Sets the session's one-shot message (replacing a pending one), in one write transaction;
    /// `false` when there is no session of `key`.
    fn set_web_flash(&self, key: String, flash: web_sessions::Flash) -> StoreFuture<'_, bool>;
    /// The session's pending message, cleared in the same write transaction that reads it, so
    /// two pages racing show it once.
    fn take_web_flash(&self, key: String) -> StoreFuture<'_, Option<web_sessions::Flash>>;
    /// Sessions stored, expired ones not yet deleted included (tests, and what an operator
    /// looks at).
    fn count_web_sessions(&self) -> StoreFuture<'_, u64>;

    // ----- login failure budgets (`logins`) ---------------------------------------------

    /// Reserves one login attempt from the (username, address) pair's and the username's
    /// budgets, in one write transaction that first prunes at most [`logins::PRUNE_BATCH`]
    /// expired rows of each table, then reads the two rows and writes what [`logins::reserve`]
    /// answers. `Ok(Err(seconds))`: refused, no attempt left for that long.
    fn login_reserve(
        &self,
        key: logins::LoginKey,
        policies: logins::Policies,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<(), u64>>;
    /// Settles an attempt reserved before, in one write transaction ([`logins::settle`]).
    /// `Some(seconds)`: that failure spent a budget, locked for that long.
    fn login_settle(
        &self,
        key: logins::LoginKey,
        outcome: logins::Settle,
        policies: logins::Policies,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, Option<u64>>;
    /// Attempts counted for the pair and the username, and the rows of each table (tests,
    /// logs).
    fn login_counts(&self, key: logins::LoginKey) -> StoreFuture<'_, logins::LoginCounts>;
}
