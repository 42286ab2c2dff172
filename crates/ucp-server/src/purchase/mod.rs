//! The purchase on the wire: carts, checkouts and orders (cart.md, checkout.md, order.md).
//! Each operation checks its request body, turns it into the core's input, calls
//! [`ucp_domain::Commerce`] and renders the answer as a UCP body. No business rule lives here.

mod requests;

use serde::Serialize;
use serde_json::Value;
use ucp_domain::commerce::{
    Answer, Caller, CartInput, CheckoutInput, Instrument, LineInput, OrderView, Payment, SessionView,
};
use ucp_domain::json::JsonMap;
use ucp_protocol::resources::{ErrorResponse, Links, OrderBody, SessionBody};

pub use requests::{CartRequest, CheckoutRequest};

use crate::error::ApiError;
use crate::response::Envelope;
use crate::state::AppState;

pub use ucp_protocol::requests::{MAX_LINES, MAX_QUANTITY};

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
    /// The payment handlers the platform declares (empty: no restriction).
    pub platform_handlers: &'a [ucp_domain::payment::PlatformHandler],
    /// Where order webhooks go (`crate::webhooks::target`), for the call that places an order.
    pub order_webhook: Option<ucp_domain::webhook::WebhookTarget>,
}

impl Call<'_> {
    fn caller(&self) -> Caller<'_> {
        Caller {
            platform: self.platform,
            fulfillment: self.fulfillment,
            discounts: self.discounts,
            cart: self.cart_negotiated,
            payment_handlers: self.platform_handlers,
            order_webhook: self.order_webhook.as_ref(),
        }
    }

    /// A session answer as a UCP body, and whether it created the session.
    fn session(&self, answer: Answer<SessionView>) -> Result<(String, bool), ApiError> {
        match answer {
            Answer::Resource(view) => {
                let created = view.created;
                render_session(self.state, self.envelope, &view).map(|body| (body, created))
            }
            Answer::Refused(refusal) => {
                let body = ErrorResponse::refusal(&self.envelope.version, &refusal, Some(&self.state.profile.base_url));
                to_json(&body).map(|body| (body, false))
            }
        }
    }
}

fn to_json<T: Serialize>(body: &T) -> Result<String, ApiError> {
    serde_json::to_string(body).map_err(ApiError::internal)
}

/// The checkout's legal links: configured ones, and pages we serve for the well-known types.
pub fn links(state: &AppState) -> Links {
    let base = &state.profile.base_url;
    let configured = &state.settings.checkout.links;
    let mut links = Vec::new();
    for (kind, slug) in [
        ("privacy_policy", "privacy"),
        ("terms_of_service", "terms"),
        ("refund_policy", "refunds"),
        ("shipping_policy", "shipping"),
    ] {
        let url = configured.get(kind).cloned().unwrap_or_else(|| format!("{base}/policies/{slug}"));
        links.push((kind.to_owned(), url));
    }
    for (kind, url) in configured {
        if !matches!(kind.as_str(), "privacy_policy" | "terms_of_service" | "refund_policy" | "shipping_policy") {
            links.push((kind.clone(), url.clone()));
        }
    }
    Links(links)
}

/// A cart or checkout view as its UCP body (checkouts carry the payment handlers they offer).
pub fn render_session(state: &AppState, envelope: &Envelope, view: &SessionView) -> Result<String, ApiError> {
    let mut ucp = envelope.ucp();
    if view.session.kind == ucp_domain::checkout::SessionKind::Checkout {
        ucp["payment_handlers"] = state.payments.offered(&view.payment_handlers);
    }
    let links = &state.links;
    to_json(&SessionBody::new(ucp, view, state.pages.as_ref(), links))
}

fn lines_of(lines: Vec<requests::LineItemRequest>) -> Vec<LineInput> {
    lines.into_iter().map(|line| LineInput { id: line.id, item_id: line.item.id, quantity: line.quantity }).collect()
}

fn attribution_of(attribution: Option<serde_json::Map<String, Value>>) -> Result<Option<JsonMap>, ApiError> {
    attribution.map(|map| serde_json::from_value(Value::Object(map)).map_err(ApiError::internal)).transpose()
}

fn cart_input(request: CartRequest) -> Result<CartInput, ApiError> {
    Ok(CartInput {
        lines: lines_of(request.line_items),
        buyer: request.buyer,
        context: request.context,
        discount_codes: request.discounts.map(|discounts| discounts.codes),
        attribution: attribution_of(request.attribution)?,
    })
}

fn checkout_input(request: CheckoutRequest) -> Result<CheckoutInput, ApiError> {
    Ok(CheckoutInput {
        lines: request.line_items.map(lines_of),
        buyer: request.buyer,
        context: request.context,
        fulfillment: request.fulfillment.and_then(|fulfillment| fulfillment.into_choice()),
        discount_codes: request.discounts.map(|discounts| discounts.codes),
        cart_id: request.cart_id,
        attribution: attribution_of(request.attribution)?,
        payment: request.payment.map(|payment| Payment {
            instruments: payment
                .instruments
                .into_iter()
                .map(|instrument| Instrument {
                    handler_id: instrument.handler_id,
                    kind: instrument.kind,
                    token: instrument.credential.and_then(|credential| credential.token),
                })
                .collect(),
        }),
    })
}

/// The body, and whether a cart was created (REST answers 201 only then).
pub async fn create_cart(call: &Call<'_>, request: CartRequest) -> Result<(String, bool), ApiError> {
    request.validate("cart", None)?;
    let answer = call.state.core.create_cart(&call.caller(), cart_input(request)?).await?;
    call.session(answer)
}

pub async fn get_cart(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    call.session(call.state.core.get_cart(&call.caller(), id).await?).map(|(body, _)| body)
}

pub async fn update_cart(call: &Call<'_>, id: &str, request: CartRequest) -> Result<String, ApiError> {
    request.validate("cart", Some(id))?;
    let answer = call.state.core.update_cart(&call.caller(), id, cart_input(request)?).await?;
    call.session(answer).map(|(body, _)| body)
}

pub async fn cancel_cart(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    call.session(call.state.core.cancel_cart(&call.caller(), id).await?).map(|(body, _)| body)
}

/// The body, and whether a checkout was created (REST answers 201 only then): a cart that
/// already has an open checkout gets that one back (checklist 118; transport-rest.md 200).
pub async fn create_checkout(call: &Call<'_>, request: CheckoutRequest) -> Result<(String, bool), ApiError> {
    request.validate("checkout", None)?;
    let answer = call.state.core.create_checkout(&call.caller(), checkout_input(request)?).await?;
    call.session(answer)
}

pub async fn get_checkout(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    call.session(call.state.core.get_checkout(&call.caller(), id).await?).map(|(body, _)| body)
}

pub async fn update_checkout(call: &Call<'_>, id: &str, request: CheckoutRequest) -> Result<String, ApiError> {
    request.validate("checkout", Some(id))?;
    let answer = call.state.core.update_checkout(&call.caller(), id, checkout_input(request)?).await?;
    call.session(answer).map(|(body, _)| body)
}

pub async fn cancel_checkout(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    call.session(call.state.core.cancel_checkout(&call.caller(), id).await?).map(|(body, _)| body)
}

pub async fn complete_checkout(call: &Call<'_>, id: &str, request: CheckoutRequest) -> Result<String, ApiError> {
    request.validate("checkout", Some(id))?;
    let answer = call.state.core.complete_checkout(&call.caller(), id, checkout_input(request)?).await?;
    call.session(answer).map(|(body, _)| body)
}

pub async fn get_order(call: &Call<'_>, id: &str) -> Result<String, ApiError> {
    match call.state.core.get_order(&call.caller(), id).await? {
        Answer::Resource(OrderView { order, .. }) => to_json(&OrderBody { ucp: call.envelope.ucp(), order: &order }),
        Answer::Refused(refusal) => {
            to_json(&ErrorResponse::refusal(&call.envelope.version, &refusal, Some(&call.state.profile.base_url)))
        }
    }
}
