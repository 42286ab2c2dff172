//! The server as hyper sees it: a `POST` to the MCP path, the call agents make most, goes
//! straight to the MCP endpoint behind its binding's stack ([`layers::direct`]); every other
//! request goes through the axum router, which has the MCP route too (other methods, `HEAD`).
//!
//! Why: the router wraps each route in its own boxed service per layer applied to it (the
//! request ids and tracing around all routes, the binding's stack around the group), and
//! calling one clones and boxes each of those, inserts the matched path and the path
//! parameters into the request, and nests a future per level: 5,600 of a `ping`'s 40,800
//! instructions (BENCHMARKS.md, "The MCP path without the router"). The direct path runs the
//! same stack, built from the same settings, around the same handler, so only the cost differs.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request};
use axum::response::Response;
use futures_util::future::Either;
use tower::Service;

use crate::layers::{self, Binding, Direct};
use crate::mcp;
use crate::state::AppState;

/// The router, and the MCP path dispatched past it.
#[derive(Debug, Clone)]
pub struct App {
    router: Router,
    mcp: Option<(Arc<str>, Direct<mcp::Endpoint>)>,
}

impl App {
    /// `router` (all routes, the MCP route among them), with `POST`s to the MCP path of
    /// `state`'s settings dispatched past it.
    pub fn new(router: Router, state: &AppState) -> App {
        let path = Arc::from(state.settings.http.mcp_path.as_str());
        App { router, mcp: Some((path, layers::direct(state, Binding::Mcp, mcp::Endpoint(state.clone())))) }
    }
}

/// Every request through `router`.
impl From<Router> for App {
    fn from(router: Router) -> App {
        App { router, mcp: None }
    }
}

impl<B> Service<Request<B>> for App
where
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<
        <Router as Service<Request<B>>>::Future,
        <Direct<mcp::Endpoint> as Service<axum::extract::Request>>::Future,
    >;

    fn poll_ready(&mut self, _context: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both are always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        if let Some((path, direct)) = &mut self.mcp
            && request.method() == Method::POST
            && request.uri().path() == &**path
        {
            return Either::Right(direct.call(request.map(Body::new)));
        }
        Either::Left(self.router.call(request))
    }
}
