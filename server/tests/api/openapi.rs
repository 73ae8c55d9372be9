//! The OpenAPI document: a checked-in snapshot, every `$ref` resolving, every route documented
//! and every documented route routed. `UPDATE_SNAPSHOTS=1` rewrites the snapshot.

use std::collections::BTreeSet;

use axum::http::{Method, StatusCode};
use serde_json::Value;
use taxi_fiscal_server::api::openapi;

use crate::common::app;

fn snapshot_path() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/openapi.json")
}

fn update() -> bool {
    std::env::var_os("UPDATE_SNAPSHOTS").is_some() || std::env::var_os("UPDATE_SCHEMAS").is_some()
}

#[test]
fn document_matches_the_checked_in_snapshot() {
    let text = serde_json::to_string_pretty(openapi::document()).unwrap() + "\n";
    let path = snapshot_path();
    if update() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == text,
        "server/tests/snapshots/openapi.json is out of date: rerun with UPDATE_SNAPSHOTS=1 and \
         review the diff"
    );
}

fn refs(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.insert(r.clone());
            }
            m.values().for_each(|x| refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[test]
fn every_ref_resolves_and_every_private_operation_needs_a_token() {
    let doc = openapi::document();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut all = BTreeSet::new();
    refs(doc, &mut all);
    assert!(!all.is_empty());
    for r in &all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{r}"));
        let schema = &doc["components"]["schemas"][name];
        assert!(schema.is_object(), "unresolved {r}");
        assert_ne!(
            schema.get("$ref"),
            Some(&Value::String(r.clone())),
            "self-reference {r}"
        );
    }
    let public = [
        "/health",
        "/openapi.json",
        "/v1/auth/login",
        "/v1/auth/refresh",
        "/v1/server-key",
        "/v1/devices/enrol",
    ];
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let secured = op.get("security").is_some();
            assert_eq!(secured, !public.contains(&path.as_str()), "{method} {path}");
            assert!(op["responses"].get("default").is_some(), "{method} {path}");
            assert!(
                op.get("summary").is_some(),
                "{method} {path} has no summary"
            );
        }
    }
}

#[tokio::test]
async fn every_documented_route_is_routed_and_served_as_documented() {
    let app = app().await;
    let served = app
        .request(Method::GET, "/openapi.json", None, None)
        .await
        .ok(StatusCode::OK);
    assert_eq!(&served, openapi::document());
    let mut count = 0;
    for (path, item) in served["paths"].as_object().unwrap() {
        let concrete = path
            .replace("{sha256}", &"a".repeat(64))
            .replace(['{', '}'], "");
        for method in item.as_object().unwrap().keys() {
            count += 1;
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let r = app.request(m, &concrete, None, None).await;
            // Routed: never the fallback's codes. Private routes refuse the missing token.
            let code = r.json()["error"]["code"].clone();
            assert_ne!(code, "route_not_found", "{method} {path}");
            assert_ne!(code, "method_not_allowed", "{method} {path}");
            if item[method].get("security").is_some() {
                assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{method} {path}");
            }
        }
    }
    assert_eq!(count, 108);
}
