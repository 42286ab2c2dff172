//! The buyer handoff pages behind `continue_url`: server-rendered HTML, no scripts, plain
//! forms (`application/x-www-form-urlencoded`, post/redirect/get).
//!
//! The pages are the buyer's side of a session an agent started, so they act for the
//! session's own platform: every change goes through the same purchase operations the agent
//! uses (`update_checkout`, `complete_checkout`, `create_checkout` from a cart), and the
//! page re-renders the domain's messages. Cross-site posts are refused by the request guard
//! (a browser's form post carries `Origin`) and by `form-action 'self'`.
//!
//! Every page and form post needs the resource's token (`?t=`, see `crate::page_links`):
//! without a valid one the answer is the unknown-id page, before anything is loaded. Form
//! actions and redirects carry the token on.

pub(crate) mod html;
mod views;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ucp_domain::checkout::{Address, Buyer, FulfillmentChoice, Session, SessionKind, Status};
use ucp_domain::commerce::{Answer, Caller, CheckoutInput, Instrument, LineInput, Page, Payment, SessionView};

use crate::error::{ApiError, ErrorKind};
use crate::payment::{SANDBOX_ID, TOKEN_SUCCESS};
use crate::state::AppState;

use views::{CheckoutForm, CheckoutView, Notice};

/// Routes of the buyer-facing pages (their security headers, CSP among them, are the
/// `Page` binding's layer: `layers::page_headers`).
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/checkout/{id}", get(checkout_page).post(checkout_submit))
        .route("/checkout/{id}/3ds", post(approve_3ds))
        .route("/checkout/{id}/place", post(place_order))
        .route("/cart/{id}", get(cart_page))
        .route("/cart/{id}/checkout", post(cart_checkout))
        .route("/orders/{id}", get(order_page))
        .route("/policies/{slug}", get(policy_page))
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

/// The page of `id` with its token (redirects).
fn href(state: &AppState, page: Page, id: &str) -> String {
    state.pages.href(page, id)
}

/// Whether the query carries `page`'s token for `id` (its first `t` parameter).
fn permitted(state: &AppState, page: Page, id: &str, query: Option<&str>) -> bool {
    let token = query.and_then(|query| {
        url::form_urlencoded::parse(query.as_bytes()).find(|(key, _)| key == "t").map(|(_, value)| value)
    });
    state.pages.verify(page, id, token.as_deref())
}

fn business(state: &AppState) -> &str {
    &state.settings.business_name
}

fn not_found(state: &AppState, what: &str) -> Response {
    html(StatusCode::NOT_FOUND, html::not_found(business(state), what))
}

/// A failure of ours as a page (the cause was logged where the error was made). It never says
/// "nothing was charged": a page that failed after a complete cannot know.
fn failure(state: &AppState, error: &ApiError) -> Response {
    let status = error.kind.mapping().status;
    let (heading, text) = match error.kind {
        ErrorKind::Unavailable => {
            ("Please try again", "The shop is busy or a service it needs is unavailable. Try again in a moment.")
        }
        _ => ("Something went wrong", "The page could not be shown. Try again in a moment."),
    };
    let status = if status.is_client_error() || status.is_server_error() { status } else { StatusCode::BAD_REQUEST };
    html(status, html::error_page(business(state), heading, text))
}

fn respond(state: &AppState, result: Result<Response, ApiError>) -> Response {
    result.unwrap_or_else(|error| failure(state, &error))
}

/// A live session of `kind` (expired ones, and canceled carts, are gone for the buyer too).
async fn load(state: &AppState, id: &str, kind: SessionKind) -> Result<Option<Session>, ApiError> {
    Ok(state.core.session(id, kind).await?)
}

fn notices_of(view: &SessionView) -> Vec<Notice> {
    view.messages().map(Notice::from).collect()
}

/// An operation's outcome for the pages: the view, or `None` when the session is gone.
fn resource(answer: Answer<SessionView>) -> Option<SessionView> {
    answer.resource()
}

// ---- checkout ------------------------------------------------------------------------------

async fn checkout_page(State(state): State<AppState>, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !permitted(&state, Page::Checkout, &id, query.as_deref()) {
        return not_found(&state, "Checkout");
    }
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
    let platform = session.platform.clone();
    let shown = state.core.present(&Caller::buyer_page(&platform), session).await?;
    let (session, priced) = (&shown.session, &shown.priced);
    let form = options.form.unwrap_or_else(|| CheckoutForm::from_session(session, priced));
    let mut notices = options.notices.unwrap_or_else(|| priced.messages.iter().map(Notice::from).collect());
    notices.extend(options.extra);
    let view = CheckoutView {
        business: business(state),
        session,
        priced,
        notices,
        form: &form,
        sandbox: state.payments.by_id(SANDBOX_ID).is_some(),
        require_email: state.settings.checkout.require_email,
        token: &state.pages.token(Page::Checkout, &session.id),
        order_token: session.order_id.as_deref().map(|order_id| state.pages.token(Page::Order, order_id)),
    };
    Ok(html(options.status.unwrap_or(StatusCode::OK), views::checkout_page(&view)))
}

async fn checkout_submit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
    form: Result<Form<CheckoutForm>, FormRejection>,
) -> Response {
    if !permitted(&state, Page::Checkout, &id, query.as_deref()) {
        return not_found(&state, "Checkout");
    }
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
        return Ok(see_other(&href(state, Page::Checkout, id)));
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
    let input = update_input(&session, &form);
    let caller = Caller::buyer_page(&session.platform);
    let view = match state.core.update_checkout(&caller, id, input).await.map_err(ApiError::from) {
        Ok(answer) => resource(answer),
        Err(error) if error.kind == ErrorKind::InvalidParams => {
            let notice = Notice::error("invalid_input", format!("{}; nothing was saved.", error.message));
            return render_checkout(state, id, rejected(form, notice)).await;
        }
        Err(error) => return Err(error),
    };
    let Some(view) = view else {
        return Ok(not_found(state, "Checkout"));
    };
    let notices = notices_of(&view);
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
    Ok(see_other(&href(state, Page::Checkout, id)))
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

/// An `update_checkout` from the form: the lines, context and attribution stay as stored;
/// buyer, fulfillment and discounts are replaced by what the buyer sent.
fn update_input(session: &Session, form: &CheckoutForm) -> CheckoutInput {
    let non_empty = |value: &str| (!value.is_empty()).then(|| value.to_owned());
    let lines = session
        .lines
        .iter()
        .map(|line| LineInput { id: Some(line.id.clone()), item_id: line.item_id.clone(), quantity: line.quantity })
        .collect();
    let buyer = Buyer {
        email: non_empty(&form.email),
        first_name: non_empty(&form.first_name),
        last_name: non_empty(&form.last_name),
        phone_number: non_empty(&form.phone),
    };
    let fulfillment = (form.has_address() || !form.shipping_option.is_empty()).then(|| FulfillmentChoice {
        destinations: if form.has_address() {
            vec![Address {
                first_name: non_empty(&form.first_name),
                last_name: non_empty(&form.last_name),
                street_address: non_empty(&form.street),
                extended_address: non_empty(&form.street2),
                address_locality: non_empty(&form.city),
                address_region: non_empty(&form.region),
                postal_code: non_empty(&form.postal_code),
                address_country: non_empty(&form.country),
                ..Address::default()
            }]
        } else {
            Vec::new()
        },
        selected_destination_id: None,
        selected_option_id: non_empty(&form.shipping_option),
        // The buyer chose shipping on the page: what the platform asked for besides is gone.
        unsupported: Vec::new(),
    });
    CheckoutInput {
        lines: Some(lines),
        buyer: Some(buyer),
        context: session.context.clone(),
        fulfillment,
        discount_codes: Some(form.codes()),
        cart_id: None,
        attribution: session.attribution.clone(),
        payment: None,
    }
}

async fn approve_3ds(State(state): State<AppState>, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !permitted(&state, Page::Checkout, &id, query.as_deref()) {
        return not_found(&state, "Checkout");
    }
    let result = approve(&state, &id).await;
    respond(&state, result)
}

async fn approve(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(mut session) = load(state, id, SessionKind::Checkout).await? else {
        return Ok(not_found(state, "Checkout"));
    };
    if let Some(done) = settled(state, &session) {
        return Ok(done);
    }
    match &session.pending_authentication {
        None => return Ok(see_other(&href(state, Page::Checkout, id))),
        // Approved before, but the order was not placed (the processor was down): retry.
        Some(pending) if pending.approved => {}
        Some(_) => {
            if !state.core.approve_challenge(&mut session).await? {
                // Another request changed the checkout meanwhile: show the buyer its current state.
                return Ok(see_other(&href(state, Page::Checkout, id)));
            }
        }
    }
    complete(state, &session, CheckoutInput::default()).await
}

async fn place_order(State(state): State<AppState>, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !permitted(&state, Page::Checkout, &id, query.as_deref()) {
        return not_found(&state, "Checkout");
    }
    let result = place(&state, &id).await;
    respond(&state, result)
}

async fn place(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(session) = load(state, id, SessionKind::Checkout).await? else {
        return Ok(not_found(state, "Checkout"));
    };
    if let Some(done) = settled(state, &session) {
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
    let payment = Payment {
        instruments: vec![Instrument {
            handler_id: SANDBOX_ID.into(),
            kind: "card".into(),
            token: Some(TOKEN_SUCCESS.into()),
        }],
    };
    complete(state, &session, CheckoutInput { payment: Some(payment), ..CheckoutInput::default() }).await
}

/// Where a completed or canceled checkout sends the buyer instead.
fn settled(state: &AppState, session: &Session) -> Option<Response> {
    match (&session.status, &session.order_id) {
        (Status::Completed, Some(order_id)) => Some(see_other(&href(state, Page::Order, order_id))),
        (status, _) if status.is_terminal() => Some(see_other(&href(state, Page::Checkout, &session.id))),
        _ => None,
    }
}

/// `complete_checkout` as the session's platform; to the order page when it was placed. The
/// complete runs as a task of its own: a buyer who closes the page does not abort a charge.
async fn complete(state: &AppState, session: &Session, input: CheckoutInput) -> Result<Response, ApiError> {
    // The order's webhooks go where the platform's profile says, as when it completes itself.
    let webhook = webhook_target(state, &session.platform).await;
    // Detached from the request: a buyer who closes the tab does not abort the order.
    let (core, platform, id) = (state.core.clone(), session.platform.clone(), session.id.clone());
    let detached = tokio::spawn(crate::layers::carried(async move {
        let caller = Caller { order_webhook: webhook.as_ref(), ..Caller::buyer_page(&platform) };
        core.complete_checkout(&caller, &id, input).await
    }));
    let completed = detached.await.map_err(ApiError::internal)?;
    // The charge may have been taken (the processor did not answer, or the order is not
    // recorded yet): never "nothing was charged", and a retry does not charge again.
    if let Err(ucp_domain::Error::OrderPending | ucp_domain::Error::PaymentUnavailable) = &completed {
        let text = "Your payment may already have been taken, and the order is being confirmed. Reload this \
                    page in a moment: you will not be charged again.";
        return Ok(html(StatusCode::SERVICE_UNAVAILABLE, html::error_page(business(state), "Almost there", text)));
    }
    let view = match completed.map_err(ApiError::from) {
        Ok(answer) => resource(answer),
        Err(error) if error.kind == ErrorKind::InvalidParams => {
            let notice = Notice::error("invalid_input", error.message);
            let options =
                RenderOptions { extra: vec![notice], status: Some(StatusCode::CONFLICT), ..Default::default() };
            return render_checkout(state, &session.id, options).await;
        }
        Err(error) => {
            // Before the charge or after it (the order placed, its answer not read): unknown.
            let status = error.kind.mapping().status;
            let text = "Your order could not be confirmed just now. Reload this page in a moment to see whether \
                        it was placed before you try again.";
            return Ok(html(status, html::error_page(business(state), "Please reload", text)));
        }
    };
    let Some(view) = view else {
        return Ok(not_found(state, "Checkout"));
    };
    if view.session.status == Status::Completed
        && let Some(order_id) = &view.session.order_id
    {
        return Ok(see_other(&href(state, Page::Order, order_id)));
    }
    // Not placed (declined, not ready, sold out): the page with the answer's messages.
    let options =
        RenderOptions { notices: Some(notices_of(&view)), status: Some(StatusCode::CONFLICT), ..Default::default() };
    render_checkout(state, &session.id, options).await
}

/// The session platform's order webhook target, from its (cached) profile; none when the
/// profile cannot be had now (the order is placed all the same, without webhooks).
async fn webhook_target(state: &AppState, platform: &str) -> Option<ucp_domain::webhook::WebhookTarget> {
    let profile = match state.platforms.resolve(platform).await {
        Ok(profile) => profile,
        Err(error) => {
            tracing::warn!(%platform, reason = %error.message, "no platform profile for order webhooks");
            return None;
        }
    };
    let negotiated = crate::platform::negotiate(&state.profile, &profile).ok()?;
    crate::webhooks::target(&state.profile, &profile, &negotiated)
}

// ---- cart ----------------------------------------------------------------------------------

async fn cart_page(State(state): State<AppState>, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !permitted(&state, Page::Cart, &id, query.as_deref()) {
        return not_found(&state, "Cart");
    }
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
    let platform = session.platform.clone();
    let shown = state.core.present(&Caller::buyer_page(&platform), session).await?;
    let notices = notices.unwrap_or_else(|| shown.priced.messages.iter().map(Notice::from).collect());
    let token = state.pages.token(Page::Cart, &shown.session.id);
    Ok(html(status, views::cart_page(business(state), &shown.session, &shown.priced, &notices, &token)))
}

async fn cart_checkout(State(state): State<AppState>, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !permitted(&state, Page::Cart, &id, query.as_deref()) {
        return not_found(&state, "Cart");
    }
    let result = checkout_from_cart(&state, &id).await;
    respond(&state, result)
}

async fn checkout_from_cart(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(cart) = load(state, id, SessionKind::Cart).await? else {
        return Ok(not_found(state, "Cart"));
    };
    let input = CheckoutInput { cart_id: Some(cart.id.clone()), ..CheckoutInput::default() };
    let caller = Caller::buyer_page(&cart.platform);
    let answer = match state.core.create_checkout(&caller, input).await.map_err(ApiError::from) {
        Ok(answer) => answer,
        Err(error) if error.kind == ErrorKind::InvalidParams => {
            let notices = vec![Notice::error("invalid_input", error.message)];
            return render_cart(state, id, Some(notices), StatusCode::CONFLICT).await;
        }
        Err(error) => return Err(error),
    };
    match answer {
        Answer::Resource(view) => Ok(see_other(&href(state, Page::Checkout, &view.session.id))),
        Answer::Refused(refusal) => {
            let notices = vec![Notice::error(refusal.code.as_str(), refusal.content)];
            render_cart(state, id, Some(notices), StatusCode::CONFLICT).await
        }
    }
}

// ---- order and policies --------------------------------------------------------------------

async fn order_page(State(state): State<AppState>, Path(id): Path<String>, RawQuery(query): RawQuery) -> Response {
    if !permitted(&state, Page::Order, &id, query.as_deref()) {
        return not_found(&state, "Order");
    }
    let result = render_order(&state, &id).await;
    respond(&state, result)
}

async fn render_order(state: &AppState, id: &str) -> Result<Response, ApiError> {
    let Some(order) = state.core.order(id).await? else {
        return Ok(not_found(state, "Order"));
    };
    let document = serde_json::to_value(&order.order).map_err(ApiError::internal)?;
    Ok(html(StatusCode::OK, views::order_page(business(state), &document, order.created_at)))
}

async fn policy_page(State(state): State<AppState>, Path(slug): Path<String>) -> Response {
    match html::policy(business(&state), &slug) {
        Some(page) => html(StatusCode::OK, page),
        None => not_found(&state, "Page"),
    }
}
