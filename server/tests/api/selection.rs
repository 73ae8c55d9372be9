//! An edital de chamamento through the API, from opening to the grants, on the fixed clock moved
//! by hand: each refusal of the law on the way (notice, free places, the draw's date and its
//! uniqueness, the art. 5 window and a pending appeal), the lottery's list hashing to its
//! published digest, the registry written by the grants, and the audit rows.

use axum::http::{Method, StatusCode};
use chrono::{Duration, NaiveDate};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sync_core::domain::{CnhNumber, Cpf, Person, Registry, Renavam};
use sync_core::rules::Severity;
use sync_core::rules::office::driver_requirements;
use taxi_fiscal_server::config::DB_FILE;
use taxi_fiscal_server::store::Actor;

use crate::common::{App, app};

fn d(y: i32, m: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, day).unwrap()
}

const REFERENCE: (i32, u32, u32) = (2026, 12, 31);
/// About when the grants are made: a person chosen must still meet art. 2 then.
const GRANTS: (i32, u32, u32) = (2027, 1, 20);
/// Permits the demo gives a case of their own (suspended, unpaid fine, expired CNH, …).
const SPECIAL: &[&str] = &[
    "0005", "0007", "0012", "0019", "0022", "0027", "0040", "0044", "0052", "0060", "0080", "0121",
];

/// Moves the clock to 12:00 in Americana of `day`.
fn set_day(app: &App, day: NaiveDate) {
    let now = app.state.clock().now();
    let target = day.and_hms_opt(15, 0, 0).unwrap().and_utc();
    assert!(target >= now, "the clock only moves forward");
    app.state.clock().advance(target - now);
}

fn clean(reg: &Registry, p: &Person) -> bool {
    let rules = &reg.law().rules;
    [
        d(REFERENCE.0, REFERENCE.1, REFERENCE.2),
        d(GRANTS.0, GRANTS.1, GRANTS.2),
    ]
    .into_iter()
    .all(|on| {
        driver_requirements(p, on, rules)
            .iter()
            .all(|f| f.severity != Severity::Irregular)
    })
}

/// What a candidate presents: the person's own documents, current certificates.
fn presented(p: &Person, activity_proof: bool) -> Value {
    json!({
        "name": p.name,
        "cpf": p.cpf,
        "birth_date": p.birth_date,
        "licence": p.licence,
        "residence_since": "2010-03-01",
        "criminal_record": {"issued_on": "2026-12-15", "favourable": true},
        "medical": {"issued_on": "2026-12-16", "favourable": true},
        "activity_proof": activity_proof,
    })
}

/// A new person (not in the registry) with the licence of `like` under a new number.
fn newcomer(like: &Person, n: u8, name: &str) -> Person {
    Person {
        id: format!("PN{n:02}"),
        name: name.to_owned(),
        cpf: Cpf::from_base([7, 3, 1, 5, 0, 2, 9, 4, n]).unwrap(),
        birth_date: d(1990, 5, 1),
        licence: sync_core::domain::DriverLicence {
            number: CnhNumber::from_base([8, 8, 1, 2, 3, 4, 5, 6, n]).unwrap(),
            ..like.licence.clone()
        },
    }
}

/// A vehicle like the demo's first one, in `owner`'s name.
async fn vehicle_for(app: &App, t: &str, id: &str, plate: &str, owner: &Cpf, n: u8) {
    let mut v = app.get("/v1/vehicles/V0001", t).await.ok(StatusCode::OK);
    v["id"] = json!(id);
    v["plate"] = json!(plate);
    v["renavam"] = json!(Renavam::from_base([5, 5, 0, 1, 2, 3, 4, 5, 6, n]).unwrap());
    v["owner_cpf"] = json!(owner);
    app.post("/v1/vehicles", t, v).await.ok(StatusCode::CREATED);
}

fn entry<'a>(view: &'a Value, inscription: &str) -> &'a Value {
    view["edital"]["list"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["inscription"] == inscription)
        .unwrap()
}

fn rules_of(error: &Value) -> Vec<String> {
    error["details"]["findings"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|x| x["rule_id"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_edital_runs_from_opening_to_grants() {
    let app = app().await;
    // The demo registry is at the art. 14 cap with every place filled: the office first opens
    // three places at S01 under a cap the municipality raised.
    taxi_fiscal_server::registry::commit(
        app.state.store().as_ref(),
        Actor::cli(app.state.clock().now()),
        "registry.stand.update",
        "stand:S01",
        |reg| {
            let mut next = reg.clone();
            let mut law = next.law().clone();
            law.rules.inhabitants_per_taxi = 1_000;
            next.parameters = Some(law);
            next.stands
                .iter_mut()
                .find(|s| s.id == "S01")
                .unwrap()
                .vacancies += 3;
            Ok::<_, taxi_fiscal_server::registry::EditError>(next)
        },
    )
    .await
    .unwrap();
    let reg = app.state.store().registry().await.unwrap();
    let person = |id: &str| reg.people.iter().find(|p| p.id == id).unwrap().clone();
    let ordinary = |number: &str| {
        !SPECIAL.contains(&number)
            && reg
                .permits
                .iter()
                .any(|p| p.number == number && p.state == sync_core::domain::PermitState::Active)
    };
    // A holder at another stand, and an auxiliary of more than a year, both meeting art. 2.
    let holder_permit = reg
        .permits
        .iter()
        .find(|p| p.stand_id != "S01" && ordinary(&p.number) && clean(&reg, &person(&p.holder_id)))
        .unwrap()
        .clone();
    let holder = person(&holder_permit.holder_id);
    let (aux_permit, aux) = reg
        .permits
        .iter()
        .filter(|p| ordinary(&p.number))
        .flat_map(|p| p.auxiliaries.iter().map(move |a| (p, a)))
        .find(|(_, a)| {
            a.registered_on < d(2025, 12, 1)
                && clean(&reg, &person(&a.person_id))
                && reg
                    .permits
                    .iter()
                    .filter(|q| q.auxiliaries.iter().any(|x| x.person_id == a.person_id))
                    .count()
                    == 1
        })
        .map(|(p, a)| (p.number.clone(), person(&a.person_id)))
        .unwrap();
    let new1 = newcomer(&holder, 1, "Ana Nova Primeira");
    let new2 = newcomer(&holder, 2, "Bruno Novo Segundo");
    let minor = Person {
        birth_date: d(2008, 2, 1),
        ..newcomer(&holder, 3, "Caio Jovem")
    };
    let uncertified = newcomer(&holder, 4, "Dora Sem Atestado");

    let fiscal = app.login("fiscal").await;
    let t = app.login("escritorio").await;
    let admin = app.login("admin").await;

    // Role: a field officer neither reads nor opens editais; the administrator reads only.
    app.get("/v1/editais", &fiscal)
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    app.get("/v1/editais", &admin).await.ok(StatusCode::OK);

    let opening = json!({
        "id": "2026-01",
        "number": "001/2026",
        "published_on": "2026-11-30",
        "applications_from": "2026-12-21",
        "applications_until": "2026-12-31",
        "seed_source": "os cinco prêmios da extração da Loteria Federal de 08/01/2027",
        "draw_on": "2027-01-08",
        "vacancies": [{"stand_id": "S01", "places": 3}],
    });
    let before = app.footprint().await;
    // Art. 4: applications ten days after publication.
    let mut early = opening.clone();
    early["applications_from"] = json!("2026-12-10");
    let e = app
        .post("/v1/editais", &t, early)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(rules_of(&e), ["R42"], "{e:#}");
    // R23: four places where three are free.
    let mut over = opening.clone();
    over["vacancies"] = json!([{"stand_id": "S01", "places": 4}]);
    let e = app
        .post("/v1/editais", &t, over)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(rules_of(&e), ["R23"], "{e:#}");
    app.post("/v1/editais", &admin, opening.clone())
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    let mut unknown = opening.clone();
    unknown["extra"] = json!(1);
    app.post("/v1/editais", &t, unknown)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_body");
    assert_eq!(app.footprint().await, before, "refusals store nothing");

    let v = app
        .post("/v1/editais", &t, opening.clone())
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(
        (v["version"].as_u64(), v["stage"].as_str()),
        (Some(1), Some("announced"))
    );
    app.post("/v1/editais", &t, opening.clone())
        .await
        .error(StatusCode::CONFLICT, "edital_exists");
    // A second edital finds the places taken by the first.
    let mut second = opening.clone();
    second["id"] = json!("2026-02");
    second["vacancies"] = json!([{"stand_id": "S01", "places": 1}]);
    let e = app
        .post("/v1/editais", &t, second)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(rules_of(&e), ["R23"], "{e:#}");
    app.get("/v1/editais/nenhum", &t)
        .await
        .error(StatusCode::NOT_FOUND, "not_found");

    // Applications.
    app.post(
        "/v1/editais/2026-01/candidates",
        &t,
        presented(&new1, false),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    set_day(&app, d(2026, 12, 21));
    let t = app.login("escritorio").await;
    let mut no_medical = presented(&uncertified, false);
    no_medical.as_object_mut().unwrap().remove("medical");
    for body in [
        presented(&holder, false),
        presented(&aux, true),
        presented(&new1, false),
        presented(&new2, false),
        presented(&minor, false),
        no_medical,
    ] {
        app.post("/v1/editais/2026-01/candidates", &t, body)
            .await
            .ok(StatusCode::CREATED);
    }
    // The same CPF twice.
    app.post(
        "/v1/editais/2026-01/candidates",
        &t,
        presented(&new1, false),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    app.post("/v1/editais/2026-01/list", &t, json!({}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");

    // The list, after the window.
    set_day(&app, d(2027, 1, 2));
    let t = app.login("escritorio").await;
    let v = app
        .request(Method::POST, "/v1/editais/2026-01/list", Some(&t), None)
        .await
        .ok(StatusCode::OK);
    assert_eq!(v["stage"], "list_published");
    assert_eq!(
        entry(&v, "001")["group"],
        "holder",
        "{:#}",
        entry(&v, "001")
    );
    assert_eq!(
        entry(&v, "002")["group"],
        "auxiliary",
        "{:#}",
        entry(&v, "002")
    );
    assert_eq!(entry(&v, "003")["group"], "new_registrant");
    assert_eq!(entry(&v, "004")["group"], "new_registrant");
    for (i, rule) in [("005", "R06"), ("006", "R41")] {
        let e = entry(&v, i);
        assert!(e["group"].is_null(), "{e:#}");
        assert!(
            e["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["rule_id"] == rule),
            "{e:#}"
        );
    }
    // The lottery's list, byte for byte, hashes to the published digest.
    let digest = v["edital"]["list"]["lottery_digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let txt = app.get("/v1/editais/2026-01/lottery.txt", &t).await;
    assert_eq!(txt.status, StatusCode::OK);
    assert_eq!(
        txt.headers["content-type"].to_str().unwrap(),
        "text/plain; charset=utf-8"
    );
    assert_eq!(hex::encode(Sha256::digest(&txt.body)), digest);
    let text = String::from_utf8(txt.body.to_vec()).unwrap();
    assert!(text.contains("003;Ana Nova Primeira\n") && text.contains("004;Bruno Novo Segundo\n"));
    assert_eq!(text.lines().count(), 3, "{text}");

    // The draw: not before its date, then once.
    let seed = json!({"seed": "12345  67890 13579 24680 11223"});
    let e = app
        .post("/v1/editais/2026-01/draw", &t, seed.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert_eq!(rules_of(&e), ["R42"]);
    set_day(&app, d(2027, 1, 8));
    let t = app.login("escritorio").await;
    let v = app
        .post("/v1/editais/2026-01/draw", &t, seed.clone())
        .await
        .ok(StatusCode::OK);
    assert_eq!(v["edital"]["draw"]["seed"], "12345 67890 13579 24680 11223");
    let order: Vec<String> = v["edital"]["draw"]["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["inscription"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(order.len(), 2);
    app.post("/v1/editais/2026-01/draw", &t, json!({"seed": "outra"}))
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");

    // The result: holder, auxiliary, then the first drawn get the three places.
    let v = app
        .request(Method::POST, "/v1/editais/2026-01/result", Some(&t), None)
        .await
        .ok(StatusCode::OK);
    assert_eq!(v["stage"], "result_published");
    let chosen: Vec<(String, Option<String>)> = v["classification"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["inscription"].as_str().unwrap().to_owned(),
                r["stand_id"].as_str().map(String::from),
            )
        })
        .collect();
    let drawn_first = order[0].clone();
    let waiting = order[1].clone();
    assert_eq!(
        chosen,
        [
            ("001".to_owned(), Some("S01".to_owned())),
            ("002".to_owned(), Some("S01".to_owned())),
            (drawn_first.clone(), Some("S01".to_owned())),
            (waiting.clone(), None),
        ]
    );
    let window_end: NaiveDate =
        serde_json::from_value(v["edital"]["result"]["appeal_deadline"]["deadline"].clone())
            .unwrap();

    // An appeal in time, by the candidate left waiting; the grant waits for the window.
    let v = app
        .post(
            "/v1/editais/2026-01/appeals",
            &t,
            json!({"appellant": "Candidato em espera", "inscription": waiting, "grounds": "A ordem do sorteio deve ser revista."}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(v["edital"]["appeals"][0]["timely"], true);
    let grant_new =
        json!({"inscription": drawn_first, "permit_number": "0901", "vehicle_id": "V0901"});
    let e = app
        .post("/v1/editais/2026-01/grants", &t, grant_new.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert!(e["message"].as_str().unwrap().contains("art. 5º"), "{e:#}");

    // After the window: a late appeal is recorded as such, and the timely one still holds the
    // grants.
    set_day(&app, window_end + Duration::days(1));
    let t = app.login("escritorio").await;
    let v = app
        .post(
            "/v1/editais/2026-01/appeals",
            &t,
            json!({"appellant": "Terceiro interessado", "grounds": "Recurso fora do prazo."}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(v["edital"]["appeals"][1]["timely"], false);
    let new_person = if drawn_first == "003" { &new1 } else { &new2 };
    app.post("/v1/people", &t, serde_json::to_value(new_person).unwrap())
        .await
        .ok(StatusCode::CREATED);
    vehicle_for(&app, &t, "V0901", "TFS1E01", &new_person.cpf, 1).await;
    let e = app
        .post("/v1/editais/2026-01/grants", &t, grant_new.clone())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert!(e["message"].as_str().unwrap().contains("nº 1"), "{e:#}");
    app.post(
        "/v1/editais/2026-01/appeals/2/decision",
        &t,
        json!({"granted": true, "reasoning": "Provido."}),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    app.post(
        "/v1/editais/2026-01/appeals/1/decision",
        &t,
        json!({"granted": false, "reasoning": "O sorteio seguiu o edital."}),
    )
    .await
    .ok(StatusCode::OK);

    // The group III grant: a new permit at S01 in the candidate's name.
    let registry_before = app.version().await;
    let g = app
        .post("/v1/editais/2026-01/grants", &t, grant_new.clone())
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(g["permit_number"], "0901");
    assert_eq!(g["registry_version"].as_u64(), Some(registry_before + 1));
    let p = app.get("/v1/permits/0901", &t).await.ok(StatusCode::OK);
    assert_eq!(
        (p["holder_id"].as_str(), p["stand_id"].as_str()),
        (Some(new_person.id.as_str()), Some("S01"))
    );
    assert_eq!(p["edital_date"], "2026-11-30");
    app.post("/v1/editais/2026-01/grants", &t, grant_new)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");

    // The auxiliary's grant ends his auxiliary registration.
    vehicle_for(&app, &t, "V0902", "TFS1E02", &aux.cpf, 2).await;
    let g = app
        .post(
            "/v1/editais/2026-01/grants",
            &t,
            json!({"inscription": "002", "permit_number": "0902", "vehicle_id": "V0902"}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(g["group"], "auxiliary");
    let p = app.get("/v1/permits/0902", &t).await.ok(StatusCode::OK);
    assert_eq!(p["holder_id"].as_str(), Some(aux.id.as_str()));
    let old = app
        .get(&format!("/v1/permits/{aux_permit}"), &t)
        .await
        .ok(StatusCode::OK);
    assert!(
        old["auxiliaries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["person_id"] != aux.id.as_str()),
        "{old:#}"
    );

    // The holder's permit moves to S01.
    let g = app
        .post(
            "/v1/editais/2026-01/grants",
            &t,
            json!({"inscription": "001"}),
        )
        .await
        .ok(StatusCode::CREATED);
    assert_eq!(g["permit_number"], holder_permit.number.as_str());
    let p = app
        .get(&format!("/v1/permits/{}", holder_permit.number), &t)
        .await
        .ok(StatusCode::OK);
    assert_eq!(p["stand_id"], "S01");

    let v = app.get("/v1/editais/2026-01", &t).await.ok(StatusCode::OK);
    assert_eq!(v["edital"]["grants"].as_array().unwrap().len(), 3);
    let list = app.get("/v1/editais", &t).await.ok(StatusCode::OK);
    assert_eq!(list[0]["id"], "2026-01");
    assert_eq!(list[0]["grants"], 3);

    // Every step has its audit row, and the chain and the derived tables verify.
    let conn = rusqlite::Connection::open(app.dir.path().join(DB_FILE)).unwrap();
    let actions: Vec<String> = conn
        .prepare("SELECT action FROM audit_log WHERE subject = 'edital:2026-01' ORDER BY seq")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut expected = vec!["edital.open"];
    expected.extend(["edital.candidate.register"; 6]);
    expected.extend([
        "edital.list.publish",
        "edital.draw",
        "edital.result.publish",
        "edital.appeal.file",
        "edital.appeal.file",
        "edital.appeal.decide",
        "edital.grant",
        "edital.grant",
        "edital.grant",
    ]);
    assert_eq!(actions, expected);
    let granted: i64 = conn
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action IN ('registry.permit.grant', 'registry.permit.stand')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(granted, 3);
    let report = app.state.store().verify_audit().await.unwrap();
    assert!(report.ok, "{report:?}");
}
