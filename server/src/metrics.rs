//! `GET /metrics` in the Prometheus text format, for the city's monitoring.
//!
//! Flow: [`track`], a layer on every route, counts each request by method, route (axum's
//! matched path, so `/v1/records/{id}` is one series whatever the id) and status class, and
//! adds its duration to a histogram. The sync handler adds the records each exchange accepted
//! and refused ([`Metrics::note_sync`]). At a scrape, [`render`] writes those, plus what it reads
//! then: the registry version and the office's queue (records by status, from the counters the
//! store keeps).
//!
//! Who may read it: with `TAXI_FISCAL_METRICS_TOKEN` set, a request bearing that token; without
//! it, only a client on this machine (loopback, after `X-Forwarded-For` from a trusted proxy is
//! resolved, so the public side of a local nginx is refused). The numbers name no person.
//!
//! Bounded: the series are keyed by routes the router knows (an unknown path is `unmatched`),
//! methods outside the usual ones are `other`, statuses are classes; past
//! [`MAX_ROUTE_SERIES`] new keys fold into one `other` series.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::proxy::ClientIp;
use crate::server::AppState;

/// Upper bounds (seconds) of the latency histogram's buckets: from a point read (a few ms) to
/// an upload over a weak link (minutes fall in `+Inf`).
pub const LATENCY_BUCKETS_SECONDS: [f64; 12] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Series of the request counters at most (method × route × status class). The router has a
/// few hundred routes; the bound only matters if that grows, and keeps the map finite anyway.
pub const MAX_ROUTE_SERIES: usize = 2_048;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    method: &'static str,
    route: String,
    status: &'static str,
}

#[derive(Debug, Clone, Default)]
struct Stats {
    count: u64,
    sum_seconds: f64,
    /// Per bucket of [`LATENCY_BUCKETS_SECONDS`], not cumulative (made so when rendered).
    buckets: [u64; LATENCY_BUCKETS_SECONDS.len()],
}

/// What the server counts between scrapes (everything since it started).
#[derive(Debug)]
pub struct Metrics {
    http: Mutex<HashMap<Key, Stats>>,
    sync_exchanges: AtomicU64,
    sync_accepted: AtomicU64,
    sync_rejected: AtomicU64,
    started: Instant,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            http: Mutex::new(HashMap::new()),
            sync_exchanges: AtomicU64::new(0),
            sync_accepted: AtomicU64::new(0),
            sync_rejected: AtomicU64::new(0),
            started: Instant::now(),
        }
    }
}

fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

fn status_class(s: StatusCode) -> &'static str {
    match s.as_u16() {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

impl Metrics {
    fn observe(&self, method: &Method, route: Option<&str>, status: StatusCode, seconds: f64) {
        let mut map = self.http.lock().unwrap_or_else(PoisonError::into_inner);
        let mut key = Key {
            method: method_label(method),
            route: route.unwrap_or("unmatched").to_owned(),
            status: status_class(status),
        };
        if !map.contains_key(&key) && map.len() >= MAX_ROUTE_SERIES {
            key = Key {
                method: "other",
                route: String::from("other"),
                status: "other",
            };
        }
        let stats = map.entry(key).or_default();
        stats.count += 1;
        stats.sum_seconds += seconds;
        let bucket = LATENCY_BUCKETS_SECONDS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(LATENCY_BUCKETS_SECONDS.len());
        if let Some(b) = stats.buckets.get_mut(bucket) {
            *b += 1;
        }
    }

    /// One record exchange: how many records it acknowledged and refused.
    pub fn note_sync(&self, accepted: usize, rejected: usize) {
        self.sync_exchanges.fetch_add(1, Ordering::Relaxed);
        self.sync_accepted
            .fetch_add(accepted as u64, Ordering::Relaxed);
        self.sync_rejected
            .fetch_add(rejected as u64, Ordering::Relaxed);
    }
}

/// The layer that counts every request (see the module doc).
pub async fn track(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned());
    let res = next.run(req).await;
    state.metrics().observe(
        &method,
        route.as_deref(),
        res.status(),
        started.elapsed().as_secs_f64(),
    );
    res
}

/// Whether this request may read the metrics (see the module doc).
fn allowed(state: &AppState, req: &Request) -> bool {
    if let Some(token) = &state.config().metrics_token {
        let presented = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or_default();
        return crate::web::session::same_token(presented.trim(), token);
    }
    ClientIp::of(req.extensions()).is_some_and(|ip| ip.is_loopback())
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>, req: Request) -> Response {
    if !allowed(&state, &req) {
        return crate::error::AppError::new(
            StatusCode::FORBIDDEN,
            "metrics_forbidden",
            "As métricas só são lidas com o token de métricas ou deste próprio servidor.",
        )
        .into_response();
    }
    let registry_version = match state.store().registry().await {
        Ok(r) => Some(r.version),
        Err(e) => {
            tracing::error!(error = %e, "métricas: cadastro ilegível");
            None
        }
    };
    let filter = taxi_fiscal_store::records::RecordFilter {
        limit: 1,
        ..Default::default()
    };
    let queue = match state.store().office_inbox(filter).await {
        Ok(page) => page.counts,
        Err(e) => {
            tracing::error!(error = %e, "métricas: caixa de entrada ilegível");
            Vec::new()
        }
    };
    let body = render(state.metrics(), registry_version, &queue);
    let mut res = (StatusCode::OK, body).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    res
}

/// A label value as the text format wants it (backslash, quote and newline escaped).
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The whole exposition.
pub fn render(m: &Metrics, registry_version: Option<u64>, queue: &[(String, u64)]) -> String {
    let mut out = String::new();
    let mut series: Vec<(Key, Stats)> = m
        .http
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    series.sort_by(|a, b| {
        (&a.0.route, a.0.method, a.0.status).cmp(&(&b.0.route, b.0.method, b.0.status))
    });
    let _ = writeln!(
        out,
        "# HELP taxi_fiscal_http_requests_total Requests answered, by method, route and status class.\n\
         # TYPE taxi_fiscal_http_requests_total counter"
    );
    for (k, s) in &series {
        let _ = writeln!(
            out,
            "taxi_fiscal_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}",
            k.method,
            label(&k.route),
            k.status,
            s.count
        );
    }
    let _ = writeln!(
        out,
        "# HELP taxi_fiscal_http_request_duration_seconds Time to answer, by method and route.\n\
         # TYPE taxi_fiscal_http_request_duration_seconds histogram"
    );
    // The histogram is per method and route: the status classes are summed.
    let mut by_route: std::collections::BTreeMap<(&str, &str), Stats> = Default::default();
    for (k, s) in &series {
        let acc = by_route.entry((k.method, &k.route)).or_default();
        acc.count += s.count;
        acc.sum_seconds += s.sum_seconds;
        for (a, b) in acc.buckets.iter_mut().zip(s.buckets.iter()) {
            *a += b;
        }
    }
    for ((method, route), s) in &by_route {
        let labels = format!("method=\"{method}\",route=\"{}\"", label(route));
        let mut cumulative = 0u64;
        for (bound, n) in LATENCY_BUCKETS_SECONDS.iter().zip(s.buckets.iter()) {
            cumulative += n;
            let _ = writeln!(
                out,
                "taxi_fiscal_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
            );
        }
        let _ = writeln!(
            out,
            "taxi_fiscal_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}\n\
             taxi_fiscal_http_request_duration_seconds_sum{{{labels}}} {}\n\
             taxi_fiscal_http_request_duration_seconds_count{{{labels}}} {}",
            s.count, s.sum_seconds, s.count
        );
    }
    let _ = writeln!(
        out,
        "# HELP taxi_fiscal_sync_exchanges_total Record exchanges (POST /v1/sync) answered.\n\
         # TYPE taxi_fiscal_sync_exchanges_total counter\n\
         taxi_fiscal_sync_exchanges_total {}\n\
         # HELP taxi_fiscal_sync_records_total Records of the exchanges, accepted or refused.\n\
         # TYPE taxi_fiscal_sync_records_total counter\n\
         taxi_fiscal_sync_records_total{{outcome=\"accepted\"}} {}\n\
         taxi_fiscal_sync_records_total{{outcome=\"rejected\"}} {}",
        m.sync_exchanges.load(Ordering::Relaxed),
        m.sync_accepted.load(Ordering::Relaxed),
        m.sync_rejected.load(Ordering::Relaxed),
    );
    if let Some(v) = registry_version {
        let _ = writeln!(
            out,
            "# HELP taxi_fiscal_registry_version Version of the registry the server holds.\n\
             # TYPE taxi_fiscal_registry_version gauge\n\
             taxi_fiscal_registry_version {v}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP taxi_fiscal_office_records Records in the office's inbox, by status.\n\
         # TYPE taxi_fiscal_office_records gauge"
    );
    for (status, n) in queue {
        let _ = writeln!(
            out,
            "taxi_fiscal_office_records{{status=\"{}\"}} {n}",
            label(status)
        );
    }
    let _ = writeln!(
        out,
        "# HELP taxi_fiscal_uptime_seconds Seconds since the server started.\n\
         # TYPE taxi_fiscal_uptime_seconds gauge\n\
         taxi_fiscal_uptime_seconds {}",
        m.started.elapsed().as_secs()
    );
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_series_bounded() {
        let m = Metrics::default();
        m.observe(&Method::GET, Some("/health"), StatusCode::OK, 0.004);
        m.observe(&Method::GET, Some("/health"), StatusCode::OK, 0.2);
        m.observe(
            &Method::GET,
            Some("/health"),
            StatusCode::SERVICE_UNAVAILABLE,
            100.0,
        );
        let text = render(&m, Some(7), &[(String::from("issued"), 3)]);
        assert!(text.contains(
            "taxi_fiscal_http_requests_total{method=\"GET\",route=\"/health\",status=\"2xx\"} 2"
        ));
        assert!(text.contains(
            "taxi_fiscal_http_requests_total{method=\"GET\",route=\"/health\",status=\"5xx\"} 1"
        ));
        let b = |le: &str| {
            format!(
                "taxi_fiscal_http_request_duration_seconds_bucket{{method=\"GET\",route=\"/health\",le=\"{le}\"}} "
            )
        };
        let value = |prefix: String| -> u64 {
            let line = text.lines().find(|l| l.starts_with(&prefix)).unwrap();
            line[prefix.len()..].parse().unwrap()
        };
        assert_eq!(value(b("0.005")), 1);
        assert_eq!(value(b("0.25")), 2);
        assert_eq!(value(b("30")), 2);
        assert_eq!(value(b("+Inf")), 3);
        assert!(text.contains("taxi_fiscal_registry_version 7"));
        assert!(text.contains("taxi_fiscal_office_records{status=\"issued\"} 3"));

        // At the bound, a new key folds into `other`; known keys still count.
        for i in 0..MAX_ROUTE_SERIES {
            m.observe(&Method::GET, Some(&format!("/r{i}")), StatusCode::OK, 0.001);
        }
        let len = m.http.lock().unwrap().len();
        assert_eq!(
            len,
            MAX_ROUTE_SERIES + 1,
            "the bound and the one `other` series"
        );
        m.observe(&Method::GET, Some("/health"), StatusCode::OK, 0.001);
        assert_eq!(m.http.lock().unwrap().len(), MAX_ROUTE_SERIES + 1);
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
