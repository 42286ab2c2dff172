//! The tables of the settings file besides the pricing rules: `[http]`, `[profiles]`,
//! `[capabilities]`, `[catalog]`, `[checkout]` and `[payments]`, with their defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ucp_domain::money::{CurrencyCode, Rate};

use super::{ConfigError, values};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpSettings {
    /// Path of the MCP endpoint.
    pub mcp_path: String,
    /// Base path of the REST binding.
    pub rest_path: String,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Host names (with optional `:port`) we answer for, besides the public URL's host and
    /// the listen address. `*` accepts any Host.
    #[serde(deserialize_with = "values::list")]
    pub allowed_hosts: Vec<String>,
    /// Origins allowed to call us from a browser, besides our own. Absent `Origin` is always fine.
    #[serde(deserialize_with = "values::list")]
    pub allowed_origins: Vec<String>,
    /// `max-age` of the discovery profile, in seconds (at least 60).
    pub profile_max_age_secs: u64,
    /// Requests handled at once before new ones wait.
    pub max_concurrent_requests: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        HttpSettings {
            mcp_path: "/ucp/mcp".into(),
            rest_path: "/ucp/v1".into(),
            max_body_bytes: 1024 * 1024,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            profile_max_age_secs: 300,
            max_concurrent_requests: 1024,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProfileSettings {
    /// How long a fetched platform profile is reused (at least 60 s).
    pub cache_ttl_secs: u64,
    /// How long a failed fetch is remembered, to bound work on broken platforms.
    pub failure_ttl_secs: u64,
    /// How many platform profiles are cached at most.
    pub cache_capacity: u64,
    /// Most bytes the profile cache holds (each profile weighed by the size of its body; the
    /// cache of failed fetches is bounded by a sixteenth of it).
    pub cache_max_bytes: u64,
    pub fetch_timeout_ms: u64,
    /// Profile fetches running at once; more wait (within their timeout) for a place.
    pub max_concurrent_fetches: usize,
    /// Profile fetches started per minute across all platforms; past it, an unknown platform
    /// gets 503 with `Retry-After` (cached profiles are not affected).
    pub fetches_per_minute: u32,
    /// How long resolving a profile host may take, in milliseconds.
    pub dns_timeout_ms: u64,
    /// Name servers (`ip:port`, over UDP) for profile hosts; empty: the system's
    /// (`/etc/resolv.conf`).
    pub dns_servers: Vec<std::net::SocketAddr>,
    /// Largest profile body accepted, in bytes (at least 128 KiB).
    pub max_bytes: usize,
    /// Profile identifiers that are not fetchable profiles, mapped to the URL to fetch
    /// instead (Google sends `https://www.google.com` in `meta`). Both are absolute URLs.
    #[serde(deserialize_with = "values::urls_by_url")]
    pub aliases: BTreeMap<String, String>,
}

impl Default for ProfileSettings {
    fn default() -> Self {
        ProfileSettings {
            cache_ttl_secs: 300,
            failure_ttl_secs: 10,
            cache_capacity: 10_000,
            cache_max_bytes: 32 * 1024 * 1024,
            fetch_timeout_ms: 5_000,
            max_concurrent_fetches: 16,
            fetches_per_minute: 600,
            dns_timeout_ms: 2_000,
            dns_servers: Vec::new(),
            max_bytes: 256 * 1024,
            aliases: BTreeMap::from([(
                "https://www.google.com".to_owned(),
                "https://ucp.goog/profiles/2026-04-08/ucp.json".to_owned(),
            )]),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CapabilitySettings {
    /// Capabilities to advertise, by short name (`catalog.search`, `catalog.lookup`).
    #[serde(deserialize_with = "values::list")]
    pub enabled: Vec<String>,
    /// Further namespaces to advertise the same capabilities under.
    pub aliases: Vec<NamespaceAlias>,
}

impl Default for CapabilitySettings {
    fn default() -> Self {
        CapabilitySettings {
            enabled: ["catalog.search", "catalog.lookup", "cart", "checkout", "order", "fulfillment", "discount"]
                .iter()
                .map(|name| name.to_string())
                .collect(),
            aliases: Vec::new(),
        }
    }
}

/// The same capabilities under another namespace and version, e.g. `br.dev.bcp` at `2026-07-14`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceAlias {
    /// Reverse-domain prefix replacing `dev.ucp` (`br.dev.bcp`).
    pub namespace: String,
    pub version: String,
    /// Base URL of the specification pages (`https://bcp.dev.br/2026-07-14/specification`).
    #[serde(deserialize_with = "values::url_text")]
    pub spec_base: String,
    /// Base URL of the schemas (`https://bcp.dev.br/2026-07-14/schemas`).
    #[serde(deserialize_with = "values::url_text")]
    pub schema_base: String,
}

impl NamespaceAlias {
    /// A reverse-domain namespace, a dated version, and bases on the namespace's own host:
    /// platforms leave out entries another authority publishes (overview.md §3), so an alias
    /// on another host would be advertised and never negotiated.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let namespace = &self.namespace;
        // `^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)+$` (`reverse_domain_name.json`).
        let labels_ok = namespace.split('.').count() >= 2
            && namespace.split('.').enumerate().all(|(index, label)| {
                label.starts_with(|first: char| first.is_ascii_lowercase())
                    && label
                        .bytes()
                        .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || (index > 0 && byte == b'_'))
            });
        if !labels_ok {
            return Err(ConfigError(format!(
                "capabilities.aliases: namespace {namespace:?} is not a reverse-domain name (br.dev.bcp)"
            )));
        }
        if namespace == "dev.ucp" || namespace.starts_with("dev.ucp.") {
            return Err(ConfigError(format!(
                "capabilities.aliases: {namespace} is in dev.ucp, the UCP governing body's namespace, not an alias"
            )));
        }
        if !ucp_protocol::profile::is_date_version(&self.version) {
            return Err(ConfigError(format!(
                "capabilities.aliases: version {:?} of {namespace} is not YYYY-MM-DD",
                self.version
            )));
        }
        for (key, base) in [("spec_base", &self.spec_base), ("schema_base", &self.schema_base)] {
            // What we publish is compared by 2026-04-08 platforms as an origin: no port, no
            // trailing dot, nothing a plainer comparison than `binds` would not take.
            let plain = url::Url::parse(base)
                .is_ok_and(|url| url.port().is_none() && url.host_str().is_some_and(|host| !host.ends_with('.')));
            if !plain || !ucp_protocol::profile::authority::binds(namespace, base) {
                let host: Vec<&str> = namespace.split('.').rev().collect();
                return Err(ConfigError(format!(
                    "capabilities.aliases: {key} {base:?} must be an https URL on {} or a parent domain of it, the authority namespace {namespace} names (platforms refuse entries published elsewhere)",
                    host.join(".")
                )));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogSettings {
    /// The currency prices are stored in (ISO 4217, upper-cased at load).
    #[serde(deserialize_with = "values::currency_code")]
    pub currency: String,
    /// Products per search page when the request names no limit.
    pub default_page_size: usize,
    /// Largest page; bigger requests are clamped silently.
    pub max_page_size: usize,
    /// Most ids one lookup may carry; more is `request_too_large`.
    pub max_lookup_ids: usize,
    /// Further presentment currencies: code -> units of that currency per unit of `currency`,
    /// written as a decimal string (`EUR = "0.92"`).
    pub exchange_rates: BTreeMap<CurrencyCode, Rate>,
}

impl Default for CatalogSettings {
    fn default() -> Self {
        CatalogSettings {
            currency: "USD".into(),
            default_page_size: 10,
            max_page_size: 50,
            max_lookup_ids: 50,
            exchange_rates: BTreeMap::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckoutSettings {
    /// How long a cart lives, in seconds.
    pub cart_ttl_secs: i64,
    /// How long a checkout lives, in seconds (the spec's default is 6 hours).
    pub checkout_ttl_secs: i64,
    /// Whether the buyer's email is required before completion.
    #[serde(deserialize_with = "values::flag")]
    pub require_email: bool,
    /// Legal links on every checkout: type -> absolute URL. Missing well-known types
    /// (privacy_policy, terms_of_service, refund_policy, shipping_policy) link to pages ucpd serves.
    #[serde(deserialize_with = "values::urls_by_name")]
    pub links: BTreeMap<String, String>,
    /// How often expired carts and checkouts are swept, in seconds.
    pub sweep_interval_secs: u64,
}

impl Default for CheckoutSettings {
    fn default() -> Self {
        CheckoutSettings {
            cart_ttl_secs: 7 * 24 * 3600,
            checkout_ttl_secs: 6 * 3600,
            require_email: true,
            links: BTreeMap::new(),
            sweep_interval_secs: 60,
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PaymentSettings {
    /// The built-in sandbox handler with deterministic test tokens. Defaults to on in the
    /// demo shop (`demo = true`) and off otherwise.
    #[serde(deserialize_with = "values::optional_flag")]
    pub sandbox: Option<bool>,
    /// External processors reached over HTTP.
    pub http: Vec<HttpProcessorSettings>,
    /// How long a checkout may stay `complete_in_progress` before the recovery sweeper (every
    /// `checkout.sweep_interval_secs`) asks the processor what became of its charge and places
    /// the order or refunds. Longer than any processor call with its retries.
    pub recovery_after_secs: u64,
}

impl Default for PaymentSettings {
    fn default() -> Self {
        PaymentSettings { sandbox: None, http: Vec::new(), recovery_after_secs: 120 }
    }
}

impl PaymentSettings {
    /// The longest one charge may take at an HTTP processor: every try's timeout and the
    /// back-off between tries.
    pub fn longest_charge_ms(&self) -> u64 {
        self.http
            .iter()
            .map(|http| {
                let tries = u64::from(http.retries) + 1;
                let backoff: u64 = (1..tries).map(|attempt| 100 * 2u64.saturating_pow(attempt as u32 - 1)).sum();
                http.timeout_ms.saturating_mul(tries).saturating_add(backoff)
            })
            .max()
            .unwrap_or(0)
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpProcessorSettings {
    /// Handler instance id, as platforms name it in `payment.instruments[].handler_id`.
    pub id: String,
    /// Handler name (reverse domain), as advertised in the profile.
    pub name: String,
    /// The processor's authorization endpoint (http or https).
    #[serde(with = "values::http_url")]
    pub url: url::Url,
    #[serde(default = "default_processor_timeout")]
    pub timeout_ms: u64,
    #[serde(default = "default_processor_retries")]
    pub retries: u32,
    /// Instrument types accepted (default: card).
    #[serde(default, deserialize_with = "values::list")]
    pub instrument_types: Vec<String>,
    /// Checkout currencies this processor takes (empty: any); upper-cased at load.
    #[serde(default, deserialize_with = "values::currency_codes")]
    pub currencies: Vec<String>,
    /// Shipping countries (ISO 3166-1 alpha-2) it serves (empty: any); upper-cased at load.
    #[serde(default, deserialize_with = "values::country_codes")]
    pub countries: Vec<String>,
}

fn default_processor_timeout() -> u64 {
    5_000
}

fn default_processor_retries() -> u32 {
    2
}
