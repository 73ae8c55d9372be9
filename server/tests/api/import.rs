//! CSV import over HTTP: all or nothing, every bad row reported with its line.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};

use crate::common::{App, Resp, app};

async fn import(app: &App, token: &str, ct: &str, body: Vec<u8>) -> Resp {
    let req = Request::builder()
        .method(Method::POST)
        .uri("/v1/registry/import")
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", ct)
        .body(Body::from(body))
        .unwrap();
    app.send(req).await
}

async fn export(app: &App, token: &str) -> String {
    let r = app.get("/v1/registry/export", token).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    assert!(
        r.headers["content-disposition"]
            .to_str()
            .unwrap()
            .contains("cadastro-v1.csv")
    );
    String::from_utf8(r.body.to_vec()).unwrap()
}

#[tokio::test]
async fn exported_csv_imports_back_unchanged() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let csv = export(&app, &t).await;
    assert_eq!(csv.lines().count(), 122);
    let before = app.footprint().await;
    let r = import(&app, &t, "text/csv", csv.clone().into_bytes())
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        (r["changed"].as_bool(), r["version"].as_u64()),
        (Some(false), Some(1))
    );
    assert_eq!(r["permits"], 121);
    assert_eq!(app.footprint().await, before);

    // One edited cell is one change, one version, one audit row.
    let edited = csv.replacen("Branco", "Azul", 1);
    let r = import(&app, &t, "text/csv; charset=utf-8", edited.into_bytes())
        .await
        .ok(StatusCode::OK);
    assert_eq!(
        (
            r["changed"].as_bool(),
            r["version"].as_u64(),
            r["changes"].as_u64()
        ),
        (Some(true), Some(2), Some(1))
    );
    assert_eq!(app.footprint().await, (2, before.1 + 1));
}

#[tokio::test]
async fn bad_rows_are_all_reported_and_nothing_is_stored() {
    let app = app().await;
    let t = app.login("escritorio").await;
    let csv = export(&app, &t).await;
    // Edit cells by column name with a real CSV reader (addresses contain commas).
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    // Line 4 (permit 0003): an impossible birth date. Line 9 (0008): a bad plate.
    // Line 12 (0011): an unknown stand schedule. Line 123: permit 0001 again.
    rows[2][col("holder_birth_date")] = "1980-02-31".into();
    rows[7][col("vehicle_plate")] = "XX-99".into();
    rows[10][col("stand_schedule")] = "07-22".into();
    rows.push(rows[0].clone());
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&header).unwrap();
    for r in &rows {
        w.write_record(r).unwrap();
    }
    let body = w.into_inner().unwrap();
    let before = app.footprint().await;
    let e = import(&app, &t, "text/csv", body)
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "csv_invalid");
    let errors = e["details"]["errors"].as_array().unwrap();
    let at = |line: u64, column: &str| {
        errors
            .iter()
            .any(|r| r["line"] == line && r["column"] == column)
    };
    assert!(at(4, "holder_birth_date"), "{errors:#?}");
    assert!(at(9, "vehicle_plate"), "{errors:#?}");
    assert!(at(12, "stand_schedule"), "{errors:#?}");
    assert!(at(123, "permit_number"), "{errors:#?}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("nada foi importado")
    );
    assert_eq!(app.footprint().await, before);
    assert_eq!(
        app.get("/v1/permits", &t)
            .await
            .json()
            .as_array()
            .unwrap()
            .len(),
        121
    );

    // Not CSV at all, or not UTF-8.
    let e = import(&app, &t, "text/csv", b"a,b\n1,2\n".to_vec())
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "csv_invalid");
    assert_eq!(e["details"]["errors"][0]["line"], 1);
    import(&app, &t, "text/csv", vec![0xff, 0xfe, 0x00])
        .await
        .error(StatusCode::UNPROCESSABLE_ENTITY, "csv_invalid");
    import(&app, &t, "application/json", b"{}".to_vec())
        .await
        .error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let officer = app.login("fiscal").await;
    import(&app, &officer, "text/csv", csv.into_bytes())
        .await
        .error(StatusCode::FORBIDDEN, "forbidden");
    assert_eq!(app.footprint().await, before);
}
