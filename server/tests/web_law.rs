//! The rules configuration on the law's parameters page (`/escritorio/lei`), in process
//! (`web_support`): the clerk's change goes through the API's own write (a new registry
//! version that devices read at `GET /v1/law`, audited); a value the law kernel or the form
//! refuses is said in one Portuguese sentence with the typed values kept and nothing stored;
//! garbage and oversized forms are refused; the admin reads the page without a form and the
//! officer has no access.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a panic is the failure report

mod web_support;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use sync_core::rules::{EarMissing, RuleId, RulesConfig, spec};
use taxi_fiscal_server::limits::REGISTRY_FORM_BODY_LIMIT;
use tower::ServiceExt;
use web_support::{App, Client, Page, app};

const PAGE: &str = "/escritorio/lei";
const ACTION: &str = "/escritorio/lei/regras";

/// The rules form as the page fills it: its text fields, selects and checked rules.
fn form_of(page: &Page) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = [
        ("habitantes", "regras-habitantes"),
        ("censo", "regras-censo"),
        ("categorias", "regras-categorias"),
        ("tolerancia", "regras-tolerancia"),
        ("idade", "regras-idade"),
        ("orgao", "regras-orgao"),
    ]
    .into_iter()
    .map(|(name, id)| (name.to_owned(), page.value_of(id)))
    .collect();
    for (name, id) in [("ear", "regras-ear"), ("taximetro", "regras-taximetro")] {
        fields.push((name.to_owned(), page.selected_of(id)));
    }
    for id in checked_rules(page) {
        fields.push(("regra".to_owned(), id.as_str().to_owned()));
    }
    fields
}

/// The rules whose checkbox is checked on the page.
fn checked_rules(page: &Page) -> Vec<RuleId> {
    RuleId::ALL
        .into_iter()
        .filter(|id| {
            let marker = format!("id=\"regra-{}\"", id.as_str());
            page.body.find(&marker).is_some_and(|at| {
                let start = page.body[..at].rfind('<').unwrap();
                let end = at + page.body[at..].find('>').unwrap();
                page.body[start..end].contains(" checked")
            })
        })
        .collect()
}

fn set(fields: &mut [(String, String)], name: &str, value: &str) {
    let f = fields.iter_mut().find(|(n, _)| n == name).unwrap();
    f.1 = value.to_owned();
}

fn pairs(fields: &[(String, String)]) -> Vec<(&str, &str)> {
    fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect()
}

/// Registry version and audit rows: what a refused form must leave as they were.
async fn footprint(app: &App) -> (u64, u64) {
    let audit = app.state.store().verify_audit().await.unwrap();
    assert!(audit.ok, "{audit:?}");
    (app.registry().await.version, audit.rows)
}

/// `GET /v1/law` as the demo officer's tablet sees it.
async fn law_as_device(app: &App) -> Value {
    let call = |req: Request<Body>| async move {
        let res = app.router.clone().oneshot(req).await.unwrap();
        assert!(res.status().is_success(), "{}", res.status());
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    let body =
        json!({"username": "fiscal", "password": "fiscal-demo", "device_id": "tablet-fiscal-01"});
    let login = call(
        Request::builder()
            .method(Method::POST)
            .uri("/v1/auth/login")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
    )
    .await;
    let token = login["access_token"].as_str().unwrap();
    call(
        Request::builder()
            .method(Method::GET)
            .uri("/v1/law")
            .header("authorization", format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await
}

/// A rule on by default (to switch off) and one off by default (to switch on), neither repealed.
fn on_and_off() -> (RuleId, RuleId) {
    let live = || RuleId::ALL.into_iter().filter(|id| !spec(*id).repealed);
    let on = live().find(|id| spec(*id).enabled_by_default).unwrap();
    let off = live().find(|id| !spec(*id).enabled_by_default).unwrap();
    (on, off)
}

#[tokio::test]
async fn the_clerk_changes_the_rules_and_devices_receive_the_new_version() {
    let app = app().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let p = c.get(PAGE).await;
    p.html(StatusCode::OK);
    p.assert_labelled();
    assert!(p.has("form-regras") && p.has("salvar-regras"));
    // The form starts from the configuration in force, each rule with its title.
    let rules: RulesConfig = app.registry().await.law().rules.clone();
    assert_eq!(
        p.value_of("regras-habitantes"),
        rules.inhabitants_per_taxi.to_string()
    );
    assert_eq!(p.value_of("regras-censo"), "237.240");
    assert_eq!(p.value_of("regras-tolerancia"), "0");
    assert_eq!(p.selected_of("regras-ear"), "advertencia");
    assert_eq!(p.selected_of("regras-taximetro"), "2");
    let (on, off) = on_and_off();
    assert!(
        p.from(&format!("regra-{}", on.as_str()))
            .contains(spec(on).title)
    );
    let enabled: Vec<RuleId> = RuleId::ALL
        .into_iter()
        .filter(|id| rules.is_enabled(*id))
        .collect();
    assert_eq!(checked_rules(&p), enabled);

    // Sent as it is: nothing changes, no new version.
    let before = footprint(&app).await;
    let unchanged = form_of(&p);
    let r = c.post_form(PAGE, ACTION, &pairs(&unchanged)).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(footprint(&app).await, before);
    assert!(c.get(PAGE).await.from("aviso").contains("Nada mudou"));

    // The clerk's change: every value, one rule off and one on.
    let mut fields = form_of(&p);
    set(&mut fields, "habitantes", "2.500");
    set(&mut fields, "censo", "240000");
    set(&mut fields, "categorias", "b, ab c;D");
    set(&mut fields, "ear", "irregular");
    set(&mut fields, "taximetro", "1");
    set(&mut fields, "tolerancia", "30");
    set(&mut fields, "idade", "12");
    set(
        &mut fields,
        "orgao",
        "Secretaria de Mobilidade de Americana",
    );
    fields.retain(|(n, v)| !(n == "regra" && v == on.as_str()));
    fields.push(("regra".into(), off.as_str().into()));
    let r = c.post_form(PAGE, ACTION, &pairs(&fields)).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    assert_eq!(r.location(), PAGE);
    let after = footprint(&app).await;
    assert_eq!(after, (before.0 + 1, before.1 + 1), "one version, audited");
    let reg = app.registry().await;
    let got = &reg.law().rules;
    assert_eq!(got.inhabitants_per_taxi, 2500);
    assert_eq!(got.census_population, 240_000);
    assert_eq!(got.categories_covering_b, ["B", "AB", "C", "D"]);
    assert_eq!(got.ear_missing, EarMissing::Irregular);
    assert_eq!(got.taximeter_period_years, 1);
    assert_eq!(got.cnh_grace_days, 30);
    assert_eq!(got.max_vehicle_age_years, 12);
    assert_eq!(got.issuing_body, "Secretaria de Mobilidade de Americana");
    assert_eq!(got.disabled_rules, [on]);
    assert_eq!(got.enabled_rules, [off]);
    assert_eq!(got.calendar, rules.calendar, "the holidays are kept");

    // The devices read it with the new version.
    let view = law_as_device(&app).await;
    assert_eq!(view["version"], after.0);
    assert_eq!(view["set_by_office"], true);
    assert_eq!(view["parameters"]["rules"]["cnh_grace_days"], 30);
    assert_eq!(
        view["parameters"]["rules"]["disabled_rules"],
        json!([on.as_str()])
    );

    // The page shows it, with the message and the rule unchecked.
    let p = c.get(PAGE).await;
    assert!(p.from("aviso").contains("regras alterada"), "{}", p.body);
    assert!(p.from("lei-regras").contains("2500"));
    assert_eq!(p.value_of("regras-tolerancia"), "30");
    assert_eq!(p.selected_of("regras-ear"), "irregular");
    let checked = checked_rules(&p);
    assert!(!checked.contains(&on) && checked.contains(&off));
}

#[tokio::test]
async fn bad_values_are_refused_in_one_sentence_with_what_was_typed() {
    let app = app().await;
    let mut c = Client::login(&app, "escritorio", "escritorio-demo").await;
    let p = c.get(PAGE).await;
    let base = form_of(&p);
    let (on, _) = on_and_off();
    let before = footprint(&app).await;

    // (field, typed, what the refusal says)
    let cases = [
        ("habitantes", "0", "entre 500 e 5000"),
        ("censo", "duzentos mil", "número inteiro"),
        ("categorias", "B, X", "categorias de CNH"),
        ("tolerancia", "-3", "número inteiro"),
        ("tolerancia", "91", "entre 0 e 90"),
        ("idade", "99999999999", "grande demais"),
        ("ear", "talvez", "EAR"),
        ("orgao", "   ", "órgão autuador"),
    ];
    for (name, typed, says) in cases {
        let mut fields = base.clone();
        set(&mut fields, name, typed);
        // One rule unchecked too: the refusal keeps that as well.
        fields.retain(|(n, v)| !(n == "regra" && v == on.as_str()));
        let r = c.post_form(PAGE, ACTION, &pairs(&fields)).await;
        r.html(StatusCode::UNPROCESSABLE_ENTITY);
        let error = r.part("erro-form-regras", "</div>");
        assert!(error.contains(says), "{name}={typed}: {error}");
        for internal in [
            "inhabitants",
            "census",
            "categories",
            "grace",
            "RulesConfig",
            "\"habitantes\"",
        ] {
            assert!(!error.contains(internal), "{error}");
        }
        // A choice the list does not offer cannot be shown again; a typed text is.
        if name != "ear" {
            assert_eq!(r.value_of(&format!("regras-{name}")), typed);
        }
        assert!(
            !checked_rules(&r).contains(&on),
            "the unchecked rule stays unchecked"
        );
        assert_eq!(
            footprint(&app).await,
            before,
            "{name}={typed}: nothing stored"
        );
    }

    // A rule the catalogue does not have, and a repealed one switched on.
    let mut fields = base.clone();
    fields.push(("regra".into(), "R99".into()));
    let r = c.post_form(PAGE, ACTION, &pairs(&fields)).await;
    r.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        r.part("erro-form-regras", "</div>")
            .contains("«R99» não existe")
    );
    if let Some(gone) = RuleId::ALL.into_iter().find(|id| spec(*id).repealed) {
        let mut fields = base.clone();
        fields.push(("regra".into(), gone.as_str().into()));
        let r = c.post_form(PAGE, ACTION, &pairs(&fields)).await;
        r.html(StatusCode::UNPROCESSABLE_ENTITY);
        assert!(r.part("erro-form-regras", "</div>").contains("revogada"));
    }
    assert_eq!(footprint(&app).await, before);

    // Not a form at all; a body at the forms' limit is read, one byte more is not.
    let csrf = c.get(PAGE).await.csrf();
    let r = c
        .post_raw(
            ACTION,
            format!("csrf={csrf}&%ff%fe=\u{0}"),
            "application/x-www-form-urlencoded",
        )
        .await;
    r.html(StatusCode::UNPROCESSABLE_ENTITY);
    let head = format!("csrf={csrf}&orgao=");
    let at_limit = format!(
        "{head}{}",
        "a".repeat(REGISTRY_FORM_BODY_LIMIT - head.len())
    );
    let r = c
        .post_raw(
            ACTION,
            at_limit.clone(),
            "application/x-www-form-urlencoded",
        )
        .await;
    r.html(StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        !r.body.contains(&"a".repeat(300)),
        "a huge input is not echoed"
    );
    let r = c
        .post_raw(
            ACTION,
            format!("{at_limit}a"),
            "application/x-www-form-urlencoded",
        )
        .await;
    r.html(StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(footprint(&app).await, before, "nothing stored");
}

#[tokio::test]
async fn the_admin_reads_the_rules_and_the_officer_is_kept_out() {
    let app = app().await;
    let before = footprint(&app).await;
    let mut admin = Client::login(&app, "admin", "admin-demo").await;
    let p = admin.get(PAGE).await;
    p.html(StatusCode::OK);
    assert!(p.has("lei-regras") && p.has("somente-leitura"));
    assert!(!p.has("form-regras") && !p.has("form-ipca") && !p.has("form-feriado"));
    let csrf = p.csrf();
    let r = admin
        .post_raw(
            ACTION,
            format!("csrf={csrf}&habitantes=2000"),
            "application/x-www-form-urlencoded",
        )
        .await;
    r.html(StatusCode::FORBIDDEN);

    let mut officer = Client::login(&app, "fiscal", "fiscal-demo").await;
    officer.get(PAGE).await.html(StatusCode::FORBIDDEN);
    let r = officer
        .post_raw(
            ACTION,
            "csrf=x&habitantes=2000",
            "application/x-www-form-urlencoded",
        )
        .await;
    r.html(StatusCode::FORBIDDEN);
    assert_eq!(footprint(&app).await, before, "nothing stored");
}
