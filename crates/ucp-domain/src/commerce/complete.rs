//! `complete_checkout`: claim the checkout, take the payment, place the order atomically, and
//! give the money back whenever a charge cannot become an order.

use crate::checkout::{Message, PaymentAttempt, Session, SessionKind, Severity, Status, instrument_digest};
use crate::payment::{Charge, Handler};

use super::inputs::CheckoutInput;
use super::session::{Attempt, refusal_message};
use super::settle::Settled;
use super::{Answer, Caller, Commerce, Error, OrderView, Refusal, SessionView};

/// What a complete asks of the processor.
enum PaymentStep {
    /// Charge the credential whose digest ([`instrument_digest`]) this is.
    Charge(String),
    /// The buyer passed 3-D Secure on our page: confirm the pending challenge.
    Confirm(String),
}

impl Commerce {
    pub async fn complete_checkout(
        &self,
        caller: &Caller<'_>,
        id: &str,
        input: CheckoutInput,
    ) -> Result<Answer<SessionView>, Error> {
        self.retrying(|| self.complete_once(caller, id, &input)).await
    }

    /// One attempt at completing; raced when the checkout changed before anything was charged.
    async fn complete_once(
        &self,
        caller: &Caller<'_>,
        id: &str,
        input: &CheckoutInput,
    ) -> Result<Attempt<Answer<SessionView>>, Error> {
        let done = |view: SessionView| Ok(Attempt::Done(Answer::Resource(view)));
        let Some(mut session) = self.load(caller, id, SessionKind::Checkout).await? else {
            return Ok(Attempt::Done(Answer::Refused(Refusal::not_found("Checkout"))));
        };
        // A checkout whose charge is in doubt, or stuck past the recovery timeout, is settled
        // first (the processor is asked), rather than refused forever.
        if session.is_stuck(self.now(), self.settings.payment_recovery_secs) {
            return self.resolve_stuck(caller, session).await;
        }
        if let Some(refusal) = refusal_message(&session, "completed again") {
            return done(self.view(caller, session, vec![refusal]).await?);
        }
        // A challenge waiting for the buyer answers a complete with the same card (the buyer
        // has yet to pass it: the checkout stays `requires_escalation`); another card or
        // handler is another payment, made under a new key once the challenge is abandoned.
        if let Some(pending) = session.pending_authentication.as_ref().filter(|pending| !pending.approved)
            && let Some([instrument]) = input.payment.as_ref().map(|payment| payment.instruments.as_slice())
            && let Some(token) = instrument.token.as_deref()
            && pending.is_other_payment(&instrument.handler_id, &instrument_digest(&session.id, token))
        {
            session.abandon_authentication();
        }
        let priced = self.price(caller, &session).await?;
        if priced.status != Status::ReadyForComplete {
            let now = self.now();
            return done(self.view_priced(caller, session, priced, Vec::new(), now));
        }
        // Never charge a price the platform did not see: a code that applied at its last write
        // and no longer does (expired, used up meanwhile) made the checkout incomplete above
        // (`discount_code_rejected`); one its last write was already told of charges nothing
        // the platform was not shown.
        let total = priced.totals.iter().find(|total| total.kind == "total").map_or(0, |total| total.amount);

        let approved_challenge = session.pending_authentication.clone().filter(|pending| pending.approved);
        let (handler, step, token) = if let Some(pending) = approved_challenge {
            let Some(handler) = self.ports.payments.by_id(&pending.handler_id) else {
                return Err(Error::Internal(format!("handler {} vanished", pending.handler_id)));
            };
            (handler.clone(), PaymentStep::Confirm(pending.reference), String::new())
        } else {
            let instruments = input.payment.as_ref().map(|payment| payment.instruments.as_slice()).unwrap_or_default();
            let instrument = match instruments {
                [one] => one,
                [] => return Err(Error::invalid("checkout.payment.instruments must hold the instrument to charge")),
                _ => {
                    let reason = "Send exactly one payment instrument; split payments are not supported.";
                    return self.refuse_payment(caller, session, reason).await.map(done_answer);
                }
            };
            let Some((handler, instruments)) = self.offered_handler(caller, &session, &instrument.handler_id) else {
                let reason = format!(
                    "Payment handler {:?} is not offered for this checkout; use one from ucp.payment_handlers.",
                    instrument.handler_id
                );
                return self.refuse_payment(caller, session, &reason).await.map(done_answer);
            };
            if !instruments.contains(&instrument.kind) {
                let reason = format!("Handler {} does not take {} instruments.", handler.id, instrument.kind);
                return self.refuse_payment(caller, session, &reason).await.map(done_answer);
            }
            let Some(token) = instrument.token.clone() else {
                let reason = "The payment instrument needs a token credential.";
                return self.refuse_payment(caller, session, reason).await.map(done_answer);
            };
            let digest = instrument_digest(&session.id, &token);
            (handler, PaymentStep::Charge(digest), token)
        };

        // Claim the checkout and record the charge before any money moves: from here until
        // the outcome is stored it is `complete_in_progress`, which updates, cancels and other
        // completes refuse (checklist 132, 146), and recovery can ask the processor about it.
        // A concurrent writer that got in first makes this attempt start over.
        // The attempt keeps the pricing it charges for, not what was said about it: the
        // disclosures among its messages are the merchant's declarations, made afresh on reads.
        let mut priced = priced;
        priced.messages.retain(|message| message.disclosure.is_none());
        let attempt = PaymentAttempt {
            handler_id: handler.id.clone(),
            key: session.charge_key(),
            amount: total,
            currency: session.currency.clone(),
            started_at: self.now(),
            in_doubt: false,
            confirms: match &step {
                PaymentStep::Charge(_) => None,
                PaymentStep::Confirm(reference) => Some(reference.clone()),
            },
            instrument: match &step {
                PaymentStep::Charge(digest) => Some(digest.clone()),
                PaymentStep::Confirm(_) => None,
            },
            pricing: Box::new(priced),
            webhook: caller.order_webhook.cloned(),
        };
        if session.claim(attempt.clone()).is_err() || !self.save(&mut session).await? {
            return Ok(Attempt::Raced);
        }
        let charge = Charge {
            checkout_id: session.id.clone(),
            amount: total,
            currency: session.currency.clone(),
            token,
            idempotency_key: attempt.key.clone(),
        };
        let outcome = match &step {
            PaymentStep::Charge(_) => handler.processor.charge(&charge).await,
            PaymentStep::Confirm(reference) => handler.processor.confirm(reference, &charge).await,
        };
        match outcome {
            Ok(outcome) => {
                let settled = self.settle(session, &attempt, &handler, outcome).await?;
                self.answer(caller, id, settled).await.map(Attempt::Done)
            }
            Err(error) => {
                // The charge may have happened: the checkout stays claimed, in doubt, until the
                // processor says (a retried complete asks at once, recovery after a while).
                tracing::warn!(checkout = %session.id, %error, "payment processor unavailable; the charge is in doubt");
                self.doubt(&mut session).await;
                Err(Error::PaymentUnavailable)
            }
        }
    }

    /// The answer to a complete whose charge was settled.
    pub(super) async fn answer(
        &self,
        caller: &Caller<'_>,
        id: &str,
        settled: Settled,
    ) -> Result<Answer<SessionView>, Error> {
        match settled {
            Settled::Placed(session) | Settled::Open(session) => {
                Ok(Answer::Resource(self.view(caller, session, Vec::new()).await?))
            }
            Settled::Superseded => self.current(caller, id).await,
            Settled::SoldOut { session, variant_id } => {
                let priced = self.price(caller, &session).await?;
                let index = session.lines.iter().position(|line| line.item_id == variant_id);
                let path = index.map(|index| format!("$.line_items[{index}]"));
                // One message per problem: pricing may already report the line sold out.
                let reported = priced.messages.iter().any(|message| {
                    message.code == "out_of_stock"
                        && message
                            .path
                            .as_deref()
                            .zip(path.as_deref())
                            .is_some_and(|(have, want)| have.starts_with(want))
                });
                let extra = if reported {
                    Vec::new()
                } else {
                    vec![Message::error(
                        "out_of_stock",
                        Severity::Recoverable,
                        format!("{variant_id} sold out while the order was being placed; the payment was not taken."),
                        path,
                    )]
                };
                let now = self.now();
                Ok(Answer::Resource(self.view_priced(caller, session, priced, extra, now)))
            }
        }
    }

    /// The handler `id` if this checkout offers it, with the instrument types it offers here.
    fn offered_handler(&self, caller: &Caller<'_>, session: &Session, id: &str) -> Option<(Handler, Vec<String>)> {
        let (handler, instruments) = self
            .ports
            .payments
            .for_checkout(Self::payment_context(caller, session))
            .find(|(offered, _)| offered.id == id)?;
        Some((handler.clone(), instruments.into_iter().map(str::to_owned).collect()))
    }

    /// The checkout as it is now, with the refusal its state implies for a second complete.
    async fn current(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<SessionView>, Error> {
        let Some(current) = self.load(caller, id, SessionKind::Checkout).await? else {
            return Ok(Answer::Refused(Refusal::not_found("Checkout")));
        };
        let refusal = refusal_message(&current, "completed again");
        Ok(Answer::Resource(self.view(caller, current, refusal.into_iter().collect()).await?))
    }

    /// Marks the claim's charge as in doubt (its processor call failed without an answer).
    pub(super) async fn doubt(&self, session: &mut Session) {
        if !session.doubt_payment() {
            return;
        }
        match self.save(session).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(checkout = %session.id, "checkout changed while being completed"),
            Err(error) => {
                tracing::error!(checkout = %session.id, %error, "could not mark a charge in doubt; recovery settles it")
            }
        }
    }

    /// Refuses a payment before anything is charged (the instrument is not one we take).
    async fn refuse_payment(
        &self,
        caller: &Caller<'_>,
        mut session: Session,
        reason: &str,
    ) -> Result<Answer<SessionView>, Error> {
        session.refuse_payment(Message::error("payment_failed", Severity::Recoverable, reason.to_owned(), None));
        if !self.save(&mut session).await? {
            return self.current(caller, &session.id).await;
        }
        Ok(Answer::Resource(self.view(caller, session, Vec::new()).await?))
    }

    /// `get_order`, for the platform that placed it.
    pub async fn get_order(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<OrderView>, Error> {
        // Another platform's order answers exactly like a missing one, so ids cannot be
        // probed for existence (issue 8 item 6).
        let Some(stored) = self.ports.store.order(id).await?.filter(|stored| stored.platform == caller.platform) else {
            return Ok(Answer::Refused(Refusal::not_found("Order")));
        };
        Ok(Answer::Resource(OrderView { order: stored.order, created_at: stored.created_at }))
    }

    /// An order by id, whoever placed it (the buyer's order page: the id is the secret).
    pub async fn order(&self, id: &str) -> Result<Option<OrderView>, Error> {
        Ok(self
            .ports
            .store
            .order(id)
            .await?
            .map(|stored| OrderView { order: stored.order, created_at: stored.created_at }))
    }

    /// Marks the pending 3-D Secure challenge of a checkout as passed (the buyer approved it
    /// on our page). `Ok(false)`: there was none, or the checkout changed meanwhile.
    pub async fn approve_challenge(&self, session: &mut Session) -> Result<bool, Error> {
        if !session.approve_challenge() {
            return Ok(false);
        }
        self.save(session).await
    }
}

fn done_answer(answer: Answer<SessionView>) -> Attempt<Answer<SessionView>> {
    Attempt::Done(answer)
}
