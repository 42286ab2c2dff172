//! The order actions as forms on the order page, and the posts they make.
//!
//! [`for_order`] offers one [`ActionForm`] per action the order allows (ship every remaining
//! unit, mark shipped units delivered, cancel what is not fulfilled, refund); each posts to
//! `/admin/orders/{id}/{action}`, whose handler ([`apply`]) calls the matching `Commerce`
//! method and redirects (303) back to the order page, or answers the console's message page
//! (404 unknown order, 409 canceled, 422 a refusal such as a refund over what was paid). The
//! console's guard has already checked the session, the CSRF token and the Origin.

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use ucp_domain::commerce::{OrderOutcome, StoredOrderView};
use ucp_domain::order::changes::{ChangeError, LineQuantity, Tracking};
use ucp_domain::order::{Order, OrderLine};

use super::views;
use crate::state::AppState;

/// One action form: a button posting to `path`, with extra fields (hidden or text).
pub(crate) struct ActionForm {
    pub label: String,
    /// The form's field ids start with it (no spaces).
    pub slug: &'static str,
    pub path: String,
    pub fields: Vec<ActionField>,
}

pub(crate) struct ActionField {
    pub name: String,
    pub label: String,
    /// `hidden` or `text`.
    pub kind: &'static str,
    pub value: String,
}

fn text(name: &str, label: &str) -> ActionField {
    ActionField { name: name.to_owned(), label: label.to_owned(), kind: "text", value: String::new() }
}

/// What a path segment keeps as is: RFC 3986's unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// The order page's path.
pub(super) fn order_href(id: &str) -> String {
    format!("/admin/orders/{}", percent_encoding::utf8_percent_encode(id, SEGMENT))
}

fn remaining(line: &OrderLine) -> i64 {
    (line.quantity.total - line.quantity.fulfilled).max(0)
}

/// Every unit not yet fulfilled, line by line (lines with none left skipped).
fn all_remaining(order: &Order) -> Vec<LineQuantity> {
    order
        .line_items
        .iter()
        .filter(|line| remaining(line) > 0)
        .map(|line| LineQuantity { id: line.id.clone(), quantity: remaining(line) })
        .collect()
}

/// The actions the order allows.
pub(crate) fn for_order(stored: &StoredOrderView) -> Vec<ActionForm> {
    let order = &stored.view.order;
    let base = order_href(&order.id);
    let form = |slug: &'static str, label: &str, fields: Vec<ActionField>| ActionForm {
        label: label.to_owned(),
        slug,
        path: format!("{base}/{slug}"),
        fields,
    };
    let mut forms = Vec::new();
    let open = order.line_items.iter().any(|line| remaining(line) > 0);
    if open {
        forms.push(form(
            "ship",
            "Ship all remaining units",
            vec![
                text("carrier", "Carrier"),
                text("tracking_number", "Tracking number"),
                text("tracking_url", "Tracking URL"),
            ],
        ));
    }
    if order.line_items.iter().any(|line| line.quantity.fulfilled > 0) {
        forms.push(form("deliver", "Mark delivered", Vec::new()));
    }
    if open {
        forms.push(form("cancel", "Cancel the order", vec![text("reason", "Reason for cancelling")]));
    }
    forms.push(form(
        "refund",
        "Refund",
        vec![text("amount", "Amount to refund (minor units)"), text("reason", "Reason for the refund")],
    ));
    forms
}

/// The fields any action form may post (the CSRF token is the guard's).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ActionBody {
    #[serde(default)]
    carrier: String,
    #[serde(default)]
    tracking_number: String,
    #[serde(default)]
    tracking_url: String,
    #[serde(default)]
    amount: String,
    #[serde(default)]
    reason: String,
}

/// A trimmed field, `None` when empty.
fn given(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

fn refused(state: &AppState, status: StatusCode, text: &str) -> Response {
    views::message(state, status, "Not done", text)
}

pub(super) async fn apply(
    State(state): State<AppState>,
    Path((id, action)): Path<(String, String)>,
    body: Result<Form<ActionBody>, FormRejection>,
) -> Response {
    let Ok(Form(body)) = body else {
        return refused(&state, StatusCode::BAD_REQUEST, "The form could not be read; reload the page and try again.");
    };
    let outcome = match action.as_str() {
        "ship" => {
            let order = match state.core.merchant_order(&id).await {
                Ok(Some(order)) => order,
                Ok(None) => return missing(&state),
                Err(failure) => return failed(&state, failure),
            };
            let lines = all_remaining(&order.stored.order);
            if lines.is_empty() {
                return refused(&state, StatusCode::CONFLICT, "Every unit of this order is already shipped.");
            }
            let tracking = Tracking {
                carrier: given(&body.carrier),
                tracking_number: given(&body.tracking_number),
                tracking_url: given(&body.tracking_url),
            };
            state.core.ship(&id, lines, tracking, None).await
        }
        "deliver" => state.core.deliver(&id, None, None).await,
        "cancel" => state.core.cancel_order(&id, None, None, given(&body.reason)).await,
        "refund" => {
            let Ok(amount) = body.amount.trim().parse::<i64>() else {
                return refused(
                    &state,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "The amount must be a whole number of minor units (cents), such as 1250.",
                );
            };
            state.core.refund_order(&id, amount, given(&body.reason)).await
        }
        _ => return views::message(&state, StatusCode::NOT_FOUND, "Not found", "There is no such action."),
    };
    match outcome {
        Ok(OrderOutcome::Changed(order)) => {
            tracing::info!(target: "ucpd::audit", order = %order.stored.id, %action, "console order action");
            super::see_other(&order_href(&id))
        }
        Ok(OrderOutcome::NotFound) => missing(&state),
        Ok(OrderOutcome::Refused(refusal)) => {
            let status = match refusal {
                ChangeError::Canceled => StatusCode::CONFLICT,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            refused(&state, status, &refusal.to_string())
        }
        Err(failure) => failed(&state, failure),
    }
}

fn missing(state: &AppState) -> Response {
    views::message(state, StatusCode::NOT_FOUND, "Not found", "There is no order with that id.")
}

/// A failure below the operation: a 5xx page (logged), else the error's own message.
fn failed(state: &AppState, failure: ucp_domain::Error) -> Response {
    let api = crate::error::ApiError::from(failure);
    if api.kind.mapping().rest_status.is_server_error() {
        return views::unavailable(state, &api.message);
    }
    refused(state, StatusCode::UNPROCESSABLE_ENTITY, &api.message)
}
