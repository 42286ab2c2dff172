//! The purchase: carts, checkouts and orders (cart.md, checkout.md, order.md). Requests are
//! parsed here, priced by the domain's engine, stored through `CommerceStore`, and rendered
//! as UCP bodies. Transport-neutral, like `catalog`.

mod cart;
mod checkout;
mod order;
mod render;
mod requests;

use std::collections::HashMap;

use serde_json::Value;
use ucp_domain::checkout::{
    LineRequest, Message, PendingAuthentication, Priced, PricingInput, Session, SessionKind, Severity, Status, price,
};
use ucp_domain::store::{PlaceOrder, PlaceOrderError, StoreError, StoredOrder};

pub use cart::{cancel_cart, create_cart, get_cart, update_cart};
pub use checkout::{cancel_checkout, complete_checkout, create_checkout, get_checkout, update_checkout};
pub use order::get_order;
pub use requests::{CartRequest, CheckoutRequest};

use checkout::refuse_change;

use crate::commerce::catalog_items;
use crate::error::ApiError;
use crate::payment::{Charge, Outcome};
use crate::response::{Envelope, error_response};
use crate::state::AppState;

/// Most lines a cart or checkout may hold.
pub const MAX_LINES: usize = 100;
/// Largest quantity of one line.
pub const MAX_QUANTITY: i64 = 10_000;
/// How often a write that lost a race with a concurrent change is retried from a fresh read.
const ATTEMPTS: usize = 3;

/// A write kept losing races with concurrent changes.
fn busy() -> ApiError {
    ApiError::new(crate::error::ErrorKind::Unavailable, "the session is changing concurrently; retry shortly")
}

/// Who is calling and what was negotiated, for one operation.
#[derive(Debug)]
pub struct Call<'a> {
    pub state: &'a AppState,
    pub envelope: &'a Envelope,
    /// The platform profile URL: sessions and orders belong to the platform that made them.
    pub platform: &'a str,
    pub fulfillment: bool,
    pub discounts: bool,
    pub cart_negotiated: bool,
    pub idempotency_key: Option<&'a str>,
    /// Payment handler names the platform declares (empty: no restriction).
    pub platform_handlers: &'a [String],
}

impl<'a> Call<'a> {
    /// What decides the payment handlers this checkout offers.
    pub(crate) fn payment_context<'s>(&'s self, session: &'s Session) -> crate::payment::CheckoutContext<'s> {
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
        crate::payment::CheckoutContext {
            currency: &session.currency,
            country,
            platform_handlers: self.platform_handlers,
        }
    }

    /// The handler `id` if this checkout offers it.
    pub(crate) fn handler(&self, session: &Session, id: &str) -> Option<&'a crate::payment::Handler> {
        let state: &'a AppState = self.state;
        let handler = state.payments.by_id(id)?;
        let offered = state.payments.for_checkout(self.payment_context(session)).any(|offered| offered.id == id);
        offered.then_some(handler)
    }

    pub(crate) fn now(&self) -> i64 {
        self.state.clock.now()
    }

    fn not_found(&self, what: &str) -> Result<String, ApiError> {
        let body = error_response(
            &self.envelope.version,
            "not_found",
            &format!("{what} not found or has expired."),
            Some(&self.state.profile.base_url),
        );
        serde_json::to_string(&body).map_err(ApiError::internal)
    }

    /// A live session of `kind` owned by this platform.
    async fn load(&self, id: &str, kind: SessionKind) -> Result<Option<Session>, ApiError> {
        let session = self.state.commerce.session(id).await?;
        Ok(session.filter(|session| {
            session.kind == kind && session.platform == self.platform && !session.is_expired(self.now())
        }))
    }

    async fn price(&self, session: &Session) -> Result<Priced, ApiError> {
        let item_ids: Vec<String> = session.lines.iter().map(|line| line.item_id.clone()).collect();
        let (items, _) = catalog_items(self.state, &item_ids).await?;
        let codes: Vec<String> = session.discount_codes.iter().map(|code| code.trim().to_uppercase()).collect();
        let uses = if codes.is_empty() { HashMap::new() } else { self.state.commerce.discount_uses(&codes).await? };
        let input = PricingInput {
            session,
            items: &items,
            rules: &self.state.pricing_rules,
            discount_uses: &uses,
            fulfillment_enabled: self.fulfillment,
            discounts_enabled: self.discounts,
            payment_available: self.state.payments.for_checkout(self.payment_context(session)).next().is_some(),
            now: self.now(),
        };
        Ok(price(&input))
    }

    /// Resolves requested lines to catalog variants; unknown items become messages.
    async fn resolve_lines(
        &self,
        requested: Vec<requests::LineItemRequest>,
    ) -> Result<(Vec<LineRequest>, Vec<Message>, bool), ApiError> {
        let ids: Vec<String> = requested.iter().map(|line| line.item.id.clone()).collect();
        let (items, canonical) = catalog_items(self.state, &ids).await?;
        let mut lines = Vec::with_capacity(requested.len());
        let mut messages = Vec::new();
        let mut any_in_stock = false;
        for line in requested {
            match canonical.get(&line.item.id) {
                Some(variant_id) => {
                    if items.get(variant_id).is_some_and(|item| item.available_quantity != Some(0)) {
                        any_in_stock = true;
                    }
                    lines.push(LineRequest { id: line.id, item_id: variant_id.clone(), quantity: line.quantity });
                }
                None => messages.push(Message::error(
                    "item_unavailable",
                    Severity::Recoverable,
                    format!("Item {} is not sold here; it was not added.", line.item.id),
                    None,
                )),
            }
        }
        Ok((lines, messages, any_in_stock))
    }

    fn new_session(&self, kind: SessionKind) -> Session {
        let now = self.now();
        let ttl = match kind {
            SessionKind::Cart => self.state.settings.checkout.cart_ttl_secs,
            SessionKind::Checkout => self.state.settings.checkout.checkout_ttl_secs,
        };
        let prefix = match kind {
            SessionKind::Cart => "cart",
            SessionKind::Checkout => "chk",
        };
        Session::new(
            format!("{prefix}_{}", uuid::Uuid::new_v4().simple()),
            kind,
            self.state.settings.catalog.currency.clone(),
            self.platform.to_owned(),
            now,
            ttl,
        )
    }

    /// Stores a changed session read earlier. `Ok(false)`: another request changed or
    /// finished it since (optimistic concurrency, see `Session::version`); nothing was written.
    async fn save(&self, session: &mut Session) -> Result<bool, ApiError> {
        match self.state.commerce.update_session(session).await {
            Ok(()) => {
                session.version += 1;
                Ok(true)
            }
            Err(StoreError::Conflict { .. } | StoreError::NotFound) => Ok(false),
            Err(error) => Err(error.into()),
        }
    }

    /// The checkout as it is now, with the refusal its state implies for `verb`.
    async fn current(&self, id: &str, verb: &str) -> Result<String, ApiError> {
        let Some(current) = self.load(id, SessionKind::Checkout).await? else {
            return self.not_found("Checkout");
        };
        let priced = self.price(&current).await?;
        self.render(&current, &priced, refuse_change(&current, verb).into_iter().collect())
    }

    fn render(&self, session: &Session, priced: &Priced, extra: Vec<Message>) -> Result<String, ApiError> {
        if session.status == Status::Completed
            && let Some(Value::Object(frozen)) = &session.final_body
        {
            let mut body = frozen.clone();
            let mut ucp = self.envelope.ucp();
            ucp["payment_handlers"] = self.state.payments.advertised_for(self.payment_context(session));
            body.insert("ucp".into(), ucp);
            if !extra.is_empty() {
                let mut messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
                messages.extend(extra.iter().map(render::message));
                body.insert("messages".into(), messages.into());
            }
            return serde_json::to_string(&body).map_err(ApiError::internal);
        }
        let body = render::session(self, session, priced, extra);
        serde_json::to_string(&body).map_err(ApiError::internal)
    }

    /// The error response for a create that cannot make a session.
    fn nothing_to_sell(&self, any_known: bool) -> Result<String, ApiError> {
        let (code, content) = if any_known {
            ("out_of_stock", "None of the requested items is in stock; nothing was created.")
        } else {
            ("item_unavailable", "None of the requested items is sold here; nothing was created.")
        };
        let body = error_response(&self.envelope.version, code, content, Some(&self.state.profile.base_url));
        serde_json::to_string(&body).map_err(ApiError::internal)
    }
}

/// Applies the fields of a create/update request to a session (full replacement).
fn apply_common(
    call: &Call<'_>,
    session: &mut Session,
    buyer: Option<ucp_domain::checkout::Buyer>,
    context: Option<ucp_domain::checkout::Context>,
    codes: Option<Vec<String>>,
    attribution: Option<serde_json::Map<String, Value>>,
) {
    session.buyer = buyer;
    session.context = context;
    session.attribution = attribution;
    if call.discounts {
        session.discount_codes = codes.unwrap_or_default();
    }
}

/// Session-free helper for the handoff page: the body a buyer's browser sees.
pub fn session_json(call: &Call<'_>, session: &Session, priced: &Priced) -> Value {
    render::session(call, session, priced, Vec::new())
}

/// Marks a pending 3-D Secure challenge as passed (the handoff page's approve button).
pub fn approve_challenge(session: &mut Session) -> bool {
    match &mut session.pending_authentication {
        Some(pending) if !pending.approved => {
            pending.approved = true;
            true
        }
        _ => false,
    }
}

/// The priced view of a stored session, for the handoff pages (they render it as HTML).
pub async fn price_session(call: &Call<'_>, session: &Session) -> Result<Priced, ApiError> {
    call.price(session).await
}
