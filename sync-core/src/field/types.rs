//! Inputs and outputs of `FieldRecords`: what the app or the command line fills in, and what a
//! write or `show` returns (serialised as the CLI's JSON).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::{DriverId, PersonId, StandId};
use crate::records::{
    Gravity, LegalBasis, Position, RecordKind, RecordView, Signature, Status, WarningKind,
};
use crate::rules::{Observation, VehicleQuery};
use crate::store::{ObservedPerson, PhotoStatus, RecordSummary};

/// A person a record names: someone in the registry (by id), or someone typed on the spot whose
/// data the store keeps apart from the document (`observed_people`, erasable).
#[derive(Debug, Clone, PartialEq)]
pub enum PersonInput {
    Registry(PersonId),
    Observed(ObservedPerson),
}

/// A witness and what they said (the statement is evidence: it goes into the document).
#[derive(Debug, Clone, PartialEq)]
pub struct WitnessEntry {
    pub person: PersonInput,
    pub statement: String,
}

impl WitnessEntry {
    /// A witness known only by the name typed on the spot.
    pub fn named(name: &str, statement: &str) -> Self {
        Self {
            person: PersonInput::Observed(ObservedPerson {
                name: Some(name.trim().to_owned()),
                ..ObservedPerson::default()
            }),
            statement: statement.trim().to_owned(),
        }
    }
}

/// What the officer gives for an auto de infração; everything else comes from the check.
#[derive(Debug, Clone, PartialEq)]
pub struct NewInfraction {
    /// The taxi, by plate (kept as typed and canonical) or permit number.
    pub vehicle: VehicleQuery,
    /// The person at the wheel, by CPF or CNH.
    pub driver: DriverId,
    /// Name of a driver the registry does not know (kept in `observed_people`, never in the
    /// document); ignored when the registry knows the driver.
    pub driver_name: Option<String>,
    /// Instant of the facts (device clock, UTC); also the instant of the check and of issuing.
    pub at: DateTime<Utc>,
    /// Device monotonic clock at the same moment (detects clock changes).
    pub monotonic: u64,
    /// What the officer sees on the spot (stand, idle, …); `at_stand` is the record's stand.
    pub observation: Observation,
    pub position: Option<Position>,
    /// Description of the facts; `None` or blank: the irregular findings' messages.
    pub facts: Option<String>,
    /// Legal basis beyond the check's irregular findings (e.g. conduct seen on the spot).
    pub extra_legal_basis: Vec<LegalBasis>,
    pub witnesses: Vec<WitnessEntry>,
    /// Photos taken at capture (bytes; stored content-addressed with the record).
    pub photos: Vec<Vec<u8>>,
    /// The officer confirmed on the spot that the vehicle the check found (by plate, or the
    /// permit's vehicle) is the one inspected: recorded in the record as their confirmation
    /// (`RecordDoc::confirm_vehicle`). An auto is not issued without it.
    pub confirm_vehicle: bool,
    /// Issue at once with this signature (or why it is missing); `None`: stays a draft.
    pub issue: Option<Signature>,
}

/// What a coordinator does right after issuing a report (art. 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordinatorStep {
    /// Light fault settled with a warning (§1, §2 I–II).
    Settle(WarningKind),
    /// Sent in writing to the Unidade (§2).
    Forward,
}

/// What a coordinator gives for a transgression report.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTransgression {
    /// The taxi, by plate or permit number; its permit must be of the coordinator's stand.
    pub vehicle: VehicleQuery,
    /// The driver (holder or auxiliary of that permit), by CPF or CNH.
    pub driver: DriverId,
    /// The coordinator's stand; `None`: the device's. A stand other than the device's is
    /// refused.
    pub coordinator_stand: Option<StandId>,
    pub gravity: Gravity,
    pub facts: String,
    pub legal_basis: Vec<LegalBasis>,
    pub at: DateTime<Utc>,
    pub monotonic: u64,
    pub position: Option<Position>,
    pub witnesses: Vec<WitnessEntry>,
    pub photos: Vec<Vec<u8>>,
    /// Issue at once; needed before `then`.
    pub issue: Option<Signature>,
    pub then: Option<CoordinatorStep>,
}

/// Result of a write.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordOutcome {
    pub id: String,
    pub kind: RecordKind,
    /// Auto number from the device's blocks, `None` while waiting for one.
    pub number: Option<u64>,
    pub waiting_for_number: bool,
    pub status: Status,
    /// True when this write folded the record's chunks into one full save.
    pub compacted: bool,
    /// The record after the write.
    pub view: RecordView,
}

/// A photo named by a record, re-hashed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PhotoCheck {
    pub hash: String,
    #[serde(flatten)]
    pub status: PhotoStatus,
}

/// One record as `show` returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordDetails {
    /// The store's row (number, status, chunks, write sequence).
    pub record: RecordSummary,
    pub view: RecordView,
    /// Every photo of the record, re-hashed now.
    pub photos: Vec<PhotoCheck>,
    pub photos_intact: bool,
    /// Observed people the record names, from the store (erased ones come back empty).
    pub observed_people: BTreeMap<String, ObservedPerson>,
}
