//! What every cart and checkout operation shares: loading a live session of the caller,
//! pricing it, saving it under optimistic concurrency (the retry is written once, here), and
//! turning it into a [`SessionView`].

use std::collections::HashMap;
use std::future::Future;

use crate::checkout::{LineRequest, Message, Priced, PricingInput, Session, SessionKind, Severity, Status, price};
use crate::payment::CheckoutContext;
use crate::store::StoreError;

use super::{Caller, Commerce, Error, LineInput, Refusal, RefusalCode, SessionView};

/// How often a write that lost a race with a concurrent change is retried from a fresh read.
const ATTEMPTS: usize = 3;

/// One try of an operation that reads, changes and writes a session.
pub(super) enum Attempt<T> {
    Done(T),
    /// Another request changed the session since it was read: start over from a fresh read.
    Raced,
}

impl Commerce {
    /// Runs `attempt` until it is not raced, at most [`ATTEMPTS`] times.
    pub(super) async fn retrying<T, F, Fut>(&self, mut attempt: F) -> Result<T, Error>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Attempt<T>, Error>>,
    {
        for _ in 0..ATTEMPTS {
            if let Attempt::Done(value) = attempt().await? {
                return Ok(value);
            }
        }
        Err(Error::Busy)
    }

    /// A live session of `kind` owned by the caller's platform.
    pub(super) async fn load(
        &self,
        caller: &Caller<'_>,
        id: &str,
        kind: SessionKind,
    ) -> Result<Option<Session>, Error> {
        let now = self.now();
        let session = self.ports.store.session(id).await?;
        Ok(session
            .filter(|session| session.kind == kind && session.platform == caller.platform && !session.is_expired(now)))
    }

    /// A live session of `kind`, whoever owns it (the buyer's pages act for its platform).
    pub async fn session(&self, id: &str, kind: SessionKind) -> Result<Option<Session>, Error> {
        let now = self.now();
        let session = self.ports.store.session(id).await?;
        Ok(session.filter(|session| {
            session.kind == kind
                && !session.is_expired(now)
                && !(kind == SessionKind::Cart && session.status == Status::Canceled)
        }))
    }

    /// Stores a changed session read earlier. `Ok(false)`: another request changed or
    /// finished it since (optimistic concurrency, see `Session::version`); nothing was written.
    pub(super) async fn save(&self, session: &mut Session) -> Result<bool, Error> {
        match self.ports.store.update_session(session).await {
            Ok(()) => {
                session.version += 1;
                Ok(true)
            }
            Err(StoreError::Conflict { .. } | StoreError::NotFound) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    pub(super) fn new_session(&self, caller: &Caller<'_>, kind: SessionKind) -> Session {
        let (ttl, prefix) = match kind {
            SessionKind::Cart => (self.settings.cart_ttl_secs, "cart"),
            SessionKind::Checkout => (self.settings.checkout_ttl_secs, "chk"),
        };
        Session::new(
            format!("{prefix}_{}", uuid::Uuid::new_v4().simple()),
            kind,
            self.settings.currency.clone(),
            caller.platform.to_owned(),
            self.now(),
            ttl,
        )
    }

    /// What decides the payment handlers this checkout offers.
    pub(super) fn payment_context<'s>(caller: &'s Caller<'_>, session: &'s Session) -> CheckoutContext<'s> {
        let selected_country = session.fulfillment.as_ref().and_then(|choice| {
            let destination = match &choice.selected_destination_id {
                Some(id) => choice.destinations.iter().enumerate().find(|(index, address)| {
                    address.id.as_deref() == Some(id.as_str()) || format!("dest_{}", index + 1) == *id
                }),
                None if choice.destinations.len() == 1 => choice.destinations.first().map(|address| (0, address)),
                None => None,
            };
            destination.and_then(|(_, address)| address.address_country.as_deref())
        });
        let country = selected_country
            .or_else(|| session.context.as_ref().and_then(|context| context.address_country.as_deref()));
        CheckoutContext { currency: &session.currency, country, platform_handlers: caller.payment_handlers }
    }

    /// The session priced now: live catalog, rules and discount counts.
    pub(super) async fn price(&self, caller: &Caller<'_>, session: &Session) -> Result<Priced, Error> {
        let item_ids: Vec<String> = session.lines.iter().map(|line| line.item_id.clone()).collect();
        let (items, _) = self.catalog_items(&item_ids).await?;
        let codes: Vec<String> = session.discount_codes.iter().map(|code| code.trim().to_uppercase()).collect();
        let uses = if codes.is_empty() { HashMap::new() } else { self.ports.store.discount_uses(&codes).await? };
        let input = PricingInput {
            session,
            items: &items,
            rules: &self.ports.rules,
            discount_uses: &uses,
            fulfillment_enabled: caller.fulfillment,
            discounts_enabled: caller.discounts,
            payment_available: self
                .ports
                .payments
                .for_checkout(Self::payment_context(caller, session))
                .next()
                .is_some(),
            now: self.now(),
        };
        Ok(price(&input))
    }

    /// Prices a checkout the platform is writing: the answer is what it sees, so the codes it
    /// rejects are the ones the platform knows of (`Session::rejections_seen`).
    /// A platform without the discount extension is shown no codes: what it last saw of them
    /// stays as the last write that showed them left it.
    pub(super) async fn price_write(&self, caller: &Caller<'_>, session: &mut Session) -> Result<Priced, Error> {
        if !caller.discounts {
            return self.price(caller, session).await;
        }
        session.rejections_seen = None;
        let priced = self.price(caller, session).await?;
        session.rejections_seen = Some(crate::checkout::rejected_codes(session, &priced.messages));
        Ok(priced)
    }

    /// The view of `session` as this call leaves it. A completed checkout shows the pricing
    /// it was completed with; anything else is priced now.
    pub(super) async fn view(
        &self,
        caller: &Caller<'_>,
        session: Session,
        extra: Vec<Message>,
    ) -> Result<SessionView, Error> {
        let (mut priced, as_of) = match (&session.status, &session.final_pricing) {
            (Status::Completed, Some(pricing)) => {
                (pricing.as_ref().clone(), session.completed_at.unwrap_or_else(|| self.now()))
            }
            _ => (self.price(caller, &session).await?, self.now()),
        };
        if session.status == Status::Canceled {
            // What is missing or wrong is for a session that can still change; a canceled one
            // cannot (its refusals, as `checkout_canceled`, come in `extra`).
            priced.messages.clear();
        }
        Ok(self.view_priced(caller, session, priced, extra, as_of))
    }

    pub(super) fn view_priced(
        &self,
        caller: &Caller<'_>,
        session: Session,
        priced: Priced,
        extra: Vec<Message>,
        as_of: i64,
    ) -> SessionView {
        let payment_handlers = match session.kind {
            SessionKind::Checkout => self
                .ports
                .payments
                .for_checkout(Self::payment_context(caller, &session))
                .map(|(handler, instruments)| crate::payment::OfferedHandler {
                    id: handler.id.clone(),
                    instrument_types: instruments.into_iter().map(str::to_owned).collect(),
                })
                .collect(),
            SessionKind::Cart => Vec::new(),
        };
        SessionView {
            session,
            priced,
            extra,
            payment_handlers,
            fulfillment: caller.fulfillment,
            discounts: caller.discounts,
            as_of,
            created: false,
        }
    }

    /// Resolves requested lines to catalog variants. A line whose item we do not sell is kept
    /// as sent: pricing reports it `item_unavailable` at its path and keeps the session
    /// `incomplete` until the platform removes it (checkout.md §2, checklist 124), as for an
    /// item that left the catalog, so no session silently drops what the buyer asked for.
    /// Also says whether any item is ours, and whether any of ours is in stock.
    pub(super) async fn resolve_lines(
        &self,
        requested: Vec<LineInput>,
    ) -> Result<(Vec<LineRequest>, bool, bool), Error> {
        let ids: Vec<String> = requested.iter().map(|line| line.item_id.clone()).collect();
        let (items, canonical) = self.catalog_items(&ids).await?;
        let mut lines = Vec::with_capacity(requested.len());
        let (mut any_known, mut any_in_stock) = (false, false);
        for line in requested {
            let item_id = match canonical.get(&line.item_id) {
                Some(variant_id) => {
                    any_known = true;
                    if items.get(variant_id).is_some_and(|item| item.available_quantity != Some(0)) {
                        any_in_stock = true;
                    }
                    variant_id.clone()
                }
                None => line.item_id,
            };
            lines.push(LineRequest { id: line.id, item_id, quantity: line.quantity });
        }
        Ok((lines, any_known, any_in_stock))
    }
}

/// The refusal a locked checkout's state implies for `verb`, as a message on the checkout.
pub(super) fn refusal_message(session: &Session, verb: &str) -> Option<Message> {
    use crate::checkout::Locked;
    let locked = session.locked()?;
    let code = match locked {
        Locked::Completed => "checkout_completed",
        Locked::Canceled => "checkout_canceled",
        Locked::CompleteInProgress => "complete_in_progress",
    };
    let severity = if locked == Locked::CompleteInProgress { Severity::Recoverable } else { Severity::Unrecoverable };
    Some(Message::error(code, severity, format!("This checkout {locked}; it cannot be {verb}. Nothing changed."), None))
}

impl Commerce {
    /// The view of a session read elsewhere (the buyer's pages), priced for `caller`.
    pub async fn present(&self, caller: &Caller<'_>, session: Session) -> Result<SessionView, Error> {
        self.view(caller, session, Vec::new()).await
    }
}

/// The refusal for a create that cannot make a session.
pub(super) fn nothing_to_sell(any_known: bool) -> Refusal {
    if any_known {
        Refusal {
            code: RefusalCode::OutOfStock,
            content: "None of the requested items is in stock; nothing was created.".into(),
        }
    } else {
        Refusal {
            code: RefusalCode::ItemUnavailable,
            content: "None of the requested items is sold here; nothing was created.".into(),
        }
    }
}
