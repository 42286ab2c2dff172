//! The authentication layer: turns the request's credentials into a [`Principal`] (or
//! refuses them) before the handler runs; the per-operation decision is
//! [`crate::auth::Authenticator::authorize`], made in `dispatch::run`.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::{Binding, Scope};

/// The layer: the request's [`Principal`], or its refusal. The handoff pages (a buyer's
/// browser) carry no platform credentials and are not looked at.
pub(super) async fn establish(State(scope): State<Scope>, mut request: Request, next: Next) -> Response {
    if scope.binding == Binding::Page {
        return next.run(request).await;
    }
    let established = scope.state.auth.establish(request.headers(), request.extensions()).await;
    match established {
        Ok(Some(principal)) => {
            request.extensions_mut().insert(principal);
            next.run(request).await
        }
        Ok(None) => next.run(request).await,
        Err(error) => {
            tracing::info!(code = ?error.kind.mapping().rest_code, reason = %error.message, "credentials refused");
            crate::layers::reject(scope.binding, request, &error).await
        }
    }
}
