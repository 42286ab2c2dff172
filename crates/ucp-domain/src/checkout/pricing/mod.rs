//! The pricing engine: session + catalog + rules → priced lines, totals, messages, status.
//! Deterministic (same inputs, same outputs) and integer-only. Invariants it guarantees:
//! exactly one `subtotal` and one `total`; every other entry sums to `total`; discounts are
//! negative and never exceed what they discount; `items_discount` equals the sum over lines.

mod discounts;
mod fulfillment;
mod lines;
mod status;
mod totals;

use std::collections::HashMap;

use super::rules::PricingRules;
use super::{Address, Message, Session, SessionKind, Status};
use discounts::Discounts;
use totals::Amounts;

/// What pricing needs to know about one catalog item (variant).
#[derive(Debug, Clone)]
pub struct CatalogItem {
    pub product_id: String,
    pub title: String,
    pub unit_price: i64,
    pub currency: String,
    pub image_url: Option<String>,
    /// Units that can be sold now; `None` when stock is not tracked.
    pub available_quantity: Option<i64>,
    pub categories: Vec<String>,
    pub weight_grams: Option<i64>,
}

pub struct PricingInput<'a> {
    pub session: &'a Session,
    /// Catalog items by item id; a line whose item is missing is unavailable.
    pub items: &'a HashMap<String, CatalogItem>,
    pub rules: &'a PricingRules,
    /// Orders that already used each discount code (upper-case).
    pub discount_uses: &'a HashMap<String, u64>,
    pub fulfillment_enabled: bool,
    pub discounts_enabled: bool,
    /// Whether at least one payment handler is available for this session.
    pub payment_available: bool,
    pub now: i64,
}

/// Deserialize: `interned`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Total {
    pub kind: &'static str,
    pub amount: i64,
    pub display_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedLine {
    pub id: String,
    pub item_id: String,
    pub title: String,
    pub unit_price: i64,
    pub image_url: Option<String>,
    pub quantity: i64,
    pub totals: Vec<Total>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedOption {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub carrier: Option<String>,
    pub amount: i64,
    pub min_days: u32,
    pub max_days: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedGroup {
    pub id: String,
    pub line_item_ids: Vec<String>,
    pub options: Vec<PricedOption>,
    pub selected_option_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedDestination {
    pub id: String,
    pub address: Address,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedFulfillment {
    pub method_id: String,
    pub line_item_ids: Vec<String>,
    pub destinations: Vec<PricedDestination>,
    pub selected_destination_id: Option<String>,
    pub group: Option<PricedGroup>,
}

/// Deserialize: `interned`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AppliedDiscount {
    pub code: Option<String>,
    pub title: String,
    pub amount: i64,
    pub automatic: bool,
    pub method: &'static str,
    pub priority: u32,
    /// (JSONPath, amount) pairs summing to `amount`.
    pub allocations: Vec<(String, i64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Priced {
    pub lines: Vec<PricedLine>,
    pub totals: Vec<Total>,
    pub messages: Vec<Message>,
    pub fulfillment: Option<PricedFulfillment>,
    /// The codes as submitted (for echo) and what was applied.
    pub discount_codes: Vec<String>,
    pub applied_discounts: Vec<AppliedDiscount>,
    pub status: Status,
    /// Codes (upper-case) of applied code discounts, to count their use at completion.
    pub used_codes: Vec<String>,
}

const METHOD_ID: &str = "fm_1";
const GROUP_ID: &str = "fg_1";

/// Prices a session in steps: the lines, their discounts, fulfillment, the order discount,
/// tax, the totals, then what a checkout still needs and the status that follows.
pub fn price(input: &PricingInput<'_>) -> Priced {
    let session = input.session;
    let mut messages: Vec<Message> = Vec::new();
    let (mut lines, base_amounts) = lines::price_lines(input, &mut messages);
    let subtotal: i64 = base_amounts.iter().sum();
    let mut discounts = Discounts::on_items(input, subtotal, &base_amounts, &mut messages);
    lines::add_line_totals(&mut lines, &base_amounts, &discounts.per_line);
    let items_discount = discounts.items_total();
    let discounted_items = subtotal - items_discount;
    let shipping = fulfillment::fulfill(input, !lines.is_empty(), discounted_items, &mut messages);
    let order_discount = discounts.on_shipping(shipping.cost);
    let tax =
        totals::tax(input.rules, shipping.tax_destination.as_ref(), discounted_items, shipping.cost, order_discount);
    let totals =
        totals::order_totals(&Amounts { subtotal, items_discount, order_discount, shipping: shipping.cost, tax });
    if session.kind == SessionKind::Checkout {
        status::checkout_requirements(input, &lines, &mut messages);
    }
    let status = status::status_of(session, &messages, lines.is_empty());
    messages.extend(session.sticky_messages.iter().cloned());
    Priced {
        lines,
        totals,
        messages,
        fulfillment: shipping.fulfillment,
        discount_codes: if input.discounts_enabled { session.discount_codes.clone() } else { Vec::new() },
        applied_discounts: discounts.applied,
        status,
        used_codes: discounts.used_codes,
    }
}

#[cfg(test)]
mod tests;
