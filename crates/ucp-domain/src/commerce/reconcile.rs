//! Reconciling the merchant's refunds by hand: the list, and the two ends the merchant gives an
//! abandoned refund once the processor's own records say what happened to its key. One the
//! processor made is recorded on its order, with no second processor call; one it did not
//! make is dismissed, so that the same request is asked for again under its key (as after a
//! refusal) instead of being refused as abandoned for as long as the order stays as it is.

use crate::order::action::OrderAction;
use crate::order::changes::{self, ChangeError, Stamp};
use crate::store::{RefundCursor, RefundEnd, RefundList, RefundState, StoredRefund};

use super::orders::{OrderOutcome, changed, holds_record};
use super::reapply::{applied_again, cancel_as_made};
use super::session::Attempt;
use super::{Commerce, Error};

/// What dismissing a refund did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dismissal {
    /// Dismissed (by this call or before): the refund as it is now (a request made again since
    /// may have made it pending again, or a late settler recorded it).
    Dismissed(StoredRefund),
    NotFound,
    /// Not abandoned (the text says what it is): nothing changed.
    Refused(ChangeError),
}

/// A page of the merchant's refunds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundPage {
    /// Newest first; at most the limit asked for.
    Refunds(RefundList),
    /// The cursor is not one a page gave.
    BadCursor,
}

impl Commerce {
    /// The merchant's refunds, newest first (all states, or one), after `before` (a page's
    /// `next`) when it is given, for reconciling by hand.
    pub async fn refunds(
        &self,
        state: Option<RefundState>,
        limit: u64,
        before: Option<&str>,
    ) -> Result<RefundPage, Error> {
        let before = match before.map(RefundCursor::parse) {
            None => None,
            Some(Some(cursor)) => Some(cursor),
            Some(None) => return Ok(RefundPage::BadCursor),
        };
        Ok(RefundPage::Refunds(self.ports.store.refunds(state, limit, before).await?))
    }

    /// How many refunds were abandoned and wait for the merchant to record or dismiss them
    /// (for `/metrics`).
    pub async fn refunds_abandoned(&self) -> Result<u64, Error> {
        Ok(self.ports.store.refund_count(RefundState::Ended(RefundEnd::Abandoned)).await?)
    }

    /// Dismisses an abandoned refund the merchant found the processor did not make (the error
    /// that abandoned it named its key). The same request made again is then asked for under
    /// that key, as after a refusal. Within the processor's key lifetime (a day at Stripe,
    /// from the first ask) a refund it did make after all is answered under the key, and the
    /// order records it once; past it, asking again is a refund of its own, so a dismissal
    /// rests on the merchant having found the key unused. Dismissing it again answers it.
    pub async fn dismiss_refund(&self, key: &str) -> Result<Dismissal, Error> {
        let Some(refund) = self.ports.store.refund(key).await? else { return Ok(Dismissal::NotFound) };
        let dismissed = RefundState::Ended(RefundEnd::Dismissed);
        if refund.state == dismissed {
            return Ok(Dismissal::Dismissed(refund));
        }
        if refund.state != RefundState::Ended(RefundEnd::Abandoned)
            || !self.ports.store.end_refund(key, RefundEnd::Dismissed).await?
        {
            // Not abandoned, or no longer: another dismissal won the write (a double click), or a
            // settler that had already asked recorded it (or the processor refused it) between
            // the read and the write.
            let now = self.ports.store.refund(key).await?.unwrap_or(refund);
            if now.state == dismissed {
                return Ok(Dismissal::Dismissed(now));
            }
            return Ok(Dismissal::Refused(not_abandoned(key, now.state, "only an abandoned refund is dismissed")));
        }
        tracing::info!(order = %refund.intent.order_id, key, amount = refund.intent.amount, "an abandoned refund dismissed by hand");
        // As it is now (a request made again since the write may have made it pending again);
        // as written, if it cannot be read again: the dismissal is done either way.
        let written = StoredRefund { state: dismissed, ..refund };
        let refund = self.ports.store.refund(key).await.ok().flatten().unwrap_or(written);
        Ok(Dismissal::Dismissed(refund))
    }

    /// Records on its order an abandoned refund the merchant found made at the processor
    /// (the error that abandoned it named its key), with no call to the processor: the request
    /// as asked where the order still takes it so (a cancel's lines too), otherwise a cancel's
    /// lines at the amount it asked (`cancel_as_made`), otherwise a refund adjustment of its
    /// amount under that key (a canceled order takes that too). An order that
    /// takes neither (refunded up to what was paid, which the processor's own cap makes
    /// unlikely) refuses. The fallback does not count other pending refunds against it: this
    /// money went out, so it is recorded, and a pending refund it leaves no room for is
    /// abandoned when it settles, to reconcile in turn.
    /// A dismissed refund is recorded so too (the merchant found it made after all). Recording
    /// it again answers the order as it is.
    pub async fn record_refund_by_hand(&self, key: &str) -> Result<OrderOutcome, Error> {
        let Some(refund) = self.ports.store.refund(key).await? else { return Ok(OrderOutcome::NotFound) };
        let intent = refund.intent;
        let recordable = matches!(
            refund.state,
            RefundState::Ended(
                RefundEnd::Recorded | RefundEnd::RecordedLater | RefundEnd::Abandoned | RefundEnd::Dismissed
            )
        );
        if !recordable {
            let rule = "only an abandoned or dismissed refund is recorded";
            return Ok(OrderOutcome::Refused(not_abandoned(key, refund.state, rule)));
        }
        let _hold = self.ports.store.hold_order(&intent.order_id, super::orders::CHANGE_HOLD_WAIT).await?;
        let occurred_at = crate::time::rfc3339(self.now());
        let intent = &intent;
        let occurred_at = occurred_at.as_str();
        self.retrying(|| async move {
            let Some(stored) = self.ports.store.order(&intent.order_id).await? else {
                return Ok(Attempt::Done(OrderOutcome::NotFound));
            };
            if holds_record(&stored, &intent.key) {
                return Ok(changed(stored));
            }
            // The request as asked (a cancel's or return's lines too) where the order still
            // takes it so; otherwise the money alone, as a refund under the key.
            let pending = self.pending_besides(intent).await?;
            let applied = applied_again(&stored, intent, &pending, &self.ports.rules.taxes, occurred_at)
                .or_else(|_| cancel_as_made(&stored, intent, &pending, &self.ports.rules.taxes, occurred_at))
                .or_else(|_| {
                let paid = stored.payment.as_ref().map(|payment| payment.amount);
                let description = intent.action.description().cloned();
                let refund = OrderAction::Refund { amount: intent.amount, description };
                changes::apply(&stored.order, &refund, paid, &changes::Pending::default(), &[], Stamp { occurred_at, ids: &mut |_: &str| intent.key.clone() })
            });
            match applied {
                Ok(applied) => {
                    tracing::info!(order = %stored.id, key = %intent.key, amount = intent.amount, "an abandoned refund recorded by hand");
                    self.record_change(stored, applied, Some((intent.key.clone(), RefundEnd::Recorded)), "record_refund")
                        .await
                }
                Err(refusal) => Ok(Attempt::Done(OrderOutcome::Refused(refusal))),
            }
        })
        .await
    }
}

/// Why a refund in `state` is not taken by hand, under `rule` (which refunds are).
fn not_abandoned(key: &str, state: RefundState, rule: &str) -> ChangeError {
    ChangeError::NotAbandoned(format!(
        "refund {key} is {}: {rule} by hand (a pending one is the sweeper's, a refused one was not made, a recorded \
         one is on its order)",
        state.as_str()
    ))
}
