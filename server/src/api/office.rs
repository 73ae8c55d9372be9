//! The office workflow API: `/v1/office/…`, thin handlers over [`crate::office`]
//! (the same functions the office pages call).
//!
//! | route | what |
//! |---|---|
//! | `GET /v1/office/inbox` | every field record, filtered, newest first, with counts per status |
//! | `GET /v1/office/duplicates` | groups of likely duplicates not yet settled |
//! | `POST /v1/office/duplicates/merge`, `…/keep-apart` | settle a group (an event per record) |
//! | `GET /v1/office/records/{id}` | the case: record, people charged, history, proposal, decision, appeal deadline |
//! | `GET /v1/office/records/{id}/proposal` | the system's proposal of a penalty (R32), explained |
//! | `POST /v1/office/records/{id}/{review,classify,propose,decide,notify}` | the decision |
//! | `POST /v1/office/records/{id}/reconsideration[/decision]`, `…/appeal[/decision]` | arts. 33–35 |
//! | `POST /v1/office/records/{id}/{annul,archive,conflicts/resolve,effects}` | the rest |
//! | `POST /v1/office/records/{id}/notifications`, `GET …/notifications` | notifications of penalty of the decision in force (one per person charged) |
//! | `GET /v1/office/notifications/{id}`, `GET /v1/office/notifications/{id}/pdf` | one notification, as JSON or as its A4 PDF |
//! | `GET /v1/office/records/{id}/case-file` | the case file for an appeal (A4 PDF) |
//!
//! Reading is for the office and admins; acting for the office (admins write no records). Every
//! action is one transaction: the record's events (vetted, audited, synced to devices) and, for
//! decisions, reversals and annulments, the registry version with the penalty, fine or
//! revocation (audited too).

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use sync_core::rules::penalty::Proposal;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{JsonBody, QueryParams};
use super::openapi::named_schema;
use crate::auth::Auth;
use crate::error::{AppError, ErrorBody};
use crate::office::notices::{GeneratedNotifications, NotificationRequest};
use crate::office::{
    self, AnnulRequest, CaseView, ClassifyRequest, DecideRequest, DuplicateGroup, DuplicatesPage,
    DuplicatesQuery, FilingRequest, Inbox, InboxQuery, KeepApartRequest, MergeRequest,
    NotifyRequest, OfficeResult, ProposeRequest, ResolveConflictRequest, ReviewRequest,
    RulingRequest, Settlement,
};
use crate::server::AppState;
use crate::store::notifications::NotificationRow;

/// `sync_core::rules::penalty::Proposal`.
#[derive(Debug)]
pub struct ProposalDoc;

named_schema!(
    ProposalDoc => "Proposal",
    Inbox => "Inbox",
    DuplicateGroup => "DuplicateGroup",
    DuplicatesPage => "DuplicatesPage",
    MergeRequest => "MergeRequest",
    KeepApartRequest => "KeepApartRequest",
    Settlement => "Settlement",
    CaseView => "CaseView",
    OfficeResult => "OfficeResult",
    ReviewRequest => "ReviewRequest",
    ClassifyRequest => "ClassifyRequest",
    ProposeRequest => "ProposeRequest",
    DecideRequest => "DecideRequest",
    NotifyRequest => "NotifyRequest",
    FilingRequest => "FilingRequest",
    RulingRequest => "RulingRequest",
    AnnulRequest => "AnnulRequest",
    ResolveConflictRequest => "ResolveConflictRequest",
    NotificationRequest => "NotificationRequest",
    GeneratedNotifications => "GeneratedNotifications",
);

/// The payload schemas of this area, for `schemas/api/` (see `openapi::payload_schemas`).
pub(crate) fn payload_schemas() -> Vec<(&'static str, serde_json::Value)> {
    fn s<T: schemars::JsonSchema>(name: &'static str) -> (&'static str, serde_json::Value) {
        (name, schemars::schema_for!(T).to_value())
    }
    vec![
        s::<InboxQuery>("office-inbox-query"),
        s::<Inbox>("office-inbox"),
        s::<DuplicateGroup>("office-duplicate-group"),
        s::<DuplicatesPage>("office-duplicates-page"),
        s::<MergeRequest>("office-merge-request"),
        s::<KeepApartRequest>("office-keep-apart-request"),
        s::<Settlement>("office-settlement"),
        s::<CaseView>("office-case"),
        s::<OfficeResult>("office-result"),
        s::<ReviewRequest>("office-review-request"),
        s::<ClassifyRequest>("office-classify-request"),
        s::<ProposeRequest>("office-propose-request"),
        s::<DecideRequest>("office-decide-request"),
        s::<NotifyRequest>("office-notify-request"),
        s::<FilingRequest>("office-filing-request"),
        s::<RulingRequest>("office-ruling-request"),
        s::<AnnulRequest>("office-annul-request"),
        s::<ResolveConflictRequest>("office-resolve-conflict-request"),
        s::<NotificationRequest>("office-notification-request"),
        s::<GeneratedNotifications>("office-generated-notifications"),
        s::<NotificationRow>("office-notification"),
    ]
}

/// Registers this area's types as components of the OpenAPI document.
pub(crate) fn add_components(generator: &mut schemars::SchemaGenerator) {
    let _ = generator.subschema_for::<Proposal>();
    let _ = generator.subschema_for::<Inbox>();
    let _ = generator.subschema_for::<DuplicateGroup>();
    let _ = generator.subschema_for::<DuplicatesPage>();
    let _ = generator.subschema_for::<MergeRequest>();
    let _ = generator.subschema_for::<KeepApartRequest>();
    let _ = generator.subschema_for::<Settlement>();
    let _ = generator.subschema_for::<CaseView>();
    let _ = generator.subschema_for::<OfficeResult>();
    let _ = generator.subschema_for::<ReviewRequest>();
    let _ = generator.subschema_for::<ClassifyRequest>();
    let _ = generator.subschema_for::<ProposeRequest>();
    let _ = generator.subschema_for::<DecideRequest>();
    let _ = generator.subschema_for::<NotifyRequest>();
    let _ = generator.subschema_for::<FilingRequest>();
    let _ = generator.subschema_for::<RulingRequest>();
    let _ = generator.subschema_for::<AnnulRequest>();
    let _ = generator.subschema_for::<ResolveConflictRequest>();
    let _ = generator.subschema_for::<NotificationRequest>();
    let _ = generator.subschema_for::<GeneratedNotifications>();
    let _ = generator.subschema_for::<NotificationRow>();
}

/// A PDF download named `{stem}.pdf` (the stem is a document number: letters, digits, dashes
/// and slashes, which are replaced).
pub(crate) fn pdf_response(stem: &str, bytes: Vec<u8>) -> Response {
    let safe: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{safe}.pdf\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"));
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/pdf")),
            (CONTENT_DISPOSITION, disposition),
            (CACHE_CONTROL, HeaderValue::from_static("private, no-store")),
        ],
        Body::from(bytes),
    )
        .into_response()
}

/// The inbox.
#[utoipa::path(
    get,
    path = "/v1/office/inbox",
    tag = "office",
    summary = "Caixa de entrada da Unidade: registros de campo filtrados, do mais recente ao mais antigo, com contagem por situação",
    params(
        ("status" = Option<String>, Query, description = "Situação derivada, ex.: issued, forwarded_to_office, penalty_decided"),
        ("kind" = Option<String>, Query, description = "infraction ou transgression"),
        ("stand" = Option<String>, Query, description = "Ponto"),
        ("author" = Option<String>, Query, description = "Usuário autor (fiscal ou coordenador)"),
        ("plate" = Option<String>, Query, description = "Placa em qualquer grafia"),
        ("from" = Option<String>, Query, description = "Desde (AAAA-MM-DD local ou RFC 3339)"),
        ("to" = Option<String>, Query, description = "Até (AAAA-MM-DD local, inclusive, ou RFC 3339, exclusivo)"),
        ("rule" = Option<String>, Query, description = "Regra do catálogo, ex.: R24"),
        ("limit" = Option<u32>, Query, description = "Itens por página (1–500, padrão 50)"),
        ("offset" = Option<u32>, Query, description = "Deslocamento"),
    ),
    responses(
        (status = 200, description = "Uma página, o total e a contagem por situação", body = Inbox),
        (status = 400, description = "Filtro inválido", body = ErrorBody),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
    )
)]
async fn get_inbox(
    State(state): State<AppState>,
    auth: Auth,
    QueryParams(q): QueryParams<InboxQuery>,
) -> Result<Json<Inbox>, AppError> {
    Ok(Json(office::inbox(state.services(), &auth, q).await?))
}

/// Duplicate groups.
#[utoipa::path(
    get,
    path = "/v1/office/duplicates",
    tag = "office",
    summary = "Grupos de prováveis duplicatas (mesma placa, perto no tempo e no lugar, dispositivos diferentes) ainda não resolvidos",
    params(
        ("offset" = Option<u32>, Query, description = "Placas a pular (da ocorrência mais recente à mais antiga)"),
        ("limit" = Option<u32>, Query, description = "Placas na página (1–200, padrão 50)"),
    ),
    responses(
        (status = 200, description = "Uma página de placas: os grupos, do mais recente ao mais antigo, e o total de placas", body = DuplicatesPage),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
    )
)]
async fn get_duplicates(
    State(state): State<AppState>,
    auth: Auth,
    QueryParams(q): QueryParams<DuplicatesQuery>,
) -> Result<Json<DuplicatesPage>, AppError> {
    Ok(Json(
        office::duplicate_groups(state.services(), &auth, q).await?,
    ))
}

/// Merge duplicates.
#[utoipa::path(
    post,
    path = "/v1/office/duplicates/merge",
    tag = "office",
    summary = "Junta duplicatas ao registro principal (evento em cada duplicata)",
    request_body(content = MergeRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Juntadas", body = Settlement),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
        (status = 422, description = "Recusado; nada foi gravado", body = ErrorBody),
    )
)]
async fn post_merge(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(body): JsonBody<MergeRequest>,
) -> Result<Json<Settlement>, AppError> {
    Ok(Json(
        office::merge_duplicates(state.services(), &auth, body).await?,
    ))
}

/// Keep records apart.
#[utoipa::path(
    post,
    path = "/v1/office/duplicates/keep-apart",
    tag = "office",
    summary = "Mantém registros em separado: ocorrências diferentes (evento em cada um)",
    request_body(content = KeepApartRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Mantidos em separado", body = Settlement),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Registro inexistente", body = ErrorBody),
        (status = 422, description = "Recusado; nada foi gravado", body = ErrorBody),
    )
)]
async fn post_keep_apart(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(body): JsonBody<KeepApartRequest>,
) -> Result<Json<Settlement>, AppError> {
    Ok(Json(
        office::keep_apart(state.services(), &auth, body).await?,
    ))
}

/// The case of a record.
#[utoipa::path(
    get,
    path = "/v1/office/records/{id}",
    tag = "office",
    summary = "O processo de um registro: pessoas autuadas, histórico do alvará, proposta, decisão e prazo de recurso",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "O processo", body = CaseView),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
    )
)]
async fn get_case(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<CaseView>, AppError> {
    Ok(Json(office::case(state.services(), &auth, &id).await?))
}

/// The system's proposal.
#[utoipa::path(
    get,
    path = "/v1/office/records/{id}/proposal",
    tag = "office",
    summary = "Proposta de penalidade do sistema (R32, art. 32), com as razões; a Unidade decide",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "A proposta", body = ProposalDoc),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Registro sem alvará a penalizar", body = ErrorBody),
    )
)]
async fn get_proposal(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Proposal>, AppError> {
    Ok(Json(office::proposal(state.services(), &auth, &id).await?))
}

/// Análise: a Unidade assume o registro.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/review",
    tag = "office",
    summary = "Análise: a Unidade assume o registro",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = ReviewRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_review(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ReviewRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::review(state.services(), &auth, &id, body).await?,
    ))
}

/// Classifica o registro em regras do catálogo (artigos).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/classify",
    tag = "office",
    summary = "Classifica o registro em regras do catálogo (artigos)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = ClassifyRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_classify(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ClassifyRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::classify(state.services(), &auth, &id, body).await?,
    ))
}

/// Registra a proposta de penalidade (a do sistema se omitida).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/propose",
    tag = "office",
    summary = "Registra a proposta de penalidade (a do sistema se omitida)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = ProposeRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_propose(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ProposeRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::propose(state.services(), &auth, &id, body).await?,
    ))
}

/// Decide a penalidade (art. 32) de um registro já analisado e com proposta registrada, e a
/// aplica ao cadastro na mesma transação (nenhuma etapa é registrada em nome da Unidade).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/decide",
    tag = "office",
    summary = "Decide a penalidade (art. 32) de registro analisado e com proposta registrada; aplica ao cadastro na mesma transação",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = DecideRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_decide(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<DecideRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::decide(state.services(), &auth, &id, body).await?,
    ))
}

/// Registra a ciência (data e meio); calcula o prazo de recurso (art. 35).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/notify",
    tag = "office",
    summary = "Registra a ciência (data e meio); calcula o prazo de recurso (art. 35)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = NotifyRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_notify(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<NotifyRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::notify(state.services(), &auth, &id, body).await?,
    ))
}

/// Registra o pedido de reconsideração (art. 34).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/reconsideration",
    tag = "office",
    summary = "Registra o pedido de reconsideração (art. 34)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = FilingRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_reconsideration(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<FilingRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::file_reconsideration(state.services(), &auth, &id, body).await?,
    ))
}

/// Decide a reconsideração; reforma ou anulação atualiza o cadastro.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/reconsideration/decision",
    tag = "office",
    summary = "Decide a reconsideração; reforma ou anulação atualiza o cadastro",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = RulingRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_reconsideration_decision(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<RulingRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::decide_reconsideration(state.services(), &auth, &id, body).await?,
    ))
}

/// Registra o recurso ao Prefeito (art. 33): recusado se intempestivo (art. 35) ou repetido.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/appeal",
    tag = "office",
    summary = "Registra o recurso ao Prefeito (art. 33): recusado se intempestivo (art. 35) ou repetido",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = FilingRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_appeal(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<FilingRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::file_appeal(state.services(), &auth, &id, body).await?,
    ))
}

/// Decide o recurso; reforma atualiza o cadastro.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/appeal/decision",
    tag = "office",
    summary = "Decide o recurso; reforma atualiza o cadastro",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = RulingRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_appeal_decision(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<RulingRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::decide_appeal(state.services(), &auth, &id, body).await?,
    ))
}

/// Anula o registro; penalidade que tenha gerado sai do cadastro.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/annul",
    tag = "office",
    summary = "Anula o registro; penalidade que tenha gerado sai do cadastro",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = AnnulRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_annul(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<AnnulRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::annul(state.services(), &auth, &id, body).await?,
    ))
}

/// Escolhe um dos valores concorrentes de um campo (ambos ficam no histórico).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/conflicts/resolve",
    tag = "office",
    summary = "Escolhe um dos valores concorrentes de um campo (ambos ficam no histórico)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = ResolveConflictRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado (lei, ordem dos eventos, prazo); nada foi gravado", body = ErrorBody),
    )
)]
async fn post_resolve_conflict(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ResolveConflictRequest>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::resolve_conflict(state.services(), &auth, &id, body).await?,
    ))
}

/// Arquiva o registro.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/archive",
    tag = "office",
    summary = "Arquiva o registro",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado; nada foi gravado", body = ErrorBody),
    )
)]
async fn post_archive(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(office::archive(state.services(), &auth, &id).await?))
}

/// Reaplica ao cadastro o efeito da decisão em vigor (idempotente).
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/effects",
    tag = "office",
    summary = "Reaplica ao cadastro o efeito da decisão em vigor (idempotente)",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "Feito; o processo como ficou e a versão do cadastro, se mudou", body = OfficeResult),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 422, description = "Recusado; nada foi gravado", body = ErrorBody),
    )
)]
async fn post_effects(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<OfficeResult>, AppError> {
    Ok(Json(
        office::reapply_effects(state.services(), &auth, &id).await?,
    ))
}

/// Gera a notificação de penalidade da decisão em vigor, uma por pessoa que responde.
#[utoipa::path(
    post,
    path = "/v1/office/records/{id}/notifications",
    tag = "office",
    summary = "Gera a notificação de penalidade da decisão em vigor, uma por pessoa que responde (art. 32, § 2º)",
    params(("id" = String, Path, description = "Identificador do registro")),
    request_body(content = NotificationRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "Notificações geradas, numeradas e com código de verificação", body = GeneratedNotifications),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 409, description = "Esta decisão já foi notificada a essa pessoa", body = ErrorBody),
        (status = 422, description = "Sem decisão de penalidade em vigor; nada foi gravado", body = ErrorBody),
    )
)]
async fn post_notifications(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<NotificationRequest>,
) -> Result<Json<GeneratedNotifications>, AppError> {
    Ok(Json(
        office::notices::generate(state.services(), &auth, &id, body).await?,
    ))
}

/// As notificações de um registro.
#[utoipa::path(
    get,
    path = "/v1/office/records/{id}/notifications",
    tag = "office",
    summary = "As notificações de penalidade de um registro, da mais antiga à mais recente",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "As notificações", body = Vec<super::openapi::doc::NotificationRow>),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
    )
)]
async fn get_record_notifications(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<Vec<NotificationRow>>, AppError> {
    Ok(Json(
        office::notices::of_record(state.services(), &auth, &id).await?,
    ))
}

/// Uma notificação de penalidade.
#[utoipa::path(
    get,
    path = "/v1/office/notifications/{id}",
    tag = "office",
    summary = "Uma notificação de penalidade, com o conteúdo impresso",
    params(("id" = String, Path, description = "Identificador da notificação")),
    responses(
        (status = 200, description = "A notificação", body = super::openapi::doc::NotificationRow),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
    )
)]
async fn get_notification(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<NotificationRow>, AppError> {
    Ok(Json(
        office::notices::get(state.services(), &auth, &id).await?,
    ))
}

/// A notificação em PDF (A4).
#[utoipa::path(
    get,
    path = "/v1/office/notifications/{id}/pdf",
    tag = "office",
    summary = "A notificação de penalidade em PDF (A4)",
    params(("id" = String, Path, description = "Identificador da notificação")),
    responses(
        (status = 200, description = "O PDF", content_type = "application/pdf"),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 500, description = "O PDF não pôde ser gerado", body = ErrorBody),
    )
)]
async fn get_notification_pdf(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let (number, bytes) = office::notices::pdf(state.services(), &auth, &id).await?;
    Ok(pdf_response(&number, bytes))
}

/// O processo para o recurso ao Prefeito, em PDF.
#[utoipa::path(
    get,
    path = "/v1/office/records/{id}/case-file",
    tag = "office",
    summary = "O processo (auto, fotos, veredito do agente, eventos, decisões, notificações) em PDF, para o recurso ao Prefeito",
    params(("id" = String, Path, description = "Identificador do registro")),
    responses(
        (status = 200, description = "O PDF", content_type = "application/pdf"),
        (status = 403, description = "Perfil sem acesso", body = ErrorBody),
        (status = 404, description = "Inexistente", body = ErrorBody),
        (status = 500, description = "O PDF não pôde ser gerado", body = ErrorBody),
    )
)]
async fn get_case_file(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let (number, bytes) = office::notices::case_file_pdf(state.services(), &auth, &id).await?;
    Ok(pdf_response(&format!("processo-{number}"), bytes))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_inbox))
        .routes(routes!(get_duplicates))
        .routes(routes!(post_merge))
        .routes(routes!(post_keep_apart))
        .routes(routes!(get_case))
        .routes(routes!(get_proposal))
        .routes(routes!(post_review))
        .routes(routes!(post_classify))
        .routes(routes!(post_propose))
        .routes(routes!(post_decide))
        .routes(routes!(post_notify))
        .routes(routes!(post_reconsideration))
        .routes(routes!(post_reconsideration_decision))
        .routes(routes!(post_appeal))
        .routes(routes!(post_appeal_decision))
        .routes(routes!(post_annul))
        .routes(routes!(post_resolve_conflict))
        .routes(routes!(post_archive))
        .routes(routes!(post_effects))
        .routes(routes!(post_notifications, get_record_notifications))
        .routes(routes!(get_notification))
        .routes(routes!(get_notification_pdf))
        .routes(routes!(get_case_file))
}
