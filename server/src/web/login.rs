//! `/` (to the inbox or the login), `GET|POST /login`, `POST /logout`.
//!
//! Login checks the password as `POST /v1/auth/login` does ([`check_password`]: the same
//! per-address budget, failure budgets, bounded Argon2id pool, the same cost and the same
//! answer for an unknown user and a wrong password) — then opens a browser session on the user's desk device
//! ([`super::session::pick_device`]). Any role may log in; officers and coordinators then see
//! "Sem permissão" on the office pages (their work is on the device).
//!
//! Element ids: `usuario`, `senha`, `entrar` (button), `erro-login` (refusal); after login the
//! header has `usuario-atual` and the `sair` button.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Query, State};
use axum::http::header::{RETRY_AFTER, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde::Deserialize;

use super::PageError;
use super::layout::{page, see_other, submit};
use super::session::{
    Posted, SESSION_COOKIE, WebUser, check_origin, cleared_cookie, cookie, pick_device,
    session_cookie,
};
use crate::auth::login::{Refusal, check_password};
use crate::auth::throttle::ClientAddr;
use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(home))
        // Anyone may post the login form: its body is read under a limit sized for a login.
        .route(
            "/login",
            get(login_page)
                .post(login)
                .layer(DefaultBodyLimit::max(crate::limits::LOGIN_BODY_LIMIT)),
        )
        .route("/logout", post(logout))
}

/// Where to go after login: a path of this site, else the inbox ([`local_path`]).
fn safe_next(next: Option<&str>) -> String {
    next.and_then(local_path)
        .unwrap_or_else(|| "/escritorio".to_owned())
}

/// `next` as a path of this site, or `None`. Browsers forgive a lot in a `Location`: they drop
/// TAB, CR and LF anywhere, read `\` as `/`, and go to another host on `//host`; so the text
/// must start with exactly one `/` and hold no control character, whitespace or backslash,
/// raw or percent-encoded. Then it is resolved the way a browser resolves it (the `url` crate
/// implements the WHATWG URL standard) against a placeholder origin, must stay on that origin,
/// and what is returned is the resolved path, query and fragment — so dot segments cannot turn
/// it into `//host` after the check either.
fn local_path(next: &str) -> Option<String> {
    let suspicious = |s: &str| {
        s.chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '\\')
    };
    if !next.starts_with('/') || next.starts_with("//") || suspicious(next) {
        return None;
    }
    let base = url::Url::parse("http://taxi-fiscal.invalid/").ok()?;
    let resolved = base.join(next).ok()?;
    if resolved.origin() != base.origin() {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(resolved.path())
        .decode_utf8()
        .ok()?;
    if decoded.starts_with("//") || suspicious(&decoded) {
        return None;
    }
    let local = &resolved[url::Position::BeforePath..];
    (local.starts_with('/') && !local.starts_with("//")).then(|| local.to_owned())
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
    client: ClientAddr,
    headers: HeaderMap,
    axum::Form(form): axum::Form<LoginForm>,
) -> Result<Response, PageError> {
    // No session yet, so no token: a login from another site's form is refused by origin.
    if !check_origin(&headers, &state, "/login") {
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
    let user = match check_password(&state, &username, form.senha, client).await? {
        Ok(user) => user,
        Err(refusal) => {
            let status = match refusal {
                Refusal::BadCredentials => StatusCode::UNAUTHORIZED,
                _ => StatusCode::TOO_MANY_REQUESTS,
            };
            let mut res = refuse(status, &refusal.message())?;
            if let Some(v) = refusal
                .retry_after()
                .and_then(|s| HeaderValue::from_str(&s.to_string()).ok())
            {
                res.headers_mut().insert(RETRY_AFTER, v);
            }
            return Ok(res);
        }
    };
    let now = state.clock().now();
    let devices = state.store().list_devices().await?;
    let Some(device) = pick_device(&devices, &user.id) else {
        return refuse(
            StatusCode::FORBIDDEN,
            "Este usuário não tem dispositivo registrado ativo: peça ao administrador que \
             registre o computador da Unidade para ele.",
        );
    };
    let token = state
        .web_sessions()
        .open(
            user.id.clone(),
            user.username.clone(),
            device.id.clone(),
            user.display_name.clone(),
            now,
        )
        .await?;
    tracing::info!(user = %user.id, device = %device.id, "login pelas páginas");
    let mut res = see_other(&next);
    if let Ok(v) = HeaderValue::from_str(&session_cookie(&token, state.secure_cookies())) {
        res.headers_mut().insert(SET_COOKIE, v);
    }
    Ok(res)
}

#[derive(Debug, Deserialize)]
struct LogoutForm {}

async fn logout(Posted { user, .. }: Posted<LogoutForm, WebUser>) -> Response {
    user.logout().await;
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
        assert_eq!(
            safe_next(Some("/escritorio/registros/abc?status=a%2Fb#topo")),
            "/escritorio/registros/abc?status=a%2Fb#topo"
        );
        assert_eq!(safe_next(None), "/escritorio");
        // Every one of these would leave the site in some browser, or is not a path at all.
        for hostile in [
            "//evil.example/",
            "https://evil.example/",
            "/\\evil",
            "\\\\evil.example",
            "/\tevil",
            "/\t/evil.example",
            "\t//evil.example",
            "/\r\n/evil.example",
            "/\n/evil.example",
            "/ /evil.example",
            "/\u{0}/evil.example",
            "/\u{7f}/evil.example",
            "/\u{a0}/evil.example",
            "/%09/evil.example",
            "/%0d%0a/evil.example",
            "/%2F%2Fevil.example",
            "/%2f/evil.example",
            "/%5Cevil.example",
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "data:text/html,x",
            "escritorio",
            "",
            "///evil.example",
            "/.//evil.example",
        ] {
            let got = safe_next(Some(hostile));
            assert_eq!(got, "/escritorio", "{hostile:?} gave {got:?}");
        }
    }
}
