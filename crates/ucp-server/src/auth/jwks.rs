//! OAuth 2.0 bearer JWTs: the issuer's JWKS fetched (https, timeout, size cap, no redirects)
//! and cached with a TTL; an unknown `kid` refetches at most once a minute per issuer; then
//! signature, `iss`, `aud`, `exp`, `nbf`, scopes and the client id are checked.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::errors::ErrorKind as JwtError;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

use super::Platform;
use crate::config::{AuthSettings, OAuthSettings};

/// Largest JWKS document read.
const MAX_JWKS_BYTES: usize = 256 * 1024;
/// Least time between two forced refreshes of one JWKS (unknown `kid`).
const REFRESH_EVERY: Duration = Duration::from_secs(60);
/// Signature algorithms a token may use: asymmetric only (never `none` or HMAC).
const ALGORITHMS: &[Algorithm] = &[
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::EdDSA,
];

/// Why a token was not accepted.
#[derive(Debug)]
pub(super) enum Refusal {
    /// 401 `invalid_token`.
    Invalid(String),
    /// 403 `insufficient_scope`: the full set of required scopes.
    Scope(String),
    /// The issuer's keys could not be fetched (503).
    Unavailable(String),
}

/// The claims we look at; others are ignored.
#[derive(Debug, Deserialize)]
struct Claims {
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    scp: Option<Scopes>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scopes {
    Text(String),
    List(Vec<String>),
}

#[derive(Debug, Deserialize)]
struct Unverified {
    #[serde(default)]
    iss: Option<String>,
}

pub(super) struct TokenValidator {
    client: reqwest::Client,
    keys: moka::future::Cache<String, Arc<Vec<Jwk>>>,
    /// JWKS URLs refreshed for an unknown `kid` in the last [`REFRESH_EVERY`].
    refreshed: moka::sync::Cache<String, ()>,
    leeway: u64,
    allow_loopback_http: bool,
}

impl std::fmt::Debug for TokenValidator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TokenValidator").finish_non_exhaustive()
    }
}

impl TokenValidator {
    pub(super) fn new(settings: &AuthSettings, allow_loopback_http: bool) -> Result<TokenValidator, String> {
        let timeout = Duration::from_millis(settings.jwks_timeout_ms.max(1));
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(3)))
            .user_agent(concat!("ucpd/", env!("CARGO_PKG_VERSION")))
            .no_proxy()
            .build()
            .map_err(|error| format!("building the JWKS client: {error}"))?;
        Ok(TokenValidator {
            client,
            keys: moka::future::Cache::builder()
                .max_capacity(64)
                .time_to_live(Duration::from_secs(settings.jwks_ttl_secs))
                .build(),
            refreshed: moka::sync::Cache::builder().max_capacity(64).time_to_live(REFRESH_EVERY).build(),
            leeway: settings.leeway_secs,
            allow_loopback_http,
        })
    }

    /// The platform whose issuer signed `token`, once every check passed.
    pub(super) async fn validate<'a>(&self, platforms: &'a [Platform], token: &str) -> Result<&'a Platform, Refusal> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|error| Refusal::Invalid(format!("the bearer token is not a JWT: {error}")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refusal::Invalid(format!("tokens signed with {:?} are not accepted", header.alg)));
        }
        let unverified: Unverified = jsonwebtoken::dangerous::insecure_decode(token)
            .map(|data| data.claims)
            .map_err(|error| Refusal::Invalid(format!("the bearer token's claims are unreadable: {error}")))?;
        let issuer = unverified.iss.unwrap_or_default();
        let candidates: Vec<(&Platform, &OAuthSettings)> = platforms
            .iter()
            .filter_map(|platform| platform.oauth.as_ref().map(|oauth| (platform, oauth)))
            .filter(|(_, oauth)| oauth.issuer == issuer)
            .collect();
        if candidates.is_empty() {
            return Err(Refusal::Invalid(format!("tokens from issuer {issuer:?} are not accepted here")));
        }
        let mut first_refusal = None;
        for (platform, oauth) in candidates {
            match self.check(oauth, &header, token).await {
                Ok(()) => return Ok(platform),
                Err(refusal) => {
                    first_refusal.get_or_insert(refusal);
                }
            }
        }
        Err(first_refusal.unwrap_or_else(|| Refusal::Invalid("the bearer token was not accepted".into())))
    }

    async fn check(&self, oauth: &OAuthSettings, header: &jsonwebtoken::Header, token: &str) -> Result<(), Refusal> {
        let key = self.key(oauth, header).await?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&oauth.issuer]);
        validation.set_audience(&oauth.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway;
        let claims: Claims = jsonwebtoken::decode(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|error| Refusal::Invalid(describe(error.kind())))?;
        if let Some(client_id) = &oauth.client_id
            && claims.azp.as_ref().or(claims.client_id.as_ref()) != Some(client_id)
        {
            return Err(Refusal::Invalid("the bearer token was issued to another client".into()));
        }
        let granted: Vec<&str> = match (&claims.scope, &claims.scp) {
            (Some(scope), _) => scope.split_ascii_whitespace().collect(),
            (None, Some(Scopes::Text(scope))) => scope.split_ascii_whitespace().collect(),
            (None, Some(Scopes::List(scopes))) => scopes.iter().map(String::as_str).collect(),
            (None, None) => Vec::new(),
        };
        if oauth.scopes.iter().any(|scope| !granted.contains(&scope.as_str())) {
            return Err(Refusal::Scope(oauth.scopes.join(" ")));
        }
        Ok(())
    }

    /// The issuer's key for the token: by `kid` (refreshing the set once if unknown), or the
    /// only key of the token's algorithm family when the token names none.
    async fn key(&self, oauth: &OAuthSettings, header: &jsonwebtoken::Header) -> Result<DecodingKey, Refusal> {
        let url = oauth.jwks_url.as_str();
        let keys = self.keys(oauth, false).await?;
        if let Some(key) = pick(&keys, header) {
            return Ok(key);
        }
        if header.kid.is_some() && self.refreshed.get(url).is_none() {
            self.refreshed.insert(url.to_owned(), ());
            let keys = self.keys(oauth, true).await?;
            if let Some(key) = pick(&keys, header) {
                return Ok(key);
            }
        }
        Err(Refusal::Invalid(match &header.kid {
            Some(kid) => format!("the issuer publishes no key {kid:?}"),
            None => "the token names no kid and the issuer has several keys".into(),
        }))
    }

    async fn keys(&self, oauth: &OAuthSettings, fresh: bool) -> Result<Arc<Vec<Jwk>>, Refusal> {
        let url = oauth.jwks_url.as_str().to_owned();
        if fresh {
            self.keys.invalidate(&url).await;
        }
        self.keys.try_get_with(url, async { self.fetch(&oauth.jwks_url).await.map(Arc::new) }).await.map_err(
            |error: Arc<String>| {
                tracing::warn!(jwks = %oauth.jwks_url, reason = %error, "JWKS fetch failed");
                Refusal::Unavailable(format!("the token issuer's keys are unavailable: {error}"))
            },
        )
    }

    async fn fetch(&self, url: &url::Url) -> Result<Vec<Jwk>, String> {
        let loopback = match url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            None => false,
        };
        if url.scheme() != "https" && !(self.allow_loopback_http && loopback) {
            return Err(format!("{url} is not https (plain http only from loopback with dev_insecure_profiles)"));
        }
        let mut response = self.client.get(url.clone()).send().await.map_err(|error| error.to_string())?;
        if !response.status().is_success() {
            return Err(format!("{url} answered {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| error.to_string())? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(format!("{url} is larger than {MAX_JWKS_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        #[derive(Deserialize)]
        struct Set {
            keys: Vec<serde_json::Value>,
        }
        let set: Set = serde_json::from_slice(&body).map_err(|error| format!("{url} is not a JWK Set: {error}"))?;
        // A key we cannot read (another type, private members) is skipped, not fatal.
        Ok(set.keys.into_iter().filter_map(|key| serde_json::from_value::<Jwk>(key).ok()).collect())
    }
}

/// The key for `header`: by `kid`, or the only key of its algorithm family when it names none.
fn pick(keys: &[Jwk], header: &jsonwebtoken::Header) -> Option<DecodingKey> {
    let mut usable = keys.iter().filter_map(|jwk| DecodingKey::from_jwk(jwk).ok().map(|key| (jwk, key)));
    match &header.kid {
        Some(kid) => usable.find(|(jwk, _)| jwk.common.key_id.as_deref() == Some(kid)).map(|(_, key)| key),
        None => {
            let mut same_family = usable.filter(|(_, key)| key.family() == header.alg.family());
            match (same_family.next(), same_family.next()) {
                (Some((_, only)), None) => Some(only),
                _ => None,
            }
        }
    }
}

fn describe(error: &JwtError) -> String {
    match error {
        JwtError::ExpiredSignature => "the bearer token has expired".into(),
        JwtError::ImmatureSignature => "the bearer token is not valid yet (nbf)".into(),
        JwtError::InvalidAudience => "the bearer token is for another audience".into(),
        JwtError::InvalidIssuer => "the bearer token is from another issuer".into(),
        JwtError::InvalidSignature => "the bearer token's signature does not verify".into(),
        JwtError::MissingRequiredClaim(claim) => format!("the bearer token lacks the {claim} claim"),
        other => format!("the bearer token is not valid: {other:?}"),
    }
}
