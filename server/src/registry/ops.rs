//! Registry operations as pure functions: current registry + request + [`Ctx`] → new registry
//! with the law's warnings ([`Edited`]), or why not. No I/O: [`super::commit`] runs them, so they
//! are re-run on a fresh registry after a lost race, and tested without a database.
//!
//! Every operation has the same shape: bookkeeping preconditions (unknown ids, duplicates:
//! `NotFound`/`Conflict`/`Invalid`), the office bars of its article from `sync_core::rules::office`
//! (third auxiliary R13/R14, second permit R03, art. 10 transfers R43, art. 7 renewals R11/R27/R02,
//! swaps R44/R38), then the write applied to a copy and [`judged`]: `office::judge_write` on the
//! whole registry after it — the art. 14 cap over all stands and each stand's places (R23), and
//! the field check of every permit the write touched. An act (grant, renewal, transfer, swap,
//! auxiliary, vacancies, reinstatement) that would leave an irregularity it created is refused;
//! what pre-existed, and what a record of facts (people, vehicles, fines, payments, a decided
//! state) reveals, comes back as warnings. All reasons of one request are reported together,
//! as one [`EditError::Refused`].

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{
    AuxiliaryDriver, Fine, Penalty, PenaltyKind, Permit, PermitState, Person, Registry,
    ServiceKind, Stand, Transfer, TransferReason, Vehicle,
};
use sync_core::rules::office::{self, Refusal, Touched};
use sync_core::rules::{Consequence, Finding, RuleId};

use super::{Ctx, EditError, Edited};
use crate::limits::{MAX_LICENCE_OBSERVATIONS, MAX_REGISTRY_TEXT_CHARS};

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/// `POST /v1/permits`: grant a new alvará.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantPermit {
    /// Prontuário of the new alvará.
    pub number: String,
    pub holder_id: String,
    pub vehicle_id: String,
    pub stand_id: String,
    /// Defaults to the stand's service.
    #[serde(default)]
    pub service: Option<ServiceKind>,
    /// Defaults to today.
    #[serde(default)]
    pub issued_on: Option<NaiveDate>,
    /// Defaults to today's year.
    #[serde(default)]
    pub renewal_year: Option<i32>,
    /// Publication date of the Edital de Chamamento (art. 13 III).
    #[serde(default)]
    pub edital_date: Option<NaiveDate>,
}

/// `POST /v1/permits/{number}/auxiliaries`: register an auxiliary driver (art. 8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AddAuxiliary {
    pub person_id: String,
    /// Number of the auxiliary's own alvará.
    pub licence_number: String,
    /// Defaults to today.
    #[serde(default)]
    pub registered_on: Option<NaiveDate>,
}

/// `PUT /v1/stands/{id}/coordinator`: set or clear the stand's coordinator (art. 17).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetCoordinator {
    /// A person of the registry, or `null` to clear.
    pub person_id: Option<String>,
}

/// `POST /v1/penalties`: record a decided penalty (art. 32).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPenalty {
    pub permit_number: String,
    /// Who committed the infraction (art. 32 §2).
    #[serde(default)]
    pub person_id: Option<String>,
    pub kind: PenaltyKind,
    /// Defaults to today.
    #[serde(default)]
    pub decided_on: Option<NaiveDate>,
    /// First day it takes effect; defaults to today.
    #[serde(default)]
    pub starts_on: Option<NaiveDate>,
    /// The record (auto) it came from.
    #[serde(default)]
    pub record_id: Option<String>,
}

/// `POST /v1/fines`: a fine on a permit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFine {
    pub permit_number: String,
    /// Amount in reais, as a decimal string ("797.02").
    pub amount: Decimal,
    /// Defaults to today.
    #[serde(default)]
    pub issued_on: Option<NaiveDate>,
}

/// `POST /v1/fines/{id}/payment`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PayFine {
    /// Defaults to today; not in the future, not before the fine.
    #[serde(default)]
    pub paid_on: Option<NaiveDate>,
}

/// `POST /v1/permits/{number}/renewal` (art. 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Renew {
    /// The year renewed for.
    pub year: i32,
}

/// `POST /v1/permits/{number}/transfer` (art. 10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferPermit {
    pub to_person_id: String,
    pub reason: TransferReason,
    /// The vehicle the permit carries from the transfer on, whose CRLV must be in the new
    /// holder's name (art. 30 III). Defaults to the permit's vehicle, whose CRLV the office
    /// then updates first.
    #[serde(default)]
    pub vehicle_id: Option<String>,
}

/// `POST /v1/swaps` (art. 11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Swap {
    pub permit_a: String,
    pub permit_b: String,
    /// The swap fee was paid (art. 11).
    pub fee_paid: bool,
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn not_found(what: &str, id: &str) -> EditError {
    EditError::NotFound(format!("{what} {id} não consta do cadastro."))
}

fn invalid(code: &'static str, message: impl Into<String>) -> EditError {
    EditError::Invalid {
        code,
        message: message.into(),
    }
}

fn refusal(rule: RuleId, message: String) -> EditError {
    EditError::Refused(Refusal {
        findings: vec![Finding::new(rule, message).with_consequence(Consequence::OfficeRefusal)],
    })
}

/// Ids are short and plain: letters, digits, `-`, `_`, `.`.
fn check_id(what: &str, id: &str) -> Result<(), EditError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(invalid(
            "invalid_id",
            format!(
                "Identificador de {what} inválido: use até 64 letras, dígitos, '-', '_' ou '.'."
            ),
        ))
    }
}

fn same_id(path_id: &str, body_id: &str) -> Result<(), EditError> {
    if path_id == body_id {
        Ok(())
    } else {
        Err(invalid(
            "id_mismatch",
            "O identificador do corpo difere do identificador da rota.",
        ))
    }
}

fn permit_mut<'a>(reg: &'a mut Registry, number: &str) -> Result<&'a mut Permit, EditError> {
    reg.permits
        .iter_mut()
        .find(|p| p.number == number)
        .ok_or_else(|| not_found("O alvará", number))
}

/// The findings of the office bars that refused.
fn bars(results: impl IntoIterator<Item = Result<(), Refusal>>) -> Vec<Finding> {
    results
        .into_iter()
        .filter_map(Result::err)
        .flat_map(|r| r.findings)
        .collect()
}

/// The law kernel's decision on the write `reg` → `next` (`office::judge_write`), with the
/// office `bars` the operation already found: refused with every reason, or the new registry
/// with the warnings. A reason of the judgement whose rule a bar already gives (the receiver's
/// expired CNH, said by art. 10 II and again by the field check) is not repeated.
fn judged(
    reg: &Registry,
    next: Registry,
    touched: Touched,
    mut bars: Vec<Finding>,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    match office::judge_write(reg, &next, &touched, ctx.today, ctx.rules) {
        Ok(warnings) if bars.is_empty() => Ok(Edited {
            registry: next,
            warnings,
        }),
        Ok(_) => Err(EditError::Refused(Refusal { findings: bars })),
        Err(refusal) => {
            let barred: Vec<RuleId> = bars.iter().map(|f| f.rule_id).collect();
            bars.extend(
                refusal
                    .findings
                    .into_iter()
                    .filter(|f| !barred.contains(&f.rule_id)),
            );
            Err(EditError::Refused(Refusal { findings: bars }))
        }
    }
}

/// Live permits where the person is holder or auxiliary: those an edit of the person touches.
fn permits_of_person<'a>(reg: &'a Registry, id: &'a str) -> impl Iterator<Item = &'a str> {
    reg.permits
        .iter()
        .filter(move |p| p.holder_id == id || p.auxiliaries.iter().any(|a| a.person_id == id))
        .map(|p| p.number.as_str())
}

fn is_live(p: &Permit) -> bool {
    !matches!(p.state, PermitState::Revoked { .. })
}

/// Next id `PREFIX-YEAR-NNNN` among `ids`.
fn next_id<'a>(prefix: &str, year: i32, ids: impl Iterator<Item = &'a str>) -> String {
    let head = format!("{prefix}-{year}-");
    let max = ids
        .filter_map(|id| id.strip_prefix(&head))
        .filter_map(|n| n.parse::<u32>().ok())
        .max()
        .unwrap_or(0);
    format!("{head}{:04}", max + 1)
}

// ---------------------------------------------------------------------------------------------
// People and vehicles
// ---------------------------------------------------------------------------------------------

/// A text typed by the office: at most [`MAX_REGISTRY_TEXT_CHARS`] characters, no control
/// characters (a line break or a NUL would corrupt the printed documents and the CSV).
fn check_text(what: &str, text: &str) -> Result<(), EditError> {
    match text_problem(text) {
        Some((code, problem)) => Err(invalid(code, format!("{what}: {problem}"))),
        None => Ok(()),
    }
}

/// What is wrong with a registry text, if anything: (error code, the problem as people read
/// it). The one rule for every text of the registry, typed on a page, sent to the API or read
/// from a CSV import.
pub(crate) fn text_problem(text: &str) -> Option<(&'static str, String)> {
    if text.chars().count() > MAX_REGISTRY_TEXT_CHARS {
        return Some((
            "text_too_long",
            format!("use no máximo {MAX_REGISTRY_TEXT_CHARS} caracteres."),
        ));
    }
    if text.chars().any(char::is_control) {
        return Some((
            "invalid_text",
            "há caracteres de controle (quebra de linha, tabulação); tire-os.".to_owned(),
        ));
    }
    None
}

fn check_person(reg: &Registry, person: &Person) -> Result<(), EditError> {
    check_id("pessoa", &person.id)?;
    if person.name.trim().is_empty() {
        return Err(invalid("invalid_name", "O nome não pode ficar vazio."));
    }
    check_text("Nome", &person.name)?;
    check_text("Categoria da CNH", &person.licence.category)?;
    if person.licence.observations.len() > MAX_LICENCE_OBSERVATIONS {
        return Err(invalid(
            "too_many_observations",
            format!(
                "A CNH tem no máximo {MAX_LICENCE_OBSERVATIONS} observações; foram informadas {}.",
                person.licence.observations.len()
            ),
        ));
    }
    for o in &person.licence.observations {
        check_text("Observação da CNH", o)?;
    }
    // Typed by the office: the check digits must hold (D01).
    if !person.cpf.check_digits_ok() {
        return Err(invalid(
            "invalid_cpf",
            "CPF inválido: dígitos verificadores não conferem.",
        ));
    }
    if reg
        .people
        .iter()
        .any(|p| p.id != person.id && p.cpf == person.cpf)
    {
        return Err(EditError::Conflict {
            code: "cpf_taken",
            message: String::from("Já existe outra pessoa com este CPF no cadastro."),
        });
    }
    Ok(())
}

/// Adds a person (holder, auxiliary or coordinator).
pub fn create_person(reg: &Registry, person: Person, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    if reg.people.iter().any(|p| p.id == person.id) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("A pessoa {} já existe.", person.id),
        });
    }
    check_person(reg, &person)?;
    let mut next = reg.clone();
    next.people.push(person);
    judged(reg, next, Touched::record(), Vec::new(), ctx)
}

/// Replaces a person's data; the permits they hold or drive are field-checked after it (a
/// record: what it reveals, such as an expired CNH typed in, comes back as warnings).
pub fn update_person(
    reg: &Registry,
    id: &str,
    person: Person,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    same_id(id, &person.id)?;
    check_person(reg, &person)?;
    let mut next = reg.clone();
    let slot = next
        .people
        .iter_mut()
        .find(|p| p.id == id)
        .ok_or_else(|| not_found("A pessoa", id))?;
    *slot = person;
    let touched = Touched::record().permits(permits_of_person(reg, id));
    judged(reg, next, touched, Vec::new(), ctx)
}

fn check_vehicle(reg: &Registry, v: &Vehicle) -> Result<(), EditError> {
    check_id("veículo", &v.id)?;
    check_text("Marca/modelo", &v.make_model)?;
    check_text("Cor", &v.colour)?;
    check_text("Município de licenciamento", &v.licensing_municipality)?;
    check_text("UF de licenciamento", &v.licensing_uf)?;
    if let Some(c) = v
        .taximeter
        .as_ref()
        .and_then(|t| t.certificate_number.as_ref())
    {
        check_text("Certificado do taxímetro", c)?;
    }
    if reg
        .vehicles
        .iter()
        .any(|o| o.id != v.id && o.plate.same_vehicle(&v.plate))
    {
        return Err(EditError::Conflict {
            code: "plate_taken",
            message: format!(
                "A placa {} já está cadastrada em outro veículo.",
                v.plate.canonical()
            ),
        });
    }
    Ok(())
}

/// Adds a vehicle.
pub fn create_vehicle(
    reg: &Registry,
    vehicle: Vehicle,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    if reg.vehicles.iter().any(|v| v.id == vehicle.id) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("O veículo {} já existe.", vehicle.id),
        });
    }
    check_vehicle(reg, &vehicle)?;
    let mut next = reg.clone();
    next.vehicles.push(vehicle);
    judged(reg, next, Touched::record(), Vec::new(), ctx)
}

/// Replaces a vehicle's data; the permits on it are field-checked after it (a record: a broken
/// seal or a CRLV in another name comes back as warnings).
pub fn update_vehicle(
    reg: &Registry,
    id: &str,
    vehicle: Vehicle,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    same_id(id, &vehicle.id)?;
    check_vehicle(reg, &vehicle)?;
    let mut next = reg.clone();
    let slot = next
        .vehicles
        .iter_mut()
        .find(|v| v.id == id)
        .ok_or_else(|| not_found("O veículo", id))?;
    *slot = vehicle;
    let touched = Touched::record().permits(
        reg.permits
            .iter()
            .filter(|p| p.vehicle_id == id)
            .map(|p| p.number.as_str()),
    );
    judged(reg, next, touched, Vec::new(), ctx)
}

// ---------------------------------------------------------------------------------------------
// Stands (art. 14 cap, art. 17 coordinator, art. 28 service)
// ---------------------------------------------------------------------------------------------

fn check_stand(reg: &Registry, s: &Stand) -> Result<(), EditError> {
    check_id("ponto", &s.id)?;
    if s.name.trim().is_empty() {
        return Err(invalid(
            "invalid_name",
            "O nome do ponto não pode ficar vazio.",
        ));
    }
    check_text("Nome do ponto", &s.name)?;
    check_text("Endereço do ponto", &s.address)?;
    if let Some(c) = &s.coordinator_id
        && !reg.people.iter().any(|p| &p.id == c)
    {
        return Err(not_found("O coordenador", c));
    }
    let mismatched: Vec<&str> = reg
        .permits
        .iter()
        .filter(|p| p.stand_id == s.id && is_live(p) && p.service != s.service)
        .map(|p| p.number.as_str())
        .collect();
    if !mismatched.is_empty() {
        return Err(refusal(
            RuleId::R38,
            format!(
                "O ponto {} tem alvarás de outro tipo de serviço ({}): rádio-táxis e táxis \
                 comuns não usam os mesmos pontos (art. 28).",
                s.name,
                mismatched.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Creates a stand; its vacancies are new vacancies under the art. 14 cap (R23), judged on the
/// whole registry after it.
pub fn create_stand(reg: &Registry, stand: Stand, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    if reg.stands.iter().any(|s| s.id == stand.id) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("O ponto {} já existe.", stand.id),
        });
    }
    check_stand(reg, &stand)?;
    let mut next = reg.clone();
    next.stands.push(stand);
    judged(reg, next, Touched::act(), Vec::new(), ctx)
}

/// Replaces a stand; added vacancies count against the art. 14 cap over the whole registry, and
/// the stand may not keep fewer places than permits in force (R23).
pub fn update_stand(
    reg: &Registry,
    id: &str,
    stand: Stand,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    same_id(id, &stand.id)?;
    if !reg.stands.iter().any(|s| s.id == id) {
        return Err(not_found("O ponto", id));
    }
    check_stand(reg, &stand)?;
    let mut next = reg.clone();
    if let Some(slot) = next.stands.iter_mut().find(|s| s.id == id) {
        *slot = stand;
    }
    judged(reg, next, Touched::act(), Vec::new(), ctx)
}

/// Sets or clears a stand's coordinator (art. 17).
pub fn set_coordinator(
    reg: &Registry,
    stand_id: &str,
    req: SetCoordinator,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    if let Some(p) = &req.person_id
        && !reg.people.iter().any(|x| &x.id == p)
    {
        return Err(not_found("A pessoa", p));
    }
    let mut next = reg.clone();
    let stand = next
        .stands
        .iter_mut()
        .find(|s| s.id == stand_id)
        .ok_or_else(|| not_found("O ponto", stand_id))?;
    stand.coordinator_id = req.person_id;
    judged(reg, next, Touched::record(), Vec::new(), ctx)
}

// ---------------------------------------------------------------------------------------------
// Permits
// ---------------------------------------------------------------------------------------------

/// Grants a new alvará: art. 9 (R03), art. 10 §2 (R43), art. 2 of the holder, the year it is
/// valid for (R11: the year of issue), then the registry after it judged — an open place at
/// the stand and the art. 14 cap (R23), and what a field check of the new permit with its
/// holder at the wheel would find (no taximeter R02, a CRLV in another name R40, …) — all
/// reported together; the stand's service must match (R38).
pub fn grant_permit(reg: &Registry, req: GrantPermit, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    check_id("alvará", &req.number)?;
    if reg.permits.iter().any(|p| p.number == req.number) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("O alvará {} já existe.", req.number),
        });
    }
    let stand = reg
        .stands
        .iter()
        .find(|s| s.id == req.stand_id)
        .ok_or_else(|| not_found("O ponto", &req.stand_id))?;
    if !reg.vehicles.iter().any(|v| v.id == req.vehicle_id) {
        return Err(not_found("O veículo", &req.vehicle_id));
    }
    if let Some(other) = reg
        .permits
        .iter()
        .find(|p| p.vehicle_id == req.vehicle_id && is_live(p))
    {
        return Err(EditError::Conflict {
            code: "vehicle_in_use",
            message: format!(
                "O veículo {} já está no alvará {}.",
                req.vehicle_id, other.number
            ),
        });
    }
    let service = req.service.unwrap_or(stand.service);
    if service != stand.service {
        return Err(refusal(
            RuleId::R38,
            format!(
                "O ponto {} não é do tipo de serviço do alvará: rádio-táxis e táxis comuns não \
                 usam os mesmos pontos (art. 28).",
                stand.name
            ),
        ));
    }
    let issued_on = req.issued_on.unwrap_or(ctx.today);
    let renewal_year = req.renewal_year.unwrap_or(issued_on.year());
    let mut found = bars([office::check_grant_permit(
        &reg.index(),
        &req.holder_id,
        ctx.today,
        ctx.rules,
    )]);
    if renewal_year != issued_on.year() {
        // Art. 7: the alvará is annual; one granted valid for a later year would skip renewals.
        found.push(
            Finding::new(
                RuleId::R11,
                format!(
                    "O alvará {} expedido em {} vale para {}: não pode ser concedido já renovado \
                     para {renewal_year} (art. 7º: renovação anual).",
                    req.number,
                    issued_on.format("%d/%m/%Y"),
                    issued_on.year()
                ),
            )
            .with_consequence(Consequence::OfficeRefusal),
        );
    }
    let number = req.number.clone();
    let mut next = reg.clone();
    next.permits.push(Permit {
        number: req.number,
        holder_id: req.holder_id,
        auxiliaries: Vec::new(),
        vehicle_id: req.vehicle_id,
        stand_id: req.stand_id,
        service,
        issued_on,
        renewal_year,
        edital_date: req.edital_date,
        state: PermitState::Active,
        illness_authorisation: None,
    });
    judged(reg, next, Touched::act().permit(number), found, ctx)
}

/// Sets a permit's legal state. Bringing a revoked permit back is an act: its place must still
/// be free and the art. 14 cap hold (R23), and what it would make irregular refuses it. Any
/// other state (a suspension, a revocation, the opening of a succession) records a decision:
/// what the field check then says comes back as warnings.
pub fn set_permit_state(
    reg: &Registry,
    number: &str,
    state: PermitState,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    if let PermitState::Suspended { from, until } = &state
        && until < from
    {
        return Err(invalid(
            "invalid_period",
            "O fim da suspensão é anterior ao início.",
        ));
    }
    let old = reg
        .permits
        .iter()
        .find(|p| p.number == number)
        .ok_or_else(|| not_found("O alvará", number))?;
    let revives = !is_live(old) && !matches!(state, PermitState::Revoked { .. });
    let touched = if revives {
        Touched::act()
    } else {
        Touched::record()
    };
    let mut next = reg.clone();
    permit_mut(&mut next, number)?.state = state;
    judged(reg, next, touched.permit(number), Vec::new(), ctx)
}

/// Registers an auxiliary driver (art. 8: R13 third auxiliary, R14 auxiliary elsewhere, art. 2).
pub fn add_auxiliary(
    reg: &Registry,
    number: &str,
    req: AddAuxiliary,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    if req.licence_number.trim().is_empty() {
        return Err(invalid(
            "invalid_licence_number",
            "Informe o número do alvará do motorista auxiliar.",
        ));
    }
    check_text(
        "Número do alvará do motorista auxiliar",
        &req.licence_number,
    )?;
    office::check_add_auxiliary(&reg.index(), number, &req.person_id, ctx.today, ctx.rules)?;
    let mut next = reg.clone();
    permit_mut(&mut next, number)?
        .auxiliaries
        .push(AuxiliaryDriver {
            person_id: req.person_id,
            licence_number: req.licence_number.trim().to_owned(),
            registered_on: req.registered_on.unwrap_or(ctx.today),
        });
    judged(reg, next, Touched::act().permit(number), Vec::new(), ctx)
}

/// Removes an auxiliary driver from a permit.
pub fn remove_auxiliary(
    reg: &Registry,
    number: &str,
    person_id: &str,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    let mut next = reg.clone();
    let permit = permit_mut(&mut next, number)?;
    let before = permit.auxiliaries.len();
    permit.auxiliaries.retain(|a| a.person_id != person_id);
    if permit.auxiliaries.len() == before {
        return Err(EditError::NotFound(format!(
            "A pessoa {person_id} não é motorista auxiliar do alvará {number}."
        )));
    }
    judged(reg, next, Touched::act().permit(number), Vec::new(), ctx)
}

/// Renews a permit for a year (art. 7: only the next year due, not after its deadline — R11;
/// R27 unpaid fine, R02 taximeter, art. 2 of the holder), then judged.
pub fn renew(reg: &Registry, number: &str, req: Renew, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    office::check_renewal(&reg.index(), number, req.year, ctx.today, ctx.rules)?;
    let mut next = reg.clone();
    permit_mut(&mut next, number)?.renewal_year = req.year;
    judged(reg, next, Touched::act().permit(number), Vec::new(), ctx)
}

/// Transfers a permit (art. 10); the receiver stops being one of its auxiliaries.
///
/// The vehicle goes with the registration: art. 10 §1 makes the transfer valid only once
/// registered in the Cadastro de Atividades, whose art. 30 III requires the vehicle's
/// certificate in the permissionário's name. So the permit carries `vehicle_id` (the new
/// holder's vehicle) or keeps its own, and either way the judgement refuses the transfer when
/// the vehicle's CRLV is not in the new holder's name (R40): the office records the new CRLV
/// first. The registry never writes a CRLV owner itself: that is the DETRAN's document.
///
/// A transfer by death closes the succession (art. 1 §4): a permit `in_succession` becomes
/// `active` in the heir's name, so the field check no longer reports the holder's death.
pub fn transfer(
    reg: &Registry,
    number: &str,
    req: TransferPermit,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    office::check_transfer(
        &reg.index(),
        number,
        &req.to_person_id,
        req.reason,
        ctx.today,
        ctx.rules,
    )?;
    if let Some(vehicle_id) = &req.vehicle_id {
        if !reg.vehicles.iter().any(|v| &v.id == vehicle_id) {
            return Err(not_found("O veículo", vehicle_id));
        }
        if let Some(other) = reg
            .permits
            .iter()
            .find(|p| &p.vehicle_id == vehicle_id && p.number != number && is_live(p))
        {
            return Err(EditError::Conflict {
                code: "vehicle_in_use",
                message: format!("O veículo {vehicle_id} já está no alvará {}.", other.number),
            });
        }
    }
    let mut next = reg.clone();
    let permit = permit_mut(&mut next, number)?;
    let from = std::mem::replace(&mut permit.holder_id, req.to_person_id.clone());
    permit
        .auxiliaries
        .retain(|a| a.person_id != req.to_person_id);
    if let Some(vehicle_id) = &req.vehicle_id {
        permit.vehicle_id = vehicle_id.clone();
    }
    if req.reason == TransferReason::Death
        && matches!(permit.state, PermitState::InSuccession { .. })
    {
        permit.state = PermitState::Active;
    }
    next.transfers.push(Transfer {
        permit_number: number.to_owned(),
        from_person_id: from,
        to_person_id: req.to_person_id,
        on: ctx.today,
        reason: req.reason,
    });
    judged(reg, next, Touched::act().permit(number), Vec::new(), ctx)
}

/// Moves a permit in force to another stand: what an edital's place given to a current holder
/// writes (art. 3 I; the holder keeps the one permit art. 9 allows, `rules::selection`). An
/// act: the stand must take it — its places and the art. 14 cap (R23) — and what a field check
/// of the permit then finds refuses it; the stand's service must match (R38, art. 28).
pub fn move_permit(
    reg: &Registry,
    number: &str,
    stand_id: &str,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    let permit = reg
        .permits
        .iter()
        .find(|p| p.number == number)
        .ok_or_else(|| not_found("O alvará", number))?;
    let stand = reg
        .stands
        .iter()
        .find(|s| s.id == stand_id)
        .ok_or_else(|| not_found("O ponto", stand_id))?;
    if !is_live(permit) {
        return Err(EditError::Conflict {
            code: "permit_revoked",
            message: format!("O alvará {number} foi cassado: não muda de ponto."),
        });
    }
    if permit.stand_id == stand_id {
        return Err(EditError::Conflict {
            code: "already_at_stand",
            message: format!("O alvará {number} já está no ponto {}.", stand.name),
        });
    }
    if permit.service != stand.service {
        return Err(refusal(
            RuleId::R38,
            format!(
                "O ponto {} não é do tipo de serviço do alvará: rádio-táxis e táxis comuns não \
                 usam os mesmos pontos (art. 28).",
                stand.name
            ),
        ));
    }
    let mut next = reg.clone();
    permit_mut(&mut next, number)?.stand_id = stand_id.to_owned();
    judged(reg, next, Touched::act().permit(number), Vec::new(), ctx)
}

/// Swaps the stands of two permits (art. 11: fee R44, art. 28 service R38).
pub fn swap(reg: &Registry, req: Swap, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    office::check_swap(
        &reg.index(),
        &req.permit_a,
        &req.permit_b,
        req.fee_paid,
        ctx.today,
        ctx.rules,
    )?;
    let mut next = reg.clone();
    let a = permit_mut(&mut next, &req.permit_a)?.stand_id.clone();
    let b = std::mem::replace(&mut permit_mut(&mut next, &req.permit_b)?.stand_id, a);
    permit_mut(&mut next, &req.permit_a)?.stand_id = b;
    let touched = Touched::act()
        .permit(req.permit_a.as_str())
        .permit(req.permit_b.as_str());
    judged(reg, next, touched, Vec::new(), ctx)
}

// ---------------------------------------------------------------------------------------------
// Penalties and fines
// ---------------------------------------------------------------------------------------------

/// Records a decided penalty; its id is `PEN-<year>-<nnnn>`. A record: judged for the cap and
/// the field check of the permit (a suspension in force makes it irregular in the street, which
/// is the point), whose findings come back as warnings.
pub fn add_penalty(reg: &Registry, req: NewPenalty, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    if !reg.permits.iter().any(|p| p.number == req.permit_number) {
        return Err(not_found("O alvará", &req.permit_number));
    }
    if let Some(p) = &req.person_id
        && !reg.people.iter().any(|x| &x.id == p)
    {
        return Err(not_found("A pessoa", p));
    }
    // Art. 32's penalties are the kernel's, the same list the office's decision checks.
    if let Err(e) = sync_core::rules::penalty::Grade::exact(req.kind) {
        return Err(invalid("invalid_penalty", e.to_string()));
    }
    let decided_on = req.decided_on.unwrap_or(ctx.today);
    let id = next_id(
        "PEN",
        decided_on.year(),
        reg.penalties.iter().map(|p| p.id.as_str()),
    );
    let touched = Touched::record().permit(req.permit_number.as_str());
    let mut next = reg.clone();
    next.penalties.push(Penalty {
        id,
        permit_number: req.permit_number,
        person_id: req.person_id,
        kind: req.kind,
        decided_on,
        starts_on: req.starts_on.unwrap_or(decided_on),
        record_id: req.record_id,
    });
    judged(reg, next, touched, Vec::new(), ctx)
}

/// Adds a fine; its id is `MUL-<year>-<nnnn>`. A record: judged for the cap and the field check
/// of the permit, whose findings come back as warnings.
pub fn add_fine(reg: &Registry, req: NewFine, ctx: &Ctx<'_>) -> Result<Edited, EditError> {
    if !reg.permits.iter().any(|p| p.number == req.permit_number) {
        return Err(not_found("O alvará", &req.permit_number));
    }
    if req.amount <= Decimal::ZERO {
        return Err(invalid(
            "invalid_amount",
            "O valor da multa deve ser positivo.",
        ));
    }
    let issued_on = req.issued_on.unwrap_or(ctx.today);
    let id = next_id(
        "MUL",
        issued_on.year(),
        reg.fines.iter().map(|f| f.id.as_str()),
    );
    let touched = Touched::record().permit(req.permit_number.as_str());
    let mut next = reg.clone();
    next.fines.push(Fine {
        id,
        permit_number: req.permit_number,
        amount: req.amount,
        issued_on,
        paid_on: None,
    });
    judged(reg, next, touched, Vec::new(), ctx)
}

/// Registers the payment of a fine.
pub fn pay_fine(
    reg: &Registry,
    id: &str,
    req: PayFine,
    ctx: &Ctx<'_>,
) -> Result<Edited, EditError> {
    let mut next = reg.clone();
    let fine = next
        .fines
        .iter_mut()
        .find(|f| f.id == id)
        .ok_or_else(|| not_found("A multa", id))?;
    if let Some(paid) = fine.paid_on {
        return Err(EditError::Conflict {
            code: "already_paid",
            message: format!("A multa {id} já foi paga em {}.", paid.format("%d/%m/%Y")),
        });
    }
    let paid_on = req.paid_on.unwrap_or(ctx.today);
    if paid_on > ctx.today || paid_on < fine.issued_on {
        return Err(invalid(
            "invalid_date",
            "A data de pagamento não pode ser futura nem anterior à multa.",
        ));
    }
    fine.paid_on = Some(paid_on);
    let touched = Touched::record().permit(fine.permit_number.as_str());
    judged(reg, next, touched, Vec::new(), ctx)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use sync_core::domain::{DriverId, Plate};
    use sync_core::rules::{CheckInput, Observation, Overall, RulesConfig, VehicleQuery};
    use sync_core::testkit::sample_registry;

    fn ctx(rules: &RulesConfig) -> Ctx<'_> {
        Ctx {
            today: NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
            rules,
        }
    }

    fn rule_ids(e: &EditError) -> Vec<String> {
        match e {
            EditError::Refused(r) => r.findings.iter().map(|f| f.rule_id.to_string()).collect(),
            other => panic!("not a refusal: {other:?}"),
        }
    }

    fn ids(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.rule_id.as_str()).collect()
    }

    fn permit<'a>(reg: &'a Registry, number: &str) -> &'a Permit {
        reg.permits.iter().find(|p| p.number == number).unwrap()
    }

    fn person<'a>(reg: &'a Registry, id: &str) -> &'a Person {
        reg.people.iter().find(|p| p.id == id).unwrap()
    }

    /// The field check of `number` with its holder at the wheel, at noon of the test's today.
    fn field_check_with_holder(reg: &Registry, number: &str) -> sync_core::rules::Verdict {
        let holder = person(reg, &permit(reg, number).holder_id);
        let input = CheckInput {
            vehicle: VehicleQuery::Permit(number.into()),
            driver: DriverId::Cpf(holder.cpf.clone()),
            at: "2026-11-30T15:00:00Z".parse().unwrap(),
            observation: Observation::default(),
            registry_refreshed_at: None,
        };
        sync_core::rules::check_registry(&reg.index(), &input, &RulesConfig::default())
    }

    /// A copy of V01 as `id`/`plate`, in the name of person `owner`.
    fn vehicle_of(reg: &Registry, id: &str, plate: &str, owner: &str) -> Vehicle {
        Vehicle {
            id: id.into(),
            plate: Plate::parse(plate).unwrap(),
            owner_cpf: person(reg, owner).cpf.clone(),
            ..reg.vehicles[0].clone()
        }
    }

    fn grant(number: &str, holder: &str, vehicle: &str, stand: &str) -> GrantPermit {
        GrantPermit {
            number: number.into(),
            holder_id: holder.into(),
            vehicle_id: vehicle.into(),
            stand_id: stand.into(),
            service: None,
            issued_on: None,
            renewal_year: None,
            edital_date: None,
        }
    }

    #[test]
    fn registry_texts_are_bounded_at_their_limit() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let code = |r: Result<Edited, EditError>| match r {
            Ok(_) => "ok",
            Err(EditError::Invalid { code, .. }) => code,
            Err(other) => panic!("{other:?}"),
        };
        let named = |name: String| Person {
            name,
            ..person(&reg, "P10").clone()
        };
        let at = "á".repeat(MAX_REGISTRY_TEXT_CHARS);
        let over = "á".repeat(MAX_REGISTRY_TEXT_CHARS + 1);
        assert_eq!(
            code(update_person(&reg, "P10", named(at.clone()), &ctx(&rules))),
            "ok"
        );
        assert_eq!(
            code(update_person(
                &reg,
                "P10",
                named(over.clone()),
                &ctx(&rules)
            )),
            "text_too_long"
        );
        assert_eq!(
            code(update_person(
                &reg,
                "P10",
                named("Ana\nSilva".into()),
                &ctx(&rules)
            )),
            "invalid_text"
        );
        let observed = |n: usize| {
            let mut p = person(&reg, "P10").clone();
            p.licence.observations = vec![String::from("EAR"); n];
            p
        };
        assert_eq!(
            code(update_person(
                &reg,
                "P10",
                observed(MAX_LICENCE_OBSERVATIONS),
                &ctx(&rules)
            )),
            "ok"
        );
        assert_eq!(
            code(update_person(
                &reg,
                "P10",
                observed(MAX_LICENCE_OBSERVATIONS + 1),
                &ctx(&rules)
            )),
            "too_many_observations"
        );
        let mut v = reg.vehicles[0].clone();
        v.make_model = over.clone();
        assert_eq!(
            code(update_vehicle(&reg, &v.id.clone(), v, &ctx(&rules))),
            "text_too_long"
        );
        let mut s = reg.stands[0].clone();
        s.address = at;
        assert_eq!(
            code(update_stand(&reg, &s.id.clone(), s.clone(), &ctx(&rules))),
            "ok"
        );
        s.address = over.clone();
        assert_eq!(
            code(update_stand(&reg, &s.id.clone(), s, &ctx(&rules))),
            "text_too_long"
        );
        let aux = AddAuxiliary {
            person_id: "P10".into(),
            licence_number: over,
            registered_on: None,
        };
        assert_eq!(
            code(add_auxiliary(&reg, "0003", aux, &ctx(&rules))),
            "text_too_long"
        );
    }

    #[test]
    fn third_auxiliary_is_refused_citing_art_8() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let e = add_auxiliary(
            &reg,
            "0001",
            AddAuxiliary {
                person_id: "P10".into(),
                licence_number: "0001-A3".into(),
                registered_on: None,
            },
            &ctx(&rules),
        )
        .unwrap_err();
        assert_eq!(rule_ids(&e), ["R13"]);
        let next = add_auxiliary(
            &reg,
            "0003",
            AddAuxiliary {
                person_id: "P10".into(),
                licence_number: "0003-A1".into(),
                registered_on: None,
            },
            &ctx(&rules),
        )
        .unwrap();
        assert_eq!(next.registry.permits[2].auxiliaries.len(), 1);
    }

    #[test]
    fn grant_reports_cap_and_second_permit_together() {
        let rules = RulesConfig {
            census_population: 10_000, // cap 5 at 1:2,000
            inhabitants_per_taxi: 2_000,
            ..RulesConfig::default()
        };
        let mut reg = sample_registry();
        let v = vehicle_of(&reg, "V99", "XYZ9A99", "P01");
        reg.vehicles.push(v);
        // Into an open place the grant raises nothing: only art. 9 refuses it.
        let e = grant_permit(&reg, grant("0099", "P01", "V99", "S01"), &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R03"]);
        // S01 full (one place, 0001's): no open place there, and one taxi more over the cap.
        reg.stands[0].vacancies = 1;
        let e = grant_permit(&reg, grant("0099", "P01", "V99", "S01"), &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R03", "R23", "R23"]);
    }

    #[test]
    fn a_grant_is_refused_for_what_the_field_check_would_find() {
        let rules = RulesConfig::default();
        let mut reg = sample_registry();
        // P10 holds no permit; V99 has no taximeter and its CRLV is João's (art. 30 III).
        let mut v = vehicle_of(&reg, "V99", "XYZ9A99", "P01");
        v.taximeter = None;
        reg.vehicles.push(v);
        let e = grant_permit(&reg, grant("0099", "P10", "V99", "S01"), &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R40", "R02"]);
        // Its own vehicle with a taximeter: granted, and the first field check is regular.
        let v = vehicle_of(&reg, "V98", "XYZ9A98", "P10");
        reg.vehicles.push(v);
        let next = grant_permit(&reg, grant("0099", "P10", "V98", "S01"), &ctx(&rules)).unwrap();
        assert_eq!(next.warnings, []);
        assert_eq!(
            field_check_with_holder(&next.registry, "0099").overall,
            Overall::Regular
        );
        // A stand without an open place refuses it (S03 holds 0003 only).
        reg.stands[2].vacancies = 1;
        let e = grant_permit(&reg, grant("0099", "P10", "V98", "S03"), &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R23"]);
        // Granted already renewed for a later year would skip renewals (art. 7).
        let mut req = grant("0099", "P10", "V98", "S01");
        req.renewal_year = Some(2030);
        let e = grant_permit(&reg, req, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R11"]);
    }

    #[test]
    fn vacancies_are_capped_across_requests() {
        // Room for 13 more places over the sample's 40.
        let rules = RulesConfig {
            census_population: 53 * 1_800,
            ..RulesConfig::default()
        };
        let reg = sample_registry();
        let mut s01 = reg.stands[0].clone();
        s01.vacancies += 13;
        let first = update_stand(&reg, "S01", s01, &ctx(&rules))
            .unwrap()
            .registry;
        let mut s02 = first.stands[1].clone();
        s02.vacancies += 1;
        let e = update_stand(&first, "S02", s02, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R23"]);
        let mut s09 = first.stands[1].clone();
        s09.id = "S09".into();
        s09.vacancies = 1;
        let e = create_stand(&first, s09, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R23"]);
    }

    #[test]
    fn renewal_blocked_by_unpaid_fine_then_allowed() {
        let rules = RulesConfig::default();
        let mut reg = sample_registry();
        reg.fines[0].permit_number = "0001".into();
        let e = renew(&reg, "0001", Renew { year: 2027 }, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R27"]);
        let paid = pay_fine(&reg, "FINE-1", PayFine::default(), &ctx(&rules))
            .unwrap()
            .registry;
        let next = renew(&paid, "0001", Renew { year: 2027 }, &ctx(&rules)).unwrap();
        assert_eq!(permit(&next.registry, "0001").renewal_year, 2027);
        assert!(matches!(
            pay_fine(&paid, "FINE-1", PayFine::default(), &ctx(&rules)),
            Err(EditError::Conflict {
                code: "already_paid",
                ..
            })
        ));
    }

    #[test]
    fn a_lapsed_permit_is_not_renewed_and_years_are_not_skipped() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        // 0004: last renewed for 2025, deadline 31/01/2026 missed (and a fine unpaid).
        let e = renew(&reg, "0004", Renew { year: 2026 }, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R11", "R27"]);
        assert!(e.to_string().contains("cassação automática"), "{e}");
        let e = renew(&reg, "0001", Renew { year: 2030 }, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R11"]);
    }

    #[test]
    fn a_transfer_needs_the_vehicle_in_the_new_holders_name() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let req = TransferPermit {
            to_person_id: "P02".into(),
            reason: TransferReason::Voluntary,
            vehicle_id: None,
        };
        // V01's CRLV is João's: the new holder would be irregular at once (art. 30 III).
        let e = transfer(&reg, "0001", req.clone(), &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R40"]);
        // The office records the new CRLV (a record: the old holder's mismatch is a warning)…
        let mut v01 = reg.vehicles[0].clone();
        v01.owner_cpf = person(&reg, "P02").cpf.clone();
        let updated = update_vehicle(&reg, "V01", v01, &ctx(&rules)).unwrap();
        assert_eq!(ids(&updated.warnings), ["R40"]);
        // …then the transfer goes through and the new holder is regular in the field.
        let next = transfer(&updated.registry, "0001", req.clone(), &ctx(&rules))
            .unwrap()
            .registry;
        let p = permit(&next, "0001");
        assert_eq!(p.holder_id, "P02");
        assert!(p.auxiliaries.iter().all(|a| a.person_id != "P02"));
        assert_eq!(next.transfers.len(), 1);
        next.validate().unwrap();
        assert_eq!(
            field_check_with_holder(&next, "0001").overall,
            Overall::Regular
        );
        // Or the transfer names the new holder's own vehicle.
        let mut reg2 = reg.clone();
        let v = vehicle_of(&reg, "V99", "XYZ9A99", "P02");
        reg2.vehicles.push(v);
        let req = TransferPermit {
            vehicle_id: Some("V99".into()),
            ..req
        };
        let next = transfer(&reg2, "0001", req.clone(), &ctx(&rules))
            .unwrap()
            .registry;
        assert_eq!(permit(&next, "0001").vehicle_id, "V99");
        assert_eq!(
            field_check_with_holder(&next, "0001").overall,
            Overall::Regular
        );
        // A vehicle on another live permit is not taken.
        let taken = TransferPermit {
            vehicle_id: Some("V02".into()),
            ..req
        };
        assert!(matches!(
            transfer(&reg2, "0001", taken, &ctx(&rules)),
            Err(EditError::Conflict {
                code: "vehicle_in_use",
                ..
            })
        ));
    }

    #[test]
    fn a_transfer_by_death_closes_the_succession() {
        let rules = RulesConfig::default();
        let mut reg = sample_registry();
        let v = vehicle_of(&reg, "V99", "XYZ9A99", "P10");
        reg.vehicles.push(v);
        // Opening the succession records a decision: the field's R05 comes back as a warning.
        let opened = set_permit_state(
            &reg,
            "0001",
            PermitState::InSuccession {
                since: NaiveDate::from_ymd_opt(2026, 11, 1).unwrap(),
            },
            &ctx(&rules),
        )
        .unwrap();
        assert_eq!(ids(&opened.warnings), ["R05"]);
        // Only a transfer by death passes it on.
        let voluntary = TransferPermit {
            to_person_id: "P10".into(),
            reason: TransferReason::Voluntary,
            vehicle_id: Some("V99".into()),
        };
        let e = transfer(&opened.registry, "0001", voluntary.clone(), &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R43"]);
        let death = TransferPermit {
            reason: TransferReason::Death,
            ..voluntary
        };
        let next = transfer(&opened.registry, "0001", death, &ctx(&rules))
            .unwrap()
            .registry;
        let p = permit(&next, "0001");
        assert_eq!(
            (p.holder_id.as_str(), &p.state),
            ("P10", &PermitState::Active)
        );
        let verdict = field_check_with_holder(&next, "0001");
        assert_eq!(verdict.overall, Overall::Regular, "{verdict:#?}");
        assert!(!verdict.rule_ids().contains(&"R05"));
    }

    #[test]
    fn a_record_is_not_refused_for_what_it_reveals() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        // The holder's CNH typed in as expired: recorded, with the finding as a warning.
        let mut p01 = person(&reg, "P01").clone();
        p01.licence.expiry = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let next = update_person(&reg, "P01", p01, &ctx(&rules)).unwrap();
        assert_eq!(ids(&next.warnings), ["R10"]);
        assert!(
            next.warnings[0]
                .message
                .starts_with("Alvará 0001, com João da Silva (titular) ao volante: "),
            "{}",
            next.warnings[0].message
        );
        // Reinstating a revoked permit is an act: its place must still be free.
        let mut full = reg.clone();
        full.stands[0].vacancies = 1;
        let revoked = set_permit_state(
            &full,
            "0001",
            PermitState::Revoked {
                on: NaiveDate::from_ymd_opt(2026, 11, 1).unwrap(),
            },
            &ctx(&rules),
        )
        .unwrap()
        .registry;
        let mut other = vehicle_of(&reg, "V99", "XYZ9A99", "P10");
        other.owner_cpf = person(&reg, "P10").cpf.clone();
        let mut taken = revoked.clone();
        taken.vehicles.push(other);
        let taken = grant_permit(&taken, grant("0099", "P10", "V99", "S01"), &ctx(&rules))
            .unwrap()
            .registry;
        let e = set_permit_state(&taken, "0001", PermitState::Active, &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R23"]);
    }

    #[test]
    fn swap_exchanges_stands() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let next = swap(
            &reg,
            Swap {
                permit_a: "0001".into(),
                permit_b: "0002".into(),
                fee_paid: true,
            },
            &ctx(&rules),
        )
        .unwrap()
        .registry;
        assert_eq!(next.permits[0].stand_id, "S02");
        assert_eq!(next.permits[1].stand_id, "S01");
    }

    /// An edital's place given to a holder moves the permit; not to a full stand (R23), not
    /// across services (R38), not where it already is.
    #[test]
    fn move_permit_takes_a_free_place_of_the_same_service() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let next = move_permit(&reg, "0001", "S03", &ctx(&rules))
            .unwrap()
            .registry;
        assert_eq!(permit(&next, "0001").stand_id, "S03");
        let mut full = reg.clone();
        full.stands
            .iter_mut()
            .find(|s| s.id == "S03")
            .unwrap()
            .vacancies = 1;
        let e = move_permit(&full, "0001", "S03", &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R23"]);
        let e = move_permit(&reg, "0001", "S04", &ctx(&rules)).unwrap_err();
        assert_eq!(rule_ids(&e), ["R38"]);
        assert!(matches!(
            move_permit(&reg, "0001", "S01", &ctx(&rules)),
            Err(EditError::Conflict {
                code: "already_at_stand",
                ..
            })
        ));
    }

    #[test]
    fn fine_and_penalty_ids_are_sequential_per_year() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let f = NewFine {
            permit_number: "0001".into(),
            amount: Decimal::new(79702, 2),
            issued_on: None,
        };
        let a = add_fine(&reg, f.clone(), &ctx(&rules)).unwrap().registry;
        let b = add_fine(&a, f, &ctx(&rules)).unwrap().registry;
        let ids: Vec<&str> = b.fines.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["FINE-1", "MUL-2026-0001", "MUL-2026-0002"]);
        assert!(matches!(
            add_fine(
                &reg,
                NewFine {
                    permit_number: "0001".into(),
                    amount: Decimal::ZERO,
                    issued_on: None
                },
                &ctx(&rules)
            ),
            Err(EditError::Invalid {
                code: "invalid_amount",
                ..
            })
        ));
    }

    #[test]
    fn people_need_valid_unique_cpfs() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let mut p = reg.people[0].clone();
        p.id = "P99".into();
        assert!(matches!(
            create_person(&reg, p.clone(), &ctx(&rules)),
            Err(EditError::Conflict {
                code: "cpf_taken",
                ..
            })
        ));
        p.cpf = sync_core::domain::Cpf::parse("12345678901").unwrap();
        assert!(matches!(
            create_person(&reg, p.clone(), &ctx(&rules)),
            Err(EditError::Invalid {
                code: "invalid_cpf",
                ..
            })
        ));
        p.cpf = sync_core::domain::Cpf::parse("11144477735").unwrap();
        assert_eq!(
            create_person(&reg, p, &ctx(&rules))
                .unwrap()
                .registry
                .people
                .len(),
            11
        );
    }
}
