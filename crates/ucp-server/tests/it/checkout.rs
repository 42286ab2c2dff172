//! The purchase over MCP: checklist 108-158 (cart, checkout, order).

use serde_json::{Value, json};

use crate::helpers::{TestApp, spawn_app};
use crate::schema;

pub fn address() -> Value {
    json!({
        "first_name": "Ada", "last_name": "Lovelace", "street_address": "1 Infinite Loop",
        "address_locality": "Cupertino", "address_region": "CA", "postal_code": "95014", "address_country": "US"
    })
}

pub fn ready_checkout(item: &str, quantity: i64) -> Value {
    json!({
        "line_items": [{ "item": { "id": item }, "quantity": quantity }],
        "buyer": { "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com" },
        "fulfillment": { "methods": [{ "type": "shipping", "destinations": [address()], "groups": [{ "selected_option_id": "standard" }] }] }
    })
}

pub fn pay(token: &str) -> Value {
    json!({ "payment": { "instruments": [{ "id": "pi_1", "handler_id": "sandbox", "type": "card", "credential": { "type": "token", "token": token } }] } })
}

pub fn key() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub async fn complete(app: &TestApp, id: &str, token: &str) -> Value {
    let arguments = json!({
        "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() },
        "id": id,
        "checkout": pay(token),
    });
    app.tool("complete_checkout", arguments).await
}

/// The checkout response validated against checkout.json composed with its extensions.
pub fn valid_checkout(body: &Value) {
    schema::assert_valid("shopping/checkout.json", body);
    schema::assert_valid("shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout", body);
    schema::assert_valid("shopping/discount.json#/$defs/dev.ucp.shopping.checkout", body);
}

// Checklist 119, 120, 124, 130, 131, 151: the whole purchase, first item to placed order.
#[tokio::test]
async fn checkout_walks_from_incomplete_to_a_placed_order() {
    let app = spawn_app().await;
    let created = app
        .tool(
            "create_checkout",
            json!({ "checkout": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 2 }] } }),
        )
        .await;
    valid_checkout(&created);
    assert_eq!(created["status"], "incomplete");
    assert!(created["ucp"]["payment_handlers"]["dev.ucpd.sandbox"].is_array(), "{created}");
    let paths: Vec<&str> = created["messages"].as_array().unwrap().iter().filter_map(|m| m["path"].as_str()).collect();
    assert!(paths.contains(&"$"), "email required: {paths:?}");
    assert!(paths.contains(&"$.fulfillment.methods[0].destinations"), "{paths:?}");
    let id = created["id"].as_str().unwrap().to_owned();

    let mut update = ready_checkout("mug-1", 2);
    update["line_items"][0]["id"] = created["line_items"][0]["id"].clone();
    let updated = app.tool("update_checkout", json!({ "id": id, "checkout": update })).await;
    valid_checkout(&updated);
    assert_eq!(updated["status"], "ready_for_complete", "{updated}");
    assert_eq!(updated["line_items"][0]["id"], created["line_items"][0]["id"], "line ids are stable");
    let totals = updated["totals"].as_array().unwrap();
    let total = totals.iter().find(|t| t["type"] == "total").unwrap()["amount"].as_i64().unwrap();
    let sum: i64 = totals.iter().filter(|t| t["type"] != "total").map(|t| t["amount"].as_i64().unwrap()).sum();
    assert_eq!(sum, total);
    // 2 x 1500 = 3000; standard shipping 599 (free only from 5000); CA tax 7.25% of 3000 = 218.
    assert_eq!(total, 3000 + 599 + 218, "{totals:?}");

    let completed = complete(&app, &id, crate::checkout::TOKEN_SUCCESS).await;
    valid_checkout(&completed);
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed.get("continue_url").is_none());
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    // The permalink names the order and carries its page token (issue 8 item 6).
    let permalink = completed["order"]["permalink_url"].as_str().unwrap();
    assert!(permalink.contains(&format!("/orders/{order_id}?t=")), "{permalink}");

    let order = app.tool("get_order", json!({ "id": order_id })).await;
    schema::assert_valid("shopping/order.json", &order);
    assert_eq!(order["checkout_id"], id.as_str());
    assert_eq!(order["currency"], "USD");
    assert_eq!(order["line_items"][0]["status"], "processing");
    assert_eq!(order["line_items"][0]["quantity"], json!({ "original": 2, "total": 2, "fulfilled": 0 }));
    assert_eq!(
        order["ucp"]["capabilities"].as_object().unwrap().keys().collect::<Vec<_>>(),
        vec!["dev.ucp.shopping.order"]
    );
    assert!(
        app.data_dir.path().join("outbox").join(format!("{order_id}.eml")).exists(),
        "confirmation email (checklist 142)"
    );

    // Checklist 132: completed is immutable.
    let again = app.tool("update_checkout", json!({ "id": id, "checkout": ready_checkout("mug-1", 5) })).await;
    assert_eq!(again["status"], "completed");
    assert_eq!(again["line_items"][0]["quantity"], 2);
    assert_eq!(again["messages"].as_array().unwrap().last().unwrap()["code"], "checkout_completed");
    let twice = complete(&app, &id, crate::checkout::TOKEN_SUCCESS).await;
    assert_eq!(twice["order"]["id"], order_id.as_str(), "no second order");
}

pub const TOKEN_SUCCESS: &str = "tok_sandbox_success";
