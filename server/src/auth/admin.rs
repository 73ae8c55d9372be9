//! The administrator's operations on accounts, shared by the API (`api::accounts`) and the pages
//! (`web::users`, `web::devices`, `web::reset`), so both have the same rules and answers:
//!
//! - [`set_role`]: a user's role, and the stand for a coordinator ([`check_role_stand`], the
//!   same check as a created account's);
//! - [`set_active`]: deactivate or reactivate. Deactivating ends the user at once: the refresh
//!   tokens are revoked in the same transaction, the browser sessions are ended here, and the
//!   access tokens already out are refused at their next request (the auth extractor reads
//!   `users.active` on every request);
//! - [`issue_code`]: a one-time code for one user, either to reset the password or to enrol a
//!   device. [`crate::limits::ACCOUNT_CODE_BYTES`] random bytes, shown once, stored as SHA-256,
//!   ending after its purpose's lifetime, spent by its first use; a new code replaces the user's
//!   unused ones of the same purpose.
//!
//! An administrator cannot change the role of, or deactivate, their own account: the last
//! administrator could otherwise lock everyone out of the accounts.
//!
//! Presenting a code needs no login ([`reset_password`] from the page `/redefinir-senha`,
//! [`enrol`] from `POST /v1/devices/enrol`). Order, cheapest refusal first: the per-address
//! budget of codes ([`crate::limits::CODE_ATTEMPTS_PER_ADDRESS_BURST`]), the input's shape
//! (nothing looked up for a malformed code), the code's state, then (a reset) the new password
//! hashed in the bounded pool and the code spent in the same transaction as the new hash
//! (checked again there: of two uses racing, one wins).

use chrono::{DateTime, Duration, Utc};

use super::password::{WeakPassword, check_new_password};
use super::throttle::ClientAddr;
use super::tokens::refresh_hash;
use super::{Auth, Role, roles};
use crate::error::AppError;
use crate::limits::{
    ACCOUNT_CODE_BYTES, ENROLMENT_CODE_TTL_MINUTES, MAX_DEVICE_LABEL_CHARS,
    PASSWORD_RESET_CODE_TTL_MINUTES,
};
use crate::server::AppState;
use crate::store::{CodePurpose, CodeRefusal, DeviceRow, NewAccountCode, UserRow};

/// How long a code of `purpose` works.
pub fn code_lifetime(purpose: CodePurpose) -> Duration {
    match purpose {
        CodePurpose::PasswordReset => Duration::minutes(PASSWORD_RESET_CODE_TTL_MINUTES),
        CodePurpose::DeviceEnrolment => Duration::minutes(ENROLMENT_CODE_TTL_MINUTES),
    }
}

/// A code just made: shown once (to the administrator), never stored as such.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedCode {
    /// 32 hexadecimal digits in groups of four (`1a2b-…`), as shown and typed.
    pub code: String,
    pub expires_at: DateTime<Utc>,
    pub user: UserRow,
}

/// Checks the role and stand of an account: a coordinator needs a stand of the registry, the
/// other roles have none.
pub async fn check_role_stand(
    state: &AppState,
    role: Role,
    stand_id: Option<&str>,
) -> Result<(), AppError> {
    match (role, stand_id) {
        (Role::Coordinator, None) => Err(AppError::unprocessable(
            "stand_required",
            "Um coordenador precisa do ponto que coordena (stand_id).",
        )),
        (Role::Coordinator, Some(stand)) => {
            let reg = state.store().registry().await?;
            if reg.stands.iter().any(|s| s.id == stand) {
                Ok(())
            } else {
                Err(AppError::unprocessable(
                    "unknown_stand",
                    format!("O ponto {stand} não consta do cadastro."),
                ))
            }
        }
        (_, Some(_)) => Err(AppError::unprocessable(
            "stand_not_allowed",
            "Só coordenadores têm ponto (stand_id).",
        )),
        (_, None) => Ok(()),
    }
}

fn valid_username(u: &str) -> bool {
    (3..=32).contains(&u.len())
        && u.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
}

/// Creates an account. Admin only. The username is stored lower-cased; the password follows the
/// rule of every new password and is hashed in the bounded pool.
pub async fn create_user(
    state: &AppState,
    auth: &Auth,
    username: &str,
    display_name: &str,
    password: String,
    role: Role,
    stand_id: Option<String>,
) -> Result<UserRow, AppError> {
    auth.require(roles::ADMIN)?;
    let username = username.trim().to_lowercase();
    if !valid_username(&username) {
        return Err(AppError::unprocessable(
            "invalid_username",
            "Nome de usuário inválido: 3 a 32 letras minúsculas, dígitos, '.', '_' ou '-'.",
        ));
    }
    check_new_password(&password)?;
    if display_name.trim().is_empty() {
        return Err(AppError::unprocessable(
            "invalid_name",
            "Informe o nome de exibição.",
        ));
    }
    check_role_stand(state, role, stand_id.as_deref()).await?;
    // In the bounded pool like every login's verification.
    let hash = state.hash_pool().hash(password).await?;
    let now = state.clock().now();
    let user = UserRow {
        id: format!("u-{}", super::tokens::random_id()?),
        username,
        display_name: display_name.trim().to_owned(),
        role,
        stand_id,
        password_hash: hash,
        active: true,
        created_at: now,
    };
    Ok(state.store().create_user(user, auth.actor(now)).await?)
}

fn not_self(auth: &Auth, user_id: &str, what: &str) -> Result<(), AppError> {
    if auth.user_id == user_id {
        return Err(AppError::unprocessable(
            "own_account",
            format!("Não é possível {what} a própria conta: peça a outro administrador."),
        ));
    }
    Ok(())
}

async fn existing_user(state: &AppState, user_id: &str) -> Result<UserRow, AppError> {
    state
        .store()
        .user_by_id(user_id.to_owned())
        .await?
        .ok_or_else(|| AppError::not_found(format!("Usuário {user_id} não encontrado.")))
}

/// Changes `user_id`'s role (and stand). Admin only; not one's own.
pub async fn set_role(
    state: &AppState,
    auth: &Auth,
    user_id: &str,
    role: Role,
    stand_id: Option<String>,
) -> Result<UserRow, AppError> {
    auth.require(roles::ADMIN)?;
    not_self(auth, user_id, "mudar o perfil d")?;
    existing_user(state, user_id).await?;
    let stand_id = stand_id
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty());
    check_role_stand(state, role, stand_id.as_deref()).await?;
    let now = state.clock().now();
    let user = state
        .store()
        .set_user_role(user_id.to_owned(), role, stand_id, auth.actor(now))
        .await?;
    tracing::info!(user = %user.id, role = user.role.as_str(), "perfil alterado");
    Ok(user)
}

/// Deactivates (`active == false`) or reactivates a user. Admin only; not one's own account.
/// Idempotent.
pub async fn set_active(
    state: &AppState,
    auth: &Auth,
    user_id: &str,
    active: bool,
) -> Result<UserRow, AppError> {
    auth.require(roles::ADMIN)?;
    not_self(auth, user_id, "desativar ou reativar")?;
    existing_user(state, user_id).await?;
    let now = state.clock().now();
    let user = state
        .store()
        .set_user_active(user_id.to_owned(), active, auth.actor(now))
        .await?;
    if !active {
        let pages = state.web_sessions().end_user(&user.id, None).await?;
        tracing::info!(user = %user.id, web_sessions_ended = pages, "usuário desativado");
    }
    Ok(user)
}

/// A fresh code: (as shown, its stored hash).
fn new_code() -> Result<(String, String), AppError> {
    let mut bytes = [0u8; ACCOUNT_CODE_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| AppError::internal(&e))?;
    let digits = hex::encode(bytes);
    let hash = refresh_hash(&digits);
    let shown = digits
        .as_bytes()
        .chunks(4)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join("-");
    Ok((shown, hash))
}

/// The stored hash of a presented code, or `None` when it cannot be one (spaces, hyphens and
/// case are forgiven: it may have been typed from the screen).
pub fn code_hash(presented: &str) -> Option<String> {
    if presented.len() > 4 * ACCOUNT_CODE_BYTES {
        return None;
    }
    let digits: String = presented
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let ok =
        digits.len() == 2 * ACCOUNT_CODE_BYTES && digits.chars().all(|c| c.is_ascii_hexdigit());
    ok.then(|| refresh_hash(&digits))
}

/// Makes a one-time code of `purpose` for `user_id`. Admin only. An enrolment code is for an
/// active user; a reset code too (a deactivated user is reactivated first).
pub async fn issue_code(
    state: &AppState,
    auth: &Auth,
    user_id: &str,
    purpose: CodePurpose,
) -> Result<IssuedCode, AppError> {
    auth.require(roles::ADMIN)?;
    let user = existing_user(state, user_id).await?;
    if !user.active {
        return Err(AppError::unprocessable(
            "user_inactive",
            "Este usuário está desativado: reative-o antes de gerar um código.",
        ));
    }
    let (code, code_hash) = new_code()?;
    let now = state.clock().now();
    let expires_at = now + code_lifetime(purpose);
    state
        .store()
        .create_account_code(
            NewAccountCode {
                code_hash,
                purpose,
                user_id: user.id.clone(),
                expires_at,
            },
            auth.actor(now),
        )
        .await?;
    tracing::info!(user = %user.id, purpose = purpose.as_str(), "código de uso único gerado");
    Ok(IssuedCode {
        code,
        expires_at,
        user,
    })
}

/// For people, in Portuguese: why a code was not accepted.
pub fn refusal_message(r: CodeRefusal) -> &'static str {
    match r {
        CodeRefusal::Unknown => {
            "Este código não existe: confira o que foi digitado ou peça um novo ao administrador."
        }
        CodeRefusal::Used => {
            "Este código já foi usado ou substituído por outro: peça um novo ao administrador."
        }
        CodeRefusal::Expired => "Este código expirou: peça um novo ao administrador.",
        CodeRefusal::UserInactive => "O usuário deste código está desativado.",
    }
}

impl From<CodeRefusal> for AppError {
    fn from(r: CodeRefusal) -> Self {
        let code = match r {
            CodeRefusal::Unknown => "code_unknown",
            CodeRefusal::Used => "code_used",
            CodeRefusal::Expired => "code_expired",
            CodeRefusal::UserInactive => "user_inactive",
        };
        AppError::unprocessable(code, refusal_message(r))
    }
}

/// Why a code presentation was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PresentRefusal {
    /// The address spent its budget of codes.
    Throttled { retry_after: u64 },
    /// The code is malformed, unknown, spent, expired, or its user inactive.
    Code(CodeRefusal),
    /// The new password breaks the rule of every new password.
    Weak,
    /// The device name is empty or too long.
    BadLabel(String),
}

impl PresentRefusal {
    /// For people, in Portuguese: one sentence.
    pub fn message(&self) -> String {
        match self {
            PresentRefusal::Throttled { retry_after } => format!(
                "Muitas tentativas de código deste endereço: tente de novo em {retry_after} s."
            ),
            PresentRefusal::Code(r) => refusal_message(*r).to_owned(),
            PresentRefusal::Weak => AppError::from(WeakPassword).message,
            PresentRefusal::BadLabel(m) => m.clone(),
        }
    }
}

impl From<PresentRefusal> for AppError {
    fn from(r: PresentRefusal) -> Self {
        match r {
            PresentRefusal::Throttled { retry_after } => {
                AppError::retry_later("too_many_requests", r.message(), retry_after)
            }
            PresentRefusal::Code(c) => c.into(),
            PresentRefusal::Weak => WeakPassword.into(),
            PresentRefusal::BadLabel(m) => AppError::unprocessable("invalid_label", m),
        }
    }
}

fn spend_budget(state: &AppState, client: ClientAddr) -> Result<(), PresentRefusal> {
    state.code_throttle().check(client).map_err(|retry_after| {
        tracing::info!(client = %client, "código recusado: endereço sem orçamento");
        PresentRefusal::Throttled { retry_after }
    })
}

/// Whether a reset code is live now (the page checks it before asking for a password). Spends
/// one attempt of the address budget.
pub async fn check_reset_code(
    state: &AppState,
    client: ClientAddr,
    presented: &str,
) -> Result<Result<UserRow, PresentRefusal>, AppError> {
    if let Err(r) = spend_budget(state, client) {
        return Ok(Err(r));
    }
    let Some(hash) = code_hash(presented) else {
        return Ok(Err(PresentRefusal::Code(CodeRefusal::Unknown)));
    };
    let now = state.clock().now();
    Ok(state
        .store()
        .account_code(hash, CodePurpose::PasswordReset, now)
        .await?
        .map_err(PresentRefusal::Code))
}

/// Sets a new password with a reset code (module doc), and ends every session of the user:
/// refresh tokens in the store's transaction, browser sessions here.
pub async fn reset_password(
    state: &AppState,
    client: ClientAddr,
    presented: &str,
    new_password: String,
) -> Result<Result<UserRow, PresentRefusal>, AppError> {
    if let Err(r) = spend_budget(state, client) {
        return Ok(Err(r));
    }
    let Some(hash) = code_hash(presented) else {
        return Ok(Err(PresentRefusal::Code(CodeRefusal::Unknown)));
    };
    if check_new_password(&new_password).is_err() {
        return Ok(Err(PresentRefusal::Weak));
    }
    let now = state.clock().now();
    // Looked up before hashing: a wrong code costs no Argon2id.
    if let Err(r) = state
        .store()
        .account_code(hash.clone(), CodePurpose::PasswordReset, now)
        .await?
    {
        return Ok(Err(PresentRefusal::Code(r)));
    }
    let new_hash = state.hash_pool().hash(new_password).await?;
    let user = match state
        .store()
        .reset_password_with_code(hash, new_hash, state.clock().now())
        .await?
    {
        Ok(user) => user,
        Err(r) => return Ok(Err(PresentRefusal::Code(r))),
    };
    let pages = state.web_sessions().end_user(&user.id, None).await?;
    tracing::info!(user = %user.id, web_sessions_ended = pages, "senha redefinida com código");
    Ok(Ok(user))
}

/// The name of a device as typed: trimmed, not empty, at most
/// [`MAX_DEVICE_LABEL_CHARS`] characters, no control characters.
pub fn check_label(label: &str) -> Result<String, String> {
    let label = label.trim();
    if label.is_empty() {
        return Err(String::from("Informe uma descrição do dispositivo."));
    }
    if label.chars().count() > MAX_DEVICE_LABEL_CHARS {
        return Err(format!(
            "A descrição do dispositivo deve ter até {MAX_DEVICE_LABEL_CHARS} caracteres."
        ));
    }
    if label.chars().any(char::is_control) {
        return Err(String::from(
            "A descrição do dispositivo não pode ter quebras de linha nem caracteres de controle.",
        ));
    }
    Ok(label.to_owned())
}

/// Exchanges an enrolment code for a device registration of the code's user (module doc). The
/// device id is a new UUID: it is also the device's id in its records (the Automerge actor),
/// so the app never has to be told one.
pub async fn enrol(
    state: &AppState,
    client: ClientAddr,
    presented: &str,
    label: &str,
) -> Result<Result<(DeviceRow, UserRow), PresentRefusal>, AppError> {
    if let Err(r) = spend_budget(state, client) {
        return Ok(Err(r));
    }
    let Some(hash) = code_hash(presented) else {
        return Ok(Err(PresentRefusal::Code(CodeRefusal::Unknown)));
    };
    let label = match check_label(label) {
        Ok(l) => l,
        Err(m) => return Ok(Err(PresentRefusal::BadLabel(m))),
    };
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| AppError::internal(&e))?;
    let id = uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string();
    let now = state.clock().now();
    let device = match state.store().enrol_device(hash, id, label, now).await? {
        Ok(d) => d,
        Err(r) => return Ok(Err(PresentRefusal::Code(r))),
    };
    let user = existing_user(state, &device.user_id).await?;
    tracing::info!(device = %device.id, user = %user.id, "dispositivo cadastrado com código");
    Ok(Ok((device, user)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_shown_in_groups_and_read_back_forgivingly() {
        let (shown, hash) = new_code().unwrap();
        assert_eq!(
            shown.len(),
            2 * ACCOUNT_CODE_BYTES + ACCOUNT_CODE_BYTES / 2 - 1
        );
        assert_eq!(code_hash(&shown), Some(hash.clone()));
        assert_eq!(code_hash(&shown.to_uppercase()), Some(hash.clone()));
        assert_eq!(
            code_hash(&format!(" {} ", shown.replace('-', " "))),
            Some(hash)
        );
        // One digit short or long, a non-hex digit, or a huge input: not a code.
        let digits = shown.replace('-', "");
        assert_eq!(code_hash(&digits[1..]), None);
        assert_eq!(code_hash(&format!("{digits}0")), None);
        assert_eq!(code_hash(&format!("{}g", &digits[1..])), None);
        assert_eq!(code_hash(&"a".repeat(10_000)), None);
    }

    #[test]
    fn labels_are_checked_at_their_limit() {
        assert_eq!(check_label("  Tablet 1 ").unwrap(), "Tablet 1");
        assert!(check_label(&"é".repeat(MAX_DEVICE_LABEL_CHARS)).is_ok());
        assert!(check_label(&"é".repeat(MAX_DEVICE_LABEL_CHARS + 1)).is_err());
        assert!(check_label("   ").is_err());
        assert!(check_label("a\nb").is_err());
    }
}
