//! The last units: 64 concurrent completes for 10 units sell exactly 10 (no oversell).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::checkout::{TOKEN_SUCCESS, key, pay, ready_checkout};
use crate::helpers::{fixture_products, messages_with, spawn_app_with, stocked_product};

const STOCK: usize = 10;
const BUYERS: usize = 64;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_completes_never_oversell() {
    let mut products = fixture_products();
    products.push(stocked_product("limited", "limited-1", 2500, STOCK as i64));
    let app = Arc::new(spawn_app_with(products, |_, _| {}).await);

    let mut ids = Vec::with_capacity(BUYERS);
    for _ in 0..BUYERS {
        let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("limited-1", 1) })).await;
        assert_eq!(created["status"], "ready_for_complete", "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }

    // Read first, so the served product is cached in stock: the orders must replace it.
    let product = app.tool("get_product", json!({ "catalog": { "id": "limited-1" } })).await;
    assert_eq!(product["product"]["variants"][0]["availability"]["available"], json!(true), "{product}");
    let lookup = app.tool("lookup_catalog", json!({ "catalog": { "ids": ["limited-1"] } })).await;
    assert_eq!(lookup["products"][0]["variants"][0]["availability"]["available"], json!(true), "{lookup}");

    let mut tasks = tokio::task::JoinSet::new();
    for id in ids.clone() {
        let app = app.clone();
        tasks.spawn(async move {
            let arguments = json!({
                "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() },
                "id": id,
                "checkout": pay(TOKEN_SUCCESS),
            });
            (id, app.tool("complete_checkout", arguments).await)
        });
    }
    let mut completed = Vec::new();
    let mut refused = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (id, body) = joined.expect("task");
        assert_eq!(body["id"], id.as_str());
        if body["status"] == "completed" {
            assert!(body["order"]["id"].is_string(), "{body}");
            completed.push(body);
        } else {
            refused.push(body);
        }
    }
    assert_eq!(completed.len(), STOCK, "exactly the stock is sold");
    assert_eq!(refused.len(), BUYERS - STOCK);
    for body in &refused {
        assert!(body.get("order").is_none(), "{body}");
        assert_ne!(body["status"], "completed");
        let out = messages_with(body, "out_of_stock");
        assert!(!out.is_empty(), "a refused buyer is told it sold out: {body}");
        assert_eq!(out[0]["severity"], "recoverable");
    }
    let mut order_ids: Vec<&str> = completed.iter().map(|body| body["order"]["id"].as_str().unwrap()).collect();
    order_ids.sort_unstable();
    order_ids.dedup();
    assert_eq!(order_ids.len(), STOCK, "ten distinct orders");
    for order_id in &order_ids {
        let order = app.tool("get_order", json!({ "id": order_id })).await;
        assert_eq!(order["line_items"][0]["item"]["id"], "limited-1");
    }

    // The stored checkouts agree with what the buyers were told.
    let mut stored_completed = 0;
    for id in &ids {
        let body = app.tool("get_checkout", json!({ "id": id })).await;
        if body["status"] == "completed" {
            stored_completed += 1;
        } else {
            assert!(body.get("order").is_none());
        }
    }
    assert_eq!(stored_completed, STOCK);

    // The catalog shows the variant sold out, never negative.
    let product = app.tool("get_product", json!({ "catalog": { "id": "limited-1" } })).await;
    let variant = &product["product"]["variants"][0];
    assert_eq!(variant["id"], "limited-1");
    assert_ne!(variant["availability"]["available"], json!(true), "{variant}");
    if let Some(quantity) = variant.get("inventory_quantity").and_then(Value::as_i64) {
        assert_eq!(quantity, 0, "{variant}");
    }
    let lookup = app.tool("lookup_catalog", json!({ "catalog": { "ids": ["limited-1"] } })).await;
    let variant = &lookup["products"][0]["variants"][0];
    assert_ne!(variant["availability"]["available"], json!(true), "{variant}");
    assert!(variant.get("inventory_quantity").and_then(Value::as_i64).is_none_or(|quantity| quantity == 0));

    // And a new buyer cannot even start a checkout for it.
    let body = app.tool("create_checkout", json!({ "checkout": ready_checkout("limited-1", 1) })).await;
    assert_eq!(body["ucp"]["status"], "error", "{body}");
    assert_eq!(body["messages"][0]["code"], "out_of_stock");
}

// Checklist 132, 146: an update racing a complete never un-completes the checkout, and the
// checkout never yields a second order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn update_racing_complete_never_reopens_a_completed_checkout() {
    let app = Arc::new(spawn_app_with(fixture_products(), |_, _| {}).await);
    for round in 0..25 {
        let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
        let id = created["id"].as_str().unwrap().to_owned();
        let mut update = ready_checkout("mug-1", 2);
        update["line_items"][0]["id"] = created["line_items"][0]["id"].clone();
        let completing = {
            let (app, id) = (app.clone(), id.clone());
            tokio::spawn(async move {
                let arguments = json!({ "meta": app.keyed_meta(), "id": id, "checkout": pay(TOKEN_SUCCESS) });
                app.tool("complete_checkout", arguments).await
            })
        };
        let updating = {
            let (app, id) = (app.clone(), id.clone());
            tokio::spawn(async move { app.tool("update_checkout", json!({ "id": id, "checkout": update })).await })
        };
        let (completed, updated) = (completing.await.unwrap(), updating.await.unwrap());
        assert!(updated.get("order").is_none() || updated["status"] == "completed", "round {round}: {updated}");
        let stored = app.tool("get_checkout", json!({ "id": id })).await;
        if completed["status"] == "completed" {
            let order_id = completed["order"]["id"].clone();
            assert_eq!(stored["status"], "completed", "round {round}: the update reopened it: {stored}");
            assert_eq!(stored["order"]["id"], order_id, "round {round}");
            let order = app.tool("get_order", json!({ "id": order_id })).await;
            assert_eq!(
                order["line_items"][0]["quantity"]["total"], stored["line_items"][0]["quantity"],
                "round {round}: the checkout shows what was ordered"
            );
            assert_eq!(order["totals"], stored["totals"], "round {round}: the checkout shows what was charged");
            let again = app
                .tool(
                    "complete_checkout",
                    json!({ "meta": app.keyed_meta(), "id": id, "checkout": pay(TOKEN_SUCCESS) }),
                )
                .await;
            assert_eq!(again["order"]["id"], order_id, "round {round}: no second order");
        } else {
            assert!(completed.get("order").is_none());
        }
    }
}

// A usage-limited code cannot be used more often than its limit, however many orders race.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_completes_never_exceed_a_discount_usage_limit() {
    const LIMIT: u64 = 3;
    const RACERS: usize = 12;
    let app = Arc::new(
        spawn_app_with(fixture_products(), |settings, _| {
            settings.discounts.push(ucp_server::config::DiscountSettings {
                code: Some("FIRST3".into()),
                title: "10% for the first three orders".into(),
                kind: ucp_domain::checkout::DiscountKind::Percentage(1000),
                min_subtotal: None,
                product_ids: vec![],
                categories: vec![],
                expires_at: None,
                usage_limit: Some(LIMIT),
                combinable: false,
            });
        })
        .await,
    );
    let mut ids = Vec::with_capacity(RACERS);
    for _ in 0..RACERS {
        let mut checkout = ready_checkout("mug-1", 1);
        checkout["discounts"] = json!({ "codes": ["FIRST3"] });
        let created = app.tool("create_checkout", json!({ "checkout": checkout })).await;
        assert_eq!(created["discounts"]["applied"][0]["code"], "FIRST3", "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    let mut tasks = tokio::task::JoinSet::new();
    for id in ids {
        let app = app.clone();
        tasks.spawn(async move {
            let arguments = json!({
                "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() },
                "id": id,
                "checkout": pay(TOKEN_SUCCESS),
            });
            app.tool("complete_checkout", arguments).await
        });
    }
    let mut discounted_orders = 0;
    while let Some(joined) = tasks.join_next().await {
        let body: Value = joined.expect("task");
        let discounted = body["discounts"]["applied"].as_array().is_some_and(|applied| !applied.is_empty());
        if body["status"] == "completed" {
            assert!(discounted, "no order is placed with a price it did not get: {body}");
            discounted_orders += 1;
        } else {
            assert!(body.get("order").is_none());
            assert!(
                !messages_with(&body, "discount_code_invalid").is_empty(),
                "the buyer learns the code ran out: {body}"
            );
        }
    }
    assert_eq!(discounted_orders, LIMIT, "exactly the limit is used");
}

// Checklist 116: creates for one cart racing each other (each its own call, with no shared
// idempotency key) all answer the one checkout: a check before the insert, apart from it, let
// each racer that read "none open" insert a checkout of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_checkouts_of_one_cart_are_one_checkout() {
    let app = Arc::new(spawn_app_with(fixture_products(), |_, _| {}).await);
    let line = json!({ "item": { "id": "mug-1" }, "quantity": 1 });
    let cart = app.tool("create_cart", json!({ "cart": { "line_items": [line] } })).await;
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let (app, cart_id) = (app.clone(), cart_id.clone());
        tasks.spawn(async move { app.tool("create_checkout", json!({ "checkout": { "cart_id": cart_id } })).await });
    }
    let mut ids = std::collections::BTreeSet::new();
    while let Some(created) = tasks.join_next().await {
        let created = created.unwrap();
        assert_eq!(created["cart_id"], cart_id.as_str(), "{created}");
        ids.insert(created["id"].as_str().unwrap().to_owned());
    }
    assert_eq!(ids.len(), 1, "one checkout: {ids:?}");

    // Over REST, exactly one of the racing creates is the one that created it (201).
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
        .await;
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..20 {
        let (app, cart_id) = (app.clone(), cart_id.clone());
        tasks.spawn(async move {
            crate::rest::rest(&app, "POST", "/checkout-sessions", Some(json!({ "cart_id": cart_id }))).await
        });
    }
    let (mut created, mut ids) = (0, std::collections::BTreeSet::new());
    while let Some(answer) = tasks.join_next().await {
        let (status, body) = answer.unwrap();
        assert!(status == reqwest::StatusCode::CREATED || status == reqwest::StatusCode::OK, "{status} {body}");
        created += usize::from(status == reqwest::StatusCode::CREATED);
        ids.insert(body["id"].as_str().unwrap().to_owned());
    }
    assert_eq!((created, ids.len()), (1, 1), "one created, one checkout: {ids:?}");
}
