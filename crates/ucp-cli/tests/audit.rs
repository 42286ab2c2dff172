//! The audit line on the real binary's standard error (issue 8 item 5): every call's line names
//! the request's id, the platform, the authenticated principal and its credential, the
//! operation and the outcome, in the text format and in JSON, including `complete_checkout`,
//! which runs as a task of its own.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const PLATFORM_KEY: &str = "audit-platform-key";

/// A running `ucpd serve` and every line it has logged so far.
struct Server {
    _child: common::Killed,
    base_url: String,
    lines: Arc<Mutex<Vec<String>>>,
    /// The data directory, removed once the server is stopped.
    _directory: tempfile::TempDir,
}

impl Server {
    /// Waits (up to 10 s: the log thread writes out every 20 ms) for a line with all of `parts`.
    fn line_with(&self, parts: &[&str]) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let lines = self.lines.lock().unwrap().clone();
            if let Some(line) = lines.iter().find(|line| parts.iter().all(|part| line.contains(part))) {
                return line.clone();
            }
            assert!(Instant::now() < deadline, "no line with {parts:?} in:\n{}", lines.join("\n"));
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn start_server(directory: tempfile::TempDir, profile: &str, json_logs: bool) -> Server {
    let data = directory.path().join("data");
    let hash = common::hash_key(PLATFORM_KEY);
    let config = data.with_file_name("ucpd.toml");
    std::fs::write(
        &config,
        format!(
            "[payments]\nsandbox = true\n[[platforms]]\nid = \"agent-co\"\nprofiles = [\"{profile}\"]\napi_keys = [\"{hash}\"]\n"
        ),
    )
    .unwrap();
    let mut command = common::ucpd();
    command.env("UCPD_LOG", "info");
    if json_logs {
        command.env("UCPD_LOG_FORMAT", "json");
    }
    let mut child = common::spawn_serve(command, &data, &config);
    let (address, reader) = common::ready(&mut child);
    let base_url = format!("http://{address}");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let collected = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in reader.map_while(Result::ok) {
            collected.lock().unwrap().push(line);
        }
    });
    Server { _child: common::Killed(child), base_url, lines, _directory: directory }
}

/// Calls a tool as the onboarded platform, with `request_id` as the request's `Request-Id`.
async fn tool(server: &Server, profile: &str, request_id: &str, name: &str, mut arguments: Value) -> Value {
    arguments["meta"] = json!({ "ucp-agent": { "profile": profile }, "idempotency-key": format!("key-{request_id}") });
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let response = reqwest::Client::new()
        .post(format!("{}/ucp/mcp", server.base_url))
        .header("x-api-key", PLATFORM_KEY)
        .header("request-id", request_id)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-request-id"], request_id);
    let reply: Value = response.json().await.unwrap();
    reply["result"]["structuredContent"].clone()
}

/// A catalog of one product, a profile that shares checkout, and a checkout placed as an order.
async fn place_an_order(json_logs: bool, tag: &str) -> Server {
    let directory = tempfile::tempdir().unwrap();
    common::one_product_store(directory.path());
    let capabilities: serde_json::Map<String, Value> = ["checkout", "order", "fulfillment"]
        .iter()
        .map(|name| (format!("dev.ucp.shopping.{name}"), json!([{ "version": "2026-04-08" }])))
        .collect();
    let profile =
        common::serve_profile(json!({ "ucp": { "version": "2026-04-08", "capabilities": capabilities } }).to_string());
    let server = start_server(directory, &profile, json_logs);

    let created = tool(&server, &profile, &format!("{tag}-create"), "create_checkout", common::cap_checkout(1)).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    let arguments = json!({ "id": created["id"], "checkout": common::sandbox_payment() });
    let completed = tool(&server, &profile, &format!("{tag}-complete"), "complete_checkout", arguments).await;
    assert!(completed["order"]["id"].is_string(), "{completed}");
    server
}

#[tokio::test]
async fn every_calls_audit_line_names_its_request_and_its_principal() {
    let server = place_an_order(false, "text").await;
    for (request_id, operation) in [("text-create", "create_checkout"), ("text-complete", "complete_checkout")] {
        let line = server.line_with(&[&format!("request{{request_id={request_id}}}: ucpd::audit: audit ")]);
        for part in [
            "principal=\"agent-co\"",
            "credential=\"api_key\"",
            &format!("operation=\"{operation}\""),
            "outcome=\"ok\"",
        ] {
            assert!(line.contains(part), "{part} in {line}");
        }
    }
}

#[tokio::test]
async fn in_json_the_request_id_is_the_request_spans() {
    let server = place_an_order(true, "json").await;
    for (request_id, operation) in [("json-create", "create_checkout"), ("json-complete", "complete_checkout")] {
        let line = server.line_with(&["\"ucpd::audit\"", &format!("\"operation\":\"{operation}\"")]);
        let parsed: Value = serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"));
        assert_eq!(parsed["span"]["request_id"], request_id, "{line}");
        assert_eq!(parsed["fields"]["principal"], "agent-co", "{line}");
        assert_eq!(parsed["fields"]["credential"], "api_key", "{line}");
    }
}
