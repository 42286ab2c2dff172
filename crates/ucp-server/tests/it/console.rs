//! The merchant console (issue 9 item 4): login and logout, the session cookie's flags, CSRF
//! and Origin refusals, the orders pages for an order placed over MCP, and the traffic and
//! funnel numbers (pages and `/metrics`) after a scripted run of known calls; the probes; the order
//! action forms (issue 9 item 1: ship and cancel chosen units, failed delivery, return, refund,
//! adjustment) and the webhook deliveries page (item 2).

use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, SET_COOKIE};
use serde_json::{Value, json};

use crate::checkout::{TOKEN_SUCCESS, complete, ready_checkout};
use crate::helpers::{ALL_CAPABILITIES, PlatformServer, TestApp, fixture_products, platform_profile, spawn_app_with};

pub const KEY: &str = "console-admin-key-for-tests";

pub async fn console_app() -> TestApp {
    spawn_app_with(fixture_products(), |settings, _| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
    })
    .await
}

pub fn browser() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

fn form(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish()
}

async fn post(
    app: &TestApp,
    path: &str,
    cookie: Option<&str>,
    origin: Option<&str>,
    fields: &[(&str, &str)],
) -> reqwest::Response {
    let mut request = browser()
        .post(format!("{}{path}", app.base_url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(fields));
    if let Some(cookie) = cookie {
        request = request.header("cookie", format!("ucpd_console={cookie}"));
    }
    if let Some(origin) = origin {
        request = request.header("origin", origin);
    }
    request.send().await.unwrap()
}

/// Logs in and returns the session cookie's value.
pub async fn log_in(app: &TestApp) -> String {
    let response = post(app, "/admin/login", None, Some(&app.base_url), &[("key", KEY)]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[LOCATION], "/admin/orders");
    let set_cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    let value = set_cookie.split(';').next().unwrap().strip_prefix("ucpd_console=").unwrap();
    value.to_owned()
}

async fn get(app: &TestApp, path: &str, cookie: Option<&str>) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let mut request = browser().get(format!("{}{path}", app.base_url));
    if let Some(cookie) = cookie {
        request = request.header("cookie", format!("ucpd_console={cookie}"));
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

/// The CSRF token of the logout form on a page.
fn csrf_of(html: &str) -> String {
    let start = html.find("name=\"csrf\" value=\"").expect("a CSRF field") + "name=\"csrf\" value=\"".len();
    html[start..].split('"').next().unwrap().to_owned()
}

#[tokio::test]
async fn login_sets_a_strict_cookie_and_logout_needs_the_csrf_token() {
    let app = console_app().await;
    // Without a session every page leads to the login form.
    let (status, headers, _) = get(&app, "/admin/orders", None).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[LOCATION], "/admin/login");
    let (status, headers, html) = get(&app, "/admin/login", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("<label for=\"key\">Admin key</label>") && html.contains("type=\"password\""), "{html}");
    assert!(headers[CONTENT_SECURITY_POLICY].to_str().unwrap().contains("default-src 'none'"));

    // A wrong key: 401, the form again with the error, no cookie.
    let response = post(&app, "/admin/login", None, Some(&app.base_url), &[("key", "wrong")]).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert!(response.headers().get(SET_COOKIE).is_none());
    assert!(response.text().await.unwrap().contains("That key is not accepted."));
    // The right key from another origin, or without Origin: refused.
    let response = post(&app, "/admin/login", None, None, &[("key", KEY)]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = post(&app, "/admin/login", None, Some("http://evil.example"), &[("key", KEY)]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    let response = post(&app, "/admin/login", None, Some(&app.base_url), &[("key", KEY)]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let set_cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/admin", "Max-Age="] {
        assert!(set_cookie.contains(flag), "{flag} in {set_cookie}");
    }
    assert!(!set_cookie.contains("Secure"), "plain http here: {set_cookie}");
    let cookie = log_in(&app).await;

    let (status, _, html) = get(&app, "/admin/orders", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("<h1>Orders</h1>") && html.contains("Log out"), "{html}");
    let csrf = csrf_of(&html);
    // A forged or tampered cookie is no session.
    let (status, _, _) = get(&app, "/admin/orders", Some(&format!("{cookie}x"))).await;
    assert_eq!(status, StatusCode::SEE_OTHER);

    // Logout without the token, with a wrong one, or cross-origin: refused.
    let response = post(&app, "/admin/logout", Some(&cookie), Some(&app.base_url), &[]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response =
        post(&app, "/admin/logout", Some(&cookie), Some(&app.base_url), &[("csrf", "AAAAAAAAAAAAAAAAAAAAAA")]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let response = post(&app, "/admin/logout", Some(&cookie), Some("http://evil.example"), &[("csrf", &csrf)]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    // Another session's token does not fit this one.
    let other = log_in(&app).await;
    let (_, _, other_html) = get(&app, "/admin/orders", Some(&other)).await;
    let response =
        post(&app, "/admin/logout", Some(&cookie), Some(&app.base_url), &[("csrf", &csrf_of(&other_html))]).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);

    let response = post(&app, "/admin/logout", Some(&cookie), Some(&app.base_url), &[("csrf", &csrf)]).await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    assert_eq!(response.headers()[LOCATION], "/admin/login");
    let cleared = response.headers()[SET_COOKIE].to_str().unwrap();
    assert!(cleared.starts_with("ucpd_console=;") && cleared.contains("Max-Age=0"), "{cleared}");
}

#[tokio::test]
async fn without_admin_keys_the_console_does_not_exist() {
    let app = spawn_app_with(fixture_products(), |_, _| {}).await;
    let (status, _, _) = get(&app, "/admin/login", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let response = post(&app, "/admin/login", None, Some(&app.base_url), &[("key", KEY)]).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let response = app.http.get(format!("{}/metrics", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

async fn place_order(app: &TestApp) -> Value {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 2) })).await;
    let completed = complete(app, created["id"].as_str().unwrap(), TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    completed
}

#[tokio::test]
async fn the_orders_pages_show_an_order_placed_over_mcp() {
    let app = console_app().await;
    let completed = place_order(&app).await;
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();
    let cookie = log_in(&app).await;

    let (status, _, html) = get(&app, "/admin/orders", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(&order_id), "{html}");
    assert!(html.contains(&app.platform.profile_url()), "the platform is named: {html}");
    assert!(html.contains("<th scope=\"col\">Order</th>"), "tables have headers: {html}");
    // Search by part of the id; a search that matches nothing; another platform's filter.
    let (_, _, found) = get(&app, &format!("/admin/orders?q={}", &order_id[4..12]), Some(&cookie)).await;
    assert!(found.contains(&order_id), "{found}");
    let (_, _, none) = get(&app, "/admin/orders?q=no-such-order", Some(&cookie)).await;
    assert!(!none.contains(&order_id) && none.contains("No orders match."), "{none}");
    let (_, _, other) = get(&app, "/admin/orders?platform=https%3A%2F%2Fother.example", Some(&cookie)).await;
    assert!(!other.contains(&order_id), "{other}");
    // A bad `before` is ignored, not a 500.
    let (status, _, _) = get(&app, "/admin/orders?before=abc", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);

    let (status, _, html) = get(&app, &format!("/admin/orders/{order_id}"), Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains(&format!("<h1>Order {order_id}</h1>")), "{html}");
    assert!(html.contains("Ceramic Coffee Mug") && html.contains("Order placed"), "{html}");
    assert!(html.contains(completed["id"].as_str().unwrap()), "the checkout id: {html}");
    let total = crate::helpers::total_of(&completed["totals"], "total").unwrap();
    assert!(html.contains(&format!("${}.{:02}", total / 100, total % 100)), "the total: {html}");
    let (status, _, _) = get(&app, "/admin/orders/ord_missing", Some(&cookie)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// The scripted run: platform A searches 3 times (and once more with an error), creates 2
/// carts and 1 checkout and places 1 order; platform B searches once, creates 1 cart and 2
/// checkouts.
pub async fn scripted_run(app: &TestApp) -> PlatformServer {
    let b = PlatformServer::start(platform_profile(ALL_CAPABILITIES)).await;
    let b_meta = app.meta_for(&b.profile_url());
    for query in ["mug", "sweater", "wool"] {
        app.tool("search_catalog", json!({ "catalog": { "query": query } })).await;
    }
    let (_, error) =
        app.tool_error("search_catalog", json!({ "catalog": { "pagination": { "limit": "many" } } })).await;
    assert_eq!(error["code"], -32602, "{error}");
    for _ in 0..2 {
        app.tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
            .await;
    }
    place_order(app).await;
    app.tool("search_catalog", json!({ "meta": b_meta, "catalog": { "query": "mug" } })).await;
    app.tool(
        "create_cart",
        json!({ "meta": b_meta, "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }),
    )
    .await;
    for _ in 0..2 {
        app.tool("create_checkout", json!({ "meta": b_meta, "checkout": ready_checkout("mug-1", 1) })).await;
    }
    b
}

fn funnel_row(platform: &str, numbers: [u64; 4]) -> String {
    let cells: String = numbers.iter().map(|number| format!("<td class=\"num\">{number}</td>")).collect();
    format!("<tr><th scope=\"row\">{platform}</th>{cells}")
}

#[tokio::test]
async fn traffic_and_funnel_match_a_scripted_run_on_the_pages_and_in_metrics() {
    let app = console_app().await;
    let b = scripted_run(&app).await;
    let (a, b) = (app.platform.profile_url(), b.profile_url());
    let cookie = log_in(&app).await;

    let (status, _, html) = get(&app, "/admin/funnel", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains(&funnel_row(&a, [3, 2, 1, 1])), "A's funnel: {html}");
    assert!(html.contains(&funnel_row(&b, [1, 1, 2, 0])), "B's funnel: {html}");
    let (_, _, week) = get(&app, "/admin/funnel?window=week", Some(&cookie)).await;
    assert!(week.contains(&funnel_row(&a, [3, 2, 1, 1])) && week.contains("last 7 days"), "{week}");

    let (status, _, html) = get(&app, "/admin/traffic", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK);
    let row = |platform: &str, operation: &str, calls: u64, errors: u64| {
        let class = if errors > 0 { "num errors" } else { "num" };
        format!(
            "<tr><th scope=\"row\">{platform}</th><td>{operation}</td><td class=\"num\">{calls}</td><td class=\"{class}\">{errors}</td>"
        )
    };
    assert!(html.contains(&row(&a, "search_catalog", 4, 1)), "A's searches, one an error: {html}");
    assert!(html.contains("<td>invalid_input: 1</td>"), "errors by code: {html}");
    assert!(html.contains(&row(&a, "create_cart", 2, 0)), "{html}");
    assert!(html.contains(&row(&a, "complete_checkout", 1, 0)), "{html}");
    assert!(html.contains(&row(&b, "create_checkout", 2, 0)), "{html}");

    // The same counters in /metrics, behind the admin key.
    let url = format!("{}/metrics", app.base_url);
    let response = app.http.get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = app.http.get(&url).bearer_auth(KEY).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    let text = response.text().await.unwrap();
    for line in [
        format!("ucpd_funnel_events_total{{platform=\"{a}\",step=\"search\"}} 3"),
        format!("ucpd_funnel_events_total{{platform=\"{a}\",step=\"cart\"}} 2"),
        format!("ucpd_funnel_events_total{{platform=\"{a}\",step=\"checkout\"}} 1"),
        format!("ucpd_orders_placed_total{{platform=\"{a}\"}} 1"),
        format!("ucpd_funnel_events_total{{platform=\"{b}\",step=\"search\"}} 1"),
        format!("ucpd_funnel_events_total{{platform=\"{b}\",step=\"checkout\"}} 2"),
        format!("ucpd_operation_calls_total{{platform=\"{a}\",operation=\"search_catalog\",outcome=\"ok\"}} 3"),
        format!("ucpd_operation_calls_total{{platform=\"{b}\",operation=\"create_checkout\",outcome=\"ok\"}} 2"),
        "ucpd_store_up 1".to_owned(),
    ] {
        assert!(text.lines().any(|candidate| candidate == line), "{line} in\n{text}");
    }
    assert!(!text.contains(&format!("ucpd_orders_placed_total{{platform=\"{b}\"}}")), "B placed none");
    assert!(
        text.lines().any(|line| line.starts_with(&format!(
            "ucpd_operation_calls_total{{platform=\"{a}\",operation=\"search_catalog\",outcome="
        )) && !line.contains("\"ok\"")
            && line.ends_with(" 1")),
        "the error by code: {text}"
    );
    assert!(text.contains("ucpd_operation_duration_seconds_bucket{operation=\"search_catalog\""), "latency: {text}");
}

#[tokio::test]
async fn metrics_can_be_public_and_the_probes_answer() {
    let app = spawn_app_with(fixture_products(), |settings, _| settings.metrics.public = true).await;
    let response = app.http.get(format!("{}/metrics", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.text().await.unwrap().contains("ucpd_store_up 1"));

    let response = app.http.get(format!("{}/healthz", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "ok\n");
    // Probes answer whatever Host an orchestrator sends.
    let response =
        app.http.get(format!("{}/readyz", app.base_url)).header("host", "10.1.2.3:8080").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.text().await.unwrap(), "ready\n");

    // A schema the build does not know (a newer binary migrated the file): not ready.
    let database = app.data_dir.path().join(ucp_server::startup::DATABASE_FILE);
    let connection = rusqlite::Connection::open(&database).unwrap();
    connection.pragma_update(None, "user_version", 99).unwrap();
    let response = app.http.get(format!("{}/readyz", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(response.text().await.unwrap().contains("version 99"));
    let response = app.http.get(format!("{}/healthz", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "still alive");
}

#[tokio::test]
async fn the_pages_are_accessible_and_counters_survive_a_restart() {
    let mut app = console_app().await;
    for query in ["mug", "sweater"] {
        app.tool("search_catalog", json!({ "catalog": { "query": query } })).await;
    }
    let cookie = log_in(&app).await;
    for path in ["/admin/orders", "/admin/traffic", "/admin/funnel", "/admin/webhooks"] {
        let (status, _, html) = get(&app, path, Some(&cookie)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(html.contains("<html lang=\"en\">") && html.contains("<main id=\"main\">"), "{path}: {html}");
        assert!(html.contains("<a class=\"skip\" href=\"#main\">"), "{path}: a skip link");
        assert_eq!(html.matches("<h1>").count(), 1, "{path}: one main heading");
        assert!(html.contains("aria-current=\"page\""), "{path}: the current section is marked");
        assert!(!html.contains("<script"), "{path}: no scripts");
        if html.contains("<table>") {
            assert!(
                html.contains("<caption>") && html.contains("scope=\"col\""),
                "{path}: tables have captions and headers"
            );
        }
        for id in html
            .split("<input type=\"")
            .skip(1)
            .filter(|input| !input.starts_with("hidden"))
            .filter_map(|input| input.split("id=\"").nth(1).and_then(|rest| rest.split('"').next()))
        {
            assert!(html.contains(&format!("<label for=\"{id}\">")), "{path}: input {id} has a label");
        }
    }
    let platform = app.platform.profile_url();
    // Keep the data directory, stop the server, start another on the same directory.
    let data_dir = std::mem::replace(&mut app.data_dir, tempfile::tempdir().unwrap());
    drop(app);
    let mut settings = ucp_server::Settings::for_tests(data_dir.path());
    settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
    let application = ucp_server::Application::build(settings).await.expect("app builds");
    let base_url = format!("http://{}", application.local_addr());
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(application.run_until_stopped(shutdown.clone().cancelled_owned()));
    let text = reqwest::Client::new()
        .get(format!("{base_url}/metrics"))
        .bearer_auth(KEY)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    shutdown.cancel();
    let line = format!("ucpd_funnel_events_total{{platform=\"{platform}\",step=\"search\"}} 2");
    assert!(text.lines().any(|candidate| candidate == line), "{line} after the restart in\n{text}");
}

// Issue 9 item 1: the order page's forms ship every remaining unit (303 back to the order)
// and refuse a refund over what was paid with a message page, changing nothing.
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
#[tokio::test]
async fn the_webhooks_page_lists_the_outbox_events() {
    let mut profile = platform_profile(ALL_CAPABILITIES);
    profile["ucp"]["capabilities"]["dev.ucp.shopping.order"][0]["config"] =
        json!({ "webhook_url": "http://127.0.0.1:9/webhooks/ucp/orders" });
    let app = spawn_app_with(fixture_products(), move |settings, platform| {
        settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(KEY)];
        *platform.profile.lock().unwrap() = profile;
    })
    .await;
    let cookie = log_in(&app).await;
    let (status, _, html) = get(&app, "/admin/webhooks", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("No webhook events yet"), "{html}");

    let completed = place_order(&app).await;
    let order_id = completed["order"]["id"].as_str().unwrap();
    let (status, _, html) = get(&app, "/admin/webhooks", Some(&cookie)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("<caption>") && html.contains(">Attempts</th>"), "{html}");
    assert!(html.contains(order_id) && html.contains(ucp_domain::webhook::ORDER_CREATED), "{html}");
    assert_eq!(html.matches("<h1>").count(), 1);
}

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

/// `<input type="number" id="{id}" name="{name}" value="{value}" min="0" max="{max}"`.
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
