//! The merchant console's order action forms (issue 9 item 1): ship and cancel chosen units,
//! failed delivery, return, refund and adjustment, each a form on the order page behind the
//! session, its CSRF token and the same origin.

use reqwest::StatusCode;
use reqwest::header::LOCATION;
use serde_json::json;

use crate::console::{console_app, csrf_of, get, log_in, place_order, post};
use crate::helpers::TestApp;

#[tokio::test]
async fn the_order_forms_ship_and_refuse_an_over_refund() {
    let app = console_app().await;
    let completed = place_order(&app).await;
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    let cookie = log_in(&app).await;
    let page = format!("/admin/orders/{order_id}");
    let (status, _, html) = get(&app, &page, Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    for label in ["Ship", "Cancel the units", "Refund", "Record the adjustment"] {
        assert!(html.contains(&format!("<button type=\"submit\">{label}</button>")), "{label}: {html}");
    }
    assert!(html.contains("<label for=\"ship-tracking_number\">"), "the fields have labels: {html}");
    let csrf = csrf_of(&html);

    let fields = [
        ("csrf", csrf.as_str()),
        ("carrier", "UPS"),
        ("tracking_number", "1Z999"),
        ("tracking_url", "https://track.example/1Z999"),
    ];
    let shipped = post(&app, &format!("{page}/ship"), Some(&cookie), Some(&app.base_url), &fields).await;
    assert_eq!(shipped.status(), StatusCode::SEE_OTHER);
    assert_eq!(shipped.headers()[LOCATION], page.as_str());
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let line = &order["line_items"][0];
    assert_eq!(line["status"], "fulfilled", "{order}");
    assert_eq!(line["quantity"]["fulfilled"], line["quantity"]["total"], "{order}");
    assert_eq!(order["fulfillment"]["events"][0]["tracking_number"], "1Z999", "{order}");
    let (_, _, html) = get(&app, &page, Some(&cookie)).await;
    assert!(!html.contains(&format!("action=\"{page}/ship\"")) && html.contains("Mark delivered"), "{html}");

    let total = crate::helpers::total_of(&completed["totals"], "total").unwrap();
    let too_much = (total + 1).to_string();
    let fields = [("csrf", csrf.as_str()), ("amount", too_much.as_str()), ("reason", "too much")];
    let refused = post(&app, &format!("{page}/refund"), Some(&cookie), Some(&app.base_url), &fields).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = refused.text().await.unwrap();
    assert!(text.contains("<h1>Not done</h1>"), "{text}");
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");
    // Not a number; an unknown action; no CSRF token.
    let fields = [("csrf", csrf.as_str()), ("amount", "ten")];
    let refused = post(&app, &format!("{page}/refund"), Some(&cookie), Some(&app.base_url), &fields).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let fields = [("csrf", csrf.as_str())];
    let unknown = post(&app, &format!("{page}/explode"), Some(&cookie), Some(&app.base_url), &fields).await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    let forged = post(&app, &format!("{page}/cancel"), Some(&cookie), Some(&app.base_url), &[]).await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");
}

// Issue 9 item 2: the deliveries page, empty, then with the event of an order whose platform
// names an order webhook URL (nothing listens there: the event stays pending or failing).

/// The order page, checked for labels (every visible input and select), a legend in every
/// fieldset, and the CSRF token of its forms.
async fn order_page(app: &TestApp, cookie: &str, page: &str) -> (String, String) {
    let (status, _, html) = get(app, page, Some(cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    let controls = html.split("<input type=\"").skip(1).filter(|input| !input.starts_with("hidden"));
    for control in controls.chain(html.split("<select ").skip(1)) {
        let id = control.split("id=\"").nth(1).and_then(|rest| rest.split('"').next()).expect("an id");
        assert_eq!(html.matches(&format!("<label for=\"{id}\">")).count(), 1, "input {id} has one label: {html}");
    }
    assert_eq!(html.matches("<fieldset>").count(), html.matches("<fieldset>\n<legend>").count(), "{html}");
    let csrf = csrf_of(&html);
    (html, csrf)
}

/// Posts an order page's `action` form as the console does: same origin, the session's CSRF
/// token among the fields.
async fn post_action(
    app: &TestApp,
    cookie: &str,
    csrf: &str,
    page: &str,
    action: &str,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut fields = fields.to_vec();
    fields.push(("csrf", csrf));
    post(app, &format!("{page}/{action}"), Some(cookie), Some(&app.base_url), &fields).await
}

/// `<input type="number" id="{id}" name="line:{line}" value="{value}" min="0" max="{max}"`.
fn units_field(id: &str, line: &str, value: i64, max: i64) -> String {
    format!("<input type=\"number\" id=\"{id}\" name=\"line:{line}\" value=\"{value}\" min=\"0\" max=\"{max}\"")
}

// The ship and cancel forms take units line by line (all remaining by default): 1 of 2
// shipped leaves the line partial, the other canceled leaves it fulfilled with one unit.
#[tokio::test]
async fn the_order_forms_ship_and_cancel_the_units_chosen() {
    let app = console_app().await;
    let completed = place_order(&app).await;
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    let cookie = log_in(&app).await;
    let page = format!("/admin/orders/{order_id}");
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let line = order["line_items"][0]["id"].as_str().unwrap().to_owned();
    let (html, csrf) = order_page(&app, &cookie, &page).await;
    assert!(html.contains("<legend>Units to ship (all remaining unless changed)</legend>"), "{html}");
    assert!(html.contains(&units_field("ship-line-0", &line, 2, 2)), "all remaining by default: {html}");
    assert!(html.contains(&units_field("cancel-line-0", &line, 2, 2)), "{html}");
    assert!(html.contains("<label for=\"ship-line-0\">Ceramic Coffee Mug (2 left to ship)</label>"), "{html}");
    assert!(!html.contains(&format!("action=\"{page}/return\"")), "nothing shipped: {html}");
    assert!(!html.contains(&format!("action=\"{page}/fail-delivery\"")), "nothing shipped: {html}");

    let units = format!("line:{line}");
    let send =
        async |action: &str, fields: &[(&str, &str)]| post_action(&app, &cookie, &csrf, &page, action, fields).await;
    let ship = |quantity| {
        [
            (units.as_str(), quantity),
            ("carrier", "UPS"),
            ("tracking_number", "1Z1"),
            ("tracking_url", "https://track.example/1Z1"),
        ]
    };
    // More than is left, a quantity that is no number or negative, nothing chosen: refused.
    for quantity in ["3", "one", "-1", "0"] {
        let response = send("ship", &ship(quantity)).await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{quantity}");
        assert!(response.text().await.unwrap().contains("<h1>Not done</h1>"), "{quantity}");
    }
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");

    let shipped = send("ship", &ship("1")).await;
    assert_eq!(shipped.status(), StatusCode::SEE_OTHER);
    assert_eq!(shipped.headers()[LOCATION], page.as_str());
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(order["line_items"][0]["status"], "partial", "{order}");
    assert_eq!(order["line_items"][0]["quantity"]["fulfilled"], 1, "{order}");
    assert_eq!(order["line_items"][0]["quantity"]["total"], 2, "{order}");
    let event = &order["fulfillment"]["events"][0];
    assert_eq!(event["type"], "shipped", "{order}");
    assert_eq!(event["line_items"], json!([{ "id": line, "quantity": 1 }]), "{order}");
    assert_eq!(event["tracking_number"], "1Z1", "{order}");

    // One unit left: the forms now offer it.
    let (html, _) = order_page(&app, &cookie, &page).await;
    assert!(html.contains(&units_field("ship-line-0", &line, 1, 1)), "{html}");
    assert!(html.contains(&units_field("cancel-line-0", &line, 1, 1)), "{html}");
    assert!(html.contains(&units_field("return-line-0", &line, 0, 1)), "returns choose none by default: {html}");
    let response = send("cancel", &[(units.as_str(), "2")]).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "only one is left to cancel");
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");

    let canceled = send("cancel", &[(units.as_str(), "1"), ("reason", "out of stock")]).await;
    assert_eq!(canceled.status(), StatusCode::SEE_OTHER);
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let item = &order["line_items"][0];
    assert_eq!((&item["quantity"]["total"], &item["quantity"]["fulfilled"]), (&json!(1), &json!(1)), "{order}");
    assert_eq!(item["status"], "fulfilled", "{order}");
    let adjustment = &order["adjustments"][0];
    assert_eq!(adjustment["type"], "cancellation", "{order}");
    assert_eq!(adjustment["line_items"], json!([{ "id": line, "quantity": -1 }]), "{order}");
    assert_eq!(adjustment["description"], "out of stock", "{order}");
    let (html, _) = order_page(&app, &cookie, &page).await;
    assert!(!html.contains(&format!("action=\"{page}/ship\"")), "{html}");
    assert!(!html.contains(&format!("action=\"{page}/cancel\"")), "{html}");
    assert!(html.contains("Adjustment: cancellation"), "the timeline: {html}");
}

// The failed delivery, return and adjustment forms, each as `get_order` then shows it.
#[tokio::test]
async fn the_order_forms_record_a_failed_delivery_a_return_and_an_adjustment() {
    let app = console_app().await;
    let completed = place_order(&app).await;
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    let cookie = log_in(&app).await;
    let page = format!("/admin/orders/{order_id}");
    let (_, csrf) = order_page(&app, &cookie, &page).await;
    let send =
        async |action: &str, fields: &[(&str, &str)]| post_action(&app, &cookie, &csrf, &page, action, fields).await;
    let shipped = send("ship", &[("tracking_number", "1Z2"), ("tracking_url", "https://track.example/1Z2")]).await;
    assert_eq!(shipped.status(), StatusCode::SEE_OTHER, "a post without units ships them all");
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(order["line_items"][0]["status"], "fulfilled", "{order}");
    let line = order["line_items"][0]["id"].as_str().unwrap().to_owned();
    let units = format!("line:{line}");

    let (html, _) = order_page(&app, &cookie, &page).await;
    for label in ["Record a failed delivery attempt", "Record the return", "Record the adjustment"] {
        assert!(html.contains(&format!("<button type=\"submit\">{label}</button>")), "{label}: {html}");
    }
    assert!(html.contains("<legend>Units returned</legend>"), "{html}");
    assert!(html.contains("<label for=\"adjust-status\">") && html.contains("<select id=\"adjust-status\""), "{html}");

    // A failed delivery attempt: an event for the units in transit, quantities unchanged.
    let failed = send("fail-delivery", &[("description", "nobody home")]).await;
    assert_eq!(failed.status(), StatusCode::SEE_OTHER);
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let event = &order["fulfillment"]["events"][1];
    assert_eq!(event["type"], "failed_attempt", "{order}");
    assert_eq!(event["description"], "nobody home", "{order}");
    assert_eq!(event["line_items"], json!([{ "id": line, "quantity": 2 }]), "{order}");
    assert_eq!(event["tracking_number"], "1Z2", "the shipment's tracking: {order}");
    assert_eq!(order["line_items"][0]["quantity"]["fulfilled"], 2, "{order}");

    // A return: nothing chosen, or more than was shipped, is refused; 1 of 2 is recorded.
    for quantity in ["0", "3"] {
        let refused = send("return", &[(units.as_str(), quantity)]).await;
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY, "{quantity}");
    }
    let refused = send("return", &[("description", "no units")]).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");
    let fields = [(units.as_str(), "1"), ("carrier", "DHL"), ("tracking_number", "RT1"), ("description", "too small")];
    let returned = send("return", &fields).await;
    assert_eq!(returned.status(), StatusCode::SEE_OTHER);
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let event = &order["fulfillment"]["events"][2];
    assert_eq!(event["type"], "returned", "{order}");
    assert_eq!(event["line_items"], json!([{ "id": line, "quantity": 1 }]), "{order}");
    assert_eq!((&event["carrier"], &event["tracking_number"]), (&json!("DHL"), &json!("RT1")), "{order}");
    let item = &order["line_items"][0];
    assert_eq!((&item["quantity"]["total"], &item["quantity"]["fulfilled"]), (&json!(1), &json!(1)), "{order}");
    assert_eq!(order["adjustments"][0]["type"], "return", "{order}");
    assert_eq!(order["adjustments"][0]["line_items"], json!([{ "id": line, "quantity": -1 }]), "{order}");

    // An adjustment: a bad amount, status or type is refused; a pending credit is recorded.
    for (kind, amount, status) in [("credit", "a lot", "pending"), ("credit", "-300", "maybe"), ("refund", "-300", "")]
    {
        let refused = send("adjust", &[("type", kind), ("amount", amount), ("status", status)]).await;
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY, "{kind} {amount} {status}");
        assert!(refused.text().await.unwrap().contains("<h1>Not done</h1>"));
    }
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");
    let fields = [("type", "credit"), ("amount", "-300"), ("status", "pending"), ("description", "goodwill")];
    let adjusted = send("adjust", &fields).await;
    assert_eq!(adjusted.status(), StatusCode::SEE_OTHER);
    assert_eq!(adjusted.headers()[LOCATION], page.as_str());
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let adjustment = &order["adjustments"][1];
    assert_eq!(adjustment["type"], "credit", "{order}");
    assert_eq!(adjustment["status"], "pending", "{order}");
    assert_eq!(adjustment["description"], "goodwill", "{order}");
    assert_eq!(adjustment["totals"], json!([{ "type": "total", "amount": -300 }]), "{order}");
    let (html, _) = order_page(&app, &cookie, &page).await;
    for what in ["Fulfillment: failed_attempt", "Fulfillment: returned", "Adjustment: return", "Adjustment: credit"] {
        assert!(html.contains(what), "the timeline shows {what}: {html}");
    }
}

// Every new form's post is refused without the CSRF token, with a wrong one, or from another
// origin, and changes nothing.
#[tokio::test]
async fn the_new_order_forms_need_the_csrf_token_and_the_origin() {
    let app = console_app().await;
    let completed = place_order(&app).await;
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    let cookie = log_in(&app).await;
    let page = format!("/admin/orders/{order_id}");
    let (_, csrf) = order_page(&app, &cookie, &page).await;
    let fields = [("csrf", csrf.as_str()), ("tracking_number", "1Z3"), ("tracking_url", "https://track.example/1Z3")];
    let shipped = post(&app, &format!("{page}/ship"), Some(&cookie), Some(&app.base_url), &fields).await;
    assert_eq!(shipped.status(), StatusCode::SEE_OTHER);
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    let units = format!("line:{}", order["line_items"][0]["id"].as_str().unwrap());

    let posts: [(&str, Vec<(&str, &str)>); 5] = [
        (
            "ship",
            vec![(units.as_str(), "1"), ("tracking_number", "1Z4"), ("tracking_url", "https://track.example/1Z4")],
        ),
        ("cancel", vec![(units.as_str(), "1")]),
        ("fail-delivery", vec![("description", "nobody home")]),
        ("return", vec![(units.as_str(), "1")]),
        ("adjust", vec![("type", "credit"), ("amount", "-100"), ("status", "completed")]),
    ];
    for (action, fields) in &posts {
        let path = format!("{page}/{action}");
        let forged = post(&app, &path, Some(&cookie), Some(&app.base_url), fields).await;
        assert_eq!(forged.status(), StatusCode::FORBIDDEN, "{action} without a token");
        assert!(forged.text().await.unwrap().contains("<h1>Refused</h1>"), "{action}");
        let mut with = fields.clone();
        with.push(("csrf", "AAAAAAAAAAAAAAAAAAAAAA"));
        let wrong = post(&app, &path, Some(&cookie), Some(&app.base_url), &with).await;
        assert_eq!(wrong.status(), StatusCode::FORBIDDEN, "{action} with a wrong token");
        let mut with = fields.clone();
        with.push(("csrf", csrf.as_str()));
        let foreign = post(&app, &path, Some(&cookie), Some("http://evil.example"), &with).await;
        assert_eq!(foreign.status(), StatusCode::FORBIDDEN, "{action} from another origin");
        let anonymous = post(&app, &path, None, Some(&app.base_url), &with).await;
        assert_eq!(anonymous.status(), StatusCode::FORBIDDEN, "{action} without a session");
    }
    assert_eq!(app.tool("get_order", json!({ "id": order_id })).await, order, "nothing changed");
}
