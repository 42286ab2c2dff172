//! The order actions as forms on the order page, and the posts they make.
//!
//! [`for_order`] offers one [`ActionForm`] per action the order allows (ship units, mark
//! shipped units delivered, record a failed delivery attempt, take back returned units, cancel
//! units not fulfilled, refund, record another adjustment); each posts to
//! `/admin/orders/{id}/{action}`, whose handler ([`apply`]) calls the matching `Commerce`
//! method and redirects (303) back to the order page, or answers the console's message page
//! (404 unknown order, 409 canceled, 422 a refusal such as a refund over what was paid). Ship,
//! cancel and return choose their units line by line, one number field per line named
//! `line:{line id}` (ship and cancel default to every remaining unit; a post without such fields
//! ships or cancels all of them). The console's guard has already checked the session, the
//! CSRF token and the Origin.

use std::collections::BTreeMap;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use ucp_domain::commerce::{OrderOutcome, StoredOrderView};
use ucp_domain::order::changes::{self, ChangeError, LineQuantity, Tracking};
use ucp_domain::order::{AdjustmentStatus, Order, OrderLine};

use super::views;
use crate::state::AppState;

/// One action form: a button posting to `path`, with a group of units per line (for the
/// actions that take some units) and extra fields (hidden, text or a choice).
pub(crate) struct ActionForm {
    pub label: String,
    /// The form's field ids start with it (no spaces).
    pub slug: &'static str,
    pub path: String,
    pub units: Option<UnitChoices>,
    pub fields: Vec<ActionField>,
}

/// How many units of each line the action takes: one number field per line, in a fieldset.
pub(crate) struct UnitChoices {
    pub legend: String,
    pub lines: Vec<UnitChoice>,
}

pub(crate) struct UnitChoice {
    /// `line:{line id}`.
    pub name: String,
    /// `{slug}-line-{index}`: line ids may hold any character, the index does not.
    pub id: String,
    pub label: String,
    pub max: i64,
    pub value: i64,
}

pub(crate) struct ActionField {
    pub name: String,
    pub label: String,
    /// `hidden`, `text` or `select` (one of `options`, the first chosen).
    pub kind: &'static str,
    pub value: String,
    pub options: Vec<&'static str>,
}

fn text(name: &str, label: &str) -> ActionField {
    ActionField {
        name: name.to_owned(),
        label: label.to_owned(),
        kind: "text",
        value: String::new(),
        options: Vec::new(),
    }
}

fn select(name: &str, label: &str, options: Vec<&'static str>) -> ActionField {
    ActionField { name: name.to_owned(), label: label.to_owned(), kind: "select", value: String::new(), options }
}

/// The name prefix of a line's units field.
const LINE_FIELD: &str = "line:";

/// What a path segment keeps as is: RFC 3986's unreserved characters.
pub(super) const SEGMENT: &percent_encoding::AsciiSet =
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

/// One number field per line with units to take (`available` of them; `all`: chosen by
/// default, else none).
fn units(
    slug: &str,
    legend: &str,
    order: &Order,
    available: fn(&OrderLine) -> i64,
    what: &str,
    all: bool,
) -> UnitChoices {
    let lines = order
        .line_items
        .iter()
        .enumerate()
        .filter(|(_, line)| available(line) > 0)
        .map(|(index, line)| {
            let max = available(line);
            UnitChoice {
                name: format!("{LINE_FIELD}{}", line.id),
                id: format!("{slug}-line-{index}"),
                label: format!("{} ({max} {what})", line.item.title),
                max,
                value: if all { max } else { 0 },
            }
        })
        .collect();
    UnitChoices { legend: legend.to_owned(), lines }
}

fn fulfilled(line: &OrderLine) -> i64 {
    line.quantity.fulfilled.max(0)
}

/// The actions the order allows.
pub(crate) fn for_order(stored: &StoredOrderView) -> Vec<ActionForm> {
    let order = &stored.view.order;
    let base = order_href(&order.id);
    let form = |slug: &'static str, label: &str, units: Option<UnitChoices>, fields: Vec<ActionField>| ActionForm {
        label: label.to_owned(),
        slug,
        path: format!("{base}/{slug}"),
        units,
        fields,
    };
    let mut forms = Vec::new();
    let open = order.line_items.iter().any(|line| remaining(line) > 0);
    if open {
        let units =
            units("ship", "Units to ship (all remaining unless changed)", order, remaining, "left to ship", true);
        forms.push(form(
            "ship",
            "Ship",
            Some(units),
            vec![
                text("carrier", "Carrier"),
                text("tracking_number", "Tracking number"),
                text("tracking_url", "Tracking URL"),
            ],
        ));
    }
    let shipped = order.line_items.iter().any(|line| line.quantity.fulfilled > 0);
    if shipped {
        forms.push(form("deliver", "Mark delivered", None, Vec::new()));
    }
    if changes::in_transit(order).values().any(|units| *units > 0) {
        forms.push(form(
            "fail-delivery",
            "Record a failed delivery attempt",
            None,
            vec![text("description", "What happened to the delivery attempt")],
        ));
    }
    if shipped {
        let units = units("return", "Units returned", order, fulfilled, "shipped", false);
        forms.push(form(
            "return",
            "Record the return",
            Some(units),
            vec![
                text("carrier", "Return carrier"),
                text("tracking_number", "Return tracking number"),
                text("tracking_url", "Return tracking URL"),
                text("description", "Reason for the return"),
            ],
        ));
    }
    if open {
        let units = units(
            "cancel",
            "Units to cancel (all remaining unless changed)",
            order,
            remaining,
            "not yet shipped",
            true,
        );
        forms.push(form("cancel", "Cancel the units", Some(units), vec![text("reason", "Reason for cancelling")]));
    }
    forms.push(form(
        "refund",
        "Refund",
        None,
        vec![text("amount", "Amount to refund (minor units)"), text("reason", "Reason for the refund")],
    ));
    forms.push(form(
        "adjust",
        "Record the adjustment",
        None,
        vec![
            text("type", "Adjustment type (such as credit, price_adjustment or dispute)"),
            text("amount", "Adjustment amount (minor units, negative for money back to the buyer)"),
            select("status", "Adjustment status", vec!["completed", "pending", "failed"]),
            text("description", "Adjustment description"),
        ],
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
    #[serde(default)]
    description: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    status: String,
    /// Every other field: the `line:{line id}` units (and the CSRF token).
    #[serde(flatten)]
    rest: BTreeMap<String, String>,
}

/// A trimmed field, `None` when empty.
fn given(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

fn refused(state: &AppState, status: StatusCode, text: &str) -> Response {
    views::message(state, status, "Not done", text)
}

/// Refusing a post that chose no unit.
const NO_UNITS: &str = "Choose at least one unit.";

/// The units a post chose, line by line (0 left out): `None` when it has no line fields; the
/// refusal's text when a quantity is no whole number or every one is 0.
fn chosen(body: &ActionBody) -> Result<Option<Vec<LineQuantity>>, &'static str> {
    let mut fields =
        body.rest.iter().filter_map(|(name, value)| Some((name.strip_prefix(LINE_FIELD)?, value))).peekable();
    if fields.peek().is_none() {
        return Ok(None);
    }
    let mut lines = Vec::new();
    for (id, value) in fields {
        let value = value.trim();
        let quantity = if value.is_empty() { Some(0) } else { value.parse::<i64>().ok().filter(|units| *units >= 0) };
        let Some(quantity) = quantity else { return Err("Each quantity must be a whole number of units, 0 or more.") };
        if quantity > 0 {
            lines.push(LineQuantity { id: id.to_owned(), quantity });
        }
    }
    if lines.is_empty() {
        return Err(NO_UNITS);
    }
    Ok(Some(lines))
}

fn tracking(body: &ActionBody) -> Tracking {
    Tracking {
        carrier: given(&body.carrier),
        tracking_number: given(&body.tracking_number),
        tracking_url: given(&body.tracking_url),
    }
}

pub(super) async fn apply(
    State(state): State<AppState>,
    Path((id, action)): Path<(String, String)>,
    body: Result<Form<ActionBody>, FormRejection>,
) -> Response {
    let Ok(Form(body)) = body else {
        return refused(&state, StatusCode::BAD_REQUEST, "The form could not be read; reload the page and try again.");
    };
    let lines = match action.as_str() {
        "ship" | "return" | "cancel" => match chosen(&body) {
            Ok(lines) => lines,
            Err(text) => return refused(&state, StatusCode::UNPROCESSABLE_ENTITY, text),
        },
        _ => None,
    };
    let outcome = match action.as_str() {
        "ship" => {
            let lines = match lines {
                Some(lines) => lines,
                None => match state.core.merchant_order(&id).await {
                    Ok(Some(order)) => all_remaining(&order.stored.order),
                    Ok(None) => return missing(&state),
                    Err(failure) => return failed(&state, failure),
                },
            };
            if lines.is_empty() {
                return refused(&state, StatusCode::CONFLICT, "Every unit of this order is already shipped.");
            }
            state.core.ship(&id, lines, tracking(&body), None).await
        }
        "deliver" => state.core.deliver(&id, None, None).await,
        "fail-delivery" => state.core.fail_delivery(&id, None, given(&body.description)).await,
        "return" => {
            let Some(lines) = lines else {
                return refused(&state, StatusCode::UNPROCESSABLE_ENTITY, NO_UNITS);
            };
            state.core.return_items(&id, lines, tracking(&body), given(&body.description)).await
        }
        "cancel" => state.core.cancel_order(&id, lines, None, given(&body.reason)).await,
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
        "adjust" => {
            let Ok(amount) = body.amount.trim().parse::<i64>() else {
                return refused(
                    &state,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "The amount must be a whole number of minor units (cents), such as 1250 or -500.",
                );
            };
            let status = match given(&body.status) {
                None => AdjustmentStatus::Completed,
                Some(status) => match AdjustmentStatus::parse(&status) {
                    Some(status) => status,
                    None => {
                        return refused(
                            &state,
                            StatusCode::UNPROCESSABLE_ENTITY,
                            "The status must be completed, pending or failed.",
                        );
                    }
                },
            };
            state.core.adjust(&id, body.kind.trim().to_owned(), amount, status, given(&body.description)).await
        }
        _ => return views::message(&state, StatusCode::NOT_FOUND, "Not found", "There is no such action."),
    };
    match outcome {
        Ok(OrderOutcome::Changed(order)) => {
            tracing::info!(target: "ucpd::audit", order = %order.stored.id, %action, "console order action");
            super::see_other(&order_href(&id))
        }
        Ok(OrderOutcome::NotFound) => missing(&state),
        Ok(OrderOutcome::Refused(refusal)) => refused(&state, refusal_status(&refusal), &refusal.to_string()),
        Err(failure) => failed(&state, failure),
    }
}

/// The status of the page that shows an order change's refusal: 409 where the order or the
/// refund is past taking it, 422 for the rest.
pub(super) fn refusal_status(refusal: &ChangeError) -> StatusCode {
    match refusal {
        ChangeError::Canceled | ChangeError::RefundAbandoned(_) | ChangeError::NotAbandoned(_) => StatusCode::CONFLICT,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

fn missing(state: &AppState) -> Response {
    views::message(state, StatusCode::NOT_FOUND, "Not found", "There is no order with that id.")
}

/// A failure below the operation: a 5xx page (logged), else the error's own message.
fn failed(state: &AppState, failure: ucp_domain::Error) -> Response {
    if matches!(failure, ucp_domain::Error::RefundPending) {
        let text = "The payment processor did not confirm the refund. It is kept: ucpd asks the processor again \
                    until it answers, then records the refund on the order. Asking for the same refund again is \
                    safe: it is the same refund.";
        return views::message(state, StatusCode::SERVICE_UNAVAILABLE, "Refund pending", text);
    }
    let api = crate::error::ApiError::from(failure);
    if api.kind.mapping().rest_status.is_server_error() {
        return views::unavailable(state, &api.message);
    }
    refused(state, StatusCode::UNPROCESSABLE_ENTITY, &api.message)
}
