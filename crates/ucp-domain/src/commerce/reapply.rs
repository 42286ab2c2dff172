//! A kept refund's request applied again to its order as it is now, with the record ids it
//! had when asked for: to settle it (`commerce::refunds`) or to record it by hand
//! (`commerce::reconcile`).

use crate::order::action::OrderAction;
use crate::order::changes::{self, Applied, ChangeError, Pending, Stamp};
use crate::store::{RefundIntent, StoredOrder};
use crate::tax::TaxRate;

use super::orders::record_id;

/// `intent`'s request applied to `stored` as it is now, with the record ids it had when asked
/// for, so its adjustment carries the refund's key; refused where the order moved on so that
/// the request no longer gives back that amount under that key (another change took the lines
/// it cancels, say): a refund the order does not justify is never made. A cancel whose share
/// grew (its units, held while it was pending, became the order's last) is recorded at the
/// amount it asked, which the processor made or is asked for under its key; the rest stays
/// paid, logged.
/// `pending`: what the other refunds pending on the order hold, counted as when the request
/// was worked out; `rates`: the merchant's tax rates, as `changes::apply` reads them.
pub(super) fn applied_again(
    stored: &StoredOrder,
    intent: &RefundIntent,
    pending: &Pending,
    rates: &[TaxRate],
    occurred_at: &str,
) -> Result<Applied, ChangeError> {
    let applied = applied_as(stored, intent, &intent.action, pending, rates, occurred_at)?;
    if settles(intent, &applied) {
        return Ok(applied);
    }
    let now = applied.refund.unwrap_or_default();
    // Its units became the order's last (a cancel beside it named a smaller amount, a refund
    // counted beside it ended unrecorded, a rate went up): recorded at what it asked.
    if intent.amount < now
        && let Ok(applied) = cancel_as_made(stored, intent, pending, rates, occurred_at)
    {
        let (order, key, asked, left) = (&stored.id, &intent.key, intent.amount, now - intent.amount);
        tracing::warn!(%order, %key, asked, left, "a cancel's share grew after its refund was asked for; recorded at the amount asked: the rest stays paid until the merchant refunds it");
        return Ok(applied);
    }
    Err(ChangeError::Invalid(format!(
        "the order changed since: the request now gives back {now}, not the {} asked for",
        intent.amount
    )))
}

/// `intent`'s cancel (of named lines or of what is left, its amount not named) applied to
/// `stored` at the amount it asked, which the processor made or is asked for under its key:
/// its units canceled, whatever the order now says they are worth (held while it waited, they
/// are the units it took). Refused for any other request, or where it would not settle.
pub(super) fn cancel_as_made(
    stored: &StoredOrder,
    intent: &RefundIntent,
    pending: &Pending,
    rates: &[TaxRate],
    occurred_at: &str,
) -> Result<Applied, ChangeError> {
    let OrderAction::Cancel { lines, amount: None, description } = &intent.action else {
        return Err(ChangeError::Invalid(format!("{} is not a cancel of what it is worth", intent.key)));
    };
    let made =
        OrderAction::Cancel { lines: lines.clone(), amount: Some(intent.amount), description: description.clone() };
    let applied = applied_as(stored, intent, &made, pending, rates, occurred_at)?;
    if !settles(intent, &applied) {
        return Err(ChangeError::Invalid(format!("{} would not be recorded under its key", intent.key)));
    }
    Ok(applied)
}

/// `action` applied to `stored` with the record ids `intent`'s request had when asked for.
fn applied_as(
    stored: &StoredOrder,
    intent: &RefundIntent,
    action: &OrderAction,
    pending: &Pending,
    rates: &[TaxRate],
    occurred_at: &str,
) -> Result<Applied, ChangeError> {
    let paid = stored.payment.as_ref().map(|payment| payment.amount);
    let mut index = 0;
    let mut ids = |kind: &str| {
        let prefix = if changes::is_event(kind) { "evt" } else { "adj" };
        index += 1;
        record_id(prefix, &stored.id, intent.version, &intent.action, index - 1)
    };
    changes::apply(&stored.order, action, paid, pending, rates, Stamp { occurred_at, ids: &mut ids })
}

/// Whether `applied` records `intent`'s refund: its amount, under its key.
fn settles(intent: &RefundIntent, applied: &Applied) -> bool {
    applied.refund == Some(intent.amount)
        && applied.records.last().map(changes::OrderRecord::id) == Some(intent.key.as_str())
}
