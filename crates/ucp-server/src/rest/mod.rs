//! The REST binding (transport-rest.md): every route generated from the operation registry,
//! each request checked (headers, content type, size, JSON) before it reaches `dispatch`,
//! which runs the very same code as the MCP endpoint. Protocol errors are `{code, content}`
//! with their HTTP status; business outcomes are 200 (201 for a created resource).

mod openapi;

use std::collections::BTreeMap;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use axum::routing::{MethodFilter, MethodRouter, get, on};
use serde_json::{Value, json};

use crate::dispatch::{self, Invocation};
use crate::error::{ApiError, ErrorKind};
use crate::guard;
use crate::operations::{self, Operation, RestMethod};
use crate::state::AppState;

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

async fn handle(state: &AppState, operation: &'static Operation, request: Request) -> Response {
    let _permit = match guard::admit(state) {
        Ok(permit) => permit,
        Err(error) => return rest_error(&error),
    };
    let (parts, body) = request.into_parts();
    if let Err(error) = guard::check(state, &parts.headers) {
        return rest_error(&error);
    }
    let bytes = match axum::body::to_bytes(body, state.settings.http.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return rest_error(&ApiError::new(
                ErrorKind::PayloadTooLarge,
                format!("request body is larger than {} bytes", state.settings.http.max_body_bytes),
            ));
        }
    };
    let id =
        if operation.takes_id() { path_id(parts.uri.path(), &state.settings.http.rest_path, operation) } else { None };
    match run(state, operation, &parts.headers, &bytes, id).await {
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
    bytes: &Bytes,
    id: Option<String>,
) -> Result<dispatch::Reply, ApiError> {
    check_headers(operation, headers)?;
    let has_body = !bytes.iter().all(u8::is_ascii_whitespace);
    if has_body {
        let media_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .map(|value| value.trim().to_ascii_lowercase());
        if media_type.as_deref() != Some("application/json") {
            return Err(ApiError::new(
                ErrorKind::UnsupportedMediaType,
                format!("Content-Type {:?} is not supported; send application/json", media_type.unwrap_or_default()),
            ));
        }
    }
    let payload: Option<Value> = if has_body {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|error| ApiError::new(ErrorKind::Parse, format!("body is not valid JSON: {error}")))?;
        if !value.is_object() {
            return Err(ApiError::invalid_params("body must be a JSON object"));
        }
        Some(value)
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
    if let (Some(id), Some(body_id)) = (&id, payload.as_ref().and_then(|payload| payload.get("id")))
        && body_id.as_str() != Some(id.as_str())
    {
        return Err(ApiError::invalid_params(format!(
            "the body's id {body_id} disagrees with the path id {id:?}; leave it out"
        )));
    }
    let member_payload = if dispatch::payload_member(*operation).is_some() { payload.as_ref() } else { None };
    let invocation = Invocation {
        operation: *operation,
        headers,
        meta_profile: None,
        idempotency_key: headers.get("idempotency-key").and_then(|value| value.to_str().ok()).map(str::to_owned),
        id,
        payload: member_payload,
        payload_label: "body".into(),
    };
    dispatch::run(state, invocation).await
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
            Some(key) if uuid::Uuid::parse_str(key).is_err() => {
                return Err(ApiError::invalid_params("the Idempotency-Key header must be a UUID"));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The `{id}` segment of `path` for an operation's route template.
fn path_id(path: &str, base: &str, operation: &Operation) -> Option<String> {
    let relative = path.strip_prefix(base)?;
    let template: Vec<&str> = operation.rest_path().split('/').collect();
    let segments: Vec<&str> = relative.split('/').collect();
    if template.len() != segments.len() {
        return None;
    }
    template.iter().zip(&segments).find(|(part, _)| **part == "{id}").map(|(_, segment)| percent_decode(segment))
}

fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && index + 2 < bytes.len()
            && let Ok(byte) = u8::from_str_radix(&segment[index + 1..index + 3], 16)
        {
            out.push(byte);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A protocol error in the REST shape: `{code, content}` with the binding's status.
pub fn rest_error(error: &ApiError) -> Response {
    let mapping = error.kind.mapping();
    let body = json!({ "code": mapping.rest_code, "content": error.message });
    let mut response = Response::builder()
        .status(mapping.rest_status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_default();
    if let Some(seconds) = error.retry_after()
        && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}
