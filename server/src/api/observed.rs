//! Observed persons of a record (witnesses, drivers the registry does not know): their
//! identity and contact, kept apart from the record's Automerge history (`store::observed`).
//!
//! - `PUT /v1/records/{id}/observed-persons`: the record's author, on the device that wrote it,
//!   sends the whole set (`sync_core::sync::ObservedPersonsUpload`); checked with
//!   `sync_core::sync::check_upload` against the stored record (only ids it names, each once,
//!   texts within `sync_core::limits`), body under [`OBSERVED_PERSONS_BODY_LIMIT`]. Repeating
//!   it stores nothing new; after the office erased them it is 409 `observed_persons_erased`.
//! - `GET /v1/records/{id}/observed-persons`: the office and admins.
//! - `DELETE /v1/records/{id}/observed-persons`: the office erases them once the record is
//!   finished (`office::witnesses::FINISHED`); an audit row stays, without the personal data.
//!
//! Nobody else reads them: not other officers, not coordinators, not the author (who holds
//! them on the device), and they are in no sync response or registry feed.

use axum::Json;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::StatusCode;
use sync_core::sync::ObservedPersonsUpload;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{is_json, parse_json, read_body};
use super::openapi::named_schema;
use crate::auth::Auth;
use crate::error::{AppError, ErrorBody};
use crate::limits::OBSERVED_PERSONS_BODY_LIMIT;
use crate::office::witnesses::{self, OBSERVED_UPLOADERS, ObservedPersonsReceipt};
use crate::server::AppState;
use crate::store::observed::{Erasure, ObservedPersons};

/// Stand-ins naming schemars schemas (see `openapi::doc`).
#[derive(Debug)]
pub struct ObservedPersonsUploadDoc;

named_schema!(
    ObservedPersonsUploadDoc => "ObservedPersonsUpload",
    ObservedPersonsReceipt => "ObservedPersonsReceipt",
);

/// The author's device sends the record's observed persons.
#[utoipa::path(
    put,
    path = "/v1/records/{id}/observed-persons",
    tag = "records",
    summary = "O autor envia a identificação e o contato das testemunhas do registro (fora do histórico)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = ObservedPersonsUploadDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "Guardadas (substituem as anteriores)", body = ObservedPersonsReceipt),
        (status = 403, description = "Não é o autor do registro, no aparelho em que o escreveu", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
        (status = 409, description = "A Unidade já apagou as testemunhas deste registro; nada foi guardado", body = ErrorBody),
        (status = 413, description = "Corpo acima de 128 KiB", body = ErrorBody),
        (status = 422, description = "Pessoa que o registro não nomeia, repetida ou texto acima do limite; nada foi guardado", body = ErrorBody),
    )
)]
async fn put_observed(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    req: Request,
) -> Result<Json<ObservedPersonsReceipt>, AppError> {
    auth.require(OBSERVED_UPLOADERS)?;
    if !is_json(req.headers()) {
        return Err(AppError::unsupported_media_type("application/json"));
    }
    let bytes = read_body(req, &state, OBSERVED_PERSONS_BODY_LIMIT).await?;
    let upload: ObservedPersonsUpload = parse_json(&bytes)?;
    Ok(Json(
        witnesses::put(state.services(), &auth, &id, upload).await?,
    ))
}

/// The office reads a record's observed persons.
#[utoipa::path(
    get,
    path = "/v1/records/{id}/observed-persons",
    tag = "records",
    summary = "Identificação e contato das testemunhas do registro (só a Unidade e a administração)",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "As pessoas, e o apagamento se houve", body = super::openapi::doc::ObservedPersons),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
    )
)]
async fn get_observed(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<ObservedPersons>, AppError> {
    Ok(Json(witnesses::read(state.services(), &auth, &id).await?))
}

/// The office erases a finished record's observed persons.
#[utoipa::path(
    delete,
    path = "/v1/records/{id}/observed-persons",
    tag = "records",
    summary = "Apaga os dados pessoais das testemunhas de um registro encerrado (LGPD)",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "Apagados (ou já estavam); fica a linha de auditoria", body = super::openapi::doc::Erasure),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
        (status = 409, description = "O registro não está anulado, arquivado nem juntado a outro", body = ErrorBody),
    )
)]
async fn delete_observed(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<Erasure>), AppError> {
    Ok((
        StatusCode::OK,
        Json(witnesses::erase(state.services(), &auth, &id).await?),
    ))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_observed, get_observed, delete_observed))
        .layer(DefaultBodyLimit::max(OBSERVED_PERSONS_BODY_LIMIT))
}
