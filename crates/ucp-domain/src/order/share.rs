//! What a partial cancel gives back: the canceled units' share of their line and of the tax.

use crate::tax::TaxRate;

use super::Order;

/// What a line came to when the order was placed: its `total` (after its discounts), else its
/// `subtotal`, else its price times its units.
pub(super) fn line_total(line: &super::OrderLine) -> i64 {
    line.totals
        .iter()
        .find(|total| total.kind == "total")
        .or_else(|| line.totals.iter().find(|total| total.kind == "subtotal"))
        .map_or(line.item.price.saturating_mul(line.quantity.original), |total| total.amount)
}

/// The order's tax on `goods` (an amount of its lines, after their discounts), rounded down:
/// the tax in proportion to what it was charged on, the lines and, where the rate for the
/// order's destination taxes it, the shipping after its discount. When the rates no longer
/// give the tax the order was charged (they changed since), it is spread over the lines and
/// the shipping, which is never more than the goods carried.
pub(super) fn tax_share(order: &Order, goods: i64, rates: &[TaxRate]) -> i64 {
    let amount = |kind: &str| {
        order.totals.iter().filter(|total| total.kind == kind).map(|total| total.amount).fold(0, i64::saturating_add)
    };
    let tax = amount("tax");
    let lines: i64 = order.line_items.iter().map(line_total).fold(0, i64::saturating_add);
    let shipping = amount("fulfillment").saturating_add(amount("discount")).max(0);
    let rate = order.fulfillment.expectations.first().and_then(|expected| {
        let country = expected.destination.address_country.as_deref()?.to_uppercase();
        TaxRate::find(rates, &country, expected.destination.address_region.as_deref())
    });
    let shipping_taxed = rate
        .and_then(|rate| {
            let base = if rate.shipping_taxable { lines.saturating_add(shipping) } else { lines };
            (rate.on(base) == tax).then_some(rate.shipping_taxable)
        })
        .unwrap_or(true);
    let base = if shipping_taxed { lines.saturating_add(shipping) } else { lines };
    if tax <= 0 || goods <= 0 || base <= 0 {
        return 0;
    }
    let share = i128::from(tax) * i128::from(goods.min(base)) / i128::from(base);
    i64::try_from(share).unwrap_or(0)
}
