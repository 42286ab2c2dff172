//! `[auth]` and `[[platforms]]`: who may call, with which credential, for which profiles.
//!
//! ```toml
//! [auth]
//! public_operations = ["search_catalog", "lookup_catalog", "get_product"]
//! trusted_only = true
//!
//! [[platforms]]
//! id = "google"
//! profiles = ["https://www.google.com", "https://ucp.goog/*"]
//! api_keys = ["<sha256 hex of the key>"]          # `ucpd platforms hash-key`
//! [platforms.oauth]
//! issuer = "https://accounts.google.com"
//! jwks_url = "https://www.googleapis.com/oauth2/v3/certs"
//! audiences = ["https://shop.example"]
//! [platforms.mtls]
//! fingerprints = ["<sha256 hex of the leaf certificate's DER>"]
//! ```
//!
//! API keys are stored hashed (SHA-256, hex), never as the key itself; list several per
//! platform to rotate. A profile entry ending in `/*` allows every profile below that path.

use serde::{Deserialize, Serialize};

use super::{ConfigError, values};

/// `[auth]`: the policy over all platforms.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSettings {
    /// Whether operations need a credential. Default: yes as soon as `[[platforms]]` lists
    /// one platform; without platforms the server is open (the demo start).
    #[serde(deserialize_with = "values::optional_flag")]
    pub required: Option<bool>,
    /// Operations anyone may call without a credential, by name (catalog reads, say).
    #[serde(deserialize_with = "values::list")]
    pub public_operations: Vec<String>,
    /// Refuse calls claiming a profile that no `[[platforms]]` entry lists
    /// (`profile_not_trusted`, 403), also for signatures and public operations.
    #[serde(deserialize_with = "values::flag")]
    pub trusted_only: bool,
    /// The header carrying API keys.
    #[serde(deserialize_with = "values::text")]
    pub api_key_header: String,
    /// The realm of `WWW-Authenticate` challenges (default: the public base URL).
    pub realm: Option<String>,
    /// How long a fetched JWKS is reused, in seconds.
    pub jwks_ttl_secs: u64,
    pub jwks_timeout_ms: u64,
    /// Allowed clock skew for `exp` and `nbf`, in seconds.
    pub leeway_secs: u64,
}

impl Default for AuthSettings {
    fn default() -> Self {
        AuthSettings {
            required: None,
            public_operations: Vec::new(),
            trusted_only: false,
            api_key_header: "X-API-Key".into(),
            realm: None,
            jwks_ttl_secs: 300,
            jwks_timeout_ms: 5_000,
            leeway_secs: 60,
        }
    }
}

/// One `[[platforms]]` entry: a platform we onboarded and its credentials.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSettings {
    /// Our name for the platform (logs, audit, idempotency scope).
    pub id: String,
    /// The profile URLs it may claim in `UCP-Agent` / `meta` (aliases included); an entry
    /// ending in `/*` allows every URL below that path.
    #[serde(deserialize_with = "values::list")]
    pub profiles: Vec<String>,
    /// SHA-256 hashes (64 hex digits) of its API keys.
    #[serde(default, deserialize_with = "values::list")]
    pub api_keys: Vec<String>,
    /// OAuth 2.0 bearer tokens (JWTs) this platform's issuer signs.
    pub oauth: Option<OAuthSettings>,
    /// Client certificates that identify it.
    pub mtls: Option<MtlsSettings>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSettings {
    /// The `iss` tokens must carry.
    pub issuer: String,
    /// Where the issuer publishes its keys (https; http only on loopback with
    /// `dev_insecure_profiles`).
    #[serde(with = "values::http_url")]
    pub jwks_url: url::Url,
    /// Accepted `aud` values (at least one).
    #[serde(deserialize_with = "values::list")]
    pub audiences: Vec<String>,
    /// Scopes every token must grant (`scope` claim, space-separated, or `scp`).
    #[serde(default, deserialize_with = "values::list")]
    pub scopes: Vec<String>,
    /// When set, `azp` (or `client_id`) must equal it.
    pub client_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MtlsSettings {
    /// SHA-256 fingerprints (hex, colons allowed) of the leaf certificate's DER.
    #[serde(deserialize_with = "values::list")]
    pub fingerprints: Vec<String>,
    /// Subject distinguished names, as RFC 4514 text (`CN=platform.example,O=Example`).
    /// (A TOML array only: a DN holds commas.)
    pub subjects: Vec<String>,
    /// DNS names or URIs from the leaf's subjectAltName.
    #[serde(deserialize_with = "values::list")]
    pub sans: Vec<String>,
}

impl PlatformSettings {
    /// Normalized API key hashes (lower-case hex), or why one is not a SHA-256 hash.
    pub fn key_hashes(&self) -> Result<Vec<[u8; 32]>, ConfigError> {
        self.api_keys.iter().map(|text| hash_of(&self.id, "api_keys", text)).collect()
    }

    /// Normalized certificate fingerprints.
    pub fn fingerprints(&self) -> Result<Vec<[u8; 32]>, ConfigError> {
        let Some(mtls) = &self.mtls else { return Ok(Vec::new()) };
        mtls.fingerprints.iter().map(|text| hash_of(&self.id, "mtls.fingerprints", &text.replace(':', ""))).collect()
    }
}

fn hash_of(id: &str, key: &str, text: &str) -> Result<[u8; 32], ConfigError> {
    let mut hash = [0u8; 32];
    hex::decode_to_slice(text.trim(), &mut hash).map_err(|_| {
        ConfigError(format!(
            "platforms {id:?}: {key}: {text:?} is not a SHA-256 hash (64 hex digits); store the hash, never the key (`ucpd platforms hash-key`)"
        ))
    })?;
    Ok(hash)
}

/// Checks what spans keys: unique ids, at least one profile and one credential each,
/// absolute profile URLs, well-formed hashes, an audience per OAuth issuer.
pub(super) fn validate(auth: &AuthSettings, platforms: &[PlatformSettings]) -> Result<(), ConfigError> {
    if auth.api_key_header.is_empty() || http::HeaderName::try_from(auth.api_key_header.as_str()).is_err() {
        return Err(ConfigError(format!("auth.api_key_header {:?} is not a header name", auth.api_key_header)));
    }
    if auth.jwks_ttl_secs < 60 {
        return Err(ConfigError("auth.jwks_ttl_secs must be at least 60".into()));
    }
    if auth.trusted_only && platforms.is_empty() {
        return Err(ConfigError("auth.trusted_only needs at least one [[platforms]] entry".into()));
    }
    let mut ids = std::collections::BTreeSet::new();
    for platform in platforms {
        let id = &platform.id;
        if id.is_empty() || !ids.insert(id.as_str()) {
            return Err(ConfigError(format!("platforms: id {id:?} is empty or listed twice")));
        }
        if platform.profiles.is_empty() {
            return Err(ConfigError(format!("platforms {id:?}: profiles must list at least one profile URL")));
        }
        for profile in &platform.profiles {
            let url = profile.strip_suffix('*').unwrap_or(profile);
            let parsed = url::Url::parse(url).ok().filter(|url| matches!(url.scheme(), "https" | "http"));
            if parsed.is_none() || (profile.ends_with('*') && !url.ends_with('/')) || url.contains('*') {
                return Err(ConfigError(format!(
                    "platforms {id:?}: profiles: {profile:?} is not an absolute http(s) URL (a wildcard must end in \"/*\")"
                )));
            }
        }
        platform.key_hashes()?;
        platform.fingerprints()?;
        if let Some(oauth) = &platform.oauth
            && (oauth.audiences.is_empty() || oauth.issuer.is_empty())
        {
            return Err(ConfigError(format!("platforms {id:?}: oauth needs an issuer and at least one audience")));
        }
        let has_mtls = platform
            .mtls
            .as_ref()
            .is_some_and(|mtls| !(mtls.fingerprints.is_empty() && mtls.subjects.is_empty() && mtls.sans.is_empty()));
        if platform.api_keys.is_empty() && platform.oauth.is_none() && !has_mtls {
            tracing::info!(platform = %id, "platform has no API key, OAuth or mTLS credential: it can authenticate only by signature");
        }
    }
    Ok(())
}
