//! Admission: a place among the requests in flight (`http.max_concurrent_requests`), taken
//! before anything else costs us work, and held until the handler has answered.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::Scope;
use crate::error::{ApiError, ErrorKind};

/// The layer: 503 with `Retry-After` when no place is left; the body is not read for it
/// (on MCP, [`super::reject`] peeks at a bounded prefix to echo the id).
pub(super) async fn admit(State(scope): State<Scope>, request: Request, next: Next) -> Response {
    let _permit = match scope.state.in_flight.clone().try_acquire_owned() {
        Ok(permit) => permit,
        Err(_) => {
            tracing::warn!("overloaded: refusing a request with 503");
            let error = ApiError::new(ErrorKind::Unavailable, "the server is at capacity; retry shortly");
            return super::reject(scope.binding, request, &error).await;
        }
    };
    next.run(request).await
}
