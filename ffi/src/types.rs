//! The values that cross to Kotlin, Swift and Python: plain records and enums mirroring the
//! sync-core types the app reads, and the inputs it fills in.
//!
//! Conventions: instants are `SystemTime` (UTC; Kotlin `Instant`, Swift `Date`), calendar dates
//! `YYYY-MM-DD` strings (the law's days are local dates in America/Sao_Paulo), money a decimal
//! string, ids strings. Fields the app may leave out have defaults in the generated
//! constructors. Conversions from sync-core are `From` impls here; nothing is computed.
//! Numbers are signed (`i32`/`i64`: Kotlin has no comfortable unsigned types): sync-core's
//! unsigned ones saturate on the way out and are checked on the way in.

use std::time::SystemTime;

use chrono::{DateTime, NaiveDate, Utc};
use sync_core::client as sc_client;
use sync_core::domain as sc_domain;
use sync_core::field as sc_field;
use sync_core::records as sc_records;
use sync_core::rules as sc_rules;
use sync_core::store as sc_store;
use sync_core::sync as sc_sync;

use crate::error::{FiscalError, FiscalResult};

pub(crate) fn instant(t: DateTime<Utc>) -> SystemTime {
    SystemTime::from(t)
}

pub(crate) fn utc(t: SystemTime) -> DateTime<Utc> {
    DateTime::<Utc>::from(t)
}

fn day(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

// The app sees signed integers (Kotlin `Int`/`Long`, Swift `Int32`/`Int64`); sync-core counts
// with unsigned ones. Outputs saturate (the values are far below the limits); inputs that do
// not fit are refused with `InvalidInput` naming the field.

/// A sync-core count, size or version as the app's `Long`.
pub(crate) fn sat_i64<T: TryInto<i64>>(v: T) -> i64 {
    v.try_into().unwrap_or(i64::MAX)
}

/// A small sync-core number as the app's `Int`.
pub(crate) fn sat_i32<T: TryInto<i32>>(v: T) -> i32 {
    v.try_into().unwrap_or(i32::MAX)
}

/// An app's number as the unsigned type sync-core takes: negative or too big is refused.
pub(crate) fn non_negative<S, T>(field: &str, v: S) -> FiscalResult<T>
where
    S: Copy + std::fmt::Display + TryInto<T>,
    T: Bounded,
{
    v.try_into().map_err(|_| {
        FiscalError::invalid(field, format!("{field} {} (recebido {v}).", T::RANGE_PT))
    })
}

/// What an unsigned sync-core type accepts, for the refusal's text (Portuguese).
pub(crate) trait Bounded {
    const RANGE_PT: &'static str;
}

impl Bounded for u8 {
    const RANGE_PT: &'static str = "deve estar entre 0 e 255";
}

impl Bounded for u32 {
    const RANGE_PT: &'static str = "não pode ser negativo";
}

impl Bounded for u64 {
    const RANGE_PT: &'static str = "não pode ser negativo";
}

// ---------------------------------------------------------------------------- session

/// Network tunables of a session (defaults: those of the sync client, ADR 0010).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SessionOptions {
    /// Seconds to establish a connection.
    #[uniffi(default = 10)]
    pub connect_timeout_seconds: i32,
    /// Seconds a whole request may take (a large backlog on a slow link needs many).
    #[uniffi(default = 120)]
    pub request_timeout_seconds: i32,
    /// Attempts per request before the call fails as offline (retries back off 0.5 s → 30 s).
    #[uniffi(default = 6)]
    pub max_attempts: i32,
    /// A certificate authority to trust besides the public ones the library carries, as PEM
    /// text (`-----BEGIN CERTIFICATE-----` …): the city's private CA, when its server's
    /// certificate is not from a public one. A text with no certificate is refused by `open`.
    #[uniffi(default = None)]
    pub extra_ca_pem: Option<String>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            connect_timeout_seconds: 10,
            request_timeout_seconds: 120,
            max_attempts: 6,
            extra_ca_pem: None,
        }
    }
}

/// Who is logged in on this device, as the server answered.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LoginInfo {
    pub server_url: String,
    pub username: String,
    pub user_id: String,
    /// Server role: `officer`, `coordinator`, `office`, `admin`.
    pub role: String,
    /// The coordinator's stand (art. 17).
    pub stand_id: Option<String>,
    /// The device as registered on the server.
    pub server_device_id: String,
    /// The device's id in its records (UUID).
    pub device_id: String,
    /// Device clock: the access token is refreshed after this, the password asked after
    /// `refresh_valid_until`.
    pub access_valid_until: SystemTime,
    pub refresh_valid_until: SystemTime,
}

/// The device registration an enrolment code was exchanged for.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct EnrolInfo {
    pub server_url: String,
    /// The device as registered on the server: the next login uses it.
    pub server_device_id: String,
    /// The device's id in its records (UUID; the same).
    pub device_id: String,
    /// The one user who logs in on this device.
    pub user_id: String,
    pub username: String,
    /// Server role: `officer`, `coordinator`, `office`, `admin`.
    pub role: String,
}

impl From<sc_client::EnrolSummary> for EnrolInfo {
    fn from(s: sc_client::EnrolSummary) -> Self {
        Self {
            server_url: s.server_url,
            server_device_id: s.server_device_id,
            device_id: s.device_id.to_string(),
            user_id: s.user_id,
            username: s.username,
            role: s.role,
        }
    }
}

impl From<sc_client::LoginSummary> for LoginInfo {
    fn from(s: sc_client::LoginSummary) -> Self {
        Self {
            server_url: s.server_url,
            username: s.username,
            user_id: s.user_id,
            role: s.role,
            stand_id: s.stand_id,
            server_device_id: s.server_device_id,
            device_id: s.device_id.to_string(),
            access_valid_until: instant(s.access_valid_until),
            refresh_valid_until: instant(s.refresh_valid_until),
        }
    }
}

// ---------------------------------------------------------------------------- registry

/// The registry version an answer comes from and how old it was then (every verdict
/// says what the officer knew).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RegistryStamp {
    pub version: i64,
    /// When the device last refreshed its replica.
    pub refreshed_at: Option<SystemTime>,
    /// Seconds between the refresh and the question.
    pub age_seconds: Option<i64>,
}

impl From<sc_rules::RegistryStamp> for RegistryStamp {
    fn from(s: sc_rules::RegistryStamp) -> Self {
        Self {
            version: sat_i64(s.version),
            refreshed_at: s.refreshed_at.map(instant),
            age_seconds: s.age_seconds,
        }
    }
}

/// Legal state of a permit (alvará).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum PermitState {
    Active,
    /// Suspended on the days `from..=until` (local dates, inclusive).
    Suspended {
        from: String,
        until: String,
    },
    /// Revoked (cassado) on that date.
    Revoked {
        on: String,
    },
    /// Holder deceased, right passing to the heirs (art. 1 §4).
    InSuccession {
        since: String,
    },
}

impl From<sc_domain::PermitState> for PermitState {
    fn from(s: sc_domain::PermitState) -> Self {
        match s {
            sc_domain::PermitState::Active => Self::Active,
            sc_domain::PermitState::Suspended { from, until } => Self::Suspended {
                from: day(from),
                until: day(until),
            },
            sc_domain::PermitState::Revoked { on } => Self::Revoked { on: day(on) },
            sc_domain::PermitState::InSuccession { since } => {
                Self::InSuccession { since: day(since) }
            }
        }
    }
}

/// A holder, auxiliary driver or substitute, with the CNH data an officer compares.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PersonInfo {
    /// Registry id.
    pub id: String,
    pub name: String,
    /// 11 digits.
    pub cpf: String,
    pub birth_date: String,
    /// CNH "nº de registro".
    pub cnh_number: String,
    pub cnh_category: String,
    pub cnh_expiry: String,
    /// `P` (permissão) or `D` (definitive).
    pub cnh_kind: String,
    /// Observations printed on the CNH, e.g. `EAR`.
    pub cnh_observations: Vec<String>,
}

impl From<sc_domain::Person> for PersonInfo {
    fn from(p: sc_domain::Person) -> Self {
        Self {
            id: p.id,
            name: p.name,
            cpf: p.cpf.as_str().to_owned(),
            birth_date: day(p.birth_date),
            cnh_number: p.licence.number.as_str().to_owned(),
            cnh_category: p.licence.category,
            cnh_expiry: day(p.licence.expiry),
            cnh_kind: match p.licence.kind {
                sc_domain::LicenceKind::P => "P",
                sc_domain::LicenceKind::D => "D",
            }
            .to_owned(),
            cnh_observations: p.licence.observations,
        }
    }
}

/// The taxi as registered.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct VehicleInfo {
    pub id: String,
    /// Canonical (Mercosul) plate.
    pub plate: String,
    pub renavam: String,
    pub make_model: String,
    pub colour: String,
    pub year_of_manufacture: i32,
    pub doors: i32,
    pub capacity_incl_driver: i32,
    /// Last taximeter verification (INMETRO/IPEM), if any.
    pub taximeter_verified_on: Option<String>,
    pub taximeter_seal_intact: Option<bool>,
}

impl From<sc_domain::Vehicle> for VehicleInfo {
    fn from(v: sc_domain::Vehicle) -> Self {
        Self {
            id: v.id,
            plate: v.plate.canonical().to_owned(),
            renavam: v.renavam.as_str().to_owned(),
            make_model: v.make_model,
            colour: v.colour,
            year_of_manufacture: v.year_of_manufacture,
            doors: sat_i32(v.doors),
            capacity_incl_driver: sat_i32(v.capacity_incl_driver),
            taximeter_verified_on: v.taximeter.as_ref().map(|t| day(t.verified_on)),
            taximeter_seal_intact: v.taximeter.as_ref().map(|t| t.seal_intact),
        }
    }
}

/// A taxi stand (ponto).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct StandInfo {
    pub id: String,
    pub name: String,
    pub address: String,
    /// Mandatory hours (art. 16 I): `06-20` or `06-24`.
    pub schedule: String,
    pub radio_taxi: bool,
}

impl From<sc_domain::Stand> for StandInfo {
    fn from(s: sc_domain::Stand) -> Self {
        Self {
            id: s.id,
            name: s.name,
            address: s.address,
            schedule: match s.schedule {
                sc_domain::StandSchedule::Day => "06-20",
                sc_domain::StandSchedule::Extended => "06-24",
            }
            .to_owned(),
            radio_taxi: s.service == sc_domain::ServiceKind::RadioTaxi,
        }
    }
}

/// Art. 32 I–V.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum PenaltyKind {
    WrittenWarning,
    Fine,
    /// 15 (III) or 60 (IV) days.
    Suspension {
        days: i32,
    },
    Revocation,
}

impl From<sc_domain::PenaltyKind> for PenaltyKind {
    fn from(k: sc_domain::PenaltyKind) -> Self {
        match k {
            sc_domain::PenaltyKind::WrittenWarning => Self::WrittenWarning,
            sc_domain::PenaltyKind::Fine => Self::Fine,
            sc_domain::PenaltyKind::Suspension { days } => Self::Suspension {
                days: sat_i32(days),
            },
            sc_domain::PenaltyKind::Revocation => Self::Revocation,
        }
    }
}

/// A penalty in force on the day of the lookup.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PenaltyInfo {
    pub id: String,
    pub kind: PenaltyKind,
    pub decided_on: String,
    pub starts_on: String,
    /// Last day of a suspension (15 days from D cover D … D+14).
    pub last_day: Option<String>,
}

impl From<sc_domain::Penalty> for PenaltyInfo {
    fn from(p: sc_domain::Penalty) -> Self {
        Self {
            last_day: p.suspension_last_day().map(day),
            id: p.id,
            kind: p.kind.into(),
            decided_on: day(p.decided_on),
            starts_on: day(p.starts_on),
        }
    }
}

/// A fine not paid (art. 17 §2 III).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct FineInfo {
    pub id: String,
    /// Reais, e.g. `"797.02"`.
    pub amount: String,
    pub issued_on: String,
}

impl From<sc_domain::Fine> for FineInfo {
    fn from(f: sc_domain::Fine) -> Self {
        Self {
            id: f.id,
            amount: f.amount.to_string(),
            issued_on: day(f.issued_on),
        }
    }
}

/// A permit with everything an officer reads about it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PermitInfo {
    pub registry: RegistryStamp,
    pub permit_number: String,
    /// Canonical plate of the permit's vehicle.
    pub plate: String,
    pub state: PermitState,
    pub radio_taxi: bool,
    pub issued_on: String,
    /// Year the alvará was last renewed for (art. 7).
    pub renewal_year: i32,
    pub holder: PersonInfo,
    /// At most two (art. 8).
    pub auxiliaries: Vec<PersonInfo>,
    /// Art. 1 §3 substitute named on the permit, whatever the dates.
    pub illness_substitute: Option<PersonInfo>,
    pub vehicle: VehicleInfo,
    pub stand: StandInfo,
    pub penalties_in_force: Vec<PenaltyInfo>,
    pub unpaid_fines: Vec<FineInfo>,
}

impl From<sc_store::PermitView> for PermitInfo {
    fn from(v: sc_store::PermitView) -> Self {
        Self {
            registry: v.registry.into(),
            permit_number: v.permit.number,
            plate: v.plate,
            state: v.permit.state.into(),
            radio_taxi: v.permit.service == sc_domain::ServiceKind::RadioTaxi,
            issued_on: day(v.permit.issued_on),
            renewal_year: v.permit.renewal_year,
            holder: v.holder.into(),
            auxiliaries: v.auxiliaries.into_iter().map(Into::into).collect(),
            illness_substitute: v.illness_substitute.map(Into::into),
            vehicle: v.vehicle.into(),
            stand: v.stand.into(),
            penalties_in_force: v.penalties_in_force.into_iter().map(Into::into).collect(),
            unpaid_fines: v.unpaid_fines.into_iter().map(Into::into).collect(),
        }
    }
}

/// A person and the permits they are on (as holder, auxiliary or substitute).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PersonPermits {
    pub registry: RegistryStamp,
    pub person: PersonInfo,
    pub permits: Vec<PermitInfo>,
}

impl From<sc_store::PersonPermits> for PersonPermits {
    fn from(p: sc_store::PersonPermits) -> Self {
        Self {
            registry: p.registry.into(),
            person: p.person.into(),
            permits: p.permits.into_iter().map(Into::into).collect(),
        }
    }
}

// ---------------------------------------------------------------------------- checks

/// What the officer looks the taxi up by.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum VehicleQuery {
    /// Any spelling: `ABC-1234`, `ABC1234`, `ABC1C34`.
    Plate { plate: String },
    /// Permit number (prontuário).
    Permit { number: String },
}

/// What the officer sees on the spot. A rule whose observation was not made does not fire.
#[derive(Debug, Clone, Default, PartialEq, Eq, uniffi::Record)]
pub struct Observation {
    /// Stand where the taxi was found (id), if at one.
    #[uniffi(default = None)]
    pub at_stand: Option<String>,
    /// Parked or waiting (not in motion, no passenger): R24 needs it.
    #[uniffi(default = false)]
    pub idle: bool,
    /// Doors counted (R17).
    #[uniffi(default = None)]
    pub doors: Option<i32>,
    /// Illuminated roof sign present (R19).
    #[uniffi(default = None)]
    pub roof_sign_present: Option<bool>,
    /// Taximeter seal intact as seen now (R02).
    #[uniffi(default = None)]
    pub meter_seal_intact: Option<bool>,
}

impl TryFrom<Observation> for sc_rules::Observation {
    type Error = FiscalError;

    fn try_from(o: Observation) -> FiscalResult<Self> {
        Ok(Self {
            at_stand: o.at_stand.filter(|s| !s.trim().is_empty()),
            idle: o.idle,
            doors: o.doors.map(|d| non_negative("doors", d)).transpose()?,
            roof_sign_present: o.roof_sign_present,
            meter_seal_intact: o.meter_seal_intact,
        })
    }
}

/// A field check: may this person drive this taxi now, and are driver, vehicle and permit in
/// order (art. 8 and the rest of the catalogue)?
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct CheckRequest {
    pub vehicle: VehicleQuery,
    /// CPF or CNH number of the person at the wheel (`cpf:`/`cnh:` prefix to disambiguate).
    pub driver: String,
    /// Instant of the check; default now.
    #[uniffi(default = None)]
    pub at: Option<SystemTime>,
    #[uniffi(default = None)]
    pub observation: Option<Observation>,
}

/// Overall result of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Overall {
    Regular,
    Warning,
    Irregular,
}

impl From<sc_rules::Overall> for Overall {
    fn from(o: sc_rules::Overall) -> Self {
        match o {
            sc_rules::Overall::Regular => Self::Regular,
            sc_rules::Overall::Warning => Self::Warning,
            sc_rules::Overall::Irregular => Self::Irregular,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Severity {
    Info,
    Warning,
    Irregular,
}

impl From<sc_rules::Severity> for Severity {
    fn from(s: sc_rules::Severity) -> Self {
        match s {
            sc_rules::Severity::Info => Self::Info,
            sc_rules::Severity::Warning => Self::Warning,
            sc_rules::Severity::Irregular => Self::Irregular,
        }
    }
}

/// What the law attaches to a finding (the office decides; the engine only names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Consequence {
    None,
    RecordIrregularity,
    InfractionNotice,
    RevokePermit,
    RevokeAuxiliaryLicence,
    VehicleMayNotOperate,
    RenewalBlocked,
    ReferToTrafficAuthority,
    OfficeReview,
    OfficeRefusal,
}

impl From<sc_rules::Consequence> for Consequence {
    fn from(c: sc_rules::Consequence) -> Self {
        use sc_rules::Consequence as C;
        match c {
            C::None => Self::None,
            C::RecordIrregularity => Self::RecordIrregularity,
            C::InfractionNotice => Self::InfractionNotice,
            C::RevokePermit => Self::RevokePermit,
            C::RevokeAuxiliaryLicence => Self::RevokeAuxiliaryLicence,
            C::VehicleMayNotOperate => Self::VehicleMayNotOperate,
            C::RenewalBlocked => Self::RenewalBlocked,
            C::ReferToTrafficAuthority => Self::ReferToTrafficAuthority,
            C::OfficeReview => Self::OfficeReview,
            C::OfficeRefusal => Self::OfficeRefusal,
        }
    }
}

/// The driver's relation to the permit (art. 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum DriverRole {
    Holder,
    Auxiliary,
    /// Art. 1 §3 (holder ill).
    IllnessSubstitute,
    /// Registered auxiliary of *another* permit (art. 8 §3).
    AuxiliaryOfAnotherPermit,
    HolderOfAnotherPermit,
    /// Anyone else (art. 8 §4).
    Unauthorised,
}

impl From<sc_domain::DriverRole> for DriverRole {
    fn from(r: sc_domain::DriverRole) -> Self {
        use sc_domain::DriverRole as R;
        match r {
            R::Holder => Self::Holder,
            R::Auxiliary => Self::Auxiliary,
            R::IllnessSubstitute => Self::IllnessSubstitute,
            R::AuxiliaryOfAnotherPermit => Self::AuxiliaryOfAnotherPermit,
            R::HolderOfAnotherPermit => Self::HolderOfAnotherPermit,
            R::Unauthorised => Self::Unauthorised,
        }
    }
}

/// One reason in a verdict, always citing its rule and article.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Finding {
    /// `R01`–`R44`, `D01`–`D04`.
    pub rule_id: String,
    /// E.g. `Lei 4.019/2004, art. 8, § 4`.
    pub citation: String,
    /// False when the cited provision was amended and its text in force is unknown.
    pub wording_verified: bool,
    pub severity: Severity,
    pub consequence: Consequence,
    /// What the officer reads (Portuguese).
    pub message: String,
}

impl From<sc_rules::Finding> for Finding {
    fn from(f: sc_rules::Finding) -> Self {
        Self {
            rule_id: f.rule_id.to_string(),
            citation: f.citation,
            wording_verified: f.wording_verified,
            severity: f.severity.into(),
            consequence: f.consequence.into(),
            message: f.message,
        }
    }
}

/// The answer to a field check.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct Verdict {
    pub overall: Overall,
    pub checked_at: SystemTime,
    /// The same instant in America/Sao_Paulo, for people.
    pub checked_at_local: String,
    pub permit_number: Option<String>,
    /// Canonical plate of the vehicle checked.
    pub plate: Option<String>,
    /// Registry id of the driver, if the registry knows them.
    pub driver_person_id: Option<String>,
    pub driver_role: Option<DriverRole>,
    /// Registry version used and its age at the check.
    pub registry: RegistryStamp,
    pub findings: Vec<Finding>,
}

impl From<sc_rules::Verdict> for Verdict {
    fn from(v: sc_rules::Verdict) -> Self {
        Self {
            overall: v.overall.into(),
            checked_at: instant(v.checked_at),
            checked_at_local: v.checked_at_local,
            permit_number: v.permit_number,
            plate: v.plate,
            driver_person_id: v.driver_person_id,
            driver_role: v.driver_role.map(Into::into),
            registry: v.registry.into(),
            findings: v.findings.into_iter().map(Into::into).collect(),
        }
    }
}

// ---------------------------------------------------------------------------- record inputs

/// GPS position when the record was made.
#[derive(Debug, Clone, Copy, PartialEq, uniffi::Record)]
pub struct Position {
    pub lat: f64,
    pub lon: f64,
    /// Horizontal accuracy, metres.
    pub accuracy_m: f64,
}

impl From<Position> for sc_records::Position {
    fn from(p: Position) -> Self {
        Self {
            lat: p.lat,
            lon: p.lon,
            accuracy_m: p.accuracy_m,
        }
    }
}

impl From<sc_records::Position> for Position {
    fn from(p: sc_records::Position) -> Self {
        Self {
            lat: p.lat,
            lon: p.lon,
            accuracy_m: p.accuracy_m,
        }
    }
}

/// A witness typed on the spot. Name and document stay on the device (erasable), apart from
/// the record; the statement is evidence and goes into it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct WitnessInput {
    pub name: String,
    pub statement: String,
    /// CPF, if the witness gave it.
    #[uniffi(default = None)]
    pub cpf: Option<String>,
}

/// The offender's signature on the record, or why there is none (issuing seals the evidence).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum SignatureInput {
    /// The captured signature image: stored and uploaded like a photo, its SHA-256 in the
    /// record.
    Signed { image: Vec<u8> },
    /// E.g. "recusou-se a assinar", "condutor ausente".
    Missing { reason: String },
}

/// Gravity of a coordinator's report (art. 17 §§1–2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Gravity {
    /// The coordinator may settle it with a warning (§1).
    Light,
    /// In writing, with a witness, to the Unidade de Transportes (§2).
    Serious,
}

impl From<Gravity> for sc_records::Gravity {
    fn from(g: Gravity) -> Self {
        match g {
            Gravity::Light => Self::Light,
            Gravity::Serious => Self::Serious,
        }
    }
}

impl From<sc_records::Gravity> for Gravity {
    fn from(g: sc_records::Gravity) -> Self {
        match g {
            sc_records::Gravity::Light => Self::Light,
            sc_records::Gravity::Serious => Self::Serious,
        }
    }
}

/// A coordinator's warning (art. 17 §2 I–II).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum WarningKind {
    Verbal,
    Written,
}

impl From<WarningKind> for sc_records::WarningKind {
    fn from(w: WarningKind) -> Self {
        match w {
            WarningKind::Verbal => Self::Verbal,
            WarningKind::Written => Self::Written,
        }
    }
}

/// What a coordinator does right after issuing a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum CoordinatorStep {
    /// A light fault settled with a warning (art. 17 §1).
    Settle { warning: WarningKind },
    /// Sent to the Unidade de Transportes (art. 17 §2).
    Forward,
}

/// An auto de infração: the check runs on the device and its verdict is sealed into the
/// record with the legal basis of its irregular findings.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct InfractionInput {
    pub vehicle: VehicleQuery,
    /// CPF or CNH of the person at the wheel.
    pub driver: String,
    /// Name of a driver the registry does not know (kept on the device, not in the record).
    #[uniffi(default = None)]
    pub driver_name: Option<String>,
    /// Instant of the facts; default now.
    #[uniffi(default = None)]
    pub at: Option<SystemTime>,
    /// The device's monotonic clock in ms at the same moment (Android
    /// `SystemClock.elapsedRealtime()`, iOS `systemUptime × 1000`): shows a changed wall clock.
    #[uniffi(default = None)]
    pub monotonic_ms: Option<i64>,
    #[uniffi(default = None)]
    pub observation: Option<Observation>,
    #[uniffi(default = None)]
    pub position: Option<Position>,
    /// Description of the facts; default: the irregular findings' messages.
    #[uniffi(default = None)]
    pub facts: Option<String>,
    /// Further legal basis by rule id of the catalogue (e.g. `R31`).
    #[uniffi(default = [])]
    pub extra_rules: Vec<String>,
    #[uniffi(default = [])]
    pub witnesses: Vec<WitnessInput>,
    /// Photos taken at the scene (bytes, e.g. JPEG).
    #[uniffi(default = [])]
    pub photos: Vec<Vec<u8>>,
    /// The officer confirmed, on the screen showing the lookup, that the vehicle found (by
    /// plate, or the permit's vehicle) is the one inspected: recorded in the auto. Without it
    /// (default) confirm later with `confirm_vehicle`; an auto is not issued unconfirmed.
    #[uniffi(default = false)]
    pub confirm_vehicle: bool,
    /// Issue at once (evidence sealed; needs `confirm_vehicle`); `None` keeps a draft to
    /// complete with `issue_record`.
    #[uniffi(default = None)]
    pub issue: Option<SignatureInput>,
}

/// A coordinator's transgression report about a driver of their own stand (art. 17).
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct TransgressionInput {
    pub vehicle: VehicleQuery,
    /// CPF or CNH of the driver (holder or auxiliary of that permit).
    pub driver: String,
    pub gravity: Gravity,
    pub facts: String,
    /// Legal basis by rule id of the catalogue.
    #[uniffi(default = [])]
    pub rules: Vec<String>,
    #[uniffi(default = None)]
    pub at: Option<SystemTime>,
    #[uniffi(default = None)]
    pub monotonic_ms: Option<i64>,
    #[uniffi(default = None)]
    pub position: Option<Position>,
    /// A serious report needs at least one (art. 17 §2).
    #[uniffi(default = [])]
    pub witnesses: Vec<WitnessInput>,
    #[uniffi(default = [])]
    pub photos: Vec<Vec<u8>>,
    #[uniffi(default = None)]
    pub issue: Option<SignatureInput>,
    /// Settle or forward right after issuing (requires `issue`).
    #[uniffi(default = None)]
    pub then: Option<CoordinatorStep>,
}

// ---------------------------------------------------------------------------- records

#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum RecordKind {
    /// Auto de infração (arts. 31–32, 36).
    Infraction,
    /// Comunicação de transgressão (art. 17).
    Transgression,
}

impl From<sc_records::RecordKind> for RecordKind {
    fn from(k: sc_records::RecordKind) -> Self {
        match k {
            sc_records::RecordKind::Infraction => Self::Infraction,
            sc_records::RecordKind::Transgression => Self::Transgression,
        }
    }
}

/// Status of a record, derived from its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum RecordStatus {
    Draft,
    Issued,
    SettledByCoordinator,
    ForwardedToOffice,
    UnderReview,
    PenaltyProposed,
    PenaltyDecided,
    Notified,
    ReconsiderationFiled,
    ReconsiderationDecided,
    AppealFiled,
    AppealDecided,
    Annulled,
    Archived,
    MergedAsDuplicate,
}

impl From<sc_records::Status> for RecordStatus {
    fn from(s: sc_records::Status) -> Self {
        use sc_records::Status as S;
        match s {
            S::Draft => Self::Draft,
            S::Issued => Self::Issued,
            S::SettledByCoordinator => Self::SettledByCoordinator,
            S::ForwardedToOffice => Self::ForwardedToOffice,
            S::UnderReview => Self::UnderReview,
            S::PenaltyProposed => Self::PenaltyProposed,
            S::PenaltyDecided => Self::PenaltyDecided,
            S::Notified => Self::Notified,
            S::ReconsiderationFiled => Self::ReconsiderationFiled,
            S::ReconsiderationDecided => Self::ReconsiderationDecided,
            S::AppealFiled => Self::AppealFiled,
            S::AppealDecided => Self::AppealDecided,
            S::Annulled => Self::Annulled,
            S::Archived => Self::Archived,
            S::MergedAsDuplicate => Self::MergedAsDuplicate,
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SavedRecord {
    pub id: String,
    pub kind: RecordKind,
    /// Auto number from the device's leased blocks; `None` while waiting for one.
    pub number: Option<i64>,
    /// Saved without a number (none left); it gets one after the next sync.
    pub waiting_for_number: bool,
    pub status: RecordStatus,
    /// Portuguese label of the status.
    pub status_label: String,
    /// Issued: the evidence can no longer change.
    pub sealed: bool,
}

impl From<sc_field::RecordOutcome> for SavedRecord {
    fn from(o: sc_field::RecordOutcome) -> Self {
        Self {
            number: o
                .number
                .or_else(|| o.view.number.as_deref().and_then(|n| n.parse().ok()))
                .map(sat_i64),
            id: o.id,
            kind: o.kind.into(),
            waiting_for_number: o.waiting_for_number,
            status: o.status.into(),
            status_label: o.status.label_pt().to_owned(),
            sealed: o.view.sealed,
        }
    }
}

/// A photo stored with a record.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct AttachedPhoto {
    /// SHA-256 (hex) taken at capture: the photo's name everywhere.
    pub sha256: String,
    pub size: i64,
    pub record: SavedRecord,
}

/// A record as listed (no facts, statements or other personal data).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RecordListItem {
    pub id: String,
    pub kind: RecordKind,
    pub number: Option<String>,
    pub waiting_for_number: bool,
    pub status: RecordStatus,
    pub status_label: String,
    pub sealed: bool,
    pub occurred_at: Option<SystemTime>,
    pub plate: Option<String>,
    pub permit_number: Option<String>,
    pub stand_id: Option<String>,
    pub photos: i32,
    pub witnesses: i32,
    pub created_at: SystemTime,
    pub updated_at: SystemTime,
}

/// One legal basis of a record.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct LegalBasis {
    pub rule_id: String,
    pub citation: String,
}

impl From<sc_records::LegalBasis> for LegalBasis {
    fn from(b: sc_records::LegalBasis) -> Self {
        Self {
            rule_id: b.rule_id,
            citation: b.citation,
        }
    }
}

/// The signature on the record.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum SignatureInfo {
    Signed { sha256: String },
    Missing { reason: String },
}

impl From<sc_records::Signature> for SignatureInfo {
    fn from(s: sc_records::Signature) -> Self {
        match s {
            sc_records::Signature::Signed { sha256 } => Self::Signed { sha256 },
            sc_records::Signature::Missing { reason } => Self::Missing { reason },
        }
    }
}

/// The officer's confirmation of the record's vehicle: who, on which device, when, which plate.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct VehicleConfirmationInfo {
    pub user_id: String,
    pub device_id: String,
    pub at: SystemTime,
    /// Canonical plate confirmed.
    pub plate: String,
}

/// Where a printed record goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum PrintFormat {
    /// Bluetooth thermal printer, 58 mm paper (ESC/POS, two copies).
    EscPos58,
    /// Bluetooth thermal printer, 80 mm paper (ESC/POS, two copies).
    EscPos80,
    /// A4 PDF, for sharing or a desk printer.
    Pdf,
    /// PDF the size of a receipt (80 mm wide).
    PdfReceipt,
}

impl From<PrintFormat> for sync_core::print::Format {
    fn from(f: PrintFormat) -> Self {
        match f {
            PrintFormat::EscPos58 => Self::EscPos58,
            PrintFormat::EscPos80 => Self::EscPos80,
            PrintFormat::Pdf => Self::PdfA4,
            PrintFormat::PdfReceipt => Self::PdfReceipt,
        }
    }
}

/// Someone a record names: a registry person by id, or someone typed on the spot whose data
/// the device keeps apart (`name`, `cpf`, `cnh` are `None` once erased, or for other devices'
/// records).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PersonRef {
    pub registry_id: Option<String>,
    pub observed_id: Option<String>,
    pub name: Option<String>,
    pub cpf: Option<String>,
    pub cnh: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct WitnessInfo {
    pub person: PersonRef,
    pub statement: String,
    pub added_at: SystemTime,
    pub added_by: String,
}

/// The state of a stored photo, re-hashed now.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Enum)]
pub enum PhotoState {
    Intact,
    /// The bytes changed since capture.
    Tampered {
        actual_sha256: String,
    },
    /// Not on this device (e.g. a record received from the server).
    Missing,
}

impl From<sc_store::PhotoStatus> for PhotoState {
    fn from(s: sc_store::PhotoStatus) -> Self {
        match s {
            sc_store::PhotoStatus::Intact => Self::Intact,
            sc_store::PhotoStatus::Tampered { actual } => Self::Tampered {
                actual_sha256: actual,
            },
            sc_store::PhotoStatus::Missing => Self::Missing,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PhotoInfo {
    pub sha256: String,
    pub state: PhotoState,
}

/// One event of the record's history, in replay order.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct EventInfo {
    pub id: String,
    pub at: SystemTime,
    pub by_user_id: String,
    /// E.g. `issued`, `settled_by_coordinator`, `penalty_decided`.
    pub kind: String,
    /// Portuguese, e.g. "emissão".
    pub label: String,
    /// False when the state machine refused it (kept, never lost).
    pub valid: bool,
}

/// A field with concurrent values after a merge, shown side by side until the office
/// resolves it.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct ConflictInfo {
    /// Path in the document, e.g. `facts`.
    pub field: String,
    /// Each value as JSON text.
    pub values: Vec<String>,
}

/// Everything a record says, for its screen.
#[derive(Debug, Clone, PartialEq, uniffi::Record)]
pub struct RecordDetails {
    pub id: String,
    pub kind: RecordKind,
    pub number: Option<String>,
    pub waiting_for_number: bool,
    pub status: RecordStatus,
    pub status_label: String,
    pub sealed: bool,
    pub issuing_body: String,
    pub author_user_id: String,
    pub occurred_at: SystemTime,
    pub position: Option<Position>,
    pub stand_id: Option<String>,
    /// Canonical plate, and as typed.
    pub plate: Option<String>,
    pub plate_raw: Option<String>,
    /// The officer's confirmation of that vehicle (`None`: not confirmed).
    pub vehicle_confirmation: Option<VehicleConfirmationInfo>,
    pub driver: PersonRef,
    pub driver_role: DriverRole,
    pub permit_number: Option<String>,
    pub holder_id: Option<String>,
    pub gravity: Option<Gravity>,
    pub facts: String,
    pub legal_basis: Vec<LegalBasis>,
    /// The verdict sealed into the record (autos).
    pub verdict: Option<Verdict>,
    pub signature: Option<SignatureInfo>,
    pub witnesses: Vec<WitnessInfo>,
    pub photos: Vec<PhotoInfo>,
    pub photos_intact: bool,
    pub penalty: Option<PenaltyKind>,
    pub notified_on: Option<String>,
    pub events: Vec<EventInfo>,
    pub conflicts: Vec<ConflictInfo>,
}

// ---------------------------------------------------------------------------- sync

/// The steps of a sync, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum SyncStep {
    /// Access token still good, else refreshed.
    Session,
    /// Auto numbers leased when fewer than 100 are left.
    Numbers,
    /// Records sent and received.
    Records,
    /// Photos uploaded.
    Photos,
    /// Registry replica brought up to date.
    Registry,
}

impl From<sc_client::Step> for SyncStep {
    fn from(s: sc_client::Step) -> Self {
        match s {
            sc_client::Step::Session => Self::Session,
            sc_client::Step::Numbers => Self::Numbers,
            sc_client::Step::Records => Self::Records,
            sc_client::Step::Photos => Self::Photos,
            sc_client::Step::Registry => Self::Registry,
        }
    }
}

/// Where a sync is, for a progress bar: handed to `SyncListener.on_progress` as each step
/// starts, after each exchange of records, after each photo, and once when the sync ends.
///
/// A `*_total` of 0 means nothing to do or not known (yet): show an indeterminate bar. Counts
/// never go down; `records_total` is corrected as each exchange is prepared (a record saved
/// during the sync goes with it). When a sync ran whole, the last value has every `*_done`
/// equal to its `*_total`. The step's own fraction: `photo_bytes_done / photo_bytes_total` in
/// the photos step (photos differ in size), `records_done / records_total` in the records
/// step; the other steps are a request or two (indeterminate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Record)]
pub struct SyncProgress {
    /// The step running (in the value sent at the end: the last one begun).
    pub step: SyncStep,
    /// `step`'s position, 1-based, of `step_count` (5).
    pub step_index: i32,
    pub step_count: i32,
    /// Records sent (whole or as changes) and answered by the server, of those to send.
    pub records_done: i64,
    pub records_total: i64,
    /// Photos dealt with — uploaded, already on the server, or refused (see
    /// `SyncReport.photo_problems`) — of those the server lacked as the step started.
    pub photos_done: i64,
    pub photos_total: i64,
    /// The same photos' sizes in bytes.
    pub photo_bytes_done: i64,
    pub photo_bytes_total: i64,
    /// Bytes on the wire since the sync started, every step and retry included (compressed
    /// bodies); at the end, `SyncReport.bytes_up` / `bytes_down`.
    pub bytes_sent: i64,
    pub bytes_received: i64,
}

impl From<sc_client::Progress> for SyncProgress {
    fn from(p: sc_client::Progress) -> Self {
        Self {
            step: p.step.into(),
            step_index: sat_i32(p.step_index),
            step_count: sat_i32(p.step_count),
            records_done: sat_i64(p.records_done),
            records_total: sat_i64(p.records_total),
            photos_done: sat_i64(p.photos_done),
            photos_total: sat_i64(p.photos_total),
            photo_bytes_done: sat_i64(p.photo_bytes_done),
            photo_bytes_total: sat_i64(p.photo_bytes_total),
            bytes_sent: sat_i64(p.bytes_sent),
            bytes_received: sat_i64(p.bytes_received),
        }
    }
}

/// Why the server refused a record's changes; the record is reset to the server's version and
/// the refused changes kept on the device as evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum RejectionCode {
    Malformed,
    ForeignActor,
    /// Sealed evidence edited.
    SealedField,
    RoleForbidden,
    AuthorMismatch,
    /// A coordinator writing about another stand (art. 17).
    OutsideStand,
    InvalidEvent,
    NotVisible,
    /// Over a limit of what one record may hold (its size, a text, a list).
    TooLarge,
    /// Evidence that fails the recording checks (plate, position, time, verdict, permit).
    InvalidField,
    /// An auto number outside the blocks leased to this device.
    NumberNotLeased,
    /// An auto number another record already holds.
    NumberTaken,
    /// Issued without a valid seal of this device's registered key (log in again with the
    /// password if the app was reinstalled).
    SealInvalid,
}

impl From<sc_sync::RejectionCode> for RejectionCode {
    fn from(c: sc_sync::RejectionCode) -> Self {
        use sc_sync::RejectionCode as C;
        match c {
            C::Malformed => Self::Malformed,
            C::ForeignActor => Self::ForeignActor,
            C::SealedField => Self::SealedField,
            C::RoleForbidden => Self::RoleForbidden,
            C::AuthorMismatch => Self::AuthorMismatch,
            C::OutsideStand => Self::OutsideStand,
            C::InvalidEvent => Self::InvalidEvent,
            C::NotVisible => Self::NotVisible,
            C::TooLarge => Self::TooLarge,
            C::InvalidField => Self::InvalidField,
            C::NumberNotLeased => Self::NumberNotLeased,
            C::NumberTaken => Self::NumberTaken,
            C::SealInvalid => Self::SealInvalid,
        }
    }
}

/// A record the officer should hear about after a sync.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RecordRejection {
    pub record_id: String,
    pub code: RejectionCode,
    /// Portuguese, ready to show.
    pub reason: String,
}

/// A step the server refused (the other steps still ran).
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SyncProblem {
    pub step: SyncStep,
    pub reason: String,
}

/// A photo the server did not accept.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct PhotoProblem {
    pub sha256: String,
    pub reason: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum RegistryUpdateMode {
    /// It was current.
    Current,
    /// A batch of changes.
    Changes,
    /// The whole registry (new device, or too far behind).
    Snapshot,
}

/// What a registry pull did.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct RegistryUpdate {
    pub mode: RegistryUpdateMode,
    pub from_version: Option<i64>,
    pub version: i64,
    /// Changes applied, or entities in the snapshot.
    pub rows: i64,
    /// Bytes received (compressed).
    pub bytes: i64,
}

impl From<sc_client::RegistryPull> for RegistryUpdate {
    fn from(p: sc_client::RegistryPull) -> Self {
        Self {
            mode: match p.mode {
                sc_client::RegistryMode::Current => RegistryUpdateMode::Current,
                sc_client::RegistryMode::Changes => RegistryUpdateMode::Changes,
                sc_client::RegistryMode::Snapshot => RegistryUpdateMode::Snapshot,
            },
            from_version: p.from_version.map(sat_i64),
            version: sat_i64(p.version),
            rows: sat_i64(p.rows),
            bytes: sat_i64(p.bytes),
        }
    }
}

/// A block of auto numbers leased during a sync.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct NumberBlock {
    pub start: i64,
    pub end: i64,
    /// Records that were waiting and got a number from it.
    pub numbered: i64,
    pub numbers_left: i64,
}

/// What the app shows about sync.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SyncStatus {
    /// Records with changes the server has not acknowledged.
    pub pending_records: i64,
    pub pending_photos: i64,
    pub pending_photo_bytes: i64,
    pub records_waiting_for_number: i64,
    pub numbers_left: i64,
    /// Refused changes kept on this device as evidence.
    pub quarantined_changes: i64,
    pub last_attempt_at: Option<SystemTime>,
    /// Last sync whose every step succeeded.
    pub last_success_at: Option<SystemTime>,
    /// Last error (Portuguese), cleared by the next whole success.
    pub last_error: Option<String>,
    pub last_error_at: Option<SystemTime>,
    pub registry_version: Option<i64>,
    pub registry_refreshed_at: Option<SystemTime>,
    pub registry_age_seconds: Option<i64>,
    /// `None`: log in first.
    pub logged_in_as: Option<String>,
    pub server_url: Option<String>,
}

impl From<sc_store::SyncStatus> for SyncStatus {
    fn from(s: sc_store::SyncStatus) -> Self {
        Self {
            pending_records: sat_i64(s.pending_records),
            pending_photos: sat_i64(s.pending_photos),
            pending_photo_bytes: sat_i64(s.pending_photo_bytes),
            records_waiting_for_number: sat_i64(s.records_waiting_for_number),
            numbers_left: sat_i64(s.numbers_left),
            quarantined_changes: sat_i64(s.quarantined_changes),
            last_attempt_at: s.last_attempt_at.map(instant),
            last_success_at: s.last_success_at.map(instant),
            last_error: s.last_error,
            last_error_at: s.last_error_at.map(instant),
            registry_version: s.registry_version.map(sat_i64),
            registry_refreshed_at: s.registry_refreshed_at.map(instant),
            registry_age_seconds: s.registry_age_seconds,
            logged_in_as: s.logged_in_as,
            server_url: s.server_url,
        }
    }
}

/// What one sync did. A sync that was stopped (offline, login needed, cancelled, device
/// storage) raises the matching `FiscalError` instead; steps the server refused are in
/// `problems` and the other steps still ran.
#[derive(Debug, Clone, PartialEq, Eq, uniffi::Record)]
pub struct SyncReport {
    /// Every step succeeded.
    pub ok: bool,
    pub problems: Vec<SyncProblem>,
    pub numbers: Option<NumberBlock>,
    /// Records sent (whole or as changes), acknowledged, received from the server, refused.
    pub records_sent: i64,
    pub records_acknowledged: i64,
    pub records_received: i64,
    pub records_rejected: i64,
    pub rejections: Vec<RecordRejection>,
    /// Records whose local copy changed: screens showing them reload.
    pub changed_records: Vec<String>,
    pub photos_uploaded: i64,
    pub photo_bytes_uploaded: i64,
    pub photos_already_on_server: i64,
    pub photo_problems: Vec<PhotoProblem>,
    pub registry: Option<RegistryUpdate>,
    /// HTTP requests (retries included) and bytes on the wire.
    pub requests: i64,
    pub retries: i64,
    pub bytes_up: i64,
    pub bytes_down: i64,
    pub duration_ms: i64,
    /// The status after this sync.
    pub status: SyncStatus,
}

impl From<sc_client::SyncSummary> for SyncReport {
    fn from(s: sc_client::SyncSummary) -> Self {
        let records = s.records.unwrap_or_default();
        let photos = s.photos.unwrap_or_default();
        Self {
            ok: s.ok,
            problems: s
                .errors
                .into_iter()
                .map(|e| SyncProblem {
                    step: e.step.into(),
                    reason: e.message,
                })
                .collect(),
            numbers: s.numbers.map(|n| NumberBlock {
                start: sat_i64(n.start),
                end: sat_i64(n.end),
                numbered: sat_i64(n.numbered.len()),
                numbers_left: sat_i64(n.numbers_left),
            }),
            records_sent: sat_i64(records.sent_new + records.sent_changes),
            records_acknowledged: sat_i64(records.acked),
            records_received: sat_i64(records.received),
            records_rejected: sat_i64(records.rejected),
            rejections: records
                .issues
                .into_iter()
                .map(|i| RecordRejection {
                    record_id: i.record_id,
                    code: i.code.into(),
                    reason: i.message,
                })
                .collect(),
            changed_records: records.changed,
            photos_uploaded: sat_i64(photos.uploaded),
            photo_bytes_uploaded: sat_i64(photos.uploaded_bytes),
            photos_already_on_server: sat_i64(photos.already_on_server),
            photo_problems: photos
                .issues
                .into_iter()
                .map(|i| PhotoProblem {
                    sha256: i.hash,
                    reason: i.message,
                })
                .collect(),
            registry: s.registry.map(Into::into),
            requests: sat_i64(s.wire.requests),
            retries: sat_i64(s.wire.retries),
            bytes_up: sat_i64(s.wire.bytes_up),
            bytes_down: sat_i64(s.wire.bytes_down),
            duration_ms: sat_i64(s.ms),
            status: s.status.into(),
        }
    }
}

// ---------------------------------------------------------------------------- record views

/// `status` as the store's row spells it (the same snake_case as the documents).
pub(crate) fn parse_status(s: &str) -> Option<RecordStatus> {
    serde_json::from_value::<sc_records::Status>(serde_json::Value::String(s.to_owned()))
        .ok()
        .map(Into::into)
}

fn status_label(s: &str) -> String {
    serde_json::from_value::<sc_records::Status>(serde_json::Value::String(s.to_owned()))
        .map(|s| s.label_pt().to_owned())
        .unwrap_or_else(|_| s.to_owned())
}

/// A listed record, from the store's row and its summary (the projection `RecordView::summary`
/// writes with every change); `None` when the row does not decode.
pub(crate) fn list_item(s: sc_store::RecordSummary) -> Option<RecordListItem> {
    let summary = &s.summary;
    let text = |key: &str| summary.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let count = |key: &str| {
        summary
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .map_or(0, sat_i32)
    };
    Some(RecordListItem {
        kind: sc_records::RecordKind::parse(&s.kind)?.into(),
        status: parse_status(&s.status)?,
        status_label: status_label(&s.status),
        number: text("number").or_else(|| s.number.map(|n| n.to_string())),
        waiting_for_number: s.waiting_for_number,
        sealed: summary
            .get("sealed")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
        occurred_at: text("occurred_at")
            .and_then(|t| DateTime::parse_from_rfc3339(&t).ok())
            .map(|t| instant(t.with_timezone(&Utc))),
        plate: text("plate"),
        permit_number: text("permit_number"),
        stand_id: text("stand_id"),
        photos: count("photos"),
        witnesses: count("witnesses"),
        created_at: instant(s.created_at),
        updated_at: instant(s.updated_at),
        id: s.id,
    })
}

fn person_ref(
    r: &sc_records::PersonRef,
    observed: &std::collections::BTreeMap<String, sc_store::ObservedPerson>,
) -> PersonRef {
    match r {
        sc_records::PersonRef::Registry(id) => PersonRef {
            registry_id: Some(id.clone()),
            observed_id: None,
            name: None,
            cpf: None,
            cnh: None,
        },
        sc_records::PersonRef::Observed(id) => {
            let p = observed.get(id);
            PersonRef {
                registry_id: None,
                observed_id: Some(id.clone()),
                name: p.and_then(|p| p.name.clone()),
                cpf: p.and_then(|p| p.cpf.clone()),
                cnh: p.and_then(|p| p.cnh.clone()),
            }
        }
    }
}

/// One record for its screen; `Err` with the record layer's reason when its sealed verdict
/// does not decode.
pub(crate) fn record_details(
    d: sc_field::RecordDetails,
) -> Result<RecordDetails, sc_records::RecordError> {
    let verdict = d.view.verdict()?.map(Into::into);
    let v = d.view;
    let observed = &d.observed_people;
    Ok(RecordDetails {
        id: v.id.to_string(),
        kind: v.kind.into(),
        number: v.number.clone(),
        waiting_for_number: d.record.waiting_for_number,
        status: v.status.into(),
        status_label: v.status.label_pt().to_owned(),
        sealed: v.sealed,
        issuing_body: v.issuing_body.clone(),
        author_user_id: v.author.user_id.clone(),
        occurred_at: instant(v.occurred_at),
        position: v.position.map(Into::into),
        stand_id: v.stand_id.clone(),
        plate: v.vehicle.as_ref().map(|x| x.plate.clone()),
        plate_raw: v.vehicle.as_ref().map(|x| x.plate_raw.clone()),
        vehicle_confirmation: v
            .vehicle_confirmation
            .as_ref()
            .map(|c| VehicleConfirmationInfo {
                user_id: c.user_id.clone(),
                device_id: c.device_id.to_string(),
                at: instant(c.at),
                plate: c.plate.clone(),
            }),
        driver: person_ref(&v.driver.person, observed),
        driver_role: v.driver.role.into(),
        permit_number: v.permit_number.clone(),
        holder_id: v.holder_id.clone(),
        gravity: v.gravity.map(Into::into),
        facts: v.facts.clone(),
        legal_basis: v.legal_basis.iter().cloned().map(Into::into).collect(),
        verdict,
        signature: v.signature.clone().map(Into::into),
        witnesses: v
            .witnesses
            .iter()
            .map(|w| WitnessInfo {
                person: person_ref(&w.person, observed),
                statement: w.statement.clone(),
                added_at: instant(w.added_at),
                added_by: w.added_by.clone(),
            })
            .collect(),
        photos: d
            .photos
            .into_iter()
            .map(|p| PhotoInfo {
                sha256: p.hash,
                state: p.status.into(),
            })
            .collect(),
        photos_intact: d.photos_intact,
        penalty: v.penalty.map(Into::into),
        notified_on: v.notified_on.map(day),
        events: v
            .events
            .iter()
            .map(|e| EventInfo {
                id: e.id.clone(),
                at: instant(e.at),
                by_user_id: e.by.user_id.clone(),
                kind: e.event.name().to_owned(),
                label: e.event.label_pt().to_owned(),
                valid: e.valid,
            })
            .collect(),
        conflicts: v
            .conflicts
            .iter()
            .map(|c| ConflictInfo {
                field: c.field.clone(),
                values: c.values.iter().map(|x| x.value.to_string()).collect(),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_saturate_instead_of_wrapping() {
        assert_eq!(sat_i64(u64::MAX), i64::MAX);
        assert_eq!(sat_i64(42_u64), 42);
        assert_eq!(sat_i64(usize::MAX), i64::MAX);
        assert_eq!(sat_i32(u32::MAX), i32::MAX);
        assert_eq!(sat_i32(4_u8), 4);
    }

    #[test]
    fn doors_out_of_range_are_refused_naming_the_field() {
        for doors in [-1, 256] {
            let e = sc_rules::Observation::try_from(Observation {
                doors: Some(doors),
                ..Default::default()
            })
            .unwrap_err();
            assert!(
                matches!(&e, FiscalError::InvalidInput { field, reason }
                    if field == "doors" && reason.contains("entre 0 e 255")),
                "{e:?}"
            );
        }
        let o = sc_rules::Observation::try_from(Observation {
            doors: Some(4),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(o.doors, Some(4));
    }
}
