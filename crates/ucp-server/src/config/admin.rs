//! `[admin]`: the merchant's own credential for the admin API and the console, separate from
//! every platform's.
//!
//! ```toml
//! [admin]
//! api_keys = ["<sha256 hex of the key>"]   # `ucpd platforms hash-key` hashes one
//! ```
//!
//! Without keys the admin API and the console answer 404, except on a demo start, which
//! generates a key into `<data>/admin-key` (mode 0600) and logs where it is.

use serde::{Deserialize, Serialize};

use super::ConfigError;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdminSettings {
    /// SHA-256 hashes (64 hex digits) of the admin keys; list several to rotate (in
    /// `UCPD_ADMIN__API_KEYS`, comma-separated).
    #[serde(deserialize_with = "super::values::list")]
    pub api_keys: Vec<String>,
}

impl AdminSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        for key in &self.api_keys {
            if key.len() != 64 || !key.bytes().all(|byte| byte.is_ascii_hexdigit()) {
                return Err(ConfigError(
                    "admin.api_keys holds SHA-256 hashes (64 hex digits); hash a key with `ucpd platforms hash-key`"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}

/// `[metrics]`: who may read `/metrics`.
///
/// ```toml
/// [metrics]
/// public = false   # true: no admin key needed (a scraper on a private network)
/// ```
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct MetricsSettings {
    /// Serve `/metrics` without the admin key. Off by default: the counters name the
    /// platforms a merchant works with and how much they buy.
    pub public: bool,
}
