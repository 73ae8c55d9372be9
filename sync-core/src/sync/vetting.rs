//! Change-by-change vetting of what a sender wants to add to a record (DESIGN §Sync: "the
//! server vets every incoming change before applying it").
//!
//! The incoming changes that the server lacks are taken in causal order and applied one at a
//! time to a copy of the server's record; after each one the record before and after is viewed
//! and judged. The first change that fails stops the walk: the changes before it are accepted
//! (they were each legal on their own), it and every later one are refused. A device's changes
//! form one chain (one actor per device), so everything after a refused change depends on it
//! and could not be applied anyway.
//!
//! Each change is judged on:
//! 1. its actor: the authenticated device's, or an actor the server bound to that device
//!    (`foreign_actor`);
//! 2. `records::vet` of before → after with the sender's role (sealed evidence, who may
//!    create, edit, number, add evidence and write which event);
//! 3. for coordinators, the art. 17 scope: a new transgression must be of their stand
//!    (`transgression_in_scope` against the registry) and an existing record must be of it;
//! 4. its events: an event that does not decode, or that the state machine refused *on the
//!    sender's own copy* (the document at this change), is refused (`invalid_event`). An event
//!    that was valid where it was written but is flagged after merging with a concurrent change
//!    (the office decided something meanwhile) is accepted and stays flagged in the record, as
//!    DESIGN §Records asks — refusing it would make the outcome depend on arrival order.

use std::collections::{BTreeSet, HashMap};

use automerge::{AutoCommit, Change, ChangeHash};
use uuid::Uuid;

use super::server::Sender;
use super::wire::{RejectionCode, sorted};
use crate::domain::RegistryIndex;
use crate::records::{
    RecordDoc, RecordError, RecordKind, RecordView, UserRole, Violation, device_of_actor, diff,
    transgression_in_scope, vet,
};

/// The first refused change and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) code: RejectionCode,
    /// Portuguese, for the officer.
    pub(crate) message: String,
}

/// What the walk over the incoming changes decided.
#[derive(Debug)]
pub(crate) struct Vetted {
    /// The record with every accepted change (`None`: nothing accepted and no record before).
    pub(crate) doc: Option<RecordDoc>,
    /// The view of `doc` as computed while vetting (issue 5, sync bench: saves the caller a
    /// second materialisation of the same document).
    pub(crate) view: Option<RecordView>,
    /// Hashes of the accepted changes, in causal order.
    pub(crate) accepted: Vec<ChangeHash>,
    /// Refused changes (the first offending one and all after it) and why.
    pub(crate) refused: Option<(Vec<Change>, Refusal)>,
    /// Actors seen for the first time, to bind to the sender's device.
    pub(crate) new_bindings: Vec<String>,
}

/// Where the vetting reads the actor bindings from: `actor (hex) → device`.
pub(crate) type Bindings<'a> = &'a mut dyn FnMut(&str) -> Result<Option<Uuid>, BindingError>;

/// A binding lookup failed in the caller's storage.
#[derive(Debug)]
pub(crate) struct BindingError(pub(crate) Box<dyn std::error::Error + Send + Sync>);

/// Why vetting could not run at all (as opposed to refusing a change).
#[derive(Debug)]
pub(crate) enum VetFailure {
    Bindings(BindingError),
    /// A coordinator's record needs the registry to check the stand, and there is none.
    NoRegistry,
    /// The server's own copy of the record does not read.
    Stored(RecordError),
}

/// Walks `changes` (those the server lacks, in causal order) over `base` (the server's record,
/// `None` if new).
pub(crate) fn vet_changes(
    base: Option<&RecordDoc>,
    changes: Vec<Change>,
    sender: &Sender,
    registry: Option<&RegistryIndex<'_>>,
    bindings: Bindings<'_>,
) -> Result<Vetted, VetFailure> {
    let mut cur: Option<RecordDoc> = base.cloned();
    let mut cur_view: Option<RecordView> = match &cur {
        Some(d) => Some(d.view().map_err(VetFailure::Stored)?),
        None => None,
    };
    // Heads of `cur`, sorted: `judge` uses them to recognise when the sender's own copy before
    // a change is exactly `cur` (no fork needed).
    let mut cur_heads: Vec<ChangeHash> = match &mut cur {
        Some(d) => sorted(d.heads()),
        None => Vec::new(),
    };
    let mut accepted = Vec::new();
    let mut new_bindings: Vec<String> = Vec::new();
    let mut known_actors: HashMap<String, bool> = HashMap::new();

    for (i, change) in changes.iter().enumerate() {
        let refuse = |refusal: Refusal, cur: Option<RecordDoc>, accepted, new_bindings| Vetted {
            view: None,
            doc: cur,
            accepted,
            refused: Some((changes[i..].to_vec(), refusal)),
            new_bindings,
        };

        // 1. Actor.
        let actor = change.actor_id().to_hex_string();
        let allowed = match known_actors.get(&actor) {
            Some(ok) => *ok,
            None => {
                let bound = bindings(&actor).map_err(VetFailure::Bindings)?;
                let ok = match bound {
                    Some(device) => device == sender.agent.device_id,
                    None => device_of_actor(change.actor_id()) == Some(sender.agent.device_id),
                };
                if ok && bound.is_none() {
                    new_bindings.push(actor.clone());
                }
                known_actors.insert(actor.clone(), ok);
                ok
            }
        };
        if !allowed {
            return Ok(refuse(
                Refusal {
                    code: RejectionCode::ForeignActor,
                    message: format!(
                        "a alteração foi gravada por outro aparelho (ator {}), não pelo aparelho \
                         autenticado",
                        short(&actor)
                    ),
                },
                cur,
                accepted,
                new_bindings,
            ));
        }

        // 2. Apply to a copy and view.
        let mut next_am = match &cur {
            Some(d) => d.automerge().clone(),
            None => AutoCommit::new(),
        };
        if let Err(e) = next_am.apply_changes([change.clone()]) {
            return Ok(refuse(
                malformed(e.to_string()),
                cur,
                accepted,
                new_bindings,
            ));
        }
        // The check of `from_automerge` is a view: keep it rather than computing it again.
        let (mut next, next_view) = match RecordDoc::from_automerge_viewed(next_am) {
            Ok(d) => d,
            Err(e) => return Ok(refuse(record_refusal(&e), cur, accepted, new_bindings)),
        };
        if let Some(c) = &cur
            && (c.id() != next.id() || c.kind() != next.kind())
        {
            return Ok(refuse(
                malformed("a alteração troca a identidade do registro"),
                cur,
                accepted,
                new_bindings,
            ));
        }

        // 3. Role policy, scope, events.
        if let Some(refusal) = judge(
            cur_view.as_ref(),
            &cur_heads,
            &next_view,
            &mut next,
            change,
            sender,
            registry,
        )? {
            return Ok(refuse(refusal, cur, accepted, new_bindings));
        }
        accepted.push(change.hash());
        cur_heads = sorted(next.heads());
        cur = Some(next);
        cur_view = Some(next_view);
    }
    Ok(Vetted {
        doc: cur,
        view: cur_view,
        accepted,
        refused: None,
        new_bindings,
    })
}

/// Policy checks of one step `before → after` (after = the record with `change`).
#[allow(clippy::too_many_arguments)]
fn judge(
    before: Option<&RecordView>,
    before_heads: &[ChangeHash],
    after: &RecordView,
    after_doc: &mut RecordDoc,
    change: &Change,
    sender: &Sender,
    registry: Option<&RegistryIndex<'_>>,
) -> Result<Option<Refusal>, VetFailure> {
    let violations = vet(before, after, &sender.agent);
    if let Some(refusal) = refusal_of_violations(&violations) {
        return Ok(Some(refusal));
    }

    if sender.agent.role == UserRole::Coordinator {
        let stand = sender.stand.as_deref().unwrap_or_default();
        if before.is_none() && after.kind == RecordKind::Transgression {
            let index = registry.ok_or(VetFailure::NoRegistry)?;
            if let Err(e) = transgression_in_scope(after, index, stand) {
                return Ok(Some(Refusal {
                    code: RejectionCode::OutsideStand,
                    message: e.to_string(),
                }));
            }
        } else if after.stand_id.as_deref() != Some(stand) || stand.is_empty() {
            return Ok(Some(Refusal {
                code: RejectionCode::OutsideStand,
                message: format!(
                    "o registro é do ponto {}; o coordenador do ponto {} só atua nos registros \
                     do próprio ponto (art. 17)",
                    after.stand_id.as_deref().unwrap_or("(nenhum)"),
                    if stand.is_empty() { "(nenhum)" } else { stand }
                ),
            }));
        }
    }

    // Events that do not decode: they are flagged in `invalid_events` without being in
    // `events`, so `vet` (which compares `events`) cannot see them.
    let decoded: BTreeSet<&str> = after.events.iter().map(|e| e.id.as_str()).collect();
    let flagged_before: BTreeSet<&str> = before
        .map(|b| b.invalid_events.iter().map(|e| e.id.as_str()).collect())
        .unwrap_or_default();
    if let Some(bad) = after
        .invalid_events
        .iter()
        .find(|e| !decoded.contains(e.id.as_str()) && !flagged_before.contains(e.id.as_str()))
    {
        return Ok(Some(Refusal {
            code: RejectionCode::InvalidEvent,
            message: format!("evento ilegível «{}»: {}", bad.kind, bad.reason),
        }));
    }

    // Events judged on the sender's own copy: the document as it was when this change was made
    // (its ancestors only, without what the server merged since). There a new event must be
    // accepted by the state machine, and must not turn an accepted event into a refused one (an
    // event back-dated before others) — the same rule `RecordDoc::append_event` applies.
    let new_events = diff(before, after).new_events;
    // Shortcuts that are exact (issue 5, sync bench): a document is a function of its heads, so
    // when this change is the record's only head the sender's own copy *is* `after`, and when
    // the change's dependencies are the heads before it, the copy before it *is* `before`. That
    // is every change of a new record and every edit nobody raced; only concurrent histories
    // need the forks (each a copy and a full materialisation of the record).
    let forked_own: Option<RecordView>;
    let own: Option<&RecordView> = if new_events.is_empty() {
        None
    } else if sorted(after_doc.heads()) == [change.hash()] {
        Some(after)
    } else {
        forked_own = view_at(after_doc, &[change.hash()]);
        forked_own.as_ref()
    };
    if let Some(own) = own {
        for e in &new_events {
            if let Some(bad) = own.invalid_events.iter().find(|i| i.id == e.id) {
                return Ok(Some(Refusal {
                    code: RejectionCode::InvalidEvent,
                    message: format!("{} recusado: {}", e.event.label_pt(), bad.reason),
                }));
            }
        }
        let forked_before: Option<RecordView>;
        let own_before: Option<&RecordView> = if sorted(change.deps().to_vec()) == before_heads {
            before
        } else {
            forked_before = view_at(after_doc, change.deps());
            forked_before.as_ref()
        };
        if let Some(own_before) = own_before {
            let flagged: BTreeSet<&str> = own_before
                .invalid_events
                .iter()
                .map(|i| i.id.as_str())
                .collect();
            if let Some(broken) = own
                .invalid_events
                .iter()
                .find(|i| !flagged.contains(i.id.as_str()))
            {
                return Ok(Some(Refusal {
                    code: RejectionCode::InvalidEvent,
                    message: format!(
                        "o novo evento tem data anterior a eventos já registrados e invalidaria                          «{}»",
                        broken.kind
                    ),
                }));
            }
        }
    }
    Ok(None)
}

/// The most telling code among `vet`'s violations, and all their messages.
fn refusal_of_violations(violations: &[Violation]) -> Option<Refusal> {
    let code_of = |v: &Violation| match v {
        Violation::Sealed { .. } | Violation::UnrecordedResolution { .. } => {
            RejectionCode::SealedField
        }
        Violation::AuthorMismatch
        | Violation::EventAuthorMismatch { .. }
        | Violation::WitnessAuthorMismatch => RejectionCode::AuthorMismatch,
        Violation::KindNotAllowed { .. }
        | Violation::NotAuthor { .. }
        | Violation::EventNotAllowed { .. }
        | Violation::EvidenceNotAllowed { .. }
        | Violation::NumberNotAllowed => RejectionCode::RoleForbidden,
    };
    // Sealed evidence first: it is the rule officers most need to understand.
    let rank = |c: RejectionCode| match c {
        RejectionCode::SealedField => 0,
        RejectionCode::RoleForbidden => 1,
        _ => 2,
    };
    let code = violations.iter().map(code_of).min_by_key(|c| rank(*c))?;
    let mut messages: Vec<String> = Vec::new();
    for v in violations {
        let m = v.to_string();
        if !messages.contains(&m) {
            messages.push(m);
        }
    }
    Some(Refusal {
        code,
        message: messages.join("; "),
    })
}

/// The record as it was at `heads` (`None` if that state is not a whole record, e.g. before
/// the creating change).
fn view_at(doc: &mut RecordDoc, heads: &[ChangeHash]) -> Option<RecordView> {
    let am = doc.automerge_mut().fork_at(heads).ok()?;
    RecordDoc::from_automerge(am).ok()?.view().ok()
}

fn record_refusal(e: &RecordError) -> Refusal {
    malformed(e.to_string())
}

pub(crate) fn malformed(reason: impl Into<String>) -> Refusal {
    Refusal {
        code: RejectionCode::Malformed,
        message: format!("dados ilegíveis: {}", reason.into()),
    }
}

fn short(hex: &str) -> &str {
    hex.get(..12).unwrap_or(hex)
}
