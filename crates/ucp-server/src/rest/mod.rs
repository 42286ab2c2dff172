//! The REST binding (transport-rest.md): every route generated from the operation registry,
//! each request checked (headers, content type, size, JSON) before it reaches `dispatch`,
//! which runs the very same code as the MCP endpoint. Protocol errors are `{code, content}`
//! with their HTTP status; business outcomes are 200 (201 for a created resource).

mod openapi;

use std::collections::BTreeMap;

use axum::RequestPartsExt;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::routing::{MethodFilter, MethodRouter, get, on};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::dispatch::{self, Invocation};
use crate::error::{ApiError, ErrorKind};
use crate::idempotency;
use crate::layers::{self, RawBody, rest_error};
use crate::operations::{self, Operation, RestMethod};
use crate::state::AppState;
use crate::trust::Principal;

/// The routes of the enabled operations below `http.rest_path`, plus `/openapi.json`.
pub fn router(state: &AppState) -> Router<AppState> {
    let base = state.settings.http.rest_path.clone();
    let enabled = &state.settings.capabilities.enabled;
    let mut by_path: BTreeMap<&'static str, Vec<&'static Operation>> = BTreeMap::new();
    let all: &'static [Operation] = &Operation::ALL;
    for operation in all.iter().filter(|operation| operations::is_enabled(enabled, operation.capability())) {
        by_path.entry(operation.rest_path()).or_default().push(operation);
    }
    let mut router = Router::new().route(&format!("{base}/openapi.json"), get(openapi::serve));
    for (path, operations) in by_path {
        let allow: Vec<&'static str> = operations.iter().map(|operation| operation.rest_method().as_str()).collect();
        let allow = allow.join(", ");
        let mut methods: MethodRouter<AppState> = MethodRouter::new();
        for operation in operations {
            let filter = match operation.rest_method() {
                RestMethod::Get => MethodFilter::GET,
                RestMethod::Post => MethodFilter::POST,
                RestMethod::Put => MethodFilter::PUT,
            };
            methods = methods.merge(on(filter, move |State(state): State<AppState>, request: Request| async move {
                handle(&state, operation, request).await
            }));
        }
        let allow_for_fallback = allow.clone();
        methods = methods.fallback(move |method: Method| async move {
            let mut response = rest_error(&ApiError::new(
                ErrorKind::MethodNotAllowed,
                format!("{method} is not allowed here; allowed: {allow_for_fallback}"),
            ));
            if let Ok(value) = HeaderValue::from_str(&allow_for_fallback) {
                response.headers_mut().insert(header::ALLOW, value);
            }
            response
        });
        router = router.route(&format!("{base}{path}"), methods);
    }
    router
}

/// One REST request, after the layers in front (`crate::layers`) have admitted it, checked
/// Host and Origin and read the body into [`RawBody`].
async fn handle(state: &AppState, operation: &'static Operation, request: Request) -> Response {
    let (mut parts, _body) = request.into_parts();
    let Some(RawBody(bytes)) = parts.extensions.remove::<RawBody>() else {
        return rest_error(&ApiError::internal("the REST routes are missing the body layer"));
    };
    let id = if operation.takes_id() {
        match path_id(&mut parts).await {
            Ok(id) => Some(id),
            Err(error) => return rest_error(&error),
        }
    } else {
        None
    };
    let principal = parts.extensions.remove::<Principal>();
    match run(state, operation, &parts.headers, principal, &bytes, id).await {
        Ok(reply) => {
            let status = if reply.created { StatusCode::CREATED } else { StatusCode::OK };
            Response::builder()
                .status(status)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(reply.body))
                .unwrap_or_default()
        }
        Err(error) => rest_error(&error),
    }
}

async fn run(
    state: &AppState,
    operation: &'static Operation,
    headers: &HeaderMap,
    principal: Option<Principal>,
    bytes: &Bytes,
    id: Option<String>,
) -> Result<dispatch::Reply, ApiError> {
    check_headers(operation, headers)?;
    let has_body = !bytes.iter().all(u8::is_ascii_whitespace);
    if has_body {
        layers::require_json(headers)?;
    }
    // The body as its text, validated: the operation parses it once, into its own request.
    let payload: Option<&RawValue> = if has_body {
        let text: &RawValue = serde_json::from_slice(bytes)
            .map_err(|error| ApiError::new(ErrorKind::Parse, format!("body is not valid JSON: {error}")))?;
        if !text.get().starts_with('{') {
            return Err(ApiError::invalid_params("body must be a JSON object"));
        }
        Some(text)
    } else {
        None
    };
    if operation.rest_method() != RestMethod::Get
        && dispatch::payload_member(*operation).is_some()
        && !operation.payload_optional()
        && payload.is_none()
    {
        return Err(ApiError::invalid_params(format!("{} needs a JSON body", operation.name())));
    }
    // Reads accept any Idempotency-Key and ignore it (checklist 46); the state-changing
    // routes require a valid one (`check_headers`).
    let idempotency_key = headers
        .get("idempotency-key")
        .and_then(|value| value.to_str().ok())
        .filter(|key| !operation.read_only() && idempotency::is_valid_key(key))
        .map(str::to_owned);
    // The body as a parsed object only where it is read as one: for the path id it must not
    // contradict, and for the fingerprint of a keyed call.
    let body: Option<Value> = match payload {
        Some(text) if id.is_some() || idempotency_key.is_some() => {
            Some(serde_json::from_str(text.get()).map_err(ApiError::unreadable)?)
        }
        _ => None,
    };
    if let (Some(id), Some(body_id)) = (&id, body.as_ref().and_then(|body| body.get("id")))
        && body_id.as_str() != Some(id.as_str())
    {
        return Err(ApiError::invalid_params(format!(
            "the body's id {body_id} disagrees with the path id {id:?}; leave it out"
        )));
    }
    let member_payload = if dispatch::payload_member(*operation).is_some() { payload } else { None };
    let invocation = Invocation {
        operation: *operation,
        headers,
        meta_profile: None,
        idempotency_key,
        id,
        payload: member_payload,
        payload_label: "body".into(),
        arguments: idempotency::Arguments::Rest(body.as_ref()),
        principal,
        mirror: false,
    };
    // Boxed: the operations' futures are large (see `mcp::handle`).
    Box::pin(dispatch::run(state, invocation)).await
}

/// The headers the REST binding requires (transport-rest.md §2; checklist 57, 58).
fn check_headers(operation: &Operation, headers: &HeaderMap) -> Result<(), ApiError> {
    if !headers.contains_key("ucp-agent") {
        return Err(ApiError::new(
            ErrorKind::InvalidProfileUrl,
            "the UCP-Agent header is required: UCP-Agent: profile=\"https://your-platform/profile.json\"",
        ));
    }
    if !headers.contains_key("request-id") {
        return Err(ApiError::new(ErrorKind::MissingHeader, "the Request-Id header is required (a UUID per attempt)"));
    }
    if operation.rest_requires_idempotency_key() {
        match headers.get("idempotency-key").and_then(|value| value.to_str().ok()) {
            None => {
                return Err(ApiError::new(
                    ErrorKind::MissingHeader,
                    format!("the Idempotency-Key header is required on {} (a UUID)", operation.name()),
                ));
            }
            Some(key) if !idempotency::is_valid_key(key) => {
                return Err(ApiError::invalid_params(format!(
                    "the Idempotency-Key header must be 1-{} printable ASCII characters (a UUID)",
                    idempotency::MAX_KEY_LEN
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The `{id}` of the route, decoded by axum's `Path`. A malformed escape (`%` not followed by
/// two hex digits) or an id that does not decode to UTF-8 is a 400, not a guess.
async fn path_id(parts: &mut Parts) -> Result<String, ApiError> {
    if let Some(position) = malformed_escape(parts.uri.path()) {
        return Err(ApiError::new(
            ErrorKind::InvalidRequest,
            format!("the path has a malformed percent-escape at byte {position}: write % as %25"),
        ));
    }
    let Path(id) = parts.extract::<Path<String>>().await.map_err(|rejection| {
        ApiError::new(ErrorKind::InvalidRequest, format!("the path id is not valid: {}", rejection.body_text()))
    })?;
    Ok(id)
}

/// Where the first `%` not followed by two hex digits is, if any.
fn malformed_escape(path: &str) -> Option<usize> {
    let bytes = path.as_bytes();
    bytes
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'%')
        .map(|(index, _)| index)
        .find(|index| !bytes.get(index + 1..index + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)))
}
