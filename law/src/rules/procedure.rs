//! The procedure of a penalty (arts. 32–35, R32 and R34) as a state machine with dated steps:
//! the Unidade de Transportes reviews a record, proposes and decides a penalty (art. 32 §1),
//! the offender takes notice (ciência), may ask for reconsideration (art. 34) and may appeal
//! once to the Prefeito within 10 days of the ciência (arts. 33 and 35).
//!
//! Flow: [`Procedure::open`] starts at the date of the occurrence; [`Procedure::apply`] takes
//! one [`Step`] and the local date it was recorded on and returns the next state, or a
//! [`StepError`] saying in Portuguese why the law does not allow it now. Each step is checked
//! against the phase (no decision before a review and a recorded proposal, no ciência without a
//! decision, no appeal without ciência, one appeal only) and its date against the dates before
//! it: nothing before the occurrence, a ciência not before the decision it notifies, a filing
//! not before the ciência, a ruling not before the filing it rules on, an appeal not after the
//! deadline. Everyone charged takes notice (the holder beside an auxiliary, art. 32 § 2): a
//! further ciência of the same decision is accepted until someone challenges it, and the one
//! appeal of the record stays open until the last of their ten-day deadlines. The state machine of records (`sync_core::records`) feeds every office event
//! through here on every copy, and the office's server refuses what this refuses before
//! writing, so no copy of a record can hold a procedure the law does not allow.
//!
//! What may come next: [`Procedure::next_steps`] asks [`Procedure::apply`] itself, with a
//! representative step of each kind dated on the day given, so the office's pages offer exactly
//! the steps this module would accept and never keep a second copy of these rules. The appeal
//! is offered while a filing date inside its window exists (art. 35): an appeal protocolled in
//! time may be recorded after the deadline, dated on its protocol; [`NextStep::until`] says the
//! last date the law accepts.
//!
//! Nothing here reads a clock: a step's date is the one recorded with it (the event's time,
//! or the date the offender signed, filed or was notified), so every copy reaches the same
//! verdict.

use chrono::{Days, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::deadline::{self, CalendarConfig};
use super::penalty::{Grade, NotInArt32};
use crate::domain::PenaltyKind;

/// Days to appeal from ciência (art. 35).
pub const APPEAL_DAYS: u32 = 10;

/// Result of a reconsideration (art. 34) or appeal (art. 33).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Penalty kept.
    Upheld,
    /// Penalty lifted.
    Reversed,
    /// Penalty replaced by the one in the event.
    Modified,
}

/// Where the procedure stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The record waits for the Unidade to take it up.
    Open,
    UnderReview,
    PenaltyProposed,
    PenaltyDecided,
    Notified,
    ReconsiderationFiled,
    ReconsiderationDecided,
    AppealFiled,
    AppealDecided,
}

/// One step of the procedure; [`Procedure::apply`] dates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Review,
    Propose {
        penalty: PenaltyKind,
    },
    Decide {
        penalty: PenaltyKind,
    },
    /// Ciência on `on`; `appeal_deadline` as the writer's calendar counted it (`None`: counted
    /// here with the built-in calendar).
    Notify {
        on: NaiveDate,
        appeal_deadline: Option<NaiveDate>,
    },
    FileReconsideration {
        on: NaiveDate,
    },
    DecideReconsideration {
        outcome: Outcome,
        penalty: Option<PenaltyKind>,
    },
    FileAppeal {
        on: NaiveDate,
    },
    DecideAppeal {
        outcome: Outcome,
        penalty: Option<PenaltyKind>,
    },
}

/// The kind of a [`Step`], without its values: what the office may record next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    Review,
    Propose,
    Decide,
    Notify,
    FileReconsideration,
    DecideReconsideration,
    FileAppeal,
    DecideAppeal,
}

impl StepKind {
    /// Every kind, in the order of the procedure.
    pub const ALL: [StepKind; 8] = [
        Self::Review,
        Self::Propose,
        Self::Decide,
        Self::Notify,
        Self::FileReconsideration,
        Self::DecideReconsideration,
        Self::FileAppeal,
        Self::DecideAppeal,
    ];

    /// What users read as a heading ("Decisão da penalidade").
    pub fn title_pt(self) -> &'static str {
        match self {
            Self::Review => "Análise",
            Self::Propose => "Proposta de penalidade",
            Self::Decide => "Decisão da penalidade",
            Self::Notify => "Ciência da decisão",
            Self::FileReconsideration => "Pedido de reconsideração",
            Self::DecideReconsideration => "Decisão da reconsideração",
            Self::FileAppeal => "Recurso ao Prefeito",
            Self::DecideAppeal => "Decisão do recurso",
        }
    }
}

/// A step the law allows next, and until when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NextStep {
    pub kind: StepKind,
    /// The last date the step may carry (the appeal: the art. 35 deadline); `None`: no limit.
    pub until: Option<NaiveDate>,
}

impl Step {
    /// The kind of this step.
    pub fn kind(&self) -> StepKind {
        match self {
            Self::Review => StepKind::Review,
            Self::Propose { .. } => StepKind::Propose,
            Self::Decide { .. } => StepKind::Decide,
            Self::Notify { .. } => StepKind::Notify,
            Self::FileReconsideration { .. } => StepKind::FileReconsideration,
            Self::DecideReconsideration { .. } => StepKind::DecideReconsideration,
            Self::FileAppeal { .. } => StepKind::FileAppeal,
            Self::DecideAppeal { .. } => StepKind::DecideAppeal,
        }
    }

    /// What users read, as the subject of a sentence.
    pub fn label_pt(&self) -> &'static str {
        match self {
            Self::Review => "a análise",
            Self::Propose { .. } => "a proposta de penalidade",
            Self::Decide { .. } => "a decisão de penalidade",
            Self::Notify { .. } => "a ciência",
            Self::FileReconsideration { .. } => "o pedido de reconsideração",
            Self::DecideReconsideration { .. } => "a decisão da reconsideração",
            Self::FileAppeal { .. } => "o recurso",
            Self::DecideAppeal { .. } => "a decisão do recurso",
        }
    }

    /// What users read after "a data …".
    fn of_pt(&self) -> &'static str {
        match self {
            Self::Review => "da análise",
            Self::Propose { .. } => "da proposta de penalidade",
            Self::Decide { .. } => "da decisão de penalidade",
            Self::Notify { .. } => "da ciência",
            Self::FileReconsideration { .. } => "do pedido de reconsideração",
            Self::DecideReconsideration { .. } => "da decisão da reconsideração",
            Self::FileAppeal { .. } => "do recurso",
            Self::DecideAppeal { .. } => "da decisão do recurso",
        }
    }
}

/// Why a step may not happen now (Portuguese, one sentence).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The step needs an earlier one that was not recorded.
    #[error("{step} exige antes {missing}")]
    Missing {
        step: &'static str,
        missing: &'static str,
    },
    /// The step does not fit where the procedure stands.
    #[error("{step} não cabe nesta fase do processo: {why}")]
    NotNow {
        step: &'static str,
        why: &'static str,
    },
    /// A step dated before one it must follow.
    #[error("a data {step} ({on}) é anterior à {earlier} ({earlier_on})")]
    Before {
        step: &'static str,
        on: String,
        earlier: &'static str,
        earlier_on: String,
    },
    #[error(
        "recurso intempestivo: interposto em {on}, após o prazo de 10 dias contados da ciência \
         em {notified}, que terminou em {deadline} (art. 35; R34)"
    )]
    LateAppeal {
        on: String,
        notified: String,
        deadline: String,
    },
    #[error(
        "o recurso ao Prefeito cabe uma única vez (art. 33; R34): já houve recurso neste processo"
    )]
    SecondAppeal,
    #[error("já houve pedido de reconsideração neste processo (art. 34)")]
    SecondReconsideration,
    #[error("não há penalidade em vigor de que recorrer")]
    NothingToAppeal,
    #[error(
        "o prazo de recurso informado ({given}) é menor que os 10 dias da ciência (art. 35; R34)"
    )]
    ShortDeadline { given: String },
    #[error("{0}")]
    Penalty(#[from] NotInArt32),
    #[error("data fora do calendário")]
    OutOfCalendar,
}

/// The procedure of one record: its phase, its penalty and the date of each step so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Procedure {
    pub phase: Phase,
    /// Local date of the occurrence: no step comes before it.
    pub occurred_on: NaiveDate,
    /// The penalty in force (decided, or as the latest ruling left it).
    pub penalty: Option<PenaltyKind>,
    pub reviewed_on: Option<NaiveDate>,
    pub proposed_on: Option<NaiveDate>,
    /// The latest decision: of the penalty, of a reconsideration or of the appeal.
    pub decided_on: Option<NaiveDate>,
    /// The latest ciência.
    pub notified_on: Option<NaiveDate>,
    /// Last day to appeal from the latest ciência (art. 35).
    pub appeal_deadline: Option<NaiveDate>,
    pub reconsideration_on: Option<NaiveDate>,
    pub appeal_on: Option<NaiveDate>,
}

fn br(d: NaiveDate) -> String {
    d.format("%d/%m/%Y").to_string()
}

/// Ciência + 10 calendar days (art. 35), before rolling to a business day.
fn nominal_appeal_deadline(notified: NaiveDate) -> Result<NaiveDate, StepError> {
    notified
        .checked_add_days(Days::new(u64::from(APPEAL_DAYS)))
        .ok_or(StepError::OutOfCalendar)
}

/// The art. 35 deadline counted with the built-in calendar (national and São Paulo holidays,
/// Carnival, Corpus Christi): what every copy computes when the ciência carries no deadline.
fn legal_appeal_deadline(notified: NaiveDate) -> Result<NaiveDate, StepError> {
    deadline::appeal_deadline(notified, &CalendarConfig::default())
        .map(|d| d.deadline)
        .map_err(|_| StepError::OutOfCalendar)
}

impl Procedure {
    /// A record that occurred on `occurred_on`, not yet taken up.
    pub fn open(occurred_on: NaiveDate) -> Self {
        Self {
            phase: Phase::Open,
            occurred_on,
            penalty: None,
            reviewed_on: None,
            proposed_on: None,
            decided_on: None,
            notified_on: None,
            appeal_deadline: None,
            reconsideration_on: None,
            appeal_on: None,
        }
    }

    /// The steps the law allows next on `today`, in the order of the procedure (see the module
    /// doc). Each is tried through [`Procedure::apply`] with the penalty in force (or a fine,
    /// which art. 32 always provides), an upheld ruling, and `today` as its date — the appeal
    /// dated on the last day of its window when that is earlier, so an appeal protocolled in
    /// time stays recordable. A second review is left out: the law accepts it, but it moves
    /// nothing.
    pub fn next_steps(&self, today: NaiveDate) -> Vec<NextStep> {
        let penalty = self.penalty.unwrap_or(PenaltyKind::Fine);
        let upheld = (Outcome::Upheld, None);
        StepKind::ALL
            .into_iter()
            .filter(|k| !(*k == StepKind::Review && self.reviewed_on.is_some()))
            .filter_map(|kind| {
                let (step, until) = match kind {
                    StepKind::Review => (Step::Review, None),
                    StepKind::Propose => (Step::Propose { penalty }, None),
                    StepKind::Decide => (Step::Decide { penalty }, None),
                    StepKind::Notify => (
                        Step::Notify {
                            on: today,
                            appeal_deadline: None,
                        },
                        None,
                    ),
                    StepKind::FileReconsideration => {
                        (Step::FileReconsideration { on: today }, None)
                    }
                    StepKind::DecideReconsideration => (
                        Step::DecideReconsideration {
                            outcome: upheld.0,
                            penalty: upheld.1,
                        },
                        None,
                    ),
                    StepKind::FileAppeal => {
                        let on = self.appeal_deadline.map_or(today, |d| d.min(today));
                        (Step::FileAppeal { on }, self.appeal_deadline)
                    }
                    StepKind::DecideAppeal => (
                        Step::DecideAppeal {
                            outcome: upheld.0,
                            penalty: upheld.1,
                        },
                        None,
                    ),
                };
                let at = match step {
                    Step::FileAppeal { on } => on,
                    _ => today,
                };
                self.apply(&step, at).ok().map(|_| NextStep { kind, until })
            })
            .collect()
    }

    /// `date` must not precede `earlier` (named `what` in the message).
    fn not_before(
        step: &Step,
        date: NaiveDate,
        earlier: Option<NaiveDate>,
        what: &'static str,
    ) -> Result<(), StepError> {
        match earlier {
            Some(e) if date < e => Err(StepError::Before {
                step: step.of_pt(),
                on: br(date),
                earlier: what,
                earlier_on: br(e),
            }),
            _ => Ok(()),
        }
    }

    /// The state after `step`, recorded on the local date `at`, or why the law does not
    /// allow it now (see the module doc).
    pub fn apply(&self, step: &Step, at: NaiveDate) -> Result<Self, StepError> {
        use Phase as P;
        let label = step.label_pt();
        let mut next = *self;
        // The date the law reads for this step: the one written in it, else when it was
        // recorded.
        let on = match step {
            Step::Notify { on, .. }
            | Step::FileReconsideration { on }
            | Step::FileAppeal { on } => *on,
            _ => at,
        };
        match step {
            Step::Review => {
                if !matches!(self.phase, P::Open | P::UnderReview | P::PenaltyProposed) {
                    return Err(StepError::NotNow {
                        step: label,
                        why: "a penalidade já foi decidida",
                    });
                }
                next.phase = P::UnderReview;
                next.reviewed_on = Some(on);
            }
            Step::Propose { penalty } => {
                Grade::exact(*penalty)?;
                match self.phase {
                    P::Open => {
                        return Err(StepError::Missing {
                            step: label,
                            missing: "a análise do registro pela Unidade de Transportes",
                        });
                    }
                    P::UnderReview | P::PenaltyProposed => {}
                    _ => {
                        return Err(StepError::NotNow {
                            step: label,
                            why: "a penalidade já foi decidida",
                        });
                    }
                }
                Self::not_before(step, on, self.reviewed_on, "análise")?;
                next.phase = P::PenaltyProposed;
                next.proposed_on = Some(on);
            }
            Step::Decide { penalty } => {
                Grade::exact(*penalty)?;
                match self.phase {
                    P::Open => {
                        return Err(StepError::Missing {
                            step: label,
                            missing: "a análise do registro pela Unidade de Transportes",
                        });
                    }
                    P::UnderReview => {
                        return Err(StepError::Missing {
                            step: label,
                            missing: "uma proposta de penalidade registrada",
                        });
                    }
                    P::PenaltyProposed => {}
                    _ => {
                        return Err(StepError::NotNow {
                            step: label,
                            why: "a penalidade já foi decidida; a mudança se faz por \
                                  reconsideração ou recurso",
                        });
                    }
                }
                Self::not_before(step, on, self.proposed_on, "proposta")?;
                next.phase = P::PenaltyDecided;
                next.penalty = Some(*penalty);
                next.decided_on = Some(on);
            }
            Step::Notify {
                on,
                appeal_deadline,
            } => {
                // `Notified`: another person charged with the same decision (the holder beside
                // an auxiliary, art. 32 § 2) takes notice too, before anyone challenges it.
                if !matches!(
                    self.phase,
                    P::PenaltyDecided | P::ReconsiderationDecided | P::AppealDecided | P::Notified
                ) {
                    return Err(StepError::Missing {
                        step: label,
                        missing: "uma decisão a notificar",
                    });
                }
                Self::not_before(step, *on, self.decided_on, "decisão notificada")?;
                let counted = legal_appeal_deadline(*on)?;
                let deadline = match appeal_deadline {
                    None => counted,
                    // A stored deadline may be later (a municipal holiday or closure the
                    // writer's calendar knows) but never shorter than the 10 days of art. 35.
                    Some(d) if *d >= nominal_appeal_deadline(*on)? => *d,
                    Some(d) => return Err(StepError::ShortDeadline { given: br(*d) }),
                };
                // Each person has ten days from their own ciência (art. 35) and the record has
                // one appeal: it stays open until the last of those deadlines.
                let (on, deadline) = match (self.phase, self.notified_on, self.appeal_deadline) {
                    (P::Notified, Some(first), Some(first_deadline)) => {
                        ((*on).max(first), deadline.max(first_deadline))
                    }
                    _ => (*on, deadline),
                };
                next.phase = P::Notified;
                next.notified_on = Some(on);
                next.appeal_deadline = Some(deadline);
            }
            Step::FileReconsideration { on } => {
                if self.appeal_on.is_some() || self.phase != P::Notified {
                    return Err(StepError::NotNow {
                        step: label,
                        why: "a reconsideração antecede o recurso e exige ciência da decisão \
                              (art. 34)",
                    });
                }
                if self.reconsideration_on.is_some() {
                    return Err(StepError::SecondReconsideration);
                }
                Self::not_before(step, *on, self.notified_on, "ciência")?;
                next.phase = P::ReconsiderationFiled;
                next.reconsideration_on = Some(*on);
            }
            Step::DecideReconsideration { outcome, penalty } => {
                if self.phase != P::ReconsiderationFiled {
                    return Err(StepError::Missing {
                        step: label,
                        missing: "um pedido de reconsideração pendente",
                    });
                }
                Self::not_before(step, on, self.reconsideration_on, "data do pedido")?;
                next.penalty = ruled(self.penalty, *outcome, *penalty)?;
                next.phase = P::ReconsiderationDecided;
                next.decided_on = Some(on);
            }
            Step::FileAppeal { on } => {
                if self.appeal_on.is_some() {
                    return Err(StepError::SecondAppeal);
                }
                if !matches!(self.phase, P::Notified | P::ReconsiderationDecided) {
                    return Err(StepError::Missing {
                        step: label,
                        missing: "a ciência da decisão (art. 35)",
                    });
                }
                if self.penalty.is_none() {
                    return Err(StepError::NothingToAppeal);
                }
                Self::not_before(step, *on, self.notified_on, "ciência")?;
                Self::not_before(step, *on, self.reconsideration_on, "reconsideração pedida")?;
                if let (Some(notified), Some(deadline)) = (self.notified_on, self.appeal_deadline)
                    && *on > deadline
                {
                    return Err(StepError::LateAppeal {
                        on: br(*on),
                        notified: br(notified),
                        deadline: br(deadline),
                    });
                }
                next.phase = P::AppealFiled;
                next.appeal_on = Some(*on);
            }
            Step::DecideAppeal { outcome, penalty } => {
                if self.phase != P::AppealFiled {
                    return Err(StepError::Missing {
                        step: label,
                        missing: "um recurso interposto",
                    });
                }
                Self::not_before(step, on, self.appeal_on, "data do recurso")?;
                next.penalty = ruled(self.penalty, *outcome, *penalty)?;
                next.phase = P::AppealDecided;
                next.decided_on = Some(on);
            }
        }
        // After the phase: "no ciência yet" says more than a date.
        Self::not_before(step, on, Some(self.occurred_on), "data da ocorrência")?;
        Ok(next)
    }
}

/// The penalty a ruling leaves in force. A modification names a penalty of art. 32 (an older
/// writer that named none keeps the one in force).
fn ruled(
    current: Option<PenaltyKind>,
    outcome: Outcome,
    penalty: Option<PenaltyKind>,
) -> Result<Option<PenaltyKind>, StepError> {
    Ok(match outcome {
        Outcome::Upheld => current,
        Outcome::Reversed => None,
        Outcome::Modified => match penalty {
            Some(p) => {
                Grade::exact(p)?;
                Some(p)
            }
            None => current,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, m, day).unwrap()
    }

    const FINE: PenaltyKind = PenaltyKind::Fine;

    /// Occurred 2 Nov, reviewed, proposed and decided on 10 Nov.
    fn decided() -> Procedure {
        let p = Procedure::open(d(11, 2));
        let p = p.apply(&Step::Review, d(11, 10)).unwrap();
        let p = p
            .apply(&Step::Propose { penalty: FINE }, d(11, 10))
            .unwrap();
        p.apply(&Step::Decide { penalty: FINE }, d(11, 10)).unwrap()
    }

    fn notify(on: NaiveDate) -> Step {
        Step::Notify {
            on,
            appeal_deadline: None,
        }
    }

    #[test]
    fn a_decision_needs_a_review_and_a_recorded_proposal() {
        let open = Procedure::open(d(11, 2));
        let e = open
            .apply(&Step::Decide { penalty: FINE }, d(11, 3))
            .unwrap_err();
        assert!(e.to_string().contains("exige antes a análise"), "{e}");
        let e = open
            .apply(&Step::Propose { penalty: FINE }, d(11, 3))
            .unwrap_err();
        assert!(matches!(e, StepError::Missing { .. }), "{e:?}");
        let reviewed = open.apply(&Step::Review, d(11, 3)).unwrap();
        let e = reviewed
            .apply(&Step::Decide { penalty: FINE }, d(11, 3))
            .unwrap_err();
        assert!(
            e.to_string().contains("proposta de penalidade registrada"),
            "{e}"
        );
        let p = decided();
        assert_eq!(p.phase, Phase::PenaltyDecided);
        assert_eq!(p.penalty, Some(FINE));
        assert_eq!(p.decided_on, Some(d(11, 10)));
        let e = p
            .apply(&Step::Decide { penalty: FINE }, d(11, 11))
            .unwrap_err();
        assert!(matches!(e, StepError::NotNow { .. }), "{e:?}");
    }

    #[test]
    fn penalties_art_32_does_not_provide_are_refused_at_every_step() {
        let thirty = PenaltyKind::Suspension { days: 30 };
        let reviewed = Procedure::open(d(11, 2))
            .apply(&Step::Review, d(11, 3))
            .unwrap();
        for step in [
            Step::Propose { penalty: thirty },
            Step::Decide { penalty: thirty },
        ] {
            let e = reviewed
                .apply(&Step::Propose { penalty: FINE }, d(11, 3))
                .unwrap()
                .apply(&step, d(11, 3))
                .unwrap_err();
            assert!(matches!(e, StepError::Penalty(_)), "{e:?}");
        }
        let filed = decided()
            .apply(&notify(d(11, 10)), d(11, 10))
            .unwrap()
            .apply(&Step::FileAppeal { on: d(11, 11) }, d(11, 11))
            .unwrap();
        let e = filed
            .apply(
                &Step::DecideAppeal {
                    outcome: Outcome::Modified,
                    penalty: Some(thirty),
                },
                d(11, 12),
            )
            .unwrap_err();
        assert!(e.to_string().contains("15 dias"), "{e}");
    }

    #[test]
    fn no_step_is_dated_before_the_occurrence_or_the_step_it_follows() {
        // A review dated before the occurrence.
        let e = Procedure::open(d(11, 2))
            .apply(&Step::Review, d(11, 1))
            .unwrap_err();
        assert!(e.to_string().contains("ocorrência (02/11/2026)"), "{e}");
        // Ciência the day before the decision: refused; on the day of the decision: accepted.
        let p = decided();
        let e = p.apply(&notify(d(11, 9)), d(11, 12)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a data da ciência (09/11/2026) é anterior à decisão notificada (10/11/2026)"
        );
        let n = p.apply(&notify(d(11, 10)), d(11, 12)).unwrap();
        // D+10 is Friday 20 Nov, a national holiday: the deadline rolls to Monday 23 Nov.
        assert_eq!(n.appeal_deadline, Some(d(11, 23)));
        // Reconsideration and appeal not before the ciência.
        for step in [
            Step::FileReconsideration { on: d(11, 9) },
            Step::FileAppeal { on: d(11, 9) },
        ] {
            let e = n.apply(&step, d(11, 12)).unwrap_err();
            assert!(e.to_string().contains("anterior à ciência"), "{e}");
        }
        // A ruling not before the filing it rules on.
        let r = n
            .apply(&Step::FileReconsideration { on: d(11, 13) }, d(11, 13))
            .unwrap();
        let e = r
            .apply(
                &Step::DecideReconsideration {
                    outcome: Outcome::Upheld,
                    penalty: None,
                },
                d(11, 12),
            )
            .unwrap_err();
        assert!(e.to_string().contains("anterior à data do pedido"), "{e}");
        let r = r
            .apply(
                &Step::DecideReconsideration {
                    outcome: Outcome::Upheld,
                    penalty: None,
                },
                d(11, 13),
            )
            .unwrap();
        assert_eq!(r.decided_on, Some(d(11, 13)));
        // A new ciência of the ruling: not before the ruling.
        let e = r.apply(&notify(d(11, 12)), d(11, 14)).unwrap_err();
        assert!(
            e.to_string().contains("decisão notificada (13/11/2026)"),
            "{e}"
        );
        // The appeal: not before the reconsideration it follows, and its ruling not before it.
        let a = r
            .apply(&Step::FileAppeal { on: d(11, 13) }, d(11, 14))
            .unwrap();
        let ruling = Step::DecideAppeal {
            outcome: Outcome::Reversed,
            penalty: None,
        };
        assert!(a.apply(&ruling, d(11, 12)).is_err());
        let done = a.apply(&ruling, d(11, 13)).unwrap();
        assert_eq!(done.penalty, None);
        assert_eq!(done.phase, Phase::AppealDecided);
    }

    #[test]
    fn each_person_charged_takes_notice_and_the_appeal_runs_to_the_last_deadline() {
        // The driver on Monday 2 Nov (deadline Thursday 12), the holder on Thursday 5 Nov
        // (deadline Monday 16, the 15th being a Sunday).
        let driver = Procedure::open(d(11, 1))
            .apply(&Step::Review, d(11, 2))
            .unwrap()
            .apply(&Step::Propose { penalty: FINE }, d(11, 2))
            .unwrap()
            .apply(&Step::Decide { penalty: FINE }, d(11, 2))
            .unwrap()
            .apply(&notify(d(11, 2)), d(11, 2))
            .unwrap();
        assert_eq!(driver.appeal_deadline, Some(d(11, 12)));
        let both = driver.apply(&notify(d(11, 5)), d(11, 5)).unwrap();
        assert_eq!(both.phase, Phase::Notified);
        assert_eq!(both.notified_on, Some(d(11, 5)));
        assert_eq!(both.appeal_deadline, Some(d(11, 16)));
        // Recorded in the other order, the same deadline: the later one stands.
        let other_order = driver.apply(&notify(d(10, 31)), d(11, 5));
        assert!(
            other_order.is_err(),
            "a ciência before the decision is refused"
        );
        assert!(
            both.apply(&Step::FileAppeal { on: d(11, 16) }, d(11, 16))
                .is_ok()
        );
        assert!(
            both.apply(&Step::FileAppeal { on: d(11, 17) }, d(11, 17))
                .is_err()
        );
        // Once someone asks for reconsideration, a late ciência no longer reopens anything.
        let filed = both
            .apply(&Step::FileReconsideration { on: d(11, 6) }, d(11, 6))
            .unwrap();
        assert!(filed.apply(&notify(d(11, 7)), d(11, 7)).is_err());
    }

    #[test]
    fn the_appeal_is_once_and_within_ten_days_of_ciencia() {
        // Ciência Monday 2 Nov (decided the same day): the deadline is Thursday 12 Nov.
        let p = Procedure::open(d(11, 1))
            .apply(&Step::Review, d(11, 2))
            .unwrap()
            .apply(&Step::Propose { penalty: FINE }, d(11, 2))
            .unwrap()
            .apply(&Step::Decide { penalty: FINE }, d(11, 2))
            .unwrap()
            .apply(&notify(d(11, 2)), d(11, 2))
            .unwrap();
        assert_eq!(p.appeal_deadline, Some(d(11, 12)));
        let on_time = p
            .apply(&Step::FileAppeal { on: d(11, 12) }, d(11, 12))
            .unwrap();
        let e = p
            .apply(&Step::FileAppeal { on: d(11, 13) }, d(11, 13))
            .unwrap_err();
        assert!(e.to_string().contains("intempestivo"), "{e}");
        let e = on_time
            .apply(&Step::FileAppeal { on: d(11, 12) }, d(11, 12))
            .unwrap_err();
        assert_eq!(e, StepError::SecondAppeal);
        // A stored deadline never shortens the 10 days.
        let decided = decided();
        let e = decided
            .apply(
                &Step::Notify {
                    on: d(11, 10),
                    appeal_deadline: Some(d(11, 19)),
                },
                d(11, 10),
            )
            .unwrap_err();
        assert!(e.to_string().contains("10 dias"), "{e}");
    }

    fn kinds(p: &Procedure, today: NaiveDate) -> Vec<StepKind> {
        p.next_steps(today).into_iter().map(|s| s.kind).collect()
    }

    #[test]
    fn next_steps_follow_the_procedure_and_leave_finished_steps_out() {
        use StepKind as K;
        let open = Procedure::open(d(11, 2));
        assert_eq!(kinds(&open, d(11, 3)), [K::Review]);
        let reviewed = open.apply(&Step::Review, d(11, 3)).unwrap();
        assert_eq!(kinds(&reviewed, d(11, 3)), [K::Propose]);
        let proposed = reviewed
            .apply(&Step::Propose { penalty: FINE }, d(11, 3))
            .unwrap();
        // A proposal may still be revised before the decision.
        assert_eq!(kinds(&proposed, d(11, 3)), [K::Propose, K::Decide]);
        let decided = decided();
        assert_eq!(kinds(&decided, d(11, 10)), [K::Notify]);
        let notified = decided.apply(&notify(d(11, 10)), d(11, 10)).unwrap();
        // Another person charged may still take notice; reconsideration or the appeal.
        assert_eq!(
            kinds(&notified, d(11, 12)),
            [K::Notify, K::FileReconsideration, K::FileAppeal]
        );
        let filed = notified
            .apply(&Step::FileReconsideration { on: d(11, 12) }, d(11, 12))
            .unwrap();
        assert_eq!(kinds(&filed, d(11, 12)), [K::DecideReconsideration]);
        let ruled = filed
            .apply(
                &Step::DecideReconsideration {
                    outcome: Outcome::Upheld,
                    penalty: None,
                },
                d(11, 13),
            )
            .unwrap();
        assert_eq!(kinds(&ruled, d(11, 13)), [K::Notify, K::FileAppeal]);
        let appealed = ruled
            .apply(&Step::FileAppeal { on: d(11, 13) }, d(11, 13))
            .unwrap();
        assert_eq!(kinds(&appealed, d(11, 13)), [K::DecideAppeal]);
        let done = appealed
            .apply(
                &Step::DecideAppeal {
                    outcome: Outcome::Upheld,
                    penalty: None,
                },
                d(11, 14),
            )
            .unwrap();
        // The ruling is notified; there is no second appeal.
        assert_eq!(kinds(&done, d(11, 14)), [K::Notify]);
        let noticed = done.apply(&notify(d(11, 14)), d(11, 14)).unwrap();
        assert!(!kinds(&noticed, d(11, 14)).contains(&K::FileAppeal));
    }

    #[test]
    fn the_appeal_is_offered_with_its_deadline_and_only_while_a_date_inside_it_exists() {
        // Ciência Monday 2 Nov: deadline Thursday 12 Nov.
        let p = Procedure::open(d(11, 1))
            .apply(&Step::Review, d(11, 2))
            .unwrap()
            .apply(&Step::Propose { penalty: FINE }, d(11, 2))
            .unwrap()
            .apply(&Step::Decide { penalty: FINE }, d(11, 2))
            .unwrap()
            .apply(&notify(d(11, 2)), d(11, 2))
            .unwrap();
        let appeal = |today| {
            p.next_steps(today)
                .into_iter()
                .find(|s| s.kind == StepKind::FileAppeal)
        };
        assert_eq!(appeal(d(11, 12)).and_then(|s| s.until), Some(d(11, 12)));
        // After the deadline an appeal protocolled in time can still be recorded, dated on its
        // protocol, and the kernel says until when.
        assert_eq!(appeal(d(11, 20)).and_then(|s| s.until), Some(d(11, 12)));
        // A reversal leaves nothing to appeal against.
        let reversed = p
            .apply(&Step::FileReconsideration { on: d(11, 3) }, d(11, 3))
            .unwrap()
            .apply(
                &Step::DecideReconsideration {
                    outcome: Outcome::Reversed,
                    penalty: None,
                },
                d(11, 4),
            )
            .unwrap();
        assert_eq!(
            kinds(&reversed, d(11, 4)),
            [StepKind::Notify],
            "only the ciência of the reversal"
        );
    }

    #[test]
    fn next_steps_agree_with_apply_for_every_kind() {
        // Whatever a phase offers, `apply` accepts on that day; what it leaves out (beyond a
        // repeated review) `apply` refuses.
        let today = d(11, 12);
        let mut states = vec![Procedure::open(d(11, 2))];
        let steps = [
            Step::Review,
            Step::Propose { penalty: FINE },
            Step::Decide { penalty: FINE },
            notify(today),
            Step::FileReconsideration { on: today },
            Step::DecideReconsideration {
                outcome: Outcome::Upheld,
                penalty: None,
            },
            Step::FileAppeal { on: d(11, 12) },
            Step::DecideAppeal {
                outcome: Outcome::Upheld,
                penalty: None,
            },
        ];
        for s in &steps {
            let last = *states.last().unwrap();
            states.push(last.apply(s, today).unwrap());
        }
        for p in &states {
            let offered = kinds(p, today);
            for (kind, step) in StepKind::ALL.into_iter().zip(steps.iter()) {
                assert_eq!(step.kind(), kind);
                let accepted = p.apply(step, today).is_ok()
                    && !(kind == StepKind::Review && p.reviewed_on.is_some());
                assert_eq!(offered.contains(&kind), accepted, "{:?} {kind:?}", p.phase);
            }
        }
    }
}
