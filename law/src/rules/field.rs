//! Field check: plate or permit + driver + instant (+ observations) → Verdict.
//!
//! The check is a pure function of its [`Facts`]: what the registry says about the taxi and the
//! driver (at one version), the instant and what the officer saw. The device store fills the
//! facts from its bundle, the server and the CLI from their whole registry
//! (`Facts::from_registry`, or [`check_registry`] for both steps); all call the same [`check`].
//! Everything is reasoned on the America/Sao_Paulo calendar and clock (`crate::time`), so an
//! instant such as `2026-02-01T02:59Z` is still 31 January for art. 7.
//!
//! Evaluation order, which is also the order of the findings in the verdict:
//! 1. vehicle lookup (R01 when no alvará covers the vehicle; nothing else is evaluated then);
//! 2. the driver's relation to the permit, art. 8 (R04, R12, R14; the CPF of a deceased
//!    holder is R12: nobody may drive as a dead person);
//! 3. the driver's licence and person (R06, R07, R08, R09, R10, D01, D02);
//! 4. the permit's state: cassação and suspensions (R32), succession (R05);
//! 5. annual renewal, art. 7 (R11);
//! 6. the vehicle (R16, R17, R18, R19, R40, R02, D03, D04);
//! 7. stand and hours (R38, R24, R25): an idle taxi away from its own stand, at another or at
//!    none, in mandatory hours is R24; a stand id the registry does not know is an R24 warning.
//!
//! Periods in years (21 years of age, two years of licence, the taximeter's period) are counted
//! by `time::Period` (Código Civil art. 132 § 3). R18's vehicle age compares years of
//! manufacture with the edital's year, a count of calendar years, not a period between dates.
//!
//! Only rules enabled in `RulesConfig` are evaluated. Messages are in Portuguese, name the
//! plate, permit number and dates, and never carry a CPF, a name or other personal data.

use std::collections::BTreeSet;

use chrono::{Datelike, Days, NaiveDate, NaiveTime, Timelike};

use super::{
    CheckInput, Consequence, DriverFacts, EarMissing, Facts, Finding, RegistryStamp, RuleId,
    RulesConfig, Severity, StandSeen, TaxiFacts, VehicleQuery, Verdict,
};
use crate::domain::{
    DriverRole, LicenceKind, PenaltyKind, Permit, PermitState, Person, RegistryIndex, ServiceKind,
    StandSchedule, Vehicle, VehicleCategory, role_among,
};
use crate::time::{self, Period};

/// `check` on a whole registry (server, CLI, tests): [`Facts::from_registry`], then [`check`].
pub fn check_registry(
    index: &RegistryIndex<'_>,
    input: &CheckInput,
    config: &RulesConfig,
) -> Verdict {
    check(&Facts::from_registry(index, input), config)
}

/// Evaluates every enabled field rule on the facts of one check.
pub fn check(facts: &Facts, config: &RulesConfig) -> Verdict {
    let date = super::local_date(facts.at);
    let mut out = Findings {
        config,
        list: Vec::new(),
    };

    let driver = facts.driver.as_ref();
    let query_plate = match &facts.vehicle {
        VehicleQuery::Plate(p) => Some(p.canonical().to_owned()),
        VehicleQuery::Permit(_) => None,
    };
    let vehicle = facts.taxi.as_ref().and_then(|t| t.vehicle.as_ref());
    let plate = query_plate.or_else(|| vehicle.map(|v| v.plate.canonical().to_owned()));

    let Some(taxi_facts) = &facts.taxi else {
        if out.on(RuleId::R01) {
            let message = match &facts.vehicle {
                VehicleQuery::Plate(p) => format!(
                    "Nenhum alvará de táxi cadastrado para o veículo de placa {} (informada como \
                     \"{}\"): transporte individual remunerado sem alvará é clandestino (art. 1º); \
                     encaminhar à autoridade de trânsito.",
                    p.canonical(),
                    p.raw()
                ),
                VehicleQuery::Permit(n) => format!(
                    "O alvará nº {} não consta do cadastro municipal: transporte individual \
                     remunerado sem alvará é clandestino (art. 1º); encaminhar à autoridade de \
                     trânsito.",
                    n.trim()
                ),
            };
            out.push(
                Finding::new(RuleId::R01, message)
                    .with_consequence(Consequence::ReferToTrafficAuthority),
            );
        }
        return verdict(
            facts,
            out.list,
            Subject {
                permit_number: None,
                plate,
                driver_person_id: driver.map(|d| d.person.id.clone()),
                driver_role: None,
            },
        );
    };
    let permit = &taxi_facts.permit;

    let taxi = Taxi {
        number: &permit.number,
        plate: plate.as_deref().unwrap_or("desconhecida"),
    };

    let deceased = driver.and_then(|d| deceased_holder(d, permit, date));
    let role = match (driver, deceased) {
        // Nobody may drive as a dead person: whoever shows the CPF is not that holder.
        (Some(_), Some(_)) | (None, _) => DriverRole::Unauthorised,
        (Some(d), None) => role_on(permit, d, date),
    };
    match (driver, deceased) {
        (Some(_), Some(dead)) => check_deceased(&mut out, permit, dead, &taxi),
        _ => check_role(&mut out, permit, driver, role, date, &taxi),
    }
    if let Some(d) = driver
        && deceased.is_none()
    {
        check_driver(&mut out, &d.person, date);
    }
    check_permit_state(&mut out, taxi_facts, date);
    check_renewal(&mut out, permit, date);
    if let Some(v) = vehicle {
        check_vehicle(&mut out, taxi_facts, v, facts, date);
    }
    check_stand(&mut out, taxi_facts, facts, &taxi);

    verdict(
        facts,
        out.list,
        Subject {
            permit_number: Some(permit.number.clone()),
            plate,
            driver_person_id: driver.map(|d| d.person.id.clone()),
            driver_role: Some(role),
        },
    )
}

/// The driver's relation to this permit (art. 8): the registry's own definition, over the
/// driver's other permits.
fn role_on(permit: &Permit, driver: &DriverFacts, on: NaiveDate) -> DriverRole {
    role_among(permit, &driver.person.id, on, &driver.other_permits)
}

/// A holder whose death the registry records on `on` (their permit in succession since then,
/// art. 1 § 4): the permit number and the date.
fn deceased_holder<'f>(
    driver: &'f DriverFacts,
    permit: &'f Permit,
    on: NaiveDate,
) -> Option<(&'f str, NaiveDate)> {
    std::iter::once(permit)
        .chain(&driver.other_permits)
        .filter(|p| p.holder_id == driver.person.id)
        .find_map(|p| match p.state {
            PermitState::InSuccession { since } if since <= on => Some((p.number.as_str(), since)),
            _ => None,
        })
}

/// The CPF of a deceased holder at the wheel (art. 8 § 4): whoever drives is not that holder,
/// so not the titular nor an auxiliary of this taxi.
fn check_deceased(
    out: &mut Findings<'_>,
    permit: &Permit,
    (number, since): (&str, NaiveDate),
    taxi: &Taxi<'_>,
) {
    if !out.on(RuleId::R12) {
        return;
    }
    let whose = if number == permit.number {
        String::from("do próprio titular deste alvará")
    } else {
        format!("do titular do alvará nº {number}")
    };
    out.push(Finding::new(
        RuleId::R12,
        format!(
            "O documento apresentado é {whose}, falecido (alvará nº {number} em sucessão desde \
             {}, art. 1º, § 4º): ninguém pode dirigir em nome de pessoa falecida, e o {taxi} era \
             dirigido por quem não é titular nem auxiliar (art. 8º, § 4º).",
            br(since)
        ),
    ));
}

/// "táxi do alvará nº N (placa P)", as messages name the taxi; formatted only into a message
/// that fires.
struct Taxi<'a> {
    number: &'a str,
    plate: &'a str,
}

impl std::fmt::Display for Taxi<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "táxi do alvará nº {} (placa {})",
            self.number, self.plate
        )
    }
}

/// Findings collected so far, filtered by the configuration.
struct Findings<'c> {
    config: &'c RulesConfig,
    list: Vec<Finding>,
}

impl Findings<'_> {
    fn on(&self, id: RuleId) -> bool {
        self.config.is_enabled(id)
    }

    /// Adds a finding if its rule is enabled (callers usually test `on` first to skip work).
    fn push(&mut self, finding: Finding) {
        if self.config.is_enabled(finding.rule_id) {
            self.list.push(finding);
        }
    }
}

/// Identification part of the verdict.
struct Subject {
    permit_number: Option<String>,
    plate: Option<String>,
    driver_person_id: Option<String>,
    driver_role: Option<DriverRole>,
}

fn verdict(facts: &Facts, findings: Vec<Finding>, subject: Subject) -> Verdict {
    let refreshed_at = facts.registry_refreshed_at;
    Verdict {
        overall: Verdict::overall_of(&findings),
        checked_at: facts.at,
        checked_at_local: time::local_rfc3339(facts.at),
        permit_number: subject.permit_number,
        plate: subject.plate,
        driver_person_id: subject.driver_person_id,
        driver_role: subject.driver_role,
        registry: RegistryStamp {
            version: facts.registry_version,
            refreshed_at,
            age_seconds: refreshed_at.map(|r| (facts.at - r).num_seconds()),
        },
        findings,
    }
}

/// `DD/MM/AAAA`.
fn br(d: NaiveDate) -> String {
    d.format("%d/%m/%Y").to_string()
}

/// Art. 8 (and art. 1 §3): may this person drive this taxi?
fn check_role(
    out: &mut Findings<'_>,
    permit: &Permit,
    driver: Option<&DriverFacts>,
    role: DriverRole,
    date: NaiveDate,
    taxi: &Taxi<'_>,
) {
    let Some(DriverFacts {
        person,
        other_permits,
    }) = driver
    else {
        if out.on(RuleId::R12) {
            out.push(Finding::new(
                RuleId::R12,
                format!(
                    "O condutor identificado não consta do cadastro municipal de titulares e \
                     auxiliares e dirigia o {taxi}: táxi dirigido por quem não é titular nem \
                     auxiliar (art. 8º, § 4º)."
                ),
            ));
        }
        return;
    };
    match role {
        DriverRole::Holder | DriverRole::Auxiliary => {}
        DriverRole::IllnessSubstitute => {
            let auth = permit.illness_authorisation.as_ref();
            let window = auth
                .map(|a| format!("de {} a {}", br(a.valid_from), br(a.valid_until)))
                .unwrap_or_default();
            if auth.is_some_and(|a| a.medical_proof_on_file) {
                if out.on(RuleId::R04) {
                    out.push(Finding::new(
                        RuleId::R04,
                        format!(
                            "Condutor autorizado por escrito pelo titular enfermo a dirigir o \
                             {taxi}, {window}, com comprovação médica em arquivo (art. 1º, § 3º)."
                        ),
                    ));
                }
            } else if out.on(RuleId::R12) {
                out.push(Finding::new(
                    RuleId::R12,
                    format!(
                        "O condutor tem autorização do titular por enfermidade ({window}), mas \
                         sem comprovação médica do estado de saúde em arquivo (art. 1º, § 3º): a \
                         autorização não vale e o {taxi} era dirigido por quem não é titular nem \
                         auxiliar (art. 8º, § 4º)."
                    ),
                ));
            }
        }
        DriverRole::AuxiliaryOfAnotherPermit => {
            if out.on(RuleId::R14) {
                let registrations: Vec<String> = other_permits
                    .iter()
                    .flat_map(|p| {
                        p.auxiliaries
                            .iter()
                            .filter(|a| a.person_id == person.id)
                            .map(|a| {
                                format!("alvará nº {} (licença {})", p.number, a.licence_number)
                            })
                    })
                    .collect();
                out.push(
                    Finding::new(
                        RuleId::R14,
                        format!(
                            "Motorista auxiliar registrado no {} flagrado dirigindo o {taxi}: o \
                             auxiliar só pode dirigir o veículo do alvará do seu titular (art. 8º, \
                             §§ 2º e 3º).",
                            registrations.join(" e no ")
                        ),
                    )
                    .with_consequence(Consequence::RevokeAuxiliaryLicence),
                );
            }
        }
        DriverRole::HolderOfAnotherPermit | DriverRole::Unauthorised => {
            if out.on(RuleId::R12) {
                let who = if role == DriverRole::HolderOfAnotherPermit {
                    let held: Vec<String> = other_permits
                        .iter()
                        .filter(|p| p.holder_id == person.id)
                        .map(|p| format!("nº {}", p.number))
                        .collect();
                    format!("O condutor, titular do alvará {},", held.join(", "))
                } else {
                    String::from("O condutor, cadastrado mas sem vínculo com este alvará,")
                };
                let mut message = format!(
                    "{who} dirigia o {taxi}, do qual não é titular nem auxiliar (art. 8º, § 4º)."
                );
                if let Some(a) = &permit.illness_authorisation
                    && a.person_id == person.id
                {
                    message.push_str(&format!(
                        " A autorização do titular por enfermidade (art. 1º, § 3º) valia de {} a \
                         {} e não cobre {}.",
                        br(a.valid_from),
                        br(a.valid_until),
                        br(date)
                    ));
                }
                out.push(Finding::new(RuleId::R12, message));
            }
        }
    }
}

/// Art. 2 I–II / art. 30 I–II (and D01/D02) for a driver found in the registry.
fn check_driver(out: &mut Findings<'_>, person: &Person, date: NaiveDate) {
    let lic = &person.licence;

    /// Art. 2 I: "idade mínima de 21 anos".
    const MIN_AGE: Period = Period::Years(21);
    /// Art. 2 II: "CNH expedida há mais de dois anos".
    const LICENCE_AGE: Period = Period::Years(2);

    if out.on(RuleId::R06) && !MIN_AGE.completed(person.birth_date, date) {
        out.push(Finding::new(
            RuleId::R06,
            format!(
                "Condutor com menos de 21 anos em {} (idade mínima, art. 2º, I; art. 30, I): \
                 verificar o cadastro.",
                br(date)
            ),
        ));
    }

    if out.on(RuleId::R07) {
        // Compared upper-cased char by char: no string built unless the finding fires. ASCII
        // (every category there is) byte by byte, the same answer without the per-char
        // iterators (device bench).
        let same = |a: &str, b: &str| {
            let (a, b) = (a.trim(), b.trim());
            if a.is_ascii() && b.is_ascii() {
                return a.eq_ignore_ascii_case(b);
            }
            a.chars()
                .flat_map(char::to_uppercase)
                .eq(b.chars().flat_map(char::to_uppercase))
        };
        let covered = out
            .config
            .categories_covering_b
            .iter()
            .any(|c| same(c, &lic.category));
        if !covered {
            let category = lic.category.trim().to_uppercase();
            out.push(Finding::new(
                RuleId::R07,
                format!(
                    "CNH de categoria \"{category}\", que não abrange a categoria B exigida \
                     (art. 2º, II; art. 30, II)."
                ),
            ));
        }
    }

    if out.on(RuleId::R08) {
        let mut reasons = Vec::new();
        if lic.kind == LicenceKind::P {
            reasons.push(String::from(
                "a CNH é Permissão para Dirigir (\"P\"), que nunca atende ao requisito",
            ));
        }
        // The law asks for *more than* two years: the day they complete is not enough.
        if !LICENCE_AGE.exceeded(lic.first_licence_date, date) {
            let mut reason = format!(
                "primeira habilitação em {}, há dois anos ou menos",
                br(lic.first_licence_date)
            );
            if let Some(end) = LICENCE_AGE.ends_on(lic.first_licence_date)
                && let Some(next) = end.succ_opt()
            {
                reason.push_str(&format!(
                    " (os dois anos se completam em {}; atende ao requisito a partir de {})",
                    br(end),
                    br(next)
                ));
            }
            reasons.push(reason);
        }
        if !reasons.is_empty() {
            out.push(Finding::new(
                RuleId::R08,
                format!(
                    "CNH não expedida há mais de dois anos: {} (art. 2º, II; art. 30, II).",
                    reasons.join("; ")
                ),
            ));
        }
    }

    if out.on(RuleId::R09) {
        if lic.forbids_paid_activity() {
            out.push(
                Finding::new(
                    RuleId::R09,
                    "A CNH traz a observação \"VEDADA ATIVIDADE REMUNERADA\" (art. 2º, II; \
                     art. 30, II).",
                )
                .with_severity(Severity::Irregular),
            );
        } else if !lic.has_ear() {
            let severity = match out.config.ear_missing {
                EarMissing::Warning => Severity::Warning,
                EarMissing::Irregular => Severity::Irregular,
            };
            out.push(
                Finding::new(
                    RuleId::R09,
                    "A CNH não traz a observação EAR (exerce atividade remunerada, CTB art. 147, \
                     § 5º) exigida de quem dirige táxi.",
                )
                .with_severity(severity),
            );
        }
    }

    if out.on(RuleId::R10) {
        let grace = out.config.cnh_grace_days;
        let last_valid = lic.expiry.checked_add_days(Days::new(u64::from(grace)));
        if last_valid.is_some_and(|last| last < date) {
            let mut message = format!("CNH vencida em {}", br(lic.expiry));
            if let Some(last) = last_valid
                && grace > 0
            {
                message.push_str(&format!(
                    " (tolerância configurada de {grace} dias esgotada em {})",
                    br(last)
                ));
            }
            message.push_str(&format!("; fiscalização em {}.", br(date)));
            out.push(Finding::new(RuleId::R10, message));
        }
    }

    if out.on(RuleId::D01) && !person.cpf.check_digits_ok() {
        out.push(Finding::new(
            RuleId::D01,
            "O CPF do condutor no cadastro tem dígitos verificadores inválidos (possível erro de \
             digitação no cadastro).",
        ));
    }
    if out.on(RuleId::D02) && !lic.number.check_digits_ok() {
        out.push(Finding::new(
            RuleId::D02,
            "O número de registro da CNH do condutor no cadastro tem dígitos verificadores \
             inválidos (possível erro de digitação; as implementações divergem).",
        ));
    }
}

/// Penalties in force (art. 32 III–V) and succession (art. 1 §4).
fn check_permit_state(out: &mut Findings<'_>, taxi: &TaxiFacts, date: NaiveDate) {
    let permit = &taxi.permit;
    if out.on(RuleId::R32) {
        let mut revoked_on: Option<NaiveDate> = match permit.state {
            PermitState::Revoked { on } if on <= date => Some(on),
            _ => None,
        };
        // One finding per distinct interval: the state and the penalty usually describe the
        // same suspension.
        let mut suspensions: BTreeSet<(NaiveDate, NaiveDate)> = BTreeSet::new();
        if let PermitState::Suspended { from, until } = permit.state
            && from <= date
            && date <= until
        {
            suspensions.insert((from, until));
        }
        for pen in &taxi.penalties {
            match pen.kind {
                PenaltyKind::Revocation if pen.starts_on <= date => {
                    revoked_on = Some(revoked_on.map_or(pen.starts_on, |r| r.min(pen.starts_on)));
                }
                PenaltyKind::Suspension { .. } => {
                    if let Some(last) = pen.suspension_last_day()
                        && pen.starts_on <= date
                        && date <= last
                    {
                        suspensions.insert((pen.starts_on, last));
                    }
                }
                _ => {}
            }
        }
        if let Some(on) = revoked_on {
            out.push(
                Finding::new(
                    RuleId::R32,
                    format!(
                        "Alvará nº {} cassado em {} (art. 32, V): o veículo não pode operar como \
                         táxi.",
                        permit.number,
                        br(on)
                    ),
                )
                .with_severity(Severity::Irregular)
                .with_consequence(Consequence::VehicleMayNotOperate),
            );
        }
        for (from, until) in suspensions {
            // Art. 32 III is the 15-day suspension, IV the 60-day one; other lengths (a state
            // typed by the office) cite both.
            let inciso = match (until - from).num_days() + 1 {
                15 => "III",
                60 => "IV",
                _ => "III/IV",
            };
            out.push(
                Finding::new(
                    RuleId::R32,
                    format!(
                        "Alvará nº {} suspenso de {} a {} (art. 32, {inciso}): o veículo não pode \
                         operar como táxi neste período.",
                        permit.number,
                        br(from),
                        br(until)
                    ),
                )
                .with_severity(Severity::Irregular)
                .with_consequence(Consequence::VehicleMayNotOperate),
            );
        }
    }

    if let PermitState::InSuccession { since } = permit.state
        && out.on(RuleId::R05)
    {
        out.push(Finding::new(
            RuleId::R05,
            format!(
                "Alvará nº {} em sucessão desde {} (óbito do titular; o direito passa aos \
                 herdeiros, art. 1º, § 4º): a situação deve ser regularizada na Unidade de \
                 Transportes.",
                permit.number,
                br(since)
            ),
        ));
    }
}

/// Art. 7: renewed by 31 January for the current year.
fn check_renewal(out: &mut Findings<'_>, permit: &Permit, date: NaiveDate) {
    if !out.on(RuleId::R11) {
        return;
    }
    let year = date.year();
    // A renewal for a later year implies the current one was renewed too.
    let current = permit.renewal_year >= year;
    let previous_still_accepted = permit.renewal_year == year - 1 && date.month() == 1;
    if current || previous_still_accepted {
        return;
    }
    out.push(Finding::new(
        RuleId::R11,
        format!(
            "Alvará nº {} renovado por último para {}; em {} só vale o alvará renovado para {} \
             (prazo de renovação até 31/01/{}): a não renovação implica cassação automática da \
             permissão e vacância do ponto (art. 7º).",
            permit.number,
            permit.renewal_year,
            br(date),
            year,
            year
        ),
    ));
}

/// Upper case, accents removed, inner spaces collapsed: "Americana" = "AMERICANA" = "Américana".
/// A char iterator rather than a `String`: the check compares it and never needs the text.
fn fold(s: &str) -> impl Iterator<Item = char> + '_ {
    s.split_whitespace()
        .enumerate()
        .flat_map(|(i, word)| (i > 0).then_some(' ').into_iter().chain(word.chars()))
        .flat_map(char::to_uppercase)
        .map(|c| match c {
            'Á' | 'À' | 'Â' | 'Ã' | 'Ä' => 'A',
            'É' | 'È' | 'Ê' | 'Ë' => 'E',
            'Í' | 'Ì' | 'Î' | 'Ï' => 'I',
            'Ó' | 'Ò' | 'Ô' | 'Õ' | 'Ö' => 'O',
            'Ú' | 'Ù' | 'Û' | 'Ü' => 'U',
            'Ç' => 'C',
            other => other,
        })
}

/// `fold(s)` equals `target`, an upper-case ASCII text with single spaces. ASCII `s` (what the
/// registry holds) is compared word by word, without the per-char iterators of `fold` — the
/// same answer, as ASCII has no accents and upper-cases char for char (device bench:
/// every check compares the licensing place).
fn folds_to(s: &str, target: &str) -> bool {
    if s.eq_ignore_ascii_case(target) {
        return true;
    }
    if !s.is_ascii() {
        return fold(s).eq(target.chars());
    }
    let (mut words, mut want) = (s.split_whitespace(), target.split(' '));
    loop {
        match (words.next(), want.next()) {
            (Some(w), Some(t)) if w.eq_ignore_ascii_case(t) => {}
            (None, None) => return true,
            _ => return false,
        }
    }
}

/// Art. 13, art. 30 III, art. 1 §1 and the vehicle's data checks.
fn check_vehicle(
    out: &mut Findings<'_>,
    taxi: &TaxiFacts,
    v: &Vehicle,
    facts: &Facts,
    date: NaiveDate,
) {
    let permit = &taxi.permit;
    let plate = v.plate.canonical();
    let obs = &facts.observation;

    if out.on(RuleId::R16)
        && (!folds_to(&v.licensing_municipality, "AMERICANA") || !folds_to(&v.licensing_uf, "SP"))
    {
        out.push(Finding::new(
            RuleId::R16,
            format!(
                "Veículo de placa {plate} licenciado em {}/{} segundo o CRLV; o táxi deve estar \
                 licenciado no Município de Americana/SP (art. 13, I).",
                v.licensing_municipality.trim(),
                v.licensing_uf.trim()
            ),
        ));
    }

    if out.on(RuleId::R17) {
        let doors = obs.doors.unwrap_or(v.doors);
        let mut reasons = Vec::new();
        if doors < 4 {
            let source = if obs.doors.is_some() {
                "contadas na fiscalização"
            } else {
                "segundo o cadastro"
            };
            reasons.push(format!("{doors} portas {source} (mínimo 4)"));
        }
        if v.capacity_incl_driver > 7 {
            reasons.push(format!(
                "lotação de {} lugares com o condutor no CRLV (máximo 6 passageiros além do \
                 condutor)",
                v.capacity_incl_driver
            ));
        }
        if !reasons.is_empty() {
            out.push(Finding::new(
                RuleId::R17,
                format!(
                    "Veículo de placa {plate}: {} (art. 13, II).",
                    reasons.join("; ")
                ),
            ));
        }
    }

    if out.on(RuleId::R18)
        && let Some(edital) = permit.edital_date
    {
        let oldest = edital.year() - out.config.max_vehicle_age_years;
        if v.year_of_manufacture < oldest {
            out.push(Finding::new(
                RuleId::R18,
                format!(
                    "Veículo de placa {plate} fabricado em {}, mais de {} anos antes do Edital de \
                     Chamamento de {} do alvará nº {} (fabricação mínima {oldest}; art. 13, III, \
                     redação original).",
                    v.year_of_manufacture,
                    out.config.max_vehicle_age_years,
                    br(edital),
                    permit.number
                ),
            ));
        }
    }

    if out.on(RuleId::R19) && obs.roof_sign_present == Some(false) {
        out.push(Finding::new(
            RuleId::R19,
            format!(
                "Veículo de placa {plate} sem o dispositivo luminoso \"TÁXI\" no teto (art. 13, \
                 § 1º)."
            ),
        ));
    }

    if out.on(RuleId::R40)
        && let Some(holder) = &taxi.holder
        && holder.cpf != v.owner_cpf
    {
        out.push(Finding::new(
            RuleId::R40,
            format!(
                "Veículo de placa {plate} não está registrado (CRLV) em nome do permissionário \
                 do alvará nº {} (art. 30, III).",
                permit.number
            ),
        ));
    }

    if out.on(RuleId::R02) {
        let mut reasons = Vec::new();
        match &v.taximeter {
            None => reasons.push(String::from("nenhum taxímetro aferido registrado")),
            Some(t) => {
                if !t.seal_intact || obs.meter_seal_intact == Some(false) {
                    let when = if obs.meter_seal_intact == Some(false) {
                        "constatado na fiscalização"
                    } else {
                        "segundo o cadastro"
                    };
                    reasons.push(format!("lacre do taxímetro rompido ({when})"));
                }
                let by_label = t.valid_until_year.is_some_and(|y| y >= date.year());
                // Valid through the day the period expires.
                let period = Period::Years(u32::from(out.config.taximeter_period_years));
                let by_certificate = !period.exceeded(t.verified_on, date);
                if !by_label && !by_certificate {
                    let label = t
                        .valid_until_year
                        .map(|y| format!(", selo \"verificado até {y}\""))
                        .unwrap_or_default();
                    reasons.push(format!(
                        "aferição vencida (última verificação em {}{label}; validade de {})",
                        br(t.verified_on),
                        crate::text::plural_pt(
                            u64::from(out.config.taximeter_period_years),
                            "ano",
                            "anos"
                        )
                    ));
                }
            }
        }
        if !reasons.is_empty() {
            out.push(Finding::new(
                RuleId::R02,
                format!(
                    "Taxímetro do veículo de placa {plate}: {} (art. 1º, § 1º).",
                    reasons.join("; ")
                ),
            ));
        }
    }

    if out.on(RuleId::D03) && !v.renavam.check_digits_ok() {
        out.push(Finding::new(
            RuleId::D03,
            format!(
                "RENAVAM {} do veículo de placa {plate} com dígito verificador inválido (possível \
                 erro de digitação no cadastro).",
                v.renavam
            ),
        ));
    }

    if out.on(RuleId::D04) && v.category != VehicleCategory::Aluguel {
        let category = match v.category {
            VehicleCategory::Aluguel => "ALUGUEL",
            VehicleCategory::Particular => "PARTICULAR",
            VehicleCategory::Oficial => "OFICIAL",
            VehicleCategory::Outra => "OUTRA",
        };
        out.push(Finding::new(
            RuleId::D04,
            format!(
                "Veículo de placa {plate} com categoria {category} no CRLV: um táxi deve ser da \
                 categoria ALUGUEL (placa de aluguel)."
            ),
        ));
    }
}

/// Whether a local wall-clock time falls in a stand's mandatory hours (art. 16 I), to the
/// minute: 06:00–20:00 includes 20:00 (optional hours start at 20:01), and 06:00–24:00 includes
/// 24:00, i.e. the minute 00:00 (optional hours start at "24:01").
fn in_mandatory_hours(schedule: StandSchedule, t: NaiveTime) -> bool {
    let minute = t.hour() * 60 + t.minute();
    match schedule {
        StandSchedule::Day => (6 * 60..=20 * 60).contains(&minute),
        StandSchedule::Extended => minute >= 6 * 60 || minute == 0,
    }
}

fn window_label(schedule: StandSchedule) -> &'static str {
    match schedule {
        StandSchedule::Day => "06:00–20:00",
        StandSchedule::Extended => "06:00–24:00",
    }
}

/// Art. 28 (radio-taxi at a common stand) and art. 16 (permanence at the own stand). An idle
/// taxi counts as away from its stand whether it waits at another stand or at none; a stand id
/// the registry does not know is said, never ignored.
fn check_stand(out: &mut Findings<'_>, taxi: &TaxiFacts, facts: &Facts, label: &Taxi<'_>) {
    let permit = &taxi.permit;
    let found = match &taxi.found_at {
        StandSeen::Unknown => {
            // The officer's stand may be the own one mistyped: a warning to look, not an
            // irregularity.
            if out.on(RuleId::R24) {
                out.push(
                    Finding::new(
                        RuleId::R24,
                        format!(
                            "O ponto informado para o {label} não consta da versão {} do \
                             cadastro municipal: a permanência no ponto (art. 16, I) não pôde ser \
                             verificada; confira o ponto informado.",
                            facts.registry_version
                        ),
                    )
                    .with_severity(Severity::Warning)
                    .with_consequence(Consequence::OfficeReview),
                );
            }
            return;
        }
        StandSeen::NotAtStand => None,
        StandSeen::Own => taxi.own_stand.as_ref(),
        StandSeen::Other(stand) => Some(stand),
    };

    if let Some(found) = found
        && out.on(RuleId::R38)
        && found.service == ServiceKind::Common
        && permit.service == ServiceKind::RadioTaxi
    {
        out.push(Finding::new(
            RuleId::R38,
            format!(
                "Rádio-táxi ({label}) no ponto de táxi comum \"{}\" (art. 28).",
                found.name
            ),
        ));
    }

    if !facts.observation.idle || taxi.found_at == StandSeen::Own {
        return;
    }
    let Some(own) = &taxi.own_stand else {
        return;
    };
    let place = match found {
        Some(found) => format!("no ponto \"{}\"", found.name),
        None => String::from("fora de qualquer ponto"),
    };
    let t = time::local_datetime(facts.at).time();
    // `%H:%M` without parsing a format string on every check.
    let hhmm = format_args!("{:02}:{:02}", t.hour(), t.minute());
    let window = window_label(own.schedule);
    if in_mandatory_hours(own.schedule, t) {
        if out.on(RuleId::R24) {
            out.push(Finding::new(
                RuleId::R24,
                format!(
                    "{} parado {place} e não no seu ponto \"{}\" às {hhmm}, dentro do horário \
                     obrigatório {window} do seu ponto (art. 16, I; art. 31, VI).",
                    capitalise(&label.to_string()),
                    own.name
                ),
            ));
        }
    } else if out.on(RuleId::R25) {
        out.push(Finding::new(
            RuleId::R25,
            format!(
                "{} parado {place} às {hhmm}, fora do horário obrigatório {window} do seu ponto \
                 \"{}\": horário facultativo, a ausência do ponto não é infração (art. 16, \
                 parágrafo único).",
                capitalise(&label.to_string()),
                own.name
            ),
        ));
    }
}

fn capitalise(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
// Test fixtures are built with unwrap(): a malformed fixture should fail loudly.
#[allow(clippy::unwrap_used)]
mod tests {
    use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};

    use super::*;
    use crate::domain::{
        CnhNumber, Cpf, DriverId, IllnessAuthorisation, Penalty, Plate, Registry, Renavam,
    };
    use crate::rules::{Observation, Overall};
    use crate::testkit::{STRANGER_CPF, sample_registry};

    /// 12:00 local on the testkit's reference date (30 Nov 2026).
    const NOON: &str = "2026-11-30T15:00:00Z";

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    /// A wall-clock time in Americana (`YYYY-MM-DD HH:MM`) as a UTC instant.
    fn local(s: &str) -> DateTime<Utc> {
        let naive = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap();
        time::LOCAL_TZ
            .from_local_datetime(&naive)
            .single()
            .unwrap()
            .with_timezone(&Utc)
    }

    fn person_mut<'a>(reg: &'a mut Registry, id: &str) -> &'a mut Person {
        reg.people.iter_mut().find(|p| p.id == id).unwrap()
    }

    fn permit_mut<'a>(reg: &'a mut Registry, number: &str) -> &'a mut Permit {
        reg.permits.iter_mut().find(|p| p.number == number).unwrap()
    }

    fn vehicle_mut<'a>(reg: &'a mut Registry, id: &str) -> &'a mut Vehicle {
        reg.vehicles.iter_mut().find(|v| v.id == id).unwrap()
    }

    /// The driver as identified by the CPF currently in the registry.
    fn driver(reg: &Registry, person_id: &str) -> DriverId {
        let p = reg.people.iter().find(|p| p.id == person_id).unwrap();
        DriverId::Cpf(p.cpf.clone())
    }

    fn stranger() -> DriverId {
        DriverId::Cpf(Cpf::parse(STRANGER_CPF).unwrap())
    }

    fn by_plate(plate: &str, driver: DriverId, at: DateTime<Utc>) -> CheckInput {
        CheckInput {
            vehicle: VehicleQuery::Plate(Plate::parse(plate).unwrap()),
            driver,
            at,
            observation: Observation::default(),
            registry_refreshed_at: None,
        }
    }

    fn by_permit(number: &str, driver: DriverId, at: DateTime<Utc>) -> CheckInput {
        CheckInput {
            vehicle: VehicleQuery::Permit(number.into()),
            ..by_plate("AAA0000", driver, at)
        }
    }

    /// Ana (P04), holder of permit 0002 (ABC-1234, stand S02 06–20), at noon on 30 Nov 2026.
    fn ana(reg: &Registry) -> CheckInput {
        by_plate("ABC-1234", driver(reg, "P04"), utc(NOON))
    }

    fn run_with(reg: &Registry, input: &CheckInput, config: &RulesConfig) -> Verdict {
        reg.validate().unwrap();
        let v = check_registry(&reg.index(), input, config);
        assert_no_personal_data(reg, &v);
        v
    }

    fn run(reg: &Registry, input: &CheckInput) -> Verdict {
        run_with(reg, input, &RulesConfig::default())
    }

    /// The single finding of a rule, failing if it is absent or repeated.
    fn only<'v>(v: &'v Verdict, id: &str) -> &'v Finding {
        let found: Vec<&Finding> = v.findings.iter().filter(|f| f.rule_id == id).collect();
        assert_eq!(found.len(), 1, "{id} expected once in {:#?}", v.findings);
        found[0]
    }

    /// Messages never carry a CPF, CNH number or name of anyone in the registry, nor the
    /// stranger's CPF.
    fn assert_no_personal_data(reg: &Registry, v: &Verdict) {
        for f in &v.findings {
            assert!(!f.message.contains(STRANGER_CPF), "{}", f.message);
            for p in &reg.people {
                assert!(!f.message.contains(p.cpf.as_str()), "CPF in {}", f.message);
                assert!(!f.message.contains(&p.cpf.masked()), "CPF in {}", f.message);
                assert!(
                    !f.message.contains(p.licence.number.as_str()),
                    "CNH in {}",
                    f.message
                );
                assert!(!f.message.contains(&p.name), "name in {}", f.message);
            }
        }
    }

    fn with_config(f: impl FnOnce(&mut RulesConfig)) -> RulesConfig {
        let mut c = RulesConfig::default();
        f(&mut c);
        c
    }

    // ---- lookup, identification, verdict envelope ------------------------------------------

    #[test]
    fn ascii_place_names_fold_as_any_other() {
        for s in [
            "AMERICANA",
            "Americana",
            "  americana ",
            "AMÉRICANA",
            "Américana",
            "Ame ricana",
            "AME  RICANA",
            "americana\u{0B}",
            "\tamericana\r\n",
            "AMERICANA-SP",
            "ıamericana",
            "amerıcana",
            "SP",
            "sp ",
            "S P",
            "s\u{00A0}p",
            "",
        ] {
            for target in ["AMERICANA", "SP", "SANTA BARBARA"] {
                assert_eq!(
                    folds_to(s, target),
                    fold(s).eq(target.chars()),
                    "{s:?} {target}"
                );
            }
        }
        assert!(folds_to("santa  barbara", "SANTA BARBARA"));
        assert!(!folds_to("santabarbara", "SANTA BARBARA"));
    }
    #[test]
    fn holder_and_auxiliary_of_a_clean_permit_are_regular() {
        let reg = sample_registry();
        for (pid, role) in [("P04", DriverRole::Holder), ("P05", DriverRole::Auxiliary)] {
            let v = run(&reg, &by_plate("ABC-1234", driver(&reg, pid), utc(NOON)));
            assert_eq!(v.findings, vec![], "{pid}");
            assert_eq!(v.overall, Overall::Regular);
            assert_eq!(v.permit_number.as_deref(), Some("0002"));
            assert_eq!(v.plate.as_deref(), Some("ABC1C34"));
            assert_eq!(v.driver_person_id.as_deref(), Some(pid));
            assert_eq!(v.driver_role, Some(role));
        }
    }

    #[test]
    fn every_plate_spelling_finds_permit_0002() {
        let reg = sample_registry();
        for spelling in ["ABC-1234", "abc1c34", "ABC1234", "abc 1234", "ABC1C34"] {
            let v = run(&reg, &by_plate(spelling, driver(&reg, "P04"), utc(NOON)));
            assert_eq!(v.permit_number.as_deref(), Some("0002"), "{spelling}");
            assert_eq!(v.plate.as_deref(), Some("ABC1C34"), "{spelling}");
            assert_eq!(v.overall, Overall::Regular, "{spelling}");
        }
    }

    #[test]
    fn lookup_by_permit_number_reports_the_vehicle_plate() {
        let reg = sample_registry();
        let v = run(&reg, &by_permit("0002", driver(&reg, "P04"), utc(NOON)));
        assert_eq!(v.permit_number.as_deref(), Some("0002"));
        assert_eq!(v.plate.as_deref(), Some("ABC1C34"));
        assert_eq!(v.overall, Overall::Regular);
        let v = run(&reg, &by_permit(" 0001 ", driver(&reg, "P01"), utc(NOON)));
        assert_eq!(v.permit_number.as_deref(), Some("0001"));
        assert_eq!(v.plate.as_deref(), Some("BRA2E19"));
        assert_eq!(v.driver_role, Some(DriverRole::Holder));
    }

    #[test]
    fn r01_unknown_plate_is_clandestine_and_stops_there() {
        let reg = sample_registry();
        let mut input = by_plate("xyz-9z99", driver(&reg, "P04"), utc(NOON));
        // Observations that would fire other rules are not evaluated without a permit.
        input.observation.roof_sign_present = Some(false);
        input.observation.meter_seal_intact = Some(false);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R01"]);
        assert_eq!(v.overall, Overall::Irregular);
        let f = only(&v, "R01");
        assert_eq!(f.consequence, Consequence::ReferToTrafficAuthority);
        assert_eq!(f.severity, Severity::Irregular);
        assert_eq!(f.citation, "Lei 4.019/2004, art. 1; CTB, art. 231, VIII");
        assert!(f.message.contains("XYZ9Z99"), "{}", f.message);
        assert!(f.message.contains("clandestino"), "{}", f.message);
        assert_eq!(v.permit_number, None);
        assert_eq!(v.plate.as_deref(), Some("XYZ9Z99"));
        // The driver is still identified.
        assert_eq!(v.driver_person_id.as_deref(), Some("P04"));
        assert_eq!(v.driver_role, None);
        assert_eq!(v.registry.version, 7);
    }

    #[test]
    fn r01_unknown_permit_number_and_registered_vehicle_without_permit() {
        let mut reg = sample_registry();
        let v = run(&reg, &by_permit("9999", stranger(), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R01"]);
        assert!(v.findings[0].message.contains("9999"));
        assert_eq!(v.plate, None);
        assert_eq!(v.driver_person_id, None);

        // A vehicle in the registry but on no alvará is no taxi either.
        let mut extra = reg.vehicles[1].clone();
        extra.id = "V06".into();
        extra.plate = Plate::parse("QWE1R23").unwrap();
        reg.vehicles.push(extra);
        let v = run(&reg, &by_plate("QWE1R23", driver(&reg, "P04"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R01"]);

        // Disabled, it does not fire.
        let config = with_config(|c| c.disabled_rules = vec![RuleId::R01]);
        let v = run_with(&reg, &by_plate("QWE1R23", stranger(), utc(NOON)), &config);
        assert_eq!(v.findings, vec![]);
    }

    #[test]
    fn registry_stamp_and_local_time() {
        let mut reg = sample_registry();
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.registry.version, 7);
        assert_eq!(v.registry.refreshed_at, Some(utc("2026-11-29T12:00:00Z")));
        assert_eq!(v.registry.age_seconds, Some(27 * 3600));
        assert_eq!(v.checked_at, utc(NOON));
        assert_eq!(v.checked_at_local, "2026-11-30T12:00:00-03:00");

        let mut input = ana(&reg);
        input.registry_refreshed_at = Some(utc("2026-11-30T14:30:00Z"));
        let v = run(&reg, &input);
        assert_eq!(v.registry.refreshed_at, Some(utc("2026-11-30T14:30:00Z")));
        assert_eq!(v.registry.age_seconds, Some(1800));

        reg.generated_at = None;
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.registry.refreshed_at, None);
        assert_eq!(v.registry.age_seconds, None);
    }

    // ---- art. 8 and art. 1 §3 -----------------------------------------------------------------

    fn illness(reg: &mut Registry, proof: bool, from: NaiveDate, until: NaiveDate) {
        permit_mut(reg, "0002").illness_authorisation = Some(IllnessAuthorisation {
            person_id: "P10".into(),
            medical_proof_on_file: proof,
            valid_from: from,
            valid_until: until,
        });
    }

    #[test]
    fn r04_illness_substitute_with_medical_proof_is_info_only() {
        let mut reg = sample_registry();
        illness(&mut reg, true, d(2026, 11, 1), d(2026, 12, 31));
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P10"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R04"]);
        let f = only(&v, "R04");
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.citation, "Lei 4.019/2004, art. 1, § 3");
        assert!(f.message.contains("01/11/2026") && f.message.contains("31/12/2026"));
        assert_eq!(v.overall, Overall::Regular);
        assert_eq!(v.driver_role, Some(DriverRole::IllnessSubstitute));

        // The holder driving the same permit gets no R04.
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.findings, vec![]);
    }

    #[test]
    fn r04_without_medical_proof_is_r12() {
        let mut reg = sample_registry();
        illness(&mut reg, false, d(2026, 11, 1), d(2026, 12, 31));
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P10"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R12"]);
        let f = only(&v, "R12");
        assert!(
            f.message.contains("sem comprovação médica"),
            "{}",
            f.message
        );
        assert_eq!(f.consequence, Consequence::RevokePermit);
        assert_eq!(v.overall, Overall::Irregular);
        assert_eq!(v.driver_role, Some(DriverRole::IllnessSubstitute));
    }

    #[test]
    fn r04_outside_the_authorisation_window_is_r12() {
        let mut reg = sample_registry();
        illness(&mut reg, true, d(2026, 11, 1), d(2026, 11, 29));
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P10"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R12"]);
        assert_eq!(v.driver_role, Some(DriverRole::Unauthorised));
        let m = &v.findings[0].message;
        assert!(
            m.contains("29/11/2026") && m.contains("não cobre 30/11/2026"),
            "{m}"
        );
        // Last day of the window is still covered (local date).
        let v = run(
            &reg,
            &by_plate("ABC-1234", driver(&reg, "P10"), local("2026-11-29 23:59")),
        );
        assert_eq!(v.rule_ids(), vec!["R04"]);
    }

    #[test]
    fn r12_registered_person_without_link_to_the_permit() {
        let reg = sample_registry();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P10"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R12"]);
        let f = only(&v, "R12");
        assert_eq!(f.citation, "Lei 4.019/2004, art. 8, § 4");
        assert!(!f.wording_verified);
        assert_eq!(f.severity, Severity::Irregular);
        assert_eq!(f.consequence, Consequence::RevokePermit);
        assert!(
            f.message.contains("0002") && f.message.contains("ABC1C34"),
            "{}",
            f.message
        );
        assert_eq!(v.driver_role, Some(DriverRole::Unauthorised));
        assert_eq!(v.driver_person_id.as_deref(), Some("P10"));
    }

    #[test]
    fn r12_person_not_in_registry() {
        let reg = sample_registry();
        let v = run(&reg, &by_plate("ABC-1234", stranger(), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R12"]);
        assert!(v.findings[0].message.contains("não consta do cadastro"));
        assert_eq!(v.driver_person_id, None);
        assert_eq!(v.driver_role, Some(DriverRole::Unauthorised));
        assert_eq!(v.overall, Overall::Irregular);
    }

    #[test]
    fn r12_holder_of_another_permit() {
        let reg = sample_registry();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P01"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R12"]);
        assert_eq!(v.driver_role, Some(DriverRole::HolderOfAnotherPermit));
        let m = &v.findings[0].message;
        assert!(m.contains("titular do alvará nº 0001"), "{m}");
        assert!(m.contains("0002"), "{m}");
    }

    #[test]
    fn r14_auxiliary_of_another_permit() {
        let reg = sample_registry();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P02"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R14"]);
        assert_eq!(v.driver_role, Some(DriverRole::AuxiliaryOfAnotherPermit));
        let f = only(&v, "R14");
        assert_eq!(f.consequence, Consequence::RevokeAuxiliaryLicence);
        assert_eq!(f.citation, "Lei 4.019/2004, art. 8, § 2; art. 8, § 3");
        assert!(
            f.message.contains("alvará nº 0001 (licença 0001-A1)"),
            "{}",
            f.message
        );
        assert!(f.message.contains("alvará nº 0002"), "{}", f.message);

        // The same auxiliary on the taxi of their own permit: nothing.
        let v = run(&reg, &by_plate("BRA2E19", driver(&reg, "P02"), utc(NOON)));
        assert_eq!(v.findings, vec![]);
        assert_eq!(v.driver_role, Some(DriverRole::Auxiliary));
    }

    // ---- driver conditions -------------------------------------------------------------------

    #[test]
    fn r06_under_21_on_the_local_date() {
        let mut reg = sample_registry();
        person_mut(&mut reg, "P05").birth_date = d(2005, 12, 1);
        let input = by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON));
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R06"]);
        assert!(
            !v.findings[0].message.contains("2005"),
            "no birth date in the message"
        );
        // 21st birthday on the check date: fine.
        person_mut(&mut reg, "P05").birth_date = d(2005, 11, 30);
        assert_eq!(run(&reg, &input).findings, vec![]);
        // Turns 21 on 1 Dec: 23:59 local on 30 Nov (02:59Z on 1 Dec) is still under 21.
        person_mut(&mut reg, "P05").birth_date = d(2005, 12, 1);
        let late = by_plate("ABC-1234", driver(&reg, "P05"), utc("2026-12-01T02:59:00Z"));
        assert_eq!(run(&reg, &late).rule_ids(), vec!["R06"]);
        let next = by_plate("ABC-1234", driver(&reg, "P05"), utc("2026-12-01T03:00:00Z"));
        assert_eq!(run(&reg, &next).findings, vec![]);
    }

    #[test]
    fn r07_category_must_cover_b() {
        let mut reg = sample_registry();
        let input = by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON));
        person_mut(&mut reg, "P05").licence.category = "A".into();
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R07"]);
        assert!(v.findings[0].message.contains("\"A\""));
        assert_eq!(
            v.findings[0].citation,
            "Lei 4.019/2004, art. 2, II; art. 30, II"
        );
        for ok in [" ae ", "b", "D", "AB"] {
            person_mut(&mut reg, "P05").licence.category = ok.into();
            assert_eq!(run(&reg, &input).findings, vec![], "{ok}");
        }
        // Configuration decides what covers B.
        let strict = with_config(|c| c.categories_covering_b = vec![" b ".into()]);
        person_mut(&mut reg, "P05").licence.category = "AB".into();
        assert_eq!(run_with(&reg, &input, &strict).rule_ids(), vec!["R07"]);
        person_mut(&mut reg, "P05").licence.category = "B".into();
        assert_eq!(run_with(&reg, &input, &strict).findings, vec![]);
    }

    #[test]
    fn r08_permission_or_less_than_two_years() {
        let mut reg = sample_registry();
        let input = by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON));
        person_mut(&mut reg, "P05").licence.kind = LicenceKind::P;
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R08"]);
        assert!(v.findings[0].message.contains("Permissão para Dirigir"));

        person_mut(&mut reg, "P05").licence.kind = LicenceKind::D;
        person_mut(&mut reg, "P05").licence.first_licence_date = d(2024, 12, 1);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R08"]);
        let m = &v.findings[0].message;
        assert!(m.contains("01/12/2024") && m.contains("01/12/2026"), "{m}");

        // Exactly two years on the check date: not *more than* two years (art. 2, II).
        person_mut(&mut reg, "P05").licence.first_licence_date = d(2024, 11, 30);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R08"]);
        let m = &v.findings[0].message;
        assert!(m.contains("30/11/2026") && m.contains("01/12/2026"), "{m}");
        // Two years and a day: fine.
        person_mut(&mut reg, "P05").licence.first_licence_date = d(2024, 11, 29);
        assert_eq!(run(&reg, &input).findings, vec![]);
    }

    #[test]
    fn r08_two_years_from_29_february_complete_on_1_march() {
        // Código Civil art. 132 § 3: no 29 Feb in 2026, so the two years expire on 1 Mar 2026,
        // and more than two years have passed only from 2 Mar.
        let mut reg = sample_registry();
        person_mut(&mut reg, "P05").licence.first_licence_date = d(2024, 2, 29);
        for (at, fires) in [
            ("2026-02-28 12:00", true),
            ("2026-03-01 12:00", true),
            ("2026-03-01 23:59", true),
            ("2026-03-02 00:00", false),
        ] {
            let input = by_plate("ABC-1234", driver(&reg, "P05"), local(at));
            let v = run(&reg, &input);
            assert_eq!(v.rule_ids().contains(&"R08"), fires, "{at}: {v:#?}");
            if fires {
                let m = &only(&v, "R08").message;
                assert!(m.contains("01/03/2026") && m.contains("02/03/2026"), "{m}");
            }
        }
    }

    #[test]
    fn r06_born_on_29_february_is_21_on_1_march() {
        let mut reg = sample_registry();
        person_mut(&mut reg, "P05").birth_date = d(2004, 2, 29);
        for (at, fires) in [("2025-02-28 23:59", true), ("2025-03-01 00:00", false)] {
            let input = by_plate("ABC-1234", driver(&reg, "P05"), local(at));
            // Only R06 is of interest here (the sample's other dates are for 2026).
            let v = run(&reg, &input);
            assert_eq!(v.rule_ids().contains(&"R06"), fires, "{at}");
        }
    }

    #[test]
    fn r09_forbidden_paid_activity_is_irregular() {
        let mut reg = sample_registry();
        let input = by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON));
        person_mut(&mut reg, "P05").licence.observations =
            vec!["EAR".into(), "Vedada atividade remunerada".into()];
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R09"]);
        assert_eq!(v.findings[0].severity, Severity::Irregular);
        assert!(
            v.findings[0]
                .message
                .contains("VEDADA ATIVIDADE REMUNERADA")
        );
        assert_eq!(v.overall, Overall::Irregular);
    }

    #[test]
    fn r09_missing_ear_follows_the_configuration() {
        let mut reg = sample_registry();
        let input = by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON));
        person_mut(&mut reg, "P05").licence.observations = vec!["A".into()];
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R09"]);
        assert_eq!(v.findings[0].severity, Severity::Warning);
        assert!(v.findings[0].message.contains("EAR"));
        assert_eq!(v.overall, Overall::Warning);

        let strict = with_config(|c| c.ear_missing = EarMissing::Irregular);
        let v = run_with(&reg, &input, &strict);
        assert_eq!(v.rule_ids(), vec!["R09"]);
        assert_eq!(v.findings[0].severity, Severity::Irregular);
        assert_eq!(v.overall, Overall::Irregular);

        for ok in ["EAR", "15", "Exerce atividade remunerada"] {
            person_mut(&mut reg, "P05").licence.observations = vec![ok.into()];
            assert_eq!(run_with(&reg, &input, &strict).findings, vec![], "{ok}");
        }
    }

    #[test]
    fn r10_expiry_day_is_still_valid() {
        let mut reg = sample_registry();
        person_mut(&mut reg, "P05").licence.expiry = d(2026, 11, 30);
        let input = |at| by_plate("ABC-1234", driver(&reg, "P05"), at);
        assert_eq!(run(&reg, &input(utc(NOON))).findings, vec![]);
        // 23:00 local on the expiry day (02:00Z next day): still valid.
        assert_eq!(
            run(&reg, &input(utc("2026-12-01T02:00:00Z"))).findings,
            vec![]
        );
        // 00:00 local the next day: expired.
        let v = run(&reg, &input(utc("2026-12-01T03:00:00Z")));
        assert_eq!(v.rule_ids(), vec!["R10"]);
        assert!(v.findings[0].message.contains("vencida em 30/11/2026"));
        assert_eq!(v.findings[0].severity, Severity::Irregular);
    }

    #[test]
    fn r10_grace_days() {
        let mut reg = sample_registry();
        let input = by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON));
        person_mut(&mut reg, "P05").licence.expiry = d(2026, 11, 29);
        assert_eq!(run(&reg, &input).rule_ids(), vec!["R10"]);

        let grace = with_config(|c| c.cnh_grace_days = 30);
        person_mut(&mut reg, "P05").licence.expiry = d(2026, 10, 31);
        assert_eq!(run_with(&reg, &input, &grace).findings, vec![]);
        person_mut(&mut reg, "P05").licence.expiry = d(2026, 10, 30);
        let v = run_with(&reg, &input, &grace);
        assert_eq!(v.rule_ids(), vec!["R10"]);
        let m = &v.findings[0].message;
        assert!(m.contains("30 dias") && m.contains("29/11/2026"), "{m}");
    }

    #[test]
    fn d01_d02_bad_check_digits_are_warnings() {
        let mut reg = sample_registry();
        person_mut(&mut reg, "P05").cpf = Cpf::parse("12345678901").unwrap();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["D01"]);
        assert_eq!(v.findings[0].severity, Severity::Warning);
        assert_eq!(v.overall, Overall::Warning);

        let mut reg = sample_registry();
        person_mut(&mut reg, "P05").licence.number = CnhNumber::parse("02650306462").unwrap();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["D02"]);
        assert_eq!(v.findings[0].severity, Severity::Warning);
        // Baseline: the sample's documents are valid, so neither fires.
        let reg = sample_registry();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON)));
        assert_eq!(v.findings, vec![]);
    }

    // ---- permit state ------------------------------------------------------------------------

    fn lucas(reg: &Registry, at: DateTime<Utc>) -> CheckInput {
        by_plate("DEF4G56", driver(reg, "P06"), at)
    }

    #[test]
    fn r32_suspension_state_and_penalty_give_one_finding() {
        let reg = sample_registry();
        let v = run(&reg, &lucas(&reg, utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R32"]);
        let f = only(&v, "R32");
        assert_eq!(f.severity, Severity::Irregular);
        assert_eq!(f.consequence, Consequence::VehicleMayNotOperate);
        assert_eq!(
            f.message,
            "Alvará nº 0003 suspenso de 20/11/2026 a 04/12/2026 (art. 32, III): o veículo não \
             pode operar como táxi neste período."
        );
        assert_eq!(v.overall, Overall::Irregular);
    }

    #[test]
    fn r32_suspension_edges_in_local_time() {
        let reg = sample_registry();
        // D+14 at 23:59 local is already 5 Dec in UTC: still suspended.
        let last = local("2026-12-04 23:59");
        assert_eq!(last, utc("2026-12-05T02:59:00Z"));
        assert_eq!(run(&reg, &lucas(&reg, last)).rule_ids(), vec!["R32"]);
        // D+15: regular again.
        let v = run(&reg, &lucas(&reg, local("2026-12-05 00:00")));
        assert_eq!(v.findings, vec![]);
        assert_eq!(v.overall, Overall::Regular);
        // First day D is suspended, the day before is not.
        assert_eq!(
            run(&reg, &lucas(&reg, local("2026-11-20 00:00"))).rule_ids(),
            vec!["R32"]
        );
        assert_eq!(
            run(&reg, &lucas(&reg, local("2026-11-19 23:59"))).findings,
            vec![]
        );
    }

    #[test]
    fn r32_penalty_alone_and_state_alone() {
        // Penalty only (state active): the 15 days still run D…D+14.
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0003").state = PermitState::Active;
        assert_eq!(
            run(&reg, &lucas(&reg, local("2026-12-04 12:00"))).rule_ids(),
            vec!["R32"]
        );
        assert_eq!(
            run(&reg, &lucas(&reg, local("2026-12-05 12:00"))).findings,
            vec![]
        );

        // State only (no penalty record).
        let mut reg = sample_registry();
        reg.penalties.clear();
        assert_eq!(run(&reg, &lucas(&reg, utc(NOON))).rule_ids(), vec!["R32"]);

        // A 60-day suspension of permit 0002 from 2 Oct covers up to 30 Nov inclusive.
        let mut reg = sample_registry();
        reg.penalties.push(Penalty {
            id: "PEN-60".into(),
            permit_number: "0002".into(),
            person_id: Some("P04".into()),
            kind: PenaltyKind::Suspension { days: 60 },
            decided_on: d(2026, 9, 20),
            starts_on: d(2026, 10, 2),
            record_id: None,
        });
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R32"]);
        assert!(v.findings[0].message.contains("de 02/10/2026 a 30/11/2026"));
        let next = by_plate("ABC-1234", driver(&reg, "P04"), local("2026-12-01 00:00"));
        assert_eq!(run(&reg, &next).findings, vec![]);
    }

    #[test]
    fn r32_distinct_suspensions_are_reported_separately() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0003").state = PermitState::Suspended {
            from: d(2026, 11, 25),
            until: d(2026, 12, 10),
        };
        let v = run(&reg, &lucas(&reg, utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R32", "R32"]);
        assert!(v.findings[0].message.contains("20/11/2026 a 04/12/2026"));
        assert!(v.findings[1].message.contains("25/11/2026 a 10/12/2026"));
    }

    fn revocation(reg: &mut Registry, starts_on: NaiveDate) {
        reg.penalties.push(Penalty {
            id: "PEN-CASS".into(),
            permit_number: "0002".into(),
            person_id: Some("P04".into()),
            kind: PenaltyKind::Revocation,
            decided_on: d(2026, 11, 1),
            starts_on,
            record_id: None,
        });
    }

    #[test]
    fn r32_revocation_by_state_or_penalty() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0002").state = PermitState::Revoked { on: d(2026, 11, 1) };
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R32"]);
        let f = only(&v, "R32");
        assert!(
            f.message.contains("Alvará nº 0002 cassado em 01/11/2026"),
            "{}",
            f.message
        );
        assert_eq!(f.severity, Severity::Irregular);
        assert_eq!(f.consequence, Consequence::VehicleMayNotOperate);

        // State and penalty together: one finding, with the earliest date.
        revocation(&mut reg, d(2026, 11, 3));
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R32"]);
        assert!(v.findings[0].message.contains("01/11/2026"));

        // Penalty in effect, state still active.
        let mut reg = sample_registry();
        revocation(&mut reg, d(2026, 11, 25));
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R32"]);
        assert!(v.findings[0].message.contains("cassado em 25/11/2026"));

        // Penalty not yet in effect.
        let mut reg = sample_registry();
        revocation(&mut reg, d(2026, 12, 10));
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);
    }

    #[test]
    fn r05_succession_is_a_warning() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0002").state = PermitState::InSuccession {
            since: d(2026, 10, 1),
        };
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R05"]);
        assert_eq!(v.findings[0].severity, Severity::Warning);
        assert!(v.findings[0].message.contains("sucessão desde 01/10/2026"));
        assert_eq!(v.overall, Overall::Warning);
    }

    #[test]
    fn a_deceased_holders_cpf_at_the_wheel_is_irregular() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0002").state = PermitState::InSuccession {
            since: d(2026, 10, 1),
        };
        // Ana's CPF on her own taxi, after her death: nobody may drive as her.
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R12", "R05"]);
        let f = only(&v, "R12");
        assert_eq!(f.severity, Severity::Irregular);
        assert!(
            f.message.contains("falecido") && f.message.contains("01/10/2026"),
            "{}",
            f.message
        );
        assert_eq!(v.overall, Overall::Irregular);
        assert_eq!(v.driver_role, Some(DriverRole::Unauthorised));
        // Her CPF on another taxi: the same.
        let v = run(&reg, &by_plate("BRA2E19", driver(&reg, "P04"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R12"]);
        assert!(v.findings[0].message.contains("alvará nº 0002"));
        // Before the date of death the holder drives her own taxi (succession not yet open).
        let v = run(
            &reg,
            &by_plate("ABC-1234", driver(&reg, "P04"), utc("2026-09-30T15:00:00Z")),
        );
        assert_eq!(v.driver_role, Some(DriverRole::Holder));
        assert!(!v.rule_ids().contains(&"R12"));
    }

    // ---- art. 7 ------------------------------------------------------------------------------

    #[test]
    fn r11_previous_year_accepted_until_31_january_local() {
        let mut reg = sample_registry();
        permit_mut(&mut reg, "0002").renewal_year = 2025;
        let input = |at| by_plate("ABC-1234", driver(&reg, "P04"), at);

        let last_minute = local("2026-01-31 23:59");
        assert_eq!(
            last_minute,
            utc("2026-02-01T02:59:00Z"),
            "already February in UTC"
        );
        assert_eq!(run(&reg, &input(last_minute)).findings, vec![]);
        assert_eq!(
            run(&reg, &input(utc("2026-01-02T12:00:00Z"))).findings,
            vec![]
        );

        let v = run(&reg, &input(local("2026-02-01 00:00")));
        assert_eq!(v.rule_ids(), vec!["R11"]);
        let f = only(&v, "R11");
        assert_eq!(f.citation, "Lei 4.019/2004, art. 7");
        assert_eq!(f.consequence, Consequence::RevokePermit);
        assert!(f.message.contains("para 2025") && f.message.contains("31/01/2026"));
        assert_eq!(v.overall, Overall::Irregular);
    }

    #[test]
    fn r11_other_years() {
        let mut reg = sample_registry();
        let input = |reg: &Registry, at| by_plate("ABC-1234", driver(reg, "P04"), at);
        // Two years behind: irregular even in January.
        permit_mut(&mut reg, "0002").renewal_year = 2024;
        let v = run(&reg, &input(&reg, local("2026-01-15 12:00")));
        assert_eq!(v.rule_ids(), vec!["R11"]);
        // Current year: fine after January.
        permit_mut(&mut reg, "0002").renewal_year = 2026;
        assert_eq!(
            run(&reg, &input(&reg, local("2026-02-01 00:00"))).findings,
            vec![]
        );
        // Already renewed for next year: fine.
        permit_mut(&mut reg, "0002").renewal_year = 2027;
        assert_eq!(run(&reg, &input(&reg, utc(NOON))).findings, vec![]);
        // The sample's permit 0004 (renewed for 2025) in November 2026.
        let v = run(&reg, &by_plate("GHI7J89", driver(&reg, "P07"), utc(NOON)));
        assert_eq!(v.rule_ids(), vec!["R11"]);
    }

    // ---- vehicle -----------------------------------------------------------------------------

    #[test]
    fn r16_licensed_outside_americana() {
        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V02").licensing_municipality = "Santa Bárbara d'Oeste".into();
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R16"]);
        assert!(v.findings[0].message.contains("Santa Bárbara d'Oeste/SP"));
        assert!(v.findings[0].message.contains("ABC1C34"));

        for ok in ["Americana", " americana ", "AMERICANA", "Américana"] {
            vehicle_mut(&mut reg, "V02").licensing_municipality = ok.into();
            assert_eq!(run(&reg, &ana(&reg)).findings, vec![], "{ok}");
        }
        vehicle_mut(&mut reg, "V02").licensing_uf = "sp".into();
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);
        vehicle_mut(&mut reg, "V02").licensing_uf = "MG".into();
        assert_eq!(run(&reg, &ana(&reg)).rule_ids(), vec!["R16"]);
    }

    #[test]
    fn r17_doors_and_capacity() {
        let mut reg = sample_registry();
        let mut input = ana(&reg);
        input.observation.doors = Some(2);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R17"]);
        assert!(
            v.findings[0]
                .message
                .contains("2 portas contadas na fiscalização")
        );

        // The observation overrides the registry.
        vehicle_mut(&mut reg, "V02").doors = 2;
        input.observation.doors = Some(4);
        assert_eq!(run(&reg, &input).findings, vec![]);
        input.observation.doors = None;
        assert_eq!(run(&reg, &input).rule_ids(), vec!["R17"]);

        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V02").capacity_incl_driver = 8;
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R17"]);
        assert!(v.findings[0].message.contains("8 lugares"));
        vehicle_mut(&mut reg, "V02").capacity_incl_driver = 7;
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);
    }

    #[test]
    fn r18_age_counted_back_from_the_edital() {
        let mut reg = sample_registry();
        // Edital of permit 0002: 02/03/2015; limit 10 years → manufactured 2005 or later.
        vehicle_mut(&mut reg, "V02").year_of_manufacture = 2004;
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R18"]);
        let f = only(&v, "R18");
        assert!(!f.wording_verified);
        assert!(
            f.message.contains("2004") && f.message.contains("02/03/2015"),
            "{}",
            f.message
        );

        vehicle_mut(&mut reg, "V02").year_of_manufacture = 2005;
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);

        let five = with_config(|c| c.max_vehicle_age_years = 5);
        vehicle_mut(&mut reg, "V02").year_of_manufacture = 2009;
        assert_eq!(run_with(&reg, &ana(&reg), &five).rule_ids(), vec!["R18"]);

        // No edital date: not evaluated.
        vehicle_mut(&mut reg, "V02").year_of_manufacture = 1990;
        permit_mut(&mut reg, "0002").edital_date = None;
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);
    }

    #[test]
    fn r19_roof_sign() {
        let reg = sample_registry();
        let mut input = ana(&reg);
        input.observation.roof_sign_present = Some(false);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R19"]);
        assert!(!v.findings[0].wording_verified);
        input.observation.roof_sign_present = Some(true);
        assert_eq!(run(&reg, &input).findings, vec![]);
        input.observation.roof_sign_present = None;
        assert_eq!(run(&reg, &input).findings, vec![]);
    }

    #[test]
    fn r40_vehicle_not_in_the_holders_name() {
        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V02").owner_cpf = Cpf::parse(STRANGER_CPF).unwrap();
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R40"]);
        assert!(v.findings[0].message.contains("alvará nº 0002"));
        assert_eq!(v.findings[0].citation, "Lei 4.019/2004, art. 30, III");
        // Driven by the auxiliary, it is still the holder's CPF that counts.
        let reg = sample_registry();
        let v = run(&reg, &by_plate("ABC-1234", driver(&reg, "P05"), utc(NOON)));
        assert_eq!(v.findings, vec![]);
    }

    #[test]
    fn r02_missing_meter_and_seal() {
        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V02").taximeter = None;
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R02"]);
        assert!(v.findings[0].message.contains("nenhum taxímetro"));
        assert_eq!(v.findings[0].consequence, Consequence::RenewalBlocked);

        let mut reg = sample_registry();
        if let Some(t) = &mut vehicle_mut(&mut reg, "V02").taximeter {
            t.seal_intact = false;
        }
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R02"]);
        assert!(
            v.findings[0]
                .message
                .contains("lacre do taxímetro rompido (segundo o cadastro)")
        );

        let reg = sample_registry();
        let mut input = ana(&reg);
        input.observation.meter_seal_intact = Some(false);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R02"]);
        assert!(v.findings[0].message.contains("constatado na fiscalização"));
        input.observation.meter_seal_intact = Some(true);
        assert_eq!(run(&reg, &input).findings, vec![]);
    }

    fn meter(reg: &mut Registry, verified_on: NaiveDate, label: Option<i32>) {
        if let Some(t) = &mut vehicle_mut(reg, "V02").taximeter {
            t.verified_on = verified_on;
            t.valid_until_year = label;
        }
    }

    #[test]
    fn r02_verification_by_label_or_certificate_period() {
        let mut reg = sample_registry();
        meter(&mut reg, d(2024, 11, 29), Some(2025));
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R02"]);
        let m = &v.findings[0].message;
        assert!(
            m.contains("aferição vencida") && m.contains("29/11/2024"),
            "{m}"
        );
        // Two years after verification, to the day: still valid.
        meter(&mut reg, d(2024, 11, 30), Some(2025));
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);
        meter(&mut reg, d(2024, 11, 30), None);
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);
        // A label for the current year counts whatever the verification date.
        meter(&mut reg, d(2020, 1, 1), Some(2026));
        assert_eq!(run(&reg, &ana(&reg)).findings, vec![]);

        // Annual period (art. 1 §1 as written).
        let annual = with_config(|c| c.taximeter_period_years = 1);
        meter(&mut reg, d(2025, 11, 29), None);
        assert_eq!(run_with(&reg, &ana(&reg), &annual).rule_ids(), vec!["R02"]);
        meter(&mut reg, d(2025, 11, 30), None);
        assert_eq!(run_with(&reg, &ana(&reg), &annual).findings, vec![]);
    }

    #[test]
    fn d03_renavam_and_d04_category() {
        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V02").renavam = Renavam::parse("12345678901").unwrap();
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["D03"]);
        assert_eq!(v.overall, Overall::Warning);

        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V02").category = VehicleCategory::Particular;
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["D04"]);
        assert_eq!(v.findings[0].severity, Severity::Warning);
        assert!(v.findings[0].message.contains("PARTICULAR"));
        assert_eq!(v.overall, Overall::Warning);
    }

    // ---- stands and hours --------------------------------------------------------------------

    #[test]
    fn r38_radio_taxi_at_a_common_stand() {
        let reg = sample_registry();
        let mut input = by_plate("JKL1M23", driver(&reg, "P09"), utc(NOON));
        input.observation.at_stand = Some("S01".into());
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R38"]);
        let f = only(&v, "R38");
        assert_eq!(f.citation, "Lei 4.019/2004, art. 28");
        assert_eq!(f.consequence, Consequence::InfractionNotice);
        assert!(f.message.contains("Terminal Urbano"));
        // At its own radio-taxi place: fine.
        input.observation.at_stand = Some("S04".into());
        assert_eq!(run(&reg, &input).findings, vec![]);
        // A common taxi at a common stand: no R38.
        let mut input = ana(&reg);
        input.observation.at_stand = Some("S01".into());
        assert_eq!(run(&reg, &input).findings, vec![]);
    }

    fn idle_at(reg: &Registry, plate: &str, pid: &str, stand: &str, at: &str) -> CheckInput {
        let mut input = by_plate(plate, driver(reg, pid), local(at));
        input.observation.at_stand = Some(stand.into());
        input.observation.idle = true;
        input
    }

    #[test]
    fn r24_day_stand_window_20_00_vs_20_01() {
        let reg = sample_registry();
        // Permit 0002's own stand is S02 (06–20); the taxi waits at S01.
        let v = run(
            &reg,
            &idle_at(&reg, "ABC-1234", "P04", "S01", "2026-11-30 20:00"),
        );
        assert_eq!(v.rule_ids(), vec!["R24"]);
        let f = only(&v, "R24");
        assert_eq!(f.citation, "Lei 4.019/2004, art. 16, I; art. 31, VI");
        assert_eq!(f.consequence, Consequence::InfractionNotice);
        assert!(f.message.contains("20:00") && f.message.contains("06:00–20:00"));
        assert!(
            f.message.contains("Praça Basílio Rangel") && f.message.contains("Terminal Urbano")
        );

        for (at, fires) in [
            ("2026-11-30 20:01", false),
            ("2026-11-30 05:59", false),
            ("2026-11-30 06:00", true),
            ("2026-11-30 12:00", true),
            ("2026-11-30 23:30", false),
        ] {
            let v = run(&reg, &idle_at(&reg, "ABC-1234", "P04", "S01", at));
            assert_eq!(v.rule_ids().contains(&"R24"), fires, "{at}");
        }
    }

    #[test]
    fn r24_not_when_moving_or_at_own_stand() {
        let reg = sample_registry();
        let mut input = idle_at(&reg, "ABC-1234", "P04", "S01", "2026-11-30 12:00");
        input.observation.idle = false;
        assert_eq!(run(&reg, &input).findings, vec![]);
        let input = idle_at(&reg, "ABC-1234", "P04", "S02", "2026-11-30 12:00");
        assert_eq!(run(&reg, &input).findings, vec![]);
    }

    #[test]
    fn r24_idle_away_from_any_stand_in_mandatory_hours() {
        let reg = sample_registry();
        let mut input = idle_at(&reg, "ABC-1234", "P04", "S01", "2026-11-30 12:00");
        input.observation.at_stand = None;
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R24"]);
        let f = only(&v, "R24");
        assert_eq!(f.severity, Severity::Irregular);
        assert!(
            f.message.contains("fora de qualquer ponto")
                && f.message.contains("Praça Basílio Rangel")
                && f.message.contains("12:00"),
            "{}",
            f.message
        );
        // Outside mandatory hours: optional (R25, information), never R24.
        input.at = local("2026-11-30 20:01");
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R25"]);
        assert_eq!(v.overall, Overall::Regular);
        assert!(v.findings[0].message.contains("fora de qualquer ponto"));
        // Moving (not idle) away from any stand: nothing.
        input.at = local("2026-11-30 12:00");
        input.observation.idle = false;
        assert_eq!(run(&reg, &input).findings, vec![]);
    }

    #[test]
    fn an_unknown_stand_is_a_warning_never_ignored() {
        let reg = sample_registry();
        for idle in [true, false] {
            let mut input = idle_at(&reg, "ABC-1234", "P04", "S99", "2026-11-30 12:00");
            input.observation.idle = idle;
            let v = run(&reg, &input);
            assert_eq!(v.rule_ids(), vec!["R24"], "idle {idle}");
            let f = only(&v, "R24");
            assert_eq!(f.severity, Severity::Warning);
            assert_eq!(f.consequence, Consequence::OfficeReview);
            assert!(f.message.contains("não consta"), "{}", f.message);
            assert_eq!(v.overall, Overall::Warning);
        }
        // With R24 off there is nothing left to verify at the stand.
        let no_r24 = with_config(|c| c.disabled_rules = vec![RuleId::R24]);
        let input = idle_at(&reg, "ABC-1234", "P04", "S99", "2026-11-30 12:00");
        assert_eq!(run_with(&reg, &input, &no_r24).findings, vec![]);
    }

    #[test]
    fn r24_extended_stand_until_midnight() {
        let reg = sample_registry();
        // Permit 0001's own stand is S01 Terminal Urbano (06–24); the taxi waits at S02.
        let at = "2026-11-30 23:59";
        assert_eq!(local(at), utc("2026-12-01T02:59:00Z"));
        let v = run(&reg, &idle_at(&reg, "BRA2E19", "P01", "S02", at));
        assert_eq!(v.rule_ids(), vec!["R24"]);
        assert!(
            v.findings[0].message.contains("23:59")
                && v.findings[0].message.contains("06:00–24:00")
        );
        for (at, fires) in [
            ("2026-12-01 00:00", true),
            ("2026-12-01 00:01", false),
            ("2026-12-01 05:59", false),
            ("2026-11-30 20:30", true),
        ] {
            let v = run(&reg, &idle_at(&reg, "BRA2E19", "P01", "S02", at));
            assert_eq!(v.rule_ids().contains(&"R24"), fires, "{at}");
        }
    }

    #[test]
    fn r25_optional_hours_only_when_enabled() {
        let reg = sample_registry();
        let late = idle_at(&reg, "ABC-1234", "P04", "S01", "2026-11-30 20:01");
        let without_r25 = with_config(|c| c.disabled_rules = vec![RuleId::R25]);
        assert_eq!(run_with(&reg, &late, &without_r25).findings, vec![]);

        let with_r25 = with_config(|c| c.enabled_rules = vec![RuleId::R25]);
        let v = run_with(&reg, &late, &with_r25);
        assert_eq!(v.rule_ids(), vec!["R25"]);
        assert_eq!(v.findings[0].severity, Severity::Info);
        assert_eq!(
            v.findings[0].citation,
            "Lei 4.019/2004, art. 16, parágrafo único"
        );
        assert_eq!(v.overall, Overall::Regular);
        // Inside the window R24 fires, not R25.
        let noon = idle_at(&reg, "ABC-1234", "P04", "S01", "2026-11-30 12:00");
        assert_eq!(run_with(&reg, &noon, &with_r25).rule_ids(), vec!["R24"]);
    }

    // ---- configuration, overall, order ------------------------------------------------------

    #[test]
    fn disabled_rules_do_not_fire() {
        let reg = sample_registry();
        let unrenewed = by_plate("GHI7J89", driver(&reg, "P07"), utc(NOON));
        assert_eq!(run(&reg, &unrenewed).rule_ids(), vec!["R11"]);
        let no_r11 = with_config(|c| c.disabled_rules = vec![RuleId::R11]);
        let v = run_with(&reg, &unrenewed, &no_r11);
        assert_eq!(v.findings, vec![]);
        assert_eq!(v.overall, Overall::Regular);

        let no_r12 = with_config(|c| c.disabled_rules = vec![RuleId::R12]);
        let v = run_with(&reg, &by_plate("ABC-1234", stranger(), utc(NOON)), &no_r12);
        assert_eq!(v.findings, vec![]);

        let no_r32 = with_config(|c| c.disabled_rules = vec![RuleId::R32]);
        assert_eq!(
            run_with(&reg, &lucas(&reg, utc(NOON)), &no_r32).findings,
            vec![]
        );
    }

    #[test]
    fn overall_regular_warning_irregular() {
        let mut reg = sample_registry();
        assert_eq!(run(&reg, &ana(&reg)).overall, Overall::Regular);
        vehicle_mut(&mut reg, "V02").category = VehicleCategory::Particular;
        person_mut(&mut reg, "P04").licence.observations.clear();
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R09", "D04"]);
        assert_eq!(v.overall, Overall::Warning);
        permit_mut(&mut reg, "0002").renewal_year = 2025;
        let v = run(&reg, &ana(&reg));
        assert_eq!(v.rule_ids(), vec!["R09", "R11", "D04"]);
        assert_eq!(v.overall, Overall::Irregular);
    }

    #[test]
    fn findings_come_in_evaluation_order() {
        let reg = sample_registry();
        // Rafael (P08, auxiliary of 0004, CNH expired 01/10/2026) on the unrenewed permit 0004.
        let mut input = by_plate("GHI7J89", driver(&reg, "P08"), utc(NOON));
        input.observation.roof_sign_present = Some(false);
        input.observation.meter_seal_intact = Some(false);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R10", "R11", "R19", "R02"]);
        assert!(v.findings[0].message.contains("01/10/2026"));

        // A stranger on the suspended permit 0003, out-of-town vehicle, waiting at another stand.
        let mut reg = sample_registry();
        vehicle_mut(&mut reg, "V03").licensing_municipality = "Nova Odessa".into();
        let mut input = idle_at(&reg, "DEF4G56", "P06", "S01", "2026-11-30 12:00");
        input.driver = stranger();
        input.observation.doors = Some(2);
        let v = run(&reg, &input);
        assert_eq!(v.rule_ids(), vec!["R12", "R32", "R16", "R17", "R24"]);
        assert_eq!(v.overall, Overall::Irregular);
        // Deterministic: same input, same verdict.
        assert_eq!(run(&reg, &input), v);
    }
}
