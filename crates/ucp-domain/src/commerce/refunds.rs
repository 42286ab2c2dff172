//! A merchant's refund made once and recorded once. The refund is stored as pending
//! ([`RefundIntent`]) before its processor is asked, under the key the order's adjustment will
//! carry; the change that records it on the order ends it in the same transaction. Whatever
//! fails in between (the processor's answer, the store, the process), the refund stays
//! pending: the same request again settles it under its key instead of refunding anew, even
//! after the order changed, and the recovery sweeper settles it when nobody asks. Settling
//! checks that the intent is still pending and that the request, applied to the order as it is
//! now, still gives back that amount under that key, then asks the processor again under the
//! key (it refunds at most once per key) and records it. An intent the order no longer
//! justifies is abandoned before the processor is asked, with an error naming its key, and an
//! abandoned key is not asked for again until the merchant dismisses it (`reconcile.rs`).
//! Settling, like every change of an order, holds the order (`CommerceStore::hold_order`), so
//! no two settlers of one refund ask at once. A processor's refusal ends
//! the intent: nothing was refunded. One the sweeper recorded is the answer to the same request
//! once more, within [`REFUND_PATIENCE_SECS`]: its caller was told "pending", not "done".

use crate::order::action::OrderAction;
use crate::order::changes::{ChangeError, Pending};
use crate::payment::{Handler, Refund, RefundError};
use crate::store::{OrderPayment, RefundBegun, RefundEnd, RefundIntent, StoredOrder, StoredRefund};

use super::orders::{OrderOutcome, Refunded, Settling, abandoned_earlier, changed, holds_record};
use super::reapply::applied_again;
use super::recovery::Overdue;
use super::session::Attempt;
use super::{Commerce, Error};

/// How long the sweeper keeps asking the processor about a pending refund: well inside the
/// 24 hours for which processors such as Stripe keep an idempotency key, so that asking again
/// can never refund twice. Past it the refund is abandoned to the merchant, with an error in
/// the log.
pub const REFUND_PATIENCE_SECS: i64 = 12 * 3600;

/// What one sweep of pending refunds did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RefundsSettled {
    /// Made and recorded on their order.
    pub recorded: u64,
    /// Refused by the processor: nothing was refunded.
    pub refused: u64,
    /// Given up: past [`REFUND_PATIENCE_SECS`], or not recordable on the order.
    pub abandoned: u64,
    /// Left pending: the processor did not answer (yet), or the store failed.
    pub unresolved: u64,
}

impl RefundsSettled {
    pub fn is_empty(&self) -> bool {
        *self == RefundsSettled::default()
    }
}

/// What storing a refund as pending found.
enum Begun {
    /// Stored (or pending again after a refusal): ask the processor.
    Pending,
    /// The same request is pending under another key (asked at another order version), or this
    /// key, dismissed before, is pending again for its first amount: settle that one instead.
    Other(RefundIntent),
    /// The same request, recorded by the sweeper after it was answered "pending" (now seen):
    /// the answer is the order.
    Seen(RefundIntent),
    /// Not to be asked for: no processor to ask, or this key was abandoned earlier.
    Refused(ChangeError),
}

/// Whether this call's processor refund, if it made one, was `key`'s.
fn made_by_this_call(refunded: &Refunded, key: &str) -> Result<bool, Error> {
    let made = refunded.lock().map_err(|_| Error::Internal("poisoned refund state".into()))?;
    Ok(made.as_ref().is_some_and(|(_, made)| made == key))
}

/// Notes that this call settles (or asked for) the pending refund `key`, so that its later
/// attempts never start a fresh refund of the same request.
fn remember(settling: &Settling, key: &str) {
    if let Ok(mut settling) = settling.lock() {
        *settling = Some(key.to_owned());
    }
}

impl Commerce {
    /// The refunds holding `stored`'s order: this very request's, if an earlier try left one
    /// pending (or, none pending, abandoned: asked at any version, it may have been made), and
    /// what the others hold (money asked back and the units their cancels take).
    pub(super) async fn pending_twin(
        &self,
        stored: &StoredOrder,
        action: &OrderAction,
    ) -> Result<(Option<StoredRefund>, Pending), Error> {
        if !action.moves_money() && !matches!(action, OrderAction::Ship { .. }) {
            return Ok((None, Pending::default()));
        }
        let mut holding = self.ports.store.holding_refunds(&stored.id).await?;
        // Pending ones come first.
        let twin = holding.iter().position(|refund| refund.intent.action == *action).map(|at| holding.remove(at));
        let mut others = Pending::default();
        for refund in &holding {
            others.add(&refund.intent.action, refund.intent.amount);
        }
        Ok((twin, others))
    }

    /// A new request's refund: stored as pending, then asked for. `None`: made, for the caller
    /// to record with the change (ending the intent); otherwise the call's answer (refused, or
    /// the same request pending under another key, which this call settles instead).
    pub(super) async fn start_refund(
        &self,
        stored: &StoredOrder,
        intent: &RefundIntent,
        occurred_at: &str,
        refunded: &Refunded,
        settling: &Settling,
    ) -> Result<Option<Attempt<OrderOutcome>>, Error> {
        match self.begin_refund(stored, intent).await? {
            Begun::Pending => remember(settling, &intent.key),
            Begun::Seen(recorded) => {
                // The same request, recorded by the sweeper after it was answered "pending":
                // it is that refund. The order as read may predate the record: read it again.
                remember(settling, &recorded.key);
                if holds_record(stored, &recorded.key) {
                    return Ok(Some(changed(stored.clone())));
                }
                return Ok(Some(Attempt::Raced));
            }
            Begun::Other(pending) => {
                // The same request, pending under the key it had at another order version
                // (asked by a request running now): this call settles that one.
                let stored = stored.clone();
                return self.settle_twin(stored, &pending, occurred_at, refunded, settling).await.map(Some);
            }
            Begun::Refused(refusal) => return Ok(Some(Attempt::Done(OrderOutcome::Refused(refusal)))),
        }
        Ok(self
            .ask_refund(stored, intent, refunded)
            .await?
            .map(|refused| Attempt::Done(OrderOutcome::Refused(refused))))
    }

    /// Settles `intent`, this request's refund pending from an earlier try, noting its key in
    /// `settling` so that the call's later attempts know it.
    pub(super) async fn settle_twin(
        &self,
        stored: StoredOrder,
        intent: &RefundIntent,
        occurred_at: &str,
        refunded: &Refunded,
        settling: &Settling,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        remember(settling, &intent.key);
        self.settle_refund(stored, intent, occurred_at, refunded, RefundEnd::Recorded).await
    }

    /// What the refunds pending on `settling`'s order under other keys hold (money and units),
    /// as [`crate::order::changes::apply`] counted them when `settling`'s request was first worked out.
    pub(super) async fn pending_besides(&self, settling: &RefundIntent) -> Result<Pending, Error> {
        let mut others = Pending::default();
        let holding = self.ports.store.holding_refunds(&settling.order_id).await?;
        for refund in holding.iter().filter(|refund| refund.intent.key != settling.key) {
            others.add(&refund.intent.action, refund.intent.amount);
        }
        others.spare(&settling.action);
        Ok(others)
    }

    /// The answer to a request the order refuses: that refusal, unless the request is the
    /// repeat of one answered "pending" whose refund the sweeper recorded since (a cancel,
    /// say, of the order it canceled): the order as it is then, as for a refund's repeat.
    pub(super) async fn refused(
        &self,
        stored: StoredOrder,
        action: &OrderAction,
        refusal: ChangeError,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        if action.moves_money() {
            let seen_since = self.now().saturating_sub(REFUND_PATIENCE_SECS);
            if let Some(recorded) = self.ports.store.claim_recorded_later(&stored.id, action, seen_since).await? {
                if holds_record(&stored, &recorded.key) {
                    return Ok(changed(stored));
                }
                // Read before the sweeper's record: the order as it is now holds it.
                return Ok(match self.ports.store.order(&stored.id).await? {
                    Some(now) => changed(now),
                    None => Attempt::Done(OrderOutcome::NotFound),
                });
            }
        }
        Ok(Attempt::Done(OrderOutcome::Refused(refusal)))
    }

    /// Stores `intent` as pending before its processor is asked (see [`Begun`]).
    async fn begin_refund(&self, stored: &StoredOrder, intent: &RefundIntent) -> Result<Begun, Error> {
        if let Err(refusal) = self.handler_of(stored) {
            return Ok(Begun::Refused(refusal));
        }
        let seen_since = intent.created_at.saturating_sub(REFUND_PATIENCE_SECS);
        Ok(match self.ports.store.begin_refund(intent, seen_since).await? {
            // Asked again under a key dismissed before, for another amount than its first ask:
            // a processor answers a key with its first ask, so that one is settled instead.
            RefundBegun::Pending(pending) if pending.key == intent.key && pending.amount == intent.amount => {
                Begun::Pending
            }
            RefundBegun::Pending(pending) => Begun::Other(pending),
            RefundBegun::RecordedLater(recorded) => Begun::Seen(recorded),
            RefundBegun::Exceeds { available } => Begun::Refused(ChangeError::OverRefund {
                requested: intent.amount,
                available,
                paid: stored.payment.as_ref().map_or(0, |payment| payment.amount),
            }),
            RefundBegun::Ended => Begun::Refused(abandoned_earlier(&intent.key)),
        })
    }

    /// The processor behind `stored`'s payment, or why there is none to ask.
    fn handler_of<'a>(&'a self, stored: &'a StoredOrder) -> Result<(&'a OrderPayment, &'a Handler), ChangeError> {
        let Some(payment) = &stored.payment else {
            return Err(ChangeError::Invalid(format!("order {} has no recorded payment to refund", stored.id)));
        };
        match self.ports.payments.by_id(&payment.handler_id) {
            Some(handler) => Ok((payment, handler)),
            None => Err(ChangeError::Invalid(format!(
                "payment handler {} is no longer configured; refund by hand",
                payment.handler_id
            ))),
        }
    }

    /// Asks the processor for the pending `intent`, unless `refunded` says this call made it.
    /// `Some`: the processor refused (the intent ends so); `Err(RefundPending)`: it did not
    /// answer, and the intent stays for a repeat or the sweeper.
    async fn ask_refund(
        &self,
        stored: &StoredOrder,
        intent: &RefundIntent,
        refunded: &Refunded,
    ) -> Result<Option<ChangeError>, Error> {
        if made_by_this_call(refunded, &intent.key)? {
            return Ok(None);
        }
        let (payment, handler) = match self.handler_of(stored) {
            Ok(found) => found,
            Err(refusal) => return Ok(Some(refusal)),
        };
        let refund = Refund {
            reference: payment.reference.clone(),
            amount: intent.amount,
            currency: payment.currency.clone(),
            idempotency_key: intent.key.clone(),
        };
        match handler.processor.refund(&refund).await {
            Ok(()) => {
                if let Ok(mut done) = refunded.lock() {
                    *done = Some((intent.amount, intent.key.clone()));
                }
                Ok(None)
            }
            Err(RefundError::Refused(reason)) => {
                tracing::warn!(order = %stored.id, key = %intent.key, %reason, "the processor refused a refund; nothing was refunded");
                self.ports.store.end_refund(&intent.key, RefundEnd::Refused).await?;
                Ok(Some(ChangeError::ProcessorRefused(reason)))
            }
            Err(RefundError::Unavailable(error)) => {
                tracing::warn!(order = %stored.id, key = %intent.key, %error, "the processor did not confirm a refund; it stays pending");
                Err(Error::RefundPending)
            }
        }
    }

    /// Settles the pending `intent` on `stored` as it is now: asked for again under its key
    /// (unless `refunded` says this call made it) and recorded in one transaction with its
    /// end. One that ended meanwhile is left alone; one the order can no longer record is
    /// abandoned before the processor is asked.
    pub(super) async fn settle_refund(
        &self,
        stored: StoredOrder,
        intent: &RefundIntent,
        occurred_at: &str,
        refunded: &Refunded,
        end: RefundEnd,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        if holds_record(&stored, &intent.key) {
            self.ports.store.end_refund(&intent.key, end).await?;
            return Ok(changed(stored));
        }
        if !self.ports.store.refund_pending(&intent.key).await? {
            return self.after_end(stored, &intent.key, refunded).await;
        }
        let pending = self.pending_besides(intent).await?;
        let applied = match applied_again(&stored, intent, &pending, &self.ports.rules.taxes, occurred_at) {
            Ok(applied) => applied,
            Err(refusal) => return self.abandon(&stored, intent, &refusal.to_string()).await,
        };
        if let Err(refusal) = self.handler_of(&stored) {
            return self.abandon(&stored, intent, &refusal.to_string()).await;
        }
        if let Some(refused) = self.ask_refund(&stored, intent, refunded).await? {
            return Ok(Attempt::Done(OrderOutcome::Refused(refused)));
        }
        self.record_change(stored, applied, Some((intent.key.clone(), end)), intent.action.name()).await
    }

    /// What a call answers whose pending refund `key` another request ended meanwhile: the
    /// order if that one recorded it (`stored`, or read again, since `stored` may predate the
    /// record); otherwise the refund ended unrecorded.
    pub(super) async fn after_end(
        &self,
        stored: StoredOrder,
        key: &str,
        refunded: &Refunded,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        if holds_record(&stored, key) {
            return Ok(changed(stored));
        }
        match self.ports.store.order(&stored.id).await? {
            Some(fresh) if holds_record(&fresh, key) => Ok(changed(fresh)),
            Some(_) => Ok(Attempt::Done(OrderOutcome::Refused(self.ended_elsewhere(&stored.id, key, refunded)))),
            None => Ok(Attempt::Done(OrderOutcome::NotFound)),
        }
    }

    /// What a call answers whose pending refund `key` another request ended meanwhile without
    /// recording it (the processor refused it, or it was abandoned); loud if this call made it.
    fn ended_elsewhere(&self, order: &str, key: &str, refunded: &Refunded) -> ChangeError {
        if made_by_this_call(refunded, key).unwrap_or(false) {
            tracing::error!(
                order,
                key,
                "a refund this request made ended elsewhere without being recorded; reconcile by hand"
            );
        }
        ChangeError::RefundAbandoned(format!(
            "the refund under key {key} ended meanwhile without being recorded (refused by the processor, or \
             abandoned: see the log); read the order"
        ))
    }

    /// Gives up on `intent`, which `reason` says cannot be settled: the merchant reconciles by
    /// hand, told so by an error in the log and the answer.
    async fn abandon(
        &self,
        stored: &StoredOrder,
        intent: &RefundIntent,
        reason: &str,
    ) -> Result<Attempt<OrderOutcome>, Error> {
        tracing::error!(
            order = %stored.id,
            key = %intent.key,
            amount = intent.amount,
            reason,
            "a pending refund cannot be settled; ask the processor whether it made a refund under this key, then record it by hand if so or dismiss it if not"
        );
        self.ports.store.end_refund(&intent.key, RefundEnd::Abandoned).await?;
        Ok(Attempt::Done(OrderOutcome::Refused(ChangeError::RefundAbandoned(format!(
            "the pending refund under key {} was abandoned: {reason}; ask the processor whether it was made, then record \
             it by hand if so or dismiss it if not",
            intent.key
        )))))
    }

    /// Settles at most `limit` refunds pending for `payment_recovery_secs` or more, oldest
    /// first; those pending past [`REFUND_PATIENCE_SECS`] are abandoned.
    pub async fn recover_refunds(&self, limit: u64) -> Result<RefundsSettled, Error> {
        let now = self.now();
        let stale = self.ports.store.stale_refunds(self.stuck_before(now), limit).await?;
        let mut settled = RefundsSettled::default();
        for intent in stale {
            // Not beside a change of the order, which may be settling this very refund; and
            // without waiting for one, which would hold up the sweep (charges in doubt too).
            let _hold = match self.ports.store.hold_order(&intent.order_id, std::time::Duration::ZERO).await {
                Ok(hold) => hold,
                Err(error) => {
                    tracing::info!(order = %intent.order_id, key = %intent.key, %error, "a pending refund's order is being changed; the next sweep settles it");
                    settled.unresolved += 1;
                    continue;
                }
            };
            if now.saturating_sub(intent.created_at) > REFUND_PATIENCE_SECS {
                if !self.ports.store.refund_pending(&intent.key).await? {
                    continue;
                }
                tracing::error!(
                    order = %intent.order_id,
                    key = %intent.key,
                    amount = intent.amount,
                    "a refund pending past the processor's key lifetime is abandoned; ask the processor whether it was made, then record it by hand if so or dismiss it if not"
                );
                self.ports.store.end_refund(&intent.key, RefundEnd::Abandoned).await?;
                settled.abandoned += 1;
                continue;
            }
            let occurred_at = crate::time::rfc3339(now);
            let refunded = Refunded::default();
            let (pending, occurred_at, refunded) = (&intent, occurred_at.as_str(), &refunded);
            let outcome = self
                .retrying(|| async move {
                    let Some(stored) = self.ports.store.order(&pending.order_id).await? else {
                        return Ok(Attempt::Done(OrderOutcome::NotFound));
                    };
                    self.settle_refund(stored, pending, occurred_at, refunded, RefundEnd::RecordedLater).await
                })
                .await;
            match outcome {
                Ok(OrderOutcome::Changed(_)) => settled.recorded += 1,
                Ok(OrderOutcome::Refused(ChangeError::ProcessorRefused(reason))) => {
                    tracing::error!(
                        order = %intent.order_id,
                        key = %intent.key,
                        amount = intent.amount,
                        %reason,
                        "the processor refused a pending refund: nothing was refunded, though the merchant was told it would be"
                    );
                    settled.refused += 1;
                }
                Ok(OrderOutcome::Refused(_)) => settled.abandoned += 1,
                Ok(OrderOutcome::NotFound) => {
                    tracing::error!(order = %intent.order_id, key = %intent.key, "the order of a pending refund is gone");
                    self.ports.store.end_refund(&intent.key, RefundEnd::Abandoned).await?;
                    settled.abandoned += 1;
                }
                Err(Error::RefundPending) => settled.unresolved += 1,
                Err(error) => {
                    tracing::warn!(order = %intent.order_id, key = %intent.key, %error, "settling a pending refund failed; trying again later");
                    settled.unresolved += 1;
                }
            }
        }
        Ok(settled)
    }

    /// The merchants' refunds pending past `payment_recovery_secs` (for `/metrics`: one that
    /// stays means a processor that does not answer, or a store that cannot record).
    pub async fn refunds_pending(&self) -> Result<Overdue, Error> {
        let now = self.now();
        let stale = self.ports.store.stale_refunds_summary(self.stuck_before(now)).await?;
        let oldest_secs = stale.oldest_started_at.map_or(0, |created| now.saturating_sub(created).max(0));
        Ok(Overdue { count: stale.count, oldest_secs })
    }
}
