//! Recovery of checkouts whose charge has no stored outcome (issue 9 item 3: no charge
//! without an order). A complete records its payment attempt with the claim, before the
//! charge; if it then dies (a killed process) or loses the processor's answer, the checkout
//! stays `complete_in_progress` with that attempt. The processor is then asked, by our key,
//! what became of it, and the checkout is settled like any complete: approved → the order
//! (or a refund when it cannot be placed), declined or never charged → open again, processor
//! still unavailable → left for the next try. Expiry never cancels such a checkout.

use crate::checkout::{Message, Session, Severity};
use crate::payment::PaymentOutcome;

use super::session::Attempt;
use super::settle::Settled;
use super::{Answer, Caller, Commerce, Error, SessionView};

/// What has waited past recovery's delay without an outcome: checkouts whose charge is in
/// doubt ([`Commerce::charges_in_doubt`]), or merchants' refunds not yet recorded
/// ([`Commerce::refunds_pending`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Overdue {
    pub count: u64,
    /// Seconds since the oldest one started; 0 when there is none.
    pub oldest_secs: i64,
}

/// What one recovery sweep did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Recovered {
    /// Approved charges whose order was placed.
    pub placed: u64,
    /// Approved charges refunded because no order could be placed (stock or a code ran out).
    pub refunded: u64,
    /// Checkouts opened again: the charge was declined, or never happened.
    pub released: u64,
    /// Left as they were: the processor could not say (yet).
    pub unresolved: u64,
}

impl Recovered {
    pub fn is_empty(&self) -> bool {
        *self == Recovered::default()
    }
}

/// How one stuck checkout ended.
enum Recovery {
    Placed,
    Refunded,
    Released,
    Unresolved,
    /// Another request settled it meanwhile.
    Superseded,
}

impl Commerce {
    /// The checkouts whose charge has waited past `payment_recovery_secs` without an outcome
    /// (the recovery sweeper's work; for `/metrics`: one that stays means a processor that
    /// cannot answer, or a store that cannot record the order).
    pub async fn charges_in_doubt(&self) -> Result<Overdue, Error> {
        let now = self.now();
        let stuck = self.ports.store.stuck_summary(self.stuck_before(now)).await?;
        let oldest_secs = stuck.oldest_started_at.map_or(0, |started| now.saturating_sub(started).max(0));
        Ok(Overdue { count: stuck.count, oldest_secs })
    }

    /// Settles at most `limit` checkouts that have been `complete_in_progress` with an
    /// unresolved charge for `payment_recovery_secs` or more, oldest first.
    pub async fn recover_payments(&self, limit: u64) -> Result<Recovered, Error> {
        let stuck = self.ports.store.stuck_checkouts(self.stuck_before(self.now()), limit).await?;
        let mut recovered = Recovered::default();
        for session in stuck {
            let id = session.id.clone();
            match self.recover(session).await {
                Ok(Recovery::Placed) => recovered.placed += 1,
                Ok(Recovery::Refunded) => recovered.refunded += 1,
                Ok(Recovery::Released) => recovered.released += 1,
                Ok(Recovery::Unresolved) => recovered.unresolved += 1,
                Ok(Recovery::Superseded) => {}
                Err(error) => {
                    tracing::warn!(checkout = %id, %error, "recovering a charge failed; trying again later");
                    recovered.unresolved += 1;
                }
            }
        }
        Ok(recovered)
    }

    /// A payment attempt started at or before this (unix seconds) is recovery's to settle.
    pub(super) fn stuck_before(&self, now: i64) -> i64 {
        now.saturating_sub(self.settings.payment_recovery_secs)
    }

    async fn recover(&self, mut session: Session) -> Result<Recovery, Error> {
        if !session.is_stuck(self.now(), self.settings.payment_recovery_secs) {
            return Ok(Recovery::Superseded);
        }
        let Some(attempt) = session.unresolved_attempt().cloned() else { return Ok(Recovery::Superseded) };
        let Some(handler) = self.ports.payments.by_id(&attempt.handler_id).cloned() else {
            tracing::error!(checkout = %session.id, handler = %attempt.handler_id, "the handler of a charge in doubt is not configured; reconcile by hand");
            return Ok(Recovery::Unresolved);
        };
        let outcome = match handler.processor.lookup(&attempt.key).await {
            Ok(outcome) => outcome,
            Err(error) => {
                tracing::warn!(checkout = %session.id, %error, "the processor cannot say what became of a charge yet");
                return Ok(Recovery::Unresolved);
            }
        };
        let Some(outcome) = outcome else {
            // Nothing was charged under our key: the checkout is open again, on the same key
            // (a charge under it that arrives late is found by the next complete).
            session.refuse_payment(Message::error(
                "payment_failed",
                Severity::Recoverable,
                "The payment could not be completed and no money was taken; complete the checkout again.",
                None,
            ));
            tracing::info!(checkout = %session.id, "no charge under the key of a stuck checkout; released");
            return Ok(if self.save(&mut session).await? { Recovery::Released } else { Recovery::Superseded });
        };
        let approved = matches!(outcome, PaymentOutcome::Approved { .. });
        let id = session.id.clone();
        let settled = self.settle(session, &attempt, &handler, outcome).await?;
        let recovery = match settled {
            Settled::Placed(_) => Recovery::Placed,
            Settled::SoldOut { .. } => Recovery::Refunded,
            Settled::Open(_) if approved => Recovery::Refunded,
            Settled::Open(_) => Recovery::Released,
            Settled::Superseded => Recovery::Superseded,
        };
        tracing::info!(checkout = %id, placed = matches!(recovery, Recovery::Placed), "recovered a stuck charge");
        Ok(recovery)
    }

    /// A complete of a checkout whose charge is in doubt or stuck: ask the processor and
    /// settle; if nothing was charged under the key, give the claim back and complete again
    /// from this request (the same key, so the processor still charges at most once).
    pub(super) async fn resolve_stuck(
        &self,
        caller: &Caller<'_>,
        mut session: Session,
    ) -> Result<Attempt<Answer<SessionView>>, Error> {
        let Some(attempt) = session.unresolved_attempt().cloned() else { return Ok(Attempt::Raced) };
        let Some(handler) = self.ports.payments.by_id(&attempt.handler_id).cloned() else {
            return Err(Error::Internal(format!("handler {} of a charge in doubt vanished", attempt.handler_id)));
        };
        match handler.processor.lookup(&attempt.key).await {
            Err(error) => {
                tracing::warn!(checkout = %session.id, %error, "payment processor unavailable; the charge stays in doubt");
                self.doubt(&mut session).await;
                Err(Error::PaymentUnavailable)
            }
            Ok(None) => {
                session.release();
                self.save(&mut session).await?;
                Ok(Attempt::Raced)
            }
            Ok(Some(outcome)) => {
                let id = session.id.clone();
                let settled = self.settle(session, &attempt, &handler, outcome).await?;
                self.answer(caller, &id, settled).await.map(Attempt::Done)
            }
        }
    }
}
