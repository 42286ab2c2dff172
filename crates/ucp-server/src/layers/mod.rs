//! The one middleware stack in front of every route: MCP, REST and the handoff pages go through
//! the same steps, and only the shape of an error differs, chosen by the route group's
//! [`Binding`]. Outermost first:
//!
//! 1. request id and tracing ([`trace::shared`], once for the whole router): `x-request-id` is
//!    the client's `Request-Id` when it sent one, a fresh UUID otherwise, carried by the
//!    request's task (so by every line it logs) and echoed on the response;
//! 2. panic catching ([`panic`]): a panic anywhere below answers 500 in the binding's shape;
//! 3. admission: a place among the requests in flight, or 503 + `Retry-After`, before any body
//!    is read;
//! 4. Host and Origin, still before the body is read;
//! 5. the per-IP rate limit (when on), still before the body is read;
//! 6. the body ([`body`]): read up to `http.max_body_bytes` (413 otherwise) into [`RawBody`],
//!    and, on MCP, the body into [`RpcId`], which finds the JSON-RPC id in it when an answer
//!    needs it;
//! 7. RFC 9421 signatures ([`signature`]): a sent `Content-Digest` checked over [`RawBody`]
//!    whatever the policy, the signatures per the platform's policy (a
//!    [`crate::trust::Principal`] on success), and our response signed on the way out;
//! 8. authentication ([`auth`]) and the per-platform rate limit;
//! 9. the handler, which takes the bytes from [`RawBody`].
//!
//! Steps 2-8 are one hand-written service ([`stack`]), not a layer each. A step sees the raw
//! bytes ([`RawBody`]) before any JSON parsing and the JSON-RPC id ([`RpcId::of`]), and answers
//! through [`reject`] in the binding's shape; a step before the body (5) still echoes the
//! JSON-RPC id, which [`reject`] recovers from a bounded peek at the body.

pub mod allowed;
mod audit;
mod auth;
mod body;
mod limiters;
mod media;
mod panic;
mod ratelimit;
mod render;
mod scope;
mod signature;
mod stack;
mod trace;

use axum::Router;
use axum::middleware::from_fn_with_state;

use stack::{Present, StackLayer};

pub use allowed::Allowed;
pub use audit::{Caller, record as audit};
pub(crate) use body::is_echoable_id;
pub use body::{RawBody, RpcId, reject};
pub use limiters::RateLimiters;
pub use media::require_json;
pub use render::{
    PAGE_CONTENT_SECURITY_POLICY, page_content_security_policy, page_headers, render, rest_error, rpc_error,
};
pub use scope::{Binding, Endpoint, Scope};
pub(crate) use trace::carried;
pub use trace::{log_request_ids_in_spans, request_ids_in_spans, shared, with_request_id};

use crate::state::AppState;

/// Wraps a route group in the per-binding part of the stack (everything but request ids and
/// tracing, which [`shared`] adds once around the whole router).
///
/// Which steps exist is decided here, once, from the settings: a step whose feature is off
/// for this binding would only pass every request through, so it is left out (see
/// [`Present`]). The order of those that remain is always the one above.
pub fn binding_stack(router: Router<AppState>, state: &AppState, binding: Binding) -> Router<AppState> {
    router.layer(StackLayer { scope: Scope { state: state.clone(), binding }, present: present(state, binding) })
}

/// `endpoint` behind the whole stack of `binding` (request ids and tracing, then the steps
/// [`binding_stack`] puts in front of a route group), as one service, for a path the listener
/// dispatches itself rather than through the router (`crate::app`).
pub fn direct<E>(state: &AppState, binding: Binding, endpoint: E) -> Direct<E> {
    let scope = Scope { state: state.clone(), binding };
    Direct(trace::Traced::new(StackLayer { scope, present: present(state, binding) }.around(endpoint)))
}

/// An endpoint behind its binding's whole stack: see [`direct`].
#[derive(Debug, Clone)]
pub struct Direct<E>(trace::Traced<stack::Stack<E>>);

impl<E: Endpoint> tower::Service<axum::extract::Request> for Direct<E> {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = trace::Answer;

    fn poll_ready(&mut self, context: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(context)
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        self.0.call(request)
    }
}

/// The steps a binding's stack has, from the settings.
fn present(state: &AppState, binding: Binding) -> Present {
    let platform_binding = binding != Binding::Page;
    let settings = &state.signatures.settings;
    let signatures = platform_binding
        && (settings.any_verification() || settings.sign_responses != crate::config::ResponseSigning::None);
    Present {
        rate_limits: state.rate_limits.enabled(),
        signatures,
        digests: platform_binding,
        authentication: platform_binding,
    }
}

/// The stack for the merchant's admin routes: panic catching, admission, Host/Origin, the
/// per-IP rate limit and the body, but none of the platform trust steps (the admin credential
/// is checked by `crate::admin`).
pub fn admin_stack(router: Router<AppState>, state: &AppState, binding: Binding) -> Router<AppState> {
    let present =
        Present { rate_limits: state.rate_limits.enabled(), signatures: false, digests: false, authentication: false };
    router.layer(StackLayer { scope: Scope { state: state.clone(), binding }, present })
}

/// The stack of the probes (`/healthz`, `/readyz`): panic catching only. They must answer an
/// orchestrator that sends its own Host (a pod address), under load (no admission) and
/// without a rate limit; they read no body and say nothing but up or not.
pub fn probe_stack(router: Router<AppState>) -> Router<AppState> {
    router.layer(from_fn_with_state(Binding::Rest, panic::catch))
}
