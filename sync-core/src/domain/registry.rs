//! The registry: alvarás (permits), the people on them, vehicles, stands, penalties in force and
//! unpaid fines. Written only by the central office; every device holds a read-only replica.
//!
//! `Registry` is also the JSON fixture format read by `taxi-fiscal check --registry FILE`
//! (schema in `schemas/registry.schema.json`). `Registry::validate` enforces referential
//! integrity so that the rules engine can assume every id resolves.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CnhNumber, Cpf, DomainError, Plate, Renavam};

/// Identifier of a person (holder, auxiliary driver or coordinator) in the registry.
pub type PersonId = String;
/// Identifier of a vehicle in the registry.
pub type VehicleId = String;
/// Identifier of a stand (ponto) in the registry.
pub type StandId = String;
/// Permit number (prontuário), as printed on the alvará.
pub type PermitNumber = String;

/// The whole registry at one version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Registry {
    /// Monotonic version; every office change bumps it.
    pub version: u64,
    /// When the office produced this version (UTC).
    pub generated_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub people: Vec<Person>,
    #[serde(default)]
    pub vehicles: Vec<Vehicle>,
    #[serde(default)]
    pub stands: Vec<Stand>,
    #[serde(default)]
    pub permits: Vec<Permit>,
    /// Decided penalties (art. 32), kept as history; the rules engine looks at those in force.
    #[serde(default)]
    pub penalties: Vec<Penalty>,
    /// Fines (art. 17 §2 III, art. 32 II) with their payment state.
    #[serde(default)]
    pub fines: Vec<Fine>,
    /// Transfers of permits (art. 10), for the two-year and three-year bars.
    #[serde(default)]
    pub transfers: Vec<Transfer>,
}

/// A transfer of a permit from one holder to another (art. 10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    pub permit_number: PermitNumber,
    pub from_person_id: PersonId,
    pub to_person_id: PersonId,
    pub on: NaiveDate,
    pub reason: TransferReason,
}

/// Why a permit changes hands; death, retirement and illness lift the two-year bar (art. 10 I).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransferReason {
    Voluntary,
    Death,
    Retirement,
    /// Illness that prevented work for more than six months.
    Illness,
}

/// A person who drives or may drive a taxi: holder (permissionário), auxiliary driver or
/// coordinator. Personal data lives here, referenced by id from records (DESIGN §Records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub id: PersonId,
    pub name: String,
    pub cpf: Cpf,
    pub birth_date: NaiveDate,
    pub licence: DriverLicence,
}

/// Carteira Nacional de Habilitação as printed (NOTES §2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DriverLicence {
    /// "nº de registro", 11 digits.
    pub number: CnhNumber,
    /// "Cat. Hab." as printed, e.g. `B`, `AB`, `D`, `AE`.
    pub category: String,
    /// "1ª habilitação" date; art. 2 II's two years are counted from it (R08).
    pub first_licence_date: NaiveDate,
    /// "validade" as printed; the field check trusts it (R10).
    pub expiry: NaiveDate,
    /// `P` (Permissão para Dirigir) or `D` (definitive).
    pub kind: LicenceKind,
    /// Observations as printed, e.g. `EAR`, `A`, or the old `VEDADA ATIVIDADE REMUNERADA`.
    #[serde(default)]
    pub observations: Vec<String>,
}

/// Letter printed on the CNH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum LicenceKind {
    /// Permissão para Dirigir (first year): never qualifies under art. 2 II.
    P,
    /// Definitive licence.
    D,
}

impl DriverLicence {
    /// True when an observation says EAR ("Exerce Atividade Remunerada", code 15).
    pub fn has_ear(&self) -> bool {
        self.observations.iter().any(|o| {
            let o = o.trim().to_uppercase();
            o == "EAR" || o == "15" || o.contains("EXERCE ATIVIDADE REMUNERADA")
        })
    }

    /// True when the document carries the old literal "VEDADA ATIVIDADE REMUNERADA".
    pub fn forbids_paid_activity(&self) -> bool {
        self.observations
            .iter()
            .any(|o| o.to_uppercase().contains("VEDADA ATIVIDADE REMUNERADA"))
    }
}

/// Vehicle as on its CRLV plus what an inspector observes (doors, taximeter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Vehicle {
    pub id: VehicleId,
    pub plate: Plate,
    pub renavam: Renavam,
    pub make_model: String,
    pub colour: String,
    pub year_of_manufacture: i32,
    /// Number of doors (not on the CRLV; recorded at inspection).
    pub doors: u8,
    /// CRLV "lotação", which includes the driver (NOTES §2.6).
    pub capacity_incl_driver: u8,
    /// CRLV "local": município of licensing.
    pub licensing_municipality: String,
    /// CRLV "local": UF.
    pub licensing_uf: String,
    /// CRLV "categoria".
    pub category: VehicleCategory,
    /// CPF of the owner on the CRLV (art. 30 III: must be the holder).
    pub owner_cpf: Cpf,
    /// Last INMETRO/IPEM verification of the taximeter, if any (art. 1 §1, R02).
    pub taximeter: Option<Taximeter>,
}

/// CRLV categoria.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VehicleCategory {
    /// Aluguel: what a taxi must be.
    Aluguel,
    Particular,
    Oficial,
    Outra,
}

/// Taximeter verification (NOTES §2.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Taximeter {
    pub certificate_number: Option<String>,
    /// Date of the last verification.
    pub verified_on: NaiveDate,
    /// Year printed on the label "verificado até", if known.
    pub valid_until_year: Option<i32>,
    /// Lacre (seal) intact when last seen.
    pub seal_intact: bool,
}

/// A taxi stand (ponto), fixed by decree (art. 15).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stand {
    pub id: StandId,
    pub name: String,
    pub address: String,
    /// Mandatory hours (art. 16 I).
    pub schedule: StandSchedule,
    /// Common taxi stand, or a radio-taxi place (art. 28).
    pub service: ServiceKind,
    pub vacancies: u32,
    /// Coordinator (art. 17), a person id.
    pub coordinator_id: Option<PersonId>,
    pub latitude: Option<f64>,
    pub longitude: Option<f64>,
}

/// Mandatory hours class of a stand (art. 16 I).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StandSchedule {
    /// 06:00–20:00, most stands.
    #[serde(rename = "06-20")]
    Day,
    /// 06:00–24:00: Terminal Urbano, Terminal Rodoviário, Praça Comendador Muller.
    #[serde(rename = "06-24")]
    Extended,
}

/// Common taxi or radio-taxi (arts. 23–29).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServiceKind {
    Common,
    RadioTaxi,
}

/// Alvará para exploração de serviços de Táxi.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Permit {
    /// Prontuário.
    pub number: PermitNumber,
    pub holder_id: PersonId,
    /// Registered auxiliary drivers (art. 8: at most two), each with their own alvará.
    #[serde(default)]
    pub auxiliaries: Vec<AuxiliaryDriver>,
    pub vehicle_id: VehicleId,
    pub stand_id: StandId,
    pub service: ServiceKind,
    pub issued_on: NaiveDate,
    /// Year the alvará was last renewed for (art. 7: by 31 January of that year).
    pub renewal_year: i32,
    /// Publication date of the Edital de Chamamento the permit came from (art. 13 III).
    pub edital_date: Option<NaiveDate>,
    pub state: PermitState,
    /// Art. 1 §3: the holder's written authorisation for a third party while ill.
    pub illness_authorisation: Option<IllnessAuthorisation>,
}

/// An auxiliary driver's registration on a permit (art. 8, "alvarás constando esta condição").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuxiliaryDriver {
    pub person_id: PersonId,
    /// Number of the auxiliary's own alvará.
    pub licence_number: String,
    pub registered_on: NaiveDate,
}

/// Art. 1 §3 authorisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IllnessAuthorisation {
    pub person_id: PersonId,
    pub medical_proof_on_file: bool,
    pub valid_from: NaiveDate,
    pub valid_until: NaiveDate,
}

/// Legal state of a permit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PermitState {
    Active,
    /// Suspended on the days `from..=until` (local dates, inclusive).
    Suspended {
        from: NaiveDate,
        until: NaiveDate,
    },
    /// Revoked (cassado) on that date.
    Revoked {
        on: NaiveDate,
    },
    /// Holder deceased, right passing to heirs (art. 1 §4, R05).
    InSuccession {
        since: NaiveDate,
    },
}

/// A decided penalty (art. 32).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Penalty {
    pub id: String,
    pub permit_number: PermitNumber,
    /// The person who committed the infraction (holder or auxiliary, art. 32 §2).
    pub person_id: Option<PersonId>,
    pub kind: PenaltyKind,
    pub decided_on: NaiveDate,
    /// First day it takes effect (suspensions).
    pub starts_on: NaiveDate,
    /// Record (auto) it came from.
    pub record_id: Option<String>,
}

/// Art. 32 I–V.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PenaltyKind {
    WrittenWarning,
    Fine,
    /// `days` is 15 (III) or 60 (IV).
    Suspension {
        days: u16,
    },
    Revocation,
}

impl Penalty {
    /// Last day (inclusive) of a suspension: 15 days from D cover D … D+14.
    pub fn suspension_last_day(&self) -> Option<NaiveDate> {
        match self.kind {
            PenaltyKind::Suspension { days } if days > 0 => self
                .starts_on
                .checked_add_days(chrono::Days::new(u64::from(days) - 1)),
            _ => None,
        }
    }
}

/// A fine and whether it is paid (art. 17 §2 III: unpaid blocks the annual alvará).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fine {
    pub id: String,
    pub permit_number: PermitNumber,
    pub amount: Decimal,
    pub issued_on: NaiveDate,
    pub paid_on: Option<NaiveDate>,
}

/// Where a person stands relative to one permit (art. 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DriverRole {
    /// The permissionário of this permit.
    Holder,
    /// A registered auxiliary of this permit.
    Auxiliary,
    /// Authorised under art. 1 §3 (holder ill).
    IllnessSubstitute,
    /// A registered auxiliary of *another* permit (art. 8 §3).
    AuxiliaryOfAnotherPermit,
    /// The holder of another permit driving this one.
    HolderOfAnotherPermit,
    /// Anyone else, known to the registry or not (art. 8 §4).
    Unauthorised,
}

impl Registry {
    /// Parses a registry fixture and validates it.
    pub fn from_json(text: &str) -> Result<Self, DomainError> {
        let reg: Registry = serde_json::from_str(text).map_err(|e| DomainError::Fixture {
            reason: e.to_string(),
        })?;
        reg.validate()?;
        Ok(reg)
    }

    /// Referential integrity: unique ids, every reference resolves, plates unique.
    pub fn validate(&self) -> Result<(), DomainError> {
        fn unique<'a>(
            what: &str,
            ids: impl Iterator<Item = &'a str>,
        ) -> Result<BTreeSet<&'a str>, DomainError> {
            let mut set = BTreeSet::new();
            for id in ids {
                if !set.insert(id) {
                    return Err(DomainError::Fixture {
                        reason: format!("{what} duplicado: {id}"),
                    });
                }
            }
            Ok(set)
        }
        let people = unique("pessoa", self.people.iter().map(|p| p.id.as_str()))?;
        let vehicles = unique("veículo", self.vehicles.iter().map(|v| v.id.as_str()))?;
        let stands = unique("ponto", self.stands.iter().map(|s| s.id.as_str()))?;
        let permits = unique("alvará", self.permits.iter().map(|p| p.number.as_str()))?;
        unique("placa", self.vehicles.iter().map(|v| v.plate.canonical()))?;
        unique("CPF", self.people.iter().map(|p| p.cpf.as_str()))?;
        let missing = |what: &str, id: &str| DomainError::Fixture {
            reason: format!("{what} inexistente: {id}"),
        };
        for p in &self.permits {
            if !people.contains(p.holder_id.as_str()) {
                return Err(missing("titular", &p.holder_id));
            }
            if !vehicles.contains(p.vehicle_id.as_str()) {
                return Err(missing("veículo", &p.vehicle_id));
            }
            if !stands.contains(p.stand_id.as_str()) {
                return Err(missing("ponto", &p.stand_id));
            }
            for a in &p.auxiliaries {
                if !people.contains(a.person_id.as_str()) {
                    return Err(missing("motorista auxiliar", &a.person_id));
                }
            }
            if let Some(ill) = &p.illness_authorisation
                && !people.contains(ill.person_id.as_str())
            {
                return Err(missing("autorizado (art. 1º, § 3º)", &ill.person_id));
            }
        }
        for s in &self.stands {
            if let Some(c) = &s.coordinator_id
                && !people.contains(c.as_str())
            {
                return Err(missing("coordenador", c));
            }
        }
        for pen in &self.penalties {
            if !permits.contains(pen.permit_number.as_str()) {
                return Err(missing("alvará da penalidade", &pen.permit_number));
            }
        }
        for f in &self.fines {
            if !permits.contains(f.permit_number.as_str()) {
                return Err(missing("alvará da multa", &f.permit_number));
            }
        }
        Ok(())
    }

    /// Builds lookup indexes; cheap enough to do once per loaded fixture.
    pub fn index(&self) -> RegistryIndex<'_> {
        RegistryIndex::new(self)
    }
}

/// Borrowed indexes over a `Registry` for point lookups.
#[derive(Debug)]
pub struct RegistryIndex<'r> {
    pub registry: &'r Registry,
    people: BTreeMap<&'r str, &'r Person>,
    by_cpf: BTreeMap<&'r str, &'r Person>,
    by_cnh: BTreeMap<&'r str, &'r Person>,
    vehicles: BTreeMap<&'r str, &'r Vehicle>,
    stands: BTreeMap<&'r str, &'r Stand>,
    permits: BTreeMap<&'r str, &'r Permit>,
    permit_by_plate: BTreeMap<&'r str, &'r Permit>,
}

impl<'r> RegistryIndex<'r> {
    fn new(registry: &'r Registry) -> Self {
        let vehicles: BTreeMap<_, _> = registry
            .vehicles
            .iter()
            .map(|v| (v.id.as_str(), v))
            .collect();
        let permit_by_plate = registry
            .permits
            .iter()
            .filter_map(|p| {
                vehicles
                    .get(p.vehicle_id.as_str())
                    .map(|v| (v.plate.canonical(), p))
            })
            .collect();
        Self {
            registry,
            people: registry.people.iter().map(|p| (p.id.as_str(), p)).collect(),
            by_cpf: registry
                .people
                .iter()
                .map(|p| (p.cpf.as_str(), p))
                .collect(),
            by_cnh: registry
                .people
                .iter()
                .map(|p| (p.licence.number.as_str(), p))
                .collect(),
            vehicles,
            stands: registry.stands.iter().map(|s| (s.id.as_str(), s)).collect(),
            permits: registry
                .permits
                .iter()
                .map(|p| (p.number.as_str(), p))
                .collect(),
            permit_by_plate,
        }
    }

    pub fn person(&self, id: &str) -> Option<&'r Person> {
        self.people.get(id).copied()
    }
    pub fn person_by_cpf(&self, cpf: &Cpf) -> Option<&'r Person> {
        self.by_cpf.get(cpf.as_str()).copied()
    }
    pub fn person_by_cnh(&self, cnh: &CnhNumber) -> Option<&'r Person> {
        self.by_cnh.get(cnh.as_str()).copied()
    }
    pub fn vehicle(&self, id: &str) -> Option<&'r Vehicle> {
        self.vehicles.get(id).copied()
    }
    pub fn stand(&self, id: &str) -> Option<&'r Stand> {
        self.stands.get(id).copied()
    }
    pub fn permit(&self, number: &str) -> Option<&'r Permit> {
        self.permits.get(number).copied()
    }
    pub fn permit_by_plate(&self, plate: &Plate) -> Option<&'r Permit> {
        self.permit_by_plate.get(plate.canonical()).copied()
    }
    /// Permits where the person is holder (art. 9 says at most one).
    pub fn permits_held_by(&self, person_id: &str) -> Vec<&'r Permit> {
        self.registry
            .permits
            .iter()
            .filter(|p| p.holder_id == person_id)
            .collect()
    }
    /// Permits where the person is a registered auxiliary.
    pub fn permits_with_auxiliary(&self, person_id: &str) -> Vec<&'r Permit> {
        self.registry
            .permits
            .iter()
            .filter(|p| p.auxiliaries.iter().any(|a| a.person_id == person_id))
            .collect()
    }
    pub fn penalties_of(&self, permit_number: &str) -> Vec<&'r Penalty> {
        self.registry
            .penalties
            .iter()
            .filter(|p| p.permit_number == permit_number)
            .collect()
    }
    pub fn fines_of(&self, permit_number: &str) -> Vec<&'r Fine> {
        self.registry
            .fines
            .iter()
            .filter(|f| f.permit_number == permit_number)
            .collect()
    }

    /// The person's relation to this permit (art. 8), given the instant's local date for the
    /// art. 1 §3 authorisation window.
    pub fn role_on(&self, permit: &Permit, person: &Person, on: NaiveDate) -> DriverRole {
        if permit.holder_id == person.id {
            return DriverRole::Holder;
        }
        if permit.auxiliaries.iter().any(|a| a.person_id == person.id) {
            return DriverRole::Auxiliary;
        }
        if let Some(ill) = &permit.illness_authorisation
            && ill.person_id == person.id
            && ill.valid_from <= on
            && on <= ill.valid_until
        {
            return DriverRole::IllnessSubstitute;
        }
        if !self.permits_with_auxiliary(&person.id).is_empty() {
            return DriverRole::AuxiliaryOfAnotherPermit;
        }
        if !self.permits_held_by(&person.id).is_empty() {
            return DriverRole::HolderOfAnotherPermit;
        }
        DriverRole::Unauthorised
    }
}
