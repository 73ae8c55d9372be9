//! What the office workflow (`crate::office`) asks of the store, backend-independent.
//!
//! The one write, [`crate::Store::office_apply`], runs an [`OfficeJob`] in one
//! transaction: each [`OfficeStep`] (an event on a record) goes through the same vetting, SQL
//! projection and audit row as `record_event`; then, when the job carries an [`EffectFn`], the
//! registry effect of the record as it now stands (a decided suspension, fine, revocation, or
//! its reversal) is computed from the record's view and the registry read in that same
//! transaction, and committed as a new registry version with its change log and audit row. A
//! refused step or effect rolls everything back: nothing is half-applied.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{IndexedRegistry, Registry};
use sync_core::feed::RegistryChange;
use sync_core::records::{EventKind, RecordView};
use sync_core::sync::RejectionCode;

use crate::records::{Caller, RecordDoc, RecordFilter, RecordRow};

/// Two records of the same plate more than this apart are different occurrences. Two hours:
/// one patrol shift-hour plus the time a second officer or the stand's coordinator takes to
/// write the same scene; a taxi stopped again later the same day is a new occurrence (a repeat
/// offence must not be merged away). The store keeps the duplicate candidates by it as records
/// arrive; `office::duplicates` judges the pairs by it too.
pub const DUPLICATE_WINDOW_MINUTES: i64 = 120;

/// Which duplicate candidates to read: a page of plates, newest occurrence first, or one plate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CandidateQuery {
    /// Only this canonical plate (a record's page asks for its own).
    pub plate: Option<String>,
    /// Plates to skip, newest first.
    pub offset: u32,
    /// Plates to read.
    pub limit: u32,
    /// At most this many records in all: the page stops at the plate that would pass it.
    pub max_records: u32,
}

/// A page of duplicate candidates.
#[derive(Debug, Clone, Default)]
pub struct CandidatePage {
    /// Plates that have candidates, in all.
    pub plates: u64,
    /// The candidates of the page's plates.
    pub docs: Vec<RecordDoc>,
    /// False when `max_records` cut the page before `limit` plates.
    pub complete: bool,
}

/// One event to append to one record.
#[derive(Debug, Clone)]
pub struct OfficeStep {
    pub record_id: String,
    /// `conflict_resolved` goes through `RecordDoc::resolve_conflict`, every other kind through
    /// `append_event` (the state machine decides).
    pub event: EventKind,
    pub at: DateTime<Utc>,
}

/// A registry the effect wants committed.
#[derive(Debug, Clone)]
pub struct RegistryEdit {
    /// The whole registry after the effect (version and time are set by the store).
    pub registry: Registry,
    /// Audit action, e.g. `office.effect.suspension`.
    pub action: String,
    /// Audit subject, e.g. `permit:0007`.
    pub subject: String,
}

/// Why an effect cannot be applied (Portuguese message); nothing of the job is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectRefusal {
    pub code: &'static str,
    pub message: String,
}

/// The registry effect of a record, from its view after the steps and the current registry:
/// `Ok(None)` when the registry already says what the record decides.
pub type EffectFn = Arc<
    dyn Fn(&RecordView, &Registry) -> Result<Option<RegistryEdit>, EffectRefusal> + Send + Sync,
>;

/// Steps and an optional effect, run in one transaction.
#[derive(Clone)]
pub struct OfficeJob {
    pub caller: Caller,
    pub steps: Vec<OfficeStep>,
    /// The record whose registry effect to reconcile after the steps, and how.
    pub effect: Option<(String, EffectFn)>,
    /// The registry the steps are vetted against and the effect starts from, with its
    /// indexes (the effect reads the registry again if a newer version was committed since).
    pub registry: Arc<IndexedRegistry>,
    pub now: DateTime<Utc>,
}

impl std::fmt::Debug for OfficeJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfficeJob")
            .field("caller", &self.caller)
            .field("steps", &self.steps)
            .field("effect", &self.effect.as_ref().map(|(id, _)| id))
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// A registry version written by an office job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegistryApplied {
    /// The new registry version (devices get it on their next pull).
    pub version: u64,
    /// What changed, as devices receive it.
    pub changes: Vec<RegistryChange>,
}

/// What became of an office job.
#[derive(Debug, Clone)]
pub enum OfficeOutcome {
    /// Every step applied (in order); the records as they now stand, each once, in the order
    /// they first appear in the steps, and the registry version written, if any.
    Applied {
        docs: Vec<RecordDoc>,
        registry: Option<RegistryApplied>,
    },
    /// A step was refused by the vetting or the state machine; nothing stored.
    Refused {
        record_id: String,
        code: RejectionCode,
        message: String,
    },
    NotFound {
        record_id: String,
    },
    /// The registry effect was refused; nothing stored.
    EffectRefused(EffectRefusal),
}

/// A row of the inbox: the projection plus the rules the record is classified under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InboxRow {
    #[serde(flatten)]
    pub row: RecordRow,
    /// Rule ids in force: the office's classification, else the author's legal basis.
    pub rules: Vec<String>,
}

/// One page of the inbox and the counts per status of everything the other filters match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InboxPage {
    /// Records matching every filter, all pages together.
    pub total: u64,
    /// `(status, count)` over the filters except `status`, most frequent first.
    pub counts: Vec<(String, u64)>,
    pub items: Vec<InboxRow>,
}

/// The filters of the inbox are those of `GET /v1/records` (with `rule`).
pub type InboxFilter = RecordFilter;
