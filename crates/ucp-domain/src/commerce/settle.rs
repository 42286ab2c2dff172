//! What a claimed checkout becomes once its charge's outcome is known, whoever learned it: the
//! complete that charged, a retried complete, or the recovery sweeper asking the processor.
//! Approved → the order is placed in one transaction (at the attempt's pricing), or the money
//! goes back (while the store is unavailable, or when its commit's outcome is unknown,
//! neither: the charge stays claimed, in doubt); declined → the checkout is open again with
//! the reason; 3-D Secure → it waits for the buyer. No caller here: rendering for a platform
//! is the complete's business.

use crate::checkout::{Message, PaymentAttempt, PendingAuthentication, Session, SessionKind, Severity, Status};
use crate::order::Order;
use crate::payment::{Handler, PaymentOutcome, Refund};
use crate::store::{OrderPayment, PlaceOrder, PlaceOrderError, StoreError, StoredOrder};

use super::session::Attempt;
use super::{Commerce, Error};

/// Where a settled checkout stands.
#[derive(Debug)]
pub(super) enum Settled {
    /// The order was placed; the checkout is completed.
    Placed(Session),
    /// The checkout is open again (declined, waiting for the buyer, or refunded because a code
    /// ran out), as stored.
    Open(Session),
    /// Approved, but a line sold out meanwhile: refunded, the checkout open again.
    SoldOut { session: Session, variant_id: String },
    /// Someone else changed the checkout first (placed this same charge's order, holds it, or
    /// ended it); its stored state is the answer.
    Superseded,
}

impl Commerce {
    /// Settles `session`, claimed for `attempt`, with the processor's `outcome`.
    pub(super) async fn settle(
        &self,
        mut session: Session,
        attempt: &PaymentAttempt,
        handler: &Handler,
        outcome: PaymentOutcome,
    ) -> Result<Settled, Error> {
        match outcome {
            PaymentOutcome::Declined { reason } => {
                session.fail_payment(Message::error("payment_failed", Severity::Recoverable, reason, None));
                Ok(if self.save(&mut session).await? { Settled::Open(session) } else { Settled::Superseded })
            }
            PaymentOutcome::RequiresAction { reference } => {
                if attempt.confirms.is_some() {
                    // The confirmation did not happen: the passed challenge stays, and the next
                    // complete confirms it again.
                    session.release();
                } else {
                    session.await_authentication(PendingAuthentication {
                        handler_id: handler.id.clone(),
                        instrument_type: "card".into(),
                        reference,
                        approved: false,
                        instrument: attempt.instrument.clone(),
                    });
                }
                Ok(if self.save(&mut session).await? { Settled::Open(session) } else { Settled::Superseded })
            }
            PaymentOutcome::Approved { reference } => self.place_order(session, attempt, handler, &reference).await,
        }
    }

    /// Places the order of an approved charge, or refunds it when no order can be placed (while
    /// the store is unavailable or the write's outcome is unknown, the charge stays claimed for
    /// a retry or recovery to place).
    async fn place_order(
        &self,
        mut session: Session,
        attempt: &PaymentAttempt,
        handler: &Handler,
        reference: &str,
    ) -> Result<Settled, Error> {
        let priced = attempt.pricing.as_ref().clone();
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
                version: 0,
                webhook: attempt.webhook.clone(),
                // What was charged, so the merchant can refund it later (never more than this).
                payment: Some(OrderPayment {
                    handler_id: handler.id.clone(),
                    reference: reference.to_owned(),
                    amount: attempt.amount,
                    currency: attempt.currency.clone(),
                }),
            },
            stock,
            used_codes,
        };
        match self.ports.store.place_order(placement).await {
            Ok(()) => {
                session.version += 1;
                tracing::info!(order = %order_id, checkout = %session.id, handler = %handler.id, "order placed");
                self.ports.notifier.order_placed(&session, &order);
                self.end_cart_of(&session).await;
                Ok(Settled::Placed(session))
            }
            Err(PlaceOrderError::OutOfStock { variant_id }) => {
                self.refund(handler, attempt, reference).await?;
                let session = self.release_refunded(&session.id, &attempt.key).await?;
                Ok(session.map_or(Settled::Superseded, |session| Settled::SoldOut { session, variant_id }))
            }
            Err(PlaceOrderError::DiscountExhausted { code }) => {
                // Priced again, the code now shows its usage-limit warning and the new total.
                self.refund(handler, attempt, reference).await?;
                tracing::info!(checkout = %session.id, %code, "discount code ran out while the order was being placed");
                let session = self.release_refunded(&session.id, &attempt.key).await?;
                Ok(session.map_or(Settled::Superseded, Settled::Open))
            }
            Err(PlaceOrderError::NotOpen) => {
                self.not_open(&session.id, attempt, handler, reference).await?;
                Ok(Settled::Superseded)
            }
            Err(PlaceOrderError::Store(error @ (StoreError::Unavailable(_) | StoreError::InDoubt(_)))) => {
                // Either nothing was written and the store is unavailable only for now (busy, or
                // its writer did not take the write in time), or the commit failed with its
                // outcome unknown (the order may be on disk). Neither is grounds for a refund,
                // which would undo a purchase for a moment of load or stand beside its order:
                // the approved charge stays claimed, in doubt, so a retried complete (at once)
                // or the recovery sweeper (after `payment_recovery_secs`) places the order
                // from the processor's answer, or finds it placed.
                tracing::warn!(checkout = %session.id, %error, "order not recorded yet; the approved charge stays claimed for a retry or recovery to place");
                match self.ports.store.session(&session.id).await {
                    Ok(Some(mut claimed))
                        if claimed.unresolved_attempt().is_some_and(|held| held.key == attempt.key) =>
                    {
                        self.doubt(&mut claimed).await;
                        Err(Error::OrderPending)
                    }
                    // No longer held for this charge (another settler placed or released it):
                    // kept if its order stands, refunded otherwise.
                    Ok(_) => {
                        self.not_open(&session.id, attempt, handler, reference).await?;
                        Ok(Settled::Superseded)
                    }
                    Err(error) => {
                        tracing::warn!(checkout = %session.id, %error, "could not mark an approved charge in doubt; recovery settles it");
                        Err(Error::OrderPending)
                    }
                }
            }
            Err(PlaceOrderError::Store(error)) => {
                // Nothing was stored (`Backend`, `Conflict`, `NotFound`), and a retry would fail
                // the same way. Unrefunded, the claim stays for recovery to place the order or
                // refund later.
                self.refund(handler, attempt, reference).await?;
                if let Err(release) = self.release_refunded(&session.id, &attempt.key).await {
                    tracing::error!(checkout = %session.id, error = %release, "could not release a checkout after a refund");
                }
                Err(error.into())
            }
        }
    }

    /// The checkout changed while this approved charge was being placed. If it completed with
    /// this same charge, or is claimed for it again (recovery or a retry will place it: the
    /// processor answers the same key with the same approval), the money stays; otherwise it
    /// goes back, and a checkout still on this key moves on to a new one.
    async fn not_open(
        &self,
        id: &str,
        attempt: &PaymentAttempt,
        handler: &Handler,
        reference: &str,
    ) -> Result<(), Error> {
        let current = self.ports.store.session(id).await?;
        let same_charge = current.as_ref().is_some_and(|current| {
            matches!(current.status, Status::Completed | Status::CompleteInProgress)
                && current.payment_attempt.as_ref().is_some_and(|held| held.key == attempt.key)
        });
        if same_charge {
            tracing::info!(checkout = %id, "another request settles this charge");
            // Placed by a commit whose outcome was in doubt: its cart ends now.
            if let Some(completed) = current.filter(|current| current.status == Status::Completed) {
                self.end_cart_of(&completed).await;
            }
            return Ok(());
        }
        if self.refund(handler, attempt, reference).await.is_err() {
            // The checkout is not claimed for this charge any more, so recovery will not come
            // back to it: this one is for the merchant's books.
            tracing::error!(checkout = %id, reference, "refund of a superseded charge failed; reconcile by hand");
            return Ok(());
        }
        self.release_refunded(id, &attempt.key).await.map(|_| ())
    }

    /// After a refund: gives the claim back and moves the checkout on to a new processor key
    /// if it is still on `key` (a refunded key is never charged again). Returns the checkout
    /// as stored, or `None` if it is gone.
    async fn release_refunded(&self, id: &str, key: &str) -> Result<Option<Session>, Error> {
        for _ in 0..3 {
            let Some(mut current) = self.ports.store.session(id).await? else { return Ok(None) };
            if current.locked().is_some_and(|_| current.status != Status::CompleteInProgress)
                || current.charge_key() != key
            {
                return Ok(Some(current));
            }
            current.refunded();
            if self.save(&mut current).await? {
                return Ok(Some(current));
            }
        }
        tracing::warn!(checkout = %id, "checkout kept changing while its charge was refunded");
        Ok(self.ports.store.session(id).await?)
    }

    /// Gives back the whole of an approved charge that could not become an order. When the
    /// processor cannot refund now, the checkout is left claimed with its attempt (nothing is
    /// released or saved), so the recovery sweeper asks again later: the charge ends as an
    /// order or a refund, never as neither. The caller is told the payment is unavailable.
    async fn refund(&self, handler: &Handler, attempt: &PaymentAttempt, reference: &str) -> Result<(), Error> {
        let refund = Refund {
            reference: reference.to_owned(),
            amount: attempt.amount,
            currency: attempt.currency.clone(),
            idempotency_key: format!("refund-{}", attempt.key),
        };
        handler.processor.refund(&refund).await.map_err(|error| {
            tracing::warn!(%error, reference, "refund of an unplaced order failed; the charge stays claimed for recovery");
            Error::PaymentUnavailable
        })
    }
}

impl Commerce {
    /// Ends the cart an order was placed from (cart.md §6: after completion we MAY clear it,
    /// and later cart calls answer `not_found`), whatever was added to it since the checkout
    /// was made: a cart is bought once. After the order's commit and on its own, so a cart that
    /// keeps changing never holds up an order: it is then left open, logged. Either way no
    /// second checkout is made from it: `insert_checkout_of_cart` refuses a cart with a
    /// completed checkout, in the same write as its insert.
    async fn end_cart_of(&self, checkout: &Session) {
        let Some(cart_id) = &checkout.cart_id else { return };
        let ended = self
            .retrying(|| async {
                let Some(mut cart) =
                    self.session(cart_id, SessionKind::Cart).await?.filter(|cart| cart.platform == checkout.platform)
                else {
                    return Ok(Attempt::Done(()));
                };
                if cart.cancel().is_err() {
                    return Ok(Attempt::Done(()));
                }
                Ok(if self.save(&mut cart).await? { Attempt::Done(()) } else { Attempt::Raced })
            })
            .await;
        if let Err(error) = ended {
            tracing::warn!(cart = %cart_id, checkout = %checkout.id, %error, "the order's cart could not be ended; left open");
        }
    }
}
