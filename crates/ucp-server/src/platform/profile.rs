//! A platform's profile as the server keeps it, and its negotiation with ours.

use std::collections::BTreeMap;

use ucp_protocol::negotiation::{Declaration, Negotiated, NegotiationError, Offer};

use crate::discovery::BusinessProfile;
use crate::error::{ApiError, ErrorKind};
use crate::terms::Terms;

/// What negotiation needs from a platform's profile.
#[derive(Debug, Clone)]
pub struct PlatformProfile {
    pub url: String,
    pub version: String,
    /// Capability name → versions the platform declares.
    pub capabilities: BTreeMap<String, Vec<String>>,
    /// Public keys (`keys` or `signing_keys`), for signature checks.
    pub keys: Vec<serde_json::Value>,
    /// The same keys as verifying keys (unusable ones kept with the reason).
    pub signature_keys: crate::signatures::keys::KeySet,
    /// The payment handlers the platform declares it can use, with their instrument types;
    /// empty when it declares none.
    pub payment_handlers: Vec<ucp_domain::payment::PlatformHandler>,
    /// Capability name → its `config.webhook_url` (order webhooks, order.md §3).
    pub webhook_urls: BTreeMap<String, String>,
    /// Size of the profile body as fetched: what the cache weighs it by.
    pub body_bytes: usize,
    /// The negotiation with our profile, settled on first use ([`PlatformProfile::terms`]).
    pub terms: std::sync::OnceLock<Result<Terms, ApiError>>,
}

impl PlatformProfile {
    /// What negotiating with `ours` settles (or why it fails), computed once per cached
    /// profile: neither side changes while this copy is cached. `ours` is the process's one
    /// business profile.
    pub fn terms(&self, ours: &BusinessProfile) -> Result<&Terms, ApiError> {
        self.terms
            .get_or_init(|| negotiate(ours, self).map(|negotiated| Terms::new(ours, negotiated)))
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Version check and capability intersection (overview §5).
pub fn negotiate(ours: &BusinessProfile, platform: &PlatformProfile) -> Result<Negotiated, ApiError> {
    let business = Offer { accepted_versions: &ours.accepted_versions, capabilities: &ours.offered };
    let declared = Declaration { version: &platform.version, capabilities: &platform.capabilities };
    ucp_protocol::negotiation::negotiate(business, declared).map_err(|error| match error {
        NegotiationError::VersionUnsupported { .. } => ApiError::new(ErrorKind::VersionUnsupported, error.to_string()),
    })
}
