//! The office's web pages: server-rendered HTML in Brazilian Portuguese for the
//! Unidade de Transportes, at `/`, `/login`, `/escritorio/…`, beside the JSON API at `/v1/…`.
//!
//! Plain HTML forms and redirects after POST, one small stylesheet (`/static/escritorio.css`,
//! `server/assets/office.css` compiled in), no JavaScript. Pages are written with `maud`
//! (`html! { … }`), which escapes every interpolated value: user text (facts, witness
//! statements, notes) can never become markup. Pages use the same roles, store methods and
//! audit path as the API: an office event posted from a page goes through
//! `Store::record_event` exactly like `POST /v1/records/{id}/events`.
//!
//! | module | what |
//! |---|---|
//! | [`session`] | sessions (cookie `tf_sessao`), extractors [`WebUser`], [`OfficeUser`], [`Posted`], CSRF |
//! | [`layout`] | the page shell, navigation, form fields, error and flash boxes, pt-BR formatting |
//! | [`login`] | `/`, `/login`, `/logout` |
//! | [`inbox`] | `/escritorio` — records with filters and counts per status |
//! | [`listing`] | what every list shares: sortable columns (`ordem`, `sentido`, `aria-sort`), folded free-text search, the CSV export for a pt-BR Excel |
//! | [`record`] | `/escritorio/registros/{id}` and its forms — evidence, verdict, events, conflicts, decision |
//! | [`duplicates`] | `/escritorio/duplicatas` — groups of records that look like the same facts |
//! | [`registry`] | `/escritorio/alvaras`, `/escritorio/cadastro/…` — permits, grant, auxiliaries, state, renewal, transfer, swap, CSV import and export |
//! | [`evidence`] | map links, stand distance, photo thumbnails (`/escritorio/fotos/{sha256}/miniatura`), duplicates and merged records side by side |
//! | [`fines`] | `/escritorio/multas` — fines, unpaid filter, recording a payment |
//! | [`editais`] | `/escritorio/editais` — editais de chamamento (arts. 2–6): opening, candidates, list, draw, result, appeals, grants |
//! | [`people`] | `/escritorio/pessoas` — people (holders, auxiliaries, owners): list, create, edit |
//! | [`vehicles`] | `/escritorio/veiculos` — vehicles: owner, taximeter, documents |
//! | [`stands`] | `/escritorio/pontos` — stands and their coordinators |
//! | [`users`] | `/escritorio/usuarios` — accounts (admin): create, role, deactivate, password reset code; and the public `/redefinir-senha`, `/redefinir-senha/{code}` where the user chooses a new password with it |
//! | [`devices`] | `/escritorio/dispositivos` — devices (admin): list, revoke (after a confirmation), enrolment code as text and QR code |
//! | [`law`] | `/escritorio/lei` — the law's parameters: rules configuration (values, each rule on or off), IPCA series (enter the next year), holidays |
//! | [`password`] | `/escritorio/senha` — "Alterar minha senha", for every signed-in user |
//! | [`witnesses`] | the record page's identity of witnesses, and `/escritorio/registros/{id}/testemunhas/apagar` (LGPD erasure) |
//! | [`verify`] | `/verificar`, `/verificar/{code}` — public, no login: is a printed auto or notification authentic, and where does it stand |
//! | `/escritorio/fotos/{sha256}` | photos of records, for a logged-in office session ([`record`]) |
//!
//! # How to add a page
//!
//! 1. Write a module `web/foo.rs` with `pub(crate) fn routes() -> Router<AppState>` and merge
//!    it in [`routes`] below (one `.merge(foo::routes())` line). Paths in Portuguese under
//!    `/escritorio/…`; add a menu entry to [`layout::NAV`] if it is a top-level page.
//! 2. A GET handler takes `user: OfficeUser` (office or admin; anyone else gets the
//!    "Sem permissão" page, no session redirects to `/login?next=…`) and returns
//!    `Result<Markup, PageError>`:
//!    `Ok(layout::page(Some(&user), "Título", user.take_flash().await, html! { … }))`.
//!    `layout::page` writes `<h1>` from the title: start your sections at `<h2>`.
//! 3. A POST handler takes `Posted<MyForm>` (never a bare `Form`): it has already checked the
//!    session, the role, the origin and the CSRF token. The role is the one policy of the
//!    office: `Posted<MyForm>` is for the office only (`auth::roles::OFFICE_WRITERS`; the
//!    administrator reads the office pages, never writes them), `Posted<MyForm, AdminUser>`
//!    for the administrator's pages, `Posted<MyForm, WebUser>` for anyone signed in. On the
//!    GET side, show a form only `@if user.may_write()`, else `layout::read_only_notice(…)`. Build the form with
//!    `layout::post_form(&user, "/escritorio/…", "id-do-form", html! { … })`, which adds the
//!    hidden `csrf` field; `MyForm` must not `deny_unknown_fields` (it receives `csrf` too).
//!    Take every field as `String` (or `Option<String>`) and validate yourself, so that bad
//!    input is shown on the page with what was typed, not a bare 400.
//! 4. On success: `user.flash(true, "Feito …").await` and `Ok(layout::see_other(url))` (303).
//!    On a refusal (the law, the state machine, bad input): render the same page again with status
//!    422 and `layout::error_box(…)` naming the rule and article, keeping the typed values,
//!    via `PageError::Page(StatusCode::UNPROCESSABLE_ENTITY, markup)` or by returning
//!    `(StatusCode, Markup)`.
//! 5. Form fields: `layout::text_field`, `date_field`, `select_field`, `textarea_field`,
//!    `submit` — each writes a `<label for>` bound to a stable `id`, so the pages stay
//!    accessible and the browser test can drive them by id. Tables use `<th scope="col">`.
//!    A list declares its columns once as a [`listing::Columns`] (header row with sort links,
//!    `ordem`/`sentido` parsing) and exports with [`listing::Csv`]; a wide table goes in
//!    `div .tabela-rolavel role="region" tabindex="0" aria-labelledby=…` so that it scrolls
//!    in its own box instead of widening the page. Add the page to `OFFICE_PAGES` in
//!    `tests/tests/browser.rs`: the browser test checks it with axe-core.
//! 6. API errors convert: `?` on an [`AppError`](crate::AppError) yields a [`PageError`],
//!    which always renders HTML (the router's JSON-error layer leaves `text/html` alone).
//! 7. Tests: `server/tests/web.rs` shows how to log in, keep the cookie and post forms with
//!    the CSRF token.

pub mod devices;
pub mod duplicates;
pub mod editais;
pub mod evidence;
pub mod fines;
pub mod inbox;
pub mod law;
pub mod layout;
pub mod listing;
pub mod login;
pub mod password;
pub mod people;
pub mod record;
pub mod registry;
pub mod session;
pub mod stands;
pub mod users;
pub mod vehicles;
pub mod verify;
pub mod witnesses;

use axum::Router;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use maud::html;

use crate::error::AppError;
use crate::server::AppState;

pub use session::{AdminUser, Flash, OfficeUser, Posted, SessionUser, Sessions, WebUser};

/// The stylesheet, compiled in (the office machine may be offline: nothing from a CDN).
const CSS: &str = include_str!("../../assets/office.css");

async fn stylesheet() -> Response {
    (
        [
            (
                CONTENT_TYPE,
                HeaderValue::from_static("text/css; charset=utf-8"),
            ),
            (
                CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
        ],
        CSS,
    )
        .into_response()
}

/// Every page route (the session table they share is `AppState::web_sessions`).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/static/escritorio.css", get(stylesheet))
        .merge(login::routes())
        .merge(inbox::routes())
        .merge(record::routes())
        .merge(duplicates::routes())
        .merge(registry::routes())
        .merge(fines::routes())
        .merge(editais::routes())
        .merge(law::routes())
        .merge(verify::routes())
        .merge(password::routes())
        .merge(people::routes())
        .merge(vehicles::routes())
        .merge(stands::routes())
        .merge(users::routes())
        .merge(devices::routes())
        .merge(witnesses::routes())
        .merge(evidence::routes())
        .route("/escritorio/{*resto}", get(unknown_page))
        .layer(map_response(page_headers))
}

/// An unknown address under `/escritorio`: an HTML page, not the API's JSON.
async fn unknown_page() -> PageError {
    PageError::not_found("Esta página não existe.")
}

/// Headers of every page: no framing, no foreign sources (the pages load nothing but their
/// stylesheet and the photos), no referrer outside the site, and no caching of pages that
/// carry personal data.
async fn page_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    h.entry(CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ));
    h.entry(X_FRAME_OPTIONS)
        .or_insert(HeaderValue::from_static("DENY"));
    h.entry(REFERRER_POLICY)
        .or_insert(HeaderValue::from_static("same-origin"));
    h.entry(X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    let html = h
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if html {
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}

/// Why a page could not be shown. Always answered as HTML.
#[derive(Debug)]
pub enum PageError {
    /// No (live) session: to the login page, then back to `next`.
    Login {
        next: String,
        notice: Option<&'static str>,
    },
    /// Logged in, but this role may not use the page or the action.
    Forbidden { user: Box<WebUser>, message: String },
    /// A POST without this session's token or from another origin.
    Csrf,
    /// Any status with a message for people.
    Status(StatusCode, String),
    /// A whole page already rendered (e.g. the record again, with the refusal).
    Page(StatusCode, maud::Markup),
}

impl PageError {
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::Status(StatusCode::NOT_FOUND, message.into())
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::Status(StatusCode::BAD_REQUEST, message.into())
    }

    /// 500: logs the cause, shows nothing of it.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        let e = AppError::internal(cause);
        Self::Status(e.status, e.message)
    }

    /// 403 for an action this role may not take (e.g. an admin deciding a penalty).
    pub fn forbidden(user: &WebUser, message: impl Into<String>) -> Self {
        Self::Forbidden {
            user: Box::new(user.clone()),
            message: message.into(),
        }
    }
}

impl From<crate::service::ServiceError> for PageError {
    fn from(e: crate::service::ServiceError) -> Self {
        AppError::from(e).into()
    }
}

impl From<AppError> for PageError {
    fn from(e: AppError) -> Self {
        if e.status == StatusCode::UNAUTHORIZED {
            return Self::Login {
                next: "/escritorio".into(),
                notice: Some("Entre de novo."),
            };
        }
        Self::Status(e.status, e.message)
    }
}

impl From<crate::store::StoreError> for PageError {
    fn from(e: crate::store::StoreError) -> Self {
        AppError::from(e).into()
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters kept).
pub(crate) fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match self {
            PageError::Login { next, notice } => {
                let mut url = format!("/login?next={}", url_encode(&next));
                if notice.is_some() {
                    url.push_str("&expirou=1");
                }
                let mut res = StatusCode::SEE_OTHER.into_response();
                if let Ok(v) = HeaderValue::from_str(&url) {
                    res.headers_mut().insert(LOCATION, v);
                }
                res
            }
            PageError::Forbidden { user, message } => {
                let body = html! {
                    p #sem-permissao role="alert" class="erro" { (message) }
                    p { "Se precisa deste acesso, fale com a administração do sistema." }
                };
                let page = layout::page(Some(&user), "Sem permissão", None, body);
                (StatusCode::FORBIDDEN, page).into_response()
            }
            PageError::Csrf => {
                let body = html! {
                    p #erro-csrf role="alert" class="erro" {
                        "O formulário não foi aceito: ele veio de outra página ou a sessão mudou. "
                        "Nada foi gravado. Volte, recarregue a página e envie de novo."
                    }
                    p { a href="/escritorio" { "Ir para a caixa de entrada" } }
                };
                let page = layout::page(None, "Formulário recusado", None, body);
                (StatusCode::FORBIDDEN, page).into_response()
            }
            PageError::Status(status, message) => {
                let title = match status {
                    StatusCode::NOT_FOUND => "Não encontrado",
                    s if s.is_server_error() => "Erro no servidor",
                    _ => "Não foi possível atender",
                };
                let body = html! {
                    p #erro role="alert" class="erro" { (message) }
                    p { a href="/escritorio" { "Ir para a caixa de entrada" } }
                };
                (status, layout::page(None, title, None, body)).into_response()
            }
            PageError::Page(status, markup) => (status, markup).into_response(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(
            url_encode("/escritorio?a=1&b=ç"),
            "/escritorio%3Fa%3D1%26b%3D%C3%A7"
        );
        assert_eq!(url_encode("abc-1234"), "abc-1234");
    }
}
