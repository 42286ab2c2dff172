//! Tax and the order totals.

use super::Total;
use crate::checkout::{PricingRules, TaxRate};

/// The tax for `destination` (country, region): the region's rate, else the country's; none
/// without a destination or a rate. Shipping is taxed, after its discount, where the rate says
/// so. Rounded half up.
pub(super) fn tax(
    rules: &PricingRules,
    destination: Option<&(String, Option<String>)>,
    discounted_items: i64,
    shipping_cost: Option<i64>,
    order_discount: i64,
) -> Option<i64> {
    let (country, region) = destination?;
    let rate = TaxRate::find(&rules.taxes, country, region.as_deref())?;
    let shipping_base = if rate.shipping_taxable { shipping_cost.unwrap_or(0) - order_discount } else { 0 };
    Some(rate.on(discounted_items + shipping_base.max(0)))
}

/// The order's amounts so far, each non-negative; `order_totals` signs them.
pub(super) struct Amounts {
    pub(super) subtotal: i64,
    pub(super) items_discount: i64,
    pub(super) order_discount: i64,
    pub(super) shipping: Option<i64>,
    pub(super) tax: Option<i64>,
}

/// `subtotal`, the discounts (negative, when there are any), `fulfillment` and `tax` (when
/// known), and `total`, their sum.
pub(super) fn order_totals(amounts: &Amounts) -> Vec<Total> {
    let mut totals = vec![Total { kind: "subtotal", amount: amounts.subtotal, display_text: None }];
    if amounts.items_discount > 0 {
        totals.push(Total { kind: "items_discount", amount: -amounts.items_discount, display_text: None });
    }
    if amounts.order_discount > 0 {
        totals.push(Total { kind: "discount", amount: -amounts.order_discount, display_text: None });
    }
    if let Some(cost) = amounts.shipping {
        totals.push(Total { kind: "fulfillment", amount: cost, display_text: None });
    }
    if let Some(tax) = amounts.tax {
        totals.push(Total { kind: "tax", amount: tax, display_text: None });
    }
    let total: i64 = totals.iter().map(|entry| entry.amount).sum();
    totals.push(Total { kind: "total", amount: total, display_text: None });
    totals
}
