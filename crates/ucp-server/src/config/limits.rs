//! `[limits]`: what one request, one connection and one client may cost us (issue 8 item 5):
//! the size of free-form request objects, the connection timeouts and cap, rate limits and how
//! long expired sessions are kept. Profile-fetch limits live in `[profiles]`.

use serde::{Deserialize, Serialize};

use super::ConfigError;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSettings {
    /// Largest serialized size, in bytes, of each free-form object of a request
    /// (`attribution`, `context`, `signals`); a bigger one is `invalid_input` naming the field.
    pub max_object_bytes: usize,
    pub connections: ConnectionLimits,
    pub rate: RateLimits,
    /// How long an expired (or canceled) cart or checkout is kept before it is deleted, in
    /// seconds after it expired. Completed checkouts are kept: their orders need them.
    pub session_retention_secs: i64,
}

impl Default for LimitSettings {
    fn default() -> Self {
        LimitSettings {
            max_object_bytes: 16 * 1024,
            connections: ConnectionLimits::default(),
            rate: RateLimits::default(),
            session_retention_secs: 7 * 24 * 3600,
        }
    }
}

/// Per-connection timeouts and the connection cap, on every listener (slowloris).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectionLimits {
    /// Connections open at once; further ones wait in the kernel's backlog until one closes.
    pub max_connections: usize,
    /// Time a client has to send a request's whole header block, in milliseconds.
    pub header_read_timeout_ms: u64,
    /// Time a client has to send a request's whole body, in milliseconds (then 400).
    pub body_read_timeout_ms: u64,
    /// A connection with no bytes read or written for this long is closed, in milliseconds.
    pub idle_timeout_ms: u64,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: 10_000,
            header_read_timeout_ms: 10_000,
            body_read_timeout_ms: 10_000,
            idle_timeout_ms: 60_000,
        }
    }
}

/// Rate limits per client IP and per platform (GCRA, `governor`). Off by default: turn them
/// on with `enabled = true` (`UCPD_LIMITS__RATE__ENABLED=true`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct RateLimits {
    #[serde(deserialize_with = "super::values::flag")]
    pub enabled: bool,
    /// Sustained requests per second from one client IP.
    pub per_ip_per_sec: u32,
    /// Requests one client IP may send at once above the sustained rate.
    pub per_ip_burst: u32,
    /// Sustained requests per second for one platform (its authenticated principal, else the
    /// profile URL it claims).
    pub per_platform_per_sec: u32,
    pub per_platform_burst: u32,
    /// Addresses or CIDRs of reverse proxies whose `X-Forwarded-For` names the client.
    /// Requests from anywhere else are keyed by their socket address.
    #[serde(deserialize_with = "super::values::list")]
    pub trusted_proxies: Vec<String>,
    /// Most clients (and most platforms) tracked at once; beyond it, new ones share one bucket.
    pub max_keys: usize,
}

impl Default for RateLimits {
    fn default() -> Self {
        RateLimits {
            enabled: false,
            per_ip_per_sec: 50,
            per_ip_burst: 200,
            per_platform_per_sec: 200,
            per_platform_burst: 1000,
            trusted_proxies: Vec::new(),
            max_keys: 100_000,
        }
    }
}

impl RateLimits {
    /// The trusted proxies, parsed (a bare address is a /32 or /128).
    pub fn proxies(&self) -> Result<Vec<ipnet::IpNet>, ConfigError> {
        self.trusted_proxies
            .iter()
            .map(|text| {
                text.parse::<ipnet::IpNet>()
                    .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
                    .map_err(|_| {
                        ConfigError(format!("limits.rate.trusted_proxies: {text:?} is not an address or CIDR"))
                    })
            })
            .collect()
    }
}

impl LimitSettings {
    /// The rules a single value cannot check as it loads.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.max_object_bytes < 1024 {
            return Err(ConfigError("limits.max_object_bytes must be at least 1024".into()));
        }
        let connections = &self.connections;
        if connections.max_connections == 0 {
            return Err(ConfigError("limits.connections.max_connections must be at least 1".into()));
        }
        for (key, value) in [
            ("header_read_timeout_ms", connections.header_read_timeout_ms),
            ("body_read_timeout_ms", connections.body_read_timeout_ms),
            ("idle_timeout_ms", connections.idle_timeout_ms),
        ] {
            if value < 100 {
                return Err(ConfigError(format!("limits.connections.{key} must be at least 100")));
            }
        }
        let rate = &self.rate;
        if rate.enabled
            && [rate.per_ip_per_sec, rate.per_ip_burst, rate.per_platform_per_sec, rate.per_platform_burst].contains(&0)
        {
            return Err(ConfigError("limits.rate: every rate and burst must be at least 1".into()));
        }
        if rate.max_keys == 0 {
            return Err(ConfigError("limits.rate.max_keys must be at least 1".into()));
        }
        rate.proxies()?;
        if self.session_retention_secs < 0 {
            return Err(ConfigError("limits.session_retention_secs must not be negative".into()));
        }
        Ok(())
    }
}
