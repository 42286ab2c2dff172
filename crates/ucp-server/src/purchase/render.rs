//! Sessions and orders as UCP bodies (cart.json, checkout.json + fulfillment and discount
//! extensions, order.json).

use serde_json::{Map, Value, json};
use ucp_domain::checkout::{Address, Message, MessageKind, Priced, PricedLine, Session, SessionKind, Status, Total};

use super::Call;

pub(super) fn totals(totals: &[Total]) -> Value {
    totals
        .iter()
        .map(|total| {
            let mut entry = json!({ "type": total.kind, "amount": total.amount });
            if let Some(text) = &total.display_text {
                entry["display_text"] = text.clone().into();
            }
            entry
        })
        .collect()
}

pub(super) fn message(message: &Message) -> Value {
    let kind = match message.kind {
        MessageKind::Error => "error",
        MessageKind::Warning => "warning",
        MessageKind::Info => "info",
    };
    let mut entry = json!({ "type": kind, "code": message.code, "content": message.content });
    if let Some(severity) = message.severity {
        entry["severity"] = severity.as_str().into();
    }
    if let Some(path) = &message.path {
        entry["path"] = path.clone().into();
    }
    entry
}

fn address(address: &Address) -> Value {
    serde_json::to_value(address).unwrap_or_else(|_| json!({}))
}

fn rfc3339(seconds: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(seconds)
        .ok()
        .and_then(|instant| instant.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_default()
}

/// A line's `item` (`types/item.json`): what was bought, at what unit price.
fn item(line: &PricedLine) -> Value {
    let mut item = json!({ "id": line.item_id, "title": line.title, "price": line.unit_price });
    if let Some(url) = &line.image_url {
        item["image_url"] = url.clone().into();
    }
    item
}

/// A cart or checkout response body.
pub(super) fn session(call: &Call<'_>, session: &Session, priced: &Priced, extra: Vec<Message>) -> Value {
    let base = &call.state.profile.base_url;
    let mut ucp = call.envelope.ucp();
    if session.kind == SessionKind::Checkout {
        ucp["payment_handlers"] = call.state.payments.advertised_for(call.payment_context(session));
    }
    let line_items: Vec<Value> = priced
        .lines
        .iter()
        .map(|line| {
            let item = item(line);
            json!({ "id": line.id, "item": item, "quantity": line.quantity, "totals": totals(&line.totals) })
        })
        .collect();
    let mut body = Map::new();
    body.insert("ucp".into(), ucp);
    body.insert("id".into(), session.id.clone().into());
    body.insert("line_items".into(), line_items.into());
    if let Some(buyer) = &session.buyer {
        body.insert("buyer".into(), serde_json::to_value(buyer).unwrap_or_default());
    }
    if let Some(context) = &session.context {
        body.insert("context".into(), serde_json::to_value(context).unwrap_or_default());
    }
    if session.kind == SessionKind::Checkout {
        body.insert("status".into(), priced.status.as_str().into());
    }
    body.insert("currency".into(), session.currency.clone().into());
    body.insert("totals".into(), totals(&priced.totals));
    let messages: Vec<Value> = priced.messages.iter().chain(extra.iter()).map(message).collect();
    if !messages.is_empty() {
        body.insert("messages".into(), messages.into());
    }
    if session.kind == SessionKind::Checkout {
        body.insert("links".into(), links(call));
    }
    body.insert("expires_at".into(), rfc3339(session.expires_at).into());
    let terminal = priced.status.is_terminal();
    if !terminal {
        let path = match session.kind {
            SessionKind::Cart => "cart",
            SessionKind::Checkout => "checkout",
        };
        body.insert("continue_url".into(), format!("{base}/{path}/{}", session.id).into());
    }
    if let (Status::Completed, Some(order_id)) = (priced.status, &session.order_id) {
        body.insert("order".into(), json!({ "id": order_id, "permalink_url": format!("{base}/orders/{order_id}") }));
    }
    if session.kind == SessionKind::Checkout
        && call.fulfillment
        && let Some(fulfillment) = &priced.fulfillment
    {
        let mut method = json!({
            "id": fulfillment.method_id,
            "type": "shipping",
            "line_item_ids": fulfillment.line_item_ids,
            "destinations": fulfillment.destinations.iter().map(|destination| {
                let mut value = address(&destination.address);
                value["id"] = destination.id.clone().into();
                value
            }).collect::<Vec<_>>(),
        });
        // Always present (null when nothing is selected): messages about a missing or invalid
        // selection point here, and every message path must resolve (checklist 127).
        method["selected_destination_id"] = fulfillment.selected_destination_id.clone().into();
        if let Some(group) = &fulfillment.group {
            let options: Vec<Value> = group
                .options
                .iter()
                .map(|option| {
                    let mut value = json!({
                        "id": option.id,
                        "title": option.title,
                        "totals": [{ "type": "total", "amount": option.amount }],
                        "earliest_fulfillment_time": rfc3339(call.now() + i64::from(option.min_days) * 86_400),
                        "latest_fulfillment_time": rfc3339(call.now() + i64::from(option.max_days) * 86_400),
                    });
                    if let Some(description) = &option.description {
                        value["description"] = description.clone().into();
                    }
                    if let Some(carrier) = &option.carrier {
                        value["carrier"] = carrier.clone().into();
                    }
                    value
                })
                .collect();
            let group_value = json!({
                "id": group.id,
                "line_item_ids": group.line_item_ids,
                "options": options,
                "selected_option_id": group.selected_option_id,
            });
            method["groups"] = json!([group_value]);
        }
        body.insert(
            "fulfillment".into(),
            json!({
                "methods": [method],
                "available_methods": [{
                    "type": "shipping",
                    "line_item_ids": fulfillment.line_item_ids,
                    "fulfillable_on": "now",
                    "description": "Shipped to your address; options and prices appear once an address is given."
                }]
            }),
        );
    }
    if call.discounts {
        let applied: Vec<Value> = priced
            .applied_discounts
            .iter()
            .map(|discount| {
                let mut value = json!({
                    "title": discount.title,
                    "amount": discount.amount,
                    "automatic": discount.automatic,
                    "method": discount.method,
                    "priority": discount.priority,
                });
                if let Some(code) = &discount.code {
                    value["code"] = code.clone().into();
                }
                if !discount.allocations.is_empty() {
                    value["allocations"] = discount
                        .allocations
                        .iter()
                        .map(|(path, amount)| json!({ "path": path, "amount": amount }))
                        .collect();
                }
                value
            })
            .collect();
        body.insert("discounts".into(), json!({ "codes": priced.discount_codes, "applied": applied }));
    }
    if let Some(cart_id) = &session.cart_id {
        body.insert("cart_id".into(), cart_id.clone().into());
    }
    if let Some(attribution) = &session.attribution {
        body.insert("attribution".into(), Value::Object(attribution.clone()));
    }
    Value::Object(body)
}

fn links(call: &Call<'_>) -> Value {
    let base = &call.state.profile.base_url;
    let configured = &call.state.settings.checkout.links;
    let mut links = Vec::new();
    for (kind, slug) in [
        ("privacy_policy", "privacy"),
        ("terms_of_service", "terms"),
        ("refund_policy", "refunds"),
        ("shipping_policy", "shipping"),
    ] {
        let url = configured.get(kind).cloned().unwrap_or_else(|| format!("{base}/policies/{slug}"));
        links.push(json!({ "type": kind, "url": url }));
    }
    for (kind, url) in configured {
        if !matches!(kind.as_str(), "privacy_policy" | "terms_of_service" | "refund_policy" | "shipping_policy") {
            links.push(json!({ "type": kind, "url": url }));
        }
    }
    links.into()
}

/// The order body (without its `ucp` envelope) as stored at completion.
pub(super) fn order_document(session: &Session, priced: &Priced, order_id: &str, permalink: &str) -> Value {
    let line_items: Vec<Value> = priced
        .lines
        .iter()
        .map(|line| {
            let item = item(line);
            json!({
                "id": line.id,
                "item": item,
                "quantity": { "original": line.quantity, "total": line.quantity, "fulfilled": 0 },
                "totals": totals(&line.totals),
                "status": "processing",
            })
        })
        .collect();
    let mut expectations = Vec::new();
    if let Some(fulfillment) = &priced.fulfillment
        && let Some(destination) = fulfillment
            .selected_destination_id
            .as_ref()
            .and_then(|id| fulfillment.destinations.iter().find(|destination| &destination.id == id))
    {
        let description = fulfillment
            .group
            .as_ref()
            .and_then(|group| {
                group.selected_option_id.as_ref().and_then(|id| group.options.iter().find(|option| &option.id == id))
            })
            .map(|option| {
                format!("{}: arrives in {}-{} business days", option.title, option.min_days, option.max_days)
            });
        let mut expectation = json!({
            "id": "exp_1",
            "line_items": priced.lines.iter().map(|line| json!({ "id": line.id, "quantity": line.quantity })).collect::<Vec<_>>(),
            "method_type": "shipping",
            "destination": address(&destination.address),
            "fulfillable_on": "now",
        });
        if let Some(description) = description {
            expectation["description"] = description.into();
        }
        expectations.push(expectation);
    }
    let mut document = json!({
        "id": order_id,
        "checkout_id": session.id,
        "permalink_url": permalink,
        "line_items": line_items,
        "fulfillment": { "expectations": expectations, "events": [] },
        "currency": session.currency,
        "totals": totals(&priced.totals),
    });
    if let Some(attribution) = &session.attribution {
        document["attribution"] = Value::Object(attribution.clone());
    }
    document
}
