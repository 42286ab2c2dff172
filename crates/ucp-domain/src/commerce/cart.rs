//! Cart operations (cart.md): create, get, update (full replacement), cancel.

use crate::checkout::{SessionKind, Status};

use super::inputs::{CartInput, check_code_count};
use super::session::{Attempt, nothing_to_sell};
use super::{Answer, Caller, Commerce, Error, Refusal, SessionView};

impl Commerce {
    pub async fn create_cart(&self, caller: &Caller<'_>, input: CartInput) -> Result<Answer<SessionView>, Error> {
        check_code_count("cart", input.discount_codes.as_deref())?;
        let (lines, any_known, any_in_stock) = self.resolve_lines(input.lines).await?;
        if !any_in_stock {
            return Ok(Answer::Refused(nothing_to_sell(any_known)));
        }
        let mut session = self.new_session(caller, SessionKind::Cart);
        session.replace_lines(lines);
        session.buyer = input.buyer;
        session.context = input.context;
        session.attribution = input.attribution;
        if caller.discounts {
            session.discount_codes = input.discount_codes.unwrap_or_default();
        }
        self.ports.store.insert_session(&session).await?;
        let mut view = self.view(caller, session, Vec::new()).await?;
        view.created = true;
        Ok(Answer::Resource(view))
    }

    pub async fn get_cart(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<SessionView>, Error> {
        let Some(session) = self.live_cart(caller, id).await? else {
            return Ok(Answer::Refused(Refusal::not_found("Cart")));
        };
        Ok(Answer::Resource(self.view(caller, session, Vec::new()).await?))
    }

    pub async fn update_cart(
        &self,
        caller: &Caller<'_>,
        id: &str,
        input: CartInput,
    ) -> Result<Answer<SessionView>, Error> {
        check_code_count("cart", input.discount_codes.as_deref())?;
        self.retrying(|| async {
            let Some(mut session) = self.live_cart(caller, id).await? else {
                return Ok(Attempt::Done(Answer::Refused(Refusal::not_found("Cart"))));
            };
            let (lines, _, _) = self.resolve_lines(input.lines.clone()).await?;
            session.replace_lines(lines);
            session.buyer = input.buyer.clone();
            session.context = input.context.clone();
            session.attribution = input.attribution.clone();
            if caller.discounts {
                session.discount_codes = input.discount_codes.clone().unwrap_or_default();
            }
            if !self.save(&mut session).await? {
                return Ok(Attempt::Raced);
            }
            Ok(Attempt::Done(Answer::Resource(self.view(caller, session, Vec::new()).await?)))
        })
        .await
    }

    /// Cancels a cart; the answer is its last state before the cancel.
    pub async fn cancel_cart(&self, caller: &Caller<'_>, id: &str) -> Result<Answer<SessionView>, Error> {
        self.retrying(|| async {
            let Some(mut session) = self.live_cart(caller, id).await? else {
                return Ok(Attempt::Done(Answer::Refused(Refusal::not_found("Cart"))));
            };
            if session.cancel().is_err() {
                return Ok(Attempt::Raced);
            }
            // The cart as it was (its lines and totals), viewed as canceled: no page to go on to.
            let last = self.view(caller, session.clone(), Vec::new()).await?;
            if !self.save(&mut session).await? {
                return Ok(Attempt::Raced);
            }
            Ok(Attempt::Done(Answer::Resource(last)))
        })
        .await
    }

    async fn live_cart(&self, caller: &Caller<'_>, id: &str) -> Result<Option<crate::checkout::Session>, Error> {
        Ok(self.load(caller, id, SessionKind::Cart).await?.filter(|session| session.status != Status::Canceled))
    }
}
