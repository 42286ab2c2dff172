//! Carts and checkouts: the stored session (`model`), the merchant's rules (`rules`) and the
//! pricing engine that turns both into line totals, totals, messages and a status (`pricing`).

mod interned;
mod model;
mod parts;
mod priced;
mod pricing;
mod rules;

pub use model::{
    Buyer, Context, FulfillmentChoice, Line, LineRequest, Locked, NotClaimed, PendingAuthentication, Session,
};
pub use parts::{Address, SessionKind, Status};
pub use priced::{
    AppliedDiscount, CatalogItem, Priced, PricedDestination, PricedFulfillment, PricedGroup, PricedLine, PricedOption,
    Total,
};
pub use pricing::{PricingInput, price};
pub use rules::{DiscountKind, DiscountRule, PricingRules, ShippingRate, ShippingRules, ShippingZone, TaxRate};

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
}

impl Message {
    pub fn error(code: &str, severity: Severity, content: impl Into<String>, path: Option<String>) -> Message {
        Message { kind: MessageKind::Error, code: code.into(), content: content.into(), severity: Some(severity), path }
    }

    pub fn warning(code: &str, content: impl Into<String>, path: Option<String>) -> Message {
        Message { kind: MessageKind::Warning, code: code.into(), content: content.into(), severity: None, path }
    }

    pub fn info(code: &str, content: impl Into<String>, path: Option<String>) -> Message {
        Message { kind: MessageKind::Info, code: code.into(), content: content.into(), severity: None, path }
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

    // The processor key is ours (checkout + attempt), stable within an attempt and new after
    // a decline or a refund (issue 8 item 4).
    #[test]
    fn charge_keys_are_per_checkout_and_attempt() {
        let mut session = Session::new("chk_1".into(), SessionKind::Checkout, "USD".into(), "p".into(), 0, 60);
        let first = session.charge_key();
        assert_eq!(first, "chk_1-attempt-1");
        session.claim().unwrap();
        session.release();
        assert_eq!(session.charge_key(), first, "a processor outage retries the same attempt");
        session.claim().unwrap();
        session.fail_payment(Message::error("payment_failed", Severity::Recoverable, "declined", None));
        assert_eq!(session.charge_key(), "chk_1-attempt-2");
        session.claim().unwrap();
        session.refunded();
        assert_eq!(session.status, Status::Incomplete, "a refund gives the claim back");
        assert_eq!(session.charge_key(), "chk_1-attempt-3");
    }
}
