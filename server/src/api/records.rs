//! The office's records API: `GET /v1/records` (list and filter the projection),
//! `GET /v1/records/{id}` (one record with its events), `/conflicts`, `/audit`, `/quarantine`,
//! and `POST /v1/records/{id}/events` (the office appends a review, a penalty, a ciência, a
//! conflict resolution… from its desk).
//!
//! Reading is for the office and admins. The list reads only the projection written with each
//! accepted change (indexed columns); one record is read from its Automerge document, so the
//! events, the flagged ones and the conflicts are always the merged truth. An office event runs
//! through the same path as a device's change (`ServerSync::edit`: vetting, projection, audit
//! row, one transaction); devices receive it on their next sync.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sync_core::records::{EventKind, FieldConflict, RecordView};
use sync_core::sync::RejectionCode;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{JsonBody, QueryParams};
use super::openapi::named_schema;
use super::sync::caller_of;
use crate::audit::AuditRow;
use crate::auth::{Auth, Role};
use crate::error::{AppError, ErrorBody};
use crate::office::filter::{RecordsQuery, filter_of};
use crate::server::AppState;
use crate::store::records::{
    EventJob, EventOutcome, QuarantineRow, RecordDoc, RecordPage, RecordRow, view_of,
};

/// Who reads records ([`crate::auth::roles::OFFICE_READERS`]).
pub const RECORD_READERS: &[Role] = crate::auth::roles::OFFICE_READERS;
/// Who appends office events ([`crate::auth::roles::OFFICE_WRITERS`]).
pub const RECORD_DECIDERS: &[Role] = crate::auth::roles::OFFICE_WRITERS;

/// One record for the office.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordDetail {
    /// The projection row.
    pub row: RecordRow,
    /// Heads of the document (hex).
    pub heads: Vec<String>,
    /// The merged record: fields, derived status, every event (flagged ones too), conflicts.
    pub record: RecordView,
    /// The server's countersigned receipt of the device seal, once the record was issued with
    /// one; check `server_signature` with `server_public_key` (also at `GET /v1/server-key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<crate::receipts::Receipt>,
}

/// `POST /v1/records/{id}/events`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewEventRequest {
    /// The event (schema `record-event`); `issued` is the author's, not the office's.
    pub event: EventKind,
    /// When it happened; defaults to now. Must not precede events already recorded in a way
    /// that would invalidate them.
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
}

/// Stand-ins naming schemars schemas of types utoipa cannot see (see `openapi::doc`).
#[derive(Debug)]
pub struct FieldConflictDoc;
/// `crate::audit::AuditRow`.
#[derive(Debug)]
pub struct AuditRowDoc;

named_schema!(
    FieldConflictDoc => "FieldConflict",
    AuditRowDoc => "AuditRow",
    RecordDetail => "RecordDetail",
    NewEventRequest => "NewEventRequest",
);

async fn load(state: &AppState, id: &str) -> Result<RecordDoc, AppError> {
    state
        .store()
        .record(id.to_owned())
        .await?
        .ok_or_else(|| AppError::not_found("Registro não encontrado."))
}

async fn detail(state: &AppState, doc: RecordDoc) -> Result<RecordDetail, AppError> {
    let record = view_of(&doc).map_err(|e| AppError::internal(&e))?;
    let receipt = state.store().receipt_of(doc.row.id.clone()).await?;
    Ok(RecordDetail {
        row: doc.row,
        heads: doc.heads,
        record,
        receipt,
    })
}

/// List records, newest first.
#[utoipa::path(
    get,
    path = "/v1/records",
    tag = "records",
    summary = "Lista os registros de campo, do mais recente ao mais antigo, com filtros",
    params(
        ("status" = Option<String>, Query, description = "Situação derivada, ex.: issued, under_review"),
        ("kind" = Option<String>, Query, description = "infraction ou transgression"),
        ("stand" = Option<String>, Query, description = "Ponto"),
        ("officer" = Option<String>, Query, description = "Usuário autor"),
        ("plate" = Option<String>, Query, description = "Placa em qualquer grafia (ABC-1234, ABC1C34)"),
        ("from" = Option<String>, Query, description = "Desde (AAAA-MM-DD local ou RFC 3339)"),
        ("to" = Option<String>, Query, description = "Até (AAAA-MM-DD local, inclusive, ou RFC 3339, exclusivo)"),
        ("rule" = Option<String>, Query, description = "Regra do catálogo (ex.: R24) em que o registro está classificado"),
        ("limit" = Option<u32>, Query, description = "Itens por página (1–500, padrão 50)"),
        ("offset" = Option<u32>, Query, description = "Deslocamento"),
    ),
    responses((status = 200, description = "Uma página e o total", body = super::openapi::doc::RecordPage))
)]
async fn list_records(
    State(state): State<AppState>,
    auth: Auth,
    QueryParams(q): QueryParams<RecordsQuery>,
) -> Result<Json<RecordPage>, AppError> {
    auth.require(RECORD_READERS)?;
    let filter = filter_of(q)?;
    Ok(Json(state.store().list_records(filter).await?))
}

/// One record with its events, flagged events and conflicts.
#[utoipa::path(
    get,
    path = "/v1/records/{id}",
    tag = "records",
    summary = "Um registro: campos, situação, eventos (inclusive os recusados) e conflitos",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "O registro", body = RecordDetail),
        (status = 404, description = "Inexistente", body = ErrorBody),
    )
)]
async fn get_record(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<RecordDetail>, AppError> {
    auth.require(RECORD_READERS)?;
    Ok(Json(detail(&state, load(&state, &id).await?).await?))
}

/// Fields holding concurrent values.
#[utoipa::path(
    get,
    path = "/v1/records/{id}/conflicts",
    tag = "records",
    summary = "Valores concorrentes de campos do registro, lado a lado",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "Os conflitos (vazio se não há)", body = Vec<FieldConflictDoc>),
        (status = 404, description = "Inexistente", body = ErrorBody),
    )
)]
async fn get_conflicts(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<FieldConflict>>, AppError> {
    auth.require(RECORD_READERS)?;
    let doc = load(&state, &id).await?;
    let view = view_of(&doc).map_err(|e| AppError::internal(&e))?;
    Ok(Json(view.conflicts))
}

/// The audit rows of a record.
#[utoipa::path(
    get,
    path = "/v1/records/{id}/audit",
    tag = "records",
    summary = "Linhas da trilha de auditoria do registro",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "As linhas, da mais antiga à mais recente", body = Vec<AuditRowDoc>),
        (status = 404, description = "Inexistente", body = ErrorBody),
    )
)]
async fn get_audit(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<AuditRow>>, AppError> {
    auth.require(RECORD_READERS)?;
    load(&state, &id).await?;
    Ok(Json(state.store().record_audit(id).await?))
}

/// Changes the server refused for a record.
#[utoipa::path(
    get,
    path = "/v1/records/{id}/quarantine",
    tag = "records",
    summary = "Alterações recusadas do registro, guardadas como prova",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses((status = 200, description = "As recusas, da mais antiga à mais recente", body = Vec<super::openapi::doc::QuarantineRow>))
)]
async fn get_quarantine(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<QuarantineRow>>, AppError> {
    auth.require(RECORD_READERS)?;
    // A refused creation has no record: its quarantine is still readable by id.
    Ok(Json(state.store().record_quarantine(id).await?))
}

/// The office appends an event.
#[utoipa::path(
    post,
    path = "/v1/records/{id}/events",
    tag = "records",
    summary = "A Unidade acrescenta um evento (análise, penalidade, ciência, resolução de conflito…)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = NewEventRequest, content_type = "application/json"),
    responses(
        (status = 201, description = "Acrescentado; o registro como ficou", body = RecordDetail),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (papel, ordem dos eventos, campo lacrado…); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_event(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<NewEventRequest>,
) -> Result<(StatusCode, Json<RecordDetail>), AppError> {
    auth.require(RECORD_DECIDERS)?;
    // A ciência names the notification signed or received, whichever route records it.
    let event = match body.event {
        EventKind::Notified {
            method,
            on,
            appeal_deadline,
            notification,
        } => {
            let (_, view) = crate::office::load_view(state.services(), &id).await?;
            let notification = crate::office::notices::check_ciencia(
                state.services(),
                &view,
                method,
                notification.as_deref(),
            )
            .await?;
            EventKind::Notified {
                method,
                on,
                appeal_deadline,
                notification,
            }
        }
        other => other,
    };
    let registry = state.services().indexed_registry().await?;
    let now = state.clock().now();
    let job = EventJob {
        caller: caller_of(&auth),
        record_id: id,
        event,
        at: body.at.unwrap_or(now),
        registry,
        now,
    };
    match state.store().record_event(job).await? {
        EventOutcome::Applied(doc) => Ok((StatusCode::CREATED, Json(detail(&state, *doc).await?))),
        EventOutcome::NotFound => Err(AppError::not_found("Registro não encontrado.")),
        EventOutcome::Refused { code, message } => Err(AppError::unprocessable(
            refusal_code(code),
            sync_core::records::refusal_sentence(&message),
        )
        .with_details(serde_json::json!({ "rejection": code }))),
    }
}

fn refusal_code(code: RejectionCode) -> &'static str {
    match code {
        RejectionCode::InvalidEvent => "event_refused",
        RejectionCode::SealedField => "sealed_field",
        RejectionCode::RoleForbidden | RejectionCode::NotVisible => "role_forbidden",
        RejectionCode::AuthorMismatch => "author_mismatch",
        RejectionCode::OutsideStand => "outside_stand",
        RejectionCode::ForeignActor => "foreign_actor",
        RejectionCode::Malformed => "invalid_event",
        RejectionCode::TooLarge => "too_large",
        RejectionCode::InvalidField => "invalid_field",
        RejectionCode::NumberNotLeased => "number_not_leased",
        RejectionCode::NumberTaken => "number_taken",
        RejectionCode::SealInvalid => "seal_invalid",
    }
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_records))
        .routes(routes!(get_record))
        .routes(routes!(get_conflicts))
        .routes(routes!(get_audit))
        .routes(routes!(get_quarantine))
        .routes(routes!(post_event))
}
