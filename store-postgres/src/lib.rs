//! The PostgreSQL backend: one database that several server nodes share (ADR 0034), chosen
//! with `TAXI_FISCAL_DATABASE_URL=postgres://…`.
//!
//! Flow: [`PgStore::open`] makes a pool of connections (`pool`: `tokio-postgres` connections,
//! each owned by a thread of its own that drives its I/O) and brings the schema to this build's
//! version (`migrations`: SQL files, each applied once under an advisory lock, so nodes starting
//! together agree). Each `Store` method hands one closure to the pool, which runs it on a
//! connection's thread inside one transaction, given a `Conn` with blocking calls: a write takes the database-wide write lock
//! first (the one-writer discipline of the SQLite backend, held by PostgreSQL so that it holds
//! across nodes), a read runs in one read-only snapshot. The area modules hold the SQL, as the
//! SQLite backend's do, function for function; `audit::append` writes the chain row inside the
//! same transaction as the change. The registry is cached per node as an `Arc<Registry>` tagged
//! with its version; reading it costs one point query on `registry_meta` while the cache is
//! current, so a version committed by another node is seen at the next read.
//!
//! Errors: the modules fail with this crate's own `Error` (the driver's error, or a store
//! outcome already told apart); the pool converts it once, at the edge of every `Store` method,
//! into the driver-neutral `StoreError`. The suite every backend runs is at the end of this
//! file; it needs a PostgreSQL server (`TAXI_FISCAL_TEST_POSTGRES_URL`, which `scripts/test`
//! sets after starting a throwaway one).

mod accounts;
mod audit;
mod consistency;
mod field;
mod logins;
mod migrations;
mod notifications;
mod observed;
mod office;
mod optimistic;
mod pool;
mod projection;
mod records;
mod registry;
mod selection;
mod web_sessions;

pub use pool::{CHECK_IDLE_AFTER, CONNECT_TIMEOUT, MAX_CONNECTIONS, WRITE_LOCK};

use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use sync_core::domain::Registry;
use tokio_postgres::error::SqlState;

use pool::Pool;

use taxi_fiscal_store::audit::AuditReport;
use taxi_fiscal_store::office::{InboxPage, OfficeJob, OfficeOutcome};
use taxi_fiscal_store::records::{
    EventJob, EventOutcome, QuarantineRow, RecordDoc, RecordFilter, RecordPage, SyncJob,
    SyncOutcome,
};
use taxi_fiscal_store::{
    Actor, ChangesSince, DeviceRow, NewDevice, NumberBlock, PhotoMeta, PutPhoto, RefreshTokenRow,
    RegistryCommit, RegistryCommitted, RotateOutcome, SessionState, Store, StoreError, StoreFuture,
    UserRow,
};

/// The PostgreSQL store.
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: Pool,
    cache: Arc<Mutex<Option<Arc<Registry>>>>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, or
    /// the key=value form) and migrates it. The database must exist; an empty one is set up,
    /// one that holds other tables is refused.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let config = tokio_postgres::Config::from_str(url).map_err(|e| StoreError::Open {
            path: redact(url),
            reason: format!("endereço do PostgreSQL inválido: {e}"),
        })?;
        let what = describe(&config);
        let pool = Pool::new(config, what.clone())?;
        pool.with_client(move |client, rt| migrations::migrate(client, rt, &what))
            .await?;
        Ok(Self {
            pool,
            cache: Arc::new(Mutex::new(None)),
        })
    }

    fn cached(&self, version: u64) -> Option<Arc<Registry>> {
        let cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        cache.as_ref().filter(|r| r.version == version).cloned()
    }

    fn set_cache(&self, reg: Arc<Registry>) {
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.as_ref().is_none_or(|c| c.version <= reg.version) {
            *cache = Some(reg);
        }
    }
}

/// The database a config names, for messages: host, port and database, never the password.
fn describe(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_default();
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().unwrap_or_default();
    format!("PostgreSQL {host}:{port}/{db}")
}

/// `url` without its password, for a message about a URL that did not parse.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            let user = creds.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => String::from("PostgreSQL"),
    }
}

/// A stored instant (RFC 3339 text, as `store::audit::format_at` writes it).
pub(crate) fn parse_time(s: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| corrupt("instante", e))
}

pub(crate) fn opt_time(s: Option<String>) -> Result<Option<DateTime<Utc>>> {
    s.as_deref().map(parse_time).transpose()
}

/// A stored value this code cannot read.
pub(crate) fn corrupt(what: &'static str, reason: impl ToString) -> Error {
    Error::Store(StoreError::Corrupt {
        what,
        reason: reason.to_string(),
    })
}

/// What the backend's own functions fail with: the driver's error, or a store outcome already
/// decided (`Duplicate`, `NotFound`, a version conflict, …), told apart where the SQL that
/// failed is known. It never leaves this crate: every `Store` method converts it at the edge
/// (in `Pool`), the driver's errors becoming the driver-neutral [`StoreError::Backend`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    #[error(transparent)]
    Postgres(tokio_postgres::Error),
    #[error(transparent)]
    Store(StoreError),
}

/// The backend's result, [`Error`] unless said otherwise.
pub(crate) type Result<T, E = Error> = std::result::Result<T, E>;

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        Error::Postgres(e)
    }
}

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Error::Store(e)
    }
}

impl From<Error> for StoreError {
    fn from(e: Error) -> Self {
        match e {
            Error::Postgres(e) => StoreError::Backend(Box::new(e)),
            Error::Store(e) => e,
        }
    }
}

/// A UNIQUE or PRIMARY KEY violation becomes `Duplicate { what }`.
pub(crate) fn unique_violation(e: tokio_postgres::Error, what: &'static str) -> Error {
    if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
        Error::Store(StoreError::Duplicate { what })
    } else {
        Error::Postgres(e)
    }
}

/// `u64` as stored (BIGINT); the values stored are far below `i64::MAX`.
pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A stored BIGINT as `u64` (never negative by the schema's checks).
pub(crate) fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Store for PgStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    fn count_users(&self) -> StoreFuture<'_, u64> {
        Box::pin(self.pool.read(accounts::count_users))
    }

    fn create_user(&self, user: UserRow, actor: Actor) -> StoreFuture<'_, UserRow> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::create_user(tx, &user, &actor)),
        )
    }

    fn user_by_username(&self, username: String) -> StoreFuture<'_, Option<UserRow>> {
        Box::pin(
            self.pool
                .read(move |c| accounts::user_by_username(c, &username)),
        )
    }

    fn list_users(&self) -> StoreFuture<'_, Vec<UserRow>> {
        Box::pin(self.pool.read(accounts::list_users))
    }

    fn change_password(
        &self,
        user_id: String,
        expected_hash: String,
        new_hash: String,
        keep_family: Option<String>,
        actor: Actor,
    ) -> StoreFuture<'_, bool> {
        Box::pin(self.pool.write(move |tx| {
            accounts::change_password(
                tx,
                &user_id,
                &expected_hash,
                &new_hash,
                keep_family.as_deref(),
                &actor,
            )
        }))
    }

    fn user_by_id(&self, id: String) -> StoreFuture<'_, Option<UserRow>> {
        Box::pin(self.pool.read(move |c| accounts::user_by_id(c, &id)))
    }

    fn set_user_role(
        &self,
        user_id: String,
        role: taxi_fiscal_store::Role,
        stand_id: Option<String>,
        actor: Actor,
    ) -> StoreFuture<'_, UserRow> {
        Box::pin(self.pool.write(move |tx| {
            accounts::set_user_role(tx, &user_id, role, stand_id.as_deref(), &actor)
        }))
    }

    fn set_user_active(
        &self,
        user_id: String,
        active: bool,
        actor: Actor,
    ) -> StoreFuture<'_, UserRow> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::set_user_active(tx, &user_id, active, &actor)),
        )
    }

    fn create_account_code(
        &self,
        code: taxi_fiscal_store::NewAccountCode,
        actor: Actor,
    ) -> StoreFuture<'_, ()> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::create_account_code(tx, &code, &actor)),
        )
    }

    fn account_code(
        &self,
        code_hash: String,
        purpose: taxi_fiscal_store::CodePurpose,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<UserRow, taxi_fiscal_store::CodeRefusal>> {
        Box::pin(
            self.pool
                .read(move |c| accounts::account_code(c, &code_hash, purpose, now)),
        )
    }

    fn reset_password_with_code(
        &self,
        code_hash: String,
        new_hash: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<UserRow, taxi_fiscal_store::CodeRefusal>> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::reset_password_with_code(tx, &code_hash, &new_hash, at)),
        )
    }

    fn enrol_device(
        &self,
        code_hash: String,
        device_id: String,
        label: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<DeviceRow, taxi_fiscal_store::CodeRefusal>> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::enrol_device(tx, &code_hash, &device_id, &label, at)),
        )
    }

    fn register_device(&self, device: NewDevice, actor: Actor) -> StoreFuture<'_, DeviceRow> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::register_device(tx, &device, &actor)),
        )
    }

    fn device(&self, id: String) -> StoreFuture<'_, Option<DeviceRow>> {
        Box::pin(self.pool.read(move |c| accounts::device(c, &id)))
    }

    fn list_devices(&self) -> StoreFuture<'_, Vec<DeviceRow>> {
        Box::pin(self.pool.read(accounts::list_devices))
    }

    fn devices_last_received(&self) -> StoreFuture<'_, Vec<(String, DateTime<Utc>)>> {
        Box::pin(self.pool.read(accounts::devices_last_received))
    }

    fn register_device_key(
        &self,
        device_id: String,
        public_key: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, taxi_fiscal_store::KeyRegistration> {
        Box::pin(
            self.pool
                .write(move |tx| records::register_device_key(tx, &device_id, &public_key, at)),
        )
    }

    fn receipt_of(
        &self,
        record_id: String,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::receipts::Receipt>> {
        Box::pin(self.pool.read(move |c| records::receipt_of(c, &record_id)))
    }

    fn receipt_by_code(
        &self,
        code: documents::VerificationCode,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::receipts::Receipt>> {
        Box::pin(self.pool.read(move |c| records::receipt_by_code(c, &code)))
    }

    fn revoke_device(&self, id: String, actor: Actor) -> StoreFuture<'_, DeviceRow> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::revoke_device(tx, &id, &actor)),
        )
    }

    fn session(
        &self,
        user_id: String,
        device_id: String,
        family: Option<String>,
    ) -> StoreFuture<'_, Option<SessionState>> {
        Box::pin(
            self.pool
                .read(move |c| accounts::session(c, &user_id, &device_id, family.as_deref())),
        )
    }

    fn insert_refresh_token(&self, row: RefreshTokenRow) -> StoreFuture<'_, ()> {
        Box::pin(
            self.pool
                .write(move |tx| accounts::insert_refresh(tx, &row)),
        )
    }

    fn rotate_refresh_token(
        &self,
        presented_hash: String,
        next_hash: String,
        next_expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, RotateOutcome> {
        Box::pin(self.pool.write(move |tx| {
            accounts::rotate_refresh(tx, &presented_hash, &next_hash, next_expires_at, now)
        }))
    }

    fn registry(&self) -> StoreFuture<'_, Arc<Registry>> {
        Box::pin(async move {
            let cache = self.cache.clone();
            let current = {
                let c = cache.lock().unwrap_or_else(PoisonError::into_inner);
                c.as_ref().map(|r| r.version)
            };
            let (version, loaded) = self
                .pool
                .read(move |c| {
                    let (v, _) = registry::version(c)?;
                    if current == Some(v) {
                        Ok((v, None))
                    } else {
                        // Same read transaction: the entities match this version.
                        Ok((v, Some(registry::load(c)?)))
                    }
                })
                .await?;
            match loaded {
                Some(reg) => {
                    let reg = Arc::new(reg);
                    self.set_cache(reg.clone());
                    Ok(reg)
                }
                None => match self.cached(version) {
                    Some(reg) => Ok(reg),
                    // The cache moved between the two looks: read it whole.
                    None => {
                        let reg = Arc::new(self.pool.read(registry::load).await?);
                        self.set_cache(reg.clone());
                        Ok(reg)
                    }
                },
            }
        })
    }

    fn commit_registry(&self, commit: RegistryCommit) -> StoreFuture<'_, RegistryCommitted> {
        Box::pin(async move {
            let reg = commit.registry.clone();
            let committed = self
                .pool
                .write(move |tx| {
                    let version = registry::commit(tx, &commit)?;
                    Ok(RegistryCommitted {
                        version,
                        changes: commit.changes.changes,
                    })
                })
                .await?;
            self.set_cache(reg);
            Ok(committed)
        })
    }

    fn registry_changes(&self, since: u64, max_span: u64) -> StoreFuture<'_, ChangesSince> {
        Box::pin(
            self.pool
                .read(move |c| registry::changes_since(c, since, max_span)),
        )
    }

    fn lease_numbers(
        &self,
        device_id: String,
        size: u64,
        actor: Actor,
    ) -> StoreFuture<'_, NumberBlock> {
        Box::pin(
            self.pool
                .write(move |tx| field::lease(tx, &device_id, size, &actor)),
        )
    }

    fn put_photo(
        &self,
        meta: PhotoMeta,
        bytes: Vec<u8>,
        actor: Actor,
    ) -> StoreFuture<'_, PutPhoto> {
        Box::pin(
            self.pool
                .write(move |tx| field::put_photo(tx, &meta, &bytes, &actor)),
        )
    }

    fn photo(&self, sha256: String) -> StoreFuture<'_, Option<(PhotoMeta, Vec<u8>)>> {
        Box::pin(self.pool.read(move |c| field::photo(c, &sha256)))
    }

    fn photos_present(&self, hashes: Vec<String>) -> StoreFuture<'_, Vec<String>> {
        Box::pin(self.pool.read(move |c| field::photos_present(c, &hashes)))
    }

    fn verify_audit(&self) -> StoreFuture<'_, AuditReport> {
        Box::pin(self.pool.read(audit::verify))
    }

    fn audit_head(&self) -> StoreFuture<'_, taxi_fiscal_store::audit::ChainHead> {
        Box::pin(self.pool.read(audit::head))
    }

    fn audit_row_hash(&self, seq: u64) -> StoreFuture<'_, Option<String>> {
        Box::pin(self.pool.read(move |c| audit::row_hash(c, seq)))
    }

    fn audit_anchor_problem(
        &self,
        anchor: taxi_fiscal_store::audit::ChainHead,
    ) -> StoreFuture<'_, Option<String>> {
        Box::pin(self.pool.read(move |c| audit::anchor_problem(c, &anchor)))
    }

    fn check_consistency(
        &self,
    ) -> StoreFuture<'_, taxi_fiscal_store::consistency::ConsistencyReport> {
        Box::pin(self.pool.read(consistency::check))
    }

    /// Prepared on a read snapshot (decoding, merging and vetting in parallel with other
    /// devices, on any node), committed under the write lock after its reads are checked
    /// again (`optimistic`).
    fn sync_records(&self, job: SyncJob) -> StoreFuture<'_, SyncOutcome> {
        Box::pin(async move {
            let job = Arc::new(job);
            let for_read = Arc::clone(&job);
            let prepared = self
                .pool
                .read(move |tx| optimistic::prepare(tx, &for_read))
                .await?;
            if let optimistic::Prepared::Answer(outcome) = prepared {
                return Ok(outcome);
            }
            self.pool
                .write(move |tx| optimistic::commit(tx, &job, prepared))
                .await
        })
    }

    fn record_event(&self, job: EventJob) -> StoreFuture<'_, EventOutcome> {
        Box::pin(self.pool.write(move |tx| records::office_event(tx, &job)))
    }

    fn list_records(&self, filter: RecordFilter) -> StoreFuture<'_, RecordPage> {
        Box::pin(self.pool.read(move |c| records::list(c, &filter)))
    }

    fn record(&self, id: String) -> StoreFuture<'_, Option<RecordDoc>> {
        Box::pin(self.pool.read(move |c| records::record(c, &id)))
    }

    fn record_audit(&self, id: String) -> StoreFuture<'_, Vec<taxi_fiscal_store::audit::AuditRow>> {
        Box::pin(self.pool.read(move |c| records::audit(c, &id)))
    }

    fn record_quarantine(&self, id: String) -> StoreFuture<'_, Vec<QuarantineRow>> {
        Box::pin(self.pool.read(move |c| records::quarantine(c, &id)))
    }

    fn office_inbox(&self, filter: RecordFilter) -> StoreFuture<'_, InboxPage> {
        Box::pin(self.pool.read(move |c| office::inbox(c, &filter)))
    }

    fn duplicate_candidates(
        &self,
        query: taxi_fiscal_store::office::CandidateQuery,
    ) -> StoreFuture<'_, taxi_fiscal_store::office::CandidatePage> {
        Box::pin(
            self.pool
                .read(move |c| office::duplicate_candidates(c, &query)),
        )
    }

    fn create_notifications(
        &self,
        drafts: Vec<taxi_fiscal_store::notifications::NewNotification>,
        actor: Actor,
    ) -> StoreFuture<'_, Vec<taxi_fiscal_store::notifications::NotificationRow>> {
        Box::pin(
            self.pool
                .write(move |tx| notifications::create(tx, &drafts, &actor)),
        )
    }

    fn record_notifications(
        &self,
        record_id: String,
    ) -> StoreFuture<'_, Vec<taxi_fiscal_store::notifications::NotificationRow>> {
        Box::pin(
            self.pool
                .read(move |c| notifications::of_record(c, &record_id)),
        )
    }

    fn notification(
        &self,
        id: String,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::notifications::NotificationRow>> {
        Box::pin(self.pool.read(move |c| notifications::by_id(c, &id)))
    }

    fn verification_code(
        &self,
        code: documents::VerificationCode,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::notifications::CodeTarget>> {
        Box::pin(self.pool.read(move |c| notifications::lookup(c, &code)))
    }

    fn record_auto_code(
        &self,
        record_id: String,
    ) -> StoreFuture<'_, Option<documents::VerificationCode>> {
        Box::pin(
            self.pool
                .read(move |c| notifications::auto_code_of(c, &record_id)),
        )
    }

    fn register_auto_code(
        &self,
        code: documents::VerificationCode,
        record_id: String,
        at: DateTime<Utc>,
    ) -> StoreFuture<'_, ()> {
        Box::pin(
            self.pool
                .write(move |tx| notifications::register_auto_code(tx, &code, &record_id, at)),
        )
    }

    fn office_apply(&self, job: OfficeJob) -> StoreFuture<'_, OfficeOutcome> {
        Box::pin(async move {
            let (outcome, registry) = self.pool.write(move |tx| office::apply(tx, &job)).await?;
            if let Some(reg) = registry {
                self.set_cache(reg);
            }
            Ok(outcome)
        })
    }

    fn put_observed_persons(
        &self,
        record_id: String,
        persons: Vec<sync_core::sync::ObservedIdentity>,
        actor: Actor,
    ) -> StoreFuture<'_, taxi_fiscal_store::observed::PutObserved> {
        Box::pin(
            self.pool
                .write(move |tx| observed::put(tx, &record_id, &persons, &actor)),
        )
    }

    fn observed_persons(
        &self,
        record_id: String,
    ) -> StoreFuture<'_, taxi_fiscal_store::observed::ObservedPersons> {
        Box::pin(self.pool.read(move |c| observed::of_record(c, &record_id)))
    }

    fn erase_observed_persons(
        &self,
        record_id: String,
        actor: Actor,
    ) -> StoreFuture<'_, taxi_fiscal_store::observed::Erasure> {
        Box::pin(
            self.pool
                .write(move |tx| observed::erase(tx, &record_id, &actor)),
        )
    }

    fn merged_into(&self, kept_id: String) -> StoreFuture<'_, Vec<String>> {
        Box::pin(self.pool.read(move |c| observed::merged_into(c, &kept_id)))
    }

    fn edital(
        &self,
        id: String,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::selection::EditalRow>> {
        Box::pin(self.pool.read(move |c| selection::edital(c, &id)))
    }

    fn list_editais(&self) -> StoreFuture<'_, Vec<taxi_fiscal_store::selection::EditalRow>> {
        Box::pin(self.pool.read(selection::list))
    }

    fn save_edital(
        &self,
        save: taxi_fiscal_store::selection::EditalSave,
    ) -> StoreFuture<'_, taxi_fiscal_store::selection::EditalSaved> {
        Box::pin(async move {
            let reg = save.registry.as_ref().map(|c| c.registry.clone());
            let saved = self.pool.write(move |tx| selection::save(tx, save)).await?;
            // As after `commit_registry`: the cache holds the version just committed.
            if let Some(reg) = reg {
                self.set_cache(reg);
            }
            Ok(saved)
        })
    }

    // ----- login failure budgets -------------------------------------------------------------

    fn login_reserve(
        &self,
        key: taxi_fiscal_store::logins::LoginKey,
        policies: taxi_fiscal_store::logins::Policies,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, Result<(), u64>> {
        Box::pin(
            self.pool
                .write(move |tx| logins::reserve(tx, &key, &policies, now)),
        )
    }

    fn login_settle(
        &self,
        key: taxi_fiscal_store::logins::LoginKey,
        outcome: taxi_fiscal_store::logins::Settle,
        policies: taxi_fiscal_store::logins::Policies,
        now: DateTime<Utc>,
    ) -> StoreFuture<'_, Option<u64>> {
        Box::pin(
            self.pool
                .write(move |tx| logins::settle(tx, &key, outcome, &policies, now)),
        )
    }

    fn login_counts(
        &self,
        key: taxi_fiscal_store::logins::LoginKey,
    ) -> StoreFuture<'_, taxi_fiscal_store::logins::LoginCounts> {
        Box::pin(self.pool.read(move |c| logins::counts(c, &key)))
    }

    // ----- office browser sessions (`web_sessions`) -------------------------------------

    fn open_web_session(
        &self,
        session: taxi_fiscal_store::web_sessions::WebSessionRow,
        timeouts: taxi_fiscal_store::web_sessions::Timeouts,
    ) -> StoreFuture<'_, ()> {
        Box::pin(
            self.pool
                .write(move |c| web_sessions::open(c, &session, timeouts)),
        )
    }

    fn touch_web_session(
        &self,
        key: String,
        now: DateTime<Utc>,
        timeouts: taxi_fiscal_store::web_sessions::Timeouts,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::web_sessions::WebSessionRow>> {
        Box::pin(web_sessions::touch(&self.pool, key, now, timeouts))
    }

    fn end_web_session(&self, key: String) -> StoreFuture<'_, bool> {
        Box::pin(self.pool.write(move |c| web_sessions::end(c, &key)))
    }

    fn end_user_web_sessions(&self, user_id: String, keep: Option<String>) -> StoreFuture<'_, u64> {
        Box::pin(
            self.pool
                .write(move |c| web_sessions::end_user(c, &user_id, keep.as_deref())),
        )
    }

    fn set_web_flash(
        &self,
        key: String,
        flash: taxi_fiscal_store::web_sessions::Flash,
    ) -> StoreFuture<'_, bool> {
        Box::pin(
            self.pool
                .write(move |c| web_sessions::set_flash(c, &key, &flash)),
        )
    }

    fn take_web_flash(
        &self,
        key: String,
    ) -> StoreFuture<'_, Option<taxi_fiscal_store::web_sessions::Flash>> {
        Box::pin(self.pool.write(move |c| web_sessions::take_flash(c, &key)))
    }

    fn count_web_sessions(&self) -> StoreFuture<'_, u64> {
        Box::pin(self.pool.read(web_sessions::count))
    }
}

/// The backend-independent behaviour suite (`store::conformance`), each test on a new, empty
/// database of the server at `TAXI_FISCAL_TEST_POSTGRES_URL` (`scripts/test` starts a
/// throwaway one and sets it).
#[cfg(test)]
pub(crate) mod test_db {
    /// A new empty database on the test server; its URL.
    pub(crate) async fn fresh() -> String {
        let admin = std::env::var("TAXI_FISCAL_TEST_POSTGRES_URL").expect(
            "TAXI_FISCAL_TEST_POSTGRES_URL must name a PostgreSQL server for these tests \
             (./scripts/test starts one)",
        );
        let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .expect("connect to the test server");
        tokio::spawn(conn);
        let name = format!("tf_{}", uuid::Uuid::now_v7().simple());
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create the test database");
        let mut config: tokio_postgres::Config = admin.parse().expect("test server URL");
        config.dbname(&name);
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
            _ => String::from("127.0.0.1"),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let user = config.get_user().unwrap_or("postgres").to_owned();
        format!("postgres://{user}@{host}:{port}/{name}")
    }
}

#[cfg(test)]
mod conformance_tests {
    use std::sync::Arc;

    use super::{PgStore, Store};

    taxi_fiscal_store::conformance::store_conformance_tests!(async {
        let url = crate::test_db::fresh().await;
        Arc::new(PgStore::open(&url).await.unwrap()) as Arc<dyn Store>
    });
}

/// Opening: what the server does with a database that is missing, someone else's, already
/// migrated, or newer than this build — and what it says.
#[cfg(test)]
mod open_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::{PgStore, Store, StoreError, migrations};

    async fn sql(url: &str, text: &str) {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client.batch_execute(text).await.unwrap();
    }

    fn message(e: StoreError) -> String {
        let mut text = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        text
    }

    #[tokio::test]
    async fn a_missing_database_is_named_with_the_servers_reason_and_no_password() {
        let url = crate::test_db::fresh().await;
        let missing = format!(
            "{}_nao_existe",
            url.replace("postgres://postgres@", "postgres://postgres:segredo@")
        );
        let e = message(PgStore::open(&missing).await.unwrap_err());
        assert!(e.contains("_nao_existe"), "{e}");
        assert!(e.contains("does not exist"), "{e}");
        assert!(!e.contains("segredo"), "{e}");
        let e = message(
            PgStore::open("postgres://a:segredo@[::1")
                .await
                .unwrap_err(),
        );
        assert!(e.contains("endereço do PostgreSQL inválido"), "{e}");
        assert!(!e.contains("segredo"), "{e}");
    }

    #[tokio::test]
    async fn a_database_holding_other_tables_is_refused_and_left_as_it_was() {
        let url = crate::test_db::fresh().await;
        sql(
            &url,
            "CREATE TABLE folha (id int); INSERT INTO folha VALUES (7);",
        )
        .await;
        let e = message(PgStore::open(&url).await.unwrap_err());
        assert!(e.contains("não é um banco do taxi-fiscal"), "{e}");
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        let tables: i64 = client
            .query_one(
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema()",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(tables, 1, "nothing was created beside it");
    }

    #[tokio::test]
    async fn opening_again_keeps_the_data_and_a_newer_schema_is_refused() {
        let url = crate::test_db::fresh().await;
        // Two nodes starting at once: each migration is applied once.
        let (a, b) = tokio::join!(PgStore::open(&url), PgStore::open(&url));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.count_users().await.unwrap(), 0);
        drop((a, b));
        let again = PgStore::open(&url).await.unwrap();
        assert_eq!(again.registry().await.unwrap().version, 0);
        drop(again);
        sql(
            &url,
            &format!(
                "INSERT INTO taxi_fiscal_migrations (version, name) VALUES ({}, 'futura')",
                migrations::LATEST_VERSION + 1
            ),
        )
        .await;
        let e = message(PgStore::open(&url).await.unwrap_err());
        assert!(e.contains("mais nova que a deste servidor"), "{e}");
    }
}
