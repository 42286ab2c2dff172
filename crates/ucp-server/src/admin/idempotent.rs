//! The admin API's order changes (ship … adjust) run to their end and take an optional
//! `Idempotency-Key`, as UCP's state changes do.
//!
//! Each change runs as a task of its own, so a client that disconnects (a timeout) never
//! cancels one between the processor's refund and its record. With a key, the first request
//! runs and its 200 answer is stored; the same key and body again get that answer back
//! without running (a merchant's client that lost the reply to a refund retries without
//! refunding twice); the same key with another body is 409 `idempotency_conflict`, and while
//! the first still runs a duplicate waits, then 409 `idempotency_in_progress`. An answer other
//! than 200 (a refusal, a failure) is not stored: the key is free again. Records live in the
//! idempotency store under the platform `admin`, the operation `admin.order_change`, and
//! the action with the (decoded) order id as target.

use std::sync::{Arc, Mutex, PoisonError};

use axum::body::{Body, to_bytes};
use axum::extract::{MatchedPath, Path, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{ApiError, ErrorKind};
use crate::idempotency::{Arguments, Keyed, is_valid_key};
use crate::response::Reply;
use crate::state::AppState;

/// The records' operation name.
const OPERATION: &str = "admin.order_change";
/// The records' platform: no UCP platform (a profile URL) is named so.
const PLATFORM: &str = "admin";
/// The largest body read here (the admin stack's body limit is the real bound).
const MAX_BODY: usize = 1 << 20;

pub(super) async fn keyed(
    State(state): State<AppState>,
    Path(order): Path<String>,
    matched: MatchedPath,
    request: Request,
    next: Next,
) -> Response {
    let Some(key) = request.headers().get("idempotency-key") else {
        return detached(next.run(request)).await;
    };
    let key = match key.to_str() {
        Ok(key) if is_valid_key(key) => key.to_owned(),
        _ => return failed(&ApiError::invalid_params("the idempotency key must be 1-255 printable ASCII characters")),
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
        return super::error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body is too large");
    };
    // As the handlers read it: blank is no body.
    let blank = bytes.iter().all(u8::is_ascii_whitespace);
    let value: Option<serde_json::Value> = if blank { None } else { serde_json::from_slice(&bytes).ok() };
    let request = Request::from_parts(parts, Body::from(bytes));
    if value.is_none() && !blank {
        // Not JSON: the handler refuses it, and nothing is stored.
        return detached(next.run(request)).await;
    }
    let action = matched.as_str().rsplit('/').next().unwrap_or_default();
    let target = format!("{action}:{order}");
    let keyed = match state.idempotency.keyed_named(
        OPERATION,
        &key,
        PLATFORM,
        Some(&target),
        Arguments::Rest(value.as_ref()),
    ) {
        Ok(keyed) => keyed,
        Err(error) => return failed(&error),
    };
    detached(run_once(state, keyed, request, next)).await
}

/// The console's order actions, like the API's: run as a task of their own, so a merchant
/// who closes the tab does not cancel one between the processor's refund and its record.
pub(super) async fn to_the_end(request: Request, next: Next) -> Response {
    detached(next.run(request)).await
}

/// Runs `work` as a task of its own and waits for it: dropping the wait (the client left)
/// does not drop the work.
async fn detached(work: impl Future<Output = Response> + Send + 'static) -> Response {
    tokio::spawn(crate::layers::carried(work)).await.unwrap_or_else(|error| failed(&ApiError::internal(error)))
}

async fn run_once(state: AppState, keyed: Keyed, request: Request, next: Next) -> Response {
    // An answer that is not stored goes back as it was made; `once` is told it failed, so it
    // frees the key.
    let unstored = Arc::new(Mutex::new(None));
    let slot = Arc::clone(&unstored);
    let outcome = state
        .idempotency
        .once(keyed, move || async move {
            let response = next.run(request).await;
            if response.status() != StatusCode::OK {
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(response);
                return Err(ApiError::new(ErrorKind::Internal, "not stored"));
            }
            let body = to_bytes(response.into_body(), usize::MAX).await.map_err(ApiError::internal)?;
            Ok(Reply { body: body.to_vec(), created: false, text: None })
        })
        .await;
    match outcome {
        Ok(reply) => ([(header::CONTENT_TYPE, "application/json")], reply.body).into_response(),
        Err(error) => match unstored.lock().unwrap_or_else(PoisonError::into_inner).take() {
            Some(response) => response,
            None => failed(&error),
        },
    }
}

/// An idempotency refusal in the admin API's error shape, with `Retry-After` where it has one.
fn failed(error: &ApiError) -> Response {
    let mapping = error.kind.mapping();
    let code = if error.kind == ErrorKind::Internal { "internal" } else { mapping.rest_code };
    let mut response = super::error(mapping.rest_status, code, &error.message);
    if let Some(seconds) = error.retry_after() {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}
