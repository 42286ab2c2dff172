//! Checks every request passes before any transport handles it: the Host allow-list and the
//! Origin rule (MCP's DNS-rebinding defence). One function, rendered by each transport in its
//! own error shape. The trust layer (credentials, signatures, rate limits) will join here.

use axum::http::{HeaderMap, header};

use crate::error::{ApiError, ErrorKind};
use crate::state::AppState;

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

/// Takes a place among the requests in flight, or answers 503 when the server is full.
pub fn admit(state: &AppState) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    state.in_flight.clone().try_acquire_owned().map_err(|_| {
        tracing::warn!("overloaded: refusing a request with 503");
        ApiError::new(ErrorKind::Unavailable, "the server is at capacity; retry shortly")
    })
}

/// `shop.example:8443` → `shop.example`; `[::1]:80` → `[::1]`.
pub fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.rsplit_once(':')
        .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host })
}
