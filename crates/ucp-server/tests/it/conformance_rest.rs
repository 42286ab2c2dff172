//! REST-binding conformance: checklist 8, 58, 77 and 107.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Verifier as _;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use ucp_server::config::ResponseSigning;

use crate::checkout::{TOKEN_SUCCESS, pay, ready_checkout};
use crate::helpers::{TestApp, fixture_products, spawn_app, spawn_app_with};
use crate::rest::{rest, rest_with};

const LOOKUP: &str = "dev.ucp.shopping.catalog.lookup";

fn count(app: &TestApp, table: &str) -> i64 {
    let connection = rusqlite::Connection::open(app.data_dir.path().join(ucp_server::startup::DATABASE_FILE)).unwrap();
    connection.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
    connection.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| row.get(0)).unwrap()
}

fn mug_cart(quantity: i64) -> Value {
    json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": quantity }] })
}

// Checklist 58 (transport-rest.md §2, the official OpenAPI `required: true`): every checkout
// and cart POST/PUT without an Idempotency-Key is a 400 `missing_header` naming the header, and
// none of them runs. POST /carts is covered in rest.rs; here the other seven routes.
#[tokio::test]
async fn checkout_and_cart_writes_without_an_idempotency_key_are_refused_and_do_nothing() {
    let app = spawn_app().await;
    let (status, checkout) = rest(&app, "POST", "/checkout-sessions", Some(ready_checkout("mug-1", 1))).await;
    assert_eq!(status, 201, "{checkout}");
    assert_eq!(checkout["status"], "ready_for_complete", "{checkout}");
    let id = checkout["id"].as_str().unwrap().to_owned();
    let (status, cart) = rest(&app, "POST", "/carts", Some(mug_cart(1))).await;
    assert_eq!(status, 201, "{cart}");
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let sessions = count(&app, "sessions");

    let cases: Vec<(&str, String, Option<Value>)> = vec![
        ("POST", "/checkout-sessions".into(), Some(ready_checkout("mug-1", 1))),
        ("PUT", format!("/checkout-sessions/{id}"), Some(ready_checkout("mug-1", 2))),
        ("POST", format!("/checkout-sessions/{id}/complete"), Some(pay(TOKEN_SUCCESS))),
        ("POST", format!("/checkout-sessions/{id}/cancel"), Some(json!({}))),
        ("POST", format!("/checkout-sessions/{id}/cancel"), None),
        ("PUT", format!("/carts/{cart_id}"), Some(json!({ "id": cart_id, "line_items": mug_cart(3)["line_items"] }))),
        ("POST", format!("/carts/{cart_id}/cancel"), Some(json!({}))),
    ];
    for (method, path, body) in &cases {
        let body = body.as_ref().map(Value::to_string);
        let (status, error) = rest_with(&app, method, path, body.clone(), &[("idempotency-key", "")]).await;
        assert_eq!(status, 400, "{method} {path} without a key: {error}");
        assert_eq!(error["code"], "missing_header", "{method} {path}: {error}");
        let content = error["content"].as_str().unwrap_or_default();
        assert!(content.contains("Idempotency-Key"), "{method} {path}: names the header: {error}");
        // A blank value is no key either.
        let (status, error) = rest_with(&app, method, path, body, &[("idempotency-key", " ")]).await;
        assert_eq!(status, 400, "{method} {path} with a blank key: {error}");
    }

    // Nothing ran: no new session, no order, the checkout and the cart as they were.
    assert_eq!(count(&app, "sessions"), sessions, "no checkout was created");
    assert_eq!(count(&app, "orders"), 0, "no order was placed");
    let (_, got) = rest(&app, "GET", &format!("/checkout-sessions/{id}"), None).await;
    assert_eq!(got["status"], "ready_for_complete", "neither completed nor canceled: {got}");
    assert_eq!(got["line_items"][0]["quantity"], 1, "not updated: {got}");
    let (status, got) = rest(&app, "GET", &format!("/carts/{cart_id}"), None).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["id"], cart_id, "not canceled: {got}");
    assert_eq!(got["line_items"][0]["quantity"], 1, "not updated: {got}");

    // The key is the only thing missing: sent, the same complete goes through.
    let (status, done) =
        rest(&app, "POST", &format!("/checkout-sessions/{id}/complete"), Some(pay(TOKEN_SUCCESS))).await;
    assert_eq!((status.as_u16(), &done["status"]), (200, &json!("completed")), "{done}");
}

// Checklist 58 (transport-rest.md §2 "POST/PUT operations except catalog", "Not listed on GET
// routes"): catalog POSTs and the GET routes answer without an Idempotency-Key.
#[tokio::test]
async fn catalog_posts_and_reads_need_no_idempotency_key() {
    let app = spawn_app().await;
    let (_, cart) = rest(&app, "POST", "/carts", Some(mug_cart(1))).await;
    let (_, checkout) = rest(&app, "POST", "/checkout-sessions", Some(ready_checkout("mug-1", 1))).await;
    let no_key = [("idempotency-key", "")];
    for (method, path, body) in [
        ("POST", "/catalog/search".to_owned(), Some(json!({ "query": "wool" }))),
        ("POST", "/catalog/lookup".to_owned(), Some(json!({ "ids": ["shoe"] }))),
        ("POST", "/catalog/product".to_owned(), Some(json!({ "id": "shoe" }))),
        ("GET", format!("/carts/{}", cart["id"].as_str().unwrap()), None),
        ("GET", format!("/checkout-sessions/{}", checkout["id"].as_str().unwrap()), None),
    ] {
        let (status, body) = rest_with(&app, method, &path, body.map(|body| body.to_string()), &no_key).await;
        assert_eq!(status, 200, "{method} {path}: {body}");
        assert_eq!(body["ucp"]["status"], "success", "{method} {path}: {body}");
    }
}

/// A REST call with a platform's headers and the given Idempotency-Key; status, headers, bytes.
async fn send(app: &TestApp, path: &str, body: &Value, key: &str) -> (u16, HeaderMap, Vec<u8>) {
    let response = app
        .http
        .post(format!("{}/ucp/v1{path}", app.base_url))
        .header("ucp-agent", format!("profile=\"{}\"", app.platform.profile_url()))
        .header("request-id", uuid::Uuid::new_v4().to_string())
        .header("idempotency-key", key)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.bytes().await.unwrap().to_vec())
}

/// An RFC 9421 verifier written here, apart from the server's: reads the covered components
/// from `Signature-Input`, rebuilds the signature base, and checks the ES256 signature with the
/// `/.well-known/ucp` key its `keyid` names. Item 77 asks for `@status`, `content-digest`,
/// `content-type`, `created` and `keyid`.
async fn assert_verifies_with_published_key(app: &TestApp, status: u16, headers: &HeaderMap, body: &[u8]) {
    let header = |name: &str| {
        headers.get(name).unwrap_or_else(|| panic!("no {name} on the response")).to_str().unwrap().to_owned()
    };
    let digest = header("content-digest");
    assert_eq!(digest, format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body))), "digest of the body sent");

    let input = header("signature-input");
    let (label, params) = input.split_once('=').unwrap_or_else(|| panic!("Signature-Input: {input}"));
    let inner = params.strip_prefix('(').and_then(|rest| rest.split_once(')')).map(|(inner, _)| inner);
    let components: Vec<&str> =
        inner.unwrap_or_else(|| panic!("{input}")).split(' ').map(|c| c.trim_matches('"')).collect();
    for needed in ["@status", "content-digest", "content-type"] {
        assert!(components.contains(&needed), "{needed} is covered: {input}");
    }
    let param = |name: &str| {
        params
            .split(';')
            .find_map(|part| part.strip_prefix(&format!("{name}=")))
            .map(|v| v.trim_matches('"').to_owned())
    };
    let created: i64 = param("created").unwrap_or_else(|| panic!("no created: {input}")).parse().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!((now - created).abs() < 300, "created {created} is now ({now})");
    let kid = param("keyid").unwrap_or_else(|| panic!("no keyid: {input}"));

    let profile: Value =
        app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap().json().await.unwrap();
    let keys = profile["signing_keys"].as_array().unwrap_or_else(|| panic!("no signing_keys: {profile}"));
    let jwk = keys.iter().find(|jwk| jwk["kid"] == kid.as_str()).unwrap_or_else(|| panic!("{kid} not published"));
    assert_eq!((&jwk["kty"], &jwk["crv"]), (&json!("EC"), &json!("P-256")), "{jwk}");

    let mut lines: Vec<String> = components
        .iter()
        .map(|name| match *name {
            "@status" => format!("\"@status\": {status}"),
            name => format!("\"{name}\": {}", header(name)),
        })
        .collect();
    lines.push(format!("\"@signature-params\": {params}"));
    let base = lines.join("\n");

    let signature = header("signature");
    let encoded = signature
        .strip_prefix(&format!("{label}=:"))
        .and_then(|rest| rest.strip_suffix(':'))
        .unwrap_or_else(|| panic!("Signature {signature} has no {label}"));
    let coordinate = |name: &str| URL_SAFE_NO_PAD.decode(jwk[name].as_str().unwrap()).unwrap();
    let point = [vec![4u8], coordinate("x"), coordinate("y")].concat();
    let public = p256::ecdsa::VerifyingKey::from_sec1_bytes(&point).unwrap();
    let signature = p256::ecdsa::Signature::from_slice(&STANDARD.decode(encoded).unwrap()).expect("raw r||s");
    public.verify(base.as_bytes(), &signature).expect("the response signature verifies with the published key");
}

// Checklist 77 over REST: with `sign_responses = complete_checkout`, the answer to
// `POST /checkout-sessions/{id}/complete` carries Signature, Signature-Input and Content-Digest
// and verifies with our published key, a replay of it too; the create before it is not signed.
#[tokio::test]
async fn rest_complete_checkout_responses_are_signed_with_the_published_key() {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.signatures.sign_responses = ResponseSigning::CompleteCheckout;
    })
    .await;
    let (status, headers, bytes) = send(&app, "/checkout-sessions", &ready_checkout("mug-1", 1), &fresh_key()).await;
    assert_eq!(status, 201, "{}", String::from_utf8_lossy(&bytes));
    assert!(headers.get("signature").is_none(), "only complete_checkout answers are signed");
    let created: Value = serde_json::from_slice(&bytes).unwrap();
    let path = format!("/checkout-sessions/{}/complete", created["id"].as_str().unwrap());

    let key = fresh_key();
    let (status, headers, bytes) = send(&app, &path, &pay(TOKEN_SUCCESS), &key).await;
    let completed: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!((status, &completed["status"]), (200, &json!("completed")), "{completed}");
    for name in ["signature", "signature-input", "content-digest"] {
        assert!(headers.contains_key(name), "{name} on the complete answer: {headers:?}");
    }
    assert_verifies_with_published_key(&app, status, &headers, &bytes).await;

    // The stored answer replayed for the same key is a complete_checkout answer too.
    let (status, headers, replayed) = send(&app, &path, &pay(TOKEN_SUCCESS), &key).await;
    assert_eq!(serde_json::from_slice::<Value>(&replayed).unwrap(), completed, "the same answer");
    assert_verifies_with_published_key(&app, status, &headers, &replayed).await;
}

fn fresh_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

// Checklist 107: a lookup_catalog answer's `ucp.capabilities` names catalog.lookup (not
// catalog.search), over MCP and REST, with matches and without.
#[tokio::test]
async fn lookup_catalog_answers_name_the_lookup_capability() {
    let app = spawn_app().await;
    for ids in [json!(["shoe", "mug-1"]), json!(["nope"])] {
        let over_mcp = app.tool("lookup_catalog", json!({ "catalog": { "ids": ids } })).await;
        let (status, over_rest) = rest(&app, "POST", "/catalog/lookup", Some(json!({ "ids": ids }))).await;
        assert_eq!(status, 200, "{over_rest}");
        for body in [&over_mcp, &over_rest] {
            assert_eq!(body["ucp"]["status"], "success", "{body}");
            let capabilities = body["ucp"]["capabilities"].as_object().unwrap_or_else(|| panic!("{body}"));
            assert!(capabilities.contains_key(LOOKUP), "{ids}: {body}");
            assert!(!capabilities.contains_key("dev.ucp.shopping.catalog.search"), "{ids}: {body}");
        }
    }
}

// Checklist 8 (overview.md "no trailing slash"): the REST service entry's endpoint has none,
// by default and when public_url is configured with one (at the root or under a path).
#[tokio::test]
async fn the_rest_endpoint_has_no_trailing_slash() {
    let configured: [(Option<&str>, Option<&str>); 3] = [
        (None, None),
        (Some("https://shop.example/"), Some("https://shop.example/ucp/v1")),
        (Some("https://shop.example/store/"), Some("https://shop.example/store/ucp/v1")),
    ];
    for (public_url, expected) in configured {
        let app = spawn_app_with(fixture_products(), |settings, _| {
            settings.public_url = public_url.map(|url| url.parse().unwrap());
        })
        .await;
        let profile: Value =
            app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap().json().await.unwrap();
        let mut rest_entries = 0;
        for (namespace, entries) in profile["ucp"]["services"].as_object().unwrap() {
            for entry in entries.as_array().unwrap().iter().filter(|entry| entry["transport"] == "rest") {
                rest_entries += 1;
                let endpoint = entry["endpoint"].as_str().unwrap_or_else(|| panic!("{namespace}: {entry}"));
                assert!(!endpoint.ends_with('/'), "{public_url:?}: {namespace} REST endpoint {endpoint}");
                if let Some(expected) = expected {
                    assert_eq!(endpoint, expected, "{public_url:?}");
                }
            }
        }
        assert!(rest_entries > 0, "a REST service entry is published: {profile}");
    }
}
