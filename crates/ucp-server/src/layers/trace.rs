//! Request ids and tracing, once around the whole router: every request gets an
//! `x-request-id` (the client's `Request-Id` when it sent one, so our logs and theirs share a
//! key; a fresh UUID otherwise), its span carries it, and the response echoes it.

use axum::Router;
use axum::extract::Request;
use axum::http::HeaderValue;
use tower::ServiceBuilder;
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use tracing::Span;

use crate::state::AppState;

/// The longest client `Request-Id` we adopt as ours.
const MAX_CLIENT_ID: usize = 128;

/// Wraps the whole router (all bindings) in request ids and tracing.
pub fn shared(router: Router<AppState>) -> Router<AppState> {
    router.layer(
        ServiceBuilder::new()
            .layer(SetRequestIdLayer::x_request_id(ClientOrFresh))
            .layer(TraceLayer::new_for_http().make_span_with(span))
            .layer(PropagateRequestIdLayer::x_request_id()),
    )
}

#[derive(Debug, Clone, Copy)]
struct ClientOrFresh;

impl MakeRequestId for ClientOrFresh {
    fn make_request_id<B>(&mut self, request: &axum::http::Request<B>) -> Option<RequestId> {
        let client = request
            .headers()
            .get("request-id")
            .filter(|value| !value.is_empty() && value.len() <= MAX_CLIENT_ID && value.to_str().is_ok());
        let value = match client {
            Some(value) => value.clone(),
            None => HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()).ok()?,
        };
        Some(RequestId::new(value))
    }
}

fn span(request: &Request) -> Span {
    let request_id = request.headers().get("x-request-id").and_then(|value| value.to_str().ok()).unwrap_or_default();
    tracing::info_span!("request", method = %request.method(), path = %request.uri().path(), request_id)
}
