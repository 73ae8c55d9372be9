//! Change-by-change vetting of what a sender wants to add to a record (ARCHITECTURE.md, Sync: "the
//! server vets every incoming change before applying it").
//!
//! The incoming changes that the server lacks are taken in causal order, one at a time; after
//! each one the record before and after is viewed and judged. The record after a change is read
//! from the decoded copy that already holds every incoming change, at the heads that change
//! produces (`RecordDoc::view_at`; a document is a function of its heads), so nothing is
//! re-applied; only a caller without that copy (the server's own edits) applies each change to
//! a copy. The first change that fails stops the walk: the changes before it are accepted
//! (they were each legal on their own), it and every later one are refused. A device's changes
//! form one chain (one actor per device), so everything after a refused change depends on it
//! and could not be applied anyway.
//!
//! Each change is judged on:
//! 1. its actor: the authenticated device's, or an actor the server bound to that device
//!    (`foreign_actor`);
//! 2. `records::vet` of before → after with the sender's role (sealed evidence, who may
//!    create, edit, number, add evidence and write which event);
//! 3. what the record then holds: the limits and evidence checks the device applies to its
//!    own writes (`records::check_record`: sizes, plate, position, time, verdict, permit);
//!    over a limit is `too_large`, invalid evidence `invalid_field`;
//! 4. for coordinators, the art. 17 scope: a new transgression must be of their stand
//!    (`transgression_in_scope` against the registry) and an existing record must be of it;
//! 5. the device's seal (checked right after 3), on the change that issues the record
//!    (`judge_seal`): it must verify over the evidence of the sender's own copy with a key
//!    registered to the sending device, the author's (`seal_invalid` otherwise); a seal
//!    written at any other time is refused;
//! 6. its events: an event that does not decode, or that the state machine refused *on the
//!    sender's own copy* (the document at this change), is refused (`invalid_event`). An event
//!    that was valid where it was written but is flagged after merging with a concurrent change
//!    (the office decided something meanwhile) is accepted and stays flagged in the record, as
//!    ARCHITECTURE.md, Records asks — refusing it would make the outcome depend on arrival order.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use automerge::{ActorId, AutoCommit, Change, ChangeHash};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::server::Sender;
use super::wire::{RejectionCode, sorted};
use crate::domain::{Registry, RegistryIndex};
use crate::records::{
    CheckContext, EventKind, RecordDoc, RecordError, RecordKind, RecordView, SealError, UserRole,
    Violation, check_record, device_of_actor, diff, transgression_in_scope, verify_seal, vet,
};

/// The registry as the vetting reads it: the permits, scanned when a change sets a record's
/// permit (`records::check_record`), and an index, needed only for a coordinator's new report
/// (the art. 17 scope) and built on first use — indexing a city's registry costs milliseconds,
/// which the syncs of officers (most of them) need not pay (sync bench).
#[derive(Clone, Copy)]
pub(crate) struct RegistryAccess<'a, 'r> {
    pub(crate) registry: Option<&'r Registry>,
    /// An index the caller already has…
    pub(crate) given: Option<&'a RegistryIndex<'r>>,
    /// …or where to build it once, shared by the threads of one request.
    pub(crate) lazy: Option<&'a OnceLock<RegistryIndex<'r>>>,
}

impl<'a, 'r> RegistryAccess<'a, 'r> {
    pub(crate) fn index(&self) -> Option<&'a RegistryIndex<'r>> {
        if let Some(i) = self.given {
            return Some(i);
        }
        let (registry, lazy) = (self.registry?, self.lazy?);
        Some(lazy.get_or_init(|| registry.index()))
    }
}

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
    /// The view of `doc` as computed while vetting (sync bench: saves the caller a
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
}

/// What the vetting needs of an incoming change: its hash, its actor and its dependencies.
/// Read with `get_changes_meta`, which skips what `get_changes` does to hand out whole changes
/// (rebuilding each one's operations from the document: a tenth of the server's work for a new
/// record, sync bench); a change itself is fetched only when it is refused, for the
/// quarantine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangeMeta {
    pub(crate) hash: ChangeHash,
    pub(crate) actor: ActorId,
    pub(crate) deps: Vec<ChangeHash>,
}

impl ChangeMeta {
    fn of(change: &Change) -> Self {
        Self {
            hash: change.hash(),
            actor: change.actor_id().clone(),
            deps: change.deps().to_vec(),
        }
    }
}

/// The changes of `doc` that a peer holding `heads` lacks, in causal order (the order of
/// `get_changes`).
pub(crate) fn changes_after(doc: &mut AutoCommit, heads: &[ChangeHash]) -> Vec<ChangeMeta> {
    doc.get_changes_meta(heads)
        .into_iter()
        .map(|m| ChangeMeta {
            hash: m.hash,
            actor: m.actor.into_owned(),
            deps: m.deps,
        })
        .collect()
}

/// Walks `changes` (those the server lacks, in causal order) over `base` (the server's record,
/// `None` if new).
///
/// `merged` is `base` with every change of `changes` already applied (the sync decode's scratch
/// copy, or the server's own edit). Each step is *read* from it at that step's heads
/// (`RecordDoc::view_at`) instead of applying the change to a fresh copy of the previous step
/// (sync bench: the copy and the re-application were a third of the server's work for
/// a new record). The judgement is the same: the state after change *i* is a function of the
/// heads after change *i*, however it is reached (see `vet_changes_merged`). Only when `merged`
/// does not read as a record are the changes applied one by one, to find the one that broke it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn vet_changes(
    // The server's record and its view (which the caller computed to check visibility).
    base: Option<(&RecordDoc, RecordView)>,
    merged: AutoCommit,
    // Heads of `base` (empty if new), sorted.
    base_heads: &[ChangeHash],
    changes: Vec<ChangeMeta>,
    sender: &Sender,
    registry: &RegistryAccess<'_, '_>,
    bindings: Bindings<'_>,
    now: DateTime<Utc>,
) -> Result<Vetted, VetFailure> {
    let (base, base_view) = match base {
        Some((d, v)) => (Some(d), Some(v)),
        None => (None, None),
    };
    let mut merged = match RecordDoc::try_from_automerge_viewed(merged) {
        Ok((full, full_view)) => {
            return vet_changes_merged(
                base_view, base_heads, changes, full, full_view, sender, registry, bindings, now,
            );
        }
        Err((am, _)) => *am,
    };
    // Some step breaks the record: walk the changes themselves.
    let changes = merged.get_changes(base_heads);
    let mut cur: Option<RecordDoc> = base.cloned();
    let mut cur_view: Option<RecordView> = base_view;
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
        if !actor_allowed(
            &actor,
            change.actor_id(),
            sender,
            bindings,
            &mut known_actors,
            &mut new_bindings,
        )? {
            return Ok(refuse(foreign_actor(&actor), cur, accepted, new_bindings));
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
        let next_heads = sorted(next.heads());
        if let Some(refusal) = judge(
            cur_view.as_ref(),
            &cur_heads,
            &next_view,
            &next_heads,
            &mut next,
            &ChangeMeta::of(change),
            sender,
            registry,
            now,
        )? {
            return Ok(refuse(refusal, cur, accepted, new_bindings));
        }
        accepted.push(change.hash());
        cur_heads = next_heads;
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

/// Whether `change`'s actor belongs to the sender's device: bound to it already, or new and
/// derived from its id (then bound on acceptance). Memoised per request in `known`.
fn actor_allowed(
    actor: &str,
    actor_id: &ActorId,
    sender: &Sender,
    bindings: Bindings<'_>,
    known: &mut HashMap<String, bool>,
    new_bindings: &mut Vec<String>,
) -> Result<bool, VetFailure> {
    if let Some(ok) = known.get(actor) {
        return Ok(*ok);
    }
    let bound = bindings(actor).map_err(VetFailure::Bindings)?;
    let ok = match bound {
        Some(device) => device == sender.agent.device_id,
        None => device_of_actor(actor_id) == Some(sender.agent.device_id),
    };
    if ok && bound.is_none() {
        new_bindings.push(actor.to_owned());
    }
    known.insert(actor.to_owned(), ok);
    Ok(ok)
}

fn foreign_actor(actor: &str) -> Refusal {
    Refusal {
        code: RejectionCode::ForeignActor,
        message: format!(
            "a alteração foi gravada por outro aparelho (ator {}), não pelo aparelho autenticado",
            short(actor)
        ),
    }
}

/// `vet_changes` over `full` (`base` + all of `changes`), reading each step at its heads.
///
/// The heads after change *i* are the heads before it minus its dependencies plus its own hash
/// (the changes come in causal order, so every dependency is in `base` or an earlier change).
/// A refusal at step *i* needs the record as it was before it: a fork of `full` at the heads
/// of step *i − 1*, made only on that (rare) path.
#[allow(clippy::too_many_arguments)]
fn vet_changes_merged(
    base_view: Option<RecordView>,
    base_heads: &[ChangeHash],
    changes: Vec<ChangeMeta>,
    mut full: RecordDoc,
    full_view: RecordView,
    sender: &Sender,
    registry: &RegistryAccess<'_, '_>,
    bindings: Bindings<'_>,
    now: DateTime<Utc>,
) -> Result<Vetted, VetFailure> {
    let full_heads = sorted(full.heads());
    let mut cur_view: Option<RecordView> = base_view;
    let mut heads: BTreeSet<ChangeHash> = base_heads.iter().copied().collect();
    let mut cur_heads: Vec<ChangeHash> = heads.iter().copied().collect();
    let mut accepted = Vec::new();
    let mut new_bindings: Vec<String> = Vec::new();
    let mut known_actors: HashMap<String, bool> = HashMap::new();
    let mut full_view = Some(full_view);

    for (i, change) in changes.iter().enumerate() {
        // The record before this change, for a refusal.
        let refuse = |refusal: Refusal,
                      full: &mut RecordDoc,
                      cur_heads: &[ChangeHash],
                      accepted,
                      new_bindings| {
            let doc = if cur_heads.is_empty() {
                None
            } else {
                full.automerge_mut()
                    .fork_at(cur_heads)
                    .ok()
                    .and_then(|am| RecordDoc::from_automerge(am).ok())
            };
            // The refused changes themselves, for the quarantine (all are in `full`).
            let am = full.automerge_mut();
            let refused = changes[i..]
                .iter()
                .filter_map(|c| am.get_change_by_hash(&c.hash))
                .collect();
            Vetted {
                view: None,
                doc,
                accepted,
                refused: Some((refused, refusal)),
                new_bindings,
            }
        };

        // 1. Actor.
        let actor = change.actor.to_hex_string();
        if !actor_allowed(
            &actor,
            &change.actor,
            sender,
            bindings,
            &mut known_actors,
            &mut new_bindings,
        )? {
            return Ok(refuse(
                foreign_actor(&actor),
                &mut full,
                &cur_heads,
                accepted,
                new_bindings,
            ));
        }

        // 2. The record after this change, read at its heads.
        for dep in &change.deps {
            heads.remove(dep);
        }
        heads.insert(change.hash);
        let step_heads: Vec<ChangeHash> = heads.iter().copied().collect();
        let next_view = if step_heads == full_heads {
            match full_view.take() {
                Some(v) => Ok(v),
                None => full.view(),
            }
        } else {
            full.view_at(&step_heads)
        };
        let next_view = match next_view {
            Ok(v) => v,
            Err(e) => {
                return Ok(refuse(
                    record_refusal(&e),
                    &mut full,
                    &cur_heads,
                    accepted,
                    new_bindings,
                ));
            }
        };

        // 3. Role policy, scope, events.
        let verdict = judge(
            cur_view.as_ref(),
            &cur_heads,
            &next_view,
            &step_heads,
            &mut full,
            change,
            sender,
            registry,
            now,
        )?;
        if let Some(refusal) = verdict {
            return Ok(refuse(
                refusal,
                &mut full,
                &cur_heads,
                accepted,
                new_bindings,
            ));
        }
        accepted.push(change.hash);
        cur_heads = step_heads;
        cur_view = Some(next_view);
    }
    Ok(Vetted {
        doc: Some(full),
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
    // Sorted; `after_doc` may hold more (later changes of the same request).
    after_heads: &[ChangeHash],
    after_doc: &mut RecordDoc,
    change: &ChangeMeta,
    sender: &Sender,
    registry: &RegistryAccess<'_, '_>,
    now: DateTime<Utc>,
) -> Result<Option<Refusal>, VetFailure> {
    let violations = vet(before, after, &sender.agent);
    if let Some(refusal) = refusal_of_violations(&violations) {
        return Ok(Some(refusal));
    }

    // What the record holds: the same limits and evidence checks as the device's writes.
    let ctx = CheckContext {
        now,
        registry: registry.registry,
        // Only an index already built: building one here would cost more than the scan.
        index: registry.given,
    };
    if let Err(e) = check_record(before, after, &ctx) {
        return Ok(Some(record_refusal(&e)));
    }

    if let Some(refusal) = judge_seal(before, after, after_heads, after_doc, change, sender) {
        return Ok(Some(refusal));
    }

    if sender.agent.role == UserRole::Coordinator {
        let stand = sender.stand.as_deref().unwrap_or_default();
        if before.is_none() && after.kind == RecordKind::Transgression {
            let index = registry.index().ok_or(VetFailure::NoRegistry)?;
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
    // Shortcuts that are exact (sync bench): a document is a function of its heads, so
    // when this change is the record's only head the sender's own copy *is* `after`, and when
    // the change's dependencies are the heads before it, the copy before it *is* `before`. That
    // is every change of a new record and every edit nobody raced; only concurrent histories
    // need the forks (each a copy and a full materialisation of the record).
    let forked_own: Option<RecordView>;
    let own: Option<&RecordView> = if new_events.is_empty() {
        None
    } else if after_heads == [change.hash] {
        Some(after)
    } else {
        forked_own = view_at(after_doc, &[change.hash]);
        forked_own.as_ref()
    };
    if let Some(own) = own {
        for e in &new_events {
            if let Some(bad) = own.invalid_events.iter().find(|i| i.id == e.id) {
                return Ok(Some(Refusal {
                    code: RejectionCode::InvalidEvent,
                    message: crate::records::refusal_sentence(&bad.reason),
                }));
            }
        }
        let forked_before: Option<RecordView>;
        let own_before: Option<&RecordView> = if sorted(change.deps.clone()) == before_heads {
            before
        } else {
            forked_before = view_at(after_doc, &change.deps);
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

/// The device's seal (`records::seal`) on the step that issues the record, and nowhere else.
///
/// A seal is written only with the `issued` event; afterwards `vet` treats it as sealed
/// evidence. On the issuing step it must verify on the *sender's own copy* (the document at
/// this change: what the device saw and signed; a concurrent edit merged on the server, e.g. a
/// second value of the facts, is not what it signed), be the author's device's, and use a key
/// registered to the sending device. A record issued with no seal is accepted only from a
/// device that had registered no key when it issued (an app from before device keys): the
/// office page shows it as unsigned.
fn judge_seal(
    before: Option<&RecordView>,
    after: &RecordView,
    after_heads: &[ChangeHash],
    after_doc: &mut RecordDoc,
    change: &ChangeMeta,
    sender: &Sender,
) -> Option<Refusal> {
    let refuse = |e: SealError| Refusal {
        code: RejectionCode::SealInvalid,
        message: e.to_string(),
    };
    if !after.sealed {
        return after.seal.is_some().then(|| {
            refuse(SealError::Malformed(String::from(
                "selo gravado fora da emissão",
            )))
        });
    }
    if before.is_some_and(|b| b.sealed) {
        return None;
    }
    let forked: Option<RecordView>;
    let own = if after_heads == [change.hash] {
        after
    } else {
        forked = view_at(after_doc, &[change.hash]);
        forked.as_ref().unwrap_or(after)
    };
    let Some(seal) = &own.seal else {
        let issued_at = own
            .events
            .iter()
            .find(|e| matches!(e.event, EventKind::Issued))
            .map(|e| e.at);
        let first_key = sender.device_keys.iter().map(|k| k.registered_at).min();
        return match (first_key, issued_at) {
            (None, _) => None,
            (Some(first), Some(at)) if at < first => None,
            _ => Some(refuse(SealError::Missing)),
        };
    };
    if seal.device_id != sender.agent.device_id || own.author.device_id != sender.agent.device_id {
        return Some(refuse(SealError::WrongDevice));
    }
    let verified = match verify_seal(own) {
        Ok(v) => v,
        Err(e) => return Some(refuse(e)),
    };
    if !sender
        .device_keys
        .iter()
        .any(|k| k.public_key == verified.public_key)
    {
        return Some(refuse(SealError::UnknownKey));
    }
    None
}

/// The most telling code among `vet`'s violations, and all their messages.
fn refusal_of_violations(violations: &[Violation]) -> Option<Refusal> {
    let code_of = |v: &Violation| match v {
        Violation::Sealed { .. } | Violation::UnrecordedResolution { .. } => {
            RejectionCode::SealedField
        }
        Violation::AuthorMismatch
        | Violation::EventAuthorMismatch { .. }
        | Violation::WitnessAuthorMismatch
        | Violation::VehicleConfirmationNotAllowed => RejectionCode::AuthorMismatch,
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
    doc.view_at(heads).ok()
}

/// A record that does not read, is over a limit or holds invalid evidence.
pub(crate) fn record_refusal(e: &RecordError) -> Refusal {
    match e {
        RecordError::TooLarge { .. } => Refusal {
            code: RejectionCode::TooLarge,
            message: e.to_string(),
        },
        RecordError::Invalid { .. }
        | RecordError::InvalidHash { .. }
        | RecordError::UnknownPermit { .. } => Refusal {
            code: RejectionCode::InvalidField,
            message: e.to_string(),
        },
        _ => malformed(e.to_string()),
    }
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

#[cfg(test)]
mod tests {
    use automerge::transaction::Transactable;
    use automerge::{ActorId, AutoCommit, ROOT};

    use super::{ChangeMeta, changes_after};

    /// The vetting walks the metadata in the order it assumes is `get_changes`'s (causal).
    #[test]
    fn change_metadata_lists_what_get_changes_lists_in_the_same_order() {
        let mut a = AutoCommit::new().with_actor(ActorId::from([1u8; 16]));
        a.put(ROOT, "x", 1).unwrap();
        a.commit();
        let first = a.get_heads();
        let mut b = a.fork().with_actor(ActorId::from([2u8; 16]));
        b.put(ROOT, "y", 2).unwrap();
        b.commit();
        b.put(ROOT, "y", 3).unwrap();
        b.commit();
        a.put(ROOT, "x", 4).unwrap();
        a.commit();
        let before_merge = a.get_heads();
        a.merge(&mut b).unwrap();
        a.put(ROOT, "z", 5).unwrap();
        a.commit();
        for heads in [
            Vec::new(),
            first,
            before_merge,
            b.get_heads(),
            a.get_heads(),
        ] {
            let whole: Vec<ChangeMeta> = a.get_changes(&heads).iter().map(ChangeMeta::of).collect();
            assert_eq!(changes_after(&mut a, &heads), whole, "after {heads:?}");
        }
        assert_eq!(changes_after(&mut a, &[]).len(), 5);
    }
}
