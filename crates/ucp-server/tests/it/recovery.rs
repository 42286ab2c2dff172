//! No charge without an order (issue 9 item 3): a complete is detached from its request, its
//! payment attempt is recorded before the charge, and a checkout whose charge has no stored
//! outcome is settled by asking the processor, from a retried complete or the recovery
//! sweeper. Against a slow local stand-in processor that records its charges by key.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_server::config::{HttpProcessorSettings, Settings};

use crate::checkout::{key, pay, ready_checkout};
use crate::helpers::{TestApp, fixture_products, messages_with, spawn_app_with, stocked_product};

/// A token the stand-in takes and then loses: it never records the charge and answers 500
/// late, as a processor that never got the request would.
const TOKEN_LOST: &str = "tok_lost";

/// A processor stand-in on 127.0.0.1 that approves every charge at once (recorded under its
/// idempotency key, so a repeated key gets the same answer) but answers only after `delay_ms`.
/// `/lookup` answers what it recorded, or 503 while `lookups_down`.
struct StandIn {
    url: String,
    state: StandInState,
    _stop: tokio_util::sync::DropGuard,
}

#[derive(Clone, Default)]
struct StandInState {
    delay_ms: Arc<AtomicU64>,
    lookups_down: Arc<AtomicBool>,
    /// `/refund` answers 503 while set.
    refunds_down: Arc<AtomicBool>,
    /// key → (reference, amount)
    charges: Arc<Mutex<HashMap<String, (String, i64)>>>,
    charge_calls: Arc<AtomicU64>,
    refunds: Arc<Mutex<Vec<String>>>,
    /// While set, each charge, once recorded, waits for a notification of `approvals` to answer.
    holding: Arc<AtomicBool>,
    approvals: Arc<tokio::sync::Notify>,
}

impl StandIn {
    async fn start(delay_ms: u64) -> StandIn {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/pay", listener.local_addr().unwrap());
        let state = StandInState::default();
        state.delay_ms.store(delay_ms, Ordering::SeqCst);
        let router = Router::new()
            .route("/pay", post(charge))
            .route("/pay/lookup", post(lookup))
            .route("/pay/refund", post(refund))
            .with_state(state.clone());
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned()).await.ok();
        });
        StandIn { url, state, _stop: shutdown.drop_guard() }
    }

    fn settings(&self, timeout_ms: u64) -> HttpProcessorSettings {
        HttpProcessorSettings {
            id: "acme".into(),
            name: "com.acme.pay".into(),
            url: self.url.parse().unwrap(),
            timeout_ms,
            retries: 0,
            instrument_types: vec![],
            currencies: vec![],
            countries: vec![],
        }
    }

    fn charges(&self) -> HashMap<String, (String, i64)> {
        self.state.charges.lock().unwrap().clone()
    }

    fn refunds(&self) -> Vec<String> {
        self.state.refunds.lock().unwrap().clone()
    }
}

async fn charge(
    State(state): State<StandInState>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Value>,
) -> Response {
    let key = headers.get("idempotency-key").and_then(|value| value.to_str().ok()).unwrap_or_default().to_owned();
    state.charge_calls.fetch_add(1, Ordering::SeqCst);
    let lost = body["token"] == TOKEN_LOST;
    let reference = if lost {
        None
    } else {
        let mut charges = state.charges.lock().unwrap();
        let next = charges.len() + 1;
        let amount = body["amount"].as_i64().unwrap_or_default();
        Some(charges.entry(key).or_insert_with(|| (format!("ref_{next}"), amount)).0.clone())
    };
    if state.holding.load(Ordering::SeqCst) {
        state.approvals.notified().await;
    }
    tokio::time::sleep(Duration::from_millis(state.delay_ms.load(Ordering::SeqCst))).await;
    match reference {
        Some(reference) => axum::Json(json!({ "status": "approved", "reference": reference })).into_response(),
        None => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn lookup(State(state): State<StandInState>, axum::Json(body): axum::Json<Value>) -> Response {
    if state.lookups_down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let key = body["idempotency_key"].as_str().unwrap_or_default();
    let found = state.charges.lock().unwrap().get(key).cloned();
    let refunded = |reference: &str| state.refunds.lock().unwrap().iter().any(|done| done == reference);
    axum::Json(match found {
        Some((reference, _)) if refunded(&reference) => json!({ "status": "refunded", "reference": reference }),
        Some((reference, _)) => json!({ "status": "approved", "reference": reference }),
        None => json!({ "status": "not_found" }),
    })
    .into_response()
}

async fn refund(State(state): State<StandInState>, axum::Json(body): axum::Json<Value>) -> Response {
    if state.refunds_down.load(Ordering::SeqCst) {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let reference = body["reference"].as_str().unwrap_or_default().to_owned();
    let mut refunds = state.refunds.lock().unwrap();
    if !refunds.contains(&reference) {
        refunds.push(reference);
    }
    axum::Json(json!({ "status": "refunded" })).into_response()
}

fn pay_acme(token: &str) -> Value {
    let mut payment = pay(token);
    payment["payment"]["instruments"][0]["handler_id"] = json!("acme");
    payment
}

fn complete_body(app: &TestApp, id: &str, token: &str, idempotency_key: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "complete_checkout", "arguments": {
        "meta": { "ucp-agent": { "profile": app.platform.profile_url() }, "idempotency-key": idempotency_key },
        "id": id,
        "checkout": pay_acme(token),
    } } })
    .to_string()
}

/// complete_checkout with handler `acme`: the HTTP status and the JSON-RPC reply.
async fn complete_acme(app: &TestApp, id: &str, token: &str, idempotency_key: &str) -> (StatusCode, Value) {
    let (status, _, reply) = app.post_raw(complete_body(app, id, token, idempotency_key)).await;
    (status, reply)
}

async fn new_checkout(app: &TestApp, item: &str) -> String {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout(item, 1) })).await;
    assert_eq!(created["status"], "ready_for_complete", "{created}");
    created["id"].as_str().unwrap().to_owned()
}

/// Polls get_checkout until `done` holds (at most 15 s); the last body.
async fn wait_for(app: &TestApp, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let body = app.tool("get_checkout", json!({ "id": id })).await;
        if done(&body) || tokio::time::Instant::now() > deadline {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The stored status and order id of a session, read from the database itself (an expired
/// checkout is `not_found` over the protocol).
fn stored(app: &TestApp, id: &str) -> (String, Option<String>) {
    let connection = rusqlite::Connection::open(app.data_dir.path().join(ucp_server::startup::DATABASE_FILE)).unwrap();
    connection
        .query_row(
            "SELECT status, (SELECT id FROM orders WHERE checkout_id = ?1) FROM sessions WHERE id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap()
}

/// A gauge's value in `/metrics` (public in the test's settings).
pub(crate) async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = app.http.get(format!("{}/metrics", app.base_url)).send().await.unwrap().text().await.unwrap();
    let line = text.lines().find(|line| line.split_whitespace().next() == Some(name));
    line.and_then(|line| line.split_whitespace().nth(1))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

fn fast_recovery(settings: &mut Settings) {
    settings.payments.recovery_after_secs = 1;
    settings.checkout.sweep_interval_secs = 1;
}

// A client that disconnects while the processor is still charging does not abort the
// complete: the order is placed, and a replay of its key answers the completed checkout.
#[tokio::test]
async fn a_client_that_disconnects_mid_complete_still_gets_its_order() {
    let processor = StandIn::start(1_500).await;
    let acme = processor.settings(5_000);
    let app = spawn_app_with(fixture_products(), |settings, _| settings.payments.http.push(acme)).await;
    let id = new_checkout(&app, "mug-1").await;
    let idempotency_key = key();
    let impatient = reqwest::Client::builder().timeout(Duration::from_millis(300)).build().unwrap();
    let sent = impatient
        .post(&app.mcp_url)
        .header("content-type", "application/json")
        .body(complete_body(&app, &id, "tok_live", &idempotency_key))
        .send()
        .await;
    assert!(sent.is_err(), "the client gave up before the processor answered");

    let body = wait_for(&app, &id, |body| body["status"] == "completed").await;
    assert_eq!(body["status"], "completed", "the complete went on without its client: {body}");
    let order_id = body["order"]["id"].as_str().unwrap().to_owned();
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(order["checkout_id"], id.as_str(), "{order}");
    assert_eq!(processor.charges().len(), 1, "charged once");
    assert!(processor.refunds().is_empty());

    // The idempotency record was finished by the detached call: a retry replays the answer.
    let (status, reply) = complete_acme(&app, &id, "tok_live", &idempotency_key).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    assert_eq!(reply["result"]["structuredContent"]["order"]["id"], order_id.as_str(), "{reply}");
    assert_eq!(processor.state.charge_calls.load(Ordering::SeqCst), 1, "the replay charged nothing");
}

// The processor approves but answers after our timeout: the charge is in doubt, so the
// checkout stays complete_in_progress (updates refused, never an order in the answer); a
// retried complete asks the processor and places the order instead of charging again.
#[tokio::test]
async fn a_charge_in_doubt_is_settled_by_a_retried_complete() {
    let processor = StandIn::start(1_000).await;
    let acme = processor.settings(300);
    let app = spawn_app_with(fixture_products(), |settings, _| settings.payments.http.push(acme)).await;
    let id = new_checkout(&app, "mug-1").await;
    let (status, reply) = complete_acme(&app, &id, "tok_live", &key()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    assert_eq!(reply["error"]["code"], -32000, "{reply}");

    let held = app.tool("get_checkout", json!({ "id": id })).await;
    assert_eq!(held["status"], "complete_in_progress", "{held}");
    assert!(held.get("order").is_none(), "{held}");
    let update = json!({ "meta": app.keyed_meta(), "id": id, "checkout": ready_checkout("mug-1", 2) });
    let refused = app.tool("update_checkout", update).await;
    assert!(!messages_with(&refused, "complete_in_progress").is_empty(), "checklist 146: {refused}");
    assert!(refused.get("order").is_none());

    processor.state.delay_ms.store(0, Ordering::SeqCst);
    let (status, reply) = complete_acme(&app, &id, "tok_live", &key()).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let completed = &reply["result"]["structuredContent"];
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed["order"]["id"].is_string());
    assert_eq!(processor.state.charge_calls.load(Ordering::SeqCst), 1, "asked, not charged again");
    assert!(processor.refunds().is_empty());
}

// The recovery sweeper settles what nobody retries: an approved charge in doubt becomes its
// order; a charge the processor never got opens the checkout again with payment_failed.
#[tokio::test]
async fn the_sweeper_places_approved_charges_and_releases_lost_ones() {
    let processor = StandIn::start(1_000).await;
    let acme = processor.settings(300);
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.payments.http.push(acme);
        fast_recovery(settings);
    })
    .await;
    let approved = new_checkout(&app, "mug-1").await;
    let lost = new_checkout(&app, "mug-1").await;
    let (status, _) = complete_acme(&app, &approved, "tok_live", &key()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, _) = complete_acme(&app, &lost, TOKEN_LOST, &key()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);

    let placed = wait_for(&app, &approved, |body| body["status"] == "completed").await;
    assert_eq!(placed["status"], "completed", "{placed}");
    assert!(placed["order"]["id"].is_string(), "{placed}");
    let released = wait_for(&app, &lost, |body| body["status"] != "complete_in_progress").await;
    assert_eq!(released["status"], "ready_for_complete", "{released}");
    assert_eq!(messages_with(&released, "payment_failed").len(), 1, "{released}");
    assert!(released.get("order").is_none());
    assert!(processor.refunds().is_empty());
}

// Expiry never cancels a checkout whose charge is unresolved; once the processor answers,
// an approved charge whose stock was sold meanwhile is refunded, and the checkout reopened.
// While the processor cannot refund, the checkout stays claimed (never released with the
// money kept), and recovery refunds it once the processor is back.
#[tokio::test]
async fn expiry_waits_for_an_unresolved_charge_and_an_unplaceable_one_is_refunded() {
    let processor = StandIn::start(1_000).await;
    let acme = processor.settings(300);
    let mut products = fixture_products();
    products.push(stocked_product("lamp", "lamp-1", 2000, 1));
    let app = spawn_app_with(products, |settings, _| {
        settings.payments.http.push(acme);
        fast_recovery(settings);
        settings.metrics.public = true;
    })
    .await;
    processor.state.lookups_down.store(true, Ordering::SeqCst);
    let doubtful = new_checkout(&app, "lamp-1").await;
    let (status, _) = complete_acme(&app, &doubtful, "tok_live", &key()).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // The last lamp goes to another buyer meanwhile.
    let other = new_checkout(&app, "lamp-1").await;
    processor.state.delay_ms.store(0, Ordering::SeqCst);
    let (_, reply) = complete_acme(&app, &other, "tok_other", &key()).await;
    assert_eq!(reply["result"]["structuredContent"]["status"], "completed", "{reply}");

    // Past the checkout's lifetime, with the processor still unable to say: not canceled.
    app.clock.advance(7 * 3600);
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(stored(&app, &doubtful), ("complete_in_progress".to_owned(), None), "expiry skipped it");
    // An operator sees it waiting.
    assert_eq!(metric(&app, "ucpd_payments_in_doubt").await, 1.0);
    assert!(metric(&app, "ucpd_payments_in_doubt_oldest_seconds").await >= (7 * 3600) as f64);

    processor.state.refunds_down.store(true, Ordering::SeqCst);
    processor.state.lookups_down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(stored(&app, &doubtful), ("complete_in_progress".to_owned(), None), "kept until refunded");
    assert!(processor.refunds().is_empty());

    processor.state.refunds_down.store(false, Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while stored(&app, &doubtful).0 == "complete_in_progress" && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, order) = stored(&app, &doubtful);
    assert_eq!(order, None, "no order without stock");
    assert_ne!(status, "complete_in_progress", "settled");
    let charges = processor.charges();
    let doubtful_charge = charges.iter().find(|(key, _)| key.starts_with(&doubtful)).expect("charged").1;
    assert_eq!(processor.refunds(), vec![doubtful_charge.0.clone()], "the unplaceable charge went back");
    assert_eq!(metric(&app, "ucpd_payments_in_doubt").await, 0.0);
    assert_eq!(metric(&app, "ucpd_payments_in_doubt_oldest_seconds").await, 0.0);
    assert!(doubtful_charge.1 >= 2000, "the attempt's amount: {}", doubtful_charge.1);
}

// An approved charge whose order the store cannot record for now (another connection holds the
// database's write lock past the busy timeout) is not refunded: the complete answers 503
// `unavailable` saying so, the checkout stays claimed, and the retried complete the answer asks
// for places the order from that same charge, never charged again.
#[tokio::test]
async fn an_approved_charge_the_store_cannot_record_yet_is_kept_for_its_order() {
    let processor = StandIn::start(0).await;
    processor.state.holding.store(true, Ordering::SeqCst);
    let acme = processor.settings(2_000);
    let app = spawn_app_with(fixture_products(), |settings, _| {
        settings.payments.http.push(acme);
        settings.payments.recovery_after_secs = 3;
    })
    .await;
    let id = new_checkout(&app, "mug-1").await;
    let completing = {
        let body = complete_body(&app, &id, "tok_live", &key());
        let client = reqwest::Client::new();
        let url = app.mcp_url.clone();
        tokio::spawn(async move {
            let response = client.post(url).header("content-type", "application/json").body(body).send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        })
    };
    // The processor has the charge (the claim is stored) and holds its approval until another
    // connection has the write lock, which it keeps until the complete is answered.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while processor.state.charge_calls.load(Ordering::SeqCst) == 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let path = app.data_dir.path().join(ucp_server::startup::DATABASE_FILE);
    let lock = rusqlite::Connection::open(&path).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    processor.state.approvals.notify_one();
    let (status, reply) = completing.await.unwrap();
    // Read while the lock still holds, so nothing can have placed it yet.
    assert_eq!(stored(&app, &id), ("complete_in_progress".to_owned(), None), "still claimed for its charge");
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);

    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the payment was approved") && message.contains("retry complete_checkout"), "{reply}");
    assert!(processor.refunds().is_empty(), "the approved charge is not refunded for a busy store");

    // The retry (another key; the claim is past payments.recovery_after_secs) asks the processor.
    let (status, reply) = complete_acme(&app, &id, "tok_live", &key()).await;
    assert_eq!(status, StatusCode::OK, "{reply}");
    let completed = &reply["result"]["structuredContent"];
    assert_eq!(completed["status"], "completed", "{completed}");
    assert!(completed["order"]["id"].is_string(), "{completed}");
    assert_eq!(processor.state.charge_calls.load(Ordering::SeqCst), 1, "placed from the one charge");
    assert!(processor.refunds().is_empty());
}
