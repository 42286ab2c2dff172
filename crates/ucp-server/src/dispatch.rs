//! One way into every operation, whatever the transport: negotiate with the calling
//! platform, check the operation's capability, parse its payload, run it. MCP and REST differ
//! only in how they read a request and write the reply.

use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ApiError;
use crate::operations::{Capability, Operation};
use crate::platform::negotiate;
pub use crate::response::Reply;
use crate::response::{Envelope, error_response};
use crate::state::AppState;
use crate::trust::Principal;
use crate::{catalog, idempotency, purchase};

/// One call of one operation, as a transport read it.
#[derive(Debug)]
pub struct Invocation<'a> {
    pub operation: Operation,
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
    /// What the caller sent, as the idempotency fingerprint covers it.
    pub arguments: idempotency::Arguments<'a>,
    /// Who the trust layers authenticated (`crate::auth`), if anyone: the scope of
    /// idempotency records and the audit line.
    pub principal: Option<Principal>,
}

/// The payload member of an operation's arguments, if it has one.
pub fn payload_member(operation: Operation) -> Option<&'static str> {
    operation.payload().member()
}

/// Runs the operation, then writes its audit line (`layers::audit`).
pub async fn run(state: &AppState, invocation: Invocation<'_>) -> Result<Reply, ApiError> {
    let (operation, id) = (invocation.operation, invocation.id.clone());
    let platform = state.platforms.profile_url(invocation.headers.get("ucp-agent"), invocation.meta_profile.as_deref());
    let result = once(state, invocation).await;
    crate::layers::audit(operation, platform.as_deref().ok(), id.as_deref(), &result);
    result
}

/// Runs the operation, at most once per idempotency key: a state-changing call with a key
/// goes through [`idempotency::Idempotency::once`], which replays a finished call's answer.
async fn once(state: &AppState, invocation: Invocation<'_>) -> Result<Reply, ApiError> {
    // Authentication first: before parsing, idempotency or any profile fetch.
    state.auth.authorize(
        invocation.operation,
        invocation.principal.as_ref(),
        invocation.meta_profile.as_deref(),
        invocation.headers.get("ucp-agent").is_some(),
        || state.platforms.profile_url(invocation.headers.get("ucp-agent"), invocation.meta_profile.as_deref()),
    )?;
    if let Some(payload) = invocation.payload {
        let max_bytes = state.settings.limits.max_object_bytes;
        ucp_protocol::requests::check_free_form_sizes(payload, &invocation.payload_label, max_bytes)?;
    }
    let request = ParsedRequest::parse(invocation.operation, invocation.payload, &invocation.payload_label)?;
    let claimed =
        state.platforms.profile_url(invocation.headers.get("ucp-agent"), invocation.meta_profile.as_deref())?;
    let platform = invocation.principal.as_ref().map_or(claimed.as_str(), |principal| principal.platform.as_str());
    let keyed = state.idempotency.keyed(
        invocation.operation,
        invocation.idempotency_key.as_deref(),
        platform,
        invocation.id.as_deref(),
        invocation.arguments,
    )?;
    match keyed {
        Some(keyed) => state.idempotency.once(keyed, execute(state, invocation, request)).await,
        None => execute(state, invocation, request).await,
    }
}

async fn execute(state: &AppState, invocation: Invocation<'_>, request: ParsedRequest) -> Result<Reply, ApiError> {
    let operation = invocation.operation;
    let url = state.platforms.profile_url(invocation.headers.get("ucp-agent"), invocation.meta_profile.as_deref())?;
    let platform = state.platforms.resolve(&url).await?;
    let negotiated = negotiate(&state.profile, &platform)?;
    let relevant: Vec<Capability> = operation.capability().relevant().collect();
    let short_of = |name: &String| state.profile.short_names.get(name).copied();
    let capabilities: Vec<(String, String)> = negotiated
        .capabilities
        .iter()
        .filter(|(name, _)| short_of(name).is_some_and(|capability| relevant.contains(&capability)))
        .map(|(name, version)| (name.clone(), version.clone()))
        .collect();
    if !capabilities.iter().any(|(name, _)| short_of(name) == Some(operation.capability())) {
        let body = error_response(
            &negotiated.version,
            "capabilities_incompatible",
            &format!(
                "{} needs the {} capability, which your profile does not share with this business",
                operation.name(),
                operation.capability().short_name()
            ),
            Some(&state.profile.base_url),
        );
        return serde_json::to_string(&body).map(Reply::from).map_err(ApiError::internal);
    }
    let has = |capability: Capability| capabilities.iter().any(|(name, _)| short_of(name) == Some(capability));
    let cart_negotiated = negotiated.capabilities.keys().any(|name| short_of(name) == Some(Capability::Cart));
    let envelope = Envelope { version: negotiated.version.clone(), capabilities: capabilities.clone() };
    let call = purchase::Call {
        state,
        envelope: &envelope,
        platform: &platform.url,
        fulfillment: has(Capability::Fulfillment),
        discounts: has(Capability::Discount),
        cart_negotiated,
        platform_handlers: &platform.payment_handlers,
        // Captured when an order may be placed (checklist 153, 157).
        order_webhook: match operation {
            Operation::CompleteCheckout => crate::webhooks::target(&state.profile, &platform, &negotiated),
            _ => None,
        },
    };
    let id = invocation.id.as_deref().unwrap_or_default();
    let created = |(body, created): (String, bool)| Reply { body, created };
    // One arm per operation and no wildcard: an operation without a handler does not compile.
    let reply = match request {
        ParsedRequest::SearchCatalog(request) => catalog::search_catalog(state, &envelope, request).await?.into(),
        ParsedRequest::LookupCatalog(request) => catalog::lookup_catalog(state, &envelope, request).await?.into(),
        ParsedRequest::GetProduct(request) => catalog::get_product(state, &envelope, request).await?.into(),
        ParsedRequest::CreateCart(request) => created(purchase::create_cart(&call, request).await?),
        ParsedRequest::GetCart => purchase::get_cart(&call, id).await?.into(),
        ParsedRequest::UpdateCart(request) => purchase::update_cart(&call, id, request).await?.into(),
        ParsedRequest::CancelCart => purchase::cancel_cart(&call, id).await?.into(),
        ParsedRequest::CreateCheckout(request) => created(purchase::create_checkout(&call, request).await?),
        ParsedRequest::GetCheckout => purchase::get_checkout(&call, id).await?.into(),
        ParsedRequest::UpdateCheckout(request) => purchase::update_checkout(&call, id, request).await?.into(),
        ParsedRequest::CompleteCheckout(request) => purchase::complete_checkout(&call, id, request).await?.into(),
        ParsedRequest::CancelCheckout => purchase::cancel_checkout(&call, id).await?.into(),
        ParsedRequest::GetOrder => purchase::get_order(&call, id).await?.into(),
    };
    Ok(reply)
}

/// An operation with its payload parsed: one variant per operation.
enum ParsedRequest {
    SearchCatalog(catalog::SearchRequest),
    LookupCatalog(catalog::LookupRequest),
    GetProduct(catalog::GetProductRequest),
    CreateCart(purchase::CartRequest),
    GetCart,
    UpdateCart(purchase::CartRequest),
    CancelCart,
    CreateCheckout(purchase::CheckoutRequest),
    GetCheckout,
    UpdateCheckout(purchase::CheckoutRequest),
    CompleteCheckout(purchase::CheckoutRequest),
    CancelCheckout,
    GetOrder,
}

impl ParsedRequest {
    fn parse(operation: Operation, payload: Option<&Value>, label: &str) -> Result<ParsedRequest, ApiError> {
        // An id-only operation ignores whatever payload is there (cancel_checkout: Google
        // sends "checkout": {}); complete_checkout's is optional after a buyer passed 3-D
        // Secure on our page.
        let body = || payload.ok_or_else(|| ApiError::invalid_params(format!("{} requires {label}", operation.name())));
        Ok(match operation {
            Operation::SearchCatalog => ParsedRequest::SearchCatalog(typed(label, body()?)?),
            Operation::LookupCatalog => ParsedRequest::LookupCatalog(typed(label, body()?)?),
            Operation::GetProduct => ParsedRequest::GetProduct(typed(label, body()?)?),
            Operation::CreateCart => ParsedRequest::CreateCart(typed(label, body()?)?),
            Operation::GetCart => ParsedRequest::GetCart,
            Operation::UpdateCart => ParsedRequest::UpdateCart(typed(label, body()?)?),
            Operation::CancelCart => ParsedRequest::CancelCart,
            Operation::CreateCheckout => ParsedRequest::CreateCheckout(typed(label, body()?)?),
            Operation::GetCheckout => ParsedRequest::GetCheckout,
            Operation::UpdateCheckout => ParsedRequest::UpdateCheckout(typed(label, body()?)?),
            Operation::CompleteCheckout => ParsedRequest::CompleteCheckout(match payload {
                Some(payload) => typed(label, payload)?,
                None => purchase::CheckoutRequest::default(),
            }),
            Operation::CancelCheckout => ParsedRequest::CancelCheckout,
            Operation::GetOrder => ParsedRequest::GetOrder,
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
