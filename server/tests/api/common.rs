//! The test harness: a seeded app, requests, and answers.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::Value;
use taxi_fiscal_server::config::PasswordParams;
use taxi_fiscal_server::{AppState, Clock, Config, demo, router};
use tower::ServiceExt;

/// 2026-11-30 12:00 in Americana.
pub(crate) const NOW: &str = "2026-11-30T15:00:00Z";

pub(crate) struct App {
    pub(crate) state: AppState,
    pub(crate) router: Router,
    pub(crate) dir: tempfile::TempDir,
}

pub(crate) struct Resp {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

impl Resp {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body[..self.body.len().min(300)])
            )
        })
    }

    /// Asserts the status and the one error shape, and returns the error object.
    pub(crate) fn error(&self, status: StatusCode, code: &str) -> Value {
        assert_eq!(
            self.status,
            status,
            "body: {}",
            String::from_utf8_lossy(&self.body[..self.body.len().min(600)])
        );
        let ct = self.headers.get("content-type").unwrap().to_str().unwrap();
        assert!(ct.starts_with("application/json"), "{ct}");
        let v = self.json();
        let e = v["error"].clone();
        assert_eq!(e["code"], code, "{v:#}");
        assert!(
            e["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{v:#}"
        );
        assert_eq!(v.as_object().unwrap().len(), 1, "only `error`: {v:#}");
        e
    }

    /// Asserts 204 No Content.
    pub(crate) fn ok_empty(&self) {
        assert_eq!(
            self.status,
            StatusCode::NO_CONTENT,
            "body: {}",
            String::from_utf8_lossy(&self.body[..self.body.len().min(600)])
        );
        assert!(self.body.is_empty());
    }

    pub(crate) fn ok(&self, status: StatusCode) -> Value {
        assert_eq!(
            self.status,
            status,
            "body: {}",
            String::from_utf8_lossy(&self.body[..self.body.len().min(600)])
        );
        self.json()
    }
}

pub(crate) fn config(dir: &std::path::Path) -> Config {
    let mut c = Config::new(dir);
    c.clock = Clock::fixed(NOW.parse().unwrap());
    c.password_params = PasswordParams::insecure_fast();
    c
}

pub(crate) async fn app_with(edit: impl FnOnce(&mut Config)) -> App {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(dir.path());
    edit(&mut c);
    let state = AppState::open(c, taxi_fiscal_server::store::sqlite::open)
        .await
        .unwrap();
    demo::seed(&state).await.unwrap().unwrap();
    App {
        router: router(state.clone()),
        state,
        dir,
    }
}

pub(crate) async fn app() -> App {
    app_with(|_| {}).await
}

pub(crate) fn demo_user(username: &str) -> &'static demo::DemoUser {
    demo::USERS.iter().find(|u| u.username == username).unwrap()
}

impl App {
    pub(crate) async fn send(&self, req: Request<Body>) -> Resp {
        let res = self.router.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let headers = res.headers().clone();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        Resp {
            status,
            headers,
            body,
        }
    }

    pub(crate) async fn request(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> Resp {
        let mut b = Request::builder().method(method).uri(path);
        if let Some(t) = token {
            b = b.header("authorization", format!("Bearer {t}"));
        }
        let req = match body {
            Some(v) => b
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(&v).unwrap()))
                .unwrap(),
            None => b.body(Body::empty()).unwrap(),
        };
        self.send(req).await
    }

    pub(crate) async fn get(&self, path: &str, token: &str) -> Resp {
        self.request(Method::GET, path, Some(token), None).await
    }

    pub(crate) async fn post(&self, path: &str, token: &str, body: Value) -> Resp {
        self.request(Method::POST, path, Some(token), Some(body))
            .await
    }

    pub(crate) async fn put(&self, path: &str, token: &str, body: Value) -> Resp {
        self.request(Method::PUT, path, Some(token), Some(body))
            .await
    }

    pub(crate) async fn login_full(&self, username: &str) -> Value {
        let u = demo_user(username);
        self.request(
            Method::POST,
            "/v1/auth/login",
            None,
            Some(serde_json::json!({
                "username": u.username, "password": u.password, "device_id": u.device_id,
            })),
        )
        .await
        .ok(StatusCode::OK)
    }

    /// An access token of a demo user on their demo device.
    pub(crate) async fn login(&self, username: &str) -> String {
        self.login_full(username).await["access_token"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub(crate) async fn version(&self) -> u64 {
        self.state.store().registry().await.unwrap().version
    }

    pub(crate) async fn audit_rows(&self) -> u64 {
        let r = self.state.store().verify_audit().await.unwrap();
        assert!(r.ok, "{r:?}");
        r.rows
    }

    /// Registry version and audit rows: what a rejected request must leave unchanged.
    pub(crate) async fn footprint(&self) -> (u64, u64) {
        (self.version().await, self.audit_rows().await)
    }
}
