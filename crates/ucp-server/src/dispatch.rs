//! One way into every operation, whatever the transport: negotiate with the calling
//! platform, check the operation's capability, parse its payload, run it. MCP and REST differ
//! only in how they read a request and write the reply.

use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ApiError;
use crate::operations::{Operation, Payload};
use crate::platform::negotiate;
use crate::response::{Envelope, error_response};
use crate::state::AppState;
use crate::{catalog, purchase};

/// One call of one operation, as a transport read it.
#[derive(Debug)]
pub struct Invocation<'a> {
    pub operation: &'static Operation,
    pub headers: &'a HeaderMap,
    /// The profile named in MCP `meta` (REST has only the `UCP-Agent` header).
    pub meta_profile: Option<String>,
    pub idempotency_key: Option<String>,
    /// The target resource id (`arguments.id` / the path).
    pub id: Option<String>,
    /// The payload member (`catalog`, `cart`, `checkout`), if sent.
    pub payload: Option<&'a Value>,
    /// How errors name the payload: `arguments.catalog` (MCP) or `body` (REST).
    pub payload_label: String,
}

/// The payload member of an operation's arguments, if it has one.
pub fn payload_member(operation: &Operation) -> Option<&'static str> {
    match operation.payload {
        Payload::Catalog => Some("catalog"),
        Payload::Cart => Some("cart"),
        Payload::Checkout => Some("checkout"),
        Payload::None => None,
    }
}

/// What an operation answered: the UCP body (resource or error response), and whether the
/// call created the resource (REST answers 201 only then).
#[derive(Debug)]
pub struct Reply {
    pub body: String,
    pub created: bool,
}

impl From<String> for Reply {
    fn from(body: String) -> Reply {
        Reply { body, created: false }
    }
}

/// Runs the operation.
pub async fn run(state: &AppState, invocation: Invocation<'_>) -> Result<Reply, ApiError> {
    let operation = invocation.operation;
    let request = ParsedRequest::parse(operation, invocation.payload, &invocation.payload_label)?;
    let url = state.platforms.profile_url(invocation.headers.get("ucp-agent"), invocation.meta_profile.as_deref())?;
    let platform = state.platforms.resolve(&url).await?;
    let negotiated = negotiate(&state.profile, &platform)?;
    let relevant: Vec<&str> = crate::discovery::relevant_to(operation.capability).collect();
    let short_of = |name: &String| state.profile.short_names.get(name).copied();
    let capabilities: Vec<(String, String)> = negotiated
        .capabilities
        .iter()
        .filter(|(name, _)| short_of(name).is_some_and(|short| relevant.contains(&short)))
        .map(|(name, version)| (name.clone(), version.clone()))
        .collect();
    if !capabilities.iter().any(|(name, _)| short_of(name) == Some(operation.capability)) {
        let body = error_response(
            &negotiated.version,
            "capabilities_incompatible",
            &format!(
                "{} needs the {} capability, which your profile does not share with this business",
                operation.name, operation.capability
            ),
            Some(&state.profile.base_url),
        );
        return serde_json::to_string(&body).map(Reply::from).map_err(ApiError::internal);
    }
    let has = |short: &str| capabilities.iter().any(|(name, _)| short_of(name) == Some(short));
    let cart_negotiated = negotiated.capabilities.keys().any(|name| short_of(name) == Some("cart"));
    let envelope = Envelope { version: negotiated.version.clone(), capabilities: capabilities.clone() };
    let call = purchase::Call {
        state,
        envelope: &envelope,
        platform: &platform.url,
        fulfillment: has("fulfillment"),
        discounts: has("discount"),
        cart_negotiated,
        idempotency_key: invocation.idempotency_key.as_deref(),
        platform_handlers: &platform.payment_handlers,
    };
    let id = invocation.id.as_deref().unwrap_or_default();
    let created = |(body, created): (String, bool)| Reply { body, created };
    let reply = match request {
        ParsedRequest::Search(request) => catalog::search_catalog(state, &envelope, request).await?.into(),
        ParsedRequest::Lookup(request) => catalog::lookup_catalog(state, &envelope, request).await?.into(),
        ParsedRequest::Product(request) => catalog::get_product(state, &envelope, request).await?.into(),
        ParsedRequest::Cart(request) => match operation.name {
            "create_cart" => created(purchase::create_cart(&call, request).await?),
            _ => purchase::update_cart(&call, id, request).await?.into(),
        },
        ParsedRequest::Checkout(request) => match operation.name {
            "create_checkout" => created(purchase::create_checkout(&call, request).await?),
            "update_checkout" => purchase::update_checkout(&call, id, request).await?.into(),
            _ => purchase::complete_checkout(&call, id, request).await?.into(),
        },
        ParsedRequest::IdOnly => match operation.name {
            "get_cart" => purchase::get_cart(&call, id).await?.into(),
            "cancel_cart" => purchase::cancel_cart(&call, id).await?.into(),
            "get_checkout" => purchase::get_checkout(&call, id).await?.into(),
            "cancel_checkout" => purchase::cancel_checkout(&call, id).await?.into(),
            _ => purchase::get_order(&call, id).await?.into(),
        },
    };
    Ok(reply)
}

enum ParsedRequest {
    Search(catalog::SearchRequest),
    Lookup(catalog::LookupRequest),
    Product(catalog::GetProductRequest),
    Cart(purchase::CartRequest),
    Checkout(purchase::CheckoutRequest),
    IdOnly,
}

impl ParsedRequest {
    fn parse(operation: &Operation, payload: Option<&Value>, label: &str) -> Result<ParsedRequest, ApiError> {
        if operation.payload == Payload::None {
            // cancel_checkout: Google sends "checkout": {}; whatever is there is ignored.
            return Ok(ParsedRequest::IdOnly);
        }
        // complete_checkout's payload is optional after a buyer passed 3-D Secure on our page.
        if operation.name == "complete_checkout" && payload.is_none() {
            return Ok(ParsedRequest::Checkout(purchase::CheckoutRequest::default()));
        }
        let payload =
            payload.ok_or_else(|| ApiError::invalid_params(format!("{} requires {label}", operation.name)))?;
        Ok(match operation.name {
            "search_catalog" => ParsedRequest::Search(typed(label, payload)?),
            "lookup_catalog" => ParsedRequest::Lookup(typed(label, payload)?),
            "get_product" => ParsedRequest::Product(typed(label, payload)?),
            "create_cart" | "update_cart" => ParsedRequest::Cart(typed(label, payload)?),
            "create_checkout" | "update_checkout" | "complete_checkout" => {
                ParsedRequest::Checkout(typed(label, payload)?)
            }
            other => return Err(ApiError::internal(format!("operation {other} has no dispatcher"))),
        })
    }
}

/// Deserializes `value` and names the offending field on failure (`arguments.catalog.pagination.limit: …`).
fn typed<T: DeserializeOwned>(label: &str, value: &Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let location = if path == "." { label.to_owned() } else { format!("{label}.{path}") };
        ApiError::invalid_params(format!("{location}: {}", error.inner()))
    })
}
