//! What a checkout is asked for and cannot give: a pickup method (checkout.md §2, checklist
//! 124: a fulfillment problem is a recoverable error, never a silent change of method) and a
//! currency the store does not sell in (a note, as the catalog gives).

use serde_json::json;

use crate::checkout::ready_checkout;
use crate::checkout_edges::{assert_checkout, create, get, update_of};
use crate::helpers::spawn_app;

fn codes(body: &serde_json::Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|message| {
            (message["code"].as_str().unwrap_or("").to_owned(), message["type"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn a_pickup_method_is_refused_not_shipped() {
    let app = spawn_app().await;
    // Shipping and pickup side by side, everything else ready: before, the pickup was dropped
    // and the checkout could be completed and charged shipping for all of it.
    let mut both = ready_checkout("sweater-m", 1);
    both["fulfillment"]["methods"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "type": "pickup", "destinations": [{ "id": "store_1", "name": "Main St" }] }));
    let created = create(&app, both).await;
    assert_eq!(created["status"], "incomplete", "{created}");
    let refusal = created["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["code"] == "fulfillment_method_unsupported")
        .unwrap_or_else(|| panic!("the pickup is named: {created}"));
    assert_eq!((&refusal["severity"], &refusal["path"]), (&json!("recoverable"), &json!("$.fulfillment")));
    assert!(refusal["content"].as_str().unwrap().contains("pickup"), "{refusal}");
    let id = created["id"].as_str().unwrap();
    assert_eq!(get(&app, id).await["status"], "incomplete", "kept on every read");

    // Pickup alone: the same refusal, not only "a shipping address is required".
    let alone = json!({ "methods": [{ "type": "pickup" }] });
    let body = update_of(&created, "sweater-m", 1, json!({ "fulfillment": alone }));
    let updated = app.tool("update_checkout", json!({ "id": id, "checkout": body })).await;
    assert_checkout(&updated);
    assert!(codes(&updated).iter().any(|(code, _)| code == "fulfillment_method_unsupported"), "{updated}");

    // Dropping the pickup method makes it ready, at the shipping price shown all along.
    let shipping_only = update_of(&created, "sweater-m", 1, json!({}));
    let ready = app.tool("update_checkout", json!({ "id": id, "checkout": shipping_only })).await;
    assert_checkout(&ready);
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    assert_eq!(ready["totals"], created["totals"]);
}

#[tokio::test]
async fn a_currency_the_store_does_not_sell_in_is_noted() {
    let app = spawn_app().await;
    let mut asked = ready_checkout("sweater-m", 1);
    asked["context"] = json!({ "address_country": "US", "currency": "eur" });
    let created = create(&app, asked).await;
    assert_eq!(created["currency"], "USD");
    assert_eq!(created["status"], "ready_for_complete", "a note does not hold the checkout: {created}");
    assert_eq!(created["context"]["currency"], "EUR", "echoed as read");
    let note = created["messages"].as_array().unwrap().iter().find(|message| message["code"] == "currency_unavailable");
    let note = note.unwrap_or_else(|| panic!("{created}"));
    assert_eq!((&note["type"], &note["path"]), (&json!("info"), &json!("$.context.currency")));

    // Carts too; the store's own currency, or none, needs no note.
    let cart = |currency: serde_json::Value| json!({ "cart": { "line_items": [{ "item": { "id": "sweater-m" }, "quantity": 1 }], "context": { "currency": currency } } });
    let noted = app.tool("create_cart", cart(json!("GBP"))).await;
    assert!(codes(&noted).contains(&("currency_unavailable".into(), "info".into())), "{noted}");
    for quiet in [json!("USD"), json!(7)] {
        let body = app.tool("create_cart", cart(quiet.clone())).await;
        assert_eq!(body["ucp"]["status"], "success", "{quiet}: {body}");
        assert!(!codes(&body).iter().any(|(code, _)| code == "currency_unavailable"), "{quiet}: {body}");
    }
}
