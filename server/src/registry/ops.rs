//! Registry operations as pure functions: current registry + request + [`Ctx`] → new registry,
//! or why not. No I/O: [`super::commit`] runs them, so they are re-run on a fresh registry after
//! a lost race, and tested without a database.
//!
//! Legal bars come from `sync_core::rules::office` (third auxiliary R13/R14, second permit R03,
//! the art. 14 cap R23, art. 10 transfers R43, unpaid fines blocking renewal R27, swaps R44/R38)
//! and are returned as [`EditError::Refused`] with every finding; the preconditions that are
//! bookkeeping rather than law (unknown ids, duplicates) are `NotFound`/`Conflict`/`Invalid`.
//! Where one request meets several checks (granting a permit: art. 9, art. 10 §2, art. 2 and the
//! art. 14 cap) all findings are reported together.

use chrono::{Datelike, NaiveDate};
use rust_decimal::Decimal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{
    AuxiliaryDriver, Fine, Penalty, PenaltyKind, Permit, PermitState, Person, Registry,
    ServiceKind, Stand, Transfer, TransferReason, Vehicle,
};
use sync_core::rules::office::{self, Refusal};
use sync_core::rules::{Consequence, Finding, RuleId};

use super::{Ctx, EditError};

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

fn merge(results: impl IntoIterator<Item = Result<(), Refusal>>) -> Result<(), EditError> {
    let findings: Vec<Finding> = results
        .into_iter()
        .filter_map(Result::err)
        .flat_map(|r| r.findings)
        .collect();
    if findings.is_empty() {
        Ok(())
    } else {
        Err(EditError::Refused(Refusal { findings }))
    }
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

fn check_person(reg: &Registry, person: &Person) -> Result<(), EditError> {
    check_id("pessoa", &person.id)?;
    if person.name.trim().is_empty() {
        return Err(invalid("invalid_name", "O nome não pode ficar vazio."));
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
pub fn create_person(reg: &Registry, person: Person) -> Result<Registry, EditError> {
    if reg.people.iter().any(|p| p.id == person.id) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("A pessoa {} já existe.", person.id),
        });
    }
    check_person(reg, &person)?;
    let mut next = reg.clone();
    next.people.push(person);
    Ok(next)
}

/// Replaces a person's data.
pub fn update_person(reg: &Registry, id: &str, person: Person) -> Result<Registry, EditError> {
    same_id(id, &person.id)?;
    check_person(reg, &person)?;
    let mut next = reg.clone();
    let slot = next
        .people
        .iter_mut()
        .find(|p| p.id == id)
        .ok_or_else(|| not_found("A pessoa", id))?;
    *slot = person;
    Ok(next)
}

fn check_vehicle(reg: &Registry, v: &Vehicle) -> Result<(), EditError> {
    check_id("veículo", &v.id)?;
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
pub fn create_vehicle(reg: &Registry, vehicle: Vehicle) -> Result<Registry, EditError> {
    if reg.vehicles.iter().any(|v| v.id == vehicle.id) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("O veículo {} já existe.", vehicle.id),
        });
    }
    check_vehicle(reg, &vehicle)?;
    let mut next = reg.clone();
    next.vehicles.push(vehicle);
    Ok(next)
}

/// Replaces a vehicle's data.
pub fn update_vehicle(reg: &Registry, id: &str, vehicle: Vehicle) -> Result<Registry, EditError> {
    same_id(id, &vehicle.id)?;
    check_vehicle(reg, &vehicle)?;
    let mut next = reg.clone();
    let slot = next
        .vehicles
        .iter_mut()
        .find(|v| v.id == id)
        .ok_or_else(|| not_found("O veículo", id))?;
    *slot = vehicle;
    Ok(next)
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

/// Creates a stand; its vacancies are new vacancies under the art. 14 cap (R23).
pub fn create_stand(reg: &Registry, stand: Stand, ctx: &Ctx<'_>) -> Result<Registry, EditError> {
    if reg.stands.iter().any(|s| s.id == stand.id) {
        return Err(EditError::Conflict {
            code: "already_exists",
            message: format!("O ponto {} já existe.", stand.id),
        });
    }
    check_stand(reg, &stand)?;
    office::check_new_vacancies(&reg.index(), stand.vacancies, ctx.rules)?;
    let mut next = reg.clone();
    next.stands.push(stand);
    Ok(next)
}

/// Replaces a stand; added vacancies count against the art. 14 cap (R23).
pub fn update_stand(
    reg: &Registry,
    id: &str,
    stand: Stand,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
    same_id(id, &stand.id)?;
    let old = reg
        .stands
        .iter()
        .find(|s| s.id == id)
        .ok_or_else(|| not_found("O ponto", id))?;
    check_stand(reg, &stand)?;
    let added = stand.vacancies.saturating_sub(old.vacancies);
    office::check_new_vacancies(&reg.index(), added, ctx.rules)?;
    let mut next = reg.clone();
    if let Some(slot) = next.stands.iter_mut().find(|s| s.id == id) {
        *slot = stand;
    }
    Ok(next)
}

/// Sets or clears a stand's coordinator (art. 17).
pub fn set_coordinator(
    reg: &Registry,
    stand_id: &str,
    req: SetCoordinator,
) -> Result<Registry, EditError> {
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
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// Permits
// ---------------------------------------------------------------------------------------------

/// Grants a new alvará: art. 9 (R03), art. 10 §2 (R43), art. 2 of the holder and the art. 14
/// cap for one more taxi (R23), all reported together; the stand's service must match (R38).
pub fn grant_permit(
    reg: &Registry,
    req: GrantPermit,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
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
    let index = reg.index();
    merge([
        office::check_grant_permit(&index, &req.holder_id, ctx.today, ctx.rules),
        office::check_new_vacancies(&index, 1, ctx.rules),
    ])?;
    let mut next = reg.clone();
    next.permits.push(Permit {
        number: req.number,
        holder_id: req.holder_id,
        auxiliaries: Vec::new(),
        vehicle_id: req.vehicle_id,
        stand_id: req.stand_id,
        service,
        issued_on: req.issued_on.unwrap_or(ctx.today),
        renewal_year: req.renewal_year.unwrap_or(ctx.today.year()),
        edital_date: req.edital_date,
        state: PermitState::Active,
        illness_authorisation: None,
    });
    Ok(next)
}

/// Sets a permit's legal state. Bringing a revoked permit back counts as one more taxi (R23).
pub fn set_permit_state(
    reg: &Registry,
    number: &str,
    state: PermitState,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
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
    if revives {
        office::check_new_vacancies(&reg.index(), 1, ctx.rules)?;
    }
    let mut next = reg.clone();
    permit_mut(&mut next, number)?.state = state;
    Ok(next)
}

/// Registers an auxiliary driver (art. 8: R13 third auxiliary, R14 auxiliary elsewhere, art. 2).
pub fn add_auxiliary(
    reg: &Registry,
    number: &str,
    req: AddAuxiliary,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
    if req.licence_number.trim().is_empty() {
        return Err(invalid(
            "invalid_licence_number",
            "Informe o número do alvará do motorista auxiliar.",
        ));
    }
    office::check_add_auxiliary(&reg.index(), number, &req.person_id, ctx.today, ctx.rules)?;
    let mut next = reg.clone();
    permit_mut(&mut next, number)?
        .auxiliaries
        .push(AuxiliaryDriver {
            person_id: req.person_id,
            licence_number: req.licence_number.trim().to_owned(),
            registered_on: req.registered_on.unwrap_or(ctx.today),
        });
    Ok(next)
}

/// Removes an auxiliary driver from a permit.
pub fn remove_auxiliary(
    reg: &Registry,
    number: &str,
    person_id: &str,
) -> Result<Registry, EditError> {
    let mut next = reg.clone();
    let permit = permit_mut(&mut next, number)?;
    let before = permit.auxiliaries.len();
    permit.auxiliaries.retain(|a| a.person_id != person_id);
    if permit.auxiliaries.len() == before {
        return Err(EditError::NotFound(format!(
            "A pessoa {person_id} não é motorista auxiliar do alvará {number}."
        )));
    }
    Ok(next)
}

/// Renews a permit for a year (art. 7; R27 unpaid fine, R02 taximeter, art. 2 of the holder).
pub fn renew(
    reg: &Registry,
    number: &str,
    req: Renew,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
    office::check_renewal(&reg.index(), number, req.year, ctx.today, ctx.rules)?;
    let mut next = reg.clone();
    permit_mut(&mut next, number)?.renewal_year = req.year;
    Ok(next)
}

/// Transfers a permit (art. 10); the receiver stops being one of its auxiliaries.
pub fn transfer(
    reg: &Registry,
    number: &str,
    req: TransferPermit,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
    office::check_transfer(
        &reg.index(),
        number,
        &req.to_person_id,
        req.reason,
        ctx.today,
        ctx.rules,
    )?;
    let mut next = reg.clone();
    let permit = permit_mut(&mut next, number)?;
    let from = std::mem::replace(&mut permit.holder_id, req.to_person_id.clone());
    permit
        .auxiliaries
        .retain(|a| a.person_id != req.to_person_id);
    next.transfers.push(Transfer {
        permit_number: number.to_owned(),
        from_person_id: from,
        to_person_id: req.to_person_id,
        on: ctx.today,
        reason: req.reason,
    });
    Ok(next)
}

/// Swaps the stands of two permits (art. 11: fee R44, art. 28 service R38).
pub fn swap(reg: &Registry, req: Swap, ctx: &Ctx<'_>) -> Result<Registry, EditError> {
    office::check_swap(
        &reg.index(),
        &req.permit_a,
        &req.permit_b,
        req.fee_paid,
        ctx.rules,
    )?;
    let mut next = reg.clone();
    let a = permit_mut(&mut next, &req.permit_a)?.stand_id.clone();
    let b = std::mem::replace(&mut permit_mut(&mut next, &req.permit_b)?.stand_id, a);
    permit_mut(&mut next, &req.permit_a)?.stand_id = b;
    Ok(next)
}

// ---------------------------------------------------------------------------------------------
// Penalties and fines
// ---------------------------------------------------------------------------------------------

/// Records a decided penalty; its id is `PEN-<year>-<nnnn>`.
pub fn add_penalty(reg: &Registry, req: NewPenalty, ctx: &Ctx<'_>) -> Result<Registry, EditError> {
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
    Ok(next)
}

/// Adds a fine; its id is `MUL-<year>-<nnnn>`.
pub fn add_fine(reg: &Registry, req: NewFine, ctx: &Ctx<'_>) -> Result<Registry, EditError> {
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
    let mut next = reg.clone();
    next.fines.push(Fine {
        id,
        permit_number: req.permit_number,
        amount: req.amount,
        issued_on,
        paid_on: None,
    });
    Ok(next)
}

/// Registers the payment of a fine.
pub fn pay_fine(
    reg: &Registry,
    id: &str,
    req: PayFine,
    ctx: &Ctx<'_>,
) -> Result<Registry, EditError> {
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
    Ok(next)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use sync_core::rules::RulesConfig;
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
        assert_eq!(next.permits[2].auxiliaries.len(), 1);
    }

    #[test]
    fn grant_reports_cap_and_second_permit_together() {
        let rules = RulesConfig {
            census_population: 10_000, // cap 5 at 1:2,000
            inhabitants_per_taxi: 2_000,
            ..RulesConfig::default()
        };
        let reg = sample_registry();
        let mut reg2 = reg.clone();
        reg2.vehicles.push(Vehicle {
            id: "V99".into(),
            plate: sync_core::domain::Plate::parse("XYZ9A99").unwrap(),
            ..reg.vehicles[0].clone()
        });
        let e = grant_permit(
            &reg2,
            GrantPermit {
                number: "0099".into(),
                holder_id: "P01".into(),
                vehicle_id: "V99".into(),
                stand_id: "S01".into(),
                service: None,
                issued_on: None,
                renewal_year: None,
                edital_date: None,
            },
            &ctx(&rules),
        )
        .unwrap_err();
        assert_eq!(rule_ids(&e), ["R03", "R23"]);
    }

    #[test]
    fn renewal_blocked_by_unpaid_fine_then_allowed() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let e = renew(&reg, "0004", Renew { year: 2026 }, &ctx(&rules)).unwrap_err();
        assert!(rule_ids(&e).contains(&"R27".to_string()));
        let paid = pay_fine(&reg, "FINE-1", PayFine::default(), &ctx(&rules)).unwrap();
        // P08's expired CNH is the auxiliary's, not the holder's: renewal passes.
        let next = renew(&paid, "0004", Renew { year: 2026 }, &ctx(&rules)).unwrap();
        assert_eq!(next.permits[3].renewal_year, 2026);
        assert!(matches!(
            pay_fine(&paid, "FINE-1", PayFine::default(), &ctx(&rules)),
            Err(EditError::Conflict {
                code: "already_paid",
                ..
            })
        ));
    }

    #[test]
    fn transfer_moves_holder_and_records_it() {
        let rules = RulesConfig::default();
        let reg = sample_registry();
        let next = transfer(
            &reg,
            "0001",
            TransferPermit {
                to_person_id: "P02".into(),
                reason: TransferReason::Voluntary,
            },
            &ctx(&rules),
        )
        .unwrap();
        let p = &next.permits[0];
        assert_eq!(p.holder_id, "P02");
        assert!(p.auxiliaries.iter().all(|a| a.person_id != "P02"));
        assert_eq!(next.transfers.len(), 1);
        next.validate().unwrap();
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
        .unwrap();
        assert_eq!(next.permits[0].stand_id, "S02");
        assert_eq!(next.permits[1].stand_id, "S01");
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
        let a = add_fine(&reg, f.clone(), &ctx(&rules)).unwrap();
        let b = add_fine(&a, f, &ctx(&rules)).unwrap();
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
        let reg = sample_registry();
        let mut p = reg.people[0].clone();
        p.id = "P99".into();
        assert!(matches!(
            create_person(&reg, p.clone()),
            Err(EditError::Conflict {
                code: "cpf_taken",
                ..
            })
        ));
        p.cpf = sync_core::domain::Cpf::parse("12345678901").unwrap();
        assert!(matches!(
            create_person(&reg, p.clone()),
            Err(EditError::Invalid {
                code: "invalid_cpf",
                ..
            })
        ));
        p.cpf = sync_core::domain::Cpf::parse("11144477735").unwrap();
        assert_eq!(create_person(&reg, p).unwrap().people.len(), 11);
    }
}
