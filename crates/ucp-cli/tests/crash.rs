//! No charge without an order, across a crash or a failing disk (issue 9 item 3): the real
//! `ucpd` binary charges through a slow local stand-in processor, is SIGKILLed while the
//! charges are in flight, and restarts on the same data directory; its recovery sweeper then
//! asks the processor about every charge, and each approved one ends as an order or a refund.
//! And a commit the disk fails leaves its approved charge for the order, never refunded.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

const VERSION: &str = "2026-04-08";
/// The stand-in records this token's charge nowhere and answers 500: a charge the
/// processor never got.
const TOKEN_LOST: &str = "tok_lost";
const COMPLETES: usize = 6;
/// The merchant's admin API key, in every config here.
const ADMIN_KEY: &str = "crash-admin-key";

#[derive(Clone, Default)]
struct Processor {
    /// our key → (reference, approved)
    charges: Arc<Mutex<HashMap<String, String>>>,
    refunds: Arc<Mutex<Vec<String>>>,
    /// The `Idempotency-Key` of every refund asked for (a key asked again is one refund).
    refund_keys: Arc<Mutex<Vec<String>>>,
    received: Arc<AtomicU64>,
}

async fn charge(
    State(processor): State<Processor>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let key = headers.get("idempotency-key").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    let reference = (body["token"] != TOKEN_LOST).then(|| {
        let mut charges = processor.charges.lock().unwrap();
        let next = charges.len() + 1;
        charges.entry(key).or_insert_with(|| format!("ref_{next}")).clone()
    });
    processor.received.fetch_add(1, Ordering::SeqCst);
    // Approved at once, answered late: the window a crash falls into.
    tokio::time::sleep(Duration::from_secs(2)).await;
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
    let key = headers.get("idempotency-key").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    processor.refund_keys.lock().unwrap().push(key);
    let reference = body["reference"].as_str().unwrap_or_default().to_owned();
    processor.refunds.lock().unwrap().push(reference);
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
async fn start_stand_ins(processor: Processor) -> String {
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
fn serve(config: &std::path::Path, data: &std::path::Path) -> (Child, String) {
    serve_with(Command::new(env!("CARGO_BIN_EXE_ucpd")), config, data)
}

/// [`serve`] run by `command`, which execs `ucpd` with the arguments it is given.
fn serve_with(mut command: Command, config: &std::path::Path, data: &std::path::Path) -> (Child, String) {
    let mut child = command
        .args(["serve", "--listen", "127.0.0.1:0", "--config"])
        .arg(config)
        .arg("--data-dir")
        .arg(data)
        .env_remove("UCPD_DATA_DIR")
        .env_remove("UCPD_CONFIG")
        .env("UCPD_LOG", "info")
        .env("UCPD_LOG_FORMAT", "json")
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

struct Client {
    http: reqwest::Client,
    mcp: String,
    profile: String,
}

impl Client {
    async fn tool(&self, name: &str, mut arguments: Value) -> (StatusCode, Value) {
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

    async fn content(&self, name: &str, arguments: Value) -> Value {
        let (status, reply) = self.tool(name, arguments).await;
        assert_eq!(status, StatusCode::OK, "{reply}");
        reply["result"]["structuredContent"].clone()
    }
}

fn ready_checkout() -> Value {
    json!({
        "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }],
        "buyer": { "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com" },
        "fulfillment": { "methods": [{ "type": "shipping", "destinations": [{
            "street_address": "1 Main St", "address_locality": "San Francisco", "address_region": "CA",
            "postal_code": "94105", "address_country": "US" }], "groups": [{ "selected_option_id": "standard" }] }] }
    })
}

/// Imports a one-product catalog (`mug-1`, 15.00 USD, stock not tracked) into `data`, as a
/// merchant would, and writes a config that charges through the stand-in at `base` and
/// recovers after 3 s, sweeping every second; its path.
fn mug_shop(directory: &std::path::Path, data: &std::path::Path, base: &str) -> std::path::PathBuf {
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
    let hash = common::hash_key(ADMIN_KEY);
    std::fs::write(
        &config,
        format!(
            "dev_insecure_profiles = true\n\
             [checkout]\nsweep_interval_secs = 1\n\
             [payments]\nrecovery_after_secs = 3\n\
             [admin]\napi_keys = [\"{hash}\"]\n\
             [[payments.http]]\nid = \"acme\"\nname = \"com.acme.pay\"\nurl = \"{base}/pay\"\ntimeout_ms = 2500\nretries = 0\n"
        ),
    )
    .unwrap();
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_charges_leaves_every_approved_charge_an_order_or_a_refund() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("data");
    let processor = Processor::default();
    let base = start_stand_ins(processor.clone()).await;
    let config = mug_shop(directory.path(), &data, &base);
    let (mut first, url) = serve(&config, &data);
    let client =
        Client { http: reqwest::Client::new(), mcp: format!("{url}/ucp/mcp"), profile: format!("{base}/profile.json") };
    let mut ids = Vec::new();
    for _ in 0..COMPLETES {
        let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
        assert_eq!(created["status"], "ready_for_complete", "{created}");
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    let lost = ids[0].clone();
    let client = Arc::new(client);
    for (index, id) in ids.iter().enumerate() {
        let token = if index == 0 { TOKEN_LOST } else { "tok_live" };
        let arguments = json!({ "id": id, "checkout": { "payment": { "instruments": [{ "id": "pi_1", "handler_id": "acme",
            "type": "card", "credential": { "type": "token", "token": token } }] } } });
        let client = Arc::clone(&client);
        tokio::spawn(async move { client.tool("complete_checkout", arguments).await });
    }
    // Every charge reached the processor, none has been answered: kill.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while processor.received.load(Ordering::SeqCst) < COMPLETES as u64 {
        assert!(tokio::time::Instant::now() < deadline, "the charges never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    assert_eq!(processor.charges.lock().unwrap().len(), COMPLETES - 1, "approved charges (one was lost)");

    let (mut second, url) = serve(&config, &data);
    let client =
        Client { http: reqwest::Client::new(), mcp: format!("{url}/ucp/mcp"), profile: format!("{base}/profile.json") };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut states = HashMap::new();
    loop {
        for id in &ids {
            let body = client.content("get_checkout", json!({ "id": id })).await;
            states.insert(id.clone(), body);
        }
        let stuck = states.values().filter(|body| body["status"] == "complete_in_progress").count();
        if stuck == 0 || tokio::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }

    let charges = processor.charges.lock().unwrap().clone();
    let refunds = processor.refunds.lock().unwrap().clone();
    let orders = states.values().filter(|body| body["order"]["id"].is_string()).count();
    assert_eq!(orders, COMPLETES - 1, "stock is not tracked, so every approved charge became its order");
    for id in &ids {
        let body = &states[id];
        assert_ne!(body["status"], "complete_in_progress", "left stuck after the restart: {body}");
        let charge = charges.iter().find(|(key, _)| key.starts_with(id.as_str())).map(|(_, reference)| reference);
        match charge {
            Some(reference) => {
                let order = body["order"]["id"].as_str();
                let refunded = refunds.contains(reference);
                assert!(order.is_some() != refunded, "an approved charge is exactly one of order or refund: {body}");
                if let Some(order) = order {
                    let order = client.content("get_order", json!({ "id": order })).await;
                    assert_eq!(order["checkout_id"], id.as_str(), "{order}");
                }
            }
            None => {
                assert_eq!(id, &lost);
                assert!(body.get("order").is_none(), "no order without a charge: {body}");
                assert_eq!(body["status"], "ready_for_complete", "the lost charge's checkout is open again: {body}");
            }
        }
    }
    second.kill().ok();
    second.wait().ok();
}

/// A shop whose server's disk can be made to fail ([`limit_file_size`]), charging through the
/// stand-in processor.
struct DiskShop {
    _directory: tempfile::TempDir,
    processor: Processor,
    server: common::Killed,
    url: String,
    client: Arc<Client>,
}

impl DiskShop {
    async fn start() -> DiskShop {
        let directory = tempfile::tempdir().unwrap();
        let data = directory.path().join("data");
        let processor = Processor::default();
        let base = start_stand_ins(processor.clone()).await;
        let config = mug_shop(directory.path(), &data, &base);
        let (server, url) = serve_on_a_disk_that_can_fail(&config, &data);
        let profile = format!("{base}/profile.json");
        let client = Arc::new(Client { http: reqwest::Client::new(), mcp: format!("{url}/ucp/mcp"), profile });
        DiskShop { _directory: directory, processor, server, url, client }
    }
}

/// `complete_checkout`'s arguments for checkout `id`, paid through the stand-in.
fn pay_acme(id: &str) -> Value {
    json!({ "id": id, "checkout": { "payment": { "instruments": [{ "id": "pi_1", "handler_id": "acme", "type": "card",
        "credential": { "type": "token", "token": "tok_live" } }] } } })
}

/// [`serve`] with SIGXFSZ ignored (inherited through exec), so that a write past the file-size
/// limit [`limit_file_size`] sets fails, as on a failing disk, rather than killing the server.
fn serve_on_a_disk_that_can_fail(config: &std::path::Path, data: &std::path::Path) -> (common::Killed, String) {
    let mut ignoring = Command::new("sh");
    ignoring.args(["-c", "trap '' XFSZ; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_ucpd")]);
    let (server, url) = serve_with(ignoring, config, data);
    (common::Killed(server), url)
}

/// `prlimit` on the running server: its soft file-size limit, `1` (every write to a regular
/// file fails, as on a failing disk) or `unlimited`.
fn limit_file_size(server: &Child, soft: &str) {
    let status = Command::new("prlimit")
        .arg("--pid")
        .arg(server.id().to_string())
        .arg(format!("--fsize={soft}:"))
        .status()
        .expect("prlimit (util-linux) runs");
    assert!(status.success(), "prlimit --fsize={soft}: failed");
}

// The disk fails the COMMIT that places an approved charge's order (every file write of the
// server fails with EFBIG, its soft file-size limit lowered to one byte while the processor is
// answering). SQLite cannot say whether such a commit's WAL frames reached the disk, so the
// order may stand: the charge is not refunded (before, it was, and a restart could then find
// the order beside its refund). The complete answers 503 "the payment was approved", and once
// the disk is back the recovery sweeper places the order from that one charge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_the_disk_fails_keeps_its_approved_charge_for_the_order() {
    let DiskShop { _directory, processor, server, url: _, client } = DiskShop::start().await;
    let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let arguments = pay_acme(&id);
    let completing = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { client.tool("complete_checkout", arguments).await })
    };
    // The claim is stored and the charge approved; its answer comes 2 s later, to a broken disk.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while processor.received.load(Ordering::SeqCst) < 1 {
        assert!(tokio::time::Instant::now() < deadline, "the charge never arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    limit_file_size(&server.0, "1");
    let (status, reply) = completing.await.unwrap();
    limit_file_size(&server.0, "unlimited");
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the payment was approved"), "{reply}");
    assert!(processor.refunds.lock().unwrap().is_empty(), "a charge whose order may stand is not refunded");

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let settled = loop {
        let body = client.content("get_checkout", json!({ "id": id })).await;
        if body["status"] != "complete_in_progress" || tokio::time::Instant::now() > deadline {
            break body;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    assert_eq!(settled["status"], "completed", "{settled}");
    let order = settled["order"]["id"].as_str().expect("the order of the one charge");
    let order = client.content("get_order", json!({ "id": order })).await;
    assert_eq!(order["checkout_id"], id.as_str(), "{order}");
    assert_eq!(processor.charges.lock().unwrap().len(), 1, "charged once");
    assert!(processor.refunds.lock().unwrap().is_empty(), "and kept");
}

// A merchant's refund the processor made but the store could not record (the disk failed its
// commit) is made once, whatever the retries: the same request again finds the order at the
// same version, so its adjustment has the same id and the processor the same key; before,
// every attempt had a random key, and each retry refunded the buyer again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refund_the_disk_failed_to_record_is_made_once_by_its_retry() {
    let DiskShop { _directory, processor, server, url, client } = DiskShop::start().await;
    let created = client.content("create_checkout", json!({ "checkout": ready_checkout() })).await;
    let completed = client.content("complete_checkout", pay_acme(created["id"].as_str().unwrap())).await;
    let order = completed["order"]["id"].as_str().unwrap_or_else(|| panic!("{completed}")).to_owned();

    let refund = || {
        client
            .http
            .post(format!("{url}/admin/api/orders/{order}/refund"))
            .bearer_auth(ADMIN_KEY)
            .json(&json!({ "amount": 500, "reason": "Scratched" }))
            .send()
    };
    limit_file_size(&server.0, "1");
    let failed = refund().await.unwrap();
    limit_file_size(&server.0, "unlimited");
    assert!(failed.status().is_server_error(), "{}", failed.status());
    assert_eq!(processor.refund_keys.lock().unwrap().len(), 1, "the processor refunded before the store failed");

    let retried = refund().await.unwrap();
    assert_eq!(retried.status(), StatusCode::OK);
    let retried: Value = retried.json().await.unwrap();
    assert_eq!(retried["payment"]["refunded"], 500, "{retried}");
    assert_eq!(retried["order"]["adjustments"].as_array().map(Vec::len), Some(1), "{retried}");
    let keys = processor.refund_keys.lock().unwrap().clone();
    assert_eq!(keys.len(), 2, "asked twice: {keys:?}");
    assert_eq!(keys[0], keys[1], "under one key, so refunded once: {keys:?}");
    assert_eq!(keys[0], retried["order"]["adjustments"][0]["id"].as_str().unwrap(), "the key is the adjustment's id");

    // A second refund of the same amount, asked for after the first was recorded, is a refund
    // of its own.
    let again: Value = refund().await.unwrap().json().await.unwrap();
    assert_eq!(again["payment"]["refunded"], 1000, "{again}");
    let keys = processor.refund_keys.lock().unwrap().clone();
    assert_ne!(keys[2], keys[0], "{keys:?}");
}
