//! The law as code: Lei 4.019/2004 rules evaluated as pure functions of registry facts and an
//! instant.
//!
//! Flow: the rule catalogue (`catalogue`) is data — id, citation, whether the wording in force is
//! verified, severity, consequence. `RulesConfig` holds the parameters the law leaves open
//! (art. 14 ratio, categories covering B, EAR missing, taximeter period, CNH grace, holidays);
//! with the IPCA series it makes the `parameters` that live in the registry, one value per
//! registry version, so every device judges by the office's parameters.
//! `field::check` turns a lookup (plate or permit, driver, instant, observations) into a
//! `Verdict` whose every finding cites its rule and article; `office` refuses registry changes
//! that the law forbids; `deadline` counts appeal deadlines on the local calendar; `money`
//! corrects fees and fines by the IPCA; `penalty` proposes (never decides) the art. 32 grade of
//! a record. Nothing here does I/O or reads the clock.

pub mod catalogue;
pub mod deadline;
pub mod field;
pub mod money;
pub mod office;
pub mod parameters;
pub mod penalty;

use chrono::{DateTime, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use catalogue::{CATALOGUE, RuleId, RuleSpec, UnknownRule, lookup, spec};
pub use field::check;
pub use parameters::{LawParameters, default_parameters};

use crate::domain::{DriverRole, PermitNumber, StandId};

/// How serious a finding is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Informative: does not change the overall result.
    Info,
    /// Advisory or data-quality warning.
    Warning,
    /// The law is not complied with.
    Irregular,
}

/// What the law attaches to a finding. The office decides; the engine only names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Consequence {
    None,
    /// Record the irregularity (auto de infração / relatório).
    RecordIrregularity,
    /// Basis for an auto de infração under arts. 31–32; penalty graded by the office.
    InfractionNotice,
    /// The law states cassação of the taxi's alvará (art. 7, art. 8 §4).
    RevokePermit,
    /// The law states cassação of the auxiliary's licence (art. 8 §3).
    RevokeAuxiliaryLicence,
    /// The permit is suspended or revoked: the taxi may not operate.
    VehicleMayNotOperate,
    /// Renewal of the alvará is blocked until this is settled.
    RenewalBlocked,
    /// Not a municipal matter: refer to the traffic authority.
    ReferToTrafficAuthority,
    /// The office must look at it.
    OfficeReview,
    /// The office must refuse the requested change.
    OfficeRefusal,
}

/// Result of a check, overall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Overall {
    Regular,
    Warning,
    Irregular,
}

/// One reason in a verdict or refusal, always citing its rule and article.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub rule_id: RuleId,
    /// E.g. `Lei 4.019/2004, art. 8, § 4`.
    pub citation: String,
    /// False when the cited provision was amended and its text in force is unknown.
    pub wording_verified: bool,
    pub severity: Severity,
    pub consequence: Consequence,
    /// What an officer reads, in Brazilian Portuguese.
    pub message: String,
}

impl Finding {
    /// A finding for a catalogue rule with its default severity and consequence.
    pub fn new(rule_id: RuleId, message: impl Into<String>) -> Self {
        let r = spec(rule_id);
        Self {
            rule_id,
            citation: r.citation(),
            wording_verified: r.wording_verified,
            severity: r.severity,
            consequence: r.consequence,
            message: message.into(),
        }
    }

    /// Same finding with another severity (configurable rules such as R09's missing EAR).
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Same finding with another consequence.
    pub fn with_consequence(mut self, consequence: Consequence) -> Self {
        self.consequence = consequence;
        self
    }
}

/// Which registry data a verdict was computed on, and how old it was (DESIGN §Data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RegistryStamp {
    pub version: u64,
    /// When the device last refreshed its replica (or the fixture's `generated_at`).
    pub refreshed_at: Option<DateTime<Utc>>,
    /// Seconds between `refreshed_at` and the check; `None` when unknown.
    pub age_seconds: Option<i64>,
}

/// The answer to a field check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    pub overall: Overall,
    /// Instant of the check (UTC).
    pub checked_at: DateTime<Utc>,
    /// Same instant in America/Sao_Paulo, for people.
    pub checked_at_local: String,
    /// The permit found for the plate or number, if any.
    pub permit_number: Option<PermitNumber>,
    /// Canonical plate of the vehicle checked, if known.
    pub plate: Option<String>,
    /// Registry id of the driver, if found.
    pub driver_person_id: Option<String>,
    /// The driver's relation to the permit (art. 8).
    pub driver_role: Option<DriverRole>,
    pub registry: RegistryStamp,
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// Overall result from findings: any irregular → irregular; else any warning → warning.
    pub fn overall_of(findings: &[Finding]) -> Overall {
        match findings.iter().map(|f| f.severity).max() {
            Some(Severity::Irregular) => Overall::Irregular,
            Some(Severity::Warning) => Overall::Warning,
            _ => Overall::Regular,
        }
    }

    /// Ids of the rules that fired, in order.
    pub fn rule_ids(&self) -> Vec<&str> {
        self.findings.iter().map(|f| f.rule_id.as_str()).collect()
    }
}

/// What the officer looks up the taxi by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VehicleQuery {
    /// Plate in any accepted spelling (already parsed).
    Plate(crate::domain::Plate),
    /// Permit number (prontuário).
    Permit(PermitNumber),
}

/// What the officer sees on the spot, beyond registry facts. Every field is optional: a rule
/// that needs an observation that was not made does not fire.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    /// Stand where the taxi was found, if at one.
    pub at_stand: Option<StandId>,
    /// True when the taxi was found parked/waiting (not in motion, no passenger) — R24 needs it.
    #[serde(default)]
    pub idle: bool,
    /// Doors counted on the spot (R17).
    pub doors: Option<u8>,
    /// Illuminated roof sign present (R19).
    pub roof_sign_present: Option<bool>,
    /// Taximeter seal intact as seen now (R02).
    pub meter_seal_intact: Option<bool>,
}

/// Input of a field check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckInput {
    pub vehicle: VehicleQuery,
    pub driver: crate::domain::DriverId,
    pub at: DateTime<Utc>,
    pub observation: Observation,
    /// When the replica was last refreshed (device store); falls back to `generated_at`.
    pub registry_refreshed_at: Option<DateTime<Utc>>,
}

/// What R09 does when the CNH lacks EAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EarMissing {
    Warning,
    Irregular,
}

/// Parameters the law leaves open. Defaults follow NOTES; each is a municipal decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RulesConfig {
    /// Art. 14: inhabitants per taxi. 1,800 per Lei 5.498/2013 (secondary source); 2,000 original.
    pub inhabitants_per_taxi: u32,
    /// Art. 14: population of the most recent census (Censo 2022: 237,240).
    pub census_population: u32,
    /// Art. 2 II: CNH categories that cover B.
    pub categories_covering_b: Vec<String>,
    /// R09: EAR missing is a warning (default) or an irregularity.
    pub ear_missing: EarMissing,
    /// R02: years a taximeter verification is valid (1 under art. 1 §1, 2 under Portaria
    /// Inmetro 433/2025; default 2, and a label's "verificado até" year always counts).
    pub taximeter_period_years: u8,
    /// R10: days after CNH expiry still accepted (Lei 4.019 has none; CTB uses 30 for traffic).
    pub cnh_grace_days: u32,
    /// R18: maximum vehicle age in years (original art. 13 III).
    pub max_vehicle_age_years: i32,
    /// Rule ids switched off in addition to the catalogue defaults.
    pub disabled_rules: Vec<RuleId>,
    /// Rule ids switched on although off by default (e.g. R21 once confirmed).
    pub enabled_rules: Vec<RuleId>,
    /// Holiday calendar used for deadlines: national, state and municipal holidays and closures.
    pub calendar: deadline::CalendarConfig,
    /// Name of the issuing body, printed on records (NOTES §1.4: it changed over time).
    pub issuing_body: String,
}

impl Default for RulesConfig {
    fn default() -> Self {
        Self {
            inhabitants_per_taxi: 1_800,
            census_population: 237_240,
            categories_covering_b: ["B", "AB", "C", "AC", "D", "AD", "E", "AE"]
                .map(String::from)
                .to_vec(),
            ear_missing: EarMissing::Warning,
            taximeter_period_years: 2,
            cnh_grace_days: 0,
            max_vehicle_age_years: 10,
            disabled_rules: Vec::new(),
            enabled_rules: Vec::new(),
            calendar: deadline::CalendarConfig::default(),
            issuing_body: String::from("Unidade de Transportes e Sistema Viário de Americana"),
        }
    }
}

impl RulesConfig {
    /// Whether a rule is evaluated under this configuration.
    pub fn is_enabled(&self, id: RuleId) -> bool {
        let r = spec(id);
        if r.repealed || self.disabled_rules.contains(&id) {
            return false;
        }
        r.enabled_by_default || self.enabled_rules.contains(&id)
    }
}

/// Local date helper re-exported for rule modules.
pub(crate) fn local_date(at: DateTime<Utc>) -> NaiveDate {
    crate::time::local_date(at)
}
