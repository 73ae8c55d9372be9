//! The registry feed as a device sees it: the snapshot (zstd or plain) and changes since N,
//! decoded into sync-core's types and applied with `sync_core::feed::apply`.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::json;
use sync_core::feed::{self, RegistryChanges, RegistrySnapshot};

use crate::common::{app, app_with};

async fn snapshot(app: &crate::common::App, token: &str, zstd: bool) -> crate::common::Resp {
    let mut b = Request::builder()
        .uri("/v1/registry/snapshot")
        .header("authorization", format!("Bearer {token}"));
    if zstd {
        b = b.header("accept-encoding", "gzip, zstd;q=0.9");
    }
    app.send(b.body(Body::empty()).unwrap()).await
}

#[tokio::test]
async fn snapshot_decodes_into_the_registry_with_or_without_zstd() {
    let app = app().await;
    let t = app.login("fiscal").await;
    let z = snapshot(&app, &t, true).await;
    assert_eq!(z.status, StatusCode::OK);
    assert_eq!(z.headers["content-encoding"], "zstd");
    assert_eq!(z.headers["x-registry-version"], "1");
    assert_eq!(z.headers["etag"], "\"registry-1\"");
    let json = zstd::decode_all(&z.body[..]).unwrap();
    let snap = feed::snapshot_from_json(std::str::from_utf8(&json).unwrap()).unwrap();
    let current = app.state.store().registry().await.unwrap();
    assert_eq!(&snap, current.as_ref());
    assert_eq!(snap.permits.len(), 121);
    assert!(
        z.body.len() * 4 < json.len(),
        "compressed {} of {}",
        z.body.len(),
        json.len()
    );

    let plain = snapshot(&app, &t, false).await;
    assert!(plain.headers.get("content-encoding").is_none());
    let snap2: RegistrySnapshot = serde_json::from_slice(&plain.body).unwrap();
    assert_eq!(snap2, snap);

    // A device that has this version gets 304.
    let req = Request::builder()
        .uri("/v1/registry/snapshot")
        .header("authorization", format!("Bearer {t}"))
        .header("if-none-match", "\"registry-1\"")
        .body(Body::empty())
        .unwrap();
    let r = app.send(req).await;
    assert_eq!(r.status, StatusCode::NOT_MODIFIED);
    assert!(r.body.is_empty());
    // zstd refused with q=0 gives plain JSON.
    let req = Request::builder()
        .uri("/v1/registry/snapshot")
        .header("authorization", format!("Bearer {t}"))
        .header("accept-encoding", "zstd;q=0")
        .body(Body::empty())
        .unwrap();
    assert!(
        app.send(req)
            .await
            .headers
            .get("content-encoding")
            .is_none()
    );
    app.request(axum::http::Method::GET, "/v1/registry/snapshot", None, None)
        .await
        .error(StatusCode::UNAUTHORIZED, "token_missing");
}

#[tokio::test]
async fn changes_since_n_bring_a_device_to_the_current_version() {
    let app = app().await;
    let office = app.login("escritorio").await;
    let officer = app.login("fiscal").await;
    let v1: RegistrySnapshot =
        serde_json::from_slice(&snapshot(&app, &officer, false).await.body).unwrap();
    assert_eq!(v1.version, 1);

    // Three versions: a fine, its payment (same entity twice) and a coordinator change.
    let u = app
        .post(
            "/v1/fines",
            &office,
            json!({"permit_number": "0011", "amount": "240.00"}),
        )
        .await
        .ok(StatusCode::CREATED);
    let fine_id = u["changes"][0]["fine"]["id"].as_str().unwrap().to_owned();
    app.post(&format!("/v1/fines/{fine_id}/payment"), &office, json!({}))
        .await
        .ok(StatusCode::OK);
    app.put(
        "/v1/stands/S03/coordinator",
        &office,
        json!({"person_id": "P0041"}),
    )
    .await
    .ok(StatusCode::OK);
    assert_eq!(app.version().await, 4);

    let c: RegistryChanges = serde_json::from_value(
        app.get("/v1/registry/changes?since=1", &officer)
            .await
            .ok(StatusCode::OK),
    )
    .unwrap();
    assert_eq!((c.from_version, c.to_version), (1, 4));
    // The fine appears once, paid: only the last change of each entity travels.
    assert_eq!(c.changes.len(), 2, "{c:#?}");
    let mut device = v1.clone();
    feed::apply(&mut device, &c).unwrap();
    device.validate().unwrap();
    let current = app.state.store().registry().await.unwrap();
    assert_eq!(feed::sorted(device), feed::sorted(current.as_ref().clone()));

    // From a middle version too.
    let c: RegistryChanges = serde_json::from_value(
        app.get("/v1/registry/changes?since=3", &officer)
            .await
            .json(),
    )
    .unwrap();
    assert_eq!((c.from_version, c.to_version, c.changes.len()), (3, 4, 1));
    // Up to date: an empty batch that still tells the version.
    let c: RegistryChanges = serde_json::from_value(
        app.get("/v1/registry/changes?since=4", &officer)
            .await
            .json(),
    )
    .unwrap();
    assert_eq!((c.from_version, c.to_version), (4, 4));
    assert!(c.changes.is_empty());
    // A version this server never published: take a snapshot.
    let e = app
        .get("/v1/registry/changes?since=99", &officer)
        .await
        .error(StatusCode::GONE, "snapshot_required");
    assert_eq!(e["details"]["reason"], "unknown_version");
    assert_eq!(e["details"]["current_version"], 4);
    assert_eq!(e["details"]["snapshot"], "/v1/registry/snapshot");
    // Version 0 (an empty device): the seeding batch starts at 0, so it is served as upserts.
    let c: RegistryChanges = serde_json::from_value(
        app.get("/v1/registry/changes?since=0", &officer)
            .await
            .json(),
    )
    .unwrap();
    assert_eq!(c.from_version, 0);
    for bad in [
        "/v1/registry/changes",
        "/v1/registry/changes?since=-1",
        "/v1/registry/changes?since=x",
    ] {
        app.get(bad, &officer)
            .await
            .error(StatusCode::BAD_REQUEST, "invalid_query");
    }
}

#[tokio::test]
async fn a_device_too_far_behind_is_sent_to_the_snapshot() {
    let app = app_with(|c| c.feed_max_span = 2).await;
    let office = app.login("escritorio").await;
    for n in ["0011", "0012", "0013"] {
        app.post(
            "/v1/fines",
            &office,
            json!({"permit_number": n, "amount": "10.00"}),
        )
        .await
        .ok(StatusCode::CREATED);
    }
    let e = app
        .get("/v1/registry/changes?since=1", &office)
        .await
        .error(StatusCode::GONE, "snapshot_required");
    assert_eq!(e["details"]["reason"], "too_old");
    app.get("/v1/registry/changes?since=2", &office)
        .await
        .ok(StatusCode::OK);
}
