//! The Host allow-list and the Origin rule (MCP's DNS-rebinding defence, the pages' cross-site
//! form defence), checked before the body is read.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::Response;

use super::Scope;
use crate::error::{ApiError, ErrorKind};
use crate::state::AppState;

/// The layer: refuses a foreign Host or Origin with 403 in the binding's shape.
pub(super) async fn guard(State(scope): State<Scope>, request: Request, next: Next) -> Response {
    match check(&scope.state, request.headers()) {
        Ok(()) => next.run(request).await,
        Err(error) => super::reject(scope.binding, request, &error).await,
    }
}

/// Host names and origins we answer for, computed once at start.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    /// Lower-case host names (no port); `*` allows any.
    pub hosts: Vec<String>,
    /// Lower-case origins (`https://shop.example`, `http://127.0.0.1:8080`).
    pub origins: Vec<String>,
}

pub fn check(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let allowed = &state.allowed;
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or_default().to_ascii_lowercase();
        let name = strip_port(&host);
        if !allowed.hosts.iter().any(|allowed| allowed == "*" || allowed == name) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("Host {host:?} is not served here; add it to http.allowed_hosts"),
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default().trim_end_matches('/').to_ascii_lowercase();
        if !allowed.origins.iter().any(|allowed| allowed == "*" || *allowed == origin) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("Origin {origin:?} is not allowed; add it to http.allowed_origins"),
            ));
        }
    }
    Ok(())
}

/// `shop.example:8443` → `shop.example`; `[::1]:80` → `[::1]`.
pub fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.rsplit_once(':')
        .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host })
}
