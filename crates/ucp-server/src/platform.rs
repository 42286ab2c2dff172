//! Who is calling: the platform profile named by `UCP-Agent` (or MCP `meta`), fetched
//! safely and cached, and the negotiation of version and capabilities against ours.
//!
//! Fetch rules: https only (plain http from loopback when `dev_insecure_profiles` is on), no
//! redirects, a timeout, a body cap, and an SSRF guard that checks every resolved address
//! (the connection only ever goes to a vetted address, so DNS rebinding cannot slip past).

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderValue;
pub use ucp_protocol::negotiation::Negotiated;
use ucp_protocol::negotiation::{Declaration, NegotiationError, Offer};
use ucp_protocol::profile::ProfileError;

use crate::config::ProfileSettings;
use crate::discovery::BusinessProfile;
use crate::error::{ApiError, ErrorKind};

/// What negotiation needs from a platform's profile.
#[derive(Debug, Clone)]
pub struct PlatformProfile {
    pub url: String,
    pub version: String,
    /// Capability name → versions the platform declares.
    pub capabilities: BTreeMap<String, Vec<String>>,
    /// Public keys (`keys` or `signing_keys`), for signature checks.
    pub keys: Vec<serde_json::Value>,
    /// The same keys as verifying keys (unusable ones kept with the reason).
    pub signature_keys: crate::signatures::keys::KeySet,
    /// Payment handler names the platform declares it can use; empty when it declares none.
    pub payment_handlers: Vec<String>,
}

/// Resolves, fetches, validates and caches platform profiles.
#[derive(Clone)]
pub struct PlatformResolver {
    client: reqwest::Client,
    profiles: moka::future::Cache<String, Arc<PlatformProfile>>,
    failures: moka::future::Cache<String, ApiError>,
    /// Origins whose profile was force-refreshed (unknown signature `keyid`) within the TTL.
    refreshed: moka::future::Cache<String, ()>,
    settings: ProfileSettings,
    allow_loopback_http: bool,
}

impl std::fmt::Debug for PlatformResolver {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PlatformResolver").finish_non_exhaustive()
    }
}

impl PlatformResolver {
    pub fn new(settings: &ProfileSettings, allow_loopback_http: bool) -> Result<PlatformResolver, String> {
        let timeout = Duration::from_millis(settings.fetch_timeout_ms);
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(3)))
            .user_agent(concat!("ucpd/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(GuardedResolver { allow_loopback: allow_loopback_http }))
            .no_proxy()
            .build()
            .map_err(|error| format!("building the profile client: {error}"))?;
        Ok(PlatformResolver {
            client,
            profiles: moka::future::Cache::builder()
                .max_capacity(settings.cache_capacity)
                .time_to_live(Duration::from_secs(settings.cache_ttl_secs))
                .build(),
            failures: moka::future::Cache::builder()
                .max_capacity(settings.cache_capacity)
                .time_to_live(Duration::from_secs(settings.failure_ttl_secs.max(1)))
                .build(),
            refreshed: moka::future::Cache::builder()
                .max_capacity(settings.cache_capacity)
                .time_to_live(Duration::from_secs(settings.cache_ttl_secs))
                .build(),
            settings: settings.clone(),
            allow_loopback_http,
        })
    }

    /// Picks the profile URL: the `UCP-Agent` header when present, else the MCP `meta` value.
    pub fn profile_url(&self, header: Option<&HeaderValue>, meta: Option<&str>) -> Result<String, ApiError> {
        let url = match header {
            Some(value) => profile_from_header(value)?,
            None => meta.map(str::to_owned).ok_or_else(|| {
                ApiError::new(ErrorKind::InvalidProfileUrl, "no platform profile: send a UCP-Agent header")
            })?,
        };
        Ok(self.settings.aliases.get(&url).cloned().unwrap_or(url))
    }

    /// The platform's profile, from cache or fetched now.
    pub async fn resolve(&self, url: &str) -> Result<Arc<PlatformProfile>, ApiError> {
        if let Some(profile) = self.profiles.get(url).await {
            return Ok(profile);
        }
        if let Some(error) = self.failures.get(url).await {
            return Err(error);
        }
        let result = self
            .profiles
            .try_get_with(url.to_owned(), async { self.fetch(url).await.map(Arc::new) })
            .await
            .map_err(|error: Arc<ApiError>| (*error).clone());
        if let Err(error) = &result {
            tracing::warn!(profile = url, code = ?error.kind, reason = %error.message, "platform profile rejected");
            self.failures.insert(url.to_owned(), error.clone()).await;
        }
        result
    }

    /// Fetches the profile at `url` again and replaces the cached copy, at most once per
    /// cache TTL per origin (for a signature whose `keyid` the cached profile lacks). `None`
    /// when the origin was refreshed within the TTL already, or the fetch failed.
    pub async fn refresh(&self, url: &str) -> Option<Arc<PlatformProfile>> {
        let origin = url::Url::parse(url).ok()?.origin().ascii_serialization();
        if !self.refreshed.entry(origin).or_insert(()).await.is_fresh() {
            return None;
        }
        let profile = Arc::new(self.fetch(url).await.ok()?);
        self.profiles.insert(url.to_owned(), Arc::clone(&profile)).await;
        Some(profile)
    }

    async fn fetch(&self, text: &str) -> Result<PlatformProfile, ApiError> {
        let url = self.check_url(text)?;
        if let Some(host) = url.host_str() {
            let port = url.port_or_known_default().unwrap_or(443);
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let addresses = tokio::net::lookup_host((host, port)).await.map_err(|error| {
                ApiError::new(ErrorKind::InvalidProfileUrl, format!("profile host {host} does not resolve: {error}"))
            })?;
            let addresses: Vec<SocketAddr> = addresses.collect();
            if addresses.is_empty()
                || addresses.iter().any(|address| !address_allowed(address.ip(), self.allow_loopback_http))
            {
                return Err(ApiError::new(
                    ErrorKind::InvalidProfileUrl,
                    format!("profile host {host} resolves to a private, loopback or reserved address"),
                ));
            }
        }
        let unreachable = |reason: String| ApiError::new(ErrorKind::ProfileUnreachable, reason);
        let mut response = self
            .client
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|error| unreachable(format!("fetching {text} failed: {}", error_chain(&error))))?;
        let status = response.status();
        if status.is_redirection() {
            return Err(unreachable(format!("{text} answered {status}; profile fetches do not follow redirects")));
        }
        if !status.is_success() {
            return Err(unreachable(format!("{text} answered {status}")));
        }
        let mut body = Vec::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|error| unreachable(format!("reading {text}: {error}")))?
        {
            if body.len() + chunk.len() > self.settings.max_bytes {
                return Err(ApiError::new(
                    ErrorKind::ProfileMalformed,
                    format!("profile {text} is larger than {} bytes", self.settings.max_bytes),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        parse_profile(text, &body)
    }

    fn check_url(&self, text: &str) -> Result<url::Url, ApiError> {
        let invalid =
            |reason: &str| ApiError::new(ErrorKind::InvalidProfileUrl, format!("profile URL {text:?} {reason}"));
        let url = url::Url::parse(text).map_err(|_| invalid("is not an absolute URL"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("must not carry user info"));
        }
        let loopback_host = match url.host() {
            Some(url::Host::Domain(domain)) => domain == "localhost",
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            None => return Err(invalid("has no host")),
        };
        match url.scheme() {
            "https" => Ok(url),
            "http" if self.allow_loopback_http && loopback_host => Ok(url),
            _ => Err(invalid("must use https")),
        }
    }
}

/// Reads `profile` from a `UCP-Agent` dictionary: `profile="https://…"` (an sf-string).
fn profile_from_header(value: &HeaderValue) -> Result<String, ApiError> {
    let invalid = |reason: &str| {
        ApiError::new(
            ErrorKind::InvalidProfileUrl,
            format!("UCP-Agent header {reason}; expected profile=\"https://…\""),
        )
    };
    let text = value.to_str().map_err(|_| invalid("is not ASCII"))?;
    let dictionary: sfv::Dictionary =
        sfv::Parser::new(text).parse_dictionary().map_err(|_| invalid("is not an RFC 8941 dictionary"))?;
    let entry = dictionary
        .iter()
        .find(|(key, _)| key.as_str() == "profile")
        .map(|(_, entry)| entry)
        .ok_or_else(|| invalid("has no profile member"))?;
    match entry {
        sfv::ListEntry::Item(item) => match item.bare_item.as_string() {
            Some(string) => Ok(string.as_str().to_owned()),
            None => Err(invalid("has a profile that is not a quoted string")),
        },
        sfv::ListEntry::InnerList(_) => Err(invalid("has a profile that is a list")),
    }
}

/// Validates what negotiation needs (`ucp_protocol::profile::PlatformProfile::parse`);
/// tolerates what real platforms omit (logged).
pub fn parse_profile(url: &str, body: &[u8]) -> Result<PlatformProfile, ApiError> {
    let parsed = ucp_protocol::profile::PlatformProfile::parse(body).map_err(|error| match error {
        ProfileError::Malformed(reason) => {
            ApiError::new(ErrorKind::ProfileMalformed, format!("profile {url}: {reason}"))
        }
    })?;
    for name in &parsed.incomplete_capabilities {
        tracing::warn!(profile = url, capability = %name, "platform capability entry lacks spec or schema; tolerated");
    }
    Ok(PlatformProfile {
        url: url.to_owned(),
        version: parsed.version,
        capabilities: parsed.capabilities,
        signature_keys: crate::signatures::keys::KeySet::from_jwks(&parsed.keys),
        keys: parsed.keys,
        payment_handlers: parsed.payment_handlers,
    })
}

/// Version check and capability intersection (overview §5).
pub fn negotiate(ours: &BusinessProfile, platform: &PlatformProfile) -> Result<Negotiated, ApiError> {
    let business = Offer { accepted_versions: &ours.accepted_versions, capabilities: &ours.offered };
    let declared = Declaration { version: &platform.version, capabilities: &platform.capabilities };
    ucp_protocol::negotiation::negotiate(business, declared).map_err(|error| match error {
        NegotiationError::VersionUnsupported { .. } => ApiError::new(ErrorKind::VersionUnsupported, error.to_string()),
    })
}

/// Whether a profile fetch may connect to `address`.
fn address_allowed(address: IpAddr, allow_loopback: bool) -> bool {
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        other => other,
    };
    if address.is_loopback() {
        return allow_loopback;
    }
    match address {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            !(v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
                || first == 0x0064)
        }
    }
}

/// Resolves names for profile fetches and drops every address a fetch may not reach.
struct GuardedResolver {
    allow_loopback: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_loopback = self.allow_loopback;
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0))
                .await?
                .filter(|address| address_allowed(address.ip(), allow_loopback))
                .collect();
            if addresses.is_empty() {
                return Err("no permitted address for the profile host".into());
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    // Conformance 26: loopback, link-local, private and metadata addresses are refused.
    #[test]
    fn ssrf_guard_refuses_internal_addresses() {
        for blocked in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "100.64.0.1",
        ] {
            assert!(!address_allowed(blocked.parse().unwrap(), false), "{blocked} must be refused");
        }
        assert!(address_allowed("127.0.0.1".parse().unwrap(), true));
        assert!(!address_allowed("10.0.0.1".parse().unwrap(), true));
        for allowed in ["93.184.216.34", "2606:2800:220:1::1"] {
            assert!(address_allowed(allowed.parse().unwrap(), false), "{allowed} must be allowed");
        }
    }

    // Conformance 28: UCP-Agent is an RFC 8941 dictionary with a quoted profile.
    #[test]
    fn ucp_agent_header_is_a_dictionary_with_a_quoted_profile() {
        let header = HeaderValue::from_static(r#"profile="https://agent.example/p/x.json", version="1""#);
        assert_eq!(profile_from_header(&header).unwrap(), "https://agent.example/p/x.json");
        for bad in [r#"profile=https://agent.example"#, r#"profile=("a" "b")"#, "version=1", "@@@"] {
            let error = profile_from_header(&HeaderValue::from_str(bad).unwrap()).unwrap_err();
            assert_eq!(error.kind, ErrorKind::InvalidProfileUrl, "{bad}");
        }
    }

    #[test]
    fn profile_validation_tolerates_missing_spec_but_not_missing_version() {
        let good = br#"{"ucp":{"version":"2026-04-08","capabilities":{"dev.ucp.shopping.catalog.search":[{"version":"2026-04-08"}]}}}"#;
        let profile = parse_profile("https://p.example", good).unwrap();
        assert_eq!(profile.capabilities["dev.ucp.shopping.catalog.search"], vec!["2026-04-08"]);
        for bad in [
            &b"<html>"[..],
            br#"{}"#,
            br#"{"ucp":{}}"#,
            br#"{"ucp":{"version":"draft"}}"#,
            br#"{"ucp":{"version":"2026-04-08","capabilities":[]}}"#,
        ] {
            assert_eq!(parse_profile("https://p.example", bad).unwrap_err().kind, ErrorKind::ProfileMalformed);
        }
    }
}
