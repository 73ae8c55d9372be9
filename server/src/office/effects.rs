//! The registry effect of a record's decision, as a pure function of the record and the
//! registry ([`reconcile`]): what the registry must say for the record's penalty in force, and
//! the edit that makes it so. Idempotent by construction — applied twice it finds nothing to
//! change — because every entry it writes is found again by the record's id:
//!
//! - the penalty (`Penalty::record_id` = the record), one per record, `PEN-<year>-<nnnn>`;
//! - for a fine, the unpaid fine `MUL-<penalty id>` (art. 17 §2 III: blocks the renewal until
//!   paid, R27), at the amount in force in the decision's year (art. 32 II, R22);
//! - for a revocation, the permit's state `revoked` on the decision date (its stand's vacancy
//!   opens: the permit no longer counts against the stand or the art. 14 cap).
//!
//! Timing (ADR 0012): a penalty takes effect on the local date of the decision event, so a
//! suspension is in force from the day it is decided — the next registry pull makes the taxi
//! `irregular` on every device. Lei 9.784/1999 art. 61 (applied subsidiarily, Súmula 633/STJ):
//! an administrative appeal has no suspensive effect unless granted; a reversal lifts it.
//!
//! A reversal, an annulment or a change of penalty on reconsideration or appeal removes or
//! replaces what the earlier decision wrote: the penalty, the fine if still unpaid (a paid one
//! stays, with its payment, and is reported), and the revoked state this record set. Bringing a
//! permit back from a revocation reversed on appeal is not a new vacancy (R23 is not applied:
//! the vacancy was never lawfully open).

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use sync_core::domain::{Fine, Penalty, PenaltyKind, PermitState, Registry};
use sync_core::records::{EventKind, PersonRef, RecordView, Status};
use sync_core::rules::penalty::{fine_amount, penalty_label_pt};

use crate::store::office::{EffectRefusal, RegistryEdit};

/// The registry id of the fine a penalty `PEN-…` imposes.
pub fn fine_id_of(penalty_id: &str) -> String {
    format!("MUL-{penalty_id}")
}

/// The penalty in force on a record and the local date of the decision that set it: the last
/// valid decision, reconsideration or appeal that changed it. `None` after a reversal, an
/// annulment, or for a record merged into another.
pub fn current_penalty(view: &RecordView) -> Option<(PenaltyKind, NaiveDate)> {
    if matches!(view.status, Status::Annulled | Status::MergedAsDuplicate) {
        return None;
    }
    let mut current: Option<(PenaltyKind, NaiveDate)> = None;
    for e in view.events.iter().filter(|e| e.valid) {
        let day = sync_core::time::local_date(e.at);
        match &e.event {
            EventKind::PenaltyDecided { penalty } => current = Some((*penalty, day)),
            EventKind::ReconsiderationDecided { outcome, penalty }
            | EventKind::AppealDecided { outcome, penalty } => match outcome {
                sync_core::records::Outcome::Upheld => {}
                sync_core::records::Outcome::Reversed => current = None,
                sync_core::records::Outcome::Modified => {
                    let next = penalty.or(current.map(|(p, _)| p));
                    if let Some(p) = next
                        && current.map(|(c, _)| c) != Some(p)
                    {
                        current = Some((p, day));
                    }
                }
            },
            EventKind::Annulled { .. } => current = None,
            _ => {}
        }
    }
    // The state machine is the authority; this walk only adds the date.
    match (current, view.penalty) {
        (Some((p, d)), Some(v)) if p == v => Some((p, d)),
        _ => None,
    }
}

fn refusal(code: &'static str, message: impl Into<String>) -> EffectRefusal {
    EffectRefusal {
        code,
        message: message.into(),
    }
}

/// Next `PEN-<year>-<nnnn>` (the registry API's numbering).
fn next_penalty_id(reg: &Registry, year: i32) -> String {
    let head = format!("PEN-{year}-");
    let max = reg
        .penalties
        .iter()
        .filter_map(|p| p.id.strip_prefix(&head))
        .filter_map(|n| n.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    format!("{head}{:04}", max + 1)
}

/// What [`reconcile`] did, for the audit action and the answer.
fn action_of(desired: Option<PenaltyKind>) -> &'static str {
    match desired {
        None => "office.effect.lift",
        Some(PenaltyKind::WrittenWarning) => "office.effect.warning",
        Some(PenaltyKind::Fine) => "office.effect.fine",
        Some(PenaltyKind::Suspension { .. }) => "office.effect.suspension",
        Some(PenaltyKind::Revocation) => "office.effect.revocation",
    }
}

/// The registry edit that makes `reg` say what `view` decides (see the module doc), or `None`
/// when nothing is to be written for this record.
pub fn reconcile(view: &RecordView, reg: &Registry) -> Result<Option<RegistryEdit>, EffectRefusal> {
    let record_id = view.id.to_string();
    let desired = current_penalty(view);
    let existing: Vec<&Penalty> = reg
        .penalties
        .iter()
        .filter(|p| p.record_id.as_deref() == Some(record_id.as_str()))
        .collect();
    if desired.is_none() && existing.is_empty() {
        return Ok(None);
    }
    let permit_number = match (&view.permit_number, existing.first()) {
        (Some(n), _) => n.clone(),
        (None, Some(p)) => p.permit_number.clone(),
        (None, None) => {
            return Err(refusal(
                "record_without_permit",
                "O registro não indica alvará: as penalidades do art. 32 recaem sobre \
                 permissionários (art. 31). Transporte clandestino é encaminhado à autoridade de \
                 trânsito (R01; CTB, art. 231, VIII); arquive ou anule o registro.",
            ));
        }
    };
    if !reg.permits.iter().any(|p| p.number == permit_number) {
        return Err(refusal(
            "unknown_permit",
            format!("O alvará {permit_number} do registro não consta do cadastro."),
        ));
    }
    let mut next = reg.clone();
    let mut reused_id = None;
    let mut kept = false;
    let mut old_suspension_start = None;
    for old in &existing {
        if desired.is_some_and(|(kind, _)| kind == old.kind) {
            kept = true;
            continue;
        }
        // Undo what this record's earlier decision wrote.
        reused_id.get_or_insert_with(|| old.id.clone());
        if matches!(old.kind, PenaltyKind::Suspension { .. }) {
            old_suspension_start = Some(old.starts_on);
        }
        next.penalties.retain(|p| p.id != old.id);
        let fine_id = fine_id_of(&old.id);
        next.fines
            .retain(|f| f.id != fine_id || f.paid_on.is_some());
        if old.kind == PenaltyKind::Revocation
            && let Some(permit) = next.permits.iter_mut().find(|p| p.number == permit_number)
            && permit.state == (PermitState::Revoked { on: old.starts_on })
        {
            permit.state = PermitState::Active;
        }
    }
    if let Some((kind, decided_on)) = desired {
        let id = if kept {
            existing
                .iter()
                .find(|p| p.kind == kind)
                .map(|p| p.id.clone())
                .unwrap_or_default()
        } else {
            let id = reused_id
                .clone()
                .unwrap_or_else(|| next_penalty_id(&next, decided_on.year()));
            // A suspension shortened or lengthened on appeal keeps running from when it began.
            let starts_on = match (kind, old_suspension_start) {
                (PenaltyKind::Suspension { .. }, Some(start)) => start,
                _ => decided_on,
            };
            let person_id = match &view.driver.person {
                PersonRef::Registry(p) if reg.people.iter().any(|x| &x.id == p) => Some(p.clone()),
                _ => None,
            };
            next.penalties.push(Penalty {
                id: id.clone(),
                permit_number: permit_number.clone(),
                person_id,
                kind,
                decided_on,
                starts_on,
                record_id: Some(record_id.clone()),
            });
            id
        };
        let (starts_on, decided_on) = next
            .penalties
            .iter()
            .find(|p| p.id == id)
            .map(|p| (p.starts_on, p.decided_on))
            .unwrap_or((decided_on, decided_on));
        match kind {
            PenaltyKind::Fine => {
                let fine_id = fine_id_of(&id);
                if !next.fines.iter().any(|f| f.id == fine_id) {
                    let amount = fine_amount(decided_on, &next.law().ipca).map_err(|e| {
                        refusal(
                            "fine_amount_unknown",
                            format!("O valor da multa não pode ser calculado: {e}."),
                        )
                    })?;
                    next.fines.push(Fine {
                        id: fine_id,
                        permit_number: permit_number.clone(),
                        amount: amount.amount,
                        issued_on: decided_on,
                        paid_on: None,
                    });
                }
            }
            PenaltyKind::Revocation => {
                if let Some(permit) = next.permits.iter_mut().find(|p| p.number == permit_number)
                    && !matches!(permit.state, PermitState::Revoked { .. })
                {
                    permit.state = PermitState::Revoked { on: starts_on };
                }
            }
            PenaltyKind::WrittenWarning | PenaltyKind::Suspension { .. } => {}
        }
    }
    crate::registry::validate(&next).map_err(|e| refusal("registry_integrity", e.to_string()))?;
    tracing::debug!(
        record = %record_id,
        penalty = ?desired.map(|(k, _)| penalty_label_pt(k)),
        "efeito da decisão no cadastro"
    );
    Ok(Some(RegistryEdit {
        registry: next,
        action: action_of(desired.map(|(k, _)| k)).to_owned(),
        subject: format!("permit:{permit_number}"),
    }))
}

/// One change a decision makes in the registry, for the office to read before confirming it
/// ([`changes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EffectChange {
    /// The permit is suspended from `from` to `until` (inclusive).
    Suspended {
        permit: String,
        from: NaiveDate,
        until: Option<NaiveDate>,
    },
    /// A written warning enters the permit's penalty history.
    Warning { permit: String, on: NaiveDate },
    /// A fine is issued, unpaid (it blocks the renewal until paid, art. 17 §2 III).
    FineIssued {
        permit: String,
        fine_id: String,
        amount: Decimal,
        on: NaiveDate,
    },
    /// The permit is revoked on `on`.
    Revoked { permit: String, on: NaiveDate },
    /// A penalty this record had written leaves the registry.
    PenaltyLifted {
        permit: String,
        penalty: PenaltyKind,
        penalty_id: String,
    },
    /// The unpaid fine of a lifted penalty is cancelled.
    FineCancelled { fine_id: String, amount: Decimal },
    /// The fine of a lifted penalty was paid already: it stays, with its payment.
    PaidFineKept { fine_id: String, paid_on: NaiveDate },
    /// A permit this record had revoked is active again.
    PermitRestored { permit: String },
}

/// What `after` changes against `before` for `record_id`: the entries [`reconcile`] writes
/// (penalties of the record, their fines, the permit svc), compared one by one, so what the
/// office confirms is what the same edit will write.
pub fn changes(before: &Registry, after: &Registry, record_id: &str) -> Vec<EffectChange> {
    let of_record = |reg: &Registry| -> Vec<Penalty> {
        reg.penalties
            .iter()
            .filter(|p| p.record_id.as_deref() == Some(record_id))
            .cloned()
            .collect()
    };
    let (old, new) = (of_record(before), of_record(after));
    let same = |a: &Penalty, b: &Penalty| a.id == b.id && a.kind == b.kind;
    let mut out = Vec::new();
    for gone in old.iter().filter(|o| !new.iter().any(|n| same(o, n))) {
        out.push(EffectChange::PenaltyLifted {
            permit: gone.permit_number.clone(),
            penalty: gone.kind,
            penalty_id: gone.id.clone(),
        });
        let fine_id = fine_id_of(&gone.id);
        if let Some(f) = before.fines.iter().find(|f| f.id == fine_id) {
            let kept = after.fines.iter().any(|a| a.id == fine_id);
            match (f.paid_on, kept) {
                (Some(paid_on), true) => out.push(EffectChange::PaidFineKept { fine_id, paid_on }),
                (None, false) => out.push(EffectChange::FineCancelled {
                    fine_id,
                    amount: f.amount,
                }),
                _ => {}
            }
        }
    }
    for added in new.iter().filter(|n| !old.iter().any(|o| same(o, n))) {
        let permit = added.permit_number.clone();
        out.push(match added.kind {
            PenaltyKind::Suspension { .. } => EffectChange::Suspended {
                permit,
                from: added.starts_on,
                until: added.suspension_last_day(),
            },
            PenaltyKind::WrittenWarning => EffectChange::Warning {
                permit,
                on: added.starts_on,
            },
            PenaltyKind::Revocation => EffectChange::Revoked {
                permit,
                on: added.starts_on,
            },
            PenaltyKind::Fine => {
                let fine_id = fine_id_of(&added.id);
                match after.fines.iter().find(|f| f.id == fine_id) {
                    Some(f) => EffectChange::FineIssued {
                        permit,
                        fine_id,
                        amount: f.amount,
                        on: f.issued_on,
                    },
                    None => continue,
                }
            }
        });
    }
    for p in &after.permits {
        let was = before.permits.iter().find(|b| b.number == p.number);
        if let Some(was) = was
            && matches!(was.state, PermitState::Revoked { .. })
            && p.state == PermitState::Active
        {
            out.push(EffectChange::PermitRestored {
                permit: p.number.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn fine_ids_never_collide_with_the_registry_api_numbering() {
        // The API numbers fines `MUL-<year>-<nnnn>`; a record's fine carries its penalty id.
        assert_eq!(fine_id_of("PEN-2026-0003"), "MUL-PEN-2026-0003");
        assert!(
            fine_id_of("PEN-2026-0003")
                .strip_prefix("MUL-2026-")
                .is_none()
        );
    }
}
