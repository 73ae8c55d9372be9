//! What `audit verify` reports besides the hash chain: the rows derived from what the chain
//! vouches for (record projections, counters, the registry's entities, receipts, editais) that
//! do not agree with their source. Each backend computes it on its own tables
//! ([`crate::Store::check_consistency`]); the report is the same.
//!
//! Every disagreement is reported (record or entity, column), never a value: the values may be
//! CPFs or plates.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One row that does not match what it is derived from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Mismatch {
    /// `record:<id>`, `registry:<kind>:<key>`, `registry_log:<version>`, `record_changes:<id>`,
    /// `edital:<id>`.
    pub subject: String,
    /// The column that disagrees.
    pub column: String,
    /// Why, in Portuguese.
    pub reason: String,
}

/// What was compared and what disagreed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConsistencyReport {
    /// Records whose projection was recomputed.
    pub records: u64,
    /// Registry versions replayed.
    pub registry_versions: u64,
    pub mismatches: Vec<Mismatch>,
}

/// A mismatch of `subject`'s `column`.
pub fn mismatch(subject: String, column: &str, reason: impl Into<String>) -> Mismatch {
    Mismatch {
        subject,
        column: column.to_owned(),
        reason: reason.into(),
    }
}
