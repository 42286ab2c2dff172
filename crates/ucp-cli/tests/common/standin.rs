//! A shop run by the real `ucpd` binary against stand-ins on loopback: a processor that
//! approves at once but answers 2 s late and records its charges and refunds by our keys, and
//! the platform's profile; a one-product catalog (`mug-1`) imported as a merchant would.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

pub(crate) const VERSION: &str = "2026-04-08";
/// The stand-in records this token's charge nowhere and answers 500: a charge the
/// processor never got.
pub(crate) const TOKEN_LOST: &str = "tok_lost";
/// The merchant's admin API key, in every config here.
pub(crate) const ADMIN_KEY: &str = "crash-admin-key";

#[derive(Clone, Default)]
pub(crate) struct Processor {
    /// our key → the charge's reference
    pub(crate) charges: Arc<Mutex<HashMap<String, String>>>,
    pub(crate) refunds: Arc<Mutex<Vec<String>>>,
    /// The `Idempotency-Key` of every refund asked for (a key asked again is one refund).
    pub(crate) refund_keys: Arc<Mutex<Vec<String>>>,
    pub(crate) received: Arc<AtomicU64>,
    /// While set, a charge is answered when `release` is notified (within the server's
    /// processor timeout), not after 2 s, and so is a refund (at once otherwise).
    pub(crate) holding: Arc<AtomicBool>,
    pub(crate) release: Arc<tokio::sync::Notify>,
}

/// The request's `Idempotency-Key` (empty without one).
fn key_of(headers: &HeaderMap) -> String {
    headers.get("idempotency-key").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned()
}

async fn charge(
    State(processor): State<Processor>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let key = key_of(&headers);
    let reference = (body["token"] != TOKEN_LOST).then(|| {
        let mut charges = processor.charges.lock().unwrap();
        let next = charges.len() + 1;
        charges.entry(key).or_insert_with(|| format!("ref_{next}")).clone()
    });
    processor.received.fetch_add(1, Ordering::SeqCst);
    // Approved at once, answered late: the window a crash falls into.
    if processor.holding.load(Ordering::SeqCst) {
        processor.release.notified().await;
    } else {
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    match reference {
        Some(reference) => axum::Json(json!({ "status": "approved", "reference": reference })).into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn lookup(State(processor): State<Processor>, axum::Json(body): axum::Json<Value>) -> Response {
    let key = body["idempotency_key"].as_str().unwrap_or_default();
    let found = processor.charges.lock().unwrap().get(key).cloned();
    let refunded = |reference: &str| processor.refunds.lock().unwrap().iter().any(|done| done == reference);
    axum::Json(match found {
        Some(reference) if refunded(&reference) => json!({ "status": "refunded", "reference": reference }),
        Some(reference) => json!({ "status": "approved", "reference": reference }),
        None => json!({ "status": "not_found" }),
    })
    .into_response()
}

async fn refund(
    State(processor): State<Processor>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let key = key_of(&headers);
    processor.refund_keys.lock().unwrap().push(key);
    let reference = body["reference"].as_str().unwrap_or_default().to_owned();
    processor.refunds.lock().unwrap().push(reference);
    if processor.holding.load(Ordering::SeqCst) {
        processor.release.notified().await;
    }
    axum::Json(json!({ "status": "refunded" })).into_response()
}

fn platform_profile() -> Value {
    let capability = json!([{ "version": VERSION, "spec": "https://ucp.dev/2026-04-08/specification/overview", "schema": "https://ucp.dev/2026-04-08/schemas/shopping/checkout.json" }]);
    let names = ["dev.ucp.shopping.checkout", "dev.ucp.shopping.order", "dev.ucp.shopping.fulfillment"];
    let capabilities: serde_json::Map<String, Value> =
        names.iter().map(|name| (name.to_string(), capability.clone())).collect();
    json!({ "ucp": {
        "version": VERSION,
        "services": { "dev.ucp.shopping": [{ "version": VERSION, "transport": "mcp", "spec": "https://ucp.dev/2026-04-08/specification/overview", "schema": "https://ucp.dev/2026-04-08/services/shopping/mcp.openrpc.json" }] },
        "capabilities": capabilities,
        "payment_handlers": {}
    }, "signing_keys": [] })
}

/// Serves the stand-in processor and the platform's profile on one loopback port.
pub(crate) async fn start_stand_ins(processor: Processor) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let profile = platform_profile().to_string();
    let router = Router::new()
        .route("/pay", post(charge))
        .route("/pay/lookup", post(lookup))
        .route("/pay/refund", post(refund))
        .with_state(processor)
        .route("/profile.json", get(move || async move { ([("content-type", "application/json")], profile) }));
    tokio::spawn(async move { axum::serve(listener, router).await.ok() });
    base
}

/// Starts `ucpd serve` and waits for its ready line; its address. Standard error is drained
/// on a thread, so the child never blocks on a full pipe.
pub(crate) fn serve(config: &std::path::Path, data: &std::path::Path) -> (Child, String) {
    serve_with(Command::new(env!("CARGO_BIN_EXE_ucpd")), config, data)
}

/// [`serve`] run by `command`, which execs `ucpd` with the arguments it is given.
pub(crate) fn serve_with(mut command: Command, config: &std::path::Path, data: &std::path::Path) -> (Child, String) {
    let mut child = command
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(config)
        .arg("--data-dir")
        .arg(data)
        .env_remove("UCPD_DATA_DIR")
        .env_remove("UCPD_CONFIG")
        .env("UCPD_LOG", "info")
        .env("UCPD_LOG_FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("ucpd ready") {
                let parsed: Value = serde_json::from_str(&line).unwrap_or_default();
                let listen = parsed["fields"]["listen"].as_str().unwrap_or_default().to_owned();
                sender.send(listen).ok();
            }
        }
    });
    let listen = receiver.recv_timeout(Duration::from_secs(60)).expect("ucpd did not become ready");
    assert!(!listen.is_empty(), "no listen address in the ready line");
    (child, format!("http://{listen}"))
}

pub(crate) struct Client {
    pub(crate) http: reqwest::Client,
    pub(crate) mcp: String,
    pub(crate) profile: String,
}

impl Client {
    pub(crate) async fn tool(&self, name: &str, mut arguments: Value) -> (StatusCode, Value) {
        arguments["meta"] =
            json!({ "ucp-agent": { "profile": self.profile }, "idempotency-key": uuid::Uuid::new_v4().to_string() });
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
        let response = self
            .http
            .post(&self.mcp)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
        (status, response.json().await.unwrap())
    }

    pub(crate) async fn content(&self, name: &str, arguments: Value) -> Value {
        let (status, reply) = self.tool(name, arguments).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        reply["result"]["structuredContent"].clone()
    }
}

/// `complete_checkout`'s arguments for checkout `id`, paid through the stand-in with `token`.
pub(crate) fn pay_acme(id: &str, token: &str) -> Value {
    json!({ "id": id, "checkout": { "payment": { "instruments": [{ "id": "pi_1", "handler_id": "acme", "type": "card",
        "credential": { "type": "token", "token": token } }] } } })
}

pub(crate) fn ready_checkout() -> Value {
    json!({
        "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }],
        "buyer": { "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com" },
        "fulfillment": { "methods": [{ "type": "shipping", "destinations": [{
            "street_address": "1 Main St", "address_locality": "San Francisco", "address_region": "CA",
            "postal_code": "94105", "address_country": "US" }], "groups": [{ "selected_option_id": "standard" }] }] }
    })
}

/// Imports a one-product catalog (`mug-1`, 15.00 USD, stock not tracked) into `data`, as a
/// merchant would, and writes a config that charges through the stand-in at `base` (the
/// sandbox too, for the buyer's page) and recovers after 3 s, sweeping every second, with
/// [`ADMIN_KEY`] for the admin API; its path.
pub(crate) fn mug_shop(directory: &std::path::Path, data: &std::path::Path, base: &str) -> std::path::PathBuf {
    // A one-product catalog, imported as a merchant would.
    let catalog = directory.join("catalog.jsonl");
    let mug = json!({ "id": "mug", "title": "Ceramic Coffee Mug", "description": { "plain": "A ceramic mug." },
        "price_range": { "min": { "amount": 1500, "currency": "USD" }, "max": { "amount": 1500, "currency": "USD" } },
        "variants": [{ "id": "mug-1", "title": "Mug", "description": { "plain": "Mug" }, "price": { "amount": 1500, "currency": "USD" } }] });
    std::fs::write(&catalog, format!("{mug}\n")).unwrap();
    let imported = Command::new(env!("CARGO_BIN_EXE_ucpd"))
        .arg("import")
        .arg(&catalog)
        .arg("--data-dir")
        .arg(data)
        .env("UCPD_LOG", "warn")
        .output()
        .unwrap();
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));

    let config = directory.join("ucpd.toml");
    let hash = super::hash_key(ADMIN_KEY);
    std::fs::write(
        &config,
        format!(
            "dev_insecure_profiles = true\n\
             [checkout]\nsweep_interval_secs = 1\n\
             [payments]\nsandbox = true\nrecovery_after_secs = 3\n\
             [admin]\napi_keys = [\"{hash}\"]\n\
             [[payments.http]]\nid = \"acme\"\nname = \"com.acme.pay\"\nurl = \"{base}/pay\"\ntimeout_ms = 2500\nretries = 0\n"
        ),
    )
    .unwrap();
    config
}
