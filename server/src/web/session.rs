//! Browser sessions of the office pages, the page extractors and CSRF protection.
//!
//! Flow: `POST /login` checks the password exactly as `POST /v1/auth/login` does (same limiter,
//! Argon2id on the blocking pool) and binds the session to one of the user's registered,
//! unrevoked devices (the audit chain and the records' Automerge actor need a device; see
//! [`pick_device`]). The browser receives an opaque random token in an `HttpOnly;
//! SameSite=Strict` cookie; the store keeps only its SHA-256 ([`Sessions`], over the store's
//! `web_sessions`), with the user, the device, a per-session CSRF token, a one-shot flash
//! message and the times that expire it (idle and absolute). On every request [`WebUser`] touches
//! the session (a read; a write at most once a minute, see
//! `taxi_fiscal_store::web_sessions::TOUCH_INTERVAL`, so idle expiry is exact to that minute)
//! and then runs the same point query as the API's `Auth` extractor (`Store::session`), so a
//! revoked device or a deactivated user is out at once and the role is the database's, not the
//! session's.
//!
//! CSRF: the cookie is `SameSite=Strict`, every POST must come from this origin (`Origin`, or
//! `Referer` when the browser sends no `Origin`) and carry the session's token in the hidden
//! `csrf` field ([`Posted`] checks all three before the handler runs). Login itself has no
//! session yet: it checks the origin.
//!
//! The pages reach the sessions through `AppState::web_sessions`, not a table of their own: a
//! password change, from a page or the API, ends the user's other sessions
//! ([`Sessions::end_user`]).
//!
//! Sessions live in the store, which every server node shares: a browser logged in on one node
//! is served by any other, and a restart logs nobody out (the cookie's token finds its row
//! again). Opening a session sweeps the expired ones and keeps at most
//! `taxi_fiscal_store::web_sessions::MAX_WEB_SESSIONS_PER_USER` per user, so the table needs no
//! sweeper. A flash message is written only when set and read with a write only when the touch
//! saw one pending, so an ordinary page view costs one read.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::{CONTENT_TYPE, COOKIE, ORIGIN, REFERER};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::PageError;
use crate::auth::tokens::{new_refresh_token, random_id, refresh_hash};
use crate::auth::{Auth, Role, roles};
use crate::server::AppState;
use crate::store::web_sessions::{Timeouts, WebSessionRow};
use crate::store::{DeviceRow, Store, StoreError};

pub use crate::store::web_sessions::Flash;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "tf_sessao";
/// A session unused this long ends (office staff step away from the desk).
pub const IDLE_TIMEOUT: Duration = Duration::minutes(60);
/// A session ends this long after login whatever happens (one working day).
pub const ABSOLUTE_TIMEOUT: Duration = Duration::hours(10);

/// Roles that open the office pages: the API's readers of the office's work
/// ([`roles::OFFICE_READERS`]). Who may *post* their forms is [`roles::OFFICE_WRITERS`]
/// ([`Posted`]'s default).
pub const OFFICE_ROLES: &[Role] = roles::OFFICE_READERS;

/// The timeouts as the store takes them.
const TIMEOUTS: Timeouts = Timeouts {
    idle: IDLE_TIMEOUT,
    absolute: ABSOLUTE_TIMEOUT,
};

/// The server side of the browser sessions: a thin front over the store's, keyed by the SHA-256
/// of the cookie's token (the token itself is never stored). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sessions {
    store: Arc<dyn Store>,
}

impl Sessions {
    /// The sessions `store` keeps.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self { store }
    }

    /// Opens a session (sweeping the expired ones and the user's oldest beyond the per-user
    /// cap: `Store::open_web_session`); returns the cookie's token.
    pub(crate) async fn open(
        &self,
        user_id: String,
        username: String,
        device_id: String,
        display_name: String,
        now: DateTime<Utc>,
    ) -> Result<String, PageError> {
        let (token, key) = new_refresh_token().map_err(PageError::from)?;
        let csrf = random_id().map_err(PageError::from)?;
        let row = WebSessionRow {
            key,
            user_id,
            username,
            device_id,
            display_name,
            csrf,
            created_at: now,
            last_seen: now,
            flash: None,
        };
        self.store.open_web_session(row, TIMEOUTS).await?;
        Ok(token)
    }

    /// The live session of `token`, touched; an expired one is deleted.
    async fn touch(
        &self,
        token: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<WebSessionRow>, StoreError> {
        self.store
            .touch_web_session(refresh_hash(token), now, TIMEOUTS)
            .await
    }

    /// Ends the session keyed `key`.
    async fn end(&self, key: &str) -> Result<bool, StoreError> {
        self.store.end_web_session(key.to_owned()).await
    }

    /// Ends every session of `user_id` but the one keyed `keep` (a changed password); returns
    /// how many ended.
    pub(crate) async fn end_user(
        &self,
        user_id: &str,
        keep: Option<&str>,
    ) -> Result<u64, StoreError> {
        self.store
            .end_user_web_sessions(user_id.to_owned(), keep.map(str::to_owned))
            .await
    }
}

/// The `Set-Cookie` value of a new session; `secure` when every public origin is https
/// (`AppState::secure_cookies`: the demo on plain http loopback must still log in).
pub(crate) fn session_cookie(token: &str, secure: bool) -> String {
    // No `Max-Age`: the server expires sessions; the browser drops the cookie when it closes.
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}")
}

/// The `Set-Cookie` value that deletes the session cookie.
pub(crate) fn cleared_cookie() -> String {
    format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// Why a form was refused as coming from another site (logged, never shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForeignOrigin {
    /// `origin` or `referer`.
    pub header: &'static str,
    /// What it said, cut short (it is the sender's text).
    pub value: String,
}

/// Whether a state-changing request comes from this site: `Origin` (or, without it, `Referer`)
/// must be one of the server's public origins (`Config::public_origins`, or the listen
/// address's; never the request's own `Host`, which the sender writes). Neither header:
/// allowed here, the CSRF token still has to match (old browsers, some privacy settings).
pub(crate) fn same_origin(headers: &HeaderMap, origins: &[String]) -> Result<(), ForeignOrigin> {
    let (header, value) = match (headers.get(ORIGIN), headers.get(REFERER)) {
        (Some(o), _) => ("origin", o),
        (None, Some(r)) => ("referer", r),
        (None, None) => return Ok(()),
    };
    let text = value.to_str().unwrap_or_default();
    let origin = url::Url::parse(text)
        .ok()
        .map(|u| u.origin())
        .filter(url::Origin::is_tuple)
        .map(|o| o.ascii_serialization());
    match origin {
        Some(o) if origins.contains(&o) => Ok(()),
        _ => Err(ForeignOrigin {
            header,
            value: text.chars().take(200).collect(),
        }),
    }
}

/// [`same_origin`] against `state`'s public origins, logging a refusal with its reason.
pub(crate) fn check_origin(headers: &HeaderMap, state: &AppState, form: &str) -> bool {
    let origins = state.public_origins();
    match same_origin(headers, &origins) {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(
                form,
                header = e.header,
                value = ?e.value,
                accepted = ?&*origins,
                "formulário recusado: a origem não é a deste servidor (veja TAXI_FISCAL_PUBLIC_URL)"
            );
            false
        }
    }
}

/// Chooses the device a browser session acts on: the user's unrevoked devices, preferring one
/// meant for a desk (`desktop-…`, `web-…`), then the lowest id. The API's login names its
/// device; a browser cannot, and the office works from its registered desk computer.
pub(crate) fn pick_device<'a>(devices: &'a [DeviceRow], user_id: &str) -> Option<&'a DeviceRow> {
    let mut mine: Vec<&DeviceRow> = devices
        .iter()
        .filter(|d| d.user_id == user_id && d.revoked_at.is_none())
        .collect();
    mine.sort_by_key(|d| {
        let desk = d.id.starts_with("desktop-") || d.id.starts_with("web-");
        (!desk, d.id.clone())
    });
    mine.first().copied()
}

/// Any logged-in user (the "sem permissão" page and logout need no more).
#[derive(Debug, Clone)]
pub struct WebUser {
    /// Who, as the API's handlers see a caller (role from the database).
    pub auth: Auth,
    pub display_name: String,
    csrf: String,
    key: String,
    sessions: Sessions,
    /// Whether a flash may be waiting: the touch saw one, or this request set one. Shared by
    /// the clones of this user (a `Posted` form's and the handler's), so that a page without a
    /// message does not write to take none.
    flash_pending: Arc<AtomicBool>,
}

impl WebUser {
    /// The token every POST form of this session carries in its hidden `csrf` field.
    pub fn csrf(&self) -> &str {
        &self.csrf
    }

    /// Shows `message` on the next page this session opens. A store failure is logged, not
    /// returned: what the message reports is already committed, and losing the message is
    /// better than an error page over a done action.
    pub async fn flash(&self, ok: bool, message: impl Into<String>) {
        let flash = Flash {
            ok,
            message: message.into(),
        };
        self.flash_pending.store(true, Ordering::Relaxed);
        if let Err(e) = self
            .sessions
            .store
            .set_web_flash(self.key.clone(), flash)
            .await
        {
            tracing::warn!(error = %e, "the page's message could not be kept for the next page");
        }
    }

    /// The pending message, once. No store write when none is pending; a store failure is
    /// logged and the page shown without its message.
    pub async fn take_flash(&self) -> Option<Flash> {
        if !self.flash_pending.swap(false, Ordering::Relaxed) {
            return None;
        }
        match self.sessions.store.take_web_flash(self.key.clone()).await {
            Ok(flash) => flash,
            Err(e) => {
                tracing::warn!(error = %e, "the page's message could not be read");
                None
            }
        }
    }

    /// The key this session is stored under (never the cookie's token).
    pub(crate) fn session_key(&self) -> &str {
        &self.key
    }

    /// Ends this session. A store failure is logged: the caller clears the cookie all the same,
    /// so this browser is out, and the row ends at its timeouts.
    pub(crate) async fn logout(&self) {
        if let Err(e) = self.sessions.end(&self.key).await {
            tracing::error!(error = %e, "logout: the session could not be deleted from the store");
        }
    }

    /// Whether the user may decide (append record events): the office only, as in the API.
    pub fn may_decide(&self) -> bool {
        crate::office::OFFICE_DECIDERS.contains(&self.auth.role)
    }

    /// Whether the user may submit the office's forms ([`roles::OFFICE_WRITERS`], what
    /// [`Posted`] requires by default): pages show their forms only then, and
    /// [`super::layout::read_only_notice`] otherwise.
    pub fn may_write(&self) -> bool {
        roles::OFFICE_WRITERS.contains(&self.auth.role)
    }

    /// Whether the user administers accounts and devices.
    pub fn is_admin(&self) -> bool {
        roles::ADMIN.contains(&self.auth.role)
    }
}

/// The path and query of the request, for returning there after login.
fn here(parts: &Parts) -> String {
    parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "/".to_owned())
}

impl FromRequestParts<AppState> for WebUser {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let sessions = state.web_sessions().clone();
        let next = if parts.method == axum::http::Method::GET {
            here(parts)
        } else {
            String::from("/escritorio")
        };
        let login = |notice: Option<&'static str>| PageError::Login {
            next: next.clone(),
            notice,
        };
        let Some(token) = cookie(&parts.headers, SESSION_COOKIE) else {
            return Err(login(None));
        };
        let now = state.clock().now();
        let Some(session) = sessions.touch(token, now).await? else {
            return Err(login(Some("Sua sessão expirou. Entre de novo.")));
        };
        let checked = state
            .store()
            .session(session.user_id.clone(), session.device_id.clone(), None)
            .await?;
        let ok = checked.as_ref().is_some_and(|c| {
            c.user_active && !c.device_revoked && c.device_user_id == session.user_id
        });
        let Some(checked) = checked.filter(|_| ok) else {
            // Refused either way; a row left behind fails this same check and expires.
            if let Err(e) = sessions.end(&session.key).await {
                tracing::warn!(error = %e, "a refused session could not be deleted");
            }
            return Err(login(Some(
                "Sessão encerrada: o usuário foi desativado ou o dispositivo revogado.",
            )));
        };
        Ok(WebUser {
            auth: Auth {
                user_id: session.user_id,
                username: session.username,
                role: checked.role,
                stand_id: checked.stand_id,
                device_id: session.device_id,
            },
            display_name: session.display_name,
            csrf: session.csrf,
            key: session.key,
            sessions,
            flash_pending: Arc::new(AtomicBool::new(session.flash.is_some())),
        })
    }
}

/// A logged-in user of the office pages: office or admin. Anybody else gets the
/// "Sem permissão" page (403) with a way to log out.
#[derive(Debug, Clone)]
pub struct OfficeUser(pub WebUser);

impl std::ops::Deref for OfficeUser {
    type Target = WebUser;
    fn deref(&self) -> &WebUser {
        &self.0
    }
}

impl FromRequestParts<AppState> for OfficeUser {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = WebUser::from_request_parts(parts, state).await?;
        if OFFICE_ROLES.contains(&user.auth.role) {
            Ok(OfficeUser(user))
        } else {
            let message = format!(
                "Seu perfil ({}) não dá acesso às páginas da Unidade de Transportes. \
                 Estas páginas são para a Unidade de Transportes e a administração.",
                user.auth.role.label()
            );
            Err(PageError::Forbidden {
                user: Box::new(user),
                message,
            })
        }
    }
}

/// An administrator on the accounts and devices pages. Anybody else gets "Sem permissão".
#[derive(Debug, Clone)]
pub struct AdminUser(pub WebUser);

impl std::ops::Deref for AdminUser {
    type Target = WebUser;
    fn deref(&self) -> &WebUser {
        &self.0
    }
}

impl FromRequestParts<AppState> for AdminUser {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = WebUser::from_request_parts(parts, state).await?;
        if user.is_admin() {
            Ok(AdminUser(user))
        } else {
            let message = format!(
                "Seu perfil ({}) não dá acesso às contas e aos dispositivos: são da administração \
                 do sistema.",
                user.auth.role.label()
            );
            Err(PageError::Forbidden {
                user: Box::new(user),
                message,
            })
        }
    }
}

/// The user types a [`Posted`] form can require, and who among them may post.
pub trait SessionUser: FromRequestParts<AppState, Rejection = PageError> {
    /// Roles that may post a form taking this user type.
    const POST_ROLES: &'static [Role];
    fn web(&self) -> &WebUser;
}

impl SessionUser for WebUser {
    const POST_ROLES: &'static [Role] = roles::ANY;
    fn web(&self) -> &WebUser {
        self
    }
}

/// The office pages: readable by [`OFFICE_ROLES`], written by [`roles::OFFICE_WRITERS`] only.
impl SessionUser for OfficeUser {
    const POST_ROLES: &'static [Role] = roles::OFFICE_WRITERS;
    fn web(&self) -> &WebUser {
        &self.0
    }
}

impl SessionUser for AdminUser {
    const POST_ROLES: &'static [Role] = roles::ADMIN;
    fn web(&self) -> &WebUser {
        &self.0
    }
}

#[derive(Deserialize)]
struct CsrfField {
    #[serde(default)]
    csrf: String,
}

/// Equal without an early exit (the token must not leak through timing). Also used by the
/// multipart CSV upload, which cannot go through `Posted`.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A smaller body limit for the [`Posted`] forms of one route, set on it as a layer
/// `Extension(FormLimit(n))` (a form anyone signed in sends with a password: the login's
/// limit). Without it, forms are read under the general body limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormLimit(pub usize);

/// A POSTed form of a logged-in user, checked for the role and for CSRF: the user type's
/// [`SessionUser::POST_ROLES`] (by default [`OfficeUser`]'s, the office only: an administrator
/// reads the office pages but gets "Sem permissão" on posting), the
/// origin, then the session's token in the `csrf` field, then the body is parsed into `T`
/// (`application/x-www-form-urlencoded`; `T` must tolerate the extra `csrf` field, so no
/// `deny_unknown_fields`). Every POST handler of the pages takes this, never a bare `Form`.
#[derive(Debug)]
pub struct Posted<T, U = OfficeUser> {
    pub user: U,
    pub form: T,
}

impl<T, U> FromRequest<AppState> for Posted<T, U>
where
    T: DeserializeOwned,
    U: SessionUser + Send,
{
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, PageError> {
        let (mut parts, body) = req.into_parts();
        let user = U::from_request_parts(&mut parts, state).await?;
        if !U::POST_ROLES.contains(&user.web().auth.role) {
            let message = format!(
                "Seu perfil ({}) só consulta estas páginas: quem registra é a Unidade de \
                 Transportes. Nada foi gravado.",
                user.web().auth.role.label()
            );
            return Err(PageError::forbidden(user.web(), message));
        }
        if !check_origin(&parts.headers, state, parts.uri.path()) {
            return Err(PageError::Csrf);
        }
        let form_typed = parts
            .headers
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
        if !form_typed {
            return Err(PageError::Status(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Envie o formulário pela página.".into(),
            ));
        }
        let limit = parts
            .extensions
            .get::<FormLimit>()
            .map_or(state.config().body_limit, |l| {
                l.0.min(state.config().body_limit)
            });
        let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| {
            PageError::Status(
                StatusCode::PAYLOAD_TOO_LARGE,
                "O formulário é grande demais.".into(),
            )
        })?;
        let token: CsrfField = serde_urlencoded::from_bytes(&bytes).map_err(|_| PageError::Csrf)?;
        if !same_token(&token.csrf, user.web().csrf()) {
            tracing::warn!("formulário sem o token CSRF da sessão recusado");
            return Err(PageError::Csrf);
        }
        // The parser's words name fields and Rust types: they go to the log, the person reads
        // one sentence.
        let form = serde_urlencoded::from_bytes(&bytes).map_err(|e| {
            tracing::debug!(error = %e, "form refused by the parser");
            PageError::Status(
                StatusCode::BAD_REQUEST,
                "O formulário chegou incompleto ou com um valor que não é aceito; nada foi \
                 gravado. Volte, recarregue a página e envie de novo."
                    .to_owned(),
            )
        })?;
        Ok(Posted { user, form })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn origin_must_be_a_public_origin_whatever_the_host_says() {
        let ours = [
            "http://127.0.0.1:8080".to_owned(),
            "https://fiscal.example".to_owned(),
        ];
        let ok = |pairs: &[(&'static str, &'static str)]| same_origin(&headers(pairs), &ours);
        assert!(ok(&[("origin", "http://127.0.0.1:8080")]).is_ok());
        assert!(ok(&[("origin", "https://fiscal.example")]).is_ok());
        assert!(ok(&[("origin", "https://FISCAL.example:443")]).is_ok());
        assert!(ok(&[("referer", "http://127.0.0.1:8080/escritorio?x=1")]).is_ok());
        // Neither header: left to the CSRF token.
        assert!(ok(&[("host", "a")]).is_ok());
        // The attacker writes Host too: agreeing with it proves nothing.
        let e = ok(&[("host", "evil.example"), ("origin", "http://evil.example")]).unwrap_err();
        assert_eq!(
            e,
            ForeignOrigin {
                header: "origin",
                value: "http://evil.example".into()
            }
        );
        for (k, v) in [
            ("origin", "null"),
            ("origin", "http://127.0.0.1:8081"),
            ("origin", "http://fiscal.example"),
            ("origin", "https://fiscal.example.evil.example"),
            ("referer", "http://127.0.0.1:8081/"),
            ("referer", "/escritorio"),
        ] {
            let e = ok(&[("host", "127.0.0.1:8080"), (k, v)]).unwrap_err();
            assert_eq!((e.header, e.value.as_str()), (k, v));
        }
    }

    #[test]
    fn cookies_are_found_among_others() {
        let h = headers(&[("cookie", "a=1; tf_sessao=abc ; b=2"), ("cookie", "c=3")]);
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("abc"));
        assert_eq!(cookie(&h, "c"), Some("3"));
        assert_eq!(cookie(&h, "tf"), None);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_token("abc", "abc"));
        assert!(!same_token("abc", "abd"));
        assert!(!same_token("abc", "ab"));
        assert!(!same_token("", "a"));
    }

    #[cfg(feature = "sqlite")]
    #[tokio::test]
    async fn sessions_expire_at_the_servers_idle_and_absolute_timeouts() {
        use crate::store::{Actor, NewDevice, Role, UserRow};
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Store> =
            Arc::new(crate::store::sqlite::SqliteStore::open(&dir.path().join("t.db")).unwrap());
        let t0: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().unwrap();
        let user = UserRow {
            id: "u".into(),
            username: "u".into(),
            display_name: "U".into(),
            role: Role::Office,
            stand_id: None,
            password_hash: "h".into(),
            active: true,
            created_at: t0,
        };
        store.create_user(user, Actor::cli(t0)).await.unwrap();
        let device = NewDevice {
            id: "desktop-u".into(),
            user_id: "u".into(),
            label: "Mesa".into(),
        };
        store.register_device(device, Actor::cli(t0)).await.unwrap();
        let s = Sessions::new(store);
        let open = || s.open("u".into(), "u".into(), "desktop-u".into(), "U".into(), t0);

        let tok = open().await.unwrap();
        let row = s.touch(&tok, t0).await.unwrap().unwrap();
        // The store holds the token's hash, never the token.
        assert_eq!(row.key, refresh_hash(&tok));
        assert_ne!(row.key, tok);
        assert!(s.touch(&tok, t0 + IDLE_TIMEOUT).await.unwrap().is_some());
        // Kept alive by use, still cut at the absolute limit.
        let mut t = t0 + IDLE_TIMEOUT;
        while t < t0 + ABSOLUTE_TIMEOUT - Duration::minutes(30) {
            t += Duration::minutes(30);
            assert!(s.touch(&tok, t).await.unwrap().is_some(), "{t}");
        }
        let past = t0 + ABSOLUTE_TIMEOUT + Duration::seconds(1);
        assert!(s.touch(&tok, past).await.unwrap().is_none());

        let other = open().await.unwrap();
        let late = t0 + IDLE_TIMEOUT + Duration::seconds(1);
        assert!(s.touch(&other, late).await.unwrap().is_none());
        assert!(s.touch("not-a-token", t0).await.unwrap().is_none());

        // Each session has its own CSRF token; a changed password keeps only the caller's.
        let a = open().await.unwrap();
        let b = open().await.unwrap();
        let (ra, rb) = (
            s.touch(&a, t0).await.unwrap().unwrap(),
            s.touch(&b, t0).await.unwrap().unwrap(),
        );
        assert_ne!(ra.csrf, rb.csrf);
        assert_eq!(s.end_user("u", Some(&ra.key)).await.unwrap(), 1);
        assert!(s.touch(&a, t0).await.unwrap().is_some());
        assert!(s.touch(&b, t0).await.unwrap().is_none());
    }
}
