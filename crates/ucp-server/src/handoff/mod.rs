//! The buyer handoff pages behind `continue_url` (placeholder until the handoff work lands).

use axum::Router;

use crate::state::AppState;

/// Routes of the buyer-facing pages.
pub fn router() -> Router<AppState> {
    Router::new()
}
