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
        let name = host_name(host);
        if !allowed.hosts.iter().any(|allowed| allowed == "*" || allowed.eq_ignore_ascii_case(name)) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("Host {host:?} is not served here; add it to http.allowed_hosts"),
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let key = origin_key(origin);
        if !allowed.origins.iter().any(|allowed| allowed == "*" || *allowed == key) {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!("Origin {origin:?} is not allowed; add it to http.allowed_origins"),
            ));
        }
    }
    Ok(())
}

/// A Host's name as the allow-list holds it: without its port and one trailing dot (the
/// fully qualified `shop.example.` is `shop.example`).
pub fn host_name(host: &str) -> &str {
    let name = strip_port(host);
    name.strip_suffix('.').unwrap_or(name)
}

/// An origin as the allowed list holds it (RFC 6454 compares serializations): lower case,
/// without a trailing `/`, the scheme's default port (`:443` for https, `:80` for http) or one
/// trailing dot on the host. Anything else (`null`, no scheme) is kept as it is, lower-cased.
pub fn origin_key(origin: &str) -> String {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    let Some((scheme, authority)) = origin.split_once("://") else {
        return origin;
    };
    let host = strip_port(authority);
    let port = &authority[host.len()..];
    let default_port = match scheme {
        "https" => ":443",
        "http" => ":80",
        _ => "",
    };
    let port = if port == default_port { "" } else { port };
    let host = host.strip_suffix('.').unwrap_or(host);
    format!("{scheme}://{host}{port}")
}

/// `shop.example:8443` → `shop.example`; `[::1]:80` → `[::1]`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.rsplit_once(':')
        .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_and_an_origin_compare_as_their_canonical_forms() {
        for (host, name) in
            [("shop.example", "shop.example"), ("shop.example.:8080", "shop.example"), ("[::1]:80", "[::1]")]
        {
            assert_eq!(host_name(host), name);
        }
        for (origin, key) in [
            ("https://Shop.Example:443/", "https://shop.example"),
            ("https://shop.example.", "https://shop.example"),
            ("http://shop.example:80", "http://shop.example"),
            ("http://shop.example:443", "http://shop.example:443"),
            ("https://shop.example:8443", "https://shop.example:8443"),
            ("http://[::1]:8080", "http://[::1]:8080"),
            ("null", "null"),
        ] {
            assert_eq!(origin_key(origin), key, "{origin}");
        }
    }
}
