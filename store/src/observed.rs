//! Observed persons of records (witnesses, drivers the registry does not know), backend-
//! independent: what the store keeps of them and of their erasure.
//!
//! The author's device sends a record's whole set (`PUT /v1/records/{id}/observed-persons`,
//! checked by `sync_core::sync::check_upload`); the store replaces the record's rows with it in
//! one transaction with an audit row whose payload hash covers only the person ids (the chain
//! never carries personal data, so erasing leaves it intact). Sending the same set again writes
//! nothing. The office's erasure deletes the rows and writes an [`Erasure`] (who, when, how
//! many) with its audit row; an erased record takes no upload again ([`PutObserved::Erased`]).

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One observed person as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StoredPerson {
    /// The id of `observed:<id>` in the record.
    pub person_id: String,
    pub name: Option<String>,
    pub cpf: Option<String>,
    pub cnh: Option<String>,
    pub document: Option<String>,
    pub phone: Option<String>,
    pub address: Option<String>,
    pub uploaded_at: DateTime<Utc>,
    /// User id of the author who sent it.
    pub uploaded_by: String,
    pub device_id: Option<String>,
}

/// The erasure of a record's observed persons: no personal data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Erasure {
    pub erased_at: DateTime<Utc>,
    /// User id of the clerk.
    pub erased_by: String,
    /// How many persons were erased.
    pub persons: u64,
    /// The audit row that records it.
    pub audit_seq: u64,
}

/// What the server holds for a record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ObservedPersons {
    pub persons: Vec<StoredPerson>,
    /// Set once the office erased them (then `persons` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub erasure: Option<Erasure>,
}

/// The outcome of an upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutObserved {
    /// The set is stored; `changed` is false when it was already the same (nothing written).
    Stored { persons: u64, changed: bool },
    /// The office erased this record's persons: nothing was stored.
    Erased(Erasure),
}

/// Audit action of an upload that changed the set.
pub const ACTION_UPLOAD: &str = "record.observed_persons.upload";
/// Audit action of the office's erasure.
pub const ACTION_ERASE: &str = "record.observed_persons.erase";
