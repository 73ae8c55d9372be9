//! The registry over HTTP: reads for every authenticated role, changes for the office and
//! admin, the device feed (snapshot and changes) and the CSV import/export.
//!
//! Every change handler calls its function of [`write`] (which the office pages call too): the
//! role, then a pure operation of `registry::ops` handed to `registry::commit`, which runs it (the law kernel judges the whole registry after the write),
//! commits a new version with its change log and audit row, and answers [`RegistryUpdate`] with
//! the law's warnings; a legal refusal is 422 `refused_by_law` with every finding (rule id,
//! citation, Portuguese message).
//!
//! The feed: `GET /v1/registry/snapshot` is the whole `RegistrySnapshot` as JSON, compressed with
//! **zstd** (`Content-Encoding: zstd`) when the client's `Accept-Encoding` allows it — it
//! decompresses several times faster than gzip on a phone for a smaller file, and the device
//! client is ours (sync-core) — and plain JSON otherwise (curl without `--compressed`, browsers
//! without zstd). It carries `ETag` and `X-Registry-Version` and answers 304 to a matching
//! `If-None-Match`. `GET /v1/registry/changes?since=N` is the `RegistryChanges` from N to the
//! current version; when N is older than the log or more than `feed_max_span` versions behind,
//! or newer than the server's version, it is 410 `snapshot_required`.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header::{
    ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_ENCODING, CONTENT_TYPE, ETAG,
    IF_NONE_MATCH, VARY,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::domain::{
    Fine, Penalty, Permit, PermitState, Person, Registry, Stand, Transfer, Vehicle,
};
use sync_core::feed::RegistryChanges;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{CsvBody, JsonBody, QueryParams};
use super::openapi::{doc, named_schema};
use crate::auth::{Auth, roles};
use crate::error::{AppError, ErrorBody};
use crate::registry::ops::{
    self, AddAuxiliary, GrantPermit, NewFine, NewPenalty, PayFine, Renew, SetCoordinator, Swap,
    TransferPermit,
};
use crate::registry::{self, Ctx, EditError, Edited, RegistryUpdate};
use crate::server::{AppState, SnapshotCache};
use crate::store::ChangesSince;

named_schema!(
    RegistryUpdate => "RegistryUpdate",
    GrantPermit => "GrantPermit",
    AddAuxiliary => "AddAuxiliary",
    SetCoordinator => "SetCoordinator",
    NewPenalty => "NewPenalty",
    NewFine => "NewFine",
    PayFine => "PayFine",
    Renew => "Renew",
    TransferPermit => "TransferPermit",
    Swap => "Swap",
    RegistryStatus => "RegistryStatus",
    ImportReport => "ImportReport",
);

/// Version, counts and the art. 14 cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RegistryStatus {
    pub version: u64,
    pub generated_at: Option<DateTime<Utc>>,
    pub people: usize,
    pub vehicles: usize,
    pub stands: usize,
    pub permits: usize,
    /// Permits not revoked: the taxis counted by art. 14.
    pub live_permits: usize,
    pub penalties: usize,
    pub fines: usize,
    pub unpaid_fines: usize,
    pub transfers: usize,
    /// Art. 14: census population ÷ inhabitants per taxi, rounded down.
    pub taxi_cap: u32,
    pub inhabitants_per_taxi: u32,
    pub census_population: u32,
}

/// The answer to a CSV import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImportReport {
    /// Registry version after the import.
    pub version: u64,
    /// False when the file described the registry as it already was.
    pub changed: bool,
    /// Entity changes in the new version.
    pub changes: usize,
    pub permits: usize,
    pub people: usize,
    pub vehicles: usize,
    pub stands: usize,
}

/// `?since=N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct ChangesQuery {
    pub since: u64,
}

/// Runs an operation as the caller, today, under the registry's law parameters.
pub(crate) async fn edit<F, R>(
    state: &AppState,
    auth: &Auth,
    action: &str,
    subject: &str,
    op: F,
) -> Result<RegistryUpdate, AppError>
where
    F: Fn(&Registry, &Ctx<'_>) -> Result<R, EditError>,
    R: Into<Edited>,
{
    let today = state.clock().today();
    let actor = auth.actor(state.clock().now());
    // The law's parameters of the registry the operation runs on (re-run on a newer one).
    Ok(
        registry::commit(state.store().as_ref(), actor, action, subject, |reg| {
            op(
                reg,
                &Ctx {
                    today,
                    rules: &reg.law().rules,
                },
            )
        })
        .await?,
    )
}

fn created(update: RegistryUpdate) -> (StatusCode, Json<RegistryUpdate>) {
    let status = if update.changed {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (status, Json(update))
}

async fn current(state: &AppState) -> Result<Arc<Registry>, AppError> {
    Ok(state.store().registry().await?)
}

// ---------------------------------------------------------------------------------------------
// Feed
// ---------------------------------------------------------------------------------------------

/// Registry version, counts and the art. 14 cap.
#[utoipa::path(get, path = "/v1/registry/status", tag = "registry",
    responses((status = 200, description = "Situação do cadastro", body = RegistryStatus)))]
async fn status(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<RegistryStatus>, AppError> {
    auth.require(roles::ANY)?;
    let reg = current(&state).await?;
    let rules = &reg.law().rules;
    Ok(Json(RegistryStatus {
        version: reg.version,
        generated_at: reg.generated_at,
        people: reg.people.len(),
        vehicles: reg.vehicles.len(),
        stands: reg.stands.len(),
        permits: reg.permits.len(),
        live_permits: reg
            .permits
            .iter()
            .filter(|p| !matches!(p.state, PermitState::Revoked { .. }))
            .count(),
        penalties: reg.penalties.len(),
        fines: reg.fines.len(),
        unpaid_fines: reg.fines.iter().filter(|f| f.paid_on.is_none()).count(),
        transfers: reg.transfers.len(),
        taxi_cap: sync_core::rules::office::taxi_cap(rules),
        inhabitants_per_taxi: rules.inhabitants_per_taxi,
        census_population: rules.census_population,
    }))
}

fn accepts_zstd(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let name = parts.next().unwrap_or_default().trim();
            let q_zero = parts.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            name.eq_ignore_ascii_case("zstd") && !q_zero
        })
}

async fn snapshot_cache(state: &AppState) -> Result<Arc<SnapshotCache>, AppError> {
    let reg = current(state).await?;
    {
        let slot = state
            .snapshot_slot()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = slot.as_ref().filter(|c| c.version == reg.version) {
            return Ok(c.clone());
        }
    }
    let built = tokio::task::spawn_blocking(move || -> Result<SnapshotCache, String> {
        let json = serde_json::to_vec(&*reg).map_err(|e| e.to_string())?;
        let zstd = zstd::bulk::compress(&json, 10).map_err(|e| e.to_string())?;
        Ok(SnapshotCache {
            version: reg.version,
            json: json.into(),
            zstd: zstd.into(),
        })
    })
    .await
    .map_err(|e| AppError::internal(&e))?
    .map_err(|e| AppError::internal(&e))?;
    let built = Arc::new(built);
    let mut slot = state
        .snapshot_slot()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if slot.as_ref().is_none_or(|c| c.version <= built.version) {
        *slot = Some(built.clone());
    }
    Ok(built)
}

/// The whole registry for a new or lagging device (zstd when accepted).
#[utoipa::path(get, path = "/v1/registry/snapshot", tag = "registry",
    params(("Accept-Encoding" = Option<String>, Header, description = "Com `zstd`, o corpo vem comprimido (Content-Encoding: zstd)"),
           ("If-None-Match" = Option<String>, Header, description = "ETag de um snapshot já baixado")),
    responses(
        (status = 200, description = "O cadastro inteiro (RegistrySnapshot)", body = doc::RegistrySnapshot),
        (status = 304, description = "O cadastro não mudou desde o ETag informado"),
    ))]
async fn snapshot(
    State(state): State<AppState>,
    auth: Auth,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    auth.require(roles::ANY)?;
    let snap = snapshot_cache(&state).await?;
    let etag = format!("\"registry-{}\"", snap.version);
    let not_modified = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let zstd = accepts_zstd(&headers);
    let mut res = if not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else if zstd {
        Body::from(snap.zstd.clone()).into_response()
    } else {
        Body::from(snap.json.clone()).into_response()
    };
    let h = res.headers_mut();
    if !not_modified {
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if zstd {
            h.insert(CONTENT_ENCODING, HeaderValue::from_static("zstd"));
        }
    }
    h.insert(VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(CACHE_CONTROL, HeaderValue::from_static("private, no-cache"));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(ETAG, v);
    }
    if let Ok(v) = HeaderValue::from_str(&snap.version.to_string()) {
        h.insert("x-registry-version", v);
    }
    Ok(res)
}

/// What changed since version N.
#[utoipa::path(get, path = "/v1/registry/changes", tag = "registry",
    params(("since" = u64, Query, description = "A versão que o dispositivo tem")),
    responses(
        (status = 200, description = "As alterações de `since` até a versão atual", body = doc::RegistryChanges),
        (status = 410, description = "Versão antiga ou desconhecida: baixe o snapshot", body = ErrorBody),
    ))]
async fn changes(
    State(state): State<AppState>,
    auth: Auth,
    QueryParams(q): QueryParams<ChangesQuery>,
) -> Result<Json<RegistryChanges>, AppError> {
    auth.require(roles::ANY)?;
    let max_span = state.config().feed_max_span;
    let gone = |reason: &str, since: u64, current: u64, message: String| {
        AppError::gone("snapshot_required", message).with_details(serde_json::json!({
            "reason": reason,
            "since": since,
            "current_version": current,
            "snapshot": "/v1/registry/snapshot",
        }))
    };
    match state.store().registry_changes(q.since, max_span).await? {
        ChangesSince::Changes(c) => Ok(Json(c)),
        ChangesSince::TooOld { since, current } => Err(gone(
            "too_old",
            since,
            current,
            format!(
                "A versão {since} do cadastro é antiga demais para alterações (atual: {current}); \
                 baixe o cadastro completo em /v1/registry/snapshot."
            ),
        )),
        ChangesSince::Unknown { since, current } => Err(gone(
            "unknown_version",
            since,
            current,
            format!(
                "A versão {since} não foi publicada por este servidor (atual: {current}); baixe o \
                 cadastro completo em /v1/registry/snapshot."
            ),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// CSV
// ---------------------------------------------------------------------------------------------

/// Replace the registry with a CSV file (one row per permit; all or nothing).
#[utoipa::path(post, path = "/v1/registry/import", tag = "registry",
    request_body(content = String, content_type = "text/csv", description = "Layout em docs/registry-csv.md"),
    responses(
        (status = 200, description = "Importado (ou já era assim)", body = ImportReport),
        (status = 422, description = "Linhas inválidas, cada uma com sua linha e motivo; nada foi importado", body = ErrorBody),
    ))]
async fn import(
    State(state): State<AppState>,
    auth: Auth,
    CsvBody(data): CsvBody,
) -> Result<Json<ImportReport>, AppError> {
    let update = write::import(&state, &auth, &data).await?;
    let reg = current(&state).await?;
    Ok(Json(ImportReport {
        version: update.version,
        changed: update.changed,
        changes: update.changes.len(),
        permits: reg.permits.len(),
        people: reg.people.len(),
        vehicles: reg.vehicles.len(),
        stands: reg.stands.len(),
    }))
}

/// The registry as CSV (the import layout).
#[utoipa::path(get, path = "/v1/registry/export", tag = "registry",
    responses((status = 200, description = "CSV, uma linha por alvará", content_type = "text/csv")))]
async fn export(State(state): State<AppState>, auth: Auth) -> Result<Response, AppError> {
    auth.require(roles::REGISTRY_WRITERS)?;
    let reg = current(&state).await?;
    let bytes = registry::csv::export(&reg)?;
    let mut res = Body::from(bytes).into_response();
    let h = res.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!(
        "attachment; filename=\"cadastro-v{}.csv\"",
        reg.version
    )) {
        h.insert(CONTENT_DISPOSITION, v);
    }
    Ok(res)
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

/// All people (holders, auxiliaries, coordinators).
#[utoipa::path(get, path = "/v1/people", tag = "registry",
    responses((status = 200, description = "Pessoas", body = Vec<doc::Person>)))]
async fn list_people(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Person>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.people.clone()))
}

/// One person.
#[utoipa::path(get, path = "/v1/people/{id}", tag = "registry",
    params(("id" = String, Path, description = "Pessoa")),
    responses((status = 200, description = "A pessoa", body = doc::Person), (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn get_person(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Person>, AppError> {
    auth.require(roles::ANY)?;
    let registry = current(&state).await?;
    one_of(
        &registry.people,
        |p| p.id == id,
        || format!("A pessoa {id} não consta do cadastro."),
    )
}

/// All vehicles.
#[utoipa::path(get, path = "/v1/vehicles", tag = "registry",
    responses((status = 200, description = "Veículos", body = Vec<doc::Vehicle>)))]
async fn list_vehicles(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Vehicle>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.vehicles.clone()))
}

/// One vehicle.
#[utoipa::path(get, path = "/v1/vehicles/{id}", tag = "registry",
    params(("id" = String, Path, description = "Veículo")),
    responses((status = 200, description = "O veículo", body = doc::Vehicle), (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn get_vehicle(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vehicle>, AppError> {
    auth.require(roles::ANY)?;
    let registry = current(&state).await?;
    one_of(
        &registry.vehicles,
        |v| v.id == id,
        || format!("O veículo {id} não consta do cadastro."),
    )
}

/// All stands.
#[utoipa::path(get, path = "/v1/stands", tag = "registry",
    responses((status = 200, description = "Pontos", body = Vec<doc::Stand>)))]
async fn list_stands(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Stand>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.stands.clone()))
}

/// One stand.
#[utoipa::path(get, path = "/v1/stands/{id}", tag = "registry",
    params(("id" = String, Path, description = "Ponto")),
    responses((status = 200, description = "O ponto", body = doc::Stand), (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn get_stand(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Stand>, AppError> {
    auth.require(roles::ANY)?;
    let registry = current(&state).await?;
    one_of(
        &registry.stands,
        |s| s.id == id,
        || format!("O ponto {id} não consta do cadastro."),
    )
}

/// All permits.
#[utoipa::path(get, path = "/v1/permits", tag = "registry",
    responses((status = 200, description = "Alvarás", body = Vec<doc::Permit>)))]
async fn list_permits(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Permit>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.permits.clone()))
}

/// One permit.
#[utoipa::path(get, path = "/v1/permits/{number}", tag = "registry",
    params(("number" = String, Path, description = "Prontuário")),
    responses((status = 200, description = "O alvará", body = doc::Permit), (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn get_permit(
    State(state): State<AppState>,
    auth: Auth,
    Path(number): Path<String>,
) -> Result<Json<Permit>, AppError> {
    auth.require(roles::ANY)?;
    let registry = current(&state).await?;
    one_of(
        &registry.permits,
        |p| p.number == number,
        || format!("O alvará {number} não consta do cadastro."),
    )
}

/// All decided penalties.
#[utoipa::path(get, path = "/v1/penalties", tag = "registry",
    responses((status = 200, description = "Penalidades", body = Vec<doc::Penalty>)))]
async fn list_penalties(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Penalty>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.penalties.clone()))
}

/// All fines.
#[utoipa::path(get, path = "/v1/fines", tag = "registry",
    responses((status = 200, description = "Multas", body = Vec<doc::Fine>)))]
async fn list_fines(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Fine>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.fines.clone()))
}

/// All transfers.
#[utoipa::path(get, path = "/v1/transfers", tag = "registry",
    responses((status = 200, description = "Transferências", body = Vec<doc::Transfer>)))]
async fn list_transfers(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<Transfer>>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(current(&state).await?.transfers.clone()))
}

// ---------------------------------------------------------------------------------------------
// Changes
// ---------------------------------------------------------------------------------------------

/// Add a person.
#[utoipa::path(post, path = "/v1/people", tag = "registry", request_body = doc::Person,
    responses((status = 201, description = "Incluída", body = RegistryUpdate),
              (status = 409, description = "Id ou CPF em uso", body = ErrorBody),
              (status = 422, description = "CPF inválido", body = ErrorBody)))]
async fn create_person(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(person): JsonBody<Person>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(write::create_person(&state, &auth, person).await?))
}

/// Replace a person's data.
#[utoipa::path(put, path = "/v1/people/{id}", tag = "registry", request_body = doc::Person,
    params(("id" = String, Path, description = "Pessoa")),
    responses((status = 200, description = "Alterada", body = RegistryUpdate), (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn update_person(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(person): JsonBody<Person>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(
        write::update_person(&state, &auth, &id, person).await?,
    ))
}

/// Add a vehicle.
#[utoipa::path(post, path = "/v1/vehicles", tag = "registry", request_body = doc::Vehicle,
    responses((status = 201, description = "Incluído", body = RegistryUpdate), (status = 409, description = "Id ou placa em uso", body = ErrorBody)))]
async fn create_vehicle(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(vehicle): JsonBody<Vehicle>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(
        write::create_vehicle(&state, &auth, vehicle).await?,
    ))
}

/// Replace a vehicle's data.
#[utoipa::path(put, path = "/v1/vehicles/{id}", tag = "registry", request_body = doc::Vehicle,
    params(("id" = String, Path, description = "Veículo")),
    responses((status = 200, description = "Alterado", body = RegistryUpdate), (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn update_vehicle(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(vehicle): JsonBody<Vehicle>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(
        write::update_vehicle(&state, &auth, &id, vehicle).await?,
    ))
}

/// Create a stand (its vacancies count against the art. 14 cap).
#[utoipa::path(post, path = "/v1/stands", tag = "registry", request_body = doc::Stand,
    responses((status = 201, description = "Criado", body = RegistryUpdate),
              (status = 422, description = "Recusado pelo art. 14 (R23)", body = ErrorBody)))]
async fn create_stand(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(stand): JsonBody<Stand>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(write::create_stand(&state, &auth, stand).await?))
}

/// Replace a stand (added vacancies count against the art. 14 cap).
#[utoipa::path(put, path = "/v1/stands/{id}", tag = "registry", request_body = doc::Stand,
    params(("id" = String, Path, description = "Ponto")),
    responses((status = 200, description = "Alterado", body = RegistryUpdate),
              (status = 422, description = "Recusado (art. 14, art. 28)", body = ErrorBody)))]
async fn update_stand(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(stand): JsonBody<Stand>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(write::update_stand(&state, &auth, &id, stand).await?))
}

/// Set or clear a stand's coordinator (art. 17).
#[utoipa::path(put, path = "/v1/stands/{id}/coordinator", tag = "registry", request_body = SetCoordinator,
    params(("id" = String, Path, description = "Ponto")),
    responses((status = 200, description = "Alterado", body = RegistryUpdate)))]
async fn set_coordinator(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<SetCoordinator>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(write::set_coordinator(&state, &auth, &id, req).await?))
}

/// Grant a permit (art. 9, art. 10 §2, art. 2, art. 7, art. 14 and what a field check of the
/// new permit would find).
#[utoipa::path(post, path = "/v1/permits", tag = "registry", request_body = GrantPermit,
    responses((status = 201, description = "Concedido", body = RegistryUpdate),
              (status = 422, description = "Recusado pela lei: cada motivo com regra e artigo", body = ErrorBody)))]
async fn grant_permit(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<GrantPermit>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(write::grant_permit(&state, &auth, req).await?))
}

/// Set a permit's state (suspend, revoke, succession, reinstate).
#[utoipa::path(put, path = "/v1/permits/{number}/state", tag = "registry", request_body = doc::PermitState,
    params(("number" = String, Path, description = "Prontuário")),
    responses((status = 200, description = "Alterado", body = RegistryUpdate)))]
async fn set_permit_state(
    State(state): State<AppState>,
    auth: Auth,
    Path(number): Path<String>,
    JsonBody(new_state): JsonBody<PermitState>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(
        write::set_permit_state(&state, &auth, &number, new_state).await?,
    ))
}

/// Register an auxiliary driver (art. 8: at most two).
#[utoipa::path(post, path = "/v1/permits/{number}/auxiliaries", tag = "registry", request_body = AddAuxiliary,
    params(("number" = String, Path, description = "Prontuário")),
    responses((status = 201, description = "Inscrito", body = RegistryUpdate),
              (status = 422, description = "Recusado: terceiro auxiliar (R13), auxiliar de outro alvará (R14), art. 2º", body = ErrorBody)))]
async fn add_auxiliary(
    State(state): State<AppState>,
    auth: Auth,
    Path(number): Path<String>,
    JsonBody(req): JsonBody<AddAuxiliary>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(
        write::add_auxiliary(&state, &auth, &number, req).await?,
    ))
}

/// Remove an auxiliary driver.
#[utoipa::path(delete, path = "/v1/permits/{number}/auxiliaries/{person_id}", tag = "registry",
    params(("number" = String, Path, description = "Prontuário"), ("person_id" = String, Path, description = "Motorista auxiliar")),
    responses((status = 200, description = "Removido", body = RegistryUpdate), (status = 404, description = "Não é auxiliar deste alvará", body = ErrorBody)))]
async fn remove_auxiliary(
    State(state): State<AppState>,
    auth: Auth,
    Path((number, person_id)): Path<(String, String)>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(
        write::remove_auxiliary(&state, &auth, &number, &person_id).await?,
    ))
}

/// Renew a permit for the next year due (art. 7: not after its 31 January deadline, no year
/// skipped; an unpaid fine blocks it, art. 17 §2 III).
#[utoipa::path(post, path = "/v1/permits/{number}/renewal", tag = "registry", request_body = Renew,
    params(("number" = String, Path, description = "Prontuário")),
    responses((status = 200, description = "Renovado", body = RegistryUpdate),
              (status = 422, description = "Recusado: prazo de renovação vencido ou ano fora de ordem (R11), multa não paga (R27), taxímetro (R02), CNH (art. 2º)", body = ErrorBody)))]
async fn renew(
    State(state): State<AppState>,
    auth: Auth,
    Path(number): Path<String>,
    JsonBody(req): JsonBody<Renew>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(write::renew(&state, &auth, &number, req).await?))
}

/// Transfer a permit (art. 10), with the new holder's vehicle (art. 30 III); a transfer by death
/// closes the succession.
#[utoipa::path(post, path = "/v1/permits/{number}/transfer", tag = "registry", request_body = TransferPermit,
    params(("number" = String, Path, description = "Prontuário")),
    responses((status = 200, description = "Transferido", body = RegistryUpdate),
              (status = 422, description = "Recusado (art. 10, art. 9, art. 17; veículo não registrado em nome do novo titular, art. 30, III)", body = ErrorBody)))]
async fn transfer(
    State(state): State<AppState>,
    auth: Auth,
    Path(number): Path<String>,
    JsonBody(req): JsonBody<TransferPermit>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(write::transfer(&state, &auth, &number, req).await?))
}

/// Swap the stands of two permits (art. 11).
#[utoipa::path(post, path = "/v1/swaps", tag = "registry", request_body = Swap,
    responses((status = 200, description = "Permutados", body = RegistryUpdate),
              (status = 422, description = "Recusado (art. 11, art. 28)", body = ErrorBody)))]
async fn swap(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<Swap>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(write::swap(&state, &auth, req).await?))
}

/// The registry's writes, one function each, which the API handlers and the office pages
/// (`web::people`, `web::vehicles`, `web::stands`, `web::registry`, `web::fines`) both call: the role, the
/// audit action and subject, and the operation the law judges are written once, so a change
/// made on a page and one made through the API cannot differ in any of them.
pub(crate) mod write {
    use super::*;

    /// The one shape of every write: the role, then the operation as `auth`.
    async fn run<F, R>(
        state: &AppState,
        auth: &Auth,
        action: &str,
        subject: &str,
        op: F,
    ) -> Result<RegistryUpdate, AppError>
    where
        F: Fn(&Registry, &Ctx<'_>) -> Result<R, EditError>,
        R: Into<Edited>,
    {
        auth.require(roles::REGISTRY_WRITERS)?;
        edit(state, auth, action, subject, op).await
    }

    pub(crate) async fn create_person(
        state: &AppState,
        auth: &Auth,
        person: Person,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("person:{}", person.id);
        run(
            state,
            auth,
            "registry.person.create",
            &subject,
            |reg, ctx| ops::create_person(reg, person.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn update_person(
        state: &AppState,
        auth: &Auth,
        id: &str,
        person: Person,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("person:{id}");
        run(
            state,
            auth,
            "registry.person.update",
            &subject,
            |reg, ctx| ops::update_person(reg, id, person.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn create_vehicle(
        state: &AppState,
        auth: &Auth,
        vehicle: Vehicle,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("vehicle:{}", vehicle.id);
        run(
            state,
            auth,
            "registry.vehicle.create",
            &subject,
            |reg, ctx| ops::create_vehicle(reg, vehicle.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn update_vehicle(
        state: &AppState,
        auth: &Auth,
        id: &str,
        vehicle: Vehicle,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("vehicle:{id}");
        run(
            state,
            auth,
            "registry.vehicle.update",
            &subject,
            |reg, ctx| ops::update_vehicle(reg, id, vehicle.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn create_stand(
        state: &AppState,
        auth: &Auth,
        stand: Stand,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("stand:{}", stand.id);
        run(
            state,
            auth,
            "registry.stand.create",
            &subject,
            |reg, ctx| ops::create_stand(reg, stand.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn update_stand(
        state: &AppState,
        auth: &Auth,
        id: &str,
        stand: Stand,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("stand:{id}");
        run(
            state,
            auth,
            "registry.stand.update",
            &subject,
            |reg, ctx| ops::update_stand(reg, id, stand.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn set_coordinator(
        state: &AppState,
        auth: &Auth,
        id: &str,
        req: SetCoordinator,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("stand:{id}");
        run(
            state,
            auth,
            "registry.stand.coordinator",
            &subject,
            |reg, ctx| ops::set_coordinator(reg, id, req.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn grant_permit(
        state: &AppState,
        auth: &Auth,
        req: GrantPermit,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{}", req.number);
        run(
            state,
            auth,
            "registry.permit.grant",
            &subject,
            |reg, ctx| ops::grant_permit(reg, req.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn set_permit_state(
        state: &AppState,
        auth: &Auth,
        number: &str,
        new_state: PermitState,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{number}");
        run(
            state,
            auth,
            "registry.permit.state",
            &subject,
            |reg, ctx| ops::set_permit_state(reg, number, new_state.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn add_auxiliary(
        state: &AppState,
        auth: &Auth,
        number: &str,
        req: AddAuxiliary,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{number}");
        run(
            state,
            auth,
            "registry.permit.auxiliary.add",
            &subject,
            |reg, ctx| ops::add_auxiliary(reg, number, req.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn remove_auxiliary(
        state: &AppState,
        auth: &Auth,
        number: &str,
        person_id: &str,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{number}");
        run(
            state,
            auth,
            "registry.permit.auxiliary.remove",
            &subject,
            |reg, ctx| ops::remove_auxiliary(reg, number, person_id, ctx),
        )
        .await
    }

    pub(crate) async fn renew(
        state: &AppState,
        auth: &Auth,
        number: &str,
        req: Renew,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{number}");
        run(
            state,
            auth,
            "registry.permit.renew",
            &subject,
            |reg, ctx| ops::renew(reg, number, req.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn transfer(
        state: &AppState,
        auth: &Auth,
        number: &str,
        req: TransferPermit,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{number}");
        run(
            state,
            auth,
            "registry.permit.transfer",
            &subject,
            |reg, ctx| ops::transfer(reg, number, req.clone(), ctx),
        )
        .await
    }

    /// Replaces the registry with a CSV file (all or nothing).
    pub(crate) async fn import(
        state: &AppState,
        auth: &Auth,
        data: &[u8],
    ) -> Result<RegistryUpdate, AppError> {
        run(state, auth, "registry.import", "registry", |reg, ctx| {
            registry::csv::import(reg, data, ctx)
        })
        .await
    }

    pub(crate) async fn add_penalty(
        state: &AppState,
        auth: &Auth,
        req: NewPenalty,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{}", req.permit_number);
        run(
            state,
            auth,
            "registry.penalty.create",
            &subject,
            |reg, ctx| ops::add_penalty(reg, req.clone(), ctx),
        )
        .await
    }

    pub(crate) async fn add_fine(
        state: &AppState,
        auth: &Auth,
        req: NewFine,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permit:{}", req.permit_number);
        run(state, auth, "registry.fine.create", &subject, |reg, ctx| {
            ops::add_fine(reg, req.clone(), ctx)
        })
        .await
    }

    pub(crate) async fn pay_fine(
        state: &AppState,
        auth: &Auth,
        id: &str,
        req: PayFine,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("fine:{id}");
        run(state, auth, "registry.fine.pay", &subject, |reg, ctx| {
            ops::pay_fine(reg, id, req.clone(), ctx)
        })
        .await
    }

    pub(crate) async fn swap(
        state: &AppState,
        auth: &Auth,
        req: Swap,
    ) -> Result<RegistryUpdate, AppError> {
        let subject = format!("permits:{}+{}", req.permit_a, req.permit_b);
        run(state, auth, "registry.permit.swap", &subject, |reg, ctx| {
            ops::swap(reg, req.clone(), ctx)
        })
        .await
    }
}

/// Record a decided penalty (art. 32).
#[utoipa::path(post, path = "/v1/penalties", tag = "registry", request_body = NewPenalty,
    responses((status = 201, description = "Registrada", body = RegistryUpdate)))]
async fn add_penalty(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<NewPenalty>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(write::add_penalty(&state, &auth, req).await?))
}

/// Add a fine.
#[utoipa::path(post, path = "/v1/fines", tag = "registry", request_body = NewFine,
    responses((status = 201, description = "Registrada", body = RegistryUpdate)))]
async fn add_fine(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<NewFine>,
) -> Result<(StatusCode, Json<RegistryUpdate>), AppError> {
    Ok(created(write::add_fine(&state, &auth, req).await?))
}

/// Register the payment of a fine.
#[utoipa::path(post, path = "/v1/fines/{id}/payment", tag = "registry", request_body = PayFine,
    params(("id" = String, Path, description = "Multa")),
    responses((status = 200, description = "Paga", body = RegistryUpdate), (status = 409, description = "Já paga", body = ErrorBody)))]
async fn pay_fine(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<PayFine>,
) -> Result<Json<RegistryUpdate>, AppError> {
    Ok(Json(record_payment(&state, &auth, &id, req).await?))
}

/// Registers the payment of fine `id` as `auth`: the one path of `POST /v1/fines/{id}/payment`
/// and of the office's fines page (same role, audit action and law judgement).
pub(crate) use write::pay_fine as record_payment;

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(status))
        .routes(routes!(snapshot))
        .routes(routes!(changes))
        .routes(routes!(import))
        .routes(routes!(export))
        .routes(routes!(list_people, create_person))
        .routes(routes!(get_person, update_person))
        .routes(routes!(list_vehicles, create_vehicle))
        .routes(routes!(get_vehicle, update_vehicle))
        .routes(routes!(list_stands, create_stand))
        .routes(routes!(get_stand, update_stand))
        .routes(routes!(set_coordinator))
        .routes(routes!(list_permits, grant_permit))
        .routes(routes!(get_permit))
        .routes(routes!(set_permit_state))
        .routes(routes!(add_auxiliary))
        .routes(routes!(remove_auxiliary))
        .routes(routes!(renew))
        .routes(routes!(transfer))
        .routes(routes!(swap))
        .routes(routes!(list_penalties, add_penalty))
        .routes(routes!(list_fines, add_fine))
        .routes(routes!(pay_fine))
        .routes(routes!(list_transfers))
}

/// The entity of a registry list that `matches`, or a 404 with `missing()` as its message.
fn one_of<T: Clone>(
    items: &[T],
    matches: impl Fn(&T) -> bool,
    missing: impl FnOnce() -> String,
) -> Result<Json<T>, AppError> {
    items
        .iter()
        .find(|item| matches(item))
        .cloned()
        .map(Json)
        .ok_or_else(|| AppError::not_found(missing()))
}
