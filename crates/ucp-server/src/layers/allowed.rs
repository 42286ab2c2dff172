//! The Host allow-list and the allowed Origins, computed once at start, and the check of a
//! request's headers against them.

use axum::http::{HeaderMap, header};

use crate::error::{ApiError, ErrorKind};

/// Host names and origins we answer for, computed once at start.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    /// Lower-case host names (no port); `*` allows any.
    pub hosts: Vec<String>,
    /// Lower-case origins (`https://shop.example`, `http://127.0.0.1:8080`).
    pub origins: Vec<String>,
}

/// Refuses a Host that is not ours, and an Origin that is not allowed. The host is the `Host`
/// header, or on HTTP/2 (which has none) the request's `:authority`.
pub fn check(allowed: &Allowed, headers: &HeaderMap, authority: Option<&str>) -> Result<(), ApiError> {
    let host = match headers.get(header::HOST) {
        Some(host) => Some(host.to_str().unwrap_or_default()),
        None => authority,
    };
    if let Some(host) = host {
        let name = strip_port(host);
        if !allowed.hosts.iter().any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(name)) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("Host {host:?} is not served here; add it to http.allowed_hosts"),
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default().trim_end_matches('/');
        if !allowed.origins.iter().any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(origin)) {
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
