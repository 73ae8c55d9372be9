//! `GET /metrics`: the Prometheus text, read with the metrics token only (the in-process router
//! has no peer address, so the loopback rule is tested end to end in the e2e suite).

use axum::body::Body;
use axum::http::{Request, StatusCode};

use crate::common::{App, app_with};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

async fn scrape(app: &App, token: Option<&str>) -> crate::common::Resp {
    let mut b = Request::builder().uri("/metrics");
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    app.send(b.body(Body::empty()).unwrap()).await
}

fn value(text: &str, series: &str) -> f64 {
    let line = text
        .lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .unwrap_or_else(|| panic!("no series {series} in\n{text}"));
    line[series.len()..].trim().parse().unwrap()
}

#[tokio::test]
async fn requests_by_route_registry_version_and_queue_are_read_with_the_token_only() {
    let app = app_with(|c| c.metrics_token = Some(TOKEN.to_owned())).await;
    let office = app.login("escritorio").await;
    for _ in 0..3 {
        app.get("/v1/permits/0001", &office)
            .await
            .ok(StatusCode::OK);
    }
    app.get("/v1/permits/9999", &office).await;

    scrape(&app, None)
        .await
        .error(StatusCode::FORBIDDEN, "metrics_forbidden");
    scrape(&app, Some("0123456789abcdef0123456789abcdeX"))
        .await
        .error(StatusCode::FORBIDDEN, "metrics_forbidden");
    let r = scrape(&app, Some(TOKEN)).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = String::from_utf8(r.body.to_vec()).unwrap();
    // One series per route whatever the number asked for; the refused one apart.
    let ok = "taxi_fiscal_http_requests_total{method=\"GET\",route=\"/v1/permits/{number}\",status=\"2xx\"}";
    assert_eq!(value(&text, ok), 3.0, "{text}");
    let missing = "taxi_fiscal_http_requests_total{method=\"GET\",route=\"/v1/permits/{number}\",status=\"4xx\"}";
    assert_eq!(value(&text, missing), 1.0);
    let count = "taxi_fiscal_http_request_duration_seconds_count{method=\"GET\",route=\"/v1/permits/{number}\"}";
    assert_eq!(value(&text, count), 4.0);
    let inf = "taxi_fiscal_http_request_duration_seconds_bucket{method=\"GET\",route=\"/v1/permits/{number}\",le=\"+Inf\"}";
    assert_eq!(value(&text, inf), 4.0);
    assert_eq!(
        value(&text, "taxi_fiscal_registry_version"),
        app.version().await as f64
    );
    assert_eq!(
        value(
            &text,
            "taxi_fiscal_sync_records_total{outcome=\"accepted\"}"
        ),
        0.0
    );
    assert!(text.contains("# TYPE taxi_fiscal_office_records gauge"));
    // No person is named anywhere in it.
    assert!(!text.contains("escritorio"), "{text}");
}
