//! Field check: plate or permit + driver + instant (+ observations) → Verdict.
//!
//! The check is a pure function of the registry replica, the instant and what the officer saw.
//! Everything is reasoned on the America/Sao_Paulo calendar and clock (`crate::time`), so an
//! instant such as `2026-02-01T02:59Z` is still 31 January for art. 7.
//!
//! Evaluation order, which is also the order of the findings in the verdict:
//! 1. vehicle lookup (R01 when no alvará covers the vehicle; nothing else is evaluated then);
//! 2. the driver's relation to the permit, art. 8 (R04, R12, R14);
//! 3. the driver's licence and person (R06, R07, R08, R09, R10, D01, D02);
//! 4. the permit's state: cassação and suspensions (R32), succession (R05);
//! 5. annual renewal, art. 7 (R11);
//! 6. the vehicle (R16, R17, R18, R19, R40, R02, D03, D04);
//! 7. stand and hours (R38, R24, R25).
//!
//! Only rules enabled in `RulesConfig` are evaluated. Messages are in Portuguese, name the
//! plate, permit number and dates, and never carry a CPF, a name or other personal data.

use std::collections::BTreeSet;

use chrono::{Datelike, Days, Months, NaiveDate, NaiveTime, Timelike};

use super::{
    CheckInput, Consequence, EarMissing, Finding, RegistryStamp, RulesConfig, Severity, Verdict,
    VehicleQuery,
};
use crate::domain::{
    DriverRole, LicenceKind, PenaltyKind, Permit, PermitState, Person, RegistryIndex, ServiceKind,
    StandSchedule, Vehicle, VehicleCategory,
};
use crate::time;

/// Evaluates every enabled field rule.
pub fn check(index: &RegistryIndex<'_>, input: &CheckInput, config: &RulesConfig) -> Verdict {
    let date = super::local_date(input.at);
    let mut out = Findings {
        config,
        list: Vec::new(),
    };

    let driver = input.driver.resolve(index);
    let (permit, query_plate) = match &input.vehicle {
        VehicleQuery::Plate(p) => (index.permit_by_plate(p), Some(p.canonical().to_owned())),
        VehicleQuery::Permit(n) => (index.permit(n.trim()), None),
    };
    let vehicle = permit.and_then(|p| index.vehicle(&p.vehicle_id));
    let plate = query_plate.or_else(|| vehicle.map(|v| v.plate.canonical().to_owned()));

    let Some(permit) = permit else {
        if out.on("R01") {
            let message = match &input.vehicle {
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
                Finding::new("R01", message).with_consequence(Consequence::ReferToTrafficAuthority),
            );
        }
        return verdict(
            index,
            input,
            out.list,
            Subject {
                permit_number: None,
                plate,
                driver_person_id: driver.map(|p| p.id.clone()),
                driver_role: None,
            },
        );
    };

    let plate_txt = plate.clone().unwrap_or_else(|| String::from("desconhecida"));
    let taxi = format!("táxi do alvará nº {} (placa {plate_txt})", permit.number);

    let role = match driver {
        Some(person) => index.role_on(permit, person, date),
        None => DriverRole::Unauthorised,
    };
    check_role(&mut out, index, permit, driver, role, date, &taxi);
    if let Some(person) = driver {
        check_driver(&mut out, person, date);
    }
    check_permit_state(&mut out, index, permit, date);
    check_renewal(&mut out, permit, date);
    if let Some(v) = vehicle {
        check_vehicle(&mut out, index, permit, v, input, date);
    }
    check_stand(&mut out, index, permit, input, &taxi);

    verdict(
        index,
        input,
        out.list,
        Subject {
            permit_number: Some(permit.number.clone()),
            plate,
            driver_person_id: driver.map(|p| p.id.clone()),
            driver_role: Some(role),
        },
    )
}

/// Findings collected so far, filtered by the configuration.
struct Findings<'c> {
    config: &'c RulesConfig,
    list: Vec<Finding>,
}

impl Findings<'_> {
    fn on(&self, id: &str) -> bool {
        self.config.is_enabled(id)
    }

    /// Adds a finding if its rule is enabled (callers usually test `on` first to skip work).
    fn push(&mut self, finding: Finding) {
        if self.config.is_enabled(&finding.rule_id) {
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

fn verdict(
    index: &RegistryIndex<'_>,
    input: &CheckInput,
    findings: Vec<Finding>,
    subject: Subject,
) -> Verdict {
    let refreshed_at = input
        .registry_refreshed_at
        .or(index.registry.generated_at);
    Verdict {
        overall: Verdict::overall_of(&findings),
        checked_at: input.at,
        checked_at_local: time::local_rfc3339(input.at),
        permit_number: subject.permit_number,
        plate: subject.plate,
        driver_person_id: subject.driver_person_id,
        driver_role: subject.driver_role,
        registry: RegistryStamp {
            version: index.registry.version,
            refreshed_at,
            age_seconds: refreshed_at.map(|r| (input.at - r).num_seconds()),
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
    index: &RegistryIndex<'_>,
    permit: &Permit,
    driver: Option<&Person>,
    role: DriverRole,
    date: NaiveDate,
    taxi: &str,
) {
    let Some(person) = driver else {
        if out.on("R12") {
            out.push(Finding::new(
                "R12",
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
                if out.on("R04") {
                    out.push(Finding::new(
                        "R04",
                        format!(
                            "Condutor autorizado por escrito pelo titular enfermo a dirigir o \
                             {taxi}, {window}, com comprovação médica em arquivo (art. 1º, § 3º)."
                        ),
                    ));
                }
            } else if out.on("R12") {
                out.push(Finding::new(
                    "R12",
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
            if out.on("R14") {
                let registrations: Vec<String> = index
                    .permits_with_auxiliary(&person.id)
                    .iter()
                    .flat_map(|p| {
                        p.auxiliaries
                            .iter()
                            .filter(|a| a.person_id == person.id)
                            .map(|a| format!("alvará nº {} (licença {})", p.number, a.licence_number))
                    })
                    .collect();
                out.push(
                    Finding::new(
                        "R14",
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
            if out.on("R12") {
                let who = if role == DriverRole::HolderOfAnotherPermit {
                    let held: Vec<String> = index
                        .permits_held_by(&person.id)
                        .iter()
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
                out.push(Finding::new("R12", message));
            }
        }
    }
}

/// Art. 2 I–II / art. 30 I–II (and D01/D02) for a driver found in the registry.
fn check_driver(out: &mut Findings<'_>, person: &Person, date: NaiveDate) {
    let lic = &person.licence;

    if out.on("R06") && date.years_since(person.birth_date).unwrap_or(0) < 21 {
        out.push(Finding::new(
            "R06",
            format!(
                "Condutor com menos de 21 anos em {} (idade mínima, art. 2º, I; art. 30, I): \
                 verificar o cadastro.",
                br(date)
            ),
        ));
    }

    if out.on("R07") {
        let category = lic.category.trim().to_uppercase();
        let covered = out
            .config
            .categories_covering_b
            .iter()
            .any(|c| c.trim().to_uppercase() == category);
        if !covered {
            out.push(Finding::new(
                "R07",
                format!(
                    "CNH de categoria \"{category}\", que não abrange a categoria B exigida \
                     (art. 2º, II; art. 30, II)."
                ),
            ));
        }
    }

    if out.on("R08") {
        let mut reasons = Vec::new();
        if lic.kind == LicenceKind::P {
            reasons.push(String::from(
                "a CNH é Permissão para Dirigir (\"P\"), que nunca atende ao requisito",
            ));
        }
        if let Some(two_years) = lic.first_licence_date.checked_add_months(Months::new(24))
            && two_years > date
        {
            reasons.push(format!(
                "primeira habilitação em {}, há menos de dois anos (completa dois anos em {})",
                br(lic.first_licence_date),
                br(two_years)
            ));
        }
        if !reasons.is_empty() {
            out.push(Finding::new(
                "R08",
                format!(
                    "CNH não expedida há mais de dois anos: {} (art. 2º, II; art. 30, II).",
                    reasons.join("; ")
                ),
            ));
        }
    }

    if out.on("R09") {
        if lic.forbids_paid_activity() {
            out.push(
                Finding::new(
                    "R09",
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
                    "R09",
                    "A CNH não traz a observação EAR (exerce atividade remunerada, CTB art. 147, \
                     § 5º) exigida de quem dirige táxi.",
                )
                .with_severity(severity),
            );
        }
    }

    if out.on("R10") {
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
            out.push(Finding::new("R10", message));
        }
    }

    if out.on("D01") && !person.cpf.check_digits_ok() {
        out.push(Finding::new(
            "D01",
            "O CPF do condutor no cadastro tem dígitos verificadores inválidos (possível erro de \
             digitação no cadastro).",
        ));
    }
    if out.on("D02") && !lic.number.check_digits_ok() {
        out.push(Finding::new(
            "D02",
            "O número de registro da CNH do condutor no cadastro tem dígitos verificadores \
             inválidos (possível erro de digitação; as implementações divergem).",
        ));
    }
}

/// Penalties in force (art. 32 III–V) and succession (art. 1 §4).
fn check_permit_state(
    out: &mut Findings<'_>,
    index: &RegistryIndex<'_>,
    permit: &Permit,
    date: NaiveDate,
) {
    if out.on("R32") {
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
        for pen in index.penalties_of(&permit.number) {
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
                    "R32",
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
            out.push(
                Finding::new(
                    "R32",
                    format!(
                        "Alvará nº {} suspenso de {} a {} (art. 32, III/IV): o veículo não pode \
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
        && out.on("R05")
    {
        out.push(Finding::new(
            "R05",
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
    if !out.on("R11") {
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
        "R11",
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
fn fold(s: &str) -> String {
    let upper: String = s
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
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
        .collect();
    upper
}

/// Art. 13, art. 30 III, art. 1 §1 and the vehicle's data checks.
fn check_vehicle(
    out: &mut Findings<'_>,
    index: &RegistryIndex<'_>,
    permit: &Permit,
    v: &Vehicle,
    input: &CheckInput,
    date: NaiveDate,
) {
    let plate = v.plate.canonical();
    let obs = &input.observation;

    if out.on("R16") && (fold(&v.licensing_municipality) != "AMERICANA" || fold(&v.licensing_uf) != "SP")
    {
        out.push(Finding::new(
            "R16",
            format!(
                "Veículo de placa {plate} licenciado em {}/{} segundo o CRLV; o táxi deve estar \
                 licenciado no Município de Americana/SP (art. 13, I).",
                v.licensing_municipality.trim(),
                v.licensing_uf.trim()
            ),
        ));
    }

    if out.on("R17") {
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
                "R17",
                format!("Veículo de placa {plate}: {} (art. 13, II).", reasons.join("; ")),
            ));
        }
    }

    if out.on("R18")
        && let Some(edital) = permit.edital_date
    {
        let oldest = edital.year() - out.config.max_vehicle_age_years;
        if v.year_of_manufacture < oldest {
            out.push(Finding::new(
                "R18",
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

    if out.on("R19") && obs.roof_sign_present == Some(false) {
        out.push(Finding::new(
            "R19",
            format!(
                "Veículo de placa {plate} sem o dispositivo luminoso \"TÁXI\" no teto (art. 13, \
                 § 1º)."
            ),
        ));
    }

    if out.on("R40")
        && let Some(holder) = index.person(&permit.holder_id)
        && holder.cpf != v.owner_cpf
    {
        out.push(Finding::new(
            "R40",
            format!(
                "Veículo de placa {plate} não está registrado (CRLV) em nome do permissionário \
                 do alvará nº {} (art. 30, III).",
                permit.number
            ),
        ));
    }

    if out.on("R02") {
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
                let period = Months::new(12 * u32::from(out.config.taximeter_period_years));
                let by_certificate = t
                    .verified_on
                    .checked_add_months(period)
                    .is_some_and(|until| until >= date);
                if !by_label && !by_certificate {
                    let label = t
                        .valid_until_year
                        .map(|y| format!(", selo \"verificado até {y}\""))
                        .unwrap_or_default();
                    reasons.push(format!(
                        "aferição vencida (última verificação em {}{label}; validade de {} \
                         ano(s))",
                        br(t.verified_on),
                        out.config.taximeter_period_years
                    ));
                }
            }
        }
        if !reasons.is_empty() {
            out.push(Finding::new(
                "R02",
                format!(
                    "Taxímetro do veículo de placa {plate}: {} (art. 1º, § 1º).",
                    reasons.join("; ")
                ),
            ));
        }
    }

    if out.on("D03") && !v.renavam.check_digits_ok() {
        out.push(Finding::new(
            "D03",
            format!(
                "RENAVAM {} do veículo de placa {plate} com dígito verificador inválido (possível \
                 erro de digitação no cadastro).",
                v.renavam
            ),
        ));
    }

    if out.on("D04") && v.category != VehicleCategory::Aluguel {
        let category = match v.category {
            VehicleCategory::Aluguel => "ALUGUEL",
            VehicleCategory::Particular => "PARTICULAR",
            VehicleCategory::Oficial => "OFICIAL",
            VehicleCategory::Outra => "OUTRA",
        };
        out.push(Finding::new(
            "D04",
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

/// Art. 28 (radio-taxi at a common stand) and art. 16 (permanence at the own stand).
fn check_stand(
    out: &mut Findings<'_>,
    index: &RegistryIndex<'_>,
    permit: &Permit,
    input: &CheckInput,
    taxi: &str,
) {
    let Some(found) = input
        .observation
        .at_stand
        .as_deref()
        .and_then(|id| index.stand(id))
    else {
        return;
    };

    if out.on("R38") && found.service == ServiceKind::Common && permit.service == ServiceKind::RadioTaxi
    {
        out.push(Finding::new(
            "R38",
            format!(
                "Rádio-táxi ({taxi}) no ponto de táxi comum \"{}\" (art. 28).",
                found.name
            ),
        ));
    }

    if !input.observation.idle || found.id == permit.stand_id {
        return;
    }
    let Some(own) = index.stand(&permit.stand_id) else {
        return;
    };
    let t = time::local_datetime(input.at).time();
    let hhmm = t.format("%H:%M");
    let window = window_label(own.schedule);
    if in_mandatory_hours(own.schedule, t) {
        if out.on("R24") {
            out.push(Finding::new(
                "R24",
                format!(
                    "{} parado no ponto \"{}\" e não no seu ponto \"{}\" às {hhmm}, dentro do \
                     horário obrigatório {window} do seu ponto (art. 16, I; art. 31, VI).",
                    capitalise(taxi),
                    found.name,
                    own.name
                ),
            ));
        }
    } else if out.on("R25") {
        out.push(Finding::new(
            "R25",
            format!(
                "{} parado no ponto \"{}\" às {hhmm}, fora do horário obrigatório {window} do seu \
                 ponto \"{}\": horário facultativo, a ausência do ponto não é infração (art. 16, \
                 parágrafo único).",
                capitalise(taxi),
                found.name,
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
