//! Authentication and identity binding (security.md §1; checklist 63, 64).
//!
//! Two steps, both before any business logic and before the platform profile is fetched:
//!
//! 1. [`layer`], in the middleware stack after the body layer (and after the signature layer,
//!    which may already have put a [`Principal`] there): turns the credentials a request
//!    carries (an API key, `Authorization: Bearer`, the TLS acceptor's [`ClientCertificate`])
//!    into a [`Principal`] request extension. A credential that was sent but does not verify
//!    is refused here (401 + `WWW-Authenticate`; 403 for a token short of a scope), whatever
//!    the operation.
//! 2. [`authorize`], called by `dispatch::run` first: does this operation need a credential
//!    (401 otherwise), may the principal act for the profile the request claims, and is that
//!    profile one we onboarded when `auth.trusted_only` is on (403 `profile_not_trusted`
//!    otherwise, both: transport-mcp.md §6 names it for a credential ↔ profile mismatch).

mod credentials;
mod jwks;

use axum::http::HeaderName;

pub use credentials::{hash_key, hash_key_hex, new_key};

use crate::config::{PlatformSettings, Settings};
use crate::error::{ApiError, ErrorKind};
use crate::operations::Operation;
use crate::trust::{ClientCertificate, Credential, Principal};

/// One onboarded platform, its credentials checked and normalized at start.
#[derive(Debug)]
struct Platform {
    id: String,
    /// The profiles it may claim, each alias's target added.
    profiles: Vec<String>,
    key_hashes: Vec<[u8; 32]>,
    oauth: Option<crate::config::OAuthSettings>,
    fingerprints: Vec<[u8; 32]>,
    subjects: Vec<String>,
    sans: Vec<String>,
}

impl Platform {
    fn principal(&self, credential: Credential) -> Principal {
        Principal { platform: self.id.clone(), credential, profiles: self.profiles.clone() }
    }
}

/// The authentication policy and the onboarded platforms, built once at start.
#[derive(Debug)]
pub struct Authenticator {
    required: bool,
    public: Vec<Operation>,
    trusted_only: bool,
    api_key_header: HeaderName,
    realm: String,
    platforms: Vec<Platform>,
    tokens: jwks::TokenValidator,
}

impl Authenticator {
    /// From the settings; `base_url` is the default realm.
    pub fn new(settings: &Settings, base_url: &str) -> Result<Authenticator, String> {
        let auth = &settings.auth;
        let public = auth
            .public_operations
            .iter()
            .map(|name| {
                Operation::from_name(name).ok_or_else(|| format!("auth.public_operations: unknown operation {name:?}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let api_key_header = HeaderName::try_from(auth.api_key_header.as_str())
            .map_err(|error| format!("auth.api_key_header: {error}"))?;
        let platforms = settings
            .platforms
            .iter()
            .map(|platform| Platform::from_settings(platform, settings))
            .collect::<Result<Vec<_>, _>>()?;
        let realm = auth.realm.clone().unwrap_or_else(|| base_url.to_owned());
        Ok(Authenticator {
            required: auth.required.unwrap_or(!settings.platforms.is_empty()),
            public,
            trusted_only: auth.trusted_only,
            api_key_header,
            realm: realm.replace(['"', '\\'], ""),
            platforms,
            tokens: jwks::TokenValidator::new(auth, settings.dev_insecure_profiles)?,
        })
    }

    /// Whether `operation` needs a credential.
    pub fn requires(&self, operation: Operation) -> bool {
        self.required && !self.public.contains(&operation)
    }

    /// `WWW-Authenticate` for a request without (acceptable) credentials.
    fn challenge(&self, error: Option<&str>) -> String {
        match error {
            Some(error) => format!("Bearer realm=\"{}\", error=\"{error}\"", self.realm),
            None => format!("Bearer realm=\"{}\"", self.realm),
        }
    }

    fn unauthenticated(&self, message: impl Into<String>, error: Option<&str>) -> ApiError {
        ApiError::new(ErrorKind::Unauthenticated { challenge: self.challenge(error) }, message)
    }

    /// Whether some onboarded platform lists `url`.
    fn trusted(&self, url: &str) -> bool {
        self.platforms.iter().any(|platform| claims(&platform.profiles, url))
    }

    /// The principal of a request's credentials: `Ok(None)` when it carries none.
    pub async fn establish(
        &self,
        headers: &axum::http::HeaderMap,
        extensions: &axum::http::Extensions,
    ) -> Result<Option<Principal>, ApiError> {
        if let Some(principal) = extensions.get::<Principal>() {
            return Ok(Some(principal.clone()));
        }
        let mut found: Vec<Principal> = Vec::new();
        if let Some(value) = headers.get(&self.api_key_header) {
            let hash = hash_key(value.as_bytes());
            let platform =
                credentials::find(&self.platforms, |platform| &platform.key_hashes, &hash).ok_or_else(|| {
                    self.unauthenticated(format!("the {} is not a key we issued", self.api_key_header), None)
                })?;
            found.push(platform.principal(Credential::ApiKey));
        }
        if let Some(token) = bearer_token(headers)? {
            // Boxed: validation may fetch a JWKS, and that future would otherwise make every
            // request's future (one without a token too) as large.
            let platform =
                Box::pin(self.tokens.validate(&self.platforms, token)).await.map_err(|refusal| match refusal {
                    jwks::Refusal::Invalid(reason) => self.unauthenticated(reason, Some("invalid_token")),
                    jwks::Refusal::Scope(scope) => ApiError::new(
                        ErrorKind::InsufficientScope {
                            challenge: format!(
                                "Bearer realm=\"{}\", error=\"insufficient_scope\", scope=\"{scope}\"",
                                self.realm
                            ),
                        },
                        format!("the token lacks a required scope; required: {scope}"),
                    ),
                    jwks::Refusal::Unavailable(reason) => ApiError::new(ErrorKind::Unavailable, reason),
                })?;
            found.push(platform.principal(Credential::Bearer));
        }
        if let Some(certificate) = extensions.get::<ClientCertificate>() {
            match credentials::certificate_platform(&self.platforms, certificate) {
                Some(platform) => found.push(platform.principal(Credential::ClientCertificate)),
                None => tracing::debug!("client certificate maps to no platform"),
            }
        }
        let mut found = found.into_iter();
        let first = found.next();
        if let Some(first) = &first
            && let Some(other) = found.find(|other| other.platform != first.platform)
        {
            return Err(ApiError::new(
                ErrorKind::Forbidden,
                format!(
                    "the request's credentials name different platforms ({} by {}, {} by {})",
                    first.platform,
                    first.credential.name(),
                    other.platform,
                    other.credential.name()
                ),
            ));
        }
        Ok(first)
    }
}

impl Platform {
    fn from_settings(platform: &PlatformSettings, settings: &Settings) -> Result<Platform, String> {
        let mut profiles = platform.profiles.clone();
        for profile in &platform.profiles {
            if let Some(target) = settings.profiles.aliases.get(profile) {
                profiles.push(target.clone());
            }
        }
        let (subjects, sans) = match &platform.mtls {
            Some(mtls) => (mtls.subjects.clone(), mtls.sans.clone()),
            None => (Vec::new(), Vec::new()),
        };
        Ok(Platform {
            id: platform.id.clone(),
            profiles,
            key_hashes: platform.key_hashes().map_err(|error| error.0)?,
            oauth: platform.oauth.clone(),
            fingerprints: platform.fingerprints().map_err(|error| error.0)?,
            subjects,
            sans,
        })
    }
}

/// Whether the allowed `profiles` (exact URLs, or prefixes written `https://host/path/*`) cover `url`.
fn claims(profiles: &[String], url: &str) -> bool {
    profiles.iter().any(|allowed| crate::trust::profile_covers(allowed, url))
}

/// The token of `Authorization: Bearer <token>`; other schemes are not ours to judge.
fn bearer_token(headers: &axum::http::HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else { return Ok(None) };
    let text = value.to_str().unwrap_or_default();
    let Some((scheme, token)) = text.split_once(' ') else { return Ok(None) };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Ok(None);
    }
    Ok(Some(token.trim()))
}

impl Authenticator {
    /// The decision for one call: a credential where the operation needs one, a principal that
    /// may act for the claimed profile, a trusted profile when only onboarded platforms may call.
    ///
    /// `claimed` is the profile URL the request names (resolved only when needed); `raw_meta` the
    /// URL in MCP `meta` as sent, which a principal may name when no `UCP-Agent` header was sent.
    pub fn authorize(
        &self,
        operation: Operation,
        principal: Option<&Principal>,
        raw_meta: Option<&str>,
        agent_header: bool,
        claimed: impl FnOnce() -> Result<String, ApiError>,
    ) -> Result<(), ApiError> {
        let auth = self;
        if principal.is_none() && auth.requires(operation) {
            return Err(auth.unauthenticated(
                format!(
                    "{} needs credentials: an API key ({}), an OAuth bearer token, a client certificate or an HTTP message signature",
                    operation.name(),
                    auth.api_key_header
                ),
                None,
            ));
        }
        if principal.is_none() && !auth.trusted_only {
            return Ok(());
        }
        let claimed = claimed()?;
        if let Some(principal) = principal
            && !principal.may_claim(&claimed)
            && !raw_meta.is_some_and(|raw| !agent_header && principal.may_claim(raw))
        {
            // The brief's code for a credential ↔ profile mismatch (transport-mcp.md §6).
            return Err(ApiError::new(
                ErrorKind::ProfileNotTrusted,
                format!(
                    "the {} credential of platform {} may not act for profile {claimed}",
                    principal.credential.name(),
                    principal.platform
                ),
            ));
        }
        if auth.trusted_only && !auth.trusted(&claimed) {
            return Err(ApiError::new(
                ErrorKind::ProfileNotTrusted,
                format!("profile {claimed} is not a platform this business has onboarded"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
