//! Settings, layered: built-in defaults < TOML file < `UCPD_*` environment < command-line flags.
//!
//! Every key of the TOML file can also be set from the environment: upper-case it, prefix
//! `UCPD_`, and join nested keys with `__` (`[profiles] cache_ttl_secs` is
//! `UCPD_PROFILES__CACHE_TTL_SECS`). Lists are comma-separated there.
//!
//! Values are typed when they load: percentages, exchange rates, discount kinds, currencies,
//! countries, instants and URLs become domain types (or checked, normalized text), so a bad
//! value fails at start, named by its key, and no request ever parses one. This module
//! depends on the domain only, never on the rest of the server.

mod admin;
mod disclosures;
mod idempotency;
mod layers;
mod limits;
mod platforms;
mod pricing;
mod sections;
mod signatures;
mod store;
mod tls;
mod values;
mod webhooks;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use ucp_domain::checkout::PricingRules;

pub use admin::{AdminSettings, MetricsSettings};
pub use disclosures::{DisclosureFormat, DisclosureSettings};
pub use idempotency::IdempotencySettings;
pub use limits::{ConnectionLimits, LimitSettings, RateLimits};
pub use platforms::{AuthSettings, MtlsSettings, OAuthSettings, PlatformSettings};
pub use pricing::{DiscountSettings, ShippingOptionSettings, ShippingZoneSettings, TaxSettings};
pub use sections::{
    CapabilitySettings, CatalogSettings, CheckoutSettings, HttpProcessorSettings, HttpSettings, NamespaceAlias,
    PaymentSettings, ProfileSettings,
};
pub use signatures::{EffectivePolicy, PlatformSignatureSettings, ResponseSigning, SignaturePolicy, SignatureSettings};
pub use store::StoreSettings;
pub use tls::{TlsSettings, TlsVersion};
pub use values::{PublicUrl, web_url};
pub use webhooks::WebhookSettings;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Where the database, keys and secrets live.
    #[serde(deserialize_with = "values::path")]
    pub data_dir: PathBuf,
    /// The public base URL advertised in the profile (`https://shop.example`). Without it the
    /// profile advertises `http://<listen address>` (local use only).
    pub public_url: Option<PublicUrl>,
    /// Seed an empty store with the demo catalog on start.
    #[serde(deserialize_with = "values::flag")]
    pub demo: bool,
    /// How many products the demo catalog has.
    pub demo_products: u64,
    /// Fetch platform profiles over plain HTTP from loopback addresses. Development only.
    #[serde(deserialize_with = "values::flag")]
    pub dev_insecure_profiles: bool,
    /// The merchant's name, shown to buyers.
    #[serde(deserialize_with = "values::text")]
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
    /// Notices shown beside the products they concern (`[[disclosures]]`).
    pub disclosures: Vec<DisclosureSettings>,
    pub payments: PaymentSettings,
    /// TLS termination and client certificates (`[tls]`).
    pub tls: TlsSettings,
    /// Stored idempotency: retention, waiting duplicates.
    pub idempotency: IdempotencySettings,
    /// RFC 9421 request verification and response signing (`config/signatures.rs`).
    pub signatures: SignatureSettings,
    /// Authentication policy (`[auth]`) and the onboarded platforms (`[[platforms]]`).
    pub auth: AuthSettings,
    pub platforms: Vec<PlatformSettings>,
    /// Where the settings came from (a file or not, what was set explicitly), for the
    /// hardened defaults; never read from a file.
    #[serde(skip)]
    pub origin: Origin,
    /// What one request, connection and client may cost (`[limits]`).
    pub limits: LimitSettings,
    /// The merchant's admin credential (`[admin]`, `config/admin.rs`).
    pub admin: AdminSettings,
    /// Who may read `/metrics` (`[metrics]`, `config/admin.rs`).
    pub metrics: MetricsSettings,
    /// Order webhook delivery (`[webhooks]`, `config/webhooks.rs`).
    pub webhooks: WebhookSettings,
    /// How the embedded store writes (`[store]`, `config/store.rs`).
    pub store: StoreSettings,
}

/// Facts about how the settings were given that the values alone do not tell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Origin {
    /// A configuration file was loaded.
    pub config_file: bool,
    /// `demo` was set by the file, the environment or a flag (not left to its default).
    pub demo_set: bool,
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
            shipping: pricing::demo_shipping(),
            taxes: pricing::demo_taxes(),
            discounts: pricing::demo_discounts(),
            disclosures: Vec::new(),
            payments: PaymentSettings::default(),
            tls: TlsSettings::default(),
            idempotency: IdempotencySettings::default(),
            signatures: SignatureSettings::default(),
            auth: AuthSettings::default(),
            platforms: Vec::new(),
            origin: Origin::default(),
            limits: LimitSettings::default(),
            admin: AdminSettings::default(),
            metrics: MetricsSettings::default(),
            webhooks: WebhookSettings::default(),
            store: StoreSettings::default(),
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
        let figment = layers::figment(file, environment)?;
        let mut settings: Settings = figment.extract().map_err(layers::describe)?;
        settings.origin = Origin { config_file: file.is_some(), demo_set: figment.contains("demo") };
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

    /// The rules that span keys, which no single value can check as it loads.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.http.profile_max_age_secs < 60 {
            return Err(ConfigError("http.profile_max_age_secs must be at least 60".into()));
        }
        if self.profiles.cache_ttl_secs < 60 {
            return Err(ConfigError("profiles.cache_ttl_secs must be at least 60".into()));
        }
        self.limits.validate()?;
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
        if !(10..=500).contains(&self.catalog.max_lookup_ids) {
            return Err(ConfigError("catalog.max_lookup_ids must be between 10 and 500".into()));
        }
        for zone in &self.shipping {
            zone.validate()?;
        }
        disclosures::validate(&self.disclosures)?;
        for (index, alias) in self.capabilities.aliases.iter().enumerate() {
            alias.validate()?;
            if self.capabilities.aliases[..index].iter().any(|earlier| earlier.namespace == alias.namespace) {
                return Err(ConfigError(format!(
                    "capabilities.aliases: namespace {} is aliased twice",
                    alias.namespace
                )));
            }
        }
        platforms::validate(&self.auth, &self.platforms)?;
        if self.checkout.cart_ttl_secs < 60 || self.checkout.checkout_ttl_secs < 60 {
            return Err(ConfigError(
                "checkout.cart_ttl_secs and checkout.checkout_ttl_secs must be at least 60".into(),
            ));
        }
        // Recovery must never settle a charge whose processor call may still be running.
        let longest_charge_ms = self.payments.longest_charge_ms();
        if self.payments.recovery_after_secs.saturating_mul(1000) <= longest_charge_ms {
            return Err(ConfigError(format!(
                "payments.recovery_after_secs must be longer than the slowest processor call with its retries ({longest_charge_ms} ms)"
            )));
        }
        self.tls.validate()?;
        self.idempotency.validate()?;
        self.admin.validate()?;
        self.webhooks.validate()?;
        self.store.validate()?;
        Ok(())
    }

    /// Fails on an enabled capability that `known` does not know. The capability list belongs
    /// to discovery, so the caller brings it.
    pub fn check_capabilities(&self, known: impl Fn(&str) -> bool) -> Result<(), ConfigError> {
        match self.capabilities.enabled.iter().find(|name| !known(name)) {
            Some(name) => Err(ConfigError(format!("capabilities.enabled: unknown capability {name:?}"))),
            None => Ok(()),
        }
    }

    /// The domain's pricing rules, disclosures included: a copy of settings typed at load.
    pub fn pricing_rules(&self) -> PricingRules {
        PricingRules {
            disclosures: disclosures::disclosures(&self.disclosures),
            ..pricing::pricing_rules(&self.shipping, &self.taxes, &self.discounts, self.checkout.require_email)
        }
    }
}
