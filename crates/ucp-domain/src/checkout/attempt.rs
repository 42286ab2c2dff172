//! The payment attempt a checkout records before any money moves: which handler, our
//! processor key, the amount and the pricing charged. It is saved with the claim that makes
//! the checkout `complete_in_progress`, so a complete that dies mid-charge (a client gone, a
//! killed process, a lost processor answer) leaves enough behind for recovery to ask the
//! processor what happened and place the order or give the money back. Never a credential.

use serde::{Deserialize, Serialize};

use super::Priced;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaymentAttempt {
    /// The handler instance charged (`payment.instruments[].handler_id`).
    pub handler_id: String,
    /// Our processor idempotency key ([`super::Session::charge_key`]): what the processor is
    /// asked about when the outcome is unknown.
    pub key: String,
    /// Minor units of `currency`.
    pub amount: i64,
    pub currency: String,
    /// Unix seconds when the checkout was claimed for this charge.
    pub started_at: i64,
    /// The processor call ended without an answer: the charge may or may not have happened.
    #[serde(default)]
    pub in_doubt: bool,
    /// The challenge reference, when this attempt confirms a passed 3-D Secure challenge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirms: Option<String>,
    /// A digest of the credential charged ([`instrument_digest`]), never the credential: what
    /// tells a retry with the same card from another card while a 3-D Secure challenge waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrument: Option<String>,
    /// The pricing charged: an order recovery places is placed at exactly this.
    pub pricing: Box<Priced>,
    /// Where the order's webhooks go (from the caller that claimed it), so an order recovery
    /// places is announced like any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<crate::webhook::WebhookTarget>,
}

/// SHA-256 (hex) of the checkout id and a payment credential's token: the same card on the
/// same checkout gives the same digest; the token cannot be read back from it.
pub fn instrument_digest(checkout_id: &str, token: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(checkout_id.as_bytes());
    hash.update([0]);
    hash.update(token.as_bytes());
    hash.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
}
