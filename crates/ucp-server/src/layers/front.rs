//! The front of every binding's stack, as one layer: panic catching ([`super::panic`]), then
//! admission (a place among the requests in flight, `http.max_concurrent_requests`, taken
//! before anything else costs us work and held until the handler has answered; 503 with
//! `Retry-After` otherwise), then the Host allow-list and the Origin rule (MCP's DNS-rebinding
//! defence, the pages' cross-site form defence; 403). All before the body is read: a refusal
//! peeks at a bounded prefix on MCP to echo the id ([`super::reject`]).
//!
//! One layer rather than three: each `from_fn` layer clones the service below it and boxes a
//! future on every request, which at tens of thousands of requests a second is measurable
//! (BENCHMARKS.md, "catalog reads").

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::allowed::check;
use super::{RpcId, Scope};
use crate::error::{ApiError, ErrorKind};

/// The layer.
pub(super) async fn gate(State(scope): State<Scope>, mut request: Request, next: Next) -> Response {
    let slot = RpcId::default();
    request.extensions_mut().insert(slot.clone());
    let binding = scope.binding;
    super::panic::caught(binding, &slot, async move {
        let Ok(_permit) = scope.state.in_flight.clone().try_acquire_owned() else {
            tracing::warn!("overloaded: refusing a request with 503");
            let error = ApiError::new(ErrorKind::Unavailable, "the server is at capacity; retry shortly");
            return super::reject(binding, request, &error).await;
        };
        let authority = request.uri().authority().map(|authority| authority.as_str());
        if let Err(error) = check(&scope.state.allowed, request.headers(), authority) {
            return super::reject(binding, request, &error).await;
        }
        next.run(request).await
    })
    .await
}
