//! The orders pages: a searchable list (newest first, keyset pages) and one order with its
//! lines, totals and a timeline of whatever events and adjustments the order holds.

use askama::Template;
use axum::Extension;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::Value;
use ucp_domain::commerce::StoredOrderView;
use ucp_domain::store::OrderFilter;

use super::actions::{self, ActionForm, order_href};
use super::views::{self, Frame, Section, render, timestamp};
use super::{Session, html};
use crate::handoff::html::money;
use crate::state::AppState;

/// Orders per page.
const PAGE_SIZE: usize = 50;
/// The longest search or platform filter looked at.
const MAX_FILTER_CHARS: usize = 200;

#[derive(Debug, Default, Deserialize)]
pub(super) struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    platform: String,
    before: Option<i64>,
}

struct OrderRow {
    id: String,
    href: String,
    placed: String,
    platform: String,
    status: String,
    total: String,
}

#[derive(Template)]
#[template(path = "console/orders.html", config = "templates/askama.toml")]
struct OrdersPage {
    frame: Frame,
    q: String,
    platform: String,
    orders: Vec<OrderRow>,
    next: Option<String>,
}

fn clip(text: &str) -> String {
    text.trim().chars().take(MAX_FILTER_CHARS).collect()
}

fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn grand_total(stored: &StoredOrderView) -> String {
    let order = &stored.view.order;
    order
        .totals
        .iter()
        .find(|total| total.kind == "total")
        .map(|total| money(total.amount, &order.currency))
        .unwrap_or_default()
}

/// The order's status as its document states it, else its lines' statuses.
fn status_of(document: &Value, stored: &StoredOrderView) -> String {
    if let Some(status) = document.get("status").and_then(Value::as_str) {
        return status.to_owned();
    }
    let mut statuses: Vec<String> = stored
        .view
        .order
        .line_items
        .iter()
        .filter_map(|line| serde_json::to_value(line.status).ok()?.as_str().map(str::to_owned))
        .collect();
    statuses.dedup();
    statuses.join(", ")
}

pub(super) async fn list(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let Query(query) = query.unwrap_or_default();
    let (q, platform) = (clip(&query.q), clip(&query.platform));
    let filter = OrderFilter {
        platform: Some(platform.clone()).filter(|platform| !platform.is_empty()),
        query: Some(q.clone()).filter(|q| !q.is_empty()),
        limit: PAGE_SIZE + 1,
        before: query.before,
    };
    let orders = match views::loaded(&state, "listing orders", state.core.search_orders(&filter)).await {
        Ok(orders) => orders,
        Err(page) => return page,
    };
    let more = orders.len() > PAGE_SIZE;
    let rows: Vec<OrderRow> = orders
        .iter()
        .take(PAGE_SIZE)
        .map(|stored| {
            let document = serde_json::to_value(&stored.view.order).unwrap_or(Value::Null);
            OrderRow {
                id: stored.view.order.id.clone(),
                href: order_href(&stored.view.order.id),
                placed: timestamp(stored.view.created_at),
                platform: stored.platform.clone(),
                status: status_of(&document, stored),
                total: grand_total(stored),
            }
        })
        .collect();
    let next = match (more, orders.get(PAGE_SIZE - 1)) {
        (true, Some(last)) => Some(format!(
            "/admin/orders?q={}&platform={}&before={}",
            encode(&q),
            encode(&platform),
            last.view.created_at
        )),
        _ => None,
    };
    let page =
        OrdersPage { frame: Frame::new(&state, Section::Orders, Some(&session)), q, platform, orders: rows, next };
    html(StatusCode::OK, render(&page))
}

struct LineRow {
    title: String,
    quantity: i64,
    fulfilled: i64,
    status: String,
    total: String,
}

struct TotalRow {
    kind: String,
    amount: String,
}

/// One entry of the timeline: when, what, and the rest of its fields in words.
struct Entry {
    when: String,
    what: String,
    details: String,
}

#[derive(Template)]
#[template(path = "console/order.html", config = "templates/askama.toml")]
struct OrderPage {
    frame: Frame,
    id: String,
    checkout_id: String,
    platform: String,
    placed: String,
    status: String,
    lines: Vec<LineRow>,
    totals: Vec<TotalRow>,
    timeline: Vec<Entry>,
    actions: Vec<ActionForm>,
}

/// A scalar as text; arrays of line references as `line_1 ×2`; other values compactly.
fn describe(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(describe).collect::<Vec<_>>().join("; "),
        Value::Object(fields) => match (fields.get("id"), fields.get("quantity")) {
            (Some(id), Some(quantity)) => format!("{} \u{d7}{}", describe(id), describe(quantity)),
            _ => fields.iter().map(|(key, value)| format!("{key}: {}", describe(value))).collect::<Vec<_>>().join(", "),
        },
    }
}

const WHEN: &[&str] = &["occurred_at", "created_at", "at", "timestamp"];
const WHAT: &[&str] = &["type", "kind", "status"];

fn entry(source: &str, event: &Value) -> Option<Entry> {
    let fields = event.as_object()?;
    let first = |names: &[&str]| names.iter().find_map(|name| fields.get(*name).map(describe));
    let when = first(WHEN).unwrap_or_default();
    let what = format!("{source}: {}", first(WHAT).unwrap_or_else(|| "event".into()));
    let details = fields
        .iter()
        .filter(|(key, _)| !WHEN.contains(&key.as_str()) && !WHAT.contains(&key.as_str()))
        .map(|(key, value)| format!("{}: {}", key.replace('_', " "), describe(value)))
        .collect::<Vec<_>>()
        .join(" \u{b7} ");
    Some(Entry { when, what, details })
}

/// Every fulfillment event and adjustment the order's document holds, oldest first
/// (RFC 3339 times sort as text).
fn timeline(document: &Value, placed: &str) -> Vec<Entry> {
    let mut entries = vec![Entry { when: placed.to_owned(), what: "Order placed".into(), details: String::new() }];
    let lists = [("Fulfillment", document.pointer("/fulfillment/events")), ("Adjustment", document.get("adjustments"))];
    let mut later: Vec<Entry> = lists
        .into_iter()
        .filter_map(|(source, list)| Some((source, list?.as_array()?)))
        .flat_map(|(source, list)| list.iter().take(500).filter_map(move |event| entry(source, event)))
        .collect();
    later.sort_by(|a, b| a.when.cmp(&b.when));
    entries.extend(later);
    entries
}

pub(super) async fn show(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    Path(id): Path<String>,
) -> Response {
    let stored = match views::loaded(&state, "loading an order", state.core.order_for_merchant(&id)).await {
        Ok(Some(stored)) => stored,
        Ok(None) => {
            return views::message(&state, StatusCode::NOT_FOUND, "Order not found", "No order has this number.");
        }
        Err(page) => return page,
    };
    let order = &stored.view.order;
    let document = serde_json::to_value(order).unwrap_or(Value::Null);
    let placed = timestamp(stored.view.created_at);
    let lines = order
        .line_items
        .iter()
        .map(|line| LineRow {
            title: line.item.title.clone(),
            quantity: line.quantity.total,
            fulfilled: line.quantity.fulfilled,
            status: serde_json::to_value(line.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            total: line
                .totals
                .iter()
                .find(|total| total.kind == "total")
                .map(|total| money(total.amount, &order.currency))
                .unwrap_or_default(),
        })
        .collect();
    let totals = order
        .totals
        .iter()
        .map(|total| TotalRow {
            kind: total.display_text.clone().unwrap_or_else(|| total.kind.replace('_', " ")),
            amount: money(total.amount, &order.currency),
        })
        .collect();
    let page = OrderPage {
        frame: Frame::new(&state, Section::Orders, Some(&session)),
        id: order.id.clone(),
        checkout_id: order.checkout_id.clone(),
        platform: stored.platform.clone(),
        status: status_of(&document, &stored),
        timeline: timeline(&document, &placed),
        placed,
        lines,
        totals,
        actions: actions::for_order(&stored),
    };
    html(StatusCode::OK, render(&page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_renders_whatever_events_the_order_holds() {
        let document = serde_json::json!({
            "fulfillment": { "events": [
                { "id": "e2", "type": "delivered", "occurred_at": "2026-04-09T10:00:00Z", "line_items": [{ "id": "l1", "quantity": 1 }] },
                { "id": "e1", "type": "shipped", "occurred_at": "2026-04-08T10:00:00Z", "tracking_number": "1Z" }
            ] },
            "adjustments": [{ "type": "refund", "created_at": "2026-04-10T00:00:00Z", "amount": 500 }]
        });
        let entries = timeline(&document, "placed");
        let whats: Vec<&str> = entries.iter().map(|entry| entry.what.as_str()).collect();
        assert_eq!(whats, ["Order placed", "Fulfillment: shipped", "Fulfillment: delivered", "Adjustment: refund"]);
        assert!(entries[1].details.contains("tracking number: 1Z"));
        assert!(entries[2].details.contains("l1 \u{d7}1"));
        assert!(entries[3].details.contains("amount: 500"));
    }
}
