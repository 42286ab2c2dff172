//! `complete_checkout`: claim the checkout, take the payment, place the order atomically, and
//! give the money back whenever a charge cannot become an order.

use crate::checkout::{Message, PendingAuthentication, Priced, Session, SessionKind, Severity, Status};
use crate::order::Order;
use crate::payment::{Charge, Handler, PaymentOutcome};
use crate::store::{PlaceOrder, PlaceOrderError, StoredOrder};

use super::inputs::CheckoutInput;
use super::session::{Attempt, refusal_message};
use super::{Answer, Caller, Commerce, Error, OrderView, Refusal, SessionView};

/// What a complete asks of the processor.
enum PaymentStep {
    Charge,
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
        if let Some(refusal) = refusal_message(&session, "completed again") {
            return done(self.view(caller, session, vec![refusal]).await?);
        }
        let priced = self.price(caller, &session).await?;
        if priced.status != Status::ReadyForComplete {
            let now = self.now();
            return done(self.view_priced(caller, session, priced, Vec::new(), now));
        }
        // Never charge a price the platform did not see: a submitted code that no longer
        // applies (expired, used up meanwhile) stops the completion until the codes are fixed.
        if priced.messages.iter().any(|message| {
            message.code.starts_with("discount_code_") && message.code != "discount_code_already_applied"
        }) {
            let refusal = Message::error(
                "discount_code_rejected",
                Severity::Recoverable,
                "A discount code no longer applies; remove or replace it (see the warnings), then complete again. No payment was taken.",
                Some("$.discounts.codes".into()),
            );
            let now = self.now();
            return done(self.view_priced(caller, session, priced, vec![refusal], now));
        }
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
                    return self.fail_payment(caller, session, reason).await.map(done_answer);
                }
            };
            let Some(handler) = self.offered_handler(caller, &session, &instrument.handler_id) else {
                let reason = format!(
                    "Payment handler {:?} is not offered for this checkout; use one from ucp.payment_handlers.",
                    instrument.handler_id
                );
                return self.fail_payment(caller, session, &reason).await.map(done_answer);
            };
            if !handler.instrument_types.contains(&instrument.kind) {
                let reason = format!("Handler {} does not take {} instruments.", handler.id, instrument.kind);
                return self.fail_payment(caller, session, &reason).await.map(done_answer);
            }
            let Some(token) = instrument.token.clone() else {
                let reason = "The payment instrument needs a token credential.";
                return self.fail_payment(caller, session, reason).await.map(done_answer);
            };
            (handler, PaymentStep::Charge, token)
        };

        // Claim the checkout before any money moves: from here until the outcome is stored it
        // is `complete_in_progress`, which updates, cancels and other completes refuse
        // (checklist 132, 146). A concurrent writer that got in first makes this attempt
        // start over.
        if session.claim().is_err() || !self.save(&mut session).await? {
            return Ok(Attempt::Raced);
        }
        let charge = Charge {
            checkout_id: session.id.clone(),
            amount: total,
            currency: session.currency.clone(),
            token,
            idempotency_key: session.charge_key(),
        };
        let outcome = match &step {
            PaymentStep::Charge => handler.processor.charge(&charge).await,
            PaymentStep::Confirm(reference) => handler.processor.confirm(reference, &charge).await,
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(error) => {
                tracing::warn!(checkout = %session.id, %error, "payment processor unavailable");
                self.release(&mut session).await;
                return Err(Error::PaymentUnavailable);
            }
        };
        match outcome {
            PaymentOutcome::Declined { reason } => self.fail_payment(caller, session, &reason).await.map(done_answer),
            PaymentOutcome::RequiresAction { reference } => {
                session.await_authentication(PendingAuthentication {
                    handler_id: handler.id.clone(),
                    instrument_type: "card".into(),
                    reference,
                    approved: false,
                });
                let priced = self.price(caller, &session).await?;
                // Released above, so the session is open again and takes the new status.
                let _ = session.reprice(priced.status);
                if !self.save(&mut session).await? {
                    return self.current(caller, &session.id).await.map(Attempt::Done);
                }
                let now = self.now();
                done(self.view_priced(caller, session, priced, Vec::new(), now))
            }
            PaymentOutcome::Approved { reference } => {
                self.place_order(caller, session, priced, &handler, &reference).await.map(Attempt::Done)
            }
        }
    }

    /// The handler `id` if this checkout offers it.
    fn offered_handler(&self, caller: &Caller<'_>, session: &Session, id: &str) -> Option<Handler> {
        let handler = self.ports.payments.by_id(id)?;
        let offered =
            self.ports.payments.for_checkout(Self::payment_context(caller, session)).any(|offered| offered.id == id);
        offered.then(|| handler.clone())
    }

    /// The checkout as it is now, with the refusal its state implies for a second complete.
    async fn current(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<SessionView>, Error> {
        let Some(current) = self.load(caller, id, SessionKind::Checkout).await? else {
            return Ok(Answer::Refused(Refusal::not_found("Checkout")));
        };
        let refusal = refusal_message(&current, "completed again");
        Ok(Answer::Resource(self.view(caller, current, refusal.into_iter().collect()).await?))
    }

    /// Gives a claimed checkout back when its complete ends without an order.
    async fn release(&self, session: &mut Session) {
        if !session.release() {
            return;
        }
        match self.save(session).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(checkout = %session.id, "checkout changed while being completed"),
            Err(error) => {
                tracing::error!(checkout = %session.id, %error, "could not release a checkout being completed")
            }
        }
    }

    /// Gives a claimed checkout back after its charge was refunded: the next charge is a new
    /// attempt with a new processor key.
    async fn release_refunded(&self, session: &mut Session) {
        session.refunded();
        match self.save(session).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!(checkout = %session.id, "checkout changed while its charge was refunded"),
            Err(error) => {
                tracing::error!(checkout = %session.id, %error, "could not release a checkout after a refund")
            }
        }
    }

    async fn fail_payment(
        &self,
        caller: &Caller<'_>,
        mut session: Session,
        reason: &str,
    ) -> Result<Answer<SessionView>, Error> {
        session.fail_payment(Message::error("payment_failed", Severity::Recoverable, reason.to_owned(), None));
        if !self.save(&mut session).await? {
            return self.current(caller, &session.id).await;
        }
        Ok(Answer::Resource(self.view(caller, session, Vec::new()).await?))
    }

    async fn place_order(
        &self,
        caller: &Caller<'_>,
        mut session: Session,
        priced: Priced,
        handler: &Handler,
        reference: &str,
    ) -> Result<Answer<SessionView>, Error> {
        let order_id = format!("ord_{}", uuid::Uuid::new_v4().simple());
        let now = self.now();
        let permalink = self.ports.pages.url(super::Page::Order, &order_id);
        let order = Order::from_checkout(&session, &priced, &order_id, &permalink);
        let stock: Vec<(String, i64)> =
            session.lines.iter().map(|line| (line.item_id.clone(), line.quantity)).collect();
        let used_codes = priced
            .used_codes
            .iter()
            .map(|code| {
                let limit = self
                    .ports
                    .rules
                    .discounts
                    .iter()
                    .find(|rule| rule.code.as_deref().is_some_and(|rule_code| rule_code.eq_ignore_ascii_case(code)))
                    .and_then(|rule| rule.usage_limit);
                (code.clone(), limit)
            })
            .collect();
        session.complete(order_id.clone(), priced, now).map_err(|error| Error::Internal(error.to_string()))?;
        let placement = PlaceOrder {
            checkout: session.clone(),
            order: StoredOrder {
                id: order_id.clone(),
                checkout_id: session.id.clone(),
                platform: session.platform.clone(),
                order: order.clone(),
                created_at: now,
                webhook: caller.order_webhook.cloned(),
            },
            stock,
            used_codes,
        };
        match self.ports.store.place_order(placement).await {
            Ok(()) => {
                session.version += 1;
                tracing::info!(order = %order_id, checkout = %session.id, handler = %handler.id, "order placed");
                self.ports.notifier.order_placed(&session, &order);
                Ok(Answer::Resource(self.view(caller, session, Vec::new()).await?))
            }
            Err(PlaceOrderError::OutOfStock { variant_id }) => {
                self.refund(handler, reference).await;
                let Some(mut current) = self.load(caller, &session.id, SessionKind::Checkout).await? else {
                    return Ok(Answer::Refused(Refusal::not_found("Checkout")));
                };
                self.release_refunded(&mut current).await;
                let priced = self.price(caller, &current).await?;
                let index = current.lines.iter().position(|line| line.item_id == variant_id);
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
                Ok(Answer::Resource(self.view_priced(caller, current, priced, extra, now)))
            }
            Err(PlaceOrderError::NotOpen) => {
                self.refund(handler, reference).await;
                self.current(caller, &session.id).await
            }
            Err(PlaceOrderError::DiscountExhausted { code }) => {
                // Priced again, the code now shows its usage-limit warning and the new total.
                self.refund(handler, reference).await;
                let Some(mut current) = self.load(caller, &session.id, SessionKind::Checkout).await? else {
                    return Ok(Answer::Refused(Refusal::not_found("Checkout")));
                };
                self.release_refunded(&mut current).await;
                tracing::info!(checkout = %current.id, %code, "discount code ran out while the order was being placed");
                Ok(Answer::Resource(self.view(caller, current, Vec::new()).await?))
            }
            Err(PlaceOrderError::Store(error)) => {
                self.refund(handler, reference).await;
                if let Some(mut current) = self.load(caller, &session.id, SessionKind::Checkout).await.ok().flatten() {
                    self.release_refunded(&mut current).await;
                }
                Err(error.into())
            }
        }
    }

    async fn refund(&self, handler: &Handler, reference: &str) {
        if let Err(error) = handler.processor.refund(reference).await {
            tracing::error!(%error, reference, "refund of an unplaced order failed; reconcile by hand");
        }
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
