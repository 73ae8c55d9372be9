//! The in-process harness of the page tests: the whole router over a temporary data directory
//! seeded with the demo registry and users, a fixed clock and cheap password hashing, and a
//! cookie-keeping client that logs in through the form, reads the CSRF token from the pages
//! and posts forms (urlencoded, or multipart for the CSV file) with this site's Origin, as a
//! browser does. Shared by `web_registry.rs`, `web_registry_pages.rs` and `web_law.rs`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt;
use sync_core::domain::Registry;
use taxi_fiscal_server::config::PasswordParams;
use taxi_fiscal_server::{AppState, Clock, Config, demo, router};
use tower::ServiceExt;

/// 2026-11-30 12:00 in Americana.
pub(crate) const NOW: &str = "2026-11-30T15:00:00Z";
pub(crate) const HOST: &str = "escritorio.test";
pub(crate) const ORIGIN: &str = "http://escritorio.test";

pub(crate) struct App {
    pub(crate) state: AppState,
    pub(crate) router: Router,
    _dir: tempfile::TempDir,
}

pub(crate) async fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Config::new(dir.path());
    c.public_origins = vec![format!("http://{HOST}")];
    c.clock = Clock::fixed(NOW.parse().unwrap());
    c.password_params = PasswordParams::insecure_fast();
    let state = AppState::open(c, taxi_fiscal_server::store::sqlite::open)
        .await
        .unwrap();
    demo::seed(&state).await.unwrap().unwrap();
    App {
        router: router(state.clone()),
        state,
        _dir: dir,
    }
}

impl App {
    pub(crate) async fn registry(&self) -> std::sync::Arc<Registry> {
        self.state.store().registry().await.unwrap()
    }
}

pub(crate) struct Page {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

impl Page {
    pub(crate) fn location(&self) -> &str {
        self.headers
            .get("location")
            .map_or("", |v| v.to_str().unwrap())
    }

    pub(crate) fn html(&self, status: StatusCode) -> &str {
        assert_eq!(self.status, status, "{}", self.body);
        let ct = self.headers.get("content-type").unwrap().to_str().unwrap();
        assert!(ct.starts_with("text/html"), "{ct}");
        assert!(self.body.contains("<html lang=\"pt-BR\">"));
        &self.body
    }

    pub(crate) fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self.body.find(marker).expect("a form with csrf") + marker.len();
        let end = self.body[start..].find('"').unwrap();
        self.body[start..start + end].to_owned()
    }

    pub(crate) fn has(&self, id: &str) -> bool {
        self.body.contains(&format!("id=\"{id}\""))
    }

    /// The markup from the element with `id` to the end of the page (enough to look inside it).
    pub(crate) fn from(&self, id: &str) -> &str {
        let at = self
            .body
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("no #{id} in {}", self.body));
        &self.body[at..]
    }

    /// Every `<input>`/`<select>`/`<textarea>` with an id has a `<label for>` (hidden inputs
    /// and buttons aside).
    pub(crate) fn assert_labelled(&self) {
        for tag in ["<input", "<select", "<textarea"] {
            for (at, _) in self.body.match_indices(tag) {
                let end = self.body[at..].find('>').unwrap() + at;
                let el = &self.body[at..end];
                if el.contains("type=\"hidden\"") || el.contains("type=\"submit\"") {
                    continue;
                }
                let id_at = el.find(" id=\"").unwrap_or_else(|| panic!("no id: {el}")) + 5;
                let id = &el[id_at..id_at + el[id_at..].find('"').unwrap()];
                assert!(
                    self.body.contains(&format!("<label for=\"{id}\"")),
                    "field {id} has no label"
                );
            }
        }
    }
}

/// A browser's cookie jar and the forms it posts.
pub(crate) struct Client<'a> {
    pub(crate) app: &'a App,
    pub(crate) cookie: Option<String>,
}

impl<'a> Client<'a> {
    pub(crate) async fn login(app: &'a App, user: &str, password: &str) -> Self {
        let mut c = Self { app, cookie: None };
        let p = c
            .post_raw(
                "/login",
                format!("usuario={user}&senha={password}&next=%2Fescritorio"),
                "application/x-www-form-urlencoded",
            )
            .await;
        assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
        assert!(c.cookie.is_some());
        c
    }

    pub(crate) async fn send(&mut self, req: axum::http::request::Builder, body: Body) -> Page {
        let mut req = req.header("host", HOST);
        if let Some(c) = &self.cookie {
            req = req.header("cookie", c.clone());
        }
        let res = self
            .app
            .router
            .clone()
            .oneshot(req.body(body).unwrap())
            .await
            .unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        if let Some(set) = headers.get("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap().to_owned();
            self.cookie = (!pair.ends_with('=')).then_some(pair);
        }
        let body = res.into_body().collect().await.unwrap().to_bytes();
        Page {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    pub(crate) async fn get(&mut self, path: &str) -> Page {
        self.send(
            Request::builder().method(Method::GET).uri(path),
            Body::empty(),
        )
        .await
    }

    pub(crate) async fn post_raw(&mut self, path: &str, body: impl Into<Body>, ct: &str) -> Page {
        let req = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header("origin", ORIGIN)
            .header("content-type", ct);
        self.send(req, body.into()).await
    }

    /// Posts `fields` with the CSRF token of the page at `from`.
    pub(crate) async fn post_form(
        &mut self,
        from: &str,
        path: &str,
        fields: &[(&str, &str)],
    ) -> Page {
        let csrf = self.get(from).await.csrf();
        let mut pairs = vec![("csrf", csrf.as_str())];
        pairs.extend_from_slice(fields);
        let body = serde_urlencoded::to_string(&pairs).unwrap();
        self.post_raw(path, body, "application/x-www-form-urlencoded")
            .await
    }
}

impl Page {
    /// The `value` of the input with `id` (empty when it has none).
    pub(crate) fn value_of(&self, id: &str) -> String {
        let el = self.from(id);
        let el = &el[..el.find('>').unwrap()];
        let at = el.find("value=\"").map(|a| a + 7);
        at.map_or(String::new(), |a| {
            el[a..a + el[a..].find('"').unwrap()].to_owned()
        })
    }

    /// The value of the selected option of the `<select>` with `id`.
    pub(crate) fn selected_of(&self, id: &str) -> String {
        let el = self.from(id);
        let el = &el[..el.find("</select>").unwrap()];
        let at = el.find(" selected").expect("an option selected");
        let opt = &el[..at];
        let v = opt.rfind("value=\"").unwrap() + 7;
        opt[v..v + opt[v..].find('"').unwrap()].to_owned()
    }

    /// The text of the element with `id` up to the end of its row or block (`until`).
    pub(crate) fn part(&self, id: &str, until: &str) -> &str {
        let s = self.from(id);
        &s[..s.find(until).unwrap_or(s.len())]
    }
}

/// Percent-encodes a query value.
pub(crate) fn urlencode(s: &str) -> String {
    serde_urlencoded::to_string([("x", s)]).unwrap()[2..].to_owned()
}

impl Client<'_> {
    /// Uploads `csv` through the import form, as a file input sends it.
    pub(crate) async fn upload(&mut self, csv: &[u8], csrf: Option<String>) -> Page {
        let csrf = match csrf {
            Some(c) => c,
            None => self.get("/escritorio/cadastro/importar").await.csrf(),
        };
        let b = "----taxifiscal7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        body.extend_from_slice(
            format!(
                "--{b}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{csrf}\r\n\
                 --{b}\r\nContent-Disposition: form-data; name=\"arquivo\"; \
                 filename=\"cadastro.csv\"\r\nContent-Type: text/csv\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(csv);
        body.extend_from_slice(format!("\r\n--{b}--\r\n").as_bytes());
        self.post_raw(
            "/escritorio/cadastro/importar",
            body,
            &format!("multipart/form-data; boundary={b}"),
        )
        .await
    }
}
