//! What a checkout still needs (contact, payment, 3-D Secure) and the status that follows
//! from the messages.

use super::PricedLine;
use super::PricingInput;
use crate::checkout::{Message, MessageKind, Session, SessionKind, Severity, Status, is_valid_email, is_valid_phone};

/// Buyer contact, payment and escalation requirements of a checkout.
pub(super) fn checkout_requirements(input: &PricingInput<'_>, lines: &[PricedLine], messages: &mut Vec<Message>) {
    let session = input.session;
    if lines.is_empty() {
        messages.push(Message::error(
            "missing",
            Severity::Recoverable,
            "Add at least one item.",
            Some("$.line_items".into()),
        ));
    }
    let buyer = session.buyer.clone().unwrap_or_default();
    match buyer.email.as_deref() {
        Some(email) if !is_valid_email(email) => messages.push(Message::error(
            "invalid_email",
            Severity::Recoverable,
            format!("{email:?} is not a valid email address."),
            Some("$.buyer.email".into()),
        )),
        None if input.rules.require_email => messages.push(Message::error(
            "field_required",
            Severity::Recoverable,
            "The buyer's email address is required for the order confirmation.",
            Some(if session.buyer.is_some() { "$.buyer.email".into() } else { "$".into() }),
        )),
        _ => {}
    }
    if let Some(phone) = buyer.phone_number.as_deref()
        && !is_valid_phone(phone)
    {
        messages.push(Message::error(
            "invalid_phone",
            Severity::Recoverable,
            format!("{phone:?} is not an E.164 phone number (e.g. +14155550123)."),
            Some("$.buyer.phone_number".into()),
        ));
    }
    if !input.payment_available {
        messages.push(Message::error(
            "payment_unavailable",
            Severity::RequiresBuyerInput,
            "No payment method is available for this checkout; the buyer can pay on the merchant's page.",
            None,
        ));
    }
    if let Some(pending) = &session.pending_authentication
        && !pending.approved
    {
        messages.push(Message::error(
            "requires_3ds",
            Severity::RequiresBuyerInput,
            "The card issuer requires the buyer to authenticate this payment (3-D Secure) on the merchant's page.",
            None,
        ));
    }
}

pub(super) fn status_of(session: &Session, messages: &[Message], empty: bool) -> Status {
    if session.status.is_terminal() || session.status == Status::CompleteInProgress {
        return session.status;
    }
    if session.kind == SessionKind::Cart {
        return Status::Incomplete;
    }
    let errors = messages.iter().filter(|message| message.kind == MessageKind::Error);
    let mut incomplete = empty;
    for message in errors {
        match message.severity {
            Some(Severity::RequiresBuyerInput | Severity::RequiresBuyerReview) => return Status::RequiresEscalation,
            _ => incomplete = true,
        }
    }
    if incomplete { Status::Incomplete } else { Status::ReadyForComplete }
}
