//! The one middleware stack in front of every route: MCP, REST and the handoff pages go through
//! the same layers, and only the shape of an error differs, chosen by the route group's
//! [`Binding`]. Outermost first:
//!
//! 1. request id and tracing ([`trace::shared`], once for the whole router): `x-request-id` is
//!    the client's `Request-Id` when it sent one, a fresh UUID otherwise, and is echoed on the
//!    response;
//! 2. panic catching ([`panic`]): a panic anywhere below answers 500 in the binding's shape;
//! 3. admission: a place among the requests in flight, or 503 + `Retry-After`, before any body
//!    is read;
//! 4. Host and Origin, still before the body is read (2-4 are one layer, [`front`]);
//! 5. the body ([`body`]): read up to `http.max_body_bytes` (413 otherwise) into [`RawBody`],
//!    and, on MCP, the JSON-RPC id into [`RpcId`];
//! 6. RFC 9421 signatures ([`signature`]): `Content-Digest` and the signatures checked over
//!    [`RawBody`] per the platform's policy (a [`crate::trust::Principal`] on success), and our
//!    response signed on the way out;
//! 7. the handler, which takes the bytes from [`RawBody`].
//!
//! The trust layers (authentication, signatures, idempotency, rate limits) slot in between 5
//! and 6 in [`binding_stack`]: they see the raw bytes ([`RawBody`]) before any JSON parsing,
//! the JSON-RPC id ([`RpcId::of`]) and answer through [`reject`] in the binding's shape. A layer
//! that must refuse before the body is read (a rate limit) goes between 4 and 5; [`reject`]
//! still recovers the JSON-RPC id there, from a bounded peek at the body.

pub mod allowed;
mod audit;
mod auth;
mod body;
mod front;
mod limiters;
mod media;
mod panic;
mod ratelimit;
mod render;
mod scope;
mod signature;
mod trace;

use axum::Router;
use axum::middleware::from_fn_with_state;

pub use allowed::{Allowed, strip_port};
pub use audit::record as audit;
pub use body::{RawBody, RpcId, reject};
pub use limiters::RateLimiters;
pub use media::require_json;
pub use render::{PAGE_CONTENT_SECURITY_POLICY, page_headers, render, rest_error, rpc_error};
pub use scope::{Binding, Scope};
pub use trace::shared;

use crate::state::AppState;

/// Wraps a route group in the per-binding part of the stack (everything but request ids and
/// tracing, which [`shared`] adds once around the whole router).
///
/// Which layers exist is decided here, once, from the settings: a layer whose feature is off
/// for this binding would only pass every request through (an extra boxed future and a state
/// clone per request), so it is left out of the stack (see [`Present`]). The order of those
/// that remain is always the one above.
pub fn binding_stack(router: Router<AppState>, state: &AppState, binding: Binding) -> Router<AppState> {
    let scope = Scope { state: state.clone(), binding };
    let present = Present::of(state, binding);
    // `Router::layer` wraps what is there already: innermost first.
    let mut router = router;
    if present.audit_scope {
        router = router.layer(axum::middleware::from_fn(audit::scope));
    }
    if present.rate_limits {
        // Per-platform limits once the principal is known.
        router = router.layer(from_fn_with_state(scope.clone(), ratelimit::by_platform));
    }
    if present.authentication {
        // Authentication after signatures: it takes the signature layer's principal.
        router = router.layer(from_fn_with_state(scope.clone(), auth::establish));
    }
    if present.signatures {
        // The trust layers, after the body is read and before the handler.
        router = router.layer(from_fn_with_state(scope.clone(), signature::check));
    }
    let router = outer_stack(router, scope, present.rate_limits);
    with_page_headers(router, binding)
}

/// Which of the optional layers a binding's stack has (the others always run: panic
/// catching, admission, Host/Origin and the body).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Present {
    /// Both rate-limit layers: `limits.rate` has a limit on.
    rate_limits: bool,
    /// The signature layer: MCP and REST, when some platform's policy verifies or some
    /// response is signed (`signatures.policy`, `signatures.sign_responses`). On the pages it
    /// looks at nothing.
    signatures: bool,
    /// The authentication layer: MCP and REST (it refuses a credential we did not issue even
    /// when no platform is onboarded). On the pages it looks at nothing.
    authentication: bool,
    /// The audit scope: only a trust layer can put a principal on the request, and without
    /// onboarded platforms and without verified signatures none ever does.
    audit_scope: bool,
}

impl Present {
    fn of(state: &AppState, binding: Binding) -> Present {
        let platform_binding = binding != Binding::Page;
        let settings = &state.signatures.settings;
        let signatures = platform_binding
            && (settings.any_verification() || settings.sign_responses != crate::config::ResponseSigning::None);
        let principals = settings.any_verification() || !state.settings.platforms.is_empty();
        Present {
            rate_limits: state.rate_limits.enabled(),
            signatures,
            authentication: platform_binding,
            audit_scope: platform_binding && principals,
        }
    }
}

/// Panic catching, admission, Host/Origin, the per-IP rate limit (when on) and the body,
/// around `router`.
fn outer_stack(router: Router<AppState>, scope: Scope, rate_limits: bool) -> Router<AppState> {
    let mut router = router.layer(from_fn_with_state(scope.clone(), body::read));
    if rate_limits {
        router = router.layer(from_fn_with_state(scope.clone(), ratelimit::by_ip));
    }
    router.layer(from_fn_with_state(scope, front::gate))
}

/// The outer part of the stack for the merchant's admin routes: panic catching, admission,
/// Host/Origin, the per-IP rate limit and the body, but none of the platform trust layers (the
/// admin credential is checked by `crate::admin`).
pub fn admin_stack(router: Router<AppState>, state: &AppState, binding: Binding) -> Router<AppState> {
    let scope = Scope { state: state.clone(), binding };
    let router = outer_stack(router, scope, state.rate_limits.enabled());
    with_page_headers(router, binding)
}

/// The stack of the probes (`/healthz`, `/readyz`): panic catching only. They must answer an
/// orchestrator that sends its own Host (a pod address), under load (no admission) and
/// without a rate limit; they read no body and say nothing but up or not.
pub fn probe_stack(router: Router<AppState>) -> Router<AppState> {
    router.layer(from_fn_with_state(Binding::Rest, panic::catch))
}

fn with_page_headers(router: Router<AppState>, binding: Binding) -> Router<AppState> {
    match binding {
        // Every answer to a buyer's browser carries the pages' security headers, refusals of
        // the stack (403, 413, 429, 503, a caught panic) included.
        Binding::Page => router.layer(axum::middleware::map_response(render::page_headers)),
        Binding::Mcp | Binding::Rest => router,
    }
}
