//! Accounts and devices: `POST/GET /v1/users`, `POST /v1/users/{id}/role`,
//! `POST /v1/users/{id}/deactivate`, `POST /v1/users/{id}/reactivate`,
//! `POST /v1/users/{id}/password-reset`, `POST/GET /v1/devices`,
//! `POST /v1/devices/enrolment-codes`, `POST /v1/devices/{id}/revoke` (admin),
//! `POST /v1/devices/enrol` (public: the app with an enrolment code), and
//! `POST /v1/devices/{id}/number-blocks` (the device's own user, or admin).
//!
//! The administrator's operations are [`crate::auth::admin`]'s, shared with the pages. A
//! password-reset code is used at the page `/redefinir-senha/{code}` (`web::users`), not
//! through the API: the user has no login then. An enrolment code is exchanged by the app at
//! `POST /v1/devices/enrol` for a device registration with a server-made UUID id, so nobody
//! types a device id; the body is read under [`crate::limits::ENROL_BODY_LIMIT`] and the
//! attempt counted in the per-address budget of codes before the code is looked up.
//!
//! A device is registered by an administrator for one user; only that user logs in on it.
//! Revoking it revokes its refresh tokens in the same transaction, and the auth extractor's
//! per-request device check refuses its access tokens from the next request on. Number blocks
//! are leased only to active devices, each after the highest number ever leased, so two blocks
//! never overlap (see `store::sqlite::field`).

use axum::Json;
use axum::extract::{DefaultBodyLimit, FromRequest, Path, Request, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::extract::{JsonBody, OptionalJsonBody, is_json, parse_json, read_body};
use super::openapi::named_schema;
use crate::auth::admin::{self, check_label};
use crate::auth::throttle::ClientAddr;
use crate::auth::tokens::random_id;
use crate::auth::{Auth, Role, roles};
use crate::error::{AppError, ErrorBody};
use crate::limits::ENROL_BODY_LIMIT;
use crate::server::AppState;
use crate::store::{CodePurpose, DeviceRow, NewDevice, UserRow};

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

/// `POST /v1/users/{id}/role`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleChangeRequest {
    pub role: Role,
    /// Required for a coordinator (a stand of the registry), refused for other roles.
    #[serde(default)]
    pub stand_id: Option<String>,
}

/// A one-time code just made (password reset or device enrolment): shown this once, never
/// stored as such.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OneTimeCodeView {
    pub user_id: String,
    /// 32 hexadecimal digits in groups of four; spaces, hyphens and case do not matter.
    pub code: String,
    /// The page where the user uses a password-reset code (absent for an enrolment code).
    #[serde(default)]
    pub url: Option<String>,
    pub expires_at: DateTime<Utc>,
}

/// `POST /v1/devices/enrolment-codes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrolmentCodeRequest {
    /// The user who will log in on the enrolled device.
    pub user_id: String,
}

/// `POST /v1/devices/enrol`, sent by the app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnrolRequest {
    /// The enrolment code the administrator generated.
    pub code: String,
    /// How the device is called on the devices page (1–80 characters).
    pub device_name: String,
}

/// The device registered by an enrolment, and whose it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnrolmentView {
    /// The device's id, to log in with (a UUID, also its id in its records).
    pub device_id: String,
    pub device: DeviceView,
    pub user: UserView,
}

named_schema!(
    RoleChangeRequest => "RoleChangeRequest",
    OneTimeCodeView => "OneTimeCodeView",
    EnrolmentCodeRequest => "EnrolmentCodeRequest",
    EnrolRequest => "EnrolRequest",
    EnrolmentView => "EnrolmentView",
    UserView => "UserView",
    NewUserRequest => "NewUserRequest",
    NewDeviceRequest => "NewDeviceRequest",
    DeviceView => "DeviceView",
    NumberBlockRequest => "NumberBlockRequest",
    NumberBlockView => "NumberBlockView",
);

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
    let user = admin::create_user(
        &state,
        &auth,
        &req.username,
        &req.display_name,
        req.password,
        req.role,
        req.stand_id,
    )
    .await?;
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
    let label = check_label(&req.label).map_err(|m| AppError::unprocessable("invalid_label", m))?;
    let device = NewDevice {
        id,
        user_id: req.user_id,
        label,
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

/// Change a user's role (and a coordinator's stand). Not one's own.
#[utoipa::path(
    post,
    path = "/v1/users/{id}/role",
    tag = "accounts",
    params(("id" = String, Path, description = "Usuário")),
    request_body = RoleChangeRequest,
    responses(
        (status = 200, description = "Perfil alterado", body = UserView),
        (status = 404, description = "Usuário inexistente", body = ErrorBody),
        (status = 422, description = "Perfil ou ponto inválido, ou a própria conta", body = ErrorBody),
    )
)]
async fn change_role(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<RoleChangeRequest>,
) -> Result<Json<UserView>, AppError> {
    let user = admin::set_role(&state, &auth, &id, req.role, req.stand_id).await?;
    Ok(Json(UserView::from(&user)))
}

/// Deactivate a user: no more logins; their refresh tokens and browser sessions end at once,
/// their access tokens are refused from the next request. Idempotent. Not one's own.
#[utoipa::path(
    post,
    path = "/v1/users/{id}/deactivate",
    tag = "accounts",
    params(("id" = String, Path, description = "Usuário")),
    responses(
        (status = 200, description = "Desativado", body = UserView),
        (status = 404, description = "Usuário inexistente", body = ErrorBody),
        (status = 422, description = "A própria conta", body = ErrorBody),
    )
)]
async fn deactivate_user(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<UserView>, AppError> {
    let user = admin::set_active(&state, &auth, &id, false).await?;
    Ok(Json(UserView::from(&user)))
}

/// Reactivate a user (they log in with their password again). Idempotent.
#[utoipa::path(
    post,
    path = "/v1/users/{id}/reactivate",
    tag = "accounts",
    params(("id" = String, Path, description = "Usuário")),
    responses(
        (status = 200, description = "Reativado", body = UserView),
        (status = 404, description = "Usuário inexistente", body = ErrorBody),
    )
)]
async fn reactivate_user(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<UserView>, AppError> {
    let user = admin::set_active(&state, &auth, &id, true).await?;
    Ok(Json(UserView::from(&user)))
}

/// The page where a reset code is used, on this server's public address.
pub(crate) fn reset_url(state: &AppState, code: &str) -> String {
    let base = state.public_origins().first().cloned().unwrap_or_default();
    format!("{base}/redefinir-senha/{code}")
}

/// Make a one-time password-reset code for a user (it replaces their unused one). The user
/// opens `url` and chooses a new password; every session of theirs then ends.
#[utoipa::path(
    post,
    path = "/v1/users/{id}/password-reset",
    tag = "accounts",
    params(("id" = String, Path, description = "Usuário")),
    responses(
        (status = 201, description = "Código gerado", body = OneTimeCodeView),
        (status = 404, description = "Usuário inexistente", body = ErrorBody),
        (status = 422, description = "Usuário desativado", body = ErrorBody),
    )
)]
async fn password_reset_code(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<(StatusCode, Json<OneTimeCodeView>), AppError> {
    let issued = admin::issue_code(&state, &auth, &id, CodePurpose::PasswordReset).await?;
    Ok((
        StatusCode::CREATED,
        Json(OneTimeCodeView {
            url: Some(reset_url(&state, &issued.code)),
            user_id: issued.user.id,
            code: issued.code,
            expires_at: issued.expires_at,
        }),
    ))
}

/// Make a one-time enrolment code for a user (it replaces their unused one): the app exchanges
/// it at `POST /v1/devices/enrol` for its device registration.
#[utoipa::path(
    post,
    path = "/v1/devices/enrolment-codes",
    tag = "accounts",
    request_body = EnrolmentCodeRequest,
    responses(
        (status = 201, description = "Código gerado", body = OneTimeCodeView),
        (status = 404, description = "Usuário inexistente", body = ErrorBody),
        (status = 422, description = "Usuário desativado", body = ErrorBody),
    )
)]
async fn enrolment_code(
    State(state): State<AppState>,
    auth: Auth,
    JsonBody(req): JsonBody<EnrolmentCodeRequest>,
) -> Result<(StatusCode, Json<OneTimeCodeView>), AppError> {
    let issued =
        admin::issue_code(&state, &auth, &req.user_id, CodePurpose::DeviceEnrolment).await?;
    Ok((
        StatusCode::CREATED,
        Json(OneTimeCodeView {
            user_id: issued.user.id,
            code: issued.code,
            url: None,
            expires_at: issued.expires_at,
        }),
    ))
}

/// A JSON body of at most [`ENROL_BODY_LIMIT`] bytes (the route's `DefaultBodyLimit` says the
/// same): anyone may send an enrolment.
#[derive(Debug)]
struct EnrolBody(EnrolRequest);

impl FromRequest<AppState> for EnrolBody {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        if !is_json(req.headers()) {
            return Err(AppError::unsupported_media_type("application/json"));
        }
        let bytes = read_body(req, state, ENROL_BODY_LIMIT).await?;
        parse_json(&bytes).map(EnrolBody)
    }
}

/// Exchange an enrolment code for a device registration (no login: the code is the
/// credential). Log in next with `device_id`.
#[utoipa::path(
    post,
    path = "/v1/devices/enrol",
    tag = "accounts",
    request_body = EnrolRequest,
    responses(
        (status = 201, description = "Dispositivo cadastrado", body = EnrolmentView),
        (status = 413, description = "Corpo grande demais", body = ErrorBody),
        (status = 422, description = "Código inexistente, usado, expirado, ou nome inválido", body = ErrorBody),
        (status = 429, description = "Tentativas demais deste endereço", body = ErrorBody),
    )
)]
async fn enrol_device(
    State(state): State<AppState>,
    client: ClientAddr,
    EnrolBody(req): EnrolBody,
) -> Result<(StatusCode, Json<EnrolmentView>), AppError> {
    let (device, user) = admin::enrol(&state, client, &req.code, &req.device_name).await??;
    Ok((
        StatusCode::CREATED,
        Json(EnrolmentView {
            device_id: device.id.clone(),
            device: DeviceView::from(device),
            user: UserView::from(&user),
        }),
    ))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_user, list_users))
        .routes(routes!(change_role))
        .routes(routes!(deactivate_user))
        .routes(routes!(reactivate_user))
        .routes(routes!(password_reset_code))
        .routes(routes!(register_device, list_devices))
        .routes(routes!(enrolment_code))
        .routes(routes!(revoke_device))
        .routes(routes!(lease_numbers))
        .merge(
            OpenApiRouter::new()
                .routes(routes!(enrol_device))
                .layer(DefaultBodyLimit::max(ENROL_BODY_LIMIT)),
        )
}
