//! The merchant's order operations over the admin API (issue 9 items 1 and 5): every action
//! changes `get_order` exactly as order.md §1 says (line statuses derived from quantities,
//! events and adjustments appended), and every `get_order` answer validates against the
//! official order schema (checklist 151, 152). Bad requests change nothing.

use reqwest::StatusCode;
use serde_json::{Value, json};
use ucp_server::config::PlatformSettings;

use crate::checkout::{TOKEN_SUCCESS, complete, pay, ready_checkout};
use crate::helpers::{TestApp, assert_integer_money, fixture_products, spawn_app_with};
use crate::schema;

pub const KEY: &str = "admin-key-for-order-tests";

pub async fn app_with(configure: impl FnOnce(&mut ucp_server::Settings)) -> TestApp {
    spawn_app_with(fixture_products(), |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
        configure(settings);
    })
    .await
}

/// An order of 2 × sweater-m and 1 × mug-1, paid with `handler`.
pub async fn place(app: &TestApp, handler: &str) -> (String, Value) {
    let mut payload = ready_checkout("sweater-m", 2);
    payload["line_items"].as_array_mut().unwrap().push(json!({ "item": { "id": "mug-1" }, "quantity": 1 }));
    let created = app.tool("create_checkout", json!({ "checkout": payload })).await;
    let id = created["id"].as_str().unwrap();
    let completed = if handler == "sandbox" {
        complete(app, id, TOKEN_SUCCESS).await
    } else {
        let mut payment = pay(TOKEN_SUCCESS);
        payment["payment"]["instruments"][0]["handler_id"] = json!(handler);
        let arguments = json!({ "meta": app.keyed_meta(), "id": id, "checkout": payment });
        app.tool("complete_checkout", arguments).await
    };
    assert_eq!(completed["status"], "completed", "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    (order_id.clone(), get_order(app, &order_id).await)
}

/// `get_order` as the platform sees it, validated against the official schema.
pub async fn get_order(app: &TestApp, id: &str) -> Value {
    let order = app.tool("get_order", json!({ "id": id })).await;
    schema::assert_valid("shopping/order.json", &order);
    assert_integer_money(&order);
    assert_eq!(order["id"], id, "{order}");
    order
}

pub async fn admin(app: &TestApp, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let url = format!("{}/admin/api{path}", app.base_url);
    let request = match body {
        Some(body) => app.http.post(url).json(&body),
        None => app.http.get(url),
    };
    let response = request.bearer_auth(KEY).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

fn line_id(order: &Value, index: usize) -> String {
    order["line_items"][index]["id"].as_str().unwrap().to_owned()
}

pub fn ship_body(lines: Value) -> Value {
    json!({ "line_items": lines, "carrier": "UPS", "tracking_number": "1Z999AA10123456784",
            "tracking_url": "https://track.example/1Z999AA10123456784" })
}

pub fn total_of(order: &Value) -> i64 {
    order["totals"].as_array().unwrap().iter().find(|total| total["type"] == "total").unwrap()["amount"]
        .as_i64()
        .unwrap()
}

// Checklist 152: partial shipment → partial, full → fulfilled; deliveries and failed attempts
// are events with the shipment's tracking and change no quantity.
#[tokio::test]
async fn shipments_fulfill_lines_partially_then_fully() {
    let app = app_with(|_| {}).await;
    let (id, placed) = place(&app, "sandbox").await;
    let (sweater, mug) = (line_id(&placed, 0), line_id(&placed, 1));

    let (status, details) =
        admin(&app, &format!("/orders/{id}/ship"), Some(ship_body(json!([{ "id": sweater, "quantity": 1 }])))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["status"], "partial");
    let order = get_order(&app, &id).await;
    assert_eq!(order["line_items"][0]["quantity"], json!({ "original": 2, "total": 2, "fulfilled": 1 }));
    assert_eq!(order["line_items"][0]["status"], "partial");
    assert_eq!(order["line_items"][1]["status"], "processing");
    let events = order["fulfillment"]["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "shipped");
    assert_eq!(events[0]["line_items"], json!([{ "id": sweater, "quantity": 1 }]));
    assert_eq!(events[0]["carrier"], "UPS");
    assert_eq!(events[0]["tracking_url"], "https://track.example/1Z999AA10123456784");
    assert_eq!(order["fulfillment"]["expectations"], placed["fulfillment"]["expectations"], "expectations kept");
    assert_eq!(details["order"]["fulfillment"], order["fulfillment"], "the admin answer is the order");

    let lines = json!([{ "id": sweater, "quantity": 1 }, { "id": mug, "quantity": 1 }]);
    let (status, details) = admin(&app, &format!("/orders/{id}/ship"), Some(ship_body(lines))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["status"], "fulfilled");
    let order = get_order(&app, &id).await;
    for line in order["line_items"].as_array().unwrap() {
        assert_eq!(line["status"], "fulfilled", "{line}");
        assert_eq!(line["quantity"]["fulfilled"], line["quantity"]["total"]);
    }

    let (status, _) = admin(
        &app,
        &format!("/orders/{id}/fail-delivery"),
        Some(json!({ "line_items": [{ "id": mug, "quantity": 1 }], "description": "Nobody home" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = admin(&app, &format!("/orders/{id}/deliver"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let order = get_order(&app, &id).await;
    let kinds: Vec<&str> = order["fulfillment"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["shipped", "shipped", "failed_attempt", "delivered"]);
    let delivered = &order["fulfillment"]["events"][3];
    assert_eq!(delivered["line_items"], json!([{ "id": sweater, "quantity": 2 }, { "id": mug, "quantity": 1 }]));
    assert!(delivered["tracking_number"].is_string(), "the shipment's tracking: {delivered}");
    // Nothing is left in transit.
    let (status, body) = admin(&app, &format!("/orders/{id}/deliver"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

// Shipping more than was ordered, unknown lines, bad tracking, malformed bodies: clear
// errors, and the order stays exactly as it was.
#[tokio::test]
async fn bad_requests_are_refused_and_change_nothing() {
    let app = app_with(|_| {}).await;
    let (id, placed) = place(&app, "sandbox").await;
    let sweater = line_id(&placed, 0);
    let ship = format!("/orders/{id}/ship");
    let cases = [
        (ship_body(json!([{ "id": sweater, "quantity": 3 }])), StatusCode::UNPROCESSABLE_ENTITY, "quantity_exceeded"),
        (
            ship_body(json!([{ "id": sweater, "quantity": 2 }, { "id": sweater, "quantity": 1 }])),
            StatusCode::UNPROCESSABLE_ENTITY,
            "quantity_exceeded",
        ),
        (ship_body(json!([{ "id": "li_nope", "quantity": 1 }])), StatusCode::UNPROCESSABLE_ENTITY, "unknown_line"),
        (ship_body(json!([{ "id": sweater, "quantity": 0 }])), StatusCode::BAD_REQUEST, "invalid_input"),
        (ship_body(json!([])), StatusCode::BAD_REQUEST, "invalid_input"),
        (json!({ "line_items": [{ "id": sweater, "quantity": 1 }] }), StatusCode::BAD_REQUEST, "invalid_input"),
        (
            {
                let mut body = ship_body(json!([{ "id": sweater, "quantity": 1 }]));
                body["tracking_url"] = json!("javascript:alert(1)");
                body
            },
            StatusCode::BAD_REQUEST,
            "invalid_input",
        ),
        (
            {
                let mut body = ship_body(json!([{ "id": sweater, "quantity": 1 }]));
                body["surprise"] = json!(1);
                body
            },
            StatusCode::BAD_REQUEST,
            "invalid_input",
        ),
        (
            json!({ "line_items": vec![json!({ "id": sweater, "quantity": 1 }); 101], "tracking_number": "1", "tracking_url": "https://t.example/1" }),
            StatusCode::BAD_REQUEST,
            "invalid_input",
        ),
    ];
    for (body, status, code) in cases {
        let (got, answer) = admin(&app, &ship, Some(body.clone())).await;
        assert_eq!((got, answer["code"].as_str()), (status, Some(code)), "{body} → {answer}");
        assert!(answer["message"].as_str().is_some_and(|message| !message.is_empty()), "{answer}");
    }
    let (status, answer) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": -5 }))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    let response = app
        .http
        .post(format!("{}/admin/api{ship}", app.base_url))
        .bearer_auth(KEY)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    let (status, answer) =
        admin(&app, "/orders/ord_nope/ship", Some(ship_body(json!([{ "id": sweater, "quantity": 1 }])))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")));
    let (status, _) = admin(&app, "/orders/ord_nope", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    assert_eq!(get_order(&app, &id).await, placed, "nothing changed");
}

// Cancel everything: lines removed (original kept), the whole payment back as a cancellation
// adjustment; a canceled order refuses every further change.
#[tokio::test]
async fn canceling_refunds_the_payment_and_freezes_the_order() {
    let app = app_with(|_| {}).await;
    let (id, placed) = place(&app, "sandbox").await;
    let (status, details) =
        admin(&app, &format!("/orders/{id}/cancel"), Some(json!({ "reason": "Buyer asked" }))).await;
    assert_eq!(status, StatusCode::OK, "{details}");
    assert_eq!(details["status"], "canceled");
    assert_eq!(details["payment"]["refunded"], total_of(&placed));
    let order = get_order(&app, &id).await;
    for line in order["line_items"].as_array().unwrap() {
        assert_eq!(line["status"], "removed", "{line}");
        assert_eq!(line["quantity"]["total"], 0);
        assert!(line["quantity"]["original"].as_i64().unwrap() > 0);
    }
    let adjustments = order["adjustments"].as_array().unwrap();
    assert_eq!(adjustments.len(), 1);
    assert_eq!(adjustments[0]["type"], "cancellation");
    assert_eq!(adjustments[0]["status"], "completed");
    assert_eq!(adjustments[0]["description"], "Buyer asked");
    assert_eq!(adjustments[0]["totals"], json!([{ "type": "total", "amount": -total_of(&placed) }]));
    assert_eq!(adjustments[0]["line_items"][0]["quantity"], -2);

    let sweater = line_id(&placed, 0);
    for (path, body) in [
        ("ship", ship_body(json!([{ "id": sweater, "quantity": 1 }]))),
        ("cancel", json!({})),
        ("adjust", json!({ "type": "credit", "amount": -1 })),
    ] {
        let (status, answer) = admin(&app, &format!("/orders/{id}/{path}"), Some(body)).await;
        assert_eq!((status, answer["code"].as_str()), (StatusCode::CONFLICT, Some("order_canceled")), "{path}");
    }
    // A refund is still heard, within what is left to give back: here nothing.
    let (status, answer) = admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 1 }))).await;
    assert_eq!((status, answer["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("refund_exceeds_payment")));
    assert_eq!(get_order(&app, &id).await, order, "refusals change nothing");
}

// Cancel the unshipped unit of a line and return a shipped one: quantities follow, with a
// signed-quantity adjustment for each.
#[tokio::test]
async fn partial_cancel_and_return_adjust_the_quantities() {
    let app = app_with(|_| {}).await;
    let (id, placed) = place(&app, "sandbox").await;
    let sweater = line_id(&placed, 0);
    admin(&app, &format!("/orders/{id}/ship"), Some(ship_body(json!([{ "id": sweater, "quantity": 1 }])))).await;
    let (status, answer) =
        admin(&app, &format!("/orders/{id}/cancel"), Some(json!({ "line_items": [{ "id": sweater, "quantity": 2 }] })))
            .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "a shipped unit cannot be canceled: {answer}");
    let (status, details) =
        admin(&app, &format!("/orders/{id}/cancel"), Some(json!({ "line_items": [{ "id": sweater, "quantity": 1 }] })))
            .await;
    assert_eq!(status, StatusCode::OK, "{details}");
    let order = get_order(&app, &id).await;
    assert_eq!(order["line_items"][0]["quantity"], json!({ "original": 2, "total": 1, "fulfilled": 1 }));
    assert_eq!(order["line_items"][0]["status"], "fulfilled");
    let refunded = -order["adjustments"][0]["totals"][0]["amount"].as_i64().unwrap();
    let unit_share = placed["line_items"][0]["totals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|total| total["type"] == "total")
        .unwrap()["amount"]
        .as_i64()
        .unwrap()
        / 2;
    // And its share of the tax (this order ships free: all of its tax is the lines').
    let amount = |kind: &str| {
        placed["totals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|total| total["type"] == kind)
            .map(|total| total["amount"].as_i64().unwrap())
            .sum::<i64>()
    };
    let base = amount("subtotal") + amount("items_discount") + (amount("fulfillment") + amount("discount")).max(0);
    assert!(amount("tax") > 0, "the test order is taxed: {placed}");
    let tax_share = amount("tax") * unit_share / base;
    assert_eq!(refunded, unit_share + tax_share, "the canceled unit's share of its line and of the tax");

    let (status, _) = admin(
        &app,
        &format!("/orders/{id}/return"),
        Some(json!({ "line_items": [{ "id": sweater, "quantity": 1 }], "description": "Too small" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let order = get_order(&app, &id).await;
    assert_eq!(order["line_items"][0]["quantity"], json!({ "original": 2, "total": 0, "fulfilled": 0 }));
    assert_eq!(order["line_items"][0]["status"], "removed", "removed lines stay listed");
    assert_eq!(order["line_items"][1]["status"], "processing");
    let kinds: Vec<&str> =
        order["adjustments"].as_array().unwrap().iter().map(|a| a["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["cancellation", "return"]);
    assert_eq!(order["adjustments"][1]["line_items"], json!([{ "id": sweater, "quantity": -1 }]));
    let (status, _) =
        admin(&app, &format!("/orders/{id}/return"), Some(json!({ "line_items": [{ "id": sweater, "quantity": 1 }] })))
            .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "returned once");
}

// A partial cancel where shipping costs and is not taxed (CA, in the test rates): the unit
// gives back its own tax, all of which the goods carried, not a share spread over shipping.
#[tokio::test]
async fn a_partial_cancel_gives_back_the_tax_the_units_carried() {
    let app = app_with(|_| {}).await;
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 2) })).await;
    let completed = complete(&app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    let id = completed["order"]["id"].as_str().unwrap().to_owned();
    let placed = get_order(&app, &id).await;
    let amount = |kind: &str| {
        placed["totals"]
            .as_array()
            .unwrap()
            .iter()
            .find(|total| total["type"] == kind)
            .map(|total| total["amount"].as_i64().unwrap())
    };
    // 2 × 1500, standard shipping 599 (free only from 5000), CA tax 7.25 % of the goods: 218.
    assert_eq!(
        (amount("subtotal"), amount("fulfillment"), amount("tax")),
        (Some(3000), Some(599), Some(218)),
        "{placed}"
    );
    let mug = line_id(&placed, 0);
    let (status, _) =
        admin(&app, &format!("/orders/{id}/cancel"), Some(json!({ "line_items": [{ "id": mug, "quantity": 1 }] })))
            .await;
    assert_eq!(status, StatusCode::OK);
    let order = get_order(&app, &id).await;
    let refunded = -order["adjustments"][0]["totals"][0]["amount"].as_i64().unwrap();
    assert_eq!(refunded, 1500 + 109, "the mug and its half of the tax (218 × 1500 / 3000)");
}

#[tokio::test]
async fn orders_list_newest_first_by_status() {
    let app = app_with(|_| {}).await;
    let (first, _) = place(&app, "sandbox").await;
    let (second, _) = place(&app, "sandbox").await;
    admin(&app, &format!("/orders/{first}/cancel"), Some(json!({}))).await;

    let (status, list) = admin(&app, "/orders", None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let ids: Vec<&str> = list["orders"].as_array().unwrap().iter().map(|order| order["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&first.as_str()) && ids.contains(&second.as_str()));
    let (_, canceled) = admin(&app, "/orders?status=canceled", None).await;
    assert_eq!(canceled["orders"].as_array().unwrap().len(), 1);
    assert_eq!(canceled["orders"][0]["id"], first);
    let (_, page) = admin(&app, "/orders?limit=1", None).await;
    assert_eq!(page["orders"].as_array().unwrap().len(), 1);
    let next = page["next"].as_str().unwrap();
    let (_, rest) = admin(&app, &format!("/orders?limit=1&before={next}"), None).await;
    assert_eq!(rest["orders"].as_array().unwrap().len(), 1);
    assert_ne!(rest["orders"][0]["id"], page["orders"][0]["id"]);
    // `limit` is 1-100 (the admin OpenAPI): 0 is refused, not read as 1; above 100 is 100.
    for listing in ["/orders?limit=0", "/refunds?limit=0"] {
        let (status, refused) = admin(&app, listing, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{listing}: {refused}");
        assert_eq!(refused["message"], "limit must be at least 1", "{refused}");
    }
    // A limit that is no whole number is refused naming it, not with a generic text.
    for listing in ["/orders?limit=-1", "/refunds?limit=abc", "/orders?page=2"] {
        let (status, refused) = admin(&app, listing, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{listing}: {refused}");
        let message = refused["message"].as_str().unwrap();
        let named = if listing.contains("page") { "page" } else { "limit" };
        assert!(message.contains(named) && message.contains("whole number"), "{listing}: {message}");
    }
    let (status, all) = admin(&app, "/orders?limit=1000", None).await;
    assert_eq!((status, all["orders"].as_array().unwrap().len()), (StatusCode::OK, 2));
    let (status, _) = admin(&app, "/orders?status=shipped", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (status, document) = admin(&app, "/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(document["components"]["securitySchemes"]["adminKey"]["scheme"], "bearer");
    let paths =
        ["/admin/api/orders", "/admin/api/orders/{id}/ship", "/admin/api/orders/{id}/refund", "/admin/api/refunds"];
    for path in paths.into_iter().chain(["/admin/api/refunds/{key}/record", "/admin/api/refunds/{key}/dismiss"]) {
        assert!(document["paths"][path].is_object(), "{path}");
    }
}

// Only the admin key opens the admin API: none, a wrong one, or a platform's credential is 401.
#[tokio::test]
async fn platform_credentials_do_not_open_the_admin_api() {
    let app = spawn_app_with(fixture_products(), |settings, platform| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
        settings.platforms = vec![PlatformSettings {
            id: "a".into(),
            profiles: vec![platform.profile_url()],
            api_keys: vec![ucp_server::auth::hash_key_hex("platform-key")],
            oauth: None,
            mtls: None,
        }];
    })
    .await;
    let url = format!("{}/admin/api/orders", app.base_url);
    let attempts = [
        app.http.get(&url),
        app.http.get(&url).bearer_auth("wrong"),
        app.http.get(&url).header("x-api-key", "platform-key"),
        app.http.get(&url).bearer_auth("platform-key"),
        app.http.post(format!("{url}/ord_x/refund")).header("x-api-key", "platform-key").json(&json!({ "amount": 1 })),
    ];
    for request in attempts {
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"ucpd-admin\"");
    }
    let response = app.http.get(&url).bearer_auth(KEY).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

// Item 5: the buyer's order page shows the timeline — shipments with tracking links, refunds
// — behind its token.
#[tokio::test]
async fn the_order_page_shows_shipments_and_refunds() {
    let app = app_with(|_| {}).await;
    let (id, placed) = place(&app, "sandbox").await;
    let sweater = line_id(&placed, 0);
    admin(&app, &format!("/orders/{id}/ship"), Some(ship_body(json!([{ "id": sweater, "quantity": 2 }])))).await;
    admin(&app, &format!("/orders/{id}/deliver"), Some(json!({ "description": "Left at the front door" }))).await;
    admin(&app, &format!("/orders/{id}/refund"), Some(json!({ "amount": 250, "reason": "Scuffed box" }))).await;
    let permalink = placed["permalink_url"].as_str().unwrap();
    let html = app.http.get(permalink).send().await.unwrap().text().await.unwrap();
    for text in [
        "<a href=\"https://track.example/1Z999AA10123456784\">",
        "1Z999AA10123456784",
        "UPS",
        "Shipped",
        "Delivered",
        "Left at the front door",
        "Refund",
        "$2.50",
        "Scuffed box",
        "Partially fulfilled",
    ] {
        assert!(html.contains(text), "{text} missing:\n{html}");
    }
    let untokened = permalink.split('?').next().unwrap();
    let response = app.http.get(untokened).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND, "no token, no page");
}
