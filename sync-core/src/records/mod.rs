//! Field records as Automerge documents: one small document per record.
//!
//! An auto de infração (officer or inspector, arts. 31–32, 36) or a transgression report (stand
//! coordinator, art. 17) is written offline, often on several devices over days, and merged by
//! the server with the Automerge sync protocol. This module is pure: documents in, bytes out;
//! no SQL, no I/O, no clock except for event ids. The device store persists the bytes (`save`,
//! `save_incremental`); the server merges documents and vets every incoming change with `vet`.
//!
//! # Document layout (schema_version 1)
//!
//! ```text
//! ROOT (map)
//! ├─ schema_version  uint    1; `load` refuses newer layouts
//! ├─ id              str     UUID v7 of the record
//! ├─ kind            str     "infraction" | "transgression"
//! ├─ number          str     auto number; absent until assigned; written once
//! ├─ issuing_body    str     órgão autuador / coordenação do ponto
//! ├─ author          map     { user_id, role, device_id } of the officer or coordinator
//! ├─ occurred_at     timestamp  device clock, UTC, ms
//! ├─ monotonic       uint    device monotonic clock at the same moment
//! ├─ position        map?    { lat, lon, accuracy_m }
//! ├─ stand_id        str?
//! ├─ vehicle         map?    { plate_raw, plate }  as typed + canonical Mercosul
//! ├─ vehicle_confirmation str? JSON {user_id, device_id, at, plate}: the author confirmed
//! │                          that vehicle; written before issue, sealed with the evidence
//! ├─ driver          map     { person: "registry:P02" | "observed:<id>", role: DriverRole }
//! ├─ permit_number   str?    holder_id str?
//! ├─ charged         list<str>  person refs charged: driver, + holder for an auxiliary (R33)
//! ├─ gravity         str?    "light" | "serious" (transgressions)
//! ├─ facts           str     one scalar, not an Automerge Text
//! ├─ legal_basis     str     JSON [{rule_id, citation}]
//! ├─ verdict         str?    JSON of the device's `Verdict` (registry version and age inside)
//! ├─ signature       str?    JSON {state: signed, sha256} | {state: missing, reason}; set at issue
//! ├─ seal            str?    JSON `EvidenceSeal` {v, alg, public_key, device_id, evidence_sha256,
//! │                          signature, number?, photos, witnesses}; set at issue (module `seal`)
//! ├─ witnesses       list<map { person, statement, at, by }>   append-only
//! ├─ photos          list<str>  SHA-256 hex, append-only (files travel apart)
//! └─ events          list<map { id, kind, at, user_id, role, device_id, payload? }>
//! ```
//!
//! # Why this shape
//!
//! - **Personal data by reference.** People are `registry:<id>` or `observed:<id>`; names and
//!   documents of observed people live in the device store, outside the history, so they can be
//!   erased (ARCHITECTURE.md, Records). Witness statements are evidence and stay in the document.
//! - **Scalars for legal text.** `facts` is a plain string, not a character CRDT: two concurrent
//!   rewrites of a legal description must not interleave into a third text nobody wrote; they
//!   become a conflict (`RecordDoc::conflicts`) that the office resolves by choosing one.
//! - **Sealed evidence as one JSON string.** The verdict, legal basis, signature and vehicle
//!   confirmation are written whole and compared whole; they are never merged field by field.
//! - **Status is derived.** There is no status field. Events are inserted into a list (never a
//!   rewrite of it), so concurrent appends from a device and the office both survive a merge;
//!   replaying them in `(timestamp, id)` order through the state machine in `events` gives the
//!   same status on every copy, and an event the machine refuses is kept and flagged.
//! - **One actor per device.** Every change is written under the device's UUID bytes
//!   (`actor_for_device`), so the server can check a change's actor against the authenticated
//!   device; user and role are stamped into events and witnesses and checked by `vet`.
//!
//! # Flow
//!
//! 1. `RecordDoc::new_infraction` / `new_transgression` create a draft (role, registry scope
//!    and inputs checked); the author may `set_facts`, `set_legal_basis`, `set_verdict`,
//!    `add_witness`, `add_photo`, `assign_number` (a record may wait for a number: devices
//!    lease number blocks and may run out), and `confirm_vehicle`: the vehicle a lookup put in
//!    the record counts as identified only once its author confirms it, on the device that
//!    made the record.
//! 2. `issue` (an auto only with its vehicle confirmed) writes the signature (or why it is
//!    missing), the device's Ed25519 seal over the canonical evidence (module `seal`) and the
//!    `issued` event; evidence is sealed from then on (`RecordError::Sealed`). Witnesses and
//!    photos may still be *added* after issuing — late evidence is common and the lists are
//!    append-only, so nothing sealed changes — but nothing is ever removed.
//! 3. Coordinators `settle_by_coordinator` (light only) or `forward_to_office` (serious ones
//!    need a witness, art. 17 §2); the office appends review, penalty, ciência,
//!    reconsideration, appeal, annulment, archiving, duplicate and conflict-resolution events.
//! 4. Copies merge (`merge`, or the sync protocol through `automerge_mut`); `view` shows the
//!    merged record with status, flagged events and conflicts. The server vets each incoming
//!    batch with `vet(before, after, sender)` on a fork.
//! 5. What a record holds is bounded and checked by `check_record` (module `check`: the
//!    limits of `crate::limits`, a canonical plate, a sane position and time, a verdict that
//!    decodes, a known permit), after every write on the device and every incoming change on
//!    the server. Reading is bounded too: bytes over `MAX_RECORD_BYTES`, or inflating beyond
//!    `MAX_RECORD_INFLATED_BYTES` (`inflate`), are refused before loading, nesting beyond `MAX_DOCUMENT_DEPTH` before any recursive walk, and a panic of
//!    the document library on corrupt bytes becomes `Malformed` (`RecordDoc::load`).

mod check;
mod doc;
mod events;
mod inflate;
mod model;
mod read;
pub mod seal;
mod tree;
mod vet;

#[cfg(test)]
mod tests;

pub use check::{CheckContext, check_record};
pub(crate) use doc::{LIBRARY_PANIC, contain};
pub use doc::{RecordDoc, field_label_pt};
pub use events::{
    EventKind, EventView, InvalidEvent, NotificationMethod, OfficeNext, Outcome, Status,
    WarningKind, office_next, procedure_of, refusal_sentence, step_of,
};
pub(crate) use inflate::{check_inflated, check_inflated_parts};
pub use model::{
    Agent, ConflictValue, DriverRef, FieldConflict, Gravity, InfractionDraft, LegalBasis,
    ObservedPerson, PersonRef, Position, RecordKind, RecordMeta, RecordView, SCHEMA_VERSION,
    Signature, TransgressionDraft, UserRole, VehicleConfirmation, VehicleRef, Witness,
    WitnessInput, actor_for_device, device_of_actor,
};
pub use seal::{DeviceKey, EvidenceSeal, SealError, verify_seal};
pub use vet::{
    DRAFT_FIELDS, IMMUTABLE_FIELDS, RecordDiff, Violation, diff, sealed_changes,
    transgression_in_scope, vet,
};

/// Why a record operation was refused. Messages are in Portuguese: officers and coordinators
/// read them on the device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error(
        "{} está lacrado: o registro já foi emitido e a prova não pode ser alterada",
        doc::field_label_pt(.field)
    )]
    Sealed { field: &'static str },
    #[error("o registro já foi emitido")]
    AlreadyIssued,
    #[error("{role} não pode {action}")]
    RoleNotAllowed {
        role: &'static str,
        action: &'static str,
        /// The rule that gives the action to another role (cited by the apps).
        rule: crate::rules::RuleId,
    },
    #[error("só o autor do registro pode {action}")]
    NotAuthor { action: &'static str },
    #[error(
        "o alvará {permit} é do ponto {permit_stand}; o coordenador do ponto {coordinator_stand} só comunica transgressões dos condutores do próprio ponto (art. 17)"
    )]
    OutsideStand {
        permit: String,
        permit_stand: String,
        coordinator_stand: String,
    },
    #[error("alvará {permit} não encontrado no cadastro")]
    UnknownPermit { permit: String },
    #[error("{person} não é titular nem motorista auxiliar do alvará {permit}")]
    NotDriverOfPermit { person: String, permit: String },
    #[error(
        "confirme que o veículo de placa {plate} é o fiscalizado antes de emitir o auto: a identificação do veículo nunca vale sem a confirmação do agente"
    )]
    VehicleNotConfirmed { plate: String },
    #[error("transgressão grave exige ao menos uma testemunha (art. 17, § 2º)")]
    WitnessRequired,
    #[error(
        "só faltas leves podem ser resolvidas pelo coordenador (art. 17, § 1º); as graves vão à Unidade de Transportes"
    )]
    OnlyLightSettled,
    #[error("o registro já tem o número {number}")]
    NumberAlreadyAssigned { number: String },
    #[error("falta {field}")]
    MissingField { field: &'static str },
    #[error("{field} inválido: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("hash SHA-256 inválido: {input:?} (esperados 64 dígitos hexadecimais)")]
    InvalidHash { input: String },
    /// `reason` names the event already (the state machine's and the kernel's sentences do).
    #[error("{reason}")]
    EventRefused { event: &'static str, reason: String },
    #[error("não há conflito em {}", doc::field_label_pt(.field))]
    NoConflict { field: String },
    #[error("{what} excede o limite de {limit}")]
    TooLarge { what: &'static str, limit: String },
    #[error("registro ilegível ou corrompido: {reason}")]
    Malformed { reason: String },
    #[error("registro em formato mais novo (versão {version}); atualize o aplicativo")]
    UnsupportedSchema { version: u64 },
    #[error("registros diferentes: {ours} e {theirs}")]
    DifferentRecords { ours: String, theirs: String },
    #[error("erro interno do documento: {reason}")]
    Document { reason: String },
}
