//! Order webhooks survive a crash (issue 9 item 2): the real `ucpd` binary is SIGKILLed during
//! a stream of completes; after a restart on the same data directory, every order the database
//! holds gets its "order created" webhook, once per order after de-duplication by Webhook-Id.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::collections::{HashMap, HashSet};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use serde_json::{Value, json};

const VERSION: &str = "2026-04-08";

#[derive(Clone, Default)]
struct Platform {
    profile: Arc<Mutex<Value>>,
    /// (Webhook-Id, order id, answered 200) for every POST received.
    received: Arc<Mutex<Vec<(String, String, bool)>>>,
    /// Answer 200 (else 503).
    accepting: Arc<AtomicBool>,
}

async fn profile(State(platform): State<Platform>) -> ([(&'static str, &'static str); 1], String) {
    ([("content-type", "application/json")], platform.profile.lock().unwrap().to_string())
}

async fn hook(State(platform): State<Platform>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let id = headers.get("webhook-id").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    let order: Value = serde_json::from_slice(&body).unwrap_or_default();
    let accepting = platform.accepting.load(Ordering::SeqCst);
    platform.received.lock().unwrap().push((id, order["id"].as_str().unwrap_or_default().to_owned(), accepting));
    if accepting { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE }
}

fn ucpd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucpd"));
    command.env_remove("UCPD_DATA_DIR").env_remove("UCPD_CONFIG");
    command
}

/// A running server, killed (SIGKILL) when dropped, so a failing test leaves none behind.
/// Starts `ucpd serve` on the data directory; returns the server and its address once ready.
fn serve(data_dir: &std::path::Path) -> (common::Killed, String) {
    let mut child = ucpd()
        .args(["serve", "--listen", "127.0.0.1:0", "--demo-products", "20", "--dev-insecure-profiles", "--data-dir"])
        .arg(data_dir)
        .env("UCPD_LOG", "info")
        .env("UCPD_LOG_FORMAT", "json")
        .env("UCPD_WEBHOOKS__POLL_INTERVAL_MS", "20")
        .env("UCPD_WEBHOOKS__INITIAL_BACKOFF_MS", "100")
        .env("UCPD_WEBHOOKS__MAX_BACKOFF_SECS", "1")
        .env("UCPD_WEBHOOKS__TIMEOUT_MS", "1000")
        .env("UCPD_WEBHOOKS__LEASE_SECS", "2")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (address, lines) = common::ready(&mut child);
    common::drain(lines);
    (common::Killed(child), address)
}

/// A variant of the demo catalog with ample stock (the catalog is deterministic).
fn stocked_variant() -> String {
    let output = ucpd().args(["demo-catalog", "--products", "20", "--output", "-"]).output().unwrap();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let product: Value = serde_json::from_str(line).unwrap();
        for variant in product["variants"].as_array().unwrap() {
            let available = variant["availability"]["available"] != false;
            if available && variant["inventory_quantity"].as_i64().is_none_or(|stock| stock >= 100) {
                return variant["id"].as_str().unwrap().to_owned();
            }
        }
    }
    panic!("no stocked variant in the demo catalog");
}

async fn tool(http: &reqwest::Client, address: &str, name: &str, arguments: Value) -> Result<Value, reqwest::Error> {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let response: Value = http.post(format!("http://{address}/ucp/mcp")).json(&body).send().await?.json().await?;
    Ok(response["result"]["structuredContent"].clone())
}

/// One purchase; the order id when it completed (`None` when the server went away).
async fn purchase(http: &reqwest::Client, address: &str, profile: &str, variant: &str) -> Option<String> {
    let meta = || json!({ "ucp-agent": { "profile": profile }, "idempotency-key": uuid::Uuid::new_v4().to_string() });
    let checkout = json!({
        "line_items": [{ "item": { "id": variant }, "quantity": 1 }],
        "buyer": { "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com" },
        "fulfillment": { "methods": [{ "type": "shipping", "destinations": [{
            "first_name": "Ada", "last_name": "Lovelace", "street_address": "1 Infinite Loop", "address_locality": "Cupertino",
            "address_region": "CA", "postal_code": "95014", "address_country": "US" }],
            "groups": [{ "selected_option_id": "standard" }] }] }
    });
    let created = tool(http, address, "create_checkout", json!({ "meta": meta(), "checkout": checkout })).await.ok()?;
    let payment = json!({ "payment": { "instruments": [{ "id": "pi_1", "handler_id": "sandbox", "type": "card",
        "credential": { "type": "token", "token": "tok_sandbox_success" } }] } });
    let arguments = json!({ "meta": meta(), "id": created["id"], "checkout": payment });
    let completed = tool(http, address, "complete_checkout", arguments).await.ok()?;
    assert_eq!(completed["status"], "completed", "{completed}");
    completed["order"]["id"].as_str().map(str::to_owned)
}

fn orders_in(database: &std::path::Path) -> HashSet<String> {
    let connection = rusqlite::Connection::open(database).unwrap();
    let mut statement = connection.prepare("SELECT id FROM orders").unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_order_gets_its_created_webhook_after_a_sigkill() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let platform = Platform::default();
    let capabilities: serde_json::Map<String, Value> = [
        "dev.ucp.shopping.catalog.search",
        "dev.ucp.shopping.catalog.lookup",
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.fulfillment",
        "dev.ucp.shopping.order",
    ]
    .iter()
    .map(|name| (name.to_string(), json!([{ "version": VERSION }])))
    .collect();
    let mut document = json!({ "ucp": { "version": VERSION, "capabilities": capabilities } });
    document["ucp"]["capabilities"]["dev.ucp.shopping.order"][0]["config"] =
        json!({ "webhook_url": format!("{base}/hooks") });
    *platform.profile.lock().unwrap() = document;
    let router =
        Router::new().route("/profile.json", get(profile)).route("/hooks", post(hook)).with_state(platform.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.ok() });
    let profile_url = format!("{base}/profile.json");

    let directory = tempfile::tempdir().unwrap();
    let variant = stocked_variant();
    let (server, address) = serve(directory.path());
    let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();

    // A stream of completes from four clients; the server is killed while they run.
    let placed = Arc::new(Mutex::new(Vec::new()));
    let mut clients = Vec::new();
    for _ in 0..4 {
        let (http, address, profile_url, variant, placed) =
            (http.clone(), address.clone(), profile_url.clone(), variant.clone(), Arc::clone(&placed));
        clients.push(tokio::spawn(async move {
            while let Some(order) = purchase(&http, &address, &profile_url, &variant).await {
                placed.lock().unwrap().push(order);
            }
        }));
    }
    for _ in 0..200 {
        if placed.lock().unwrap().len() >= 12 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    drop(server); // SIGKILL: no shutdown, no flush, leases left behind.
    for client in clients {
        client.await.unwrap();
    }
    let placed: HashSet<String> = placed.lock().unwrap().iter().cloned().collect();
    assert!(placed.len() >= 12, "the stream ran: {} orders", placed.len());

    // Every order the database holds (those answered, and any committed as the process died).
    let database = directory.path().join("ucpd.db");
    let orders = orders_in(&database);
    assert!(placed.is_subset(&orders), "every answered order was committed");

    platform.accepting.store(true, Ordering::SeqCst);
    let (server, _) = serve(directory.path());
    let mut delivered: HashMap<String, HashSet<String>> = HashMap::new();
    for _ in 0..400 {
        delivered.clear();
        for (id, order, accepted) in platform.received.lock().unwrap().iter() {
            if *accepted {
                delivered.entry(order.clone()).or_default().insert(id.clone());
            }
        }
        if orders.iter().all(|order| delivered.contains_key(order)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Delivered is recorded shortly after the platform answers.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let output = ucpd().args(["webhooks", "list", "--status", "pending", "--data-dir"]).arg(directory.path()).output();
    drop(server);
    let missing: Vec<&String> = orders.iter().filter(|order| !delivered.contains_key(*order)).collect();
    assert!(missing.is_empty(), "orders without their webhook after the restart: {missing:?}");
    let mut ids_of: HashMap<String, HashSet<String>> = HashMap::new();
    for (id, order, _) in platform.received.lock().unwrap().iter() {
        ids_of.entry(order.clone()).or_default().insert(id.clone());
    }
    for (order, ids) in &ids_of {
        assert!(orders.contains(order), "a webhook for an order that does not exist: {order}");
        assert_eq!(ids.len(), 1, "one event (one Webhook-Id) per order, before and after: {order} {ids:?}");
    }
    let listing = String::from_utf8(output.unwrap().stdout).unwrap();
    assert!(listing.contains("no webhook events"), "nothing left pending: {listing}");
}
