//! The Host allow-list and the Origin rule (MCP's DNS-rebinding defence, the pages' cross-site
//! form defence), checked before the body is read.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::Scope;
use super::allowed::check;

/// The layer: refuses a foreign Host or Origin with 403 in the binding's shape.
pub(super) async fn guard(State(scope): State<Scope>, request: Request, next: Next) -> Response {
    match check(&scope.state.allowed, request.headers(), request.uri().authority().map(|authority| authority.as_str()))
    {
        Ok(()) => next.run(request).await,
        Err(error) => super::reject(scope.binding, request, &error).await,
    }
}
