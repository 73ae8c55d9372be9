//! The office and the administrator at their desks: plain HTTP calls to the server's API with
//! the demo users (`escritorio`, `admin`).

use std::time::Duration;

use serde_json::{Value, json};

/// A logged-in API user.
#[derive(Debug)]
pub struct Api {
    http: reqwest::blocking::Client,
    pub url: String,
    token: String,
}

/// Demo accounts (README).
pub const OFFICE: (&str, &str, &str) = ("escritorio", "escritorio-demo", "desktop-escritorio");
pub const ADMIN: (&str, &str, &str) = ("admin", "admin-demo", "desktop-admin");

impl Api {
    pub fn login(url: &str, (user, password, device): (&str, &str, &str)) -> Self {
        let http = crate::tls::http(None)
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let r = http
            .post(format!("{url}/v1/auth/login"))
            .json(&json!({"username": user, "password": password, "device_id": device}))
            .send()
            .unwrap();
        assert_eq!(r.status(), 200, "login {user}");
        let v: Value = r.json().unwrap();
        Self {
            http,
            url: url.to_owned(),
            token: v["access_token"].as_str().unwrap().to_owned(),
        }
    }

    /// The access token (e.g. for a load client with its own HTTP client).
    pub fn token(&self) -> &str {
        &self.token
    }

    pub fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().unwrap_or(Value::Null))
    }

    /// `GET path` read to the end without parsing it (what latency benches time), with an
    /// `accept-encoding` when given: the body is then as it went over the wire.
    pub fn get_raw(&self, path: &str, accept_encoding: Option<&str>) -> (u16, Vec<u8>) {
        read_raw(
            self.http
                .get(format!("{}{path}", self.url))
                .bearer_auth(&self.token),
            accept_encoding,
        )
    }

    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self
            .http
            .post(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().unwrap_or(Value::Null))
    }

    pub fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        let r = self
            .http
            .put(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().unwrap_or(Value::Null))
    }

    pub fn delete(&self, path: &str) -> (u16, Value) {
        let r = self
            .http
            .delete(format!("{}{path}", self.url))
            .bearer_auth(&self.token)
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().unwrap_or(Value::Null))
    }

    /// The whole registry as the server holds it (`GET /v1/registry/snapshot`, plain JSON).
    pub fn registry(&self) -> sync_core::domain::Registry {
        let r = self
            .http
            .get(format!("{}/v1/registry/snapshot", self.url))
            .bearer_auth(&self.token)
            .send()
            .unwrap();
        assert_eq!(r.status(), 200);
        sync_core::feed::snapshot_from_json(&r.text().unwrap()).unwrap()
    }

    /// Admin: a user with `role` (and `stand` for a coordinator) and their registered device.
    pub fn add_user_with_device(
        &self,
        username: &str,
        password: &str,
        role: &str,
        stand: Option<&str>,
        device_id: &str,
    ) -> String {
        let (s, user) = self.post(
            "/v1/users",
            &json!({"username": username, "display_name": username, "password": password,
                    "role": role, "stand_id": stand}),
        );
        assert_eq!(s, 201, "create user {username}: {user}");
        let user_id = user["id"].as_str().unwrap().to_owned();
        let (s, dev) = self.post(
            "/v1/devices",
            &json!({"id": device_id, "user_id": user_id, "label": format!("aparelho de {username}")}),
        );
        assert_eq!(s, 201, "register device {device_id}: {dev}");
        user_id
    }

    /// Office: every record on the server (id → heads), paging through `/v1/records`.
    pub fn all_records(&self) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        let mut offset = 0;
        loop {
            let (s, page) = self.get(&format!("/v1/records?limit=500&offset={offset}"));
            assert_eq!(s, 200, "{page}");
            let items = page["items"]
                .as_array()
                .or_else(|| page["records"].as_array())
                .cloned()
                .unwrap_or_default();
            if items.is_empty() {
                break;
            }
            for row in &items {
                let id = row["id"]
                    .as_str()
                    .or_else(|| row["record_id"].as_str())
                    .unwrap()
                    .to_owned();
                out.push(id);
            }
            offset += items.len();
        }
        out.into_iter()
            .map(|id| {
                let heads = self.record_heads(&id);
                (id, heads)
            })
            .collect()
    }

    /// Office: one record's detail (`GET /v1/records/{id}`).
    pub fn record(&self, id: &str) -> Value {
        let (s, v) = self.get(&format!("/v1/records/{id}"));
        assert_eq!(s, 200, "record {id}: {v}");
        v
    }

    pub fn record_heads(&self, id: &str) -> Vec<String> {
        let v = self.record(id);
        let mut heads: Vec<String> = v["heads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap().to_owned())
            .collect();
        heads.sort();
        heads
    }

    /// Office: appends an event to a record (`POST /v1/records/{id}/events`).
    pub fn record_event(&self, id: &str, event: Value) -> (u16, Value) {
        self.post(
            &format!("/v1/records/{id}/events"),
            &json!({ "event": event }),
        )
    }
}

/// The office user in a browser over plain HTTP: logs in through the form, keeps the cookie.
#[derive(Debug)]
pub struct OfficeSession {
    http: reqwest::blocking::Client,
    url: String,
    cookie: String,
}

impl OfficeSession {
    pub fn login(url: &str) -> Self {
        let http = crate::tls::http(None)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let r = http
            .post(format!("{url}/login"))
            .header("origin", url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("usuario=escritorio&senha=escritorio-demo&next=%2Fescritorio")
            .send()
            .unwrap();
        assert_eq!(r.status(), 303, "{:?}", r.text());
        let cookie = r.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        Self {
            http,
            url: url.to_owned(),
            cookie,
        }
    }

    /// The same browser session sent to another server node (behind a load balancer).
    pub fn on(&self, url: &str) -> Self {
        Self {
            http: self.http.clone(),
            url: url.to_owned(),
            cookie: self.cookie.clone(),
        }
    }

    /// A page, which must answer 200.
    pub fn page(&self, path: &str) -> String {
        let (status, body) = self.get_raw(path, None);
        assert_eq!(status, 200, "{path}");
        String::from_utf8(body).unwrap()
    }

    /// `GET path` read to the end, as [`Api::get_raw`].
    pub fn get_raw(&self, path: &str, accept_encoding: Option<&str>) -> (u16, Vec<u8>) {
        read_raw(
            self.http
                .get(format!("{}{path}", self.url))
                .header("cookie", &self.cookie),
            accept_encoding,
        )
    }
}

/// Sends `req` (with `accept-encoding` if given) and reads the body to the end, unparsed.
fn read_raw(
    mut req: reqwest::blocking::RequestBuilder,
    accept_encoding: Option<&str>,
) -> (u16, Vec<u8>) {
    if let Some(enc) = accept_encoding {
        req = req.header("accept-encoding", enc);
    }
    let r = req.send().unwrap();
    (r.status().as_u16(), r.bytes().unwrap().to_vec())
}
