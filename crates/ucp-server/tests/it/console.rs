//! The merchant console (issue 9 item 4): login and logout, the session cookie's flags, CSRF
//! and Origin refusals, the orders pages for an order placed over MCP, and the traffic and
//! funnel numbers (pages and `/metrics`) after a scripted run of known calls; the probes; and the
//! webhook deliveries page (issue 9 item 2). The order action forms are `console_forms.rs`.

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

pub(crate) fn form(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish()
}

pub(crate) async fn post(
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

pub(crate) async fn get(
    app: &TestApp,
    path: &str,
    cookie: Option<&str>,
) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let mut request = browser().get(format!("{}{path}", app.base_url));
    if let Some(cookie) = cookie {
        request = request.header("cookie", format!("ucpd_console={cookie}"));
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

/// The CSRF token of the logout form on a page.
pub(crate) fn csrf_of(html: &str) -> String {
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

pub(crate) async fn place_order(app: &TestApp) -> Value {
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
