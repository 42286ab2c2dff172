//! How long order-webhook events are kept (`webhooks.retention_secs`): the session sweeper
//! deletes finished ones past their retention, never a pending one, and a dispatcher's round
//! survives an event deleted under it; and what a revival (`ucpd webhooks retry`) may send
//! again. The receiver and helpers are `webhooks.rs`'s.

use std::time::Duration;

use serde_json::{Value, json};
use ucp_domain::store::WebhookOutbox;
use ucp_domain::webhook::{EventStatus, EventSummary, ORDER_CREATED, Retried, RetrySelector};

use crate::helpers::TestApp;
use crate::webhooks::{
    Answer, Receiver, admit_admin_key, app_with_webhook, events_until, header, outbox, place_order, place_then_ship,
};

/// Rows in `table` of the app's database, read beside the running server.
fn rows(app: &TestApp, table: &str) -> i64 {
    let path = app.data_dir.path().join(ucp_server::startup::DATABASE_FILE);
    let connection = rusqlite::Connection::open(path).unwrap();
    connection.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |row| row.get(0)).unwrap()
}

// Finished events do not pile up (`webhooks.retention_secs`): the session sweeper deletes the
// delivered ones past their retention, with their attempts and their order snapshots; the
// orders themselves stay.
#[tokio::test]
async fn the_sweeper_deletes_delivered_events_past_their_retention() {
    let receiver = Receiver::start(&[]).await;
    let app = app_with_webhook(&receiver.url, |settings| {
        admit_admin_key(settings);
        settings.webhooks.horizon_secs = 1;
        settings.webhooks.retention_secs = 4;
        settings.checkout.sweep_interval_secs = 1;
    })
    .await;
    let (order_id, _) = place_then_ship(&app, &receiver, "1Z1").await;
    // Well within the four seconds: the created event's snapshot, written apart by the shipment.
    assert_eq!(rows(&app, "webhook_payloads"), 1);
    assert_eq!(receiver.wait_for(2).await.len(), 2, "created, then updated");
    let store = outbox(&app);
    let events = events_until(&store, None, 400, <[EventSummary]>::is_empty).await;
    assert!(events.is_empty(), "deleted within a few sweeps: {events:?}");
    assert_eq!((rows(&app, "webhook_attempts"), rows(&app, "webhook_payloads")), (0, 0), "with their rows");
    let order = app.tool("get_order", json!({ "id": order_id })).await;
    assert_eq!(order["id"], order_id.as_str(), "the order stays: {order}");
}

// What pruning takes (the store call behind the sweep): finished events created before the
// cut, oldest first, at most the limit; never a pending event, however old.
#[tokio::test]
async fn pruning_takes_old_finished_events_only_and_never_a_pending_one() {
    let receiver = Receiver::start(&[Answer::Status(500)]).await;
    let app = app_with_webhook(&receiver.url, |settings| settings.webhooks.initial_backoff_ms = 60_000).await;
    let waiting = place_order(&app).await;
    receiver.wait_for(1).await;
    let delivered = [place_order(&app).await, place_order(&app).await];
    receiver.wait_for(3).await;
    let store = outbox(&app);
    let delivered_count =
        |events: &[EventSummary]| events.iter().filter(|event| event.status == EventStatus::Delivered).count();
    let statuses = events_until(&store, None, 100, |events| delivered_count(events) == 2).await;
    assert_eq!((statuses.len(), delivered_count(&statuses)), (3, 2), "{statuses:?}");

    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000;
    assert_eq!(store.prune_finished(now - 3_600_000, 10).await.unwrap(), 0, "nothing is an hour old");
    assert_eq!(store.prune_finished(now + 60_000, 1).await.unwrap(), 1, "at most the limit");
    let left = store.list_events(None, 10).await.unwrap();
    assert_eq!(left.len(), 2);
    assert!(left.iter().all(|event| event.order_id != delivered[0]), "the oldest delivered went first: {left:?}");
    assert_eq!(store.prune_finished(now + 60_000, 10).await.unwrap(), 1);
    assert_eq!(store.prune_finished(now + 60_000, 10).await.unwrap(), 0);
    let left = store.list_events(None, 10).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!((left[0].order_id.as_str(), left[0].status), (waiting.as_str(), EventStatus::Pending));

    // Revived (`ucpd webhooks retry`), then delivered: its age counts from the revival.
    let revived_at = (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64;
    let selector = ucp_domain::webhook::RetrySelector::Event(left[0].id.clone());
    assert_eq!(store.retry_events(&selector, revived_at).await.unwrap().due, 1);
    let events = events_until(&store, None, 100, |events| delivered_count(events) == 1).await;
    assert_eq!(delivered_count(&events), 1, "{events:?}");
    assert!(events[0].created_at_ms < revived_at, "created before the cut below");
    assert_eq!(store.prune_finished(revived_at, 10).await.unwrap(), 0, "revived at the cut: kept");
    assert_eq!(store.prune_finished(revived_at + 1, 10).await.unwrap(), 1);
}

// A dispatcher that finished an attempt on an event the sweep deleted meanwhile (its lease had
// lapsed, another instance delivered it, retention took it) records the rest of its round.
#[tokio::test]
async fn an_attempt_on_a_deleted_event_does_not_fail_the_round() {
    let receiver = Receiver::start(&[]).await;
    let app = app_with_webhook(&receiver.url, |settings| settings.webhooks.enabled = false).await;
    let order_id = place_order(&app).await;
    let store = outbox(&app);
    // A second ahead: the event is due whatever the milliseconds of its creation.
    let now = time::OffsetDateTime::now_utc().unix_timestamp() * 1000 + 1_000;
    let claim = |limit| ucp_domain::webhook::ClaimRequest {
        owner: "test-dispatcher",
        now_ms: now,
        lease_ms: 60_000,
        limit,
        per_platform: 10,
    };
    let leased = store.record_and_claim(&[], claim(10)).await.unwrap();
    assert_eq!(leased.len(), 1);
    let finished = |event_id: &str| ucp_domain::webhook::AttemptRecord {
        event_id: event_id.to_owned(),
        owner: "test-dispatcher".into(),
        started_at_ms: now,
        latency_ms: 5,
        status_code: Some(200),
        error: None,
        outcome: ucp_domain::webhook::AttemptOutcome::Delivered,
    };
    let round = [finished("00000000-0000-7000-8000-000000000000"), finished(&leased[0].id)];
    store.record_and_claim(&round, claim(0)).await.expect("the gone event is passed over");
    let events = store.list_events(None, 10).await.unwrap();
    assert_eq!((events.len(), events[0].order_id.as_str()), (1, order_id.as_str()));
    assert_eq!((events[0].status, events[0].attempts), (EventStatus::Delivered, 1), "the other attempt counts");
}

// A platform's view of an order never goes back (order.md §3: every event is the whole order).
// The "created" event dead-lettered, then the shipment's: the created one is superseded, and
// `ucpd webhooks retry` (the store call behind it) sends the order's latest event in its place;
// once the platform has the shipped order, neither a retry by id nor `--dead` sends the order
// as placed again.
#[tokio::test]
async fn a_revived_event_never_sends_an_older_order_than_its_latest() {
    let receiver = Receiver::start(&[Answer::Status(500), Answer::Status(500)]).await;
    let app = app_with_webhook(&receiver.url, |settings| {
        admit_admin_key(settings);
        // A failure's first retry would fall past the horizon: each refusal dead-letters.
        settings.webhooks.horizon_secs = 1;
        settings.webhooks.initial_backoff_ms = 4_000;
        settings.webhooks.max_backoff_secs = 10;
    })
    .await;
    let (order_id, placed) = place_then_ship(&app, &receiver, "1Z1").await;
    let store = outbox(&app);
    let finished =
        |events: &[EventSummary]| events.len() == 2 && events.iter().all(|event| event.status != EventStatus::Pending);
    let events = events_until(&store, None, 200, finished).await;
    let [updated, created] = &events[..] else { panic!("two events, newest first: {events:?}") };
    assert_eq!((created.event_type.as_str(), created.status), (ORDER_CREATED, EventStatus::Superseded), "{events:?}");
    assert_eq!(updated.status, EventStatus::Dead, "{events:?}");
    assert_eq!(store.backlog().await.unwrap().dead, 1, "a superseded event waits for nobody");

    let now = || (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as i64;
    let by_id = RetrySelector::Event(created.id.clone());
    assert_eq!(store.retry_events(&by_id, now()).await.unwrap(), Retried { due: 1, superseded: 1 });
    let received = receiver.wait_for(3).await;
    assert_eq!(received.len(), 3, "the two refusals, then one delivery");
    assert_eq!(header(&received[2], "webhook-id"), updated.id, "the order's latest event, not the created one");
    let sent: Value = serde_json::from_slice(&received[2].body).unwrap();
    assert_eq!(sent, app.tool("get_order", json!({ "id": order_id })).await, "the order as it is now");
    assert_ne!(sent, placed);

    let delivered =
        |events: &[EventSummary]| events.first().is_some_and(|event| event.status == EventStatus::Delivered);
    events_until(&store, None, 200, delivered).await;
    assert_eq!(store.retry_events(&by_id, now()).await.unwrap(), Retried { due: 0, superseded: 1 });
    assert_eq!(store.retry_events(&RetrySelector::Dead, now()).await.unwrap(), Retried { due: 0, superseded: 1 });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(receiver.wait_for(3).await.len(), 3, "the order as placed is not sent after the shipped one");
    assert_eq!(store.backlog().await.unwrap().dead, 0);
}
