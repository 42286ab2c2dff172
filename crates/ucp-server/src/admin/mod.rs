//! The merchant's side: the admin JSON API (`/admin/api/…`, [`api`]) and the console pages
//! (`/admin/…`, [`console`]), behind the admin credential (`[admin]`, [`keys`]) and never a
//! platform's. They share the outer part of the middleware stack (panic catching, admission,
//! Host/Origin, per-IP rate limit, body limit) but none of the platform trust layers.
//!
//! The API takes the key as `Authorization: Bearer <key>`; without configured keys (and off a
//! demo start) every admin route answers 404, as if it did not exist.

pub mod api;
pub mod console;
mod idempotent;
pub mod keys;
pub mod openapi;
pub mod orders;
mod refunds;
pub mod session;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};

pub use keys::AdminKeys;

use crate::layers::Binding;
use crate::state::AppState;

/// Where the admin surface lives.
pub const API_PREFIX: &str = "/admin/api";
pub const CONSOLE_PREFIX: &str = "/admin";

/// Every admin route, each group behind the admin stack.
pub fn router(state: &AppState) -> Router<AppState> {
    let api = api::router(state).layer(from_fn_with_state(state.clone(), require_key));
    Router::new().merge(crate::layers::admin_stack(api, state, Binding::Rest)).merge(crate::layers::admin_stack(
        console::router(state),
        state,
        Binding::Page,
    ))
}

/// The bearer key on an admin request, if any.
pub fn bearer(request: &Request) -> Option<&str> {
    let value = request.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim()).filter(|key| !key.is_empty())
}

/// The admin API's gate: 404 when no key is configured, 401 with a `WWW-Authenticate`
/// challenge without a valid key (logged with the client's address, for an operator or
/// fail2ban to see guessing). Its answers (orders with buyers' addresses, the counters) are
/// never stored by a cache.
pub(crate) async fn require_key(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let mut response = if !state.admin.enabled() {
        error(StatusCode::NOT_FOUND, "not_found", "no such route")
    } else {
        match bearer(&request) {
            Some(key) if state.admin.accepts(key) => next.run(request).await,
            sent => {
                let client = client_of(&state, &request);
                tracing::warn!(target: "ucpd::audit", %client, key_sent = sent.is_some(), path = %request.uri().path(), "admin key refused");
                let mut response = error(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "the admin API needs `Authorization: Bearer <admin key>`",
                );
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"ucpd-admin\""));
                response
            }
        }
    };
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The address a request came from (through the configured proxies' `X-Forwarded-For`), for
/// the log; `-` when the connection's is unknown.
pub(crate) fn client_of(state: &AppState, request: &Request) -> String {
    request
        .extensions()
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map_or_else(|| "-".to_owned(), |peer| state.rate_limits.client_ip(peer.0.ip(), request.headers()).to_string())
}

/// An admin API error body: `{"code": …, "message": …}`.
pub fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "code": code, "message": message }))).into_response()
}

/// The 400 for a list's query string that does not parse: serde's words, which name the
/// parameter and what was wrong ("limit: invalid digit…"), cut to 200 characters (they may
/// quote a name sent of any length), then the list's `parameters`.
pub(crate) fn bad_query(rejection: &axum::extract::rejection::QueryRejection, parameters: &str) -> Response {
    let detail = rejection.body_text();
    let detail = detail.strip_prefix("Failed to deserialize query string: ").unwrap_or(&detail);
    let detail: String = detail.chars().take(200).collect();
    let message = format!("{detail} (query parameters: {parameters}; limit is a whole number from 1)");
    error(StatusCode::BAD_REQUEST, "invalid_input", &message)
}
