//! R32 (art. 32): the grading of penalties as a **proposal** the Unidade de Transportes reads,
//! never a decision (art. 32 §1: "de acordo com sua gravidade", judged by the Unidade).
//!
//! Flow: [`propose`] takes the rules a record is classified under, the permit's decided
//! penalties (the registry's history) and the decision date, and returns a [`Proposal`] with
//! every reason spelled out in Portuguese:
//! 1. **base grade** per rule ([`base_grade`]): the law states cassação for R11 (art. 7) and R12
//!    (art. 8 §4, wording in force unverified), so those start at revocation; any other
//!    irregularity that grounds an auto starts at the lowest grade, the written warning
//!    (art. 32 I). Rules that are warnings or information ground no penalty. The strongest base
//!    among the record's rules counts;
//! 2. **recidivism**: decided penalties of the same permit in the [`RECIDIVISM_MONTHS`] before
//!    the decision (other records only) raise the proposal to one grade above the most severe
//!    of them — progressive discipline, so a second fault after a warning proposes a fine, and
//!    so on up to cassação;
//! 3. a fine carries its amount in force that year (art. 32 II, R$ 240,00 corrected by the IPCA,
//!    [`super::money`]).
//!
//! Why a data table and not the decree: Decreto 9.489/2012, which may hold an infraction table,
//! was not found (NOTES §1.3). The policy is deliberately simple and explained line by line so
//! that the office can depart from it knowingly; ADR 0012 records it.

use chrono::{Months, NaiveDate};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::catalogue::lookup;
use super::money::{self, Corrected, IpcaSeries};
use super::{Consequence, Severity};
use crate::domain::{Penalty, PenaltyKind};

/// How far back previous penalties count as recidivism. Twelve months: the alvará is renewed
/// yearly (art. 7), so a year is the span the office already reviews a permit over; older
/// penalties stay in the history shown, but do not raise the proposal.
pub const RECIDIVISM_MONTHS: u32 = 12;

/// The fine of art. 32 II in 2004 reais (R$ 240,00), corrected yearly (R22).
pub const FINE_BASE: Decimal = Decimal::from_parts(24000, 0, 0, false, 2);

/// The five grades of art. 32, mildest first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    /// I — advertência por escrito.
    WrittenWarning,
    /// II — multa.
    Fine,
    /// III — suspensão por 15 dias.
    Suspension15,
    /// IV — suspensão por 60 dias.
    Suspension60,
    /// V — cassação do alvará.
    Revocation,
}

impl Grade {
    /// The grade of a decided penalty; a suspension of another length counts as the nearest
    /// inciso at or above it (up to 15 days: III; longer: IV).
    pub fn of(kind: PenaltyKind) -> Self {
        match kind {
            PenaltyKind::WrittenWarning => Self::WrittenWarning,
            PenaltyKind::Fine => Self::Fine,
            PenaltyKind::Suspension { days } if days <= 15 => Self::Suspension15,
            PenaltyKind::Suspension { .. } => Self::Suspension60,
            PenaltyKind::Revocation => Self::Revocation,
        }
    }

    /// The penalty this grade imposes.
    pub fn penalty(self) -> PenaltyKind {
        match self {
            Self::WrittenWarning => PenaltyKind::WrittenWarning,
            Self::Fine => PenaltyKind::Fine,
            Self::Suspension15 => PenaltyKind::Suspension { days: 15 },
            Self::Suspension60 => PenaltyKind::Suspension { days: 60 },
            Self::Revocation => PenaltyKind::Revocation,
        }
    }

    /// The next grade up (revocation stays revocation).
    pub fn next(self) -> Self {
        match self {
            Self::WrittenWarning => Self::Fine,
            Self::Fine => Self::Suspension15,
            Self::Suspension15 => Self::Suspension60,
            Self::Suspension60 | Self::Revocation => Self::Revocation,
        }
    }

    /// Inciso of art. 32.
    pub fn inciso(self) -> &'static str {
        match self {
            Self::WrittenWarning => "I",
            Self::Fine => "II",
            Self::Suspension15 => "III",
            Self::Suspension60 => "IV",
            Self::Revocation => "V",
        }
    }
}

/// What users read for a penalty, e.g. "suspensão por 15 dias".
pub fn penalty_label_pt(kind: PenaltyKind) -> String {
    match kind {
        PenaltyKind::WrittenWarning => String::from("advertência por escrito"),
        PenaltyKind::Fine => String::from("multa"),
        PenaltyKind::Suspension { days } => format!("suspensão por {days} dias"),
        PenaltyKind::Revocation => String::from("cassação do alvará"),
    }
}

/// The article a penalty rests on, e.g. "Lei 4.019/2004, art. 32, III".
pub fn penalty_citation(kind: PenaltyKind) -> String {
    format!("Lei 4.019/2004, art. 32, {}", Grade::of(kind).inciso())
}

/// Where a rule's grading starts, and why (Portuguese). `None`: the rule grounds no penalty
/// (information, warnings, office refusals of registry changes).
pub fn base_grade(rule_id: &str) -> Option<(Grade, String)> {
    let rule = lookup(rule_id)?;
    if rule.repealed {
        return None;
    }
    match rule.consequence {
        Consequence::RevokePermit => Some((
            Grade::Revocation,
            format!(
                "{} ({}): a lei prevê a cassação do alvará{}",
                rule.id,
                rule.citation(),
                if rule.wording_verified {
                    String::new()
                } else {
                    String::from(
                        " na redação original; a redação em vigor não foi verificada (a prática \
                         local é advertir antes)",
                    )
                }
            ),
        )),
        Consequence::RevokeAuxiliaryLicence => Some((
            Grade::WrittenWarning,
            format!(
                "{} ({}): a cassação prevista é da licença do motorista auxiliar (providência de \
                 cadastro: retirá-lo do alvará); ao alvará do titular, que responde junto \
                 (art. 32, § 2º), propõe-se a gradação a partir da advertência",
                rule.id,
                rule.citation()
            ),
        )),
        Consequence::OfficeRefusal | Consequence::OfficeReview => None,
        _ if rule.severity == Severity::Irregular => Some((
            Grade::WrittenWarning,
            format!(
                "{} ({}): irregularidade sem gradação própria na lei; começa pela advertência por \
                 escrito (art. 32, I)",
                rule.id,
                rule.citation()
            ),
        )),
        _ => None,
    }
}

/// A previous penalty that counted as recidivism.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PriorPenalty {
    /// Registry id (`PEN-…`).
    pub penalty_id: String,
    pub kind: PenaltyKind,
    pub decided_on: NaiveDate,
    /// The record it came from, if any.
    pub record_id: Option<String>,
}

/// What the grading needs.
#[derive(Debug, Clone, Copy)]
pub struct ProposalInput<'a> {
    /// Rule ids the record is classified under.
    pub rule_ids: &'a [String],
    /// Decided penalties of the permit (the registry's history).
    pub history: &'a [&'a Penalty],
    /// The record being decided: its own penalties never count as recidivism.
    pub record_id: Option<&'a str>,
    /// Date of the decision (today, in Americana).
    pub on: NaiveDate,
    /// The registry's IPCA series, for the fine's amount.
    pub ipca: &'a IpcaSeries,
}

/// The system's proposal (R32), explained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Proposal {
    pub penalty: PenaltyKind,
    pub grade: Grade,
    /// E.g. "suspensão por 15 dias".
    pub label: String,
    /// E.g. "Lei 4.019/2004, art. 32, III".
    pub citation: String,
    /// The grade the rules alone lead to, and the rule that set it.
    pub base: Grade,
    pub base_rule: Option<String>,
    /// Previous penalties of the permit inside the window, most recent first.
    pub recidivism: Vec<PriorPenalty>,
    /// First day of the recidivism window.
    pub window_from: NaiveDate,
    /// The amount in force on the decision date, when the proposal is a fine.
    pub fine: Option<Corrected>,
    /// Why, line by line (Portuguese).
    pub reasons: Vec<String>,
    /// False when a rule it rests on has unverified wording in force.
    pub wording_verified: bool,
}

fn br(d: NaiveDate) -> String {
    d.format("%d/%m/%Y").to_string()
}

/// The fine of art. 32 II in force on `on` (R22), by the registry's IPCA series.
pub fn fine_amount(on: NaiveDate, ipca: &IpcaSeries) -> Result<Corrected, money::MoneyError> {
    money::corrected(FINE_BASE, chrono::Datelike::year(&on), ipca)
}

/// Grades a record (see the module doc).
pub fn propose(input: ProposalInput<'_>) -> Proposal {
    let mut reasons = Vec::new();
    let mut base = Grade::WrittenWarning;
    let mut base_rule = None;
    let mut wording_verified = true;
    let mut grounded = false;
    for id in input.rule_ids {
        if let Some(r) = lookup(id)
            && !r.wording_verified
        {
            wording_verified = false;
        }
        if let Some((grade, why)) = base_grade(id) {
            reasons.push(why);
            if !grounded || grade > base {
                base = grade;
                base_rule = Some(id.clone());
            }
            grounded = true;
        }
    }
    if !grounded {
        reasons.push(String::from(
            "Nenhuma das regras classificadas prevê penalidade própria: proposta mínima, \
             advertência por escrito (art. 32, I). Classifique o registro para uma proposta \
             fundamentada.",
        ));
    }
    let window_from = input
        .on
        .checked_sub_months(Months::new(RECIDIVISM_MONTHS))
        .unwrap_or(input.on);
    let mut recidivism: Vec<PriorPenalty> = input
        .history
        .iter()
        .filter(|p| p.decided_on >= window_from && p.decided_on <= input.on)
        .filter(|p| input.record_id.is_none() || p.record_id.as_deref() != input.record_id)
        .map(|p| PriorPenalty {
            penalty_id: p.id.clone(),
            kind: p.kind,
            decided_on: p.decided_on,
            record_id: p.record_id.clone(),
        })
        .collect();
    recidivism.sort_by(|a, b| (b.decided_on, &b.penalty_id).cmp(&(a.decided_on, &a.penalty_id)));
    let mut grade = base;
    if let Some(worst) = recidivism.iter().map(|p| Grade::of(p.kind)).max() {
        let listed: Vec<String> = recidivism
            .iter()
            .map(|p| {
                format!(
                    "{} ({}, {})",
                    p.penalty_id,
                    penalty_label_pt(p.kind),
                    br(p.decided_on)
                )
            })
            .collect();
        let raised = worst.next();
        if raised > grade {
            grade = raised;
        }
        reasons.push(format!(
            "Reincidência: {} penalidade(s) decidida(s) para este alvará nos últimos {} meses \
             (desde {}): {}. Propõe-se o grau seguinte ao mais grave já aplicado: {} \
             (art. 32, {}).",
            recidivism.len(),
            RECIDIVISM_MONTHS,
            br(window_from),
            listed.join("; "),
            penalty_label_pt(raised.penalty()),
            raised.inciso()
        ));
    } else {
        reasons.push(format!(
            "Sem penalidades decididas para este alvará nos últimos {RECIDIVISM_MONTHS} meses \
             (desde {}).",
            br(window_from)
        ));
    }
    let penalty = grade.penalty();
    let fine = if grade == Grade::Fine {
        match fine_amount(input.on, input.ipca) {
            Ok(c) => {
                reasons.push(format!(
                    "Valor da multa em {}: R$ {} (R$ 240,00 de 2004 corrigidos pelo IPCA, fator \
                     {}; art. 12, § 1º, e art. 32, II; R22).",
                    c.year,
                    c.amount,
                    c.factor.round_dp(6)
                ));
                Some(c)
            }
            Err(e) => {
                reasons.push(format!("Valor da multa ainda não calculável: {e}."));
                None
            }
        }
    } else {
        None
    };
    if !wording_verified {
        reasons.push(String::from(
            "Atenção: uma das regras cita dispositivo alterado cuja redação em vigor não foi \
             verificada.",
        ));
    }
    reasons.push(String::from(
        "Proposta do sistema (R32): a gradação cabe à Unidade de Transportes, conforme a \
         gravidade (art. 32, § 1º). A tabela do Decreto 9.489/2012 não foi localizada.",
    ));
    Proposal {
        penalty,
        grade,
        label: penalty_label_pt(penalty),
        citation: penalty_citation(penalty),
        base,
        base_rule,
        recidivism,
        window_from,
        fine,
        reasons,
        wording_verified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn pen(id: &str, kind: PenaltyKind, on: NaiveDate, record: Option<&str>) -> Penalty {
        Penalty {
            id: id.into(),
            permit_number: "0001".into(),
            person_id: None,
            kind,
            decided_on: on,
            starts_on: on,
            record_id: record.map(String::from),
        }
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn first_fault_is_a_written_warning_and_revocation_rules_start_high() {
        let rules = ids(&["R24"]);
        let p = propose(ProposalInput {
            rule_ids: &rules,
            history: &[],
            record_id: None,
            on: d(2026, 11, 30),
            ipca: &IpcaSeries::default(),
        });
        assert_eq!(p.penalty, PenaltyKind::WrittenWarning);
        assert_eq!(p.base_rule.as_deref(), Some("R24"));
        assert!(p.reasons[0].contains("art. 16"), "{:?}", p.reasons);
        assert!(p.wording_verified);
        let rules = ids(&["R24", "R12"]);
        let p = propose(ProposalInput {
            rule_ids: &rules,
            history: &[],
            record_id: None,
            on: d(2026, 11, 30),
            ipca: &IpcaSeries::default(),
        });
        assert_eq!(p.penalty, PenaltyKind::Revocation);
        assert_eq!(p.citation, "Lei 4.019/2004, art. 32, V");
        assert!(!p.wording_verified, "R12's wording in force is unknown");
    }

    #[test]
    fn recidivism_raises_one_grade_above_the_worst_in_twelve_months() {
        let on = d(2026, 11, 30);
        let old = pen(
            "PEN-2025-0001",
            PenaltyKind::Suspension { days: 60 },
            d(2025, 11, 29),
            None,
        );
        let warn = pen(
            "PEN-2026-0001",
            PenaltyKind::WrittenWarning,
            d(2026, 3, 1),
            Some("r-1"),
        );
        let own = pen(
            "PEN-2026-0002",
            PenaltyKind::Suspension { days: 15 },
            d(2026, 11, 1),
            Some("this"),
        );
        let history = [&old, &warn, &own];
        let rules = ids(&["R28"]);
        let p = propose(ProposalInput {
            rule_ids: &rules,
            history: &history,
            record_id: Some("this"),
            on,
            ipca: &IpcaSeries::default(),
        });
        // The 60-day suspension is one day outside the window; the record's own penalty never
        // counts: the warning alone raises the proposal to a fine, with its 2026 amount.
        assert_eq!(p.window_from, d(2025, 11, 30));
        assert_eq!(p.recidivism.len(), 1);
        assert_eq!(p.penalty, PenaltyKind::Fine);
        assert_eq!(p.fine.as_ref().unwrap().amount, Decimal::new(79702, 2));
        assert!(p.reasons.iter().any(|r| r.contains("PEN-2026-0001")));
        let fine = pen("PEN-2026-0003", PenaltyKind::Fine, d(2026, 6, 1), None);
        let history = [&warn, &fine];
        let p = propose(ProposalInput {
            rule_ids: &rules,
            history: &history,
            record_id: None,
            on,
            ipca: &IpcaSeries::default(),
        });
        assert_eq!(p.penalty, PenaltyKind::Suspension { days: 15 });
        assert_eq!(
            p.recidivism[0].penalty_id, "PEN-2026-0003",
            "most recent first"
        );
    }

    #[test]
    fn unclassified_records_get_the_minimum_and_say_why() {
        let p = propose(ProposalInput {
            rule_ids: &ids(&["D01", "R22"]),
            history: &[],
            record_id: None,
            on: d(2026, 11, 30),
            ipca: &IpcaSeries::default(),
        });
        assert_eq!(p.penalty, PenaltyKind::WrittenWarning);
        assert_eq!(p.base_rule, None);
        assert!(p.reasons[0].contains("Classifique"));
        assert_eq!(
            Grade::of(PenaltyKind::Suspension { days: 30 }),
            Grade::Suspension60
        );
        assert_eq!(Grade::Revocation.next(), Grade::Revocation);
    }
}
