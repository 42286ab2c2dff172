//! Thousands of generated malformed bodies: every reply is a well-formed JSON-RPC response
//! (or 202 for a notification), never a 5xx.

use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use crate::helpers::spawn_app;

fn random_value(rng: &mut rand::rngs::StdRng, depth: u32) -> Value {
    match rng.random_range(0..if depth > 3 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => json!(rng.random_range(-1_000_000i64..1_000_000)),
        3 => json!(rng.random::<f64>() * 1e6),
        4 => json!(
            ["", "x", "shoe", "🦀", "\u{0}", "2026-04-08", "https://127.0.0.1/x", "search_catalog"]
                [rng.random_range(0..8)]
        ),
        5 => json!("a".repeat(rng.random_range(0..3000))),
        6 => Value::Array((0..rng.random_range(0..4)).map(|_| random_value(rng, depth + 1)).collect()),
        _ => {
            let keys = [
                "jsonrpc",
                "id",
                "method",
                "params",
                "name",
                "arguments",
                "meta",
                "catalog",
                "query",
                "ids",
                "filters",
                "pagination",
                "cursor",
                "limit",
                "selected",
                "ucp-agent",
                "profile",
            ];
            let mut object = serde_json::Map::new();
            for _ in 0..rng.random_range(0..5) {
                object.insert(keys[rng.random_range(0..keys.len())].into(), random_value(rng, depth + 1));
            }
            Value::Object(object)
        }
    }
}

fn mutate(rng: &mut rand::rngs::StdRng, base: &Value) -> Value {
    let mut value = base.clone();
    let paths: &[&[&str]] = &[
        &["id"],
        &["method"],
        &["params"],
        &["params", "name"],
        &["params", "arguments"],
        &["params", "arguments", "meta"],
        &["params", "arguments", "catalog"],
        &["params", "arguments", "catalog", "query"],
        &["params", "arguments", "catalog", "ids"],
        &["params", "arguments", "catalog", "filters"],
        &["params", "arguments", "catalog", "pagination"],
        &["params", "arguments", "catalog", "selected"],
        &["params", "arguments", "catalog", "id"],
    ];
    let path = paths[rng.random_range(0..paths.len())];
    let mut node = &mut value;
    for key in &path[..path.len() - 1] {
        if !node.is_object() {
            return value;
        }
        node = node.as_object_mut().unwrap().entry(key.to_string()).or_insert(json!({}));
    }
    if let Some(object) = node.as_object_mut() {
        if rng.random_bool(0.2) {
            object.remove(path[path.len() - 1]);
        } else {
            object.insert(path[path.len() - 1].to_string(), random_value(rng, 1));
        }
    }
    value
}

#[tokio::test]
async fn thousands_of_malformed_bodies_get_well_formed_json_rpc_replies() {
    let app = spawn_app().await;
    let mut rng = rand::rngs::StdRng::seed_from_u64(20261129);
    let tools = ["search_catalog", "lookup_catalog", "get_product"];
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    for index in 0..3000 {
        let tool = tools[index % 3];
        let base = json!({
            "jsonrpc": "2.0", "id": index, "method": "tools/call",
            "params": { "name": tool, "arguments": { "meta": { "ucp-agent": { "profile": app.platform.profile_url() } }, "catalog": { "query": "shoe", "ids": ["shoe"], "id": "shoe" } } }
        });
        let body = match index % 5 {
            0 => random_value(&mut rng, 0).to_string().into_bytes(),
            1 => {
                let mut bytes = mutate(&mut rng, &base).to_string().into_bytes();
                if !bytes.is_empty() {
                    let cut = rng.random_range(0..bytes.len());
                    bytes.truncate(cut);
                }
                bytes
            }
            2 => {
                let mut bytes = base.to_string().into_bytes();
                for _ in 0..rng.random_range(1..4) {
                    let at = rng.random_range(0..bytes.len());
                    bytes[at] = rng.random();
                }
                bytes
            }
            _ => {
                let once = mutate(&mut rng, &base);
                mutate(&mut rng, &once).to_string().into_bytes()
            }
        };
        bodies.push(body);
    }
    let mut answered = 0;
    for body in bodies {
        let (status, _, reply) = app.post_raw(body.clone()).await;
        let shown = String::from_utf8_lossy(&body);
        assert!(status.as_u16() < 500, "{status} for {shown}: {reply}");
        if status == 202 {
            assert_eq!(reply, Value::Null);
            continue;
        }
        assert_eq!(reply["jsonrpc"], "2.0", "{shown}: {reply}");
        let has_result = reply.get("result").is_some();
        let has_error = reply.get("error").is_some();
        assert!(has_result ^ has_error, "exactly one of result/error: {reply}");
        if has_error {
            assert!(reply["error"]["code"].is_i64() && reply["error"]["message"].is_string(), "{reply}");
        }
        answered += 1;
    }
    assert!(answered > 2500);
}
