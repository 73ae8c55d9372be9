//! Registry reads for every role, changes for the office, and the law's refusals as 422 with
//! rule id, citation and Portuguese message — storing nothing.

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

#[tokio::test]
async fn unpaid_fine_blocks_renewal_until_paid() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let before = app.footprint().await;
    let e = app
        .post("/v1/permits/0019/renewal", &t, json!({"year": 2026}))
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

    let fines = app.get("/v1/fines", &t).await.ok(StatusCode::OK);
    let id = fines
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["permit_number"] == "0019")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
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
        .post("/v1/permits/0019/renewal", &t, json!({"year": 2026}))
        .await
        .ok(StatusCode::OK);
    assert_eq!(u["version"], 3);
    let p = app.get("/v1/permits/0019", &t).await.ok(StatusCode::OK);
    assert_eq!(p["renewal_year"], 2026);
    // Renewing a year already renewed is refused (art. 7).
    let e = app
        .post("/v1/permits/0019/renewal", &t, json!({"year": 2026}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(findings(&e)[0].0, "R11");
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

    let grant =
        json!({"number": "0122", "holder_id": "P9001", "vehicle_id": "V9001", "stand_id": "S01"});
    let e = app
        .post("/v1/permits", &t, grant.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let f = findings(&e);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, "R23");
    assert!(f[0].1.contains("art. 14"));
    assert!(e["message"].as_str().unwrap().contains("limite de 118"));

    let stand = json!({
        "id": "S09", "name": "Poupatempo", "address": "Americana-SP", "schedule": "06-20",
        "service": "common", "vacancies": 4, "coordinator_id": null, "latitude": null, "longitude": null,
    });
    let e = app
        .post("/v1/stands", &t, stand.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(findings(&e)[0].0, "R23");
    let mut s01 = app.get("/v1/stands/S01", &t).await.ok(StatusCode::OK);
    s01["vacancies"] = json!(s01["vacancies"].as_u64().unwrap() + 1);
    let e = app
        .put("/v1/stands/S01", &t, s01.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(findings(&e)[0].0, "R23");
    assert_eq!(app.footprint().await, before);

    // A stand without vacancies is no increase; revoking a permit frees a place.
    let mut empty = stand.clone();
    empty["vacancies"] = json!(0);
    app.post("/v1/stands", &t, empty)
        .await
        .ok(StatusCode::CREATED);
    app.put(
        "/v1/permits/0001/state",
        &t,
        json!({"state": "revoked", "on": "2026-11-30"}),
    )
    .await
    .ok(StatusCode::OK);
    app.post("/v1/permits", &t, grant)
        .await
        .ok(StatusCode::CREATED);
    // Reinstating the revoked one would exceed the cap again.
    let e = app
        .put("/v1/permits/0001/state", &t, json!({"state": "active"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(findings(&e)[0].0, "R23");
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
    // P0002 already holds 0002 (art. 9) and the cap is full (art. 14): both reported.
    let e = app
        .post(
            "/v1/permits",
            &t,
            json!({"number": "0123", "holder_id": "P0002", "vehicle_id": "V9002", "stand_id": "S02"}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    let ids: Vec<String> = findings(&e).into_iter().map(|(r, _)| r).collect();
    assert_eq!(ids, ["R03", "R23"]);
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
    // On the holder's death it may go at once; the receiver is no longer an auxiliary.
    let aux =
        app.get("/v1/permits/0004", &t).await.ok(StatusCode::OK)["auxiliaries"][0]["person_id"]
            .as_str()
            .unwrap()
            .to_owned();
    app.post(
        "/v1/permits/0004/transfer",
        &t,
        json!({"to_person_id": aux, "reason": "death"}),
    )
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
