//! JSON Schemas of every document and payload, generated from the Rust types.
//!
//! `schemas/*.schema.json` at the repository root are these, checked in; the test
//! `sync-core/tests/schemas.rs` fails when they drift from the types (run it with
//! `UPDATE_SCHEMAS=1` to rewrite them after an intended change).

use schemars::{JsonSchema, schema_for};

use crate::domain::Registry;
use crate::feed::{RegistryChanges, RegistrySnapshot};
use crate::records::{EventKind, InfractionDraft, RecordView, TransgressionDraft, Violation};
use crate::rules::money::Corrected;
use crate::rules::{Observation, RulesConfig, Verdict, deadline::Deadline};
use crate::store::{PermitView, PersonPermits};
use crate::sync::{SyncRequest, SyncResponse};

fn schema<T: JsonSchema>() -> serde_json::Value {
    schema_for!(T).to_value()
}

/// `(file stem, schema)` for every published type.
pub fn all() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("registry", schema::<Registry>()),
        ("verdict", schema::<Verdict>()),
        ("observation", schema::<Observation>()),
        ("rules-config", schema::<RulesConfig>()),
        ("law-parameters", schema::<crate::rules::LawParameters>()),
        ("deadline", schema::<Deadline>()),
        ("amount", schema::<Corrected>()),
        ("record-view", schema::<RecordView>()),
        ("record-event", schema::<EventKind>()),
        ("record-violation", schema::<Violation>()),
        ("infraction-draft", schema::<InfractionDraft>()),
        ("transgression-draft", schema::<TransgressionDraft>()),
        ("registry-snapshot", schema::<RegistrySnapshot>()),
        ("registry-changes", schema::<RegistryChanges>()),
        ("permit-view", schema::<PermitView>()),
        ("person-permits", schema::<PersonPermits>()),
        ("sync-request", schema::<SyncRequest>()),
        ("sync-response", schema::<SyncResponse>()),
    ]
}
