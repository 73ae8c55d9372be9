//! The HTTP API: one module per area, assembled into one router.
//!
//! | area | module | routes |
//! |---|---|---|
//! | meta | [`health`], [`openapi`] | `/health`, `/openapi.json` |
//! | auth | [`auth`] | `/v1/auth/login`, `/v1/auth/refresh`, `/v1/me` |
//! | accounts | [`accounts`] | `/v1/users`, `/v1/devices`, `/v1/devices/{id}/revoke`, `/v1/devices/{id}/number-blocks` |
//! | registry | [`registry`] | `/v1/registry/{status,snapshot,changes,import,export}`, `/v1/people`, `/v1/vehicles`, `/v1/stands`, `/v1/permits`, `/v1/penalties`, `/v1/fines`, `/v1/transfers`, `/v1/swaps` |
//! | photos | [`photos`] | `/v1/photos/{sha256}` |
//! | sync | [`sync`] | `/v1/sync` |
//! | records | [`records`] | `/v1/records`, `/v1/records/{id}`, `/v1/records/{id}/{conflicts,audit,quarantine,events}` |
//! | office | [`office`] | `/v1/office/inbox`, `/v1/office/duplicates…`, `/v1/office/records/{id}/…` |
//! | editais | [`selection`] | `/v1/editais`, `/v1/editais/{id}/{candidates,list,draw,result,appeals,grants,lottery.txt}` |
//!
//! Each area returns a utoipa-axum `OpenApiRouter`; [`api_router`] merges them (a new area —
//! the record sync's `/v1/sync` — is one more `.merge`), and [`router`] adds the fallbacks and
//! the layers every request passes, outermost first: sensitive headers hidden from logs,
//! request id (`x-request-id`, generated if absent, echoed back), trace span with method, path
//! and request id, JSON-ification of any non-JSON error, panic → 500, timeout → 408, and the
//! global body limit (photos have their own).

pub mod accounts;
pub mod auth;
pub mod extract;
pub mod health;
pub mod law;
pub mod observed;
pub mod office;
pub mod openapi;
pub mod photos;
pub mod records;
pub mod registry;
pub mod selection;
pub mod sync;

use axum::Router;
use axum::body::Body;
use axum::extract::DefaultBodyLimit;
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, COOKIE};
use axum::http::{HeaderValue, Request, StatusCode};
use axum::middleware::map_response;
use axum::response::{IntoResponse, Response};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use utoipa_axum::router::OpenApiRouter;

use crate::error::json_error_for_status;
use crate::server::AppState;

/// Photo limit used when the document is built without a configuration.
const DEFAULT_PHOTO_LIMIT: usize = 10 * 1024 * 1024;

/// Every area's routes with their OpenAPI paths.
pub(crate) fn api_router_with(photo_limit: usize) -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::base())
        .merge(health::routes())
        .merge(openapi::routes())
        .merge(auth::routes())
        .merge(accounts::routes())
        .merge(registry::routes())
        .merge(law::routes())
        .merge(photos::routes(photo_limit))
        .merge(sync::routes())
        .merge(records::routes())
        .merge(observed::routes())
        .merge(office::routes())
        .merge(selection::routes())
}

/// [`api_router_with`] the default photo limit (for the document).
pub(crate) fn api_router() -> OpenApiRouter<AppState> {
    api_router_with(DEFAULT_PHOTO_LIMIT)
}

async fn route_not_found() -> Response {
    json_error_for_status(StatusCode::NOT_FOUND).into_response()
}

async fn method_not_allowed() -> Response {
    json_error_for_status(StatusCode::METHOD_NOT_ALLOWED).into_response()
}

/// Rewrites an error response that is not JSON (a layer's 413 or 408, a bare status) into the
/// API's error shape, keeping its status and headers.
async fn ensure_json_errors<B>(res: Response<B>) -> Response
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res.map(Body::new);
    }
    // The office pages (`crate::web`) answer their errors as HTML pages: kept as they are.
    let is_json_or_page = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/html"));
    if is_json_or_page {
        return res.map(Body::new);
    }
    let (mut parts, _) = res.into_parts();
    let body = serde_json::to_vec(&json_error_for_status(status).body()).unwrap_or_default();
    parts.headers.remove(CONTENT_LENGTH);
    parts
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(body))
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("pânico num handler");
    json_error_for_status(StatusCode::INTERNAL_SERVER_ERROR).into_response()
}

/// The whole application for `state`: routes, fallbacks and layers.
pub fn router(state: AppState) -> Router {
    let config = state.config().clone();
    let (routes, _) = api_router_with(config.photo_limit).split_for_parts();
    // The office pages: HTML at `/`, `/login`, `/escritorio/…`; not in the OpenAPI.
    let routes = routes
        .merge(crate::web::routes())
        // Not in the OpenAPI document: it is for the city's monitoring, in Prometheus' format.
        .route("/metrics", axum::routing::get(crate::metrics::metrics));
    let trace = TraceLayer::new_for_http()
        .on_response(DefaultOnResponse::new().level(tracing::Level::INFO))
        .make_span_with(|req: &Request<Body>| {
            let id = req
                .headers()
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("-");
            // The client as the budgets count it (behind a trusted proxy, the one it names).
            let client = crate::auth::proxy::ClientIp::of(req.extensions())
                .map_or_else(|| String::from("-"), |ip| ip.to_string());
            // The path only: query strings are not logged, nor the one-time code of a reset
            // link (`web::users::logged_path`).
            tracing::info_span!(
                "http",
                method = %req.method(),
                path = %crate::web::users::logged_path(req.uri().path()),
                request_id = %id,
                client = %client,
            )
        });
    routes
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(config.body_limit))
        .layer(
            ServiceBuilder::new()
                // Every request counted for `GET /metrics`, by its route.
                .layer(axum::middleware::from_fn_with_state(
                    state.clone(),
                    crate::metrics::track,
                ))
                // The client address, for the access log, the budgets and `/metrics`.
                .layer(axum::middleware::from_fn_with_state(
                    std::sync::Arc::new(config.trusted_proxies.clone()),
                    crate::auth::proxy::client_ip,
                ))
                .layer(SetSensitiveRequestHeadersLayer::new([
                    AUTHORIZATION,
                    COOKIE,
                ]))
                .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
                .layer(trace)
                .layer(PropagateRequestIdLayer::x_request_id())
                .layer(map_response(ensure_json_errors))
                .layer(CatchPanicLayer::custom(panic_response))
                .layer(axum::middleware::from_fn_with_state(
                    RouteTimeouts {
                        request: config.request_timeout,
                        upload: config.upload_timeout,
                    },
                    timeout_by_route,
                )),
        )
        .with_state(state)
}

/// How long a request may run: uploads (a photo, a sync, a registry import) get their own,
/// longer time, because on a weak uplink their bytes take long to arrive, and a timeout there
/// only makes the device send the same bytes again.
#[derive(Debug, Clone, Copy)]
struct RouteTimeouts {
    request: std::time::Duration,
    upload: std::time::Duration,
}

/// Whether a request carries an upload of field work or of the registry.
pub(crate) fn is_upload(method: &axum::http::Method, path: &str) -> bool {
    use axum::http::Method;
    (method == Method::PUT && path.starts_with("/v1/photos/"))
        || (method == Method::POST
            && matches!(
                path,
                "/v1/sync" | "/v1/registry/import" | "/escritorio/cadastro/importar"
            ))
}

/// The request's time limit by route ([`RouteTimeouts`]); over it, 408 (made JSON by
/// `ensure_json_errors`).
async fn timeout_by_route(
    axum::extract::State(t): axum::extract::State<RouteTimeouts>,
    req: Request<Body>,
    next: axum::middleware::Next,
) -> Response {
    let limit = if is_upload(req.method(), req.uri().path()) {
        t.upload
    } else {
        t.request
    };
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(res) => res,
        Err(_) => StatusCode::REQUEST_TIMEOUT.into_response(),
    }
}
