//! `/escritorio/usuarios — accounts: create, role, deactivate, password reset` (being written).

use axum::Router;

use crate::server::AppState;

pub(crate) fn routes() -> Router<AppState> {
    Router::new()
}
