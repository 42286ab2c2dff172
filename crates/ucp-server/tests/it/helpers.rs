//! Test helpers: a running ucpd, a platform that serves its profile, raw JSON-RPC calls.

#![allow(dead_code)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_domain::catalog::Product;
use ucp_domain::store::CatalogStore;
use ucp_server::{Application, Settings};

pub const VERSION: &str = "2026-04-08";

/// Every capability ucpd offers, as a platform profile would list them.
pub const ALL_CAPABILITIES: &[&str] = &[
    "dev.ucp.shopping.catalog.search",
    "dev.ucp.shopping.catalog.lookup",
    "dev.ucp.shopping.cart",
    "dev.ucp.shopping.checkout",
    "dev.ucp.shopping.order",
    "dev.ucp.shopping.fulfillment",
    "dev.ucp.shopping.discount",
];

/// A running ucpd on a port the OS chose, with its own data directory.
pub struct TestApp {
    pub base_url: String,
    pub mcp_url: String,
    pub http: reqwest::Client,
    pub platform: PlatformServer,
    pub data_dir: tempfile::TempDir,
    /// The server's clock: `clock.advance(seconds)` moves time forward for expiry tests.
    pub clock: ucp_server::clock::Clock,
    shutdown: CancellationToken,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Boots ucpd with the fixture catalog and a platform profile that shares every capability.
pub async fn spawn_app() -> TestApp {
    spawn_app_with(fixture_products(), |_, _| {}).await
}

pub async fn spawn_app_with(products: Vec<Product>, configure: impl FnOnce(&mut Settings, &PlatformServer)) -> TestApp {
    let platform = PlatformServer::start(platform_profile(ALL_CAPABILITIES)).await;
    let data_dir = tempfile::tempdir().expect("temp dir");
    if !products.is_empty() {
        let store =
            ucp_store::SqliteStore::open(&data_dir.path().join(ucp_server::startup::DATABASE_FILE), 1).expect("store");
        store.upsert_products(products).await.expect("fixture catalog loads");
    }
    let mut settings = Settings::for_tests(data_dir.path());
    settings.dev_insecure_profiles = true;
    settings.payments.sandbox = Some(true);
    configure(&mut settings, &platform);
    let application = Application::build(settings).await.expect("app builds");
    let base_url = format!("http://{}", application.local_addr());
    let mcp_url = format!("{base_url}/ucp/mcp");
    let clock = application.state().clock.clone();
    let shutdown = CancellationToken::new();
    tokio::spawn(application.run_until_stopped(shutdown.clone().cancelled_owned()));
    TestApp { base_url, mcp_url, http: reqwest::Client::new(), platform, data_dir, clock, shutdown }
}

impl TestApp {
    /// POSTs a raw body to the MCP endpoint with only `Content-Type: application/json`, the
    /// way Google calls (no Accept, no initialize, no session).
    pub async fn post_raw(&self, body: impl Into<reqwest::Body>) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        self.post_with(body, &[("content-type", "application/json")]).await
    }

    /// POSTs a JSON body to the MCP endpoint; the raw response, for tests that need its exact
    /// bytes (signatures) or stream it.
    pub async fn send_mcp(&self, body: impl Into<reqwest::Body>) -> reqwest::Response {
        self.http
            .post(&self.mcp_url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request sent")
    }

    pub async fn post_with(
        &self,
        body: impl Into<reqwest::Body>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut request = self.http.post(&self.mcp_url).body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send().await.expect("request sent");
        let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
        };
        (status, headers, body)
    }

    /// A `tools/call` with our platform's profile in meta; returns the HTTP status and the
    /// whole JSON-RPC response.
    pub async fn call_tool(&self, name: &str, mut arguments: Value) -> (StatusCode, Value) {
        if arguments.get("meta").is_none() {
            arguments["meta"] = json!({ "ucp-agent": { "profile": self.platform.profile_url() } });
        }
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
        let (status, _, response) = self.post_raw(body.to_string()).await;
        (status, response)
    }

    /// `structuredContent` of a successful tool call, after checking the result envelope.
    pub async fn tool(&self, name: &str, arguments: Value) -> Value {
        let (status, response) = self.call_tool(name, arguments).await;
        assert_eq!(status, StatusCode::OK, "{response}");
        let result = response.get("result").unwrap_or_else(|| panic!("expected a result: {response}"));
        let structured = result["structuredContent"].clone();
        let text = result["content"][0]["text"].as_str().expect("content[0].text");
        assert_eq!(result["content"][0]["type"], "text");
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap(),
            structured,
            "content[0] mirrors structuredContent (checklist 34)"
        );
        assert!(result.get("isError").is_none_or(|flag| flag == false), "isError never set (checklist 35)");
        structured
    }

    /// The JSON-RPC `error` of a call that must fail, with the HTTP status.
    pub async fn tool_error(&self, name: &str, arguments: Value) -> (StatusCode, Value) {
        let (status, response) = self.call_tool(name, arguments).await;
        let error = response.get("error").unwrap_or_else(|| panic!("expected an error: {response}")).clone();
        assert_eq!(response["id"], 1, "errors echo the request id");
        (status, error)
    }

    pub fn meta_for(&self, profile: &str) -> Value {
        json!({ "ucp-agent": { "profile": profile } })
    }
}

/// A ucpd that admits one request at a time, that place held by an MCP call whose profile
/// fetch hangs (the platform's `/slow`) until `profiles.fetch_timeout_ms` (1.5 s) ends it with
/// 424. Returns once the holder is admitted; the handle yields the holder's response.
pub async fn spawn_overloaded_app() -> (TestApp, tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>) {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.http.max_concurrent_requests = 1;
        settings.profiles.fetch_timeout_ms = 1500;
    })
    .await;
    let slow = app.platform.url("/slow");
    let holder = {
        let http = app.http.clone();
        let url = app.mcp_url.clone();
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "search_catalog", "arguments": { "meta": { "ucp-agent": { "profile": slow } }, "catalog": { "query": "x" } } } });
        tokio::spawn(async move {
            http.post(url).header("content-type", "application/json").body(body.to_string()).send().await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    (app, holder)
}

/// A platform's profile naming the given capabilities at our version.
pub fn platform_profile(capabilities: &[&str]) -> Value {
    let capabilities: serde_json::Map<String, Value> = capabilities
        .iter()
        .map(|name| {
            (name.to_string(), json!([{ "version": VERSION, "spec": "https://ucp.dev/2026-04-08/specification/overview", "schema": "https://ucp.dev/2026-04-08/schemas/shopping/catalog_search.json" }]))
        })
        .collect();
    json!({
        "ucp": {
            "version": VERSION,
            "services": { "dev.ucp.shopping": [{ "version": VERSION, "transport": "mcp", "spec": "https://ucp.dev/2026-04-08/specification/overview", "schema": "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json" }] },
            "capabilities": capabilities,
            "payment_handlers": {}
        },
        "signing_keys": []
    })
}

/// A platform on 127.0.0.1 serving its profile (and a few broken ones), counting fetches.
#[derive(Clone)]
pub struct PlatformServer {
    pub base_url: String,
    pub profile: Arc<std::sync::Mutex<Value>>,
    pub fetches: Arc<AtomicUsize>,
    shutdown: CancellationToken,
}

impl PlatformServer {
    pub async fn start(profile: Value) -> PlatformServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let server = PlatformServer {
            base_url,
            profile: Arc::new(std::sync::Mutex::new(profile)),
            fetches: Arc::new(AtomicUsize::new(0)),
            shutdown: CancellationToken::new(),
        };
        let router = Router::new()
            .route("/profile.json", get(serve_profile))
            .route("/no-store.json", get(serve_profile))
            .route("/redirect", get(|| async { (StatusCode::FOUND, [("location", "/profile.json")]).into_response() }))
            .route("/error", get(|| async { StatusCode::INTERNAL_SERVER_ERROR }))
            .route("/html", get(|| async { ([("content-type", "text/html")], "<html>not a profile</html>") }))
            .route("/empty", get(|| async { ([("content-type", "application/json")], "{}") }))
            .route(
                "/huge",
                get(|| async {
                    ([("content-type", "application/json")], format!("{{\"pad\":\"{}\"}}", "x".repeat(600 * 1024)))
                }),
            )
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                    "late"
                }),
            )
            .with_state(server.clone());
        let shutdown = server.shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, router).with_graceful_shutdown(shutdown.cancelled_owned()).await.ok();
        });
        server
    }

    pub fn profile_url(&self) -> String {
        format!("{}/profile.json", self.base_url)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    pub fn fetch_count(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

async fn serve_profile(State(server): State<PlatformServer>) -> Response {
    server.fetches.fetch_add(1, Ordering::SeqCst);
    let profile = server.profile.lock().unwrap().clone();
    ([("content-type", "application/json"), ("cache-control", "no-store")], profile.to_string()).into_response()
}

/// A small, fully known catalog.
pub fn fixture_products() -> Vec<Product> {
    let documents = vec![
        json!({
            "id": "shoe", "handle": "trail-runner", "title": "Trail Runner Running Shoes",
            "description": { "plain": "Lightweight waterproof running shoes for trails." },
            "categories": [{ "value": "Apparel & Accessories > Shoes", "taxonomy": "google_product_category" }, { "value": "Footwear > Running", "taxonomy": "merchant" }],
            "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
            "tags": ["running", "trail"],
            "media": [{ "type": "image", "url": "https://shop.example/i/shoe.jpg" }],
            "variants": [
                { "id": "shoe-blue-10", "sku": "SHOE-B-10", "title": "Blue / 10", "description": { "plain": "Blue 10" }, "price": { "amount": 12000, "currency": "USD" }, "options": [{ "name": "Color", "label": "Blue" }, { "name": "Size", "label": "10" }], "inventory_quantity": 0, "barcodes": [{ "type": "GTIN", "value": "0001234567895" }] },
                { "id": "shoe-blue-11", "sku": "SHOE-B-11", "title": "Blue / 11", "description": { "plain": "Blue 11" }, "price": { "amount": 12000, "currency": "USD" }, "options": [{ "name": "Color", "label": "Blue" }, { "name": "Size", "label": "11" }], "inventory_quantity": 5 },
                { "id": "shoe-green-10", "sku": "SHOE-G-10", "title": "Green / 10", "description": { "plain": "Green 10" }, "price": { "amount": 11000, "currency": "USD" }, "list_price": { "amount": 13000, "currency": "USD" }, "options": [{ "name": "Color", "label": "Green" }, { "name": "Size", "label": "10" }], "inventory_quantity": 3 }
            ]
        }),
        json!({
            "id": "sweater", "title": "Merino Wool Sweater",
            "description": { "plain": "A warm merino wool crew sweater." },
            "categories": [{ "value": "Apparel & Accessories > Clothing", "taxonomy": "google_product_category" }],
            "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
            "variants": [{ "id": "sweater-m", "title": "M", "description": { "plain": "M" }, "price": { "amount": 8900, "currency": "USD" }, "options": [{ "name": "Size", "label": "M" }] }]
        }),
        json!({
            "id": "mug", "title": "Ceramic Coffee Mug",
            "description": { "plain": "A ceramic mug for coffee and tea." },
            "categories": [{ "value": "Home & Garden > Kitchen & Dining", "taxonomy": "google_product_category" }],
            "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
            "variants": [{ "id": "mug-1", "title": "Mug", "description": { "plain": "Mug" }, "price": { "amount": 1500, "currency": "USD" } }]
        }),
    ];
    let mut products: Vec<Product> =
        documents.into_iter().map(|document| serde_json::from_value(document).unwrap()).collect();
    for filler in 0..25 {
        let mut product: Product = serde_json::from_value(json!({
            "id": format!("sock-{filler:02}"), "title": format!("Cotton Socks Pack {filler}"),
            "description": { "plain": "Soft cotton socks." },
            "categories": [{ "value": "Apparel & Accessories > Clothing > Socks" }],
            "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
            "variants": [{ "id": format!("sock-{filler:02}-v"), "title": "Pack", "description": { "plain": "Pack" }, "price": { "amount": 500 + filler * 10, "currency": "USD" } }]
        }))
        .unwrap();
        product.normalize().unwrap();
        products.push(product);
    }
    for product in &mut products {
        product.normalize().unwrap();
    }
    products
}

// ---- purchase helpers (cart, checkout, order tests) ----------------------------------------

/// The messages of a body with `code`.
pub fn messages_with<'a>(body: &'a Value, code: &str) -> Vec<&'a Value> {
    body["messages"]
        .as_array()
        .map(|messages| messages.iter().filter(|m| m["code"] == code).collect())
        .unwrap_or_default()
}

/// Resolves the JSONPath subset UCP messages use (`$`, `.name`, `[n]`, `['name']`) in `body`.
pub fn resolve_path<'a>(body: &'a Value, path: &str) -> Option<&'a Value> {
    let mut rest = path.strip_prefix('$')?;
    let mut current = body;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']")?;
            current = current.get(&after[..end])?;
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let index: usize = after[..end].parse().ok()?;
            current = current.get(index)?;
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            current = current.get(&after[..end])?;
            rest = &after[end..];
        } else {
            return None;
        }
    }
    Some(current)
}

/// Checklist 127: every message is well formed and its `path` resolves in the body.
pub fn assert_messages_resolve(body: &Value) {
    for message in body["messages"].as_array().into_iter().flatten() {
        assert!(message["code"].is_string() && message["content"].is_string(), "{message}");
        if message["type"] == "error" {
            assert!(message["severity"].is_string(), "errors carry a severity: {message}");
        }
        if let Some(path) = message["path"].as_str() {
            // A required field that is absent cannot resolve itself; its parent must.
            let missing_field = matches!(message["code"].as_str(), Some("field_required" | "missing"));
            let parent = path.rfind(['.', '[']).map(|end| &path[..end]).filter(|parent| !parent.is_empty());
            let resolves = resolve_path(body, path).is_some()
                || (missing_field && parent.is_some_and(|parent| resolve_path(body, parent).is_some()));
            assert!(resolves, "path {path} does not resolve in {body:#}");
        }
    }
}

/// Checklist 148: every money amount (`amount`, `price`) is a JSON integer.
pub fn assert_integer_money(body: &Value) {
    fn walk(value: &Value, trail: &str) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    if matches!(key.as_str(), "amount" | "price") && !child.is_object() {
                        assert!(child.is_i64() || child.is_u64(), "{trail}.{key} is not an integer: {child}");
                    }
                    walk(child, &format!("{trail}.{key}"));
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    walk(child, &format!("{trail}[{index}]"));
                }
            }
            _ => {}
        }
    }
    walk(body, "$");
}

/// The amount of the `kind` entry of a `totals` array.
pub fn total_of(totals: &Value, kind: &str) -> Option<i64> {
    totals.as_array()?.iter().find(|total| total["type"] == kind).and_then(|total| total["amount"].as_i64())
}

/// A one-variant product with tracked stock.
pub fn stocked_product(id: &str, variant_id: &str, price: i64, stock: i64) -> Product {
    let mut product: Product = serde_json::from_value(json!({
        "id": id, "title": format!("Limited {id}"),
        "description": { "plain": "Limited edition." },
        "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
        "variants": [{ "id": variant_id, "title": "One", "description": { "plain": "One" }, "price": { "amount": price, "currency": "USD" }, "inventory_quantity": stock }]
    }))
    .unwrap();
    product.normalize().unwrap();
    product
}

impl TestApp {
    /// `meta` naming our platform, with a fresh idempotency key (cancel and complete require one).
    pub fn keyed_meta(&self) -> Value {
        self.keyed_meta_for(&self.platform.profile_url())
    }

    pub fn keyed_meta_for(&self, profile: &str) -> Value {
        json!({ "ucp-agent": { "profile": profile }, "idempotency-key": uuid::Uuid::new_v4().to_string() })
    }
}

/// Every log line (and span field) ucpd emits in this test binary, from `capture_logs()` on:
/// a process-wide subscriber, so events from every thread (the blocking pool too) are kept.
static LOGS: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Installs the capturing subscriber once (ucpd's own targets and tower-http, DEBUG and up).
pub fn capture_logs() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        tracing::subscriber::set_global_default(Capture { next_id: AtomicUsize::new(1) })
            .expect("no other global subscriber in the test binary");
    });
}

pub fn captured_logs() -> String {
    LOGS.lock().unwrap().clone()
}

struct Capture {
    next_id: AtomicUsize,
}

/// One event's (or span's) fields, gathered before they reach `LOGS` as one whole line, so
/// events on other threads cannot land between two fields of this one.
#[derive(Default)]
struct FieldWriter(String);

impl FieldWriter {
    fn write(fields: impl FnOnce(&mut FieldWriter)) {
        let mut writer = FieldWriter::default();
        fields(&mut writer);
        writer.0.push('\n');
        LOGS.lock().unwrap().push_str(&writer.0);
    }
}

impl tracing::field::Visit for FieldWriter {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::DEBUG
            && (metadata.target().starts_with("ucp") || metadata.target().starts_with("tower_http"))
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::DEBUG)
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        FieldWriter::write(|writer| span.record(writer));
        tracing::span::Id::from_u64(self.next_id.fetch_add(1, Ordering::SeqCst) as u64)
    }

    fn record(&self, _: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        FieldWriter::write(|writer| values.record(writer));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        FieldWriter::write(|writer| event.record(writer));
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
