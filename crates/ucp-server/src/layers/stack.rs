//! The per-binding stack as one hand-written tower service: panic catching, admission,
//! Host/Origin, the per-IP rate limit, the body, signatures, authentication and the
//! per-platform rate limit run as plain steps of one future, in that order, around the route's
//! handler.
//!
//! One service rather than a `from_fn` layer per step: each such layer clones the service
//! below it and boxes a future on every request, and at tens of thousands of requests a second
//! the clones, the boxes and the moves of ever larger nested futures were a third of what a
//! `ping` cost (BENCHMARKS.md, "The transport path"). Here a request costs one box and one
//! clone of the route, whatever the number of steps. A step either hands the request on or
//! answers in the binding's shape (`scope::Step`).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::FutureExt;
use tower::{Layer, Service};

use super::allowed::check;
use super::scope::Routed;
use super::{Binding, Endpoint, RpcId, Scope, auth, body, panic, ratelimit, render, signature};
use crate::error::{ApiError, ErrorKind};

/// Which of the optional steps a stack has (panic catching, admission, Host/Origin and the
/// body always run). Decided once, from the settings, when the router is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Present {
    /// Both rate-limit steps: `limits.rate` has a limit on.
    pub rate_limits: bool,
    /// The signature step: MCP and REST, when some platform's policy verifies or some
    /// response is signed (`signatures.policy`, `signatures.sign_responses`).
    pub signatures: bool,
    /// Without the signature step, the check of a sent `Content-Digest` alone: MCP and REST
    /// (checklist 65 holds whatever the signature policy).
    pub digests: bool,
    /// The authentication step: MCP and REST (it refuses a credential we did not issue even
    /// when no platform is onboarded).
    pub authentication: bool,
}

/// The layer that puts a route group behind its [`Stack`].
#[derive(Debug, Clone)]
pub(super) struct StackLayer {
    pub scope: Scope,
    pub present: Present,
}

impl<S> Layer<S> for StackLayer {
    type Service = Stack<Routed<S>>;

    fn layer(&self, inner: S) -> Stack<Routed<S>> {
        self.around(Routed(inner))
    }
}

impl StackLayer {
    /// The stack around `endpoint`.
    pub(super) fn around<E>(&self, endpoint: E) -> Stack<E> {
        Stack { inner: endpoint, scope: self.scope.clone(), present: self.present }
    }
}

/// The service: the steps, then `inner`.
#[derive(Debug, Clone)]
pub(super) struct Stack<E> {
    inner: E,
    scope: Scope,
    present: Present,
}

impl<E: Endpoint> Service<Request> for Stack<E> {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _context: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // `inner` is made ready (a route always is) in the future, once the steps let the
        // request through.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let inner = self.inner.clone();
        let scope = self.scope.clone();
        let present = self.present;
        Box::pin(run(scope, present, request, inner).map(Ok))
    }
}

/// Every step around `inner`, with panics answered as 500 and, on the pages, the security
/// headers on every answer (refusals and caught panics included).
async fn run(scope: Scope, present: Present, mut request: Request, inner: impl Endpoint) -> Response {
    let slot = RpcId::default();
    request.extensions_mut().insert(slot.clone());
    let binding = scope.binding;
    let response = panic::caught(binding, &slot, steps(&scope, present, request, inner)).await;
    match binding {
        Binding::Page => {
            let https = scope.state.profile.base_url.starts_with("https://");
            render::page_headers(response, &scope.state.page_policy, https)
        }
        Binding::Mcp | Binding::Rest => response,
    }
}

/// Hands the request on, or returns the step's answer.
macro_rules! step {
    ($step:expr) => {
        match $step {
            Ok(request) => request,
            Err(answer) => return answer,
        }
    };
}

async fn steps(scope: &Scope, present: Present, request: Request, inner: impl Endpoint) -> Response {
    let state = &scope.state;
    // Admission: a place among the requests in flight, held until the handler has answered,
    // before anything else costs us work.
    let Ok(_permit) = state.in_flight.clone().try_acquire_owned() else {
        tracing::warn!("overloaded: refusing a request with 503");
        let error = ApiError::new(ErrorKind::Unavailable, "the server is at capacity; retry shortly");
        return super::reject(scope.binding, request, &error).await;
    };
    // Host and Origin, still before the body is read.
    let authority = request.uri().authority().map(|authority| authority.as_str());
    if let Err(error) = check(&state.allowed, request.headers(), authority) {
        return super::reject(scope.binding, request, &error).await;
    }
    let mut request = request;
    if present.rate_limits {
        request = step!(ratelimit::by_ip(scope, request).await);
    }
    request = step!(body::read(scope, request).await);
    let mut sign = false;
    if present.signatures {
        (request, sign) = step!(signature::check(scope, request).await);
    } else if present.digests {
        request = step!(signature::check_digest(scope, request).await);
    }
    if present.authentication {
        request = step!(auth::establish(scope, request).await);
    }
    if present.rate_limits {
        request = step!(ratelimit::by_platform(scope, request));
    }
    let response = inner.answer(request).await;
    if sign { signature::sign_response(state, response).await } else { response }
}
