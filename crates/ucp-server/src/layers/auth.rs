//! The authentication step: turns the request's credentials into a [`Principal`] (or
//! refuses them) before the handler runs; the per-operation decision is
//! [`crate::auth::Authenticator::authorize`], made in `dispatch::run`.
//!
//! [`Principal`]: crate::trust::Principal

use axum::extract::Request;

use super::{Binding, Scope};

/// The step: the request with its principal (when its credentials name one), or its refusal.
/// The handoff pages (a buyer's browser) carry no platform credentials and are not looked at.
pub(super) async fn establish(scope: &Scope, mut request: Request) -> super::scope::Step {
    if scope.binding == Binding::Page {
        return Ok(request);
    }
    let established = scope.state.auth.establish(request.headers(), request.extensions()).await;
    match established {
        Ok(Some(principal)) => {
            request.extensions_mut().insert(principal);
            Ok(request)
        }
        Ok(None) => Ok(request),
        Err(error) => {
            tracing::info!(code = ?error.kind.mapping().rest_code, reason = %error.message, "credentials refused");
            Err(crate::layers::reject(scope.binding, request, &error).await)
        }
    }
}
