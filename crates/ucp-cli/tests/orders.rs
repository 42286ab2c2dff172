//! `ucpd orders …` against a running `ucpd serve` (issue 9 item 1): the real binary on both
//! sides, an order placed over MCP, then listed, shipped and refunded from the command line.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::process::Command;

use serde_json::{Value, json};

const ADMIN_KEY: &str = "cli-admin-key";

fn ucpd() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ucpd"));
    command.env_remove("UCPD_DATA_DIR").env_remove("UCPD_CONFIG").env_remove("UCPD_ADMIN_KEY").env("UCPD_LOG", "info");
    command
}

struct Server {
    _child: common::Killed,
    base_url: String,
}

fn start_server(data: &std::path::Path) -> Server {
    let hash = common::hash_key(ADMIN_KEY);
    let config = data.with_file_name("ucpd.toml");
    std::fs::write(&config, format!("[admin]\napi_keys = [\"{hash}\"]\n[payments]\nsandbox = true\n")).unwrap();
    let mut child = common::spawn_serve(ucpd(), data, &config);
    let (address, lines) = common::ready(&mut child);
    common::drain(lines);
    let base_url = format!("http://{address}");
    Server { _child: common::Killed(child), base_url }
}

async fn tool(client: &reqwest::Client, server: &Server, profile: &str, name: &str, mut arguments: Value) -> Value {
    arguments["meta"] = json!({ "ucp-agent": { "profile": profile }, "idempotency-key": format!("key-{name}") });
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let response = client.post(format!("{}/ucp/mcp", server.base_url)).json(&body).send().await.unwrap();
    let reply: Value = response.json().await.unwrap();
    reply["result"]["structuredContent"].clone()
}

fn orders(server: &Server, args: &[&str]) -> (bool, String, String) {
    let output = ucpd().args(["orders", "--url", &server.base_url, "--key", ADMIN_KEY]).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.success(), stdout, stderr)
}

#[tokio::test]
async fn orders_are_listed_shipped_and_refunded_from_the_command_line() {
    let directory = tempfile::tempdir().unwrap();
    let data = common::one_product_store(directory.path());
    let capabilities: serde_json::Map<String, Value> =
        ["catalog.search", "catalog.lookup", "checkout", "order", "fulfillment"]
            .iter()
            .map(|name| (format!("dev.ucp.shopping.{name}"), json!([{ "version": "2026-04-08" }])))
            .collect();
    let profile =
        common::serve_profile(json!({ "ucp": { "version": "2026-04-08", "capabilities": capabilities } }).to_string());
    let server = start_server(&data);
    let client = reqwest::Client::new();

    let created = tool(&client, &server, &profile, "create_checkout", common::cap_checkout(2)).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    let arguments = json!({ "id": created["id"], "checkout": common::sandbox_payment() });
    let completed = tool(&client, &server, &profile, "complete_checkout", arguments).await;
    let order_id = completed["order"]["id"].as_str().unwrap_or_else(|| panic!("{completed}")).to_owned();

    let (ok, stdout, stderr) = orders(&server, &["list"]);
    assert!(ok, "{stderr}");
    let list: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(list["orders"][0]["id"], order_id.as_str(), "{stdout}");

    let (ok, stdout, stderr) = orders(&server, &["show", &order_id]);
    assert!(ok, "{stderr}");
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    let line = shown["order"]["line_items"][0]["id"].as_str().unwrap().to_owned();
    let paid = shown["payment"]["amount"].as_i64().unwrap();

    let (ok, _, stderr) = orders(
        &server,
        &[
            "ship",
            &order_id,
            "--line",
            &format!("{line}:3"),
            "--tracking-number",
            "1Z",
            "--tracking-url",
            "https://t.example/1Z",
        ],
    );
    assert!(!ok && stderr.contains("quantity_exceeded"), "shipping more than was ordered: {stderr}");
    let (ok, stdout, stderr) = orders(
        &server,
        &[
            "ship",
            &order_id,
            "--line",
            &format!("{line}:1"),
            "--carrier",
            "UPS",
            "--tracking-number",
            "1Z",
            "--tracking-url",
            "https://t.example/1Z",
        ],
    );
    assert!(ok, "{stderr}");
    let shipped: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shipped["status"], "partial");
    assert_eq!(shipped["order"]["line_items"][0]["status"], "partial");
    assert_eq!(shipped["order"]["fulfillment"]["events"][0]["carrier"], "UPS");

    let (ok, _, stderr) = orders(&server, &["refund", &order_id, "--amount", &(paid + 1).to_string()]);
    assert!(!ok && stderr.contains("refund_exceeds_payment"), "{stderr}");
    let (ok, stdout, stderr) = orders(&server, &["refund", &order_id, "--amount", "100", "--reason", "Late"]);
    assert!(ok, "{stderr}");
    let refunded: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(refunded["payment"]["refunded"], 100);
    assert_eq!(refunded["order"]["adjustments"][0]["totals"][0]["amount"], -100);
    let (ok, stdout, stderr) = orders(&server, &["adjust", &order_id, "--type", "credit", "--amount", "-50"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("\"credit\""), "{stdout}");

    // A run repeated with its --idempotency-key gets the first run's result; the order changed once.
    let keyed = ["refund", &order_id, "--amount", "25", "--idempotency-key", "cli-refund-1"];
    let (ok, first, stderr) = orders(&server, &keyed);
    assert!(ok, "{stderr}");
    let (ok, again, stderr) = orders(&server, &keyed);
    assert!(ok, "{stderr}");
    assert_eq!(again, first);
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap()["payment"]["refunded"], 125);
    // The refunds, newest first, with the keys their adjustments carry; recording one that is
    // already recorded answers the order as it is.
    let (ok, stdout, stderr) = orders(&server, &["refunds", "--state", "recorded"]);
    assert!(ok, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    let amounts: Vec<&Value> = listed["refunds"].as_array().unwrap().iter().map(|refund| &refund["amount"]).collect();
    assert_eq!(amounts, [&json!(25), &json!(100)], "{stdout}");
    let key = listed["refunds"][0]["key"].as_str().unwrap();
    let (ok, stdout, stderr) = orders(&server, &["record-refund", key]);
    assert!(ok, "{stderr}");
    assert_eq!(serde_json::from_str::<Value>(&stdout).unwrap()["payment"]["refunded"], 125, "{stdout}");
    let (ok, _, stderr) = orders(&server, &["refunds", "--state", "lost"]);
    assert!(!ok && stderr.contains("invalid_input"), "{stderr}");
    // The page after the first of one refund is the other; a recorded refund is not dismissed.
    let (ok, stdout, stderr) = orders(&server, &["refunds", "--limit", "1"]);
    assert!(ok, "{stderr}");
    let first: Value = serde_json::from_str(&stdout).unwrap();
    let next = first["next"].as_str().unwrap_or_else(|| panic!("{stdout}"));
    let (ok, stdout, stderr) = orders(&server, &["refunds", "--limit", "1", "--before", next]);
    assert!(ok, "{stderr}");
    let older: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(older["refunds"][0]["amount"], 100, "{stdout}");
    let (ok, _, stderr) = orders(&server, &["dismiss-refund", key]);
    assert!(!ok && stderr.contains("refund_not_abandoned"), "{stderr}");
    // A change whose outcome is unknown (nothing answered) says how to repeat it safely.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let output = ucpd()
        .args(["orders", "--url", &nowhere, "--key", ADMIN_KEY, "refund", &order_id, "--amount", "25"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && stderr.contains("repeat the same command with --idempotency-key"), "{stderr}");

    let output = ucpd().args(["orders", "--url", &server.base_url, "--key", "wrong", "list"]).output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unauthorized"));
}
