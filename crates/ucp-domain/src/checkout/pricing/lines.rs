//! The lines: each priced from the catalog, with its stock checked.

use std::collections::HashMap;

use super::{PricedLine, PricingInput, Total};
use crate::checkout::{Message, Severity};

/// Prices every line of the session; returns the lines (totals still empty) and each line's
/// undiscounted amount, in order. Unknown items and short stock become messages.
pub(super) fn price_lines(input: &PricingInput<'_>, messages: &mut Vec<Message>) -> (Vec<PricedLine>, Vec<i64>) {
    let session = input.session;
    let mut lines = Vec::with_capacity(session.lines.len());
    let mut base_amounts = Vec::with_capacity(session.lines.len());
    let mut claimed_units: HashMap<&str, i64> = HashMap::new();
    for (index, line) in session.lines.iter().enumerate() {
        let path = format!("$.line_items[{index}]");
        let Some(item) = input.items.get(&line.item_id) else {
            messages.push(Message::error(
                "item_unavailable",
                Severity::Recoverable,
                format!("Item {} is not available; remove it to continue.", line.item_id),
                Some(path.clone()),
            ));
            lines.push(PricedLine {
                id: line.id.clone(),
                item_id: line.item_id.clone(),
                title: format!("Unavailable item {}", line.item_id),
                unit_price: 0,
                image_url: None,
                quantity: line.quantity,
                totals: Vec::new(),
            });
            base_amounts.push(0);
            continue;
        };
        // Stock is shared by every line of the same variant: earlier lines claim it first.
        let claimed = claimed_units.entry(line.item_id.as_str()).or_insert(0);
        let earlier = *claimed;
        *claimed = claimed.saturating_add(line.quantity);
        match item.available_quantity {
            Some(available) if available <= 0 => messages.push(Message::error(
                "out_of_stock",
                Severity::Recoverable,
                format!("{} is out of stock.", item.title),
                Some(path.clone()),
            )),
            Some(available) if available <= earlier => messages.push(Message::error(
                "out_of_stock",
                Severity::Recoverable,
                format!("All {available} of {} left are already in earlier lines.", item.title),
                Some(path.clone()),
            )),
            Some(available) if available - earlier < line.quantity => {
                let left = available - earlier;
                let content = if earlier == 0 {
                    format!("Only {left} of {} left; lower the quantity to {left} or less.", item.title)
                } else {
                    format!(
                        "Only {left} more of {} left after earlier lines; lower the quantity to {left} or less.",
                        item.title
                    )
                };
                messages.push(Message::error(
                    "out_of_stock",
                    Severity::Recoverable,
                    content,
                    Some(format!("{path}.quantity")),
                ));
            }
            _ => {}
        }
        base_amounts.push(item.unit_price.saturating_mul(line.quantity));
        lines.push(PricedLine {
            id: line.id.clone(),
            item_id: line.item_id.clone(),
            title: item.title.clone(),
            unit_price: item.unit_price,
            image_url: item.image_url.clone(),
            quantity: line.quantity,
            totals: Vec::new(),
        });
    }
    (lines, base_amounts)
}

/// Gives each line its `subtotal`, `items_discount` (when there is one) and `total`.
pub(super) fn add_line_totals(lines: &mut [PricedLine], base_amounts: &[i64], line_discounts: &[i64]) {
    for (index, line) in lines.iter_mut().enumerate() {
        let base = base_amounts[index];
        line.totals.push(Total { kind: "subtotal", amount: base, display_text: None });
        if line_discounts[index] > 0 {
            line.totals.push(Total { kind: "items_discount", amount: -line_discounts[index], display_text: None });
        }
        line.totals.push(Total { kind: "total", amount: base - line_discounts[index], display_text: None });
    }
}
