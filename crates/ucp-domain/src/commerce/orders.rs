//! The merchant's order operations (issue 9): list and read every order, and change one by
//! appending fulfillment events and adjustments. The rules are `order::changes`; this file
//! loads, calls the processor for money going back, and writes the change in one store
//! transaction under the order's version, starting over when another change got in first.

use std::sync::Mutex;

use crate::order::changes::{self, ChangeError, LineQuantity, OrderAction, Stamp, Tracking};
use crate::order::{AdjustmentStatus, Order, OrderStatus};
use crate::store::{OrderChange, OrderQuery, RefundEnd, RefundIntent, RefundState, StoreError, StoredOrder};

use super::session::Attempt;
use super::{Commerce, Error};

/// At most this many orders in one list.
pub const MAX_ORDER_PAGE: usize = 100;

/// How long a merchant change waits for another change of the same order to be recorded
/// (`CommerceStore::hold_order`), then answers 503 "retry shortly": longer than one change
/// takes with the default processor's timeouts and retries (5 s × 3 tries), short enough for
/// an admin request not to hang. A slower processor makes a change queued behind it answer 503
/// sooner; nothing is recorded by it, and it is safe to repeat.
pub(super) const CHANGE_HOLD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// An order as the merchant sees it: the stored order with its derived status and money.
#[derive(Debug, Clone)]
pub struct MerchantOrder {
    pub stored: StoredOrder,
    pub status: OrderStatus,
    /// What the buyer was charged, when a payment is recorded.
    pub paid: Option<i64>,
    pub refunded: i64,
}

impl MerchantOrder {
    pub(super) fn of(stored: StoredOrder) -> MerchantOrder {
        let status = stored.order.status();
        let refunded = stored.order.refunded();
        let paid = stored.payment.as_ref().map(|payment| payment.amount);
        MerchantOrder { stored, status, paid, refunded }
    }
}

/// An attempt's answer: the order as `stored` holds it.
pub(super) fn changed(stored: StoredOrder) -> Attempt<OrderOutcome> {
    Attempt::Done(OrderOutcome::Changed(Box::new(MerchantOrder::of(stored))))
}

/// What an order operation answered.
#[derive(Debug, Clone)]
pub enum OrderOutcome {
    /// The change was appended; the order as it is now.
    Changed(Box<MerchantOrder>),
    NotFound,
    /// The request does not fit the order; nothing changed.
    Refused(ChangeError),
}

/// Which orders to list.
#[derive(Debug, Clone, Default)]
pub struct OrderFilter {
    pub status: Option<OrderStatus>,
    /// Clamped to 1..=[`MAX_ORDER_PAGE`]; 0 means 20.
    pub limit: usize,
    pub before: Option<(i64, String)>,
}

impl Commerce {
    /// Orders newest first (any platform's: this is the merchant).
    pub async fn list_orders(&self, filter: OrderFilter) -> Result<Vec<MerchantOrder>, Error> {
        let limit = if filter.limit == 0 { 20 } else { filter.limit.min(MAX_ORDER_PAGE) };
        let query = OrderQuery { status: filter.status, limit, before: filter.before };
        Ok(self.ports.store.orders(&query).await?.into_iter().map(MerchantOrder::of).collect())
    }

    /// One order, whoever placed it.
    pub async fn merchant_order(&self, id: &str) -> Result<Option<MerchantOrder>, Error> {
        Ok(self.ports.store.order(id).await?.map(MerchantOrder::of))
    }

    /// Records a shipment of some or all units: they count as fulfilled.
    pub async fn ship(
        &self,
        id: &str,
        lines: Vec<LineQuantity>,
        tracking: Tracking,
        description: Option<String>,
    ) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::Ship { lines, tracking, description }).await
    }

    /// Records the delivery of shipped units (`None`: every shipped unit not yet delivered).
    pub async fn deliver(
        &self,
        id: &str,
        lines: Option<Vec<LineQuantity>>,
        description: Option<String>,
    ) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::Deliver { lines, description }).await
    }

    /// Records a failed delivery attempt of shipped units.
    pub async fn fail_delivery(
        &self,
        id: &str,
        lines: Option<Vec<LineQuantity>>,
        description: Option<String>,
    ) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::FailDelivery { lines, description }).await
    }

    /// Records fulfilled units coming back: they leave their lines' totals.
    pub async fn return_items(
        &self,
        id: &str,
        lines: Vec<LineQuantity>,
        tracking: Tracking,
        description: Option<String>,
    ) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::Return { lines, tracking, description }).await
    }

    /// Cancels units not yet fulfilled (`None`: all of them) and refunds them.
    pub async fn cancel_order(
        &self,
        id: &str,
        lines: Option<Vec<LineQuantity>>,
        amount: Option<i64>,
        reason: Option<String>,
    ) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::Cancel { lines, amount, description: reason }).await
    }

    /// Refunds `amount` through the order's payment handler.
    pub async fn refund_order(&self, id: &str, amount: i64, reason: Option<String>) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::Refund { amount, description: reason }).await
    }

    /// Records another adjustment (credit, price_adjustment, dispute…).
    pub async fn adjust(
        &self,
        id: &str,
        kind: String,
        amount: i64,
        status: AdjustmentStatus,
        description: Option<String>,
    ) -> Result<OrderOutcome, Error> {
        self.change_order(id, &OrderAction::Adjust { kind, amount, status, description }).await
    }

    /// Applies one merchant operation: validated against the order as stored, money going
    /// back refunded through the order's payment handler (our key: the adjustment's id, which
    /// [`record_id`] derives from the order's version and the request), then the records
    /// appended and the order re-derived in one transaction with its webhook, all under the
    /// store's hold on the order (`CommerceStore::hold_order`). A refund is kept
    /// as pending before the processor is asked and ends in that transaction
    /// (`commerce::refunds`): made once and recorded once, whatever fails between.
    pub async fn change_order(&self, id: &str, action: &OrderAction) -> Result<OrderOutcome, Error> {
        // The version the request found, read before waiting for the hold: its record ids
        // derive from it, so the same request sent twice at once is one change, whichever
        // holds the order first (the second finds the first's records).
        let Some(found) = self.ports.store.order(id).await? else {
            return Ok(OrderOutcome::NotFound);
        };
        let seen = found.version;
        // This request's refund pending from an earlier try (its answer lost), as found before
        // waiting: should a twin sent at once settle it first, this call answers that record
        // rather than refunding anew at the version the twin left.
        let twin = if action.moves_money() { self.pending_twin(&found, action).await?.0 } else { None };
        let twin = twin.filter(|twin| twin.state == RefundState::Pending);
        let settling = Mutex::new(twin.map(|twin| twin.intent.key));
        // One change of this order at a time (the sweeper's settling and a record by hand
        // included): what a change refunds is worked out on the version its record lands on.
        let _hold = self.ports.store.hold_order(id, CHANGE_HOLD_WAIT).await?;
        let occurred_at = crate::time::rfc3339(self.now());
        // The same ids on every attempt: the processor's idempotency key is one of them.
        let ids = Mutex::new(Vec::new());
        let refunded = Mutex::new(None);
        let state = Attempts { seen, ids: &ids, refunded: &refunded, settling: &settling, occurred_at: &occurred_at };
        let outcome = self.retrying(|| self.change_once(id, action, state)).await;
        if outcome.is_err()
            && let Some((amount, key)) = refunded.lock().ok().and_then(|done| done.clone())
        {
            // Whatever failed after the processor refunded (the store, a reread, losing every
            // race, which the order's hold leaves to a store whose hold is weaker): the refund
            // stays pending, and the same request again or the recovery sweeper records it under
            // the same key.
            tracing::warn!(order = id, amount, key, "a refund went through and is not recorded yet; it stays pending");
            // Lost every race to record it: the merchant is told it is pending (a repeat is
            // the same refund), not that nothing happened.
            if matches!(outcome, Err(Error::Busy)) {
                return Err(Error::RefundPending);
            }
        }
        outcome
    }

    async fn change_once(
        &self,
        id: &str,
        action: &OrderAction,
        state: Attempts<'_>,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        let Some(stored) = self.ports.store.order(id).await? else {
            return Ok(Attempt::Done(OrderOutcome::NotFound));
        };
        let settling = state.settling.lock().map_err(|_| Error::Internal("poisoned refund state".into()))?.clone();
        let (twin, pending) = self.pending_twin(&stored, action).await?;
        if let Some(key) = settling
            && twin.as_ref().is_none_or(|twin| twin.intent.key != key || twin.state != RefundState::Pending)
        {
            // An earlier attempt of this call settles a pending refund, and another request
            // (the sweeper, a twin) ended it meanwhile: recorded, or refused or abandoned as
            // this call would have found too. Never a fresh refund of the same request.
            return self.after_end(stored, &key, state.refunded).await;
        }
        if let Some(abandoned) = twin.as_ref().filter(|twin| twin.state != RefundState::Pending) {
            // This request's refund, abandoned (at this version or an earlier one): it may have
            // been made, so it is not asked for again, under its key or a new one.
            return Ok(Attempt::Done(OrderOutcome::Refused(abandoned_earlier(&abandoned.intent.key))));
        }
        if let Some(intent) = twin.map(|twin| twin.intent) {
            // This very request's refund, kept by an earlier try and not recorded (its record
            // failed, or the processor did not answer): this is its repeat, and settles it
            // under its key rather than refunding again, whatever changed on the order since.
            return self.settle_twin(stored, &intent, state.occurred_at, state.refunded, state.settling).await;
        }
        let paid = stored.payment.as_ref().map(|payment| payment.amount);
        let applied = {
            let mut issued = state.ids.lock().map_err(|_| Error::Internal("poisoned id list".into()))?;
            let first = match issued.first() {
                Some(first) => vec![first.clone()],
                None => ["evt", "adj"].map(|prefix| record_id(prefix, &stored.id, state.seen, action, 0)).to_vec(),
            };
            if first.iter().any(|first| holds_record(&stored, first)) {
                // A twin of this change (the same request against the same order version) was
                // recorded first, and the processor took its refund under the same key: one.
                return Ok(changed(stored));
            }
            let mut next = 0;
            let mut ids = |kind: &str| {
                if next == issued.len() {
                    let prefix = if changes::is_event(kind) { "evt" } else { "adj" };
                    issued.push(record_id(prefix, &stored.id, state.seen, action, next));
                }
                next += 1;
                issued[next - 1].clone()
            };
            changes::apply(
                &stored.order,
                action,
                paid,
                &pending,
                &self.ports.rules.taxes,
                Stamp { occurred_at: state.occurred_at, ids: &mut ids },
            )
        };
        let applied = match applied {
            Ok(applied) => applied,
            Err(refusal) => return self.refused(stored, action, refusal).await,
        };
        let mut settles = None;
        if let Some(amount) = applied.refund {
            debug_assert!(action.moves_money(), "{} refunded, so pending_twin must read its twins", action.name());
            let key = applied.records.iter().rev().map(changes::OrderRecord::id).next().unwrap_or_default().to_owned();
            let intent = RefundIntent {
                key,
                order_id: stored.id.clone(),
                version: state.seen,
                action: action.clone(),
                amount,
                created_at: self.now(),
            };
            if let Some(done) =
                self.start_refund(&stored, &intent, state.occurred_at, state.refunded, state.settling).await?
            {
                return Ok(done);
            }
            settles = Some((intent.key, RefundEnd::Recorded));
        }
        self.record_change(stored, applied, settles, action.name()).await
    }

    /// Writes `applied` as the next version of `stored`, ending the pending refund it
    /// `settles` in the same transaction.
    pub(super) async fn record_change(
        &self,
        stored: StoredOrder,
        applied: changes::Applied,
        settles: Option<(String, RefundEnd)>,
        name: &str,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        let id = stored.id.clone();
        let restock = restocked(&stored.order, &applied.records);
        let mut next = StoredOrder { order: applied.order, ..stored };
        let change = OrderChange {
            order: next.clone(),
            records: applied.records,
            webhook: crate::webhook::ORDER_UPDATED,
            settles,
            restock,
        };
        match self.ports.store.apply_order_change(&change).await {
            Ok(()) => {
                next.version += 1;
                tracing::info!(order = %id, action = name, "order changed");
                Ok(changed(next))
            }
            Err(StoreError::Conflict { .. }) => Ok(Attempt::Raced),
            Err(StoreError::NotFound) => Ok(Attempt::Done(OrderOutcome::NotFound)),
            Err(error) => Err(error.into()),
        }
    }
}

/// The units `records` put back on sale, by the variant each line sold: their cancellations'
/// (units that never shipped), one entry per variant.
fn restocked(order: &Order, records: &[changes::OrderRecord]) -> Vec<(String, i64)> {
    let mut units = std::collections::BTreeMap::<&str, i64>::new();
    for record in records {
        let changes::OrderRecord::Adjustment(adjustment) = record else { continue };
        if adjustment.kind != changes::CANCELLATION {
            continue;
        }
        for canceled in &adjustment.line_items {
            if let Some(line) = order.line_items.iter().find(|line| line.id == canceled.id) {
                let total = units.entry(line.item.id.as_str()).or_default();
                *total = total.saturating_add(canceled.quantity.saturating_abs());
            }
        }
    }
    units.into_iter().filter(|(_, units)| *units > 0).map(|(variant, units)| (variant.to_owned(), units)).collect()
}

/// A record's id for `action` on order `order_id` at `version`, the version the request found:
/// `{prefix}_` and 20 hex digits of SHA-256 over the order's id and that version, the action
/// and the record's place in it. The same request against the same order version gets the
/// same ids, and so the same processor key for its refund: repeated after a failure that
/// recorded nothing (the store down after the processor refunded), it refunds once; run twice
/// at once, the twin that holds the order second finds its record already there
/// ([`holds_record`]). A change that was recorded moves the version, so a later identical
/// request is a change of its own. The action is hashed as its
/// [`OrderAction::identity`], which this crate writes out, so ids stay the same across builds
/// (the test below pins one).
pub(super) fn record_id(prefix: &str, order_id: &str, version: i64, action: &OrderAction, index: usize) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    let head = [order_id.to_owned(), version.to_string()];
    for part in head.iter().chain(&action.identity()).chain(std::iter::once(&index.to_string())) {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let hex: String = digest.iter().take(10).map(|byte| format!("{byte:02x}")).collect();
    format!("{prefix}_{hex}")
}

/// The refusal of a request whose refund under `key` was abandoned: not asked for again.
pub(super) fn abandoned_earlier(key: &str) -> ChangeError {
    ChangeError::RefundAbandoned(format!(
        "a refund of this request under key {key} was abandoned earlier (see the log); it is not asked for again: \
         ask the processor whether it was made, then record it by hand if so or dismiss it if not"
    ))
}

/// Whether `stored` already holds an event or adjustment with this id.
pub(super) fn holds_record(stored: &StoredOrder, id: &str) -> bool {
    stored.order.fulfillment.events.iter().any(|event| event.id == id)
        || stored.order.adjustments.iter().any(|adjustment| adjustment.id == id)
}

/// The amount and key of the refund the processor made, once it did.
pub(super) type Refunded = Mutex<Option<(i64, String)>>;

/// The key of the pending refund an attempt settles, once one does.
pub(super) type Settling = Mutex<Option<String>>;

/// What the attempts of one change share.
#[derive(Clone, Copy)]
struct Attempts<'a> {
    /// The order's version the request found: its record ids derive from it.
    seen: i64,
    ids: &'a Mutex<Vec<String>>,
    refunded: &'a Refunded,
    settling: &'a Settling,
    occurred_at: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::AdjustmentStatus;

    // The ids are processor keys that a repeat after a failure must find again, also after an
    // upgrade: this pins them (the value is SHA-256 over the parts `ord_1`, `3`, `refund`,
    // `500`, `=Late`, `0`, each after its length as 8 big-endian bytes, computed apart from
    // this code). A change here changes the keys of every repeat in flight.
    #[test]
    fn record_ids_are_pinned_and_tell_requests_apart() {
        let refund = OrderAction::Refund { amount: 500, description: Some("Late".into()) };
        assert_eq!(record_id("adj", "ord_1", 3, &refund, 0), "adj_f11b04d3aa018baaeb63");
        let ids = |action: &OrderAction| record_id("adj", "ord_1", 3, action, 0);
        let different = [
            OrderAction::Refund { amount: 500, description: None },
            OrderAction::Refund { amount: 500, description: Some(String::new()) },
            OrderAction::Refund { amount: 501, description: Some("Late".into()) },
            OrderAction::Adjust {
                kind: "refund".into(),
                amount: 500,
                status: AdjustmentStatus::Completed,
                description: Some("Late".into()),
            },
            OrderAction::Cancel { lines: None, amount: Some(500), description: Some("Late".into()) },
            OrderAction::Cancel { lines: Some(vec![]), amount: Some(500), description: Some("Late".into()) },
        ];
        let mut seen: Vec<String> = different.iter().map(ids).collect();
        seen.push(ids(&refund));
        seen.push(record_id("adj", "ord_1", 4, &refund, 0));
        seen.push(record_id("adj", "ord_2", 3, &refund, 0));
        seen.push(record_id("adj", "ord_1", 3, &refund, 1));
        let count = seen.len();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), count, "every request, order, version and index its own id");
    }
}
