//! Field records on the server: what the record sync and the office's reading API ask of the
//! store (methods of [`crate::Store`]), backend-independent.
//!
//! The protocol logic is `sync_core::sync::ServerSync` (pure); a backend runs it inside one
//! write transaction, reading through `ServerSyncStore` and persisting its effects — the
//! accepted changes with the record's projection and one audit row each, quarantined changes,
//! actor bindings, per-device state — before committing (`SqliteStore` in
//! `taxi_fiscal_store_sqlite::records`).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::IndexedRegistry;
use sync_core::records::{EventKind, RecordView, UserRole};
use sync_core::sync::{RejectionCode, Sender, ServerSync, SyncError, SyncRequest, SyncResponse};

use crate::Role;
use crate::audit::format_at;

/// Who calls, as authenticated (never as the request claims).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub user_id: String,
    pub role: Role,
    pub stand_id: Option<String>,
    /// The registered device id (its protocol UUID is `sync_core::sync::device_uuid` of it).
    pub device_id: String,
}

/// One `POST /v1/sync`, to run in one transaction.
#[derive(Debug, Clone)]
pub struct SyncJob {
    pub caller: Caller,
    pub request: SyncRequest,
    /// The registry the records are checked against, with its indexes (built once per
    /// version by the caller, never inside the write transaction).
    pub registry: Arc<IndexedRegistry>,
    pub logic: ServerSync,
    pub now: DateTime<Utc>,
    /// Countersigns the receipt of every record the exchange issues.
    pub server_key: Arc<crate::receipts::ServerKey>,
}

/// An event the office appends from its desk (`POST /v1/records/{id}/events`).
#[derive(Debug, Clone)]
pub struct EventJob {
    pub caller: Caller,
    pub record_id: String,
    pub event: EventKind,
    /// When it happened (defaults to now).
    pub at: DateTime<Utc>,
    pub registry: Arc<IndexedRegistry>,
    pub now: DateTime<Utc>,
}

/// What became of an office event.
#[derive(Debug, Clone)]
pub enum EventOutcome {
    Applied(Box<RecordDoc>),
    /// Refused by the same vetting as a device's change; nothing stored.
    Refused {
        code: RejectionCode,
        message: String,
    },
    NotFound,
}

/// A sync whose exchange failed as a whole (nothing stored), or its response.
pub type SyncOutcome = Result<SyncResponse, SyncError>;

/// Filters of `GET /v1/records`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordFilter {
    pub status: Option<String>,
    pub kind: Option<String>,
    pub stand_id: Option<String>,
    /// Author's user id.
    pub officer: Option<String>,
    /// Canonical plate.
    pub plate: Option<String>,
    pub from: Option<DateTime<Utc>>,
    /// Exclusive.
    pub to: Option<DateTime<Utc>>,
    /// A rule id (`R24`) among the rules the record is classified under (the office's
    /// classification, else the author's legal basis).
    pub rule: Option<String>,
    /// Free text: every word must match one of the record's columns (see [`SearchWord`]).
    pub search: Vec<SearchWord>,
    /// Only records in one of these statuses (empty: any).
    pub statuses: Vec<String>,
    /// No record in any of these statuses.
    pub not_statuses: Vec<String>,
    /// The order of the page (newest first by default); ties by newest, then id.
    pub order: RecordOrder,
    pub limit: u32,
    pub offset: u32,
}

/// One word of a free-text search over the records, resolved beforehand against the registry
/// and the accounts (names live there, not in the records' columns): a record matches when
/// any of these holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchWord {
    /// Upper case, found inside the auto number, the permit number or the plate.
    pub text: String,
    /// The canonical plate, when the word is one (any spelling).
    pub plate: Option<String>,
    /// Permit numbers whose holder or auxiliary driver has the word in their name.
    pub permits: Vec<String>,
    /// Authors (user ids) with the word in their name.
    pub authors: Vec<String>,
}

/// What a page of records is sorted by.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum RecordSort {
    /// When it happened.
    #[default]
    Occurred,
    /// The auto number, numerically when it is one.
    Number,
    Kind,
    Plate,
    Permit,
    Rules,
    /// Conflicts plus refused events.
    Pending,
    /// The stand, by its position in this list of stand ids (e.g. sorted by name).
    Stand(Vec<String>),
    /// The author, by its position in this list of user ids.
    Author(Vec<String>),
    /// The status, by its position in this list of statuses (e.g. workflow order).
    Status(Vec<String>),
}

/// A sort and its direction. Records without the value (no plate, no number) come last in
/// both directions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOrder {
    pub by: RecordSort,
    pub desc: bool,
}

impl Default for RecordOrder {
    fn default() -> Self {
        Self {
            by: RecordSort::Occurred,
            desc: true,
        }
    }
}

/// A record's row: the projection the office lists and filters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecordRow {
    pub id: String,
    /// `infraction` | `transgression`.
    pub kind: String,
    pub number: Option<String>,
    /// Derived from the events, e.g. `issued`, `under_review`.
    pub status: String,
    /// Canonical Mercosul plate.
    pub plate: Option<String>,
    pub stand_id: Option<String>,
    pub permit_number: Option<String>,
    /// The officer or coordinator who made the record.
    pub author_user_id: String,
    pub author_role: String,
    pub occurred_at: DateTime<Utc>,
    pub sealed: bool,
    /// Events kept but refused by the state machine.
    pub invalid_events: u32,
    /// Fields with concurrent values waiting for the office.
    pub conflicts: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Change sequence number of the last change.
    pub seq: u64,
}

/// One page of `GET /v1/records`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RecordPage {
    /// Records matching the filters, all pages together.
    pub total: u64,
    pub items: Vec<RecordRow>,
}

/// A record as stored: its row, document and heads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordDoc {
    pub row: RecordRow,
    pub doc: Vec<u8>,
    pub heads: Vec<String>,
}

/// A refused change kept as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuarantineRow {
    pub id: u64,
    pub record_id: String,
    /// Protocol UUID of the device that sent it.
    pub device_uuid: String,
    pub user_id: String,
    pub role: String,
    /// `sync_core::sync::RejectionCode`, e.g. `sealed_field`.
    pub code: String,
    /// Why, in Portuguese.
    pub message: String,
    pub change_hashes: Vec<String>,
    /// Size of the refused bytes (downloadable later if needed).
    pub size: u64,
    pub at: DateTime<Utc>,
}

/// The records-layer role of a caller: officers are one of the two bodies of art. 36 (`body`,
/// bound per account), coordinators and the office are themselves. Admins write no records.
pub fn record_role(role: Role, body: Option<UserRole>) -> Option<UserRole> {
    match role {
        Role::Officer => Some(body.unwrap_or(UserRole::GuardaMunicipal)),
        Role::Coordinator => Some(UserRole::Coordinator),
        Role::Office => Some(UserRole::Office),
        Role::Admin => None,
    }
}

/// The protocol's view of a caller.
pub fn sender_of(caller: &Caller, role: UserRole) -> Sender {
    Sender {
        agent: sync_core::records::Agent::new(
            caller.user_id.clone(),
            role,
            sync_core::sync::device_uuid(&caller.device_id),
        ),
        stand: caller.stand_id.clone(),
        // Read in the sync's transaction (`store::sqlite::records`); server-side edits never
        // issue a record.
        device_keys: Vec::new(),
    }
}

/// Whether `caller` may write `row`'s record (link a photo to it): its author, a coordinator
/// of its stand, or the office.
pub fn may_write(caller: &Caller, row: &RecordRow) -> bool {
    match caller.role {
        Role::Office => true,
        Role::Admin => false,
        Role::Coordinator => {
            row.author_user_id == caller.user_id
                || (row.kind == "transgression"
                    && caller.stand_id.is_some()
                    && row.stand_id == caller.stand_id)
        }
        Role::Officer => row.author_user_id == caller.user_id,
    }
}

/// A record's full view for the office.
pub fn view_of(doc: &RecordDoc) -> Result<RecordView, sync_core::records::RecordError> {
    sync_core::records::RecordDoc::load(&doc.doc)?.view()
}

/// The projection columns of a record, from its view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Projection {
    pub number: Option<String>,
    pub status: &'static str,
    pub plate: Option<String>,
    pub stand_id: Option<String>,
    pub permit_number: Option<String>,
    pub author_user_id: String,
    pub author_role: &'static str,
    pub author_device_id: String,
    pub occurred_at: String,
    pub sealed: bool,
    pub invalid_events: i64,
    pub conflicts: i64,
    pub rules: String,
}

/// The rule ids a record is judged under, space-separated: the office's classification, else
/// the author's legal basis (column `rules`).
pub fn rules_of(view: &RecordView) -> String {
    let basis = view.classification.as_ref().unwrap_or(&view.legal_basis);
    let mut ids: Vec<&str> = basis.iter().map(|b| b.rule_id.trim()).collect();
    ids.sort_unstable();
    ids.dedup();
    ids.join(" ")
}

/// The projection of `view`, as every backend stores it; `audit verify` recomputes it to check
/// the stored columns.
pub fn project(view: &RecordView) -> Projection {
    Projection {
        number: view.number.clone(),
        status: view.status.as_str(),
        plate: view.vehicle.as_ref().map(|v| v.plate.clone()),
        stand_id: view.stand_id.clone(),
        permit_number: view.permit_number.clone(),
        author_user_id: view.author.user_id.clone(),
        author_role: view.author.role.as_str(),
        author_device_id: view.author.device_id.to_string(),
        occurred_at: format_at(view.occurred_at),
        sealed: view.sealed,
        invalid_events: i64::try_from(view.invalid_events.len()).unwrap_or(i64::MAX),
        conflicts: i64::try_from(view.conflicts.len()).unwrap_or(i64::MAX),
        rules: rules_of(view),
    }
}

/// The rule ids of a `rules` column (as [`rules_of`] joins them), each once.
pub fn rule_set(rules: &str) -> std::collections::BTreeSet<String> {
    rules.split_whitespace().map(String::from).collect()
}
