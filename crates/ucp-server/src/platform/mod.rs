//! Who is calling: the platform profile named by `UCP-Agent` (or MCP `meta`), fetched
//! safely and cached, and the negotiation of version and capabilities against ours.
//!
//! Fetch rules: https only (plain http from loopback when `dev_insecure_profiles` is on), no
//! redirects, a timeout, a body cap, and an SSRF guard that checks every resolved address
//! (the connection only ever goes to a vetted address, so DNS rebinding cannot slip past).
//!
//! Bounds on what unknown platforms can make us spend (security.md §3, issue 8 item 5): the
//! cache is weighed in bytes (`profiles.cache_max_bytes`), fetches run at most
//! `profiles.max_concurrent_fetches` at once and `profiles.fetches_per_minute` overall, and
//! names resolve on the async runtime (hickory) within `profiles.dns_timeout_ms`, never on the
//! blocking pool the store uses.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderValue;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use quick_cache::sync::{Cache, EntryAction, EntryResult};
pub use ucp_protocol::negotiation::Negotiated;
use ucp_protocol::profile::ProfileError;

use crate::config::ProfileSettings;
use crate::error::{ApiError, ErrorKind};
use crate::ssrf::{Dns, error_chain};

mod cache;
mod profile;

use cache::{CachedProfile, ProfileWeight, profile_cache};
pub use profile::{PlatformProfile, negotiate};

/// Resolves, fetches, validates and caches platform profiles.
#[derive(Clone)]
pub struct PlatformResolver {
    client: reqwest::Client,
    /// Profiles by URL, each until its time to live runs out. Every call with a profile reads
    /// it, so it is a `quick_cache` (a read lock and a reference bit per hit): moka's read
    /// bookkeeping (its read log, SipHash, its clock) was 1,500 instructions of a warm
    /// get_product's 56,000 (BENCHMARKS.md, "A profile from the cache without moka"). The
    /// caches below are read only on a miss.
    profiles: Arc<Cache<String, CachedProfile, ProfileWeight>>,
    ttl: Duration,
    failures: moka::future::Cache<String, ApiError>,
    /// Origins whose profile was force-refreshed (unknown signature `keyid`) within the TTL.
    refreshed: moka::future::Cache<String, ()>,
    /// Places for fetches running at once.
    fetches: Arc<tokio::sync::Semaphore>,
    /// Fetches started per minute, across all platforms.
    budget: Arc<DefaultDirectRateLimiter>,
    dns: Dns,
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
        let dns = Dns::new(settings)?;
        let client = dns.guarded_client(allow_loopback_http, timeout)?;
        let per_minute = NonZeroU32::new(settings.fetches_per_minute.max(1)).unwrap_or(NonZeroU32::MIN);
        // Weights are u32; an entry's weight saturates rather than wraps.
        let weight = |bytes: usize| u32::try_from(bytes).unwrap_or(u32::MAX);
        Ok(PlatformResolver {
            client,
            profiles: Arc::new(profile_cache(settings)),
            ttl: Duration::from_secs(settings.cache_ttl_secs),
            failures: moka::future::Cache::builder()
                .max_capacity((settings.cache_max_bytes / 16).max(64 * 1024))
                .weigher(move |url: &String, error: &ApiError| weight(url.len() + error.message.len() + 64))
                .time_to_live(Duration::from_secs(settings.failure_ttl_secs.max(1)))
                .build(),
            refreshed: moka::future::Cache::builder()
                .max_capacity(settings.cache_capacity)
                .time_to_live(Duration::from_secs(settings.cache_ttl_secs))
                .build(),
            fetches: Arc::new(tokio::sync::Semaphore::new(settings.max_concurrent_fetches.max(1))),
            budget: Arc::new(RateLimiter::direct(Quota::per_minute(per_minute))),
            dns,
            settings: settings.clone(),
            allow_loopback_http,
        })
    }

    /// The guarded name resolution profile fetches use, and whether loopback is allowed
    /// (development mode): order webhooks go out through the same guard.
    pub(crate) fn guard(&self) -> (Dns, bool) {
        (self.dns.clone(), self.allow_loopback_http)
    }

    /// Bytes the profile cache holds now (its weighted size).
    pub fn cached_bytes(&self) -> u64 {
        self.profiles.weight()
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
        if let Some(cached) = self.profiles.get(url)
            && cached.fresh()
        {
            return Ok(cached.profile);
        }
        // Boxed: a fetch's future is large, and a hit (nearly every call) should not carry it.
        Box::pin(self.resolve_missed(url)).await
    }

    /// [`PlatformResolver::resolve`] of a profile the cache does not hold, or holds past its
    /// time to live. One call per URL fetches at a time: the others wait for its profile (or,
    /// if it fails or is cancelled, one of them takes its place, after the failure is noted).
    async fn resolve_missed(&self, url: &str) -> Result<Arc<PlatformProfile>, ApiError> {
        let guard = loop {
            let entry = self.profiles.entry_async(url, |_, cached: &mut CachedProfile| {
                if cached.fresh() {
                    EntryAction::Retain(Arc::clone(&cached.profile))
                } else {
                    EntryAction::ReplaceWithGuard
                }
            });
            match entry.await {
                EntryResult::Retained(profile) => return Ok(profile),
                EntryResult::Vacant(guard) | EntryResult::Replaced(guard, _) => break guard,
                // Neither is asked for (no `Remove`; the async entry has no timeout).
                EntryResult::Removed(..) | EntryResult::Timeout => continue,
            }
        };
        // Checked with the guard held: a call that waited on a failed fetch and took its place
        // finds the failure noted, rather than fetching again.
        if let Some(error) = self.failures.get(url).await {
            return Err(error);
        }
        let result = self.fetch(url).await.map(Arc::new);
        match &result {
            Ok(profile) => {
                // Refused only if the entry was replaced meanwhile (a `refresh`): that one stays.
                let _ = guard.insert(CachedProfile::new(Arc::clone(profile), self.ttl));
            }
            Err(error) => self.note_failure(url, error).await,
        }
        result
    }

    /// Logs a failed fetch and remembers it for `failure_ttl_secs`, unless it was our overload.
    async fn note_failure(&self, url: &str, error: &ApiError) {
        tracing::warn!(profile = url, code = ?error.kind, reason = %error.message, "platform profile rejected");
        // Our own overload is not the platform's fault: it is not remembered.
        if error.kind != ErrorKind::Unavailable {
            self.failures.insert(url.to_owned(), error.clone()).await;
        }
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
        self.profiles.insert(url.to_owned(), CachedProfile::new(Arc::clone(&profile), self.ttl));
        Some(profile)
    }

    async fn fetch(&self, text: &str) -> Result<PlatformProfile, ApiError> {
        let url = self.check_url(text)?;
        let busy = |reason: &str| ApiError::new(ErrorKind::Unavailable, format!("{reason}; retry shortly"));
        if self.budget.check().is_err() {
            tracing::warn!(profile = text, "profile fetch budget spent; refusing with 503");
            return Err(busy("too many unknown platform profiles to fetch right now"));
        }
        let wait = Duration::from_millis(self.settings.fetch_timeout_ms);
        let _place = match tokio::time::timeout(wait, self.fetches.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) | Err(_) => return Err(busy("too many platform profile fetches in progress")),
        };
        if let Some(host) = url.host_str() {
            self.dns
                .vet(host, self.allow_loopback_http)
                .await
                .map_err(|error| ApiError::new(error.kind, format!("profile {}", error.message)))?;
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
/// tolerates what real platforms omit and leaves out capability entries another authority
/// publishes (overview.md §3), both logged.
pub fn parse_profile(url: &str, body: &[u8]) -> Result<PlatformProfile, ApiError> {
    let parsed = ucp_protocol::profile::PlatformProfile::parse(body).map_err(|error| match error {
        ProfileError::Malformed(reason) => {
            ApiError::new(ErrorKind::ProfileMalformed, format!("profile {url}: {reason}"))
        }
    })?;
    if let Some(first) = parsed.incomplete_capabilities.first() {
        // One line a profile, however many capabilities it leaves incomplete.
        tracing::warn!(
            profile = url,
            capability = %first,
            capabilities = parsed.incomplete_capabilities.len(),
            "platform capability entry lacks spec or schema; tolerated"
        );
    }
    if let Some(first) = parsed.unbound_capabilities.first() {
        tracing::warn!(
            profile = url,
            capability = %first,
            capabilities = parsed.unbound_capabilities.len(),
            "platform capability entry's spec or schema is not published by its namespace's authority; entry left out"
        );
    }
    if !parsed.missing_members.is_empty() {
        tracing::info!(profile = url, members = ?parsed.missing_members, "platform profile lacks required ucp members; tolerated");
    }
    Ok(PlatformProfile {
        url: url.to_owned(),
        version: parsed.version,
        capabilities: parsed.capabilities,
        signature_keys: crate::signatures::keys::KeySet::from_jwks(&parsed.keys),
        keys: parsed.keys,
        payment_handlers: parsed.payment_handlers,
        webhook_urls: parsed.webhook_urls,
        body_bytes: body.len(),
        terms: std::sync::OnceLock::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile past its time to live is not served: the resolver fetches it again (here it
    /// cannot: the host does not resolve).
    #[tokio::test]
    async fn a_profile_past_its_time_to_live_is_fetched_again() {
        let settings = ProfileSettings { fetch_timeout_ms: 500, dns_timeout_ms: 500, ..ProfileSettings::default() };
        let resolver = PlatformResolver::new(&settings, false).unwrap();
        let url = "https://agent.invalid/profile.json";
        let cached = |ttl| {
            let body = br#"{"ucp":{"version":"2026-04-08","capabilities":{}}}"#;
            CachedProfile::new(Arc::new(parse_profile(url, body).unwrap()), ttl)
        };
        resolver.profiles.insert(url.to_owned(), cached(Duration::from_secs(60)));
        assert_eq!(resolver.resolve(url).await.unwrap().url, url, "fresh: served from the cache");
        resolver.profiles.insert(url.to_owned(), cached(Duration::ZERO));
        assert!(resolver.resolve(url).await.is_err(), "expired: fetched again, and the fetch fails");
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
