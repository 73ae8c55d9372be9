//! The registry: alvarás (permits), the people on them, vehicles, stands, penalties in force and
//! unpaid fines. Written only by the central office; every device holds a read-only replica.
//!
//! `Registry` is also the JSON fixture format read by `taxi-fiscal check --registry FILE`
//! (schema in `schemas/registry.schema.json`). `Registry::validate` enforces referential
//! integrity so that the rules engine can assume every id resolves.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::sync::Arc;

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
    /// The law's parameters in force at this version (rules configuration, holiday calendar,
    /// IPCA series), set by the office. `None`: never set, the compiled-in defaults apply
    /// (see [`Registry::law`]); a snapshot without them loads as such.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<crate::rules::LawParameters>,
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
/// coordinator. Personal data lives here, referenced by id from records (ARCHITECTURE.md, Records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Person {
    pub id: PersonId,
    pub name: String,
    pub cpf: Cpf,
    pub birth_date: NaiveDate,
    pub licence: DriverLicence,
}

/// Carteira Nacional de Habilitação as printed (docs/law/reference.md, CNH).
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
            let o = o.trim();
            if o.is_ascii() {
                o.eq_ignore_ascii_case("EAR")
                    || o == "15"
                    || contains_ignore_ascii_case(o, "EXERCE ATIVIDADE REMUNERADA")
            } else {
                let o = o.to_uppercase();
                o == "EAR" || o == "15" || o.contains("EXERCE ATIVIDADE REMUNERADA")
            }
        })
    }

    /// True when the document carries the old literal "VEDADA ATIVIDADE REMUNERADA".
    pub fn forbids_paid_activity(&self) -> bool {
        const VEDADA: &str = "VEDADA ATIVIDADE REMUNERADA";
        self.observations.iter().any(|o| {
            if o.is_ascii() {
                contains_ignore_ascii_case(o, VEDADA)
            } else {
                o.to_uppercase().contains(VEDADA)
            }
        })
    }
}

/// `text.to_uppercase().contains(upper)` for an ASCII `text` and an upper-case ASCII `upper`,
/// without building the upper-cased copy (device bench: every field check reads the
/// observations of the driver's licence). Not for other text: `to_uppercase` maps some
/// non-ASCII letters to ASCII ones (`ı` → `I`), which this would not see.
fn contains_ignore_ascii_case(text: &str, upper: &str) -> bool {
    upper.is_empty()
        || text
            .as_bytes()
            .windows(upper.len())
            .any(|w| w.eq_ignore_ascii_case(upper.as_bytes()))
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
    /// CRLV "lotação", which includes the driver (docs/law/reference.md, CRLV).
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

/// Taximeter verification (docs/law/reference.md, Taximeter).
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

    /// [`Registry::from_json`] from a stream: the text is parsed as it is read and never held
    /// whole (a city's snapshot is hundreds of megabytes of JSON). The reader is buffered here.
    pub fn from_json_reader(input: impl std::io::Read) -> Result<Self, DomainError> {
        let reg: Registry =
            serde_json::from_reader(std::io::BufReader::new(input)).map_err(|e| {
                DomainError::Fixture {
                    reason: e.to_string(),
                }
            })?;
        reg.validate()?;
        Ok(reg)
    }

    /// Referential integrity: unique ids, every reference resolves, plates unique; and the
    /// law's parameters, if any, well formed.
    pub fn validate(&self) -> Result<(), DomainError> {
        fn unique<'a>(
            what: &str,
            ids: impl Iterator<Item = &'a str>,
        ) -> Result<BTreeSet<&'a str>, DomainError> {
            let mut set = BTreeSet::new();
            for id in ids {
                if !set.insert(id) {
                    return Err(DomainError::Fixture {
                        reason: format!("{what}: {id}"),
                    });
                }
            }
            Ok(set)
        }
        let people = unique(
            "pessoa duplicada",
            self.people.iter().map(|p| p.id.as_str()),
        )?;
        let vehicles = unique(
            "veículo duplicado",
            self.vehicles.iter().map(|v| v.id.as_str()),
        )?;
        let stands = unique("ponto duplicado", self.stands.iter().map(|s| s.id.as_str()))?;
        let permits = unique(
            "alvará duplicado",
            self.permits.iter().map(|p| p.number.as_str()),
        )?;
        unique(
            "placa duplicada",
            self.vehicles.iter().map(|v| v.plate.canonical()),
        )?;
        unique("CPF duplicado", self.people.iter().map(|p| p.cpf.as_str()))?;
        // Penalties and fines are stored by id: two with one id would silently become one.
        unique(
            "penalidade duplicada",
            self.penalties.iter().map(|p| p.id.as_str()),
        )?;
        unique("multa duplicada", self.fines.iter().map(|f| f.id.as_str()))?;
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
            // A position off the globe would reach every device and every distance the
            // office is shown; a stand has both coordinates or neither.
            let on_earth =
                |v: Option<f64>, max: f64| v.is_none_or(|x| x.is_finite() && x.abs() <= max);
            if !on_earth(s.latitude, 90.0)
                || !on_earth(s.longitude, 180.0)
                || s.latitude.is_some() != s.longitude.is_some()
            {
                return Err(DomainError::Fixture {
                    reason: format!(
                        "posição do ponto {} inválida: a latitude vai de −90 a 90 e a longitude \
                         de −180 a 180, as duas informadas ou nenhuma",
                        s.id
                    ),
                });
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
        if let Some(p) = &self.parameters {
            p.check().map_err(|e| DomainError::Fixture {
                reason: format!("parâmetros da lei: {e}"),
            })?;
        }
        Ok(())
    }

    /// The law's parameters this registry is judged by: its own, or the defaults when the
    /// office never set any.
    pub fn law(&self) -> &crate::rules::LawParameters {
        self.parameters
            .as_ref()
            .unwrap_or_else(|| crate::rules::default_parameters())
    }

    /// Lookup indexes over this registry, built now: cheap for a device's handful of rows. A
    /// caller that looks up the same large registry again and again (the server, whose whole
    /// city is one registry version) builds them once with [`IndexedRegistry`].
    pub fn index(&self) -> RegistryIndex<'_> {
        RegistryIndex {
            registry: self,
            keys: Cow::Owned(RegistryKeys::build(self)),
        }
    }
}

/// Point lookups over a `Registry`: by id, CPF, CNH, plate, and the permits, penalties and fines
/// of a person or permit.
///
/// Where an id or number occurs twice (a registry that did not pass `validate`), the last row
/// wins, as it would in a map filled in registry order; lists keep registry order.
///
/// Device bench: a field check on the device indexes a registry of a handful of rows
/// (module `store::lookup`), where building seven `BTreeMap`s cost about a tenth of the check.
/// So a small table is not indexed at all but scanned, and a large one (the server's whole
/// city) is a vector of row positions sorted by key, searched by bisection: one allocation per
/// key instead of one per tree node, as fast to search, and owning no borrow of the rows, so
/// that [`IndexedRegistry`] can keep it with the registry it was built from.
#[derive(Debug)]
pub struct RegistryIndex<'r> {
    pub registry: &'r Registry,
    keys: Cow<'r, RegistryKeys>,
}

/// A registry version with its indexes, built once: what a server that answers many lookups
/// on the same version keeps (the registry is immutable behind its `Arc`, so the positions
/// always describe the rows they were computed from).
#[derive(Debug, Clone)]
pub struct IndexedRegistry {
    registry: Arc<Registry>,
    keys: RegistryKeys,
}

impl IndexedRegistry {
    /// Indexes `registry` (linear in its size, plus the sorts).
    pub fn new(registry: Arc<Registry>) -> Self {
        let keys = RegistryKeys::build(&registry);
        Self { registry, keys }
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The registry's version.
    pub fn version(&self) -> u64 {
        self.registry.version
    }

    /// Lookups over the registry, with the indexes already built.
    pub fn index(&self) -> RegistryIndex<'_> {
        RegistryIndex {
            registry: &self.registry,
            keys: Cow::Borrowed(&self.keys),
        }
    }
}

/// Tables of at most this many rows are scanned rather than indexed: below it a scan compares
/// fewer keys than building an index would, and allocates nothing.
const SCAN_MAX: usize = 16;

/// The positions of one table's rows, sorted by one key; `None` for a table small enough to
/// scan. Positions are `u32`: a registry never approaches four billion rows of one kind, and
/// a position past the end (impossible by construction) reads as no row, never a panic.
type Keyed = Option<Vec<u32>>;

/// Every index of a registry, as row positions (no borrow: see [`IndexedRegistry`]).
#[derive(Debug, Clone, Default)]
struct RegistryKeys {
    people: Keyed,
    by_cpf: Keyed,
    by_cnh: Keyed,
    vehicles: Keyed,
    stands: Keyed,
    permits: Keyed,
    permit_by_plate: Keyed,
    permit_by_holder: Keyed,
    permit_by_stand: Keyed,
    penalties_by_permit: Keyed,
    penalty_by_record: Keyed,
    fines_by_permit: Keyed,
    fines: Keyed,
    /// (permit position, auxiliary position) sorted by the auxiliary's person id; `None` when
    /// the permits are few enough to scan.
    auxiliaries: Option<Vec<(u32, u32)>>,
}

/// Positions of `rows` that have a key, stably sorted by it: of equal keys, registry order.
fn sorted_by<'r, T>(rows: &'r [T], key: impl Fn(&'r T) -> Option<&'r str>) -> Keyed {
    if rows.len() <= SCAN_MAX {
        return None;
    }
    let mut positions: Vec<u32> = (0..rows.len())
        .filter_map(|i| u32::try_from(i).ok())
        .filter(|&i| row(rows, i).and_then(&key).is_some())
        .collect();
    positions.sort_by(|&a, &b| {
        row(rows, a)
            .and_then(&key)
            .cmp(&row(rows, b).and_then(&key))
    });
    Some(positions)
}

fn row<T>(rows: &[T], at: u32) -> Option<&T> {
    rows.get(usize::try_from(at).ok()?)
}

/// The rows whose key is `k`, in registry order; `key` must be the function `keyed` was built
/// with.
fn all<'r, T>(
    keyed: &Keyed,
    rows: &'r [T],
    k: &str,
    key: impl Fn(&'r T) -> Option<&'r str>,
) -> Vec<&'r T> {
    match keyed {
        None => rows.iter().filter(|r| key(r) == Some(k)).collect(),
        Some(sorted) => {
            let key_at = |i: &u32| row(rows, *i).and_then(&key);
            let start = sorted.partition_point(|i| key_at(i) < Some(k));
            let end = sorted.partition_point(|i| key_at(i) <= Some(k));
            sorted
                .get(start..end)
                .unwrap_or_default()
                .iter()
                .filter_map(|&i| row(rows, i))
                .collect()
        }
    }
}

/// The last row (in registry order) whose key is `k`.
fn last<'r, T>(
    keyed: &Keyed,
    rows: &'r [T],
    k: &str,
    key: impl Fn(&'r T) -> Option<&'r str>,
) -> Option<&'r T> {
    match keyed {
        None => rows.iter().rev().find(|r| key(r) == Some(k)),
        Some(sorted) => {
            let key_at = |i: &u32| row(rows, *i).and_then(&key);
            let end = sorted.partition_point(|i| key_at(i) <= Some(k));
            let at = *sorted.get(end.checked_sub(1)?)?;
            row(rows, at).filter(|r| key(r) == Some(k))
        }
    }
}

// The keys, each the one function that builds and searches its index.
fn person_id(p: &Person) -> Option<&str> {
    Some(&p.id)
}
fn person_cpf(p: &Person) -> Option<&str> {
    Some(p.cpf.as_str())
}
fn person_cnh(p: &Person) -> Option<&str> {
    Some(p.licence.number.as_str())
}
fn vehicle_id(v: &Vehicle) -> Option<&str> {
    Some(&v.id)
}
fn stand_id(s: &Stand) -> Option<&str> {
    Some(&s.id)
}
fn permit_number(p: &Permit) -> Option<&str> {
    Some(&p.number)
}
fn permit_holder(p: &Permit) -> Option<&str> {
    Some(&p.holder_id)
}
fn penalty_permit(p: &Penalty) -> Option<&str> {
    Some(&p.permit_number)
}
fn fine_permit(f: &Fine) -> Option<&str> {
    Some(&f.permit_number)
}
fn permit_stand(p: &Permit) -> Option<&str> {
    Some(&p.stand_id)
}
fn penalty_record(p: &Penalty) -> Option<&str> {
    p.record_id.as_deref()
}
fn fine_id(f: &Fine) -> Option<&str> {
    Some(&f.id)
}

impl RegistryKeys {
    fn build<'r>(registry: &'r Registry) -> Self {
        let vehicles = sorted_by(&registry.vehicles, vehicle_id);
        let plate_of = |p: &'r Permit| {
            last(&vehicles, &registry.vehicles, &p.vehicle_id, vehicle_id)
                .map(|v| v.plate.canonical())
        };
        let permit_by_plate = sorted_by(&registry.permits, plate_of);
        let auxiliaries = (registry.permits.len() > SCAN_MAX).then(|| {
            let mut pairs: Vec<(u32, u32)> = Vec::new();
            for (p, permit) in registry.permits.iter().enumerate() {
                for a in 0..permit.auxiliaries.len() {
                    if let (Ok(p), Ok(a)) = (u32::try_from(p), u32::try_from(a)) {
                        pairs.push((p, a));
                    }
                }
            }
            let person = |&(p, a): &(u32, u32)| {
                row(&registry.permits, p)
                    .and_then(|permit| row(&permit.auxiliaries, a))
                    .map(|aux| aux.person_id.as_str())
            };
            pairs.sort_by(|x, y| person(x).cmp(&person(y)));
            pairs
        });
        Self {
            people: sorted_by(&registry.people, person_id),
            by_cpf: sorted_by(&registry.people, person_cpf),
            by_cnh: sorted_by(&registry.people, person_cnh),
            vehicles,
            stands: sorted_by(&registry.stands, stand_id),
            permits: sorted_by(&registry.permits, permit_number),
            permit_by_plate,
            permit_by_holder: sorted_by(&registry.permits, permit_holder),
            permit_by_stand: sorted_by(&registry.permits, permit_stand),
            penalties_by_permit: sorted_by(&registry.penalties, penalty_permit),
            penalty_by_record: sorted_by(&registry.penalties, penalty_record),
            fines_by_permit: sorted_by(&registry.fines, fine_permit),
            fines: sorted_by(&registry.fines, fine_id),
            auxiliaries,
        }
    }
}

impl<'r> RegistryIndex<'r> {
    pub fn person(&self, id: &str) -> Option<&'r Person> {
        last(&self.keys.people, &self.registry.people, id, person_id)
    }
    pub fn person_by_cpf(&self, cpf: &Cpf) -> Option<&'r Person> {
        last(
            &self.keys.by_cpf,
            &self.registry.people,
            cpf.as_str(),
            person_cpf,
        )
    }
    pub fn person_by_cnh(&self, cnh: &CnhNumber) -> Option<&'r Person> {
        last(
            &self.keys.by_cnh,
            &self.registry.people,
            cnh.as_str(),
            person_cnh,
        )
    }
    pub fn vehicle(&self, id: &str) -> Option<&'r Vehicle> {
        last(&self.keys.vehicles, &self.registry.vehicles, id, vehicle_id)
    }
    pub fn stand(&self, id: &str) -> Option<&'r Stand> {
        last(&self.keys.stands, &self.registry.stands, id, stand_id)
    }
    pub fn permit(&self, number: &str) -> Option<&'r Permit> {
        last(
            &self.keys.permits,
            &self.registry.permits,
            number,
            permit_number,
        )
    }
    pub fn permit_by_plate(&self, plate: &Plate) -> Option<&'r Permit> {
        let registry = self.registry;
        let vehicles = &self.keys.vehicles;
        last(
            &self.keys.permit_by_plate,
            &registry.permits,
            plate.canonical(),
            |p: &'r Permit| {
                last(vehicles, &registry.vehicles, &p.vehicle_id, vehicle_id)
                    .map(|v| v.plate.canonical())
            },
        )
    }
    /// Permits where the person is holder (art. 9 says at most one).
    pub fn permits_held_by(&self, person_id: &str) -> Vec<&'r Permit> {
        all(
            &self.keys.permit_by_holder,
            &self.registry.permits,
            person_id,
            permit_holder,
        )
    }
    /// Permits where the person is a registered auxiliary, in registry order.
    pub fn permits_with_auxiliary(&self, person_id: &str) -> Vec<&'r Permit> {
        let permits = &self.registry.permits;
        let Some(pairs) = &self.keys.auxiliaries else {
            return permits
                .iter()
                .filter(|p| p.auxiliaries.iter().any(|a| a.person_id == person_id))
                .collect();
        };
        let person = |&(p, a): &(u32, u32)| {
            row(permits, p)
                .and_then(|permit| row(&permit.auxiliaries, a))
                .map(|aux| aux.person_id.as_str())
        };
        let start = pairs.partition_point(|x| person(x) < Some(person_id));
        let end = pairs.partition_point(|x| person(x) <= Some(person_id));
        let mut at: Vec<u32> = pairs
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|&(p, _)| p)
            .collect();
        // Sorted by person only, pairs of one person are in permit order already; a permit
        // that lists the person twice appears once.
        at.dedup();
        at.into_iter().filter_map(|p| row(permits, p)).collect()
    }
    pub fn penalties_of(&self, permit_number: &str) -> Vec<&'r Penalty> {
        all(
            &self.keys.penalties_by_permit,
            &self.registry.penalties,
            permit_number,
            penalty_permit,
        )
    }
    /// Permits at the stand, in registry order.
    pub fn permits_at(&self, stand_id: &str) -> Vec<&'r Permit> {
        all(
            &self.keys.permit_by_stand,
            &self.registry.permits,
            stand_id,
            permit_stand,
        )
    }
    /// The penalty a record decided (the first in registry order, should there be two).
    pub fn penalty_of_record(&self, record_id: &str) -> Option<&'r Penalty> {
        all(
            &self.keys.penalty_by_record,
            &self.registry.penalties,
            record_id,
            penalty_record,
        )
        .first()
        .copied()
    }
    /// The fine with this id (the first in registry order, should there be two).
    pub fn fine(&self, id: &str) -> Option<&'r Fine> {
        all(&self.keys.fines, &self.registry.fines, id, fine_id)
            .first()
            .copied()
    }
    pub fn fines_of(&self, permit_number: &str) -> Vec<&'r Fine> {
        all(
            &self.keys.fines_by_permit,
            &self.registry.fines,
            permit_number,
            fine_permit,
        )
    }

    /// The person's relation to this permit (art. 8), given the instant's local date for the
    /// art. 1 §3 authorisation window.
    pub fn role_on(&self, permit: &Permit, person: &Person, on: NaiveDate) -> DriverRole {
        // Only the person's own permits matter (what `role_among` asks for): two index reads
        // instead of a pass over the city's permits.
        let mut mine = self.permits_with_auxiliary(&person.id);
        mine.extend(self.permits_held_by(&person.id));
        role_among(permit, &person.id, on, mine.iter().copied())
    }
}

/// The relation of person `person_id` to `permit` (art. 8) on the local date `on`, where
/// `permits` holds at least every other permit the person holds or is auxiliary on (it may hold
/// more, `permit` itself included). The one definition of the role: the whole-registry index
/// and the field check's facts (which carry only the driver's permits) both answer with it.
pub fn role_among<'p>(
    permit: &Permit,
    person_id: &str,
    on: NaiveDate,
    permits: impl IntoIterator<Item = &'p Permit> + Clone,
) -> DriverRole {
    if permit.holder_id == person_id {
        return DriverRole::Holder;
    }
    if permit.auxiliaries.iter().any(|a| a.person_id == person_id) {
        return DriverRole::Auxiliary;
    }
    if let Some(ill) = &permit.illness_authorisation
        && ill.person_id == person_id
        && ill.valid_from <= on
        && on <= ill.valid_until
    {
        return DriverRole::IllnessSubstitute;
    }
    if permits
        .clone()
        .into_iter()
        .any(|p| p.auxiliaries.iter().any(|a| a.person_id == person_id))
    {
        return DriverRole::AuxiliaryOfAnotherPermit;
    }
    if permits.into_iter().any(|p| p.holder_id == person_id) {
        return DriverRole::HolderOfAnotherPermit;
    }
    DriverRole::Unauthorised
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::testkit::sample_registry;

    /// A registry written as JSON and read back is the same registry, coordinates to the last
    /// bit: a device compares its replica with the snapshot it accepted, and the office's
    /// distances use the stand's position. serde_json's default float parser may be one unit in
    /// the last place off; the workspace enables `float_roundtrip` (this failed without it, on a
    /// position the registry-feed fuzzing found).
    /// Stand positions are on the globe, at its edges included, and come in pairs.
    /// A registry large enough to be indexed (every table over `SCAN_MAX` rows), with ids,
    /// CPFs and plates that repeat, answers every lookup as a scan in registry order does: the
    /// last row of a key for a point lookup, every row in order for a list; and an
    /// `IndexedRegistry` answers as the index built on the spot.
    #[test]
    fn indexes_answer_as_a_scan_does_on_a_large_registry_with_repeats() {
        let base = sample_registry();
        let mut reg = base.clone();
        for copy in 0..6 {
            for mut p in base.people.clone() {
                if copy % 2 == 1 {
                    p.id = format!("{}-{copy}", p.id);
                }
                reg.people.push(p);
            }
            for mut v in base.vehicles.clone() {
                v.id = format!("{}-{copy}", v.id);
                reg.vehicles.push(v);
            }
            for mut p in base.permits.clone() {
                p.number = format!("{}{copy}", p.number);
                p.vehicle_id = format!("{}-{copy}", p.vehicle_id);
                reg.permits.push(p);
            }
            reg.stands.extend(base.stands.clone());
            for mut x in base.penalties.clone() {
                x.record_id = Some(format!("registro-{}", copy % 3));
                reg.penalties.push(x);
            }
            reg.fines.extend(base.fines.clone());
        }
        for _ in 0..SCAN_MAX {
            reg.penalties.extend(base.penalties.clone());
            reg.fines.extend(base.fines.clone());
        }
        assert!(reg.people.len() > SCAN_MAX && reg.permits.len() > SCAN_MAX);
        assert!(!reg.penalties.is_empty() && !reg.fines.is_empty());
        assert!(
            reg.penalties
                .iter()
                .filter(|p| p.record_id.is_some())
                .count()
                > 3
        );
        let keys = RegistryKeys::build(&reg);
        assert!(keys.people.is_some() && keys.permits.is_some() && keys.auxiliaries.is_some());
        let indexed = IndexedRegistry::new(Arc::new(reg.clone()));
        for index in [reg.index(), indexed.index()] {
            let reg = index.registry;
            let people: Vec<String> = reg.people.iter().map(|p| p.id.clone()).collect();
            for id in people.iter().map(String::as_str).chain(["P-none"]) {
                let scan = reg.people.iter().rev().find(|p| p.id == id);
                assert_eq!(
                    index.person(id).map(|p| p as *const _),
                    scan.map(|p| p as *const _)
                );
                let held: Vec<_> = reg.permits.iter().filter(|p| p.holder_id == id).collect();
                assert_eq!(index.permits_held_by(id), held, "{id}");
                let aux: Vec<_> = reg
                    .permits
                    .iter()
                    .filter(|p| p.auxiliaries.iter().any(|a| a.person_id == id))
                    .collect();
                assert_eq!(index.permits_with_auxiliary(id), aux, "{id}");
            }
            for p in &reg.people {
                let by_cpf = reg.people.iter().rev().find(|q| q.cpf == p.cpf);
                assert!(std::ptr::eq(
                    index.person_by_cpf(&p.cpf).unwrap(),
                    by_cpf.unwrap()
                ));
                let by_cnh = reg
                    .people
                    .iter()
                    .rev()
                    .find(|q| q.licence.number == p.licence.number);
                let found = index.person_by_cnh(&p.licence.number).unwrap();
                assert!(std::ptr::eq(found, by_cnh.unwrap()));
            }
            for permit in &reg.permits {
                let n = permit.number.as_str();
                assert!(std::ptr::eq(index.permit(n).unwrap(), permit));
                let plate = &index.vehicle(&permit.vehicle_id).unwrap().plate;
                let by_plate = reg.permits.iter().rev().find(|p| {
                    reg.vehicles
                        .iter()
                        .rev()
                        .find(|v| v.id == p.vehicle_id)
                        .is_some_and(|v| v.plate.canonical() == plate.canonical())
                });
                assert!(std::ptr::eq(
                    index.permit_by_plate(plate).unwrap(),
                    by_plate.unwrap()
                ));
                let penalties: Vec<_> = reg
                    .penalties
                    .iter()
                    .filter(|x| x.permit_number == n)
                    .collect();
                assert_eq!(index.penalties_of(n), penalties);
                let fines: Vec<_> = reg.fines.iter().filter(|f| f.permit_number == n).collect();
                assert_eq!(index.fines_of(n), fines);
                let here: Vec<_> = reg
                    .permits
                    .iter()
                    .filter(|p| p.stand_id == permit.stand_id)
                    .collect();
                assert_eq!(index.permits_at(&permit.stand_id), here);
            }
            for p in &reg.penalties {
                let Some(r) = p.record_id.as_deref() else {
                    continue;
                };
                let first = reg
                    .penalties
                    .iter()
                    .find(|q| q.record_id.as_deref() == Some(r));
                assert!(std::ptr::eq(
                    index.penalty_of_record(r).unwrap(),
                    first.unwrap()
                ));
            }
            for f in &reg.fines {
                let first = reg.fines.iter().find(|g| g.id == f.id).unwrap();
                assert!(std::ptr::eq(index.fine(&f.id).unwrap(), first));
            }
            let with_fines = reg.fines.first().unwrap().permit_number.clone();
            assert!(index.fines_of(&with_fines).len() > SCAN_MAX, "fines repeat");
            for s in &reg.stands {
                let scan = reg.stands.iter().rev().find(|t| t.id == s.id).unwrap();
                assert!(std::ptr::eq(index.stand(&s.id).unwrap(), scan));
            }
            assert!(index.permit("nenhum").is_none() && index.stand("nenhum").is_none());
            assert!(index.fines_of("nenhum").is_empty());
        }
    }

    #[test]
    fn stand_positions_are_checked_at_their_edges() {
        let at = |lat: Option<f64>, lon: Option<f64>| {
            let mut reg = sample_registry();
            reg.stands[0].latitude = lat;
            reg.stands[0].longitude = lon;
            reg.validate()
        };
        for (lat, lon) in [(90.0, 180.0), (-90.0, -180.0), (-22.7395, -47.3317)] {
            assert!(at(Some(lat), Some(lon)).is_ok(), "{lat} {lon}");
        }
        assert!(at(None, None).is_ok());
        for (lat, lon) in [
            (Some(90.000_001), Some(0.0)),
            (Some(0.0), Some(-180.000_001)),
            (Some(4.4e18), Some(0.0)),
            (Some(f64::NAN), Some(0.0)),
            (Some(0.0), None),
            (None, Some(0.0)),
        ] {
            let e = at(lat, lon).unwrap_err().to_string();
            assert!(e.contains("posição do ponto"), "{lat:?} {lon:?}: {e}");
        }
    }

    #[test]
    fn positions_survive_a_json_round_trip_exactly() {
        let mut reg = sample_registry();
        for (i, x) in [4.428_108_247_655_680_5e18, -22.739_482_938_472_9, 0.1 + 0.2]
            .into_iter()
            .enumerate()
        {
            reg.stands[i].latitude = Some(x);
            reg.stands[i].longitude = Some(-x / 2.0);
        }
        let text = serde_json::to_string(&reg).unwrap();
        let back: Registry = serde_json::from_str(&text).unwrap();
        for (a, b) in reg.stands.iter().zip(&back.stands) {
            assert_eq!(a.latitude.map(f64::to_bits), b.latitude.map(f64::to_bits));
            assert_eq!(a.longitude.map(f64::to_bits), b.longitude.map(f64::to_bits));
        }
    }

    /// Every key of every index answers what a map filled in registry order (the last row of
    /// a key wins) answers — what `RegistryIndex` was before it scanned or bisected — and an
    /// absent key answers nothing.
    fn assert_index_as_maps(reg: &Registry) {
        fn same<T>(got: Option<&T>, want: Option<&&T>, what: &str, key: &str) {
            match (got, want) {
                (Some(g), Some(w)) => assert!(std::ptr::eq(g, *w), "{what} {key}"),
                (None, None) => {}
                _ => panic!("{what} {key}: {} vs {}", got.is_some(), want.is_some()),
            }
        }
        let index = reg.index();
        let people: BTreeMap<&str, &Person> =
            reg.people.iter().map(|p| (p.id.as_str(), p)).collect();
        let by_cpf: BTreeMap<&str, &Person> =
            reg.people.iter().map(|p| (p.cpf.as_str(), p)).collect();
        let by_cnh: BTreeMap<&str, &Person> = reg
            .people
            .iter()
            .map(|p| (p.licence.number.as_str(), p))
            .collect();
        let vehicles: BTreeMap<&str, &Vehicle> =
            reg.vehicles.iter().map(|v| (v.id.as_str(), v)).collect();
        let stands: BTreeMap<&str, &Stand> =
            reg.stands.iter().map(|s| (s.id.as_str(), s)).collect();
        let permits: BTreeMap<&str, &Permit> =
            reg.permits.iter().map(|p| (p.number.as_str(), p)).collect();
        let by_plate: BTreeMap<&str, &Permit> = reg
            .permits
            .iter()
            .filter_map(|p| Some((vehicles.get(p.vehicle_id.as_str())?.plate.canonical(), p)))
            .collect();
        for p in &reg.people {
            same(index.person(&p.id), people.get(p.id.as_str()), "id", &p.id);
            let cpf = p.cpf.as_str();
            same(index.person_by_cpf(&p.cpf), by_cpf.get(cpf), "CPF", cpf);
            let cnh = p.licence.number.as_str();
            same(
                index.person_by_cnh(&p.licence.number),
                by_cnh.get(cnh),
                "CNH",
                cnh,
            );
        }
        for v in &reg.vehicles {
            same(
                index.vehicle(&v.id),
                vehicles.get(v.id.as_str()),
                "vehicle",
                &v.id,
            );
            let plate = v.plate.canonical();
            same(
                index.permit_by_plate(&v.plate),
                by_plate.get(plate),
                "plate",
                plate,
            );
        }
        for s in &reg.stands {
            same(
                index.stand(&s.id),
                stands.get(s.id.as_str()),
                "stand",
                &s.id,
            );
        }
        for p in &reg.permits {
            same(
                index.permit(&p.number),
                permits.get(p.number.as_str()),
                "permit",
                &p.number,
            );
        }
        assert!(index.person("nobody").is_none());
        assert!(index.person("").is_none());
        assert!(
            index
                .person_by_cpf(&Cpf::parse("52998224725").unwrap())
                .is_none()
        );
        assert!(
            index
                .person_by_cnh(&CnhNumber::parse("98765432100").unwrap())
                .is_none()
        );
        assert!(index.vehicle("V-none").is_none());
        assert!(index.stand("S-none").is_none());
        assert!(index.permit("99999-none").is_none());
        assert!(
            index
                .permit_by_plate(&Plate::parse("ZZZ9Z99").unwrap())
                .is_none()
        );
    }

    /// `n` permits, each with its holder and vehicle, spread over `n / 10 + 1` stands.
    fn registry_of(n: usize) -> Registry {
        let sample = sample_registry();
        let mut reg = Registry {
            stands: Vec::new(),
            ..Registry::default()
        };
        for s in 0..=n / 10 {
            let mut stand = sample.stands[0].clone();
            stand.id = format!("S{s:04}");
            reg.stands.push(stand);
        }
        for i in 0..n {
            let mut person = sample.people[0].clone();
            person.id = format!("P{i:05}");
            person.cpf = Cpf::parse(&format!("{:011}", 10_000_000_000u64 + i as u64 * 7)).unwrap();
            person.licence.number =
                CnhNumber::parse(&format!("{:011}", 20_000_000_000u64 + i as u64 * 3)).unwrap();
            let mut vehicle = sample.vehicles[0].clone();
            vehicle.id = format!("V{i:05}");
            let letter = |k: usize| char::from(b'A' + (k % 26) as u8);
            vehicle.plate = Plate::parse(&format!(
                "{}{}{}{}{}{:02}",
                letter(i / 2600),
                letter(i / 100),
                letter(i),
                i % 10,
                letter(i / 10),
                i % 100
            ))
            .unwrap();
            let mut permit = sample.permits[0].clone();
            permit.number = format!("{:05}", n - i);
            permit.holder_id = person.id.clone();
            permit.vehicle_id = vehicle.id.clone();
            permit.stand_id = format!("S{:04}", i / 10);
            permit.auxiliaries.clear();
            reg.people.push(person);
            reg.vehicles.push(vehicle);
            reg.permits.push(permit);
        }
        reg
    }

    /// Rows repeating keys already there (a registry `validate` would refuse): a person's id, a
    /// CPF, a CNH, a vehicle id, a stand id, a permit number and, through another vehicle with
    /// the same plate, a plate.
    fn with_repeats(mut reg: Registry) -> Registry {
        let mut p = reg.people[0].clone();
        p.name = "outra".into();
        reg.people.insert(1, p.clone());
        reg.people.push(p);
        let mut v = reg.vehicles[0].clone();
        v.colour = "Outra".into();
        reg.vehicles.push(v.clone());
        v.id = "V-same-plate".into();
        reg.vehicles.push(v);
        let mut s = reg.stands[0].clone();
        s.name = "outro".into();
        reg.stands.push(s);
        let mut permit = reg.permits[0].clone();
        permit.renewal_year += 1;
        reg.permits.push(permit.clone());
        permit.number = "same-plate".into();
        permit.vehicle_id = "V-same-plate".into();
        reg.permits.insert(0, permit.clone());
        reg.permits.push(permit);
        reg
    }

    fn scanned(index: &RegistryIndex<'_>) -> bool {
        index.keys.people.is_none()
    }

    /// A penalty or fine id twice is refused: the device store keys them by id, so the copy
    /// would vanish (found by the feed fuzz target).
    #[test]
    fn penalty_and_fine_ids_are_unique() {
        let mut reg = sample_registry();
        assert!(reg.validate().is_ok());
        let p = reg.penalties[0].clone();
        reg.penalties.push(p);
        let e = reg.validate().unwrap_err().to_string();
        assert!(e.contains("penalidade duplicada"), "{e}");
        let mut reg = sample_registry();
        let f = reg.fines[0].clone();
        reg.fines.push(f);
        let e = reg.validate().unwrap_err().to_string();
        assert!(e.contains("multa duplicada"), "{e}");
    }

    #[test]
    fn a_small_registry_is_scanned_and_answers_as_maps() {
        let reg = sample_registry();
        assert!(scanned(&reg.index()));
        assert_index_as_maps(&reg);
        assert_index_as_maps(&with_repeats(sample_registry()));
        assert_index_as_maps(&Registry::default());
        for n in [1, 2, 15, 16] {
            let reg = registry_of(n);
            assert!(scanned(&reg.index()), "{n}");
            assert_index_as_maps(&reg);
        }
    }

    #[test]
    fn a_large_registry_is_sorted_and_answers_as_maps() {
        for n in [17, 1_000] {
            let reg = registry_of(n);
            assert!(!scanned(&reg.index()), "{n}");
            assert!(reg.index().keys.permit_by_plate.is_some());
            assert_index_as_maps(&reg);
            assert_index_as_maps(&with_repeats(reg));
        }
    }

    #[test]
    fn observations_read_alike_in_ascii_and_in_unicode() {
        let licence = |o: &[&str]| DriverLicence {
            observations: o.iter().map(|s| (*s).to_owned()).collect(),
            ..sample_registry().people[0].licence.clone()
        };
        for (obs, ear, vedada) in [
            (&["EAR"][..], true, false),
            (&[" ear "], true, false),
            (&["15"], true, false),
            (&["a", "exerce atividade remunerada"], true, false),
            (&["Exerce Atividade Remunerada (EAR)"], true, false),
            (&["EARS"], false, false),
            (&["vedada atividade remunerada"], false, true),
            (&["VEDADA ATIVIDADE REMUNERADA; A"], false, true),
            (&["VEDADA  ATIVIDADE REMUNERADA"], false, false),
            (&["ÉAR"], false, false),
            (&["exerce atıvıdade remunerada"], true, false),
            (&["vedada atıvıdade remunerada"], false, true),
            (&[""], false, false),
            (&[], false, false),
        ] {
            let l = licence(obs);
            assert_eq!(l.has_ear(), ear, "{obs:?}");
            assert_eq!(l.forbids_paid_activity(), vedada, "{obs:?}");
            // The general definitions, by upper-casing.
            let up: Vec<String> = obs.iter().map(|o| o.to_uppercase()).collect();
            let ear_ref = up.iter().any(|o| {
                let o = o.trim();
                o == "EAR" || o == "15" || o.contains("EXERCE ATIVIDADE REMUNERADA")
            });
            assert_eq!(l.has_ear(), ear_ref, "{obs:?}");
            let vedada_ref = up.iter().any(|o| o.contains("VEDADA ATIVIDADE REMUNERADA"));
            assert_eq!(l.forbids_paid_activity(), vedada_ref, "{obs:?}");
        }
    }
}
