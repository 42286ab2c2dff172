//! One error renderer per binding.

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::Binding;
use crate::error::ApiError;

/// `error` in the binding's shape; `id` is echoed on MCP.
pub fn render(binding: Binding, id: &Value, error: &ApiError) -> Response {
    match binding {
        Binding::Mcp => rpc_error(id, error),
        Binding::Rest => rest_error(error),
        Binding::Page => page_error(error),
    }
}

/// The buyer pages' Content-Security-Policy: inline styles, nothing else; forms post only here;
/// no page frames them (`X-Frame-Options: DENY` says the same to older browsers) and no `<base>`
/// moves their relative links.
pub const PAGE_CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// [`PAGE_CONTENT_SECURITY_POLICY`], and images from the origins of `images` (the merchant's
/// disclosure symbols, which a page shows under their lines), each origin once; made once at
/// start.
pub fn page_content_security_policy<'a>(images: impl IntoIterator<Item = &'a str>) -> HeaderValue {
    let mut origins: Vec<String> = images
        .into_iter()
        .filter_map(|image| url::Url::parse(image).ok())
        .filter(|url| url.scheme() == "https")
        .map(|url| url.origin().ascii_serialization())
        .collect();
    origins.sort_unstable();
    origins.dedup();
    let policy = if origins.is_empty() {
        PAGE_CONTENT_SECURITY_POLICY.to_owned()
    } else {
        format!("{PAGE_CONTENT_SECURITY_POLICY}; img-src {}", origins.join(" "))
    };
    HeaderValue::from_str(&policy).unwrap_or_else(|_| HeaderValue::from_static(PAGE_CONTENT_SECURITY_POLICY))
}

/// The security headers of every answer to a buyer's (or the merchant's) browser, `policy` the
/// pages' Content-Security-Policy ([`page_content_security_policy`]); `https`: the shop's
/// public URL is https, so browsers are told to come back over https only (HSTS, a year; not
/// the merchant's other subdomains).
pub fn page_headers(mut response: Response, policy: &HeaderValue, https: bool) -> Response {
    let headers = response.headers_mut();
    if https {
        headers.insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static("max-age=31536000"));
    }
    headers.insert(header::CONTENT_SECURITY_POLICY, policy.clone());
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // `same-origin`, not `no-referrer`: the latter makes browsers send `Origin: null` on
    // form posts, which the Origin guard (rightly) refuses.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    // The pages show a buyer's contact details and address.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
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

/// A JSON-RPC error response with the HTTP status of the error's class.
pub fn rpc_error(id: &Value, error: &ApiError) -> Response {
    let mapping = error.kind.mapping();
    let mut data = serde_json::Map::new();
    if let Some(code) = mapping.ucp_code {
        data.insert("code".into(), code.into());
        data.insert("content".into(), error.message.clone().into());
    }
    if let Some(seconds) = error.retry_after() {
        data.insert("retry_after".into(), seconds.into());
    }
    let mut body =
        json!({ "jsonrpc": "2.0", "id": id, "error": { "code": mapping.jsonrpc_code, "message": error.message } });
    if !data.is_empty() {
        body["error"]["data"] = Value::Object(data);
    }
    let mut response = json_response(mapping.status, &body);
    error.add_challenge(response.headers_mut());
    if let Some(seconds) = error.retry_after()
        && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::to_vec(body).unwrap_or_default()))
        .unwrap_or_default()
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
    error.add_challenge(response.headers_mut());
    if let Some(seconds) = error.retry_after()
        && let Ok(value) = HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}
