//! What the server's services share, and the line between them and the transport.
//!
//! The services — the office workflow ([`crate::office`]) and the registry
//! ([`crate::registry`]) — are the server's workflow written once over the [`Store`] trait: they
//! check the caller's role, put each step to the law kernel, read and write through the store,
//! and answer a typed result or one [`ServiceError`]. They know nothing of HTTP: no status
//! codes, no request state. The JSON API ([`crate::api`]) and the office pages
//! ([`crate::web`]) call them with [`Services`] (the store, the configuration with its clock,
//! and the registry's indexes) and the authenticated caller, and map a [`ServiceError`] to
//! their own answer in one place (`From<ServiceError> for AppError`, in [`crate::error`]).
//!
//! Flow of a service call: the transport authenticates (`crate::auth::Auth`), hands the
//! service `&Services`, and the service calls [`Services::indexed_registry`] when it looks
//! people, vehicles and permits up: the current registry version with its lookup indexes,
//! built once per version (off the async threads) instead of once per request — the record
//! page of a 200,000-permit city would otherwise spend nearly all its time indexing the city.

use std::sync::{Arc, Mutex, PoisonError, RwLock};

use sync_core::domain::{IndexedRegistry, Registry};
use sync_core::rules::office::Refusal;

use crate::clock::Clock;
use crate::config::Config;
use crate::store::{Role, Store, StoreError};

/// What every service call is handed: the store, the configuration and the cached indexes.
#[derive(Debug)]
pub struct Services {
    store: Arc<dyn Store>,
    config: Config,
    /// The origins the office pages accept forms from and print in verification addresses:
    /// configured, or the listen address's (set again from the address really bound, e.g.
    /// after port 0).
    origins: RwLock<Arc<[String]>>,
    /// The indexes of the newest registry version asked for; replaced when a newer one is.
    indexed: Mutex<Option<Arc<IndexedRegistry>>>,
}

impl Services {
    pub fn new(config: Config, store: Arc<dyn Store>, origins: Vec<String>) -> Self {
        Self {
            store,
            config,
            origins: RwLock::new(origins.into()),
            indexed: Mutex::new(None),
        }
    }

    /// The server's public origins (`https://taxi.americana.sp.gov.br`), first the one printed
    /// in verification addresses.
    pub fn public_origins(&self) -> Arc<[String]> {
        self.origins
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn set_public_origins(&self, origins: Vec<String>) {
        *self.origins.write().unwrap_or_else(PoisonError::into_inner) = origins.into();
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn clock(&self) -> &Clock {
        &self.config.clock
    }

    /// The current registry (the store's, cached per version by the backend).
    pub async fn registry(&self) -> Result<Arc<Registry>, StoreError> {
        self.store.registry().await
    }

    /// The current registry with its lookup indexes, built once per version. Two requests
    /// that meet a new version at once may both build it (the same result; the cost of one
    /// build each, never a wrong answer); an older version never replaces a newer one.
    pub async fn indexed_registry(&self) -> Result<Arc<IndexedRegistry>, StoreError> {
        let current = self.store.registry().await?;
        if let Some(hit) = self.cached(current.version) {
            return Ok(hit);
        }
        let built = tokio::task::spawn_blocking(move || IndexedRegistry::new(current))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let built = Arc::new(built);
        let mut slot = self.indexed.lock().unwrap_or_else(PoisonError::into_inner);
        match slot.as_ref() {
            Some(newer) if newer.version() > built.version() => {}
            _ => *slot = Some(Arc::clone(&built)),
        }
        Ok(built)
    }

    fn cached(&self, version: u64) -> Option<Arc<IndexedRegistry>> {
        let slot = self.indexed.lock().unwrap_or_else(PoisonError::into_inner);
        slot.as_ref().filter(|i| i.version() == version).cloned()
    }
}

/// Why a service did not do what it was asked. Messages are Portuguese sentences for the
/// person at the desk or in the street; `code`s are stable English identifiers for programs.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The question itself is malformed (a filter, a date, a plate that cannot be read).
    #[error("{message}")]
    Invalid { code: &'static str, message: String },
    /// The caller's role may not do this.
    #[error(
        "Seu perfil ({}) não permite esta operação; permitida a: {}.",
        role.label(),
        allowed.iter().map(|r| r.label()).collect::<Vec<_>>().join(", ")
    )]
    Forbidden {
        role: Role,
        allowed: &'static [Role],
    },
    /// The role may, but not on this (a record someone else wrote): the sentence says why.
    #[error("{0}")]
    NotPermitted(String),
    #[error("{0}")]
    NotFound(String),
    /// The thing is not in a state that allows it (a record not finished, a number taken).
    #[error("{message}")]
    Conflict {
        code: &'static str,
        message: String,
        details: Option<serde_json::Value>,
    },
    /// Well formed, but not acceptable (a step out of order, an invalid penalty).
    #[error("{message}")]
    Unprocessable {
        code: &'static str,
        message: String,
        details: Option<serde_json::Value>,
    },
    /// The law forbids the change: every finding, with its rule and citation.
    #[error("{0}")]
    Refused(Refusal),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something that should not happen (a stored document that does not read): the cause is
    /// for the log, never for the caller.
    #[error("erro interno: {0}")]
    Internal(String),
}

impl ServiceError {
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid {
            code,
            message: message.into(),
        }
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::NotPermitted(message.into())
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::NotFound(message.into())
    }

    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::Conflict {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Self {
        Self::Unprocessable {
            code,
            message: message.into(),
            details: None,
        }
    }

    pub fn refused(refusal: &Refusal) -> Self {
        Self::Refused(refusal.clone())
    }

    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        Self::Internal(cause.to_string())
    }

    /// The same error with structured detail (conflicts and refusals only; others keep none).
    pub fn with_details(mut self, value: serde_json::Value) -> Self {
        match &mut self {
            Self::Conflict { details, .. } | Self::Unprocessable { details, .. } => {
                *details = Some(value);
            }
            _ => {}
        }
        self
    }
}

#[cfg(all(test, feature = "sqlite"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::store::Actor;
    use crate::store::sqlite::SqliteStore;

    /// The indexes are built once per registry version: the same `Arc` while the version
    /// stands, a new one (indexing the new rows) after a commit.
    #[tokio::test]
    async fn the_registry_is_indexed_once_per_version() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("taxi-fiscal.db")).unwrap();
        let svc = Services::new(Config::new(dir.path()), Arc::new(store), Vec::new());
        let first = svc.indexed_registry().await.unwrap();
        let again = svc.indexed_registry().await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        let sample = sync_core::testkit::sample_registry();
        let stand = sample.stands[0].id.clone();
        let actor = Actor::cli(chrono::Utc::now());
        crate::registry::commit(svc.store().as_ref(), actor, "test", "registry", |_| {
            Ok::<_, crate::registry::EditError>(sample.clone())
        })
        .await
        .unwrap();
        let next = svc.indexed_registry().await.unwrap();
        assert_eq!(next.version(), first.version() + 1);
        assert!(!Arc::ptr_eq(&first, &next));
        assert!(first.index().stand(&stand).is_none());
        assert_eq!(next.index().stand(&stand).unwrap().id, stand);
        assert!(Arc::ptr_eq(&next, &svc.indexed_registry().await.unwrap()));
    }
}
