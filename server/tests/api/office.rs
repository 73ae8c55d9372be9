//! The office workflow API (`/v1/office/…`): records written on real device stores and
//! synced in, then grouped, classified, proposed, decided, notified and appealed through the API;
//! every decision checked in the registry the devices pull (version, penalty, fine, permit
//! state), in the audit chain, and refused with nothing stored when the law or the role says no.

use axum::http::StatusCode;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde_json::{Value, json};
use sync_core::domain::{DriverId, DriverRole, PenaltyKind, PermitState, Plate, Registry};
use sync_core::feed::{self, RegistryChanges};
use sync_core::records::{
    Agent, InfractionDraft, LegalBasis, PersonRef, Position, RecordDoc, Signature, UserRole,
};
use sync_core::rules::{CheckInput, Observation, Overall, RulesConfig, VehicleQuery};
use sync_core::store::Store;
use sync_core::sync::{DeviceSync, SyncResponse, device_uuid, meta_of};
use uuid::Uuid;

use crate::common::{App, NOW, app};

fn now() -> DateTime<Utc> {
    NOW.parse().unwrap()
}

fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// A device of a user: its own store, logged in.
pub(crate) struct Phone {
    agent: Agent,
    token: String,
    store: Store,
    sync: DeviceSync,
    _dir: tempfile::TempDir,
}

async fn phone(app: &App, username: &str, password: &str, device: &str) -> Phone {
    let login = app
        .request(
            axum::http::Method::POST,
            "/v1/auth/login",
            None,
            Some(json!({ "username": username, "password": password, "device_id": device })),
        )
        .await
        .ok(StatusCode::OK);
    let dir = tempfile::tempdir().unwrap();
    let uuid = device_uuid(device);
    Phone {
        agent: Agent::new(
            login["user"]["id"].as_str().unwrap(),
            UserRole::GuardaMunicipal,
            uuid,
        ),
        token: login["access_token"].as_str().unwrap().to_owned(),
        store: Store::open(dir.path().join("device.db")).unwrap(),
        sync: DeviceSync::new(uuid),
        _dir: dir,
    }
}

/// The demo officer, and a second officer with a device of their own (created by the admin).
pub(crate) async fn two_officers(app: &App) -> (Phone, Phone) {
    let admin = app.login("admin").await;
    let user = app
        .post(
            "/v1/users",
            &admin,
            json!({ "username": "fiscal03", "display_name": "Fiscal 03",
                    "password": "fiscal03-senha", "role": "officer" }),
        )
        .await
        .ok(StatusCode::CREATED);
    app.post(
        "/v1/devices",
        &admin,
        json!({ "id": "tablet-fiscal-03", "user_id": user["id"], "label": "Tablet 03" }),
    )
    .await
    .ok(StatusCode::CREATED);
    (
        phone(app, "fiscal", "fiscal-demo", "tablet-fiscal-01").await,
        phone(app, "fiscal03", "fiscal03-senha", "tablet-fiscal-03").await,
    )
}

impl Phone {
    /// The access token of this phone's login.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    fn persist(&mut self, doc: &mut RecordDoc) {
        let id = doc.id().to_string();
        let meta = meta_of(doc, now()).unwrap();
        let chunk = doc.save_incremental();
        self.store
            .write_record(&id, doc.kind().as_str(), &meta, &chunk, false)
            .unwrap();
    }

    pub(crate) fn edit(&mut self, id: &str, f: impl FnOnce(&mut RecordDoc, &Agent)) {
        let mut d = RecordDoc::load(&self.store.load_record_bytes(id).unwrap().concat()).unwrap();
        let agent = self.agent.clone();
        f(&mut d, &agent);
        self.persist(&mut d);
    }

    /// Sync rounds until the server has nothing more.
    pub(crate) async fn sync_all(&mut self, app: &App) {
        for _ in 0..10 {
            let req = self.sync.build_request(&self.store).unwrap().request;
            let resp: SyncResponse = serde_json::from_value(
                app.post("/v1/sync", &self.token, serde_json::to_value(&req).unwrap())
                    .await
                    .ok(StatusCode::OK),
            )
            .unwrap();
            assert!(resp.rejections.is_empty(), "{:?}", resp.rejections);
            let report = self
                .sync
                .apply_response(&mut self.store, &req, &resp, now())
                .unwrap();
            if !report.again {
                return;
            }
        }
        panic!("no convergence");
    }

    /// Writes an issued auto for `permit` (the driver its holder, or its first auxiliary) and
    /// syncs it; returns the record id.
    pub(crate) async fn auto(&mut self, app: &App, spec: Auto<'_>) -> String {
        self.write_auto(app, spec, true).await
    }

    /// [`Phone::auto`], issued or left as a draft.
    async fn write_auto(&mut self, app: &App, spec: Auto<'_>, issue: bool) -> String {
        let reg = app.state.store().registry().await.unwrap();
        let permit = reg
            .permits
            .iter()
            .find(|p| p.number == spec.permit)
            .unwrap();
        let plate = reg
            .vehicles
            .iter()
            .find(|v| v.id == permit.vehicle_id)
            .unwrap()
            .plate
            .clone();
        let (driver, role) = match (spec.auxiliary, permit.auxiliaries.first()) {
            (true, Some(a)) => (a.person_id.clone(), DriverRole::Auxiliary),
            _ => (permit.holder_id.clone(), DriverRole::Holder),
        };
        let at = spec.at;
        let draft = InfractionDraft {
            id: Uuid::now_v7(),
            number: None,
            issuing_body: "Guarda Municipal de Americana".into(),
            occurred_at: at,
            monotonic: 7,
            position: spec.position.map(|(lat, lon)| Position {
                lat,
                lon,
                accuracy_m: 10.0,
            }),
            stand_id: spec.stand.map(String::from),
            plate: Plate::parse(plate.raw()).unwrap(),
            driver: PersonRef::Registry(driver),
            driver_role: role,
            permit_number: Some(permit.number.clone()),
            holder_id: Some(permit.holder_id.clone()),
            facts: "Táxi parado fora do seu ponto no horário obrigatório.".into(),
            legal_basis: vec![LegalBasis {
                rule_id: spec.rule.into(),
                citation: sync_core::rules::lookup(spec.rule).unwrap().citation(),
            }],
            verdict: None,
            witnesses: Vec::new(),
            photos: Vec::new(),
        };
        let mut doc = RecordDoc::new_infraction(draft, &self.agent).unwrap();
        doc.confirm_vehicle(&self.agent, at + Duration::minutes(2))
            .unwrap();
        if issue {
            let signature = if spec.signed {
                Signature::Signed {
                    sha256: "5".repeat(64),
                }
            } else {
                Signature::Missing {
                    reason: "condutor recusou-se a assinar".into(),
                }
            };
            doc.issue_unsealed(&self.agent, at + Duration::minutes(3), signature)
                .unwrap();
        }
        let id = doc.id().to_string();
        self.persist(&mut doc);
        self.sync_all(app).await;
        id
    }
}

#[derive(Clone, Copy)]
pub(crate) struct Auto<'a> {
    pub(crate) permit: &'a str,
    pub(crate) auxiliary: bool,
    pub(crate) at: DateTime<Utc>,
    pub(crate) position: Option<(f64, f64)>,
    pub(crate) stand: Option<&'a str>,
    pub(crate) rule: &'a str,
    /// The driver signed the auto on the spot.
    pub(crate) signed: bool,
}

pub(crate) fn auto(permit: &str) -> Auto<'_> {
    Auto {
        permit,
        auxiliary: false,
        at: now() - Duration::hours(3),
        position: Some((-22.7393, -47.3314)),
        stand: Some("S02"),
        rule: "R24",
        signed: false,
    }
}

pub(crate) async fn registry(app: &App) -> std::sync::Arc<Registry> {
    app.state.store().registry().await.unwrap()
}

/// A field check of a permit's taxi by its holder, on a registry `reg`, now.
fn check(reg: &Registry, permit: &str) -> sync_core::rules::Verdict {
    let p = reg.permits.iter().find(|p| p.number == permit).unwrap();
    let holder = reg.people.iter().find(|x| x.id == p.holder_id).unwrap();
    let input = CheckInput {
        vehicle: VehicleQuery::Permit(permit.into()),
        driver: DriverId::Cpf(holder.cpf.clone()),
        at: now(),
        observation: Observation::default(),
        registry_refreshed_at: Some(now()),
    };
    sync_core::rules::check_registry(&reg.index(), &input, &RulesConfig::default())
}

/// `decide` a written warning on a record.
async fn decide_warning(app: &App, office: &str, id: &str) -> crate::common::Resp {
    app.post(
        &format!("/v1/office/records/{id}/decide"),
        office,
        json!({ "penalty": { "kind": "written_warning" } }),
    )
    .await
}

/// Takes a record up and records a proposal of `penalty`, as a clerk does before deciding:
/// the server never writes those steps on the office's behalf.
pub(crate) async fn review_and_propose(app: &App, office: &str, id: &str, penalty: Value) {
    app.post(
        &format!("/v1/office/records/{id}/review"),
        office,
        json!({}),
    )
    .await
    .ok(StatusCode::OK);
    app.post(
        &format!("/v1/office/records/{id}/propose"),
        office,
        json!({ "penalty": penalty }),
    )
    .await
    .ok(StatusCode::OK);
}

/// Generates the notification of the decision in force (one per person charged) and returns
/// the first one's number: a ciência by signature or postal receipt names it.
pub(crate) async fn notice(app: &App, office: &str, id: &str) -> String {
    let made = app
        .post(
            &format!("/v1/office/records/{id}/notifications"),
            office,
            json!({}),
        )
        .await
        .ok(StatusCode::OK);
    made["notifications"][0]["number"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn event_kinds(case: &Value) -> Vec<String> {
    case["record"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_inbox_filters_by_every_field_and_counts_per_status() {
    let app = app().await;
    let (mut a, mut b) = two_officers(&app).await;
    let r1 = a.auto(&app, auto("0001")).await;
    let r2 = b
        .auto(
            &app,
            Auto {
                rule: "R28",
                at: now() - Duration::days(2),
                ..auto("0003")
            },
        )
        .await;
    let office = app.login("escritorio").await;
    app.post(
        &format!("/v1/office/records/{r2}/review"),
        &office,
        json!({ "note": "em análise" }),
    )
    .await
    .ok(StatusCode::OK);

    let all = app
        .get("/v1/office/inbox", &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(all["total"], 2);
    assert_eq!(all["items"][0]["id"], r1, "newest first");
    assert_eq!(all["items"][0]["rules"], json!(["R24"]));
    assert_eq!(all["items"][0]["status_label"], "emitido");
    let counts: Vec<(String, u64)> = all["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["status"].as_str().unwrap().into(),
                c["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(counts.contains(&("issued".into(), 1)), "{counts:?}");
    assert!(counts.contains(&("under_review".into(), 1)), "{counts:?}");

    let only = |q: &str| {
        let app = &app;
        let office = office.clone();
        let q = q.to_owned();
        async move {
            let v = app
                .get(&format!("/v1/office/inbox?{q}"), &office)
                .await
                .ok(StatusCode::OK);
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(only("rule=R28").await, [r2.as_str()]);
    assert_eq!(only("rule=r24").await, [r1.as_str()]);
    assert!(only("rule=R02").await.is_empty());
    // The store matches whole ids: `R2` is neither R24 nor R28.
    let page = app
        .state
        .store()
        .office_inbox(taxi_fiscal_server::store::records::RecordFilter {
            rule: Some("R2".into()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total, 0);
    assert_eq!(only("status=under_review").await, [r2.as_str()]);
    assert_eq!(
        only(&format!("author={}", b.agent.user_id)).await,
        [r2.as_str()]
    );
    let reg = registry(&app).await;
    let p1 = reg.permits.iter().find(|p| p.number == "0001").unwrap();
    let plate = &reg
        .vehicles
        .iter()
        .find(|v| v.id == p1.vehicle_id)
        .unwrap()
        .plate;
    let spelled = plate.canonical().to_lowercase();
    assert_eq!(only(&format!("plate={spelled}")).await, [r1.as_str()]);
    assert_eq!(only("from=2026-11-30").await, [r1.as_str()]);
    assert_eq!(only("to=2026-11-29").await, [r2.as_str()]);
    // The counts ignore the status filter (they are what the other filters leave).
    let v = app
        .get("/v1/office/inbox?status=issued", &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(v["total"], 1);
    assert_eq!(v["counts"].as_array().unwrap().len(), 2);
    app.get("/v1/office/inbox?rule=R99", &office)
        .await
        .error(StatusCode::BAD_REQUEST, "invalid_query");
    app.get("/v1/office/inbox?status=nonsense", &office)
        .await
        .error(StatusCode::BAD_REQUEST, "invalid_query");
}

#[tokio::test]
async fn duplicates_are_grouped_then_settled_and_never_proposed_again() {
    let app = app().await;
    let (mut a, mut b) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    // Same taxi, 20 minutes and ~50 m apart, two devices: a pair.
    let x = a.auto(&app, auto("0001")).await;
    let y = b
        .auto(
            &app,
            Auto {
                at: now() - Duration::hours(3) + Duration::minutes(20),
                position: Some((-22.7397, -47.3314)),
                ..auto("0001")
            },
        )
        .await;
    // Same taxi five hours earlier: another occurrence. Another taxi, same place: not a pair.
    let _earlier = b
        .auto(
            &app,
            Auto {
                at: now() - Duration::hours(8),
                ..auto("0001")
            },
        )
        .await;
    let _other = b.auto(&app, auto("0003")).await;
    // Same taxi, same time, 2 km away: not the same place.
    let _far = b
        .auto(
            &app,
            Auto {
                position: Some((-22.7573, -47.3314)),
                ..auto("0001")
            },
        )
        .await;

    let groups = app
        .get("/v1/office/duplicates", &office)
        .await
        .ok(StatusCode::OK)["groups"]
        .clone();
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 1, "{groups:#?}");
    let g = &groups[0];
    let ids: Vec<&str> = g["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["row"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [x.as_str(), y.as_str()]);
    let pair = &g["pairs"][0];
    assert_eq!(pair["minutes_apart"], 20);
    let d = pair["distance_m"].as_f64().unwrap();
    assert!((30.0..70.0).contains(&d), "{d}");
    assert!(
        pair["reason"]
            .as_str()
            .unwrap()
            .contains("dispositivos diferentes")
    );

    // Keeping them apart settles the pair: one event on each, never proposed again.
    let before = app.audit_rows().await;
    let s = app
        .post(
            "/v1/office/duplicates/keep-apart",
            &office,
            json!({ "records": [x, y] }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(s["events"], 2);
    assert_eq!(app.audit_rows().await, before + 2);
    let groups = app
        .get("/v1/office/duplicates", &office)
        .await
        .ok(StatusCode::OK)["groups"]
        .clone();
    assert_eq!(groups, json!([]));
    let again = app
        .post(
            "/v1/office/duplicates/keep-apart",
            &office,
            json!({ "records": [y, x] }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(again["events"], 0, "already settled: nothing written");

    // A new duplicate of x from the other device: merged into x.
    let z = b
        .auto(
            &app,
            Auto {
                at: now() - Duration::hours(3) + Duration::minutes(5),
                ..auto("0001")
            },
        )
        .await;
    let groups = app
        .get("/v1/office/duplicates", &office)
        .await
        .ok(StatusCode::OK)["groups"]
        .clone();
    assert_eq!(groups.as_array().unwrap().len(), 1);
    app.post(
        "/v1/office/duplicates/merge",
        &office,
        json!({ "keep": x, "merge": [x] }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request");
    let m = app
        .post(
            "/v1/office/duplicates/merge",
            &office,
            json!({ "keep": x, "merge": [z] }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(m["records"][0]["status"], "merged_as_duplicate");
    let case = app
        .get(&format!("/v1/office/records/{z}"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(case["record"]["duplicate_of"], x);
    // The merged record's case file names the kept one as the office knows it ("Auto nº …",
    // or "Auto sem número" for this unnumbered test auto), never by its id.
    let r = app
        .get(&format!("/v1/office/records/{z}/case-file"), &office)
        .await;
    assert_eq!(r.status, StatusCode::OK);
    let t = crate::notices::pdf_text(&r.body);
    assert!(t.contains("juntado a Auto"), "{t}");
    assert!(!t.contains(x.as_str()), "{t}");
    assert_eq!(
        app.get("/v1/office/duplicates", &office)
            .await
            .ok(StatusCode::OK)["groups"],
        json!([])
    );
}

#[tokio::test]
async fn the_proposal_explains_recidivism_and_the_fine_in_force() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let first = a
        .auto(
            &app,
            Auto {
                auxiliary: true,
                ..auto("0003")
            },
        )
        .await;
    let case = app
        .get(&format!("/v1/office/records/{first}"), &office)
        .await
        .ok(StatusCode::OK);
    // R33: the auxiliary and the holder are both charged, named from the registry.
    let charged = case["charged"].as_array().unwrap();
    assert_eq!(charged.len(), 2, "{charged:#?}");
    assert_eq!(charged[0]["role"], "condutor");
    assert!(
        charged[1]["role"]
            .as_str()
            .unwrap()
            .contains("art. 32, § 2º")
    );
    assert!(charged.iter().all(|c| c["name"].is_string()));
    let p = &case["proposal"];
    assert_eq!(p["penalty"], json!({ "kind": "written_warning" }));
    assert_eq!(p["base_rule"], "R24");
    review_and_propose(&app, &office, &first, json!({ "kind": "written_warning" })).await;
    let decided = app
        .post(
            &format!("/v1/office/records/{first}/decide"),
            &office,
            json!({ "penalty": { "kind": "written_warning" } }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        event_kinds(&decided["case"]),
        ["issued", "reviewed", "penalty_proposed", "penalty_decided"]
    );
    let warning_id = decided["case"]["registry_effects"]["penalty_id"]
        .as_str()
        .unwrap()
        .to_owned();

    // A second fault of the same permit: one grade up, a fine at its 2026 amount.
    let second = a.auto(&app, auto("0003")).await;
    let p = app
        .get(&format!("/v1/office/records/{second}/proposal"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(p["penalty"], json!({ "kind": "fine" }));
    assert_eq!(p["citation"], "Lei 4.019/2004, art. 32, II");
    assert_eq!(p["fine"]["amount"], "797.02");
    assert_eq!(p["recidivism"][0]["penalty_id"], warning_id);
    let reasons = p["reasons"].to_string();
    assert!(reasons.contains(&warning_id), "{reasons}");
    assert!(reasons.contains("R$ 797.02"), "{reasons}");
    assert!(reasons.contains("art. 32, § 1º"), "{reasons}");
    // The office takes the record up, records the system's proposal, then classifies under
    // another rule.
    app.post(
        &format!("/v1/office/records/{second}/review"),
        &office,
        json!({}),
    )
    .await
    .ok(StatusCode::OK);
    let proposed = app
        .post(
            &format!("/v1/office/records/{second}/propose"),
            &office,
            json!({}),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(proposed["case"]["row"]["status"], "penalty_proposed");
    let classified = app
        .post(
            &format!("/v1/office/records/{second}/classify"),
            &office,
            json!({ "rule_ids": ["r12"] }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(classified["case"]["classified_by_office"], true);
    assert_eq!(classified["case"]["classification"][0]["rule_id"], "R12");
    assert_eq!(
        classified["case"]["proposal"]["penalty"],
        json!({ "kind": "revocation" })
    );
    assert_eq!(classified["case"]["proposal"]["wording_verified"], false);
    app.post(
        &format!("/v1/office/records/{second}/classify"),
        &office,
        json!({ "rule_ids": ["R15"] }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "repealed_rule");
    // An unknown record.
    let v = app
        .get(&format!("/v1/office/records/{}", Uuid::now_v7()), &office)
        .await;
    v.error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn a_suspension_reaches_the_registry_and_the_devices_check_at_once() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let fiscal = a.token.clone();
    let id = a.auto(&app, auto("0001")).await;
    let v0 = app.version().await;
    let before = registry(&app).await;
    assert_eq!(check(&before, "0001").overall, Overall::Regular);
    review_and_propose(
        &app,
        &office,
        &id,
        json!({ "kind": "suspension", "days": 15 }),
    )
    .await;
    let audit0 = app.audit_rows().await;

    let r = app
        .post(
            &format!("/v1/office/records/{id}/decide"),
            &office,
            json!({ "penalty": { "kind": "suspension", "days": 15 } }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["registry"]["version"], v0 + 1);
    assert_eq!(app.version().await, v0 + 1);
    let d = &r["case"]["decision"];
    assert_eq!(d["decided_on"], "2026-11-30");
    assert_eq!(d["until"], "2026-12-14");
    assert_eq!(d["citation"], "Lei 4.019/2004, art. 32, III");
    // The decision and the registry version, each with its audit row, in one transaction.
    assert_eq!(app.audit_rows().await, audit0 + 2);

    // What a device pulls: the changes since its version, applied, then a check of the taxi.
    let changes: RegistryChanges = serde_json::from_value(
        app.get(&format!("/v1/registry/changes?since={v0}"), &fiscal)
            .await
            .ok(StatusCode::OK),
    )
    .unwrap();
    let mut replica = (*before).clone();
    feed::apply(&mut replica, &changes).unwrap();
    let pen = replica
        .penalties
        .iter()
        .find(|p| p.record_id.as_deref() == Some(id.as_str()))
        .unwrap();
    assert_eq!(pen.kind, PenaltyKind::Suspension { days: 15 });
    assert_eq!(pen.starts_on, ymd(2026, 11, 30));
    let verdict = check(&replica, "0001");
    assert_eq!(verdict.overall, Overall::Irregular);
    let r32 = verdict
        .findings
        .iter()
        .find(|f| f.rule_id == "R32")
        .unwrap();
    assert!(
        r32.message.contains("suspenso de 30/11/2026 a 14/12/2026"),
        "{}",
        r32.message
    );

    // Idempotent: reapplying writes nothing; deciding again is refused, nothing stored.
    let again = app
        .post(
            &format!("/v1/office/records/{id}/effects"),
            &office,
            json!({}),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(again["registry"], Value::Null);
    let footprint = app.footprint().await;
    app.post(
        &format!("/v1/office/records/{id}/decide"),
        &office,
        json!({ "penalty": { "kind": "suspension", "days": 15 } }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    assert_eq!(app.footprint().await, footprint);
    let n = registry(&app)
        .await
        .penalties
        .iter()
        .filter(|p| p.record_id.as_deref() == Some(id.as_str()))
        .count();
    assert_eq!(n, 1);
    // Devices receive the decision with the record on their next sync.
    a.sync_all(&app).await;
    let local = RecordDoc::load(&a.store.load_record_bytes(&id).unwrap().concat())
        .unwrap()
        .view()
        .unwrap();
    assert_eq!(local.penalty, Some(PenaltyKind::Suspension { days: 15 }));
    // 60 days or 15: any other suspension is refused.
    let other = a.auto(&app, auto("0003")).await;
    app.post(
        &format!("/v1/office/records/{other}/decide"),
        &office,
        json!({ "penalty": { "kind": "suspension", "days": 30 } }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_penalty");
}

#[tokio::test]
async fn a_fine_is_added_unpaid_at_the_years_amount_and_blocks_renewal() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let id = a.auto(&app, auto("0001")).await;
    review_and_propose(&app, &office, &id, json!({ "kind": "fine" })).await;
    let r = app
        .post(
            &format!("/v1/office/records/{id}/decide"),
            &office,
            json!({ "penalty": { "kind": "fine" } }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["case"]["decision"]["fine_amount"], "797.02");
    let fine_id = r["case"]["registry_effects"]["fine_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(fine_id.starts_with("MUL-PEN-2026-"), "{fine_id}");
    let reg = registry(&app).await;
    let fine = reg.fines.iter().find(|f| f.id == fine_id).unwrap();
    assert_eq!(fine.amount.to_string(), "797.02");
    assert_eq!(fine.paid_on, None);
    assert_eq!(fine.permit_number, "0001");
    // Art. 17 §2 III: no renewal while unpaid (R27); paid, the renewal goes through.
    let renewal = app
        .post("/v1/permits/0001/renewal", &office, json!({ "year": 2027 }))
        .await;
    let e = renewal.error(StatusCode::UNPROCESSABLE_ENTITY, "refused_by_law");
    assert!(e.to_string().contains("R27"), "{e}");
    app.post(&format!("/v1/fines/{fine_id}/payment"), &office, json!({}))
        .await
        .ok(StatusCode::OK);
    app.post("/v1/permits/0001/renewal", &office, json!({ "year": 2027 }))
        .await
        .ok(StatusCode::OK);
    // A paid fine survives a later reversal (the money question is the office's), the penalty
    // does not.
    let number = notice(&app, &office, &id).await;
    app.post(
        &format!("/v1/office/records/{id}/notify"),
        &office,
        json!({ "method": "postal_receipt", "on": "2026-11-30", "notification": number }),
    )
    .await
    .ok(StatusCode::OK);
    app.post(
        &format!("/v1/office/records/{id}/reconsideration"),
        &office,
        json!({ "on": "2026-11-30" }),
    )
    .await
    .ok(StatusCode::OK);
    let r = app
        .post(
            &format!("/v1/office/records/{id}/reconsideration/decision"),
            &office,
            json!({ "outcome": "reversed" }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["case"]["decision"], Value::Null);
    let reg = registry(&app).await;
    assert!(
        reg.fines
            .iter()
            .any(|f| f.id == fine_id && f.paid_on.is_some())
    );
    assert!(
        !reg.penalties
            .iter()
            .any(|p| p.record_id.as_deref() == Some(id.as_str()))
    );
}

#[tokio::test]
async fn revocation_opens_the_vacancy_and_a_reversal_on_appeal_lifts_it() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let id = a.auto(&app, auto("0001")).await;
    let open_before = app
        .get(&format!("/v1/office/records/{id}"), &office)
        .await
        .ok(StatusCode::OK)["permit"]["open_vacancies"]
        .as_i64()
        .unwrap();
    review_and_propose(&app, &office, &id, json!({ "kind": "revocation" })).await;
    let v0 = app.version().await;
    let r = app
        .post(
            &format!("/v1/office/records/{id}/decide"),
            &office,
            json!({ "penalty": { "kind": "revocation" } }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["case"]["permit"]["state"], "revoked");
    assert_eq!(r["case"]["permit"]["open_vacancies"], open_before + 1);
    let reg = registry(&app).await;
    let permit = reg.permits.iter().find(|p| p.number == "0001").unwrap();
    assert_eq!(
        permit.state,
        PermitState::Revoked {
            on: ymd(2026, 11, 30)
        }
    );
    assert_eq!(check(&reg, "0001").overall, Overall::Irregular);

    // Ciência today: the appeal period runs to 10 Dec; an appeal within it is recorded.
    let number = notice(&app, &office, &id).await;
    let n = app
        .post(
            &format!("/v1/office/records/{id}/notify"),
            &office,
            json!({ "method": "personal_signature", "on": "2026-11-30", "notification": number }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(n["case"]["appeal"]["deadline"], "2026-12-10");
    assert_eq!(
        n["case"]["appeal"]["deadline_text"],
        "prazo de recurso até 10/12/2026 (art. 35)"
    );
    assert_eq!(n["case"]["appeal"]["appeal_open"], true);
    app.post(
        &format!("/v1/office/records/{id}/appeal"),
        &office,
        json!({ "on": "2026-11-30" }),
    )
    .await
    .ok(StatusCode::OK);
    let r = app
        .post(
            &format!("/v1/office/records/{id}/appeal/decision"),
            &office,
            json!({ "outcome": "reversed" }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["case"]["permit"]["state"], "active");
    assert_eq!(r["case"]["permit"]["open_vacancies"], open_before);
    assert_eq!(app.version().await, v0 + 2);
    let reg = registry(&app).await;
    assert!(
        !reg.penalties
            .iter()
            .any(|p| p.record_id.as_deref() == Some(id.as_str()))
    );
    assert_eq!(check(&reg, "0001").overall, Overall::Regular);
}

#[tokio::test]
async fn late_and_second_appeals_are_refused_citing_the_law() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let id = a.auto(&app, auto("0001")).await;
    review_and_propose(&app, &office, &id, json!({ "kind": "written_warning" })).await;
    app.post(
        &format!("/v1/office/records/{id}/decide"),
        &office,
        json!({ "penalty": { "kind": "written_warning" } }),
    )
    .await
    .ok(StatusCode::OK);
    // Ciência Monday 30 Nov, the day of the decision: the deadline is Thursday 10 Dec.
    let number = notice(&app, &office, &id).await;
    let n = app
        .post(
            &format!("/v1/office/records/{id}/notify"),
            &office,
            json!({ "method": "personal_signature", "on": "2026-11-30", "notification": number }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(n["case"]["appeal"]["deadline"], "2026-12-10");
    assert_eq!(n["case"]["appeal"]["appeal_open"], true);
    // Two weeks later (a new session: the old one expired).
    app.state.clock().advance(Duration::days(14));
    let office = app.login("escritorio").await;
    let c = app
        .get(&format!("/v1/office/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    assert_eq!(c["appeal"]["appeal_open"], false, "today is 14 Dec");
    let footprint = app.footprint().await;
    let late = app
        .post(
            &format!("/v1/office/records/{id}/appeal"),
            &office,
            json!({ "on": "2026-12-11" }),
        )
        .await;
    let e = late.error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("intempestivo"), "{msg}");
    assert!(msg.contains("art. 35") && msg.contains("R34"), "{msg}");
    assert!(msg.contains("10/12/2026"), "{msg}");
    assert_eq!(app.footprint().await, footprint, "nothing stored");
    app.post(
        &format!("/v1/office/records/{id}/appeal"),
        &office,
        json!({ "on": "2026-12-15" }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_date");
    // On the deadline day: accepted. A second appeal: refused (art. 33).
    app.post(
        &format!("/v1/office/records/{id}/appeal"),
        &office,
        json!({ "on": "2026-12-10" }),
    )
    .await
    .ok(StatusCode::OK);
    app.post(
        &format!("/v1/office/records/{id}/appeal/decision"),
        &office,
        json!({ "outcome": "modified", "penalty": { "kind": "fine" } }),
    )
    .await
    .ok(StatusCode::OK);
    let reg = registry(&app).await;
    let pen = reg
        .penalties
        .iter()
        .find(|p| p.record_id.as_deref() == Some(id.as_str()))
        .unwrap();
    assert_eq!(pen.kind, PenaltyKind::Fine, "modified on appeal: replaced");
    let number = notice(&app, &office, &id).await;
    app.post(
        &format!("/v1/office/records/{id}/notify"),
        &office,
        json!({ "method": "postal_receipt", "on": "2026-12-14", "notification": number }),
    )
    .await
    .ok(StatusCode::OK);
    let second = app
        .post(
            &format!("/v1/office/records/{id}/appeal"),
            &office,
            json!({ "on": "2026-12-14" }),
        )
        .await;
    let e = second.error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    assert!(e["message"].as_str().unwrap().contains("art. 33"), "{e}");
}

#[tokio::test]
async fn a_decision_before_review_is_refused_and_no_step_is_written_for_the_office() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let id = a.auto(&app, auto("0001")).await;
    let footprint = app.footprint().await;
    let v0 = app.version().await;
    // Nobody reviewed it: refused, nothing stored, no registry version.
    let e = decide_warning(&app, &office, &id)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    assert_eq!(
        e["message"],
        "A decisão de penalidade exige antes a análise do registro pela Unidade de Transportes."
    );
    // A proposal is not made before the review either.
    let e = app
        .post(
            &format!("/v1/office/records/{id}/propose"),
            &office,
            json!({}),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("exige antes a análise"),
        "{e}"
    );
    assert_eq!(app.footprint().await, footprint, "nothing stored");
    assert_eq!(app.version().await, v0);
    // Reviewed, but no proposal recorded: refused again, the server proposes nothing.
    app.post(
        &format!("/v1/office/records/{id}/review"),
        &office,
        json!({}),
    )
    .await
    .ok(StatusCode::OK);
    let e = decide_warning(&app, &office, &id)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("proposta de penalidade registrada"),
        "{e}"
    );
    // The system's proposal, recorded by the office, then the decision.
    let system = app
        .get(&format!("/v1/office/records/{id}/proposal"), &office)
        .await
        .ok(StatusCode::OK)["penalty"]
        .clone();
    let proposed = app
        .post(
            &format!("/v1/office/records/{id}/propose"),
            &office,
            json!({}),
        )
        .await
        .ok(StatusCode::OK);
    let r = decide_warning(&app, &office, &id).await.ok(StatusCode::OK);
    assert_eq!(
        event_kinds(&r["case"]),
        ["issued", "reviewed", "penalty_proposed", "penalty_decided"]
    );
    // Each office step is one the office made, recorded as such, and the proposal recorded is
    // the system's.
    let events = r["case"]["record"]["events"].as_array().unwrap();
    for e in &events[1..] {
        assert_eq!(e["by"]["role"], "office", "{e}");
        assert_eq!(e["valid"], true, "{e}");
    }
    assert_eq!(events[2]["event"]["penalty"], system);
    assert_eq!(
        proposed["case"]["record"]["events"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn a_ciencia_before_the_decision_is_refused_and_the_right_of_appeal_kept() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let id = a.auto(&app, auto("0001")).await;
    review_and_propose(&app, &office, &id, json!({ "kind": "fine" })).await;
    app.post(
        &format!("/v1/office/records/{id}/decide"),
        &office,
        json!({ "penalty": { "kind": "fine" } }),
    )
    .await
    .ok(StatusCode::OK);
    let number = notice(&app, &office, &id).await;
    let footprint = app.footprint().await;
    // Decided on 30 Nov: a ciência of 2 Nov would have closed the appeal period on 12 Nov.
    for on in ["2026-11-02", "2026-11-29"] {
        let e = app
            .post(
                &format!("/v1/office/records/{id}/notify"),
                &office,
                json!({ "method": "personal_signature", "on": on, "notification": number }),
            )
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains("é anterior à decisão notificada (30/11/2026)")
                || msg.contains("é anterior à data da ocorrência (30/11/2026)"),
            "{msg}"
        );
    }
    assert_eq!(app.footprint().await, footprint, "nothing stored");
    // The day of the decision: accepted, the appeal open for ten days.
    let n = app
        .post(
            &format!("/v1/office/records/{id}/notify"),
            &office,
            json!({ "method": "personal_signature", "on": "2026-11-30", "notification": number }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(n["case"]["appeal"]["appeal_open"], true);
    assert_eq!(n["case"]["appeal"]["deadline"], "2026-12-10");
    // A reconsideration filed before the ciência (here also before the occurrence) is
    // refused the same way.
    let e = app
        .post(
            &format!("/v1/office/records/{id}/reconsideration"),
            &office,
            json!({ "on": "2026-11-29" }),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("A data do pedido de reconsideração (29/11/2026) é anterior à"),
        "{e}"
    );
}

#[tokio::test]
async fn art_32_is_one_list_for_the_registry_and_the_office_decision() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let thirty = json!({ "kind": "suspension", "days": 30 });
    let footprint = app.footprint().await;
    // Entered directly in the registry: refused with the kernel's reason.
    let registry_refusal = app
        .post(
            "/v1/penalties",
            &office,
            json!({ "permit_number": "0011", "kind": thirty }),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_penalty");
    assert_eq!(app.footprint().await, footprint, "nothing stored");
    // Decided by the office: the same words.
    let id = a.auto(&app, auto("0003")).await;
    let office_refusal = app
        .post(
            &format!("/v1/office/records/{id}/decide"),
            &office,
            json!({ "penalty": thirty }),
        )
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_penalty");
    assert_eq!(registry_refusal["message"], office_refusal["message"]);
    let msg = office_refusal["message"].as_str().unwrap();
    assert!(
        msg.contains("15 dias (art. 32, III)") && msg.contains("60 dias (art. 32, IV)"),
        "{msg}"
    );
    assert_eq!(office_refusal["details"]["rule_id"], "R32");
    // Every penalty art. 32 lists is accepted by the registry.
    for kind in [
        json!({ "kind": "written_warning" }),
        json!({ "kind": "fine" }),
        json!({ "kind": "suspension", "days": 15 }),
        json!({ "kind": "suspension", "days": 60 }),
        json!({ "kind": "revocation" }),
    ] {
        app.post(
            "/v1/penalties",
            &office,
            json!({ "permit_number": "0011", "kind": kind }),
        )
        .await
        .ok(StatusCode::CREATED);
    }
}

#[tokio::test]
async fn the_office_classifies_only_under_rules_an_auto_may_rest_on() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let office = app.login("escritorio").await;
    let id = a.auto(&app, auto("0001")).await;
    for (rule, code, word) in [
        ("R15", "repealed_rule", "revogada"),
        ("R39", "repealed_rule", "revogada"),
        ("R43", "not_an_infraction", "não descreve"),
        ("R21", "disabled_rule", "desativada"),
        ("R99", "unknown_rule", "não consta"),
    ] {
        let e = app
            .post(
                &format!("/v1/office/records/{id}/classify"),
                &office,
                json!({ "rule_ids": [rule] }),
            )
            .await
            .error(StatusCode::UNPROCESSABLE_ENTITY, code);
        assert!(e["message"].as_str().unwrap().contains(word), "{rule}: {e}");
    }
}

#[tokio::test]
async fn only_the_office_acts_and_only_office_and_admin_read() {
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let id = a.auto(&app, auto("0001")).await;
    let footprint = app.footprint().await;
    for user in ["fiscal", "coordenador"] {
        let t = app.login(user).await;
        app.get("/v1/office/inbox", &t)
            .await
            .error(StatusCode::FORBIDDEN, "forbidden");
        app.get("/v1/office/duplicates", &t)
            .await
            .error(StatusCode::FORBIDDEN, "forbidden");
        app.get(&format!("/v1/office/records/{id}"), &t)
            .await
            .error(StatusCode::FORBIDDEN, "forbidden");
        app.post(
            &format!("/v1/office/records/{id}/decide"),
            &t,
            json!({ "penalty": { "kind": "revocation" } }),
        )
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    }
    let admin = app.login("admin").await;
    app.get("/v1/office/inbox", &admin).await.ok(StatusCode::OK);
    app.get(&format!("/v1/office/records/{id}"), &admin)
        .await
        .ok(StatusCode::OK);
    app.post(
        &format!("/v1/office/records/{id}/decide"),
        &admin,
        json!({ "penalty": { "kind": "revocation" } }),
    )
    .await
    .error(StatusCode::FORBIDDEN, "forbidden");
    assert_eq!(app.footprint().await, footprint);
}

#[tokio::test]
async fn the_office_resolves_a_conflict_and_both_values_stay_in_history() {
    let app = app().await;
    let (mut tablet, _) = two_officers(&app).await;
    let admin = app.login("admin").await;
    app.post(
        "/v1/devices",
        &admin,
        json!({ "id": "celular-fiscal-09", "user_id": tablet.agent.user_id, "label": "Celular 09" }),
    )
    .await
    .ok(StatusCode::CREATED);
    let mut phone2 = phone(&app, "fiscal", "fiscal-demo", "celular-fiscal-09").await;
    let office = app.login("escritorio").await;
    // A draft on the tablet reaches the phone; both rewrite the facts offline; the phone issues.
    let id = tablet.write_auto(&app, auto("0001"), false).await;
    phone2.sync_all(&app).await;
    let t = now() - Duration::hours(2);
    tablet.edit(&id, |d, a| d.set_facts(a, t, "Versão do tablet.").unwrap());
    phone2.edit(&id, |d, a| {
        d.set_facts(a, t, "Versão do celular.").unwrap();
        d.issue_unsealed(
            a,
            t + Duration::minutes(1),
            Signature::Missing {
                reason: "condutor ausente".into(),
            },
        )
        .unwrap();
    });
    tablet.sync_all(&app).await;
    phone2.sync_all(&app).await;
    let case = app
        .get(&format!("/v1/office/records/{id}"), &office)
        .await
        .ok(StatusCode::OK);
    let conflicts = case["record"]["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1, "{conflicts:#?}");
    assert_eq!(conflicts[0]["field"], "facts");
    assert_eq!(case["row"]["conflicts"], 1);
    let heads_before: Vec<automerge::ChangeHash> = app
        .state
        .store()
        .record(id.clone())
        .await
        .unwrap()
        .unwrap()
        .heads
        .iter()
        .map(|h| h.parse().unwrap())
        .collect();

    app.post(
        &format!("/v1/office/records/{id}/conflicts/resolve"),
        &office,
        json!({ "field": "facts", "value": "Versão inventada." }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_event");
    let r = app
        .post(
            &format!("/v1/office/records/{id}/conflicts/resolve"),
            &office,
            json!({ "field": "facts", "value": "Versão do celular." }),
        )
        .await
        .ok(StatusCode::OK);
    assert_eq!(r["case"]["record"]["facts"], "Versão do celular.");
    assert_eq!(r["case"]["record"]["conflicts"], json!([]));
    assert_eq!(r["case"]["row"]["conflicts"], 0);
    assert!(event_kinds(&r["case"]).contains(&"conflict_resolved".to_owned()));
    // Both values are still in the document's history.
    let stored = app.state.store().record(id.clone()).await.unwrap().unwrap();
    let doc = automerge::AutoCommit::load(&stored.doc).unwrap();
    let values =
        automerge::ReadDoc::get_all_at(&doc, automerge::ROOT, "facts", &heads_before).unwrap();
    assert_eq!(values.len(), 2);
    app.post(
        &format!("/v1/office/records/{id}/conflicts/resolve"),
        &office,
        json!({ "field": "facts", "value": "Versão do celular." }),
    )
    .await
    .error(StatusCode::UNPROCESSABLE_ENTITY, "event_refused");
}

#[tokio::test]
async fn rules_of_records_written_before_the_migration_are_filled_on_open() {
    use taxi_fiscal_server::store::Store as _;
    let app = app().await;
    let (mut a, _) = two_officers(&app).await;
    let id = a
        .auto(
            &app,
            Auto {
                rule: "R30",
                ..auto("0001")
            },
        )
        .await;
    let path = app.dir.path().join(taxi_fiscal_server::config::DB_FILE);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        // As migration 006 leaves a row written before it.
        conn.execute("UPDATE records SET rules = NULL", []).unwrap();
    }
    let reopened = taxi_fiscal_server::store::sqlite::SqliteStore::open(&path).unwrap();
    let page = reopened
        .office_inbox(taxi_fiscal_server::store::records::RecordFilter {
            rule: Some("R30".into()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.items[0].row.id, id);
    assert_eq!(page.items[0].rules, ["R30"]);
}
