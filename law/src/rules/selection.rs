//! Filling vacancies as the law orders (arts. 2–6, 10 § 2 and 14): the *edital de chamamento*
//! and its procedure, from opening to grant, as data and pure steps.
//!
//! Flow. Every step is a function of the edital before it, the registry, the local date and the
//! rules configuration, and answers the edital after it or a [`Refusal`] that cites its rule:
//!
//! 1. [`open`]: the office opens an edital for places at stands (each stand's free places, the
//!    art. 14 cap, R23), published at least [`MIN_NOTICE_DAYS`] days before the applications
//!    open (art. 4), with the documents required and the criteria (art. 4 § único), the date the
//!    requirements are judged on, and the public source of the lottery's seed with its date,
//!    after the applications close, so that the seed is unknown while the list can change.
//! 2. [`register`]: candidates register during the window with what they presented.
//! 3. [`publish_list`]: after the window, each candidate is judged once and frozen into the
//!    published list: refused with every reason (art. 2 through `office::driver_requirements`,
//!    R06–R10; the documents of art. 2 III–V, R41; the art. 10 § 2 bar, R43), or placed in an
//!    art. 3 group with the evidence of seniority read from the registry. The lottery's list
//!    (group III, art. 3 III) is published as text with its SHA-256 ([`lottery_text`]).
//! 4. [`draw`]: from the draw date on, the office enters the seed once; the order is
//!    [`draw_order`], a function of the published list's digest and the seed that anyone can
//!    recompute (`taxi-fiscal lottery verify`, docs/selection.md). There is no re-draw.
//! 5. [`publish_result`]: the classification ([`classification`]: group I by uninterrupted
//!    seniority as holder, group II by seniority as authorised auxiliary, group III by the draw)
//!    gives each place to the first candidates in order, at their preferred stand; its
//!    publication starts the art. 5 window ([`deadline::selection_appeal_deadline`]).
//! 6. [`file_appeal`] and [`decide_appeal`]: appeals to the Prefeito, recorded with whether they
//!    were in time; a granted appeal may exclude a chosen candidate, whose place then passes to
//!    the next in the same order (the order never changes, so the draw stays verifiable).
//! 7. [`plan_grant`] and [`record_grant`]: art. 6 — after the window and every timely appeal
//!    decided, within [`REGISTRATION_DAYS`] of the choice becoming final (art. 2 § único), to a
//!    candidate registered in the registry (art. 30) who still meets art. 2; the plan says which
//!    registry write follows (a new permit, or the holder's permit moved, and auxiliary
//!    registrations ended), which the office's registry operation performs and judges.
//!
//! Decisions where the law is silent are marked "Decisão:" below and in docs/adr/0030.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{Days, NaiveDate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::deadline::{self, Deadline};
use super::office::{self, Refusal, add_years, br, is_revoked};
use super::{Consequence, Finding, RuleId, RulesConfig, Severity};
use crate::domain::{
    Cpf, DriverLicence, PermitNumber, Person, PersonId, Registry, RegistryIndex, StandId,
};

/// Art. 4: the edital is published at least 20 days before the applications open.
pub const MIN_NOTICE_DAYS: u64 = 20;
/// Art. 2 § único: days the chosen candidate has to register (art. 30) once the choice is final.
pub const REGISTRATION_DAYS: u64 = 30;
/// Art. 2 III: years of residence in the municipality.
pub const RESIDENCE_YEARS: u32 = 3;
/// Art. 3 II: years of proven activity as an authorised auxiliary.
pub const AUXILIARY_YEARS: u32 = 1;
/// Days a certificate (criminal record, medical) is current, counted back from the reference
/// date, when the edital does not say otherwise. Decisão: 90 days, the validity the issuing
/// bodies print on a certidão de antecedentes criminais; the edital may set another.
pub const DEFAULT_CERTIFICATE_VALIDITY_DAYS: u32 = 90;
/// Candidates one edital takes.
pub const MAX_CANDIDATES: usize = 2_000;
/// Stands one edital offers places at.
pub const MAX_VACANCY_LINES: usize = 100;
/// Places one edital offers in all.
pub const MAX_PLACES: u32 = 1_000;
/// Appeals one edital records.
pub const MAX_APPEALS: usize = 500;
/// Stands a candidate lists in order of preference.
pub const MAX_PREFERENCES: usize = 20;
/// Documents the edital lists (art. 4 § único).
pub const MAX_DOCUMENTS: usize = 30;
/// Characters of a seed as entered.
pub const MAX_SEED_CHARS: usize = 200;
/// Characters of a name, an identifier or a number.
pub const MAX_NAME_CHARS: usize = 200;
/// Characters of a free text (criteria, seed source, grounds, reasoning, a document).
pub const MAX_TEXT_CHARS: usize = 4_000;

/// What the office fills in to open an edital.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewEdital {
    /// Identifier in the system and in addresses, e.g. `2026-01`.
    pub id: String,
    /// Number as printed, e.g. `001/2026`.
    pub number: String,
    /// Publication in the local press (art. 4).
    pub published_on: NaiveDate,
    /// First day of applications: at least [`MIN_NOTICE_DAYS`] after publication.
    pub applications_from: NaiveDate,
    /// Last day of applications.
    pub applications_until: NaiveDate,
    /// The day the art. 2 requirements are judged on (age, two years of licence, three years of
    /// residence, current certificates). Defaults to the last day of applications.
    #[serde(default)]
    pub reference_date: Option<NaiveDate>,
    /// The public source of the lottery's seed, named in advance, e.g. "os cinco prêmios da
    /// extração nº 6.012 da Loteria Federal".
    pub seed_source: String,
    /// The day that source becomes known: after the last day of applications.
    pub draw_on: NaiveDate,
    /// Places offered, by stand.
    pub vacancies: Vec<Vacancy>,
    /// Documents required (art. 4 § único); defaults to those of art. 2.
    #[serde(default)]
    pub documents: Option<Vec<String>>,
    /// Days a certificate is current; defaults to [`DEFAULT_CERTIFICATE_VALIDITY_DAYS`].
    #[serde(default)]
    pub certificate_validity_days: Option<u32>,
}

/// Places offered at one stand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Vacancy {
    pub stand_id: StandId,
    pub places: u32,
}

/// An edital and everything done under it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edital {
    pub id: String,
    pub number: String,
    pub opened_on: NaiveDate,
    pub published_on: NaiveDate,
    pub applications_from: NaiveDate,
    pub applications_until: NaiveDate,
    pub reference_date: NaiveDate,
    pub seed_source: String,
    pub draw_on: NaiveDate,
    pub vacancies: Vec<Vacancy>,
    pub documents: Vec<String>,
    /// The selection criteria as the edital states them (art. 3, art. 4 § único).
    pub criteria: String,
    pub certificate_validity_days: u32,
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    #[serde(default)]
    pub list: Option<PublishedList>,
    #[serde(default)]
    pub draw: Option<Draw>,
    #[serde(default)]
    pub result: Option<PublishedResult>,
    #[serde(default)]
    pub appeals: Vec<Appeal>,
    #[serde(default)]
    pub grants: Vec<GrantRecord>,
}

/// A certificate as presented: when it was issued and whether it is favourable ("nada consta";
/// "apto").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Certificate {
    pub issued_on: NaiveDate,
    pub favourable: bool,
}

/// What a candidate presents at registration (art. 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCandidate {
    pub name: String,
    pub cpf: Cpf,
    /// Art. 2 I, from the identity card.
    pub birth_date: NaiveDate,
    /// Art. 2 II, as printed on the CNH.
    pub licence: DriverLicence,
    /// Art. 2 III: the earliest date the proof of residence shows in the municipality.
    #[serde(default)]
    pub residence_since: Option<NaiveDate>,
    /// Art. 2 IV.
    #[serde(default)]
    pub criminal_record: Option<Certificate>,
    /// Art. 2 V.
    #[serde(default)]
    pub medical: Option<Certificate>,
    /// Art. 3 II: proof of at least one year of activity as auxiliary was presented.
    #[serde(default)]
    pub activity_proof: bool,
    /// Stands in order of preference; empty: any.
    #[serde(default)]
    pub preferences: Vec<StandId>,
}

/// A registered candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// Inscription number within the edital, `001`, `002`, … in order of registration.
    pub inscription: String,
    pub registered_on: NaiveDate,
    #[serde(flatten)]
    pub presented: NewCandidate,
}

/// The art. 3 preference groups.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    /// I: current permit holders, by uninterrupted seniority.
    Holder,
    /// II: authorised auxiliary drivers with at least a year of proven activity, by seniority.
    Auxiliary,
    /// III: new registrants meeting art. 2, by lottery.
    NewRegistrant,
}

impl Group {
    /// "I", "II", "III".
    pub fn roman(self) -> &'static str {
        match self {
            Group::Holder => "I",
            Group::Auxiliary => "II",
            Group::NewRegistrant => "III",
        }
    }

    /// How the group is named in the law's words.
    pub fn label_pt(self) -> &'static str {
        match self {
            Group::Holder => "permissionários atuais (art. 3º, I)",
            Group::Auxiliary => "motoristas auxiliares autorizados (art. 3º, II)",
            Group::NewRegistrant => "novos inscritos, por sorteio (art. 3º, III)",
        }
    }
}

/// One candidate as judged when the list was published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListEntry {
    pub inscription: String,
    pub name: String,
    /// `None`: refused, for the reasons in `findings`.
    pub group: Option<Group>,
    /// Start of the seniority that orders groups I and II.
    pub since: Option<NaiveDate>,
    /// Birth date, the tie-break within groups I and II.
    pub birth_date: NaiveDate,
    /// Where the group and seniority come from, in Portuguese.
    pub evidence: String,
    /// The registry person with the candidate's CPF, if any.
    pub person_id: Option<PersonId>,
    /// Reasons of refusal (irregular) and warnings.
    pub findings: Vec<Finding>,
}

impl ListEntry {
    /// True when the candidate takes part in the classification.
    pub fn eligible(&self) -> bool {
        self.group.is_some()
    }
}

/// The list published after the applications closed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishedList {
    pub published_on: NaiveDate,
    pub entries: Vec<ListEntry>,
    /// The lottery's input as published ([`lottery_text`]), byte for byte.
    pub lottery_text: String,
    /// SHA-256 of `lottery_text`, lower-case hex.
    pub lottery_digest: String,
}

/// The draw, done once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Draw {
    pub drawn_on: NaiveDate,
    /// The seed as normalised ([`normalise_seed`]).
    pub seed: String,
    /// Group III in drawn order.
    pub order: Vec<DrawnEntry>,
}

/// One inscription's place in the draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawnEntry {
    pub inscription: String,
    /// SHA-256 of `digest \n seed \n inscription`, the sort key (lower-case hex).
    pub key: String,
}

/// The published result: its date and the art. 5 window it opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishedResult {
    pub published_on: NaiveDate,
    pub appeal_deadline: Deadline,
}

/// An appeal to the Prefeito against the choice (art. 5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Appeal {
    /// 1, 2, … in order of filing.
    pub number: u32,
    pub appellant: String,
    /// The appellant's inscription, when a candidate.
    pub inscription: Option<String>,
    pub filed_on: NaiveDate,
    pub grounds: String,
    /// Filed by the last day of the art. 5 window.
    pub timely: bool,
    pub decision: Option<AppealDecision>,
}

/// What the office files to record an appeal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewAppeal {
    pub appellant: String,
    #[serde(default)]
    pub inscription: Option<String>,
    /// Defaults to today (the protocol date).
    #[serde(default)]
    pub filed_on: Option<NaiveDate>,
    pub grounds: String,
}

/// The Prefeito's decision, as the office records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppealDecision {
    pub decided_on: NaiveDate,
    /// True: appeal granted (provido).
    pub granted: bool,
    pub reasoning: String,
    /// A granted appeal may exclude a chosen candidate (who did not meet the requirements); the
    /// place passes to the next in order.
    #[serde(default)]
    pub excludes: Option<String>,
}

/// A grant made under the edital.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantRecord {
    pub inscription: String,
    pub permit_number: PermitNumber,
    pub stand_id: StandId,
    pub granted_on: NaiveDate,
}

/// Where the edital stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Published; applications not yet open.
    Announced,
    /// Applications open (or the window ended and the list is not yet published).
    Applications,
    /// List published; waiting for the draw.
    ListPublished,
    /// Drawn; result not yet published.
    Drawn,
    /// Result published: the art. 5 window or its appeals.
    ResultPublished,
    /// The choice is final: grants.
    Final,
}

impl Stage {
    /// How the office reads it.
    pub fn label_pt(self) -> &'static str {
        match self {
            Stage::Announced => "publicado, inscrições ainda não abertas",
            Stage::Applications => "inscrições",
            Stage::ListPublished => "lista publicada, aguardando o sorteio",
            Stage::Drawn => "sorteio realizado, resultado a publicar",
            Stage::ResultPublished => "resultado publicado, prazo de recurso",
            Stage::Final => "escolha definitiva, concessões",
        }
    }
}

/// One line of the classification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ranked {
    /// 1-based position in the order of art. 3.
    pub position: u32,
    pub inscription: String,
    pub name: String,
    pub group: Group,
    pub since: Option<NaiveDate>,
    pub evidence: String,
    /// The stand whose place the candidate was chosen for; `None`: not chosen (waiting list) or
    /// excluded.
    pub stand_id: Option<StandId>,
    /// Excluded by a granted appeal (its number).
    pub excluded_by_appeal: Option<u32>,
}

/// What the registry write of a grant must do (performed and judged by the office's registry
/// operation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GrantPlan {
    pub inscription: String,
    pub person_id: PersonId,
    pub stand_id: StandId,
    pub group: Group,
    /// Group I: the holder's permit moves to the stand (art. 9: one permit per holder).
    pub moves_permit: Option<PermitNumber>,
    /// Group II: auxiliary registrations that end with the grant.
    pub ends_auxiliary_on: Vec<PermitNumber>,
    /// The edital's publication date, kept on the permit (art. 13 III).
    pub edital_date: NaiveDate,
}

// ---------------------------------------------------------------------------------------------
// Refusals
// ---------------------------------------------------------------------------------------------

fn refuse(rule_id: RuleId, message: impl Into<String>) -> Finding {
    Finding::new(rule_id, message).with_consequence(Consequence::OfficeRefusal)
}

fn refused<T>(rule_id: RuleId, message: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        findings: vec![refuse(rule_id, message)],
    })
}

fn all_or_refuse(findings: Vec<Finding>) -> Result<(), Refusal> {
    if findings.is_empty() {
        Ok(())
    } else {
        Err(Refusal { findings })
    }
}

/// Text that is empty, too long or carries control characters (or `;`, the lottery list's
/// separator, in names) is refused before anything is judged.
fn check_text(findings: &mut Vec<Finding>, what: &str, text: &str, max: usize, name: bool) {
    let n = text.chars().count();
    if text.trim().is_empty() {
        findings.push(refuse(RuleId::R42, format!("Informe {what}.")));
    } else if n > max {
        findings.push(refuse(
            RuleId::R42,
            format!("{what} tem {n} caracteres; o máximo é {max}."),
        ));
    } else if text.chars().any(|c| c.is_control() && (name || c != '\n'))
        || (name && text.contains(';'))
    {
        findings.push(refuse(
            RuleId::R42,
            format!("{what} contém caracteres não permitidos."),
        ));
    }
}

fn plus_days(date: NaiveDate, days: u64) -> NaiveDate {
    date.checked_add_days(Days::new(days))
        .unwrap_or(NaiveDate::MAX)
}

// ---------------------------------------------------------------------------------------------
// 1. Opening
// ---------------------------------------------------------------------------------------------

/// The art. 2 documents, the default of an edital's list (art. 4 § único).
pub fn default_documents() -> Vec<String> {
    [
        "Cédula de Identidade, comprovando idade mínima de 21 anos (art. 2º, I)",
        "Carteira Nacional de Habilitação categoria B, expedida há mais de dois anos, sem \
         \"Vedada Atividade Remunerada\" (art. 2º, II)",
        "Comprovante de residência no Município há pelo menos 3 anos (art. 2º, III)",
        "Certidão relativa a antecedentes criminais (art. 2º, IV)",
        "Atestado médico de aptidão para a atividade (art. 2º, V)",
        "Motoristas auxiliares: comprovante de no mínimo um ano de exercício da atividade \
         (art. 3º, II)",
    ]
    .map(String::from)
    .to_vec()
}

/// The criteria of art. 3 as the edital states them, with the lottery's seed source.
pub fn criteria_text(seed_source: &str, draw_on: NaiveDate) -> String {
    format!(
        "As vagas serão preenchidas nesta ordem de preferência (art. 3º da Lei 4.019/2004): \
         I – os atuais permissionários, por ordem de antiguidade ininterrupta no exercício da \
         atividade; II – os motoristas auxiliares já autorizados, por ordem de antiguidade, com \
         no mínimo um ano de comprovado exercício da atividade; III – os novos inscritos que \
         atendam o art. 2º, por sorteio. Empates nos grupos I e II são decididos pela maior \
         idade. O sorteio usará como semente {seed_source}, conhecida em {}, e qualquer pessoa \
         poderá refazê-lo a partir da lista publicada e da semente.",
        br(draw_on)
    )
}

/// Free places at a stand: its places minus the permits in force there minus the places other
/// editais (not yet fully granted) offer there.
fn free_places(registry: &Registry, stand_id: &str, others: &[&Edital]) -> i64 {
    let Some(stand) = registry.stands.iter().find(|s| s.id == stand_id) else {
        return 0;
    };
    let live = registry
        .permits
        .iter()
        .filter(|p| p.stand_id == stand_id && !is_revoked(p))
        .count();
    let offered: u64 = others
        .iter()
        .flat_map(|e| e.open_places_at(stand_id))
        .map(u64::from)
        .sum();
    i64::from(stand.vacancies)
        - i64::try_from(live).unwrap_or(i64::MAX)
        - i64::try_from(offered).unwrap_or(i64::MAX)
}

/// Opens an edital on `today` (art. 4).
///
/// Refuses (R42) a window opening less than [`MIN_NOTICE_DAYS`] days after publication, a
/// window that ends before it begins, a draw date not after the window (the seed must be
/// unknown while the list can still change), a reference date before publication or after the
/// window; (R23) a stand without that many free places — its places, less the permits in force
/// there and the places `others` (editais still open) offer there — and any edital while the
/// registry counts more taxis than the art. 14 cap (places must then be closed, not filled).
///
/// Decisão: an edital fills places that exist; raising a stand's places is a registry write of
/// its own, which the art. 14 cap judges (`office::check_cap`).
pub fn open(
    registry: &Registry,
    req: NewEdital,
    others: &[&Edital],
    today: NaiveDate,
    config: &RulesConfig,
) -> Result<Edital, Refusal> {
    let mut findings = Vec::new();
    check_text(
        &mut findings,
        "o identificador do edital",
        &req.id,
        40,
        true,
    );
    if !req
        .id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        findings.push(refuse(
            RuleId::R42,
            "O identificador do edital usa só letras, algarismos, '-' e '_'.",
        ));
    }
    check_text(
        &mut findings,
        "o número do edital",
        &req.number,
        MAX_NAME_CHARS,
        true,
    );
    check_text(
        &mut findings,
        "a fonte da semente do sorteio",
        &req.seed_source,
        MAX_TEXT_CHARS,
        false,
    );
    let documents = req.documents.clone().unwrap_or_else(default_documents);
    if documents.is_empty() || documents.len() > MAX_DOCUMENTS {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "O edital lista de 1 a {MAX_DOCUMENTS} documentos exigidos (art. 4º, parágrafo \
                 único); foram informados {}.",
                documents.len()
            ),
        ));
    }
    for doc in &documents {
        check_text(
            &mut findings,
            "cada documento exigido",
            doc,
            MAX_TEXT_CHARS,
            false,
        );
    }

    let notice_ends = plus_days(req.published_on, MIN_NOTICE_DAYS);
    if req.applications_from < notice_ends {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "As inscrições começariam em {}, {} dia(s) após a publicação de {}: o art. 4º \
                 exige publicação com antecedência mínima de 20 dias (inscrições a partir de {}).",
                br(req.applications_from),
                (req.applications_from - req.published_on).num_days(),
                br(req.published_on),
                br(notice_ends)
            ),
        ));
    }
    if req.applications_until < req.applications_from {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "O período de inscrições termina em {}, antes de começar em {}.",
                br(req.applications_until),
                br(req.applications_from)
            ),
        ));
    }
    if req.draw_on <= req.applications_until {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "A semente do sorteio seria conhecida em {}, antes do fim das inscrições em {}: \
                 ela deve ser desconhecida enquanto a lista puder mudar.",
                br(req.draw_on),
                br(req.applications_until)
            ),
        ));
    }
    let reference_date = req.reference_date.unwrap_or(req.applications_until);
    if reference_date < req.published_on || reference_date > req.applications_until {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "A data de verificação dos requisitos ({}) deve estar entre a publicação ({}) e \
                 o fim das inscrições ({}).",
                br(reference_date),
                br(req.published_on),
                br(req.applications_until)
            ),
        ));
    }
    let validity = req
        .certificate_validity_days
        .unwrap_or(DEFAULT_CERTIFICATE_VALIDITY_DAYS);
    if !(1..=3_650).contains(&validity) {
        findings.push(refuse(
            RuleId::R42,
            "A validade das certidões vai de 1 a 3.650 dias.",
        ));
    }

    // Places (R23).
    if req.vacancies.is_empty() || req.vacancies.len() > MAX_VACANCY_LINES {
        findings.push(refuse(
            RuleId::R23,
            format!(
                "O edital oferece vagas em 1 a {MAX_VACANCY_LINES} pontos; foram informados {}.",
                req.vacancies.len()
            ),
        ));
    }
    let mut seen = BTreeSet::new();
    let mut total: u64 = 0;
    for v in &req.vacancies {
        total = total.saturating_add(u64::from(v.places));
        let Some(stand) = registry.stands.iter().find(|s| s.id == v.stand_id) else {
            findings.push(refuse(
                RuleId::R23,
                format!("O ponto {} não consta do cadastro.", v.stand_id),
            ));
            continue;
        };
        if !seen.insert(v.stand_id.as_str()) {
            findings.push(refuse(
                RuleId::R23,
                format!("O ponto {} aparece mais de uma vez no edital.", stand.name),
            ));
            continue;
        }
        if v.places == 0 {
            findings.push(refuse(
                RuleId::R23,
                format!("Informe ao menos uma vaga no ponto {}.", stand.name),
            ));
            continue;
        }
        let free = free_places(registry, &v.stand_id, others);
        if i64::from(v.places) > free {
            findings.push(refuse(
                RuleId::R23,
                format!(
                    "O ponto {} tem {} vaga(s) livre(s) ({} lugares, menos os alvarás em vigor e \
                     as vagas de outros editais em andamento); o edital oferece {} (art. 14: \
                     abrir vagas é alterar o ponto, antes do edital).",
                    stand.name,
                    free.max(0),
                    stand.vacancies,
                    v.places
                ),
            ));
        }
    }
    if total > u64::from(MAX_PLACES) {
        findings.push(refuse(
            RuleId::R23,
            format!("O edital oferece {total} vagas; o máximo é {MAX_PLACES}."),
        ));
    }
    if config.is_enabled(RuleId::R23) {
        let fleet = office::fleet_size(registry);
        let cap = u64::from(office::taxi_cap(config));
        if fleet > cap {
            findings.push(refuse(
                RuleId::R23,
                format!(
                    "O cadastro conta {fleet} táxis (alvarás em vigor e vagas abertas), acima do \
                     limite de {cap} do art. 14: feche vagas antes de preenchê-las."
                ),
            ));
        }
    }
    all_or_refuse(findings)?;

    Ok(Edital {
        criteria: criteria_text(req.seed_source.trim(), req.draw_on),
        id: req.id,
        number: req.number.trim().to_owned(),
        opened_on: today,
        published_on: req.published_on,
        applications_from: req.applications_from,
        applications_until: req.applications_until,
        reference_date,
        seed_source: req.seed_source.trim().to_owned(),
        draw_on: req.draw_on,
        vacancies: req.vacancies,
        documents,
        certificate_validity_days: validity,
        candidates: Vec::new(),
        list: None,
        draw: None,
        result: None,
        appeals: Vec::new(),
        grants: Vec::new(),
    })
}

impl Edital {
    /// Where the edital stands on `today`.
    pub fn stage(&self, today: NaiveDate) -> Stage {
        if self.result.is_some() {
            return if self.final_on().is_some_and(|f| today >= f) {
                Stage::Final
            } else {
                Stage::ResultPublished
            };
        }
        if self.draw.is_some() {
            return Stage::Drawn;
        }
        if self.list.is_some() {
            return Stage::ListPublished;
        }
        if today < self.applications_from {
            Stage::Announced
        } else {
            Stage::Applications
        }
    }

    /// Places offered in all.
    pub fn places(&self) -> u32 {
        self.vacancies
            .iter()
            .fold(0u32, |n, v| n.saturating_add(v.places))
    }

    /// Places this edital still holds at a stand (`None`: it offers none there): those offered
    /// until the result; then those given to a chosen candidate not yet granted (a place the
    /// list could not fill is free again).
    pub fn open_places_at(&self, stand_id: &str) -> Option<u32> {
        let offered = self
            .vacancies
            .iter()
            .find(|v| v.stand_id == stand_id)?
            .places;
        if self.result.is_none() {
            return Some(offered);
        }
        let held = classification(self)
            .iter()
            .filter(|r| r.stand_id.as_deref() == Some(stand_id))
            .filter(|r| !self.grants.iter().any(|g| g.inscription == r.inscription))
            .count();
        Some(u32::try_from(held).unwrap_or(u32::MAX))
    }

    /// The candidate with that inscription.
    pub fn candidate(&self, inscription: &str) -> Option<&Candidate> {
        self.candidates
            .iter()
            .find(|c| c.inscription == inscription)
    }

    /// The day the choice becomes final (art. 5): the day after the appeal window, or the day
    /// the last timely appeal was decided if later; `None` before the result or while a timely
    /// appeal waits.
    pub fn final_on(&self) -> Option<NaiveDate> {
        let result = self.result.as_ref()?;
        let after_window = result.appeal_deadline.deadline.succ_opt()?;
        let mut last = after_window;
        for a in self.appeals.iter().filter(|a| a.timely) {
            let decided = a.decision.as_ref()?.decided_on;
            last = last.max(decided);
        }
        Some(last)
    }
}

// ---------------------------------------------------------------------------------------------
// 2. Registration
// ---------------------------------------------------------------------------------------------

/// Registers a candidate on `today` (art. 2), inscription numbers in order.
///
/// Refuses (R42) outside the application window or once the list is published, a CPF already
/// registered in this edital, a stand of preference the edital does not offer, and past
/// [`MAX_CANDIDATES`]. The art. 2 requirements are *not* judged here: everyone may register and
/// present documents; the list judges them all on the reference date.
pub fn register(edital: &Edital, req: NewCandidate, today: NaiveDate) -> Result<Edital, Refusal> {
    let mut findings = Vec::new();
    if edital.list.is_some() {
        return refused(
            RuleId::R42,
            "A lista deste edital já foi publicada: as inscrições estão encerradas.",
        );
    }
    if today < edital.applications_from || today > edital.applications_until {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "As inscrições do edital {} vão de {} a {}; hoje é {}.",
                edital.number,
                br(edital.applications_from),
                br(edital.applications_until),
                br(today)
            ),
        ));
    }
    check_text(
        &mut findings,
        "o nome do candidato",
        &req.name,
        MAX_NAME_CHARS,
        true,
    );
    if let Some(other) = edital
        .candidates
        .iter()
        .find(|c| c.presented.cpf == req.cpf)
    {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "O CPF {} já está inscrito neste edital (inscrição {}).",
                req.cpf.masked(),
                other.inscription
            ),
        ));
    }
    if edital.candidates.len() >= MAX_CANDIDATES {
        findings.push(refuse(
            RuleId::R42,
            format!("O edital já tem {MAX_CANDIDATES} inscritos, o máximo."),
        ));
    }
    if req.preferences.len() > MAX_PREFERENCES {
        findings.push(refuse(
            RuleId::R42,
            format!("Indique no máximo {MAX_PREFERENCES} pontos de preferência."),
        ));
    }
    let mut seen = BTreeSet::new();
    for p in &req.preferences {
        if !edital.vacancies.iter().any(|v| &v.stand_id == p) {
            findings.push(refuse(
                RuleId::R42,
                format!("O edital não oferece vagas no ponto {p}."),
            ));
        } else if !seen.insert(p.as_str()) {
            findings.push(refuse(
                RuleId::R42,
                format!("O ponto {p} aparece mais de uma vez nas preferências."),
            ));
        }
    }
    for o in &req.licence.observations {
        check_text(
            &mut findings,
            "cada observação da CNH",
            o,
            MAX_NAME_CHARS,
            true,
        );
    }
    all_or_refuse(findings)?;
    let mut next = edital.clone();
    next.candidates.push(Candidate {
        inscription: format!("{:03}", edital.candidates.len() + 1),
        registered_on: today,
        presented: NewCandidate {
            name: req.name.trim().to_owned(),
            ..req
        },
    });
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// 3. The list
// ---------------------------------------------------------------------------------------------

/// The registry person presented as `cpf`, if any.
fn person_with_cpf<'r>(index: &RegistryIndex<'r>, cpf: &Cpf) -> Option<&'r Person> {
    index.person_by_cpf(cpf)
}

/// R41: the documents of art. 2 III–V on the reference date.
fn document_findings(edital: &Edital, c: &Candidate) -> Vec<Finding> {
    let on = edital.reference_date;
    let name = &c.presented.name;
    let mut out = Vec::new();
    match c.presented.residence_since {
        None => out.push(refuse(
            RuleId::R41,
            format!("{name} não apresentou comprovante de residência no Município (art. 2º, III)."),
        )),
        Some(since) => {
            let enough = add_years(since, i32::try_from(RESIDENCE_YEARS).unwrap_or(i32::MAX));
            if enough > on {
                out.push(refuse(
                    RuleId::R41,
                    format!(
                        "{name} comprova residência no Município desde {}; em {} ainda não \
                         completa 3 anos, o que só ocorre em {} (art. 2º, III).",
                        br(since),
                        br(on),
                        br(enough)
                    ),
                ));
            }
        }
    }
    let validity = u64::from(edital.certificate_validity_days);
    let mut certificate = |what: &str, cert: Option<Certificate>, bad: &str, inciso: &str| {
        match cert {
        None => out.push(refuse(
            RuleId::R41,
            format!("{name} não apresentou {what} (art. 2º, {inciso})."),
        )),
        Some(c) if !c.favourable => out.push(refuse(
            RuleId::R41,
            format!("{} de {name} {bad} (art. 2º, {inciso}).", capitalised(what)),
        )),
        Some(c) if c.issued_on > on || plus_days(c.issued_on, validity) < on => out.push(refuse(
            RuleId::R41,
            format!(
                "{} de {name} foi emitido(a) em {}; o edital aceita documentos emitidos nos {} \
                 dias anteriores a {} (art. 2º, {inciso}).",
                capitalised(what),
                br(c.issued_on),
                validity,
                br(on)
            ),
        )),
        Some(_) => {}
    }
    };
    certificate(
        "a certidão de antecedentes criminais",
        c.presented.criminal_record,
        "não é negativa",
        "IV",
    );
    certificate(
        "o atestado médico",
        c.presented.medical,
        "não o declara apto para a atividade",
        "V",
    );
    out
}

fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Judges one candidate on the edital's reference date: refusals and group with evidence.
///
/// Group I: the CPF is the holder of a permit not revoked; seniority from the day the candidate
/// began holding it without interruption — the permit's issue or the transfer to the candidate,
/// whichever is later. Group II: the CPF is a registered auxiliary of a permit not revoked since
/// at least [`AUXILIARY_YEARS`] before the reference date, with the proof of activity presented;
/// seniority from the earliest such registration. Anyone else meeting art. 2 is group III.
///
/// Decisão: an auxiliary with less than a year, or without the proof, is not refused: art. 3 III
/// takes any new registrant meeting art. 2, so the candidate goes to group III (the evidence
/// says why). Ties in groups I and II go to the older candidate (Lei 10.741/2003, art. 27,
/// parágrafo único, the tie-break of Brazilian public selections), then to the earlier
/// inscription.
pub fn assess(
    edital: &Edital,
    c: &Candidate,
    index: &RegistryIndex<'_>,
    config: &RulesConfig,
) -> ListEntry {
    let on = edital.reference_date;
    let p = &c.presented;
    let as_person = Person {
        id: String::new(),
        name: p.name.clone(),
        cpf: p.cpf.clone(),
        birth_date: p.birth_date,
        licence: p.licence.clone(),
    };
    let mut findings: Vec<Finding> = office::driver_requirements(&as_person, on, config)
        .into_iter()
        .map(|f| {
            if f.severity == Severity::Irregular {
                f.with_consequence(Consequence::OfficeRefusal)
            } else {
                f
            }
        })
        .collect();
    if config.is_enabled(RuleId::R41) {
        findings.extend(document_findings(edital, c));
    }
    let person = person_with_cpf(index, &p.cpf);
    if let Some(person) = person
        && config.is_enabled(RuleId::R43)
    {
        findings.extend(office::transferor_bar(index, person, on));
    }
    let refused = findings.iter().any(|f| f.severity == Severity::Irregular);

    let mut group = Group::NewRegistrant;
    let mut since = None;
    let mut evidence = String::from("Não é permissionário nem motorista auxiliar no cadastro.");
    if let Some(person) = person {
        let held: Vec<_> = index
            .permits_held_by(&person.id)
            .into_iter()
            .filter(|p| !is_revoked(p))
            .collect();
        if let Some(permit) = held.first() {
            let transfer_in = index
                .registry
                .transfers
                .iter()
                .filter(|t| t.permit_number == permit.number && t.to_person_id == person.id)
                .map(|t| t.on)
                .max();
            let start = transfer_in.map_or(permit.issued_on, |t| t.max(permit.issued_on));
            group = Group::Holder;
            since = Some(start);
            evidence = match transfer_in {
                Some(t) if t >= permit.issued_on => format!(
                    "Titular do alvará {} desde a transferência de {}.",
                    permit.number,
                    br(t)
                ),
                _ => format!(
                    "Titular do alvará {} desde a expedição em {}.",
                    permit.number,
                    br(permit.issued_on)
                ),
            };
        } else {
            let aux: Vec<_> = index
                .permits_with_auxiliary(&person.id)
                .into_iter()
                .filter(|p| !is_revoked(p))
                .filter_map(|p| {
                    p.auxiliaries
                        .iter()
                        .find(|a| a.person_id == person.id)
                        .map(|a| (p.number.clone(), a.registered_on))
                })
                .collect();
            if let Some((permit, registered)) = aux.iter().min_by_key(|(_, d)| *d).cloned() {
                let year = add_years(registered, i32::try_from(AUXILIARY_YEARS).unwrap_or(1));
                if year > on {
                    evidence = format!(
                        "Motorista auxiliar do alvará {permit} desde {}: em {} ainda não tem um \
                         ano de exercício (art. 3º, II); concorre no grupo III.",
                        br(registered),
                        br(on)
                    );
                } else if !p.activity_proof {
                    evidence = format!(
                        "Motorista auxiliar do alvará {permit} desde {}, sem comprovante de \
                         exercício da atividade (art. 3º, II); concorre no grupo III.",
                        br(registered)
                    );
                } else {
                    group = Group::Auxiliary;
                    since = Some(registered);
                    evidence = format!(
                        "Motorista auxiliar do alvará {permit} desde {}, com comprovante de \
                         exercício.",
                        br(registered)
                    );
                }
            }
        }
    }
    ListEntry {
        inscription: c.inscription.clone(),
        name: p.name.clone(),
        group: (!refused).then_some(group),
        since: if refused { None } else { since },
        birth_date: p.birth_date,
        evidence,
        person_id: person.map(|p| p.id.clone()),
        findings,
    }
}

/// The lottery's input as published: a header naming the edital and one line per group III
/// candidate, `inscription;name`, in inscription order, each line ending in `\n`.
pub fn lottery_text(edital_number: &str, entries: &[ListEntry]) -> String {
    let mut text =
        format!("Edital {edital_number}: inscritos habilitados ao sorteio (art. 3º, III)\n");
    let mut group: Vec<&ListEntry> = entries
        .iter()
        .filter(|e| e.group == Some(Group::NewRegistrant))
        .collect();
    group.sort_by(|a, b| inscription_order(&a.inscription, &b.inscription));
    for e in group {
        text.push_str(&e.inscription);
        text.push(';');
        text.push_str(&e.name);
        text.push('\n');
    }
    text
}

/// Inscriptions in numeric order: `999` before `1000` (numbers are zero-padded to three
/// digits, and [`MAX_CANDIDATES`] takes them to four).
pub fn inscription_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// SHA-256 of `text`, lower-case hex.
pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The inscriptions of a published lottery text (the first field of each line after the
/// header), or why the text is not one.
pub fn lottery_inscriptions(text: &str) -> Result<Vec<String>, String> {
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(h) if h.starts_with("Edital ") && h.ends_with('\n') => {}
        _ => return Err("a primeira linha deve ser o cabeçalho \"Edital …\"".to_owned()),
    }
    let mut out: Vec<String> = Vec::new();
    for (i, line) in lines.enumerate() {
        let Some(line) = line.strip_suffix('\n') else {
            return Err(format!("a linha {} não termina em quebra de linha", i + 2));
        };
        let Some((inscription, _name)) = line.split_once(';') else {
            return Err(format!(
                "a linha {} não tem o formato inscrição;nome",
                i + 2
            ));
        };
        if inscription.is_empty() || out.iter().any(|o| o == inscription) {
            return Err(format!("a linha {} repete ou omite a inscrição", i + 2));
        }
        out.push(inscription.to_owned());
    }
    Ok(out)
}

/// Publishes the list on `today`, after the window (R42): every candidate judged once.
pub fn publish_list(
    edital: &Edital,
    index: &RegistryIndex<'_>,
    today: NaiveDate,
    config: &RulesConfig,
) -> Result<Edital, Refusal> {
    if edital.list.is_some() {
        return refused(RuleId::R42, "A lista deste edital já foi publicada.");
    }
    if today <= edital.applications_until {
        return refused(
            RuleId::R42,
            format!(
                "As inscrições vão até {}: a lista só é publicada depois.",
                br(edital.applications_until)
            ),
        );
    }
    let entries: Vec<ListEntry> = edital
        .candidates
        .iter()
        .map(|c| assess(edital, c, index, config))
        .collect();
    let lottery_text = lottery_text(&edital.number, &entries);
    let lottery_digest = sha256_hex(&lottery_text);
    let mut next = edital.clone();
    next.list = Some(PublishedList {
        published_on: today,
        entries,
        lottery_text,
        lottery_digest,
    });
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// 4. The draw
// ---------------------------------------------------------------------------------------------

/// The seed as compared and hashed: trimmed, inner whitespace collapsed to one space. So
/// "12345  67890" and "12345 67890" are the same seed whoever types it.
pub fn normalise_seed(seed: &str) -> String {
    seed.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The draw: each inscription's key is SHA-256 of `digest`, `seed` and the inscription joined
/// by `\n`, and the order is by key (ties — impossible in practice — by inscription). Anyone
/// recomputes a key with `printf '%s\n%s\n%s' "$digest" "$seed" "$inscription" | sha256sum`.
pub fn draw_order(digest: &str, seed: &str, inscriptions: &[String]) -> Vec<DrawnEntry> {
    let seed = normalise_seed(seed);
    let mut order: Vec<DrawnEntry> = inscriptions
        .iter()
        .map(|i| DrawnEntry {
            inscription: i.clone(),
            key: sha256_hex(&format!("{digest}\n{seed}\n{i}")),
        })
        .collect();
    order.sort_by(|a, b| {
        a.key
            .cmp(&b.key)
            .then_with(|| a.inscription.cmp(&b.inscription))
    });
    order
}

/// Draws on `today`: once, after the list, from the draw date on (R42).
pub fn draw(edital: &Edital, seed: &str, today: NaiveDate) -> Result<Edital, Refusal> {
    let Some(list) = &edital.list else {
        return refused(RuleId::R42, "Publique a lista antes do sorteio.");
    };
    if let Some(d) = &edital.draw {
        return refused(
            RuleId::R42,
            format!(
                "O sorteio deste edital já foi feito em {}, com a semente \"{}\": não há novo \
                 sorteio.",
                br(d.drawn_on),
                d.seed
            ),
        );
    }
    if today < edital.draw_on {
        return refused(
            RuleId::R42,
            format!(
                "A semente ({}) só é conhecida em {}: o sorteio não pode ser feito antes.",
                edital.seed_source,
                br(edital.draw_on)
            ),
        );
    }
    let seed = normalise_seed(seed);
    let mut findings = Vec::new();
    // Normalised, the seed holds no line break; any other character a source prints is kept.
    check_text(
        &mut findings,
        "a semente do sorteio",
        &seed,
        MAX_SEED_CHARS,
        false,
    );
    all_or_refuse(findings)?;
    let inscriptions = lottery_inscriptions(&list.lottery_text).map_err(|reason| Refusal {
        findings: vec![refuse(
            RuleId::R42,
            format!("A lista publicada está ilegível: {reason}."),
        )],
    })?;
    let order = draw_order(&list.lottery_digest, &seed, &inscriptions);
    let mut next = edital.clone();
    next.draw = Some(Draw {
        drawn_on: today,
        seed,
        order,
    });
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// 5. Classification and result
// ---------------------------------------------------------------------------------------------

/// The order of art. 3 and the places it gives. Empty before the list. Group III follows the
/// draw (absent until drawn). Candidates excluded by a granted appeal keep their line and get
/// no place; places go down the order to each candidate's first preferred stand with a place
/// left (or, with no preference, the first stand of the edital with one).
pub fn classification(edital: &Edital) -> Vec<Ranked> {
    let Some(list) = &edital.list else {
        return Vec::new();
    };
    let by_group = |g: Group| {
        let mut v: Vec<&ListEntry> = list.entries.iter().filter(|e| e.group == Some(g)).collect();
        v.sort_by(|a, b| {
            a.since
                .cmp(&b.since)
                .then(a.birth_date.cmp(&b.birth_date))
                .then(inscription_order(&a.inscription, &b.inscription))
        });
        v
    };
    let mut ordered = by_group(Group::Holder);
    ordered.extend(by_group(Group::Auxiliary));
    if let Some(d) = &edital.draw {
        for drawn in &d.order {
            if let Some(e) = list.entries.iter().find(|e| {
                e.inscription == drawn.inscription && e.group == Some(Group::NewRegistrant)
            }) {
                ordered.push(e);
            }
        }
    }
    let excluded: BTreeMap<&str, u32> = edital
        .appeals
        .iter()
        .filter_map(|a| {
            let d = a.decision.as_ref()?;
            (d.granted && a.timely)
                .then_some(())
                .and(d.excludes.as_deref())
                .map(|i| (i, a.number))
        })
        .collect();
    let mut left: Vec<(StandId, u32)> = edital
        .vacancies
        .iter()
        .map(|v| (v.stand_id.clone(), v.places))
        .collect();
    let mut out = Vec::with_capacity(ordered.len());
    for (i, e) in ordered.into_iter().enumerate() {
        let excluded_by = excluded.get(e.inscription.as_str()).copied();
        let mut stand_id = None;
        if excluded_by.is_none() {
            let prefs = edital
                .candidate(&e.inscription)
                .map(|c| c.presented.preferences.clone())
                .unwrap_or_default();
            let pick = if prefs.is_empty() {
                left.iter().position(|(_, n)| *n > 0)
            } else {
                prefs
                    .iter()
                    .find_map(|p| left.iter().position(|(s, n)| s == p && *n > 0))
            };
            if let Some(k) = pick
                && let Some(slot) = left.get_mut(k)
            {
                slot.1 -= 1;
                stand_id = Some(slot.0.clone());
            }
        }
        out.push(Ranked {
            position: u32::try_from(i + 1).unwrap_or(u32::MAX),
            inscription: e.inscription.clone(),
            name: e.name.clone(),
            group: e.group.unwrap_or(Group::NewRegistrant),
            since: e.since,
            evidence: e.evidence.clone(),
            stand_id,
            excluded_by_appeal: excluded_by,
        });
    }
    out
}

/// Publishes the result on `today`: needs the list, and the draw when group III has anyone.
/// Opens the art. 5 window (calendar days, ADR 0030).
pub fn publish_result(
    edital: &Edital,
    today: NaiveDate,
    config: &RulesConfig,
) -> Result<Edital, Refusal> {
    let Some(list) = &edital.list else {
        return refused(RuleId::R42, "Publique a lista antes do resultado.");
    };
    if edital.result.is_some() {
        return refused(RuleId::R42, "O resultado deste edital já foi publicado.");
    }
    let lottery = list
        .entries
        .iter()
        .any(|e| e.group == Some(Group::NewRegistrant));
    if lottery && edital.draw.is_none() {
        return refused(
            RuleId::R42,
            "Há inscritos no grupo III (art. 3º, III): faça o sorteio antes de publicar o \
             resultado.",
        );
    }
    let appeal_deadline =
        deadline::selection_appeal_deadline(today, &config.calendar).map_err(|e| Refusal {
            findings: vec![refuse(RuleId::R42, e.to_string())],
        })?;
    let mut next = edital.clone();
    next.result = Some(PublishedResult {
        published_on: today,
        appeal_deadline,
    });
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// 6. Appeals
// ---------------------------------------------------------------------------------------------

/// Records an appeal (art. 5). One filed after the window is recorded as out of time: the
/// choice is then already final for it (it neither holds the grants nor may be granted).
pub fn file_appeal(edital: &Edital, req: NewAppeal, today: NaiveDate) -> Result<Edital, Refusal> {
    let Some(result) = &edital.result else {
        return refused(
            RuleId::R42,
            "O resultado ainda não foi publicado: não há escolha de que recorrer (art. 5º).",
        );
    };
    let filed_on = req.filed_on.unwrap_or(today);
    let mut findings = Vec::new();
    check_text(
        &mut findings,
        "o nome de quem recorre",
        &req.appellant,
        MAX_NAME_CHARS,
        true,
    );
    check_text(
        &mut findings,
        "as razões do recurso",
        &req.grounds,
        MAX_TEXT_CHARS,
        false,
    );
    if filed_on > today || filed_on < result.published_on {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "A data de protocolo ({}) deve estar entre a publicação do resultado ({}) e hoje.",
                br(filed_on),
                br(result.published_on)
            ),
        ));
    }
    if let Some(i) = &req.inscription
        && edital.candidate(i).is_none()
    {
        findings.push(refuse(
            RuleId::R42,
            format!("A inscrição {i} não existe neste edital."),
        ));
    }
    if edital.appeals.len() >= MAX_APPEALS {
        findings.push(refuse(
            RuleId::R42,
            format!("O edital já registra {MAX_APPEALS} recursos, o máximo."),
        ));
    }
    all_or_refuse(findings)?;
    let mut next = edital.clone();
    next.appeals.push(Appeal {
        number: u32::try_from(edital.appeals.len() + 1).unwrap_or(u32::MAX),
        appellant: req.appellant.trim().to_owned(),
        inscription: req.inscription,
        filed_on,
        grounds: req.grounds.trim().to_owned(),
        timely: filed_on <= result.appeal_deadline.deadline,
        decision: None,
    });
    Ok(next)
}

/// Records the decision of appeal `number` on `today`.
///
/// Refuses a decision already recorded, granting an appeal filed out of time (R42: the choice
/// was final for it), and excluding a candidate who was not chosen or by a denied appeal.
pub fn decide_appeal(
    edital: &Edital,
    number: u32,
    granted: bool,
    reasoning: &str,
    excludes: Option<String>,
    today: NaiveDate,
) -> Result<Edital, Refusal> {
    let Some(appeal) = edital.appeals.iter().find(|a| a.number == number) else {
        return refused(
            RuleId::R42,
            format!("O recurso nº {number} não existe neste edital."),
        );
    };
    if appeal.decision.is_some() {
        return refused(
            RuleId::R42,
            format!("O recurso nº {number} já foi decidido."),
        );
    }
    let mut findings = Vec::new();
    check_text(
        &mut findings,
        "a fundamentação da decisão",
        reasoning,
        MAX_TEXT_CHARS,
        false,
    );
    if granted && !appeal.timely {
        findings.push(refuse(
            RuleId::R42,
            format!(
                "O recurso nº {number} foi protocolado em {}, fora do prazo do art. 5º: a escolha \
                 já era definitiva e ele não pode ser provido.",
                br(appeal.filed_on)
            ),
        ));
    }
    if let Some(i) = &excludes {
        if !granted {
            findings.push(refuse(
                RuleId::R42,
                "Só um recurso provido exclui um candidato escolhido.",
            ));
        } else if !classification(edital)
            .iter()
            .any(|r| &r.inscription == i && r.stand_id.is_some())
        {
            findings.push(refuse(
                RuleId::R42,
                format!("A inscrição {i} não está entre os escolhidos."),
            ));
        } else if edital.grants.iter().any(|g| &g.inscription == i) {
            findings.push(refuse(
                RuleId::R42,
                format!("A inscrição {i} já recebeu o alvará."),
            ));
        }
    }
    if today < appeal.filed_on {
        findings.push(refuse(
            RuleId::R42,
            "A decisão não pode ser anterior ao protocolo do recurso.",
        ));
    }
    all_or_refuse(findings)?;
    let mut next = edital.clone();
    if let Some(a) = next.appeals.iter_mut().find(|a| a.number == number) {
        a.decision = Some(AppealDecision {
            decided_on: today,
            granted,
            reasoning: reasoning.trim().to_owned(),
            excludes,
        });
    }
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// 7. Grant
// ---------------------------------------------------------------------------------------------

/// What granting inscription `inscription` on `today` must write, or why it may not (art. 6).
///
/// Refuses (R42) before the result, within the art. 5 window, while a timely appeal waits, a
/// candidate not chosen (or excluded), one granted already, past [`REGISTRATION_DAYS`] after the
/// choice became final (art. 2 § único), and one not registered in the registry (art. 6 II,
/// art. 30: no person with the candidate's CPF); and a candidate who no longer meets art. 2 on
/// `today` (R06–R10 on the registry's person) or is barred by art. 10 § 2 (R43). For group I
/// the holder must still hold the permit seniority was counted from.
pub fn plan_grant(
    edital: &Edital,
    index: &RegistryIndex<'_>,
    inscription: &str,
    today: NaiveDate,
    config: &RulesConfig,
) -> Result<GrantPlan, Refusal> {
    let Some(result) = &edital.result else {
        return refused(
            RuleId::R42,
            "O resultado deste edital ainda não foi publicado.",
        );
    };
    let window_end = result.appeal_deadline.deadline;
    if today <= window_end {
        return refused(
            RuleId::R42,
            format!(
                "O prazo de recurso da escolha vai até {} (art. 5º): o alvará só é concedido \
                 depois (art. 6º, I).",
                br(window_end)
            ),
        );
    }
    let pending: Vec<u32> = edital
        .appeals
        .iter()
        .filter(|a| a.timely && a.decision.is_none())
        .map(|a| a.number)
        .collect();
    if !pending.is_empty() {
        return refused(
            RuleId::R42,
            format!(
                "Há recurso(s) em prazo sem decisão (nº {}): o alvará só é concedido depois de \
                 julgados (art. 6º, I).",
                pending
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    let ranked = classification(edital);
    let Some(line) = ranked.iter().find(|r| r.inscription == inscription) else {
        return refused(
            RuleId::R42,
            format!("A inscrição {inscription} não está na classificação deste edital."),
        );
    };
    if let Some(n) = line.excluded_by_appeal {
        return refused(
            RuleId::R42,
            format!("A inscrição {inscription} foi excluída pelo recurso nº {n}."),
        );
    }
    let Some(stand_id) = line.stand_id.clone() else {
        return refused(
            RuleId::R42,
            format!("A inscrição {inscription} não foi escolhida para nenhuma vaga."),
        );
    };
    if let Some(g) = edital.grants.iter().find(|g| g.inscription == inscription) {
        return refused(
            RuleId::R42,
            format!(
                "A inscrição {inscription} já recebeu o alvará {} em {}.",
                g.permit_number,
                br(g.granted_on)
            ),
        );
    }
    let final_on = edital.final_on().unwrap_or(window_end);
    let last_day = plus_days(final_on, REGISTRATION_DAYS);
    if today > last_day {
        return refused(
            RuleId::R42,
            format!(
                "A escolha tornou-se definitiva em {}; o prazo de 30 dias para o cadastramento \
                 terminou em {} (art. 2º, parágrafo único).",
                br(final_on),
                br(last_day)
            ),
        );
    }
    let Some(candidate) = edital.candidate(inscription) else {
        return refused(
            RuleId::R42,
            format!("A inscrição {inscription} não existe."),
        );
    };
    let Some(person) = index.person_by_cpf(&candidate.presented.cpf) else {
        return refused(
            RuleId::R42,
            format!(
                "{} ainda não fez o cadastramento (art. 30): cadastre a pessoa e o veículo \
                 antes de conceder o alvará (art. 6º, II).",
                candidate.presented.name
            ),
        );
    };
    let mut findings: Vec<Finding> = office::driver_requirements(person, today, config)
        .into_iter()
        .filter(|f| f.severity == Severity::Irregular)
        .map(|f| f.with_consequence(Consequence::OfficeRefusal))
        .collect();
    if config.is_enabled(RuleId::R43) {
        findings.extend(office::transferor_bar(index, person, today));
    }
    let mut moves_permit = None;
    let mut ends_auxiliary_on = Vec::new();
    match line.group {
        Group::Holder => {
            match index
                .permits_held_by(&person.id)
                .into_iter()
                .find(|p| !is_revoked(p))
            {
                Some(p) => moves_permit = Some(p.number.clone()),
                None => findings.push(refuse(
                    RuleId::R42,
                    format!(
                        "{} não é mais titular de alvará em vigor: a preferência do art. 3º, I \
                         não se aplica.",
                        person.name
                    ),
                )),
            }
        }
        Group::Auxiliary | Group::NewRegistrant => {
            ends_auxiliary_on = index
                .permits_with_auxiliary(&person.id)
                .into_iter()
                .filter(|p| !is_revoked(p))
                .map(|p| p.number.clone())
                .collect();
        }
    }
    all_or_refuse(findings)?;
    Ok(GrantPlan {
        inscription: inscription.to_owned(),
        person_id: person.id.clone(),
        stand_id,
        group: line.group,
        moves_permit,
        ends_auxiliary_on,
        edital_date: edital.published_on,
    })
}

/// The edital after the grant `plan` made, as permit `permit_number`.
pub fn record_grant(
    edital: &Edital,
    plan: &GrantPlan,
    permit_number: &str,
    today: NaiveDate,
) -> Edital {
    let mut next = edital.clone();
    next.grants.push(GrantRecord {
        inscription: plan.inscription.clone(),
        permit_number: permit_number.to_owned(),
        stand_id: plan.stand_id.clone(),
        granted_on: today,
    });
    next
}

#[cfg(test)]
mod tests;
