//! What a route group's layers share: its binding (the shape of its errors) and the
//! application.

use axum::extract::Request;
use axum::response::Response;

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
