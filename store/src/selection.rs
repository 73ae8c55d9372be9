//! Editais de chamamento (arts. 2–6 of the law) as the store keeps them: one row per edital,
//! its whole state (`sync_core::rules::selection::Edital`, the law kernel's value) as JSON with a
//! version number, written only through [`crate::Store::save_edital`].
//!
//! Flow: the selection service (`taxi_fiscal_server::selection`) reads an edital
//! ([`crate::Store::edital`]) and the registry, runs one pure step of the kernel, and saves the
//! edital after it under the version it read ([`EditalSave::expected_version`]). A save is one
//! transaction: the new state, the version bump and its audit row — and, for a grant, the
//! registry version the grant writes ([`EditalSave::registry`]), committed by the same code as
//! `Store::commit_registry`, so an edital never records a permit the registry does not hold
//! nor the registry a permit without its edital. A stale edital version or a stale registry
//! version fails the whole save with [`crate::StoreError::VersionConflict`] and the service
//! re-runs the step on what is then current (optimistic concurrency, as for the registry).
//!
//! The audit row's payload is the SHA-256 of `"{version}\n"` followed by the state's JSON
//! ([`edital_payload_hash`]): a replayed state under another version would not match, and
//! `audit verify` finds each stored state's row by that hash.

use chrono::{DateTime, Utc};
use sync_core::rules::selection::Edital;

use crate::audit::payload_hash_of_parts;
use crate::{Actor, RegistryCommit, RegistryCommitted};

/// Editais [`crate::Store::list_editais`] answers, newest first. A city of Americana's size
/// opens a handful a decade; five hundred is centuries of them, and bounds one read.
pub const MAX_EDITAIS_LISTED: usize = 500;

/// An edital as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct EditalRow {
    pub id: String,
    /// 1 when created, one more at each save.
    pub version: u64,
    pub edital: Edital,
    pub updated_at: DateTime<Utc>,
}

/// One step of an edital to write.
#[derive(Debug, Clone)]
pub struct EditalSave {
    /// The version the step was computed from; `None` creates the edital (`Duplicate` when its
    /// id exists).
    pub expected_version: Option<u64>,
    /// The edital after the step (its `id` is the row's).
    pub edital: Edital,
    /// Audit action, e.g. `edital.open`.
    pub action: String,
    /// Audit subject, `edital:ID`.
    pub subject: String,
    pub actor: Actor,
    /// A registry version committed in the same transaction (the grant's new permit).
    pub registry: Option<RegistryCommit>,
    /// What else the step's judgement read, checked in the same transaction: opening an edital
    /// counts each stand's free places from the registry and the other editais, so a permit
    /// granted or an edital opened meanwhile must make it re-run, not both pass.
    pub read: Option<ReadSet>,
}

/// The registry version and the other editais (every one, with its version) a step read; the
/// save is a [`crate::StoreError::VersionConflict`] when either changed since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSet {
    pub registry_version: u64,
    /// `(id, version)` of every stored edital but the one saved.
    pub editais: Vec<(String, u64)>,
}

/// What a save wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct EditalSaved {
    /// The edital's version after the save.
    pub version: u64,
    /// The registry version committed with it, when the save carried one.
    pub registry: Option<RegistryCommitted>,
}

/// The audit payload of state `json` at `version` (see the module doc).
pub fn edital_payload_hash(version: u64, json: &str) -> String {
    payload_hash_of_parts(&[format!("{version}\n").as_bytes(), json.as_bytes()])
}
