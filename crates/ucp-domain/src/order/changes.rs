//! The merchant's order operations as pure functions: each checks its request against the
//! order as it is (known lines, quantities, money paid, state) and answers the order as it
//! becomes plus the records it appends. Nothing is rewritten: quantities change only through
//! an appended event or adjustment, and statuses are derived again from the quantities.

use std::collections::BTreeMap;

use crate::tax::TaxRate;

pub use super::action::{LineQuantity, OrderAction, Tracking};
pub use super::pending::Pending;
use super::share::{line_total, tax_share};
use super::{
    AdjustedLine, Adjustment, AdjustmentStatus, ExpectedLine, FulfillmentEvent, LineStatus, Order, OrderStatus,
    OrderTotal,
};

/// Event and adjustment types we write.
pub const SHIPPED: &str = "shipped";
pub const DELIVERED: &str = "delivered";
pub const FAILED_ATTEMPT: &str = "failed_attempt";
pub const RETURNED: &str = "returned";
pub const REFUND: &str = "refund";
pub const CANCELLATION: &str = "cancellation";
pub const RETURN: &str = "return";

/// At most this many lines in one request.
pub const MAX_LINES: usize = 100;
const MAX_TEXT: usize = 500;
const MAX_URL: usize = 2048;

/// A record a change appends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderRecord {
    Event(FulfillmentEvent),
    Adjustment(Adjustment),
}

impl OrderRecord {
    pub fn id(&self) -> &str {
        match self {
            OrderRecord::Event(event) => &event.id,
            OrderRecord::Adjustment(adjustment) => &adjustment.id,
        }
    }
}

/// What an action does to an order.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub order: Order,
    pub records: Vec<OrderRecord>,
    /// Money to give back through the processor (minor units), when the action moves any.
    pub refund: Option<i64>,
}

/// Why an action was refused; the order is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeError {
    #[error("{0}")]
    Invalid(String),
    #[error("the order has no line {0:?}")]
    UnknownLine(String),
    #[error("line {line}: {requested} requested but only {available} {what}")]
    TooMany { line: String, requested: i64, available: i64, what: &'static str },
    #[error(
        "refund of {requested} exceeds what is left to refund ({available} of {paid} paid, after the refunds recorded, pending or abandoned)"
    )]
    OverRefund { requested: i64, available: i64, paid: i64 },
    #[error("the order is canceled; it cannot change any more")]
    Canceled,
    /// The payment processor refused the refund (its answer); nothing was refunded.
    #[error("the payment processor refused the refund: {0}")]
    ProcessorRefused(String),
    /// A pending refund that cannot be settled any more (the text says why and names its key):
    /// it may have been made, and is for the merchant to reconcile by hand.
    #[error("{0}")]
    RefundAbandoned(String),
    /// A merchant's hand on a refund (record, dismiss) that is not abandoned: the text says what
    /// it is.
    #[error("{0}")]
    NotAbandoned(String),
}

/// Where and when the records of a change are stamped: `ids` gives each record its id.
pub struct Stamp<'a> {
    pub occurred_at: &'a str,
    pub ids: &'a mut dyn FnMut(&str) -> String,
}

/// Applies `action` to `order`. `paid`: what the buyer was charged (None: no payment recorded);
/// `pending`: refunds asked of the processor for other requests and not recorded yet, whose
/// money counts as given back (a refund never asks for money another one is already taking
/// back) and whose cancels' units as canceled; `rates`: the merchant's tax rates, which say
/// whether the order's shipping was taxed.
pub fn apply(
    order: &Order,
    action: &OrderAction,
    paid: Option<i64>,
    pending: &Pending,
    rates: &[TaxRate],
    stamp: Stamp<'_>,
) -> Result<Applied, ChangeError> {
    let given_back = order.refunded().saturating_add(pending.amount);
    // A canceled order takes no change but a refund of what is still paid (a cancel that
    // named a smaller amount leaves money the merchant may yet give back).
    if order.status() == OrderStatus::Canceled && !matches!(action, OrderAction::Refund { .. }) {
        return Err(ChangeError::Canceled);
    }
    let mut next = order.clone();
    let mut records = Vec::new();
    let mut refund = None;
    let at = stamp.occurred_at.to_owned();
    let ids = stamp.ids;
    match action {
        OrderAction::Ship { lines, tracking, description } => {
            let lines = requested(order, lines)?;
            if tracking.tracking_number.is_none() || tracking.tracking_url.is_none() {
                return Err(ChangeError::Invalid("a shipment needs tracking_number and tracking_url".into()));
            }
            check_tracking(tracking)?;
            for (id, quantity) in &lines {
                let line = line_mut(&mut next, id)?;
                let available = free(pending, line);
                if *quantity > available {
                    let what = if reserved(pending, line) > 0 {
                        "are left to ship (the others are held by a cancel whose refund is pending or abandoned)"
                    } else {
                        "are left to ship"
                    };
                    return Err(too_many(id, *quantity, available, what));
                }
                line.quantity.fulfilled += quantity;
            }
            records.push(event(ids(SHIPPED), SHIPPED, &at, &lines, tracking.clone(), text(description)?));
        }
        OrderAction::Deliver { lines, description } | OrderAction::FailDelivery { lines, description } => {
            let kind = if matches!(action, OrderAction::Deliver { .. }) { DELIVERED } else { FAILED_ATTEMPT };
            let in_transit = in_transit(order);
            let lines = match lines {
                Some(lines) => requested(order, lines)?,
                None => {
                    in_transit.iter().filter(|(_, units)| **units > 0).map(|(id, units)| (id.clone(), *units)).collect()
                }
            };
            if lines.is_empty() {
                return Err(ChangeError::Invalid("nothing is in transit: ship units first".into()));
            }
            for (id, quantity) in &lines {
                let available = in_transit.get(id).copied().unwrap_or(0);
                if *quantity > available {
                    return Err(too_many(id, *quantity, available, "are shipped and not yet delivered"));
                }
            }
            let tracking = latest_tracking(order, lines.keys().next().map(String::as_str).unwrap_or_default());
            records.push(event(ids(kind), kind, &at, &lines, tracking, text(description)?));
        }
        OrderAction::Return { lines, tracking, description } => {
            let lines = requested(order, lines)?;
            check_tracking(tracking)?;
            for (id, quantity) in &lines {
                let line = line_mut(&mut next, id)?;
                if *quantity > line.quantity.fulfilled {
                    return Err(too_many(id, *quantity, line.quantity.fulfilled, "were fulfilled"));
                }
                line.quantity.fulfilled -= quantity;
                line.quantity.total -= quantity;
            }
            let description = text(description)?;
            records.push(event(ids(RETURNED), RETURNED, &at, &lines, tracking.clone(), description.clone()));
            records.push(adjustment(ids(RETURN), RETURN, &at, &lines, None, description));
        }
        OrderAction::Cancel { lines, amount, description } => {
            let lines = match lines {
                Some(lines) => requested(order, lines)?,
                None => order
                    .line_items
                    .iter()
                    .map(|line| (line.id.clone(), free(pending, line)))
                    .filter(|(_, units)| *units > 0)
                    .collect(),
            };
            if lines.is_empty() {
                return Err(ChangeError::Invalid(
                    "nothing is left to cancel: every unit has shipped or is held by a cancel whose refund is pending or abandoned".into(),
                ));
            }
            let mut share = 0i64;
            for (id, quantity) in &lines {
                let line = line_mut(&mut next, id)?;
                let available = free(pending, line);
                if *quantity > available {
                    let what = if reserved(pending, line) > 0 {
                        "are neither shipped nor held by a cancel whose refund is pending or abandoned"
                    } else {
                        "are not yet shipped"
                    };
                    return Err(too_many(id, *quantity, available, what));
                }
                line.quantity.total -= quantity;
                share =
                    share.saturating_add(line_total(line).saturating_mul(*quantity) / line.quantity.original.max(1));
            }
            share = share.saturating_add(tax_share(order, share, rates));
            let remaining = paid.map(|paid| paid - given_back).unwrap_or(0).max(0);
            // Nothing was ever fulfilled and nothing is left (pending cancels' units counted as
            // gone): the whole payment goes back, what pending refunds ask aside (shipping and
            // taxes too); otherwise the canceled units' share of their lines and of the tax.
            let money = match amount {
                Some(amount) => {
                    check_refund(*amount, paid, given_back, true)?;
                    *amount
                }
                None if pending.leaves_nothing(&next) => remaining,
                None => share.min(remaining),
            };
            let description = named_text("reason", description)?;
            let money_back = (money > 0).then_some(money);
            withdraw_expectations(&mut next, &lines);
            records.push(adjustment(ids(CANCELLATION), CANCELLATION, &at, &lines, money_back, description));
            refund = money_back;
        }
        OrderAction::Refund { amount, description } => {
            check_refund(*amount, paid, given_back, false)?;
            let description = named_text("reason", description)?;
            records.push(adjustment(ids(REFUND), REFUND, &at, &BTreeMap::new(), Some(*amount), description));
            refund = Some(*amount);
        }
        OrderAction::Adjust { kind, amount, status, description } => {
            let valid = !kind.is_empty()
                && kind.len() <= 64
                && kind.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_');
            if !valid {
                return Err(ChangeError::Invalid("type must be 1-64 characters of a-z, 0-9 and _".into()));
            }
            if matches!(kind.as_str(), REFUND | CANCELLATION | RETURN) {
                return Err(ChangeError::Invalid(format!("use the {kind} operation for a {kind}")));
            }
            // Exact in any JSON reader, and safe to negate and add up.
            if amount.unsigned_abs() > crate::money::MAX_AMOUNT.unsigned_abs() {
                return Err(ChangeError::Invalid("amount must be within ±(2^53-1) minor units".into()));
            }
            records.push(OrderRecord::Adjustment(Adjustment {
                id: ids(kind),
                kind: kind.clone(),
                occurred_at: at.clone(),
                status: *status,
                line_items: Vec::new(),
                totals: vec![total(*amount)],
                description: text(description)?,
            }));
        }
    }
    for line in &mut next.line_items {
        line.status = LineStatus::of(&line.quantity);
    }
    for record in &records {
        match record {
            OrderRecord::Event(event) => next.fulfillment.events.push(event.clone()),
            OrderRecord::Adjustment(adjustment) => next.adjustments.push(adjustment.clone()),
        }
    }
    Ok(Applied { order: next, records, refund })
}

/// Takes canceled units out of the buyer-facing promises (`fulfillment.expectations`): a
/// promise keeps only units still coming, and one left with none is gone, so a canceled order
/// no longer says when it arrives.
fn withdraw_expectations(order: &mut Order, canceled: &BTreeMap<String, i64>) {
    for (id, units) in canceled {
        let mut left = *units;
        for expectation in &mut order.fulfillment.expectations {
            for line in expectation.line_items.iter_mut().filter(|line| &line.id == id) {
                let taken = left.min(line.quantity);
                line.quantity -= taken;
                left -= taken;
            }
            expectation.line_items.retain(|line| line.quantity > 0);
        }
    }
    order.fulfillment.expectations.retain(|expectation| !expectation.line_items.is_empty());
}

/// Units shipped and not yet delivered (nor returned), by line.
pub fn in_transit(order: &Order) -> BTreeMap<String, i64> {
    let mut units: BTreeMap<String, i64> = BTreeMap::new();
    for event in &order.fulfillment.events {
        let sign = match event.kind.as_str() {
            SHIPPED => 1,
            DELIVERED | RETURNED => -1,
            _ => 0,
        };
        for line in &event.line_items {
            *units.entry(line.id.clone()).or_default() += sign * line.quantity;
        }
    }
    units.values_mut().for_each(|value| *value = (*value).max(0));
    units
}

/// The request's lines, merged by id: each known, each quantity at least 1, at most
/// [`MAX_LINES`] of them.
fn requested(order: &Order, lines: &[LineQuantity]) -> Result<BTreeMap<String, i64>, ChangeError> {
    if lines.is_empty() {
        return Err(ChangeError::Invalid("line_items must name at least one line".into()));
    }
    if lines.len() > MAX_LINES {
        return Err(ChangeError::Invalid(format!("at most {MAX_LINES} line_items at once")));
    }
    let mut merged = BTreeMap::new();
    for line in lines {
        if !order.line_items.iter().any(|known| known.id == line.id) {
            return Err(ChangeError::UnknownLine(line.id.clone()));
        }
        if line.quantity < 1 {
            return Err(ChangeError::Invalid(format!("line {}: quantity must be at least 1", line.id)));
        }
        let sum: &mut i64 = merged.entry(line.id.clone()).or_default();
        *sum = sum.saturating_add(line.quantity);
    }
    Ok(merged)
}

fn line_mut<'a>(order: &'a mut Order, id: &str) -> Result<&'a mut super::OrderLine, ChangeError> {
    order.line_items.iter_mut().find(|line| line.id == id).ok_or_else(|| ChangeError::UnknownLine(id.to_owned()))
}

/// A line's units neither shipped nor taken by a pending cancel.
fn free(pending: &Pending, line: &super::OrderLine) -> i64 {
    line.quantity.total - line.quantity.fulfilled - reserved(pending, line)
}

/// A line's units a pending cancel takes.
fn reserved(pending: &Pending, line: &super::OrderLine) -> i64 {
    pending.units_of(&line.id, line.quantity.total - line.quantity.fulfilled)
}

fn too_many(line: &str, requested: i64, available: i64, what: &'static str) -> ChangeError {
    ChangeError::TooMany { line: line.to_owned(), requested, available, what }
}

fn check_refund(amount: i64, paid: Option<i64>, refunded: i64, zero_ok: bool) -> Result<(), ChangeError> {
    if amount < 0 || (amount == 0 && !zero_ok) {
        let what = if zero_ok { "0 (nothing back) or more" } else { "a positive number of" };
        return Err(ChangeError::Invalid(format!("amount must be {what} minor units")));
    }
    let Some(paid) = paid else {
        if amount == 0 {
            return Ok(());
        }
        return Err(ChangeError::Invalid("no payment is recorded for this order; nothing can be refunded".into()));
    };
    let available = (paid - refunded).max(0);
    if amount > available {
        return Err(ChangeError::OverRefund { requested: amount, available, paid });
    }
    Ok(())
}

fn check_tracking(tracking: &Tracking) -> Result<(), ChangeError> {
    for (name, value) in [("carrier", &tracking.carrier), ("tracking_number", &tracking.tracking_number)] {
        if let Some(value) = value
            && (value.trim().is_empty() || value.chars().count() > 100 || value.chars().any(char::is_control))
        {
            return Err(ChangeError::Invalid(format!("{name} must be 1-100 printable characters")));
        }
    }
    if let Some(url) = &tracking.tracking_url
        && !is_web_url(url)
    {
        return Err(ChangeError::Invalid("tracking_url must be an absolute http(s) URL".into()));
    }
    Ok(())
}

/// An absolute http(s) URL of RFC 3986 characters only, with a host.
fn is_web_url(url: &str) -> bool {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
    let Some(rest) = rest else { return false };
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    url.len() <= MAX_URL
        && !host.is_empty()
        && !host.starts_with(':')
        && url.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&byte))
}

/// Optional free text, trimmed, at most [`MAX_TEXT`] characters.
fn text(value: &Option<String>) -> Result<Option<String>, ChangeError> {
    named_text("description", value)
}

/// [`text`] for a field the operations call `name` (a cancel's or a refund's `reason`).
fn named_text(name: &str, value: &Option<String>) -> Result<Option<String>, ChangeError> {
    let Some(value) = value.as_deref().map(str::trim).filter(|value| !value.is_empty()) else { return Ok(None) };
    if value.chars().count() > MAX_TEXT {
        return Err(ChangeError::Invalid(format!("{name} must be at most {MAX_TEXT} characters")));
    }
    if value.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(ChangeError::Invalid(format!("{name} may not hold control characters other than tab and newline")));
    }
    Ok(Some(value.to_owned()))
}

/// The tracking of the latest shipment that carried `line`.
fn latest_tracking(order: &Order, line: &str) -> Tracking {
    order
        .fulfillment
        .events
        .iter()
        .rev()
        .find(|event| event.kind == SHIPPED && event.line_items.iter().any(|item| item.id == line))
        .map(|event| Tracking {
            carrier: event.carrier.clone(),
            tracking_number: event.tracking_number.clone(),
            tracking_url: event.tracking_url.clone(),
        })
        .unwrap_or_default()
}

fn event(
    id: String,
    kind: &str,
    at: &str,
    lines: &BTreeMap<String, i64>,
    tracking: Tracking,
    description: Option<String>,
) -> OrderRecord {
    OrderRecord::Event(FulfillmentEvent {
        id,
        kind: kind.to_owned(),
        occurred_at: at.to_owned(),
        line_items: lines.iter().map(|(id, quantity)| ExpectedLine { id: id.clone(), quantity: *quantity }).collect(),
        tracking_number: tracking.tracking_number,
        tracking_url: tracking.tracking_url,
        carrier: tracking.carrier,
        description,
    })
}

/// A completed adjustment taking `lines` off (negative quantities) and giving `money` back.
fn adjustment(
    id: String,
    kind: &str,
    at: &str,
    lines: &BTreeMap<String, i64>,
    money: Option<i64>,
    description: Option<String>,
) -> OrderRecord {
    OrderRecord::Adjustment(Adjustment {
        id,
        kind: kind.to_owned(),
        occurred_at: at.to_owned(),
        status: AdjustmentStatus::Completed,
        line_items: lines.iter().map(|(id, quantity)| AdjustedLine { id: id.clone(), quantity: -quantity }).collect(),
        totals: money.into_iter().map(|money| total(-money)).collect(),
        description,
    })
}

fn total(amount: i64) -> OrderTotal {
    OrderTotal { kind: "total".into(), amount, display_text: None }
}

impl ChangeError {
    /// A stable code for the refusal.
    pub fn code(&self) -> &'static str {
        match self {
            ChangeError::Invalid(_) => "invalid_input",
            ChangeError::UnknownLine(_) => "unknown_line",
            ChangeError::TooMany { .. } => "quantity_exceeded",
            ChangeError::OverRefund { .. } => "refund_exceeds_payment",
            ChangeError::Canceled => "order_canceled",
            ChangeError::ProcessorRefused(_) => "refund_refused",
            ChangeError::RefundAbandoned(_) => "refund_abandoned",
            ChangeError::NotAbandoned(_) => "refund_not_abandoned",
        }
    }
}

/// Whether records of `kind` are fulfillment events (the rest are adjustments).
pub fn is_event(kind: &str) -> bool {
    matches!(kind, SHIPPED | DELIVERED | FAILED_ATTEMPT | RETURNED)
}
