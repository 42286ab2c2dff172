//! The SSRF guard every outbound request to a platform goes through (profile fetches,
//! order webhooks; security.md §3): names resolve on the async runtime (hickory) with a
//! timeout, and only globally routable addresses are connected to (loopback too in
//! development mode). The connection goes to a vetted address, so DNS rebinding cannot slip
//! past; IP-literal hosts, which never reach a resolver, are checked by [`Dns::vet`].

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{ConnectionConfig, NameServerConfig, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use ip_network::{Ipv4Network, Ipv6Network};

use crate::config::ProfileSettings;
use crate::error::{ApiError, ErrorKind};

/// Whether a profile fetch may connect to `address`: globally routable unicast only, by
/// `ip_network`'s classification of the IANA special-purpose registries (private, shared,
/// link-local, site-local `fec0::/10`, unique-local, documentation, benchmarking, reserved),
/// plus the IPv6 prefixes that embed or tunnel to an IPv4 address (their target is not the
/// address we vetted). Loopback only when `allow_loopback` (development).
pub(crate) fn address_allowed(address: IpAddr, allow_loopback: bool) -> bool {
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(IpAddr::V6(v6)),
        other => other,
    };
    if address.is_loopback() {
        return allow_loopback;
    }
    match address {
        IpAddr::V4(v4) => !v4.is_multicast() && Ipv4Network::from(v4).is_global(),
        IpAddr::V6(v6) => Ipv6Network::from(v6).is_unicast_global() && !tunnels_elsewhere(v6),
    }
}

/// IPv6 ranges that stand for (or route to) an address other than themselves: IPv4-compatible
/// `::a.b.c.d` (and the rest of `::/96`), NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, discard-only
/// `100::/64`, Teredo `2001::/32`, the IETF protocol block `2001::/23`, 6to4 `2002::/16`, and
/// the deprecated `3ffe::/16` (6bone).
fn tunnels_elsewhere(address: Ipv6Addr) -> bool {
    const RANGES: [&str; 7] =
        ["::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2002::/16", "3ffe::/16"];
    RANGES.iter().any(|range| range.parse::<ipnet::Ipv6Net>().is_ok_and(|net| net.contains(&address)))
}

/// Name resolution for profile hosts: hickory on the async runtime, bounded by
/// `profiles.dns_timeout_ms`, with the system's name servers (or `profiles.dns_servers`).
#[derive(Clone)]
pub(crate) struct Dns {
    resolver: Arc<TokioResolver>,
    timeout: Duration,
}

impl Dns {
    pub(crate) fn new(settings: &ProfileSettings) -> Result<Dns, String> {
        let timeout = Duration::from_millis(settings.dns_timeout_ms.max(1));
        let mut builder = if settings.dns_servers.is_empty() {
            match TokioResolver::builder_tokio() {
                Ok(builder) => builder,
                Err(error) => {
                    tracing::warn!(%error, "no system DNS configuration; profile hosts given by name will not resolve");
                    TokioResolver::builder_with_config(ResolverConfig::default(), TokioRuntimeProvider::default())
                }
            }
        } else {
            let mut config = ResolverConfig::default();
            for server in &settings.dns_servers {
                let mut connection = ConnectionConfig::udp();
                connection.port = server.port();
                config.add_name_server(NameServerConfig::new(server.ip(), true, vec![connection]));
            }
            TokioResolver::builder_with_config(config, TokioRuntimeProvider::default())
        };
        let options = builder.options_mut();
        options.timeout = timeout;
        options.attempts = 1;
        let resolver = builder.build().map_err(|error| format!("building the DNS resolver: {error}"))?;
        Ok(Dns { resolver: Arc::new(resolver), timeout })
    }

    /// Every address of `host` (an IP literal resolves to itself).
    pub(crate) async fn resolve(&self, host: &str) -> Result<Vec<IpAddr>, ApiError> {
        match tokio::time::timeout(self.timeout, self.resolver.lookup_ip(host)).await {
            Ok(Ok(lookup)) => Ok(lookup.iter().collect()),
            Ok(Err(error)) => {
                // The resolver's own text is a debug dump of its query: logged, not sent.
                tracing::debug!(host, %error, "host does not resolve");
                Err(ApiError::new(ErrorKind::InvalidProfileUrl, format!("host {host} does not resolve")))
            }
            Err(_) => Err(ApiError::new(
                ErrorKind::ProfileUnreachable,
                format!("resolving host {host} took longer than {} ms", self.timeout.as_millis()),
            )),
        }
    }
}

/// Resolves names for profile fetches and drops every address a fetch may not reach.
pub(crate) struct GuardedResolver {
    pub(crate) dns: Dns,
    pub(crate) allow_loopback: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_loopback = self.allow_loopback;
        let dns = self.dns.clone();
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = dns
                .resolve(name.as_str())
                .await
                .map_err(|error| error.message)?
                .into_iter()
                .filter(|address| address_allowed(*address, allow_loopback))
                .map(|address| SocketAddr::new(address, 0))
                .collect();
            if addresses.is_empty() {
                return Err("no permitted address for the host (private, loopback or reserved)".into());
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl Dns {
    /// Resolves `host` and fails unless every address it has is one [`address_allowed`]
    /// permits (a name with one private address among public ones is refused whole).
    pub(crate) async fn vet(&self, host: &str, allow_loopback: bool) -> Result<(), ApiError> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let addresses = self.resolve(host).await?;
        if addresses.is_empty() || addresses.iter().any(|address| !address_allowed(*address, allow_loopback)) {
            return Err(ApiError::new(
                ErrorKind::InvalidProfileUrl,
                format!("host {host} resolves to a private, loopback or reserved address"),
            ));
        }
        Ok(())
    }

    /// A client that connects only to addresses the guard permits, follows no redirect, uses
    /// no proxy and gives up after `timeout`.
    pub(crate) fn guarded_client(&self, allow_loopback: bool, timeout: Duration) -> Result<reqwest::Client, String> {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(3)))
            .user_agent(concat!("ucpd/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(GuardedResolver { dns: self.clone(), allow_loopback }))
            .no_proxy()
            .build()
            .map_err(|error| format!("building an outbound client: {error}"))
    }
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
            // IPv4-compatible, site-local, 6to4, NAT64, Teredo, multicast (issue 8 item 6).
            "::127.0.0.1",
            "::10.0.0.1",
            "::8.8.8.8",
            "fec0::1",
            "2002:7f00:1::1",
            "2002:808:808::1",
            "64:ff9b::a00:1",
            "2001:0:4136:e378::1",
            "ff0e::1",
            "224.0.0.1",
            "198.18.0.1",
            "240.0.0.1",
            "192.0.0.8",
        ] {
            assert!(!address_allowed(blocked.parse().unwrap(), false), "{blocked} must be refused");
        }
        assert!(address_allowed("127.0.0.1".parse().unwrap(), true));
        assert!(!address_allowed("10.0.0.1".parse().unwrap(), true));
        for allowed in ["93.184.216.34", "2606:2800:220:1::1", "8.8.8.8", "2a00:1450:4001:80b::200e"] {
            assert!(address_allowed(allowed.parse().unwrap(), false), "{allowed} must be allowed");
        }
    }
}
