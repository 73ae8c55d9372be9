//! Registry reads for every role, changes for the office, and the law's refusals as 422 with
//! rule id, citation and Portuguese message — storing nothing. Every write is judged on the
//! whole registry after it: the art. 7 renewal, the art. 14 cap across requests and stands,
//! what a field check of the touched permit would find (refused for an act, warnings for what
//! pre-existed or a record reveals), and succession and transfer leaving the new holder regular.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::common::app;

/// `(rule_id, citation)` of every finding of a refusal, after checking its shape.
fn findings(e: &Value) -> Vec<(String, String)> {
    assert_eq!(e["code"], "refused_by_law", "{e:#}");
    let list = e["details"]["findings"].as_array().unwrap();
    assert!(!list.is_empty());
    for f in list {
        let msg = f["message"].as_str().unwrap();
        assert!(e["message"].as_str().unwrap().contains(msg));
        assert!(
            f["citation"]
                .as_str()
                .unwrap()
                .starts_with("Lei 4.019/2004"),
            "{f:#}"
        );
    }
    list.iter()
        .map(|f| {
            (
                f["rule_id"].as_str().unwrap().to_owned(),
                f["citation"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn every_role_reads_every_kind() {
    let app = app().await;
    for user in ["fiscal", "coordenador", "escritorio", "admin"] {
        let t = app.login(user).await;
        for (list, n) in [
            ("/v1/permits", 121),
            ("/v1/people", 242),
            ("/v1/vehicles", 121),
            ("/v1/stands", 8),
            ("/v1/penalties", 5),
            ("/v1/fines", 2),
            ("/v1/transfers", 0),
        ] {
            let v = app.get(list, &t).await.ok(StatusCode::OK);
            assert_eq!(v.as_array().unwrap().len(), n, "{list}");
        }
        for one in [
            "/v1/permits/0007",
            "/v1/people/P0007",
            "/v1/vehicles/V0007",
            "/v1/stands/S01",
        ] {
            app.get(one, &t).await.ok(StatusCode::OK);
        }
        for missing in [
            "/v1/permits/9999",
            "/v1/people/X",
            "/v1/vehicles/X",
            "/v1/stands/X",
        ] {
            app.get(missing, &t)
                .await
                .error(StatusCode::NOT_FOUND, "not_found");
        }
    }
    let t = app.login("fiscal").await;
    let p = app.get("/v1/permits/0007", &t).await.ok(StatusCode::OK);
    assert_eq!(p["state"]["state"], "suspended");
    let s = app.get("/v1/registry/status", &t).await.ok(StatusCode::OK);
    assert_eq!(
        (
            s["version"].as_u64(),
            s["live_permits"].as_u64(),
            s["taxi_cap"].as_u64()
        ),
        (Some(1), Some(118), Some(118))
    );
}

#[tokio::test]
async fn officers_cannot_change_the_registry() {
    let app = app().await;
    let t = app.login("fiscal").await;
    let before = app.footprint().await;
    app.post(
        "/v1/fines",
        &t,
        json!({"permit_number": "0001", "amount": "100.00"}),
    )
    .await
    .error(StatusCode::FORBIDDEN, "forbidden");
    app.put("/v1/stands/S01/coordinator", &t, json!({"person_id": null}))
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    assert_eq!(app.footprint().await, before);
}

#[tokio::test]
async fn third_auxiliary_is_422_citing_art_8_and_stores_nothing() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let before = app.footprint().await;
    let e = app
        .post(
            "/v1/permits/0003/auxiliaries",
            &t,
            json!({"person_id": "P0002", "licence_number": "0003-A3"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let f = findings(&e);
    assert_eq!(f[0].0, "R13");
    assert_eq!(f[0].1, "Lei 4.019/2004, art. 8");
    assert!(e["message"].as_str().unwrap().contains("no máximo 2"));
    assert_eq!(app.footprint().await, before);

    // On a permit with room it works, bumps the version and adds one audit row.
    let u = app
        .post(
            "/v1/permits/0002/auxiliaries",
            &t,
            json!({"person_id": "P0005", "licence_number": "0002-A1"}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(u["version"], 2);
    assert_eq!(u["changes"][0]["op"], "upsert_permit");
    assert_eq!(app.footprint().await, (2, before.1 + 1));
    // (The holder of another permit may be an auxiliary: office.rs decision.) The same person on
    // a second permit as auxiliary: art. 8 §2 (R14).
    let e = app
        .post(
            "/v1/permits/0008/auxiliaries",
            &t,
            json!({"person_id": "P0005", "licence_number": "0008-A1"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert!(
        findings(&e)
            .iter()
            .any(|(r, c)| r == "R14" && c.contains("art. 8"))
    );
    // Remove it again; removing someone who is not there is 404.
    app.request(
        Method::DELETE,
        "/v1/permits/0002/auxiliaries/P0005",
        Some(&t),
        None,
    )
    .await
    .ok(StatusCode::OK);
    app.request(
        Method::DELETE,
        "/v1/permits/0002/auxiliaries/P0005",
        Some(&t),
        None,
    )
    .await
    .error(StatusCode::NOT_FOUND, "not_found");
}

/// The registry as stored now.
async fn stored(app: &crate::common::App) -> std::sync::Arc<sync_core::domain::Registry> {
    app.state.store().registry().await.unwrap()
}

/// The field check of a permit's taxi with its holder at the wheel, on the stored registry, at
/// the test clock's instant (2026-11-30 12:00 in Americana).
async fn field_check(app: &crate::common::App, permit: &str) -> sync_core::rules::Verdict {
    let reg = stored(app).await;
    let p = reg.permits.iter().find(|p| p.number == permit).unwrap();
    let holder = reg.people.iter().find(|x| x.id == p.holder_id).unwrap();
    let input = sync_core::rules::CheckInput {
        vehicle: sync_core::rules::VehicleQuery::Permit(permit.into()),
        driver: sync_core::domain::DriverId::Cpf(holder.cpf.clone()),
        at: app.state.clock().now(),
        observation: sync_core::rules::Observation::default(),
        registry_refreshed_at: None,
    };
    sync_core::rules::check_registry(&reg.index(), &input, &reg.law().rules)
}

/// Rule ids of a 200's warnings.
fn warnings(u: &Value) -> Vec<String> {
    u["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["rule_id"].as_str().unwrap().to_owned())
        .collect()
}

fn ids(e: &Value) -> Vec<String> {
    findings(e).into_iter().map(|(r, _)| r).collect()
}

#[tokio::test]
async fn a_lapsed_permit_is_not_renewed_and_years_are_not_skipped() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let before = app.footprint().await;
    // 0019 was last renewed for 2025: the 2026 renewal was due by 31/01/2026 (art. 7), and it
    // also has an unpaid fine (art. 17 §2 III). Both reasons, each with its article.
    let e = app
        .post("/v1/permits/0019/renewal", &t, json!({"year": 2026}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let f = findings(&e);
    assert_eq!(
        f.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        ["R11", "R27"]
    );
    assert_eq!(f[0].1, "Lei 4.019/2004, art. 7");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("não foi renovado para 2026 até 31/01/2026")
            && msg.contains("cassação automática"),
        "{msg}"
    );
    // Paying the fine does not revive the permission.
    let fine = stored(&app)
        .await
        .fines
        .iter()
        .find(|f| f.permit_number == "0019")
        .unwrap()
        .id
        .clone();
    app.post(&format!("/v1/fines/{fine}/payment"), &t, json!({}))
        .await
        .ok(StatusCode::OK);
    let e = app
        .post("/v1/permits/0019/renewal", &t, json!({"year": 2026}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R11"]);
    // Nor can the counter act on it otherwise: a lapsed permit is not transferred.
    let aux = app.get("/v1/permits/0019", &t).await.json()["auxiliaries"][0]["person_id"].clone();
    let e = app
        .post(
            "/v1/permits/0019/transfer",
            &t,
            json!({"to_person_id": aux, "reason": "death"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R11"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("não pode mais ser transferido")
    );
    // 0001 is renewed for 2026: 2027 is next; 2030 would skip three annual renewals.
    let e = app
        .post("/v1/permits/0001/renewal", &t, json!({"year": 2030}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R11"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("a renovação seguinte é a de 2027")
    );
    // Nothing but the payment was stored.
    assert_eq!(app.footprint().await, (before.0 + 1, before.1 + 1));
    assert_eq!(
        field_check(&app, "0019").await.rule_ids(),
        ["R11"],
        "the field check still says cassação automática"
    );
}

#[tokio::test]
async fn unpaid_fine_blocks_renewal_until_paid() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let u = app
        .post(
            "/v1/fines",
            &t,
            json!({"permit_number": "0020", "amount": "797.02"}),
        )
        .await
        .ok(StatusCode::CREATED);
    let id = u["changes"][0]["fine"]["id"].as_str().unwrap().to_owned();
    let before = app.footprint().await;
    let e = app
        .post("/v1/permits/0020/renewal", &t, json!({"year": 2027}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let f = findings(&e);
    assert_eq!(f[0].0, "R27");
    assert!(f[0].1.contains("art. 17"), "{f:?}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("R$ 797,02") && msg.contains("art. 17, § 2º, III"),
        "{msg}"
    );
    assert_eq!(app.footprint().await, before);

    app.post(&format!("/v1/fines/{id}/payment"), &t, json!({}))
        .await
        .ok(StatusCode::OK);
    app.post(&format!("/v1/fines/{id}/payment"), &t, json!({}))
        .await
        .error(StatusCode::CONFLICT, "already_paid");
    app.post("/v1/fines/MUL-0000/payment", &t, json!({}))
        .await
        .error(StatusCode::NOT_FOUND, "not_found");
    let u = app
        .post("/v1/permits/0020/renewal", &t, json!({"year": 2027}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(u["version"], before.0 + 2);
    let p = app.get("/v1/permits/0020", &t).await.ok(StatusCode::OK);
    assert_eq!(p["renewal_year"], 2027);
    // Renewing a year already renewed is refused (art. 7).
    let e = app
        .post("/v1/permits/0020/renewal", &t, json!({"year": 2027}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(findings(&e)[0].0, "R11");
}

#[tokio::test]
async fn what_pre_existed_comes_back_as_warnings_not_refusals() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // 0022's auxiliary has an expired CNH: renewing 0022 does not touch it, so the renewal
    // goes through and says so.
    let u = app
        .post("/v1/permits/0022/renewal", &t, json!({"year": 2027}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(warnings(&u), ["R10"], "{u:#}");
    let w = &u["warnings"][0];
    assert!(
        w["message"]
            .as_str()
            .unwrap()
            .contains("(motorista auxiliar) ao volante"),
        "{w:#}"
    );
    assert!(
        w["citation"]
            .as_str()
            .unwrap()
            .starts_with("Lei 4.019/2004")
    );
    // A record of facts is never refused for what it reveals: a holder's CNH typed in as
    // expired is stored, and the finding comes back.
    let mut p = app.get("/v1/people/P0030", &t).await.ok(StatusCode::OK);
    p["licence"]["expiry"] = json!("2026-11-01");
    let u = app.put("/v1/people/P0030", &t, p).await.ok(StatusCode::OK);
    assert_eq!(warnings(&u), ["R10"], "{u:#}");
    assert!(u["changed"].as_bool().unwrap());
}

#[tokio::test]
async fn the_art_14_cap_refuses_new_permits_and_vacancies() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // A new person and vehicle for a new permit.
    let mut person = app.get("/v1/people/P0001", &t).await.ok(StatusCode::OK);
    person["id"] = json!("P9001");
    person["cpf"] = json!("111.444.777-35");
    person["name"] = json!("Nova Permissionária");
    app.post("/v1/people", &t, person)
        .await
        .ok(StatusCode::CREATED);
    let mut vehicle = app.get("/v1/vehicles/V0001", &t).await.ok(StatusCode::OK);
    vehicle["id"] = json!("V9001");
    vehicle["plate"] = json!("QAZ1B23");
    vehicle["owner_cpf"] = json!("11144477735");
    app.post("/v1/vehicles", &t, vehicle.clone())
        .await
        .ok(StatusCode::CREATED);
    let before = app.footprint().await;

    // Every place of S01 is taken and the registry is at the cap: both said.
    let grant =
        json!({"number": "0122", "holder_id": "P9001", "vehicle_id": "V9001", "stand_id": "S01"});
    let e = app
        .post("/v1/permits", &t, grant.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let f = findings(&e);
    assert_eq!(ids(&e), ["R23", "R23"], "{f:?}");
    assert!(f.iter().all(|(_, c)| c.contains("art. 14")));
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("limite de 118") && msg.contains("não há vaga aberta"),
        "{msg}"
    );

    let stand = json!({
        "id": "S09", "name": "Poupatempo", "address": "Americana-SP", "schedule": "06-20",
        "service": "common", "vacancies": 4, "coordinator_id": null, "latitude": null, "longitude": null,
    });
    let e = app
        .post("/v1/stands", &t, stand.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R23"]);
    let mut s01 = app.get("/v1/stands/S01", &t).await.ok(StatusCode::OK);
    s01["vacancies"] = json!(s01["vacancies"].as_u64().unwrap() + 1);
    let e = app
        .put("/v1/stands/S01", &t, s01.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R23"]);
    assert_eq!(app.footprint().await, before);

    // A stand without vacancies is no increase. Revoking a permit leaves its place open
    // (art. 7: the stand is declared vacant), which a grant may fill.
    let mut empty = stand.clone();
    empty["vacancies"] = json!(0);
    app.post("/v1/stands", &t, empty)
        .await
        .ok(StatusCode::CREATED);
    let u = app
        .put(
            "/v1/permits/0001/state",
            &t,
            json!({"state": "revoked", "on": "2026-11-30"}),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(warnings(&u), ["R32"], "the field check now says cassado");
    let u = app
        .post("/v1/permits", &t, grant)
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(warnings(&u), Vec::<String>::new());
    assert_eq!(
        field_check(&app, "0122").await.overall,
        sync_core::rules::Overall::Regular
    );
    // Reinstating the revoked one: its place is taken and the cap is reached.
    let e = app
        .put("/v1/permits/0001/state", &t, json!({"state": "active"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R23", "R23"]);
}

#[tokio::test]
async fn the_cap_holds_across_requests() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // Close one place: revoke 0002 and lower S02's vacancies by one. Room for exactly one.
    app.put(
        "/v1/permits/0002/state",
        &t,
        json!({"state": "revoked", "on": "2026-11-30"}),
    )
    .await
    .ok(StatusCode::OK);
    let stand = app.get("/v1/permits/0002", &t).await.json()["stand_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut s = app
        .get(&format!("/v1/stands/{stand}"), &t)
        .await
        .ok(StatusCode::OK);
    s["vacancies"] = json!(s["vacancies"].as_u64().unwrap() - 1);
    app.put(&format!("/v1/stands/{stand}"), &t, s.clone())
        .await
        .ok(StatusCode::OK);
    // One more place anywhere: accepted, reaching the cap exactly.
    let mut s03 = app.get("/v1/stands/S03", &t).await.ok(StatusCode::OK);
    s03["vacancies"] = json!(s03["vacancies"].as_u64().unwrap() + 1);
    app.put("/v1/stands/S03", &t, s03.clone())
        .await
        .ok(StatusCode::OK);
    let before = app.footprint().await;
    // The next one, on another stand or a new one, is judged on the registry after the first.
    let mut s04 = app.get("/v1/stands/S04", &t).await.ok(StatusCode::OK);
    s04["vacancies"] = json!(s04["vacancies"].as_u64().unwrap() + 1);
    let e = app
        .put("/v1/stands/S04", &t, s04)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R23"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("de 118 a 119 táxis"),
        "{e:#}"
    );
    let stand = json!({
        "id": "S09", "name": "Poupatempo", "address": "Americana-SP", "schedule": "06-20",
        "service": "common", "vacancies": 1, "coordinator_id": null, "latitude": null, "longitude": null,
    });
    let e = app
        .post("/v1/stands", &t, stand)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R23"]);
    // A stand's places may not go below the permits in force on it.
    let mut s03 = app.get("/v1/stands/S03", &t).await.ok(StatusCode::OK);
    s03["vacancies"] = json!(0);
    let e = app
        .put("/v1/stands/S03", &t, s03)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R23"]);
    assert_eq!(app.footprint().await, before);
}

#[tokio::test]
async fn grant_reports_every_reason_and_bookkeeping_errors() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let mut vehicle = app.get("/v1/vehicles/V0001", &t).await.ok(StatusCode::OK);
    vehicle["id"] = json!("V9002");
    vehicle["plate"] = json!("QAZ1B24");
    app.post("/v1/vehicles", &t, vehicle.clone())
        .await
        .ok(StatusCode::CREATED);
    // P0002 already holds 0002 (art. 9), S02 is full and the cap reached (art. 14), and V9002's
    // CRLV is in P0001's name (art. 30 III): every reason at once.
    let e = app
        .post(
            "/v1/permits",
            &t,
            json!({"number": "0123", "holder_id": "P0002", "vehicle_id": "V9002", "stand_id": "S02"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R03", "R23", "R23", "R40"]);
    app.post(
        "/v1/permits",
        &t,
        json!({"number": "0001", "holder_id": "P0002", "vehicle_id": "V9002", "stand_id": "S02"}),
    )
    .await
    .error(StatusCode::CONFLICT, "already_exists");
    app.post(
        "/v1/permits",
        &t,
        json!({"number": "0124", "holder_id": "P0002", "vehicle_id": "V0001", "stand_id": "S02"}),
    )
    .await
    .error(StatusCode::CONFLICT, "vehicle_in_use");
    app.post(
        "/v1/permits",
        &t,
        json!({"number": "0124", "holder_id": "P0002", "vehicle_id": "V9002", "stand_id": "S99"}),
    )
    .await
    .error(StatusCode::NOT_FOUND, "not_found");
    // A vehicle with a plate already registered (any spelling) is a conflict.
    vehicle["id"] = json!("V9003");
    app.post("/v1/vehicles", &t, vehicle.clone())
        .await
        .error(StatusCode::CONFLICT, "plate_taken");
    vehicle["plate"] = json!("not a plate");
    app.post("/v1/vehicles", &t, vehicle)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
}

#[tokio::test]
async fn a_grant_the_field_check_would_flag_is_refused() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // Room at S01: revoke 0001 (its place stays open).
    app.put(
        "/v1/permits/0001/state",
        &t,
        json!({"state": "revoked", "on": "2026-11-30"}),
    )
    .await
    .ok(StatusCode::OK);
    let mut person = app.get("/v1/people/P0001", &t).await.ok(StatusCode::OK);
    person["id"] = json!("P9001");
    person["cpf"] = json!("111.444.777-35");
    person["name"] = json!("Nova Permissionária");
    app.post("/v1/people", &t, person)
        .await
        .ok(StatusCode::CREATED);
    // A vehicle without taximeter, its CRLV in someone else's name.
    let mut vehicle = app.get("/v1/vehicles/V0001", &t).await.ok(StatusCode::OK);
    vehicle["id"] = json!("V9001");
    vehicle["plate"] = json!("QAZ1B23");
    vehicle["taximeter"] = json!(null);
    app.post("/v1/vehicles", &t, vehicle.clone())
        .await
        .ok(StatusCode::CREATED);
    let before = app.footprint().await;
    let grant =
        json!({"number": "0122", "holder_id": "P9001", "vehicle_id": "V9001", "stand_id": "S01"});
    let e = app
        .post("/v1/permits", &t, grant.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let f = findings(&e);
    assert_eq!(ids(&e), ["R40", "R02"], "{f:?}");
    assert!(f[0].1.contains("art. 30"), "{f:?}");
    assert!(f[1].1.contains("art. 1"), "{f:?}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("Nova Permissionária (titular) ao volante") && !msg.contains("111.444"),
        "{msg}"
    );
    assert_eq!(app.footprint().await, before);
    // Granted for a year ahead: art. 7 (annual renewal).
    vehicle["taximeter"] = app.get("/v1/vehicles/V0001", &t).await.json()["taximeter"].clone();
    vehicle["owner_cpf"] = json!("11144477735");
    app.put("/v1/vehicles/V9001", &t, vehicle)
        .await
        .ok(StatusCode::OK);
    let mut ahead = grant.clone();
    ahead["renewal_year"] = json!(2030);
    let e = app
        .post("/v1/permits", &t, ahead)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R11"]);
    // Cured by the clerk first (taximeter and CRLV recorded): granted, regular at once.
    app.post("/v1/permits", &t, grant)
        .await
        .ok(StatusCode::CREATED);
    let v = field_check(&app, "0122").await;
    assert_eq!(v.overall, sync_core::rules::Overall::Regular, "{v:#?}");
}

#[tokio::test]
async fn transfers_and_swaps_follow_arts_10_and_11() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // 0005 was issued a year ago: a voluntary transfer must wait two years (art. 10, I).
    let e = app
        .post(
            "/v1/permits/0005/transfer",
            &t,
            json!({"to_person_id": "P0123", "reason": "voluntary"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert!(
        findings(&e)
            .iter()
            .any(|(r, c)| r == "R43" && c.contains("art. 10"))
    );
    // On the holder's death it may go at once — with the vehicle in the new holder's name
    // (art. 30 III): as it is, the CRLV is the late holder's.
    let aux =
        app.get("/v1/permits/0004", &t).await.ok(StatusCode::OK)["auxiliaries"][0]["person_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let to_aux = json!({"to_person_id": aux, "reason": "death"});
    let e = app
        .post("/v1/permits/0004/transfer", &t, to_aux.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R40"]);
    // The office records the new CRLV, then transfers; the receiver is no longer an auxiliary.
    let cpf = app.get(&format!("/v1/people/{aux}"), &t).await.json()["cpf"].clone();
    let mut v = app.get("/v1/vehicles/V0004", &t).await.ok(StatusCode::OK);
    v["owner_cpf"] = cpf;
    app.put("/v1/vehicles/V0004", &t, v)
        .await
        .ok(StatusCode::OK);
    app.post("/v1/permits/0004/transfer", &t, to_aux)
        .await
        .ok(StatusCode::OK);
    let p = app.get("/v1/permits/0004", &t).await.ok(StatusCode::OK);
    assert_eq!(p["holder_id"], json!(aux));
    assert!(
        p["auxiliaries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["person_id"] != json!(aux))
    );
    let v = field_check(&app, "0004").await;
    assert_eq!(v.overall, sync_core::rules::Overall::Regular, "{v:#?}");
    let transfers = app.get("/v1/transfers", &t).await.ok(StatusCode::OK);
    assert_eq!(transfers.as_array().unwrap().len(), 1);

    // Swap: fee paid, different stands of the same service.
    app.post(
        "/v1/swaps",
        &t,
        json!({"permit_a": "0001", "permit_b": "0030", "fee_paid": true}),
    )
    .await
    .ok(StatusCode::OK);
    assert_eq!(
        app.get("/v1/permits/0001", &t).await.json()["stand_id"],
        "S02"
    );
    let e = app
        .post(
            "/v1/swaps",
            &t,
            json!({"permit_a": "0001", "permit_b": "0030", "fee_paid": false}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(findings(&e)[0].0, "R44");
    let e = app
        .post(
            "/v1/swaps",
            &t,
            json!({"permit_a": "0002", "permit_b": "0102", "fee_paid": true}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert!(
        findings(&e)
            .iter()
            .all(|(r, c)| r == "R38" && c.contains("art. 28"))
    );
}

#[tokio::test]
async fn a_succession_closes_with_the_transfer_to_the_heir() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // 0052 is in succession: the field check says "óbito do titular".
    assert!(field_check(&app, "0052").await.rule_ids().contains(&"R05"));
    // The heir: a person of the registry with no permit, with a vehicle in their name.
    let mut heir = app.get("/v1/people/P0052", &t).await.ok(StatusCode::OK);
    heir["id"] = json!("P9052");
    heir["cpf"] = json!("111.444.777-35");
    heir["name"] = json!("Herdeira do Titular");
    app.post("/v1/people", &t, heir)
        .await
        .ok(StatusCode::CREATED);
    // Only by death: a voluntary transfer of a dead holder's permit is refused.
    let e = app
        .post(
            "/v1/permits/0052/transfer",
            &t,
            json!({"to_person_id": "P9052", "reason": "voluntary", "vehicle_id": "V0052"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(ids(&e), ["R43"]);
    assert!(e["message"].as_str().unwrap().contains("em sucessão"));
    // The heir's own vehicle goes with the permit (its CRLV in the heir's name).
    let mut v = app.get("/v1/vehicles/V0052", &t).await.ok(StatusCode::OK);
    v["id"] = json!("V9052");
    v["plate"] = json!("QAZ9B52");
    v["owner_cpf"] = json!("11144477735");
    app.post("/v1/vehicles", &t, v)
        .await
        .ok(StatusCode::CREATED);
    app.post(
        "/v1/permits/0052/transfer",
        &t,
        json!({"to_person_id": "P9052", "reason": "death", "vehicle_id": "V9052"}),
    )
    .await
    .ok(StatusCode::OK);
    let p = app.get("/v1/permits/0052", &t).await.ok(StatusCode::OK);
    assert_eq!(
        (&p["holder_id"], &p["state"]["state"], &p["vehicle_id"]),
        (&json!("P9052"), &json!("active"), &json!("V9052"))
    );
    // The living heir no longer gets "óbito do titular": the check is regular.
    let v = field_check(&app, "0052").await;
    assert_eq!(v.overall, sync_core::rules::Overall::Regular, "{v:#?}");
}

#[tokio::test]
async fn people_vehicles_stands_penalties_and_fines_are_written() {
    let app = app().await;
    let t = app.login("escritorio").await;
    // Update a person; sending the same data again changes nothing (no new version).
    let mut p = app.get("/v1/people/P0010", &t).await.ok(StatusCode::OK);
    p["name"] = json!("Nome Corrigido");
    let u = app
        .put("/v1/people/P0010", &t, p.clone())
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        (u["version"].as_u64(), u["changed"].as_bool()),
        (Some(2), Some(true))
    );
    let before = app.footprint().await;
    let u = app
        .put("/v1/people/P0010", &t, p.clone())
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        (u["version"].as_u64(), u["changed"].as_bool()),
        (Some(2), Some(false))
    );
    assert_eq!(app.footprint().await, before);
    app.put("/v1/people/P0011", &t, p.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "id_mismatch");
    p["cpf"] = json!("12345678901");
    app.put("/v1/people/P0010", &t, p)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_cpf");

    let mut v = app.get("/v1/vehicles/V0010", &t).await.ok(StatusCode::OK);
    v["colour"] = json!("Prata");
    app.put("/v1/vehicles/V0010", &t, v)
        .await
        .ok(StatusCode::OK);
    app.put(
        "/v1/stands/S02/coordinator",
        &t,
        json!({"person_id": "P0023"}),
    )
    .await
    .ok(StatusCode::OK);
    assert_eq!(
        app.get("/v1/stands/S02", &t).await.json()["coordinator_id"],
        "P0023"
    );
    app.put(
        "/v1/stands/S02/coordinator",
        &t,
        json!({"person_id": "P9999"}),
    )
    .await
    .error(StatusCode::NOT_FOUND, "not_found");

    let u = app
        .post(
            "/v1/penalties",
            &t,
            json!({"permit_number": "0011", "person_id": "P0011", "kind": {"kind": "suspension", "days": 15}, "starts_on": "2026-12-01"}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(u["changes"][0]["penalty"]["id"], "PEN-2026-0012");
    app.post(
        "/v1/penalties",
        &t,
        json!({"permit_number": "0011", "kind": {"kind": "suspension", "days": 0}}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_penalty");
    let u = app
        .post(
            "/v1/fines",
            &t,
            json!({"permit_number": "0011", "amount": "797.02"}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(u["changes"][0]["fine"]["id"], "MUL-2026-0003");
    app.post(
        "/v1/fines",
        &t,
        json!({"permit_number": "0011", "amount": "-1"}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_amount");
    app.post(
        "/v1/fines",
        &t,
        json!({"permit_number": "9999", "amount": "1"}),
    )
    .await
    .error(StatusCode::NOT_FOUND, "not_found");
    // A suspension with its end before its start is refused.
    app.put(
        "/v1/permits/0011/state",
        &t,
        json!({"state": "suspended", "from": "2026-12-10", "until": "2026-12-01"}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_period");
}
