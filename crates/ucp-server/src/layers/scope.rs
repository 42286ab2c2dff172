//! What a route group's layers share: its binding (the shape of its errors) and the
//! application.

use std::convert::Infallible;

use axum::extract::Request;
use axum::response::Response;
use tower::{Service, ServiceExt};

use crate::state::AppState;

/// How a route group answers errors raised before (or instead of) its handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The MCP endpoint: a JSON-RPC error echoing the request's id, with the HTTP status of
    /// the error's class.
    Mcp,
    /// The REST binding, discovery and the 404 fallback: `{code, content}`.
    Rest,
    /// The handoff pages a buyer's browser shows: a short plain-text page.
    Page,
}

/// What every layer of a route group's stack shares: the application and the group's binding.
#[derive(Debug, Clone)]
pub struct Scope {
    pub state: AppState,
    pub binding: Binding,
}

/// What a step of the stack (`stack.rs`) does with a request: hands it on, or answers it.
pub(super) type Step = Result<Request, Response>;

/// What a stack (`stack.rs`) hands a request its steps let through: a route of the router
/// ([`Routed`]), or an endpoint the listener calls without the router (`crate::app`), whose
/// future the stack awaits as it is, with no service, clone or box of its own.
pub trait Endpoint: Clone + Send + 'static {
    /// The answer to `request`.
    fn answer(self, request: Request) -> impl Future<Output = Response> + Send;
}

/// A route below a stack in the router, as an [`Endpoint`].
#[derive(Debug, Clone)]
pub(super) struct Routed<S>(pub S);

impl<S> Endpoint for Routed<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    async fn answer(self, request: Request) -> Response {
        match self.0.oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }
}
