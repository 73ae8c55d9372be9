//! "Change my password", for every signed-in user: the API's `POST /v1/me/password` and the
//! office's page `/escritorio/senha` both call [`change_password`], so both have the same rules,
//! limits and answers.
//!
//! Order, cheapest refusal first:
//! 1. the new password's rules, on the text alone (nothing hashed, nothing counted): the rule of
//!    every new password ([`super::password::check_new_password`], as for a created account) —
//!    [`ChangeRefusal::Weak`]; the same as the current one typed — [`ChangeRefusal::Same`];
//! 2. the current password checked exactly as a login of this user is
//!    ([`super::login::check_password`]: the address budget, the failure budgets, one Argon2id
//!    verification in the bounded pool). A wrong one is a failed login of this user (the fifth
//!    locks the login too) — [`ChangeRefusal::Wrong`]; a budget spent or the pool full is the
//!    login's own refusal (429);
//! 3. the new password hashed in the bounded pool, then stored in one transaction with the
//!    revocation of every refresh token of the user but the caller's login, and the audit row
//!    `user.password.change` (`Store::change_password`). The write compares the old hash, so
//!    two changes racing cannot both win — [`ChangeRefusal::Stale`];
//! 4. the user's browser sessions of the office pages ended, but the caller's
//!    ([`crate::web::Sessions`]). The other logins' access tokens are refused at their next
//!    request, like those of a login whose spent refresh token was replayed.

use super::Auth;
use super::login::{Refusal, check_password};
use super::password::{WeakPassword, check_new_password};
use super::throttle::ClientAddr;
use crate::error::AppError;
use crate::server::AppState;

/// Which session of the user survives the change: the caller's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// An API login (refresh-token family): the user's browser sessions all end.
    Login(String),
    /// A browser session of the office pages (its key): every API login of the user ends.
    WebSession(String),
}

/// Why a password was not changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeRefusal {
    /// The new password breaks the rule of every new password.
    Weak,
    /// The new password is the current one.
    Same,
    /// The current password is not the one typed.
    Wrong,
    /// The current password was not checked: the login's own refusal (429).
    Check(Refusal),
    /// Another change replaced the password while this one was checked.
    Stale,
}

impl ChangeRefusal {
    /// For people, in Portuguese: one sentence.
    pub fn message(self) -> String {
        match self {
            ChangeRefusal::Weak => AppError::from(WeakPassword).message,
            ChangeRefusal::Same => String::from("A nova senha deve ser diferente da atual."),
            ChangeRefusal::Wrong => String::from("A senha atual não confere."),
            ChangeRefusal::Check(r) => r.message(),
            ChangeRefusal::Stale => String::from(
                "A senha acabou de ser alterada em outra sessão: confira e tente de novo.",
            ),
        }
    }
}

impl From<ChangeRefusal> for AppError {
    fn from(r: ChangeRefusal) -> Self {
        match r {
            ChangeRefusal::Weak => WeakPassword.into(),
            ChangeRefusal::Same => AppError::unprocessable("same_password", r.message()),
            ChangeRefusal::Wrong => AppError::unprocessable("wrong_password", r.message()),
            ChangeRefusal::Check(login) => login.into(),
            ChangeRefusal::Stale => AppError::conflict("password_changed", r.message()),
        }
    }
}

/// Changes `who`'s password from `current` to `new` (module doc). `Err` only for a store or
/// pool failure.
pub async fn change_password(
    state: &AppState,
    who: &Auth,
    current: String,
    new: String,
    client: ClientAddr,
    keep: Keep,
) -> Result<Result<(), ChangeRefusal>, AppError> {
    if check_new_password(&new).is_err() {
        return Ok(Err(ChangeRefusal::Weak));
    }
    if new == current {
        return Ok(Err(ChangeRefusal::Same));
    }
    let user = match check_password(state, &who.username, current, client).await? {
        // Usernames never change, so the name finds the caller; the id is checked all the same.
        Ok(user) if user.id == who.user_id => user,
        Ok(_) | Err(Refusal::BadCredentials) => return Ok(Err(ChangeRefusal::Wrong)),
        Err(r) => return Ok(Err(ChangeRefusal::Check(r))),
    };
    let hash = state.hash_pool().hash(new).await?;
    let now = state.clock().now();
    let (keep_family, keep_web) = match keep {
        Keep::Login(family) => (Some(family), None),
        Keep::WebSession(key) => (None, Some(key)),
    };
    let changed = state
        .store()
        .change_password(
            user.id.clone(),
            user.password_hash,
            hash,
            keep_family,
            who.actor(now),
        )
        .await?;
    if !changed {
        return Ok(Err(ChangeRefusal::Stale));
    }
    let pages = state
        .web_sessions()
        .end_user(&user.id, keep_web.as_deref())
        .await?;
    tracing::info!(user = %user.id, web_sessions_ended = pages, "senha alterada");
    Ok(Ok(()))
}
