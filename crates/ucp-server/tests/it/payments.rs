//! Payments over MCP: checklist 78, 133-135 (sandbox tokens, an HTTP processor stand-in with
//! retries and the same idempotency key, processor outages, credentials never leaked).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_server::config::HttpProcessorSettings;

use crate::checkout::{TOKEN_SUCCESS, complete, key, pay, ready_checkout};
use crate::checkout_edges::assert_checkout;
use crate::helpers::{TestApp, fixture_products, messages_with, spawn_app, spawn_app_with};

const TOKEN_DECLINE: &str = "tok_sandbox_decline";
const TOKEN_3DS: &str = "tok_sandbox_3ds";

async fn ready(app: &TestApp) -> String {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    created["id"].as_str().unwrap().to_owned()
}

fn outbox_count(app: &TestApp) -> usize {
    std::fs::read_dir(app.data_dir.path().join("outbox")).map(|dir| dir.count()).unwrap_or(0)
}

// Checklist 134: a decline is payment_failed (recoverable), no order; the checkout can still be completed.
#[tokio::test]
async fn declined_payment_is_recoverable_and_places_no_order() {
    let app = spawn_app().await;
    let id = ready(&app).await;
    let body = complete(&app, &id, TOKEN_DECLINE).await;
    assert_checkout(&body);
    assert!(body.get("order").is_none(), "{body}");
    assert!(matches!(body["status"].as_str(), Some("ready_for_complete" | "incomplete")), "{body}");
    let failed = messages_with(&body, "payment_failed");
    assert_eq!(failed.len(), 1, "{body}");
    assert_eq!((failed[0]["type"].as_str(), failed[0]["severity"].as_str()), (Some("error"), Some("recoverable")));
    assert_eq!(outbox_count(&app), 0, "no confirmation email");

    // get_checkout still shows it (sticky) and a retry with a good token succeeds.
    let stored = app.tool("get_checkout", json!({ "id": id })).await;
    assert!(stored.get("order").is_none());
    let body = complete(&app, &id, TOKEN_SUCCESS).await;
    assert_eq!(body["status"], "completed", "{body}");
    assert!(messages_with(&body, "payment_failed").is_empty(), "the decline is cleared once paid: {body}");
}

// Checklist 122, 135: a 3-D Secure token escalates with continue_url and requires_3ds; an
// earlier decline is no longer said once the next attempt waits for the buyer.
#[tokio::test]
async fn three_d_secure_requires_escalation() {
    let app = spawn_app().await;
    let id = ready(&app).await;
    let declined = complete(&app, &id, TOKEN_DECLINE).await;
    assert_eq!(messages_with(&declined, "payment_failed").len(), 1, "{declined}");
    let body = complete(&app, &id, TOKEN_3DS).await;
    assert_checkout(&body);
    assert_eq!(body["status"], "requires_escalation", "{body}");
    assert!(messages_with(&body, "payment_failed").is_empty(), "a stale decline: {body}");
    assert!(body["continue_url"].as_str().unwrap().contains(&id), "{body}");
    let challenge = messages_with(&body, "requires_3ds");
    assert_eq!(challenge.len(), 1, "{body}");
    assert_eq!(
        (challenge[0]["type"].as_str(), challenge[0]["severity"].as_str()),
        (Some("error"), Some("requires_buyer_input"))
    );
    assert!(body.get("order").is_none());
    let stored = app.tool("get_checkout", json!({ "id": id })).await;
    assert_checkout(&stored);
    assert_eq!(stored["status"], "requires_escalation");
    // A complete with the same card before the buyer passed the challenge is that payment,
    // asked about again under its key: the same challenge, no order.
    let body = complete(&app, &id, TOKEN_3DS).await;
    assert!(body.get("order").is_none(), "{body}");
    assert_eq!(body["status"], "requires_escalation");
    assert_eq!(messages_with(&body, "requires_3ds").len(), 1, "{body}");
    // Another card is another payment, under a new key (the old one would answer the
    // challenge again): it pays.
    let body = complete(&app, &id, TOKEN_SUCCESS).await;
    assert_eq!(body["status"], "completed", "{body}");
}

// Checklist 134, 135: a challenge the checkout moved on from is abandoned: after an update
// (another amount), complete charges under a new key and pays, rather than hearing the old
// challenge again (the sandbox, like a processor, answers a key with its first answer).
#[tokio::test]
async fn a_challenge_left_behind_does_not_block_the_next_payment() {
    let app = spawn_app().await;
    let id = ready(&app).await;
    let body = complete(&app, &id, TOKEN_3DS).await;
    assert_eq!(body["status"], "requires_escalation", "{body}");
    let updated = app
        .tool("update_checkout", json!({ "meta": app.keyed_meta(), "id": id, "checkout": ready_checkout("mug-1", 2) }))
        .await;
    assert_eq!(updated["status"], "ready_for_complete", "{updated}");
    assert!(messages_with(&updated, "requires_3ds").is_empty(), "{updated}");
    let body = complete(&app, &id, TOKEN_SUCCESS).await;
    assert_eq!(body["status"], "completed", "{body}");
    assert_eq!(body["line_items"][0]["quantity"], 2, "{body}");
}

/// A payment processor stand-in on 127.0.0.1: fails `failures` times with 500, then answers
/// `answer`; records every request's idempotency key and body. Stops when dropped.
struct Processor {
    url: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
    _stop: tokio_util::sync::DropGuard,
}

#[derive(Clone)]
struct ProcessorState {
    failures: Arc<Mutex<u32>>,
    answer: Value,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Processor {
    async fn start(failures: u32, answer: Value) -> Processor {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/charge", listener.local_addr().unwrap());
        let state =
            ProcessorState { failures: Arc::new(Mutex::new(failures)), answer, seen: Arc::new(Mutex::new(Vec::new())) };
        let router = Router::new()
            .route("/charge", post(charge))
            .route("/charge/refund", post(|| async { axum::Json(json!({ "status": "approved" })) }))
            .with_state(state.clone());
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned()).await.ok();
        });
        Processor { url, seen: state.seen, _stop: shutdown.drop_guard() }
    }

    fn seen(&self) -> Vec<(String, Value)> {
        self.seen.lock().unwrap().clone()
    }
}

async fn charge(
    State(processor): State<ProcessorState>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let key = headers.get("idempotency-key").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    processor.seen.lock().unwrap().push((key, body));
    let mut failures = processor.failures.lock().unwrap();
    if *failures > 0 {
        *failures -= 1;
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    axum::Json(processor.answer.clone()).into_response()
}

fn acme(url: &str) -> HttpProcessorSettings {
    HttpProcessorSettings {
        id: "acme".into(),
        name: "com.acme.pay".into(),
        url: url.parse().unwrap(),
        timeout_ms: 2000,
        retries: 2,
        instrument_types: vec![],
        currencies: vec![],
        countries: vec![],
    }
}

fn pay_acme(token: &str) -> Value {
    let mut payment = pay(token);
    payment["payment"]["instruments"][0]["handler_id"] = json!("acme");
    payment
}

/// complete_checkout with handler `acme` and the raw JSON-RPC reply (status, text).
async fn complete_acme(app: &TestApp, id: &str, token: &str, idempotency_key: &str) -> (StatusCode, String) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "complete_checkout", "arguments": {
        "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": idempotency_key },
        "id": id,
        "checkout": pay_acme(token),
    } } });
    let response = app.send_mcp(body.to_string()).await;
    let status = StatusCode::from_u16(response.status().as_u16()).unwrap();
    (status, response.text().await.unwrap())
}

// Checklist 78, 131: an external processor approves; the order is placed; the token reaches the
// processor but never a response body or a log line.
#[tokio::test]
async fn http_processor_approves_and_the_token_never_leaks() {
    crate::helpers::capture_logs();
    let processor = Processor::start(0, json!({ "status": "approved", "reference": "r1" })).await;
    let url = processor.url.clone();
    let app = spawn_app_with(fixture_products(), |settings, _| settings.payments.http.push(acme(&url))).await;
    let token = format!("tok_live_secret_{}", uuid::Uuid::new_v4().simple());

    let mut texts = Vec::new();
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    assert!(created["ucp"]["payment_handlers"]["com.acme.pay"][0]["id"] == "acme", "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let idempotency_key = key();
    let (status, text) = complete_acme(&app, &id, &token, &idempotency_key).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    let completed = &reply["result"]["structuredContent"];
    assert_checkout(completed);
    assert_eq!(completed["status"], "completed", "{completed}");
    let order_id = completed["order"]["id"].as_str().unwrap();
    texts.push(text);
    let (_, get_text) = app.call_tool("get_checkout", json!({ "id": id })).await;
    texts.push(get_text.to_string());
    let (_, order_text) = app.call_tool("get_order", json!({ "id": order_id })).await;
    texts.push(order_text.to_string());

    let seen = processor.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].1["token"], token.as_str(), "the processor received the token");
    assert_eq!(seen[0].1["amount"], 1500 + 599 + 109);
    assert_ne!(seen[0].0, idempotency_key, "the processor gets our key, never the platform's (issue 8 item 4)");
    assert!(seen[0].0.starts_with(&id), "the processor key is derived from the checkout: {}", seen[0].0);
    for text in &texts {
        assert!(!text.contains(&token), "a response carries the payment token: {text}");
    }
    let logs = crate::helpers::captured_logs();
    assert!(logs.contains(order_id), "the log capture works (the order is logged)");
    assert!(!logs.contains(&token), "the logs carry the payment token:\n{logs}");
    let outbox = std::fs::read_to_string(app.data_dir.path().join("outbox").join(format!("{order_id}.eml"))).unwrap();
    assert!(!outbox.contains(&token));
}

// The processor fails twice with 500, then approves: retried with the same Idempotency-Key.
#[tokio::test]
async fn http_processor_is_retried_with_the_same_idempotency_key() {
    let processor = Processor::start(2, json!({ "status": "approved", "reference": "r2" })).await;
    let url = processor.url.clone();
    let app = spawn_app_with(fixture_products(), |settings, _| settings.payments.http.push(acme(&url))).await;
    let id = ready(&app).await;
    let (status, text) = complete_acme(&app, &id, "tok_retry", &key()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["result"]["structuredContent"]["status"], "completed", "{text}");
    let seen = processor.seen();
    assert_eq!(seen.len(), 3, "two failures and one success");
    assert!(!seen[0].0.is_empty());
    assert!(seen.iter().all(|(key, _)| key == &seen[0].0), "one idempotency key on every try: {seen:?}");
    assert!(seen.iter().all(|(_, body)| body == &seen[0].1), "the same charge every try");
}

// A declining processor: payment_failed with its reason, no order.
#[tokio::test]
async fn http_processor_decline_is_payment_failed() {
    let processor =
        Processor::start(0, json!({ "status": "declined", "reference": "r3", "reason": "Insufficient funds." })).await;
    let url = processor.url.clone();
    let app = spawn_app_with(fixture_products(), |settings, _| settings.payments.http.push(acme(&url))).await;
    let id = ready(&app).await;
    let (_, text) = complete_acme(&app, &id, "tok_poor", &key()).await;
    let reply: Value = serde_json::from_str(&text).unwrap();
    let body = &reply["result"]["structuredContent"];
    assert_checkout(body);
    assert!(body.get("order").is_none());
    let failed = messages_with(body, "payment_failed");
    assert_eq!(failed.len(), 1, "{body}");
    assert!(failed[0]["content"].as_str().unwrap().contains("Insufficient funds"));
}

// The processor is down (connection refused): JSON-RPC -32000 with HTTP 503, no order. The
// charge's outcome is unknown to us, so the checkout stays complete_in_progress (issue 9
// item 3) and a retry asks the processor again instead of being refused.
#[tokio::test]
async fn processor_down_is_a_503_and_no_order() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/charge", listener.local_addr().unwrap())
    };
    let app = spawn_app_with(fixture_products(), |settings, _| settings.payments.http.push(acme(&closed))).await;
    let id = ready(&app).await;
    let (status, text) = complete_acme(&app, &id, "tok_down", &key()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["error"]["code"], -32000, "{reply}");
    assert!(!text.contains("tok_down"));
    let stored = app.tool("get_checkout", json!({ "id": id })).await;
    assert_checkout(&stored);
    assert!(stored.get("order").is_none(), "{stored}");
    assert_eq!(stored["status"], "complete_in_progress", "{stored}");
    let (status, text) = complete_acme(&app, &id, "tok_down", &key()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "a retry asks the processor, still down: {text}");
    assert_eq!(outbox_count(&app), 0);
}

// Checklist 25, 139: a checkout offers only the handlers the platform can use and that serve
// the checkout's currency and shipping country; an unoffered handler is refused at complete.
#[tokio::test]
async fn payment_handlers_are_filtered_for_each_checkout() {
    let app = spawn_app_with(fixture_products(), |settings, _| {
        let mut canada_only = acme("http://127.0.0.1:9/authorize");
        canada_only.countries = vec!["CA".into()];
        settings.payments.http.push(canada_only);
    })
    .await;
    // US destination: the sandbox is offered, the Canada-only processor is not.
    let us = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let handlers = us["ucp"]["payment_handlers"].as_object().unwrap();
    assert!(handlers.contains_key("dev.ucpd.sandbox"), "{handlers:?}");
    assert!(!handlers.contains_key("com.acme.pay"), "a Canada-only handler on a US checkout: {handlers:?}");
    let id = us["id"].as_str().unwrap().to_owned();
    let refused = app
        .tool(
            "complete_checkout",
            json!({ "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": key() }, "id": id, "checkout": pay_acme("tok") }),
        )
        .await;
    assert!(refused.get("order").is_none());
    assert!(!messages_with(&refused, "payment_failed").is_empty(), "{refused}");
    // Canadian destination: both are offered.
    let mut canadian = ready_checkout("mug-1", 1);
    canadian["fulfillment"]["methods"][0]["destinations"][0]["address_country"] = json!("CA");
    canadian["fulfillment"]["methods"][0]["destinations"][0]["address_region"] = json!("ON");
    canadian["fulfillment"]["methods"][0]["groups"][0]["selected_option_id"] = json!("international");
    let ca = app.tool("create_checkout", json!({ "checkout": canadian })).await;
    assert!(ca["ucp"]["payment_handlers"].as_object().unwrap().contains_key("com.acme.pay"), "{ca}");

    // A platform that declares its own handlers is offered only those it declared.
    let mut profile = crate::helpers::platform_profile(crate::helpers::ALL_CAPABILITIES);
    profile["ucp"]["payment_handlers"] =
        json!({ "com.acme.pay": [{ "id": "acme_platform", "version": "2026-04-08" }] });
    let platform = crate::helpers::PlatformServer::start(profile).await;
    let meta = json!({ "ucp-agent": { "profile": platform.profile_url() } });
    let declared = app.tool("create_checkout", json!({ "meta": meta, "checkout": ready_checkout("mug-1", 1) })).await;
    let handlers = declared["ucp"]["payment_handlers"].as_object().unwrap();
    assert!(!handlers.contains_key("dev.ucpd.sandbox"), "the platform did not declare the sandbox: {handlers:?}");
    assert_eq!(declared["status"], "requires_escalation", "no usable handler: the buyer pays on our page");
}

// Checklist 139: `available_instruments` is the platform's and ours. A platform that declares
// the sandbox for cards gets it with cards; one that declares it for wallets only (we take
// cards) is not offered it: the checkout needs the buyer on our page, and completing with the
// sandbox is refused.
#[tokio::test]
async fn offered_instruments_are_the_platforms_and_ours() {
    let app = spawn_app().await;
    let declaring = |instruments: serde_json::Value| async move {
        let mut profile = crate::helpers::platform_profile(crate::helpers::ALL_CAPABILITIES);
        profile["ucp"]["payment_handlers"] = json!({ "dev.ucpd.sandbox": [
            { "id": "sandbox_platform", "version": "2026-04-08", "available_instruments": instruments }
        ] });
        crate::helpers::PlatformServer::start(profile).await
    };
    let cards = declaring(json!([{ "type": "card" }, { "type": "wallet" }])).await;
    let meta = json!({ "ucp-agent": { "profile": cards.profile_url() } });
    let offered = app.tool("create_checkout", json!({ "meta": meta, "checkout": ready_checkout("mug-1", 1) })).await;
    let sandbox = &offered["ucp"]["payment_handlers"]["dev.ucpd.sandbox"][0];
    assert_eq!(sandbox["available_instruments"], json!([{ "type": "card" }]), "{offered}");

    let wallets = declaring(json!([{ "type": "wallet" }])).await;
    let meta = json!({ "ucp-agent": { "profile": wallets.profile_url() } });
    let created = app.tool("create_checkout", json!({ "meta": meta, "checkout": ready_checkout("mug-1", 1) })).await;
    let handlers = created["ucp"]["payment_handlers"].as_object().unwrap();
    assert!(!handlers.contains_key("dev.ucpd.sandbox"), "no instrument in common: {handlers:?}");
    let id = created["id"].as_str().unwrap();
    let refused = app
        .tool(
            "complete_checkout",
            json!({ "meta": { "ucp-agent": { "profile": wallets.profile_url() }, "idempotency-key": key() }, "id": id, "checkout": pay(TOKEN_SUCCESS) }),
        )
        .await;
    assert!(refused.get("order").is_none_or(Value::is_null), "{refused}");
    assert_ne!(refused["status"], "completed", "{refused}");
    assert!(!messages_with(&refused, "payment_unavailable").is_empty(), "{refused}");
}
