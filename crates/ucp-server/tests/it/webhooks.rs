//! Order webhooks (order.md §3, security.md §2): checklist 88, 153-158. A test platform on
//! 127.0.0.1 serves its profile (helpers' `PlatformServer`) naming a `webhook_url` on a
//! receiver that records every POST and answers as scripted.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_domain::store::WebhookOutbox;
use ucp_domain::webhook::{EventStatus, EventSummary};
use ucp_server::Settings;
use ucp_server::signatures::{base, digest, keys::KeySet, verify};

use crate::checkout::{TOKEN_SUCCESS, pay, ready_checkout};
use crate::helpers::{ALL_CAPABILITIES, TestApp, fixture_products, platform_profile, spawn_app_with};
use crate::schema;

/// How the receiver answers one POST.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    Status(u16),
    /// Never answers (the delivery times out).
    Hang,
}

#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// The platform's webhook endpoint: records every request; answers from the script, then 200.
#[derive(Clone)]
pub(crate) struct Receiver {
    pub(crate) url: String,
    received: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<Answer>>>,
    shutdown: CancellationToken,
}

async fn hook(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    receiver.received.lock().unwrap().push(Received { headers, body });
    let answer = receiver.script.lock().unwrap().pop_front().unwrap_or(Answer::Status(200));
    match answer {
        Answer::Status(code) => StatusCode::from_u16(code).unwrap(),
        Answer::Hang => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            StatusCode::OK
        }
    }
}

impl Receiver {
    pub(crate) async fn start(script: &[Answer]) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let receiver = Receiver {
            url: format!("http://{}/webhooks/ucp/orders", listener.local_addr().unwrap()),
            received: Arc::default(),
            script: Arc::new(Mutex::new(script.iter().copied().collect())),
            shutdown: CancellationToken::new(),
        };
        let router = Router::new().route("/webhooks/ucp/orders", post(hook)).with_state(receiver.clone());
        let shutdown = receiver.shutdown.clone();
        tokio::spawn(async move {
            axum::serve(listener, router).with_graceful_shutdown(shutdown.cancelled_owned()).await.ok();
        });
        receiver
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits until at least `count` requests arrived (or 15 s passed).
    pub(crate) async fn wait_for(&self, count: usize) -> Vec<Received> {
        for _ in 0..300 {
            if self.received.lock().unwrap().len() >= count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.received()
    }
}

/// A platform profile whose order capability names `webhook_url`.
fn profile_with_webhook(webhook_url: &str) -> Value {
    let mut profile = platform_profile(ALL_CAPABILITIES);
    profile["ucp"]["capabilities"]["dev.ucp.shopping.order"][0]["config"] = json!({ "webhook_url": webhook_url });
    profile
}

/// Fast retries, so schedules play out within a test.
fn fast(settings: &mut Settings) {
    settings.webhooks.poll_interval_ms = 20;
    settings.webhooks.initial_backoff_ms = 100;
    settings.webhooks.max_backoff_secs = 1;
    settings.webhooks.timeout_ms = 500;
    settings.webhooks.lease_secs = 2;
}

pub(crate) async fn app_with_webhook(webhook_url: &str, configure: impl FnOnce(&mut Settings)) -> TestApp {
    let profile = profile_with_webhook(webhook_url);
    spawn_app_with(fixture_products(), move |settings, platform| {
        *platform.profile.lock().unwrap() = profile;
        fast(settings);
        configure(settings);
    })
    .await
}

/// Creates and completes a checkout; returns the order id.
pub(crate) async fn place_order(app: &TestApp) -> String {
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let arguments = json!({ "meta": app.keyed_meta(), "id": created["id"], "checkout": pay(TOKEN_SUCCESS) });
    let completed = app.tool("complete_checkout", arguments).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    completed["order"]["id"].as_str().unwrap().to_owned()
}

pub(crate) fn outbox(app: &TestApp) -> ucp_store::SqliteStore {
    ucp_store::SqliteStore::open(&app.data_dir.path().join(ucp_server::startup::DATABASE_FILE), 1).unwrap()
}

/// The outbox's events (of `status`, or all), read again every 50 ms until `done` holds of them,
/// at most `polls` times after the first read: the last read.
pub(crate) async fn events_until(
    store: &ucp_store::SqliteStore,
    status: Option<EventStatus>,
    polls: usize,
    done: impl Fn(&[EventSummary]) -> bool,
) -> Vec<EventSummary> {
    let mut events = store.list_events(status, 10).await.unwrap();
    for _ in 0..polls {
        if done(&events) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        events = store.list_events(status, 10).await.unwrap();
    }
    events
}

pub(crate) fn header<'a>(received: &'a Received, name: &str) -> &'a str {
    received.headers.get(name).unwrap_or_else(|| panic!("no {name} header")).to_str().unwrap()
}

/// Verifies a delivery as a platform would: the digest over the bytes, then the signature with
/// the keys our `/.well-known/ucp` publishes, covering every component security.md asks for.
fn verify_delivery(keys: &KeySet, received: &Received) -> Result<(), String> {
    if !digest::check(&received.headers, &received.body).map_err(|error| error.message)? {
        return Err("content-digest does not match the body".into());
    }
    let inputs = base::parse_inputs(&received.headers).map_err(|error| error.message)?.ok_or("not signed")?;
    for input in &inputs {
        for component in verify_components() {
            if !input.components.iter().any(|covered| covered == component) {
                return Err(format!("{component} is not covered"));
            }
        }
    }
    let authority = header(received, "host").to_owned();
    let message = base::Message {
        target: base::Target::Request {
            method: "POST",
            authority: &authority,
            path: "/webhooks/ucp/orders",
            query: None,
        },
        headers: &received.headers,
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let rules = verify::Rules { now, max_skew_secs: 300, accepted_tags: &[], require_ucp_agent: true };
    verify::verify_request(&message, true, &inputs, keys, &rules).map(|_| ()).map_err(|failure| failure.error.message)
}

fn verify_components() -> [&'static str; 8] {
    ["@method", "@authority", "@path", "content-type", "content-digest", "ucp-agent", "webhook-id", "webhook-timestamp"]
}

/// Places an order, waits for its first delivery (its created event, accepted or refused), then
/// ships one unit of it with tracking `number` ([`ship_first_unit`]). Answers the order's id and
/// the order as placed.
pub(crate) async fn place_then_ship(app: &TestApp, receiver: &Receiver, number: &str) -> (String, Value) {
    let order_id = place_order(app).await;
    receiver.wait_for(1).await;
    let placed = app.tool("get_order", json!({ "id": order_id })).await;
    ship_first_unit(app, &order_id, &placed, number).await;
    (order_id, placed)
}

/// The admin key of the tests that change an order through the admin API.
const ADMIN_KEY: &str = "admin-key-for-webhook-tests";

/// Lets [`ADMIN_KEY`] into the admin API ([`ship_first_unit`]).
pub(crate) fn admit_admin_key(settings: &mut Settings) {
    settings.admin.api_keys = vec![ucp_server::auth::hash_key_hex(ADMIN_KEY)];
}

/// Ships one unit of `order`'s first line through the admin API (the app configured with
/// [`admit_admin_key`]), with tracking `number`.
pub(crate) async fn ship_first_unit(app: &TestApp, order_id: &str, order: &Value, number: &str) {
    let line = order["line_items"][0]["id"].as_str().unwrap();
    let shipped = app
        .http
        .post(format!("{}/admin/api/orders/{order_id}/ship", app.base_url))
        .bearer_auth(ADMIN_KEY)
        .json(&json!({ "line_items": [{ "id": line, "quantity": 1 }], "carrier": "UPS",
                       "tracking_number": number, "tracking_url": format!("https://track.example/{number}") }))
        .send()
        .await
        .unwrap();
    assert_eq!(shipped.status(), reqwest::StatusCode::OK, "{}", shipped.text().await.unwrap());
}

async fn published_keys(app: &TestApp) -> KeySet {
    let profile: Value =
        app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap().json().await.unwrap();
    KeySet::from_jwks(profile["signing_keys"].as_array().unwrap())
}

// Checklist 88, 153, 154, 158: one signed "order created" POST per order, with the full order
// (as get_order renders it) under an envelope listing only the order capability; the platform
// verifies it with our published keys, refuses a replay under another Webhook-Id, and after
// de-duplication by Webhook-Id sees every order exactly once.
#[tokio::test]
async fn order_created_webhooks_are_signed_full_orders_seen_once_per_order() {
    let receiver = Receiver::start(&[]).await;
    let app = app_with_webhook(&receiver.url, |_| {}).await;
    let mut orders = Vec::new();
    let placed = futures_util::future::join_all((0..6).map(|_| place_order(&app))).await;
    orders.extend(placed);
    let received = receiver.wait_for(orders.len()).await;
    let keys = published_keys(&app).await;

    let mut by_id: HashMap<String, Value> = HashMap::new();
    for delivery in &received {
        verify_delivery(&keys, delivery).unwrap_or_else(|error| panic!("checklist 88: {error}"));
        let id = header(delivery, "webhook-id");
        assert!(uuid::Uuid::parse_str(id).is_ok(), "checklist 154: Webhook-Id is a UUID: {id}");
        let timestamp: i64 = header(delivery, "webhook-timestamp").parse().expect("Unix seconds");
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        assert!((now - 60..=now).contains(&timestamp), "Webhook-Timestamp is the event's time: {timestamp}");
        assert_eq!(header(delivery, "content-type"), "application/json");
        assert_eq!(header(delivery, "ucp-agent"), format!("profile=\"{}/.well-known/ucp\"", app.base_url));
        by_id.insert(id.to_owned(), serde_json::from_slice(&delivery.body).unwrap());
    }
    let seen: Vec<String> = by_id.values().map(|body| body["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(seen.len(), orders.len(), "one event per order: {seen:?}");
    assert_eq!(seen.iter().collect::<HashSet<_>>(), orders.iter().collect::<HashSet<_>>());

    // The body is the order exactly as get_order renders it (checklist 155, 158).
    let body = by_id.values().next().unwrap();
    schema::assert_valid("shopping/order.json", body);
    let capabilities: Vec<&String> = body["ucp"]["capabilities"].as_object().unwrap().keys().collect();
    assert_eq!(capabilities, ["dev.ucp.shopping.order"]);
    let order = app.tool("get_order", json!({ "id": body["id"] })).await;
    assert_eq!(&order, body, "the webhook carries the full order");

    // A captured delivery replayed as another event (new Webhook-Id or timestamp) fails.
    let mut replay = received[0].clone();
    replay.headers.insert("webhook-id", uuid::Uuid::new_v4().to_string().parse().unwrap());
    assert!(verify_delivery(&keys, &replay).is_err(), "the Webhook-Id is signed");
    let mut replay = received[0].clone();
    replay.headers.insert("webhook-timestamp", "1767225600".parse().unwrap());
    assert!(verify_delivery(&keys, &replay).is_err(), "the Webhook-Timestamp is signed");

    // Delivered and logged once each; nothing more arrives.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), orders.len(), "2xx answered: never sent again");
    let events = outbox(&app).list_events(None, 100).await.unwrap();
    assert_eq!(events.len(), orders.len());
    for event in &events {
        assert_eq!(event.status, EventStatus::Delivered, "{event:?}");
        assert_eq!((event.attempts, event.last_status), (1, Some(200)), "{event:?}");
        assert!(event.last_latency_ms.is_some());
        assert_eq!(event.event_type, ucp_domain::webhook::ORDER_CREATED);
    }
}

// Checklist 156: a failed delivery (500) is retried with the same Webhook-Id and the same
// bytes; every attempt is in the delivery log.
#[tokio::test]
async fn failed_deliveries_are_retried_with_the_same_webhook_id() {
    let receiver = Receiver::start(&[Answer::Status(500), Answer::Status(503)]).await;
    let app = app_with_webhook(&receiver.url, |_| {}).await;
    let order_id = place_order(&app).await;
    let received = receiver.wait_for(3).await;
    assert_eq!(received.len(), 3, "500, 503, then 200");
    let ids: HashSet<&str> = received.iter().map(|delivery| header(delivery, "webhook-id")).collect();
    assert_eq!(ids.len(), 1, "checklist 156: one Webhook-Id across retries");
    assert!(received.windows(2).all(|pair| pair[0].body == pair[1].body), "the same body every time");
    let keys = published_keys(&app).await;
    for delivery in &received {
        verify_delivery(&keys, delivery).unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let events = outbox(&app).list_events(None, 10).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].order_id, order_id);
    assert_eq!(events[0].status, EventStatus::Delivered);
    assert_eq!((events[0].attempts, events[0].last_status), (3, Some(200)));
}

// Checklist 157: no webhook when the order capability is not negotiated, even though the
// platform's profile names a webhook_url.
#[tokio::test]
async fn no_webhook_without_the_order_capability() {
    let receiver = Receiver::start(&[]).await;
    let app = app_with_webhook(&receiver.url, |settings| {
        settings.capabilities.enabled.retain(|name| name != "order");
    })
    .await;
    let created = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    let arguments = json!({ "meta": app.keyed_meta(), "id": created["id"], "checkout": pay(TOKEN_SUCCESS) });
    let completed = app.tool("complete_checkout", arguments).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(receiver.received().is_empty(), "no POST without the order capability");
    assert!(outbox(&app).list_events(None, 10).await.unwrap().is_empty(), "and no event is recorded");
}

// Bad input: a webhook URL on a private address is never connected to (the SSRF guard of
// profile fetches), and an address literal or a plain-http URL off loopback is refused for good
// at once (a name that resolves to a private address is retried: it may resolve elsewhere
// later), and a platform that hangs times out; each ends dead-lettered within the horizon
// while the order stays whole.
#[tokio::test]
async fn refused_and_hanging_webhook_urls_get_a_bounded_retry_schedule() {
    for (url, dead_after_one) in [
        ("https://10.0.0.1/hooks", true),
        ("https://169.254.169.254/latest", true),
        ("https://localhost:1/hooks", false),
        ("http://example.com/hooks", true),
    ] {
        let app = app_with_webhook(url, |settings| settings.webhooks.horizon_secs = 1).await;
        let order_id = place_order(&app).await;
        let store = outbox(&app);
        let events = events_until(&store, None, 100, |events| {
            events.first().is_some_and(|event| event.status == EventStatus::Dead)
        })
        .await;
        let event = &events[0];
        assert_eq!(event.status, EventStatus::Dead, "{url}: {event:?}");
        let error = event.last_error.as_deref().unwrap_or_default();
        if dead_after_one {
            assert_eq!(event.attempts, 1, "{url}: a URL we may never post to is dead at once");
            assert!(error.contains("must use https") || error.contains("private, loopback or reserved"), "{error}");
        } else {
            assert!(event.attempts >= 2, "{url}: retried before the horizon: {event:?}");
        }
        let order = app.tool("get_order", json!({ "id": order_id })).await;
        assert_eq!(order["id"], order_id, "the order is untouched");
    }

    let receiver = Receiver::start(&[Answer::Hang, Answer::Hang, Answer::Hang, Answer::Hang, Answer::Hang]).await;
    let app = app_with_webhook(&receiver.url, |settings| {
        settings.webhooks.timeout_ms = 200;
        settings.webhooks.horizon_secs = 1;
        settings.metrics.public = true;
    })
    .await;
    let started = std::time::Instant::now();
    let order_id = place_order(&app).await;
    assert!(started.elapsed() < Duration::from_secs(5), "a hanging platform never blocks a checkout");
    let store = outbox(&app);
    let events = events_until(&store, Some(EventStatus::Dead), 100, |events| !events.is_empty()).await;
    assert_eq!(events.len(), 1, "dead-lettered after the horizon");
    assert_eq!(events[0].order_id, order_id);
    assert!(events[0].last_error.as_deref().unwrap_or_default().contains("timed out"), "{:?}", events[0]);
    let attempts = receiver.received().len();
    assert!((2..=6).contains(&attempts), "a bounded schedule: {attempts} attempts");
    // The backlog in /metrics: one dead-lettered event, none pending.
    let metrics = app.http.get(format!("{}/metrics", app.base_url)).send().await.unwrap().text().await.unwrap();
    for line in [
        "ucpd_webhook_backlog{status=\"dead\"} 1",
        "ucpd_webhook_backlog{status=\"pending\"} 0",
        "ucpd_webhook_oldest_pending_seconds 0",
    ] {
        assert!(metrics.lines().any(|candidate| candidate == line), "{line} in\n{metrics}");
    }

    // `ucpd webhooks retry` (the store call behind it) revives it with a fresh horizon.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    let retried = store.retry_events(&ucp_domain::webhook::RetrySelector::Dead, now).await.unwrap();
    assert_eq!(retried, ucp_domain::webhook::Retried { due: 1, superseded: 0 });
    let received = receiver.wait_for(attempts + 1).await;
    let last = received.last().unwrap();
    assert_eq!(header(last, "webhook-id"), events[0].id, "the same event, sent again");
}

// A profile whose order capability has no webhook_url: orders are placed, no event is recorded.
#[tokio::test]
async fn orders_without_a_webhook_url_record_no_event() {
    let app = spawn_app_with(fixture_products(), |settings, _| fast(settings)).await;
    let arguments = json!({ "meta": app.keyed_meta(), "checkout": ready_checkout("mug-1", 1) });
    let created = app.tool("create_checkout", arguments).await;
    let arguments = json!({ "meta": app.keyed_meta(), "id": created["id"], "checkout": pay(TOKEN_SUCCESS) });
    assert_eq!(app.tool("complete_checkout", arguments).await["status"], "completed");
    assert!(outbox(&app).list_events(None, 10).await.unwrap().is_empty());
}

// Checklist 155 with issue 9 item 1: a merchant change (a shipment over the admin API) sends
// the full order as it became, signed like "order created", after the created event.
#[tokio::test]
async fn a_merchant_change_sends_the_full_updated_order() {
    let receiver = Receiver::start(&[]).await;
    let app = app_with_webhook(&receiver.url, admit_admin_key).await;
    let (order_id, _) = place_then_ship(&app, &receiver, "1Z999").await;

    let received = receiver.wait_for(2).await;
    assert_eq!(received.len(), 2, "created, then updated");
    let keys = published_keys(&app).await;
    verify_delivery(&keys, &received[1]).unwrap_or_else(|error| panic!("checklist 88: {error}"));
    assert_ne!(header(&received[0], "webhook-id"), header(&received[1], "webhook-id"));
    let body: Value = serde_json::from_slice(&received[1].body).unwrap();
    schema::assert_valid("shopping/order.json", &body);
    assert_eq!(body["line_items"][0]["status"], "fulfilled", "{body}");
    assert_eq!(body["fulfillment"]["events"][0]["tracking_number"], "1Z999", "{body}");
    let current = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(body, current, "the full order as it became");
    let events = outbox(&app).list_events(None, 10).await.unwrap();
    let types: Vec<&str> = events.iter().map(|event| event.event_type.as_str()).collect();
    assert!(types.contains(&ucp_domain::webhook::ORDER_UPDATED), "{types:?}");
}

// An event carries the order as it was at its change (checklist 155), also when the order
// changes before the event is delivered: the "created" event that failed once goes out after
// a shipment with the order as placed, then the "updated" event with the shipment.
#[tokio::test]
async fn an_event_delivered_after_a_later_change_still_carries_its_own_snapshot() {
    let receiver = Receiver::start(&[Answer::Status(503)]).await;
    let app = app_with_webhook(&receiver.url, |settings| {
        admit_admin_key(settings);
        settings.webhooks.initial_backoff_ms = 1_500;
    })
    .await;
    let (order_id, placed) = place_then_ship(&app, &receiver, "1Z1").await;

    let received = receiver.wait_for(3).await;
    assert_eq!(received.len(), 3, "created (refused), created again, updated");
    assert_eq!(header(&received[0], "webhook-id"), header(&received[1], "webhook-id"), "the created event, retried");
    let created: Value = serde_json::from_slice(&received[1].body).unwrap();
    let updated: Value = serde_json::from_slice(&received[2].body).unwrap();
    assert_eq!(created, placed, "the order as placed, not as it became");
    assert_ne!(created["line_items"][0]["status"], "fulfilled", "{created}");
    assert_eq!(updated["line_items"][0]["status"], "fulfilled", "{updated}");
    assert_eq!(updated, app.tool("get_order", json!({ "id": order_id })).await);
}
