//! The law's parameters through the API: the office enters each year's IPCA, the rules
//! configuration and holidays; each change is checked, audited and a new registry version that
//! the feed carries; amounts for a year wait for the index of the year before.

use axum::http::StatusCode;
use serde_json::{Value, json};
use taxi_fiscal_server::config::{PasswordParams, load_rules, write_rules};
use taxi_fiscal_server::{AppState, Clock, demo};

use crate::common::{App, app, app_with};

/// 15 January 2027, noon in Americana: the 2026 index is not in the initial series.
const IN_2027: &str = "2027-01-15T15:00:00Z";

async fn amount(app: &App, token: &str, year: i32) -> crate::common::Resp {
    app.get(&format!("/v1/law/amount?base=240.00&year={year}"), token)
        .await
}

#[tokio::test]
async fn amounts_in_2027_and_2028_wait_for_the_index_the_office_enters() {
    let app = app_with(|c| c.clock = Clock::fixed(IN_2027.parse().unwrap())).await;
    let office = app.login("escritorio").await;
    let officer = app.login("fiscal").await;
    let admin = app.login("admin").await;

    // 2027: the 2026 index is missing, and the answer names it.
    let e = amount(&app, &office, 2027)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "ipca_missing");
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("IPCA de 2026") && m.contains("2027"), "{m}");
    // 2026's amount is still computable from the initial series.
    assert_eq!(
        amount(&app, &office, 2026).await.ok(StatusCode::OK)["amount"],
        "797.02"
    );

    // Refused, with nothing stored: not the office, out of sequence, absurd, too precise.
    let before = app.footprint().await;
    let ipca = |year: i32, percent: &str| json!({ "year": year, "percent": percent });
    for token in [&officer, &admin] {
        app.post("/v1/law/ipca", token, ipca(2026, "4.50"))
            .await
            .error(StatusCode::FORBIDDEN, "forbidden");
    }
    let e = app
        .post("/v1/law/ipca", &office, ipca(2027, "4.50"))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    assert!(e["message"].as_str().unwrap().contains("2026"), "{e}");
    for bad in ["426", "100.01", "-10.01", "4.505"] {
        app.post("/v1/law/ipca", &office, ipca(2026, bad))
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    }
    assert_eq!(app.footprint().await, before);

    // The office enters 2026: a new version, audited, carried by the feed.
    let u = app
        .post("/v1/law/ipca", &office, ipca(2026, "4.50"))
        .await
        .ok(StatusCode::OK);
    assert_eq!(u["changed"], true);
    assert_eq!(u["version"], before.0 + 1);
    assert_eq!(u["changes"][0]["op"], "upsert_law_parameters");
    assert_eq!(app.audit_rows().await, before.1 + 1);
    let feed = app
        .get(
            &format!("/v1/registry/changes?since={}", before.0),
            &officer,
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(feed["changes"][0]["op"], "upsert_law_parameters");
    assert_eq!(
        amount(&app, &office, 2027).await.ok(StatusCode::OK)["amount"],
        "832.88"
    );
    // Entering it twice is refused; 2027 is not over yet.
    app.post("/v1/law/ipca", &office, ipca(2026, "4.50"))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    let e = app
        .post("/v1/law/ipca", &office, ipca(2027, "3.90"))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    assert!(
        e["message"].as_str().unwrap().contains("dezembro de 2027"),
        "{e}"
    );

    // 2028: the same again, one year on, with no rebuild.
    app.state.clock().advance(chrono::Duration::days(365));
    let office = app.login("escritorio").await;
    let officer = app.login("fiscal").await;
    let e = amount(&app, &office, 2028)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "ipca_missing");
    assert!(
        e["message"].as_str().unwrap().contains("IPCA de 2027"),
        "{e}"
    );
    app.post("/v1/law/ipca", &office, ipca(2027, "3.90"))
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        amount(&app, &office, 2028).await.ok(StatusCode::OK)["amount"],
        "865.36"
    );
    let view = app.get("/v1/law", &officer).await.ok(StatusCode::OK);
    assert_eq!(view["next_ipca_year"], 2028);
    assert_eq!(view["set_by_office"], true);
}

#[tokio::test]
async fn rules_are_validated_with_clear_messages_and_change_the_cap() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let view = app.get("/v1/law", &office).await.ok(StatusCode::OK);
    let mut rules: Value = view["parameters"]["rules"].clone();
    assert_eq!(rules["inhabitants_per_taxi"], 2_000, "the demo's ratio");
    let before = app.footprint().await;

    let mut unknown = rules.clone();
    unknown["disabled_rules"] = json!(["R99"]);
    let e = app
        .put("/v1/law/rules", &office, unknown)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    assert!(e["message"].as_str().unwrap().contains("R99"), "{e}");
    let mut absurd = rules.clone();
    absurd["inhabitants_per_taxi"] = json!(18);
    let e = app
        .put("/v1/law/rules", &office, absurd)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    assert!(e["message"].as_str().unwrap().contains("art. 14"), "{e}");
    assert_eq!(app.footprint().await, before);

    rules["inhabitants_per_taxi"] = json!(1_800);
    app.put("/v1/law/rules", &office, rules)
        .await
        .ok(StatusCode::OK);
    let status = app
        .get("/v1/registry/status", &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(status["taxi_cap"], 131);
}

#[tokio::test]
async fn holidays_are_added_once_and_removed_by_day() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let h =
        json!({ "kind": "municipal", "month": 8, "day": 27, "name": "Aniversário de Americana" });
    app.post("/v1/law/holidays", &office, h.clone())
        .await
        .ok(StatusCode::OK);
    app.post("/v1/law/holidays", &office, h)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    let view = app.get("/v1/law", &office).await.ok(StatusCode::OK);
    assert_eq!(
        view["parameters"]["rules"]["calendar"]["municipal"][0]["name"],
        "Aniversário de Americana"
    );
    let day = json!({ "kind": "municipal", "month": 8, "day": 27 });
    app.post("/v1/law/holidays/remove", &office, day.clone())
        .await
        .ok(StatusCode::OK);
    app.post("/v1/law/holidays/remove", &office, day)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
}

/// A data directory with the old `rules-config.json` is imported once, audited, and the demo
/// seeding keeps those parameters; a second start changes nothing.
#[tokio::test]
async fn rules_config_file_is_imported_once_into_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let rules = sync_core::rules::RulesConfig {
        inhabitants_per_taxi: 2_500,
        ..Default::default()
    };
    write_rules(dir.path(), &rules).unwrap();
    let config = || {
        let mut c = taxi_fiscal_server::Config::new(dir.path());
        c.rules_file = load_rules(dir.path()).unwrap();
        c.clock = Clock::fixed(crate::common::NOW.parse().unwrap());
        c.password_params = PasswordParams::insecure_fast();
        c
    };
    let state = AppState::open(config(), taxi_fiscal_server::store::sqlite::open)
        .await
        .unwrap();
    let reg = state.store().registry().await.unwrap();
    assert_eq!(reg.version, 1);
    assert_eq!(reg.law().rules.inhabitants_per_taxi, 2_500);
    demo::seed(&state).await.unwrap().unwrap();
    let seeded = state.store().registry().await.unwrap();
    assert!(!seeded.permits.is_empty());
    assert_eq!(seeded.law().rules.inhabitants_per_taxi, 2_500);
    drop(state);
    let again = AppState::open(config(), taxi_fiscal_server::store::sqlite::open)
        .await
        .unwrap();
    assert_eq!(
        again.store().registry().await.unwrap().version,
        seeded.version
    );
}

/// Garbage on every write route of the law's parameters is refused with the shared error
/// shapes and stores nothing; a holiday name is accepted at exactly
/// `MAX_HOLIDAY_NAME_CHARS` characters and refused one over.
#[tokio::test]
async fn garbage_and_the_name_limit_on_the_law_routes() {
    use axum::body::Body;
    use axum::http::{Method, Request};
    use sync_core::rules::parameters::MAX_HOLIDAY_NAME_CHARS;

    let app = app().await;
    let office = app.login("escritorio").await;
    let before = app.footprint().await;
    let raw = |method: Method, path: &'static str, body: &'static str| {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header("authorization", format!("Bearer {office}"))
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        app.send(req)
    };
    for (method, path) in [
        (Method::PUT, "/v1/law/rules"),
        (Method::POST, "/v1/law/ipca"),
        (Method::POST, "/v1/law/holidays"),
        (Method::POST, "/v1/law/holidays/remove"),
    ] {
        raw(method.clone(), path, "{\"year\": ")
            .await
            .error(StatusCode::BAD_REQUEST, "malformed_json");
        // Not an object: refused as a bad body (serde reads a short array as the fields in
        // order, so where it fails, and hence the code, depends on the type).
        let r = raw(method, path, "[1, 2, 3]").await;
        let code = r.json()["error"]["code"].clone();
        assert!(
            r.status.is_client_error() && (code == "malformed_json" || code == "invalid_body"),
            "{path}: {} {code}",
            r.status
        );
    }
    // Wrong types and unknown fields name the field, not the value.
    let e = app
        .put(
            "/v1/law/rules",
            &office,
            json!({ "inhabitants_per_taxi": "muitos" }),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert_eq!(e["details"]["path"], "inhabitants_per_taxi", "{e}");
    app.put("/v1/law/rules", &office, json!({ "no_such_parameter": 1 }))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    app.post(
        "/v1/law/ipca",
        &office,
        json!({ "year": 2026, "percent": "abc" }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    app.post(
        "/v1/law/holidays",
        &office,
        json!({ "kind": "municipal", "month": 2, "day": 30, "name": "Dia que não existe" }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    let holiday =
        |name: String| json!({ "kind": "municipal", "month": 8, "day": 27, "name": name });
    app.post(
        "/v1/law/holidays",
        &office,
        holiday("x".repeat(MAX_HOLIDAY_NAME_CHARS + 1)),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    app.post("/v1/law/holidays", &office, holiday(String::new()))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "law_parameters_invalid");
    assert_eq!(app.footprint().await, before);
    // Exactly at the limit: accepted.
    app.post(
        "/v1/law/holidays",
        &office,
        holiday("x".repeat(MAX_HOLIDAY_NAME_CHARS)),
    )
    .await
    .ok(StatusCode::OK);
    // The amount's query: garbage is a clear error, never a panic.
    let r = app.get("/v1/law/amount?base=abc&year=2026", &office).await;
    assert!(r.status.is_client_error(), "{}", r.status);
    let r = app
        .get("/v1/law/amount?base=240.00&year=99999999999", &office)
        .await;
    assert!(r.status.is_client_error(), "{}", r.status);
}
