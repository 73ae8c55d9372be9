//! `POST /v1/auth/login`, `POST /v1/auth/refresh`, `GET /v1/me`, `POST /v1/me/password`
//! (ADR 0007).
//!
//! Login: the password check of [`crate::auth::login`] — a per-address budget, failure budgets
//! counted before hashing (429, `Retry-After`), Argon2id in a bounded pool (429 `server_busy`
//! when full), an unknown user costing the same time and getting the same answer as a wrong
//! password. Then the device must be registered, not revoked, and belong to that user. Refresh
//! spends the same per-address budget. Both read their body under
//! [`crate::limits::LOGIN_BODY_LIMIT`], not the general limit: anyone may send them. The answer carries a
//! short-lived access token and a refresh token; refreshing spends the refresh token and returns
//! a new pair, and presenting a spent one ends every session of that login: its refresh tokens
//! at once, and its access tokens on their next request (each names its login, which the `Auth`
//! extractor checks).
//!
//! A password change (`POST /v1/me/password`, any signed-in user) runs
//! [`crate::auth::change::change_password`]: the current password checked as a login of the
//! caller is (a wrong one counts as a failed login), the new one by the rule of every new
//! password; then every other login of the user ends as a replayed refresh token ends one, and
//! the user's browser sessions too. Its body is read under the login limit as well.
//!
//! A login may carry the device's Ed25519 public key (the app always sends it): validated first
//! (422 `invalid_device_key`), then registered for the device once the password and device
//! checks pass (409 `device_key_taken` when another device registered it). The record sync
//! accepts a record's seal only with a key its device registered this way.

use axum::Json;
use axum::extract::{DefaultBodyLimit, FromRequest, Request, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::accounts::UserView;
use super::extract::{is_json, parse_json, read_body};
use super::openapi::named_schema;
use crate::auth::change::{Keep, change_password};
use crate::auth::login::{check_password, throttle};
use crate::auth::throttle::ClientAddr;
use crate::auth::tokens::{new_refresh_token, random_id, refresh_hash};
use crate::auth::{Auth, CurrentLogin, Role, roles};
use crate::error::{AppError, ErrorBody};
use crate::limits::LOGIN_BODY_LIMIT;
use crate::server::AppState;
use crate::store::{KeyRegistration, RefreshTokenRow, RotateOutcome, UserRow};

/// Credentials and the device they are used on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    pub username: String,
    pub password: String,
    /// A device registered to this user by an administrator.
    pub device_id: String,
    /// The device's Ed25519 public key (32 bytes, hex or base64), created on the device:
    /// registered for it so that the server can check the seals of the records it issues. A
    /// reinstalled app brings a new one; every key a device used is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_public_key: Option<String>,
}

/// A refresh token to spend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshRequest {
    pub refresh_token: String,
}

/// `POST /v1/me/password`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordChangeRequest {
    /// The password the user logs in with now.
    pub current_password: String,
    /// At least 8 characters, not the current one.
    pub new_password: String,
}

/// Tokens for a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenResponse {
    /// JWT for `Authorization: Bearer …`.
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Seconds until the access token expires.
    pub expires_in: i64,
    pub expires_at: DateTime<Utc>,
    /// Spend it at `/v1/auth/refresh` for a new pair; usable once.
    pub refresh_token: String,
    pub refresh_expires_at: DateTime<Utc>,
    pub user: UserView,
    pub device_id: String,
}

/// Who the caller is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Me {
    pub user_id: String,
    pub username: String,
    pub role: Role,
    pub stand_id: Option<String>,
    pub device_id: String,
}

named_schema!(
    LoginRequest => "LoginRequest",
    RefreshRequest => "RefreshRequest",
    PasswordChangeRequest => "PasswordChangeRequest",
    TokenResponse => "TokenResponse",
    Me => "Me",
);

async fn issue(
    state: &AppState,
    user: UserRow,
    device_id: String,
    family: String,
) -> Result<TokenResponse, AppError> {
    let now = state.clock().now();
    let (access, expires_at) = state.tokens().issue(&user, &device_id, &family, now)?;
    let (refresh, hash) = new_refresh_token()?;
    let refresh_expires_at = now
        + chrono::Duration::from_std(state.config().refresh_ttl)
            .unwrap_or_else(|_| chrono::Duration::days(30));
    state
        .store()
        .insert_refresh_token(RefreshTokenRow {
            token_hash: hash,
            family_id: family,
            user_id: user.id.clone(),
            device_id: device_id.clone(),
            issued_at: now,
            expires_at: refresh_expires_at,
        })
        .await?;
    Ok(TokenResponse {
        access_token: access,
        token_type: "Bearer".into(),
        expires_in: state.tokens().ttl_seconds(),
        expires_at,
        refresh_token: refresh,
        refresh_expires_at,
        user: UserView::from(&user),
        device_id,
    })
}

/// Log in on a registered device.
#[utoipa::path(
    post,
    path = "/v1/auth/login",
    tag = "auth",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Sessão aberta", body = TokenResponse),
        (status = 401, description = "Credenciais, dispositivo desconhecido, revogado ou de outro usuário", body = ErrorBody),
        (status = 409, description = "Chave do aparelho já registrada para outro dispositivo (`device_key_taken`)", body = ErrorBody),
        (status = 422, description = "Chave pública do aparelho malformada (`invalid_device_key`)", body = ErrorBody),
        (status = 429, description = "Muitas tentativas deste endereço (`too_many_requests`) ou sem sucesso para este usuário (`too_many_attempts`), ou servidor ocupado verificando senhas (`server_busy`); veja `Retry-After`", body = ErrorBody),
    )
)]
async fn login(
    State(state): State<AppState>,
    client: ClientAddr,
    LoginBody(req): LoginBody<LoginRequest>,
) -> Result<Json<TokenResponse>, AppError> {
    // A malformed key is refused before the password is even checked: nothing to register.
    let key = req
        .device_public_key
        .as_deref()
        .map(sync_core::records::seal::parse_public_key)
        .transpose()
        .map_err(|m| AppError::unprocessable("invalid_device_key", format!("{m}.")))?;
    let user = check_password(&state, &req.username, req.password, client).await??;
    let device = state.store().device(req.device_id.clone()).await?;
    let Some(device) = device else {
        return Err(AppError::unauthorized(
            "device_unknown",
            "Dispositivo não registrado: peça ao administrador que o registre.",
        ));
    };
    if device.revoked_at.is_some() {
        return Err(AppError::unauthorized(
            "device_revoked",
            "Este dispositivo foi revogado pelo administrador.",
        ));
    }
    if device.user_id != user.id {
        return Err(AppError::unauthorized(
            "device_not_yours",
            "Este dispositivo está registrado para outro usuário.",
        ));
    }
    if let Some(key) = key {
        let outcome = state
            .store()
            .register_device_key(device.id.clone(), hex::encode(key), state.clock().now())
            .await?;
        if outcome == KeyRegistration::OtherDevice {
            return Err(AppError::conflict(
                "device_key_taken",
                "Esta chave de assinatura já está registrada para outro dispositivo.",
            ));
        }
    }
    let family = random_id()?;
    tracing::info!(user = %user.id, device = %device.id, "login");
    Ok(Json(issue(&state, user, device.id, family).await?))
}

/// Spend a refresh token for a new pair of tokens.
#[utoipa::path(
    post,
    path = "/v1/auth/refresh",
    tag = "auth",
    request_body = RefreshRequest,
    responses(
        (status = 200, description = "Novos tokens", body = TokenResponse),
        (status = 401, description = "Token de renovação inválido, expirado, já usado, ou dispositivo revogado", body = ErrorBody),
        (status = 429, description = "Muitas tentativas deste endereço; veja `Retry-After`", body = ErrorBody),
    )
)]
async fn refresh(
    State(state): State<AppState>,
    client: ClientAddr,
    LoginBody(req): LoginBody<RefreshRequest>,
) -> Result<Json<TokenResponse>, AppError> {
    throttle(&state, client)?;
    let now = state.clock().now();
    let presented = req.refresh_token.trim();
    let (next, next_hash) = state.tokens().successor(presented)?;
    let next_expires_at = now
        + chrono::Duration::from_std(state.config().refresh_ttl)
            .unwrap_or_else(|_| chrono::Duration::days(30));
    let outcome = state
        .store()
        .rotate_refresh_token(refresh_hash(presented), next_hash, next_expires_at, now)
        .await?;
    let (user, device_id, family, next_expires_at) = match outcome {
        RotateOutcome::Rotated {
            user,
            device_id,
            family_id,
        } => (user, device_id, family_id, next_expires_at),
        RotateOutcome::Repeated {
            user,
            device_id,
            family_id,
            next_expires_at,
        } => {
            tracing::info!(
                user = %user.id,
                device = %device_id,
                "renovação repetida dentro do intervalo de reuso: a mesma sucessora"
            );
            (user, device_id, family_id, next_expires_at)
        }
        RotateOutcome::Unknown => {
            return Err(AppError::unauthorized(
                "refresh_invalid",
                "Token de renovação inválido. Faça login novamente.",
            ));
        }
        RotateOutcome::Expired => {
            return Err(AppError::unauthorized(
                "refresh_expired",
                "Token de renovação expirado. Faça login novamente.",
            ));
        }
        RotateOutcome::Reused => {
            tracing::warn!("token de renovação reutilizado: família revogada");
            return Err(AppError::unauthorized(
                "refresh_reused",
                "Token de renovação já usado: por segurança, as sessões deste login foram \
                 encerradas. Faça login novamente.",
            ));
        }
        RotateOutcome::DeviceRevoked => {
            return Err(AppError::unauthorized(
                "device_revoked",
                "Este dispositivo foi revogado pelo administrador.",
            ));
        }
        RotateOutcome::UserInactive => {
            return Err(AppError::unauthorized(
                "user_inactive",
                "Este usuário está desativado.",
            ));
        }
    };
    let (access, expires_at) = state.tokens().issue(&user, &device_id, &family, now)?;
    Ok(Json(TokenResponse {
        access_token: access,
        token_type: "Bearer".into(),
        expires_in: state.tokens().ttl_seconds(),
        expires_at,
        refresh_token: next,
        refresh_expires_at: next_expires_at,
        user: UserView::from(&user),
        device_id,
    }))
}

/// The caller, as the server sees them now.
#[utoipa::path(
    get,
    path = "/v1/me",
    tag = "auth",
    responses((status = 200, description = "O usuário e o dispositivo do token", body = Me))
)]
async fn me(auth: Auth) -> Result<Json<Me>, AppError> {
    auth.require(roles::ANY)?;
    Ok(Json(Me {
        user_id: auth.user_id,
        username: auth.username,
        role: auth.role,
        stand_id: auth.stand_id,
        device_id: auth.device_id,
    }))
}

/// Change the caller's own password; every other login of the user ends.
#[utoipa::path(
    post,
    path = "/v1/me/password",
    tag = "auth",
    request_body = PasswordChangeRequest,
    responses(
        (status = 204, description = "Senha alterada; as outras sessões do usuário foram encerradas"),
        (status = 409, description = "A senha foi alterada por outra sessão durante o pedido (`password_changed`)", body = ErrorBody),
        (status = 413, description = "Corpo maior que o de um login", body = ErrorBody),
        (status = 422, description = "Senha atual errada (`wrong_password`, conta como login sem sucesso), nova senha curta (`weak_password`) ou igual à atual (`same_password`)", body = ErrorBody),
        (status = 429, description = "Os limites do login: muitas tentativas deste endereço (`too_many_requests`) ou sem sucesso para este usuário (`too_many_attempts`), ou servidor ocupado (`server_busy`); veja `Retry-After`", body = ErrorBody),
    )
)]
async fn change_my_password(
    State(state): State<AppState>,
    client: ClientAddr,
    login: CurrentLogin,
    LoginBody(req): LoginBody<PasswordChangeRequest>,
) -> Result<StatusCode, AppError> {
    login.auth.require(roles::ANY)?;
    change_password(
        &state,
        &login.auth,
        req.current_password,
        req.new_password,
        client,
        Keep::Login(login.family),
    )
    .await??;
    Ok(StatusCode::NO_CONTENT)
}

/// A JSON body of at most [`LOGIN_BODY_LIMIT`] bytes (the routes' `DefaultBodyLimit` says the
/// same): anyone may send a login, so it is read under a limit sized for a login.
#[derive(Debug)]
struct LoginBody<T>(T);

impl<T: serde::de::DeserializeOwned> FromRequest<AppState> for LoginBody<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        if !is_json(req.headers()) {
            return Err(AppError::unsupported_media_type("application/json"));
        }
        let bytes = read_body(req, state, LOGIN_BODY_LIMIT).await?;
        parse_json(&bytes).map(LoginBody)
    }
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(login))
        .routes(routes!(refresh))
        .routes(routes!(change_my_password))
        .layer(DefaultBodyLimit::max(LOGIN_BODY_LIMIT))
        .routes(routes!(me))
}
