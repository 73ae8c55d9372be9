//! Accounts and devices: `POST/GET /v1/users`, `POST/GET /v1/devices`,
//! `POST /v1/devices/{id}/revoke` (admin), and `POST /v1/devices/{id}/number-blocks` (the
//! device's own user, or admin).
//!
//! A device is registered by an administrator for one user; only that user logs in on it.
//! Revoking it revokes its refresh tokens in the same transaction, and the auth extractor's
//! per-request device check refuses its access tokens from the next request on. Number blocks
//! are leased only to active devices, each after the highest number ever leased, so two blocks
//! never overlap (see `store::sqlite::field`).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{JsonBody, OptionalJsonBody};
use super::openapi::named_schema;
use crate::auth::password::check_new_password;
use crate::auth::tokens::random_id;
use crate::auth::{Auth, Role, roles};
use crate::error::{AppError, ErrorBody};
use crate::server::AppState;
use crate::store::{DeviceRow, NewDevice, UserRow};

/// A user as the API shows it (never the password hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UserView {
    pub id: String,
    pub username: String,
    pub display_name: String,
    pub role: Role,
    /// The coordinator's stand.
    pub stand_id: Option<String>,
    pub active: bool,
    pub created_at: DateTime<Utc>,
}

impl From<&UserRow> for UserView {
    fn from(u: &UserRow) -> Self {
        Self {
            id: u.id.clone(),
            username: u.username.clone(),
            display_name: u.display_name.clone(),
            role: u.role,
            stand_id: u.stand_id.clone(),
            active: u.active,
            created_at: u.created_at,
        }
    }
}

/// `POST /v1/users`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewUserRequest {
    /// 3–32 of `a-z`, `0-9`, `.`, `_`, `-` (stored lower-cased).
    pub username: String,
    pub display_name: String,
    /// At least 8 characters.
    pub password: String,
    pub role: Role,
    /// Required for a coordinator (a stand of the registry), refused for other roles.
    #[serde(default)]
    pub stand_id: Option<String>,
}

/// `POST /v1/devices`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewDeviceRequest {
    /// Chosen by the app or the admin; generated when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// The one user who will log in on it.
    pub user_id: String,
    pub label: String,
}

/// A device as the API shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceView {
    pub id: String,
    pub user_id: String,
    pub label: String,
    pub registered_at: DateTime<Utc>,
    pub registered_by: Option<String>,
    pub revoked: bool,
    pub revoked_at: Option<DateTime<Utc>>,
    pub revoked_by: Option<String>,
}

impl From<DeviceRow> for DeviceView {
    fn from(d: DeviceRow) -> Self {
        Self {
            revoked: d.revoked_at.is_some(),
            id: d.id,
            user_id: d.user_id,
            label: d.label,
            registered_at: d.registered_at,
            registered_by: d.registered_by,
            revoked_at: d.revoked_at,
            revoked_by: d.revoked_by,
        }
    }
}

/// `POST /v1/devices/{id}/number-blocks` (body optional).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NumberBlockRequest {
    /// How many numbers (default 500, at most the server's maximum).
    #[serde(default)]
    pub size: Option<u64>,
}

/// A leased block of auto numbers, both ends included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NumberBlockView {
    pub device_id: String,
    pub start: u64,
    pub end: u64,
    pub size: u64,
    pub leased_at: DateTime<Utc>,
}

named_schema!(
    UserView => "UserView",
    NewUserRequest => "NewUserRequest",
    NewDeviceRequest => "NewDeviceRequest",
    DeviceView => "DeviceView",
    NumberBlockRequest => "NumberBlockRequest",
    NumberBlockView => "NumberBlockView",
);

fn valid_username(u: &str) -> bool {
    (3..=32).contains(&u.len())
        && u.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

fn valid_device_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Create a user.
#[utoipa::path(
    post,
    path = "/v1/users",
    tag = "accounts",
    request_body = NewUserRequest,
    responses(
        (status = 201, description = "Criado", body = UserView),
        (status = 409, description = "Nome de usuário em uso", body = ErrorBody),
        (status = 422, description = "Dados inválidos", body = ErrorBody),
    )
)]
async fn create_user(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<NewUserRequest>,
) -> Result<(StatusCode, Json<UserView>), AppError> {
    auth.require(roles::ADMIN)?;
    let username = req.username.trim().to_lowercase();
    if !valid_username(&username) {
        return Err(AppError::unprocessable(
            "invalid_username",
            "Nome de usuário inválido: 3 a 32 letras minúsculas, dígitos, '.', '_' ou '-'.",
        ));
    }
    check_new_password(&req.password)?;
    if req.display_name.trim().is_empty() {
        return Err(AppError::unprocessable(
            "invalid_name",
            "Informe o nome de exibição.",
        ));
    }
    match (req.role, &req.stand_id) {
        (Role::Coordinator, None) => {
            return Err(AppError::unprocessable(
                "stand_required",
                "Um coordenador precisa do ponto que coordena (stand_id).",
            ));
        }
        (Role::Coordinator, Some(stand)) => {
            let reg = state.store().registry().await?;
            if !reg.stands.iter().any(|s| &s.id == stand) {
                return Err(AppError::unprocessable(
                    "unknown_stand",
                    format!("O ponto {stand} não consta do cadastro."),
                ));
            }
        }
        (_, Some(_)) => {
            return Err(AppError::unprocessable(
                "stand_not_allowed",
                "Só coordenadores têm ponto (stand_id).",
            ));
        }
        (_, None) => {}
    }
    // In the bounded pool like every login's verification.
    let hash = state.hash_pool().hash(req.password).await?;
    let now = state.clock().now();
    let user = UserRow {
        id: format!("u-{}", random_id()?),
        username,
        display_name: req.display_name.trim().to_owned(),
        role: req.role,
        stand_id: req.stand_id,
        password_hash: hash,
        active: true,
        created_at: now,
    };
    let user = state.store().create_user(user, auth.actor(now)).await?;
    Ok((StatusCode::CREATED, Json(UserView::from(&user))))
}

/// List users.
#[utoipa::path(
    get,
    path = "/v1/users",
    tag = "accounts",
    responses((status = 200, description = "Usuários", body = Vec<UserView>))
)]
async fn list_users(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<UserView>>, AppError> {
    auth.require(roles::ADMIN)?;
    let users = state.store().list_users().await?;
    Ok(Json(users.iter().map(UserView::from).collect()))
}

/// Register a device for a user.
#[utoipa::path(
    post,
    path = "/v1/devices",
    tag = "accounts",
    request_body = NewDeviceRequest,
    responses(
        (status = 201, description = "Registrado", body = DeviceView),
        (status = 404, description = "Usuário inexistente", body = ErrorBody),
        (status = 409, description = "Identificador em uso", body = ErrorBody),
    )
)]
async fn register_device(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<NewDeviceRequest>,
) -> Result<(StatusCode, Json<DeviceView>), AppError> {
    auth.require(roles::ADMIN)?;
    let id = match req.id {
        Some(id) => id.trim().to_owned(),
        None => format!("dev-{}", random_id()?),
    };
    if !valid_device_id(&id) {
        return Err(AppError::unprocessable(
            "invalid_id",
            "Identificador de dispositivo inválido: até 64 letras, dígitos, '.', '_' ou '-'.",
        ));
    }
    if req.label.trim().is_empty() {
        return Err(AppError::unprocessable(
            "invalid_label",
            "Informe uma descrição do dispositivo.",
        ));
    }
    let device = NewDevice {
        id,
        user_id: req.user_id,
        label: req.label.trim().to_owned(),
    };
    let now = state.clock().now();
    let row = state
        .store()
        .register_device(device, auth.actor(now))
        .await?;
    Ok((StatusCode::CREATED, Json(DeviceView::from(row))))
}

/// List devices.
#[utoipa::path(
    get,
    path = "/v1/devices",
    tag = "accounts",
    responses((status = 200, description = "Dispositivos", body = Vec<DeviceView>))
)]
async fn list_devices(
    State(state): State<AppState>,
    auth: Auth,
) -> Result<Json<Vec<DeviceView>>, AppError> {
    auth.require(roles::ADMIN)?;
    let devices = state.store().list_devices().await?;
    Ok(Json(devices.into_iter().map(DeviceView::from).collect()))
}

/// Revoke a device: its tokens stop working at once. Idempotent.
#[utoipa::path(
    post,
    path = "/v1/devices/{id}/revoke",
    tag = "accounts",
    params(("id" = String, Path, description = "Dispositivo")),
    responses(
        (status = 200, description = "Revogado", body = DeviceView),
        (status = 404, description = "Dispositivo inexistente", body = ErrorBody),
    )
)]
async fn revoke_device(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<DeviceView>, AppError> {
    auth.require(roles::ADMIN)?;
    let now = state.clock().now();
    let row = state.store().revoke_device(id, auth.actor(now)).await?;
    tracing::info!(device = %row.id, "dispositivo revogado");
    Ok(Json(DeviceView::from(row)))
}

/// Lease a block of auto numbers to a device.
#[utoipa::path(
    post,
    path = "/v1/devices/{id}/number-blocks",
    tag = "accounts",
    params(("id" = String, Path, description = "Dispositivo que recebe o bloco")),
    request_body(content = NumberBlockRequest, description = "Opcional: tamanho do bloco"),
    responses(
        (status = 201, description = "Bloco concedido", body = NumberBlockView),
        (status = 403, description = "O dispositivo não é do usuário", body = ErrorBody),
        (status = 404, description = "Dispositivo inexistente", body = ErrorBody),
        (status = 409, description = "Dispositivo revogado", body = ErrorBody),
    )
)]
async fn lease_numbers(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    OptionalJsonBody(req): OptionalJsonBody<NumberBlockRequest>,
) -> Result<(StatusCode, Json<NumberBlockView>), AppError> {
    auth.require(roles::ANY)?;
    let device = state
        .store()
        .device(id.clone())
        .await?
        .ok_or_else(|| AppError::not_found(format!("Dispositivo {id} não encontrado.")))?;
    if auth.role != Role::Admin && device.user_id != auth.user_id {
        return Err(AppError::forbidden(
            "Só o usuário do dispositivo ou um administrador pode pedir números para ele.",
        ));
    }
    let config = state.config();
    let size = req
        .unwrap_or_default()
        .size
        .unwrap_or(config.number_block_size);
    if size == 0 || size > config.number_block_max {
        return Err(AppError::unprocessable(
            "invalid_size",
            format!(
                "O tamanho do bloco deve estar entre 1 e {}.",
                config.number_block_max
            ),
        ));
    }
    let now = state.clock().now();
    let block = state
        .store()
        .lease_numbers(id, size, auth.actor(now))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(NumberBlockView {
            size: block.end - block.start + 1,
            device_id: block.device_id,
            start: block.start,
            end: block.end,
            leased_at: block.leased_at,
        }),
    ))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_user, list_users))
        .routes(routes!(register_device, list_devices))
        .routes(routes!(revoke_device))
        .routes(routes!(lease_numbers))
}
