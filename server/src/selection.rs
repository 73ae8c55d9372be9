//! The editais de chamamento (arts. 2–6 of the law): how the office fills vacancies, one step at
//! a time, over the law kernel's `sync_core::rules::selection`. Called by the JSON API
//! (`api::selection`, `/v1/editais…`); knows nothing of HTTP (ADR 0026).
//!
//! Flow of every step ([`open`], [`register`], [`publish_list`], [`draw`], [`publish_result`],
//! [`file_appeal`], [`decide_appeal`], [`grant`]):
//! 1. the caller's role (the office writes; the office and the administrator read);
//! 2. read the edital (`Store::edital`) and the current registry with its indexes, and take
//!    `today` from the server's clock (the local date in Americana) and the rules configuration
//!    from that registry's law parameters;
//! 3. run the kernel's pure step: the edital after it, or a `Refusal` citing its rule, answered
//!    as [`ServiceError::Refused`] exactly as the registry service answers one;
//! 4. save the edital after it under the version read (`Store::save_edital`, one transaction
//!    with its audit row `edital.*`). When another writer saved first, the save fails with a
//!    version conflict and the whole step is re-run on what is then current, at most
//!    [`MAX_ATTEMPTS`] times, so the law is never applied to a stale edital or registry.
//!
//! The grant (art. 6) is the one step that writes the registry: the kernel's `plan_grant` says
//! what (a new permit, or the holder's permit moved to the place's stand, and the auxiliary
//! registrations that end); the registry operations of `registry::ops` perform it and the
//! kernel's `office::judge_write` judges it (stand places, art. 14 cap, art. 9, the field check
//! of the new permit); the edital's `record_grant` and that registry version are committed
//! together in one `save_edital`, so neither exists without the other. A conflict on either
//! re-runs everything.
//!
//! The papers (the printed edital and result) are [`print`].

pub mod print;

use chrono::{DateTime, NaiveDate, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{IndexedRegistry, Registry};
use sync_core::feed::RegistryChange;
use sync_core::rules::selection::{
    self, Edital, GrantPlan, Group, NewAppeal, NewCandidate, NewEdital, Ranked, Stage,
};
use sync_core::rules::{Finding, RulesConfig};

use crate::auth::{Auth, roles};
use crate::limits::MAX_LICENCE_OBSERVATIONS;
use crate::registry::ops::{self, GrantPermit};
use crate::registry::{self, Ctx, Edited};
use crate::service::{ServiceError, Services};
use crate::store::selection::{EditalRow, EditalSave, MAX_EDITAIS_LISTED, ReadSet};
use crate::store::{RegistryCommit, StoreError};

/// How many times a step is re-run after losing a race with another writer (as the registry
/// service's `commit`).
pub const MAX_ATTEMPTS: usize = 5;

// ---------------------------------------------------------------------------------------------
// Requests and answers
// ---------------------------------------------------------------------------------------------

/// `POST /v1/editais/{id}/draw`: the seed as published by its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DrawRequest {
    /// E.g. the five prizes of the Loteria Federal's draw, as printed.
    pub seed: String,
}

/// `POST /v1/editais/{id}/appeals/{number}/decision`: the Prefeito's decision as the office
/// records it (dated today).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppealRuling {
    /// True: appeal granted (provido).
    pub granted: bool,
    pub reasoning: String,
    /// The inscription a granted appeal excludes from the places.
    #[serde(default)]
    pub excludes: Option<String>,
}

/// `POST /v1/editais/{id}/grants`: grant the place of a chosen candidate (art. 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantRequest {
    pub inscription: String,
    /// Groups II and III: the prontuário of the new alvará. Group I (a current holder, whose
    /// alvará moves to the place's stand): omitted, or the holder's own alvará.
    #[serde(default)]
    pub permit_number: Option<String>,
    /// Groups II and III: the vehicle of the new alvará, registered in the candidate's name
    /// (art. 30 III). Not given for group I.
    #[serde(default)]
    pub vehicle_id: Option<String>,
}

/// One edital, where it stands, and its classification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EditalView {
    /// The version a write is computed from.
    pub version: u64,
    pub updated_at: DateTime<Utc>,
    pub stage: Stage,
    /// The stage as the office reads it.
    pub stage_label: String,
    /// The order of art. 3 and the places it gives (empty before the list).
    pub classification: Vec<Ranked>,
    pub edital: Edital,
}

/// One line of the list of editais.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EditalSummary {
    pub id: String,
    pub number: String,
    pub version: u64,
    pub updated_at: DateTime<Utc>,
    pub stage: Stage,
    pub stage_label: String,
    pub published_on: NaiveDate,
    pub applications_from: NaiveDate,
    pub applications_until: NaiveDate,
    pub draw_on: NaiveDate,
    /// Places offered in all.
    pub places: u32,
    pub candidates: usize,
    pub grants: usize,
}

/// What a grant wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GrantOutcome {
    /// The alvará granted (group I: the holder's, moved to the place's stand).
    pub permit_number: String,
    pub group: Group,
    pub stand_id: String,
    /// The registry version the grant committed.
    pub registry_version: u64,
    /// What changed in the registry, as devices will receive it.
    pub changes: Vec<RegistryChange>,
    /// What the law found on the registry after the grant that did not refuse it.
    pub warnings: Vec<Finding>,
    pub edital: EditalView,
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

fn view(row: EditalRow, today: NaiveDate) -> EditalView {
    let stage = row.edital.stage(today);
    EditalView {
        version: row.version,
        updated_at: row.updated_at,
        stage,
        stage_label: stage.label_pt().to_owned(),
        classification: selection::classification(&row.edital),
        edital: row.edital,
    }
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::not_found(format!("O edital {id} não existe."))
}

fn busy() -> ServiceError {
    ServiceError::conflict(
        "edital_busy",
        "O edital está sendo alterado por outras operações; tente novamente.",
    )
}

async fn load(svc: &Services, id: &str) -> Result<EditalRow, ServiceError> {
    svc.store()
        .edital(id.to_owned())
        .await?
        .ok_or_else(|| not_found(id))
}

/// The editais, newest first (at most `MAX_EDITAIS_LISTED`).
pub async fn list(svc: &Services, auth: &Auth) -> Result<Vec<EditalSummary>, ServiceError> {
    auth.require(roles::OFFICE_READERS)?;
    let rows = svc.store().list_editais().await?;
    let today = svc.clock().today();
    Ok(rows
        .into_iter()
        .map(|r| {
            let e = &r.edital;
            let stage = e.stage(today);
            EditalSummary {
                id: r.id.clone(),
                number: e.number.clone(),
                version: r.version,
                updated_at: r.updated_at,
                stage,
                stage_label: stage.label_pt().to_owned(),
                published_on: e.published_on,
                applications_from: e.applications_from,
                applications_until: e.applications_until,
                draw_on: e.draw_on,
                places: e.places(),
                candidates: e.candidates.len(),
                grants: e.grants.len(),
            }
        })
        .collect())
}

/// One edital with its stage and classification.
pub async fn get(svc: &Services, auth: &Auth, id: &str) -> Result<EditalView, ServiceError> {
    auth.require(roles::OFFICE_READERS)?;
    let row = load(svc, id).await?;
    Ok(view(row, svc.clock().today()))
}

/// The lottery's list as published (`PublishedList::lottery_text`), byte for byte: with the
/// seed, anyone recomputes the draw from it.
pub async fn lottery_text(svc: &Services, auth: &Auth, id: &str) -> Result<String, ServiceError> {
    auth.require(roles::OFFICE_READERS)?;
    let row = load(svc, id).await?;
    row.edital.list.map(|l| l.lottery_text).ok_or_else(|| {
        ServiceError::not_found(format!(
            "A lista do edital {id} ainda não foi publicada: não há lista do sorteio."
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

/// Runs one kernel step on edital `id` and saves it (see the module doc). `step` gets the
/// edital, the indexed registry, today and the rules, and runs again on each retry.
async fn step<F>(
    svc: &Services,
    auth: &Auth,
    id: &str,
    action: &str,
    mut step: F,
) -> Result<EditalView, ServiceError>
where
    F: FnMut(&Edital, &IndexedRegistry, NaiveDate, &RulesConfig) -> Result<Edital, ServiceError>,
{
    auth.require(roles::OFFICE_WRITERS)?;
    for _ in 0..MAX_ATTEMPTS {
        let row = load(svc, id).await?;
        let indexed = svc.indexed_registry().await?;
        let today = svc.clock().today();
        let rules = &indexed.registry().law().rules;
        let next = step(&row.edital, &indexed, today, rules)?;
        let now = svc.clock().now();
        let saved = svc
            .store()
            .save_edital(EditalSave {
                expected_version: Some(row.version),
                edital: next.clone(),
                action: action.to_owned(),
                subject: format!("edital:{id}"),
                actor: auth.actor(now),
                registry: None,
                read: None,
            })
            .await;
        match saved {
            Ok(saved) => {
                tracing::info!(
                    action,
                    edital = id,
                    version = saved.version,
                    "edital alterado"
                );
                let row = EditalRow {
                    id: id.to_owned(),
                    version: saved.version,
                    edital: next,
                    updated_at: now,
                };
                return Ok(view(row, today));
            }
            Err(StoreError::VersionConflict { .. }) => continue,
            Err(StoreError::NotFound { .. }) => return Err(not_found(id)),
            Err(e) => return Err(e.into()),
        }
    }
    Err(busy())
}

/// Whether `edital` still holds places against a new one on `today`: until its result, and
/// after it while its chosen candidates may still be granted (the choice not final yet, or final
/// less than `REGISTRATION_DAYS` ago). Decisão: once the art. 2 § único period has passed, a
/// place a chosen candidate did not take is free for the next edital.
fn holds_places(edital: &Edital, today: NaiveDate) -> bool {
    if edital.result.is_none() {
        return true;
    }
    match edital.final_on() {
        None => true,
        Some(final_on) => final_on
            .checked_add_days(chrono::Days::new(selection::REGISTRATION_DAYS))
            .is_none_or(|last| today <= last),
    }
}

/// Opens an edital (art. 4): refused within `MIN_NOTICE_DAYS` of notice, over a stand's free
/// places (less the places other editais still hold) or the art. 14 cap; `Conflict` for an id
/// in use. Audited as `edital.open`.
pub async fn open(svc: &Services, auth: &Auth, req: NewEdital) -> Result<EditalView, ServiceError> {
    auth.require(roles::OFFICE_WRITERS)?;
    let id = req.id.clone();
    for _ in 0..MAX_ATTEMPTS {
        let others = svc.store().list_editais().await?;
        if others.len() >= MAX_EDITAIS_LISTED {
            // The list read is truncated: the places other editais hold cannot be counted.
            return Err(ServiceError::conflict(
                "too_many_editais",
                format!(
                    "O sistema guarda no máximo {MAX_EDITAIS_LISTED} editais; não é possível abrir outro."
                ),
            ));
        }
        let reg = svc.registry().await?;
        let today = svc.clock().today();
        let rules = &reg.law().rules;
        let holding: Vec<&Edital> = others
            .iter()
            .map(|r| &r.edital)
            .filter(|e| e.id != id && holds_places(e, today))
            .collect();
        let edital = selection::open(&reg, req.clone(), &holding, today, rules)
            .map_err(ServiceError::Refused)?;
        let now = svc.clock().now();
        let saved = svc
            .store()
            .save_edital(EditalSave {
                expected_version: None,
                edital: edital.clone(),
                action: String::from("edital.open"),
                subject: format!("edital:{id}"),
                actor: auth.actor(now),
                registry: None,
                // The places were counted on this registry and these editais.
                read: Some(ReadSet {
                    registry_version: reg.version,
                    editais: others
                        .iter()
                        .filter(|r| r.id != id)
                        .map(|r| (r.id.clone(), r.version))
                        .collect(),
                }),
            })
            .await;
        match saved {
            Ok(saved) => {
                tracing::info!(edital = %id, "edital aberto");
                let row = EditalRow {
                    id: id.clone(),
                    version: saved.version,
                    edital,
                    updated_at: now,
                };
                return Ok(view(row, today));
            }
            Err(StoreError::Duplicate { .. }) => {
                return Err(ServiceError::conflict(
                    "edital_exists",
                    format!("Já existe um edital com o identificador {id}."),
                ));
            }
            Err(StoreError::VersionConflict { .. }) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(busy())
}

/// Registers a candidate during the application window (art. 2: judged only when the list is
/// published). Audited as `edital.candidate.register`.
pub async fn register(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: NewCandidate,
) -> Result<EditalView, ServiceError> {
    if req.licence.observations.len() > MAX_LICENCE_OBSERVATIONS {
        return Err(ServiceError::unprocessable(
            "too_many_observations",
            format!(
                "A CNH tem no máximo {MAX_LICENCE_OBSERVATIONS} observações; foram informadas {}.",
                req.licence.observations.len()
            ),
        ));
    }
    step(
        svc,
        auth,
        id,
        "edital.candidate.register",
        |e, _, today, _| selection::register(e, req.clone(), today).map_err(ServiceError::Refused),
    )
    .await
}

/// Publishes the list after the window: every candidate judged once on the reference date, and
/// the lottery's list with its SHA-256. Audited as `edital.list.publish`.
pub async fn publish_list(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<EditalView, ServiceError> {
    step(
        svc,
        auth,
        id,
        "edital.list.publish",
        |e, reg, today, rules| {
            selection::publish_list(e, &reg.index(), today, rules).map_err(ServiceError::Refused)
        },
    )
    .await
}

/// The draw, once, from the draw date on. Audited as `edital.draw`.
pub async fn draw(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: DrawRequest,
) -> Result<EditalView, ServiceError> {
    step(svc, auth, id, "edital.draw", |e, _, today, _| {
        selection::draw(e, &req.seed, today).map_err(ServiceError::Refused)
    })
    .await
}

/// Publishes the result, opening the art. 5 window. Audited as `edital.result.publish`.
pub async fn publish_result(
    svc: &Services,
    auth: &Auth,
    id: &str,
) -> Result<EditalView, ServiceError> {
    step(
        svc,
        auth,
        id,
        "edital.result.publish",
        |e, _, today, rules| {
            selection::publish_result(e, today, rules).map_err(ServiceError::Refused)
        },
    )
    .await
}

/// Records an appeal against the choice (art. 5); one filed after the window is recorded as
/// out of time. Audited as `edital.appeal.file`.
pub async fn file_appeal(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: NewAppeal,
) -> Result<EditalView, ServiceError> {
    step(svc, auth, id, "edital.appeal.file", |e, _, today, _| {
        selection::file_appeal(e, req.clone(), today).map_err(ServiceError::Refused)
    })
    .await
}

/// Records the decision of appeal `number`, dated today. Audited as `edital.appeal.decide`.
pub async fn decide_appeal(
    svc: &Services,
    auth: &Auth,
    id: &str,
    number: u32,
    req: AppealRuling,
) -> Result<EditalView, ServiceError> {
    step(svc, auth, id, "edital.appeal.decide", |e, _, today, _| {
        selection::decide_appeal(
            e,
            number,
            req.granted,
            &req.reasoning,
            req.excludes.clone(),
            today,
        )
        .map_err(ServiceError::Refused)
    })
    .await
}

// ---------------------------------------------------------------------------------------------
// The grant
// ---------------------------------------------------------------------------------------------

fn invalid(code: &'static str, message: impl Into<String>) -> ServiceError {
    ServiceError::unprocessable(code, message)
}

/// Warnings of successive operations, each once.
fn merge_warnings(into: &mut Vec<Finding>, more: Vec<Finding>) {
    for f in more {
        if !into.contains(&f) {
            into.push(f);
        }
    }
}

/// The registry write of `plan`, by the registry's own operations (each judged by the law
/// kernel), and the alvará it grants.
fn grant_edit(
    reg: &Registry,
    plan: &GrantPlan,
    req: &GrantRequest,
    ctx: &Ctx<'_>,
) -> Result<(Edited, String), ServiceError> {
    match plan.group {
        Group::Holder => {
            let Some(number) = plan.moves_permit.clone() else {
                return Err(ServiceError::internal(
                    &"plano de concessão do grupo I sem alvará",
                ));
            };
            if req.permit_number.as_ref().is_some_and(|n| *n != number) {
                return Err(invalid(
                    "permit_mismatch",
                    format!(
                        "A inscrição {} é de um permissionário (grupo I): o alvará {number} dele \
                         muda de ponto, sem alvará novo.",
                        plan.inscription
                    ),
                ));
            }
            if req.vehicle_id.is_some() {
                return Err(invalid(
                    "vehicle_not_used",
                    format!(
                        "A inscrição {} é de um permissionário (grupo I): o alvará {number} \
                         muda de ponto com o veículo que já tem.",
                        plan.inscription
                    ),
                ));
            }
            let edited = ops::move_permit(reg, &number, &plan.stand_id, ctx)?;
            Ok((edited, number))
        }
        Group::Auxiliary | Group::NewRegistrant => {
            let Some(number) = req.permit_number.clone() else {
                return Err(invalid(
                    "permit_number_required",
                    "Informe o número (prontuário) do novo alvará.",
                ));
            };
            let Some(vehicle_id) = req.vehicle_id.clone() else {
                return Err(invalid(
                    "vehicle_required",
                    "Informe o veículo do novo alvará, registrado em nome do candidato (art. 30, III).",
                ));
            };
            // The auxiliary registrations end first: the new holder drives his own alvará.
            let mut current = Edited::from(reg.clone());
            for on in &plan.ends_auxiliary_on {
                let removed = ops::remove_auxiliary(&current.registry, on, &plan.person_id, ctx)?;
                current.registry = removed.registry;
                merge_warnings(&mut current.warnings, removed.warnings);
            }
            let granted = ops::grant_permit(
                &current.registry,
                GrantPermit {
                    number: number.clone(),
                    holder_id: plan.person_id.clone(),
                    vehicle_id,
                    stand_id: plan.stand_id.clone(),
                    service: None,
                    issued_on: Some(ctx.today),
                    renewal_year: None,
                    edital_date: Some(plan.edital_date),
                },
                ctx,
            )?;
            current.registry = granted.registry;
            merge_warnings(&mut current.warnings, granted.warnings);
            Ok((current, number))
        }
    }
}

/// Grants the place of a chosen candidate (art. 6) — refused by the kernel within the art. 5
/// window, while a timely appeal waits, to a candidate not chosen or not registered (art. 30),
/// or no longer meeting art. 2 — writing the registry (see the module doc) and the edital in
/// one transaction. Audited as `edital.grant`, with the registry version's own row
/// (`registry.permit.grant`, or `registry.permit.stand` for a holder's alvará moved).
pub async fn grant(
    svc: &Services,
    auth: &Auth,
    id: &str,
    req: GrantRequest,
) -> Result<GrantOutcome, ServiceError> {
    auth.require(roles::OFFICE_WRITERS)?;
    for _ in 0..MAX_ATTEMPTS {
        let row = load(svc, id).await?;
        let indexed = svc.indexed_registry().await?;
        let reg = indexed.registry();
        let today = svc.clock().today();
        let rules = &reg.law().rules;
        let plan = selection::plan_grant(
            &row.edital,
            &indexed.index(),
            &req.inscription,
            today,
            rules,
        )
        .map_err(ServiceError::Refused)?;
        let ctx = Ctx { today, rules };
        let (edited, permit_number) = grant_edit(reg, &plan, &req, &ctx)?;
        registry::validate(&edited.registry).map_err(ServiceError::from)?;
        let (action, subject) = match plan.group {
            Group::Holder => ("registry.permit.stand", format!("permit:{permit_number}")),
            _ => ("registry.permit.grant", format!("permit:{permit_number}")),
        };
        let now = svc.clock().now();
        let actor = auth.actor(now);
        let Some(commit) = RegistryCommit::next(
            reg,
            edited.registry,
            action.to_owned(),
            subject,
            actor.clone(),
        ) else {
            return Err(ServiceError::internal(
                &"concessão sem alteração do cadastro",
            ));
        };
        let next = selection::record_grant(&row.edital, &plan, &permit_number, today);
        let saved = svc
            .store()
            .save_edital(EditalSave {
                expected_version: Some(row.version),
                edital: next.clone(),
                action: String::from("edital.grant"),
                subject: format!("edital:{id}"),
                actor,
                registry: Some(commit),
                read: None,
            })
            .await;
        match saved {
            Ok(saved) => {
                let Some(committed) = saved.registry else {
                    return Err(ServiceError::internal(&"versão do cadastro não gravada"));
                };
                tracing::info!(
                    edital = id,
                    permit = %permit_number,
                    registry_version = committed.version,
                    "alvará concedido pelo edital"
                );
                let row = EditalRow {
                    id: id.to_owned(),
                    version: saved.version,
                    edital: next,
                    updated_at: now,
                };
                return Ok(GrantOutcome {
                    permit_number,
                    group: plan.group,
                    stand_id: plan.stand_id.clone(),
                    registry_version: committed.version,
                    changes: committed.changes,
                    warnings: edited.warnings,
                    edital: view(row, today),
                });
            }
            Err(StoreError::VersionConflict { .. }) => continue,
            Err(StoreError::NotFound { .. }) => return Err(not_found(id)),
            Err(e) => return Err(e.into()),
        }
    }
    Err(busy())
}
