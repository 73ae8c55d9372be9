//! What changed between two states of a record, and whether the sender was allowed to change it.
//!
//! The server applies incoming changes to a fork (`RecordDoc::fork`), views the record before
//! and after, and calls `vet`. These functions are pure over two `RecordView`s, so the device
//! can run the same checks on its own edits and tests can run them without a server.
//!
//! Fields fall in four groups:
//! - **immutable** (`IMMUTABLE_FIELDS`): written when the record is created, never again —
//!   identity, author, time and monotonic reading, position, stand, vehicle, driver, permit,
//!   holder, the people charged, gravity, issuing body;
//! - **draft** (`DRAFT_FIELDS`): facts, legal basis, verdict, signature, the vehicle
//!   confirmation and the device's seal, edited by the author until the record is issued, sealed
//!   from then on (the confirmation, moreover, only from the device the record was made on, in
//!   the sender's name; the seal is checked by the server's vetting, `sync::vetting`, with the
//!   sender's registered keys);
//! - **write-once**: the number;
//! - **append-only**: witnesses, photos and events; entries may be added (by whom, see `vet`)
//!   but never removed or altered.
//!
//! A field "changes" when the set of its current values (the winner plus any concurrent ones,
//! see `FieldConflict`) gains a value it did not have. So a merge that brings a concurrent value
//! into a sealed field is caught even when Automerge happens to keep the old winner, while the
//! office's resolution of a conflict — which narrows the set to one of its values — is not an
//! alteration of evidence (it must come with a `conflict_resolved` event by the office).

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::RecordError;
use super::doc::transgression_scope;
use super::events::{EventKind, EventView};
use super::model::{Agent, PersonRef, RecordKind, RecordView, UserRole, Witness};
use crate::domain::RegistryIndex;

/// Fields fixed at creation.
pub const IMMUTABLE_FIELDS: [&str; 15] = [
    "schema_version",
    "id",
    "kind",
    "issuing_body",
    "author",
    "occurred_at",
    "monotonic",
    "position",
    "stand_id",
    "vehicle",
    "driver",
    "permit_number",
    "holder_id",
    "charged",
    "gravity",
];

/// Fields the author edits until the record is issued, sealed afterwards. The device's `seal`
/// is written at issue (the vetting checks it then) and never again.
pub const DRAFT_FIELDS: [&str; 6] = [
    "facts",
    "legal_basis",
    "verdict",
    "signature",
    "vehicle_confirmation",
    "seal",
];

const NUMBER: &str = "number";

/// Current values of each top-level field of a view: the winner plus concurrent values, as
/// JSON comparable with `FieldConflict` values.
type Candidates = BTreeMap<&'static str, Vec<serde_json::Value>>;

/// The candidates of `before` and `after`, for comparison with each other. A field with no
/// concurrent values on either side whose value is the same on both gets an empty list on both
/// (equal lists compare exactly as the real ones would) instead of its JSON: most fields of
/// most transitions, and building the JSON — the verdict parsed from its stored text — four
/// times per incoming change was a tenth of a sync (sync bench).
fn candidate_pair(before: &RecordView, after: &RecordView) -> (Candidates, Candidates) {
    let (mut b, mut a) = (BTreeMap::new(), BTreeMap::new());
    for name in IMMUTABLE_FIELDS
        .iter()
        .chain(DRAFT_FIELDS.iter())
        .chain(std::iter::once(&NUMBER))
    {
        let conflicted = |v: &RecordView| v.conflicts.iter().any(|c| c.field == *name);
        if !conflicted(before) && !conflicted(after) && same_field(before, after, name) {
            b.insert(*name, Vec::new());
            a.insert(*name, Vec::new());
        } else {
            b.insert(*name, field_candidates(before, name));
            a.insert(*name, field_candidates(after, name));
        }
    }
    (b, a)
}

/// Whether the two views hold the same winning value of `name` (false for a name not listed,
/// which then takes the JSON path).
fn same_field(x: &RecordView, y: &RecordView, name: &str) -> bool {
    match name {
        "schema_version" => x.schema_version == y.schema_version,
        "id" => x.id == y.id,
        "kind" => x.kind == y.kind,
        "issuing_body" => x.issuing_body == y.issuing_body,
        "author" => x.author == y.author,
        "occurred_at" => x.occurred_at == y.occurred_at,
        "monotonic" => x.monotonic == y.monotonic,
        "position" => x.position == y.position,
        "stand_id" => x.stand_id == y.stand_id,
        "vehicle" => x.vehicle == y.vehicle,
        "driver" => x.driver == y.driver,
        "permit_number" => x.permit_number == y.permit_number,
        "holder_id" => x.holder_id == y.holder_id,
        "charged" => x.charged == y.charged,
        "gravity" => x.gravity == y.gravity,
        "facts" => x.facts == y.facts,
        "legal_basis" => x.legal_basis == y.legal_basis,
        "verdict" => x.verdict == y.verdict,
        "signature" => x.signature == y.signature,
        "seal" => x.seal == y.seal,
        "vehicle_confirmation" => x.vehicle_confirmation == y.vehicle_confirmation,
        "number" => x.number == y.number,
        _ => false,
    }
}

fn field_candidates(view: &RecordView, name: &str) -> Vec<serde_json::Value> {
    let mut winner = field_json(view, name);
    // The view keeps the verdict byte-exact as a string; conflicts show it decoded.
    if name == "verdict"
        && let Some(parsed) = winner
            .as_str()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
    {
        winner = parsed;
    }
    let mut values = vec![winner];
    for c in view.conflicts.iter().filter(|c| c.field == name) {
        for v in &c.values {
            if !values.contains(&v.value) {
                values.push(v.value.clone());
            }
        }
    }
    values
}

/// One top-level field of `view` as JSON — what `serde_json::to_value(view)[name]` holds, without
/// serialising the whole view (events, witnesses, conflicts) for each of the twenty fields the
/// checks compare (sync bench: the server compares two views per incoming change).
/// The test `field_json_matches_the_serialised_view` keeps the two in step.
pub(super) fn field_json(view: &RecordView, name: &str) -> serde_json::Value {
    use serde_json::to_value as j;
    let v = match name {
        "schema_version" => j(view.schema_version),
        "id" => j(view.id),
        "kind" => j(view.kind),
        "issuing_body" => j(&view.issuing_body),
        "author" => j(&view.author),
        "occurred_at" => j(view.occurred_at),
        "monotonic" => j(view.monotonic),
        "position" => j(view.position),
        "stand_id" => j(&view.stand_id),
        "vehicle" => j(&view.vehicle),
        "driver" => j(&view.driver),
        "permit_number" => j(&view.permit_number),
        "holder_id" => j(&view.holder_id),
        "charged" => j(&view.charged),
        "gravity" => j(view.gravity),
        "facts" => j(&view.facts),
        "legal_basis" => j(&view.legal_basis),
        "verdict" => j(&view.verdict),
        "signature" => j(&view.signature),
        "seal" => j(&view.seal),
        "vehicle_confirmation" => j(&view.vehicle_confirmation),
        "number" => j(&view.number),
        _ => Ok(serde_json::Value::Null),
    };
    v.unwrap_or(serde_json::Value::Null)
}

fn gains_value(before: &[serde_json::Value], after: &[serde_json::Value]) -> bool {
    after.iter().any(|v| !before.contains(v))
}

/// Events compared without their derived `valid` flag (a merge may flip it).
fn event_key(e: &EventView) -> serde_json::Value {
    serde_json::json!({ "id": e.id, "at": e.at, "by": e.by, "event": e.event })
}

/// Fields whose change `after` makes but `before` forbids: immutable fields always, draft fields
/// once `before` is sealed, the number once `before` has one, and any removal or alteration
/// of a witness, photo or event. Empty when the transition is allowed as far as evidence goes.
pub fn sealed_changes(before: &RecordView, after: &RecordView) -> Vec<&'static str> {
    let (b, a) = candidate_pair(before, after);
    sealed_changes_of(before, after, &b, &a)
}

/// `sealed_changes` with the candidates already computed (`diff` needs them too).
fn sealed_changes_of(
    before: &RecordView,
    after: &RecordView,
    b: &Candidates,
    a: &Candidates,
) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut guard = |name: &'static str| {
        if let (Some(bv), Some(av)) = (b.get(name), a.get(name))
            && gains_value(bv, av)
        {
            out.push(name);
        }
    };
    for name in IMMUTABLE_FIELDS {
        guard(name);
    }
    if before.sealed {
        for name in DRAFT_FIELDS {
            guard(name);
        }
    }
    if before.number.is_some() {
        guard(NUMBER);
    }
    if !multiset_contains(&after.witnesses, &before.witnesses) {
        out.push("witnesses");
    }
    if before.photos.iter().any(|p| !after.photos.contains(p)) {
        out.push("photos");
    }
    let after_events: BTreeSet<String> = after
        .events
        .iter()
        .map(|e| event_key(e).to_string())
        .collect();
    let after_invalid_ids: BTreeSet<&str> =
        after.invalid_events.iter().map(|i| i.id.as_str()).collect();
    let events_kept = before
        .events
        .iter()
        .all(|e| after_events.contains(&event_key(e).to_string()))
        && before
            .invalid_events
            .iter()
            .all(|i| after_invalid_ids.contains(i.id.as_str()));
    if !events_kept {
        out.push("events");
    }
    out
}

/// True when every item of `small` appears in `big`, counting repeats.
fn multiset_contains<T: PartialEq>(big: &[T], small: &[T]) -> bool {
    let mut used = vec![false; big.len()];
    small.iter().all(
        |s| match big.iter().enumerate().find(|(i, b)| !used[*i] && *b == s) {
            Some((i, _)) => {
                used[i] = true;
                true
            }
            None => false,
        },
    )
}

/// What a set of changes did to a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordDiff {
    /// No `before`: the changes create the record.
    pub created: bool,
    /// Top-level fields whose set of current values differs.
    pub changed_fields: Vec<String>,
    /// See `sealed_changes`.
    pub sealed_changes: Vec<String>,
    /// Events in `after` that `before` lacks, in replay order.
    pub new_events: Vec<EventView>,
    /// Witnesses in `after` beyond those of `before`.
    pub new_witnesses: Vec<Witness>,
    pub new_photos: Vec<String>,
}

/// Describes the transition `before → after` (`before = None`: the record is new).
pub fn diff(before: Option<&RecordView>, after: &RecordView) -> RecordDiff {
    let Some(before) = before else {
        return RecordDiff {
            created: true,
            changed_fields: Vec::new(),
            sealed_changes: Vec::new(),
            new_events: after.events.clone(),
            new_witnesses: after.witnesses.clone(),
            new_photos: after.photos.clone(),
        };
    };
    let (b, a) = candidate_pair(before, after);
    let changed_fields = a
        .iter()
        .filter(|(k, av)| b.get(*k).is_none_or(|bv| bv != *av))
        .map(|(k, _)| (*k).to_owned())
        .collect();
    let before_ids: BTreeSet<&str> = before.events.iter().map(|e| e.id.as_str()).collect();
    let mut remaining = before.witnesses.clone();
    let new_witnesses = after
        .witnesses
        .iter()
        .filter(|w| match remaining.iter().position(|r| r == *w) {
            Some(i) => {
                remaining.swap_remove(i);
                false
            }
            None => true,
        })
        .cloned()
        .collect();
    RecordDiff {
        created: false,
        changed_fields,
        sealed_changes: sealed_changes_of(before, after, &b, &a)
            .into_iter()
            .map(str::to_owned)
            .collect(),
        new_events: after
            .events
            .iter()
            .filter(|e| !before_ids.contains(e.id.as_str()))
            .cloned()
            .collect(),
        new_witnesses,
        new_photos: after
            .photos
            .iter()
            .filter(|p| !before.photos.contains(p))
            .cloned()
            .collect(),
    }
}

/// Why the server refuses a set of changes. Shown to the sender, in Portuguese.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[serde(tag = "violation", rename_all = "snake_case")]
pub enum Violation {
    #[error("{} não pode criar {}", .role.label_pt(), .kind.label_pt())]
    KindNotAllowed { kind: RecordKind, role: UserRole },
    #[error("o autor gravado no registro não é o usuário, papel e dispositivo que o enviou")]
    AuthorMismatch,
    #[error("{} está lacrado ou não pode ser alterado", super::field_label_pt(.field))]
    Sealed { field: String },
    #[error("só o autor do registro pode alterar {}", super::field_label_pt(.field))]
    NotAuthor { field: String },
    #[error("o evento {event_id} está em nome de outro usuário, papel ou dispositivo")]
    EventAuthorMismatch { event_id: String },
    #[error("{} não pode registrar o evento «{kind}» ({event_id})", .role.label_pt())]
    EventNotAllowed {
        event_id: String,
        kind: String,
        role: UserRole,
    },
    #[error("{} não pode acrescentar testemunhas ou fotos a este registro", .role.label_pt())]
    EvidenceNotAllowed { role: UserRole },
    #[error("testemunha acrescentada em nome de outro usuário")]
    WitnessAuthorMismatch,
    #[error(
        "a confirmação do veículo só pode ser registrada pelo autor, em seu nome, no aparelho em que o registro foi lavrado"
    )]
    VehicleConfirmationNotAllowed,
    #[error("o número do registro só pode ser atribuído pelo autor ou pela Unidade")]
    NumberNotAllowed,
    #[error(
        "o valor de {} foi escolhido sem um evento de resolução de conflito da Unidade",
        super::field_label_pt(.field)
    )]
    UnrecordedResolution { field: String },
}

fn same_person(a: &Agent, b: &Agent) -> bool {
    a.user_id == b.user_id && a.role == b.role
}

/// Checks a transition sent by `sender` (as authenticated by the server) against the role
/// policy. Empty when every change is allowed.
///
/// - creation: the kind must be one the role may create (R35, art. 17) and the recorded author
///   must be the sender, device included (a transgression's stand scope needs the registry:
///   call `transgression_in_scope` too);
/// - `sealed_changes` must be empty;
/// - draft fields change only by the author; the number by the author or the office; a
///   narrowing of a guarded field's values (conflict resolution) only with a new
///   `conflict_resolved` event for it;
/// - each new event must name the sender (user, role, device) and be one the role may write
///   (`EventKind::allowed_for`); `issued` only by the author. Events that are well-authored but
///   out of order are *not* refused here: they are kept and flagged by the replay;
/// - new witnesses and photos only by the author or the office, witnesses in the sender's name;
/// - a new vehicle confirmation only by the author from the record's own device, in the
///   sender's name (user and device).
pub fn vet(before: Option<&RecordView>, after: &RecordView, sender: &Agent) -> Vec<Violation> {
    let mut out = Vec::new();
    let d = diff(before, after);
    let is_author = same_person(&after.author, sender);
    if d.created {
        if !after.kind.may_be_created_by(sender.role) {
            out.push(Violation::KindNotAllowed {
                kind: after.kind,
                role: sender.role,
            });
        }
        if after.author != *sender {
            out.push(Violation::AuthorMismatch);
        }
    }
    out.extend(
        d.sealed_changes
            .iter()
            .map(|f| Violation::Sealed { field: f.clone() }),
    );
    let resolved: BTreeSet<&str> = d
        .new_events
        .iter()
        .filter(|e| e.by.role == UserRole::Office)
        .filter_map(|e| match &e.event {
            EventKind::ConflictResolved { field, .. } => Some(field.as_str()),
            _ => None,
        })
        .collect();
    let cands = before.map(|b| candidate_pair(b, after));
    for field in &d.changed_fields {
        if d.sealed_changes.contains(field) {
            continue;
        }
        let f = field.as_str();
        // A guarded field that changed without gaining a value was narrowed to one of its
        // concurrent values: a conflict resolution, which the office records as an event.
        let guarded = before.is_some_and(|b| {
            IMMUTABLE_FIELDS.contains(&f)
                || (DRAFT_FIELDS.contains(&f) && b.sealed)
                || (f == NUMBER && b.number.is_some())
        });
        let narrowed = cands.as_ref().is_some_and(|(bc, ac)| {
            matches!((bc.get(f), ac.get(f)), (Some(bv), Some(av)) if !gains_value(bv, av))
        });
        let office_resolution = narrowed && sender.role == UserRole::Office && resolved.contains(f);
        if guarded {
            if !office_resolution {
                out.push(Violation::UnrecordedResolution {
                    field: field.clone(),
                });
            }
        } else if f == NUMBER {
            if !is_author && sender.role != UserRole::Office {
                out.push(Violation::NumberNotAllowed);
            }
        } else if DRAFT_FIELDS.contains(&f) && !is_author && !office_resolution {
            out.push(Violation::NotAuthor {
                field: field.clone(),
            });
        }
    }
    for e in &d.new_events {
        if e.by != *sender {
            out.push(Violation::EventAuthorMismatch {
                event_id: e.id.clone(),
            });
        }
        let allowed = e.event.allowed_for(sender.role, after.kind)
            && (!matches!(e.event, EventKind::Issued) || is_author);
        if !allowed {
            out.push(Violation::EventNotAllowed {
                event_id: e.id.clone(),
                kind: e.event.name().to_owned(),
                role: sender.role,
            });
        }
    }
    let adds_evidence = !d.new_witnesses.is_empty() || !d.new_photos.is_empty();
    if adds_evidence && !d.created && !is_author && sender.role != UserRole::Office {
        out.push(Violation::EvidenceNotAllowed { role: sender.role });
    }
    if d.new_witnesses.iter().any(|w| w.added_by != sender.user_id) {
        out.push(Violation::WitnessAuthorMismatch);
    }
    let confirmation_changed = before
        .is_none_or(|b| b.vehicle_confirmation != after.vehicle_confirmation)
        && after.vehicle_confirmation.is_some();
    if confirmation_changed
        && let Some(c) = &after.vehicle_confirmation
        && !(is_author
            && sender.device_id == after.author.device_id
            && c.user_id == sender.user_id
            && c.device_id == sender.device_id)
    {
        out.push(Violation::VehicleConfirmationNotAllowed);
    }
    out
}

/// Art. 17 scope of a transgression report, for the server at creation: the permit must be of
/// `coordinator_stand` (the stand the authenticated coordinator coordinates), the driver its
/// holder or auxiliary, and the stand and holder recorded must be the registry's. Other kinds
/// pass.
pub fn transgression_in_scope(
    view: &RecordView,
    index: &RegistryIndex<'_>,
    coordinator_stand: &str,
) -> Result<(), RecordError> {
    if view.kind != RecordKind::Transgression {
        return Ok(());
    }
    let permit = view
        .permit_number
        .as_deref()
        .ok_or(RecordError::MissingField { field: "alvará" })?;
    let PersonRef::Registry(driver) = &view.driver.person else {
        return Err(RecordError::NotDriverOfPermit {
            person: view.driver.person.encode(),
            permit: permit.to_owned(),
        });
    };
    let scope = transgression_scope(index, coordinator_stand, permit, driver, view.occurred_at)?;
    if view.stand_id.as_deref() != Some(coordinator_stand) {
        return Err(RecordError::OutsideStand {
            permit: permit.to_owned(),
            permit_stand: view.stand_id.clone().unwrap_or_default(),
            coordinator_stand: coordinator_stand.to_owned(),
        });
    }
    if view.holder_id.as_deref() != Some(scope.holder_id.as_str()) || view.driver.role != scope.role
    {
        return Err(RecordError::Invalid {
            field: "titular/papel do condutor",
            reason: String::from("não conferem com o cadastro"),
        });
    }
    Ok(())
}
