//! What the trust layers established about a request, carried as request extensions from the
//! layer that learned it to the code that decides (authentication, identity binding,
//! idempotency scope, the audit line).
//!
//! - The TLS acceptor puts a [`ClientCertificate`] on every request of a connection whose
//!   client presented a certificate that chains to a configured CA.
//! - The signature layer puts a [`Principal`] with [`Credential::Signature`] on a request whose
//!   RFC 9421 signature verified with a key from the claimed platform profile.
//! - The authentication step turns API keys, bearer tokens and client certificates into a
//!   [`Principal`] as well, and then decides: is a credential required for this operation, and
//!   may this principal act for the profile the request claims?

/// How a caller proved who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential {
    ApiKey,
    Bearer,
    ClientCertificate,
    Signature,
}

impl Credential {
    /// The name in logs and the audit line.
    pub fn name(self) -> &'static str {
        match self {
            Credential::ApiKey => "api_key",
            Credential::Bearer => "bearer",
            Credential::ClientCertificate => "mtls",
            Credential::Signature => "signature",
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The platform's name: its id in `[[platforms]]`, or the profile URL for a platform known
    /// only by the key in its profile (signatures).
    pub platform: String,
    pub credential: Credential,
    /// The profile URLs this principal may claim in `UCP-Agent` / `meta` (its aliases
    /// included). A signature's principal may claim only the profile its key came from.
    pub profiles: Vec<String>,
}

impl Principal {
    /// Whether this principal may act for the profile at `url`.
    pub fn may_claim(&self, url: &str) -> bool {
        self.profiles.iter().any(|profile| profile_covers(profile, url))
    }
}

/// Whether an allowed profile entry covers `url`: equal to it, or, for an entry written
/// `https://host/path/*` (configured platforms only), any URL below that path on that host.
pub fn profile_covers(allowed: &str, url: &str) -> bool {
    match allowed.strip_suffix('*') {
        Some(prefix) if prefix.ends_with('/') && prefix.matches('/').count() >= 3 => {
            url.len() > prefix.len() && url.starts_with(prefix)
        }
        _ => allowed == url,
    }
}

/// The DER of the verified client certificate (leaf first) of the request's TLS connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    pub chain: Vec<Vec<u8>>,
}
