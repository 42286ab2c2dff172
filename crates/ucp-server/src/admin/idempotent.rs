//! `Idempotency-Key` on the admin API's order changes (ship … adjust), as on UCP's state
//! changes: the first request with a key runs and its 200 answer is stored; the same key and
//! body again get that answer back without running (a merchant's client that lost the reply
//! to a refund retries without refunding twice); the same key with another body is 409
//! `idempotency_conflict`, and while the first still runs a duplicate waits, then 409. An
//! answer other than 200 (a refusal, a failure) is not stored: the key is free again.
//! Without the header nothing changes. Records live in the idempotency store under the
//! platform `admin`, the operation `admin.order_change` and the request's path as target.

use std::sync::{Mutex, PoisonError};

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::{ApiError, ErrorKind};
use crate::idempotency::Arguments;
use crate::response::Reply;
use crate::state::AppState;

/// The records' operation name.
const OPERATION: &str = "admin.order_change";
/// The records' platform: no UCP platform (a profile URL) is named so.
const PLATFORM: &str = "admin";
/// The largest body read here (the admin stack's body limit is the real bound).
const MAX_BODY: usize = 1 << 20;

pub(super) async fn keyed(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(key) = request.headers().get("idempotency-key") else { return next.run(request).await };
    let Ok(key) = key.to_str().map(str::to_owned) else {
        return failed(&ApiError::invalid_params("the idempotency key must be printable ASCII"));
    };
    let (parts, body) = request.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_BODY).await else {
        return super::error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "the body is too large");
    };
    let value = if bytes.is_empty() { None } else { serde_json::from_slice(&bytes).ok() };
    if value.is_none() && !bytes.is_empty() {
        // Not JSON: the handler refuses it, and nothing is stored.
        return next.run(Request::from_parts(parts, Body::from(bytes))).await;
    }
    let target = parts.uri.path().to_owned();
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
    // An answer that is not stored goes back as it was made; `once` is told it failed, so it
    // frees the key.
    let unstored = Mutex::new(None);
    let request = Request::from_parts(parts, Body::from(bytes));
    let outcome = state
        .idempotency
        .once(keyed, || async {
            let response = next.run(request).await;
            if response.status() != StatusCode::OK {
                *unstored.lock().unwrap_or_else(PoisonError::into_inner) = Some(response);
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

/// An idempotency refusal in the admin API's error shape.
fn failed(error: &ApiError) -> Response {
    let mapping = error.kind.mapping();
    super::error(mapping.rest_status, mapping.rest_code, &error.message)
}
