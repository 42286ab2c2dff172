//! The REST binding: checklist 55-61 and parity with MCP (issue: one operation registry).

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::checkout::{TOKEN_SUCCESS, pay, ready_checkout};
use crate::helpers::{TestApp, fixture_products, spawn_app, spawn_app_with};
use crate::schema;

pub async fn rest(app: &TestApp, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    rest_with(app, method, path, body.map(|body| body.to_string()), &[]).await
}

/// A REST call with the headers a platform sends; `overrides` replace or (with an empty value) drop them.
pub async fn rest_with(
    app: &TestApp,
    method: &str,
    path: &str,
    body: Option<String>,
    overrides: &[(&str, &str)],
) -> (StatusCode, Value) {
    let profile = format!("profile=\"{}\"", app.platform.profile_url());
    let request_id = uuid::Uuid::new_v4().to_string();
    let key = uuid::Uuid::new_v4().to_string();
    let mut headers: Vec<(String, String)> =
        vec![("ucp-agent".into(), profile), ("request-id".into(), request_id), ("idempotency-key".into(), key)];
    if body.is_some() {
        headers.push(("content-type".into(), "application/json".into()));
    }
    for (name, value) in overrides {
        headers.retain(|(existing, _)| existing != name);
        if !value.is_empty() {
            headers.push((name.to_string(), value.to_string()));
        }
    }
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = app.http.request(method, format!("{}/ucp/v1{path}", app.base_url));
    for (name, value) in headers {
        request = request.header(name, value);
    }
    if let Some(body) = body {
        request = request.body(body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    (
        status,
        if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
        },
    )
}

// Checklist 55, 56: every route exists; create answers 201, business errors 200.
#[tokio::test]
async fn every_route_answers_with_the_bindings_statuses() {
    let app = spawn_app().await;
    let (status, body) = rest(&app, "POST", "/catalog/search", Some(json!({ "query": "wool" }))).await;
    assert_eq!(status, 200, "{body}");
    schema::search_response(&body);
    let (status, body) = rest(&app, "POST", "/catalog/lookup", Some(json!({ "ids": ["shoe"] }))).await;
    assert_eq!(status, 200);
    schema::lookup_response(&body);
    let (status, body) = rest(&app, "POST", "/catalog/product", Some(json!({ "id": "nope" }))).await;
    assert_eq!(status, 200);
    schema::error_response(&body);

    let (status, cart) =
        rest(&app, "POST", "/carts", Some(json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })))
            .await;
    assert_eq!(status, 201, "{cart}");
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let (status, _) = rest(&app, "GET", &format!("/carts/{cart_id}"), None).await;
    assert_eq!(status, 200);
    let (status, updated) = rest(
        &app,
        "PUT",
        &format!("/carts/{cart_id}"),
        Some(json!({ "id": cart_id, "line_items": [{ "item": { "id": "mug-1" }, "quantity": 3 }] })),
    )
    .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["line_items"][0]["quantity"], 3);
    let (status, _) = rest(&app, "POST", &format!("/carts/{cart_id}/cancel"), Some(json!({}))).await;
    assert_eq!(status, 200);
    let (status, gone) = rest(&app, "GET", &format!("/carts/{cart_id}"), None).await;
    assert_eq!((status, gone["messages"][0]["code"].clone()), (StatusCode::OK, json!("not_found")));

    let (status, checkout) = rest(&app, "POST", "/checkout-sessions", Some(ready_checkout("mug-1", 1))).await;
    assert_eq!(status, 201, "{checkout}");
    assert_eq!(checkout["status"], "ready_for_complete");
    let id = checkout["id"].as_str().unwrap().to_owned();
    let (status, _) = rest(&app, "GET", &format!("/checkout-sessions/{id}"), None).await;
    assert_eq!(status, 200);
    let (status, _) = rest(&app, "PUT", &format!("/checkout-sessions/{id}"), Some(ready_checkout("mug-1", 2))).await;
    assert_eq!(status, 200);
    let (status, completed) =
        rest(&app, "POST", &format!("/checkout-sessions/{id}/complete"), Some(pay(TOKEN_SUCCESS))).await;
    assert_eq!((status, completed["status"].clone()), (StatusCode::OK, json!("completed")), "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap();
    let (status, order) = rest(&app, "GET", &format!("/orders/{order_id}"), None).await;
    assert_eq!(status, 200);
    schema::assert_valid("shopping/order.json", &order);

    let (status, other) = rest(&app, "POST", "/checkout-sessions", Some(ready_checkout("mug-1", 1))).await;
    assert_eq!(status, 201);
    let other_id = other["id"].as_str().unwrap();
    let (status, canceled) = rest_with(&app, "POST", &format!("/checkout-sessions/{other_id}/cancel"), None, &[]).await;
    assert_eq!((status, canceled["status"].clone()), (StatusCode::OK, json!("canceled")));

    let (status, nothing) = rest(
        &app,
        "POST",
        "/checkout-sessions",
        Some(json!({ "line_items": [{ "item": { "id": "nope" }, "quantity": 1 }] })),
    )
    .await;
    assert_eq!(status, 200, "no resource, no 201");
    schema::error_response(&nothing);
}

// transport-rest.md: 201 only when a resource was made. A cart that already has an open
// checkout gets that checkout back from create_checkout, with 200 (checklist 118).
#[tokio::test]
async fn create_checkout_for_a_cart_with_a_checkout_answers_200() {
    let app = spawn_app().await;
    let (status, cart) =
        rest(&app, "POST", "/carts", Some(json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] })))
            .await;
    assert_eq!(status, 201, "{cart}");
    let cart_id = cart["id"].as_str().unwrap();
    let (status, first) = rest(&app, "POST", "/checkout-sessions", Some(json!({ "cart_id": cart_id }))).await;
    assert_eq!(status, 201, "{first}");
    let (status, again) = rest(&app, "POST", "/checkout-sessions", Some(json!({ "cart_id": cart_id }))).await;
    assert_eq!(status, 200, "the existing checkout, not a new one: {again}");
    assert_eq!(again["id"], first["id"]);
    schema::assert_valid("shopping/checkout.json", &again);
}

// A payload is parsed once, from its text, into the operation's request (never into a
// `Value` first), on both bindings: a wrong member is named by its path, with no position in
// the text; a member named twice is refused rather than one of the two silently kept; the
// whitespace around a body is no concern.
#[tokio::test]
async fn a_payloads_errors_name_the_member_on_both_bindings() {
    let app = spawn_app().await;
    let expected = "pagination.limit: invalid type: string \"ten\", expected u64";
    let (status, error) = rest_with(
        &app,
        "POST",
        "/catalog/search",
        Some(r#"{"query":"wool","pagination":{"limit":"ten"}}"#.into()),
        &[],
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["code"], "invalid_input", "{error}");
    assert!(error["content"].as_str().unwrap().ends_with(&format!("body.{expected}")), "{error}");
    let (_, error) = app
        .tool_error("search_catalog", json!({ "catalog": { "query": "wool", "pagination": { "limit": "ten" } } }))
        .await;
    assert_eq!(error["code"], -32602, "{error}");
    assert!(error["message"].as_str().unwrap().ends_with(&format!("arguments.catalog.{expected}")), "{error}");

    let (status, error) =
        rest_with(&app, "POST", "/catalog/search", Some(r#"{"query":"wool","query":"mug"}"#.into()), &[]).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["content"].as_str().unwrap().contains("duplicate field `query`"), "{error}");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"search_catalog","arguments":{{"meta":{{"ucp-agent":{{"profile":"{}"}}}},"catalog":{{"query":"wool","query":"mug"}}}}}}}}"#,
        app.platform.profile_url()
    );
    let (status, _, response) = app.post_raw(body).await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert!(
        response["error"]["message"].as_str().unwrap().contains("arguments.catalog: duplicate field `query`"),
        "{response}"
    );

    let (status, body) =
        rest_with(&app, "POST", "/catalog/search", Some(" \n\t{ \"query\" : \"wool\" } \r\n".into()), &[]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["products"][0]["id"], "sweater", "{body}");
    let (status, error) = rest_with(&app, "POST", "/catalog/search", Some(" [ ] ".into()), &[]).await;
    assert_eq!((status.as_u16(), error["code"].as_str()), (400, Some("invalid_input")), "{error}");
}

// Checklist 57, 58, 59, 60 and the issue's bad-input list.
#[tokio::test]
async fn bad_requests_get_protocol_errors_that_name_the_problem() {
    let app = spawn_app().await;
    let search = Some(json!({ "query": "wool" }).to_string());
    type Case<'a> = (&'a str, &'a str, Option<String>, Vec<(&'a str, &'a str)>, u16, &'a str);
    let cases: Vec<Case> = vec![
        ("POST", "/catalog/search", search.clone(), vec![("ucp-agent", "")], 400, "invalid_profile_url"),
        (
            "POST",
            "/catalog/search",
            search.clone(),
            vec![("ucp-agent", "profile=unquoted")],
            400,
            "invalid_profile_url",
        ),
        ("POST", "/catalog/search", search.clone(), vec![("request-id", "")], 400, "missing_header"),
        (
            "POST",
            "/carts",
            Some(json!({ "line_items": [] }).to_string()),
            vec![("idempotency-key", "")],
            400,
            "missing_header",
        ),
        (
            "POST",
            "/catalog/search",
            search.clone(),
            vec![("content-type", "text/plain")],
            415,
            "unsupported_media_type",
        ),
        ("POST", "/catalog/search", Some("{".into()), vec![], 400, "invalid_json"),
        ("POST", "/catalog/search", Some("[1]".into()), vec![], 400, "invalid_input"),
        ("POST", "/catalog/search", Some("{}".into()), vec![], 400, "invalid_input"),
        (
            "POST",
            "/catalog/lookup",
            Some(json!({ "ids": (0..60).map(|n| n.to_string()).collect::<Vec<_>>() }).to_string()),
            vec![],
            400,
            "request_too_large",
        ),
        (
            "PUT",
            "/carts/cart_1",
            Some(json!({ "id": "cart_2", "line_items": [] }).to_string()),
            vec![],
            400,
            "invalid_input",
        ),
        (
            "POST",
            "/checkout-sessions",
            Some(json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 0 }] }).to_string()),
            vec![],
            400,
            "invalid_input",
        ),
        // JSON whose syntax holds but whose values a parser cannot hold (read as values for
        // a keyed call's fingerprint): the sender's error, not a 500.
        ("POST", "/carts", Some(r#"{"line_items":[],"x":1e400}"#.into()), vec![], 400, "invalid_input"),
        ("PUT", "/carts/cart_1", Some(r#"{"line_items":[],"x":"\ud800"}"#.into()), vec![], 400, "invalid_input"),
        (
            "POST",
            "/catalog/search",
            Some(format!("{{\"query\":\"{}\"}}", "x".repeat(2 * 1024 * 1024))),
            vec![],
            413,
            "payload_too_large",
        ),
    ];
    for (method, path, body, overrides, status, code) in cases {
        let (got, error) = rest_with(&app, method, path, body, &overrides).await;
        assert_eq!(got.as_u16(), status, "{method} {path} {overrides:?}: {error}");
        assert_eq!(error["code"], code, "{method} {path}: {error}");
        assert!(error["content"].as_str().unwrap().len() > 10, "{error}");
        assert_eq!(error.as_object().unwrap().len(), 2, "flat {{code, content}}: {error}");
    }
    let (status, error) = rest_with(&app, "POST", "/catalog/search", search.clone(), &[("request-id", "")]).await;
    assert_eq!(status, 400);
    assert!(error["content"].as_str().unwrap().contains("Request-Id"), "names the header: {error}");

    let response = app.http.get(format!("{}/ucp/v1/nope", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.json::<Value>().await.unwrap()["code"], "not_found");
    let response = app.http.delete(format!("{}/ucp/v1/carts/x", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), 405);
    let allow = response.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("GET") && allow.contains("PUT"), "{allow}");
    assert_eq!(response.json::<Value>().await.unwrap()["code"], "method_not_allowed");
}

/// Drops what legitimately differs between two runs: generated ids and clock-derived times.
fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for key in [
                "id",
                "checkout_id",
                "expires_at",
                "continue_url",
                "permalink_url",
                "earliest_fulfillment_time",
                "latest_fulfillment_time",
                "cart_id",
            ] {
                if map.get(key).is_some_and(Value::is_string) {
                    map.insert(key.into(), json!("<redacted>"));
                }
            }
            for child in map.values_mut() {
                redact(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

// Checklist 33: structuredContent equals the REST body.
// The issue's parity proof: the same scenario over MCP and REST gives the same UCP bodies.
#[tokio::test]
async fn mcp_and_rest_give_identical_bodies_for_the_same_scenario() {
    let app = spawn_app().await;
    let meta = json!({ "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": uuid::Uuid::new_v4().to_string() });
    let mut pairs: Vec<(Value, Value)> = Vec::new();
    for (tool, path, payload) in [
        ("search_catalog", "/catalog/search", json!({ "query": "running shoes" })),
        ("lookup_catalog", "/catalog/lookup", json!({ "ids": ["shoe", "mug-1", "nope"] })),
        (
            "get_product",
            "/catalog/product",
            json!({ "id": "shoe", "selected": [{ "name": "Color", "label": "Green" }] }),
        ),
        ("get_product", "/catalog/product", json!({ "id": "nope" })),
    ] {
        let over_mcp = app.tool(tool, json!({ "meta": meta, "catalog": payload })).await;
        let (_, over_rest) = rest(&app, "POST", path, Some(payload)).await;
        pairs.push((over_mcp, over_rest));
    }
    // Carts and checkouts, with everything that varies between runs redacted.
    let cart = json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 2 }] });
    pairs.push((
        app.tool("create_cart", json!({ "meta": app.keyed_meta(), "cart": cart })).await,
        rest(&app, "POST", "/carts", Some(cart)).await.1,
    ));
    let nothing = json!({ "line_items": [{ "item": { "id": "shoe-blue-10" }, "quantity": 1 }] });
    pairs.push((
        app.tool("create_cart", json!({ "meta": app.keyed_meta(), "cart": nothing })).await,
        rest(&app, "POST", "/carts", Some(nothing)).await.1,
    ));
    // One key per state-changing call: a key reused with another payload is a conflict (checklist 80).
    let over_mcp =
        app.tool("create_checkout", json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 1) })).await;
    let (_, over_rest) = rest(&app, "POST", "/checkout-sessions", Some(ready_checkout("mug-1", 1))).await;
    let mcp_id = over_mcp["id"].as_str().unwrap().to_owned();
    let rest_id = over_rest["id"].as_str().unwrap().to_owned();
    pairs.push((over_mcp, over_rest));
    let completed_mcp = crate::checkout::complete(&app, &mcp_id, TOKEN_SUCCESS).await;
    let (_, completed_rest) =
        rest(&app, "POST", &format!("/checkout-sessions/{rest_id}/complete"), Some(pay(TOKEN_SUCCESS))).await;
    let mcp_order = completed_mcp["order"]["id"].as_str().unwrap().to_owned();
    let rest_order = completed_rest["order"]["id"].as_str().unwrap().to_owned();
    pairs.push((completed_mcp, completed_rest));
    pairs.push((
        app.tool("get_order", json!({ "meta": meta, "id": mcp_order })).await,
        rest(&app, "GET", &format!("/orders/{rest_order}"), None).await.1,
    ));
    pairs.push((
        app.tool("get_checkout", json!({ "meta": meta, "id": "nope" })).await,
        rest(&app, "GET", "/checkout-sessions/nope", None).await.1,
    ));
    for (index, (mut over_mcp, mut over_rest)) in pairs.into_iter().enumerate() {
        redact(&mut over_mcp);
        redact(&mut over_rest);
        assert_eq!(over_mcp, over_rest, "scenario step {index} differs between MCP and REST");
    }
}

// The document says what this shop asks for: a credential on every operation but its public
// ones, and signed answers where it signs them all.
#[tokio::test]
async fn openapi_document_states_the_configured_credentials_and_signing() {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.auth.required = Some(true);
        settings.auth.public_operations = vec!["search_catalog".into()];
        settings.auth.api_key_header = "X-Shop-Key".into();
        settings.signatures.sign_responses = ucp_server::config::ResponseSigning::All;
    })
    .await;
    let document: Value =
        app.http.get(format!("{}/ucp/v1/openapi.json", app.base_url)).send().await.unwrap().json().await.unwrap();
    let ways = |path: &str, method: &str| document["paths"][path][method]["security"].as_array().unwrap().clone();
    assert!(!ways("/checkout-sessions/{id}", "get").contains(&json!({})), "a credential is required");
    assert!(ways("/catalog/search", "post").contains(&json!({})), "search is public");
    assert!(document["security"].as_array().unwrap().contains(&json!({ "api_key": [] })));
    assert_eq!(document["components"]["securitySchemes"]["api_key"]["name"], "X-Shop-Key");
    let get = &document["paths"]["/checkout-sessions/{id}"]["get"]["responses"]["200"]["headers"];
    assert!(get["Signature"].is_object(), "every answer is signed: {get}");
}

// The served OpenAPI document covers every operation of the official one.
#[tokio::test]
async fn openapi_document_lists_every_official_operation() {
    let app = spawn_app().await;
    let document: Value =
        app.http.get(format!("{}/ucp/v1/openapi.json", app.base_url)).send().await.unwrap().json().await.unwrap();
    assert_eq!(document["openapi"], "3.1.0");
    let ours: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|methods| {
            methods.as_object().unwrap().values().map(|operation| operation["operationId"].as_str().unwrap().to_owned())
        })
        .collect();
    assert_eq!(ours.len(), 13, "{ours:?}");
    // The trust headers a platform may send and the ones we answer with (transport-rest.md §2,
    // security.md): the official document declares them too.
    let complete = &document["paths"]["/checkout-sessions/{id}/complete"]["post"];
    let parameters: Vec<&str> = complete["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|parameter| parameter["$ref"].as_str().unwrap())
        .collect();
    for name in ["signature", "signature_input", "content_digest", "idempotency_key", "request_id", "ucp_agent"] {
        assert!(parameters.contains(&format!("#/components/parameters/{name}").as_str()), "{name}: {parameters:?}");
        assert!(document["components"]["parameters"][name]["name"].is_string(), "{name}");
    }
    let signed = complete["responses"]["200"]["headers"].as_object().unwrap();
    assert!(
        ["Signature", "Signature-Input", "Content-Digest", "X-Request-Id"]
            .iter()
            .all(|name| signed.contains_key(*name))
    );
    let get = &document["paths"]["/checkout-sessions/{id}"]["get"];
    assert!(
        get["responses"]["200"]["headers"].get("Signature").is_none(),
        "only complete_checkout is signed by default"
    );
    assert!(get["responses"]["429"]["headers"]["Retry-After"].is_object());
    assert!(get["responses"]["401"]["headers"]["WWW-Authenticate"].is_object());
    assert_eq!(document["components"]["securitySchemes"]["api_key"]["name"], "X-API-Key");
    assert_eq!(document["components"]["securitySchemes"]["mutual_tls"]["type"], "mutualTLS");
    // This shop onboarded no platform, so it asks for no credential.
    assert!(get["security"].as_array().unwrap().contains(&json!({})), "{}", get["security"]);
    if let Some(dir) = std::env::var_os("UCP_SPEC_DIR") {
        let path = std::path::Path::new(&dir).join("2026-04-08/source/services/shopping/rest.openapi.json");
        let official: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for (route, methods) in official["paths"].as_object().unwrap() {
            for (method, operation) in methods.as_object().unwrap() {
                let Some(operation_id) = operation.get("operationId").and_then(Value::as_str) else { continue };
                assert!(ours.iter().any(|ours| ours == operation_id), "{method} {route} ({operation_id}) is missing");
                assert!(document["paths"][route][method].is_object(), "{method} {route} is not at the official path");
            }
        }
    }
}
