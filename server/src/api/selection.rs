//! The editais de chamamento over HTTP: `/v1/editais…`, thin handlers over
//! [`crate::selection`] (arts. 2–6 of the law).
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /v1/editais` | | `EditalSummary[]`, newest first |
//! | `POST /v1/editais` | `NewEdital` | 201 `EditalView` |
//! | `GET /v1/editais/{id}` | | `EditalView` (edital, stage, classification) |
//! | `POST /v1/editais/{id}/candidates` | `NewCandidate` | 201 `EditalView` |
//! | `POST /v1/editais/{id}/list` | | `EditalView` |
//! | `POST /v1/editais/{id}/draw` | `DrawRequest` | `EditalView` |
//! | `POST /v1/editais/{id}/result` | | `EditalView` |
//! | `POST /v1/editais/{id}/appeals` | `NewAppeal` | 201 `EditalView` |
//! | `POST /v1/editais/{id}/appeals/{number}/decision` | `AppealRuling` | `EditalView` |
//! | `POST /v1/editais/{id}/grants` | `GrantRequest` | 201 `GrantOutcome` |
//! | `GET /v1/editais/{id}/lottery.txt` | | the lottery's published list, `text/plain`, byte for byte |
//! | `GET /v1/editais/{id}/edital.pdf`, `…/result.pdf` | | the printed edital and result (A4 PDF) |
//!
//! Flow: each handler states its role on its first line (reading: the office and the
//! administrator; acting: the office), decodes its body with [`JsonBody`] (bodies within
//! [`EDITAL_BODY_LIMIT`], unknown fields refused) and calls its service function, which runs the
//! kernel's step and saves the edital with its audit row; a legal refusal is 422
//! `refused_by_law` with every finding, as for the registry.

use axum::Json;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use sync_core::rules::selection::{NewAppeal, NewCandidate, NewEdital};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::JsonBody;
use super::openapi::named_schema;
use crate::auth::{Auth, roles};
use crate::error::{AppError, ErrorBody};
use crate::limits::EDITAL_BODY_LIMIT;
use crate::selection::{
    self, AppealRuling, DrawRequest, EditalSummary, EditalView, GrantOutcome, GrantRequest,
};
use crate::server::AppState;

/// `sync_core::rules::selection::NewEdital`.
#[derive(Debug)]
pub struct NewEditalDoc;
/// `sync_core::rules::selection::NewCandidate`.
#[derive(Debug)]
pub struct NewCandidateDoc;
/// `sync_core::rules::selection::NewAppeal`.
#[derive(Debug)]
pub struct NewAppealDoc;

named_schema!(
    NewEditalDoc => "NewEdital",
    NewCandidateDoc => "NewCandidate",
    NewAppealDoc => "NewAppeal",
    EditalView => "EditalView",
    EditalSummary => "EditalSummary",
    DrawRequest => "DrawRequest",
    AppealRuling => "AppealRuling",
    GrantRequest => "GrantRequest",
    GrantOutcome => "GrantOutcome",
);

/// The payload schemas of this area, for `schemas/api/` (see `openapi::payload_schemas`).
pub(crate) fn payload_schemas() -> Vec<(&'static str, serde_json::Value)> {
    fn s<T: schemars::JsonSchema>(name: &'static str) -> (&'static str, serde_json::Value) {
        (name, schemars::schema_for!(T).to_value())
    }
    vec![
        s::<EditalView>("edital-view"),
        s::<EditalSummary>("edital-summary"),
        s::<DrawRequest>("edital-draw-request"),
        s::<AppealRuling>("edital-appeal-ruling"),
        s::<GrantRequest>("edital-grant-request"),
        s::<GrantOutcome>("edital-grant-outcome"),
    ]
}

/// Registers this area's types as components of the OpenAPI document.
pub(crate) fn add_components(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<NewEdital>();
    let _ = generator.subschema_for::<NewCandidate>();
    let _ = generator.subschema_for::<NewAppeal>();
    let _ = generator.subschema_for::<EditalView>();
    let _ = generator.subschema_for::<EditalSummary>();
    let _ = generator.subschema_for::<DrawRequest>();
    let _ = generator.subschema_for::<AppealRuling>();
    let _ = generator.subschema_for::<GrantRequest>();
    let _ = generator.subschema_for::<GrantOutcome>();
}

/// The editais.
#[utoipa::path(get, path = "/v1/editais", tag = "editais",
    summary = "Editais de chamamento, do mais recente ao mais antigo",
    responses((status = 200, description = "Os editais", body = Vec<EditalSummary>),
              (status = 403, description = "Perfil sem acesso", body = ErrorBody)))]
async fn list_editais(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<EditalSummary>>, AppError> {
    auth.require(roles::OFFICE_READERS)?;
    Ok(Json(selection::list(state.services(), &auth).await?))
}

/// Open an edital (art. 4).
#[utoipa::path(post, path = "/v1/editais", tag = "editais", request_body = NewEditalDoc,
    summary = "Abre um edital de chamamento (art. 4º: publicação 20 dias antes das inscrições; vagas livres dos pontos; art. 14)",
    responses((status = 201, description = "Aberto", body = EditalView),
              (status = 409, description = "Identificador em uso", body = ErrorBody),
              (status = 422, description = "Recusado pela lei: cada motivo com regra e artigo", body = ErrorBody)))]
async fn open_edital(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<NewEdital>,
) -> Result<(StatusCode, Json<EditalView>), AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    let view = selection::open(state.services(), &auth, req).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// One edital.
#[utoipa::path(get, path = "/v1/editais/{id}", tag = "editais",
    params(("id" = String, Path, description = "Edital")),
    summary = "Um edital: o que foi feito nele, a fase e a classificação",
    responses((status = 200, description = "O edital", body = EditalView),
              (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn get_edital(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<EditalView>, AppError> {
    auth.require(roles::OFFICE_READERS)?;
    Ok(Json(selection::get(state.services(), &auth, &id).await?))
}

/// Register a candidate (art. 2).
#[utoipa::path(post, path = "/v1/editais/{id}/candidates", tag = "editais", request_body = NewCandidateDoc,
    params(("id" = String, Path, description = "Edital")),
    summary = "Inscreve um candidato no período de inscrições (os requisitos do art. 2º são julgados na lista)",
    responses((status = 201, description = "Inscrito", body = EditalView),
              (status = 422, description = "Recusado: fora do período, CPF já inscrito, ponto não oferecido", body = ErrorBody)))]
async fn register_candidate(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<NewCandidate>,
) -> Result<(StatusCode, Json<EditalView>), AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    let view = selection::register(state.services(), &auth, &id, req).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// Publish the list.
#[utoipa::path(post, path = "/v1/editais/{id}/list", tag = "editais",
    params(("id" = String, Path, description = "Edital")),
    summary = "Publica a lista de inscritos depois das inscrições: cada candidato julgado (art. 2º, art. 10 § 2º) e classificado num grupo do art. 3º; a lista do sorteio com seu SHA-256",
    responses((status = 200, description = "Publicada", body = EditalView),
              (status = 422, description = "Recusado: inscrições em curso, lista já publicada", body = ErrorBody)))]
async fn publish_list(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<EditalView>, AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    Ok(Json(
        selection::publish_list(state.services(), &auth, &id).await?,
    ))
}

/// The draw.
#[utoipa::path(post, path = "/v1/editais/{id}/draw", tag = "editais", request_body = DrawRequest,
    params(("id" = String, Path, description = "Edital")),
    summary = "Faz o sorteio do grupo III (art. 3º, III) com a semente publicada, uma única vez, a partir da data do sorteio",
    responses((status = 200, description = "Sorteado", body = EditalView),
              (status = 422, description = "Recusado: antes da data da semente, sem lista, sorteio já feito", body = ErrorBody)))]
async fn draw(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<DrawRequest>,
) -> Result<Json<EditalView>, AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    Ok(Json(
        selection::draw(state.services(), &auth, &id, req).await?,
    ))
}

/// Publish the result.
#[utoipa::path(post, path = "/v1/editais/{id}/result", tag = "editais",
    params(("id" = String, Path, description = "Edital")),
    summary = "Publica o resultado (a classificação e as vagas), abrindo o prazo de recurso do art. 5º",
    responses((status = 200, description = "Publicado", body = EditalView),
              (status = 422, description = "Recusado: sem lista, sem sorteio, já publicado", body = ErrorBody)))]
async fn publish_result(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<EditalView>, AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    Ok(Json(
        selection::publish_result(state.services(), &auth, &id).await?,
    ))
}

/// File an appeal (art. 5).
#[utoipa::path(post, path = "/v1/editais/{id}/appeals", tag = "editais", request_body = NewAppealDoc,
    params(("id" = String, Path, description = "Edital")),
    summary = "Registra um recurso ao Prefeito contra a escolha (art. 5º); o protocolado depois do prazo fica registrado como intempestivo",
    responses((status = 201, description = "Registrado", body = EditalView),
              (status = 422, description = "Recusado: sem resultado, data de protocolo inválida", body = ErrorBody)))]
async fn file_appeal(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<NewAppeal>,
) -> Result<(StatusCode, Json<EditalView>), AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    let view = selection::file_appeal(state.services(), &auth, &id, req).await?;
    Ok((StatusCode::CREATED, Json(view)))
}

/// Decide an appeal.
#[utoipa::path(post, path = "/v1/editais/{id}/appeals/{number}/decision", tag = "editais", request_body = AppealRuling,
    params(("id" = String, Path, description = "Edital"), ("number" = u32, Path, description = "Número do recurso")),
    summary = "Registra a decisão do Prefeito sobre um recurso, com a data de hoje",
    responses((status = 200, description = "Decidido", body = EditalView),
              (status = 422, description = "Recusado: já decidido, intempestivo provido, exclusão inválida", body = ErrorBody)))]
async fn decide_appeal(
    State(state): State<AppState>,
    auth: Auth,
    Path((id, number)): Path<(String, u32)>,
    JsonBody(req): JsonBody<AppealRuling>,
) -> Result<Json<EditalView>, AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    Ok(Json(
        selection::decide_appeal(state.services(), &auth, &id, number, req).await?,
    ))
}

/// Grant a place (art. 6).
#[utoipa::path(post, path = "/v1/editais/{id}/grants", tag = "editais", request_body = GrantRequest,
    params(("id" = String, Path, description = "Edital")),
    summary = "Concede a vaga a um candidato escolhido (art. 6º): alvará novo (grupos II e III, encerrando o registro de auxiliar) ou o alvará do permissionário mudado de ponto (grupo I), no mesmo ato que o edital",
    responses((status = 201, description = "Concedido", body = GrantOutcome),
              (status = 422, description = "Recusado pela lei (prazo de recurso, recurso pendente, art. 2º, art. 14, art. 30) ou pedido incompleto", body = ErrorBody)))]
async fn grant(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<GrantRequest>,
) -> Result<(StatusCode, Json<GrantOutcome>), AppError> {
    auth.require(roles::OFFICE_WRITERS)?;
    let outcome = selection::grant(state.services(), &auth, &id, req).await?;
    Ok((StatusCode::CREATED, Json(outcome)))
}

/// The lottery's published list.
#[utoipa::path(get, path = "/v1/editais/{id}/lottery.txt", tag = "editais",
    params(("id" = String, Path, description = "Edital")),
    summary = "A lista do sorteio como publicada, byte a byte (seu SHA-256 é o publicado): com a semente, qualquer pessoa refaz o sorteio",
    responses((status = 200, description = "A lista", content_type = "text/plain; charset=utf-8", body = String),
              (status = 404, description = "Edital inexistente ou lista ainda não publicada", body = ErrorBody)))]
async fn lottery_text(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    auth.require(roles::OFFICE_READERS)?;
    let text = selection::lottery_text(state.services(), &auth, &id).await?;
    Ok((
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (CACHE_CONTROL, HeaderValue::from_static("private, no-cache")),
        ],
        Body::from(text),
    )
        .into_response())
}

/// The printed edital.
#[utoipa::path(get, path = "/v1/editais/{id}/edital.pdf", tag = "editais",
    params(("id" = String, Path, description = "Edital")),
    summary = "O edital impresso (PDF A4)",
    responses((status = 200, description = "O PDF", content_type = "application/pdf"),
              (status = 404, description = "Inexistente", body = ErrorBody)))]
async fn edital_pdf(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    auth.require(roles::OFFICE_READERS)?;
    let (name, bytes) = selection::print::edital_pdf(state.services(), &auth, &id).await?;
    Ok(super::office::pdf_response(&name, bytes))
}

/// The printed result.
#[utoipa::path(get, path = "/v1/editais/{id}/result.pdf", tag = "editais",
    params(("id" = String, Path, description = "Edital")),
    summary = "O resultado impresso (PDF A4), depois de publicado",
    responses((status = 200, description = "O PDF", content_type = "application/pdf"),
              (status = 404, description = "Edital inexistente ou resultado não publicado", body = ErrorBody)))]
async fn result_pdf(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    auth.require(roles::OFFICE_READERS)?;
    let (name, bytes) = selection::print::result_pdf(state.services(), &auth, &id).await?;
    Ok(super::office::pdf_response(&name, bytes))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_editais, open_edital))
        .routes(routes!(get_edital))
        .routes(routes!(register_candidate))
        .routes(routes!(publish_list))
        .routes(routes!(draw))
        .routes(routes!(publish_result))
        .routes(routes!(file_appeal))
        .routes(routes!(decide_appeal))
        .routes(routes!(grant))
        .routes(routes!(lottery_text))
        .routes(routes!(edital_pdf))
        .routes(routes!(result_pdf))
        .layer(DefaultBodyLimit::max(EDITAL_BODY_LIMIT))
}
