//! `/escritorio/dispositivos — devices: list, revoke, enrolment codes` (being written).

use axum::Router;

use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
}
