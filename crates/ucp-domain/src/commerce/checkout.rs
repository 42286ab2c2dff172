//! Checkout operations (checkout.md): create (also from a cart), get, update and cancel.
//! Completion is in `complete`.

use crate::checkout::{Session, SessionKind, Status};
use crate::store::CartCheckout;

use super::inputs::{CheckoutInput, MAX_CODES, check_code_count};
use super::session::{Attempt, nothing_to_sell, refusal_message};
use super::{Answer, Caller, Commerce, Error, Refusal, SessionView};

fn check_codes(input: &CheckoutInput) -> Result<(), Error> {
    check_code_count("checkout", input.discount_codes.as_deref())
}

impl Commerce {
    pub async fn create_checkout(
        &self,
        caller: &Caller<'_>,
        input: CheckoutInput,
    ) -> Result<Answer<SessionView>, Error> {
        check_codes(&input)?;
        if let Some(cart_id) = input.cart_id.clone() {
            if !caller.cart {
                return Err(Error::invalid("checkout.cart_id needs the cart capability, which was not negotiated"));
            }
            return self.create_from_cart(caller, &cart_id, input).await;
        }
        let Some(lines) = input.lines.clone() else {
            return Err(Error::invalid("checkout.line_items is required (or checkout.cart_id)"));
        };
        if lines.is_empty() {
            return Err(Error::invalid("checkout.line_items must name at least one item"));
        }
        let (lines, any_known, any_in_stock) = self.resolve_lines(lines).await?;
        if !any_in_stock {
            return Ok(Answer::Refused(nothing_to_sell(any_known)));
        }
        let mut session = self.new_session(caller, SessionKind::Checkout);
        session.replace_lines(lines);
        apply_checkout_fields(caller, &mut session, input);
        let priced = self.price_write(caller, &mut session).await?;
        session.status = priced.status;
        self.ports.store.insert_session(&session).await?;
        let now = self.now();
        let mut view = self.view_priced(caller, session, priced, Vec::new(), now);
        view.created = true;
        Ok(Answer::Resource(view))
    }

    /// A checkout from a cart (cart.md §6): the cart's open checkout if it has one (not
    /// created: 200), otherwise a new one with the cart's contents.
    async fn create_from_cart(
        &self,
        caller: &Caller<'_>,
        cart_id: &str,
        input: CheckoutInput,
    ) -> Result<Answer<SessionView>, Error> {
        let Some(cart) =
            self.load(caller, cart_id, SessionKind::Cart).await?.filter(|cart| cart.status != Status::Canceled)
        else {
            return Ok(Answer::Refused(Refusal::not_found("Cart")));
        };
        if let Some(existing) = self.ports.store.open_checkout_for_cart(cart_id, caller.platform, self.now()).await? {
            return Ok(Answer::Resource(self.view(caller, existing, Vec::new()).await?));
        }
        let mut session = self.new_session(caller, SessionKind::Checkout);
        session.lines = cart.lines.clone();
        session.next_line = cart.next_line;
        session.cart_id = Some(cart_id.to_owned());
        // The cart's contents win over overlapping fields of the request (cart.md §6).
        let mut input = input;
        input.lines = None;
        apply_checkout_fields(caller, &mut session, input);
        // The cart's buyer and context win; the payload only fills what the cart lacks.
        if cart.buyer.is_some() {
            session.buyer = cart.buyer.clone();
        }
        if cart.context.is_some() {
            session.context = cart.context.clone();
        }
        if caller.discounts {
            // The cart's codes carry over (checklist 117), the request's join them (a code
            // both name, in any case, once): removing one is an update of the checkout.
            let mut codes = cart.discount_codes.clone();
            for code in std::mem::take(&mut session.discount_codes) {
                if !codes.iter().any(|kept| kept.eq_ignore_ascii_case(&code)) {
                    codes.push(code);
                }
            }
            // A cart stored before carts were capped may hold more codes than a checkout may.
            if codes.len() > MAX_CODES {
                return Err(Error::invalid(format!(
                    "cart {cart_id} and the request hold more than {MAX_CODES} discount codes together; update the \
                     cart before checking out"
                )));
            }
            session.discount_codes = codes;
        }
        let priced = self.price_write(caller, &mut session).await?;
        if session.lines.is_empty() {
            return Ok(Answer::Refused(nothing_to_sell(false)));
        }
        session.status = priced.status;
        let now = self.now();
        // Another create for this cart may have inserted since the look above: then its
        // checkout is the answer, and this one is never stored. Or the cart's checkout may
        // have been completed meanwhile: the cart is bought, and not twice.
        match self.ports.store.insert_checkout_of_cart(&session, now).await? {
            CartCheckout::Inserted => {}
            CartCheckout::Open(existing) => {
                return Ok(Answer::Resource(self.view(caller, *existing, Vec::new()).await?));
            }
            CartCheckout::CartDone => return Ok(Answer::Refused(Refusal::not_found("Cart"))),
            // Its earlier checkout, expired, is still being paid for: asked again once that
            // settles, the cart is bought (not_found) or free again.
            CartCheckout::Completing => return Err(Error::Busy),
        }
        let mut view = self.view_priced(caller, session, priced, Vec::new(), now);
        view.created = true;
        Ok(Answer::Resource(view))
    }

    pub async fn get_checkout(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<SessionView>, Error> {
        let Some(session) = self.load(caller, id, SessionKind::Checkout).await? else {
            return Ok(Answer::Refused(Refusal::not_found("Checkout")));
        };
        Ok(Answer::Resource(self.view(caller, session, Vec::new()).await?))
    }

    pub async fn update_checkout(
        &self,
        caller: &Caller<'_>,
        id: &str,
        input: CheckoutInput,
    ) -> Result<Answer<SessionView>, Error> {
        check_codes(&input)?;
        self.retrying(|| async {
            let Some(mut session) = self.load(caller, id, SessionKind::Checkout).await? else {
                return Ok(Attempt::Done(Answer::Refused(Refusal::not_found("Checkout"))));
            };
            if let Some(refusal) = refusal_message(&session, "updated") {
                return Ok(Attempt::Done(Answer::Resource(self.view(caller, session, vec![refusal]).await?)));
            }
            let Some(lines) = input.lines.clone() else {
                return Err(Error::invalid("checkout.line_items is required: an update replaces the whole checkout"));
            };
            let (lines, _, _) = self.resolve_lines(lines).await?;
            session.replace_lines(lines);
            apply_checkout_fields(caller, &mut session, input.clone());
            session.sticky_messages.clear();
            session.abandon_authentication();
            let priced = self.price_write(caller, &mut session).await?;
            if session.reprice(priced.status).is_err() {
                return Ok(Attempt::Raced);
            }
            // A complete (or cancel) that got in first wins; the retry sees it and refuses.
            if !self.save(&mut session).await? {
                return Ok(Attempt::Raced);
            }
            self.reflect_into_cart(caller, &session).await?;
            let now = self.now();
            Ok(Attempt::Done(Answer::Resource(self.view_priced(caller, session, priced, Vec::new(), now))))
        })
        .await
    }

    /// Keeps a linked cart in step with its active checkout (cart.md §6, checklist 118).
    async fn reflect_into_cart(&self, caller: &Caller<'_>, checkout: &Session) -> Result<(), Error> {
        let Some(cart_id) = &checkout.cart_id else { return Ok(()) };
        let reflected = self
            .retrying(|| async {
                let Some(mut cart) =
                    self.load(caller, cart_id, SessionKind::Cart).await?.filter(|cart| cart.status != Status::Canceled)
                else {
                    return Ok(Attempt::Done(()));
                };
                cart.lines = checkout.lines.clone();
                cart.next_line = cart.next_line.max(checkout.next_line);
                Ok(if self.save(&mut cart).await? { Attempt::Done(()) } else { Attempt::Raced })
            })
            .await;
        match reflected {
            Err(Error::Busy) => {
                tracing::warn!(cart = %cart_id, checkout = %checkout.id, "the linked cart kept changing; not updated");
                Ok(())
            }
            other => other,
        }
    }

    pub async fn cancel_checkout(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<SessionView>, Error> {
        self.retrying(|| async {
            let Some(mut session) = self.load(caller, id, SessionKind::Checkout).await? else {
                return Ok(Attempt::Done(Answer::Refused(Refusal::not_found("Checkout"))));
            };
            if let Some(refusal) = refusal_message(&session, "canceled") {
                return Ok(Attempt::Done(Answer::Resource(self.view(caller, session, vec![refusal]).await?)));
            }
            if session.cancel().is_err() || !self.save(&mut session).await? {
                return Ok(Attempt::Raced);
            }
            Ok(Attempt::Done(Answer::Resource(self.view(caller, session, Vec::new()).await?)))
        })
        .await
    }
}

/// Applies the fields of a create/update request to a session (full replacement).
fn apply_checkout_fields(caller: &Caller<'_>, session: &mut Session, input: CheckoutInput) {
    session.buyer = input.buyer;
    session.context = input.context;
    session.attribution = input.attribution;
    if caller.discounts {
        session.discount_codes = input.discount_codes.unwrap_or_default();
    }
    if caller.fulfillment {
        session.fulfillment = input.fulfillment;
    }
}
