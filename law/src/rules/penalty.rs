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
//! What art. 32 provides is defined here once and checked everywhere a penalty enters the
//! system (the proposal, the office's decision and rulings, `POST /v1/penalties`):
//! [`Grade::exact`] refuses any penalty the law does not list (a suspension is of 15 or 60
//! days, nothing else). What may ground a penalty is defined once too: [`grounds_penalty`]
//! (used by [`base_grade`]) and [`citable`], which every writer of a legal basis calls (the
//! app, the command line, the server's vetting of records and the office's classification), so
//! a repealed, disabled or non-infraction rule is never the basis of an auto.
//!
//! Why a data table and not the decree: Decreto 9.489/2012, which may hold an infraction table,
//! was not found. The policy is deliberately simple and explained line by line so
//! that the office can depart from it knowingly; ADR 0012 records it.

use chrono::{Months, NaiveDate};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::catalogue::{RuleId, RuleSpec, Scope, lookup, spec};
use super::money::{self, Corrected, IpcaSeries};
use super::{Consequence, RulesConfig, Severity};
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

/// A penalty art. 32 does not provide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotInArt32 {
    /// Suspensions are of 15 (III) or 60 (IV) days only.
    #[error(
        "A suspensão é de 15 dias (art. 32, III) ou de 60 dias (art. 32, IV): suspensão por \
         {days} dias não é penalidade prevista na lei."
    )]
    SuspensionLength { days: u16 },
}

impl Grade {
    /// Every grade, mildest first (art. 32 I–V).
    pub const ALL: [Self; 5] = [
        Self::WrittenWarning,
        Self::Fine,
        Self::Suspension15,
        Self::Suspension60,
        Self::Revocation,
    ];

    /// The grade of a penalty as art. 32 lists it, or why the law does not provide it. Every
    /// new penalty (decided, ruled on, or entered in the registry) passes here.
    pub fn exact(kind: PenaltyKind) -> Result<Self, NotInArt32> {
        let grade = Self::of(kind);
        if grade.penalty() == kind {
            Ok(grade)
        } else {
            let days = match kind {
                PenaltyKind::Suspension { days } => days,
                _ => 0,
            };
            Err(NotInArt32::SuspensionLength { days })
        }
    }

    /// The grade of a decided penalty already stored (history written before [`Grade::exact`]
    /// guarded every write); a suspension of another length counts as the nearest
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

/// Whether a rule may ground a penalty (art. 31–32): not repealed, not an office refusal of a
/// registry change or a matter for review, and either an irregularity or a cassação the law
/// states. Information and warnings ground nothing.
pub fn grounds_penalty(rule: &RuleSpec) -> bool {
    !rule.repealed
        && match rule.consequence {
            Consequence::RevokePermit | Consequence::RevokeAuxiliaryLicence => true,
            Consequence::OfficeRefusal | Consequence::OfficeReview => false,
            _ => rule.severity == Severity::Irregular,
        }
}

/// Whether a rule describes something an auto can charge: what the field check or an
/// officer finds in the street or in the records workflow (operating while suspended is R32,
/// charged beside the infraction of an auxiliary is R33). Not: the counter's refusals of a
/// registry change (scope office, or a refusal of the workflow such as an auto by a body art.
/// 36 does not name) and data-quality warnings. Wider than [`grounds_penalty`]: a field check
/// may raise a rule's severity (R32 is information in the catalogue, an irregularity when a
/// suspended taxi is found working).
pub fn is_infraction_rule(rule: &RuleSpec) -> bool {
    !matches!(rule.scope, Scope::Office | Scope::Data)
        && rule.consequence != Consequence::OfficeRefusal
}

/// Why a rule may not be cited as the legal basis of an auto or a classification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotCitable {
    #[error("A regra «{0}» não consta do catálogo.")]
    Unknown(String),
    #[error("{id} ({citation}) foi revogada e não fundamenta autuação.")]
    Repealed { id: RuleId, citation: String },
    #[error(
        "{id} ({citation}) está desativada na configuração das regras e não fundamenta autuação."
    )]
    Disabled { id: RuleId, citation: String },
    #[error(
        "{id} ({citation}) não descreve uma infração: não fundamenta auto nem penalidade \
         (art. 32)."
    )]
    NotAnInfraction { id: RuleId, citation: String },
}

impl NotCitable {
    /// The rule refused, when it is in the catalogue.
    pub fn rule_id(&self) -> Option<RuleId> {
        match self {
            Self::Unknown(_) => None,
            Self::Repealed { id, .. }
            | Self::Disabled { id, .. }
            | Self::NotAnInfraction { id, .. } => Some(*id),
        }
    }
}

/// The rule a legal basis names, if the law allows citing it (see [`citable`]) — the part
/// that does not depend on the configuration: unknown, repealed and non-infraction rules.
/// Used where no configuration is at hand (the checks a record's contents pass on the device
/// and in the server's vetting), so that both refuse the same records.
pub fn citable_in_law(id: &str) -> Result<&'static RuleSpec, NotCitable> {
    let typed = id.trim();
    let rule = RuleId::parse(&typed.to_ascii_uppercase())
        .map(spec)
        .ok_or_else(|| NotCitable::Unknown(typed.to_owned()))?;
    if rule.repealed {
        return Err(NotCitable::Repealed {
            id: rule.id,
            citation: rule.citation(),
        });
    }
    if !is_infraction_rule(rule) {
        return Err(NotCitable::NotAnInfraction {
            id: rule.id,
            citation: rule.citation(),
        });
    }
    Ok(rule)
}

/// The rule a legal basis names (`R24`, `r24`), if it may be cited under `config`: known,
/// in force, enabled, and an infraction rule. The one gate of every legal basis written.
pub fn citable(id: &str, config: &RulesConfig) -> Result<&'static RuleSpec, NotCitable> {
    let rule = citable_in_law(id)?;
    if !config.is_enabled(rule.id) {
        return Err(NotCitable::Disabled {
            id: rule.id,
            citation: rule.citation(),
        });
    }
    Ok(rule)
}

/// Where a rule's grading starts, and why (Portuguese). `None`: the rule grounds no penalty
/// (information, warnings, office refusals of registry changes).
pub fn base_grade(rule_id: &str) -> Option<(Grade, String)> {
    let rule = lookup(rule_id)?;
    if !grounds_penalty(rule) {
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
            "Reincidência: {} para este alvará nos últimos {} meses \
             (desde {}): {}. Propõe-se o grau seguinte ao mais grave já aplicado: {} \
             (art. 32, {}).",
            crate::text::plural_pt(
                recidivism.len() as u64,
                "penalidade decidida",
                "penalidades decididas"
            ),
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

    #[test]
    fn only_the_penalties_of_art_32_exist() {
        for g in Grade::ALL {
            assert_eq!(Grade::exact(g.penalty()), Ok(g));
        }
        for days in [0, 1, 14, 16, 30, 59, 61, u16::MAX] {
            let e = Grade::exact(PenaltyKind::Suspension { days }).unwrap_err();
            assert_eq!(e, NotInArt32::SuspensionLength { days });
            assert!(e.to_string().contains("15 dias (art. 32, III)"), "{e}");
        }
    }

    #[test]
    fn repealed_disabled_and_non_infraction_rules_are_not_citable() {
        let config = RulesConfig::default();
        assert_eq!(citable(" r24 ", &config).unwrap().id, RuleId::R24);
        for id in [RuleId::R15, RuleId::R39] {
            let e = citable(id.as_str(), &config).unwrap_err();
            assert!(matches!(e, NotCitable::Repealed { .. }), "{id}: {e:?}");
            assert!(e.to_string().contains("revogada"), "{e}");
            assert_eq!(e.rule_id(), Some(id));
        }
        let e = citable("R99", &config).unwrap_err();
        assert_eq!(e, NotCitable::Unknown("R99".into()));
        assert!(e.to_string().contains("não consta do catálogo"));
        // Office refusals, information and data warnings describe no infraction.
        for id in [
            RuleId::R03,
            RuleId::R23,
            RuleId::R35,
            RuleId::R43,
            RuleId::D01,
        ] {
            let e = citable(id.as_str(), &config).unwrap_err();
            assert!(
                matches!(e, NotCitable::NotAnInfraction { .. }),
                "{id}: {e:?}"
            );
        }
        // Disabled by default (R21) until the configuration enables it, and any rule the
        // configuration disables.
        assert!(matches!(
            citable("R21", &config),
            Err(NotCitable::Disabled { .. })
        ));
        let config = RulesConfig {
            enabled_rules: vec![RuleId::R21],
            disabled_rules: vec![RuleId::R24],
            ..RulesConfig::default()
        };
        assert_eq!(citable("R21", &config).unwrap().id, RuleId::R21);
        let e = citable("R24", &config).unwrap_err();
        assert!(e.to_string().contains("desativada"), "{e}");
        // Without a configuration only the law counts.
        assert_eq!(citable_in_law("R24").unwrap().id, RuleId::R24);
        assert!(citable_in_law("R39").is_err());
        // Operating while suspended is charged under R32.
        assert_eq!(citable_in_law("R32").unwrap().id, RuleId::R32);
        // Every rule that grounds a penalty is citable in law.
        for r in crate::rules::CATALOGUE {
            if base_grade(r.id.as_str()).is_some() {
                assert!(citable_in_law(r.id.as_str()).is_ok(), "{}", r.id);
            }
        }
    }
}
