//! Events and the state machine that derives a record's status from them.
//!
//! A record's status is never stored: devices and the office append events concurrently, and a
//! last-writer-wins status field would silently drop one side's decision. Instead every event
//! is kept, the list is replayed in a total order — `(timestamp, event id)`, identical on every
//! copy whatever the merge order — and each event either moves the state machine or is flagged
//! with the reason it was refused. A flagged event stays in the document as evidence of what
//! someone did; the office sees it in `RecordView::invalid_events`.
//!
//! The steps of the penalty's procedure (review to the decision on appeal) are judged by the
//! law kernel's `rules::procedure`, fed with each event's local date and the record's
//! occurrence: the order of steps and of their dates is the law's, defined once, and the same
//! on the device, the server and the office. `procedure_of` gives a writer the state to ask the
//! kernel about a next step before appending it.
//!
//! Who may append which event (`EventKind::allowed_for`) is checked by the local API, again
//! during replay (an event from a role that may not write it is flagged), and by the server.

use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::model::{Agent, Gravity, LegalBasis, RecordKind, UserRole};
use crate::domain::PenaltyKind;
use crate::rules::RuleId;
use crate::rules::procedure::{NextStep, Phase, Procedure, Step};

/// A warning given by a coordinator for a light fault (art. 17 §2 I–II).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    Verbal,
    Written,
}

/// How the offender took notice (ciência) of a decision, the most certain first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotificationMethod {
    /// The person's signature: on the notification of penalty (the ciência names it), or on
    /// an auto they signed on the spot.
    PersonalSignature,
    /// Aviso de recebimento (postal return receipt).
    PostalReceipt,
    /// Official publication.
    Publication,
}

/// Result of a reconsideration (art. 34) or appeal (art. 33): the law kernel's.
pub use crate::rules::procedure::Outcome;

/// What happened to a record. Stored as `kind` plus a JSON payload of the other fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
// Unknown payload fields are ignored, not refused: an app a version behind must still replay
// events written by a newer one.
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// The author closes the record: evidence is sealed from here on.
    Issued,
    /// Light transgression settled by the coordinator with a warning (art. 17 §1, §2 I–II).
    SettledByCoordinator {
        warning: WarningKind,
    },
    /// Transgression sent in writing to the Unidade (art. 17 §2).
    ForwardedToOffice,
    /// The office took the record up.
    Reviewed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// The office classifies the record: the rules and articles it is judged under (art. 31,
    /// art. 32 §1). Replaces the author's legal basis for the decision without touching the
    /// sealed evidence; the latest valid classification counts (`RecordView::classification`).
    Classified {
        legal_basis: Vec<LegalBasis>,
    },
    /// The office proposes a penalty (art. 32 §1: graded by gravity).
    PenaltyProposed {
        penalty: PenaltyKind,
    },
    /// The competent authority decides it.
    PenaltyDecided {
        penalty: PenaltyKind,
    },
    /// Ciência of the last decision: starts the 10-day appeal period (art. 35).
    Notified {
        method: NotificationMethod,
        on: NaiveDate,
        /// Last day to appeal, as counted by whoever recorded the ciência with their holiday
        /// calendar (municipal holidays are configuration). Stored so that every copy judges a
        /// later appeal against the same day; absent (older writers), the state machine counts
        /// it with the built-in calendar. Never earlier than `on` + 10 days (art. 35).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        appeal_deadline: Option<NaiveDate>,
        /// The number of the notification of penalty that was signed or delivered (e.g.
        /// `NP-2026-000012`), as the office's server generated it; absent for a publication,
        /// an auto signed on the spot, or an older writer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        notification: Option<String>,
    },
    /// Request for reconsideration (art. 34).
    ReconsiderationFiled {
        on: NaiveDate,
    },
    ReconsiderationDecided {
        outcome: Outcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        penalty: Option<PenaltyKind>,
    },
    /// Appeal to the Prefeito, once only (art. 33).
    AppealFiled {
        on: NaiveDate,
    },
    AppealDecided {
        outcome: Outcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        penalty: Option<PenaltyKind>,
    },
    Annulled {
        reason: String,
    },
    Archived,
    /// This record duplicates another and is merged into it.
    DuplicateMerged {
        into_record_id: String,
    },
    /// This record looked like a duplicate of another; the office keeps both.
    DuplicateKeptApart {
        other_record_id: String,
    },
    /// The office chose one of the concurrent values of a field.
    ConflictResolved {
        field: String,
        value: serde_json::Value,
    },
}

impl EventKind {
    /// The stored `kind` string (same as serde's tag).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Issued => "issued",
            Self::SettledByCoordinator { .. } => "settled_by_coordinator",
            Self::ForwardedToOffice => "forwarded_to_office",
            Self::Reviewed { .. } => "reviewed",
            Self::Classified { .. } => "classified",
            Self::PenaltyProposed { .. } => "penalty_proposed",
            Self::PenaltyDecided { .. } => "penalty_decided",
            Self::Notified { .. } => "notified",
            Self::ReconsiderationFiled { .. } => "reconsideration_filed",
            Self::ReconsiderationDecided { .. } => "reconsideration_decided",
            Self::AppealFiled { .. } => "appeal_filed",
            Self::AppealDecided { .. } => "appeal_decided",
            Self::Annulled { .. } => "annulled",
            Self::Archived => "archived",
            Self::DuplicateMerged { .. } => "duplicate_merged",
            Self::DuplicateKeptApart { .. } => "duplicate_kept_apart",
            Self::ConflictResolved { .. } => "conflict_resolved",
        }
    }

    /// What users read.
    pub fn label_pt(&self) -> &'static str {
        match self {
            Self::Issued => "emissão",
            Self::SettledByCoordinator { .. } => "advertência pelo coordenador",
            Self::ForwardedToOffice => "encaminhamento à Unidade",
            Self::Reviewed { .. } => "análise",
            Self::Classified { .. } => "classificação",
            Self::PenaltyProposed { .. } => "proposta de penalidade",
            Self::PenaltyDecided { .. } => "decisão de penalidade",
            Self::Notified { .. } => "ciência",
            Self::ReconsiderationFiled { .. } => "pedido de reconsideração",
            Self::ReconsiderationDecided { .. } => "decisão da reconsideração",
            Self::AppealFiled { .. } => "recurso",
            Self::AppealDecided { .. } => "decisão do recurso",
            Self::Annulled { .. } => "anulação",
            Self::Archived => "arquivamento",
            Self::DuplicateMerged { .. } => "junção de duplicata",
            Self::DuplicateKeptApart { .. } => "duplicata mantida em separado",
            Self::ConflictResolved { .. } => "resolução de conflito",
        }
    }

    /// Whether a user in `role` may append this event to a record of `kind`.
    ///
    /// Issuing belongs to the record's maker (art. 36 bodies for autos, the coordinator for
    /// reports); settling and forwarding to the coordinator (art. 17); ciência to the office or
    /// an inspector handing the notice over in person; every decision to the office.
    pub fn allowed_for(&self, role: UserRole, kind: RecordKind) -> bool {
        match self {
            Self::Issued => kind.may_be_created_by(role),
            Self::SettledByCoordinator { .. } | Self::ForwardedToOffice => {
                kind == RecordKind::Transgression && role == UserRole::Coordinator
            }
            Self::Notified { .. } => role == UserRole::Office || role.is_inspector(),
            _ => role == UserRole::Office,
        }
    }

    /// The rule that gives this event to the role allowed to write it, cited when another
    /// role tries: autos belong to the bodies of art. 36 (R35), reports and the coordinator's
    /// steps to art. 17 (R27), decisions to the Unidade de Transportes (art. 32 §1, R32).
    pub fn competence_rule(&self, kind: RecordKind) -> RuleId {
        match self {
            Self::Issued => match kind {
                RecordKind::Infraction => RuleId::R35,
                RecordKind::Transgression => RuleId::R27,
            },
            Self::SettledByCoordinator { .. } | Self::ForwardedToOffice => RuleId::R27,
            _ => RuleId::R32,
        }
    }

    /// Splits into the stored `kind` and the JSON payload of the other fields (`None` if none).
    pub(crate) fn to_stored(&self) -> Result<(&'static str, Option<String>), serde_json::Error> {
        let mut value = serde_json::to_value(self)?;
        if let Some(obj) = value.as_object_mut() {
            obj.remove("kind");
            if obj.is_empty() {
                return Ok((self.name(), None));
            }
        }
        Ok((self.name(), Some(serde_json::to_string(&value)?)))
    }

    /// Inverse of `to_stored`.
    pub(crate) fn from_stored(kind: &str, payload: Option<&str>) -> Result<Self, String> {
        let mut obj = match payload {
            None => serde_json::Map::new(),
            Some(p) => match serde_json::from_str::<serde_json::Value>(p) {
                Ok(serde_json::Value::Object(o)) => o,
                Ok(_) => return Err("conteúdo do evento não é um objeto".into()),
                Err(e) => return Err(format!("conteúdo do evento ilegível: {e}")),
            },
        };
        obj.insert("kind".into(), serde_json::Value::String(kind.to_owned()));
        serde_json::from_value(serde_json::Value::Object(obj))
            .map_err(|e| format!("evento desconhecido ou malformado «{kind}»: {e}"))
    }
}

/// An event as stored, decoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EventView {
    /// UUID v7 string.
    pub id: String,
    /// When it happened, by the author's device clock (UTC).
    pub at: DateTime<Utc>,
    pub by: Agent,
    pub event: EventKind,
    /// False when the state machine refused it (see `RecordView::invalid_events`).
    pub valid: bool,
}

/// An event that did not move the state machine, kept with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InvalidEvent {
    /// Event id, or its position in the list when even the id is unreadable.
    pub id: String,
    /// Stored kind, as written (may be unknown to this version).
    pub kind: String,
    pub at: Option<DateTime<Utc>>,
    /// Why, in Portuguese.
    pub reason: String,
}

/// Status of a record, derived by replaying its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Being written by its author; evidence still editable.
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

impl Status {
    /// The snake_case name (same as serde), e.g. for the store's list column.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Issued => "issued",
            Self::SettledByCoordinator => "settled_by_coordinator",
            Self::ForwardedToOffice => "forwarded_to_office",
            Self::UnderReview => "under_review",
            Self::PenaltyProposed => "penalty_proposed",
            Self::PenaltyDecided => "penalty_decided",
            Self::Notified => "notified",
            Self::ReconsiderationFiled => "reconsideration_filed",
            Self::ReconsiderationDecided => "reconsideration_decided",
            Self::AppealFiled => "appeal_filed",
            Self::AppealDecided => "appeal_decided",
            Self::Annulled => "annulled",
            Self::Archived => "archived",
            Self::MergedAsDuplicate => "merged_as_duplicate",
        }
    }

    pub fn label_pt(self) -> &'static str {
        match self {
            Self::Draft => "rascunho",
            Self::Issued => "emitido",
            Self::SettledByCoordinator => "resolvido pelo coordenador",
            Self::ForwardedToOffice => "encaminhado à Unidade",
            Self::UnderReview => "em análise",
            Self::PenaltyProposed => "penalidade proposta",
            Self::PenaltyDecided => "penalidade decidida",
            Self::Notified => "infrator cientificado",
            Self::ReconsiderationFiled => "reconsideração pedida",
            Self::ReconsiderationDecided => "reconsideração decidida",
            Self::AppealFiled => "recurso interposto",
            Self::AppealDecided => "recurso decidido",
            Self::Annulled => "anulado",
            Self::Archived => "arquivado",
            Self::MergedAsDuplicate => "juntado como duplicata",
        }
    }
}

/// What replaying the events yields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Replayed {
    pub(crate) status: Status,
    pub(crate) penalty: Option<PenaltyKind>,
    pub(crate) notified_on: Option<NaiveDate>,
    /// Last day to appeal from the last ciência (art. 35, R34).
    pub(crate) appeal_deadline: Option<NaiveDate>,
    /// The office's latest classification.
    pub(crate) classification: Option<Vec<LegalBasis>>,
    pub(crate) duplicate_of: Option<String>,
    /// All events in replay order, each marked valid or not.
    pub(crate) events: Vec<EventView>,
    /// Refused events with reasons, in replay order.
    pub(crate) invalid: Vec<InvalidEvent>,
}

/// The state machine, fed one event at a time. The record's own life (draft, issue, the
/// coordinator's steps, annulment, archive, duplicates) is here; the procedure of the penalty
/// (review to the decision on appeal, with the date of each step) is the law kernel's
/// [`Procedure`], which every office event passes through.
#[derive(Debug, Clone)]
pub(crate) struct Machine {
    kind: RecordKind,
    gravity: Option<Gravity>,
    status: Status,
    penalty: Option<PenaltyKind>,
    procedure: Procedure,
    classification: Option<Vec<LegalBasis>>,
    duplicate_of: Option<String>,
}

/// The procedure of a record as its accepted events leave it (what the replay computed), so
/// that a writer can ask the law kernel about its next step before appending it and say why
/// in the kernel's own words.
pub fn procedure_of(view: &super::RecordView) -> Procedure {
    let mut p = Procedure::open(crate::time::local_date(view.occurred_at));
    for e in view.events.iter().filter(|e| e.valid) {
        if let Some(step) = step_of(&e.event)
            && let Ok(next) = p.apply(&step, crate::time::local_date(e.at))
        {
            p = next;
        }
    }
    p
}

/// A refusal's reason (the state machine's, the law kernel's) as the one sentence users read:
/// capital first letter, full stop. Every layer that passes a refusal on uses this instead of
/// adding its own prefix, so the reason is said once.
pub fn refusal_sentence(reason: &str) -> String {
    crate::text::sentence_pt(reason)
}

/// Whether the Unidade may work on a record of `kind` in `status`: an issued auto, or a
/// report the coordinator forwarded or settled (art. 17); never a draft or a closed record.
fn taken_up(kind: RecordKind, status: Status) -> bool {
    use Status as S;
    let transgression = kind == RecordKind::Transgression;
    match status {
        S::Issued => !transgression,
        S::ForwardedToOffice | S::SettledByCoordinator => transgression,
        S::Draft | S::Annulled | S::Archived | S::MergedAsDuplicate => false,
        _ => true,
    }
}

/// What the Unidade may record next on a record (the office's guided procedure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfficeNext {
    /// The procedure's steps the law allows now (the kernel's `Procedure::next_steps`).
    pub steps: Vec<NextStep>,
    /// A (re)classification: before the penalty is decided. The state machine accepts one
    /// later too, but the decision was taken on the classification before it; changing it
    /// afterwards is a matter for reconsideration or appeal.
    pub classify: bool,
    /// Annulment: any record issued and not closed.
    pub annul: bool,
    /// Archiving: any record issued and not archived.
    pub archive: bool,
}

/// What the office may record next on `view` on the local date `today`: the state machine's
/// own conditions (the record taken up, not closed) and the law kernel's next steps, so a page
/// offers exactly what [`Machine::apply`] would accept.
pub fn office_next(view: &super::RecordView, today: NaiveDate) -> OfficeNext {
    use Status as S;
    let status = view.status;
    let procedure = procedure_of(view);
    let open = taken_up(view.kind, status);
    let steps = if open {
        procedure.next_steps(today)
    } else {
        Vec::new()
    };
    let closed = matches!(
        status,
        S::Draft | S::Annulled | S::Archived | S::MergedAsDuplicate
    );
    OfficeNext {
        steps,
        classify: open
            && matches!(
                procedure.phase,
                Phase::Open | Phase::UnderReview | Phase::PenaltyProposed
            ),
        annul: !closed,
        archive: !matches!(status, S::Draft | S::Archived),
    }
}

/// The step of the procedure an event records, if it is one.
pub fn step_of(event: &EventKind) -> Option<Step> {
    Some(match event {
        EventKind::Reviewed { .. } => Step::Review,
        EventKind::PenaltyProposed { penalty } => Step::Propose { penalty: *penalty },
        EventKind::PenaltyDecided { penalty } => Step::Decide { penalty: *penalty },
        EventKind::Notified {
            on,
            appeal_deadline,
            ..
        } => Step::Notify {
            on: *on,
            appeal_deadline: *appeal_deadline,
        },
        EventKind::ReconsiderationFiled { on } => Step::FileReconsideration { on: *on },
        EventKind::ReconsiderationDecided { outcome, penalty } => Step::DecideReconsideration {
            outcome: *outcome,
            penalty: *penalty,
        },
        EventKind::AppealFiled { on } => Step::FileAppeal { on: *on },
        EventKind::AppealDecided { outcome, penalty } => Step::DecideAppeal {
            outcome: *outcome,
            penalty: *penalty,
        },
        _ => return None,
    })
}

/// The record status of a phase of the procedure.
fn status_of(phase: Phase) -> Status {
    match phase {
        Phase::Open => Status::Issued,
        Phase::UnderReview => Status::UnderReview,
        Phase::PenaltyProposed => Status::PenaltyProposed,
        Phase::PenaltyDecided => Status::PenaltyDecided,
        Phase::Notified => Status::Notified,
        Phase::ReconsiderationFiled => Status::ReconsiderationFiled,
        Phase::ReconsiderationDecided => Status::ReconsiderationDecided,
        Phase::AppealFiled => Status::AppealFiled,
        Phase::AppealDecided => Status::AppealDecided,
    }
}

impl Machine {
    pub(crate) fn new(
        kind: RecordKind,
        gravity: Option<Gravity>,
        occurred_at: DateTime<Utc>,
    ) -> Self {
        Self {
            kind,
            gravity,
            status: Status::Draft,
            penalty: None,
            procedure: Procedure::open(crate::time::local_date(occurred_at)),
            classification: None,
            duplicate_of: None,
        }
    }

    /// Applies one event recorded at `at`, or says in Portuguese why it may not happen now.
    pub(crate) fn apply(
        &mut self,
        event: &EventKind,
        role: UserRole,
        at: DateTime<Utc>,
    ) -> Result<(), String> {
        use Status as S;
        if !event.allowed_for(role, self.kind) {
            return Err(format!(
                "{} não pode registrar {} em {}",
                role.label_pt(),
                event.label_pt(),
                self.kind.label_pt()
            ));
        }
        let now = self.status;
        let refuse = |why: &str| {
            // "Não é possível registrar …": the sentence agrees whatever the event's gender.
            let mut msg = format!(
                "não é possível registrar {} quando o registro está «{}»",
                event.label_pt(),
                now.label_pt()
            );
            if !why.is_empty() {
                msg.push_str(": ");
                msg.push_str(why);
            }
            Err(msg)
        };
        let terminal = matches!(now, S::Annulled | S::Archived | S::MergedAsDuplicate);
        let transgression = self.kind == RecordKind::Transgression;
        if let Some(step) = step_of(event) {
            if !taken_up(self.kind, now) {
                return refuse(if transgression && now == S::Issued {
                    "a comunicação ainda não foi encaminhada à Unidade"
                } else {
                    ""
                });
            }
            let next = self
                .procedure
                .apply(&step, crate::time::local_date(at))
                .map_err(|e| e.to_string())?;
            self.procedure = next;
            self.penalty = next.penalty;
            self.status = status_of(next.phase);
            return Ok(());
        }
        match event {
            EventKind::Issued => {
                if now != S::Draft {
                    return refuse("o registro já foi emitido");
                }
                self.status = S::Issued;
            }
            EventKind::SettledByCoordinator { .. } => {
                if self.gravity != Some(Gravity::Light) {
                    return refuse(
                        "só faltas leves podem ser resolvidas pelo coordenador (art. 17, § 1º)",
                    );
                }
                if now != S::Issued {
                    return refuse("");
                }
                self.status = S::SettledByCoordinator;
            }
            EventKind::ForwardedToOffice => {
                if now != S::Issued {
                    return refuse("");
                }
                self.status = S::ForwardedToOffice;
            }
            EventKind::Classified { legal_basis } => {
                if now == S::Draft || terminal {
                    return refuse("");
                }
                if legal_basis.is_empty() {
                    return refuse("a classificação precisa de ao menos uma regra");
                }
                self.classification = Some(legal_basis.clone());
            }
            EventKind::Annulled { .. } => {
                if now == S::Draft || terminal {
                    return refuse("");
                }
                self.penalty = None;
                self.status = S::Annulled;
            }
            EventKind::Archived => {
                if matches!(now, S::Draft | S::Archived) {
                    return refuse("");
                }
                self.status = S::Archived;
            }
            EventKind::DuplicateMerged { into_record_id } => {
                if now == S::Draft || terminal {
                    return refuse("");
                }
                self.duplicate_of = Some(into_record_id.clone());
                self.status = S::MergedAsDuplicate;
            }
            EventKind::DuplicateKeptApart { .. } => {
                if now == S::Draft {
                    return refuse("");
                }
            }
            // A resolution changes a field, not the status; allowed in any state.
            EventKind::ConflictResolved { .. } => {}
            // Steps of the procedure went through the kernel above.
            EventKind::Reviewed { .. }
            | EventKind::PenaltyProposed { .. }
            | EventKind::PenaltyDecided { .. }
            | EventKind::Notified { .. }
            | EventKind::ReconsiderationFiled { .. }
            | EventKind::ReconsiderationDecided { .. }
            | EventKind::AppealFiled { .. }
            | EventKind::AppealDecided { .. } => {}
        }
        Ok(())
    }
}

/// A decoded event waiting to be replayed, or an unreadable one.
#[derive(Debug, Clone)]
pub(crate) enum RawEvent {
    Ok(EventView),
    Malformed(InvalidEvent),
}

/// Replays events in `(at, id)` order through the state machine. Deterministic: the same set
/// of events gives the same result whatever order the list holds them in.
pub(crate) fn replay(
    kind: RecordKind,
    gravity: Option<Gravity>,
    occurred_at: DateTime<Utc>,
    raw: Vec<RawEvent>,
) -> Replayed {
    let mut ok = Vec::new();
    let mut invalid = Vec::new();
    for r in raw {
        match r {
            RawEvent::Ok(e) => ok.push(e),
            RawEvent::Malformed(i) => invalid.push(i),
        }
    }
    ok.sort_by(|a, b| (a.at, &a.id).cmp(&(b.at, &b.id)));
    let mut machine = Machine::new(kind, gravity, occurred_at);
    let mut seen = BTreeSet::new();
    for e in &mut ok {
        let verdict = if seen.insert(e.id.clone()) {
            machine.apply(&e.event, e.by.role, e.at)
        } else {
            Err(String::from("evento repetido (mesmo identificador)"))
        };
        e.valid = verdict.is_ok();
        if let Err(reason) = verdict {
            invalid.push(InvalidEvent {
                id: e.id.clone(),
                kind: e.event.name().to_owned(),
                at: Some(e.at),
                reason,
            });
        }
    }
    // Malformed ones have no place in the order; list them after the refused ones, stably.
    invalid.sort_by(|a, b| (a.at.is_none(), a.at, &a.id).cmp(&(b.at.is_none(), b.at, &b.id)));
    Replayed {
        status: machine.status,
        penalty: machine.penalty,
        notified_on: machine.procedure.notified_on,
        appeal_deadline: machine.procedure.appeal_deadline,
        classification: machine.classification,
        duplicate_of: machine.duplicate_of,
        events: ok,
        invalid,
    }
}
