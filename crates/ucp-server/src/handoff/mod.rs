//! The buyer handoff pages behind `continue_url`: server-rendered HTML, no scripts, plain
//! forms (`application/x-www-form-urlencoded`, post/redirect/get).
//!
//! The pages are the buyer's side of a session an agent started, so they act for the
//! session's own platform: every change goes through the same purchase operations the agent
//! uses (`update_checkout`, `complete_checkout`, `create_checkout` from a cart), and the
//! page re-renders the domain's messages. Cross-site posts are refused by the request guard
//! (a browser's form post carries `Origin`) and by `form-action 'self'`.

mod html;
mod views;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use ucp_domain::checkout::{Session, SessionKind, Status};

use crate::discovery::PROTOCOL_VERSION;
use crate::error::{ApiError, ErrorKind};
use crate::payment::{SANDBOX_ID, TOKEN_SUCCESS};
use crate::purchase::{self, Call, CheckoutRequest};
use crate::response::Envelope;
use crate::state::AppState;

use views::{CheckoutForm, CheckoutView, Notice};

/// The pages' Content-Security-Policy: inline styles, nothing else; forms post only here.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'";

/// Routes of the buyer-facing pages.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/checkout/{id}", get(checkout_page).post(checkout_submit))
        .route("/checkout/{id}/3ds", post(approve_3ds))
        .route("/checkout/{id}/place", post(place_order))
        .route("/cart/{id}", get(cart_page))
        .route("/cart/{id}/checkout", post(cart_checkout))
        .route("/orders/{id}", get(order_page))
        .route("/policies/{slug}", get(policy_page))
        .layer(axum::middleware::map_response(security_headers))
}

async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // `same-origin`, not `no-referrer`: the latter makes browsers send `Origin: null` on
    // form posts, which the Origin guard (rightly) refuses.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    // The pages show a buyer's contact details and address.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn html(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn see_other(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(value) => (StatusCode::SEE_OTHER, [(header::LOCATION, value)]).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Paths of the pages (ids are ours, but encode them anyway: they come from the URL).
fn path_of(prefix: &str, id: &str) -> String {
    let mut path = format!("/{prefix}/");
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            path.push(char::from(byte));
        } else {
            path.push_str(&format!("%{byte:02X}"));
        }
    }
    path
}

fn business(state: &AppState) -> &str {
    &state.settings.business_name
}

fn not_found(state: &AppState, what: &str) -> Response {
    html(StatusCode::NOT_FOUND, html::not_found(business(state), what))
}

/// A failure of ours as a page (the cause was logged where the error was made).
fn failure(state: &AppState, error: &ApiError) -> Response {
    let status = error.kind.mapping().status;
    let (heading, text) = match error.kind {
        ErrorKind::Unavailable => (
            "Please try again",
            "The shop is busy or a service it needs is unavailable. Nothing was charged; try again in a moment.",
        ),
        _ => ("Something went wrong", "The page could not be shown. Nothing was charged; try again in a moment."),
    };
    let status = if status.is_client_error() || status.is_server_error() { status } else { StatusCode::BAD_REQUEST };
    html(status, html::error_page(business(state), heading, text))
}

fn respond(state: &AppState, result: Result<Response, ApiError>) -> Response {
    result.unwrap_or_else(|error| failure(state, &error))
}

/// Acting for the platform that owns the session, with everything the pages use negotiated.
fn call<'a>(state: &'a AppState, envelope: &'a Envelope, platform: &'a str) -> Call<'a> {
    Call {
        state,
        envelope,
        platform,
        fulfillment: true,
        discounts: true,
        cart_negotiated: true,
        idempotency_key: None,
        // The buyer is on our own page: every handler of the checkout is usable here.
        platform_handlers: &[],
    }
}

fn envelope() -> Envelope {
    Envelope { version: PROTOCOL_VERSION.into(), capabilities: Vec::new() }
}

/// A live session of `kind` (expired ones, and canceled carts, are gone for the buyer too).
async fn load(state: &AppState, id: &str, kind: SessionKind) -> Result<Option<Session>, ApiError> {
    let session = state.commerce.session(id).await?;
    Ok(session.filter(|session| {
        session.kind == kind
            && !session.is_expired(state.clock.now())
            && !(kind == SessionKind::Cart && session.status == Status::Canceled)
    }))
}

/// A UCP body as JSON (the purchase operations answer serialized bodies).
fn parse(body: &str) -> Result<Value, ApiError> {
    serde_json::from_str(body).map_err(ApiError::internal)
}

fn is_error_response(body: &Value) -> bool {
    body["ucp"]["status"] == "error"
}

fn notices_of(body: &Value) -> Vec<Notice> {
    body["messages"].as_array().map(Vec::as_slice).unwrap_or_default().iter().filter_map(Notice::from_json).collect()
}

// ---- checkout ------------------------------------------------------------------------------

async fn checkout_page(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let result = render_checkout(&state, &id, RenderOptions::default()).await;
    respond(&state, result)
}

/// How to render the checkout page beyond what is stored.
#[derive(Default)]
struct RenderOptions {
    /// What the buyer typed, when it was not stored.
    form: Option<CheckoutForm>,
    /// The messages to show instead of the stored session's (an operation's answer).
    notices: Option<Vec<Notice>>,
    /// Messages to show in addition.
    extra: Vec<Notice>,
    status: Option<StatusCode>,
}

async fn render_checkout(state: &AppState, id: &str, options: RenderOptions) -> Result<Response, ApiError> {
    let Some(session) = load(state, id, SessionKind::Checkout).await? else {
        return Ok(not_found(state, "Checkout"));
    };
    let envelope = envelope();
    let call = call(state, &envelope, &session.platform);
    let priced = purchase::price_session(&call, &session).await?;
    let form = options.form.unwrap_or_else(|| CheckoutForm::from_session(&session, &priced));
    let mut notices = options.notices.unwrap_or_else(|| priced.messages.iter().map(Notice::from).collect());
    notices.extend(options.extra);
    let view = CheckoutView {
        business: business(state),
        session: &session,
        priced: &priced,
        notices,
        form: &form,
        sandbox: state.payments.by_id(SANDBOX_ID).is_some(),
        require_email: state.settings.checkout.require_email,
    };
    Ok(html(options.status.unwrap_or(StatusCode::OK), views::checkout_page(&view)))
}

async fn checkout_submit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    form: Result<Form<CheckoutForm>, FormRejection>,
) -> Response {
    let result = submit(&state, &id, form).await;
    respond(&state, result)
}

async fn submit(
    state: &AppState,
    id: &str,
    form: Result<Form<CheckoutForm>, FormRejection>,
) -> Result<Response, ApiError> {
    let Some(session) = load(state, id, SessionKind::Checkout).await? else {
        return Ok(not_found(state, "Checkout"));
    };
    if session.status.is_terminal() {
        return Ok(see_other(&path_of("checkout", id)));
    }
    let mut form = match form {
        Ok(Form(form)) => form,
        Err(rejection) => {
            tracing::debug!(%rejection, "unreadable checkout form");
            let notice = Notice::error("invalid_input", "The form could not be read; please fill it in again.");
            let options =
                RenderOptions { extra: vec![notice], status: Some(StatusCode::BAD_REQUEST), ..Default::default() };
            return render_checkout(state, id, options).await;
        }
    };
    if let Err(field) = form.normalize() {
        let notice = Notice::error(
            "invalid_input",
            format!("{field} is too long (at most {} characters); nothing was saved.", views::MAX_FIELD),
        );
        return render_checkout(state, id, rejected(form, notice)).await;
    }
    let request = match serde_json::from_value::<CheckoutRequest>(update_request(&session, &form)) {
        Ok(request) => request,
        Err(error) => return Err(ApiError::internal(format!("handoff update request: {error}"))),
    };
    let envelope = envelope();
    let call = call(state, &envelope, &session.platform);
    let body = match purchase::update_checkout(&call, id, request).await {
        Ok(body) => parse(&body)?,
        Err(error) if error.kind == ErrorKind::InvalidParams => {
            let notice = Notice::error("invalid_input", format!("{}; nothing was saved.", error.message));
            return render_checkout(state, id, rejected(form, notice)).await;
        }
        Err(error) => return Err(error),
    };
    if is_error_response(&body) {
        return Ok(not_found(state, "Checkout"));
    }
    let notices = notices_of(&body);
    // Anything the buyer must fix: show it now, on the page they just sent (422), so it is
    // announced; otherwise post/redirect/get.
    if notices.iter().any(|notice| notice.error && notice.code != "payment_unavailable") {
        let options = RenderOptions {
            notices: Some(notices),
            status: Some(StatusCode::UNPROCESSABLE_ENTITY),
            ..Default::default()
        };
        return render_checkout(state, id, options).await;
    }
    Ok(see_other(&path_of("checkout", id)))
}

/// The page again with what the buyer typed and why it was not saved.
fn rejected(form: CheckoutForm, notice: Notice) -> RenderOptions {
    RenderOptions {
        form: Some(form),
        extra: vec![notice],
        status: Some(StatusCode::UNPROCESSABLE_ENTITY),
        ..Default::default()
    }
}

/// An `update_checkout` request from the form: the lines, context and attribution stay as
/// stored; buyer, fulfillment and discounts are replaced by what the buyer sent.
fn update_request(session: &Session, form: &CheckoutForm) -> Value {
    let non_empty = |value: &str| (!value.is_empty()).then(|| value.to_owned());
    let lines: Vec<Value> = session
        .lines
        .iter()
        .map(|line| json!({ "id": line.id, "item": { "id": line.item_id }, "quantity": line.quantity }))
        .collect();
    let mut request = json!({
        "line_items": lines,
        "buyer": {
            "email": non_empty(&form.email),
            "first_name": non_empty(&form.first_name),
            "last_name": non_empty(&form.last_name),
            "phone_number": non_empty(&form.phone),
        },
        "discounts": { "codes": form.codes() },
    });
    if let Some(context) = &session.context {
        request["context"] = serde_json::to_value(context).unwrap_or_default();
    }
    if let Some(attribution) = &session.attribution {
        request["attribution"] = Value::Object(attribution.clone());
    }
    if form.has_address() || !form.shipping_option.is_empty() {
        let destinations = if form.has_address() {
            vec![json!({
                "first_name": non_empty(&form.first_name),
                "last_name": non_empty(&form.last_name),
                "street_address": non_empty(&form.street),
                "extended_address": non_empty(&form.street2),
                "address_locality": non_empty(&form.city),
                "address_region": non_empty(&form.region),
                "postal_code": non_empty(&form.postal_code),
                "address_country": non_empty(&form.country),
            })]
        } else {
            Vec::new()
        };
        let mut method = json!({ "type": "shipping", "destinations": destinations });
        if !form.shipping_option.is_empty() {
            method["groups"] = json!([{ "selected_option_id": form.shipping_option }]);
        }
        request["fulfillment"] = json!({ "methods": [method] });
    }
    request
}

async fn approve_3ds(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let result = approve(&state, &id).await;
    respond(&state, result)
}

async fn approve(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(mut session) = load(state, id, SessionKind::Checkout).await? else {
        return Ok(not_found(state, "Checkout"));
    };
    if let Some(done) = settled(&session) {
        return Ok(done);
    }
    match &session.pending_authentication {
        None => return Ok(see_other(&path_of("checkout", id))),
        // Approved before, but the order was not placed (the processor was down): retry.
        Some(pending) if pending.approved => {}
        Some(_) => {
            purchase::approve_challenge(&mut session);
            match state.commerce.update_session(&session).await {
                Ok(()) => {}
                // Another request changed the checkout meanwhile: show the buyer its current state.
                Err(ucp_domain::store::StoreError::Conflict { .. } | ucp_domain::store::StoreError::NotFound) => {
                    return Ok(see_other(&path_of("checkout", id)));
                }
                Err(error) => return Err(error.into()),
            }
        }
    }
    complete(state, &session, CheckoutRequest::default()).await
}

async fn place_order(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let result = place(&state, &id).await;
    respond(&state, result)
}

async fn place(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(session) = load(state, id, SessionKind::Checkout).await? else {
        return Ok(not_found(state, "Checkout"));
    };
    if let Some(done) = settled(&session) {
        return Ok(done);
    }
    if state.payments.by_id(SANDBOX_ID).is_none() {
        let notice = Notice::error(
            "payment_unavailable",
            "Payment on this page is not available; your assistant completes the purchase.",
        );
        let options = RenderOptions { extra: vec![notice], status: Some(StatusCode::CONFLICT), ..Default::default() };
        return render_checkout(state, id, options).await;
    }
    let payment = json!({ "payment": { "instruments": [{
        "id": "pi_1",
        "handler_id": SANDBOX_ID,
        "type": "card",
        "credential": { "type": "token", "token": TOKEN_SUCCESS },
    }] } });
    let request = serde_json::from_value::<CheckoutRequest>(payment).map_err(ApiError::internal)?;
    complete(state, &session, request).await
}

/// Where a completed or canceled checkout sends the buyer instead.
fn settled(session: &Session) -> Option<Response> {
    match (&session.status, &session.order_id) {
        (Status::Completed, Some(order_id)) => Some(see_other(&path_of("orders", order_id))),
        (status, _) if status.is_terminal() => Some(see_other(&path_of("checkout", &session.id))),
        _ => None,
    }
}

/// `complete_checkout` as the session's platform; to the order page when it was placed.
async fn complete(state: &AppState, session: &Session, request: CheckoutRequest) -> Result<Response, ApiError> {
    let envelope = envelope();
    let call = call(state, &envelope, &session.platform);
    let body = match purchase::complete_checkout(&call, &session.id, request).await {
        Ok(body) => parse(&body)?,
        Err(error) if error.kind == ErrorKind::InvalidParams => {
            let notice = Notice::error("invalid_input", error.message);
            let options =
                RenderOptions { extra: vec![notice], status: Some(StatusCode::CONFLICT), ..Default::default() };
            return render_checkout(state, &session.id, options).await;
        }
        Err(error) => return Err(error),
    };
    if is_error_response(&body) {
        return Ok(not_found(state, "Checkout"));
    }
    if body["status"] == "completed"
        && let Some(order_id) = body["order"]["id"].as_str()
    {
        return Ok(see_other(&path_of("orders", order_id)));
    }
    // Not placed (declined, not ready, sold out): the page with the answer's messages.
    let options =
        RenderOptions { notices: Some(notices_of(&body)), status: Some(StatusCode::CONFLICT), ..Default::default() };
    render_checkout(state, &session.id, options).await
}

// ---- cart ----------------------------------------------------------------------------------

async fn cart_page(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let result = render_cart(&state, &id, None, StatusCode::OK).await;
    respond(&state, result)
}

async fn render_cart(
    state: &AppState,
    id: &str,
    notices: Option<Vec<Notice>>,
    status: StatusCode,
) -> Result<Response, ApiError> {
    let Some(session) = load(state, id, SessionKind::Cart).await? else {
        return Ok(not_found(state, "Cart"));
    };
    let envelope = envelope();
    let call = call(state, &envelope, &session.platform);
    let priced = purchase::price_session(&call, &session).await?;
    let notices = notices.unwrap_or_else(|| priced.messages.iter().map(Notice::from).collect());
    Ok(html(status, views::cart_page(business(state), &session, &priced, &notices)))
}

async fn cart_checkout(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let result = checkout_from_cart(&state, &id).await;
    respond(&state, result)
}

async fn checkout_from_cart(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(cart) = load(state, id, SessionKind::Cart).await? else {
        return Ok(not_found(state, "Cart"));
    };
    let request =
        serde_json::from_value::<CheckoutRequest>(json!({ "cart_id": cart.id })).map_err(ApiError::internal)?;
    let envelope = envelope();
    let call = call(state, &envelope, &cart.platform);
    let body = match purchase::create_checkout(&call, request).await {
        Ok((body, _)) => parse(&body)?,
        Err(error) if error.kind == ErrorKind::InvalidParams => {
            let notices = vec![Notice::error("invalid_input", error.message)];
            return render_cart(state, id, Some(notices), StatusCode::CONFLICT).await;
        }
        Err(error) => return Err(error),
    };
    match body["id"].as_str() {
        Some(checkout_id) if !is_error_response(&body) => Ok(see_other(&path_of("checkout", checkout_id))),
        _ => render_cart(state, id, Some(notices_of(&body)), StatusCode::CONFLICT).await,
    }
}

// ---- order and policies --------------------------------------------------------------------

async fn order_page(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let result = render_order(&state, &id).await;
    respond(&state, result)
}

async fn render_order(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(order) = state.commerce.order(id).await? else {
        return Ok(not_found(state, "Order"));
    };
    let document = parse(&order.document)?;
    Ok(html(StatusCode::OK, views::order_page(business(state), &document, order.created_at)))
}

async fn policy_page(State(state): State<AppState>, Path(slug): Path<String>) -> Response {
    match html::policy(business(&state), &slug) {
        Some(page) => html(StatusCode::OK, page),
        None => not_found(&state, "Page"),
    }
}
