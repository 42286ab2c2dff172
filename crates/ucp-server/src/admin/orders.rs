//! The merchant's order operations over the admin API: list, show, ship, deliver,
//! fail-delivery, return, cancel, refund, adjust. Each handler parses its JSON body (lists
//! bounded while they deserialize), calls one `Commerce` method and renders its answer; the
//! rules are the core's (`ucp_domain::order::changes`).

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use ucp_domain::commerce::{MerchantOrder, OrderFilter, OrderOutcome};
use ucp_domain::order::changes::{ChangeError, LineQuantity, MAX_LINES, Tracking};
use ucp_domain::order::{AdjustmentStatus, Order, OrderStatus};
use ucp_protocol::requests::bounded;
use ucp_protocol::resources::rfc3339;

use super::{API_PREFIX, error};
use crate::state::AppState;

pub fn router(state: &AppState) -> Router<AppState> {
    let order = |action: &str| format!("{API_PREFIX}/orders/{{id}}/{action}");
    let changes = Router::new()
        .route(&order("ship"), post(ship))
        .route(&order("deliver"), post(deliver))
        .route(&order("fail-delivery"), post(fail_delivery))
        .route(&order("return"), post(return_items))
        .route(&order("cancel"), post(cancel))
        .route(&order("refund"), post(refund))
        .route(&order("adjust"), post(adjust))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), super::idempotent::keyed));
    Router::new()
        .route(&format!("{API_PREFIX}/orders"), get(list))
        .route(&format!("{API_PREFIX}/orders/{{id}}"), get(show))
        .merge(changes)
}

/// One order as the admin API shows it.
#[derive(Serialize)]
pub struct OrderDetails<'a> {
    /// The UCP order body (what `get_order` answers, without its `ucp` envelope).
    pub order: &'a Order,
    pub status: &'static str,
    pub platform: &'a str,
    pub created_at: String,
    pub version: i64,
    pub payment: Option<PaymentSummary<'a>>,
}

#[derive(Serialize)]
pub struct PaymentSummary<'a> {
    pub handler_id: &'a str,
    pub currency: &'a str,
    pub amount: i64,
    pub refunded: i64,
}

impl<'a> OrderDetails<'a> {
    fn of(order: &'a MerchantOrder) -> OrderDetails<'a> {
        let stored = &order.stored;
        OrderDetails {
            order: &stored.order,
            status: order.status.as_str(),
            platform: &stored.platform,
            created_at: rfc3339(stored.created_at),
            version: stored.version,
            payment: stored.payment.as_ref().map(|payment| PaymentSummary {
                handler_id: &payment.handler_id,
                currency: &payment.currency,
                amount: payment.amount,
                refunded: order.refunded,
            }),
        }
    }
}

#[derive(Serialize)]
struct OrderSummary<'a> {
    id: &'a str,
    status: &'static str,
    platform: &'a str,
    created_at: String,
    currency: &'a str,
    total: i64,
    version: i64,
}

#[derive(Serialize)]
struct OrderList<'a> {
    orders: Vec<OrderSummary<'a>>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    status: Option<String>,
    limit: Option<usize>,
    before: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let query = match query {
        Ok(Query(query)) => query,
        Err(rejection) => return super::bad_query(&rejection, "status, limit, before"),
    };
    let status = match query.status.as_deref().map(OrderStatus::parse) {
        None => None,
        Some(Some(status)) => Some(status),
        Some(None) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_input",
                "status must be processing, partial, fulfilled, canceled or closed",
            );
        }
    };
    let before = match query.before.as_deref().map(parse_cursor) {
        None => None,
        Some(Some(before)) => Some(before),
        Some(None) => return error(StatusCode::BAD_REQUEST, "invalid_input", "before must be a `next` value"),
    };
    // Above the page's cap is the cap (documented); 0 asks for a page of nothing.
    if query.limit == Some(0) {
        return error(StatusCode::BAD_REQUEST, "invalid_input", "limit must be at least 1");
    }
    let limit = query.limit.unwrap_or(20).min(ucp_domain::commerce::MAX_ORDER_PAGE);
    let orders = match state.core.list_orders(OrderFilter { status, limit, before }).await {
        Ok(orders) => orders,
        Err(failure) => return domain_error(failure),
    };
    let next = (orders.len() == limit)
        .then(|| orders.last().map(|last| format!("{}.{}", last.stored.created_at, last.stored.id)))
        .flatten();
    let orders = orders
        .iter()
        .map(|order| OrderSummary {
            id: &order.stored.id,
            status: order.status.as_str(),
            platform: &order.stored.platform,
            created_at: rfc3339(order.stored.created_at),
            currency: &order.stored.order.currency,
            total: order.stored.order.totals.iter().find(|total| total.kind == "total").map_or(0, |total| total.amount),
            version: order.stored.version,
        })
        .collect();
    axum::Json(OrderList { orders, next }).into_response()
}

/// `<created_at>.<id>` of the last order of a page.
fn parse_cursor(text: &str) -> Option<(i64, String)> {
    let (at, id) = text.split_once('.')?;
    Some((at.parse().ok()?, id.to_owned()))
}

async fn show(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.core.merchant_order(&id).await {
        Ok(Some(order)) => axum::Json(OrderDetails::of(&order)).into_response(),
        Ok(None) => not_found(),
        Err(failure) => domain_error(failure),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineRef {
    id: String,
    quantity: i64,
}

fn lines(refs: Vec<LineRef>) -> Vec<LineQuantity> {
    refs.into_iter().map(|line| LineQuantity { id: line.id, quantity: line.quantity }).collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShipBody {
    #[serde(deserialize_with = "bounded::list::<_, _, MAX_LINES>")]
    line_items: Vec<LineRef>,
    carrier: Option<String>,
    tracking_number: String,
    tracking_url: String,
    description: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DeliveryBody {
    #[serde(default, deserialize_with = "bounded::optional_list::<_, _, MAX_LINES>")]
    line_items: Option<Vec<LineRef>>,
    description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReturnBody {
    #[serde(deserialize_with = "bounded::list::<_, _, MAX_LINES>")]
    line_items: Vec<LineRef>,
    carrier: Option<String>,
    tracking_number: Option<String>,
    tracking_url: Option<String>,
    description: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CancelBody {
    #[serde(default, deserialize_with = "bounded::optional_list::<_, _, MAX_LINES>")]
    line_items: Option<Vec<LineRef>>,
    amount: Option<i64>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RefundBody {
    amount: i64,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AdjustBody {
    #[serde(rename = "type")]
    kind: String,
    amount: i64,
    status: Option<String>,
    description: Option<String>,
}

/// The body as `T`; an empty body is `{}` where `T` has a default.
fn parse<T: serde::de::DeserializeOwned>(body: &Bytes, empty: Option<T>) -> Result<T, String> {
    if body.iter().all(u8::is_ascii_whitespace)
        && let Some(empty) = empty
    {
        return Ok(empty);
    }
    serde_json::from_slice(body).map_err(|failure| format!("request body: {failure}"))
}

fn bad_body(message: String) -> Response {
    error(StatusCode::BAD_REQUEST, "invalid_input", &message)
}

async fn ship(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    let body: ShipBody = match parse(&body, None) {
        Ok(body) => body,
        Err(message) => return bad_body(message),
    };
    let tracking = Tracking {
        carrier: body.carrier,
        tracking_number: Some(body.tracking_number),
        tracking_url: Some(body.tracking_url),
    };
    answer(state.core.ship(&id, lines(body.line_items), tracking, body.description).await)
}

async fn deliver(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    match parse::<DeliveryBody>(&body, Some(DeliveryBody::default())) {
        Ok(body) => answer(state.core.deliver(&id, body.line_items.map(lines), body.description).await),
        Err(message) => bad_body(message),
    }
}

async fn fail_delivery(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    match parse::<DeliveryBody>(&body, Some(DeliveryBody::default())) {
        Ok(body) => answer(state.core.fail_delivery(&id, body.line_items.map(lines), body.description).await),
        Err(message) => bad_body(message),
    }
}

async fn return_items(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    let body: ReturnBody = match parse(&body, None) {
        Ok(body) => body,
        Err(message) => return bad_body(message),
    };
    let tracking =
        Tracking { carrier: body.carrier, tracking_number: body.tracking_number, tracking_url: body.tracking_url };
    answer(state.core.return_items(&id, lines(body.line_items), tracking, body.description).await)
}

async fn cancel(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    match parse::<CancelBody>(&body, Some(CancelBody::default())) {
        Ok(body) => answer(state.core.cancel_order(&id, body.line_items.map(lines), body.amount, body.reason).await),
        Err(message) => bad_body(message),
    }
}

async fn refund(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    match parse::<RefundBody>(&body, None) {
        Ok(body) => answer(state.core.refund_order(&id, body.amount, body.reason).await),
        Err(message) => bad_body(message),
    }
}

async fn adjust(State(state): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    let body: AdjustBody = match parse(&body, None) {
        Ok(body) => body,
        Err(message) => return bad_body(message),
    };
    let status = match body.status.as_deref().map(AdjustmentStatus::parse) {
        None => AdjustmentStatus::Completed,
        Some(Some(status)) => status,
        Some(None) => {
            return error(StatusCode::BAD_REQUEST, "invalid_input", "status must be pending, completed or failed");
        }
    };
    answer(state.core.adjust(&id, body.kind, body.amount, status, body.description).await)
}

pub(super) fn answer(outcome: Result<OrderOutcome, ucp_domain::Error>) -> Response {
    match outcome {
        Ok(OrderOutcome::Changed(order)) => axum::Json(OrderDetails::of(&order)).into_response(),
        Ok(OrderOutcome::NotFound) => not_found(),
        Ok(OrderOutcome::Refused(refusal)) => {
            let status = match refusal {
                ChangeError::Invalid(_) => StatusCode::BAD_REQUEST,
                ChangeError::UnknownLine(_)
                | ChangeError::TooMany { .. }
                | ChangeError::OverRefund { .. }
                | ChangeError::ProcessorRefused(_) => StatusCode::UNPROCESSABLE_ENTITY,
                ChangeError::Canceled | ChangeError::RefundAbandoned(_) | ChangeError::NotAbandoned(_) => {
                    StatusCode::CONFLICT
                }
            };
            error(status, refusal.code(), &refusal.to_string())
        }
        Err(failure) => domain_error(failure),
    }
}

fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "not_found", "Order not found.")
}

/// What the admin API answers a change whose outcome is unknown.
const IN_DOUBT_ORDER: &str = "storage failed while saving this change, which may or may not have been saved: read the \
                              order before repeating the request";

/// A failure below the operation: the one error table's status, a generic message on a 5xx,
/// except for a change whose outcome is unknown, which the merchant must check before repeating,
/// and a refund the processor did not confirm, which is kept and made later.
pub(super) fn domain_error(failure: ucp_domain::Error) -> Response {
    let in_doubt = matches!(failure, ucp_domain::Error::Store(ucp_domain::store::StoreError::InDoubt(_)));
    let refund_pending = matches!(failure, ucp_domain::Error::RefundPending);
    let api = crate::error::ApiError::from(failure);
    let mapping = api.kind.mapping();
    if mapping.rest_status.is_server_error() {
        tracing::error!(error = %api.message, "admin order operation failed");
        let (code, message) = match mapping.rest_status {
            StatusCode::SERVICE_UNAVAILABLE if refund_pending => ("refund_pending", api.message.as_str()),
            StatusCode::SERVICE_UNAVAILABLE => {
                ("unavailable", "temporarily unavailable (payment processor or storage); retry shortly")
            }
            _ if in_doubt => ("internal", IN_DOUBT_ORDER),
            _ => ("internal", "unexpected failure"),
        };
        return error(mapping.rest_status, code, message);
    }
    error(StatusCode::BAD_REQUEST, mapping.rest_code, &api.message)
}
