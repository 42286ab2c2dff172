//! The admin JSON API under `/admin/api` (merchant order operations and refunds). Every route here is
//! behind the admin key (`super::require_key`).

use axum::Router;
use axum::routing::get;

use crate::state::AppState;

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route(&format!("{}/status", super::API_PREFIX), get(status))
        .route(&format!("{}/openapi.json", super::API_PREFIX), get(super::openapi::serve))
        .merge(super::orders::router(state))
        .merge(super::refunds::router())
}

/// `GET /admin/api/status`: whether the key is accepted, and the server's version.
async fn status() -> axum::Json<serde_json::Value> {
    axum::Json(serde_json::json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}
