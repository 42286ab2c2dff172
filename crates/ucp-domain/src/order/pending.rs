//! What the refunds pending for other requests hold of an order before they are recorded on
//! it: the money they ask back, which counts as given back, and the units their cancels take,
//! which count as canceled (neither shipped nor canceled again, and gone when a cancel asks
//! whether it takes the order's last units) until they settle. Without the units, a unit whose
//! cancel's refund was pending (its processor's answer lost) could be canceled again or
//! shipped, refunded twice or refunded and sent.

use std::collections::BTreeMap;

use super::Order;
use super::action::OrderAction;

/// The hold of the refunds pending for other requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pending {
    /// Minor units they ask back.
    pub amount: i64,
    /// Units the pending cancels of named lines take, by line.
    units: BTreeMap<String, i64>,
    /// A pending cancel of "what is left" takes every unit not shipped, but those of `spared`.
    everything: bool,
    /// The units of the pending cancel being settled (left out of this hold): a cancel of what
    /// is left asked beside it took everything else.
    spared: BTreeMap<String, i64>,
}

impl Pending {
    /// Money pending alone (no cancel).
    pub fn amount(amount: i64) -> Pending {
        Pending { amount, ..Pending::default() }
    }

    /// Counts a pending refund of `amount` asked by `action`.
    pub fn add(&mut self, action: &OrderAction, amount: i64) {
        self.amount = self.amount.saturating_add(amount);
        match action {
            OrderAction::Cancel { lines: Some(lines), .. } => {
                for line in lines.iter().filter(|line| line.quantity > 0) {
                    let units = self.units.entry(line.id.clone()).or_default();
                    *units = units.saturating_add(line.quantity);
                }
            }
            OrderAction::Cancel { lines: None, .. } => self.everything = true,
            _ => {}
        }
    }

    /// Leaves the units of `settling`, the pending request being settled, to it: a pending
    /// cancel of what is left, asked beside it, did not take them.
    pub fn spare(&mut self, settling: &OrderAction) {
        if let OrderAction::Cancel { lines: Some(lines), .. } = settling {
            for line in lines.iter().filter(|line| line.quantity > 0) {
                let units = self.spared.entry(line.id.clone()).or_default();
                *units = units.saturating_add(line.quantity);
            }
        }
    }

    /// How many of line `id`'s `unshipped` units pending cancels take: with a cancel of what
    /// is left pending, all but the spared ones (it took whatever other pending cancels did
    /// not, and no cancel of named lines can start after it); otherwise the named ones.
    pub fn units_of(&self, id: &str, unshipped: i64) -> i64 {
        let taken = if self.everything {
            unshipped.saturating_sub(self.spared.get(id).copied().unwrap_or(0))
        } else {
            self.units.get(id).copied().unwrap_or(0)
        };
        taken.clamp(0, unshipped.max(0))
    }

    /// Whether `order`, with the units pending cancels take gone too, is canceled: nothing
    /// ever shipped and nothing left.
    pub fn leaves_nothing(&self, order: &Order) -> bool {
        let mut after = order.clone();
        for line in &mut after.line_items {
            let unshipped = line.quantity.total - line.quantity.fulfilled;
            line.quantity.total -= self.units_of(&line.id, unshipped);
        }
        after.status() == super::OrderStatus::Canceled
    }
}
