//! `/` (to the inbox or the login), `GET|POST /login`, `POST /logout`.
//!
//! Login checks the password as `POST /v1/auth/login` does — the same per-username failure
//! limit, Argon2id on the blocking pool, the same cost and the same answer for an unknown user
//! and a wrong password — then opens a browser session on the user's desk device
//! ([`super::session::pick_device`]). Any role may log in; officers and coordinators then see
//! "Sem permissão" on the office pages (their work is on the device).
//!
//! Element ids: `usuario`, `senha`, `entrar` (button), `erro-login` (refusal); after login the
//! header has `usuario-atual` and the `sair` button.

use axum::Router;
use axum::extract::{Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde::Deserialize;

use super::PageError;
use super::Sessions;
use super::layout::{page, see_other, submit};
use super::session::{
    Posted, SESSION_COOKIE, WebUser, cleared_cookie, cookie, pick_device, same_origin,
    session_cookie,
};
use crate::server::AppState;
use std::sync::Arc;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(home))
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
}

/// Where to go after login: a local path only (no `//host`, no scheme), else the inbox.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with('/') && !n.starts_with("//") && !n.contains('\\') => n.to_owned(),
        _ => "/escritorio".to_owned(),
    }
}

async fn home(headers: HeaderMap) -> Response {
    if cookie(&headers, SESSION_COOKIE).is_some() {
        see_other("/escritorio")
    } else {
        see_other("/login")
    }
}

#[derive(Debug, Default, Deserialize)]
struct LoginQuery {
    #[serde(default)]
    next: Option<String>,
    #[serde(default)]
    expirou: Option<String>,
}

fn login_form(next: &str, username: &str, error: Option<&str>, notice: Option<&str>) -> Markup {
    let body = html! {
        @if let Some(n) = notice {
            p #aviso-sessao role="status" .aviso-ok { (n) }
        }
        @if let Some(e) = error {
            p #erro-login role="alert" .erro { (e) }
        }
        form method="post" action="/login" id="form-login" .cartao {
            input type="hidden" name="next" value=(next);
            div .campo {
                label for="usuario" { "Usuário" }
                input type="text" id="usuario" name="usuario" value=(username)
                    autocomplete="username" required autofocus;
            }
            div .campo {
                label for="senha" { "Senha" }
                input type="password" id="senha" name="senha"
                    autocomplete="current-password" required;
            }
            (submit("entrar", "Entrar"))
        }
    };
    page(None, "Entrar", None, body)
}

async fn login_page(Query(q): Query<LoginQuery>) -> Markup {
    let notice = q
        .expirou
        .is_some()
        .then_some("Sua sessão terminou. Entre de novo para continuar.");
    login_form(&safe_next(q.next.as_deref()), "", None, notice)
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    #[serde(default)]
    usuario: String,
    #[serde(default)]
    senha: String,
    #[serde(default)]
    next: Option<String>,
}

async fn login(
    State(state): State<AppState>,
    axum::Extension(sessions): axum::Extension<Arc<Sessions>>,
    headers: HeaderMap,
    axum::Form(form): axum::Form<LoginForm>,
) -> Result<Response, PageError> {
    // No session yet, so no token: a login from another site's form is refused by origin.
    if !same_origin(&headers) {
        return Err(PageError::Csrf);
    }
    let next = safe_next(form.next.as_deref());
    let username = form.usuario.trim().to_lowercase();
    let refuse = |status: StatusCode, message: &str| {
        Ok((status, login_form(&next, &username, Some(message), None)).into_response())
    };
    if username.is_empty() || form.senha.is_empty() {
        return refuse(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Informe o usuário e a senha.",
        );
    }
    let now = state.clock().now();
    if let Err(secs) = state.limiter().check(&username, now) {
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("Muitas tentativas sem sucesso: tente de novo em {secs} s."),
        );
    }
    let user = state.store().user_by_username(username.clone()).await?;
    let passwords = state.passwords().clone();
    let password = form.senha;
    let checked = user.clone();
    let ok = tokio::task::spawn_blocking(move || match &checked {
        Some(u) => passwords.verify(&password, &u.password_hash) && u.active,
        None => {
            passwords.burn(&password);
            false
        }
    })
    .await
    .map_err(|e| PageError::internal(&e))?;
    let Some(user) = user.filter(|_| ok) else {
        tracing::info!("login pelas páginas recusado");
        if let Err(secs) = state.limiter().fail(&username, now) {
            return refuse(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("Muitas tentativas sem sucesso: tente de novo em {secs} s."),
            );
        }
        return refuse(StatusCode::UNAUTHORIZED, "Usuário ou senha incorretos.");
    };
    let devices = state.store().list_devices().await?;
    let Some(device) = pick_device(&devices, &user.id) else {
        return refuse(
            StatusCode::FORBIDDEN,
            "Este usuário não tem dispositivo registrado ativo: peça ao administrador que \
             registre o computador da Unidade para ele.",
        );
    };
    state.limiter().succeed(&username);
    let token = sessions.open(
        user.id.clone(),
        user.username.clone(),
        device.id.clone(),
        user.display_name.clone(),
        now,
    )?;
    tracing::info!(user = %user.id, device = %device.id, "login pelas páginas");
    let mut res = see_other(&next);
    if let Ok(v) = HeaderValue::from_str(&session_cookie(&token)) {
        res.headers_mut().insert(SET_COOKIE, v);
    }
    Ok(res)
}

#[derive(Debug, Deserialize)]
struct LogoutForm {}

async fn logout(Posted { user, .. }: Posted<LogoutForm, WebUser>) -> Response {
    user.logout();
    let mut res = see_other("/login");
    if let Ok(v) = HeaderValue::from_str(&cleared_cookie()) {
        res.headers_mut().insert(SET_COOKIE, v);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        assert_eq!(safe_next(Some("/escritorio?x=1")), "/escritorio?x=1");
        assert_eq!(safe_next(Some("//evil.example/")), "/escritorio");
        assert_eq!(safe_next(Some("https://evil.example/")), "/escritorio");
        assert_eq!(safe_next(Some("/\\evil")), "/escritorio");
        assert_eq!(safe_next(None), "/escritorio");
    }
}
