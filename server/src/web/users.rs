//! `/escritorio/usuarios` — the accounts, for the administrator — and the public
//! `/redefinir-senha` where a user chooses a new password with a one-time code.
//!
//! Every action is the API's ([`crate::auth::admin`]): create an account, change its role (and
//! a coordinator's stand), deactivate or reactivate it, and make a password-reset code. The
//! code is shown once, on the page the POST answers (never in a flash, a log or the audit
//! chain), as a link to give the user. The administrator's own row has no actions: another
//! administrator changes it.
//!
//! `/redefinir-senha/{code}` checks the code first (spending one attempt of the address
//! budget of codes) and then asks for the new password twice; `/redefinir-senha` asks for the
//! code too (typed from a phone call). The POST checks the origin like the login form (there
//! is no session), reads its body under the login's limit, and then runs
//! [`admin::reset_password`]: the rule of every new password, the code spent in the
//! transaction of the new hash, every session of the user ended.
//!
//! Element ids: list `tabela-usuarios`, rows `usuario-{username}`; per row `perfil-{u}`,
//! `ponto-{u}`, `alterar-perfil-{u}`, `desativar-{u}` / `reativar-{u}`, `redefinir-{u}`; new
//! account `novo-nome`, `novo-usuario`, `novo-senha`, `novo-perfil`, `novo-ponto`,
//! `criar-usuario`; refusal `erro-usuarios`. The code's page: `link-redefinicao`,
//! `codigo-redefinicao`, `validade-codigo`. The public page: `codigo`, `senha-nova`,
//! `senha-confirmacao`, `redefinir`, `erro-redefinicao`, success `senha-redefinida`.

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use serde::Deserialize;

use super::PageError;
use super::layout::{
    error_box, local_time, page, post_form, see_other, select_field, submit, text_field,
};
use super::session::{AdminUser, Posted, check_origin};
use crate::api::accounts::reset_url;
use crate::auth::Role;
use crate::auth::admin::{self, PresentRefusal};
use crate::auth::password::MIN_PASSWORD_LEN;
use crate::auth::throttle::ClientAddr;
use crate::error::AppError;
use crate::server::AppState;
use crate::store::{CodePurpose, UserRow};

const PATH: &str = "/escritorio/usuarios";
const TITLE: &str = "Usuários";
const RESET_PATH: &str = "/redefinir-senha";

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
        .route(PATH, get(list).post(create))
        .route("/escritorio/usuarios/{id}/perfil", post(change_role))
        .route("/escritorio/usuarios/{id}/desativar", post(deactivate))
        .route("/escritorio/usuarios/{id}/reativar", post(reactivate))
        .route("/escritorio/usuarios/{id}/redefinicao", post(reset_code))
        .route(
            RESET_PATH,
            get(reset_form)
                .post(reset)
                .layer(DefaultBodyLimit::max(crate::limits::LOGIN_BODY_LIMIT)),
        )
        .route("/redefinir-senha/{code}", get(reset_with_code))
}

/// `path` as the request log writes it: a reset link's path carries its one-time code, a
/// password for two hours, which no log may keep.
pub(crate) fn logged_path(path: &str) -> &str {
    match path.strip_prefix("/redefinir-senha/") {
        Some(code) if !code.is_empty() => "/redefinir-senha/…",
        _ => path,
    }
}

const ROLES: [Role; 4] = [Role::Officer, Role::Coordinator, Role::Office, Role::Admin];

fn role_options() -> Vec<(String, String)> {
    ROLES
        .iter()
        .map(|r| (r.as_str().to_owned(), capitalised(r.label())))
        .collect()
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The stands of the registry, with "none" first (for everyone but a coordinator).
async fn stand_options(state: &AppState) -> Result<Vec<(String, String)>, AppError> {
    let reg = state.store().registry().await?;
    let mut options = vec![(
        String::new(),
        String::from("— nenhum (só para coordenador) —"),
    )];
    options.extend(
        reg.stands
            .iter()
            .map(|s| (s.id.to_string(), format!("{} — {}", s.id, s.name))),
    );
    Ok(options)
}

/// What was typed in the new-account form (kept on a refusal; never the password).
#[derive(Debug, Default, Deserialize)]
struct CreateForm {
    #[serde(default)]
    nome: String,
    #[serde(default)]
    usuario: String,
    #[serde(default)]
    senha: String,
    #[serde(default)]
    perfil: String,
    #[serde(default)]
    ponto: String,
}

async fn render(
    state: &AppState,
    user: &AdminUser,
    error: Option<&str>,
    typed: &CreateForm,
) -> Result<Markup, PageError> {
    let users = state.store().list_users().await?;
    let stands = stand_options(state).await?;
    let roles = role_options();
    let body = html! {
        @if let Some(e) = error { (error_box("erro-usuarios", e)) }
        p {
            "Quem entra no sistema e com que perfil. Um usuário desativado não entra mais, e as "
            "sessões dele (aparelhos e navegadores) terminam na hora. A redefinição de senha "
            "gera um link de uso único para entregar ao usuário."
        }
        table #tabela-usuarios {
            caption { "Contas" }
            thead { tr {
                th scope="col" { "Nome" }
                th scope="col" { "Usuário" }
                th scope="col" { "Perfil" }
                th scope="col" { "Ponto" }
                th scope="col" { "Situação" }
                th scope="col" { "Ações" }
            } }
            tbody {
                @for u in &users {
                    tr id=(format!("usuario-{}", u.username)) {
                        th scope="row" { (u.display_name) }
                        td { (u.username) }
                        td { (capitalised(u.role.label())) }
                        td { (u.stand_id.as_deref().unwrap_or("—")) }
                        td { @if u.active { "Ativo" } @else { strong { "Desativado" } } }
                        td { (row_actions(user, u, &roles, &stands)) }
                    }
                }
            }
        }
        h2 { "Novo usuário" }
        (post_form(user, PATH, "form-novo-usuario", html! {
            (text_field("novo-nome", "nome", "Nome completo", &typed.nome, true))
            (text_field("novo-usuario", "usuario", "Usuário (3 a 32 letras minúsculas, dígitos, '.', '_' ou '-')", &typed.usuario, true))
            div .campo {
                label for="novo-senha" { "Senha inicial" }
                input type="password" id="novo-senha" name="senha" autocomplete="new-password"
                    required aria-describedby="novo-senha-dica";
                p .dica #novo-senha-dica {
                    "Ao menos " (MIN_PASSWORD_LEN) " caracteres. Entregue-a ao usuário, que pode trocá-la em «Alterar minha senha»."
                }
            }
            (select_field("novo-perfil", "perfil", "Perfil", &roles, &typed.perfil))
            (select_field("novo-ponto", "ponto", "Ponto (só para coordenador)", &stands, &typed.ponto))
            (submit("criar-usuario", "Criar usuário"))
        }))
    };
    Ok(page(Some(user), TITLE, user.take_flash().await, body))
}

fn row_actions(
    user: &AdminUser,
    u: &UserRow,
    roles: &[(String, String)],
    stands: &[(String, String)],
) -> Markup {
    if u.id == user.auth.user_id {
        return html! { span .dica { "Sua conta: outro administrador a altera." } };
    }
    let base = format!("{PATH}/{}", u.id);
    let n = &u.username;
    html! {
        (post_form(user, &format!("{base}/perfil"), &format!("form-perfil-{n}"), html! {
            (select_field(&format!("perfil-{n}"), "perfil", &format!("Perfil de {}", u.display_name), roles, u.role.as_str()))
            (select_field(&format!("ponto-{n}"), "ponto", &format!("Ponto de {}", u.display_name), stands, u.stand_id.as_deref().unwrap_or("")))
            (submit(&format!("alterar-perfil-{n}"), "Alterar perfil"))
        }))
        @if u.active {
            (post_form(user, &format!("{base}/desativar"), &format!("form-desativar-{n}"), html! {
                (submit(&format!("desativar-{n}"), "Desativar"))
            }))
            (post_form(user, &format!("{base}/redefinicao"), &format!("form-redefinir-{n}"), html! {
                (submit(&format!("redefinir-{n}"), "Gerar código de redefinição de senha"))
            }))
        } @else {
            (post_form(user, &format!("{base}/reativar"), &format!("form-reativar-{n}"), html! {
                (submit(&format!("reativar-{n}"), "Reativar"))
            }))
        }
    }
}

async fn list(State(state): State<AppState>, user: AdminUser) -> Result<Markup, PageError> {
    render(&state, &user, None, &CreateForm::default()).await
}

/// The list again with the refusal, status 422 (or the error's own status).
async fn refused(
    state: &AppState,
    user: &AdminUser,
    e: AppError,
    typed: &CreateForm,
) -> Result<Response, PageError> {
    if e.status.is_server_error() || e.status == StatusCode::UNAUTHORIZED {
        return Err(e.into());
    }
    let status = if e.status == StatusCode::NOT_FOUND {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok((status, render(state, user, Some(&e.message), typed).await?).into_response())
}

fn parse_role(s: &str) -> Result<Role, AppError> {
    Role::parse(s.trim())
        .ok_or_else(|| AppError::unprocessable("invalid_role", "Escolha um perfil da lista."))
}

fn stand_of(s: &str) -> Option<String> {
    Some(s.trim().to_owned()).filter(|s| !s.is_empty())
}

async fn create(
    State(state): State<AppState>,
    Posted { user, mut form }: Posted<CreateForm, AdminUser>,
) -> Result<Response, PageError> {
    let password = std::mem::take(&mut form.senha);
    let outcome = match parse_role(&form.perfil) {
        Ok(role) => {
            admin::create_user(
                &state,
                &user.auth,
                &form.usuario,
                &form.nome,
                password,
                role,
                stand_of(&form.ponto),
            )
            .await
        }
        Err(e) => Err(e),
    };
    match outcome {
        Ok(created) => {
            user.flash(
                true,
                format!(
                    "Usuário {} criado. Entregue a senha inicial a {}.",
                    created.username, created.display_name
                ),
            )
            .await;
            Ok(see_other(PATH))
        }
        Err(e) => refused(&state, &user, e, &form).await,
    }
}

#[derive(Debug, Deserialize)]
struct RoleForm {
    #[serde(default)]
    perfil: String,
    #[serde(default)]
    ponto: String,
}

async fn change_role(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, form }: Posted<RoleForm, AdminUser>,
) -> Result<Response, PageError> {
    let outcome = match parse_role(&form.perfil) {
        Ok(role) => admin::set_role(&state, &user.auth, &id, role, stand_of(&form.ponto)).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(u) => {
            user.flash(
                true,
                format!(
                    "Perfil de {} alterado para {}.",
                    u.display_name,
                    u.role.label()
                ),
            )
            .await;
            Ok(see_other(PATH))
        }
        Err(e) => refused(&state, &user, e, &CreateForm::default()).await,
    }
}

#[derive(Debug, Deserialize)]
struct EmptyForm {}

async fn set_active(
    state: AppState,
    user: AdminUser,
    id: String,
    active: bool,
) -> Result<Response, PageError> {
    match admin::set_active(&state, &user.auth, &id, active).await {
        Ok(u) => {
            let message = if active {
                format!("{} foi reativado e pode entrar de novo.", u.display_name)
            } else {
                format!(
                    "{} foi desativado: não entra mais, e as sessões dele terminaram.",
                    u.display_name
                )
            };
            user.flash(true, message).await;
            Ok(see_other(PATH))
        }
        Err(e) => refused(&state, &user, e, &CreateForm::default()).await,
    }
}

async fn deactivate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, .. }: Posted<EmptyForm, AdminUser>,
) -> Result<Response, PageError> {
    set_active(state, user, id, false).await
}

async fn reactivate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, .. }: Posted<EmptyForm, AdminUser>,
) -> Result<Response, PageError> {
    set_active(state, user, id, true).await
}

/// Makes the code and shows it, this once.
async fn reset_code(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Posted { user, .. }: Posted<EmptyForm, AdminUser>,
) -> Result<Response, PageError> {
    let issued = match admin::issue_code(&state, &user.auth, &id, CodePurpose::PasswordReset).await
    {
        Ok(i) => i,
        Err(e) => return refused(&state, &user, e, &CreateForm::default()).await,
    };
    let url = reset_url(&state, &issued.code);
    let body = html! {
        p {
            "Entregue este link a " strong { (issued.user.display_name) } " (usuário "
            (issued.user.username) "). Ao abri-lo, ele escolhe uma nova senha; todas as sessões "
            "dele terminam. O link vale uma vez, até "
            span #validade-codigo { (local_time(issued.expires_at)) } ", e este é o único "
            "momento em que ele aparece: gerar outro invalida este."
        }
        p { a #link-redefinicao .codigo href=(url) { (url) } }
        p { "Se o usuário não puder abrir o link, ele digita o código em " code { (RESET_PATH) } ":" }
        p #codigo-redefinicao .codigo { (issued.code) }
        p { a #voltar-usuarios href=(PATH) { "Voltar aos usuários" } }
    };
    Ok(page(Some(&user), "Código de redefinição de senha", None, body).into_response())
}

// ------------------------------------------------------------------ public: /redefinir-senha

fn reset_page(
    code: Option<&str>,
    for_user: Option<&UserRow>,
    error: Option<&str>,
    show_form: bool,
) -> Markup {
    let rule = format!("Ao menos {MIN_PASSWORD_LEN} caracteres.");
    let body = html! {
        @if let Some(e) = error {
            p #erro-redefinicao .erro role="alert" { strong { "Não foi feito: " } (e) }
        }
        @if show_form {
            @if let Some(u) = for_user {
                p { "Nova senha para " strong { (u.display_name) } " (usuário " (u.username) ")." }
            } @else {
                p { "Digite o código que o administrador lhe passou e escolha a nova senha." }
            }
            p { "Ao redefinir, todas as sessões abertas com o seu usuário são encerradas; entre de novo com a nova senha." }
            // No session here: the form is checked by its origin, like the login's.
            form method="post" action=(RESET_PATH) id="form-redefinir" {
                @match code.filter(|_| for_user.is_some()) {
                    Some(c) => { input type="hidden" name="codigo" value=(c); }
                    None => {
                        div .campo {
                            label for="codigo" { "Código" }
                            input type="text" id="codigo" name="codigo" value=(code.unwrap_or(""))
                                autocomplete="one-time-code" spellcheck="false" required;
                        }
                    }
                }
                div .campo {
                    label for="senha-nova" { "Nova senha" }
                    input type="password" id="senha-nova" name="senha_nova" autocomplete="new-password"
                        required aria-describedby="senha-nova-dica";
                    p .dica #senha-nova-dica { (rule) }
                }
                div .campo {
                    label for="senha-confirmacao" { "Confirme a nova senha" }
                    input type="password" id="senha-confirmacao" name="senha_confirmacao"
                        autocomplete="new-password" required;
                }
                (submit("redefinir", "Redefinir a senha"))
            }
        }
        p { a #ir-login href="/login" { "Ir para a entrada do sistema" } }
    };
    page(None, "Redefinir a senha", None, body)
}

fn retry_after(res: &mut Response, r: &PresentRefusal) {
    if let PresentRefusal::Throttled { retry_after } = r
        && let Ok(v) = HeaderValue::from_str(&retry_after.to_string())
    {
        res.headers_mut().insert(RETRY_AFTER, v);
    }
}

fn refusal_status(r: &PresentRefusal) -> StatusCode {
    match r {
        PresentRefusal::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

async fn reset_form() -> Markup {
    reset_page(None, None, None, true)
}

async fn reset_with_code(
    State(state): State<AppState>,
    client: ClientAddr,
    Path(code): Path<String>,
) -> Result<Response, PageError> {
    match admin::check_reset_code(&state, client, &code).await? {
        Ok(u) => Ok(reset_page(Some(&code), Some(&u), None, true).into_response()),
        Err(r) => {
            let mut res = (
                refusal_status(&r),
                reset_page(None, None, Some(&r.message()), true),
            )
                .into_response();
            retry_after(&mut res, &r);
            Ok(res)
        }
    }
}

#[derive(Debug, Deserialize)]
struct ResetForm {
    #[serde(default)]
    codigo: String,
    #[serde(default)]
    senha_nova: String,
    #[serde(default)]
    senha_confirmacao: String,
}

async fn reset(
    State(state): State<AppState>,
    client: ClientAddr,
    headers: HeaderMap,
    axum::Form(form): axum::Form<ResetForm>,
) -> Result<Response, PageError> {
    if !check_origin(&headers, &state, RESET_PATH) {
        return Err(PageError::Csrf);
    }
    // The code is typed back only when it was typed (a link's code stays hidden).
    let again = |message: &str| reset_page(Some(form.codigo.trim()), None, Some(message), true);
    if form.senha_nova != form.senha_confirmacao {
        return Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            again("A confirmação não é igual à nova senha: digite a mesma senha nos dois campos."),
        )
            .into_response());
    }
    match admin::reset_password(&state, client, &form.codigo, form.senha_nova.clone()).await? {
        Ok(u) => {
            let body = html! {
                p #senha-redefinida role="status" .aviso-ok {
                    "Senha de " (u.display_name) " redefinida. Entre com o usuário "
                    strong { (u.username) } " e a nova senha."
                }
                p { a #ir-login href="/login" { "Entrar" } }
            };
            Ok(page(None, "Senha redefinida", None, body).into_response())
        }
        Err(r) => {
            let mut res = (refusal_status(&r), again(&r.message())).into_response();
            retry_after(&mut res, &r);
            Ok(res)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_codes_never_reach_the_request_log() {
        assert_eq!(
            logged_path("/redefinir-senha/29d1-0405-069e-6577-eb39-e9d0-4a75-5bd6"),
            "/redefinir-senha/…"
        );
        assert_eq!(logged_path("/redefinir-senha"), "/redefinir-senha");
        assert_eq!(logged_path("/escritorio/usuarios"), "/escritorio/usuarios");
    }
}
