//! Stored idempotency over both transports: checklist 79-84 and issue 8 item 4 (replay with no
//! second side effect, conflicts, retention, fail-closed store, per-platform scope, a new
//! JSON-RPC id on replay, duplicates in flight, our own processor key).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_server::config::HttpProcessorSettings;

use crate::checkout::{key, pay, ready_checkout};
use crate::helpers::{PlatformServer, TestApp, fixture_products, spawn_app, spawn_app_with};
use crate::rest::rest_with;

const HOUR: i64 = 60 * 60;

/// A processor stand-in that approves every charge and records each one's idempotency key.
struct Processor {
    url: String,
    keys: Arc<Mutex<Vec<String>>>,
    _stop: tokio_util::sync::DropGuard,
}

impl Processor {
    async fn start() -> Processor {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/charge", listener.local_addr().unwrap());
        let keys: Arc<Mutex<Vec<String>>> = Arc::default();
        let router = Router::new()
            .route(
                "/charge",
                post(|State(keys): State<Arc<Mutex<Vec<String>>>>, headers: HeaderMap| async move {
                    let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).unwrap_or_default();
                    let mut keys = keys.lock().unwrap();
                    keys.push(key.to_owned());
                    axum::Json(json!({ "status": "approved", "reference": format!("ref_{}", keys.len()) }))
                }),
            )
            .route("/charge/refund", post(|| async { axum::Json(json!({ "status": "approved" })) }))
            .with_state(keys.clone());
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned()).await.ok();
        });
        Processor { url, keys, _stop: shutdown.drop_guard() }
    }

    fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
}

/// ucpd with the processor stand-in as handler `acme`.
async fn app_with_processor(processor: &Processor) -> TestApp {
    let url = processor.url.parse().unwrap();
    spawn_app_with(fixture_products(), move |settings, _| {
        settings.payments.http.push(HttpProcessorSettings {
            id: "acme".into(),
            name: "com.acme.pay".into(),
            url,
            timeout_ms: 2000,
            retries: 0,
            instrument_types: vec![],
            currencies: vec![],
            countries: vec![],
        })
    })
    .await
}

fn pay_acme(token: &str) -> Value {
    let mut payment = pay(token);
    payment["payment"]["instruments"][0]["handler_id"] = json!("acme");
    payment
}

/// A raw `tools/call` with JSON-RPC `id` and extra HTTP headers: (HTTP status, the reply).
async fn rpc(app: &TestApp, id: Value, tool: &str, arguments: Value, headers: &[(&str, &str)]) -> (StatusCode, Value) {
    let body = json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let (status, _, reply) = app.post_with(body.to_string(), &all).await;
    (StatusCode::from_u16(status.as_u16()).unwrap(), reply)
}

fn meta(app: &TestApp, key: &str) -> Value {
    meta_for(&app.platform.profile_url(), key)
}

fn meta_for(profile: &str, key: &str) -> Value {
    json!({ "ucp-agent": { "profile": profile }, "idempotency-key": key })
}

async fn ready_checkout_id(app: &TestApp) -> String {
    let created =
        app.tool("create_checkout", json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 1) })).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    created["id"].as_str().unwrap().to_owned()
}

fn database(app: &TestApp) -> rusqlite::Connection {
    let connection = rusqlite::Connection::open(app.data_dir.path().join(ucp_server::startup::DATABASE_FILE)).unwrap();
    connection.busy_timeout(std::time::Duration::from_secs(5)).unwrap();
    connection
}

fn count(app: &TestApp, table: &str) -> i64 {
    database(app).query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| row.get(0)).unwrap()
}

// Checklist 79, 84: complete twice with one key (new JSON-RPC id, then over REST too): the same
// answer, one order, one charge; the processor saw our key, not the platform's.
#[tokio::test]
async fn a_retried_complete_replays_the_order_and_charges_once() {
    let processor = Processor::start().await;
    let app = app_with_processor(&processor).await;
    let id = ready_checkout_id(&app).await;
    let caller_key = key();
    let arguments = json!({ "meta": meta(&app, &caller_key), "id": id, "checkout": pay_acme("tok_1") });
    let (status, first) = rpc(&app, json!("first-try"), "complete_checkout", arguments.clone(), &[]).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let completed = &first["result"]["structuredContent"];
    assert_eq!(completed["status"], "completed", "{first}");
    let order_id = completed["order"]["id"].as_str().unwrap().to_owned();

    // The retry has a new JSON-RPC id (and a reordered, re-keyed meta): the same result, the new id.
    let mut retry = arguments.clone();
    retry["meta"] = json!({ "idempotency-key": caller_key, "ucp-agent": { "profile": app.platform.profile_url() } });
    let (status, second) = rpc(&app, json!(42), "complete_checkout", retry, &[]).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(second["id"], 42, "the replay carries the new JSON-RPC id (checklist 84)");
    assert_eq!(first["id"], "first-try");
    assert_eq!(second["result"], first["result"], "the stored answer, byte for byte");
    assert_eq!(processor.keys().len(), 1, "one charge (checklist 79)");
    assert_eq!(count(&app, "orders"), 1);
    let processor_key = &processor.keys()[0];
    assert_ne!(processor_key, &caller_key, "the processor never sees the platform's key");
    assert!(processor_key.starts_with(&id), "our key is derived from the checkout: {processor_key}");

    // REST: the same complete twice with one Idempotency-Key.
    let rest_id = ready_checkout_id(&app).await;
    let rest_key = key();
    let path = format!("/checkout-sessions/{rest_id}/complete");
    let body = Some(pay_acme("tok_2").to_string());
    let (status, first) = rest_with(&app, "POST", &path, body.clone(), &[("idempotency-key", &rest_key)]).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["status"], "completed", "{first}");
    let (status, second) = rest_with(&app, "POST", &path, body, &[("idempotency-key", &rest_key)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(second, first);
    assert_ne!(first["order"]["id"], order_id.as_str());
    assert_eq!(processor.keys().len(), 2, "one charge per checkout");
    assert_eq!(count(&app, "orders"), 2);
}

// Checklist 80: the same key with another payload is 409 / -32000 idempotency_conflict, and
// nothing runs; on REST too.
#[tokio::test]
async fn a_reused_key_with_another_payload_is_a_conflict_and_changes_nothing() {
    let processor = Processor::start().await;
    let app = app_with_processor(&processor).await;
    let cart = app.tool("create_cart", json!({ "meta": app.keyed_meta(), "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } })).await;
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let line = cart["line_items"][0]["id"].clone();
    let update_key = key();
    let update = |quantity: i64| json!({ "meta": meta(&app, &update_key), "id": cart_id, "cart": { "line_items": [{ "id": line, "item": { "id": "mug-1" }, "quantity": quantity }] } });
    let updated = app.tool("update_cart", update(2)).await;
    assert_eq!(updated["line_items"][0]["quantity"], 2, "{updated}");
    let (status, reply) = rpc(&app, json!(7), "update_cart", update(3), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{reply}");
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert_eq!(reply["error"]["data"]["code"], "idempotency_conflict", "{reply}");
    let stored = app.tool("get_cart", json!({ "id": cart_id })).await;
    assert_eq!(stored["line_items"][0]["quantity"], 2, "the conflicting update did not run");

    // A complete replayed with another token: 409, no second charge.
    let id = ready_checkout_id(&app).await;
    let complete_key = key();
    let complete = |token: &str| json!({ "meta": meta(&app, &complete_key), "id": id, "checkout": pay_acme(token) });
    let done = app.tool("complete_checkout", complete("tok_a")).await;
    assert_eq!(done["status"], "completed");
    let (status, reply) = rpc(&app, json!(8), "complete_checkout", complete("tok_b"), &[]).await;
    assert_eq!((status, &reply["error"]["data"]["code"]), (StatusCode::CONFLICT, &json!("idempotency_conflict")));
    assert_eq!(processor.keys().len(), 1);

    // REST: 409 with code idempotency_conflict.
    let rest_key = key();
    let body = |quantity: i64| {
        Some(json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": quantity }] }).to_string())
    };
    let (status, created) = rest_with(&app, "POST", "/carts", body(1), &[("idempotency-key", &rest_key)]).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let carts = count(&app, "sessions");
    let (status, reply) = rest_with(&app, "POST", "/carts", body(5), &[("idempotency-key", &rest_key)]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{reply}");
    assert_eq!(reply["code"], "idempotency_conflict", "{reply}");
    assert_eq!(count(&app, "sessions"), carts, "no cart was created");
}

// Checklist 79, transport-mcp.md §2: cancel_checkout ignores its payload (Google sends
// "checkout": {}), so a retry with the key that sends it another way replays the cancel
// instead of a 409; a cancel of another checkout under the key is not that request.
#[tokio::test]
async fn a_cancel_retried_with_or_without_its_empty_payload_replays() {
    let app = spawn_app().await;
    let id = ready_checkout_id(&app).await;
    let cancel_key = key();
    let google = json!({ "meta": meta(&app, &cancel_key), "id": id, "checkout": {} });
    let canceled = app.tool("cancel_checkout", google).await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    let plain = json!({ "meta": meta(&app, &cancel_key), "id": id });
    let (status, replayed) = rpc(&app, json!(9), "cancel_checkout", plain, &[]).await;
    assert_eq!(status, StatusCode::OK, "{replayed}");
    assert_eq!(replayed["result"]["structuredContent"], canceled, "{replayed}");
}

// Checklist 81: a replay 23 h later is still served (and REST's 201 with it); past the
// retention the key is free again, and the sweeper deletes the old record.
#[tokio::test]
async fn answers_are_kept_for_the_retention_then_swept() {
    let app = spawn_app_with(fixture_products(), |settings, _| settings.checkout.sweep_interval_secs = 1).await;
    let caller_key = key();
    let create = || json!({ "meta": meta(&app, &caller_key), "checkout": ready_checkout("mug-1", 1) });
    let first = app.tool("create_checkout", create()).await;
    let rest_key = key();
    let cart = Some(json!({ "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] }).to_string());
    let (status, rest_first) = rest_with(&app, "POST", "/carts", cart.clone(), &[("idempotency-key", &rest_key)]).await;
    assert_eq!(status, StatusCode::CREATED);

    app.clock.advance(23 * HOUR);
    let again = app.tool("create_checkout", create()).await;
    assert_eq!(again, first, "replayed after 23 h");
    let (status, rest_again) = rest_with(&app, "POST", "/carts", cart.clone(), &[("idempotency-key", &rest_key)]).await;
    assert_eq!((status, &rest_again), (StatusCode::CREATED, &rest_first), "REST replays its 201 too");
    assert_eq!(count(&app, "idempotency"), 2);

    // 48 h is the default retention: at 49 h the key runs anew (a new checkout).
    app.clock.advance(26 * HOUR);
    let fresh = app.tool("create_checkout", create()).await;
    assert_ne!(fresh["id"], first["id"], "past the retention the key is not replayed");
    // The sweeper (every second here) deletes the cart's expired record; the new one stays.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while count(&app, "idempotency") != 1 {
        assert!(std::time::Instant::now() < deadline, "the sweeper did not delete the expired record");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

// Checklist 82: the idempotency store failing is 503 (with retry_after) before anything runs.
#[tokio::test]
async fn a_failing_store_is_a_503_and_nothing_runs() {
    let app = spawn_app().await;
    database(&app).execute_batch("DROP TABLE idempotency").unwrap();
    let sessions = count(&app, "sessions");
    let arguments = json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 1) });
    let (status, reply) = rpc(&app, json!(3), "create_checkout", arguments, &[]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    assert_eq!(reply["id"], 3);
    assert_eq!(reply["error"]["code"], -32000);
    assert_eq!(reply["error"]["data"]["code"], "unavailable", "{reply}");
    assert_eq!(reply["error"]["data"]["retry_after"], 1, "{reply}");
    let body = Some(ready_checkout("mug-1", 1).to_string());
    let (status, reply) = rest_with(&app, "POST", "/checkout-sessions", body, &[]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    assert_eq!(reply["code"], "unavailable");
    assert_eq!(count(&app, "sessions"), sessions, "nothing was created");
    // Reads need no record and still work.
    let found = app.tool("search_catalog", json!({ "catalog": { "query": "mug" } })).await;
    assert!(found["products"].as_array().is_some_and(|products| !products.is_empty()));
}

// Checklist 83: one key from two platforms, and for two operations, gives independent results.
#[tokio::test]
async fn keys_are_scoped_per_platform_and_operation() {
    let app = spawn_app().await;
    let other = PlatformServer::start(crate::helpers::platform_profile(crate::helpers::ALL_CAPABILITIES)).await;
    let shared_key = key();
    let ours = app
        .tool("create_checkout", json!({ "meta": meta(&app, &shared_key), "checkout": ready_checkout("mug-1", 1) }))
        .await;
    let theirs = app
        .tool(
            "create_checkout",
            json!({ "meta": meta_for(&other.profile_url(), &shared_key), "checkout": ready_checkout("mug-1", 1) }),
        )
        .await;
    assert_ne!(ours["id"], theirs["id"], "another platform's key is its own");
    // Each platform still replays its own.
    let again = app
        .tool(
            "create_checkout",
            json!({ "meta": meta_for(&other.profile_url(), &shared_key), "checkout": ready_checkout("mug-1", 1) }),
        )
        .await;
    assert_eq!(again["id"], theirs["id"]);
    // The same key on another operation (and another target) runs that operation.
    let cart = app.tool("create_cart", json!({ "meta": meta(&app, &shared_key), "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } })).await;
    assert!(cart["id"].as_str().is_some_and(|id| id != ours["id"]), "{cart}");
    let canceled = app.tool("cancel_checkout", json!({ "meta": meta(&app, &shared_key), "id": ours["id"] })).await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
}

// transport-mcp.md §4: on MCP the HTTP Idempotency-Key stands in for a missing meta key on a
// state-changing call; reads accept it and store nothing (checklist 46).
#[tokio::test]
async fn the_http_header_stands_in_for_a_missing_meta_key() {
    let app = spawn_app().await;
    let header_key = key();
    let headers = [("idempotency-key", header_key.as_str())];
    let arguments =
        json!({ "meta": app.meta_for(&app.platform.profile_url()), "checkout": ready_checkout("mug-1", 1) });
    let (status, first) = rpc(&app, json!(1), "create_checkout", arguments.clone(), &headers).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (_, second) = rpc(&app, json!(2), "create_checkout", arguments.clone(), &headers).await;
    assert_eq!(second["result"], first["result"], "the header key replays");
    // A meta key wins over the header: this is a new call.
    let keyed = json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 1) });
    let (_, third) = rpc(&app, json!(3), "create_checkout", keyed, &headers).await;
    assert_ne!(third["result"]["structuredContent"]["id"], first["result"]["structuredContent"]["id"]);
    let records = count(&app, "idempotency");
    let id = first["result"]["structuredContent"]["id"].clone();
    let (status, read) = rpc(
        &app,
        json!(4),
        "get_checkout",
        json!({ "meta": app.meta_for(&app.platform.profile_url()), "id": id }),
        &headers,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["result"]["structuredContent"]["id"], id);
    assert_eq!(count(&app, "idempotency"), records, "reads store nothing");
}

// A duplicate that finds the key in progress elsewhere (another instance's record) waits its
// bound, then gets 409 idempotency_in_progress with retry_after; another payload is a conflict
// at once; a record left past its lease is taken over by an identical retry.
#[tokio::test]
async fn a_call_in_flight_elsewhere_is_waited_for_then_409_with_retry_after() {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.idempotency.wait_secs = 1;
        settings.idempotency.lease_secs = 30;
    })
    .await;
    let caller_key = key();
    let arguments = json!({ "meta": meta(&app, &caller_key), "checkout": ready_checkout("mug-1", 1) });
    let fingerprint = ucp_server::idempotency::fingerprint(
        ucp_server::operations::Operation::CreateCheckout,
        ucp_server::idempotency::Arguments::Mcp(arguments.as_object().unwrap()),
    )
    .unwrap();
    database(&app)
        .execute(
            "INSERT INTO idempotency (platform, operation, target, key, fingerprint, owner, state, created_at, updated_at) \
             VALUES (?1, 'create_checkout', '', ?2, ?3, 'another-instance', 'pending', ?4, ?4)",
            rusqlite::params![app.platform.profile_url(), caller_key, fingerprint, app.clock.now()],
        )
        .unwrap();
    let started = std::time::Instant::now();
    let (status, reply) = rpc(&app, json!(5), "create_checkout", arguments.clone(), &[]).await;
    assert_eq!(status, StatusCode::CONFLICT, "{reply}");
    assert!(started.elapsed() >= std::time::Duration::from_millis(900), "it waited for the first call");
    assert_eq!(reply["error"]["data"]["code"], "idempotency_in_progress", "{reply}");
    assert_eq!(reply["error"]["data"]["retry_after"], 1, "{reply}");
    let mut changed = arguments.clone();
    changed["checkout"]["line_items"][0]["quantity"] = json!(2);
    let (status, reply) = rpc(&app, json!(6), "create_checkout", changed, &[]).await;
    assert_eq!((status, &reply["error"]["data"]["code"]), (StatusCode::CONFLICT, &json!("idempotency_conflict")));
    // The other instance died: past the lease an identical retry runs and its answer is stored.
    app.clock.advance(31);
    let created = app.tool("create_checkout", arguments.clone()).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    assert_eq!(app.tool("create_checkout", arguments).await, created);
}

// Issue 8: 200 concurrent identical complete_checkout calls with one key place exactly one
// order, charge once, and all get the same answer (duplicates wait for the first; a 409
// idempotency_in_progress would be allowed only past idempotency.wait_secs, 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_concurrent_identical_completes_place_one_order() {
    const CALLS: usize = 200;
    let processor = Processor::start().await;
    let app = Arc::new(app_with_processor(&processor).await);
    let id = ready_checkout_id(&app).await;
    let arguments = json!({ "meta": meta(&app, &key()), "id": id, "checkout": pay_acme("tok_many") });
    let mut tasks = tokio::task::JoinSet::new();
    for call in 0..CALLS {
        let app = app.clone();
        let arguments = arguments.clone();
        tasks.spawn(async move { rpc(&app, json!(call), "complete_checkout", arguments, &[]).await });
    }
    let mut answers = Vec::new();
    let mut in_flight = 0;
    while let Some(joined) = tasks.join_next().await {
        let (status, reply) = joined.expect("task");
        if status == StatusCode::CONFLICT {
            assert_eq!(reply["error"]["data"]["code"], "idempotency_in_progress", "{reply}");
            assert_eq!(reply["error"]["data"]["retry_after"], 1);
            in_flight += 1;
            continue;
        }
        assert_eq!(status, StatusCode::OK, "{reply}");
        answers.push(reply["result"].clone());
    }
    assert!(!answers.is_empty());
    assert!(answers.iter().all(|answer| answer == &answers[0]), "every answer is the stored one");
    assert_eq!(answers[0]["structuredContent"]["status"], "completed", "{}", answers[0]);
    assert_eq!(answers.len() + in_flight, CALLS);
    assert_eq!(in_flight, 0, "within 10 s every duplicate got the stored answer");
    assert_eq!(processor.keys().len(), 1, "one charge");
    assert_eq!(count(&app, "orders"), 1, "one order");
}
