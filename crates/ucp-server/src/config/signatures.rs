//! `[signatures]`: RFC 9421 verification of platform requests (and RFC 9530 `Content-Digest`),
//! and the signing of our own responses. See `security.md` §2.
//!
//! ```toml
//! [signatures]
//! policy = "enforce"            # off (default) | log | enforce
//! sign_responses = "complete_checkout"   # none | complete_checkout (default) | all
//!
//! [[signatures.platforms]]      # per-platform overrides, by profile URL
//! profile = "https://ucp.goog/profiles/2026-04-08/ucp.json"
//! policy = "enforce"
//! require_ucp_agent = false
//! ```

use serde::{Deserialize, Serialize};

use super::values;

/// What the signature layer does with a request's signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignaturePolicy {
    /// Signatures are not looked at (the demo start).
    #[default]
    Off,
    /// Verified when present; a failure or an absent signature is logged, never refused.
    Log,
    /// Required: an absent signature is `signature_missing`, a bad one refused with its code.
    Enforce,
}

/// Which of our responses carry `Signature-Input` / `Signature` / `Content-Digest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseSigning {
    None,
    /// `complete_checkout` answers (the order confirmation), as `security.md` §2 recommends.
    #[default]
    CompleteCheckout,
    /// Every MCP and REST operation answer.
    All,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignatureSettings {
    /// The policy for platforms without an override below.
    pub policy: SignaturePolicy,
    /// How far in the future a signature's `created` may be (clock skew), in seconds.
    pub max_clock_skew_secs: u64,
    /// `tag` values accepted besides none (signatures with another tag are skipped).
    #[serde(deserialize_with = "values::list")]
    pub accepted_tags: Vec<String>,
    /// Whether `ucp-agent` must be covered when the header is sent (Google's signatures do
    /// not cover it, so off by default).
    #[serde(deserialize_with = "values::flag")]
    pub require_ucp_agent: bool,
    pub sign_responses: ResponseSigning,
    /// How long a rotated-out signing key stays published (and so verifiable), in days.
    pub key_grace_days: u64,
    /// Overrides by platform profile URL.
    pub platforms: Vec<PlatformSignatureSettings>,
}

impl Default for SignatureSettings {
    fn default() -> Self {
        SignatureSettings {
            policy: SignaturePolicy::Off,
            max_clock_skew_secs: 300,
            accepted_tags: vec!["ucp-rest-request".into(), "web-bot-auth".into()],
            require_ucp_agent: false,
            sign_responses: ResponseSigning::CompleteCheckout,
            key_grace_days: 7,
            platforms: Vec::new(),
        }
    }
}

/// One platform's overrides of the global signature settings.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSignatureSettings {
    /// The platform's profile URL, as it names it in `UCP-Agent` / `meta` (after aliases).
    #[serde(deserialize_with = "values::url_text")]
    pub profile: String,
    #[serde(default)]
    pub policy: Option<SignaturePolicy>,
    #[serde(default)]
    pub require_ucp_agent: Option<bool>,
}

/// The rules that apply to one platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectivePolicy {
    pub policy: SignaturePolicy,
    pub require_ucp_agent: bool,
}

impl SignatureSettings {
    /// The policy for the platform whose profile is `profile` (`None`: not known yet).
    pub fn for_platform(&self, profile: Option<&str>) -> EffectivePolicy {
        let over = profile.and_then(|url| self.platforms.iter().find(|platform| platform.profile == url));
        EffectivePolicy {
            policy: over.and_then(|platform| platform.policy).unwrap_or(self.policy),
            require_ucp_agent: over.and_then(|platform| platform.require_ucp_agent).unwrap_or(self.require_ucp_agent),
        }
    }

    /// Whether any platform could be subject to verification (else the layer skips requests
    /// without even looking for the profile).
    pub fn any_verification(&self) -> bool {
        self.policy != SignaturePolicy::Off
            || self
                .platforms
                .iter()
                .any(|platform| platform.policy.is_some_and(|policy| policy != SignaturePolicy::Off))
    }
}
