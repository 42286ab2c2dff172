//! Carts over MCP and the cart → checkout conversion: checklist 108-118.

use serde_json::{Value, json};

use crate::checkout::{address, valid_checkout};
use crate::helpers::{
    ALL_CAPABILITIES, PlatformServer, TestApp, assert_integer_money, assert_messages_resolve, messages_with,
    platform_profile, spawn_app, total_of,
};
use crate::schema;

/// A cart body validated against cart.json and the discount extension's cart shape (checklist 108).
fn valid_cart(body: &Value) {
    schema::assert_valid("shopping/cart.json", body);
    schema::assert_valid("shopping/discount.json#/$defs/dev.ucp.shopping.cart", body);
    assert_eq!(body["ucp"]["status"], "success", "{body}");
    assert!(body.get("status").is_none(), "a cart has no lifecycle status: {body}");
    let totals = &body["totals"];
    assert_eq!(totals.as_array().unwrap().iter().filter(|t| t["type"] == "subtotal").count(), 1);
    assert_eq!(totals.as_array().unwrap().iter().filter(|t| t["type"] == "total").count(), 1);
    for line in body["line_items"].as_array().unwrap() {
        assert!(line["id"].is_string() && line["item"]["title"].is_string() && line["item"]["price"].is_i64());
    }
    assert_messages_resolve(body);
    assert_integer_money(body);
}

/// An error response with one unrecoverable message of `code` and no resource fields.
fn assert_error_response(body: &Value, code: &str) {
    schema::error_response(body);
    assert_eq!(body["ucp"]["status"], "error", "{body}");
    assert!(body.get("id").is_none() && body.get("status").is_none() && body.get("line_items").is_none(), "{body}");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 1, "{body}");
    assert_eq!(messages[0]["code"], code, "{body}");
    assert_eq!(messages[0]["severity"], "unrecoverable", "{body}");
}

fn line(item: &str, quantity: i64) -> Value {
    json!({ "item": { "id": item }, "quantity": quantity })
}

async fn create_cart(app: &TestApp, lines: Vec<Value>) -> Value {
    app.tool("create_cart", json!({ "cart": { "line_items": lines } })).await
}

// Checklist 108, 111, 113, 114: create/get/update/cancel shapes, full replacement, cancel then get.
#[tokio::test]
async fn cart_lifecycle_create_get_update_cancel() {
    let app = spawn_app().await;
    let created = create_cart(&app, vec![line("mug-1", 2), line("sweater-m", 1)]).await;
    valid_cart(&created);
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("cart_"));
    assert_eq!(created["currency"], "USD");
    assert_eq!(created["line_items"].as_array().unwrap().len(), 2);
    assert_eq!(created["line_items"][0]["item"]["id"], "mug-1");
    assert_eq!(created["line_items"][0]["item"]["price"], 1500);
    assert_eq!(total_of(&created["line_items"][0]["totals"], "total"), Some(3000));
    assert_eq!(total_of(&created["totals"], "subtotal"), Some(3000 + 8900));
    assert_eq!(total_of(&created["totals"], "total"), Some(3000 + 8900));
    assert!(created["ucp"].get("payment_handlers").is_none(), "carts carry no payment handlers");
    let capabilities: Vec<&String> = created["ucp"]["capabilities"].as_object().unwrap().keys().collect();
    assert!(capabilities.contains(&&"dev.ucp.shopping.cart".to_owned()), "{capabilities:?}");
    assert!(
        !capabilities.contains(&&"dev.ucp.shopping.checkout".to_owned()),
        "cart responses list only cart + extensions"
    );

    // Checklist 114: continue_url (absolute) and an RFC 3339 expires_at about 7 days out.
    let continue_url = created["continue_url"].as_str().expect("continue_url");
    assert!(continue_url.starts_with("http") && continue_url.contains(&id), "{continue_url}");
    let expires_at = created["expires_at"].as_str().expect("expires_at");
    let expires = time::OffsetDateTime::parse(expires_at, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|error| panic!("{expires_at} is not RFC 3339: {error}"));
    let ttl = expires.unix_timestamp() - app.clock.now();
    assert!((7 * 86_400 - 60..=7 * 86_400).contains(&ttl), "cart TTL {ttl}s");

    let got = app.tool("get_cart", json!({ "id": id })).await;
    valid_cart(&got);
    assert_eq!(got["line_items"], created["line_items"]);
    assert_eq!(got["totals"], created["totals"]);

    // Checklist 111: update replaces the whole cart: the mug line is removed, the sweater quantity set (not added).
    let kept = created["line_items"][1]["id"].clone();
    let updated = app
        .tool(
            "update_cart",
            json!({ "id": id, "cart": { "line_items": [{ "id": kept, "item": { "id": "sweater-m" }, "quantity": 3 }] } }),
        )
        .await;
    valid_cart(&updated);
    assert_eq!(updated["line_items"].as_array().unwrap().len(), 1, "{updated}");
    assert_eq!(updated["line_items"][0]["id"], kept, "named line ids are kept");
    assert_eq!(updated["line_items"][0]["quantity"], 3);
    assert_eq!(total_of(&updated["totals"], "total"), Some(3 * 8900));
    let got = app.tool("get_cart", json!({ "id": id })).await;
    assert_eq!(got["line_items"], updated["line_items"], "the replacement is stored");

    // Checklist 113: cancel returns the cart as it was, then get/update/cancel are not_found.
    let canceled = app.tool("cancel_cart", json!({ "meta": app.keyed_meta(), "id": id })).await;
    valid_cart(&canceled);
    assert_eq!(canceled["line_items"], updated["line_items"]);
    assert_eq!(canceled["id"], id.as_str());
    // No link to a page that is gone with the cart.
    assert!(got["continue_url"].is_string() && canceled.get("continue_url").is_none(), "{canceled}");
    assert_error_response(&app.tool("get_cart", json!({ "id": id })).await, "not_found");
    assert_error_response(
        &app.tool("update_cart", json!({ "id": id, "cart": { "line_items": [line("mug-1", 1)] } })).await,
        "not_found",
    );
    assert_error_response(&app.tool("cancel_cart", json!({ "meta": app.keyed_meta(), "id": id })).await, "not_found");
    // Checklist 112: unknown id.
    assert_error_response(&app.tool("get_cart", json!({ "id": "cart_nope" })).await, "not_found");
}

// Checklist 108: discount codes on a cart are echoed and applied (discount extension's cart shape).
#[tokio::test]
async fn cart_applies_discount_codes() {
    let app = spawn_app().await;
    let cart = app
        .tool(
            "create_cart",
            json!({ "cart": { "line_items": [line("sweater-m", 1)], "discounts": { "codes": ["welcome10"] } } }),
        )
        .await;
    valid_cart(&cart);
    assert_eq!(cart["discounts"]["codes"], json!(["welcome10"]));
    let applied = cart["discounts"]["applied"].as_array().unwrap();
    assert_eq!(applied.len(), 1, "{cart}");
    assert_eq!(applied[0]["amount"], 890);
    assert_eq!(total_of(&cart["totals"], "items_discount"), Some(-890));
    assert_eq!(total_of(&cart["totals"], "total"), Some(8900 - 890));
}

// Checklist 47, 109: nothing sellable on create → an error response without an id.
#[tokio::test]
async fn cart_with_only_unavailable_items_is_an_error_response() {
    let app = spawn_app().await;
    // shoe-blue-10 has inventory 0: a known item out of stock.
    let body = create_cart(&app, vec![line("shoe-blue-10", 1)]).await;
    assert_error_response(&body, "out_of_stock");
    // Items we do not sell.
    let body = create_cart(&app, vec![line("nope", 1), line("nada", 2)]).await;
    assert_error_response(&body, "item_unavailable");
    // Known-but-out-of-stock plus unknown: still nothing to sell; the known item decides the code.
    let body = create_cart(&app, vec![line("nope", 1), line("shoe-blue-10", 1)]).await;
    assert_error_response(&body, "out_of_stock");
    // The same rule on create_checkout (checklist 125).
    let body = app.tool("create_checkout", json!({ "checkout": { "line_items": [line("shoe-blue-10", 1)] } })).await;
    assert_error_response(&body, "out_of_stock");
}

// Checklist 47, 110: partially unavailable → the cart, with messages pointing at the lines.
#[tokio::test]
async fn partially_unavailable_cart_points_at_the_lines() {
    let app = spawn_app().await;
    let body = create_cart(&app, vec![line("mug-1", 1), line("shoe-blue-10", 1), line("shoe-green-10", 9)]).await;
    valid_cart(&body);
    let out: Vec<&str> = messages_with(&body, "out_of_stock").iter().map(|m| m["path"].as_str().unwrap()).collect();
    assert_eq!(out, ["$.line_items[1]", "$.line_items[2].quantity"], "{body}");
    for message in messages_with(&body, "out_of_stock") {
        assert_eq!(message["severity"], "recoverable");
    }

    // An unknown item among sellable ones stays a line, reported at its path (checklist 124):
    // the cart does not silently drop what the buyer asked for.
    let body = create_cart(&app, vec![line("mug-1", 1), line("nope", 1)]).await;
    valid_cart(&body);
    assert_eq!(body["line_items"].as_array().unwrap().len(), 2, "{body}");
    assert_eq!(body["line_items"][1]["item"]["id"], "nope");
    let unavailable = messages_with(&body, "item_unavailable");
    assert_eq!(unavailable.len(), 1, "{body}");
    assert_eq!(unavailable[0]["severity"], "recoverable");
    assert_eq!(unavailable[0]["path"], "$.line_items[1]");
}

// Checklist 112: an expired cart is not_found.
#[tokio::test]
async fn expired_cart_is_not_found() {
    let app = spawn_app().await;
    let cart = create_cart(&app, vec![line("mug-1", 1)]).await;
    let id = cart["id"].as_str().unwrap();
    app.clock.advance(7 * 86_400 - 120);
    valid_cart(&app.tool("get_cart", json!({ "id": id })).await);
    app.clock.advance(121);
    assert_error_response(&app.tool("get_cart", json!({ "id": id })).await, "not_found");
    assert_error_response(
        &app.tool("update_cart", json!({ "id": id, "cart": { "line_items": [line("mug-1", 1)] } })).await,
        "not_found",
    );
    assert_error_response(
        &app.tool("create_checkout", json!({ "checkout": { "cart_id": id, "line_items": [] } })).await,
        "not_found",
    );
}

// Carts belong to the platform that made them: another platform gets not_found.
#[tokio::test]
async fn another_platform_cannot_read_or_change_a_cart() {
    let app = spawn_app().await;
    let other = PlatformServer::start(platform_profile(ALL_CAPABILITIES)).await;
    let cart = create_cart(&app, vec![line("mug-1", 1)]).await;
    let id = cart["id"].as_str().unwrap();
    let meta = app.meta_for(&other.profile_url());
    assert_error_response(&app.tool("get_cart", json!({ "meta": meta, "id": id })).await, "not_found");
    assert_error_response(
        &app.tool("update_cart", json!({ "meta": meta, "id": id, "cart": { "line_items": [line("mug-1", 9)] } })).await,
        "not_found",
    );
    assert_error_response(
        &app.tool("cancel_cart", json!({ "meta": app.keyed_meta_for(&other.profile_url()), "id": id })).await,
        "not_found",
    );
    assert_error_response(
        &app.tool("create_checkout", json!({ "meta": meta, "checkout": { "cart_id": id, "line_items": [] } })).await,
        "not_found",
    );
    let mine = app.tool("get_cart", json!({ "id": id })).await;
    assert_eq!(mine["line_items"][0]["quantity"], 1, "the owner's cart is untouched");
}

// Checklist 117: the cart's codes carry over even when the create names codes of its own,
// which join them (a code both name, once); an empty list removes none.
#[tokio::test]
async fn a_checkout_from_a_cart_keeps_the_carts_codes_beside_its_own() {
    let app = spawn_app().await;
    let cart = app
        .tool(
            "create_cart",
            json!({ "cart": { "line_items": [line("mug-1", 1)], "discounts": { "codes": ["WELCOME10"] } } }),
        )
        .await;
    let cart_id = cart["id"].as_str().unwrap();
    let checkout = app
        .tool(
            "create_checkout",
            json!({ "checkout": { "cart_id": cart_id, "line_items": [], "discounts": { "codes": ["freeship", "welcome10"] } } }),
        )
        .await;
    assert_eq!(checkout["discounts"]["codes"], json!(["WELCOME10", "freeship"]), "{checkout}");
    assert_eq!(checkout["discounts"]["applied"][0]["code"], "WELCOME10", "{checkout}");
    let other = app
        .tool(
            "create_cart",
            json!({ "cart": { "line_items": [line("mug-1", 1)], "discounts": { "codes": ["SAVE5"] } } }),
        )
        .await;
    let other_id = other["id"].as_str().unwrap();
    let checkout = app
        .tool(
            "create_checkout",
            json!({ "checkout": { "cart_id": other_id, "line_items": [], "discounts": { "codes": [] } } }),
        )
        .await;
    assert_eq!(checkout["discounts"]["codes"], json!(["SAVE5"]), "{checkout}");
}

// Checklist 115, 116, 117, 118: checkout from a cart, idempotent, codes carried over, changes reflected back.
#[tokio::test]
async fn checkout_from_cart_is_initialized_idempotent_and_linked() {
    let app = spawn_app().await;
    let cart = app
        .tool(
            "create_cart",
            json!({ "cart": {
                "line_items": [line("mug-1", 2), line("sweater-m", 1)],
                "buyer": { "email": "ada@example.com" },
                "discounts": { "codes": ["WELCOME10"] }
            } }),
        )
        .await;
    valid_cart(&cart);
    let cart_id = cart["id"].as_str().unwrap().to_owned();

    // Checklist 115: initialized from the cart; the overlapping (empty) line_items is ignored.
    let checkout = app.tool("create_checkout", json!({ "checkout": { "cart_id": cart_id, "line_items": [] } })).await;
    valid_checkout(&checkout);
    schema::assert_valid("shopping/cart.json#/$defs/checkout", &checkout);
    assert_eq!(checkout["cart_id"], cart_id.as_str());
    assert_eq!(checkout["status"], "incomplete", "no address yet: {checkout}");
    let items: Vec<(&str, i64)> = checkout["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| (line["item"]["id"].as_str().unwrap(), line["quantity"].as_i64().unwrap()))
        .collect();
    assert_eq!(items, [("mug-1", 2), ("sweater-m", 1)]);
    assert_eq!(checkout["buyer"]["email"], "ada@example.com", "buyer comes from the cart");

    // Checklist 117: the cart's discount code is applied on the checkout.
    assert_eq!(checkout["discounts"]["codes"], json!(["WELCOME10"]));
    let applied = checkout["discounts"]["applied"].as_array().unwrap();
    assert_eq!(applied.len(), 1, "{checkout}");
    assert_eq!(applied[0]["code"], "WELCOME10");
    assert_eq!(applied[0]["amount"], (3000 + 8900) / 10);

    // Checklist 116: a second create for the same cart returns the same incomplete checkout.
    let again = app
        .tool("create_checkout", json!({ "checkout": { "cart_id": cart_id, "line_items": [line("mug-1", 7)] } }))
        .await;
    assert_eq!(again["id"], checkout["id"]);
    assert_eq!(again["line_items"], checkout["line_items"]);

    // Checklist 118: quantity changes and removals in the checkout reflect back into the cart.
    let id = checkout["id"].as_str().unwrap();
    let mug_line = checkout["line_items"][0]["id"].clone();
    let updated = app
        .tool(
            "update_checkout",
            json!({ "id": id, "checkout": {
                "line_items": [{ "id": mug_line, "item": { "id": "mug-1" }, "quantity": 5 }],
                "buyer": { "email": "ada@example.com" },
                "fulfillment": { "methods": [{ "type": "shipping", "destinations": [address()] }] }
            } }),
        )
        .await;
    valid_checkout(&updated);
    let cart_now = app.tool("get_cart", json!({ "id": cart_id })).await;
    valid_cart(&cart_now);
    assert_eq!(cart_now["line_items"].as_array().unwrap().len(), 1, "{cart_now}");
    assert_eq!(cart_now["line_items"][0]["id"], mug_line);
    assert_eq!(cart_now["line_items"][0]["quantity"], 5);
}

// Checklist 115: cart_id is refused when the cart capability is not negotiated.
#[tokio::test]
async fn cart_id_needs_the_cart_capability() {
    let app = spawn_app().await;
    let cart = create_cart(&app, vec![line("mug-1", 1)]).await;
    let without_cart: Vec<&str> =
        ALL_CAPABILITIES.iter().copied().filter(|name| *name != "dev.ucp.shopping.cart").collect();
    let other = PlatformServer::start(platform_profile(&without_cart)).await;
    let (status, error) = app
        .tool_error(
            "create_checkout",
            json!({ "meta": app.meta_for(&other.profile_url()), "checkout": { "cart_id": cart["id"], "line_items": [] } }),
        )
        .await;
    assert_eq!(status, 200, "{error}");
    assert_eq!(error["code"], -32602, "{error}");
}

// Checklist 115: the cart's buyer and context win over overlapping fields of the checkout payload.
#[tokio::test]
async fn cart_buyer_and_context_win_over_the_checkout_payload() {
    let app = spawn_app().await;
    let cart = app
        .tool(
            "create_cart",
            json!({ "cart": {
                "line_items": [line("mug-1", 1)],
                "buyer": { "email": "cart@example.com" },
                "context": { "address_country": "US", "address_region": "CA" }
            } }),
        )
        .await;
    let checkout = app
        .tool(
            "create_checkout",
            json!({ "checkout": {
                "cart_id": cart["id"],
                "line_items": [line("sweater-m", 4)],
                "buyer": { "email": "payload@example.com" },
                "context": { "address_country": "US", "address_region": "NY" }
            } }),
        )
        .await;
    valid_checkout(&checkout);
    assert_eq!(checkout["line_items"].as_array().unwrap().len(), 1);
    assert_eq!(checkout["line_items"][0]["item"]["id"], "mug-1");
    assert_eq!(checkout["buyer"]["email"], "cart@example.com", "{checkout}");
    assert_eq!(checkout["context"]["address_region"], "CA", "{checkout}");

    // A cart without a buyer: the payload's buyer fills the gap.
    let cart = create_cart(&app, vec![line("mug-1", 1)]).await;
    let checkout = app
        .tool(
            "create_checkout",
            json!({ "checkout": { "cart_id": cart["id"], "line_items": [], "buyer": { "email": "payload@example.com" } } }),
        )
        .await;
    assert_eq!(checkout["buyer"]["email"], "payload@example.com");
}

// Checklist 37, 43: the cart object may repeat the target id but not name another (-32602,
// HTTP 200, the cart unchanged); a cart without line_items is refused the same way.
#[tokio::test]
async fn a_cart_payload_naming_another_id_or_no_lines_is_invalid_params() {
    let app = spawn_app().await;
    let created = create_cart(&app, vec![line("mug-1", 1)]).await;
    let id = created["id"].as_str().unwrap();
    for (tool, arguments) in [
        ("update_cart", json!({ "id": id, "cart": { "id": "cart_other", "line_items": [line("mug-1", 5)] } })),
        ("update_cart", json!({ "id": id, "cart": { "buyer": { "email": "ada@example.com" } } })),
        ("create_cart", json!({ "cart": {} })),
    ] {
        let (status, error) = app.tool_error(tool, arguments).await;
        assert_eq!((status.as_u16(), error["code"].as_i64()), (200, Some(-32602)), "{tool}: {error}");
    }
    assert_eq!(app.tool("get_cart", json!({ "id": id })).await["line_items"], created["line_items"]);
    let updated =
        app.tool("update_cart", json!({ "id": id, "cart": { "id": id, "line_items": [line("mug-1", 2)] } })).await;
    valid_cart(&updated);
    assert_eq!(updated["line_items"][0]["quantity"], 2, "the same id is tolerated");
}

// cart.md §6: once an order is placed from a cart, the cart is ended (a MAY we take): get_cart
// and a new create_checkout from it answer not_found, so a platform retrying with a new key
// cannot buy the same cart twice. A cart whose checkout is canceled stays.
#[tokio::test]
async fn a_cart_ends_with_its_order_and_not_with_a_canceled_checkout() {
    let app = spawn_app().await;
    let from_cart = |cart_id: String| {
        let app = &app;
        async move { app.tool("create_checkout", json!({ "checkout": { "cart_id": cart_id, "line_items": [] } })).await }
    };
    let cart = create_cart(&app, vec![line("mug-1", 2)]).await;
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let checkout = from_cart(cart_id.clone()).await;
    let id = checkout["id"].as_str().unwrap().to_owned();
    let mut fields = crate::checkout::ready_checkout("mug-1", 2);
    fields["line_items"][0]["id"] = checkout["line_items"][0]["id"].clone();
    let ready = app.tool("update_checkout", json!({ "id": id, "checkout": fields })).await;
    assert_eq!(ready["status"], "ready_for_complete", "{ready}");
    valid_cart(&app.tool("get_cart", json!({ "id": cart_id })).await);

    let completed = crate::checkout::complete(&app, &id, crate::checkout::TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_error_response(&app.tool("get_cart", json!({ "id": cart_id })).await, "not_found");
    assert_error_response(&from_cart(cart_id.clone()).await, "not_found");
    let update = app.tool("update_cart", json!({ "id": cart_id, "cart": { "line_items": [line("mug-1", 1)] } })).await;
    assert_error_response(&update, "not_found");
    let cancel = app.tool("cancel_cart", json!({ "meta": app.keyed_meta(), "id": cart_id })).await;
    assert_error_response(&cancel, "not_found");
    assert_eq!(app.tool("get_checkout", json!({ "id": id })).await["status"], "completed");

    let kept = create_cart(&app, vec![line("mug-1", 1)]).await;
    let kept_id = kept["id"].as_str().unwrap().to_owned();
    let checkout = from_cart(kept_id.clone()).await;
    let canceled = app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": checkout["id"] })).await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    valid_cart(&app.tool("get_cart", json!({ "id": kept_id })).await);
    let fresh = from_cart(kept_id).await;
    assert_eq!(fresh["status"], "incomplete", "a new checkout of the kept cart: {fresh}");
    assert_ne!(fresh["id"], checkout["id"]);
}
