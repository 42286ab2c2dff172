//! The buyer handoff pages behind `continue_url` (checklist 122, 135): HTML over real HTTP,
//! the form updating the checkout, 3-D Secure approval, the sandbox "Place order" button,
//! the cart and order pages, escaping. The headless-Chromium render of the checkout page is
//! `handoff_browser.rs`.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use serde_json::{Value, json};

use crate::checkout::{complete, ready_checkout};
use crate::helpers::{TestApp, spawn_app, total_of};

const TOKEN_3DS: &str = "tok_sandbox_3ds";

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// `$12.34` for an amount in cents (what the pages show for USD).
pub(crate) fn usd(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

fn form_body(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish()
}

/// POSTs a form; returns the status, the `Location` header and the body.
async fn post_form(app: &TestApp, path: &str, fields: &[(&str, &str)]) -> (StatusCode, Option<String>, String) {
    let response = no_redirects()
        .post(format!("{}{path}", app.base_url))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form_body(fields))
        .send()
        .await
        .expect("form posted");
    let status = response.status();
    let location = response.headers().get(LOCATION).map(|value| value.to_str().unwrap().to_owned());
    (status, location, response.text().await.unwrap())
}

/// GETs a page, checking the headers every handoff page carries.
async fn page(app: &TestApp, path: &str) -> (StatusCode, String) {
    let response = app.http.get(format!("{}{path}", app.base_url)).send().await.expect("page fetched");
    let status = response.status();
    let headers = response.headers();
    assert_eq!(headers[CONTENT_TYPE], "text/html; charset=utf-8", "{path}");
    assert_eq!(
        headers["content-security-policy"],
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        "{path}"
    );
    assert_eq!(headers["x-frame-options"], "DENY", "{path}");
    assert_eq!(headers["cache-control"], "no-store", "{path}");
    assert!(headers.get("strict-transport-security").is_none(), "not over plain http: {path}");
    (status, response.text().await.unwrap())
}

/// The page shell every handoff page has: language, main landmark, one h1, no scripts.
fn assert_accessible_shell(html: &str) {
    assert!(html.starts_with("<!doctype html>"), "{html}");
    assert!(html.contains("<html lang=\"en\">"));
    assert_eq!(html.matches("<main").count(), 1, "one main landmark");
    assert_eq!(html.matches("<h1>").count(), 1, "one h1");
    assert!(html.contains("<title>"));
    assert!(!html.to_lowercase().contains("<script"), "no JavaScript");
}

/// Every visible form control has a `<label for>` naming its id.
fn assert_inputs_labelled(html: &str) {
    let mut controls = 0;
    for tag in html.split("<input").skip(1) {
        let tag = &tag[..tag.find('>').unwrap()];
        if tag.contains("type=\"hidden\"") {
            continue;
        }
        let id = tag.split("id=\"").nth(1).and_then(|rest| rest.split('"').next()).unwrap_or_else(|| {
            panic!("input without an id: <input{tag}>");
        });
        assert!(html.contains(&format!("<label for=\"{id}\"")), "input {id} has no label");
        controls += 1;
    }
    assert!(controls > 0, "the page has inputs");
}

/// The continue_url path of a checkout body (`/checkout/{id}?t={token}`).
pub fn continue_path(app: &TestApp, body: &Value) -> String {
    let url = body["continue_url"].as_str().unwrap_or_else(|| panic!("continue_url: {body}"));
    url.strip_prefix(&app.base_url).unwrap_or_else(|| panic!("{url} is under {}", app.base_url)).to_owned()
}

/// The path of a completed checkout's order page (`/orders/{id}?t={token}`), from its body.
pub fn permalink_path(app: &TestApp, body: &Value) -> String {
    let url = body["order"]["permalink_url"].as_str().unwrap_or_else(|| panic!("permalink_url: {body}"));
    url.strip_prefix(&app.base_url).unwrap_or_else(|| panic!("{url} is under {}", app.base_url)).to_owned()
}

/// A path under a page, keeping its token: `under("/checkout/x?t=T", "/3ds")` is
/// `/checkout/x/3ds?t=T`.
pub fn under(path: &str, suffix: &str) -> String {
    let (page, query) = path.split_once('?').unwrap_or((path, ""));
    format!("{page}{suffix}?{query}")
}

pub(crate) async fn create_checkout(app: &TestApp, checkout: Value) -> Value {
    let created = app.tool("create_checkout", json!({ "checkout": checkout })).await;
    assert!(created["id"].is_string(), "{created}");
    created
}

async fn get_checkout(app: &TestApp, id: &str) -> Value {
    app.tool("get_checkout", json!({ "id": id })).await
}

fn the_form() -> Vec<(&'static str, &'static str)> {
    vec![
        ("email", "grace@example.com"),
        ("first_name", "Grace"),
        ("last_name", "Hopper"),
        ("phone", ""),
        ("street", "1 Infinite Loop"),
        ("street2", ""),
        ("city", "Cupertino"),
        ("region", "CA"),
        ("postal_code", "95014"),
        ("country", "us"),
        ("shipping_option", "standard"),
        ("discount_codes", ""),
    ]
}

#[tokio::test]
async fn checkout_page_shows_items_totals_messages_and_an_accessible_form() {
    let app = spawn_app().await;
    let created = create_checkout(
        &app,
        json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 2 }, { "item": { "id": "sweater-m" }, "quantity": 1 }] }),
    )
    .await;
    let path = continue_path(&app, &created);
    let token = path.strip_prefix(&format!("/checkout/{}?t=", created["id"].as_str().unwrap())).expect(&path);
    assert_eq!(token.len(), 22, "a 128-bit base64url token: {path}");

    let (status, html) = page(&app, &path).await;
    assert_eq!(status, StatusCode::OK);
    assert_accessible_shell(&html);
    assert_inputs_labelled(&html);
    for text in ["Ceramic Coffee Mug", "Merino Wool Sweater", "$15.00", "$30.00", "$89.00", "ucpd demo shop"] {
        assert!(html.contains(text), "{text} missing:\n{html}");
    }
    let total = total_of(&created["totals"], "total").unwrap();
    assert_eq!(total, 2 * 1500 + 8900);
    assert!(html.contains(&format!("<th scope=\"row\" colspan=\"3\">Total</th><td class=\"num\">{}</td>", usd(total))));
    // Email and address are missing: the messages are in an alert region, next to their fields.
    assert!(html.contains("role=\"alert\""), "{html}");
    assert!(html.contains("A shipping address is required."), "{html}");
    assert!(html.contains("aria-invalid=\"true\" aria-describedby=\"f-street-error\""), "{html}");
    assert!(html.contains(&format!("<form method=\"post\" action=\"{path}\"")), "{html}");
    for name in ["email", "first_name", "last_name", "phone", "street", "city", "region", "postal_code", "country"] {
        assert!(html.contains(&format!("name=\"{name}\"")), "field {name}");
    }
    assert!(!html.contains("Place order"), "not ready: no place-order button");
    assert!(!html.contains("Verify your card"));
}

#[tokio::test]
async fn posting_the_form_makes_the_checkout_ready_for_complete() {
    let app = spawn_app().await;
    let created = create_checkout(&app, json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 2 }] })).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let line_id = created["line_items"][0]["id"].clone();
    let path = continue_path(&app, &created);
    let (status, location, _) = post_form(&app, &path, &the_form()).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some(path.as_str()), "the redirect keeps the token");

    let stored = get_checkout(&app, &id).await;
    assert_eq!(stored["status"], "ready_for_complete", "{stored}");
    assert_eq!(stored["buyer"]["email"], "grace@example.com");
    assert_eq!(stored["buyer"]["first_name"], "Grace");
    assert_eq!(stored["line_items"][0]["id"], line_id, "lines are kept");
    assert_eq!(stored["line_items"][0]["quantity"], 2);
    let method = &stored["fulfillment"]["methods"][0];
    assert_eq!(method["destinations"][0]["address_country"], "US");
    assert_eq!(method["destinations"][0]["postal_code"], "95014");
    assert_eq!(method["groups"][0]["selected_option_id"], "standard");
    // 3000 + standard shipping 599 + CA tax 7.25% of 3000 (218).
    assert_eq!(total_of(&stored["totals"], "total"), Some(3000 + 599 + 218));

    let (_, html) = page(&app, &path).await;
    assert!(!html.contains("role=\"alert\""), "no messages left:\n{html}");
    assert!(html.contains("value=\"grace@example.com\""));
    assert!(html.contains("value=\"standard\" checked"), "{html}");
    assert!(html.contains("Express shipping"));
    assert!(html.contains(&usd(3817)));
    assert!(html.contains("<button type=\"submit\">Place order</button>"));

    // A discount code from the form applies (SAVE10 is in the demo rules) and lines survive.
    let mut with_code = the_form();
    with_code.retain(|(name, _)| *name != "discount_codes");
    with_code.push(("discount_codes", "FREESHIP"));
    let (status, _, _) = post_form(&app, &path, &with_code).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let stored = get_checkout(&app, &id).await;
    assert_eq!(stored["discounts"]["codes"], json!(["FREESHIP"]), "{stored}");
    assert_eq!(total_of(&stored["totals"], "total"), Some(3000 + 218));
}

#[tokio::test]
async fn bad_form_input_re_renders_the_page_with_the_domain_messages() {
    let app = spawn_app().await;
    let created = create_checkout(&app, json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let path = continue_path(&app, &created);

    let mut bad_email = the_form();
    bad_email[0] = ("email", "not-an-email");
    let (status, location, html) = post_form(&app, &path, &bad_email).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{html}");
    assert!(location.is_none());
    assert_accessible_shell(&html);
    assert!(html.contains("role=\"alert\""));
    assert!(html.contains("&quot;not-an-email&quot; is not a valid email address."), "{html}");
    assert!(html.contains("aria-invalid=\"true\" aria-describedby=\"f-email-hint f-email-error\""), "{html}");
    assert_eq!(get_checkout(&app, &id).await["status"], "incomplete");

    // Missing address fields and no option: the page names each, nothing is a 500.
    let (status, _, html) = post_form(&app, &path, &[("email", "grace@example.com"), ("street", "1 Main St")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("The shipping address needs address locality."), "{html}");

    // Too many codes is a request error of update_checkout: shown, nothing saved.
    let codes = (0..21).map(|n| format!("CODE{n}")).collect::<Vec<_>>().join(",");
    let mut many = the_form();
    many.push(("discount_codes", &codes));
    many.retain(|(name, value)| *name != "discount_codes" || !value.is_empty());
    let (status, _, html) = post_form(&app, &path, &many).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("more than 20 codes"), "{html}");
    assert!(html.contains("value=\"grace@example.com\""), "what the buyer typed is kept");

    // An overlong field, a country we do not ship to, a body that is not a form.
    let long = "x".repeat(300);
    let (status, _, html) = post_form(&app, &path, &[("city", long.as_str())]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("City is too long"), "{html}");
    let mut abroad = the_form();
    abroad[9] = ("country", "AQ");
    let (status, _, html) = post_form(&app, &path, &abroad).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("We do not ship to AQ"), "{html}");
    let response = no_redirects()
        .post(format!("{}{path}", app.base_url))
        .header(CONTENT_TYPE, "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(response.text().await.unwrap().contains("The form could not be read"));
}

#[tokio::test]
async fn approving_the_3ds_challenge_places_the_order() {
    let app = spawn_app().await;
    let created = create_checkout(&app, ready_checkout("mug-1", 1)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let escalated = complete(&app, &id, TOKEN_3DS).await;
    assert_eq!(escalated["status"], "requires_escalation", "{escalated}");
    let path = continue_path(&app, &escalated);

    let (status, html) = page(&app, &path).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("<h2 id=\"verify-heading\">Verify your card</h2>"), "{html}");
    let approve = under(&path, "/3ds");
    assert!(html.contains(&format!("action=\"{approve}\"><button type=\"submit\">Approve payment</button>")));
    assert!(!html.contains("Place order"), "no second payment while the challenge is open");

    let (status, location, _) = post_form(&app, &approve, &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = location.unwrap();
    let stored = get_checkout(&app, &id).await;
    assert_eq!(stored["status"], "completed", "{stored}");
    let order_id = stored["order"]["id"].as_str().unwrap();
    assert_eq!(location, permalink_path(&app, &stored), "to the permalink, token and all");
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(order["checkout_id"], id.as_str());

    let (status, html) = page(&app, &location).await;
    assert_eq!(status, StatusCode::OK);
    assert_accessible_shell(&html);
    for text in [order_id, "Ceramic Coffee Mug", "Processing", "1 Infinite Loop", "Standard shipping"] {
        assert!(html.contains(text), "{text} missing:\n{html}");
    }

    // Approving again (a double click) goes to the same order; nothing is charged twice.
    let (status, again, _) = post_form(&app, &approve, &[]).await;
    assert_eq!((status, again.as_deref()), (StatusCode::SEE_OTHER, Some(location.as_str())));
    let (_, html) = page(&app, &path).await;
    assert!(html.contains(&format!("<a href=\"{location}\">View order {order_id}</a>")), "{html}");
    assert!(!html.contains("<form"), "a completed checkout has no form");
}

#[tokio::test]
async fn place_order_button_pays_with_the_sandbox() {
    let app = spawn_app().await;
    let created = create_checkout(&app, ready_checkout("sweater-m", 2)).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let place = under(&continue_path(&app, &created), "/place");
    let (status, location, _) = post_form(&app, &place, &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let stored = get_checkout(&app, &id).await;
    assert_eq!(stored["status"], "completed", "{stored}");
    let order_path = permalink_path(&app, &stored);
    assert_eq!(location.as_deref(), Some(order_path.as_str()));
    let (_, html) = page(&app, &order_path).await;
    assert!(html.contains("Merino Wool Sweater") && html.contains(&usd(17_800)), "{html}");
    let (_, again, _) = post_form(&app, &place, &[]).await;
    assert_eq!(again, location, "a second click lands on the same order");

    // Not ready: placing answers the page with the reasons, no order.
    let incomplete =
        create_checkout(&app, json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })).await;
    let incomplete_id = incomplete["id"].as_str().unwrap();
    let (status, _, html) = post_form(&app, &under(&continue_path(&app, &incomplete), "/place"), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(html.contains("role=\"alert\"") && html.contains("A shipping address is required."), "{html}");
    assert_eq!(get_checkout(&app, incomplete_id).await["status"], "incomplete");
}

#[tokio::test]
async fn cart_page_checks_out_into_a_checkout() {
    let app = spawn_app().await;
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 3 }] } }))
        .await;
    let path = continue_path(&app, &cart);
    let (status, html) = page(&app, &path).await;
    assert_eq!(status, StatusCode::OK);
    assert_accessible_shell(&html);
    assert!(html.contains("Ceramic Coffee Mug") && html.contains("$45.00"), "{html}");
    assert!(html.contains("<button type=\"submit\">Check out</button>"));

    let (status, location, _) = post_form(&app, &under(&path, "/checkout"), &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let location = location.unwrap();
    let checkout_id = location.strip_prefix("/checkout/").unwrap().split('?').next().unwrap();
    let checkout = get_checkout(&app, checkout_id).await;
    assert_eq!(checkout["cart_id"], cart["id"]);
    assert_eq!(checkout["line_items"][0]["quantity"], 3);
    let (_, html) = page(&app, &location).await;
    assert!(html.contains("Ceramic Coffee Mug") && html.contains("$45.00"));
    // Checking out again reuses the open checkout.
    let (_, again, _) = post_form(&app, &under(&path, "/checkout"), &[]).await;
    assert_eq!(again.as_deref(), Some(location.as_str()));
}

#[tokio::test]
async fn unknown_and_expired_ids_get_a_friendly_404() {
    let app = spawn_app().await;
    for path in
        ["/checkout/chk_nope", "/orders/ord_nope", "/cart/cart_nope", "/policies/cookies", "/checkout/%3Cscript%3E"]
    {
        let (status, html) = page(&app, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_accessible_shell(&html);
        assert!(html.contains("not found") && html.contains("may have expired"), "{html}");
        assert!(!html.contains("<script>"));
    }
    for path in ["/checkout/chk_nope", "/checkout/chk_nope/3ds", "/checkout/chk_nope/place", "/cart/cart_nope/checkout"]
    {
        let (status, _, _) = post_form(&app, path, &the_form()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
    // A cart id is not a checkout, and an expired checkout is gone for the buyer too.
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
        .await;
    let as_checkout = continue_path(&app, &cart).replacen("/cart/", "/checkout/", 1);
    let (status, _) = page(&app, &as_checkout).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{as_checkout}");
    let created = create_checkout(&app, json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })).await;
    app.clock.advance(7 * 24 * 3600);
    let (status, _) = page(&app, &continue_path(&app, &created)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn policies_name_the_business() {
    let app = spawn_app().await;
    for slug in ["privacy", "terms", "refunds", "shipping"] {
        let (status, html) = page(&app, &format!("/policies/{slug}")).await;
        assert_eq!(status, StatusCode::OK, "{slug}");
        assert_accessible_shell(&html);
        assert!(html.contains("ucpd demo shop"), "{html}");
    }
}

#[tokio::test]
async fn buyer_input_is_escaped() {
    let app = spawn_app().await;
    let mut checkout = ready_checkout("mug-1", 1);
    checkout["buyer"]["first_name"] = json!("<script>alert(\"x\")</script>");
    checkout["buyer"]["last_name"] = json!("O'Brien & \"Co\" <b>");
    checkout["fulfillment"]["methods"][0]["destinations"][0]["street_address"] =
        json!("\"><img src=x onerror=alert(1)>");
    let created = create_checkout(&app, checkout).await;
    let (status, html) = page(&app, &continue_path(&app, &created)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(!html.contains("<b>"));
    assert!(html.contains("value=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\""), "{html}");
    assert!(html.contains("value=\"O&#39;Brien &amp; &quot;Co&quot; &lt;b&gt;\""), "{html}");
    assert!(html.contains("value=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\""), "{html}");

    // The same through the form, and on the order page.
    let path = continue_path(&app, &created);
    let mut form = the_form();
    form[1] = ("first_name", "<i>Grace</i>");
    let (status, _, _) = post_form(&app, &path, &form).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, location, _) = post_form(&app, &under(&path, "/place"), &[]).await;
    let (_, html) = page(&app, &location.unwrap()).await;
    assert!(html.contains("&lt;i&gt;Grace&lt;/i&gt; Hopper"), "{html}");
    assert!(!html.contains("<i>"));
}

#[tokio::test]
async fn cross_site_form_posts_are_refused() {
    let app = spawn_app().await;
    let created = create_checkout(&app, ready_checkout("mug-1", 1)).await;
    let id = created["id"].as_str().unwrap();
    let place = under(&continue_path(&app, &created), "/place");
    let response = no_redirects()
        .post(format!("{}{place}", app.base_url))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header("origin", "https://evil.example")
        .body("")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(get_checkout(&app, id).await["status"], "ready_for_complete");
    // The page's own origin is fine.
    let response = no_redirects()
        .post(format!("{}{place}", app.base_url))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header("origin", app.base_url.as_str())
        .body("")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
}
