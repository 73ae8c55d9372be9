//! The law as code: Lei 4.019/2004 rules evaluated as pure functions of registry facts and an
//! instant.
//!
//! Flow: the rule catalogue (`catalogue`) is data — id, citation, whether the wording in force is
//! verified, severity, consequence. `RulesConfig` holds the parameters the law leaves open
//! (art. 14 ratio, categories covering B, EAR missing, taximeter period, CNH grace, holidays);
//! with the IPCA series it makes the `parameters` that live in the registry, one value per
//! registry version, so every device judges by the office's parameters.
//! `field::check` turns the `Facts` of a lookup (the permit, vehicle, holder, stands and
//! penalties found for the plate or number, the driver, the instant, the observations) into a
//! `Verdict` whose every finding cites its rule and article; `office` refuses registry changes
//! that the law forbids; `deadline` counts appeal deadlines on the local calendar; `money`
//! corrects fees and fines by the IPCA; `penalty` defines art. 32's penalties once, proposes (never
//! decides) the grade of a record and says which rules may be cited (`citable`); `procedure` is
//! the procedure of arts. 32–35 as a state machine with dated steps. Nothing here does I/O or reads the clock.

pub mod catalogue;
pub mod deadline;
pub mod field;
pub mod money;
pub mod office;
pub mod parameters;
pub mod penalty;
pub mod procedure;
pub mod reference;
pub mod selection;

use chrono::{DateTime, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use catalogue::{CATALOGUE, RuleId, RuleSpec, UnknownRule, lookup, spec};
pub use field::{check, check_registry};
pub use parameters::{LawParameters, default_parameters};
pub use penalty::{NotCitable, citable};

use crate::domain::{
    DriverRole, Penalty, Permit, PermitNumber, Person, Registry, RegistryIndex, Stand, StandId,
    Vehicle,
};

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

/// Which registry data a verdict was computed on, and how old it was (ARCHITECTURE.md, Two kinds of data).
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
    /// Stand where the taxi was found, if at one (an id the registry does not know gives a
    /// warning).
    pub at_stand: Option<StandId>,
    /// True when the taxi was found parked/waiting (not in motion, no passenger) — R24 needs it;
    /// with no `at_stand`, it was waiting away from any stand.
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

/// Everything a field check reads, from the registry and from the street: the one input of
/// [`check`]. The device store fills it from its per-permit bundle, the server and the CLI from
/// their whole registry ([`Facts::from_registry`]); a rule that needs a fact not here cannot be
/// written without adding a field, and then every place that fills it stops compiling until it
/// fills the new field too.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts {
    /// How the officer named the taxi (R01 names it back).
    pub vehicle: VehicleQuery,
    /// Instant of the check.
    pub at: DateTime<Utc>,
    /// What the officer saw.
    pub observation: Observation,
    /// Registry version the facts come from.
    pub registry_version: u64,
    /// When the replica was last refreshed (device) or the registry generated (server).
    pub registry_refreshed_at: Option<DateTime<Utc>>,
    /// The driver, when the document shown names someone in the registry.
    pub driver: Option<DriverFacts>,
    /// The permit covering the vehicle, if any (none: R01 and nothing else).
    pub taxi: Option<TaxiFacts>,
}

/// The driver found in the registry.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverFacts {
    pub person: Person,
    /// The permits the driver holds or is auxiliary on, other than the taxi's, in number order
    /// (art. 8 § 3, and whether the driver is a deceased holder). Read only when the driver is
    /// neither holder nor auxiliary of the taxi's permit, whose own links then decide the role.
    pub other_permits: Vec<Permit>,
}

/// The permit found for the vehicle and what the rules read about it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaxiFacts {
    pub permit: Permit,
    /// The permit's vehicle (absent only in a registry that fails validation).
    pub vehicle: Option<Vehicle>,
    /// The permit's holder (art. 30 III compares the vehicle's owner with them).
    pub holder: Option<Person>,
    /// The permit's own stand (art. 16).
    pub own_stand: Option<Stand>,
    /// Penalties decided on the permit (art. 32), in force or not.
    pub penalties: Vec<Penalty>,
    /// The stand where the taxi was found, resolved against the registry.
    pub found_at: StandSeen,
}

/// Where the officer found the taxi, against the registry's stands.
#[derive(Debug, Clone, PartialEq)]
pub enum StandSeen {
    /// Not at a stand (or no stand given).
    NotAtStand,
    /// At the permit's own stand.
    Own,
    /// At another stand of the registry.
    Other(Stand),
    /// At a stand id the registry does not know (a finding says so: it is never ignored).
    Unknown,
}

impl Facts {
    /// The facts of `input` on a whole registry (server, CLI): the same answer the device store
    /// gives from its bundle for the same registry version.
    pub fn from_registry(index: &RegistryIndex<'_>, input: &CheckInput) -> Facts {
        let permit = match &input.vehicle {
            VehicleQuery::Plate(p) => index.permit_by_plate(p),
            VehicleQuery::Permit(n) => index.permit(n.trim()),
        };
        let person = input.driver.resolve(index);
        let driver = person.map(|person| {
            let by_right = permit.is_some_and(|p| {
                p.holder_id == person.id || p.auxiliaries.iter().any(|a| a.person_id == person.id)
            });
            let mut other_permits: Vec<Permit> = if by_right {
                Vec::new()
            } else {
                index
                    .registry
                    .permits
                    .iter()
                    .filter(|p| {
                        permit.is_none_or(|own| own.number != p.number)
                            && (p.holder_id == person.id
                                || p.auxiliaries.iter().any(|a| a.person_id == person.id))
                    })
                    .cloned()
                    .collect()
            };
            other_permits.sort_by(|a, b| a.number.cmp(&b.number));
            other_permits.dedup_by(|a, b| a.number == b.number);
            DriverFacts {
                person: person.clone(),
                other_permits,
            }
        });
        let taxi = permit.map(|p| TaxiFacts {
            permit: p.clone(),
            vehicle: index.vehicle(&p.vehicle_id).cloned(),
            holder: index.person(&p.holder_id).cloned(),
            own_stand: index.stand(&p.stand_id).cloned(),
            penalties: index.penalties_of(&p.number).into_iter().cloned().collect(),
            found_at: StandSeen::resolve(input.observation.at_stand.as_deref(), p, |id| {
                index.stand(id).cloned()
            }),
        });
        Facts {
            vehicle: input.vehicle.clone(),
            at: input.at,
            observation: input.observation.clone(),
            registry_version: index.registry.version,
            registry_refreshed_at: input.registry_refreshed_at.or(index.registry.generated_at),
            driver,
            taxi,
        }
    }
}

impl Facts {
    /// The registry rows these facts hold, as a small registry at their version: the driver
    /// first, then the holder; the driver's other permits in number order, then the taxi's
    /// (so that a plate names it). What a device keeps of a check (a record's scope is decided
    /// on it) and what it recycles.
    pub fn into_registry(self) -> Registry {
        let mut reg = Registry {
            version: self.registry_version,
            generated_at: self.registry_refreshed_at,
            ..Registry::default()
        };
        if let Some(d) = self.driver {
            reg.people.push(d.person);
            reg.permits = d.other_permits;
        }
        if let Some(t) = self.taxi {
            if let Some(h) = t.holder
                && !reg.people.iter().any(|p| p.id == h.id)
            {
                reg.people.push(h);
            }
            reg.vehicles.extend(t.vehicle);
            reg.stands.extend(t.own_stand);
            if let StandSeen::Other(st) = t.found_at {
                reg.stands.push(st);
            }
            reg.penalties = t.penalties;
            reg.permits.push(t.permit);
        }
        reg
    }
}

impl StandSeen {
    /// The stand id the officer gave, against the permit's own stand and the registry's
    /// stands (`stand` looks one up by id; asked only for a stand other than the own one).
    pub fn resolve(
        at_stand: Option<&str>,
        permit: &Permit,
        stand: impl FnOnce(&str) -> Option<Stand>,
    ) -> StandSeen {
        match at_stand {
            None => StandSeen::NotAtStand,
            Some(id) if id == permit.stand_id => StandSeen::Own,
            Some(id) => stand(id).map_or(StandSeen::Unknown, StandSeen::Other),
        }
    }
}

/// What R09 does when the CNH lacks EAR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EarMissing {
    Warning,
    Irregular,
}

/// Parameters the law leaves open. Defaults follow docs/law/reference.md; each is a municipal decision.
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
    /// Name of the issuing body, printed on records (docs/law/reference.md, Parameters the law leaves open: it changed over time).
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
