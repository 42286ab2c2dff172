//! More conformance checks: checklist 10, 12, 24, 46, 54, 69, 132.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Signer as _;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use ucp_server::config::SignaturePolicy;

use crate::checkout::{TOKEN_SUCCESS, complete, pay, ready_checkout};
use crate::checkout_edges::assert_checkout;
use crate::helpers::{PlatformServer, TestApp, fixture_products, platform_profile, spawn_app, spawn_app_with};
use crate::rest::{rest, rest_with};

fn capability_names(body: &Value) -> Vec<String> {
    body["ucp"]["capabilities"]
        .as_object()
        .unwrap_or_else(|| panic!("no ucp.capabilities: {body}"))
        .keys()
        .cloned()
        .collect()
}

fn error_messages(body: &Value) -> Vec<&Value> {
    body["messages"].as_array().map(|all| all.iter().filter(|m| m["type"] == "error").collect()).unwrap_or_default()
}

/// A fresh ready checkout, completed; returns (id, completed body).
async fn completed_checkout(app: &TestApp) -> (String, Value) {
    let created =
        app.tool("create_checkout", json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 2) })).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let completed = complete(app, &id, TOKEN_SUCCESS).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed["order"]["id"].is_string(), "{completed}");
    (id, completed)
}

/// The parts of a checkout a refused operation must leave as they were.
fn assert_unchanged(after: &Value, before: &Value) {
    assert_eq!(after["id"], before["id"], "{after}");
    assert_eq!(after["status"], "completed", "{after}");
    assert_eq!(after["order"], before["order"], "same order: {after}");
    assert_eq!(after["line_items"], before["line_items"], "{after}");
    assert_eq!(after["totals"], before["totals"], "{after}");
    assert_eq!(after["currency"], before["currency"], "{after}");
}

// Checklist 132: cancel on a completed checkout leaves it unchanged: the current resource
// (completed, same order) plus an error message, over MCP and REST; a get shows it unchanged.
#[tokio::test]
async fn cancel_on_a_completed_checkout_answers_it_unchanged_with_an_error() {
    let app = spawn_app().await;
    let (id, completed) = completed_checkout(&app).await;

    let refused = app.tool("cancel_checkout", json!({ "meta": app.keyed_meta(), "id": id, "checkout": {} })).await;
    assert_checkout(&refused);
    assert_unchanged(&refused, &completed);
    assert!(!error_messages(&refused).is_empty(), "cancel of a completed checkout carries an error: {refused}");

    let (status, refused) = rest(&app, "POST", &format!("/checkout-sessions/{id}/cancel"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{refused}");
    assert_unchanged(&refused, &completed);
    assert!(!error_messages(&refused).is_empty(), "REST too: {refused}");

    let got = app.tool("get_checkout", json!({ "id": id })).await;
    assert_checkout(&got);
    assert_unchanged(&got, &completed);
    let order = app.tool("get_order", json!({ "id": completed["order"]["id"] })).await;
    assert_eq!(order["checkout_id"], id.as_str());
    assert_eq!(order["line_items"][0]["status"], "processing", "the order is not canceled: {order}");
}

// Checklist 10, 12: every capability entry has version, spec and schema; dev.ucp.* spec and
// schema URLs are on https://ucp.dev/; every dev.ucp.* service and capability entry declares
// ucp.version.
#[tokio::test]
async fn every_profile_entry_is_complete_and_on_the_profile_version() {
    let app = spawn_app().await;
    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let profile: Value = response.json().await.unwrap();
    let version = profile["ucp"]["version"].as_str().expect("ucp.version");
    let capabilities = profile["ucp"]["capabilities"].as_object().expect("capabilities");
    for expected in ["cart", "checkout", "order", "fulfillment", "discount", "catalog.search", "catalog.lookup"] {
        assert!(capabilities.contains_key(&format!("dev.ucp.shopping.{expected}")), "{expected} offered");
    }
    let mut checked = 0;
    for (name, entries) in capabilities {
        let entries = entries.as_array().unwrap_or_else(|| panic!("{name}: entries are an array"));
        assert!(!entries.is_empty(), "{name}");
        for entry in entries {
            for field in ["version", "spec", "schema"] {
                assert!(entry[field].as_str().is_some_and(|value| !value.is_empty()), "{name} lacks {field}: {entry}");
            }
            if name.starts_with("dev.ucp.") {
                for field in ["spec", "schema"] {
                    let url = entry[field].as_str().unwrap();
                    assert!(url.starts_with("https://ucp.dev/"), "{name}.{field} is {url}");
                }
                assert_eq!(entry["version"], version, "{name}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 7, "{checked} dev.ucp capability entries");
    let services = profile["ucp"]["services"].as_object().expect("services");
    assert!(services.contains_key("dev.ucp.shopping"));
    for (name, entries) in services.iter().filter(|(name, _)| name.starts_with("dev.ucp.")) {
        for entry in entries.as_array().unwrap() {
            assert_eq!(entry["version"], version, "service {name}: {entry}");
        }
    }
}

// Checklist 24 (overview.md §5 "Relevance"): with checkout+cart+discount+order negotiated, cart
// responses list cart + extensions of cart (never checkout), checkout responses checkout +
// extensions of checkout (never cart, never order, never the un-negotiated fulfillment),
// order responses order only.
#[tokio::test]
async fn each_response_lists_only_its_relevant_negotiated_capabilities() {
    let app = spawn_app().await;
    *app.platform.profile.lock().unwrap() = platform_profile(&[
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.cart",
        "dev.ucp.shopping.discount",
        "dev.ucp.shopping.order",
    ]);
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
        .await;
    let names = capability_names(&cart);
    assert!(names.contains(&"dev.ucp.shopping.cart".into()), "{names:?}");
    for name in &names {
        assert!(["dev.ucp.shopping.cart", "dev.ucp.shopping.discount"].contains(&name.as_str()), "cart lists {name}");
    }
    let got = app.tool("get_cart", json!({ "id": cart["id"] })).await;
    assert_eq!(capability_names(&got), names, "get_cart alike");

    let checkout =
        app.tool("create_checkout", json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 1) })).await;
    let from_cart = app
        .tool(
            "create_checkout",
            json!({ "meta": app.keyed_meta(), "checkout": { "cart_id": cart["id"], "line_items": [] } }),
        )
        .await;
    for body in [&checkout, &from_cart] {
        let names = capability_names(body);
        assert!(names.contains(&"dev.ucp.shopping.checkout".into()), "{names:?}");
        for name in &names {
            assert!(
                ["dev.ucp.shopping.checkout", "dev.ucp.shopping.discount"].contains(&name.as_str()),
                "checkout lists {name}: {body}"
            );
        }
    }

    // Orders need a completed checkout, which needs fulfillment: a second platform negotiates it
    // too. Its carts still list no fulfillment (an extension of checkout only), its order only order.
    let full = PlatformServer::start(platform_profile(&[
        "dev.ucp.shopping.checkout",
        "dev.ucp.shopping.cart",
        "dev.ucp.shopping.discount",
        "dev.ucp.shopping.order",
        "dev.ucp.shopping.fulfillment",
    ]))
    .await;
    let meta = || app.keyed_meta_for(&full.profile_url());
    let cart = app
        .tool(
            "create_cart",
            json!({ "meta": meta(), "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }),
        )
        .await;
    let names = capability_names(&cart);
    assert!(!names.iter().any(|name| name.ends_with(".fulfillment") || name.ends_with(".checkout")), "{names:?}");
    let checkout = app.tool("create_checkout", json!({ "meta": meta(), "checkout": ready_checkout("mug-1", 1) })).await;
    let names = capability_names(&checkout);
    assert!(!names.iter().any(|name| name.ends_with(".cart") || name.ends_with(".order")), "{names:?}");
    let completed = app
        .tool("complete_checkout", json!({ "meta": meta(), "id": checkout["id"], "checkout": pay(TOKEN_SUCCESS) }))
        .await;
    assert_eq!(completed["status"], "completed", "{completed}");
    let order = app.tool("get_order", json!({ "meta": meta(), "id": completed["order"]["id"] })).await;
    assert_eq!(capability_names(&order), vec!["dev.ucp.shopping.order".to_owned()], "{order}");
}

// Checklist 46: get_cart with only an HTTP Idempotency-Key (no meta key) succeeds on MCP and
// REST, and the header does not replay a read (transport-mcp.md §4: "just accept it on reads").
#[tokio::test]
async fn get_cart_accepts_an_http_idempotency_key_without_a_meta_key() {
    let app = spawn_app().await;
    let cart = app
        .tool("create_cart", json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } }))
        .await;
    let id = cart["id"].as_str().unwrap().to_owned();
    let header_key = uuid::Uuid::new_v4().to_string();
    let body = json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": { "name": "get_cart",
        "arguments": { "meta": app.meta_for(&app.platform.profile_url()), "id": id } } })
    .to_string();
    let headers = [("content-type", "application/json"), ("idempotency-key", header_key.as_str())];
    let (status, _, first) = app.post_with(body.clone(), &headers).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert!(first.get("error").is_none(), "{first}");
    assert_eq!(first["result"]["structuredContent"]["id"], id.as_str(), "{first}");
    assert_eq!(first["result"]["structuredContent"]["ucp"]["status"], "success", "{first}");

    let update = json!({ "id": id, "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 4 }] } });
    assert_eq!(app.tool("update_cart", update).await["line_items"][0]["quantity"], 4);
    let (status, _, second) = app.post_with(body, &headers).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(
        second["result"]["structuredContent"]["line_items"][0]["quantity"], 4,
        "a read is not replayed: {second}"
    );

    let path = format!("/carts/{id}");
    let (status, body) = rest_with(&app, "GET", &path, None, &[("idempotency-key", &header_key)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["id"].as_str(), body["line_items"][0]["quantity"].as_i64()),
        (Some(id.as_str()), Some(4)),
        "{body}"
    );
}

// Checklist 54 (checkout.md §1: response-only fields a platform sends anyway are ignored, not
// rejected): unknown fields and echoed currency/totals/status are accepted on create and
// update, over MCP and REST, and none of them is trusted.
#[tokio::test]
async fn checkout_writes_ignore_unknown_and_response_only_fields() {
    let app = spawn_app().await;
    let noisy = |quantity: i64| {
        let mut checkout = ready_checkout("mug-1", quantity);
        checkout["foo"] = json!(1);
        checkout["currency"] = json!("EUR");
        checkout["status"] = json!("completed");
        checkout["totals"] = json!([{ "type": "subtotal", "amount": 1 }, { "type": "total", "amount": 1 }]);
        checkout
    };
    let (status, created) =
        app.call_tool("create_checkout", json!({ "meta": app.keyed_meta(), "checkout": noisy(1), "bar": true })).await;
    assert_eq!(status, StatusCode::OK);
    assert!(created.get("error").is_none(), "create not rejected: {created}");
    let created = &created["result"]["structuredContent"];
    assert_checkout(created);
    assert_eq!(
        (created["currency"].as_str(), created["status"].as_str()),
        (Some("USD"), Some("ready_for_complete")),
        "{created}"
    );
    assert!(created.get("foo").is_none() && created.get("order").is_none(), "{created}");
    let total = crate::helpers::total_of(&created["totals"], "total").unwrap();
    assert!(total > 1500, "totals are ours: {total}");

    let id = created["id"].as_str().unwrap();
    let (status, updated) =
        app.call_tool("update_checkout", json!({ "meta": app.keyed_meta(), "id": id, "checkout": noisy(2) })).await;
    assert_eq!(status, StatusCode::OK);
    assert!(updated.get("error").is_none(), "update not rejected: {updated}");
    let updated = &updated["result"]["structuredContent"];
    assert_checkout(updated);
    assert_eq!(
        (updated["currency"].as_str(), updated["status"].as_str()),
        (Some("USD"), Some("ready_for_complete")),
        "{updated}"
    );
    assert_eq!(updated["line_items"][0]["quantity"], 2, "the update applied: {updated}");

    let (status, body) = rest(&app, "POST", "/checkout-sessions", Some(noisy(1))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["currency"], "USD");
    let (status, body) =
        rest(&app, "PUT", &format!("/checkout-sessions/{}", body["id"].as_str().unwrap()), Some(noisy(3))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["status"].as_str(), body["line_items"][0]["quantity"].as_i64()),
        (Some("ready_for_complete"), Some(3))
    );
    // Still completable: the echoed "completed" did nothing.
    let done = complete(&app, id, TOKEN_SUCCESS).await;
    assert_eq!(done["status"], "completed", "{done}");
}

/// Signs and POSTs `body` to `target` (path plus any query) under `components`, Google-style.
async fn signed_post(
    app: &TestApp,
    key: &p256::ecdsa::SigningKey,
    target: &str,
    body: &str,
    components: &[&str],
) -> (StatusCode, Value) {
    let authority = app.base_url.trim_start_matches("http://").to_owned();
    let agent = format!("profile=\"{}\"", app.platform.profile_url());
    let idempotency = uuid::Uuid::new_v4().to_string();
    let request_id = uuid::Uuid::new_v4().to_string();
    let digest = format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body.as_bytes())));
    let headers = [
        ("content-type", "application/json"),
        ("content-digest", digest.as_str()),
        ("idempotency-key", idempotency.as_str()),
        ("ucp-agent", agent.as_str()),
        ("request-id", request_id.as_str()),
    ];
    let (path, query) = target.split_once('?').map_or((target, None), |(path, query)| (path, Some(query)));
    let list: Vec<String> = components.iter().map(|name| format!("\"{name}\"")).collect();
    let params = format!(r#"({});created={};keyid="platform-1";tag="ucp-rest-request""#, list.join(" "), now());
    let mut base = String::new();
    for component in components {
        let value = match *component {
            "@method" => "POST".to_owned(),
            "@authority" => authority.clone(),
            "@path" => path.to_owned(),
            "@query" => format!("?{}", query.unwrap_or_default()),
            header => headers.iter().find(|(name, _)| *name == header).unwrap().1.to_owned(),
        };
        base.push_str(&format!("\"{component}\": {value}\n"));
    }
    base.push_str(&format!("\"@signature-params\": {params}"));
    let signature: p256::ecdsa::Signature = key.sign(base.as_bytes());
    let mut request = app.http.post(format!("{}{target}", app.base_url)).body(body.to_owned());
    for (name, value) in headers {
        request = request.header(name, value);
    }
    let response = request
        .header("signature-input", format!("sig-ucp={params}"))
        .header("signature", format!("sig-ucp=:{}:", STANDARD.encode(signature.to_bytes())))
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

// Checklist 69 (security.md "Covered components"): a request whose URL has a query string must
// have @query covered; a signature without it is signature_invalid (401, -32000), on MCP and
// REST. The same request signed over @query too is accepted (control).
#[tokio::test]
async fn a_query_string_not_covered_by_the_signature_is_refused() {
    let key = p256::ecdsa::SigningKey::from_slice(&[5; 32]).unwrap();
    let app =
        spawn_app_with(fixture_products(), |settings, _| settings.signatures.policy = SignaturePolicy::Enforce).await;
    {
        let point = key.verifying_key().to_encoded_point(false);
        let jwk = json!({ "kid": "platform-1", "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
            "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()), "y": URL_SAFE_NO_PAD.encode(point.y().unwrap()) });
        app.platform.profile.lock().unwrap()["signing_keys"] = json!([jwk]);
    }
    let without: &[&str] = &["@method", "@path", "@authority", "content-type", "content-digest", "idempotency-key"];
    let with: Vec<&str> = without.iter().copied().chain(["@query"]).collect();
    let mcp =
        json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "name": "search_catalog", "arguments": {
        "meta": { "ucp-agent": { "profile": app.platform.profile_url() } }, "catalog": { "query": "wool" } } } })
        .to_string();
    let rest_body = r#"{"query":"wool"}"#;

    let (status, body) = signed_post(&app, &key, "/ucp/mcp?via=query", &mcp, &with).await;
    assert_eq!(status, StatusCode::OK, "control, MCP: {body}");
    assert!(body["result"]["structuredContent"]["products"].is_array(), "{body}");
    let (status, body) = signed_post(&app, &key, "/ucp/v1/catalog/search?via=query", rest_body, &with).await;
    assert_eq!(status, StatusCode::OK, "control, REST: {body}");

    let (status, body) = signed_post(&app, &key, "/ucp/mcp?via=query", &mcp, without).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "MCP: {body}");
    assert_eq!(
        (body["error"]["code"].as_i64(), body["error"]["data"]["code"].as_str()),
        (Some(-32000), Some("signature_invalid")),
        "{body}"
    );
    assert_eq!(body["id"], 3);
    let (status, body) = signed_post(&app, &key, "/ucp/v1/catalog/search?via=query", rest_body, without).await;
    assert_eq!((status, body["code"].as_str()), (StatusCode::UNAUTHORIZED, Some("signature_invalid")), "REST: {body}");
}
