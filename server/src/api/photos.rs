//! Evidence photos, content-addressed: `PUT /v1/photos/{sha256}` (officer, coordinator,
//! office) and `GET /v1/photos/{sha256}` (office, admin).
//!
//! Upload flow: role check first (before a byte of the body is read), then the optional
//! `record_id` link check ([`authorize_record_link`], the hook the record sync completes), then
//! the body is read under the photo limit (413 past it), hashed, and compared with the path: a
//! mismatch is 422 `hash_mismatch` and nothing is stored. Storing is idempotent: the same photo
//! again is 200 with `stored: false`, so an interrupted upload is simply retried.
//!
//! `POST /v1/photos/have` (uploaders; added for the sync client) answers which of up
//! to 1,000 hashes are already stored, so a client resuming after an interruption skips the
//! photos whose confirmation it lost instead of sending megabytes again. Knowing a hash means
//! holding the photo, so the answer discloses nothing new.

use axum::Json;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{JsonBody, QueryParams, read_body};
use super::openapi::named_schema;
use crate::audit::payload_hash;
use crate::auth::{Auth, roles};
use crate::error::{AppError, ErrorBody};
use crate::server::AppState;
use crate::store::{PhotoMeta, PutPhoto};

/// Query of an upload.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct PhotoQuery {
    /// The record (auto) the photo is evidence for.
    #[serde(default)]
    pub record_id: Option<String>,
}

/// The answer to an upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PhotoReceipt {
    pub sha256: String,
    pub size: u64,
    /// False when the photo was already stored (the upload was a repeat).
    pub stored: bool,
    pub record_id: Option<String>,
}

/// `POST /v1/photos/have`: hashes the client is about to upload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhotoHaveRequest {
    /// SHA-256 (hex), at most 1,000.
    pub hashes: Vec<String>,
}

/// The hashes of the request that the server stores.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PhotoHaveResponse {
    pub have: Vec<String>,
}

/// Hashes per `have` request.
const HAVE_MAX: usize = 1000;

named_schema!(
    PhotoReceipt => "PhotoReceipt",
    PhotoHaveRequest => "PhotoHaveRequest",
    PhotoHaveResponse => "PhotoHaveResponse",
);

/// 64 hex digits, lower-cased.
fn parse_hash(s: &str) -> Result<String, AppError> {
    if s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(s.to_ascii_lowercase())
    } else {
        Err(AppError::bad_request(
            "invalid_hash",
            "O caminho deve ser o SHA-256 da foto: 64 dígitos hexadecimais.",
        ))
    }
}

/// When the uploader names a record, the caller must be able to write that record: its author,
/// a coordinator of its stand (transgression reports), or the office; 403 otherwise. A record the
/// server does not have yet is allowed: photos are uploaded apart from the document and often
/// before it syncs; the id is stored with the photo, and only the record's author can put the
/// photo's hash into the record itself (the sync vets that).
pub async fn authorize_record_link(
    state: &AppState,
    auth: &Auth,
    record_id: Option<&str>,
) -> Result<(), AppError> {
    let Some(r) = record_id else {
        return Ok(());
    };
    if r.is_empty() || r.len() > 128 || r.chars().any(char::is_control) {
        return Err(AppError::bad_request(
            "invalid_record_id",
            "record_id inválido: de 1 a 128 caracteres imprimíveis.",
        ));
    }
    if let Some(doc) = state.store().record(r.to_owned()).await?
        && !crate::store::records::may_write(&super::sync::caller_of(auth), &doc.row)
    {
        return Err(AppError::forbidden(
            "Esta foto não pode ser ligada a um registro que não é seu (nem do seu ponto).",
        )
        .with_details(serde_json::json!({ "record_id": r })));
    }
    Ok(())
}

fn photo_content_type(req: &Request) -> String {
    req.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|ct| ct.starts_with("image/") && ct.len() <= 64)
        .unwrap_or_else(|| String::from("application/octet-stream"))
}

/// Upload a photo under its SHA-256.
#[utoipa::path(
    put,
    path = "/v1/photos/{sha256}",
    tag = "photos",
    params(
        ("sha256" = String, Path, description = "SHA-256 dos bytes da foto (hex)"),
        ("record_id" = Option<String>, Query, description = "Registro (auto) a que a foto pertence"),
    ),
    request_body(content = String, content_type = "image/jpeg", description = "Os bytes da foto (image/* ou application/octet-stream), até 10 MB"),
    responses(
        (status = 201, description = "Armazenada", body = PhotoReceipt),
        (status = 200, description = "Já estava armazenada", body = PhotoReceipt),
        (status = 413, description = "Acima do limite", body = ErrorBody),
        (status = 422, description = "Os bytes não têm o hash do caminho; nada foi armazenado", body = ErrorBody),
    )
)]
async fn put_photo(
    State(state): State<AppState>,
    auth: Auth,
    Path(sha256): Path<String>,
    QueryParams(q): QueryParams<PhotoQuery>,
    req: Request,
) -> Result<(StatusCode, Json<PhotoReceipt>), AppError> {
    auth.require(roles::PHOTO_UPLOADERS)?;
    let expected = parse_hash(&sha256)?;
    authorize_record_link(&state, &auth, q.record_id.as_deref()).await?;
    let content_type = photo_content_type(&req);
    let bytes = read_body(req, &state, state.config().photo_limit).await?;
    let actual = payload_hash(&bytes);
    if actual != expected {
        return Err(AppError::unprocessable(
            "hash_mismatch",
            "O SHA-256 dos bytes recebidos difere do informado no caminho; nada foi armazenado. \
             Reenvie a foto.",
        )
        .with_details(serde_json::json!({ "expected": expected, "received": actual })));
    }
    let now = state.clock().now();
    let meta = PhotoMeta {
        sha256: expected,
        size: bytes.len() as u64,
        content_type,
        uploaded_at: now,
        user_id: auth.user_id.clone(),
        device_id: auth.device_id.clone(),
        record_id: q.record_id,
    };
    let outcome = state
        .store()
        .put_photo(meta, bytes.to_vec(), auth.actor(now))
        .await?;
    let (status, meta, stored) = match outcome {
        PutPhoto::Stored(m) => (StatusCode::CREATED, m, true),
        PutPhoto::AlreadyStored(m) => (StatusCode::OK, m, false),
    };
    Ok((
        status,
        Json(PhotoReceipt {
            sha256: meta.sha256,
            size: meta.size,
            stored,
            record_id: meta.record_id,
        }),
    ))
}

/// Download a photo.
#[utoipa::path(
    get,
    path = "/v1/photos/{sha256}",
    tag = "photos",
    params(("sha256" = String, Path, description = "SHA-256 da foto (hex)")),
    responses(
        (status = 200, description = "Os bytes da foto, com o Content-Type do envio", content_type = "application/octet-stream"),
        (status = 404, description = "Foto inexistente", body = ErrorBody),
    )
)]
async fn get_photo(
    State(state): State<AppState>,
    auth: Auth,
    Path(sha256): Path<String>,
) -> Result<Response, AppError> {
    auth.require(roles::PHOTO_READERS)?;
    let sha = parse_hash(&sha256)?;
    let Some((meta, bytes)) = state.store().photo(sha).await? else {
        return Err(AppError::not_found("Foto não encontrada."));
    };
    let mut res = Body::from(bytes).into_response();
    let headers = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&meta.content_type) {
        headers.insert(CONTENT_TYPE, v);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", meta.sha256)) {
        headers.insert(ETAG, v);
    }
    headers.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=31536000, immutable"),
    );
    Ok(res)
}

/// Which of these photos the server already stores.
#[utoipa::path(
    post,
    path = "/v1/photos/have",
    tag = "photos",
    request_body = PhotoHaveRequest,
    responses(
        (status = 200, description = "Os hashes do pedido que o servidor já tem", body = PhotoHaveResponse),
        (status = 400, description = "Hash inválido", body = ErrorBody),
        (status = 422, description = "Mais de 1000 hashes", body = ErrorBody),
    )
)]
async fn photos_have(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<PhotoHaveRequest>,
) -> Result<Json<PhotoHaveResponse>, AppError> {
    auth.require(roles::PHOTO_UPLOADERS)?;
    if req.hashes.len() > HAVE_MAX {
        return Err(AppError::unprocessable(
            "too_many_hashes",
            format!("Pergunte por no máximo {HAVE_MAX} fotos de cada vez."),
        ));
    }
    let hashes = req
        .hashes
        .iter()
        .map(|h| parse_hash(h))
        .collect::<Result<Vec<_>, _>>()?;
    let have = state.store().photos_present(hashes).await?;
    Ok(Json(PhotoHaveResponse { have }))
}

pub(crate) fn routes(photo_limit: usize) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(put_photo, get_photo))
        .routes(routes!(photos_have))
        .layer(DefaultBodyLimit::max(photo_limit))
}
