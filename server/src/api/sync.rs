//! `POST /v1/sync`: the record sync exchange (ADR 0009; protocol in `sync_core::sync`).
//!
//! Flow: authenticate (officer, coordinator or office; the role and stand come from the
//! database, never from the body) → read the JSON body (the route accepts `Content-Encoding:
//! zstd` or `gzip` and compresses its answer the same way; the body limit applies to the
//! decompressed bytes) → load the registry (coordinators' reports are vetted against it) → the
//! store runs `ServerSync` and writes its effects in one transaction → answer the
//! `SyncResponse`. A record refused by the vetting is a `Rejection` inside a 200 answer, not an
//! HTTP error: the rest of the batch still syncs. HTTP errors mean nothing was written and the
//! device should retry later (or update, for `protocol_unsupported`).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use sync_core::sync::{ServerSync, SyncError, SyncRequest, SyncResponse};
use tower_http::compression::CompressionLayer;
use tower_http::decompression::RequestDecompressionLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::JsonBody;
use super::openapi::named_schema;
use crate::auth::{Auth, Role};
use crate::error::{AppError, ErrorBody};
use crate::server::AppState;
use crate::store::records::{Caller, SyncJob};

/// `sync_core::sync::SyncRequest` (schema `sync-request`), for the OpenAPI paths.
#[derive(Debug)]
pub struct SyncRequestDoc;
/// `sync_core::sync::SyncResponse` (schema `sync-response`).
#[derive(Debug)]
pub struct SyncResponseDoc;

named_schema!(SyncRequestDoc => "SyncRequest", SyncResponseDoc => "SyncResponse");

/// Who syncs records: the field roles and the office (admins write no records).
pub const RECORD_SYNCERS: &[Role] = &[Role::Officer, Role::Coordinator, Role::Office];

/// The authenticated caller, for the records layer.
pub(crate) fn caller_of(auth: &Auth) -> Caller {
    Caller {
        user_id: auth.user_id.clone(),
        role: auth.role,
        stand_id: auth.stand_id.clone(),
        device_id: auth.device_id.clone(),
    }
}

/// An exchange refused as a whole.
fn sync_error(e: SyncError) -> AppError {
    match e {
        SyncError::Protocol { got, supported } => {
            AppError::new(StatusCode::CONFLICT, "protocol_unsupported", e.to_string())
                .with_details(serde_json::json!({ "protocol": got, "supported": supported }))
        }
        SyncError::DeviceMismatch { .. } => AppError::new(
            StatusCode::FORBIDDEN,
            "device_mismatch",
            "O pedido de sincronização é de outro dispositivo que não o desta sessão.",
        ),
        SyncError::DuplicateRecord(id) => AppError::bad_request(
            "duplicate_record",
            format!("O registro {id} aparece mais de uma vez no pedido; nada foi gravado."),
        ),
        SyncError::RegistryUnavailable => AppError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "registry_unavailable",
            e.to_string(),
        ),
        SyncError::UnknownRecord(_)
        | SyncError::Stored { .. }
        | SyncError::Record { .. }
        | SyncError::Store(_) => AppError::internal(&e),
    }
}

/// Sync field records: many records' Automerge messages in one exchange.
#[utoipa::path(
    post,
    path = "/v1/sync",
    tag = "sync",
    summary = "Sincroniza registros de campo (autos e comunicações) do dispositivo",
    description = "Um pedido leva os registros novos inteiros e as mensagens de sincronização \
        Automerge dos registros alterados; a resposta confirma o que foi aceito, traz o que o \
        dispositivo ainda não tem e as recusas, com o motivo em português. Cada alteração é \
        conferida antes de ser aplicada (ator do dispositivo, campos lacrados, papel, ponto do \
        coordenador, eventos). Aceita e devolve corpo com Content-Encoding zstd ou gzip. \
        Repetir um pedido é inofensivo.",
    request_body(content = SyncRequestDoc, content_type = "application/json"),
    responses(
        (status = 200, description = "Troca feita; recusas de registros vêm dentro da resposta", body = SyncResponseDoc),
        (status = 403, description = "Perfil sem registros, ou o pedido é de outro dispositivo", body = ErrorBody),
        (status = 409, description = "Versão do protocolo não suportada: atualize o aplicativo", body = ErrorBody),
        (status = 503, description = "Cadastro indisponível; tente mais tarde", body = ErrorBody),
    )
)]
async fn sync(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(request): JsonBody<SyncRequest>,
) -> Result<Json<SyncResponse>, AppError> {
    auth.require(RECORD_SYNCERS)?;
    let registry = state.services().indexed_registry().await?;
    let job = SyncJob {
        caller: caller_of(&auth),
        request,
        registry,
        logic: ServerSync::default(),
        now: state.clock().now(),
        server_key: state.signing_key().clone(),
    };
    match state.store().sync_records(job).await? {
        Ok(response) => {
            state
                .metrics()
                .note_sync(response.accepted.len(), response.rejections.len());
            Ok(Json(response))
        }
        Err(e) => Err(sync_error(e)),
    }
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sync))
        // Bodies travel compressed (base64 inside JSON costs almost nothing then).
        .layer(RequestDecompressionLayer::new())
        .layer(CompressionLayer::new())
}
