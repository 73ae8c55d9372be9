//! `/escritorio/veiculos — vehicles: owner, taximeter, documents` (being written).

use axum::Router;

use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
}
