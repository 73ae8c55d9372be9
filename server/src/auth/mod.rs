//! Authentication and roles (ADR 0007).
//!
//! Flow of an authenticated request: the [`Auth`] extractor reads `Authorization: Bearer …`,
//! checks the JWT's signature, issuer and expiry ([`tokens`]), then runs one point query on the
//! device, its user and the token's login ([`crate::store::Store::session`]): a revoked device
//! is refused at once (401 `device_revoked`), as is a deactivated user, and a token whose login
//! was ended because a spent refresh token was replayed (401 `session_revoked`); the role and
//! stand are taken from the database, not from the token. Handlers then state who may call them on their first line:
//! `auth.require(roles::REGISTRY_WRITERS)?`.
//!
//! Login ([`crate::api::auth`], and the office's form) goes through [`login::check_password`]:
//! a per-address budget ([`throttle`]), failure budgets per (username, address) and per
//! username counted before hashing ([`limiter`]), and Argon2id in a bounded pool
//! ([`password`]); then the API checks that the device is registered to that user.
//!
//! A password change ([`change`], from the API and the office's page) checks the current
//! password through that same [`login::check_password`], then ends the user's other logins.
//!
//! The administrator's operations ([`admin`], from the API and the pages): role and stand,
//! deactivation (every session of the user ends at once), and one-time codes — a password reset
//! the user redeems at `/redefinir-senha/{code}`, a device enrolment the app redeems at
//! `POST /v1/devices/enrol` — each presentation counted in its own per-address budget.
//!
//! Who may do what is [`roles`]: office writes (registry, record procedure, law parameters) are
//! [`roles::OFFICE_WRITERS`], the office only; the administrator reads them and owns accounts
//! and devices ([`roles::ADMIN`]).

pub mod admin;
pub mod change;
pub mod limiter;
pub mod login;
pub mod password;
pub mod proxy;
pub mod throttle;
pub mod tokens;

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use crate::error::AppError;
use crate::server::AppState;
use crate::service::ServiceError;
use crate::store::Actor;

/// Who a user is to the system (defined with the accounts the store keeps).
pub use crate::store::Role;

/// The role sets the handlers require.
pub mod roles {
    use super::Role;

    /// Every authenticated user.
    pub const ANY: &[Role] = &[Role::Officer, Role::Coordinator, Role::Office, Role::Admin];
    /// Who acts for the Unidade de Transportes: writes the registry (permits, people,
    /// vehicles, stands, fines and payments, imports), the record procedure (office events,
    /// conflicts, duplicates, notifications) and the law's parameters. The office only: the
    /// administrator owns accounts and devices and reads the office's work without changing
    /// it, so that every act of the procedure is a clerk's, answerable under the law. Every
    /// office write of the API and of the pages requires this one set (the pages through
    /// `web::Posted`'s default).
    pub const OFFICE_WRITERS: &[Role] = &[Role::Office];
    /// Who reads the office's work (records, registry pages, audit): the office and the
    /// administrator.
    pub const OFFICE_READERS: &[Role] = &[Role::Office, Role::Admin];
    /// Who changes the registry: [`OFFICE_WRITERS`].
    pub const REGISTRY_WRITERS: &[Role] = OFFICE_WRITERS;
    /// Accounts and devices.
    pub const ADMIN: &[Role] = &[Role::Admin];
    /// Who uploads evidence photos.
    pub const PHOTO_UPLOADERS: &[Role] = &[Role::Officer, Role::Coordinator, Role::Office];
    /// Who reads evidence photos.
    pub const PHOTO_READERS: &[Role] = &[Role::Office, Role::Admin];
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    pub user_id: String,
    pub username: String,
    pub role: Role,
    /// The coordinator's stand.
    pub stand_id: Option<String>,
    pub device_id: String,
}

impl Auth {
    /// `Ok` when the caller's role is one of `allowed`; [`ServiceError::Forbidden`] (403)
    /// otherwise.
    pub fn require(&self, allowed: &'static [Role]) -> Result<(), ServiceError> {
        if allowed.contains(&self.role) {
            Ok(())
        } else {
            Err(ServiceError::Forbidden {
                role: self.role,
                allowed,
            })
        }
    }

    /// The caller as the audit chain records it.
    pub fn actor(&self, at: chrono::DateTime<chrono::Utc>) -> Actor {
        Actor {
            user_id: Some(self.user_id.clone()),
            device_id: Some(self.device_id.clone()),
            at,
        }
    }
}

fn bearer(parts: &Parts) -> Result<&str, AppError> {
    let Some(value) = parts.headers.get(AUTHORIZATION) else {
        return Err(AppError::unauthorized(
            "token_missing",
            "Autenticação necessária: envie o cabeçalho Authorization: Bearer <token>.",
        ));
    };
    let text = value.to_str().unwrap_or_default().trim();
    match text.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim())
        }
        _ => Err(AppError::unauthorized(
            "token_invalid",
            "Cabeçalho Authorization malformado: use Bearer <token>.",
        )),
    }
}

/// The caller and the login (refresh-token family) its access token belongs to: for the one
/// handler that must tell the caller's login from the user's others (a password change ends
/// those, not this one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentLogin {
    pub auth: Auth,
    /// The refresh-token family of the access token.
    pub family: String,
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        CurrentLogin::from_request_parts(parts, state)
            .await
            .map(|l| l.auth)
    }
}

impl FromRequestParts<AppState> for CurrentLogin {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let token = bearer(parts)?;
        let claims = state.tokens().verify(token, state.clock().now())?;
        let session = state
            .store()
            .session(
                claims.sub.clone(),
                claims.dev.clone(),
                Some(claims.fam.clone()),
            )
            .await?;
        let Some(session) = session else {
            return Err(AppError::unauthorized(
                "token_invalid",
                "O usuário ou o dispositivo deste token não existe mais.",
            ));
        };
        if session.device_revoked {
            return Err(AppError::unauthorized(
                "device_revoked",
                "Este dispositivo foi revogado pelo administrador: não pode mais acessar o sistema.",
            ));
        }
        if !session.user_active {
            return Err(AppError::unauthorized(
                "user_inactive",
                "Este usuário está desativado.",
            ));
        }
        if !session.family_live {
            return Err(AppError::unauthorized(
                "session_revoked",
                "Esta sessão foi encerrada por segurança: faça login novamente.",
            ));
        }
        if session.device_user_id != claims.sub {
            return Err(AppError::unauthorized(
                "token_invalid",
                "O dispositivo deste token pertence a outro usuário.",
            ));
        }
        Ok(CurrentLogin {
            auth: Auth {
                user_id: claims.sub,
                username: claims.usr,
                role: session.role,
                stand_id: session.stand_id,
                device_id: claims.dev,
            },
            family: claims.fam,
        })
    }
}
