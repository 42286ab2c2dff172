//! The order permalink page (issue 9 item 5): what was bought, where it goes, and the
//! timeline of what happened since — shipments with their tracking links, deliveries, failed
//! attempts, returns, cancellations and refunds — from the stored order document.

use askama::Template;
use serde_json::Value;

use super::super::html::{date, money, render};
use super::{Row, Summary, total_rows};

#[derive(Template)]
#[template(path = "handoff/order.html", config = "templates/askama.toml")]
struct OrderPage<'a> {
    business: &'a str,
    order_id: &'a str,
    placed_on: String,
    status: String,
    summary: Summary<'a>,
    shipments: Vec<Shipment<'a>>,
    /// Oldest first.
    timeline: Vec<Entry<'a>>,
}

/// One fulfillment event or adjustment, as the buyer reads it.
struct Entry<'a> {
    /// RFC 3339, as recorded.
    when: &'a str,
    title: String,
    /// `2 × Wool sweater, 1 × Mug`.
    items: String,
    carrier: Option<&'a str>,
    tracking_number: Option<&'a str>,
    tracking_url: Option<&'a str>,
    /// Money back (or charged), formatted.
    amount: Option<String>,
    description: Option<&'a str>,
}

struct Shipment<'a> {
    description: Option<&'a str>,
    /// The address, one line each.
    address: Vec<String>,
}

fn readable(code: &str) -> String {
    let text = code.replace('_', " ");
    let mut chars = text.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

fn as_slice(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The order permalink page, from the stored order document.
pub(in crate::handoff) fn order_page(business: &str, document: &Value, created_at: i64) -> String {
    let currency = document["currency"].as_str().unwrap_or("USD");
    let lines = as_slice(&document["line_items"]);
    let mut statuses: Vec<&str> = lines.iter().filter_map(|line| line["status"].as_str()).collect();
    statuses.dedup();
    let status = match statuses.as_slice() {
        ["removed"] => "Canceled".to_owned(),
        [one] => readable(one),
        [] => "Placed".to_owned(),
        _ => "Partially fulfilled".to_owned(),
    };
    let rows = lines
        .iter()
        .map(|line| {
            Row::new(
                line["item"]["title"].as_str().unwrap_or_default(),
                line["quantity"]["total"].as_i64().unwrap_or_default(),
                line["item"]["price"].as_i64().unwrap_or_default(),
                totals_amount(&line["totals"], "total").unwrap_or_default(),
                currency,
            )
        })
        .collect();
    let totals = as_slice(&document["totals"])
        .iter()
        .filter_map(|total| Some((total["type"].as_str()?, total["amount"].as_i64()?)));
    let summary = Summary { caption: "Items", rows, totals: total_rows(totals, currency), discounts: Vec::new() };
    let shipments = as_slice(&document["fulfillment"]["expectations"]).iter().map(shipment).collect();
    let timeline = timeline(document, currency);
    render(&OrderPage {
        business,
        order_id: document["id"].as_str().unwrap_or_default(),
        placed_on: date(created_at),
        status,
        summary,
        shipments,
        timeline,
    })
}

fn event_title(kind: &str) -> String {
    match kind {
        "shipped" => "Shipped".into(),
        "delivered" => "Delivered".into(),
        "failed_attempt" => "Delivery attempt failed".into(),
        "returned" => "Returned".into(),
        "cancellation" => "Canceled".into(),
        other => readable(other),
    }
}

/// Events and adjustments merged by time (a stable sort keeps each log's order).
fn timeline<'a>(document: &'a Value, currency: &str) -> Vec<Entry<'a>> {
    let titles: Vec<(&str, &str)> = as_slice(&document["line_items"])
        .iter()
        .filter_map(|line| Some((line["id"].as_str()?, line["item"]["title"].as_str()?)))
        .collect();
    let items = |lines: &Value| {
        as_slice(lines)
            .iter()
            .filter_map(|line| {
                let id = line["id"].as_str()?;
                let title = titles.iter().find(|(known, _)| *known == id).map_or(id, |(_, title)| title);
                Some(format!("{} × {title}", line["quantity"].as_i64()?.abs()))
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut entries: Vec<Entry<'a>> = as_slice(&document["fulfillment"]["events"])
        .iter()
        .map(|event| Entry {
            when: event["occurred_at"].as_str().unwrap_or_default(),
            title: event_title(event["type"].as_str().unwrap_or_default()),
            items: items(&event["line_items"]),
            carrier: event["carrier"].as_str(),
            tracking_number: event["tracking_number"].as_str(),
            tracking_url: event["tracking_url"]
                .as_str()
                .filter(|url| url.starts_with("https://") || url.starts_with("http://")),
            amount: None,
            description: event["description"].as_str(),
        })
        .collect();
    entries.extend(as_slice(&document["adjustments"]).iter().map(|adjustment| {
        let status = adjustment["status"].as_str().unwrap_or_default();
        let mut title = event_title(adjustment["type"].as_str().unwrap_or_default());
        if status != "completed" {
            title = format!("{title} ({status})");
        }
        let amount = totals_amount(&adjustment["totals"], "total").map(|amount| {
            if amount < 0 {
                format!("{} back to you", money(amount.saturating_neg(), currency))
            } else {
                money(amount, currency)
            }
        });
        Entry {
            when: adjustment["occurred_at"].as_str().unwrap_or_default(),
            title,
            items: items(&adjustment["line_items"]),
            carrier: None,
            tracking_number: None,
            tracking_url: None,
            amount,
            description: adjustment["description"].as_str(),
        }
    }));
    entries.sort_by(|left, right| left.when.cmp(right.when));
    entries
}

fn shipment(expectation: &Value) -> Shipment<'_> {
    let destination = &expectation["destination"];
    let joined = |parts: &[&Value]| parts.iter().filter_map(|part| part.as_str()).collect::<Vec<_>>().join(" ");
    let name = joined(&[&destination["first_name"], &destination["last_name"]]);
    let locality =
        joined(&[&destination["address_locality"], &destination["address_region"], &destination["postal_code"]]);
    let address = [
        Some(name),
        destination["street_address"].as_str().map(str::to_owned),
        destination["extended_address"].as_str().map(str::to_owned),
        Some(locality),
        destination["address_country"].as_str().map(str::to_owned),
    ]
    .into_iter()
    .flatten()
    .filter(|part| !part.is_empty())
    .collect();
    Shipment { description: expectation["description"].as_str(), address }
}

fn totals_amount(totals: &Value, kind: &str) -> Option<i64> {
    totals.as_array()?.iter().find(|total| total["type"] == kind)?["amount"].as_i64()
}
