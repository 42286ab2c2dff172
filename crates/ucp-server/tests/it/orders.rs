//! Orders over MCP: checklist 149-152, 158.

use serde_json::{Value, json};

use crate::checkout::{TOKEN_SUCCESS, complete, ready_checkout};
use crate::helpers::{ALL_CAPABILITIES, PlatformServer, TestApp, assert_integer_money, platform_profile, spawn_app};
use crate::schema;

async fn place(app: &TestApp, item: &str, quantity: i64) -> (Value, Value) {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout(item, quantity) })).await;
    let completed = complete(app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    (created, completed)
}

fn assert_error(body: &Value, code: &str) {
    schema::error_response(body);
    assert_eq!(body["ucp"]["status"], "error", "{body}");
    assert!(body.get("id").is_none() && body.get("line_items").is_none(), "no order data leaks: {body}");
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(body["messages"][0]["code"], code, "{body}");
    assert_eq!(body["messages"][0]["severity"], "unrecoverable", "{body}");
}

// Checklist 151, 152, 158: the order snapshot.
#[tokio::test]
async fn get_order_returns_a_valid_snapshot() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("sweater-m", 2);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "mug-1" }, "quantity": 1 }));
    payload["discounts"] = json!({ "codes": ["WELCOME10"] });
    let created = app.tool("create_checkout", json!({ "checkout": payload })).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    let completed = complete(&app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    let order_id = completed["order"]["id"].as_str().unwrap();

    let order = app.tool("get_order", json!({ "id": order_id })).await;
    schema::assert_valid("shopping/order.json", &order);
    assert_integer_money(&order);
    assert_eq!(order["id"], order_id);
    assert_eq!(order["checkout_id"], created["id"]);
    assert_eq!(order["permalink_url"], completed["order"]["permalink_url"]);
    assert_eq!(order["currency"], completed["currency"], "checklist 151: the checkout's currency");
    assert_eq!(order["totals"], completed["totals"], "the order keeps the completed totals");
    assert!(order["fulfillment"].is_object());
    let expectations = order["fulfillment"]["expectations"].as_array().unwrap();
    assert_eq!(expectations.len(), 1);
    assert_eq!(expectations[0]["destination"]["postal_code"], "95014");
    assert_eq!(expectations[0]["method_type"], "shipping");
    // Checklist 152: nothing fulfilled yet → processing, quantities original = total.
    let lines = order["line_items"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    for (line, quantity) in lines.iter().zip([2, 1]) {
        assert_eq!(line["status"], "processing", "{line}");
        assert_eq!(line["quantity"], json!({ "original": quantity, "total": quantity, "fulfilled": 0 }));
    }
    assert_eq!(lines[0]["totals"], completed["line_items"][0]["totals"]);
    // Checklist 158: only the order capability; no payment handlers.
    let capabilities: Vec<&String> = order["ucp"]["capabilities"].as_object().unwrap().keys().collect();
    assert_eq!(capabilities, ["dev.ucp.shopping.order"]);
    assert!(order["ucp"].get("payment_handlers").is_none());
    assert_eq!(order["ucp"]["status"], "success");

    // A later catalog price change does not alter the placed order.
    let again = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(again, order);
}

// Checklist 150: unknown order id → not_found error response.
#[tokio::test]
async fn unknown_order_is_not_found() {
    let app = spawn_app().await;
    assert_error(&app.tool("get_order", json!({ "id": "ord_nope" })).await, "not_found");
}

// Checklist 149: another platform cannot read the order, and learns nothing: the answer is
// the same as for an id that does not exist (issue 8 item 6).
#[tokio::test]
async fn another_platform_cannot_tell_the_order_exists() {
    let app = spawn_app().await;
    let (_, completed) = place(&app, "mug-1", 1).await;
    let order_id = completed["order"]["id"].as_str().unwrap();
    let other = PlatformServer::start(platform_profile(ALL_CAPABILITIES)).await;
    let body = app.tool("get_order", json!({ "meta": app.meta_for(&other.profile_url()), "id": order_id })).await;
    assert_error(&body, "not_found");
    let missing = app.tool("get_order", json!({ "meta": app.meta_for(&other.profile_url()), "id": "ord_nope" })).await;
    assert_eq!(body["messages"], missing["messages"], "not yours reads as does not exist");
    // Nor its checkout.
    let body =
        app.tool("get_checkout", json!({ "meta": app.meta_for(&other.profile_url()), "id": completed["id"] })).await;
    assert_error(&body, "not_found");
    // The owner still can.
    let mine = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(mine["id"], order_id);
}
