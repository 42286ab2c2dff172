//! Carts and checkouts: the stored session (`model`), the merchant's rules (`rules`) and the
//! pricing engine that turns both into line totals, totals, messages and a status (`pricing`).

mod attempt;
mod eligibility;
mod interned;
mod model;
mod parts;
mod priced;
mod pricing;
mod rules;

pub use attempt::{PaymentAttempt, instrument_digest};
pub use model::{
    Buyer, Context, FulfillmentChoice, Line, LineRequest, Locked, NotClaimed, PendingAuthentication, Session,
};
pub use parts::{Address, SessionKind, Status};
pub use priced::{
    AppliedDiscount, CatalogItem, Priced, PricedDestination, PricedFulfillment, PricedGroup, PricedLine, PricedOption,
    Total,
};
pub use pricing::{PricingInput, price, rejected_codes};
pub use rules::{DiscountKind, DiscountRule, PricingRules, ShippingRate, ShippingRules, ShippingZone, TaxRate};

use std::sync::Arc;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    Error,
    Warning,
    Info,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Recoverable,
    RequiresBuyerInput,
    RequiresBuyerReview,
    Unrecoverable,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Recoverable => "recoverable",
            Severity::RequiresBuyerInput => "requires_buyer_input",
            Severity::RequiresBuyerReview => "requires_buyer_review",
            Severity::Unrecoverable => "unrecoverable",
        }
    }
}

/// A UCP message about a resource: what is wrong or worth knowing, and where (`path`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub kind: MessageKind,
    pub code: String,
    pub content: String,
    pub severity: Option<Severity>,
    pub path: Option<String>,
    /// A warning that is a disclosure (`presentation: "disclosure"`), with how it displays;
    /// made from the merchant's declarations on every read, never stored with a session.
    #[serde(skip)]
    pub disclosure: Option<Arc<WarningDisplay>>,
}

/// How a disclosure displays besides its text (`message_warning.json`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarningDisplay {
    /// `content_type: "markdown"` rather than plain text.
    pub markdown: bool,
    /// A required visual element (a warning symbol, an energy class label).
    pub image_url: Option<String>,
    /// Where to read more (a regulator's page, a registry entry).
    pub url: Option<String>,
}

impl Message {
    pub fn error(code: &str, severity: Severity, content: impl Into<String>, path: Option<String>) -> Message {
        Message::new(MessageKind::Error, code, content, Some(severity), path)
    }

    pub fn warning(code: &str, content: impl Into<String>, path: Option<String>) -> Message {
        Message::new(MessageKind::Warning, code, content, None, path)
    }

    pub fn info(code: &str, content: impl Into<String>, path: Option<String>) -> Message {
        Message::new(MessageKind::Info, code, content, None, path)
    }

    /// A warning the platform must keep visible near `path` (checkout.md §4).
    pub fn disclosure(code: &str, content: &str, display: Arc<WarningDisplay>, path: String) -> Message {
        Message { disclosure: Some(display), ..Message::new(MessageKind::Warning, code, content, None, Some(path)) }
    }

    fn new(
        kind: MessageKind,
        code: &str,
        content: impl Into<String>,
        severity: Option<Severity>,
        path: Option<String>,
    ) -> Message {
        Message { kind, code: code.into(), content: content.into(), severity, path, disclosure: None }
    }
}

/// Whether `email` looks deliverable: one `@`, a non-empty local part, a dotted domain.
pub fn is_valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else { return false };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && email.len() <= 254
        && !email.chars().any(|ch| ch.is_whitespace() || ch.is_control())
}

/// Whether `phone` is an E.164 number: `+` and 8 to 15 digits, the first not zero.
pub fn is_valid_phone(phone: &str) -> bool {
    let Some(digits) = phone.strip_prefix('+') else { return false };
    (8..=15).contains(&digits.len()) && digits.bytes().all(|byte| byte.is_ascii_digit()) && !digits.starts_with('0')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contact_validation() {
        assert!(is_valid_email("ada@example.com"));
        for bad in ["ada", "ada@", "@example.com", "ada@example", "a b@example.com", "ada@@example.com"] {
            assert!(!is_valid_email(bad), "{bad}");
        }
        assert!(is_valid_phone("+14155550123"));
        for bad in ["4155550123", "+0155550123", "+1 415", "+1415555012345678"] {
            assert!(!is_valid_phone(bad), "{bad}");
        }
    }

    fn attempt(session: &Session, started_at: i64) -> PaymentAttempt {
        let pricing = Priced {
            lines: Vec::new(),
            totals: Vec::new(),
            messages: Vec::new(),
            fulfillment: None,
            discount_codes: Vec::new(),
            applied_discounts: Vec::new(),
            status: Status::ReadyForComplete,
            used_codes: Vec::new(),
        };
        PaymentAttempt {
            handler_id: "sandbox".into(),
            key: session.charge_key(),
            amount: 100,
            currency: "USD".into(),
            started_at,
            in_doubt: false,
            confirms: None,
            instrument: None,
            pricing: Box::new(pricing),
            webhook: None,
        }
    }

    // The processor key is ours (checkout + attempt), stable within an attempt and new after
    // a decline or a refund (issue 8 item 4); a refusal before any charge keeps it.
    #[test]
    fn charge_keys_are_per_checkout_and_attempt() {
        let mut session = Session::new("chk_1".into(), SessionKind::Checkout, "USD".into(), "p".into(), 0, 60);
        let first = session.charge_key();
        assert_eq!(first, "chk_1-attempt-1");
        session.claim(attempt(&session, 0)).unwrap();
        session.release();
        assert_eq!(session.charge_key(), first, "a processor outage retries the same attempt");
        session.refuse_payment(Message::error("payment_failed", Severity::Recoverable, "bad instrument", None));
        assert_eq!(session.charge_key(), first, "nothing was charged under the key");
        session.claim(attempt(&session, 0)).unwrap();
        session.fail_payment(Message::error("payment_failed", Severity::Recoverable, "declined", None));
        assert_eq!(session.charge_key(), "chk_1-attempt-2");
        session.claim(attempt(&session, 0)).unwrap();
        session.refunded();
        assert_eq!(session.status, Status::Incomplete, "a refund gives the claim back");
        assert_eq!(session.charge_key(), "chk_1-attempt-3");
        assert!(session.payment_attempt.is_none(), "a released claim leaves no unresolved attempt");
        // A challenge nobody will finish: its charge waits under the key, so the next is new.
        let challenge = || super::PendingAuthentication {
            handler_id: "sandbox".into(),
            instrument_type: "card".into(),
            reference: "ref".into(),
            ..Default::default()
        };
        session.claim(attempt(&session, 0)).unwrap();
        session.await_authentication(challenge());
        assert_eq!(session.charge_key(), "chk_1-attempt-3", "the buyer's challenge confirms the same attempt");
        assert!(session.abandon_authentication());
        assert_eq!(session.charge_key(), "chk_1-attempt-4");
        assert!(!session.abandon_authentication(), "nothing left to abandon");
        session.claim(attempt(&session, 0)).unwrap();
        session.await_authentication(challenge());
        session.refuse_payment(Message::error("payment_failed", Severity::Recoverable, "bad instrument", None));
        assert_eq!(session.charge_key(), "chk_1-attempt-5", "a refusal abandons a waiting challenge");
    }

    // Issue 9 item 3: the attempt is recorded with the claim, unresolved until the outcome is
    // stored, stuck once in doubt or older than the recovery timeout, and kept on completion.
    #[test]
    fn a_claim_records_its_attempt_until_the_outcome_is_stored() {
        let mut session = Session::new("chk_2".into(), SessionKind::Checkout, "USD".into(), "p".into(), 0, 600);
        session.claim(attempt(&session, 100)).unwrap();
        assert_eq!(session.unresolved_attempt().map(|attempt| attempt.key.as_str()), Some("chk_2-attempt-1"));
        assert!(!session.is_stuck(130, 60), "a young claim is another request's charge in flight");
        assert!(session.is_stuck(160, 60), "a claim older than the timeout is stuck");
        assert!(session.doubt_payment());
        assert!(session.is_stuck(101, 60), "a charge whose call failed is settled right away");
        let pricing = session.payment_attempt.as_ref().unwrap().pricing.as_ref().clone();
        session.complete("ord_1".into(), pricing, 200).unwrap();
        assert!(session.unresolved_attempt().is_none());
        assert!(!session.is_stuck(10_000, 60));
        assert_eq!(session.payment_attempt.as_ref().map(|attempt| attempt.in_doubt), Some(false), "kept as the record");
    }
}
