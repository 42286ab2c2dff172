//! The merchant console: server-rendered pages under `/admin`, behind the admin credential.

use axum::Router;

use crate::state::AppState;

pub fn router(_state: &AppState) -> Router<AppState> {
    Router::new()
}
