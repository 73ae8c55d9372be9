//! The registry service: how an office change becomes a new registry version.
//!
//! Flow of every change (API handler, CSV import, demo seeding):
//! 1. read the current registry (`Store::registry`, cached);
//! 2. run the operation — a pure function in [`ops`] (or [`csv`] for an import) that builds the
//!    new registry on a copy and has the law kernel judge the whole registry after the write
//!    (`sync_core::rules::office::judge_write`: the office bars of the operation, the art. 14
//!    cap over all stands, each stand's places, and the field check of the permits it touched);
//!    it returns the new registry with the law's warnings ([`Edited`]) or an [`EditError`] (a
//!    legal [`Refusal`] citing articles, a missing entity, a conflict);
//! 3. check referential integrity (`Registry::validate`) and compute the commit
//!    (`RegistryCommit::next`: sorted, numbered, the batch of changes by `sync_core::feed::diff`
//!    — the same computation the office's effects commit with their events); an operation that
//!    changes nothing commits nothing;
//! 4. commit version N+1 with its change log and audit row in one transaction
//!    (`Store::commit_registry`). If another writer committed meanwhile, the commit fails with a
//!    version conflict and the whole operation is re-run on the newer registry, so a legal check
//!    is never made against a stale registry.

pub mod csv;
pub mod law;
pub mod ops;

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{DomainError, Registry};
use sync_core::feed::RegistryChange;
use sync_core::rules::office::Refusal;
use sync_core::rules::{Finding, RulesConfig};

use crate::service::ServiceError;
use crate::store::{Actor, RegistryCommit, RegistryCommitted, Store, StoreError};

/// How many times an operation is re-run after losing a race with another writer.
const MAX_ATTEMPTS: usize = 5;

/// Why an operation did not produce a new registry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditError {
    /// The law forbids it.
    #[error("{0}")]
    Refused(Refusal),
    #[error("{0}")]
    NotFound(String),
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    #[error("{message}")]
    Invalid { code: &'static str, message: String },
    /// A CSV import with bad rows: every one of them.
    #[error("{}", sync_core::text::plural_pt(.0.len() as u64, "linha inválida", "linhas inválidas"))]
    Csv(Vec<csv::RowError>),
}

impl From<Refusal> for EditError {
    fn from(r: Refusal) -> Self {
        Self::Refused(r)
    }
}

impl From<EditError> for ServiceError {
    fn from(e: EditError) -> Self {
        match e {
            EditError::Refused(r) => ServiceError::Refused(r),
            EditError::NotFound(m) => ServiceError::NotFound(m),
            EditError::Conflict { code, message } => ServiceError::conflict(code, message),
            EditError::Invalid { code, message } => ServiceError::unprocessable(code, message),
            EditError::Csv(rows) => ServiceError::unprocessable(
                "csv_invalid",
                format!(
                    "O arquivo CSV tem {}; nada foi importado.",
                    sync_core::text::plural_pt(rows.len() as u64, "erro", "erros")
                ),
            )
            .with_details(serde_json::json!({ "errors": rows })),
        }
    }
}

/// What the law's checks need besides the registry.
#[derive(Debug, Clone)]
pub struct Ctx<'a> {
    /// Today in Americana.
    pub today: NaiveDate,
    pub rules: &'a RulesConfig,
}

/// What an operation produced: the new registry, and what the law found on it that does not
/// refuse the change (`office::judge_write`: irregularities that pre-existed the write, or that
/// a record of facts reveals), for the office to see.
#[derive(Debug, Clone, PartialEq)]
pub struct Edited {
    pub registry: Registry,
    pub warnings: Vec<Finding>,
}

impl From<Registry> for Edited {
    /// A registry built without the judgement (demo seeding, the CLI's bulk load): no warnings.
    fn from(registry: Registry) -> Self {
        Self {
            registry,
            warnings: Vec::new(),
        }
    }
}

/// The answer to a registry change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegistryUpdate {
    /// The registry version after the operation.
    pub version: u64,
    /// False when the operation changed nothing (no new version).
    pub changed: bool,
    /// What changed, as devices will receive it.
    pub changes: Vec<RegistryChange>,
    /// What a field check of the permits the change touched finds and that did not refuse it
    /// (it was there before the change, or the change records a fact): each with rule,
    /// citation and a Portuguese message.
    #[serde(default)]
    pub warnings: Vec<Finding>,
}

/// `Registry::validate`, with messages that never carry a CPF.
pub fn validate(reg: &Registry) -> Result<(), EditError> {
    reg.validate().map_err(|e| {
        let message = match e {
            DomainError::Fixture { reason } if reason.starts_with("CPF") => {
                String::from("CPF duplicado no cadastro")
            }
            DomainError::Fixture { reason } => reason,
            other => other.to_string(),
        };
        EditError::Invalid {
            code: "registry_integrity",
            message: format!("O cadastro ficaria inconsistente: {message}."),
        }
    })
}

/// Runs `edit` on the current registry and commits the result (see the module doc). `edit`
/// runs again on each retry, on the registry as it then is.
pub async fn commit<F, R>(
    store: &dyn Store,
    actor: Actor,
    action: &str,
    subject: &str,
    mut edit: F,
) -> Result<RegistryUpdate, ServiceError>
where
    F: FnMut(&Registry) -> Result<R, EditError>,
    R: Into<Edited>,
{
    for _ in 0..MAX_ATTEMPTS {
        let current = store.registry().await?;
        let Edited { registry, warnings } = edit(&current)?.into();
        validate(&registry)?;
        let Some(commit) = RegistryCommit::next(
            &current,
            registry,
            action.to_owned(),
            subject.to_owned(),
            actor.clone(),
        ) else {
            return Ok(RegistryUpdate {
                version: current.version,
                changed: false,
                changes: Vec::new(),
                warnings,
            });
        };
        let result = store.commit_registry(commit).await;
        match result {
            Ok(RegistryCommitted { version, changes }) => {
                tracing::info!(action, version, "cadastro alterado");
                return Ok(RegistryUpdate {
                    version,
                    changed: true,
                    changes,
                    warnings,
                });
            }
            Err(StoreError::VersionConflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(ServiceError::conflict(
        "registry_busy",
        "O cadastro está sendo alterado por outras operações; tente novamente.",
    ))
}
