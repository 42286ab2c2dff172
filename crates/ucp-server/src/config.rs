//! Settings, layered: built-in defaults < TOML file < `UCPD_*` environment < command-line flags.
//!
//! Every key of the TOML file can also be set from the environment: upper-case it, prefix
//! `UCPD_`, and join nested keys with `__` (`[profiles] cache_ttl_secs` is
//! `UCPD_PROFILES__CACHE_TTL_SECS`). Lists are comma-separated there.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Where the database, keys and secrets live.
    pub data_dir: PathBuf,
    /// The public base URL advertised in the profile (`https://shop.example`). Without it the
    /// profile advertises `http://<listen address>` (local use only).
    pub public_url: Option<String>,
    /// Seed an empty store with the demo catalog on start.
    pub demo: bool,
    /// How many products the demo catalog has.
    pub demo_products: u64,
    /// Fetch platform profiles over plain HTTP from loopback addresses. Development only.
    pub dev_insecure_profiles: bool,
    /// The merchant's name, shown to buyers.
    pub business_name: String,
    pub http: HttpSettings,
    pub profiles: ProfileSettings,
    pub capabilities: CapabilitySettings,
    pub catalog: CatalogSettings,
    pub checkout: CheckoutSettings,
    /// Where we ship, at what price (the demo shop ships to a few countries).
    pub shipping: Vec<ShippingZoneSettings>,
    /// Tax rates by country and region.
    pub taxes: Vec<TaxSettings>,
    /// Discount codes and automatic promotions.
    pub discounts: Vec<DiscountSettings>,
    pub payments: PaymentSettings,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckoutSettings {
    /// How long a cart lives, in seconds.
    pub cart_ttl_secs: i64,
    /// How long a checkout lives, in seconds (the spec's default is 6 hours).
    pub checkout_ttl_secs: i64,
    /// Whether the buyer's email is required before completion.
    pub require_email: bool,
    /// Legal links on every checkout: type -> absolute URL. Missing well-known types
    /// (privacy_policy, terms_of_service, refund_policy, shipping_policy) link to pages ucpd serves.
    pub links: BTreeMap<String, String>,
    /// How often expired carts and checkouts are swept, in seconds.
    pub sweep_interval_secs: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShippingZoneSettings {
    pub name: String,
    /// ISO 3166-1 alpha-2 country codes.
    pub countries: Vec<String>,
    /// Region codes (e.g. US states); empty means the whole country.
    #[serde(default)]
    pub regions: Vec<String>,
    pub options: Vec<ShippingOptionSettings>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShippingOptionSettings {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub carrier: Option<String>,
    /// Flat price in minor units.
    pub amount: i64,
    /// Added per started kilogram, in minor units.
    #[serde(default)]
    pub per_kg: i64,
    /// Free when the discounted item subtotal reaches this (minor units).
    #[serde(default)]
    pub free_above: Option<i64>,
    pub min_days: u32,
    pub max_days: u32,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaxSettings {
    pub country: String,
    #[serde(default)]
    pub region: Option<String>,
    /// Percent as a decimal string: "7.25".
    pub rate: String,
    #[serde(default)]
    pub shipping_taxable: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DiscountSettings {
    /// The code buyers enter; absent for an automatic promotion.
    #[serde(default)]
    pub code: Option<String>,
    pub title: String,
    /// `percentage` (value: percent, "10"), `fixed_amount` (value: minor units, "500") or `free_shipping`.
    pub kind: String,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub min_subtotal: Option<i64>,
    #[serde(default)]
    pub product_ids: Vec<String>,
    #[serde(default)]
    pub categories: Vec<String>,
    /// RFC 3339 instant after which the code no longer works.
    #[serde(default)]
    pub expires_at: Option<String>,
    #[serde(default)]
    pub usage_limit: Option<u64>,
    #[serde(default)]
    pub combinable: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct PaymentSettings {
    /// The built-in sandbox handler with deterministic test tokens. Defaults to on in the
    /// demo shop (`demo = true`) and off otherwise.
    pub sandbox: Option<bool>,
    /// External processors reached over HTTP.
    pub http: Vec<HttpProcessorSettings>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpProcessorSettings {
    /// Handler instance id, as platforms name it in `payment.instruments[].handler_id`.
    pub id: String,
    /// Handler name (reverse domain), as advertised in the profile.
    pub name: String,
    /// The processor's authorization endpoint.
    pub url: String,
    #[serde(default = "default_processor_timeout")]
    pub timeout_ms: u64,
    #[serde(default = "default_processor_retries")]
    pub retries: u32,
    /// Instrument types accepted (default: card).
    #[serde(default)]
    pub instrument_types: Vec<String>,
    /// Checkout currencies this processor takes (empty: any).
    #[serde(default)]
    pub currencies: Vec<String>,
    /// Shipping countries (ISO 3166-1 alpha-2) it serves (empty: any).
    #[serde(default)]
    pub countries: Vec<String>,
}

fn default_processor_timeout() -> u64 {
    5_000
}

fn default_processor_retries() -> u32 {
    2
}

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
    pub allowed_hosts: Vec<String>,
    /// Origins allowed to call us from a browser, besides our own. Absent `Origin` is always fine.
    pub allowed_origins: Vec<String>,
    /// `max-age` of the discovery profile, in seconds (at least 60).
    pub profile_max_age_secs: u64,
    /// Requests handled at once before new ones wait.
    pub max_concurrent_requests: usize,
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
    pub fetch_timeout_ms: u64,
    /// Largest profile body accepted, in bytes (at least 128 KiB).
    pub max_bytes: usize,
    /// Profile identifiers that are not fetchable profiles, mapped to the URL to fetch
    /// instead (Google sends `https://www.google.com` in `meta`).
    pub aliases: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CapabilitySettings {
    /// Capabilities to advertise, by short name (`catalog.search`, `catalog.lookup`).
    pub enabled: Vec<String>,
    /// Further namespaces to advertise the same capabilities under.
    pub aliases: Vec<NamespaceAlias>,
}

/// The same capabilities under another namespace and version, e.g. `br.dev.bcp` at `2026-07-14`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NamespaceAlias {
    /// Reverse-domain prefix replacing `dev.ucp` (`br.dev.bcp`).
    pub namespace: String,
    pub version: String,
    /// Base URL of the specification pages (`https://bcp.dev.br/2026-07-14/specification`).
    pub spec_base: String,
    /// Base URL of the schemas (`https://bcp.dev.br/2026-07-14/schemas`).
    pub schema_base: String,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogSettings {
    /// The currency prices are stored in.
    pub currency: String,
    /// Products per search page when the request names no limit.
    pub default_page_size: usize,
    /// Largest page; bigger requests are clamped silently.
    pub max_page_size: usize,
    /// Most ids one lookup may carry; more is `request_too_large`.
    pub max_lookup_ids: usize,
    /// Further presentment currencies: code -> units of that currency per unit of `currency`,
    /// as a decimal string (`EUR = "0.92"`).
    pub exchange_rates: BTreeMap<String, String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("ucpd-data"),
            public_url: None,
            demo: true,
            demo_products: 1000,
            dev_insecure_profiles: false,
            business_name: "ucpd demo shop".into(),
            http: HttpSettings::default(),
            profiles: ProfileSettings::default(),
            capabilities: CapabilitySettings::default(),
            catalog: CatalogSettings::default(),
            checkout: CheckoutSettings::default(),
            shipping: demo_shipping(),
            taxes: demo_taxes(),
            discounts: demo_discounts(),
            payments: PaymentSettings::default(),
        }
    }
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

fn shipping_option(
    id: &str,
    title: &str,
    amount: i64,
    free_above: Option<i64>,
    days: (u32, u32),
) -> ShippingOptionSettings {
    ShippingOptionSettings {
        id: id.into(),
        title: title.into(),
        description: Some(format!("Arrives in {}-{} business days.", days.0, days.1)),
        carrier: None,
        amount,
        per_kg: 0,
        free_above,
        min_days: days.0,
        max_days: days.1,
    }
}

/// The demo shop's zones: replace them in your configuration.
fn demo_shipping() -> Vec<ShippingZoneSettings> {
    vec![
        ShippingZoneSettings {
            name: "United States".into(),
            countries: vec!["US".into()],
            regions: vec![],
            options: vec![
                shipping_option("standard", "Standard shipping", 599, Some(5000), (3, 5)),
                shipping_option("express", "Express shipping", 1999, None, (1, 2)),
            ],
        },
        ShippingZoneSettings {
            name: "Canada and Europe".into(),
            countries: ["CA", "GB", "DE", "FR", "NL", "ES", "IT", "IE"].iter().map(|code| code.to_string()).collect(),
            regions: vec![],
            options: vec![shipping_option("international", "International shipping", 1999, Some(15000), (5, 10))],
        },
    ]
}

fn demo_taxes() -> Vec<TaxSettings> {
    vec![
        TaxSettings { country: "US".into(), region: Some("CA".into()), rate: "7.25".into(), shipping_taxable: false },
        TaxSettings { country: "US".into(), region: Some("NY".into()), rate: "4".into(), shipping_taxable: true },
    ]
}

fn demo_discounts() -> Vec<DiscountSettings> {
    let discount = |code: &str, title: &str, kind: &str, value: Option<&str>, min: Option<i64>| DiscountSettings {
        code: Some(code.into()),
        title: title.into(),
        kind: kind.into(),
        value: value.map(str::to_owned),
        min_subtotal: min,
        product_ids: vec![],
        categories: vec![],
        expires_at: None,
        usage_limit: None,
        combinable: false,
    };
    vec![
        discount("WELCOME10", "10% off your order", "percentage", Some("10"), None),
        discount("SAVE5", "$5 off orders of $50 or more", "fixed_amount", Some("500"), Some(5000)),
        discount("FREESHIP", "Free shipping", "free_shipping", None, None),
    ]
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

impl Default for ProfileSettings {
    fn default() -> Self {
        ProfileSettings {
            cache_ttl_secs: 300,
            failure_ttl_secs: 10,
            cache_capacity: 10_000,
            fetch_timeout_ms: 5_000,
            max_bytes: 256 * 1024,
            aliases: BTreeMap::from([(
                "https://www.google.com".to_owned(),
                "https://ucp.goog/profiles/2026-04-08/ucp.json".to_owned(),
            )]),
        }
    }
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

/// A setting that cannot be used, with the key it came from.
#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(pub String);

impl Settings {
    /// Defaults, then the TOML file (if any), then `UCPD_*` variables from `environment`.
    pub fn load(
        file: Option<&Path>,
        environment: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Settings, ConfigError> {
        let mut table = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|error| ConfigError(format!("cannot read {}: {error}", path.display())))?;
                text.parse::<toml::Table>().map_err(|error| ConfigError(format!("{}: {error}", path.display())))?
            }
            None => toml::Table::new(),
        };
        for (name, value) in environment {
            let Some(key) = name.strip_prefix("UCPD_") else { continue };
            if matches!(key, "CONFIG" | "LOG" | "LOG_FORMAT") {
                continue;
            }
            let path: Vec<String> = key.split("__").map(str::to_lowercase).collect();
            set_path(&mut table, &path, &value)?;
        }
        let settings: Settings = toml::Value::Table(table)
            .try_into()
            .map_err(|error: toml::de::Error| ConfigError(error.message().to_owned()))?;
        settings.validate()?;
        Ok(settings)
    }

    /// Built-in defaults only: no file, no environment. For tests.
    pub fn for_tests(data_dir: &Path) -> Settings {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            data_dir: data_dir.to_owned(),
            demo: false,
            ..Settings::default()
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.http.profile_max_age_secs < 60 {
            return Err(ConfigError("http.profile_max_age_secs must be at least 60".into()));
        }
        if self.profiles.cache_ttl_secs < 60 {
            return Err(ConfigError("profiles.cache_ttl_secs must be at least 60".into()));
        }
        if self.profiles.max_bytes < 128 * 1024 {
            return Err(ConfigError("profiles.max_bytes must be at least 131072 (128 KiB)".into()));
        }
        for (key, path) in [("http.mcp_path", &self.http.mcp_path), ("http.rest_path", &self.http.rest_path)] {
            if !path.starts_with('/') || path.ends_with('/') {
                return Err(ConfigError(format!("{key} must start with '/' and not end with one")));
            }
        }
        if !ucp_domain::money::is_currency_code(&self.catalog.currency) {
            return Err(ConfigError(format!("catalog.currency {:?} is not an ISO 4217 code", self.catalog.currency)));
        }
        if self.catalog.max_page_size < 10 || self.catalog.default_page_size == 0 {
            return Err(ConfigError(
                "catalog.max_page_size must be at least 10 and default_page_size at least 1".into(),
            ));
        }
        if self.catalog.max_lookup_ids < 10 {
            return Err(ConfigError("catalog.max_lookup_ids must be at least 10".into()));
        }
        for (code, rate) in &self.catalog.exchange_rates {
            if !ucp_domain::money::is_currency_code(code) || ucp_domain::commerce::Rate::parse(rate).is_none() {
                return Err(ConfigError(format!(
                    "catalog.exchange_rates: {code} = {rate:?} is not a currency and a positive decimal rate"
                )));
            }
        }
        for name in &self.capabilities.enabled {
            if !crate::discovery::KNOWN_CAPABILITIES.iter().any(|known| known.short_name == name) {
                return Err(ConfigError(format!("capabilities.enabled: unknown capability {name:?}")));
            }
        }
        for tax in &self.taxes {
            if crate::commerce::percent_to_basis_points(&tax.rate).is_none() {
                return Err(ConfigError(format!("taxes: rate {:?} for {} is not a percentage", tax.rate, tax.country)));
            }
        }
        for discount in &self.discounts {
            crate::commerce::discount_rule(discount)
                .map_err(|reason| ConfigError(format!("discounts: {}: {reason}", discount.title)))?;
        }
        for zone in &self.shipping {
            if zone.options.is_empty() || zone.countries.is_empty() {
                return Err(ConfigError(format!("shipping zone {:?} needs countries and options", zone.name)));
            }
        }
        if self.checkout.cart_ttl_secs < 60 || self.checkout.checkout_ttl_secs < 60 {
            return Err(ConfigError(
                "checkout.cart_ttl_secs and checkout.checkout_ttl_secs must be at least 60".into(),
            ));
        }
        if let Some(url) = &self.public_url {
            crate::discovery::parse_public_url(url).map_err(ConfigError)?;
        }
        Ok(())
    }
}

/// Sets `path` in `table` from an environment string, guessing its TOML type from the
/// default's type: numbers and booleans parse, lists split on commas, the rest stays text.
fn set_path(table: &mut toml::Table, path: &[String], raw: &str) -> Result<(), ConfigError> {
    let defaults = toml::Table::try_from(Settings::default()).unwrap_or_default();
    let mut defaults_here = Some(&defaults);
    let mut node = table;
    for (depth, key) in path.iter().enumerate() {
        let default_node = defaults_here.and_then(|table| table.get(key));
        if depth + 1 == path.len() {
            let value = match default_node {
                Some(toml::Value::Integer(_)) => raw.trim().parse::<i64>().map(toml::Value::Integer).map_err(|_| {
                    ConfigError(format!("UCPD_{}: {raw:?} is not a whole number", path.join("__").to_uppercase()))
                })?,
                Some(toml::Value::Boolean(_)) => match raw.trim() {
                    "1" | "true" | "yes" | "on" => toml::Value::Boolean(true),
                    "0" | "false" | "no" | "off" | "" => toml::Value::Boolean(false),
                    _ => {
                        return Err(ConfigError(format!(
                            "UCPD_{}: {raw:?} is not a boolean",
                            path.join("__").to_uppercase()
                        )));
                    }
                },
                Some(toml::Value::Array(_)) => toml::Value::Array(
                    raw.split(',').map(str::trim).filter(|item| !item.is_empty()).map(|item| item.into()).collect(),
                ),
                // An unset optional setting has no default to copy its type from.
                None if matches!(raw.trim(), "true" | "false") => toml::Value::Boolean(raw.trim() == "true"),
                _ => toml::Value::String(raw.to_owned()),
            };
            node.insert(key.clone(), value);
            return Ok(());
        }
        defaults_here = match default_node {
            Some(toml::Value::Table(table)) => Some(table),
            _ => None,
        };
        let child = node.entry(key.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        node = child
            .as_table_mut()
            .ok_or_else(|| ConfigError(format!("UCPD_{}: {key} is not a table", path.join("__").to_uppercase())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_file_and_types_follow_defaults() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("ucpd.toml");
        std::fs::write(&file, "listen = \"127.0.0.1:9000\"\n[catalog]\nmax_page_size = 20\n").unwrap();
        let settings = Settings::load(
            Some(&file),
            [
                ("UCPD_CATALOG__MAX_PAGE_SIZE".to_owned(), "30".to_owned()),
                ("UCPD_DEV_INSECURE_PROFILES".to_owned(), "true".to_owned()),
                ("UCPD_PAYMENTS__SANDBOX".to_owned(), "true".to_owned()),
                ("UCPD_HTTP__ALLOWED_HOSTS".to_owned(), "shop.example, www.shop.example".to_owned()),
                ("HOME".to_owned(), "/root".to_owned()),
            ],
        )
        .unwrap();
        assert_eq!(settings.listen.port(), 9000);
        assert_eq!(settings.catalog.max_page_size, 30);
        assert!(settings.dev_insecure_profiles);
        assert_eq!(settings.payments.sandbox, Some(true));
        assert_eq!(settings.http.allowed_hosts, vec!["shop.example", "www.shop.example"]);
    }

    #[test]
    fn bad_values_are_named() {
        let error = Settings::load(None, [("UCPD_CATALOG__MAX_PAGE_SIZE".to_owned(), "lots".to_owned())]).unwrap_err();
        assert!(error.to_string().contains("UCPD_CATALOG__MAX_PAGE_SIZE"), "{error}");
        let error = Settings::load(None, [("UCPD_HTTP__PROFILE_MAX_AGE_SECS".to_owned(), "5".to_owned())]).unwrap_err();
        assert!(error.to_string().contains("profile_max_age_secs"), "{error}");
    }
}
