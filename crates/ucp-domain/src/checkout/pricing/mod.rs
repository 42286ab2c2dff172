//! The pricing engine: session + catalog + rules → priced lines, totals, messages, status.
//! Deterministic (same inputs, same outputs) and integer-only. Invariants it guarantees:
//! exactly one `subtotal` and one `total`; every other entry sums to `total`; discounts are
//! negative and never exceed what they discount; `items_discount` equals the sum over lines.

mod discounts;
mod fulfillment;
mod input;
mod lines;
mod status;
mod totals;

use super::priced::{
    AppliedDiscount, CatalogItem, Priced, PricedDestination, PricedFulfillment, PricedGroup, PricedLine, PricedOption,
    Total,
};
use super::{Message, SessionKind};
use discounts::Discounts;
pub use discounts::rejected_codes;
pub use input::PricingInput;
use totals::Amounts;

/// What pricing needs to know about one catalog item (variant).
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
        messages.extend(discounts::lapsed(session, &messages));
    }
    let status = status::status_of(session, &messages, lines.is_empty());
    // Warnings, after the status they must not change (checklist 138).
    super::eligibility::not_accepted(session.context.as_ref(), &mut messages);
    super::eligibility::other_currency(session.context.as_ref(), &session.currency, &mut messages);
    // The disclosures of each line's product (a line's categories: its product's and its
    // variant's).
    let disclosures = &input.rules.disclosures;
    for (index, line) in session.lines.iter().enumerate().filter(|_| !disclosures.is_empty()) {
        if let Some(item) = input.items.get(&line.item_id) {
            let categories = item.categories.iter().map(String::as_str);
            disclosures.warn(&item.product_id, categories, || format!("$.line_items[{index}]"), &mut messages);
        }
    }
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
