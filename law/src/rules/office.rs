//! Office (counter) checks: what the central office verifies before it changes the registry.
//!
//! Each check is a pure function of the registry, the request and a date, and answers `Ok(())`
//! or a [`Refusal`] listing **every** reason, each a [`Finding`] that cites its rule and article
//! and says in Portuguese what is wrong. Messages name people and permit numbers, never CPFs.
//!
//! Flow of a registry write: the operation's own check of its article (`check_grant_permit`,
//! `check_renewal`, `check_transfer`, …) on the registry before it; then the write applied to a
//! copy and [`judge_write`] on the whole registry after it — the art. 14 cap over all stands
//! ([`check_cap`]), each stand's places ([`check_stand_places`]) and the field check
//! (`field::check`) of every permit the write touched. An act is refused for what it would make
//! irregular; what pre-existed, or what a record of facts reveals, comes back as warnings.
//!
//! Two kinds of reasons:
//! - *preconditions*: the request names something that does not exist, a revoked permit, or is
//!   meaningless (renewing a year already renewed, transferring a permit to its own holder,
//!   swapping a permit with itself). They are always checked, whatever the configuration, and
//!   are filed under the rule of the operation (R13, R03, R43, R11, R44) so that every reason
//!   still cites an article;
//! - *legal bars*: evaluated only when `config.is_enabled(rule)`.
//!
//! Driver requirements (art. 2, applied to auxiliaries by art. 8 §1 and to transfer receivers by
//! art. 10 II) may also yield warnings (R09 without EAR, by default): warnings never refuse; only
//! findings of severity `Irregular` do.
//!
//! Decisions where the law is silent or open are marked "Decisão:" below.
//!
//! Counting years (art. 10 I two years, art. 10 §2 three years, art. 2 ages): "de data a data"
//! (Lei 9.784/1999 art. 66 §3), the anniversary day being the first day the bar no longer
//! applies; a 29 February start with no anniversary ends on 1 March (Código Civil art. 132 §3).

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Datelike, Days, NaiveDate, TimeZone, Utc};
use rust_decimal::{Decimal, RoundingStrategy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Consequence, EarMissing, Finding, RuleId, RulesConfig, Severity};
use crate::domain::{
    DriverId, Fine, LicenceKind, Permit, PermitState, Person, Registry, RegistryIndex, Transfer,
    TransferReason,
};

/// Refused by the law: every reason, each citing its rule and article.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, thiserror::Error)]
#[error("{}", join_messages(.findings))]
pub struct Refusal {
    pub findings: Vec<Finding>,
}

/// `Ok(())` when the office may make the change.
pub type OfficeResult = Result<(), Refusal>;

impl Refusal {
    /// Ids of the rules that refused, in order (may repeat when a rule refuses twice).
    pub fn rule_ids(&self) -> Vec<&str> {
        self.findings.iter().map(|f| f.rule_id.as_str()).collect()
    }

    /// `Ok(())` when there is no reason to refuse.
    fn result(findings: Vec<Finding>) -> OfficeResult {
        if findings.is_empty() {
            Ok(())
        } else {
            Err(Self { findings })
        }
    }

    fn one(finding: Finding) -> OfficeResult {
        Err(Self {
            findings: vec![finding],
        })
    }
}

/// Each reason as its own sentence (capital letter, full stop), one after the other: never
/// "A.; b." when two rules refuse.
fn join_messages(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| crate::text::sentence_pt(&f.message))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A finding that makes the office refuse the requested change.
fn refuse(rule_id: RuleId, message: impl Into<String>) -> Finding {
    Finding::new(rule_id, message).with_consequence(Consequence::OfficeRefusal)
}

/// The permit and the person an operation is about, or a refusal naming whichever the registry
/// lacks (both when both are missing), filed under the operation's rule so it cites an article.
fn permit_and_person<'r>(
    index: &RegistryIndex<'r>,
    rule_id: RuleId,
    permit_number: &str,
    person_id: &str,
    person_label: &str,
) -> Result<(&'r Permit, &'r Person), Refusal> {
    match (index.permit(permit_number), index.person(person_id)) {
        (Some(permit), Some(person)) => Ok((permit, person)),
        (permit, person) => {
            let mut missing = Vec::new();
            if permit.is_none() {
                missing.push(refuse(
                    rule_id,
                    format!("O alvará {permit_number} não consta do cadastro."),
                ));
            }
            if person.is_none() {
                missing.push(refuse(
                    rule_id,
                    format!("{person_label} {person_id} não consta do cadastro."),
                ));
            }
            Err(Refusal { findings: missing })
        }
    }
}

/// The art. 2 findings of a person that refuse an office change (warnings do not).
fn driver_refusals(person: &Person, on: NaiveDate, config: &RulesConfig) -> Vec<Finding> {
    driver_requirements(person, on, config)
        .into_iter()
        .filter(|f| f.severity == Severity::Irregular)
        .map(|f| f.with_consequence(Consequence::OfficeRefusal))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Art. 8: auxiliary drivers
// ---------------------------------------------------------------------------------------------

/// Registering `person_id` as auxiliary driver of `permit_number` (art. 8).
///
/// Refuses when the permit or person is unknown, the permit is revoked, the person is its holder
/// or already its auxiliary (preconditions, R13); when the permit already has 2 auxiliaries (R13,
/// art. 8 caput); when the person is a registered auxiliary of another live permit (R14, art. 8
/// §2: the auxiliary's alvará is for the titular's vehicle, one vehicle); when the permit lapsed
/// (R11, art. 7); and when the person does not meet art. 2 (art. 8 §1).
///
/// Decisão: the holder of *another* permit may be registered as auxiliary here — art. 9 forbids
/// a second titular alvará, and an auxiliary's alvará is not one. Auxiliaries registered on
/// revoked permits do not count (the revoked alvará carries nobody).
pub fn check_add_auxiliary(
    index: &RegistryIndex<'_>,
    permit_number: &str,
    person_id: &str,
    on: NaiveDate,
    config: &RulesConfig,
) -> OfficeResult {
    let (permit, person) =
        permit_and_person(index, RuleId::R13, permit_number, person_id, "A pessoa")?;
    if let PermitState::Revoked { on: revoked_on } = permit.state {
        return Refusal::one(refuse(
            RuleId::R13,
            format!(
                "O alvará {} foi cassado em {}: não se inscrevem motoristas auxiliares em \
                 alvará cassado.",
                permit.number,
                br(revoked_on)
            ),
        ));
    }
    if permit.holder_id == person.id {
        return Refusal::one(refuse(
            RuleId::R13,
            format!(
                "{} é o titular do alvará {}: o titular não se inscreve como motorista \
                 auxiliar do próprio alvará (art. 8º).",
                person.name, permit.number
            ),
        ));
    }
    if permit.auxiliaries.iter().any(|a| a.person_id == person.id) {
        return Refusal::one(refuse(
            RuleId::R13,
            format!(
                "{} já é motorista auxiliar do alvará {}.",
                person.name, permit.number
            ),
        ));
    }

    let mut findings: Vec<Finding> = lapse_refusal(permit, on, config, "alterado")
        .into_iter()
        .collect();
    if config.is_enabled(RuleId::R13) && permit.auxiliaries.len() >= 2 {
        findings.push(refuse(
            RuleId::R13,
            format!(
                "O alvará {} já tem {} motoristas auxiliares (art. 8º: no máximo 2).",
                permit.number,
                permit.auxiliaries.len()
            ),
        ));
    }
    if config.is_enabled(RuleId::R14) {
        for other in index.permits_with_auxiliary(&person.id) {
            if other.number == permit.number || is_revoked(other) {
                continue;
            }
            findings.push(refuse(
                RuleId::R14,
                format!(
                    "{} já é motorista auxiliar do alvará {}: o alvará de auxiliar vale só para \
                     o veículo do alvará do titular (art. 8º, § 2º).",
                    person.name, other.number
                ),
            ));
        }
    }
    findings.extend(driver_refusals(person, on, config));
    Refusal::result(findings)
}

// ---------------------------------------------------------------------------------------------
// Arts. 1 §2, 9, 10 §2: granting a permit
// ---------------------------------------------------------------------------------------------

/// Granting a (new) permit to `person_id` on `on`.
///
/// Refuses when the person is unknown; already holds a permit that is not revoked (R03, art. 9;
/// suspended and in-succession permits still count); transferred a permit away less than three
/// years before `on` (R43, art. 10 §2, the message gives the first date allowed); or does not
/// meet art. 2.
///
/// Not checked here: the art. 1 §2 kinship bar (no kinship data; its wording in force is also
/// unknown), residence, criminal record and medical certificate (R41: documents, not registry
/// data), the art. 14 cap and the stand's places ([`judge_write`], on the registry after it).
///
/// Decisão: the three-year bar applies whatever the reason of the transfer (art. 10 §2 speaks of
/// "o permissionário alienante" without exceptions).
pub fn check_grant_permit(
    index: &RegistryIndex<'_>,
    person_id: &str,
    on: NaiveDate,
    config: &RulesConfig,
) -> OfficeResult {
    let Some(person) = index.person(person_id) else {
        return Refusal::one(refuse(
            RuleId::R03,
            format!("A pessoa {person_id} não consta do cadastro."),
        ));
    };
    let mut findings = Vec::new();
    if config.is_enabled(RuleId::R03) {
        findings.extend(holds_permit(index, person, None));
    }
    if config.is_enabled(RuleId::R43) {
        findings.extend(transferor_bar(index, person, on));
    }
    findings.extend(driver_refusals(person, on, config));
    Refusal::result(findings)
}

/// R03: the person already holds a live permit (other than `except`).
fn holds_permit(index: &RegistryIndex<'_>, person: &Person, except: Option<&str>) -> Vec<Finding> {
    index
        .permits_held_by(&person.id)
        .into_iter()
        .filter(|p| !is_revoked(p) && Some(p.number.as_str()) != except)
        .map(|p| {
            refuse(
                RuleId::R03,
                format!(
                    "{} já é titular do alvará {} (art. 9º: um único alvará por titular).",
                    person.name, p.number
                ),
            )
        })
        .collect()
}

/// R43, art. 10 §2: transfers made by the person less than three years before `on`.
pub(crate) fn transferor_bar(
    index: &RegistryIndex<'_>,
    person: &Person,
    on: NaiveDate,
) -> Vec<Finding> {
    index
        .registry
        .transfers
        .iter()
        .filter(|t| t.from_person_id == person.id && t.on <= on)
        .filter_map(|t| {
            let free_from = add_years(t.on, 3);
            (on < free_from).then(|| {
                refuse(
                    RuleId::R43,
                    format!(
                        "{} transferiu o alvará {} em {}: só pode inscrever-se para obter outra \
                         permissão a partir de {} (art. 10, § 2º: três anos após a \
                         transferência).",
                        person.name,
                        t.permit_number,
                        br(t.on),
                        br(free_from)
                    ),
                )
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Art. 14: the cap on the number of taxis
// ---------------------------------------------------------------------------------------------

/// Art. 14: at most 1 taxi per `inhabitants_per_taxi` inhabitants of the most recent census,
/// rounded down (floor is the conservative reading of "obedecida a proporção"). With the Censo
/// 2022 (237,240): 131 taxis at 1:1,800, 118 at 1:2,000.
///
/// Decisão: a ratio of 0 is a configuration error and yields a cap of 0 (every increase is
/// refused) rather than no cap.
pub fn taxi_cap(config: &RulesConfig) -> u32 {
    config
        .census_population
        .checked_div(config.inhabitants_per_taxi)
        .unwrap_or(0)
}

/// The taxis art. 14 counts in a registry: every place at a stand, open or filled, plus the
/// permits in force beyond their stand's places (data older than the stand rule).
///
/// Permits in force are those not revoked (suspended, in-succession and radio-taxi permits
/// count: they are taxis). A revoked permit's place stays open (art. 7: "declarado vago o
/// ponto") until the office closes it by lowering the stand's vacancies: an open vacancy is a
/// taxi the registry already allows, so filling it is no "aumento" (art. 3 orders it filled).
pub fn fleet_size(registry: &Registry) -> u64 {
    let mut live_at: BTreeMap<&str, u64> = BTreeMap::new();
    for p in registry.permits.iter().filter(|p| !is_revoked(p)) {
        *live_at.entry(p.stand_id.as_str()).or_default() += 1;
    }
    let mut total = 0u64;
    for s in &registry.stands {
        let live = live_at.remove(s.id.as_str()).unwrap_or(0);
        total = total.saturating_add(live.max(u64::from(s.vacancies)));
    }
    // Permits on a stand the registry does not have (it does not validate) still count.
    total.saturating_add(live_at.values().sum::<u64>())
}

/// R23, art. 14, on the whole registry after a write: refused when the write makes the count of
/// [`fleet_size`] larger than it was *and* larger than [`taxi_cap`]. Checked on every write
/// (stands and their vacancies, grants, reinstatements, imports), so the cap holds across
/// requests, not only within one.
///
/// Decisão: reaching the cap exactly is allowed ("obedecida a proporção" is met at equality).
/// A write that does not raise the count is no "aumento" and is never refused, even when the
/// registry is already above the cap (a new census, a new ratio): closing places is the way
/// down, and it is always allowed.
pub fn check_cap(before: &Registry, after: &Registry, config: &RulesConfig) -> OfficeResult {
    if !config.is_enabled(RuleId::R23) {
        return Ok(());
    }
    let (was, total) = (fleet_size(before), fleet_size(after));
    let cap = u64::from(taxi_cap(config));
    if total <= cap || total <= was {
        return Ok(());
    }
    let ratio = config.inhabitants_per_taxi;
    let source = match ratio {
        1_800 => String::from(
            "A proporção de 1 para 1.800 é a da Lei 5.498/2013 segundo fonte secundária \
             (notícia da Câmara Municipal, 2014); a redação em vigor do art. 14 não foi \
             verificada.",
        ),
        2_000 => String::from(
            "A proporção de 1 para 2.000 é a da redação original da Lei 4.019/2004; a Lei \
             5.498/2013 a alterou (para 1 para 1.800, segundo fonte secundária).",
        ),
        0 => String::from(
            "A proporção configurada é 0 habitantes por táxi, o que não é válido: corrija a \
             configuração.",
        ),
        other => format!(
            "A proporção de 1 para {} foi definida na configuração.",
            thousands(u64::from(other))
        ),
    };
    Refusal::one(refuse(
        RuleId::R23,
        format!(
            "A alteração levaria o cadastro de {} a {} táxis (alvarás em vigor e vagas abertas \
             em todos os pontos), acima do limite de {} do art. 14: 1 táxi para cada {} \
             habitantes (censo: {} habitantes; {} ÷ {} = {}); ainda cabem {}. {}",
            thousands(was),
            thousands(total),
            thousands(cap),
            thousands(u64::from(ratio)),
            thousands(u64::from(config.census_population)),
            thousands(u64::from(config.census_population)),
            thousands(u64::from(ratio)),
            thousands(cap),
            match cap.saturating_sub(was) {
                1 => "1 vaga".to_owned(),
                n => format!("{} vagas", thousands(n)),
            },
            source
        ),
    ))
}

/// R23, art. 14 and art. 15: a stand holds at most its vacancies in permits in force. Refused
/// when a write leaves a stand with more permits in force than places, and more in excess than
/// before (a grant or swap onto a full stand, vacancies lowered below the permits there, a
/// reinstatement on a stand whose place was given to someone else).
///
/// Decisão: filed under R23 because one more taxi at a full stand is "aumento das vagas nos
/// atuais pontos" (art. 14), which is made by raising the stand's vacancies first — a write the
/// cap then judges.
pub fn check_stand_places(
    before: &Registry,
    after: &Registry,
    config: &RulesConfig,
) -> OfficeResult {
    if !config.is_enabled(RuleId::R23) {
        return Ok(());
    }
    let excess = |reg: &Registry| -> BTreeMap<String, (u64, u32)> {
        let mut live: BTreeMap<&str, u64> = BTreeMap::new();
        for p in reg.permits.iter().filter(|p| !is_revoked(p)) {
            *live.entry(p.stand_id.as_str()).or_default() += 1;
        }
        reg.stands
            .iter()
            .map(|s| {
                let n = live.get(s.id.as_str()).copied().unwrap_or(0);
                (s.id.clone(), (n, s.vacancies))
            })
            .collect()
    };
    let (was, now) = (excess(before), excess(after));
    let findings = after
        .stands
        .iter()
        .filter_map(|s| {
            let (live, places) = now.get(&s.id).copied().unwrap_or((0, s.vacancies));
            let over = live.saturating_sub(u64::from(places));
            let was_over = was
                .get(&s.id)
                .map_or(0, |(l, v)| l.saturating_sub(u64::from(*v)));
            (over > was_over).then(|| {
                refuse(
                    RuleId::R23,
                    format!(
                        "O ponto {} tem {} e ficaria com {} em vigor: não há \
                         vaga aberta nele; um táxi a mais no ponto é aumento de vagas, que só se \
                         faz criando a vaga dentro da proporção do art. 14.",
                        s.name,
                        crate::text::plural_pt(u64::from(places), "vaga", "vagas"),
                        crate::text::plural_pt(live, "alvará", "alvarás")
                    ),
                )
            })
        })
        .collect();
    Refusal::result(findings)
}

// ---------------------------------------------------------------------------------------------
// Art. 10: transfer
// ---------------------------------------------------------------------------------------------

/// Transferring `permit_number` to `to_person_id` on `on` for `reason` (R43, art. 10).
///
/// Preconditions (R43): the permit and the receiver exist, the permit is not revoked, the
/// receiver is not the current holder. Bars:
/// - R43, art. 10 I: a voluntary transfer needs two years since the alvará was issued — or since
///   the permit's last transfer, which issued it to the current holder; death, retirement and
///   illness lift the bar. The "efetivo exercício" condition is not in the registry data;
/// - R43, art. 10 §2: the receiver transferred a permit away less than three years ago;
/// - R03, art. 9: the receiver already holds another live permit;
/// - R27, art. 17 §2 III: an unpaid fine on the permit;
/// - R11, art. 7: the permit lapsed (not renewed by the deadline of the year due);
/// - art. 10 II: the receiver meets art. 2.
///
/// A permit in succession (art. 1 §4) is transferred only by death (R43).
///
/// Decisão: an unpaid fine blocks a transfer because a transfer issues the alvará anew, in the
/// receiver's name, and art. 17 §2 III forbids issuing the alvará while the fine is unpaid.
/// The transfer fee and signatures (art. 10 §1) are conditions of the registration itself, not
/// checked here.
pub fn check_transfer(
    index: &RegistryIndex<'_>,
    permit_number: &str,
    to_person_id: &str,
    reason: TransferReason,
    on: NaiveDate,
    config: &RulesConfig,
) -> OfficeResult {
    let (permit, receiver) = permit_and_person(
        index,
        RuleId::R43,
        permit_number,
        to_person_id,
        "O recebedor",
    )?;
    if let PermitState::Revoked { on: revoked_on } = permit.state {
        return Refusal::one(refuse(
            RuleId::R43,
            format!(
                "O alvará {} foi cassado em {}: alvará cassado não se transfere.",
                permit.number,
                br(revoked_on)
            ),
        ));
    }
    if permit.holder_id == receiver.id {
        return Refusal::one(refuse(
            RuleId::R43,
            format!(
                "{} já é o titular do alvará {}: não há transferência a fazer.",
                receiver.name, permit.number
            ),
        ));
    }

    if let PermitState::InSuccession { since } = permit.state
        && reason != TransferReason::Death
    {
        return Refusal::one(refuse(
            RuleId::R43,
            format!(
                "O alvará {} está em sucessão desde {} (óbito do titular): o direito passa aos \
                 herdeiros (art. 1º, § 4º), e a transferência só se faz por óbito.",
                permit.number,
                br(since)
            ),
        ));
    }

    let mut findings: Vec<Finding> = lapse_refusal(permit, on, config, "transferido")
        .into_iter()
        .collect();
    if config.is_enabled(RuleId::R43) {
        if reason == TransferReason::Voluntary {
            let (since, what) = match last_transfer(index, &permit.number, on) {
                Some(t) if t.on > permit.issued_on => (t.on, "transferido"),
                _ => (permit.issued_on, "expedido"),
            };
            let free_from = add_years(since, 2);
            if on < free_from {
                findings.push(refuse(
                    RuleId::R43,
                    format!(
                        "O alvará {} foi {} em {}: a transferência voluntária só é possível a \
                         partir de {} (art. 10, I: dois anos, salvo morte, aposentadoria ou \
                         enfermidade por mais de seis meses).",
                        permit.number,
                        what,
                        br(since),
                        br(free_from)
                    ),
                ));
            }
        }
        findings.extend(transferor_bar(index, receiver, on));
    }
    if config.is_enabled(RuleId::R03) {
        findings.extend(holds_permit(index, receiver, Some(&permit.number)));
    }
    if config.is_enabled(RuleId::R27) {
        findings.extend(unpaid_fines(index, &permit.number, on).map(|f| {
            refuse(
                RuleId::R27,
                unpaid_fine_message(f, &permit.number, "transferido"),
            )
        }));
    }
    findings.extend(driver_refusals(receiver, on, config));
    Refusal::result(findings)
}

/// The permit's latest transfer on or before `on`.
fn last_transfer<'r>(
    index: &RegistryIndex<'r>,
    permit_number: &str,
    on: NaiveDate,
) -> Option<&'r Transfer> {
    index
        .registry
        .transfers
        .iter()
        .filter(|t| t.permit_number == permit_number && t.on <= on)
        .max_by_key(|t| t.on)
}

// ---------------------------------------------------------------------------------------------
// Art. 7: annual renewal
// ---------------------------------------------------------------------------------------------

/// Renewing `permit_number` for `year` on `on` (art. 7).
///
/// Preconditions (R11, art. 7): the permit exists, is not revoked, and is not already renewed
/// for `year`. Bars:
/// - R27, art. 17 §2 III: a fine issued by `on` and not paid by `on` (the message names the
///   amount);
/// - R02, art. 1 §1: the vehicle's taximeter verification is missing, its seal is not intact,
///   or it is no longer valid on `on` (valid while the label's "verificado até" year is not
///   past, or for `taximeter_period_years` after the verification date) — the proof is
///   presented at renewal;
/// - the holder's art. 2 requirements (art. 7 par. único II: the CNH is presented).
///
/// Art. 7 makes renewal annual and its deadline ([`renewal_deadline`]) a condition of the
/// permit itself ("a não renovação ... implicará na cassação automática da permissão"), so:
/// - R11 (precondition): only the next year due is renewed, `renewal_year + 1`; renewing for a
///   later year would skip annual renewals and the documents of par. único. The renewal for a
///   year is accepted from 1 January of the year before (Decisão: the law sets a deadline, not
///   an opening; a year ahead is what "anualmente" allows without chaining renewals);
/// - R11 (bar): when the deadline of the year due has passed without renewal, the permission
///   has lapsed by law and is not renewed: the office records the cassação and the vacancy.
///
/// Decisão: the lapse is the law's, not the office's: there is no late renewal to process. A
/// permit the field check already calls "cassação automática" (R11) cannot be made regular by
/// the counter.
///
/// Decisão: for a permit in succession (art. 1 §4) the deceased holder's CNH is not checked —
/// who drives for the heirs is an office review (R05), outside the registry data.
pub fn check_renewal(
    index: &RegistryIndex<'_>,
    permit_number: &str,
    year: i32,
    on: NaiveDate,
    config: &RulesConfig,
) -> OfficeResult {
    let Some(permit) = index.permit(permit_number) else {
        return Refusal::one(refuse(
            RuleId::R11,
            format!("O alvará {permit_number} não consta do cadastro."),
        ));
    };
    if let PermitState::Revoked { on: revoked_on } = permit.state {
        return Refusal::one(refuse(
            RuleId::R11,
            format!(
                "O alvará {} foi cassado em {}: alvará cassado não se renova.",
                permit.number,
                br(revoked_on)
            ),
        ));
    }
    if permit.renewal_year >= year {
        return Refusal::one(refuse(
            RuleId::R11,
            format!(
                "O alvará {} já está renovado para {}.",
                permit.number, permit.renewal_year
            ),
        ));
    }

    let mut findings = Vec::new();
    let due = permit.renewal_year.saturating_add(1);
    if year != due {
        findings.push(refuse(
            RuleId::R11,
            format!(
                "O alvará {} está renovado para {}: a renovação seguinte é a de {due}; renovar \
                 para {year} saltaria as renovações anuais intermediárias e seus documentos \
                 (art. 7º).",
                permit.number, permit.renewal_year
            ),
        ));
    } else if on.year() < year.saturating_sub(1) {
        findings.push(refuse(
            RuleId::R11,
            format!(
                "A renovação do alvará {} para {year} só pode ser feita a partir de 01/01/{} \
                 (art. 7º: renovação anual).",
                permit.number,
                year.saturating_sub(1)
            ),
        ));
    }
    findings.extend(lapse_refusal(permit, on, config, "renovado"));
    if config.is_enabled(RuleId::R27) {
        // Catalogue consequence kept: RenewalBlocked is exactly what art. 17 §2 III says.
        findings.extend(unpaid_fines(index, &permit.number, on).map(|f| {
            Finding::new(
                RuleId::R27,
                unpaid_fine_message(f, &permit.number, "renovado"),
            )
        }));
    }
    if config.is_enabled(RuleId::R02) {
        findings.extend(taximeter_refusal(index, permit, on, config));
    }
    if !matches!(permit.state, PermitState::InSuccession { .. }) {
        match index.person(&permit.holder_id) {
            Some(holder) => findings.extend(driver_refusals(holder, on, config)),
            None => findings.push(refuse(
                RuleId::R11,
                format!(
                    "O titular {} do alvará {} não consta do cadastro.",
                    permit.holder_id, permit.number
                ),
            )),
        }
    }
    Refusal::result(findings)
}

/// R11, art. 7: the permit was not renewed by the deadline of the year due, so its permission
/// lapsed by law ("cassação automática") on `on`; `what` is what it can no longer be
/// ("renovado", "transferido", …). Checked for every act on a permit — renewal, transfer,
/// swap, auxiliaries — so that the counter cannot act on a permit the field check calls lapsed.
fn lapse_refusal(
    permit: &Permit,
    on: NaiveDate,
    config: &RulesConfig,
    what: &str,
) -> Option<Finding> {
    let due = permit.renewal_year.saturating_add(1);
    let deadline = renewal_deadline(due)?;
    (config.is_enabled(RuleId::R11) && on > deadline).then(|| {
        refuse(
            RuleId::R11,
            format!(
                "O alvará {} não foi renovado para {due} até {}: a não renovação implica a \
                 cassação automática da permissão e a vacância do ponto (art. 7º); o alvará não \
                 pode mais ser {what}, e a cassação deve ser registrada.",
                permit.number,
                br(deadline)
            ),
        )
    })
}

/// R11, art. 7: whether the permission lapsed by law on `on` — not renewed by the deadline of
/// the year due (the same test that refuses acts on a lapsed permit). The office's lists show
/// such a permit as "não renovado" until the cassação is recorded.
pub fn permit_lapsed(permit: &Permit, on: NaiveDate, config: &RulesConfig) -> bool {
    lapse_refusal(permit, on, config, "").is_some()
}

/// Art. 7: the day of January by which the alvará is renewed for that year.
pub const RENEWAL_DEADLINE_DAY_OF_JANUARY: u32 = 31;

/// Art. 7: the last day to renew for `year` (31 January of that year), `None` out of range.
pub fn renewal_deadline(year: i32) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(year, 1, RENEWAL_DEADLINE_DAY_OF_JANUARY)
}

/// Fines on the permit issued by `on` and unpaid on `on`.
fn unpaid_fines<'r>(
    index: &RegistryIndex<'r>,
    permit_number: &str,
    on: NaiveDate,
) -> impl Iterator<Item = &'r Fine> {
    index
        .fines_of(permit_number)
        .into_iter()
        .filter(move |f| f.issued_on <= on && f.paid_on.is_none_or(|paid| paid > on))
}

fn unpaid_fine_message(fine: &Fine, permit_number: &str, what: &str) -> String {
    format!(
        "Multa {} de {}, aplicada em {} ao alvará {}, não foi paga: sem o recolhimento o alvará \
         não pode ser {} (art. 17, § 2º, III).",
        fine.id,
        brl(fine.amount),
        br(fine.issued_on),
        permit_number,
        what
    )
}

/// R02 at renewal: the taximeter proof of art. 1 §1.
fn taximeter_refusal(
    index: &RegistryIndex<'_>,
    permit: &Permit,
    on: NaiveDate,
    config: &RulesConfig,
) -> Option<Finding> {
    // RenewalBlocked (catalogue consequence) is what art. 1 §1 implies.
    let Some(vehicle) = index.vehicle(&permit.vehicle_id) else {
        return Some(Finding::new(
            RuleId::R02,
            format!(
                "O veículo {} do alvará {} não consta do cadastro: sem ele não há comprovante de \
                 aferição do taxímetro (art. 1º, § 1º).",
                permit.vehicle_id, permit.number
            ),
        ));
    };
    let plate = vehicle.plate.canonical();
    let Some(meter) = &vehicle.taximeter else {
        return Some(Finding::new(
            RuleId::R02,
            format!(
                "O táxi {plate} do alvará {} não tem comprovante de aferição do taxímetro pelo \
                 INMETRO, que deve ser apresentado na renovação (art. 1º, § 1º).",
                permit.number
            ),
        ));
    };
    if !meter.seal_intact {
        return Some(Finding::new(
            RuleId::R02,
            format!(
                "O lacre do taxímetro do táxi {plate} (alvará {}) não está intacto: é preciso \
                 nova aferição e lacração pelo INMETRO antes da renovação (art. 1º, § 1º).",
                permit.number
            ),
        ));
    }
    let label_ok = meter.valid_until_year.is_some_and(|y| y >= on.year());
    let period_ok = on < add_years(meter.verified_on, i32::from(config.taximeter_period_years));
    if label_ok || period_ok {
        return None;
    }
    let label = meter
        .valid_until_year
        .map(|y| format!(", selo \"verificado até {y}\""))
        .unwrap_or_default();
    Some(Finding::new(
        RuleId::R02,
        format!(
            "A aferição do taxímetro do táxi {plate} (alvará {}) é de {}{label} e já não vale em \
             {} (validade configurada: {}); apresente nova aferição do INMETRO (art. 1º, \
             § 1º).",
            permit.number,
            br(meter.verified_on),
            br(on),
            crate::text::plural_pt(u64::from(config.taximeter_period_years), "ano", "anos")
        ),
    ))
}

// ---------------------------------------------------------------------------------------------
// Art. 11: stand swap
// ---------------------------------------------------------------------------------------------

/// Swapping the stands of `permit_a` and `permit_b` (R44, art. 11).
///
/// Preconditions (R44): two different permits, both in the registry, neither revoked, on
/// different stands. Bars: either permit lapsed (R11, art. 7); the swap fee not paid (R44,
/// art. 11); a radio-taxi permit would land on a common-taxi stand, or a common taxi on a
/// radio-taxi place (R38, art. 28).
///
/// Decisão: unpaid fines do not block a swap — art. 17 §2 III blocks the *annual* alvará, and
/// the swap's new alvará (art. 11) keeps the year already renewed. Suspended permits may swap.
pub fn check_swap(
    index: &RegistryIndex<'_>,
    permit_a: &str,
    permit_b: &str,
    fee_paid: bool,
    on: NaiveDate,
    config: &RulesConfig,
) -> OfficeResult {
    if permit_a == permit_b {
        return Refusal::one(refuse(
            RuleId::R44,
            format!("A permuta exige dois alvarás diferentes (recebido {permit_a} duas vezes)."),
        ));
    }
    let mut pre = Vec::new();
    let mut found = Vec::new();
    for number in [permit_a, permit_b] {
        match index.permit(number) {
            None => pre.push(refuse(
                RuleId::R44,
                format!("O alvará {number} não consta do cadastro."),
            )),
            Some(Permit {
                state: PermitState::Revoked { on },
                ..
            }) => pre.push(refuse(
                RuleId::R44,
                format!(
                    "O alvará {number} foi cassado em {}: não pode participar de permuta.",
                    br(*on)
                ),
            )),
            Some(p) => found.push(p),
        }
    }
    let [a, b] = found[..] else {
        return Refusal::result(pre);
    };
    if a.stand_id == b.stand_id {
        return Refusal::one(refuse(
            RuleId::R44,
            format!(
                "Os alvarás {} e {} já são do mesmo ponto ({}): não há permuta a fazer.",
                a.number,
                b.number,
                stand_name(index, &a.stand_id)
            ),
        ));
    }

    let mut findings: Vec<Finding> = [a, b]
        .into_iter()
        .filter_map(|p| lapse_refusal(p, on, config, "permutado"))
        .collect();
    if config.is_enabled(RuleId::R44) && !fee_paid {
        findings.push(refuse(
            RuleId::R44,
            format!(
                "A taxa de permuta dos alvarás {} e {} não foi paga (art. 11: permuta só \
                 depois de paga a taxa).",
                a.number, b.number
            ),
        ));
    }
    if config.is_enabled(RuleId::R38) {
        for (moving, to) in [(a, b), (b, a)] {
            let Some(stand) = index.stand(&to.stand_id) else {
                continue;
            };
            if stand.service != moving.service {
                findings.push(refuse(
                    RuleId::R38,
                    format!(
                        "Com a permuta, o alvará {} ({}) passaria ao ponto {} ({}): \
                         rádio-táxis e táxis comuns não usam os mesmos pontos (art. 28).",
                        moving.number,
                        service_name(moving.service),
                        stand.name,
                        service_name(stand.service)
                    ),
                ));
            }
        }
    }
    Refusal::result(findings)
}

fn stand_name(index: &RegistryIndex<'_>, id: &str) -> String {
    index
        .stand(id)
        .map_or_else(|| id.to_owned(), |s| s.name.clone())
}

fn service_name(kind: crate::domain::ServiceKind) -> &'static str {
    match kind {
        crate::domain::ServiceKind::Common => "táxi comum",
        crate::domain::ServiceKind::RadioTaxi => "rádio-táxi",
    }
}

// ---------------------------------------------------------------------------------------------
// Art. 2: driver requirements
// ---------------------------------------------------------------------------------------------

/// Art. 2 / art. 8 §1 driver requirements checkable from registry data: R06 age ≥ 21, R07
/// category covers B (per `config.categories_covering_b`), R08 at least 2 full years since the
/// "1ª habilitação" and not a "P", R09 no "VEDADA ATIVIDADE REMUNERADA" (and EAR missing →
/// warning or irregular per `config.ear_missing`), R10 licence not expired (after
/// `config.cnh_grace_days`).
///
/// "Expedida há mais de dois anos" is met from the day after the second anniversary of the
/// first licence (periods per `time::Period`, as in the field check); the CNH's own issue date is
/// not used because a renewed CNH carries a recent one (docs/law/reference.md, CNH).
pub fn driver_requirements(person: &Person, on: NaiveDate, config: &RulesConfig) -> Vec<Finding> {
    let mut out = Vec::new();
    let name = &person.name;
    let lic = &person.licence;

    if config.is_enabled(RuleId::R06) {
        let age = full_years(person.birth_date, on);
        if !crate::time::Period::Years(21).completed(person.birth_date, on) {
            out.push(Finding::new(
                RuleId::R06,
                format!(
                    "{name} tem {age} anos em {}; o art. 2º, I exige idade mínima de 21 anos \
                     (completa 21 em {}).",
                    br(on),
                    br(add_years(person.birth_date, 21))
                ),
            ));
        }
    }

    if config.is_enabled(RuleId::R07) {
        let category = lic.category.trim().to_uppercase();
        let covers_b = config
            .categories_covering_b
            .iter()
            .any(|c| c.trim().eq_ignore_ascii_case(&category));
        if !covers_b {
            let shown = if category.is_empty() {
                String::from("não informada")
            } else {
                category
            };
            out.push(Finding::new(
                RuleId::R07,
                format!(
                    "A CNH de {name} é da categoria {shown}, que não abrange a categoria B \
                     exigida pelo art. 2º, II."
                ),
            ));
        }
    }

    if config.is_enabled(RuleId::R08) {
        let mut reasons = Vec::new();
        if lic.kind == LicenceKind::P {
            reasons.push(String::from(
                "é uma Permissão para Dirigir (P), não a habilitação definitiva",
            ));
        }
        // "expedida há mais de dois anos": the second anniversary itself is not more than two
        // years, the same reading as the field check.
        if !crate::time::Period::Years(2).exceeded(lic.first_licence_date, on) {
            reasons.push(format!(
                "a 1ª habilitação é de {} e os dois anos só se completam em {}",
                br(lic.first_licence_date),
                br(add_years(lic.first_licence_date, 2))
            ));
        }
        if !reasons.is_empty() {
            out.push(Finding::new(
                RuleId::R08,
                format!(
                    "A CNH de {name} {} (art. 2º, II: CNH expedida há mais de dois anos).",
                    reasons.join(", e ")
                ),
            ));
        }
    }

    if config.is_enabled(RuleId::R09) {
        if lic.forbids_paid_activity() {
            out.push(Finding::new(
                RuleId::R09,
                format!(
                    "A CNH de {name} traz \"VEDADA ATIVIDADE REMUNERADA\" (art. 2º, II: não pode \
                     constar)."
                ),
            ));
        } else if !lic.has_ear() {
            let severity = match config.ear_missing {
                EarMissing::Warning => Severity::Warning,
                EarMissing::Irregular => Severity::Irregular,
            };
            out.push(
                Finding::new(
                    RuleId::R09,
                    format!(
                        "A CNH de {name} não traz a observação EAR (exerce atividade \
                         remunerada; CTB, art. 147, § 5º)."
                    ),
                )
                .with_severity(severity),
            );
        }
    }

    if config.is_enabled(RuleId::R10) {
        let limit = lic
            .expiry
            .checked_add_days(Days::new(u64::from(config.cnh_grace_days)))
            .unwrap_or(NaiveDate::MAX);
        if on > limit {
            let grace = if config.cnh_grace_days > 0 {
                format!(
                    ", e a tolerância configurada de {} terminou em {}",
                    crate::text::plural_pt(u64::from(config.cnh_grace_days), "dia", "dias"),
                    br(limit)
                )
            } else {
                String::new()
            };
            out.push(Finding::new(
                RuleId::R10,
                format!(
                    "A CNH de {name} venceu em {}{grace} (art. 2º, II: CNH válida).",
                    br(lic.expiry)
                ),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Every write: the kernel on the whole registry after it
// ---------------------------------------------------------------------------------------------

/// What kind of registry write is judged (see [`judge_write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// The office grants or changes a right: a grant, renewal, transfer, swap, auxiliary,
    /// vacancies, a reinstatement. An irregularity it would create is refused: the clerk cures
    /// it first (records the taximeter, the new CRLV, the renewed CNH) and then acts.
    Act,
    /// The office records a fact or a decision already taken: people, vehicles, fines,
    /// payments, a suspension, revocation or succession. What it reveals comes back as
    /// warnings: refusing would keep the registry from saying what is true.
    Record,
}

/// What a write touched: its kind and the permits whose field situation it may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub kind: WriteKind,
    pub permits: BTreeSet<String>,
}

impl Touched {
    /// An act of the office (see [`WriteKind::Act`]).
    pub fn act() -> Self {
        Self {
            kind: WriteKind::Act,
            permits: BTreeSet::new(),
        }
    }

    /// A record of facts (see [`WriteKind::Record`]).
    pub fn record() -> Self {
        Self {
            kind: WriteKind::Record,
            permits: BTreeSet::new(),
        }
    }

    /// Also field-check this permit after the write.
    pub fn permit(mut self, number: impl Into<String>) -> Self {
        self.permits.insert(number.into());
        self
    }

    /// Also field-check these permits after the write.
    pub fn permits<'a>(mut self, numbers: impl IntoIterator<Item = &'a str>) -> Self {
        self.permits.extend(numbers.into_iter().map(str::to_owned));
        self
    }
}

/// The law on the whole registry after a write, the one judgement every registry write passes.
///
/// `after` is the registry as the write would leave it (built on a copy), `before` as it is.
/// Two kinds of reasons:
/// - the registry-wide office rules: the art. 14 cap over all stands ([`check_cap`]) and the
///   places of each stand ([`check_stand_places`]); they refuse any write that breaks them
///   anew, whatever its kind;
/// - the field check (`field::check`) of every touched permit, with its holder and then each of
///   its auxiliaries at the wheel, on `on` at noon in Americana (no observation: only what the
///   registry says). A finding the same permit already had before the write (same rule, same
///   text, with any of its drivers) pre-existed; any other was created or changed by the write.
///
/// Answer: `Err` with the registry-wide reasons and, for a [`WriteKind::Act`], every
/// irregularity the write created; otherwise `Ok` with the warnings — every other finding of
/// severity warning or irregular on the touched permits — for the office to see. Each field
/// finding is prefixed with the permit and the person at the wheel, by name (never a CPF).
///
/// Decisão: created-or-changed is judged by text because the field check's messages are a
/// deterministic function of the facts (dates, plate, permit): a changed text is a changed fact.
pub fn judge_write(
    before: &Registry,
    after: &Registry,
    touched: &Touched,
    on: NaiveDate,
    config: &RulesConfig,
) -> Result<Vec<Finding>, Refusal> {
    let mut refusals: Vec<Finding> = Vec::new();
    for bar in [
        check_cap(before, after, config),
        check_stand_places(before, after, config),
    ] {
        if let Err(r) = bar {
            refusals.extend(r.findings);
        }
    }

    let at = noon(on);
    let (before_index, after_index) = (before.index(), after.index());
    let mut warnings = Vec::new();
    for number in &touched.permits {
        let Some(permit) = after_index.permit(number) else {
            continue;
        };
        let known: BTreeSet<FindingKey> = before_index
            .permit(number)
            .map(|p| field_findings(&before_index, p, at, config))
            .unwrap_or_default()
            .into_iter()
            .map(|(driver, f)| finding_key(&driver, &f))
            .collect();
        let mut seen: BTreeSet<FindingKey> = BTreeSet::new();
        for (driver, f) in field_findings(&after_index, permit, at, config) {
            let key = finding_key(&driver, &f);
            if f.severity < Severity::Warning || !seen.insert(key.clone()) {
                continue;
            }
            let created = !known.contains(&key);
            let message = format!(
                "Alvará {}, com {} ao volante: {}",
                permit.number, driver.label, f.message
            );
            let f = Finding { message, ..f };
            if created && touched.kind == WriteKind::Act && f.severity == Severity::Irregular {
                refusals.push(f.with_consequence(Consequence::OfficeRefusal));
            } else {
                warnings.push(f);
            }
        }
    }
    if refusals.is_empty() {
        Ok(warnings)
    } else {
        Err(Refusal { findings: refusals })
    }
}

/// The rules of the field check about the person at the wheel (art. 8 role, art. 2 licence and
/// age, the person's data): their findings are that person's, the others the permit's.
const DRIVER_RULES: &[RuleId] = &[
    RuleId::R04,
    RuleId::R06,
    RuleId::R07,
    RuleId::R08,
    RuleId::R09,
    RuleId::R10,
    RuleId::R12,
    RuleId::R14,
    RuleId::D01,
    RuleId::D02,
];

/// A driver of a judged field check: person id and "Name (titular)" for messages.
struct Driver {
    person_id: String,
    label: String,
}

/// What makes two findings the same: rule and text, and the person for a driver's finding (two
/// drivers' CNHs expiring the same day are two findings).
type FindingKey = (Option<String>, RuleId, String);

fn finding_key(driver: &Driver, f: &Finding) -> FindingKey {
    let person = DRIVER_RULES
        .contains(&f.rule_id)
        .then(|| driver.person_id.clone());
    (person, f.rule_id, f.message.clone())
}

/// The field findings of `permit` with each of its drivers at the wheel, holder first.
fn field_findings(
    index: &RegistryIndex<'_>,
    permit: &Permit,
    at: DateTime<Utc>,
    config: &RulesConfig,
) -> Vec<(std::rc::Rc<Driver>, Finding)> {
    // The holder of a permit in succession is deceased (art. 1 § 4): nobody may drive as them,
    // so their CPF at the wheel is always irregular in the field. That says nothing about the
    // write being judged, so only the auxiliaries drive in this check.
    let holder_drives = !matches!(
        permit.state,
        crate::domain::PermitState::InSuccession { .. }
    );
    let drivers = holder_drives
        .then_some((permit.holder_id.as_str(), "titular"))
        .into_iter()
        .chain(
            permit
                .auxiliaries
                .iter()
                .map(|a| (a.person_id.as_str(), "motorista auxiliar")),
        );
    let mut out = Vec::new();
    for (id, role) in drivers {
        let Some(person) = index.person(id) else {
            continue;
        };
        let input = super::CheckInput {
            vehicle: super::VehicleQuery::Permit(permit.number.clone()),
            driver: DriverId::Cpf(person.cpf.clone()),
            at,
            observation: super::Observation::default(),
            registry_refreshed_at: None,
        };
        let driver = std::rc::Rc::new(Driver {
            person_id: person.id.clone(),
            label: format!("{} ({role})", person.name),
        });
        out.extend(
            super::field::check_registry(index, &input, config)
                .findings
                .into_iter()
                .map(|f| (driver.clone(), f)),
        );
    }
    out
}

/// Noon of `on` in Americana: the instant an office write is field-checked at (no rule without
/// an observation depends on the hour).
fn noon(on: NaiveDate) -> DateTime<Utc> {
    let local = on.and_time(chrono::NaiveTime::MIN) + chrono::Duration::hours(12);
    crate::time::LOCAL_TZ
        .from_local_datetime(&local)
        .earliest()
        .map_or_else(|| local.and_utc(), |t| t.with_timezone(&Utc))
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

pub(crate) fn is_revoked(permit: &Permit) -> bool {
    matches!(permit.state, PermitState::Revoked { .. })
}

/// `date` plus `years`, "de data a data" (Código Civil art. 132 § 3, via `time::Period`): 29
/// February without an anniversary → 1 March. Out of range → `NaiveDate::MAX` (a bar never lifts
/// by overflow).
pub(crate) fn add_years(date: NaiveDate, years: i32) -> NaiveDate {
    u32::try_from(years)
        .ok()
        .and_then(|y| crate::time::Period::Years(y).ends_on(date))
        .unwrap_or(NaiveDate::MAX)
}

/// Full years from `from` to `on` (age); 0 when `on` is before `from`.
fn full_years(from: NaiveDate, on: NaiveDate) -> u32 {
    on.years_since(from).unwrap_or(0)
}

/// Date as Brazilians write it: 01/09/2025.
pub(crate) fn br(date: NaiveDate) -> String {
    date.format("%d/%m/%Y").to_string()
}

/// Integer with "." thousands separators: 237.240.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

/// Amount in reais, Brazilian style: R$ 1.234,56 (rounded to centavos, half away from zero).
fn brl(amount: Decimal) -> String {
    let mut rounded = amount.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(2);
    let text = rounded.abs().to_string();
    let (int, frac) = text.split_once('.').unwrap_or((text.as_str(), "00"));
    let grouped = int
        .parse::<u64>()
        .map_or_else(|_| int.to_owned(), thousands);
    let sign = if rounded.is_sign_negative() && !rounded.is_zero() {
        "-"
    } else {
        ""
    };
    format!("{sign}R$ {grouped},{frac}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::domain::{Registry, ServiceKind, Transfer};
    use crate::testkit::{STRANGER_CPF, sample_registry};

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    /// Reference date of the sample registry.
    fn today() -> NaiveDate {
        d(2026, 11, 30)
    }

    fn cfg() -> RulesConfig {
        RulesConfig::default()
    }

    fn refusal(r: OfficeResult) -> Refusal {
        match r {
            Err(refusal) => refusal,
            Ok(()) => panic!("expected a refusal, got Ok"),
        }
    }

    /// Asserts a refusal whose rule ids are exactly `ids` (in order), and returns it.
    fn refused(r: OfficeResult, ids: &[&str]) -> Refusal {
        let refusal = refusal(r);
        assert_eq!(refusal.rule_ids(), ids, "{refusal:#?}");
        for f in &refusal.findings {
            assert_eq!(f.severity, Severity::Irregular, "{f:?}");
        }
        refusal
    }

    fn cites(refusal: &Refusal, article: &str) {
        assert!(
            refusal
                .findings
                .iter()
                .all(|f| f.citation.contains(article)),
            "every finding should cite {article}: {refusal:#?}"
        );
    }

    fn no_cpf(reg: &Registry, refusal: &Refusal) {
        let text = refusal.to_string();
        for p in &reg.people {
            assert!(!text.contains(p.cpf.as_str()), "CPF leaked: {text}");
        }
        assert!(!text.contains(STRANGER_CPF));
    }

    #[test]
    fn a_permit_lapses_the_day_after_its_renewal_deadline() {
        let reg = sample_registry();
        let mut p = reg.permits[0].clone();
        p.renewal_year = 2025;
        assert!(!permit_lapsed(&p, d(2026, 1, 31), &cfg()));
        assert!(permit_lapsed(&p, d(2026, 2, 1), &cfg()));
        let mut off = cfg();
        off.disabled_rules.push(RuleId::R11);
        assert!(!permit_lapsed(&p, d(2026, 2, 1), &off));
    }

    fn person_mut<'a>(reg: &'a mut Registry, id: &str) -> &'a mut Person {
        reg.people.iter_mut().find(|p| p.id == id).unwrap()
    }

    fn permit_mut<'a>(reg: &'a mut Registry, number: &str) -> &'a mut Permit {
        reg.permits.iter_mut().find(|p| p.number == number).unwrap()
    }

    // ----- Refusal -------------------------------------------------------------------------

    #[test]
    fn refusal_display_joins_messages() {
        let r = Refusal {
            findings: vec![
                Finding::new(RuleId::R13, "um"),
                Finding::new(RuleId::R14, "dois"),
            ],
        };
        // Each reason its own sentence, never "um; dois".
        assert_eq!(r.to_string(), "Um. Dois.");
        assert_eq!(r.rule_ids(), ["R13", "R14"]);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["findings"][1]["rule_id"], "R14");
    }

    // ----- art. 8: auxiliaries -------------------------------------------------------------

    #[test]
    fn third_auxiliary_refused() {
        let reg = sample_registry();
        let r = refused(
            check_add_auxiliary(&reg.index(), "0001", "P10", today(), &cfg()),
            &["R13"],
        );
        cites(&r, "art. 8");
        assert_eq!(
            r.to_string(),
            "O alvará 0001 já tem 2 motoristas auxiliares (art. 8º: no máximo 2)."
        );
        assert_eq!(r.findings[0].consequence, Consequence::OfficeRefusal);
        no_cpf(&reg, &r);
    }

    #[test]
    fn second_auxiliary_allowed() {
        let reg = sample_registry();
        assert_eq!(
            check_add_auxiliary(&reg.index(), "0002", "P10", today(), &cfg()),
            Ok(())
        );
        // And a first one on a permit without auxiliaries.
        assert_eq!(
            check_add_auxiliary(&reg.index(), "0003", "P10", today(), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn third_auxiliary_allowed_when_r13_disabled() {
        let reg = sample_registry();
        let mut config = cfg();
        config.disabled_rules.push(RuleId::R13);
        assert_eq!(
            check_add_auxiliary(&reg.index(), "0001", "P10", today(), &config),
            Ok(())
        );
    }

    #[test]
    fn auxiliary_already_registered_or_holder_refused() {
        let reg = sample_registry();
        let r = refused(
            check_add_auxiliary(&reg.index(), "0001", "P02", today(), &cfg()),
            &["R13"],
        );
        assert!(
            r.to_string()
                .contains("Maria Oliveira já é motorista auxiliar do alvará 0001")
        );
        let r = refused(
            check_add_auxiliary(&reg.index(), "0002", "P04", today(), &cfg()),
            &["R13"],
        );
        assert!(
            r.to_string()
                .contains("Ana Pereira é o titular do alvará 0002")
        );
    }

    #[test]
    fn auxiliary_of_another_permit_refused_art_8_par_2() {
        let reg = sample_registry();
        // P05 is auxiliary of 0002; 0003 has no auxiliary.
        let r = refused(
            check_add_auxiliary(&reg.index(), "0003", "P05", today(), &cfg()),
            &["R14"],
        );
        cites(&r, "art. 8, § 2");
        assert!(r.to_string().contains("alvará 0002"), "{r}");
        // Once 0002 is revoked, P05 is free to be registered elsewhere.
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0002").state = PermitState::Revoked { on: d(2026, 6, 1) };
        assert_eq!(
            check_add_auxiliary(&reg.index(), "0003", "P05", today(), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn holder_of_another_permit_may_be_auxiliary() {
        let reg = sample_registry();
        assert_eq!(
            check_add_auxiliary(&reg.index(), "0003", "P09", today(), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn unknown_permit_or_person_refused_without_panic() {
        let reg = sample_registry();
        let r = refused(
            check_add_auxiliary(&reg.index(), "9999", "P77", today(), &cfg()),
            &["R13", "R13"],
        );
        assert!(r.to_string().contains("alvará 9999 não consta"));
        assert!(r.to_string().contains("pessoa P77 não consta"));
        // Preconditions hold even when the rule is disabled.
        let mut config = cfg();
        config.disabled_rules.push(RuleId::R13);
        refused(
            check_add_auxiliary(&reg.index(), "0002", "P77", today(), &config),
            &["R13"],
        );
    }

    #[test]
    fn revoked_permit_takes_no_auxiliary() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0002").state = PermitState::Revoked { on: d(2026, 6, 1) };
        let r = refused(
            check_add_auxiliary(&reg.index(), "0002", "P10", today(), &cfg()),
            &["R13"],
        );
        assert!(r.to_string().contains("cassado em 01/06/2026"));
    }

    #[test]
    fn auxiliary_must_meet_art_2() {
        // P08 is auxiliary of 0004 (R14) and has an expired CNH (R10): both reasons reported.
        let reg = sample_registry();
        let r = refused(
            check_add_auxiliary(&reg.index(), "0002", "P08", today(), &cfg()),
            &["R14", "R10"],
        );
        assert!(r.findings[1].citation.contains("art. 2"));
        assert_eq!(r.findings[1].consequence, Consequence::OfficeRefusal);
        assert!(r.to_string().contains("venceu em 01/10/2026"), "{r}");

        let mut reg = sample_registry();
        let p = person_mut(&mut reg, "P10");
        p.birth_date = d(2006, 1, 1);
        p.licence.category = "A".into();
        p.licence.kind = LicenceKind::P;
        p.licence.first_licence_date = d(2026, 2, 1);
        p.licence.observations = vec!["VEDADA ATIVIDADE REMUNERADA".into()];
        let r = refused(
            check_add_auxiliary(&reg.index(), "0002", "P10", today(), &cfg()),
            &["R06", "R07", "R08", "R09"],
        );
        cites(&r, "art. 2");
        assert!(r.to_string().contains("tem 20 anos"), "{r}");
        assert!(r.to_string().contains("completa 21 em 01/01/2027"), "{r}");
        assert!(r.to_string().contains("01/02/2028"), "{r}");
        no_cpf(&reg, &r);
    }

    // ----- art. 2 ----------------------------------------------------------------------------

    #[test]
    fn driver_requirements_edges() {
        let reg = sample_registry();
        let mut p = reg.people[9].clone();
        assert!(driver_requirements(&p, today(), &cfg()).is_empty());

        // Age: 21 on the birthday, not the day before.
        p.birth_date = d(2005, 11, 30);
        assert!(driver_requirements(&p, today(), &cfg()).is_empty());
        p.birth_date = d(2005, 12, 1);
        let ids: Vec<_> = driver_requirements(&p, today(), &cfg())
            .into_iter()
            .map(|f| f.rule_id)
            .collect();
        assert_eq!(ids, ["R06"]);

        // "More than two years" of licence: the day after the second anniversary, not the
        // anniversary itself (the field check reads it the same way).
        let mut p = reg.people[9].clone();
        p.licence.first_licence_date = d(2024, 11, 29);
        assert!(driver_requirements(&p, today(), &cfg()).is_empty());
        p.licence.first_licence_date = d(2024, 11, 30);
        assert_eq!(driver_requirements(&p, today(), &cfg())[0].rule_id, "R08");
        // 29 February: two years end on 1 March (Código Civil art. 132 § 3).
        p.licence.first_licence_date = d(2024, 2, 29);
        assert_eq!(
            driver_requirements(&p, d(2026, 3, 1), &cfg())[0].rule_id,
            "R08"
        );
        assert!(driver_requirements(&p, d(2026, 3, 2), &cfg()).is_empty());

        // Categories covering B are accepted, in any case; A alone is not.
        let mut p = reg.people[9].clone();
        p.licence.category = "ae".into();
        assert!(driver_requirements(&p, today(), &cfg()).is_empty());
        p.licence.category = "A".into();
        assert_eq!(driver_requirements(&p, today(), &cfg())[0].rule_id, "R07");

        // Expiry: valid through the printed date; grace from configuration.
        let mut p = reg.people[9].clone();
        p.licence.expiry = today();
        assert!(driver_requirements(&p, today(), &cfg()).is_empty());
        p.licence.expiry = d(2026, 11, 29);
        assert_eq!(driver_requirements(&p, today(), &cfg())[0].rule_id, "R10");
        let mut config = cfg();
        config.cnh_grace_days = 30;
        assert!(driver_requirements(&p, today(), &config).is_empty());
    }

    #[test]
    fn missing_ear_warns_by_default_and_refuses_when_configured() {
        let mut reg = sample_registry();
        person_mut(&mut reg, "P10").licence.observations.clear();
        let found = driver_requirements(&reg.people[9], today(), &cfg());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule_id, "R09");
        assert_eq!(found[0].severity, Severity::Warning);
        assert_eq!(
            check_add_auxiliary(&reg.index(), "0002", "P10", today(), &cfg()),
            Ok(())
        );
        let mut config = cfg();
        config.ear_missing = EarMissing::Irregular;
        refused(
            check_add_auxiliary(&reg.index(), "0002", "P10", today(), &config),
            &["R09"],
        );
    }

    // ----- arts. 9, 10 §2: grant -------------------------------------------------------------

    #[test]
    fn second_permit_refused() {
        let reg = sample_registry();
        let r = refused(
            check_grant_permit(&reg.index(), "P01", today(), &cfg()),
            &["R03"],
        );
        cites(&r, "art. 9");
        assert!(
            r.to_string()
                .contains("João da Silva já é titular do alvará 0001")
        );
        // A suspended permit still counts.
        refused(
            check_grant_permit(&reg.index(), "P06", today(), &cfg()),
            &["R03"],
        );
    }

    #[test]
    fn first_permit_allowed_and_revoked_one_does_not_count() {
        let reg = sample_registry();
        assert_eq!(
            check_grant_permit(&reg.index(), "P10", today(), &cfg()),
            Ok(())
        );
        // An auxiliary may become a titular.
        assert_eq!(
            check_grant_permit(&reg.index(), "P02", today(), &cfg()),
            Ok(())
        );
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0001").state = PermitState::Revoked { on: d(2026, 2, 1) };
        assert_eq!(
            check_grant_permit(&reg.index(), "P01", today(), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn grant_refuses_unknown_person_and_checks_art_2() {
        let reg = sample_registry();
        let r = refused(
            check_grant_permit(&reg.index(), "P99", today(), &cfg()),
            &["R03"],
        );
        assert!(r.to_string().contains("P99"));
        refused(
            check_grant_permit(&reg.index(), "P08", today(), &cfg()),
            &["R10"],
        );
    }

    fn with_transfer(from: &str, to: &str, on: NaiveDate, reason: TransferReason) -> Registry {
        let mut reg = sample_registry();
        reg.transfers.push(Transfer {
            permit_number: "0003".into(),
            from_person_id: from.into(),
            to_person_id: to.into(),
            on,
            reason,
        });
        reg
    }

    #[test]
    fn transferor_reapplying_within_three_years_refused() {
        // P10 transferred 0003 to P06 on 01/12/2023: barred until 30/11/2026 inclusive.
        let reg = with_transfer("P10", "P06", d(2023, 12, 1), TransferReason::Voluntary);
        let r = refused(
            check_grant_permit(&reg.index(), "P10", d(2026, 11, 30), &cfg()),
            &["R43"],
        );
        cites(&r, "art. 10");
        assert!(r.findings[0].citation.contains("art. 10, § 2"));
        assert!(r.to_string().contains("a partir de 01/12/2026"), "{r}");
        assert!(r.to_string().contains("em 01/12/2023"), "{r}");
    }

    #[test]
    fn transferor_reapplying_after_three_years_allowed() {
        let reg = with_transfer("P10", "P06", d(2023, 12, 1), TransferReason::Voluntary);
        assert_eq!(
            check_grant_permit(&reg.index(), "P10", d(2026, 12, 1), &cfg()),
            Ok(())
        );
        // The receiver of that transfer is not barred by it (P02 receives, P02 applies).
        let reg = with_transfer("P10", "P02", d(2025, 12, 1), TransferReason::Voluntary);
        assert_eq!(
            check_grant_permit(&reg.index(), "P02", today(), &cfg()),
            Ok(())
        );
        // Any reason bars the transferor (art. 10 §2 has no exception).
        let reg = with_transfer("P10", "P06", d(2025, 1, 1), TransferReason::Retirement);
        refused(
            check_grant_permit(&reg.index(), "P10", today(), &cfg()),
            &["R43"],
        );
    }

    #[test]
    fn three_years_from_29_february_end_on_1_march() {
        let reg = with_transfer("P10", "P06", d(2024, 2, 29), TransferReason::Voluntary);
        let r = refused(
            check_grant_permit(&reg.index(), "P10", d(2027, 2, 28), &cfg()),
            &["R43"],
        );
        assert!(r.to_string().contains("a partir de 01/03/2027"), "{r}");
        assert_eq!(
            check_grant_permit(&reg.index(), "P10", d(2027, 3, 1), &cfg()),
            Ok(())
        );
    }

    // ----- art. 14: cap ----------------------------------------------------------------------

    #[test]
    fn cap_arithmetic() {
        let mut config = cfg();
        assert_eq!(taxi_cap(&config), 131);
        config.inhabitants_per_taxi = 2_000;
        assert_eq!(taxi_cap(&config), 118);
        config.census_population = 246_655;
        assert_eq!(taxi_cap(&config), 123);
        config.inhabitants_per_taxi = 1_800;
        assert_eq!(taxi_cap(&config), 137);
        config.inhabitants_per_taxi = 0;
        assert_eq!(taxi_cap(&config), 0);
    }

    /// `reg` with `vacancies` places at `stand` (the sample has 4 stands of 10 places: 40).
    fn with_places(reg: &Registry, stand: &str, vacancies: u32) -> Registry {
        let mut next = reg.clone();
        next.stands
            .iter_mut()
            .find(|s| s.id == stand)
            .unwrap()
            .vacancies = vacancies;
        next
    }

    #[test]
    fn fleet_counts_places_open_or_filled() {
        let mut reg = sample_registry();
        assert_eq!(fleet_size(&reg), 40);
        // A revoked permit's place stays open: revoking frees no room under the cap.
        permit_mut(&mut reg, "0004").state = PermitState::Revoked { on: d(2026, 2, 1) };
        assert_eq!(fleet_size(&reg), 40);
        // Permits beyond their stand's places count one by one.
        let reg = with_places(&sample_registry(), "S02", 0);
        assert_eq!(fleet_size(&reg), 32);
    }

    #[test]
    fn cap_131_at_1800_at_the_edge() {
        let reg = sample_registry(); // 40 places
        let config = cfg();
        assert_eq!(
            check_cap(&reg, &with_places(&reg, "S01", 10 + 91), &config),
            Ok(())
        );
        let r = refused(
            check_cap(&reg, &with_places(&reg, "S01", 10 + 92), &config),
            &["R23"],
        );
        cites(&r, "art. 14");
        let text = r.to_string();
        for needle in [
            "de 40 a 132 táxis",
            "limite de 131",
            "ainda cabem 91",
            "1.800",
            "237.240",
            "5.498/2013",
            "fonte secundária",
        ] {
            assert!(text.contains(needle), "{needle:?} missing in {text}");
        }
        assert!(!r.findings[0].wording_verified);
    }

    #[test]
    fn cap_118_at_2000() {
        let reg = sample_registry();
        let mut config = cfg();
        config.inhabitants_per_taxi = 2_000;
        config.census_population = 237_240;
        assert_eq!(
            check_cap(&reg, &with_places(&reg, "S03", 10 + 78), &config),
            Ok(())
        );
        let r = refused(
            check_cap(&reg, &with_places(&reg, "S03", 10 + 79), &config),
            &["R23"],
        );
        let text = r.to_string();
        for needle in ["a 119 táxis", "limite de 118", "2.000", "redação original"] {
            assert!(text.contains(needle), "{needle:?} missing in {text}");
        }
    }

    #[test]
    fn cap_holds_across_writes_not_only_within_one() {
        // Room for 13 more: cap 53 over 40 places.
        let config = RulesConfig {
            census_population: 53 * 1_800,
            ..cfg()
        };
        let reg = sample_registry();
        let first = with_places(&reg, "S01", 23);
        assert_eq!(check_cap(&reg, &first, &config), Ok(()));
        // The next +1 is judged on the registry after the first, anywhere in the city.
        let second = with_places(&first, "S02", 11);
        let r = refused(check_cap(&first, &second, &config), &["R23"]);
        assert!(r.to_string().contains("ainda cabem 0"), "{r}");
        // A new stand with places is an increase too.
        let mut third = first.clone();
        let mut stand = third.stands[0].clone();
        stand.id = "S09".into();
        stand.vacancies = 1;
        third.stands.push(stand);
        refused(check_cap(&first, &third, &config), &["R23"]);
    }

    #[test]
    fn above_the_cap_only_increases_are_refused() {
        let config = RulesConfig {
            census_population: 10 * 1_800, // cap 10, the registry has 40 places
            ..cfg()
        };
        let reg = sample_registry();
        assert_eq!(check_cap(&reg, &reg, &config), Ok(()));
        assert_eq!(
            check_cap(&reg, &with_places(&reg, "S01", 9), &config),
            Ok(())
        );
        refused(
            check_cap(&reg, &with_places(&reg, "S01", 11), &config),
            &["R23"],
        );
        let mut off = config.clone();
        off.disabled_rules.push(RuleId::R23);
        assert_eq!(
            check_cap(&reg, &with_places(&reg, "S01", 10_000), &off),
            Ok(())
        );
        // A zero ratio refuses every increase and says why.
        let mut zero = cfg();
        zero.inhabitants_per_taxi = 0;
        let r = refused(
            check_cap(&reg, &with_places(&reg, "S01", 11), &zero),
            &["R23"],
        );
        assert!(r.to_string().contains("não é válido"));
    }

    #[test]
    fn a_stand_holds_at_most_its_places() {
        // S02 has 0002 and 0004: two places are exactly enough, one is not.
        let reg = sample_registry();
        let two = with_places(&reg, "S02", 2);
        assert_eq!(check_stand_places(&reg, &two, &cfg()), Ok(()));
        let r = refused(
            check_stand_places(&reg, &with_places(&reg, "S02", 1), &cfg()),
            &["R23"],
        );
        assert!(
            r.to_string()
                .contains("O ponto Praça Basílio Rangel tem 1 vaga e ficaria com 2 alvarás"),
            "{r}"
        );
        // A permit moved onto the full stand.
        let mut full = two.clone();
        permit_mut(&mut full, "0001").stand_id = "S02".into();
        refused(check_stand_places(&two, &full, &cfg()), &["R23"]);
        // A stand already over its places that the write leaves as it was is not refused.
        let over = with_places(&reg, "S02", 1);
        let mut renamed = over.clone();
        renamed.stands[1].name = "Praça B. Rangel".into();
        assert_eq!(check_stand_places(&over, &renamed, &cfg()), Ok(()));
    }

    // ----- art. 10: transfer -----------------------------------------------------------------

    #[test]
    fn transfer_allowed_after_two_years() {
        let reg = sample_registry(); // 0001 issued 01/06/2015
        assert_eq!(
            check_transfer(
                &reg.index(),
                "0001",
                "P10",
                TransferReason::Voluntary,
                today(),
                &cfg()
            ),
            Ok(())
        );
        // The auxiliary of the permit may receive it.
        assert_eq!(
            check_transfer(
                &reg.index(),
                "0001",
                "P02",
                TransferReason::Voluntary,
                today(),
                &cfg()
            ),
            Ok(())
        );
    }

    #[test]
    fn voluntary_transfer_under_two_years_refused_death_allowed() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0001").issued_on = d(2025, 6, 1);
        // Renewed ahead so that the 2027 dates below are not after an art. 7 lapse.
        permit_mut(&mut reg, "0001").renewal_year = 2027;
        let r = refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P10",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R43"],
        );
        cites(&r, "art. 10");
        assert!(r.to_string().contains("expedido em 01/06/2025"), "{r}");
        assert!(r.to_string().contains("a partir de 01/06/2027"), "{r}");
        for reason in [
            TransferReason::Death,
            TransferReason::Retirement,
            TransferReason::Illness,
        ] {
            assert_eq!(
                check_transfer(&reg.index(), "0001", "P10", reason, today(), &cfg()),
                Ok(()),
                "{reason:?}"
            );
        }
        // Edge: on the second anniversary it is allowed, the day before it is not.
        assert_eq!(
            check_transfer(
                &reg.index(),
                "0001",
                "P10",
                TransferReason::Voluntary,
                d(2027, 6, 1),
                &cfg()
            ),
            Ok(())
        );
        refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P10",
                TransferReason::Voluntary,
                d(2027, 5, 31),
                &cfg(),
            ),
            &["R43"],
        );
    }

    #[test]
    fn two_years_count_from_the_last_transfer() {
        // 0003 issued 2015, transferred P10 → P06 on 01/12/2025 (renewed ahead for 2027).
        let mut reg = with_transfer("P10", "P06", d(2025, 12, 1), TransferReason::Death);
        permit_mut(&mut reg, "0003").renewal_year = 2027;
        let r = refused(
            check_transfer(
                &reg.index(),
                "0003",
                "P02",
                TransferReason::Voluntary,
                d(2027, 11, 30),
                &cfg(),
            ),
            &["R43"],
        );
        assert!(r.to_string().contains("transferido em 01/12/2025"), "{r}");
        assert_eq!(
            check_transfer(
                &reg.index(),
                "0003",
                "P02",
                TransferReason::Voluntary,
                d(2027, 12, 1),
                &cfg()
            ),
            Ok(())
        );
    }

    #[test]
    fn transfer_receiver_bars() {
        let reg = sample_registry();
        // Receiver already holds 0002 (art. 9).
        let r = refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P04",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R03"],
        );
        cites(&r, "art. 9");
        // Receiver is the holder.
        let r = refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P01",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R43"],
        );
        assert!(r.to_string().contains("já é o titular"));
        // Receiver does not meet art. 2 (art. 10 II).
        refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P08",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R10"],
        );
        // Receiver transferred a permit away two years ago (art. 10 §2).
        let reg = with_transfer("P10", "P06", d(2024, 11, 30), TransferReason::Voluntary);
        let r = refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P10",
                TransferReason::Death,
                today(),
                &cfg(),
            ),
            &["R43"],
        );
        assert!(r.findings[0].message.contains("art. 10, § 2º"));
    }

    #[test]
    fn transfer_blocked_by_unpaid_fine_until_paid() {
        let mut reg = sample_registry();
        // Renewed for 2026 (not lapsed): only the fine stands in the way.
        permit_mut(&mut reg, "0004").renewal_year = 2026;
        let r = refused(
            check_transfer(
                &reg.index(),
                "0004",
                "P10",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R27"],
        );
        cites(&r, "art. 17");
        assert!(r.to_string().contains("R$ 764,45"), "{r}");
        reg.fines[0].paid_on = Some(d(2025, 10, 1));
        assert_eq!(
            check_transfer(
                &reg.index(),
                "0004",
                "P10",
                TransferReason::Voluntary,
                today(),
                &cfg()
            ),
            Ok(())
        );
    }

    #[test]
    fn transfer_of_unknown_or_revoked_permit_refused() {
        let mut reg = sample_registry();
        let r = refused(
            check_transfer(
                &reg.index(),
                "9999",
                "P10",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R43"],
        );
        assert!(r.to_string().contains("9999"));
        refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P99",
                TransferReason::Voluntary,
                today(),
                &cfg(),
            ),
            &["R43"],
        );
        permit_mut(&mut reg, "0001").state = PermitState::Revoked { on: d(2026, 2, 1) };
        let r = refused(
            check_transfer(
                &reg.index(),
                "0001",
                "P10",
                TransferReason::Death,
                today(),
                &cfg(),
            ),
            &["R43"],
        );
        assert!(r.to_string().contains("cassado"));
    }

    // ----- art. 7: renewal -------------------------------------------------------------------

    #[test]
    fn renewal_blocked_by_unpaid_fine_then_allowed_once_paid() {
        let mut reg = sample_registry();
        // 0001: renewed for 2026; a fine of R$ 764,45 unpaid blocks the 2027 renewal.
        reg.fines[0].permit_number = "0001".into();
        let r = refused(
            check_renewal(&reg.index(), "0001", 2027, today(), &cfg()),
            &["R27"],
        );
        cites(&r, "art. 17");
        assert_eq!(r.findings[0].consequence, Consequence::RenewalBlocked);
        assert!(r.to_string().contains("Multa FINE-1 de R$ 764,45"), "{r}");
        assert!(r.to_string().contains("art. 17, § 2º, III"), "{r}");
        no_cpf(&reg, &r);

        // Paid after the renewal date: still unpaid on that date.
        reg.fines[0].paid_on = Some(d(2026, 12, 15));
        refused(
            check_renewal(&reg.index(), "0001", 2027, today(), &cfg()),
            &["R27"],
        );
        reg.fines[0].paid_on = Some(d(2026, 11, 30));
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, today(), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn a_permit_whose_renewal_deadline_passed_is_not_renewed() {
        let mut reg = sample_registry();
        reg.fines[0].paid_on = Some(d(2025, 10, 1));
        // 0004: last renewed for 2025; the 2026 renewal was due by 31/01/2026.
        let r = refused(
            check_renewal(&reg.index(), "0004", 2026, d(2026, 12, 1), &cfg()),
            &["R11"],
        );
        cites(&r, "art. 7");
        let text = r.to_string();
        assert!(
            text.contains("não foi renovado para 2026 até 31/01/2026"),
            "{text}"
        );
        assert!(text.contains("cassação automática"), "{text}");
        // Edge: on the deadline itself it is renewed; the day after it is not.
        assert_eq!(
            check_renewal(&reg.index(), "0004", 2026, d(2026, 1, 31), &cfg()),
            Ok(())
        );
        refused(
            check_renewal(&reg.index(), "0004", 2026, d(2026, 2, 1), &cfg()),
            &["R11"],
        );
        // R11 disabled: the lapse is not applied.
        let mut config = cfg();
        config.disabled_rules.push(RuleId::R11);
        assert_eq!(
            check_renewal(&reg.index(), "0004", 2026, d(2026, 12, 1), &config),
            Ok(())
        );
        // 0001, renewed for 2026: renewing for 2027 after 31/01/2027 is too late as well.
        let r = refused(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 3, 10), &cfg()),
            &["R11"],
        );
        assert!(r.to_string().contains("até 31/01/2027"), "{r}");
        // Fine unpaid too: both reasons at once.
        reg.fines[0].paid_on = None;
        refused(
            check_renewal(&reg.index(), "0004", 2026, d(2026, 12, 1), &cfg()),
            &["R11", "R27"],
        );
    }

    #[test]
    fn renewal_is_for_the_next_year_due_only() {
        let reg = sample_registry();
        // 0001 is renewed for 2026: 2027 is due; 2030 would skip 2027–2029.
        let r = refused(
            check_renewal(&reg.index(), "0001", 2030, today(), &cfg()),
            &["R11"],
        );
        assert!(
            r.to_string().contains("a renovação seguinte é a de 2027"),
            "{r}"
        );
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, today(), &cfg()),
            Ok(())
        );
        // Not before 1 January of the year before.
        let r = refused(
            check_renewal(&reg.index(), "0001", 2027, d(2025, 12, 31), &cfg()),
            &["R11"],
        );
        assert!(r.to_string().contains("a partir de 01/01/2026"), "{r}");
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, d(2026, 1, 1), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn renewal_of_a_year_already_renewed_refused() {
        let reg = sample_registry();
        let r = refused(
            check_renewal(&reg.index(), "0001", 2026, today(), &cfg()),
            &["R11"],
        );
        cites(&r, "art. 7");
        assert!(r.to_string().contains("já está renovado para 2026"));
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 1, 15), &cfg()),
            Ok(())
        );
    }

    #[test]
    fn renewal_needs_taximeter_proof() {
        let mut reg = sample_registry();
        reg.vehicles[0].taximeter = None;
        let r = refused(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 1, 15), &cfg()),
            &["R02"],
        );
        cites(&r, "art. 1, § 1");
        assert!(r.to_string().contains("BRA2E19"), "{r}");

        let mut reg = sample_registry();
        reg.vehicles[0].taximeter.as_mut().unwrap().seal_intact = false;
        let r = refused(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 1, 15), &cfg()),
            &["R02"],
        );
        assert!(r.to_string().contains("lacre"));

        // Expired: label 2025, verified 02/03/2024, period 1 year.
        let mut reg = sample_registry();
        let meter = reg.vehicles[0].taximeter.as_mut().unwrap();
        meter.valid_until_year = Some(2025);
        meter.verified_on = d(2024, 3, 2);
        let mut config = cfg();
        config.taximeter_period_years = 1;
        refused(
            check_renewal(&reg.index(), "0001", 2027, d(2026, 12, 20), &config),
            &["R02"],
        );
        // With the two-year federal period the same verification still runs until 01/03/2026.
        config.taximeter_period_years = 2;
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, d(2026, 3, 1), &config),
            Ok(())
        );
        // R02 disabled: the proof is not required.
        config.disabled_rules.push(RuleId::R02);
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, d(2026, 12, 20), &config),
            Ok(())
        );
    }

    #[test]
    fn renewal_checks_holder_and_state() {
        let mut reg = sample_registry();
        person_mut(&mut reg, "P01").licence.expiry = d(2026, 12, 31);
        refused(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 1, 15), &cfg()),
            &["R10"],
        );
        // In succession: the deceased holder's CNH is not checked.
        permit_mut(&mut reg, "0001").state = PermitState::InSuccession {
            since: d(2026, 12, 1),
        };
        assert_eq!(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 1, 15), &cfg()),
            Ok(())
        );
        permit_mut(&mut reg, "0001").state = PermitState::Revoked { on: d(2026, 12, 1) };
        let r = refused(
            check_renewal(&reg.index(), "0001", 2027, d(2027, 1, 15), &cfg()),
            &["R11"],
        );
        assert!(r.to_string().contains("não se renova"));
        refused(
            check_renewal(&reg.index(), "9999", 2027, today(), &cfg()),
            &["R11"],
        );
    }

    #[test]
    fn a_lapsed_permit_is_not_transferred_swapped_or_given_auxiliaries() {
        // 0004 was last renewed for 2025: lapsed since 01/02/2026 (art. 7).
        let mut reg = sample_registry();
        reg.fines[0].paid_on = Some(d(2025, 10, 1));
        let r = refused(
            check_transfer(
                &reg.index(),
                "0004",
                "P10",
                TransferReason::Death,
                today(),
                &cfg(),
            ),
            &["R11"],
        );
        assert!(
            r.to_string().contains("não pode mais ser transferido"),
            "{r}"
        );
        refused(
            check_swap(&reg.index(), "0004", "0001", true, today(), &cfg()),
            &["R11"],
        );
        refused(
            check_add_auxiliary(&reg.index(), "0004", "P10", today(), &cfg()),
            &["R11"],
        );
        // On the deadline itself it still may.
        assert_eq!(
            check_swap(&reg.index(), "0004", "0001", true, d(2026, 1, 31), &cfg()),
            Ok(())
        );
    }

    // ----- art. 11: swap ---------------------------------------------------------------------

    #[test]
    fn swap_allowed_with_fee_refused_without() {
        let reg = sample_registry();
        assert_eq!(
            check_swap(&reg.index(), "0001", "0002", true, today(), &cfg()),
            Ok(())
        );
        let r = refused(
            check_swap(&reg.index(), "0001", "0002", false, today(), &cfg()),
            &["R44"],
        );
        cites(&r, "art. 11");
        assert!(r.to_string().contains("taxa de permuta"));
    }

    #[test]
    fn swap_preconditions() {
        let mut reg = sample_registry();
        // 0002 and 0004 share S02.
        let r = refused(
            check_swap(&reg.index(), "0002", "0004", true, today(), &cfg()),
            &["R44"],
        );
        assert!(
            r.to_string().contains("mesmo ponto (Praça Basílio Rangel)"),
            "{r}"
        );
        refused(
            check_swap(&reg.index(), "0001", "0001", true, today(), &cfg()),
            &["R44"],
        );
        refused(
            check_swap(&reg.index(), "0001", "9999", true, today(), &cfg()),
            &["R44"],
        );
        permit_mut(&mut reg, "0002").state = PermitState::Revoked { on: d(2026, 2, 1) };
        let r = refused(
            check_swap(&reg.index(), "0001", "0002", true, today(), &cfg()),
            &["R44"],
        );
        assert!(r.to_string().contains("0002 foi cassado"));
        // Fee not required when R44 is off, but preconditions still apply.
        let mut config = cfg();
        config.disabled_rules.push(RuleId::R44);
        let reg = sample_registry();
        assert_eq!(
            check_swap(&reg.index(), "0001", "0003", false, today(), &config),
            Ok(())
        );
        refused(
            check_swap(&reg.index(), "0002", "0004", false, today(), &config),
            &["R44"],
        );
    }

    #[test]
    fn swap_between_radio_taxi_and_common_stand_refused() {
        let reg = sample_registry();
        assert_eq!(reg.permits[4].service, ServiceKind::RadioTaxi);
        let r = refused(
            check_swap(&reg.index(), "0001", "0005", true, today(), &cfg()),
            &["R38", "R38"],
        );
        cites(&r, "art. 28");
    }

    // ----- every write: the kernel on the registry after it ----------------------------------

    /// `reg` with permit 0006 granted to P10 on a new vehicle V06 at S01.
    fn granted(reg: &Registry, vehicle: impl FnOnce(&mut crate::domain::Vehicle)) -> Registry {
        let mut next = reg.clone();
        let mut v = next.vehicles[0].clone();
        v.id = "V06".into();
        v.plate = crate::domain::Plate::parse("QAZ1B23").unwrap();
        v.owner_cpf = person_mut(&mut next, "P10").cpf.clone();
        vehicle(&mut v);
        next.vehicles.push(v);
        let mut p = next.permits[0].clone();
        p.number = "0006".into();
        p.holder_id = "P10".into();
        p.auxiliaries.clear();
        p.vehicle_id = "V06".into();
        next.permits.push(p);
        next
    }

    fn judge_ids(r: &Result<Vec<Finding>, Refusal>) -> Vec<&str> {
        match r {
            Ok(w) => w.iter().map(|f| f.rule_id.as_str()).collect(),
            Err(e) => e.rule_ids(),
        }
    }

    #[test]
    fn a_grant_that_the_field_check_would_flag_is_refused() {
        let reg = sample_registry();
        let touched = Touched::act().permit("0006");
        // A regular grant passes with no warning.
        let ok = judge_write(&reg, &granted(&reg, |_| {}), &touched, today(), &cfg());
        assert_eq!(ok, Ok(Vec::new()));
        // No taximeter, and the CRLV in another person's name (art. 30 III).
        let after = granted(&reg, |v| {
            v.taximeter = None;
            v.owner_cpf = reg.people[0].cpf.clone();
        });
        let r = judge_write(&reg, &after, &touched, today(), &cfg()).unwrap_err();
        assert_eq!(r.rule_ids(), ["R40", "R02"], "{r:#?}");
        for f in &r.findings {
            assert_eq!(f.consequence, Consequence::OfficeRefusal);
            assert!(
                f.message
                    .starts_with("Alvará 0006, com Helena Martins (titular) ao volante: "),
                "{}",
                f.message
            );
        }
        no_cpf(&reg, &r);
        // Recorded as facts (not an act), the same findings come back as warnings.
        let w = judge_write(
            &reg,
            &after,
            &Touched::record().permit("0006"),
            today(),
            &cfg(),
        )
        .unwrap();
        assert_eq!(
            w.iter().map(|f| f.rule_id.as_str()).collect::<Vec<_>>(),
            ["R40", "R02"]
        );
    }

    #[test]
    fn a_grant_onto_a_full_stand_or_over_the_cap_is_refused() {
        let mut reg = sample_registry();
        // S01 holds 0001 alone: one place is full.
        reg.stands[0].vacancies = 1;
        let after = granted(&reg, |_| {});
        let touched = Touched::act().permit("0006");
        let r = judge_write(&reg, &after, &touched, today(), &cfg()).unwrap_err();
        assert_eq!(r.rule_ids(), ["R23"]);
        assert!(
            r.to_string().contains("Terminal Urbano tem 1 vaga e"),
            "{r}"
        );
        // A registry at the cap: the overfull stand also raises the count.
        let config = RulesConfig {
            census_population: 31 * 1_800,
            ..cfg()
        };
        let r = judge_write(&reg, &after, &touched, today(), &config).unwrap_err();
        assert_eq!(r.rule_ids(), ["R23", "R23"]);
    }

    #[test]
    fn what_pre_existed_comes_back_as_warnings() {
        // 0004: not renewed for 2026 (R11) and its auxiliary's CNH expired (R10). A write that
        // touches the permit without changing either is not refused for them.
        let reg = sample_registry();
        let mut after = reg.clone();
        permit_mut(&mut after, "0004").stand_id = "S03".into();
        let w = judge_write(
            &reg,
            &after,
            &Touched::act().permit("0004"),
            today(),
            &cfg(),
        )
        .unwrap();
        assert_eq!(judge_ids(&Ok(w.clone())), ["R11", "R10"], "{w:#?}");
        assert!(
            w[1].message
                .starts_with("Alvará 0004, com Rafael Lima (motorista auxiliar) ao volante:"),
            "{}",
            w[1].message
        );
        // The same expired CNH made the holder's by the write is created by it: refused.
        let mut after = reg.clone();
        person_mut(&mut after, "P07").licence.expiry = d(2026, 10, 1);
        let r = judge_write(
            &reg,
            &after,
            &Touched::act().permit("0004"),
            today(),
            &cfg(),
        );
        assert_eq!(judge_ids(&r), ["R10"]);
        assert!(r.is_err());
    }

    #[test]
    fn a_transfer_must_carry_the_new_holders_vehicle() {
        // 0001 to P10 with the vehicle still in João's name: art. 30 III at once.
        let reg = sample_registry();
        let mut after = reg.clone();
        permit_mut(&mut after, "0001").holder_id = "P10".into();
        let touched = Touched::act().permit("0001");
        let r = judge_write(&reg, &after, &touched, today(), &cfg()).unwrap_err();
        assert_eq!(r.rule_ids(), ["R40"]);
        // With the CRLV in the new holder's name the new holder is regular.
        after.vehicles[0].owner_cpf = person_mut(&mut after, "P10").cpf.clone();
        assert_eq!(
            judge_write(&reg, &after, &touched, today(), &cfg()),
            Ok(Vec::new())
        );
    }

    // ----- formatting ------------------------------------------------------------------------

    #[test]
    fn brazilian_formats() {
        use rust_decimal_macros::dec;
        assert_eq!(brl(dec!(764.45)), "R$ 764,45");
        assert_eq!(brl(dec!(1234567.5)), "R$ 1.234.567,50");
        assert_eq!(brl(dec!(0.005)), "R$ 0,01");
        assert_eq!(brl(dec!(240)), "R$ 240,00");
        assert_eq!(brl(dec!(-12.3)), "-R$ 12,30");
        assert_eq!(thousands(237_240), "237.240");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1.000");
        assert_eq!(br(d(2025, 9, 1)), "01/09/2025");
        assert_eq!(add_years(d(2024, 2, 29), 1), d(2025, 3, 1));
        assert_eq!(add_years(d(2024, 2, 29), 4), d(2028, 2, 29));
        assert_eq!(add_years(d(2023, 12, 1), 3), d(2026, 12, 1));
    }
}
