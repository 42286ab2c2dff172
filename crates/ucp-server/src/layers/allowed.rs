//! The Host allow-list and the allowed Origins, computed once at start, and the check of a
//! request's headers against them.

use std::net::SocketAddr;

use axum::http::{HeaderMap, header};

use crate::config::HttpSettings;
use crate::error::{ApiError, ErrorKind};

/// Host names and origins we answer for, computed once at start.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    /// Lower-case host names (no port); `*` allows any.
    pub hosts: Vec<String>,
    /// Lower-case origins (`https://shop.example`, `http://127.0.0.1:8080`).
    pub origins: Vec<String>,
}

impl Allowed {
    /// Loopback and the listening address, the public URL's host and origin, and what
    /// `http.allowed_hosts` and `http.allowed_origins` add; each in canonical form.
    pub fn of(http: &HttpSettings, base_url: &str, local_addr: SocketAddr, scheme: &str) -> Allowed {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()];
        let mut origins: Vec<String> = Vec::new();
        let port = local_addr.port();
        for loopback in ["localhost", "127.0.0.1", "[::1]"] {
            origins.push(origin_key(&format!("{scheme}://{loopback}:{port}")));
        }
        if let Ok(url) = url::Url::parse(base_url) {
            if let Some(host) = url.host_str() {
                hosts.push(host_name(&host.to_ascii_lowercase()).to_owned());
            }
            origins.push(origin_key(&url.origin().ascii_serialization()));
        }
        let listen_host = local_addr.ip().to_string();
        if !local_addr.ip().is_unspecified() {
            hosts.push(if local_addr.is_ipv6() { format!("[{listen_host}]") } else { listen_host });
        }
        hosts.extend(http.allowed_hosts.iter().map(|host| host_name(&host.to_ascii_lowercase()).to_owned()));
        origins.extend(http.allowed_origins.iter().map(|origin| origin_key(origin)));
        Allowed { hosts, origins }
    }
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

/// An origin as the allowed list holds it: lower case, without a trailing `/`, the scheme's
/// default port (`:443` for https, `:80` for http, which RFC 6454's serialization leaves out)
/// or one trailing dot on the host (our policy: the fully qualified name is the same host,
/// as for `Host`). Anything else (`null`, no scheme) is kept as it is, lower-cased.
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

/// `shop.example:8443` → `shop.example`; `[::1]:80` → `[::1]`. Anything after an IPv6
/// literal but a port (`[::1]evil.example`) is kept, so the whole text names no host of ours.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.split_once(']') {
            Some((literal, rest)) if rest.is_empty() || is_port(rest) => &host[..=literal.len()],
            _ => host,
        };
    }
    host.rsplit_once(':')
        .map_or(host, |(name, port)| if port.bytes().all(|b| b.is_ascii_digit()) { name } else { host })
}

/// `:8080`.
fn is_port(text: &str) -> bool {
    text.strip_prefix(':').is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_and_an_origin_compare_as_their_canonical_forms() {
        for (host, name) in [
            ("shop.example", "shop.example"),
            ("shop.example.:8080", "shop.example"),
            ("[::1]:80", "[::1]"),
            ("[::1]", "[::1]"),
            ("[::1]evil.example", "[::1]evil.example"),
            ("[::1]:", "[::1]:"),
        ] {
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
            ("https://shop.example:443.evil", "https://shop.example:443.evil"),
            ("https://shop.example.evil.example", "https://shop.example.evil.example"),
        ] {
            assert_eq!(origin_key(origin), key, "{origin}");
        }
    }

    fn origin(allowed: &Allowed, origin: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::ORIGIN, origin.parse().unwrap());
        check(allowed, &headers, None).is_ok()
    }

    // Every origin the list holds is canonical: on a scheme's default port, the loopback
    // origins a browser sends (without the port) are ours, and so are configured ones.
    #[test]
    fn the_allowed_origins_are_held_in_canonical_form() {
        let http = HttpSettings {
            allowed_hosts: vec!["API.shop.example.".into()],
            allowed_origins: vec!["HTTPS://Admin.Shop.Example:443/".into()],
            ..HttpSettings::default()
        };
        let allowed = Allowed::of(&http, "https://shop.example", "127.0.0.1:443".parse().unwrap(), "https");
        for ours in [
            "https://localhost",
            "https://localhost:443",
            "https://127.0.0.1",
            "https://[::1]",
            "https://shop.example",
            "https://admin.shop.example",
        ] {
            assert!(origin(&allowed, ours), "{ours}");
        }
        for theirs in ["http://localhost", "https://localhost:8443", "https://evil.example"] {
            assert!(!origin(&allowed, theirs), "{theirs}");
        }
        assert!(allowed.hosts.contains(&"api.shop.example".to_owned()), "{:?}", allowed.hosts);
        let plain =
            Allowed::of(&HttpSettings::default(), "http://127.0.0.1:80", "127.0.0.1:80".parse().unwrap(), "http");
        assert!(origin(&plain, "http://localhost") && origin(&plain, "http://127.0.0.1:80"));
    }
}
