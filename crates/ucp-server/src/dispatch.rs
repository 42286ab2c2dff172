//! One way into every operation, whatever the transport: negotiate with the calling
//! platform, check the operation's capability, parse its payload, run it. MCP and REST differ
//! only in how they read a request and write the reply.

use axum::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::ApiError;
use crate::operations::Operation;
pub use crate::response::Reply;
use crate::response::error_response;
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
    /// The payload member (`catalog`, `cart`, `checkout`), if sent: its text, parsed once,
    /// straight into the operation's request ([`ParsedRequest::parse`]).
    pub payload: Option<&'a RawValue>,
    /// How errors name the payload: `arguments.catalog` (MCP) or `body` (REST).
    pub payload_label: String,
    /// What the caller sent, as the idempotency fingerprint covers it.
    pub arguments: idempotency::Arguments<'a>,
    /// Who the trust layers authenticated (`crate::auth`), if anyone: the scope of
    /// idempotency records and the audit line.
    pub principal: Option<Principal>,
    /// Whether the transport mirrors the body as text (MCP's `content[0].text`): a catalog
    /// answer then writes the body's escape alongside it ([`Reply::text`]).
    pub mirror: bool,
}

/// The payload member of an operation's arguments, if it has one.
pub fn payload_member(operation: Operation) -> Option<&'static str> {
    operation.payload().member()
}

/// Runs the operation, then writes its audit line (`layers::audit`). The claimed profile URL
/// is read from the call once, in [`attached`]. `complete_checkout` runs detached from the
/// request ([`detached`]).
pub async fn run(state: &AppState, invocation: Invocation<'_>) -> Result<Reply, ApiError> {
    if invocation.operation == Operation::CompleteCheckout {
        return Box::pin(detached(state, invocation)).await;
    }
    attached(state, invocation).await
}

/// Runs a call on the runtime as a task of its own and awaits it: a client that disconnects
/// drops only the wait, never the call, so a complete that started charging goes on to its
/// order (or refund), its idempotency record's answer and its audit line (issue 9 item 3).
async fn detached(state: &AppState, invocation: Invocation<'_>) -> Result<Reply, ApiError> {
    let owned = OwnedInvocation {
        operation: invocation.operation,
        headers: invocation.headers.clone(),
        meta_profile: invocation.meta_profile,
        idempotency_key: invocation.idempotency_key,
        id: invocation.id,
        payload: invocation.payload.map(RawValue::to_owned),
        payload_label: invocation.payload_label,
        arguments: match invocation.arguments {
            idempotency::Arguments::Mcp(arguments) => OwnedArguments::Mcp(arguments.clone()),
            idempotency::Arguments::Rest(body) => OwnedArguments::Rest(body.cloned()),
        },
        principal: invocation.principal,
        mirror: invocation.mirror,
    };
    let state = state.clone();
    let task = tokio::spawn(crate::layers::carried(async move {
        let invocation = Invocation {
            operation: owned.operation,
            headers: &owned.headers,
            meta_profile: owned.meta_profile,
            idempotency_key: owned.idempotency_key,
            id: owned.id,
            payload: owned.payload.as_deref(),
            payload_label: owned.payload_label,
            arguments: match &owned.arguments {
                OwnedArguments::Mcp(arguments) => idempotency::Arguments::Mcp(arguments),
                OwnedArguments::Rest(body) => idempotency::Arguments::Rest(body.as_ref()),
            },
            principal: owned.principal,
            mirror: owned.mirror,
        };
        attached(&state, invocation).await
    }));
    task.await.map_err(ApiError::internal)?
}

/// What a detached call owns of its [`Invocation`].
struct OwnedInvocation {
    operation: Operation,
    headers: HeaderMap,
    meta_profile: Option<String>,
    idempotency_key: Option<String>,
    id: Option<String>,
    payload: Option<Box<RawValue>>,
    payload_label: String,
    arguments: OwnedArguments,
    principal: Option<Principal>,
    mirror: bool,
}

enum OwnedArguments {
    Mcp(serde_json::Map<String, Value>),
    Rest(Option<Value>),
}

async fn attached(state: &AppState, invocation: Invocation<'_>) -> Result<Reply, ApiError> {
    let (operation, id) = (invocation.operation, invocation.id.clone());
    let caller = crate::layers::Caller::of(invocation.principal.as_ref());
    let claimed = state.platforms.profile_url(invocation.headers.get("ucp-agent"), invocation.meta_profile.as_deref());
    let started = std::time::Instant::now();
    let result = once(state, invocation, &claimed).await;
    let outcome = result.as_ref().map(|_| ()).map_err(|error| {
        let mapping = error.kind.mapping();
        mapping.ucp_code.unwrap_or(mapping.rest_code)
    });
    state.traffic.record_call(claimed.as_deref().ok(), operation, outcome, started.elapsed());
    crate::layers::audit(operation, claimed.as_deref().ok(), &caller, id.as_deref(), &result);
    result
}

/// Runs the operation, at most once per idempotency key: a state-changing call with a key
/// goes through [`idempotency::Idempotency::once`], which replays a finished call's answer.
async fn once(
    state: &AppState,
    invocation: Invocation<'_>,
    claimed: &Result<String, ApiError>,
) -> Result<Reply, ApiError> {
    // Authentication first: before parsing, idempotency or any profile fetch.
    state.auth.authorize(
        invocation.operation,
        invocation.principal.as_ref(),
        invocation.meta_profile.as_deref(),
        invocation.headers.get("ucp-agent").is_some(),
        || claimed.clone(),
    )?;
    if let Some(payload) = invocation.payload {
        let max_bytes = state.settings.limits.max_object_bytes;
        ucp_protocol::requests::check_free_form_sizes(payload, &invocation.payload_label, max_bytes)?;
    }
    let request = ParsedRequest::parse(invocation.operation, invocation.payload, &invocation.payload_label)?;
    let claimed = claimed.as_deref().map_err(Clone::clone)?;
    let platform = invocation.principal.as_ref().map_or(claimed, |principal| principal.platform.as_str());
    let keyed = state.idempotency.keyed(
        invocation.operation,
        invocation.idempotency_key.as_deref(),
        platform,
        invocation.id.as_deref(),
        invocation.arguments,
    )?;
    match keyed {
        Some(keyed) => Box::pin(state.idempotency.once(keyed, || execute(state, invocation, claimed, request))).await,
        None => execute(state, invocation, claimed, request).await,
    }
}

async fn execute(
    state: &AppState,
    invocation: Invocation<'_>,
    url: &str,
    request: ParsedRequest,
) -> Result<Reply, ApiError> {
    let operation = invocation.operation;
    let platform = state.platforms.resolve(url).await?;
    let terms = platform.terms(&state.profile)?;
    let negotiated = &terms.negotiated;
    let Some(operation_terms) = terms.of(operation) else {
        return Err(ApiError::internal(format!("no negotiated terms for {}", operation.name())));
    };
    if !operation_terms.shared {
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
    let envelope = &operation_terms.envelope;
    let call = purchase::Call {
        state,
        envelope,
        platform: &platform.url,
        fulfillment: operation_terms.fulfillment,
        discounts: operation_terms.discounts,
        cart_negotiated: terms.cart_negotiated,
        platform_handlers: &platform.payment_handlers,
        // Captured when an order may be placed (checklist 153, 157).
        order_webhook: match operation {
            Operation::CompleteCheckout => crate::webhooks::target(&state.profile, &platform, negotiated),
            _ => None,
        },
    };
    let id = invocation.id.as_deref().unwrap_or_default();
    let mirror = invocation.mirror;
    let created = |(body, created): (String, bool)| Reply { body: body.into_bytes(), created, text: None };
    // One arm per operation and no wildcard: an operation without a handler does not compile.
    let reply = match request {
        ParsedRequest::SearchCatalog(request) => catalog::search_catalog(state, envelope, request, mirror).await?,
        ParsedRequest::LookupCatalog(request) => catalog::lookup_catalog(state, envelope, request, mirror).await?,
        ParsedRequest::GetProduct(request) => catalog::get_product(state, envelope, request, mirror).await?,
        ParsedRequest::CreateCart(request) => created(Box::pin(purchase::create_cart(&call, request)).await?),
        ParsedRequest::GetCart => Box::pin(purchase::get_cart(&call, id)).await?.into(),
        ParsedRequest::UpdateCart(request) => Box::pin(purchase::update_cart(&call, id, request)).await?.into(),
        ParsedRequest::CancelCart => Box::pin(purchase::cancel_cart(&call, id)).await?.into(),
        ParsedRequest::CreateCheckout(request) => created(Box::pin(purchase::create_checkout(&call, request)).await?),
        ParsedRequest::GetCheckout => Box::pin(purchase::get_checkout(&call, id)).await?.into(),
        ParsedRequest::UpdateCheckout(request) => Box::pin(purchase::update_checkout(&call, id, request)).await?.into(),
        ParsedRequest::CompleteCheckout(request) => {
            Box::pin(purchase::complete_checkout(&call, id, request)).await?.into()
        }
        ParsedRequest::CancelCheckout => Box::pin(purchase::cancel_checkout(&call, id)).await?.into(),
        ParsedRequest::GetOrder => Box::pin(purchase::get_order(&call, id)).await?.into(),
    };
    if let Some(step) = crate::traffic::funnel_step(operation, reply.created) {
        state.traffic.record_funnel(&platform.url, step);
    }
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
    fn parse(operation: Operation, payload: Option<&RawValue>, label: &str) -> Result<ParsedRequest, ApiError> {
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

/// Deserializes `payload`'s text and names the offending field on failure
/// (`arguments.catalog.pagination.limit: …`). Parsed from the text, not from a `Value` of it:
/// no map of the payload is built to be converted and dropped, and a bounded list
/// (`ucp_protocol::requests::bounded`) stops at its limit before the items past it are read.
/// The path is tracked only when the parse failed: a second, identical parse wrapped in
/// `serde_path_to_error` finds where (wrapping every visitor of every parse was most of the
/// cost of parsing a `get_product`'s payload).
fn typed<T: DeserializeOwned>(label: &str, payload: &RawValue) -> Result<T, ApiError> {
    if let Ok(request) = serde_json::from_str(payload.get()) {
        return Ok(request);
    }
    let mut deserializer = serde_json::Deserializer::from_str(payload.get());
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let location = if path == "." { label.to_owned() } else { format!("{label}.{path}") };
        ApiError::invalid_params(format!("{location}: {}", without_position(error.inner())))
    })
}

/// serde_json's message without the ` at line 1 column 57` it appends when parsing text:
/// the path in front names the place, and the column would count from the payload's start,
/// not the body's.
fn without_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&position) {
        Some(message) => message.to_owned(),
        None => message,
    }
}
