//! Canceled units go back on sale: a cancel puts the units that never shipped back in stock,
//! in the transaction that records it, and the catalog serves the new stock at once (its read
//! cache held the sold-out product). A return does not restock: what comes back may not be fit
//! to sell, and the merchant re-imports the stock it counts.

use serde_json::{Value, json};

use crate::checkout::{TOKEN_SUCCESS, complete, ready_checkout};
use crate::helpers::{TestApp, fixture_products, messages_with, stocked_product};
use crate::order_ops::{KEY, admin};

/// Whether a checkout of `quantity` × `limited-1` is ready (stock allows it).
async fn can_buy(app: &TestApp, quantity: i64) -> bool {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("limited-1", quantity) })).await;
    let ready = created["status"] == "ready_for_complete";
    assert!(ready || !messages_with(&created, "out_of_stock").is_empty(), "{created}");
    ready
}

async fn available(app: &TestApp) -> Value {
    let product = app.tool("get_product", json!({ "catalog": { "id": "limited-1" } })).await;
    product["product"]["variants"][0]["availability"]["available"].clone()
}

#[tokio::test]
async fn a_cancel_puts_its_units_back_in_stock_and_a_return_does_not() {
    let mut products = fixture_products();
    products.push(stocked_product("limited", "limited-1", 2500, 3));
    let app = crate::helpers::spawn_app_with(products, |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
    })
    .await;

    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("limited-1", 3) })).await;
    let completed = complete(&app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let id = completed["order"]["id"].as_str().unwrap().to_owned();
    // Sold out, and read so, so the read cache holds the sold-out product.
    assert_eq!(available(&app).await, json!(false));
    assert!(!can_buy(&app, 1).await);

    let order = app.tool("get_order", json!({ "id": id })).await;
    let line = order["line_items"][0]["id"].as_str().unwrap().to_owned();
    let ship = json!({ "line_items": [{ "id": line, "quantity": 1 }], "carrier": "UPS", "tracking_number": "1Z1",
                       "tracking_url": "https://track.example/1Z1" });
    let (status, body) = admin(&app, &format!("/orders/{id}/ship"), Some(ship)).await;
    assert_eq!(status, 200, "{body}");

    // One of the two unshipped units canceled: one back on sale, served at once.
    let cancel = json!({ "line_items": [{ "id": line, "quantity": 1 }], "reason": "Buyer asked" });
    let (status, body) = admin(&app, &format!("/orders/{id}/cancel"), Some(cancel)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(available(&app).await, json!(true));
    assert!(can_buy(&app, 1).await);
    assert!(!can_buy(&app, 2).await, "only the canceled unit came back");

    // The shipped unit returned: not restocked.
    let back = json!({ "line_items": [{ "id": line, "quantity": 1 }] });
    let (status, body) = admin(&app, &format!("/orders/{id}/return"), Some(back)).await;
    assert_eq!(status, 200, "{body}");
    assert!(!can_buy(&app, 2).await, "a return does not restock");

    // The rest canceled (the whole remaining unit): two on sale now.
    let (status, body) = admin(&app, &format!("/orders/{id}/cancel"), Some(json!({}))).await;
    assert_eq!(status, 200, "{body}");
    assert!(can_buy(&app, 2).await);
    assert!(!can_buy(&app, 3).await);

    // A refused cancel (nothing left) restocks nothing.
    let (status, _) = admin(&app, &format!("/orders/{id}/cancel"), Some(json!({}))).await;
    assert_ne!(status, 200);
    assert!(!can_buy(&app, 3).await);
}

// A cancel whose refund waits for the processor restocks when it is recorded, by whoever
// records it (here the sweeper), and once: the merchant's repeat after that answers the order.
#[tokio::test]
async fn a_pending_cancel_restocks_once_when_the_sweeper_records_it() {
    let (processor, url, _guard) = crate::order_refunds::start_processor().await;
    let mut products = fixture_products();
    products.push(stocked_product("limited", "limited-1", 2500, 2));
    let app = crate::helpers::spawn_app_with(products, |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
        settings.payments.http = vec![crate::order_refunds::acme(&url)];
        settings.payments.recovery_after_secs = 60;
        settings.checkout.sweep_interval_secs = 1;
    })
    .await;
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("limited-1", 2) })).await;
    let mut payment = crate::checkout::pay(TOKEN_SUCCESS);
    payment["payment"]["instruments"][0]["handler_id"] = json!("acme");
    let arguments = json!({ "meta": app.keyed_meta(), "id": created["id"], "checkout": payment });
    let completed = app.tool("complete_checkout", arguments).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let id = completed["order"]["id"].as_str().unwrap().to_owned();
    assert!(!can_buy(&app, 1).await);

    *processor.down.lock().unwrap() = true;
    let cancel = format!("/orders/{id}/cancel");
    let (status, answer) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(answer["code"], "refund_pending", "{status}: {answer}");
    assert!(!can_buy(&app, 1).await, "nothing restocked before the cancel is recorded");

    *processor.down.lock().unwrap() = false;
    app.clock.advance(61);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    while app.tool("get_order", json!({ "id": id })).await["line_items"][0]["status"] != "removed" {
        assert!(tokio::time::Instant::now() < deadline, "the sweeper did not record the cancel");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(can_buy(&app, 2).await, "the two units are back");
    assert!(!can_buy(&app, 3).await);

    // The merchant, told it was pending, repeats it: that cancel, answered with the order
    // (not 409 order_canceled, though the order now is); once only, as a refund's repeat.
    let (status, body) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!(status, 200, "the repeat answers the order: {body}");
    assert_eq!(body["status"], "canceled", "{body}");
    assert!(!can_buy(&app, 3).await, "restocked once");
    let (status, body) = admin(&app, &cancel, Some(json!({}))).await;
    assert_eq!((status.as_u16(), body["code"].as_str()), (409, Some("order_canceled")), "asked again: {body}");
}
