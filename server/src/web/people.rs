//! `/escritorio/pessoas — people: list, search, create, edit` (being written).

use axum::Router;

use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
}
