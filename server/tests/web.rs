//! In-process tests of the office pages (`taxi_fiscal_server::web`): `oneshot` on the whole
//! router over a temporary data directory seeded with the demo registry and users, a fixed
//! clock, cheap password hashing. A small cookie-keeping "browser" logs in through the form,
//! reads the CSRF token from the pages and posts forms as a browser would (Origin, urlencoded).
//! Records are made by real device stores (sync-core) and synced through `POST /v1/sync`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use chrono::{DateTime, Duration, Utc};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sync_core::domain::{DriverRole, Plate};
use sync_core::records::{
    Agent, InfractionDraft, LegalBasis, PersonRef, RecordDoc, Signature, UserRole, WitnessInput,
};
use sync_core::rules::{Finding, Overall, RegistryStamp, Verdict};
use sync_core::store::Store;
use sync_core::sync::{DeviceSync, SyncResponse, device_uuid, meta_of};
use taxi_fiscal_server::config::PasswordParams;
use taxi_fiscal_server::{AppState, Clock, Config, demo, router};
use tower::ServiceExt;
use uuid::Uuid;

/// 2026-11-30 12:00 in Americana.
const NOW: &str = "2026-11-30T15:00:00Z";
const HOST: &str = "escritorio.test";

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap()
}

struct App {
    state: AppState,
    router: Router,
    _dir: tempfile::TempDir,
}

async fn app() -> App {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Config::new(dir.path());
    c.public_origins = vec![format!("http://{HOST}")];
    c.clock = Clock::fixed(now());
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

struct Page {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Page {
    fn location(&self) -> &str {
        self.headers
            .get("location")
            .map(|v| v.to_str().unwrap())
            .unwrap_or("")
    }

    fn assert_html(&self) {
        let ct = self.headers.get("content-type").unwrap().to_str().unwrap();
        assert!(ct.starts_with("text/html"), "{ct}: {}", self.body);
        assert!(self.body.contains("<html lang=\"pt-BR\">"), "{}", self.body);
    }

    /// The value of the hidden `csrf` field.
    fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let start = self.body.find(marker).expect("a form with a csrf field") + marker.len();
        let end = self.body[start..].find('"').unwrap();
        self.body[start..start + end].to_owned()
    }

    /// The text of the element with `id`, its inner tags removed.
    fn element(&self, id: &str) -> String {
        let marker = format!(" id=\"{id}\"");
        let at = self
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("no #{id} in {}", self.body));
        let start = self.body[..at].rfind('<').unwrap();
        let tag: String = self.body[start + 1..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let open_end = self.body[start..].find('>').unwrap() + start + 1;
        // The matching closing tag, counting nested elements of the same name.
        let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
        let mut depth = 1;
        let mut i = open_end;
        let end = loop {
            let next_close = self.body[i..].find(&close).unwrap() + i;
            match self.body[i..].find(&open).map(|o| o + i) {
                Some(o) if o < next_close => {
                    depth += 1;
                    i = o + open.len();
                }
                _ => {
                    depth -= 1;
                    if depth == 0 {
                        break next_close;
                    }
                    i = next_close + close.len();
                }
            }
        };
        let mut text = String::new();
        let mut in_tag = false;
        for c in self.body[open_end..end].chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        text
    }

    /// The `value` of the first input named `name`.
    fn field_value(&self, name: &str) -> String {
        let marker = format!("name=\"{name}\" value=\"");
        let start = self
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("no field {name} in {}", self.body))
            + marker.len();
        let end = self.body[start..].find('"').unwrap();
        self.body[start..start + end].to_owned()
    }

    /// The ids of the forms under "Próximo passo", in page order.
    fn next_forms(&self) -> Vec<String> {
        let start = self
            .body
            .find("id=\"proximo-passo\"")
            .unwrap_or_else(|| panic!("no #proximo-passo in {}", self.body));
        let end = self.body[start..].find("</section>").unwrap() + start;
        let section = &self.body[start..end];
        section
            .match_indices("<form ")
            .filter_map(|(i, _)| {
                let tag = &section[i..i + section[i..].find('>').unwrap()];
                let at = tag.find(" id=\"")? + 5;
                Some(tag[at..at + tag[at..].find('"').unwrap()].to_owned())
            })
            .collect()
    }

    /// The text a person reads: tags removed (attributes such as links' targets are not text).
    fn visible_text(&self) -> String {
        let mut text = String::new();
        let mut in_tag = false;
        for c in self.body.chars() {
            match c {
                '<' => in_tag = true,
                '>' => {
                    in_tag = false;
                    text.push(' ');
                }
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        text
    }
}

/// Keeps the session cookie like a browser.
struct Browser<'a> {
    app: &'a App,
    cookie: Option<String>,
}

impl<'a> Browser<'a> {
    fn new(app: &'a App) -> Self {
        Self { app, cookie: None }
    }

    async fn send(&mut self, req: axum::http::request::Builder, body: Body) -> Page {
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
            let set = set.to_str().unwrap();
            let pair = set.split(';').next().unwrap().to_owned();
            self.cookie = if pair.ends_with('=') {
                None
            } else {
                Some(pair)
            };
        }
        let body = res.into_body().collect().await.unwrap().to_bytes();
        Page {
            status,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    }

    async fn get(&mut self, path: &str) -> Page {
        self.send(
            Request::builder().method(Method::GET).uri(path),
            Body::empty(),
        )
        .await
    }

    /// A form post from this site, as a browser sends it.
    async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Page {
        self.post_from(path, fields, &format!("http://{HOST}"))
            .await
    }

    async fn post_from(&mut self, path: &str, fields: &[(&str, &str)], origin: &str) -> Page {
        let body = serde_urlencoded::to_string(fields).unwrap();
        self.send(
            Request::builder()
                .method(Method::POST)
                .uri(path)
                .header("origin", origin)
                .header("content-type", "application/x-www-form-urlencoded"),
            Body::from(body),
        )
        .await
    }

    async fn login(&mut self, username: &str, password: &str) -> Page {
        self.post(
            "/login",
            &[
                ("usuario", username),
                ("senha", password),
                ("next", "/escritorio"),
            ],
        )
        .await
    }

    async fn login_demo(&mut self, username: &str) {
        let u = demo::USERS.iter().find(|u| u.username == username).unwrap();
        let p = self.login(u.username, u.password).await;
        assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    }

    /// Posts a form of `page_path` (its CSRF token read from the page).
    ///
    /// The fixed clock moves a second first, as a person's time between two clicks: office
    /// events are ordered by their instant.
    async fn submit(&mut self, page_path: &str, action: &str, fields: &[(&str, &str)]) -> Page {
        self.app.state.clock().advance(Duration::seconds(1));
        let csrf = self.get(page_path).await.csrf();
        let mut all = vec![("csrf", csrf.as_str())];
        all.extend_from_slice(fields);
        self.post(action, &all).await
    }
}

// ----- records made on a device and synced ----------------------------------------------------

/// An officer's device: its own store, logged in through the API.
struct Phone {
    agent: Agent,
    token: String,
    store: Store,
    sync: DeviceSync,
    _dir: tempfile::TempDir,
}

async fn api(app: &App, method: Method, path: &str, token: Option<&str>, body: Value) -> Value {
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    let res = app
        .router
        .clone()
        .oneshot(b.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    assert!(
        status.is_success(),
        "{path}: {status} {}",
        String::from_utf8_lossy(&bytes)
    );
    serde_json::from_slice(&bytes).unwrap()
}

async fn api_login(app: &App, username: &str, password: &str, device: &str) -> Value {
    api(
        app,
        Method::POST,
        "/v1/auth/login",
        None,
        json!({"username": username, "password": password, "device_id": device}),
    )
    .await
}

async fn phone_on(app: &App, username: &str, password: &str, device: &str) -> Phone {
    let login = api_login(app, username, password, device).await;
    let dir = tempfile::tempdir().unwrap();
    Phone {
        agent: Agent::new(
            login["user"]["id"].as_str().unwrap(),
            UserRole::GuardaMunicipal,
            device_uuid(device),
        ),
        token: login["access_token"].as_str().unwrap().to_owned(),
        store: Store::open(dir.path().join("device.db")).unwrap(),
        sync: DeviceSync::new(device_uuid(device)),
        _dir: dir,
    }
}

async fn phone(app: &App) -> Phone {
    phone_on(app, "fiscal", "fiscal-demo", "tablet-fiscal-01").await
}

/// The demo officer's tablet and a second device of the same officer (registered by the
/// admin): two copies of the same records, for conflicts and duplicates.
async fn two_phones(app: &App) -> (Phone, Phone) {
    let admin = api_login(app, "admin", "admin-demo", "desktop-admin").await;
    let p = phone(app).await;
    api(
        app,
        Method::POST,
        "/v1/devices",
        admin["access_token"].as_str(),
        json!({"id": "celular-fiscal-02", "user_id": p.agent.user_id, "label": "Celular 2"}),
    )
    .await;
    let p2 = phone_on(app, "fiscal", "fiscal-demo", "celular-fiscal-02").await;
    (p, p2)
}

impl Phone {
    fn persist(&mut self, doc: &mut RecordDoc) -> String {
        let id = doc.id().to_string();
        let meta = meta_of(doc, now()).unwrap();
        let chunk = doc.save_incremental();
        self.store
            .write_record(&id, doc.kind().as_str(), &meta, &chunk, false)
            .unwrap();
        id
    }

    fn doc(&self, id: &str) -> RecordDoc {
        RecordDoc::load(&self.store.load_record_bytes(id).unwrap().concat()).unwrap()
    }

    async fn sync(&mut self, app: &App) {
        for _ in 0..10 {
            let req = self.sync.build_request(&self.store).unwrap().request;
            let resp = api(
                app,
                Method::POST,
                "/v1/sync",
                Some(&self.token),
                serde_json::to_value(&req).unwrap(),
            )
            .await;
            let resp: SyncResponse = serde_json::from_value(resp).unwrap();
            let report = self
                .sync
                .apply_response(&mut self.store, &req, &resp, now())
                .unwrap();
            if !report.again {
                return;
            }
        }
        panic!("sync did not converge");
    }
}

/// The first permit of the demo registry: number, plate, holder.
async fn a_permit(app: &App, skip: usize) -> (String, String, String) {
    let reg = app.state.store().registry().await.unwrap();
    let permit = reg
        .permits
        .iter()
        .filter(|p| p.state == sync_core::domain::PermitState::Active)
        .nth(skip)
        .unwrap();
    let vehicle = reg
        .vehicles
        .iter()
        .find(|v| v.id == permit.vehicle_id)
        .unwrap();
    (
        permit.number.clone(),
        vehicle.plate.canonical().to_owned(),
        permit.holder_id.clone(),
    )
}

fn verdict(version: u64, age_seconds: i64, plate: &str) -> Verdict {
    Verdict {
        overall: Overall::Irregular,
        checked_at: now() - Duration::hours(2),
        checked_at_local: "2026-11-30T10:00:00-03:00".into(),
        permit_number: None,
        plate: Some(plate.to_owned()),
        driver_person_id: None,
        driver_role: Some(DriverRole::Holder),
        registry: RegistryStamp {
            version,
            refreshed_at: Some(now() - Duration::hours(2) - Duration::seconds(age_seconds)),
            age_seconds: Some(age_seconds),
        },
        findings: vec![Finding::new(
            sync_core::rules::RuleId::R24,
            "Táxi parado fora do próprio ponto em horário obrigatório.",
        )],
    }
}

fn draft(plate: &str, permit: &str, holder: &str, facts: &str) -> InfractionDraft {
    InfractionDraft {
        id: Uuid::now_v7(),
        // No auto number: a number must come from a block leased to the device (the sync
        // checks it), and these pages are not about numbers.
        number: None,
        issuing_body: "Guarda Municipal de Americana".into(),
        occurred_at: now() - Duration::hours(2),
        monotonic: 7,
        position: Some(sync_core::records::Position {
            lat: -22.7395,
            lon: -47.3317,
            accuracy_m: 8.0,
        }),
        stand_id: Some("S02".into()),
        plate: Plate::parse(plate).unwrap(),
        driver: PersonRef::Registry(holder.to_owned()),
        driver_role: DriverRole::Holder,
        permit_number: Some(permit.to_owned()),
        holder_id: Some(holder.to_owned()),
        facts: facts.to_owned(),
        legal_basis: vec![LegalBasis {
            rule_id: "R24".into(),
            citation: "Lei 4.019/2004, art. 16, I; art. 31, VI".into(),
        }],
        verdict: Some(verdict(3, 7_200, plate)),
        witnesses: vec![WitnessInput {
            person: PersonRef::Observed("w-1".into()),
            statement: "Vi o táxi parado no ponto errado.".into(),
        }],
        photos: Vec::new(),
    }
}

/// An issued auto of the officer, synced; returns its id.
async fn issued_record(app: &App, p: &mut Phone, skip: usize, facts: &str) -> (String, String) {
    let (permit, plate, holder) = a_permit(app, skip).await;
    let agent = p.agent.clone();
    let mut r = RecordDoc::new_infraction(draft(&plate, &permit, &holder, facts), &agent).unwrap();
    r.confirm_vehicle(&agent, now() - Duration::minutes(111))
        .unwrap();
    r.issue_unsealed(
        &agent,
        now() - Duration::minutes(110),
        Signature::Missing {
            reason: "recusou-se a assinar".into(),
        },
    )
    .unwrap();
    let id = p.persist(&mut r);
    p.sync(app).await;
    (id, plate)
}

async fn record_json(app: &App, id: &str) -> Value {
    let office = api_login(app, "escritorio", "escritorio-demo", "desktop-escritorio").await;
    let token = office["access_token"].as_str().unwrap();
    api(
        app,
        Method::GET,
        &format!("/v1/records/{id}"),
        Some(token),
        Value::Null,
    )
    .await
}

fn event_kinds(record: &Value) -> Vec<String> {
    record["record"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap().to_owned())
        .collect()
}

// ----- tests --------------------------------------------------------------------------------------

#[tokio::test]
async fn login_opens_a_session_and_logout_ends_it() {
    let app = app().await;
    let mut b = Browser::new(&app);
    let p = b.get("/escritorio").await;
    assert_eq!(p.status, StatusCode::SEE_OTHER);
    assert_eq!(p.location(), "/login?next=/escritorio");

    let form = b.get("/login?next=/escritorio").await;
    assert_eq!(form.status, StatusCode::OK);
    form.assert_html();
    assert!(
        form.body.contains("<label for=\"usuario\">"),
        "{}",
        form.body
    );
    assert!(form.body.contains("<label for=\"senha\">"), "{}", form.body);

    let wrong = b.login("escritorio", "senha-errada").await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    wrong.assert_html();
    assert!(
        wrong
            .element("erro-login")
            .contains("Usuário ou senha incorretos")
    );
    assert!(wrong.headers.get("set-cookie").is_none());
    assert!(b.cookie.is_none());
    // The username typed stays in the form.
    assert!(
        wrong.body.contains("value=\"escritorio\""),
        "{}",
        wrong.body
    );

    let ok = b.login("Escritorio", "escritorio-demo").await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    assert_eq!(ok.location(), "/escritorio");
    let cookie = ok.headers.get("set-cookie").unwrap().to_str().unwrap();
    assert!(cookie.starts_with("tf_sessao="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );

    let inbox = b.get("/escritorio").await;
    assert_eq!(inbox.status, StatusCode::OK, "{}", inbox.body);
    inbox.assert_html();
    assert!(
        inbox
            .element("usuario-atual")
            .contains("Unidade de Transportes")
    );

    let csrf = inbox.csrf();
    let out = b.post("/logout", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(out.location(), "/login");
    assert!(b.cookie.is_none());
    // The old cookie is worthless now.
    let mut thief = Browser::new(&app);
    thief.cookie = Some(cookie.split(';').next().unwrap().to_owned());
    assert_eq!(thief.get("/escritorio").await.status, StatusCode::SEE_OTHER);
    assert_eq!(b.get("/escritorio").await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_session_survives_a_restart_on_the_same_data_directory() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let before = b.get("/escritorio").await;
    assert_eq!(before.status, StatusCode::OK, "{}", before.body);
    let csrf = before.csrf();
    let cookie = b.cookie.clone();
    assert!(cookie.is_some());

    // The server stops and starts again on the same data directory (the store keeps the
    // sessions, as every node of a deployment shares them).
    let App {
        state,
        router: old_router,
        _dir: dir,
    } = app;
    let config = state.config().clone();
    drop(old_router);
    drop(state);
    let state = AppState::open(config, taxi_fiscal_server::store::sqlite::open)
        .await
        .unwrap();
    let app = App {
        router: router(state.clone()),
        state,
        _dir: dir,
    };

    let mut b = Browser::new(&app);
    b.cookie = cookie.clone();
    let after = b.get("/escritorio").await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.body);
    assert!(
        after
            .element("usuario-atual")
            .contains("Unidade de Transportes")
    );
    // The same session: a form of a page read before the restart posts after it.
    assert_eq!(after.csrf(), csrf);
    let out = b.post("/logout", &[("csrf", &csrf)]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(out.location(), "/login");
    // Ended in the store: the old cookie opens nothing.
    let mut old = Browser::new(&app);
    old.cookie = cookie;
    assert_eq!(old.get("/escritorio").await.status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn login_refuses_another_origin_and_unsafe_next() {
    let app = app().await;
    let mut b = Browser::new(&app);
    let p = b
        .post_from(
            "/login",
            &[("usuario", "escritorio"), ("senha", "escritorio-demo")],
            "http://evil.example",
        )
        .await;
    assert_eq!(p.status, StatusCode::FORBIDDEN);
    assert!(b.cookie.is_none());
    let p = b
        .post(
            "/login",
            &[
                ("usuario", "escritorio"),
                ("senha", "escritorio-demo"),
                ("next", "//evil.example/x"),
            ],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER);
    assert_eq!(p.location(), "/escritorio");
}

#[tokio::test]
async fn login_with_a_forged_host_is_refused() {
    let app = app().await;
    // The attacker's page posts to this server with its own name in Host and Origin: they
    // agree with each other, not with the server's public origin.
    for (host, origin) in [
        ("evil.example", "http://evil.example"),
        (
            "escritorio.test.evil.example",
            "http://escritorio.test.evil.example",
        ),
        (HOST, "https://escritorio.test"),
    ] {
        let body = "usuario=escritorio&senha=escritorio-demo&next=%2Fescritorio";
        let req = Request::builder()
            .method(Method::POST)
            .uri("/login")
            .header("host", host)
            .header("origin", origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap();
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert_eq!(res.status(), StatusCode::FORBIDDEN, "{host} {origin}");
        assert!(res.headers().get("set-cookie").is_none());
    }
    assert!(
        app.state.hash_pool().verifications() == 0,
        "no password checked"
    );
}

#[tokio::test]
async fn after_login_next_never_leaves_the_site() {
    let app = app().await;
    // The TAB that browsers drop turned `/<TAB>/evil.example` into `//evil.example`.
    let mut b = Browser::new(&app);
    let form = b.get("/login?next=/%09/evil.example").await;
    assert!(
        form.body.contains("name=\"next\" value=\"/escritorio\""),
        "{}",
        form.body
    );
    for next in [
        "/\t/evil.example",
        "/\r\n/evil.example",
        "/\\evil.example",
        "/.//evil.example",
    ] {
        let mut b = Browser::new(&app);
        let p = b
            .post(
                "/login",
                &[
                    ("usuario", "escritorio"),
                    ("senha", "escritorio-demo"),
                    ("next", next),
                ],
            )
            .await;
        assert_eq!(p.status, StatusCode::SEE_OTHER, "{next:?}");
        assert_eq!(p.location(), "/escritorio", "{next:?}");
    }
}

#[tokio::test]
async fn a_locked_login_page_says_when_to_retry() {
    let app = app().await;
    let mut b = Browser::new(&app);
    for _ in 0..4 {
        let p = b.login("escritorio", "senha-errada").await;
        assert_eq!(p.status, StatusCode::UNAUTHORIZED);
    }
    let p = b.login("escritorio", "senha-errada").await;
    assert_eq!(p.status, StatusCode::TOO_MANY_REQUESTS);
    p.assert_html();
    assert!(
        p.element("erro-login").contains("tente de novo em"),
        "{}",
        p.body
    );
    let secs: u64 = p.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(secs > 0);
}

#[tokio::test]
async fn officers_and_coordinators_get_sem_permissao() {
    let app = app().await;
    for user in ["fiscal", "coordenador"] {
        let mut b = Browser::new(&app);
        b.login_demo(user).await;
        for path in ["/escritorio", "/escritorio/duplicatas"] {
            let p = b.get(path).await;
            assert_eq!(p.status, StatusCode::FORBIDDEN, "{user} {path}");
            p.assert_html();
            assert!(p.body.contains("<h1>Sem permissão</h1>"), "{}", p.body);
            assert!(p.element("sem-permissao").contains("não dá acesso"));
            // They can still log out from there.
            assert!(p.body.contains("id=\"sair\""));
        }
    }
}

#[tokio::test]
async fn admin_reads_but_does_not_decide() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    let mut b = Browser::new(&app);
    b.login_demo("admin").await;
    let path = format!("/escritorio/registros/{id}");
    let page = b.get(&path).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("id=\"somente-leitura\""));
    assert!(!page.body.contains("id=\"form-decisao\""));
    let refused = b
        .submit(
            &path,
            &format!("{path}/evento"),
            &[("acao", "analisar"), ("nota", "x")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(!event_kinds(&record_json(&app, &id).await).contains(&"reviewed".to_owned()));
}

#[tokio::test]
async fn forms_without_the_session_token_or_from_elsewhere_are_refused() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let action = format!("{path}/evento");
    let before = event_kinds(&record_json(&app, &id).await);

    let none = b.post(&action, &[("acao", "analisar")]).await;
    assert_eq!(none.status, StatusCode::FORBIDDEN);
    none.assert_html();
    assert!(none.element("erro-csrf").contains("Nada foi gravado"));

    let forged = b
        .post(
            &action,
            &[("acao", "analisar"), ("csrf", "0123456789abcdef")],
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let csrf = b.get(&path).await.csrf();
    let elsewhere = b
        .post_from(
            &action,
            &[("acao", "analisar"), ("csrf", &csrf)],
            "http://evil.example",
        )
        .await;
    assert_eq!(elsewhere.status, StatusCode::FORBIDDEN);
    // Another session's token does not work either.
    let mut other = Browser::new(&app);
    other.login_demo("escritorio").await;
    let theirs = other.get("/escritorio").await.csrf();
    assert_ne!(theirs, csrf);
    let crossed = b
        .post(&action, &[("acao", "analisar"), ("csrf", &theirs)])
        .await;
    assert_eq!(crossed.status, StatusCode::FORBIDDEN);
    assert_eq!(event_kinds(&record_json(&app, &id).await), before);

    let ok = b
        .post(&action, &[("acao", "analisar"), ("csrf", &csrf)])
        .await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "{}", ok.body);
    assert!(event_kinds(&record_json(&app, &id).await).contains(&"reviewed".to_owned()));
}

#[tokio::test]
async fn inbox_filters_and_counts() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (a, plate_a) = issued_record(&app, &mut p, 0, "Primeiro.").await;
    let (b_id, plate_b) = issued_record(&app, &mut p, 1, "Segundo.").await;
    assert_ne!(plate_a, plate_b);
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;

    let all = b.get("/escritorio").await;
    assert_eq!(all.status, StatusCode::OK);
    assert!(all.body.contains(&format!("id=\"linha-{a}\"")));
    assert!(all.body.contains(&format!("id=\"linha-{b_id}\"")));
    // Newest first: b was made after a... both at the same instant; both listed.
    assert!(all.element("contagem-issued").contains("emitido"));
    assert!(all.body.contains("id=\"ordenar-placa\""));

    // Plate in the old spelling finds the record by its canonical form.
    let old = Plate::parse(&plate_a).unwrap();
    let typed = old.raw().to_lowercase();
    let one = b
        .get(&format!("/escritorio?placa={}", typed.replace(' ', "")))
        .await;
    assert!(
        one.body.contains(&format!("id=\"linha-{a}\"")),
        "{}",
        one.body
    );
    assert!(!one.body.contains(&format!("id=\"linha-{b_id}\"")));
    assert!(one.element("total-registros").starts_with('1'));

    // Status filter: nothing is under review yet.
    let none = b.get("/escritorio?situacao=under_review").await;
    assert!(none.body.contains("id=\"sem-registros\""));
    // A review moves record a; the filter and the counts follow.
    let path = format!("/escritorio/registros/{a}");
    let r = b
        .submit(&path, &format!("{path}/evento"), &[("acao", "analisar")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let review = b.get("/escritorio?situacao=under_review").await;
    assert!(review.body.contains(&format!("id=\"linha-{a}\"")));
    assert!(!review.body.contains(&format!("id=\"linha-{b_id}\"")));
    assert!(
        review
            .element("contagem-under_review")
            .contains("em análise")
    );

    // Rule and dates.
    let rule = b.get("/escritorio?regra=r24").await;
    assert!(rule.body.contains(&format!("id=\"linha-{b_id}\"")));
    let other_rule = b.get("/escritorio?regra=R01").await;
    assert!(!other_rule.body.contains(&format!("id=\"linha-{b_id}\"")));
    let future = b.get("/escritorio?de=2026-12-01").await;
    assert!(future.body.contains("id=\"sem-registros\""));
    let today = b.get("/escritorio?de=2026-11-30&ate=2026-11-30").await;
    assert!(today.body.contains(&format!("id=\"linha-{a}\"")));

    // Bad input is said on the page, not a bare error.
    let bad = b.get("/escritorio?placa=XYZ").await;
    assert_eq!(bad.status, StatusCode::OK);
    assert!(bad.element("erro-filtro").contains("Placa inválida"));
}

#[tokio::test]
async fn record_page_shows_evidence_verdict_and_photos() {
    let app = app().await;
    let mut p = phone(&app).await;
    let photo = b"\xFF\xD8\xFF\xE0 foto da cena".to_vec();
    let sha = hex::encode(Sha256::digest(&photo));
    let (permit, plate, holder) = a_permit(&app, 2).await;
    let agent = p.agent.clone();
    let mut d = draft(&plate, &permit, &holder, "Parado fora do ponto.");
    d.photos = vec![sha.clone(), "ab".repeat(32)];
    let mut r = RecordDoc::new_infraction(d, &agent).unwrap();
    r.confirm_vehicle(&agent, now() - Duration::minutes(111))
        .unwrap();
    r.issue_unsealed(
        &agent,
        now() - Duration::minutes(110),
        Signature::Missing {
            reason: "condutor ausente".into(),
        },
    )
    .unwrap();
    let id = p.persist(&mut r);
    p.sync(&app).await;
    let res = app
        .router
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::PUT)
                .uri(format!("/v1/photos/{sha}?record_id={id}"))
                .header("authorization", format!("Bearer {}", p.token))
                .header("content-type", "image/jpeg")
                .body(Body::from(photo.clone()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());

    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = b.get(&format!("/escritorio/registros/{id}")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    page.assert_html();
    assert!(page.element("veredito-versao").contains("versão 3"));
    assert!(page.element("veredito-idade").starts_with("2 h"));
    assert!(page.element("veredito-resultado").contains("irregular"));
    assert!(page.body.contains("R24"));
    // 13:00 UTC is 10:00 in Americana.
    assert!(
        page.element("prova-ocorrencia")
            .starts_with("30/11/2026 10:00")
    );
    assert!(page.element("prova-placa").contains(&plate));
    assert!(page.element("registro-situacao").contains("emitido"));
    // Issued by an app without a device key: accepted, and shown as unsigned.
    assert!(
        page.element("selo-ausente")
            .starts_with("Sem assinatura do dispositivo")
    );
    assert!(page.body.contains("Vi o táxi parado no ponto errado."));
    assert!(
        page.body
            .contains(&format!("src=\"/escritorio/fotos/{sha}/miniatura\""))
    );
    assert!(
        page.body
            .contains(&format!("href=\"/escritorio/fotos/{sha}\""))
    );
    assert!(page.body.contains("id=\"foto-ausente-2\""));

    let img = b.get(&format!("/escritorio/fotos/{sha}")).await;
    assert_eq!(img.status, StatusCode::OK);
    assert_eq!(img.headers.get("content-type").unwrap(), "image/jpeg");
    assert_eq!(img.headers.get("content-disposition").unwrap(), "inline");
    // Pages are not framed, cached or fed from elsewhere.
    assert_eq!(page.headers.get("x-frame-options").unwrap(), "DENY");
    assert_eq!(page.headers.get("cache-control").unwrap(), "no-store");
    let csp = page.headers.get("content-security-policy").unwrap();
    assert!(csp.to_str().unwrap().contains("default-src 'none'"));

    // A "photo" that is an SVG with script is never rendered by this site.
    let html = b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>".to_vec();
    let html_sha = hex::encode(Sha256::digest(&html));
    let res = app
        .router
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::PUT)
                .uri(format!("/v1/photos/{html_sha}"))
                .header("authorization", format!("Bearer {}", p.token))
                .header("content-type", "image/svg+xml")
                .body(Body::from(html))
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    {
        let served = b.get(&format!("/escritorio/fotos/{html_sha}")).await;
        assert_eq!(served.status, StatusCode::OK);
        assert_eq!(
            served.headers.get("content-type").unwrap(),
            "application/octet-stream"
        );
        assert_eq!(
            served.headers.get("content-disposition").unwrap(),
            "attachment"
        );
    }
    let unknown = b.get("/escritorio/nada-aqui").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    unknown.assert_html();

    let mut anon = Browser::new(&app);
    assert_eq!(
        anon.get(&format!("/escritorio/fotos/{sha}")).await.status,
        StatusCode::SEE_OTHER
    );
    let missing = b
        .get(&format!("/escritorio/registros/{}", Uuid::now_v7()))
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    missing.assert_html();
}

#[tokio::test]
async fn a_conflict_is_resolved_by_picking_a_value() {
    let app = app().await;
    let (mut p, mut p2) = two_phones(&app).await;
    let (permit, plate, holder) = a_permit(&app, 0).await;
    let agent = p.agent.clone();
    let mut r =
        RecordDoc::new_infraction(draft(&plate, &permit, &holder, "Original"), &agent).unwrap();
    let id = p.persist(&mut r);
    p.sync(&app).await;
    p2.sync(&app).await;
    for (ph, text) in [(&mut p, "Versão do tablet"), (&mut p2, "Versão do celular")] {
        let mut d = ph.doc(&id);
        let a = ph.agent.clone();
        d.set_facts(&a, now(), text).unwrap();
        ph.persist(&mut d);
    }
    p.sync(&app).await;
    p2.sync(&app).await;

    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let page = b.get(&path).await;
    assert!(page.body.contains("id=\"conflito-facts\""), "{}", page.body);
    assert!(page.body.contains("Versão do tablet") && page.body.contains("Versão do celular"));
    assert!(page.body.contains("Celular 2"), "who wrote each value");
    // Pick the value shown with the "celular" text: its form's hidden hash.
    let form_start = page
        .body
        .find("Versão do celular")
        .expect("the value is shown");
    let rest = &page.body[form_start..];
    let marker = "name=\"valor\" value=\"";
    let h0 = rest.find(marker).unwrap() + marker.len();
    let hash = &rest[h0..h0 + 64];
    let done = b
        .post(
            &format!("{path}/conflito"),
            &[("csrf", &page.csrf()), ("campo", "facts"), ("valor", hash)],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let after = b.get(&path).await;
    assert!(after.element("aviso").contains("resolvido"));
    assert!(!after.body.contains("id=\"conflito-facts\""));
    assert!(after.element("prova-fatos").contains("Versão do celular"));
    let rec = record_json(&app, &id).await;
    assert!(event_kinds(&rec).contains(&"conflict_resolved".to_owned()));
    assert_eq!(rec["record"]["conflicts"], json!([]));

    // The same choice again: the conflict is gone; said on the page, nothing appended.
    let again = b
        .post(
            &format!("{path}/conflito"),
            &[("csrf", &page.csrf()), ("campo", "facts"), ("valor", hash)],
        )
        .await;
    assert_eq!(again.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(again.element("erro-acao").contains("Não foi feito"));
    assert_eq!(
        event_kinds(&record_json(&app, &id).await).len(),
        event_kinds(&rec).len()
    );
}

#[tokio::test]
async fn decision_notification_and_appeal_through_the_forms() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let action = format!("{path}/evento");

    let page = b.get(&path).await;
    assert!(
        page.element("valor-multa").contains("R$ 797,02"),
        "{}",
        page.element("valor-multa")
    );
    // An issued auto: the review is the next step; the later steps are not offered yet.
    assert_eq!(
        page.next_forms(),
        [
            "form-analise",
            "form-classificacao",
            "form-anulacao",
            "form-arquivamento"
        ]
    );
    for id in ["form-analise", "analise-nota", "classificacao-regras"] {
        assert!(page.body.contains(&format!("id=\"{id}\"")), "#{id}");
        if !id.starts_with("form-") {
            assert!(
                page.body.contains(&format!("<label for=\"{id}\">")),
                "label of #{id}"
            );
        }
    }

    // An appeal before any ciência is refused by the state machine, shown with what was typed.
    let refused = b
        .submit(
            &path,
            &action,
            &[("acao", "recurso"), ("data", "2026-11-28")],
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    refused.assert_html();
    assert!(
        refused
            .body
            .contains("O recurso exige antes a ciência da decisão (art. 35)."),
        "{}",
        refused.body
    );
    assert!(refused.body.contains("value=\"2026-11-28\""));
    assert_eq!(event_kinds(&record_json(&app, &id).await), ["issued"]);

    // Bad input: a date that is not a date.
    let bad = b
        .submit(
            &path,
            &action,
            &[("acao", "ciencia"), ("data", "ontem"), ("meio", "ar")],
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.element("erro-acao").contains("Não foi feito"));

    let version_before = app.state.store().registry().await.unwrap().version;
    let closing = ["form-anulacao", "form-arquivamento"];
    for (fields, status, next) in [
        (
            vec![("acao", "analisar"), ("nota", "Conferido.")],
            "under_review",
            vec!["form-classificacao", "form-proposta"],
        ),
        // The office records its proposal: the server writes no step on its behalf.
        (
            vec![("acao", "propor"), ("penalidade", "suspensao-15")],
            "penalty_proposed",
            vec!["form-classificacao", "form-proposta", "form-decisao"],
        ),
        (
            vec![("acao", "decidir"), ("penalidade", "suspensao-15")],
            "penalty_decided",
            vec!["form-ciencia"],
        ),
        // The notification of the decision, then the ciência by its signature.
        (
            vec![("acao", "notificar")],
            "penalty_decided",
            vec!["form-ciencia"],
        ),
        (
            vec![
                ("acao", "ciencia"),
                ("data", "2026-11-30"),
                ("meio", "assinatura"),
                ("notificacao", "NP-2026-000001"),
            ],
            "notified",
            vec!["form-ciencia", "form-reconsideracao", "form-recurso"],
        ),
        (
            vec![("acao", "recurso"), ("data", "2026-11-30")],
            "appeal_filed",
            vec!["form-decisao-recurso"],
        ),
    ] {
        let mut r = b.submit(&path, &action, &fields).await;
        if fields[0].1 == "decidir" {
            // A decision that suspends: the confirmation page first, nothing stored.
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
            assert!(
                r.element("efeitos-cadastro")
                    .contains("ficará suspenso de 30/11/2026 a 14/12/2026"),
                "{}",
                r.element("efeitos-cadastro")
            );
            let token = r.field_value("confirmacao");
            let mut confirmed = fields.clone();
            confirmed.push(("confirmacao", token.as_str()));
            r = b
                .post(
                    &action,
                    &[&[("csrf", r.csrf().as_str())], &confirmed[..]].concat(),
                )
                .await;
        }
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{fields:?}: {}", r.body);
        assert_eq!(r.location(), path);
        let rec = record_json(&app, &id).await;
        assert_eq!(rec["record"]["status"], status, "{fields:?}");
        let page = b.get(&path).await;
        let expected: Vec<&str> = next.iter().copied().chain(closing).collect();
        assert_eq!(page.next_forms(), expected, "after {fields:?}");
    }
    let page = b.get(&path).await;
    assert!(
        page.element("registro-situacao")
            .contains("recurso interposto")
    );
    // Ciência on 30/11 (Monday), the day of the decision: day 10 is Thursday 10/12 (art. 35,
    // R34).
    assert_eq!(page.element("prazo-recurso-data"), "10/12/2026");
    assert!(
        page.body.contains("suspensão por 15 dias"),
        "{}",
        page.element("decisao-vigente")
    );
    // The decision entered the registry in the same operation (a new version for devices).
    let reg = app.state.store().registry().await.unwrap();
    assert!(reg.version > version_before);
    assert!(
        reg.penalties
            .iter()
            .any(|p| p.record_id.as_deref() == Some(id.as_str())),
        "the suspension is in the registry"
    );
    // A second appeal: refused citing art. 33; nothing stored.
    let before = event_kinds(&record_json(&app, &id).await);
    let second = b
        .submit(
            &path,
            &action,
            &[("acao", "recurso"), ("data", "2026-11-30")],
        )
        .await;
    assert_eq!(second.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(second.element("erro-acao").contains("Não foi feito"));
    assert!(second.body.contains("art. 33"), "{}", second.body);
    assert_eq!(event_kinds(&record_json(&app, &id).await), before);
}

#[tokio::test]
async fn a_late_appeal_is_refused_citing_art_35() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 1, "Discussão no ponto.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let action = format!("{path}/evento");
    for step in ["analisar", "propor"] {
        let r = b
            .submit(
                &path,
                &action,
                &[("acao", step), ("penalidade", "advertencia")],
            )
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{step}: {}", r.body);
    }
    let shown = b
        .submit(
            &path,
            &action,
            &[("acao", "decidir"), ("penalidade", "advertencia")],
        )
        .await;
    assert!(
        shown
            .element("efeitos-cadastro")
            .contains("advertência escrita entra no histórico do alvará"),
        "{}",
        shown.body
    );
    let decided = b
        .post(
            &action,
            &[
                ("csrf", shown.csrf().as_str()),
                ("acao", "decidir"),
                ("penalidade", "advertencia"),
                ("confirmacao", shown.field_value("confirmacao").as_str()),
            ],
        )
        .await;
    assert_eq!(decided.status, StatusCode::SEE_OTHER, "{}", decided.body);
    let page = b.get(&path).await;
    assert!(
        page.element("aviso")
            .contains("Cadastro atualizado (versão"),
        "{}",
        page.element("aviso")
    );
    // A ciência by postal receipt names the notification delivered: without one, refused.
    let unnamed = b
        .submit(
            &path,
            &action,
            &[
                ("acao", "ciencia"),
                ("data", "2026-11-30"),
                ("meio", "ar"),
                ("notificacao", ""),
            ],
        )
        .await;
    assert_eq!(unnamed.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        unnamed
            .element("erro-acao")
            .contains("indique a notificação de penalidade"),
        "{}",
        unnamed.element("erro-acao")
    );
    let made = b.submit(&path, &action, &[("acao", "notificar")]).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let page = b.get(&path).await;
    assert!(
        page.element("aviso")
            .contains("Notificação NP-2026-000001 gerada."),
        "{}",
        page.element("aviso")
    );
    assert!(page.body.contains("id=\"pdf-NP-2026-000001\""));
    // A ciência dated before the decision is refused: it would close the appeal period
    // before there was a decision to appeal against.
    let early = b
        .submit(
            &path,
            &action,
            &[
                ("acao", "ciencia"),
                ("data", "2026-11-03"),
                ("meio", "ar"),
                ("notificacao", "NP-2026-000001"),
            ],
        )
        .await;
    assert_eq!(early.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        early.element("erro-acao").contains("é anterior à"),
        "{}",
        early.element("erro-acao")
    );
    let notified = b
        .submit(
            &path,
            &action,
            &[
                ("acao", "ciencia"),
                ("data", "2026-11-30"),
                ("meio", "ar"),
                ("notificacao", "NP-2026-000001"),
            ],
        )
        .await;
    assert_eq!(notified.status, StatusCode::SEE_OTHER, "{}", notified.body);
    let page = b.get(&path).await;
    assert!(
        page.element("aviso").contains("até 10/12/2026 (art. 35)"),
        "{}",
        page.element("aviso")
    );
    // Two weeks later, in a new session.
    app.state.clock().advance(chrono::Duration::days(14));
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = b.get(&path).await;
    assert!(page.element("prazo-recurso").contains("prazo encerrado"));
    let late = b
        .submit(
            &path,
            &action,
            &[("acao", "recurso"), ("data", "2026-12-11")],
        )
        .await;
    assert_eq!(late.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        late.body.contains("art. 35"),
        "{}",
        late.element("erro-acao")
    );
    // What was typed is still in the form.
    assert!(
        late.body
            .contains("id=\"recurso-data\" name=\"data\" value=\"2026-12-11\"")
    );
    assert_eq!(record_json(&app, &id).await["record"]["status"], "notified");
}

#[tokio::test]
async fn duplicates_are_grouped_and_merged_through_the_page() {
    let app = app().await;
    let (mut p, mut p2) = two_phones(&app).await;
    // The same scene written on two devices; a third record of another taxi.
    let (first, plate) = issued_record(&app, &mut p, 0, "Parado fora do ponto (tablet).").await;
    let (second, _) = issued_record(&app, &mut p2, 0, "Parado fora do ponto (celular).").await;
    let (other, other_plate) = issued_record(&app, &mut p2, 1, "Outro táxi.").await;
    assert_ne!(plate, other_plate);

    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = b.get("/escritorio/duplicatas").await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("id=\"grupo-1\""));
    assert!(!page.body.contains("id=\"grupo-2\""));
    assert!(page.body.contains(&format!("id=\"abrir-{first}\"")));
    assert!(page.body.contains(&format!("id=\"abrir-{second}\"")));
    assert!(!page.body.contains(&format!("id=\"abrir-{other}\"")));
    assert!(
        page.body
            .contains(&format!("<label for=\"manter-1-{first}\">"))
    );
    // The record page shows the other one too.
    let rec = b.get(&format!("/escritorio/registros/{first}")).await;
    assert!(rec.body.contains(&format!("id=\"duplicata-{second}\"")));

    let ids = format!("{first},{second}");
    let merged = b
        .submit(
            "/escritorio/duplicatas",
            "/escritorio/duplicatas/juntar",
            &[("registros", &ids), ("manter", &first)],
        )
        .await;
    assert_eq!(merged.status, StatusCode::SEE_OTHER, "{}", merged.body);
    let after = b.get("/escritorio/duplicatas").await;
    assert!(
        after.body.contains("id=\"sem-duplicatas\""),
        "{}",
        after.body
    );
    assert!(after.element("aviso").contains("juntado"));
    assert_eq!(
        record_json(&app, &second).await["record"]["status"],
        "merged_as_duplicate"
    );
    assert_eq!(
        record_json(&app, &first).await["record"]["status"],
        "issued"
    );
}

#[tokio::test]
async fn user_text_is_escaped() {
    let app = app().await;
    let mut p = phone(&app).await;
    let evil = "<script>alert('x')</script><img src=x onerror=alert(1)>";
    let (id, _) = issued_record(&app, &mut p, 0, evil).await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let r = b
        .submit(
            &path,
            &format!("{path}/evento"),
            &[
                ("acao", "analisar"),
                ("nota", "\"><script>alert(2)</script>"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let page = b.get(&path).await;
    assert!(!page.body.contains("<script"), "{}", page.body);
    assert!(!page.body.contains("<img src=x"));
    assert!(
        page.body
            .contains("&lt;script&gt;alert('x')&lt;/script&gt;")
    );
    assert!(page.body.contains("&quot;&gt;&lt;script&gt;alert(2)"));
    // Filters echo what was typed, escaped.
    let inbox = b.get("/escritorio?regra=%22%3E%3Cscript%3E").await;
    assert!(!inbox.body.contains("\"><script>"));
    let login = Browser::new(&app)
        .post("/login", &[("usuario", "<b>x</b>"), ("senha", "y")])
        .await;
    assert!(!login.body.contains("<b>x</b>"));
}

#[tokio::test]
async fn the_record_page_shows_the_receipt_and_flags_an_implausible_device_clock() {
    let app = app().await;
    let key = sync_core::records::DeviceKey::generate().unwrap();
    let login = api(
        &app,
        Method::POST,
        "/v1/auth/login",
        None,
        json!({"username": "fiscal", "password": "fiscal-demo", "device_id": "tablet-fiscal-01",
               "device_public_key": hex::encode(key.public_key())}),
    )
    .await;
    let mut p = phone(&app).await;
    p.token = login["access_token"].as_str().unwrap().to_owned();
    let agent = p.agent.clone();
    let mut ids = Vec::new();
    // Issued 110 minutes before the server received it; then one the device clock puts ten
    // minutes after the server's receipt (a clock ahead).
    for (skip, issued) in [
        (3, now() - Duration::minutes(110)),
        (4, now() + Duration::minutes(10)),
    ] {
        let (permit, plate, holder) = a_permit(&app, skip).await;
        let mut d = draft(&plate, &permit, &holder, "Parado fora do ponto.");
        d.occurred_at = issued - Duration::minutes(5);
        let mut r = RecordDoc::new_infraction(d, &agent).unwrap();
        r.confirm_vehicle(&agent, issued).unwrap();
        r.issue(
            &agent,
            issued,
            Signature::Missing {
                reason: "condutor ausente".into(),
            },
            &key,
        )
        .unwrap();
        ids.push(p.persist(&mut r));
    }
    p.sync(&app).await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = b.get(&format!("/escritorio/registros/{}", ids[0])).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    page.assert_html();
    let line = page.element("selo-recebido");
    // 15:00 UTC is 12:00 in Americana.
    assert!(
        line.starts_with("Recebido pelo servidor até 30/11/2026 12:00"),
        "{line}"
    );
    assert!(!page.body.contains("id=\"selo-relogio\""));
    // The officer's confirmation of the vehicle, with who and when.
    let confirmed = page.element("prova-veiculo-confirmado");
    assert!(
        confirmed.starts_with("confirmada pelo agente ("),
        "{confirmed}"
    );
    assert!(confirmed.contains(&agent.user_id), "{confirmed}");
    let page = b.get(&format!("/escritorio/registros/{}", ids[1])).await;
    let alert = page.element("selo-relogio");
    assert!(alert.contains("depois do recebimento"), "{alert}");
}

#[tokio::test]
async fn a_record_prints_without_its_forms_and_links_its_case_file() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 1, "Discussão no ponto.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = b.get(&format!("/escritorio/registros/{id}")).await;
    assert!(page.element("link-processo").contains("processo em PDF"));
    assert!(
        page.body
            .contains(&format!("href=\"/escritorio/registros/{id}/processo\"")),
        "the case file's link"
    );
    // Before a decision there is nothing to notify: no action offered.
    assert!(!page.body.contains("id=\"form-notificacao\""));
    let css = b.get("/static/escritorio.css").await;
    let print = css
        .body
        .split("@media print")
        .nth(1)
        .expect("a print stylesheet");
    for hidden in ["nav", "form", "button"] {
        assert!(
            print.split('{').nth(1).unwrap_or("").contains(hidden),
            "{hidden} hidden in print"
        );
    }
}

#[tokio::test]
async fn everyone_changes_their_password_on_the_page_and_their_other_sessions_end() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let mut other = Browser::new(&app);
    other.login_demo("escritorio").await;
    let device_login = api_login(&app, "escritorio", "escritorio-demo", "desktop-escritorio").await;

    // The header links the page; the page has the three labelled fields.
    let inbox = b.get("/escritorio").await;
    assert!(
        inbox
            .body
            .contains("id=\"minha-senha\" href=\"/escritorio/senha\""),
        "{}",
        inbox.body
    );
    let form = b.get("/escritorio/senha").await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.body);
    form.assert_html();
    for (id, autocomplete) in [
        ("senha-atual", "current-password"),
        ("senha-nova", "new-password"),
        ("senha-confirmacao", "new-password"),
    ] {
        assert!(form.body.contains(&format!("<label for=\"{id}\">")), "{id}");
        assert!(
            form.body.contains(&format!(
                "id=\"{id}\" name=\"{}\" autocomplete=\"{autocomplete}\"",
                id.replace('-', "_")
            )),
            "{id}: {}",
            form.body
        );
    }

    // A confirmation that differs: refused on the page, nothing checked nor hashed.
    let hashed = app.state.hash_pool().verifications();
    let fields = |current: &'static str, new: &'static str, again: &'static str| {
        [
            ("senha_atual", current),
            ("senha_nova", new),
            ("senha_confirmacao", again),
        ]
    };
    let p = b
        .submit(
            "/escritorio/senha",
            "/escritorio/senha",
            &fields("escritorio-demo", "nova-senha-forte", "nova-senha-forti"),
        )
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    assert!(
        p.element("erro-senha").contains("confirmação"),
        "{}",
        p.body
    );
    assert!(
        !p.body.contains("nova-senha-forte"),
        "no password is written back"
    );
    assert_eq!(app.state.hash_pool().verifications(), hashed);
    let p = b
        .submit(
            "/escritorio/senha",
            "/escritorio/senha",
            &fields("errada", "nova-senha-forte", "nova-senha-forte"),
        )
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    assert!(
        p.element("erro-senha").contains("senha atual"),
        "{}",
        p.body
    );
    let p = b
        .submit(
            "/escritorio/senha",
            "/escritorio/senha",
            &fields("escritorio-demo", "curta", "curta"),
        )
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    assert!(
        p.element("erro-senha").contains("8 caracteres"),
        "{}",
        p.body
    );
    // Without the session's token: refused like every form.
    let p = b
        .post(
            "/escritorio/senha",
            &fields("escritorio-demo", "nova-senha-forte", "nova-senha-forte"),
        )
        .await;
    assert_eq!(p.status, StatusCode::FORBIDDEN);

    let p = b
        .submit(
            "/escritorio/senha",
            "/escritorio/senha",
            &fields("escritorio-demo", "nova-senha-forte", "nova-senha-forte"),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert_eq!(p.location(), "/escritorio/senha");
    let done = b.get("/escritorio/senha").await;
    assert!(
        done.element("aviso").contains("Senha alterada"),
        "{}",
        done.body
    );
    // This session goes on; the other browser and the API login are out.
    assert_eq!(b.get("/escritorio").await.status, StatusCode::OK);
    assert_eq!(other.get("/escritorio").await.status, StatusCode::SEE_OTHER);
    let res = app
        .router
        .clone()
        .oneshot(
            Request::builder()
                .uri("/v1/me")
                .header(
                    "authorization",
                    format!("Bearer {}", device_login["access_token"].as_str().unwrap()),
                )
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
    // The new password opens a session, the old one no longer does.
    let mut again = Browser::new(&app);
    assert_eq!(
        again.login("escritorio", "escritorio-demo").await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        again.login("escritorio", "nova-senha-forte").await.status,
        StatusCode::SEE_OTHER
    );

    // The form is read under the login's limit: exactly at it, read (and refused as a
    // confirmation that differs); one byte over, 413.
    let csrf = b.get("/escritorio/senha").await.csrf();
    let limit = taxi_fiscal_server::limits::LOGIN_BODY_LIMIT;
    let body_of = |len: usize| {
        let frame = serde_urlencoded::to_string([
            ("csrf", csrf.as_str()),
            ("senha_atual", "x"),
            ("senha_nova", ""),
            ("senha_confirmacao", "y"),
        ])
        .unwrap();
        let pad = "x".repeat(len - frame.len());
        let fields = [
            ("csrf", csrf.as_str()),
            ("senha_atual", "x"),
            ("senha_nova", pad.as_str()),
            ("senha_confirmacao", "y"),
        ];
        assert_eq!(serde_urlencoded::to_string(fields).unwrap().len(), len);
        pad
    };
    let at = body_of(limit);
    let p = b
        .post(
            "/escritorio/senha",
            &[
                ("csrf", csrf.as_str()),
                ("senha_atual", "x"),
                ("senha_nova", at.as_str()),
                ("senha_confirmacao", "y"),
            ],
        )
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    let over = body_of(limit + 1);
    let p = b
        .post(
            "/escritorio/senha",
            &[
                ("csrf", csrf.as_str()),
                ("senha_atual", "x"),
                ("senha_nova", over.as_str()),
                ("senha_confirmacao", "y"),
            ],
        )
        .await;
    assert_eq!(p.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", p.body);

    // An officer, who has no office page, still has this one.
    let mut officer = Browser::new(&app);
    officer.login_demo("fiscal").await;
    let p = officer.get("/escritorio/senha").await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    assert!(p.body.contains("id=\"senha-atual\""));
}

/// Review, then propose `penalty`, through the forms.
async fn reviewed_and_proposed(b: &mut Browser<'_>, path: &str, penalty: &str) {
    let action = format!("{path}/evento");
    for step in ["analisar", "propor"] {
        let r = b
            .submit(path, &action, &[("acao", step), ("penalidade", penalty)])
            .await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{step}: {}", r.body);
    }
}

#[tokio::test]
async fn a_decision_with_registry_effects_is_stored_only_once_confirmed() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 3, "Cobrança acima do taxímetro.").await;
    let (permit, _, _) = a_permit(&app, 3).await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let action = format!("{path}/evento");
    reviewed_and_proposed(&mut b, &path, "multa").await;
    let events_before = event_kinds(&record_json(&app, &id).await);
    let version_before = app.state.store().registry().await.unwrap().version;

    // The decision: the confirmation page, with the fine the effect code computes.
    let shown = b
        .submit(
            &path,
            &action,
            &[("acao", "decidir"), ("penalidade", "multa")],
        )
        .await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    shown.assert_html();
    let effect = shown.element("efeitos-cadastro");
    assert!(
        effect.contains(&format!(
            "Multa de R$ 797,02 lançada ao alvará {permit} em 30/11/2026"
        )),
        "{effect}"
    );
    assert!(shown.element("confirmacao-quando").contains("30/11/2026"));
    assert!(shown.body.contains("id=\"confirmar\""));
    assert!(shown.body.contains("id=\"voltar-corrigir\""));
    // Nothing stored: no event, no registry version.
    assert_eq!(event_kinds(&record_json(&app, &id).await), events_before);
    assert_eq!(
        app.state.store().registry().await.unwrap().version,
        version_before
    );

    // "Voltar e corrigir": the record page, the decision form holding what was typed.
    let back = b
        .post(
            &format!("{path}/corrigir"),
            &[
                ("csrf", shown.csrf().as_str()),
                ("acao", "decidir"),
                ("penalidade", "multa"),
            ],
        )
        .await;
    assert_eq!(back.status, StatusCode::OK, "{}", back.body);
    assert!(!back.body.contains("id=\"erro-acao\""));
    assert!(
        back.body.contains("<option value=\"multa\" selected>"),
        "{}",
        back.element("form-decisao")
    );

    // A token confirms exactly the values shown: another penalty with it is shown again.
    let token = shown.field_value("confirmacao");
    let swapped = b
        .post(
            &action,
            &[
                ("csrf", shown.csrf().as_str()),
                ("acao", "decidir"),
                ("penalidade", "cassacao"),
                ("confirmacao", token.as_str()),
            ],
        )
        .await;
    assert_eq!(swapped.status, StatusCode::OK, "{}", swapped.body);
    assert!(swapped.body.contains("id=\"confirmacao-desatualizada\""));
    assert!(
        swapped.element("efeitos-cadastro").contains(&format!(
            "O alvará {permit} ficará cassado a partir de 30/11/2026"
        )),
        "{}",
        swapped.element("efeitos-cadastro")
    );
    assert_eq!(event_kinds(&record_json(&app, &id).await), events_before);

    // Confirmed: stored, with the same effect.
    let done = b
        .post(
            &action,
            &[
                ("csrf", shown.csrf().as_str()),
                ("acao", "decidir"),
                ("penalidade", "multa"),
                ("confirmacao", token.as_str()),
            ],
        )
        .await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    let reg = app.state.store().registry().await.unwrap();
    assert!(reg.version > version_before);
    let fine = reg
        .fines
        .iter()
        .find(|f| f.permit_number == permit && f.id.starts_with("MUL-PEN-"))
        .expect("the fine is in the registry");
    assert_eq!(fine.amount.to_string(), "797.02");
    assert_eq!(
        record_json(&app, &id).await["record"]["status"],
        "penalty_decided"
    );

    // A reversal on appeal lifts it, and is confirmed the same way.
    for fields in [
        vec![
            ("acao", "ciencia"),
            ("data", "2026-11-30"),
            ("meio", "publicacao"),
        ],
        vec![("acao", "recurso"), ("data", "2026-11-30")],
    ] {
        let r = b.submit(&path, &action, &fields).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{fields:?}: {}", r.body);
    }
    let shown = b
        .submit(
            &path,
            &action,
            &[("acao", "decisao-recurso"), ("resultado", "cancelada")],
        )
        .await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    let effect = shown.element("efeitos-cadastro");
    assert!(effect.contains("sai do cadastro"), "{effect}");
    assert!(effect.contains("ainda não paga, é cancelada"), "{effect}");
    assert_eq!(
        record_json(&app, &id).await["record"]["status"],
        "appeal_filed"
    );
}

#[tokio::test]
async fn the_record_page_speaks_portuguese_and_names_records_by_number() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 4, "Veículo sem vistoria.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let path = format!("/escritorio/registros/{id}");
    let action = format!("{path}/evento");
    let clean = |page: &Page, when: &str| {
        let text = page.visible_text();
        for leak in [
            "record.",
            "office.",
            "facts",
            "(s)",
            "(m)",
            "Evento recusado",
            &id,
        ] {
            assert!(!text.contains(leak), "{when}: «{leak}» in {text}");
        }
    };
    let page = b.get(&path).await;
    clean(&page, "issued");
    let number = record_json(&app, &id).await["record"]["number"]
        .as_str()
        .map(str::to_owned);
    if let Some(n) = number {
        assert!(
            page.body.contains(&format!("<h1>Auto nº {n}</h1>")),
            "{}",
            page.body
        );
    }
    // The audit trail in Portuguese.
    assert!(
        page.element("tabela-auditoria")
            .contains("registro recebido do dispositivo"),
        "{}",
        page.element("tabela-auditoria")
    );
    // One sentence per refusal, said once, in agreement: a proposal before the review.
    let refused = b
        .submit(
            &path,
            &action,
            &[("acao", "propor"), ("penalidade", "multa")],
        )
        .await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        refused
            .element("erro-acao")
            .split("Nada foi gravado")
            .next()
            .unwrap()
            .trim(),
        "Não foi feito: A proposta de penalidade exige antes a análise do registro pela \
         Unidade de Transportes."
    );
    clean(&refused, "refused");
    reviewed_and_proposed(&mut b, &path, "multa").await;
    // Annulled, the record refuses a step in the state machine's words, once.
    let shown = b
        .submit(
            &path,
            &action,
            &[("acao", "anular"), ("motivo", "Placa trocada.")],
        )
        .await;
    assert_eq!(shown.status, StatusCode::SEE_OTHER, "{}", shown.body);
    let page = b.get(&path).await;
    assert!(page.element("sem-proximo-passo").contains("anulado"));
    // Nothing of the procedure is offered; an annulled record may still be archived.
    assert_eq!(page.next_forms(), ["form-arquivamento"]);
    let late = b
        .submit(
            &path,
            &action,
            &[("acao", "decidir"), ("penalidade", "multa")],
        )
        .await;
    assert_eq!(
        late.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        late.body
    );
    let error = late.element("erro-acao");
    assert!(
        error.contains(
            "Não é possível registrar decisão de penalidade quando o registro está «anulado»."
        ),
        "{error}"
    );
    assert_eq!(error.matches("recusad").count(), 0, "{error}");
    clean(&late, "annulled");
    // The dated timeline names each step with its date and who did it.
    let timeline = late.element("linha-do-tempo");
    for step in [
        "Emissão",
        "Análise",
        "Proposta de penalidade",
        "Anulação: Placa trocada.",
    ] {
        assert!(timeline.contains(step), "{step}: {timeline}");
    }
    assert!(timeline.contains("30/11/2026"), "{timeline}");
}

// ----- the administrator's pages and the role policy ------------------------------------------

async fn user_id_of(app: &App, username: &str) -> String {
    app.state
        .store()
        .user_by_username(username.to_owned())
        .await
        .unwrap()
        .unwrap()
        .id
}

#[tokio::test]
async fn each_role_sees_only_the_menu_it_can_use() {
    let app = app().await;
    let mut admin = Browser::new(&app);
    admin.login_demo("admin").await;
    let mut office = Browser::new(&app);
    office.login_demo("escritorio").await;

    let a = admin.get("/escritorio").await;
    assert_eq!(a.status, StatusCode::OK);
    for id in ["menu-caixa", "menu-usuarios", "menu-dispositivos"] {
        assert!(a.body.contains(&format!("id=\"{id}\"")), "admin lacks {id}");
    }
    // The import page is a form only: not in the menu of who cannot post it.
    assert!(!a.body.contains("id=\"menu-importar\""));
    let o = office.get("/escritorio").await;
    assert!(o.body.contains("id=\"menu-importar\""));
    for id in ["menu-usuarios", "menu-dispositivos"] {
        assert!(
            !o.body.contains(&format!("id=\"{id}\"")),
            "office sees {id}"
        );
    }
    // The administrator's pages are the administrator's.
    for path in ["/escritorio/usuarios", "/escritorio/dispositivos"] {
        let p = office.get(path).await;
        assert_eq!(p.status, StatusCode::FORBIDDEN, "{path}");
        assert!(
            p.element("sem-permissao").contains("administração"),
            "{}",
            p.body
        );
    }
}

#[tokio::test]
async fn sem_permissao_shows_officers_no_office_menu() {
    let app = app().await;
    for user in ["fiscal", "coordenador"] {
        let mut b = Browser::new(&app);
        b.login_demo(user).await;
        for path in ["/escritorio", "/escritorio/usuarios"] {
            let p = b.get(path).await;
            assert_eq!(p.status, StatusCode::FORBIDDEN, "{user} {path}");
            assert!(
                !p.body.contains("Menu principal"),
                "{user} {path}: {}",
                p.body
            );
            assert!(!p.body.contains("id=\"menu-"), "{user} {path}");
            // Only the header: who, change password, log out.
            for id in ["usuario-atual", "minha-senha", "sair"] {
                assert!(
                    p.body.contains(&format!("id=\"{id}\"")),
                    "{user} {path} {id}"
                );
            }
        }
    }
}

#[tokio::test]
async fn admin_reads_the_office_pages_without_their_forms_and_cannot_post_them() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("admin").await;
    let law = b.get("/escritorio/lei").await;
    assert_eq!(law.status, StatusCode::OK, "{}", law.body);
    assert!(!law.body.contains("id=\"form-ipca\""), "{}", law.body);
    // The law page says it once for all its forms.
    assert!(!law.body.contains("id=\"form-regras\""), "{}", law.body);
    assert!(
        law.element("somente-leitura")
            .contains("só a Unidade de Transportes altera")
    );
    let import = b.get("/escritorio/cadastro/importar").await;
    assert!(!import.body.contains("id=\"form-importar\""));
    assert!(import.body.contains("id=\"form-importar-somente-leitura\""));
    // Posting anyway (a form kept open from before, or crafted) is refused, nothing written.
    let before = app.state.store().verify_audit().await.unwrap().rows;
    let p = b
        .submit(
            "/escritorio/lei",
            "/escritorio/lei/feriados",
            &[("data", "2026-12-24"), ("nome", "Véspera")],
        )
        .await;
    assert_eq!(p.status, StatusCode::FORBIDDEN, "{}", p.body);
    assert!(
        p.element("sem-permissao").contains("só consulta"),
        "{}",
        p.body
    );
    assert_eq!(app.state.store().verify_audit().await.unwrap().rows, before);
    // The office sees and posts the same forms.
    let mut office = Browser::new(&app);
    office.login_demo("escritorio").await;
    assert!(
        office
            .get("/escritorio/lei")
            .await
            .body
            .contains("id=\"form-ipca\"")
    );
}

#[tokio::test]
async fn admin_creates_changes_deactivates_and_resets_accounts_on_the_users_page() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("admin").await;
    let list = b.get("/escritorio/usuarios").await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    list.assert_html();
    assert!(
        list.element("usuario-fiscal").contains("Fiscal"),
        "{}",
        list.body
    );
    // The admin's own row has no actions.
    assert!(!list.body.contains("id=\"desativar-admin\""));

    // Create: a refusal keeps what was typed (not the password); then created.
    let fields = |password: &'static str| {
        [
            ("nome", "Maria da Silva"),
            ("usuario", "maria"),
            ("senha", password),
            ("perfil", "officer"),
            ("ponto", ""),
        ]
    };
    let p = b
        .submit(
            "/escritorio/usuarios",
            "/escritorio/usuarios",
            &fields("curta"),
        )
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    assert!(
        p.element("erro-usuarios").contains("ao menos 8"),
        "{}",
        p.body
    );
    assert!(p.body.contains("value=\"Maria da Silva\""));
    assert!(!p.body.contains("curta"));
    let p = b
        .submit(
            "/escritorio/usuarios",
            "/escritorio/usuarios",
            &fields("senha-da-maria"),
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert!(
        b.get("/escritorio/usuarios")
            .await
            .body
            .contains("id=\"usuario-maria\"")
    );

    // Change the role: a coordinator needs a stand.
    let maria = user_id_of(&app, "maria").await;
    let role_path = format!("/escritorio/usuarios/{maria}/perfil");
    let p = b
        .submit(
            "/escritorio/usuarios",
            &role_path,
            &[("perfil", "coordinator"), ("ponto", "")],
        )
        .await;
    assert_eq!(p.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", p.body);
    assert!(p.element("erro-usuarios").contains("ponto"), "{}", p.body);
    let p = b
        .submit(
            "/escritorio/usuarios",
            &role_path,
            &[("perfil", "coordinator"), ("ponto", "S01")],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let u = app
        .state
        .store()
        .user_by_id(maria.clone())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (u.role.as_str(), u.stand_id.as_deref()),
        ("coordinator", Some("S01"))
    );

    // Deactivate the demo officer: their open browser session ends at once.
    let mut officer = Browser::new(&app);
    officer.login_demo("fiscal").await;
    assert_eq!(
        officer.get("/escritorio/senha").await.status,
        StatusCode::OK
    );
    let fiscal = user_id_of(&app, "fiscal").await;
    let p = b
        .submit(
            "/escritorio/usuarios",
            &format!("/escritorio/usuarios/{fiscal}/desativar"),
            &[],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    let out = officer.get("/escritorio/senha").await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(out.location().starts_with("/login"), "{}", out.location());
    let list = b.get("/escritorio/usuarios").await;
    assert!(
        list.element("aviso").contains("desativado"),
        "{}",
        list.body
    );
    assert!(list.body.contains("id=\"reativar-fiscal\""));
    let p = b
        .submit(
            "/escritorio/usuarios",
            &format!("/escritorio/usuarios/{fiscal}/reativar"),
            &[],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);

    // Reset: the code is shown once, the link opens a form for that user, and the new
    // password opens a session.
    let p = b
        .submit(
            "/escritorio/usuarios",
            &format!("/escritorio/usuarios/{fiscal}/redefinicao"),
            &[],
        )
        .await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    let code = p.element("codigo-redefinicao");
    let link = p.element("link-redefinicao");
    assert!(
        link.ends_with(&format!("/redefinir-senha/{code}")),
        "{link}"
    );
    let mut user = Browser::new(&app);
    let form = user.get(&format!("/redefinir-senha/{code}")).await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.body);
    assert!(form.body.contains("Nova senha para"));
    let done = user
        .post(
            "/redefinir-senha",
            &[
                ("codigo", code.as_str()),
                ("senha_nova", "nova-senha-do-fiscal"),
                ("senha_confirmacao", "nova-senha-do-fiscal"),
            ],
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert!(done.element("senha-redefinida").contains("fiscal"));
    assert_eq!(
        user.login("fiscal", "nova-senha-do-fiscal").await.status,
        StatusCode::SEE_OTHER
    );
    // From another site: refused like the login form.
    let foreign = Browser::new(&app)
        .post_from(
            "/redefinir-senha",
            &[("codigo", code.as_str())],
            "http://evil.example",
        )
        .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn admin_enrols_and_revokes_devices_on_the_devices_page() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("admin").await;
    let list = b.get("/escritorio/dispositivos").await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(
        list.element("dispositivo-tablet-fiscal-01")
            .contains("Ativo")
    );

    let fiscal = user_id_of(&app, "fiscal").await;
    let p = b
        .submit(
            "/escritorio/dispositivos",
            "/escritorio/dispositivos/codigo",
            &[("usuario", fiscal.as_str())],
        )
        .await;
    assert_eq!(p.status, StatusCode::OK, "{}", p.body);
    let code = p.element("codigo-cadastro");
    assert_eq!(code.len(), 39, "{code}");
    let qr = &p.body[p.body.find("id=\"qr-cadastro\"").unwrap()..];
    assert!(
        qr.contains("<svg") && qr.contains("role=\"img\""),
        "{}",
        p.body
    );
    // The app exchanges it.
    let enrolled = api(
        &app,
        Method::POST,
        "/v1/devices/enrol",
        None,
        json!({"code": code, "device_name": "Tablet novo"}),
    )
    .await;
    let id = enrolled["device_id"].as_str().unwrap().to_owned();
    let list = b.get("/escritorio/dispositivos").await;
    let row = list.element(&format!("dispositivo-{id}"));
    assert!(
        row.contains("Tablet novo") && row.contains("nenhum"),
        "{row}"
    );
    // A device that sent records shows when the last one arrived.
    let tablet = list.element("dispositivo-tablet-fiscal-01");
    assert!(tablet.contains("nenhum"), "{tablet}");
    let mut p = phone(&app).await;
    issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    let list = b.get("/escritorio/dispositivos").await;
    let tablet = list.element("dispositivo-tablet-fiscal-01");
    assert!(!tablet.contains("nenhum"), "{tablet}");
    assert_eq!(tablet.matches("30/11/2026").count(), 2, "{tablet}");

    // Revoke: a confirmation first, then the device is out.
    let confirm = b
        .get(&format!("/escritorio/dispositivos/{id}/revogar"))
        .await;
    assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.body);
    assert!(confirm.body.contains("id=\"confirmar-revogacao\""));
    assert!(
        app.state
            .store()
            .device(id.clone())
            .await
            .unwrap()
            .unwrap()
            .revoked_at
            .is_none()
    );
    let p = b
        .submit(
            &format!("/escritorio/dispositivos/{id}/revogar"),
            &format!("/escritorio/dispositivos/{id}/revogar"),
            &[],
        )
        .await;
    assert_eq!(p.status, StatusCode::SEE_OTHER, "{}", p.body);
    assert!(
        app.state
            .store()
            .device(id.clone())
            .await
            .unwrap()
            .unwrap()
            .revoked_at
            .is_some()
    );
    let list = b.get("/escritorio/dispositivos").await;
    assert!(
        list.element(&format!("dispositivo-{id}"))
            .contains("Revogado")
    );
    assert!(!list.body.contains(&format!("id=\"revogar-{id}\"")));
}

// ----- lists: search, sort, appeal deadline, export ----------------------------------------

/// The position of `needle` in `body` (panics when absent).
fn at(body: &str, needle: &str) -> usize {
    body.find(needle)
        .unwrap_or_else(|| panic!("no {needle} in {body}"))
}

/// Takes record `id` from issued to notified (ciência on the day of the decision, 30/11).
async fn notified(b: &mut Browser<'_>, id: &str) {
    let path = format!("/escritorio/registros/{id}");
    let action = format!("{path}/evento");
    for fields in [
        vec![("acao", "analisar")],
        vec![("acao", "propor"), ("penalidade", "suspensao-15")],
        vec![("acao", "decidir"), ("penalidade", "suspensao-15")],
        vec![("acao", "notificar")],
    ] {
        let mut r = b.submit(&path, &action, &fields).await;
        if fields[0].1 == "decidir" {
            // A suspension is confirmed on its own page before it is stored.
            assert!(r.body.contains("id=\"efeitos-cadastro\""), "{}", r.body);
            let token = r.field_value("confirmacao");
            let mut confirmed = fields.clone();
            confirmed.push(("confirmacao", token.as_str()));
            r = b
                .post(
                    &action,
                    &[&[("csrf", r.csrf().as_str())], &confirmed[..]].concat(),
                )
                .await;
        }
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{fields:?}: {}", r.body);
    }
    let page = b.get(&path).await;
    let marker = "NP-2026-";
    let start = at(&page.body, marker);
    let number: String = page.body[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let r = b
        .submit(
            &path,
            &action,
            &[
                ("acao", "ciencia"),
                ("data", "2026-11-30"),
                ("meio", "assinatura"),
                ("notificacao", &number),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
}

#[tokio::test]
async fn inbox_searches_by_name_number_and_plate_sorts_and_exports() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (a, plate_a) = issued_record(&app, &mut p, 0, "Primeiro.").await;
    let (b_id, _) = issued_record(&app, &mut p, 1, "Segundo.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let reg = app.state.store().registry().await.unwrap();
    let (permit_a, _, holder_a) = a_permit(&app, 0).await;
    let name_a = reg
        .people
        .iter()
        .find(|x| x.id == holder_a)
        .unwrap()
        .name
        .clone();

    // The holder's name typed without accents, in upper case, finds only that record.
    let typed = taxi_fiscal_server::office::search::fold(&name_a).to_uppercase();
    let found = b
        .get(&format!("/escritorio?busca={}", typed.replace(' ', "+")))
        .await;
    assert_eq!(found.status, StatusCode::OK);
    assert!(
        found.body.contains(&format!("id=\"linha-{a}\"")),
        "{typed}: {}",
        found.body
    );
    assert!(!found.body.contains(&format!("id=\"linha-{b_id}\"")));
    // The old spelling of the plate, and the permit number, find it too.
    let old = Plate::parse(&plate_a).unwrap().raw().to_lowercase();
    for q in [old.replace(' ', ""), permit_a.clone()] {
        let page = b.get(&format!("/escritorio?busca={q}")).await;
        assert!(page.body.contains(&format!("id=\"linha-{a}\"")), "{q}");
        assert!(!page.body.contains(&format!("id=\"linha-{b_id}\"")), "{q}");
    }
    // The auto number, when the record has one.
    let row = app
        .state
        .store()
        .record(a.clone())
        .await
        .unwrap()
        .unwrap()
        .row;
    if let Some(n) = &row.number {
        let page = b.get(&format!("/escritorio?busca={n}")).await;
        assert!(page.body.contains(&format!("id=\"linha-{a}\"")), "{n}");
    }
    let nothing = b.get("/escritorio?busca=zzzz-ninguem").await;
    assert!(nothing.body.contains("id=\"sem-registros\""));
    // Too long a search is said on the page.
    let long = "a".repeat(taxi_fiscal_server::limits::MAX_SEARCH_CHARS + 1);
    let refused = b.get(&format!("/escritorio?busca={long}")).await;
    assert_eq!(refused.status, StatusCode::OK);
    assert!(refused.element("erro-filtro").contains("no máximo"));

    // Take a to notified: its appeal deadline shows, counted by the kernel (10/12).
    notified(&mut b, &a).await;
    let inbox = b.get("/escritorio").await;
    assert_eq!(inbox.element(&format!("prazo-{a}")), "até 10/12/2026");
    assert_eq!(inbox.element(&format!("prazo-{b_id}")), "—");

    // Sorted by deadline, in both directions, the record without one comes last.
    for dir in ["asc", "desc"] {
        let page = b
            .get(&format!("/escritorio?ordem=prazo&sentido={dir}"))
            .await;
        assert!(
            at(&page.body, &format!("id=\"linha-{a}\""))
                < at(&page.body, &format!("id=\"linha-{b_id}\"")),
            "{dir}"
        );
        assert!(page.body.contains(if dir == "asc" {
            "aria-sort=\"ascending\""
        } else {
            "aria-sort=\"descending\""
        }));
    }
    // Sorted by plate both ways: the two rows swap.
    let plate_asc = b.get("/escritorio?ordem=placa&sentido=asc").await;
    let plate_desc = b.get("/escritorio?ordem=placa&sentido=desc").await;
    let first = |p: &Page| {
        at(&p.body, &format!("id=\"linha-{a}\"")) < at(&p.body, &format!("id=\"linha-{b_id}\""))
    };
    assert_ne!(first(&plate_asc), first(&plate_desc));
    // Every column sorts without error, and garbage falls back to the default order.
    for key in [
        "numero",
        "tipo",
        "ocorrencia",
        "placa",
        "alvara",
        "ponto",
        "autor",
        "regras",
        "situacao",
        "pendencias",
        "prazo",
        "nada",
        "%00",
        "",
    ] {
        let page = b.get(&format!("/escritorio?ordem={key}&sentido=x")).await;
        assert_eq!(page.status, StatusCode::OK, "{key}");
        assert!(page.body.contains(&format!("id=\"linha-{a}\"")), "{key}");
    }

    // "Prazos vencendo" (the next DUE_SOON_DAYS days): 10/12 is further away.
    let soon = b.get("/escritorio?vencendo=1").await;
    assert!(soon.body.contains("id=\"sem-registros\""), "{}", soon.body);

    // The export: the filtered list, in the page's order, for a pt-BR Excel.
    let csv = b.get("/escritorio/caixa.csv?ordem=prazo").await;
    assert_eq!(csv.status, StatusCode::OK);
    assert!(
        csv.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    assert!(
        csv.headers["content-disposition"]
            .to_str()
            .unwrap()
            .contains("caixa-de-entrada.csv")
    );
    let lines: Vec<&str> = csv.body.split("\r\n").collect();
    assert_eq!(
        lines[0],
        "\u{feff}Número;Tipo;Ocorrência;Placa;Alvará;Ponto;Autor;Regras;Situação;Pendências;Prazo de recurso"
    );
    assert_eq!(lines.len(), 4, "{lines:?}"); // header, two records, the last CRLF
    assert!(lines[1].ends_with(";10/12/2026"), "{}", lines[1]);
    assert!(lines[1].contains(&permit_a), "{}", lines[1]);
    let one = b
        .get(&format!("/escritorio/caixa.csv?busca={permit_a}"))
        .await;
    assert_eq!(one.body.split("\r\n").count(), 3);
}

#[tokio::test]
async fn inbox_api_filters_pending_appeals_by_days_to_their_deadline() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (a, _) = issued_record(&app, &mut p, 0, "Primeiro.").await;
    let (b_id, _) = issued_record(&app, &mut p, 1, "Segundo.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    notified(&mut b, &a).await;
    let office = api_login(&app, "escritorio", "escritorio-demo", "desktop-escritorio").await;
    let token = office["access_token"].as_str().unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["id"].as_str().unwrap().to_owned())
            .collect()
    };
    // Today is 30/11 and the last day 10/12: ten days ahead, inclusive.
    let nine = api(
        &app,
        Method::GET,
        "/v1/office/inbox?appeal_due_within_days=9",
        Some(token),
        Value::Null,
    )
    .await;
    assert_eq!(nine["total"], 0, "{nine}");
    let ten = api(
        &app,
        Method::GET,
        "/v1/office/inbox?appeal_due_within_days=10",
        Some(token),
        Value::Null,
    )
    .await;
    assert_eq!(ids(&ten), std::slice::from_ref(&a), "{ten}");
    assert_eq!(ten["items"][0]["appeal_deadline"], "2026-12-10");
    let all = api(
        &app,
        Method::GET,
        "/v1/office/inbox?sort=appeal_deadline&direction=desc",
        Some(token),
        Value::Null,
    )
    .await;
    assert_eq!(ids(&all), [a.clone(), b_id.clone()], "{all}");
    assert_eq!(all["total"], 2);
    let refused = |path: String| {
        let req = Request::builder()
            .uri(path)
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        let router = app.router.clone();
        async move {
            let res = router.oneshot(req).await.unwrap();
            let status = res.status();
            let bytes = res.into_body().collect().await.unwrap().to_bytes();
            (status, serde_json::from_slice::<Value>(&bytes).unwrap())
        }
    };
    let (status, bad) = refused("/v1/office/inbox?sort=nada".into()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(bad["error"]["code"], "invalid_query", "{bad}");
    let words = ["a"; taxi_fiscal_server::limits::MAX_SEARCH_WORDS + 1].join("+");
    let (status, many) = refused(format!("/v1/office/inbox?search={words}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{many}");
    assert!(
        many["error"]["message"]
            .as_str()
            .unwrap()
            .contains("palavras"),
        "{many}"
    );
    let words = ["a"; taxi_fiscal_server::limits::MAX_SEARCH_WORDS].join("+");
    let fine = api(
        &app,
        Method::GET,
        &format!("/v1/office/inbox?search={words}"),
        Some(token),
        Value::Null,
    )
    .await;
    assert!(fine["items"].is_array(), "{fine}");
}

#[tokio::test]
async fn fines_and_permits_lists_sort_filter_and_export() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let reg = app.state.store().registry().await.unwrap();

    // Fines: sorted by amount, both ways; the export has every listed fine.
    let desc = b.get("/escritorio/multas?ordem=valor&sentido=desc").await;
    assert_eq!(desc.status, StatusCode::OK);
    assert!(desc.body.contains("aria-sort=\"descending\""));
    let csv = b
        .get("/escritorio/multas.csv?ordem=valor&sentido=desc")
        .await;
    assert_eq!(csv.status, StatusCode::OK);
    let lines: Vec<&str> = csv.body.split("\r\n").filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines[0],
        "\u{feff}Número;Alvará;Titular;Valor;Lançada em;Pagamento"
    );
    assert_eq!(lines.len() - 1, reg.fines.len());
    let amounts: Vec<f64> = lines[1..]
        .iter()
        .map(|l| {
            l.split(';')
                .nth(3)
                .unwrap()
                .replace(',', ".")
                .parse()
                .unwrap()
        })
        .collect();
    assert!(amounts.windows(2).all(|w| w[0] >= w[1]), "{amounts:?}");
    let garbage = b.get("/escritorio/multas?ordem=%27%3B--&sentido=%01").await;
    assert_eq!(garbage.status, StatusCode::OK);
    assert!(garbage.body.contains("aria-sort=\"descending\"")); // the default: newest first

    // Permits: every permit is in exactly one situation; the revoked ones are the revoked.
    let all = b.get("/escritorio/alvaras.csv").await;
    let count = |p: &Page| p.body.split("\r\n").filter(|l| !l.is_empty()).count() - 1;
    assert_eq!(count(&all), reg.permits.len());
    let mut sum = 0;
    for key in ["ativo", "suspenso", "cassado", "sucessao", "nao-renovado"] {
        let page = b
            .get(&format!("/escritorio/alvaras.csv?situacao={key}"))
            .await;
        assert_eq!(page.status, StatusCode::OK, "{key}");
        sum += count(&page);
    }
    assert_eq!(sum, reg.permits.len());
    let revoked = reg
        .permits
        .iter()
        .filter(|p| matches!(p.state, sync_core::domain::PermitState::Revoked { .. }))
        .count();
    let page = b.get("/escritorio/alvaras.csv?situacao=cassado").await;
    assert_eq!(count(&page), revoked);
    // Not renewed in time (the law's judgement, art. 7): listed apart, with the reason.
    let lapsed: Vec<&str> = reg
        .permits
        .iter()
        .filter(|p| !matches!(p.state, sync_core::domain::PermitState::Revoked { .. }))
        .filter(|p| {
            sync_core::rules::office::permit_lapsed(p, now().date_naive(), &reg.law().rules)
        })
        .map(|p| p.number.as_str())
        .collect();
    assert!(!lapsed.is_empty(), "the demo has a permit not renewed");
    let page = b.get("/escritorio/alvaras?situacao=nao-renovado").await;
    for n in &lapsed {
        assert!(
            page.element(&format!("alvara-{n}"))
                .contains("não renovado")
        );
    }
    assert_eq!(page.body.matches("id=\"alvara-").count(), lapsed.len());
    let html = b
        .get("/escritorio/alvaras?situacao=cassado&ordem=titular")
        .await;
    assert!(html.body.contains("aria-sort=\"ascending\""));
    assert!(html.body.contains("id=\"filtro-situacao-alvaras\""));
}

// ----- witnesses the office can reach ------------------------------------------------------------

/// The officer's device sends the identity of witness `w-1` of `id`.
async fn send_witness(app: &App, p: &Phone, id: &str) {
    api(
        app,
        Method::PUT,
        &format!("/v1/records/{id}/observed-persons"),
        Some(&p.token),
        json!({ "persons": [{ "id": "w-1", "name": "Joana Passageira",
                 "phone": "(19) 98888-1111", "address": "Av. Brasil, 900, Americana" }] }),
    )
    .await;
}

#[tokio::test]
async fn the_office_sees_who_the_witness_is_and_erases_it_when_the_case_ends() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    let page = format!("/escritorio/registros/{id}");
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;

    // Not yet sent by the device: the page says so.
    let r = b.get(&page).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.element("testemunhas-nao-enviadas")
            .contains("ainda não enviou")
    );

    send_witness(&app, &p, &id).await;
    let r = b.get(&page).await;
    let row = r.element("pessoa-1");
    assert!(row.contains("Joana Passageira"), "{row}");
    assert!(row.contains("testemunha"), "{row}");
    assert!(row.contains("(19) 98888-1111"), "{row}");
    assert!(row.contains("Av. Brasil, 900, Americana"), "{row}");
    // The case still runs: no erasure offered.
    assert!(!r.body.contains("form-apagar-testemunhas"));
    // The admin reads the page too, and is offered no erasure either.
    let mut admin = Browser::new(&app);
    admin.login_demo("admin").await;
    let a = admin.get(&page).await;
    assert!(
        a.element("tabela-identificacao")
            .contains("Joana Passageira")
    );
    assert!(!a.body.contains("form-apagar-testemunhas"));

    // Archived, the case is over: the form appears; without the confirmation nothing is erased.
    let r = b
        .submit(&page, &format!("{page}/evento"), &[("acao", "arquivar")])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    let erase = format!("{page}/testemunhas/apagar");
    let r = b.submit(&page, &erase, &[]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = b.get(&page).await;
    assert!(r.body.contains("marque a confirmação"), "{}", r.body);
    assert!(
        r.element("tabela-identificacao")
            .contains("Joana Passageira")
    );
    // The admin may not erase.
    let a = admin.submit(&page, &erase, &[("confirmo", "sim")]).await;
    assert_eq!(a.status, StatusCode::FORBIDDEN);

    let r = b.submit(&page, &erase, &[("confirmo", "sim")]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = b.get(&page).await;
    let erased = r.element("testemunhas-apagadas");
    assert!(erased.contains("foram apagados em 30/11/2026"), "{erased}");
    assert!(erased.contains("1 pessoa"), "{erased}");
    assert!(!r.body.contains("Joana"), "the name is gone from the page");
    assert!(!r.body.contains("98888-1111"));
    assert!(!r.body.contains("form-apagar-testemunhas"));
    // The audit trail names the act in Portuguese.
    assert!(r.body.contains("dados pessoais das testemunhas apagados"));
}

#[tokio::test]
async fn an_officer_never_sees_the_witness_identity_on_a_page() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    send_witness(&app, &p, &id).await;
    let mut b = Browser::new(&app);
    b.login_demo("fiscal").await;
    let r = b.get(&format!("/escritorio/registros/{id}")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(!r.body.contains("Joana"));
}

// ----- evidence: map, stand distance, thumbnails, duplicates and merged records side by side -----

/// A JPEG of `w` × `h` with gradients and stripes (detail for the encoder, like a scene).
fn test_jpeg(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        let stripe = if (x / 40 + y / 40) % 2 == 0 { 40 } else { 0 };
        image::Rgb([
            ((x * 255 / w) as u8).saturating_add(stripe),
            (y * 255 / h) as u8,
            (((x + y) * 255 / (w + h)) as u8).saturating_add(stripe),
        ])
    });
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&img)
        .unwrap();
    out
}

/// A grey PNG of `w` × `h` (zeros: a few KB whatever its size).
fn test_png(w: u32, h: u32) -> Vec<u8> {
    let img = image::GrayImage::new(w, h);
    let mut out = Vec::new();
    img.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

/// Uploads `bytes` as a photo (of `record`, if given); returns its SHA-256.
async fn upload_photo(app: &App, p: &Phone, bytes: &[u8], record: Option<&str>) -> String {
    let sha = hex::encode(Sha256::digest(bytes));
    let query = record
        .map(|r| format!("?record_id={r}"))
        .unwrap_or_default();
    let res = app
        .router
        .clone()
        .oneshot(
            Request::builder()
                .method(Method::PUT)
                .uri(format!("/v1/photos/{sha}{query}"))
                .header("authorization", format!("Bearer {}", p.token))
                .header("content-type", "image/jpeg")
                .body(Body::from(bytes.to_vec()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
    sha
}

#[tokio::test]
async fn thumbnails_are_small_and_a_bad_or_huge_photo_is_refused_saying_why() {
    let app = app().await;
    let p = phone(&app).await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let thumb = |sha: &str| format!("/escritorio/fotos/{sha}/miniatura");

    // A phone's 12 MP photo.
    let photo = test_jpeg(4032, 3024);
    let sha = upload_photo(&app, &p, &photo, None).await;
    let started = std::time::Instant::now();
    let t = b.get(&thumb(&sha)).await;
    let first = started.elapsed();
    assert_eq!(t.status, StatusCode::OK, "{}", t.body);
    assert_eq!(t.headers["content-type"], "image/jpeg");
    assert!(
        t.headers["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let res = app
        .router
        .clone()
        .oneshot(
            Request::builder()
                .uri(thumb(&sha))
                .header("host", HOST)
                .header("cookie", b.cookie.clone().unwrap())
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    let second = started.elapsed() - first;
    let small = image::load_from_memory(&bytes).unwrap();
    assert_eq!((small.width(), small.height()), (320, 240));
    assert!(
        bytes.len() * 20 < photo.len(),
        "{} vs {}",
        bytes.len(),
        photo.len()
    );
    // What the README's limits table quotes (debug build, dependencies at opt-level 1).
    eprintln!(
        "thumbnail of a 12 MP JPEG ({} KB → {} KB): {first:?} to make, {second:?} from the cache",
        photo.len() / 1024,
        bytes.len() / 1024
    );

    // Bytes that are no image: a clear refusal, the original still served.
    let junk = upload_photo(&app, &p, b"isto nao e uma foto", None).await;
    let t = b.get(&thumb(&junk)).await;
    assert_eq!(t.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        t.element("erro")
            .contains("não é uma imagem JPEG ou PNG legível"),
        "{}",
        t.body
    );
    assert_eq!(
        b.get(&format!("/escritorio/fotos/{junk}")).await.status,
        StatusCode::OK
    );

    // Pixels: exactly at the limit a thumbnail is made, one column more is refused from the
    // header, before decoding.
    let limit = taxi_fiscal_server::limits::THUMBNAIL_MAX_INPUT_PIXELS;
    assert_eq!(limit, 6000 * 4000);
    let at = upload_photo(&app, &p, &test_png(6000, 4000), None).await;
    let t = b.get(&thumb(&at)).await;
    assert_eq!(t.status, StatusCode::OK, "{}", t.body);
    let over = upload_photo(&app, &p, &test_png(6001, 4000), None).await;
    let t = b.get(&thumb(&over)).await;
    assert_eq!(t.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        t.element("erro")
            .contains("6001 × 4000 pixels, acima do limite de 24 milhões"),
        "{}",
        t.body
    );

    // Unknown photo, bad hash, and someone who is not the office.
    let unknown = "0".repeat(64);
    assert_eq!(b.get(&thumb(&unknown)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(b.get(&thumb("xyz")).await.status, StatusCode::NOT_FOUND);
    let mut officer = Browser::new(&app);
    officer.login_demo("fiscal").await;
    assert_eq!(
        officer.get(&thumb(&sha)).await.status,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn the_position_links_the_map_and_says_how_far_the_stand_is() {
    let app = app().await;
    let mut p = phone(&app).await;
    let (id, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto.").await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = format!("/escritorio/registros/{id}");

    let r = b.get(&page).await;
    assert!(r.body.contains(
        "href=\"https://www.openstreetmap.org/?mlat=-22.739500&amp;mlon=-47.331700#map=18/-22.739500/-47.331700\""
    ), "{}", r.element("prova-posicao"));
    assert!(
        r.body
            .contains("target=\"_blank\" rel=\"noopener noreferrer\"")
    );
    assert!(r.element("prova-mapa").contains("abre em nova aba"));
    // The demo stand has no position: no distance is claimed.
    assert!(!r.body.contains("prova-distancia-ponto"));

    // The office gives stand S02 its position: ~56 m south of the record's.
    let office = api_login(&app, "escritorio", "escritorio-demo", "desktop-escritorio").await;
    let token = office["access_token"].as_str().unwrap();
    let mut stand = api(
        &app,
        Method::GET,
        "/v1/stands/S02",
        Some(token),
        Value::Null,
    )
    .await;
    stand["latitude"] = json!(-22.7400);
    stand["longitude"] = json!(-47.3317);
    api(&app, Method::PUT, "/v1/stands/S02", Some(token), stand).await;
    let r = b.get(&page).await;
    assert_eq!(r.element("prova-distancia-ponto"), "a 56 m do ponto S02");
}

#[tokio::test]
async fn duplicates_are_compared_photo_to_photo_and_the_kept_record_lists_the_merged_ones() {
    let app = app().await;
    let (mut p, mut p2) = two_phones(&app).await;
    let (first, _) = issued_record(&app, &mut p, 0, "Parado fora do ponto (tablet).").await;
    let (second, _) = issued_record(&app, &mut p2, 0, "Parado fora do ponto (celular).").await;
    // Each device adds its photo of the scene to its record.
    let mut photos = Vec::new();
    for (phone, id, shade) in [(&mut p, &first, 10), (&mut p2, &second, 200)] {
        let mut bytes = test_jpeg(640, 480);
        bytes.push(shade); // different bytes, different hashes
        let sha = upload_photo(&app, phone, &bytes, Some(id)).await;
        let mut d = phone.doc(id);
        let agent = phone.agent.clone();
        d.add_photo(&agent, now() - Duration::minutes(100), &sha)
            .unwrap();
        phone.persist(&mut d);
        phone.sync(&app).await;
        photos.push(sha);
    }
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;

    // The duplicates page: both records side by side, each with its photo and facts.
    let page = b.get("/escritorio/duplicatas").await;
    let group = page.element("comparar-grupo-1");
    assert!(
        group.contains("(tablet)") && group.contains("(celular)"),
        "{group}"
    );
    for (id, sha) in [(&first, &photos[0]), (&second, &photos[1])] {
        assert!(page.body.contains(&format!("id=\"comparar-{id}\"")));
        assert!(page.body.contains(&format!(
            "id=\"miniatura-{id}-1\" src=\"/escritorio/fotos/{sha}/miniatura\""
        )));
    }
    // The record's page compares it with the other.
    let rec = b.get(&format!("/escritorio/registros/{first}")).await;
    let cmp = rec.element("comparacao-duplicatas");
    assert!(
        cmp.contains("(tablet)") && cmp.contains("(celular)"),
        "{cmp}"
    );
    assert!(
        rec.body
            .contains(&format!("/escritorio/fotos/{}/miniatura", photos[1]))
    );

    // Merged: the kept record still shows the merged one and its photo.
    let ids = format!("{first},{second}");
    let merged = b
        .submit(
            "/escritorio/duplicatas",
            "/escritorio/duplicatas/juntar",
            &[("registros", &ids), ("manter", &first)],
        )
        .await;
    assert_eq!(merged.status, StatusCode::SEE_OTHER, "{}", merged.body);
    let rec = b.get(&format!("/escritorio/registros/{first}")).await;
    let list = rec.element("juntados");
    assert!(list.contains("Registros juntados a este (1)"), "{list}");
    assert!(list.contains("(celular)"), "{list}");
    assert!(rec.body.contains(&format!(
        "id=\"miniatura-{second}-1\" src=\"/escritorio/fotos/{}/miniatura\"",
        photos[1]
    )));
    assert!(!rec.body.contains("comparacao-duplicatas"));
    let t = b
        .get(&format!("/escritorio/fotos/{}/miniatura", photos[1]))
        .await;
    assert_eq!(t.status, StatusCode::OK);
}

/// A form the parser cannot read (a field sent twice, as no page of ours sends it) is refused
/// in one Portuguese sentence: the parser's own words name fields and types, and stay in the
/// log. (Before, the page said "Formulário incompleto ou inválido (duplicate field …)".)
#[tokio::test]
async fn an_unreadable_form_is_refused_without_the_parsers_words() {
    let app = app().await;
    let mut b = Browser::new(&app);
    b.login_demo("escritorio").await;
    let page = b.get("/escritorio/senha").await;
    let csrf = page.csrf();
    let r = b
        .post(
            "/escritorio/senha",
            &[
                ("csrf", csrf.as_str()),
                ("senha_atual", "a"),
                ("senha_atual", "b"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let said = r.element("erro");
    assert!(said.contains("O formulário chegou incompleto"), "{said}");
    for internal in ["duplicate", "field", "`", "senha_atual"] {
        assert!(!said.contains(internal), "{internal} in {said}");
    }
}
