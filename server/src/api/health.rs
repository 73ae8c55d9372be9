//! `GET /health`: is the server up and its database readable. Public, cheap (one point query),
//! for load balancers and the demo's "is it up" check. `GET /v1/server-key`: the public key that
//! countersigns record receipts, public too, so anyone can check a receipt.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::openapi::named_schema;
use crate::error::AppError;
use crate::server::AppState;

/// The health answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// Server version.
    pub version: String,
    /// Storage backend (`sqlite`).
    pub backend: String,
    /// Current registry version.
    pub registry_version: u64,
}

/// The server's signing key, for anyone checking a receipt's countersignature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerKeyView {
    /// `ed25519`.
    pub alg: String,
    /// Hex of the 32-byte public key.
    pub public_key: String,
}

named_schema!(Health => "Health", ServerKeyView => "ServerKeyView");

/// The public key that countersigns record receipts (`crate::receipts`).
#[utoipa::path(
    get,
    path = "/v1/server-key",
    tag = "meta",
    responses((status = 200, description = "Chave pública do servidor", body = ServerKeyView))
)]
async fn server_key(State(state): State<AppState>) -> Json<ServerKeyView> {
    Json(ServerKeyView {
        alg: String::from("ed25519"),
        public_key: state.signing_key().public_key_hex(),
    })
}

/// Liveness and database check.
#[utoipa::path(
    get,
    path = "/health",
    tag = "meta",
    responses(
        (status = 200, description = "No ar", body = Health),
        (status = 503, description = "Banco de dados inacessível", body = crate::error::ErrorBody),
    )
)]
async fn health(State(state): State<AppState>) -> Result<Json<Health>, AppError> {
    let store = state.store();
    let registry = store.registry().await.map_err(|e| {
        tracing::error!(error = %e, "health: banco inacessível");
        AppError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "O banco de dados não está acessível.",
        )
    })?;
    Ok(Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        backend: store.backend().into(),
        registry_version: registry.version,
    }))
}

pub(crate) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(server_key))
}
