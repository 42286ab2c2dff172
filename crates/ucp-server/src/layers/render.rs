//! One error renderer per binding, and the refusal every layer uses.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use serde_json::Value;

use super::Binding;
use super::body::{RpcId, Unread, collect};
use crate::error::ApiError;

/// How much of a refused MCP request's body is read to find its id, and for how long.
const PEEK_BYTES: usize = 4 * 1024;
const PEEK_TIME: Duration = Duration::from_millis(100);

/// `error` in the binding's shape; `id` is echoed on MCP.
pub fn render(binding: Binding, id: &Value, error: &ApiError) -> Response {
    match binding {
        Binding::Mcp => crate::mcp::rpc_error(id, error),
        Binding::Rest => crate::rest::rest_error(error),
        Binding::Page => page_error(error),
    }
}

/// Refuses `request` in the binding's shape, from any layer. On MCP the id is echoed even when
/// the body layer has not run yet: it is then looked for in the body's first
/// [`PEEK_BYTES`], read for at most [`PEEK_TIME`] (so a refusal never costs a full read).
pub async fn reject(binding: Binding, request: Request, error: &ApiError) -> Response {
    let slot = request.extensions().get::<RpcId>().cloned().unwrap_or_default();
    if binding == Binding::Mcp && !slot.is_known() {
        let prefix = match tokio::time::timeout(PEEK_TIME, collect(request.into_body(), PEEK_BYTES)).await {
            Ok(Ok(bytes) | Err(Unread::TooLarge(bytes))) => bytes,
            Ok(Err(Unread::Failed)) | Err(_) => Bytes::new(),
        };
        slot.record(&prefix);
    }
    render(binding, &slot.get(), error)
}

/// A short plain-text page for a buyer's browser (the handoff pages' own errors are HTML; these
/// are refusals before a page handler ran).
fn page_error(error: &ApiError) -> Response {
    let status = error.kind.mapping().rest_status;
    let text = format!("{} {}\n\n{}\n", status.as_u16(), status.canonical_reason().unwrap_or_default(), error.message);
    let mut response = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CACHE_CONTROL, "no-store")
        .body(Body::from(text))
        .unwrap_or_default();
    error.add_challenge(response.headers_mut());
    if let Some(seconds) = error.retry_after()
        && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}
