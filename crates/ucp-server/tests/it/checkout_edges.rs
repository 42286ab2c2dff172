//! Checkout edges over MCP: checklist 120-148 (status, discounts, fulfillment, validation,
//! cancel, complete refusals). Expiry, determinism, message paths, integer money and stock
//! across lines are `checkout_invariants.rs`.

use serde_json::{Value, json};
use ucp_server::config::DiscountSettings;

use crate::checkout::{TOKEN_SUCCESS, complete, key, pay, ready_checkout, valid_checkout};
use crate::helpers::{
    TestApp, assert_integer_money, assert_messages_resolve, fixture_products, messages_with, spawn_app, spawn_app_with,
    total_of,
};
use crate::schema;

const STATUSES: &[&str] =
    &["incomplete", "requires_escalation", "ready_for_complete", "complete_in_progress", "completed", "canceled"];

/// Everything every checkout response must satisfy: schema (119), totals (120), status enum
/// (121), escalation (122), continue_url (123), message paths (127), integer money (148).
pub fn assert_checkout(body: &Value) {
    valid_checkout(body);
    assert_eq!(body["ucp"]["status"], "success", "{body}");
    assert!(body["ucp"]["payment_handlers"].is_object(), "checklist 25/119: {body}");
    let status = body["status"].as_str().expect("status");
    assert!(STATUSES.contains(&status), "checklist 121: {status}");

    // Checklist 120.
    let totals = body["totals"].as_array().unwrap();
    assert_eq!(totals.iter().filter(|t| t["type"] == "subtotal").count(), 1, "{body}");
    assert_eq!(totals.iter().filter(|t| t["type"] == "total").count(), 1, "{body}");
    let total = total_of(&body["totals"], "total").unwrap();
    let sum: i64 = totals.iter().filter(|t| t["type"] != "total").map(|t| t["amount"].as_i64().unwrap()).sum();
    assert_eq!(sum, total, "non-total entries sum to total: {totals:?}");
    for entry in totals {
        let amount = entry["amount"].as_i64().unwrap();
        match entry["type"].as_str().unwrap() {
            "items_discount" | "discount" => assert!(amount < 0, "discounts are negative: {entry}"),
            "subtotal" | "fulfillment" | "tax" | "fee" => assert!(amount >= 0, "{entry}"),
            "total" => {}
            _ => assert!(entry["display_text"].is_string(), "unknown types carry display_text: {entry}"),
        }
    }
    let line_discounts: i64 = body["line_items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| total_of(&line["totals"], "items_discount").unwrap_or(0))
        .sum();
    assert_eq!(total_of(&body["totals"], "items_discount").unwrap_or(0), line_discounts, "checklist 144: {body}");
    for line in body["line_items"].as_array().unwrap() {
        let line_sum: i64 = line["totals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["type"] != "total")
            .map(|t| t["amount"].as_i64().unwrap())
            .sum();
        assert_eq!(Some(line_sum), total_of(&line["totals"], "total"), "line totals add up: {line}");
    }

    // Checklist 122, 123.
    let terminal = matches!(status, "completed" | "canceled");
    if terminal {
        assert!(body.get("continue_url").is_none(), "no continue_url on {status}");
    } else {
        let url = body["continue_url"].as_str().unwrap_or_else(|| panic!("continue_url on {status}: {body}"));
        assert!(url.starts_with("http"), "{url}");
    }
    if status == "requires_escalation" {
        let escalating = body["messages"].as_array().into_iter().flatten().any(|m| {
            m["type"] == "error"
                && matches!(m["severity"].as_str(), Some("requires_buyer_input" | "requires_buyer_review"))
        });
        assert!(escalating, "checklist 122: {body}");
    }
    if status != "completed" {
        assert!(body.get("order").is_none(), "only completed checkouts carry an order: {body}");
    }
    for applied in body["discounts"]["applied"].as_array().into_iter().flatten() {
        assert!(applied["amount"].as_i64().unwrap() > 0, "applied amounts are positive: {applied}");
        for allocation in applied["allocations"].as_array().into_iter().flatten() {
            let path = allocation["path"].as_str().unwrap();
            assert!(crate::helpers::resolve_path(body, path).is_some(), "allocation path {path} resolves");
        }
    }
    assert_messages_resolve(body);
    assert_integer_money(body);
}

pub(crate) fn assert_not_found(body: &Value) {
    schema::error_response(body);
    assert_eq!(body["ucp"]["status"], "error", "{body}");
    assert!(body.get("id").is_none() && body.get("status").is_none(), "{body}");
    assert_eq!(body["messages"][0]["code"], "not_found", "{body}");
    assert_eq!(body["messages"][0]["severity"], "unrecoverable", "{body}");
}

pub(crate) async fn create(app: &TestApp, checkout: Value) -> Value {
    let body = app.tool("create_checkout", json!({ "checkout": checkout })).await;
    assert_checkout(&body);
    body
}

pub(crate) async fn get(app: &TestApp, id: &str) -> Value {
    let body = app.tool("get_checkout", json!({ "id": id })).await;
    assert_checkout(&body);
    body
}

/// `ready_checkout` with the line ids of `created` and extra fields merged in.
pub(crate) fn update_of(created: &Value, item: &str, quantity: i64, extra: Value) -> Value {
    let mut update = ready_checkout(item, quantity);
    update["line_items"][0]["id"] = created["line_items"][0]["id"].clone();
    for (name, value) in extra.as_object().unwrap() {
        update[name] = value.clone();
    }
    update
}

pub(crate) async fn update(app: &TestApp, id: &str, checkout: Value) -> Value {
    let body = app.tool("update_checkout", json!({ "id": id, "checkout": checkout })).await;
    assert_checkout(&body);
    body
}

fn codes_of(body: &Value) -> Vec<(String, i64)> {
    body["discounts"]["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|applied| (applied["code"].as_str().unwrap_or("").to_owned(), applied["amount"].as_i64().unwrap()))
        .collect()
}

fn warning_at(body: &Value, code: &str) -> Vec<String> {
    messages_with(body, code)
        .iter()
        .map(|m| {
            assert_eq!(m["type"], "warning", "code rejections are warnings: {m}");
            m["path"].as_str().unwrap().to_owned()
        })
        .collect()
}

// Checklist 144: WELCOME10, SAVE5, FREESHIP; case-insensitive; replace; [] clears; rejections.
#[tokio::test]
async fn discount_codes_apply_replace_clear_and_reject() {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.discounts.push(DiscountSettings {
            code: Some("OLD20".into()),
            title: "Expired 20% off".into(),
            kind: ucp_domain::checkout::DiscountKind::Percentage(2000),
            min_subtotal: None,
            product_ids: vec![],
            categories: vec![],
            expires_at: Some(1_577_836_800), // 2020-01-01T00:00:00Z
            usage_limit: None,
            combinable: false,
        });
    })
    .await;
    let created = create(&app, ready_checkout("sweater-m", 1)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    assert!(codes_of(&created).is_empty());

    // WELCOME10 in lower case: 10 % of 8900.
    let body =
        update(&app, &id, update_of(&created, "sweater-m", 1, json!({ "discounts": { "codes": ["welcome10"] } })))
            .await;
    assert_eq!(codes_of(&body), [("WELCOME10".to_owned(), 890)], "{body}");
    assert_eq!(body["discounts"]["codes"], json!(["welcome10"]));
    assert_eq!(total_of(&body["totals"], "items_discount"), Some(-890));
    assert_eq!(total_of(&body["line_items"][0]["totals"], "items_discount"), Some(-890));
    let allocations = body["discounts"]["applied"][0]["allocations"].as_array().unwrap();
    assert_eq!(allocations.iter().map(|a| a["amount"].as_i64().unwrap()).sum::<i64>(), 890);
    // 8900 - 890 = 8010 ≥ 5000: standard shipping is free; CA tax 7.25 % of 8010 = 580.7 → 581.
    assert_eq!(total_of(&body["totals"], "total"), Some(8010 + 581), "{body}");
    assert_eq!(body["status"], "ready_for_complete");

    // Codes replace the previous ones: SAVE5 only (fixed 500, minimum 5000 met).
    let body =
        update(&app, &id, update_of(&created, "sweater-m", 1, json!({ "discounts": { "codes": ["Save5"] } }))).await;
    assert_eq!(codes_of(&body), [("SAVE5".to_owned(), 500)], "{body}");
    assert_eq!(total_of(&body["totals"], "items_discount"), Some(-500));

    // SAVE5 below its minimum: a warning at the code, nothing applied.
    let body = update(&app, &id, update_of(&created, "mug-1", 1, json!({ "discounts": { "codes": ["SAVE5"] } }))).await;
    assert!(codes_of(&body).is_empty(), "{body}");
    assert_eq!(warning_at(&body, "discount_code_minimum_not_met"), ["$.discounts.codes[0]"]);
    assert_eq!(body["status"], "ready_for_complete", "a rejected code does not block");

    // FREESHIP on a 1500 order: the 599 shipping becomes a negative `discount` total.
    let body =
        update(&app, &id, update_of(&created, "mug-1", 1, json!({ "discounts": { "codes": ["freeship"] } }))).await;
    assert_eq!(codes_of(&body), [("FREESHIP".to_owned(), 599)], "{body}");
    assert_eq!(total_of(&body["totals"], "fulfillment"), Some(599));
    assert_eq!(total_of(&body["totals"], "discount"), Some(-599));
    assert_eq!(total_of(&body["totals"], "items_discount"), None);
    // CA tax on items only: 7.25 % of 1500 = 108.75 → 109.
    assert_eq!(total_of(&body["totals"], "total"), Some(1500 + 109), "{body}");

    // Unknown and expired codes are warnings at their index; the valid one still applies.
    let body = update(
        &app,
        &id,
        update_of(&created, "sweater-m", 1, json!({ "discounts": { "codes": ["BOGUS", "old20", "WELCOME10"] } })),
    )
    .await;
    assert_eq!(warning_at(&body, "discount_code_invalid"), ["$.discounts.codes[0]"], "{body}");
    assert_eq!(warning_at(&body, "discount_code_expired"), ["$.discounts.codes[1]"], "{body}");
    assert_eq!(codes_of(&body), [("WELCOME10".to_owned(), 890)]);

    // Two non-combinable codes: the second is refused.
    let body = update(
        &app,
        &id,
        update_of(&created, "sweater-m", 1, json!({ "discounts": { "codes": ["WELCOME10", "SAVE5"] } })),
    )
    .await;
    assert_eq!(codes_of(&body), [("WELCOME10".to_owned(), 890)]);
    assert_eq!(warning_at(&body, "discount_code_combination_disallowed"), ["$.discounts.codes[1]"]);

    // [] clears.
    let body = update(&app, &id, update_of(&created, "sweater-m", 1, json!({ "discounts": { "codes": [] } }))).await;
    assert!(codes_of(&body).is_empty(), "{body}");
    assert_eq!(body["discounts"]["codes"], json!([]));
    assert_eq!(total_of(&body["totals"], "items_discount"), None);
    let stored = get(&app, &id).await;
    assert!(codes_of(&stored).is_empty());
}

// Checklist 124, 128: an undeliverable country is recoverable, at the destination.
#[tokio::test]
async fn undeliverable_address_is_reported_at_the_destination() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("mug-1", 1);
    payload["fulfillment"]["methods"][0]["destinations"][0]["address_country"] = json!("JP");
    payload["fulfillment"]["methods"][0]["destinations"][0]["address_region"] = json!("13");
    let body = create(&app, payload).await;
    assert_eq!(body["status"], "incomplete");
    let messages = messages_with(&body, "address_undeliverable");
    assert_eq!(messages.len(), 1, "{body}");
    assert_eq!(messages[0]["path"], "$.fulfillment.methods[0].destinations[0]");
    assert_eq!(messages[0]["severity"], "recoverable");
    assert_eq!(total_of(&body["totals"], "fulfillment"), None);

    // Fixed by an update: ready.
    let body = update(&app, body["id"].as_str().unwrap(), update_of(&body, "mug-1", 1, json!({}))).await;
    assert_eq!(body["status"], "ready_for_complete", "{body}");
    assert_eq!(total_of(&body["totals"], "fulfillment"), Some(599));
}

// Checklist 124, 127: invalid contact details are recoverable messages at the field.
#[tokio::test]
async fn invalid_email_and_phone_are_reported_at_the_field() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("mug-1", 1);
    payload["buyer"]["email"] = json!("ada@example");
    payload["buyer"]["phone_number"] = json!("415 555 0123");
    let body = create(&app, payload).await;
    assert_eq!(body["status"], "incomplete");
    let email = messages_with(&body, "invalid_email");
    assert_eq!((email.len(), email[0]["path"].as_str()), (1, Some("$.buyer.email")), "{body}");
    let phone = messages_with(&body, "invalid_phone");
    assert_eq!((phone.len(), phone[0]["path"].as_str()), (1, Some("$.buyer.phone_number")), "{body}");
    assert!(phone[0]["content"].as_str().unwrap().contains("E.164"));

    let mut fixed = update_of(&body, "mug-1", 1, json!({}));
    fixed["buyer"]["phone_number"] = json!("+14155550123");
    let body = update(&app, body["id"].as_str().unwrap(), fixed).await;
    assert_eq!(body["status"], "ready_for_complete", "{body}");
}

// Checklist 37, 43, 129 and input validation: bad quantities, duplicate line ids and a mismatched body
// id are JSON-RPC -32602 errors that leave the stored checkout unchanged.
#[tokio::test]
async fn invalid_updates_are_protocol_errors_and_change_nothing() {
    let app = spawn_app().await;
    for quantity in [0, -1] {
        let (status, error) = app
            .tool_error(
                "create_checkout",
                json!({ "checkout": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": quantity }] } }),
            )
            .await;
        assert_eq!((status.as_u16(), error["code"].as_i64()), (200, Some(-32602)), "{error}");
    }
    let created = create(&app, ready_checkout("mug-1", 2)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let before = get(&app, &id).await;
    let line_id = created["line_items"][0]["id"].clone();

    let mut zero = update_of(&created, "mug-1", 0, json!({}));
    zero["line_items"][0]["quantity"] = json!(0);
    let mut negative = update_of(&created, "mug-1", 1, json!({}));
    negative["line_items"][0]["quantity"] = json!(-3);
    let mut duplicate = update_of(&created, "mug-1", 1, json!({}));
    duplicate["line_items"] = json!([
        { "id": line_id, "item": { "id": "mug-1" }, "quantity": 1 },
        { "id": line_id, "item": { "id": "sweater-m" }, "quantity": 1 }
    ]);
    let mut other_id = update_of(&created, "mug-1", 9, json!({}));
    other_id["id"] = json!("chk_someone_else");
    let mut fractional = update_of(&created, "mug-1", 1, json!({}));
    fractional["line_items"][0]["quantity"] = json!(1.5);
    for (label, payload) in
        [("zero", zero), ("negative", negative), ("duplicate", duplicate), ("id", other_id), ("fraction", fractional)]
    {
        let (status, error) = app.tool_error("update_checkout", json!({ "id": id, "checkout": payload })).await;
        assert_eq!((status.as_u16(), error["code"].as_i64()), (200, Some(-32602)), "{label}: {error}");
        let after = get(&app, &id).await;
        // Everything but the delivery estimates, which are relative to the current second.
        for field in ["line_items", "totals", "status", "buyer", "messages", "discounts", "expires_at"] {
            assert_eq!(after[field], before[field], "{label}: the stored checkout is unchanged ({field})");
        }
        assert_eq!(
            after["fulfillment"]["methods"][0]["destinations"],
            before["fulfillment"]["methods"][0]["destinations"]
        );
    }
    // The same id in the body is tolerated.
    let mut same_id = update_of(&created, "mug-1", 3, json!({}));
    same_id["id"] = json!(id);
    let body = update(&app, &id, same_id).await;
    assert_eq!(body["line_items"][0]["quantity"], 3);

    // complete_checkout with a mismatched body id is refused the same way, and places nothing.
    let mut payment = pay(TOKEN_SUCCESS);
    payment["id"] = json!("chk_other");
    let (status, error) = app
        .tool_error(
            "complete_checkout",
            json!({ "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() }, "id": id, "checkout": payment }),
        )
        .await;
    assert_eq!((status.as_u16(), error["code"].as_i64()), (200, Some(-32602)), "{error}");
    assert!(get(&app, &id).await.get("order").is_none());
}

// Checklist 129: full replacement; ids named are kept, lines left out are removed.
#[tokio::test]
async fn update_replaces_the_whole_checkout() {
    let app = spawn_app().await;
    let mut payload = ready_checkout("mug-1", 1);
    payload["line_items"] = json!([
        { "item": { "id": "mug-1" }, "quantity": 1 },
        { "item": { "id": "sweater-m" }, "quantity": 1 }
    ]);
    let created = create(&app, payload).await;
    let id = created["id"].as_str().unwrap();
    let sweater = created["line_items"][1]["id"].clone();
    let mut replacement = ready_checkout("sweater-m", 2);
    replacement["line_items"][0]["id"] = sweater.clone();
    replacement.as_object_mut().unwrap().remove("buyer");
    let body = update(&app, id, replacement).await;
    assert_eq!(body["line_items"].as_array().unwrap().len(), 1);
    assert_eq!((body["line_items"][0]["id"].clone(), body["line_items"][0]["quantity"].clone()), (sweater, json!(2)));
    assert!(body.get("buyer").is_none(), "a buyer left out is removed: {body}");
    assert_eq!(body["status"], "incomplete", "email now missing");
}

// Checklist 44, 123, 132, 136: cancel; a second cancel answers the canceled checkout plus an error, unchanged.
#[tokio::test]
async fn cancel_twice_keeps_the_canceled_checkout() {
    let app = spawn_app().await;
    let created = create(&app, ready_checkout("mug-1", 1)).await;
    let id = created["id"].as_str().unwrap();
    let canceled = app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": id, "checkout": {} })).await;
    assert_checkout(&canceled);
    assert_eq!(canceled["status"], "canceled");
    assert!(canceled.get("messages").is_none_or(|m| m.as_array().unwrap().iter().all(|m| m["type"] != "error")));

    let again = app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": id })).await;
    assert_checkout(&again);
    assert_eq!(again["status"], "canceled");
    let refusal = messages_with(&again, "checkout_canceled");
    assert_eq!(refusal.len(), 1, "{again}");
    assert_eq!(refusal[0]["type"], "error");
    assert_eq!(again["line_items"], canceled["line_items"]);
    assert_eq!(again["totals"], canceled["totals"]);

    // A canceled checkout that was missing something says only that it is canceled: nothing
    // can be fixed on it any more.
    let incomplete = create(&app, json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })).await;
    assert_eq!(incomplete["status"], "incomplete", "{incomplete}");
    assert!(incomplete["messages"].as_array().is_some_and(|m| !m.is_empty()), "what is missing: {incomplete}");
    let incomplete_id = incomplete["id"].as_str().unwrap();
    app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": incomplete_id })).await;
    let read = app.tool("get_checkout", json!({ "id": incomplete_id })).await;
    assert_eq!(read["status"], "canceled", "{read}");
    assert!(read.get("messages").is_none_or(|m| m.as_array().unwrap().is_empty()), "{read}");
    let again = app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": incomplete_id })).await;
    let codes: Vec<&str> = again["messages"].as_array().unwrap().iter().map(|m| m["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["checkout_canceled"], "{again}");

    // Update and complete are refused too, and nothing changes.
    let body = update(&app, id, update_of(&created, "mug-1", 4, json!({}))).await;
    assert_eq!((body["status"].as_str(), body["line_items"][0]["quantity"].as_i64()), (Some("canceled"), Some(1)));
    let body = complete(&app, id, TOKEN_SUCCESS).await;
    assert_checkout(&body);
    assert_eq!(body["status"], "canceled");
    assert!(body.get("order").is_none());
    let stored = get(&app, id).await;
    assert_eq!(stored["status"], "canceled");
}

// Checklist 130: complete while incomplete returns the checkout with messages and no order.
#[tokio::test]
async fn complete_while_incomplete_places_no_order() {
    let app = spawn_app().await;
    let created = create(&app, json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })).await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["status"], "incomplete");
    let body = complete(&app, id, TOKEN_SUCCESS).await;
    assert_checkout(&body);
    assert_eq!(body["status"], "incomplete");
    assert!(body.get("order").is_none(), "{body}");
    assert!(!messages_with(&body, "field_required").is_empty(), "says what is missing: {body}");
    assert!(
        !app.data_dir.path().join("outbox").exists()
            || std::fs::read_dir(app.data_dir.path().join("outbox")).unwrap().next().is_none()
    );
    // It can still be completed once fixed.
    update(&app, id, update_of(&created, "mug-1", 1, json!({}))).await;
    let body = complete(&app, id, TOKEN_SUCCESS).await;
    assert_eq!(body["status"], "completed", "{body}");
}

// Checklist 133, 147: an unknown handler or two instruments → payment_failed, no order.
#[tokio::test]
async fn complete_with_a_bad_instrument_is_payment_failed() {
    let app = spawn_app().await;
    let created = create(&app, ready_checkout("mug-1", 1)).await;
    let id = created["id"].as_str().unwrap();
    let meta = json!({ "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() });

    let mut unknown = pay(TOKEN_SUCCESS);
    unknown["payment"]["instruments"][0]["handler_id"] = json!("com.evil.pay");
    let body = app.tool("complete_checkout", json!({ "meta": meta, "id": id, "checkout": unknown })).await;
    assert_checkout(&body);
    let failed = messages_with(&body, "payment_failed");
    assert_eq!(failed.len(), 1, "{body}");
    assert_eq!(failed[0]["severity"], "recoverable");
    assert!(body.get("order").is_none());
    assert_eq!(body["status"], "ready_for_complete", "{body}");

    let mut two = pay(TOKEN_SUCCESS);
    let second = two["payment"]["instruments"][0].clone();
    two["payment"]["instruments"].as_array_mut().unwrap().push(second);
    two["payment"]["instruments"][1]["id"] = json!("pi_2");
    let meta = json!({ "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() });
    let body = app.tool("complete_checkout", json!({ "meta": meta, "id": id, "checkout": two })).await;
    assert_checkout(&body);
    assert_eq!(messages_with(&body, "payment_failed").len(), 1, "{body}");
    assert!(body.get("order").is_none());

    // No instrument at all is a malformed complete.
    let meta = json!({ "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() });
    let (_, error) = app
        .tool_error(
            "complete_checkout",
            json!({ "meta": meta, "id": id, "checkout": { "payment": { "instruments": [] } } }),
        )
        .await;
    assert_eq!(error["code"], -32602);
    let stored = get(&app, id).await;
    assert!(stored.get("order").is_none());
    assert_ne!(stored["status"], "completed");
}
