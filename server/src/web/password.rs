//! `GET|POST /escritorio/senha`: "Alterar minha senha", for every signed-in user (officers and
//! coordinators too: it is the one office page they have).
//!
//! The form asks the current password, the new one and its confirmation. A confirmation that
//! differs is refused here, before anything is checked or counted; then the change is exactly
//! the API's `POST /v1/me/password` ([`change_password`]: the login's checks of the current
//! password, the rule of every new password, the hash in the bounded pool, the audit row), and
//! it ends every other session of the user (API logins and other browsers) but this one. The
//! body is read under the login's limit. No password is ever written back into the page.
//!
//! Element ids: `senha-atual`, `senha-nova`, `senha-confirmacao`, `alterar-senha` (button),
//! `erro-senha` (refusal); success shows `#aviso`. The header links here from `minha-senha`.

use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::{Markup, html};
use serde::Deserialize;

use super::PageError;
use super::layout::{page, post_form, see_other, submit};
use super::session::{Flash, FormLimit, Posted, WebUser};
use crate::auth::change::{ChangeRefusal, Keep, change_password};
use crate::auth::login::Refusal;
use crate::auth::password::MIN_PASSWORD_LEN;
use crate::auth::throttle::ClientAddr;
use crate::server::AppState;

const PATH: &str = "/escritorio/senha";
const TITLE: &str = "Alterar minha senha";

pub(crate) fn routes() -> Router<AppState> {
    Router::new().route(
        PATH,
        get(form_page)
            .post(change)
            .layer(Extension(FormLimit(crate::limits::LOGIN_BODY_LIMIT))),
    )
}

fn password_field(id: &str, label: &str, autocomplete: &str, hint: Option<&str>) -> Markup {
    let name = id.replace('-', "_");
    let hint_id = format!("{id}-dica");
    html! {
        div .campo {
            label for=(id) { (label) }
            input type="password" id=(id) name=(name) autocomplete=(autocomplete) required
                aria-describedby=[hint.map(|_| hint_id.as_str())];
            @if let Some(h) = hint {
                p .dica id=(hint_id) { (h) }
            }
        }
    }
}

/// The page, with `error` above the form and the session's pending message when given.
fn render(user: &WebUser, error: Option<&str>, flash: Option<Flash>) -> Markup {
    let rule = format!("Ao menos {MIN_PASSWORD_LEN} caracteres, diferente da atual.");
    let body = html! {
        @if let Some(e) = error {
            p #erro-senha .erro role="alert" { strong { "Não foi feito: " } (e) }
        }
        p { "Ao alterar a senha, as outras sessões abertas com o seu usuário (outros computadores e os aparelhos) são encerradas." }
        (post_form(user, PATH, "form-senha", html! {
            (password_field("senha-atual", "Senha atual", "current-password", None))
            (password_field("senha-nova", "Nova senha", "new-password", Some(&rule)))
            (password_field("senha-confirmacao", "Confirme a nova senha", "new-password", None))
            (submit("alterar-senha", "Alterar a senha"))
        }))
    };
    page(Some(user), TITLE, flash, body)
}

async fn form_page(user: WebUser) -> Markup {
    render(&user, None, user.take_flash().await)
}

#[derive(Debug, Deserialize)]
struct PasswordForm {
    #[serde(default)]
    senha_atual: String,
    #[serde(default)]
    senha_nova: String,
    #[serde(default)]
    senha_confirmacao: String,
}

async fn change(
    State(state): State<AppState>,
    client: ClientAddr,
    Posted { user, form }: Posted<PasswordForm, WebUser>,
) -> Result<Response, PageError> {
    let refuse = |status: StatusCode, message: &str| (status, render(&user, Some(message), None));
    if form.senha_nova != form.senha_confirmacao {
        return Ok(refuse(
            StatusCode::UNPROCESSABLE_ENTITY,
            "A confirmação não é igual à nova senha: digite a mesma senha nos dois campos.",
        )
        .into_response());
    }
    let keep = Keep::WebSession(user.session_key().to_owned());
    let outcome = change_password(
        &state,
        &user.auth,
        form.senha_atual,
        form.senha_nova,
        client,
        keep,
    )
    .await?;
    match outcome {
        Ok(()) => {
            user.flash(
                true,
                "Senha alterada. As outras sessões do seu usuário foram encerradas.",
            )
            .await;
            Ok(see_other(PATH))
        }
        Err(refusal) => {
            let status = match refusal {
                ChangeRefusal::Weak | ChangeRefusal::Same | ChangeRefusal::Wrong => {
                    StatusCode::UNPROCESSABLE_ENTITY
                }
                ChangeRefusal::Check(_) => StatusCode::TOO_MANY_REQUESTS,
                ChangeRefusal::Stale => StatusCode::CONFLICT,
            };
            let mut res = refuse(status, &refusal.message()).into_response();
            if let ChangeRefusal::Check(r) = refusal {
                set_retry_after(&mut res, r);
            }
            Ok(res)
        }
    }
}

fn set_retry_after(res: &mut Response, r: Refusal) {
    if let Some(v) = r
        .retry_after()
        .and_then(|s| HeaderValue::from_str(&s.to_string()).ok())
    {
        res.headers_mut().insert(RETRY_AFTER, v);
    }
}
