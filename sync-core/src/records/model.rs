//! Plain data of a field record: who acts, what is referenced, what the office reads.
//!
//! These types are what callers build records from (`InfractionDraft`, `TransgressionDraft`)
//! and what `RecordDoc::view` returns (`RecordView`). They carry no Automerge types, so the
//! app, the server and the JSON Schemas see one stable shape.

use automerge::ActorId;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::RecordError;
use super::events::{EventView, InvalidEvent, Status};
use crate::domain::{DriverRole, PenaltyKind, PermitNumber, PersonId, Plate, StandId};
use crate::rules::{Finding, Verdict};

/// Version of the document layout written by this code. `RecordDoc::load` refuses newer ones:
/// an old app must not rewrite a document whose fields it does not know.
pub const SCHEMA_VERSION: u64 = 1;

/// Roles of the people who write records (ARCHITECTURE.md, Server: officer, coordinator, office, admin).
/// The officer role is split by body because art. 36 names exactly two bodies that may inspect
/// (R35); an auto from anyone else is refused.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum UserRole {
    /// Officer of the Guarda Municipal de Americana (art. 36).
    GuardaMunicipal,
    /// Inspector of the Secretaria de Transportes e Sistema Viário (art. 36).
    SecretariaInspector,
    /// Coordinator of one stand (art. 17).
    Coordinator,
    /// Unidade de Transportes (central office).
    Office,
    /// System administrator: manages users and devices, writes no record.
    Admin,
}

impl UserRole {
    /// True for the two roles art. 36 allows to inspect and issue autos de infração.
    pub fn is_inspector(self) -> bool {
        matches!(self, Self::GuardaMunicipal | Self::SecretariaInspector)
    }

    /// The spelling stored in documents (same as serde).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::GuardaMunicipal => "guarda_municipal",
            Self::SecretariaInspector => "secretaria_inspector",
            Self::Coordinator => "coordinator",
            Self::Office => "office",
            Self::Admin => "admin",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::GuardaMunicipal,
            Self::SecretariaInspector,
            Self::Coordinator,
            Self::Office,
            Self::Admin,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }

    /// What users read.
    pub fn label_pt(self) -> &'static str {
        match self {
            Self::GuardaMunicipal => "agente da Guarda Municipal",
            Self::SecretariaInspector => "fiscal da Secretaria de Transportes",
            Self::Coordinator => "coordenador de ponto",
            Self::Office => "Unidade de Transportes",
            Self::Admin => "administrador",
        }
    }
}

/// Who makes a change: a user, in a role, on a device. Every mutating call takes one, writes
/// its Automerge changes under the device's actor id, and stamps events and witnesses with the
/// user and role, so the server can check each claim against the authenticated sender.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Agent {
    pub user_id: String,
    pub role: UserRole,
    /// Registered device; its 16 bytes are the Automerge actor id (see `actor_for_device`).
    #[schemars(with = "String")]
    pub device_id: Uuid,
}

impl Agent {
    pub fn new(user_id: impl Into<String>, role: UserRole, device_id: Uuid) -> Self {
        Self {
            user_id: user_id.into(),
            role,
            device_id,
        }
    }

    /// The Automerge actor id of this agent's device.
    pub fn actor_id(&self) -> ActorId {
        actor_for_device(&self.device_id)
    }
}

/// The actor id of a device: exactly the 16 bytes of its UUID. One actor per device (not per
/// session) keeps documents small and lets the server bind an incoming change to a registered
/// device by reading its actor. It is safe because a device edits a record through one store
/// that persists every change before it is synced: a device never reuses a sequence number.
pub fn actor_for_device(device_id: &Uuid) -> ActorId {
    ActorId::from(device_id.as_bytes())
}

/// The device behind an actor id written by `actor_for_device`; `None` for any other actor.
pub fn device_of_actor(actor: &ActorId) -> Option<Uuid> {
    Uuid::from_slice(actor.to_bytes()).ok()
}

/// The two kinds of field record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// Auto de infração by an officer or inspector (arts. 31–32, 36).
    Infraction,
    /// Comunicação de transgressão by a stand coordinator (art. 17).
    Transgression,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Infraction => "infraction",
            Self::Transgression => "transgression",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "infraction" => Some(Self::Infraction),
            "transgression" => Some(Self::Transgression),
            _ => None,
        }
    }

    /// Whether a user in `role` may create a record of this kind: autos only by the bodies of
    /// art. 36 (R35), transgression reports only by coordinators (art. 17).
    pub fn may_be_created_by(self, role: UserRole) -> bool {
        match self {
            Self::Infraction => role.is_inspector(),
            Self::Transgression => role == UserRole::Coordinator,
        }
    }

    pub fn label_pt(self) -> &'static str {
        match self {
            Self::Infraction => "auto de infração",
            Self::Transgression => "comunicação de transgressão",
        }
    }
}

/// A person referenced by a record. Records never copy personal data (ARCHITECTURE.md, Records): a
/// registry person is named by registry id; anyone else (a third party at the wheel, a
/// passenger witness) is an "observed person" whose name and documents the device store keeps
/// apart, under this id, so they can be erased without rewriting Automerge history.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "source", content = "id", rename_all = "snake_case")]
pub enum PersonRef {
    Registry(PersonId),
    Observed(String),
}

impl PersonRef {
    /// Stored form: `registry:P01` or `observed:<id>`.
    pub fn encode(&self) -> String {
        match self {
            Self::Registry(id) => format!("registry:{id}"),
            Self::Observed(id) => format!("observed:{id}"),
        }
    }

    pub fn decode(s: &str) -> Option<Self> {
        if let Some(id) = s.strip_prefix("registry:") {
            (!id.is_empty()).then(|| Self::Registry(id.to_owned()))
        } else if let Some(id) = s.strip_prefix("observed:") {
            (!id.is_empty()).then(|| Self::Observed(id.to_owned()))
        } else {
            None
        }
    }

    pub(crate) fn validate(&self) -> Result<(), RecordError> {
        let id = match self {
            Self::Registry(id) | Self::Observed(id) => id,
        };
        if id.trim().is_empty() || id.chars().any(char::is_control) {
            return Err(RecordError::Invalid {
                field: "pessoa",
                reason: format!("identificação vazia ou inválida: {id:?}"),
            });
        }
        Ok(())
    }
}

/// GPS position when the record was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Position {
    pub lat: f64,
    pub lon: f64,
    /// Horizontal accuracy reported by the device, metres.
    pub accuracy_m: f64,
}

impl Position {
    pub(crate) fn validate(&self) -> Result<(), RecordError> {
        let ok = self.lat.is_finite()
            && self.lon.is_finite()
            && self.accuracy_m.is_finite()
            && (-90.0..=90.0).contains(&self.lat)
            && (-180.0..=180.0).contains(&self.lon)
            && self.accuracy_m >= 0.0;
        if ok {
            Ok(())
        } else {
            Err(RecordError::Invalid {
                field: "posição",
                reason: format!(
                    "coordenadas fora do intervalo: {} {} ±{} m",
                    self.lat, self.lon, self.accuracy_m
                ),
            })
        }
    }
}

/// The vehicle as the officer typed its plate, and the canonical form (docs/law/reference.md, Plates).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VehicleRef {
    pub plate_raw: String,
    pub plate: String,
}

impl From<&Plate> for VehicleRef {
    fn from(p: &Plate) -> Self {
        Self {
            plate_raw: p.raw().to_owned(),
            plate: p.canonical().to_owned(),
        }
    }
}

/// The officer's confirmation that the vehicle the record names is the one inspected.
///
/// A lookup (by plate, or the permit's vehicle found by permit number) fills the record's
/// vehicle; it counts as identified only once the author says so on the device that made the
/// record (`RecordDoc::confirm_vehicle`). The confirmation names the canonical plate it
/// confirmed, so it stands for that vehicle only: a record whose vehicle is another one is not
/// confirmed (`RecordView::vehicle_confirmed`), and `check_record` refuses such a pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VehicleConfirmation {
    /// The author, who confirmed.
    pub user_id: String,
    /// The device the record was made on, where the confirmation was given.
    #[schemars(with = "String")]
    pub device_id: Uuid,
    pub at: DateTime<Utc>,
    /// Canonical plate confirmed.
    pub plate: String,
}

/// The person at the wheel and their relation to the permit (art. 8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DriverRef {
    pub person: PersonRef,
    pub role: DriverRole,
}

/// One legal basis of the record: a rule of the catalogue and its citation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LegalBasis {
    pub rule_id: String,
    /// E.g. `Lei 4.019/2004, art. 8, § 4`.
    pub citation: String,
}

impl LegalBasis {
    /// A catalogue rule with the catalogue's own citation.
    pub fn of(rule: crate::rules::RuleId) -> Self {
        Self {
            rule_id: rule.to_string(),
            citation: crate::rules::spec(rule).citation(),
        }
    }

    /// The legal basis of every finding that grounds a record (irregular or a notice).
    pub fn from_findings(findings: &[Finding]) -> Vec<Self> {
        findings
            .iter()
            .filter(|f| f.severity == crate::rules::Severity::Irregular)
            .map(|f| Self {
                rule_id: f.rule_id.as_str().to_owned(),
                citation: f.citation.clone(),
            })
            .collect()
    }
}

/// A witness as given on the spot (art. 17 §2 requires them for serious reports).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WitnessInput {
    pub person: PersonRef,
    pub statement: String,
}

/// A witness in a record, with who added it and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Witness {
    pub person: PersonRef,
    pub statement: String,
    pub added_at: DateTime<Utc>,
    /// User id of whoever added it.
    pub added_by: String,
}

/// The offender's signature on the auto, or why it is missing (docs/law/reference.md, What an auto de infração contains).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Signature {
    /// SHA-256 (hex) of the captured signature image, uploaded apart like a photo.
    Signed { sha256: String },
    /// E.g. "recusou-se a assinar", "condutor ausente".
    Missing { reason: String },
}

/// Gravity of a coordinator's transgression report (art. 17 §§1–2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gravity {
    /// "Faltas de natureza leve": the coordinator may settle it (§1).
    Light,
    /// Reported in writing, with witnesses, to the Unidade (§2).
    Serious,
}

impl Gravity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Light => "light",
            Self::Serious => "serious",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "light" => Some(Self::Light),
            "serious" => Some(Self::Serious),
            _ => None,
        }
    }
}

/// What an officer fills in for an auto de infração (docs/law/reference.md, What an auto de infração contains). Officer, device and issuing
/// user come from the `Agent` passed alongside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InfractionDraft {
    /// UUID v7, made on the device (`Uuid::now_v7()`).
    #[schemars(with = "String")]
    pub id: Uuid,
    /// Auto number, if the device still has numbers in its leased block; else assigned later.
    pub number: Option<String>,
    /// Órgão autuador, e.g. `RulesConfig::issuing_body` or "Guarda Municipal de Americana".
    pub issuing_body: String,
    /// Device clock (UTC) at the moment of the facts.
    pub occurred_at: DateTime<Utc>,
    /// Monotonic clock reading of the device at the same moment (detects clock changes).
    pub monotonic: u64,
    pub position: Option<Position>,
    pub stand_id: Option<StandId>,
    pub plate: Plate,
    pub driver: PersonRef,
    pub driver_role: DriverRole,
    pub permit_number: Option<PermitNumber>,
    /// Holder of the permit; required when the driver is an auxiliary (art. 32 §2).
    pub holder_id: Option<PersonId>,
    pub facts: String,
    pub legal_basis: Vec<LegalBasis>,
    /// The verdict the device computed; stored as sealed JSON.
    pub verdict: Option<Verdict>,
    #[serde(default)]
    pub witnesses: Vec<WitnessInput>,
    /// SHA-256 hex of photos taken at capture.
    #[serde(default)]
    pub photos: Vec<String>,
}

/// What a coordinator fills in for a transgression report (art. 17). Stand, holder, plate and
/// the driver's role come from the registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TransgressionDraft {
    #[schemars(with = "String")]
    pub id: Uuid,
    pub occurred_at: DateTime<Utc>,
    pub monotonic: u64,
    pub position: Option<Position>,
    /// Permit of the driver; its stand must be the coordinator's.
    pub permit_number: PermitNumber,
    /// Registry id of the driver (holder or auxiliary of that permit).
    pub driver_id: PersonId,
    pub gravity: Gravity,
    pub facts: String,
    #[serde(default)]
    pub legal_basis: Vec<LegalBasis>,
    #[serde(default)]
    pub witnesses: Vec<WitnessInput>,
    #[serde(default)]
    pub photos: Vec<String>,
}

/// One of the values of a field edited concurrently, and which device wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConflictValue {
    /// The value; JSON-encoded fields (`legal_basis`, `verdict`, `signature`) are shown decoded.
    pub value: serde_json::Value,
    /// Automerge actor (hex) that wrote it.
    pub actor: String,
    /// The device behind the actor, when it is a device actor.
    #[schemars(with = "Option<String>")]
    pub device_id: Option<Uuid>,
}

/// A field with more than one current value after a merge. The office picks one
/// (`RecordDoc::resolve_conflict`), and that choice is an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FieldConflict {
    /// Path in the document, e.g. `facts`, `number`, `witnesses[0].statement`.
    pub field: String,
    pub values: Vec<ConflictValue>,
}

/// Everything a record says, with its status derived from the events. The scalar fields hold
/// the value Automerge picks deterministically when there is a conflict; `conflicts` lists all.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordView {
    pub schema_version: u64,
    #[schemars(with = "String")]
    pub id: Uuid,
    pub kind: RecordKind,
    pub number: Option<String>,
    pub issuing_body: String,
    /// The officer or coordinator who made the record.
    pub author: Agent,
    pub occurred_at: DateTime<Utc>,
    pub monotonic: u64,
    pub position: Option<Position>,
    pub stand_id: Option<StandId>,
    pub vehicle: Option<VehicleRef>,
    /// The author's confirmation of the vehicle (`None`: not confirmed; an auto is not issued
    /// without it).
    #[serde(default)]
    pub vehicle_confirmation: Option<VehicleConfirmation>,
    pub driver: DriverRef,
    pub permit_number: Option<PermitNumber>,
    pub holder_id: Option<PersonId>,
    /// Everyone the record charges: the driver and, for an auxiliary, the holder too (R33).
    pub charged: Vec<PersonRef>,
    /// Transgression reports only.
    pub gravity: Option<Gravity>,
    pub facts: String,
    pub legal_basis: Vec<LegalBasis>,
    /// The device's verdict, byte-exact JSON as sealed (see `RecordView::verdict`).
    pub verdict: Option<String>,
    pub signature: Option<Signature>,
    /// The device's seal over the evidence, written at issue (`None`: a draft, or a record
    /// issued by an app before device keys).
    pub seal: Option<super::seal::EvidenceSeal>,
    pub witnesses: Vec<Witness>,
    pub photos: Vec<String>,
    /// True once an `issued` event exists — even one the state machine flagged (sealing errs on
    /// the side of the evidence): from then on the evidence may not change.
    pub sealed: bool,
    pub status: Status,
    /// The penalty in force after decisions, reconsideration and appeal, if any.
    pub penalty: Option<PenaltyKind>,
    /// Date of the last ciência (starts the art. 35 deadline).
    pub notified_on: Option<chrono::NaiveDate>,
    /// Last day to appeal from the last ciência (art. 35, R34: 10 days, rolled to a business
    /// day); an appeal dated later is refused by the state machine.
    pub appeal_deadline: Option<chrono::NaiveDate>,
    /// The office's latest classification (`classified` event); `None`: the author's
    /// `legal_basis` stands.
    pub classification: Option<Vec<LegalBasis>>,
    /// When merged as a duplicate: the record it was merged into.
    pub duplicate_of: Option<String>,
    /// Every well-formed event, in replay order (timestamp, then id), valid or not.
    pub events: Vec<EventView>,
    /// Events the state machine refused (and malformed ones), with the reason: kept, never lost.
    pub invalid_events: Vec<InvalidEvent>,
    pub conflicts: Vec<FieldConflict>,
}

impl RecordView {
    /// A small projection for lists and the store's row: ids, plate, status and counts; no
    /// facts, statements or other personal data.
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "id": self.id,
            "kind": self.kind,
            "number": self.number,
            "status": self.status,
            "sealed": self.sealed,
            "occurred_at": self.occurred_at,
            "author_user_id": self.author.user_id,
            "author_role": self.author.role,
            "plate": self.vehicle.as_ref().map(|v| v.plate.as_str()),
            "permit_number": self.permit_number,
            "stand_id": self.stand_id,
            "gravity": self.gravity,
            "photos": self.photos.len(),
            "witnesses": self.witnesses.len(),
            "invalid_events": self.invalid_events.len(),
            "conflicts": self.conflicts.len(),
        })
    }

    /// True when the author confirmed the vehicle the record names now (same canonical plate).
    pub fn vehicle_confirmed(&self) -> bool {
        match (&self.vehicle, &self.vehicle_confirmation) {
            (Some(v), Some(c)) => v.plate == c.plate,
            _ => false,
        }
    }

    /// The sealed verdict, decoded.
    pub fn verdict(&self) -> Result<Option<Verdict>, RecordError> {
        self.verdict
            .as_deref()
            .map(|s| {
                serde_json::from_str(s).map_err(|e| RecordError::Malformed {
                    reason: format!("veredito: {e}"),
                })
            })
            .transpose()
    }
}

/// Who a record charges (R33): the driver, when they hold an alvará that Lei 4.019 reaches
/// (holder, auxiliary of this or another permit, holder of another permit), and the holder of
/// the permit whenever the driver is not the holder (art. 31 targets the permissionário; art.
/// 32 §2 adds the holder to an auxiliary's infraction). A driver with no alvará (third party,
/// art. 1 §3 substitute) is recorded but not charged under this law.
pub(crate) fn charged_people(
    driver: &PersonRef,
    role: DriverRole,
    holder_id: Option<&str>,
) -> Result<Vec<PersonRef>, RecordError> {
    let mut out = Vec::new();
    let driver_charged = matches!(
        role,
        DriverRole::Holder
            | DriverRole::Auxiliary
            | DriverRole::AuxiliaryOfAnotherPermit
            | DriverRole::HolderOfAnotherPermit
    );
    if driver_charged {
        out.push(driver.clone());
    }
    match (role, holder_id) {
        (DriverRole::Holder, _) => {}
        (_, Some(h)) => {
            let holder = PersonRef::Registry(h.to_owned());
            if !out.contains(&holder) {
                out.push(holder);
            }
        }
        (DriverRole::Auxiliary, None) => {
            return Err(RecordError::MissingField {
                field: "titular do alvará (art. 32, § 2º: o titular responde junto com o auxiliar)",
            });
        }
        (_, None) => {}
    }
    Ok(out)
}

/// Lower-case 64-hex SHA-256, as photos are addressed (ARCHITECTURE.md, Records).
pub(crate) fn normalise_sha256(input: &str) -> Result<String, RecordError> {
    let s = input.trim().to_ascii_lowercase();
    if s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(s)
    } else {
        Err(RecordError::InvalidHash {
            input: input.to_owned(),
        })
    }
}

/// What the records layer says about a record on each write: the row a list shows, kept by the
/// device store beside the document and computed by the sync protocol when a record arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordMeta {
    /// Derived status, e.g. `issued`.
    pub status: String,
    /// Small JSON projection for lists (plate, permit number, officer …); no personal data.
    pub summary: serde_json::Value,
    /// Automerge heads after this write (opaque to the store).
    pub heads: Vec<u8>,
    /// Instant of the write; also `created_at` on the first one.
    pub at: DateTime<Utc>,
}

/// Personal data of a driver who is not in the registry (typed by the officer): kept by
/// the device store apart from the record, and sent to the server beside it by the sync.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ObservedPerson {
    pub name: Option<String>,
    pub cpf: Option<String>,
    pub cnh: Option<String>,
    /// Anything else, as a JSON object.
    pub details: serde_json::Value,
}
