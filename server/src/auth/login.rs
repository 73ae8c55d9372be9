//! The password check of every login: the API's `POST /v1/auth/login` and the office's login
//! form call [`check_password`], so both have the same limits and the same answers.
//!
//! Order, cheapest refusal first, and nothing hashed before it is counted:
//! 1. the client address's budget ([`super::throttle`]) — 429 [`Refusal::Throttled`];
//! 2. one attempt reserved from the (username, address) and username failure budgets, kept in
//!    the store so that every server node counts the same attempts ([`super::limiter`]) — 429
//!    [`Refusal::Locked`] when none is left;
//! 3. the user read, then one Argon2id verification in the bounded pool
//!    ([`super::password::HashPool`]), against the dummy hash when the user does not exist —
//!    429 [`Refusal::Busy`] (and the attempt given back) when no slot frees in time;
//! 4. right password of an active user: the attempt is settled as a success; otherwise it stays
//!    counted, and the one answer for a wrong password, an unknown and an inactive user is
//!    [`Refusal::BadCredentials`] (or [`Refusal::Locked`] when that failure spent the budget).

use super::limiter::username_key;
use super::throttle::ClientAddr;
use crate::error::AppError;
use crate::server::AppState;
use crate::store::UserRow;

/// Why a login was refused before or by the password check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The client address spent its attempts.
    Throttled { retry_after: u64 },
    /// The username (from this address, or from everywhere) spent its failures.
    Locked { retry_after: u64 },
    /// No password-hashing slot freed in time.
    Busy { retry_after: u64 },
    /// Wrong password, unknown user or inactive user: one answer for all three.
    BadCredentials,
}

impl Refusal {
    /// Seconds for `Retry-After`, when waiting helps.
    pub fn retry_after(self) -> Option<u64> {
        match self {
            Refusal::Throttled { retry_after }
            | Refusal::Locked { retry_after }
            | Refusal::Busy { retry_after } => Some(retry_after),
            Refusal::BadCredentials => None,
        }
    }

    /// For people, in Portuguese.
    pub fn message(self) -> String {
        match self {
            Refusal::Throttled { retry_after } => format!(
                "Muitas tentativas de login deste endereço: tente de novo em {retry_after} s."
            ),
            Refusal::Locked { retry_after } => {
                format!("Muitas tentativas de login sem sucesso: tente de novo em {retry_after} s.")
            }
            Refusal::Busy { retry_after } => format!(
                "O servidor está ocupado verificando outras senhas: tente de novo em \
                 {retry_after} s."
            ),
            Refusal::BadCredentials => String::from("Usuário ou senha incorretos."),
        }
    }

    /// As logged.
    fn reason(self) -> &'static str {
        match self {
            Refusal::Throttled { .. } => "address budget spent",
            Refusal::Locked { .. } => "locked",
            Refusal::Busy { .. } => "no hashing slot",
            Refusal::BadCredentials => "bad credentials",
        }
    }
}

impl From<Refusal> for AppError {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Throttled { retry_after } => {
                AppError::retry_later("too_many_requests", r.message(), retry_after)
            }
            Refusal::Locked { retry_after } => AppError::too_many_requests(retry_after),
            Refusal::Busy { retry_after } => {
                AppError::retry_later("server_busy", r.message(), retry_after)
            }
            Refusal::BadCredentials => AppError::unauthorized("bad_credentials", r.message()),
        }
    }
}

/// Spends one attempt of `client`'s address budget (login and refresh).
pub fn throttle(state: &AppState, client: ClientAddr) -> Result<(), Refusal> {
    state.throttle().check(client).map_err(|retry_after| {
        tracing::info!(client = %client, "tentativa recusada: endereço sem orçamento");
        Refusal::Throttled { retry_after }
    })
}

/// The user whose password this is, or why not (module doc). `Err` only for a store failure
/// (reading the user, or counting the attempt: then no hash runs uncounted).
pub async fn check_password(
    state: &AppState,
    username: &str,
    password: String,
    client: ClientAddr,
) -> Result<Result<UserRow, Refusal>, AppError> {
    let refused = |r: Refusal| {
        tracing::info!(client = %client, reason = r.reason(), "login recusado");
        Ok(Err(r))
    };
    if let Err(r) = throttle(state, client) {
        return Ok(Err(r));
    }
    let key = username_key(username);
    let now = state.clock().now();
    let reservation = match state.limiter().reserve(&key, client.0, now).await? {
        Ok(r) => r,
        Err(retry_after) => return refused(Refusal::Locked { retry_after }),
    };
    // A username longer than any account's cannot exist: no need to ask the store, but the
    // same hash runs, so the time of the answer says nothing either.
    let user = if key.chars().count() < crate::limits::MAX_USERNAME_KEY_CHARS {
        state.store().user_by_username(key.clone()).await?
    } else {
        None
    };
    let phc = user.as_ref().map(|u| u.password_hash.clone());
    let matches = match state.hash_pool().verify(password, phc).await? {
        Ok(matches) => matches,
        Err(busy) => {
            reservation.refund().await?;
            return refused(Refusal::Busy {
                retry_after: busy.retry_after_seconds,
            });
        }
    };
    match user.filter(|u| matches && u.active) {
        Some(user) => {
            reservation.succeed().await?;
            Ok(Ok(user))
        }
        None => match reservation.fail(now).await? {
            Some(retry_after) => refused(Refusal::Locked { retry_after }),
            None => refused(Refusal::BadCredentials),
        },
    }
}
