//! The audit line (issue 8 item 5): one `ucpd::audit` event per operation call, written at the
//! end of `dispatch::run`, naming the platform, the principal's credential (if a trust layer
//! authenticated one), the operation, the resource id and the outcome. Never secrets, tokens,
//! credentials, payloads or buyer data.
//!
//! The step here makes the request's [`Principal`] (a request extension the transports do not
//! pass down) visible to dispatch for the duration of the request.

use axum::extract::Request;
use axum::response::Response;

use super::Endpoint;
use crate::error::ApiError;
use crate::operations::Operation;
use crate::trust::Principal;

tokio::task_local! {
    static PRINCIPAL: Option<Principal>;
}

/// The step: runs `inner` with the request's principal in scope.
pub(super) async fn scope(request: Request, inner: impl Endpoint) -> Response {
    let principal = request.extensions().get::<Principal>().cloned();
    PRINCIPAL.scope(principal, inner.answer(request)).await
}

/// Writes the audit line of one call.
pub fn record<T>(operation: Operation, platform: Option<&str>, id: Option<&str>, result: &Result<T, ApiError>) {
    let principal = PRINCIPAL.try_with(|principal| principal.clone()).ok().flatten();
    let outcome = match result {
        Ok(_) => "ok",
        Err(error) => error.kind.mapping().ucp_code.unwrap_or(error.kind.mapping().rest_code),
    };
    tracing::info!(
        target: "ucpd::audit",
        platform = platform.unwrap_or("-"),
        principal = principal.as_ref().map_or("-", |principal| principal.platform.as_str()),
        credential = principal.as_ref().map_or("none", |principal| principal.credential.name()),
        operation = operation.name(),
        resource = id.unwrap_or("-"),
        outcome,
        "audit"
    );
}
