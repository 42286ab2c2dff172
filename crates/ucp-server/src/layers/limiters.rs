//! The rate limiters themselves (per IP, per platform): GCRA buckets in keyed limiters over a
//! bounded key set; [`super::ratelimit`] is the layer that consults them.

use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::config::RateLimits;
use crate::error::{ApiError, ErrorKind};

/// The limiters of one server; cheap to clone. `None` inside when rate limits are off; the
/// trusted proxies are kept either way, for the client address the logs name.
#[derive(Clone, Default)]
pub struct RateLimiters {
    inner: Option<Arc<Limiters>>,
    proxies: Arc<[ipnet::IpNet]>,
}

impl std::fmt::Debug for RateLimiters {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("RateLimiters").field("enabled", &self.inner.is_some()).finish()
    }
}

struct Limiters {
    by_ip: DefaultKeyedRateLimiter<u64>,
    by_platform: DefaultKeyedRateLimiter<u64>,
    slots: u64,
    seed: RandomState,
    clock: DefaultClock,
    started: Instant,
    /// Seconds after `started` of the last sweep of idle buckets.
    swept: AtomicU64,
}

/// How often buckets that are full again (idle clients) are dropped.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

impl RateLimiters {
    /// The limiters `settings` ask for (none when `enabled` is false). The settings were
    /// validated at load, so the proxies parse.
    pub fn new(settings: &RateLimits) -> RateLimiters {
        let proxies: Arc<[ipnet::IpNet]> = settings.proxies().unwrap_or_default().into();
        if !settings.enabled {
            return RateLimiters { inner: None, proxies };
        }
        let quota = |rate: u32, burst: u32| {
            let rate = NonZeroU32::new(rate).unwrap_or(NonZeroU32::MIN);
            Quota::per_second(rate).allow_burst(NonZeroU32::new(burst).unwrap_or(rate))
        };
        let clock = DefaultClock::default();
        let limiters = Limiters {
            by_ip: RateLimiter::keyed(quota(settings.per_ip_per_sec, settings.per_ip_burst)),
            by_platform: RateLimiter::keyed(quota(settings.per_platform_per_sec, settings.per_platform_burst)),
            slots: settings.max_keys.max(1) as u64,
            seed: RandomState::new(),
            clock,
            started: Instant::now(),
            swept: AtomicU64::new(0),
        };
        RateLimiters { inner: Some(Arc::new(limiters)), proxies }
    }

    /// Whether any limit is on.
    pub fn enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// The client IP of a request from `peer` with `headers` (through the trusted proxies'
    /// `X-Forwarded-For`), whether or not limits are on.
    pub fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        client_ip(&self.proxies, peer, headers)
    }

    /// One request from client address `ip`: `Ok`, or the 429 to answer.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), ApiError> {
        let Some(limiters) = &self.inner else { return Ok(()) };
        limiters.check(&limiters.by_ip, limiters.slot(ip), "address")
    }

    /// One request from `platform`: `Ok`, or the 429 to answer.
    pub fn check_platform(&self, platform: &str) -> Result<(), ApiError> {
        let Some(limiters) = &self.inner else { return Ok(()) };
        limiters.check(&limiters.by_platform, limiters.slot(platform), "platform")
    }
}

impl Limiters {
    fn slot(&self, key: impl std::hash::Hash) -> u64 {
        self.seed.hash_one(key) % self.slots
    }

    /// `Ok` or the error to answer, for one request against `limiter`.
    fn check(&self, limiter: &DefaultKeyedRateLimiter<u64>, slot: u64, what: &str) -> Result<(), ApiError> {
        self.sweep();
        limiter.check_key(&slot).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            let retry_after_secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
            ApiError::new(
                ErrorKind::RateLimited { retry_after_secs: retry_after_secs.max(1) },
                format!("too many requests from this {what}; retry after {} s", retry_after_secs.max(1)),
            )
        })
    }

    /// Drops idle buckets now and then, so memory follows the clients actually active.
    fn sweep(&self) {
        let now = self.started.elapsed().as_secs();
        let last = self.swept.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= SWEEP_EVERY.as_secs()
            && self.swept.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            self.by_ip.retain_recent();
            self.by_platform.retain_recent();
        }
    }
}

/// The peer, or the client a trusted proxy forwarded for: the right-most `X-Forwarded-For`
/// entry that is not itself a trusted proxy.
fn client_ip(proxies: &[ipnet::IpNet], peer: IpAddr, headers: &HeaderMap) -> IpAddr {
    let trusted = |ip: &IpAddr| proxies.iter().any(|net| net.contains(ip));
    if !trusted(&peer) {
        return peer;
    }
    let mut client = peer;
    for value in headers.get_all("x-forwarded-for").iter().rev() {
        let Ok(text) = value.to_str() else { return client };
        for entry in text.rsplit(',') {
            match entry.trim().parse::<IpAddr>() {
                Ok(ip) if trusted(&ip) => client = ip,
                Ok(ip) => return ip,
                Err(_) => return client,
            }
        }
    }
    client
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    #[test]
    fn forwarded_for_is_trusted_only_from_configured_proxies() {
        let proxies: Vec<ipnet::IpNet> = vec!["10.0.0.0/8".parse().unwrap()];
        let proxy: IpAddr = "10.1.1.1".parse().unwrap();
        let stranger: IpAddr = "203.0.113.9".parse().unwrap();
        // A stranger cannot pick its own key.
        assert_eq!(client_ip(&proxies, stranger, &headers(&["198.51.100.1"])), stranger);
        // Through the proxy: the right-most address that is not a proxy.
        assert_eq!(
            client_ip(&proxies, proxy, &headers(&["1.2.3.4, 198.51.100.7, 10.2.2.2"])),
            "198.51.100.7".parse::<IpAddr>().unwrap()
        );
        assert_eq!(
            client_ip(&proxies, proxy, &headers(&["1.2.3.4", "198.51.100.8"])),
            "198.51.100.8".parse::<IpAddr>().unwrap()
        );
        // Garbage or nothing: the proxy itself.
        assert_eq!(client_ip(&proxies, proxy, &headers(&["nonsense"])), proxy);
        assert_eq!(client_ip(&proxies, proxy, &headers(&[])), proxy);
    }
}
