//! The buyer pages need their resource's token (issue 8 item 6): `continue_url` (checklist
//! 114, 123) and the order permalink (131, 151) carry `?t=`, and without the right token the
//! pages answer exactly as for an unknown id, showing nothing of the resource.

use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;
use serde_json::json;

use crate::checkout::{TOKEN_SUCCESS, complete, ready_checkout};
use crate::handoff::{continue_path, permalink_path, under};
use crate::helpers::{TestApp, spawn_app};

const EMAIL: &str = "ada@example.com";
const TITLE: &str = "Ceramic Coffee Mug";
const STREET: &str = "1 Infinite Loop";

async fn get(app: &TestApp, path: &str) -> (StatusCode, String) {
    let response = app.http.get(format!("{}{path}", app.base_url)).send().await.expect("page fetched");
    (response.status(), response.text().await.unwrap())
}

async fn post(app: &TestApp, path: &str) -> StatusCode {
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let response = client
        .post(format!("{}{path}", app.base_url))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body("")
        .send()
        .await
        .expect("form posted");
    response.status()
}

/// The token-less path of a page path (`/checkout/x?t=T` → `/checkout/x`).
fn bare(path: &str) -> &str {
    path.split_once('?').map_or(path, |(page, _)| page)
}

/// The token of a page path.
fn token(path: &str) -> &str {
    path.split_once("?t=").expect("a token").1
}

/// `path` refused: the unknown-id page, byte for byte, with nothing of the resource.
async fn assert_refused(app: &TestApp, path: &str, unknown: &str) {
    let (status, html) = get(app, path).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    for secret in [EMAIL, TITLE, STREET] {
        assert!(!html.contains(secret), "{path} shows {secret}:\n{html}");
    }
    let (_, unknown_html) = get(app, unknown).await;
    assert_eq!(html, unknown_html, "{path} answers as the unknown {unknown} does");
}

#[tokio::test]
async fn continue_url_opens_the_checkout_and_no_other_url_does() {
    let app = spawn_app().await;
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let other = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let path = continue_path(&app, &created);
    let other_path = continue_path(&app, &other);
    assert_ne!(token(&path), token(&other_path), "per-resource tokens");

    let (status, html) = get(&app, &path).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains(EMAIL) && html.contains(TITLE), "{html}");

    let mut flipped = token(&path).to_owned().into_bytes();
    flipped[0] = if flipped[0] == b'A' { b'B' } else { b'A' };
    let flipped = String::from_utf8(flipped).unwrap();
    let unknown = "/checkout/chk_unknown";
    for refused in [
        bare(&path).to_owned(),
        format!("{}?t=", bare(&path)),
        format!("{}?t={flipped}", bare(&path)),
        format!("{}?t={}", bare(&path), token(&other_path)),
        format!("{}?t={}x", bare(&path), token(&path)),
        format!("{}?token={}", bare(&path), token(&path)),
    ] {
        assert_refused(&app, &refused, unknown).await;
    }

    // The form posts need it too: another checkout's token neither updates nor places.
    let foreign = format!("{}?t={}", bare(&path), token(&other_path));
    for suffix in ["", "/3ds", "/place"] {
        assert_eq!(post(&app, &under(&foreign, suffix)).await, StatusCode::NOT_FOUND, "{suffix}");
        assert_eq!(post(&app, &format!("{}{suffix}", bare(&path))).await, StatusCode::NOT_FOUND, "{suffix}");
    }
    let stored = app.tool("get_checkout", json!({ "id": id })).await;
    assert_eq!(stored["status"], "ready_for_complete", "nothing ran: {stored}");
    // With its own token the checkout places.
    assert_eq!(post(&app, &under(&path, "/place")).await, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn cart_continue_url_needs_its_token() {
    let app = spawn_app().await;
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
        .await;
    let path = continue_path(&app, &cart);
    let (status, html) = get(&app, &path).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(TITLE), "{html}");
    assert_refused(&app, bare(&path), "/cart/cart_unknown").await;
    assert_eq!(post(&app, &format!("{}/checkout", bare(&path))).await, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn order_permalink_needs_its_token() {
    let app = spawn_app().await;
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let checkout_path = continue_path(&app, &created);
    let completed = complete(&app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let path = permalink_path(&app, &completed);
    let order_id = completed["order"]["id"].as_str().unwrap();
    assert!(path.starts_with(&format!("/orders/{order_id}?t=")), "{path}");
    // get_order's stored permalink is the same tokenized URL.
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(order["permalink_url"], completed["order"]["permalink_url"]);

    let (status, html) = get(&app, &path).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains(TITLE) && html.contains(STREET) && html.contains(order_id), "{html}");

    let unknown = "/orders/ord_unknown";
    for refused in [
        bare(&path).to_owned(),
        // The checkout's token does not open its order.
        format!("{}?t={}", bare(&path), token(&checkout_path)),
    ] {
        assert_refused(&app, &refused, unknown).await;
    }
}
