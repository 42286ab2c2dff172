//! The refunds table: pending, recorded later, ended, listed.

use ucp_domain::order::action::OrderAction;
use ucp_domain::store::{CommerceStore, RefundBegun, RefundEnd, RefundIntent, RefundState};

use super::super::SqliteStore;

fn intent(key: &str, version: i64, amount: i64) -> RefundIntent {
    RefundIntent {
        key: key.into(),
        order_id: "ord_1".into(),
        version,
        action: OrderAction::Refund { amount, description: Some("Dented".into()) },
        amount,
        created_at: 100,
    }
}

/// A store holding order `ord_1`, with no payment recorded.
async fn store(dir: &tempfile::TempDir) -> SqliteStore {
    let store = SqliteStore::open(&dir.path().join("refunds.db"), 1).unwrap();
    insert_order(&store, "ord_1", None).await;
    store
}

/// Inserts an order without lines, paid `paid` (USD, handler `acme`) if given.
async fn insert_order(store: &SqliteStore, id: &'static str, paid: Option<i64>) {
    let order = ucp_domain::order::Order {
        id: id.into(),
        checkout_id: format!("chk_{id}"),
        permalink_url: format!("https://shop.example/orders/{id}"),
        line_items: Vec::new(),
        fulfillment: Default::default(),
        currency: "USD".into(),
        totals: Vec::new(),
        attribution: None,
        adjustments: Vec::new(),
    };
    let doc = serde_json::to_string(&order).unwrap();
    let payment = paid.map(|amount| ("acme", "ch_1", amount, "USD"));
    store
        .write(move |connection| {
            connection
                .execute(
                    "INSERT INTO orders (id, checkout_id, platform, doc, created_at, payment_handler, \
                     payment_reference, paid_amount, paid_currency) VALUES (?1, ?2, 'p', ?3, 1, ?4, ?5, ?6, ?7)",
                    rusqlite::params![
                        id,
                        order.checkout_id,
                        doc,
                        payment.map(|payment| payment.0),
                        payment.map(|payment| payment.1),
                        payment.map(|payment| payment.2),
                        payment.map(|payment| payment.3)
                    ],
                )
                .map_err(super::backend)
        })
        .await
        .unwrap();
}

// A refund is kept pending only within what its order has left to give back, the refunds
// pending for other requests counted: two asked at once cannot both take the remainder.
#[tokio::test]
async fn a_refund_past_what_is_left_once_the_pending_ones_are_counted_is_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    insert_order(&store, "ord_2", Some(1000)).await;
    let of_order = |key: &str, amount| RefundIntent { order_id: "ord_2".into(), ..intent(key, 1, amount) };
    let begin = |intent: RefundIntent| {
        let store = store.clone();
        async move { store.begin_refund(&intent, 0).await.unwrap() }
    };
    let first = of_order("adj_1", 600);
    assert_eq!(begin(first.clone()).await, RefundBegun::Pending(first.clone()));
    assert_eq!(begin(of_order("adj_2", 401)).await, RefundBegun::Exceeds { available: 400 });
    assert!(!store.refund_pending("adj_2").await.unwrap(), "nothing kept");
    let rest = of_order("adj_3", 400);
    assert_eq!(begin(rest.clone()).await, RefundBegun::Pending(rest));
    store.end_refund("adj_1", RefundEnd::Refused).await.unwrap();
    let again = of_order("adj_4", 600);
    assert_eq!(begin(again.clone()).await, RefundBegun::Pending(again), "a refused one gives its share back");
}

// One pending refund per request: the same request at another order version (another key)
// is answered the pending one; a refused key is pending again when asked for again; one
// recorded or abandoned is never pending again; an end moves only a pending one. One the
// sweeper recorded is the answer to the same request once, within the window.
#[tokio::test]
async fn a_request_has_one_pending_refund_and_only_a_refused_one_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let begin = |intent: RefundIntent| {
        let store = store.clone();
        async move { store.begin_refund(&intent, 0).await.unwrap() }
    };
    let first = intent("adj_a", 3, 500);
    assert_eq!(begin(first.clone()).await, RefundBegun::Pending(first.clone()));
    assert_eq!(begin(first.clone()).await, RefundBegun::Pending(first.clone()), "the same key again");
    assert_eq!(begin(intent("adj_b", 4, 500)).await, RefundBegun::Pending(first.clone()), "another version");
    let other = intent("adj_c", 4, 600);
    assert_eq!(begin(other.clone()).await, RefundBegun::Pending(other.clone()), "another request");
    assert_eq!(intents(store.holding_refunds("ord_1").await.unwrap()), vec![first.clone(), other.clone()]);

    store.end_refund("adj_a", RefundEnd::Refused).await.unwrap();
    assert!(!store.refund_pending("adj_a").await.unwrap());
    assert_eq!(begin(first.clone()).await, RefundBegun::Pending(first.clone()), "refused, asked again");
    assert!(store.refund_pending("adj_a").await.unwrap());
    store.end_refund("adj_a", RefundEnd::Refused).await.unwrap();
    let cheaper = RefundIntent { amount: 400, ..first.clone() };
    assert_eq!(begin(cheaper.clone()).await, RefundBegun::Pending(cheaper.clone()), "refused: not made, asked anew");
    store.end_refund("adj_a", RefundEnd::Abandoned).await.unwrap();
    store.end_refund("adj_a", RefundEnd::Dismissed).await.unwrap();
    assert_eq!(
        begin(first.clone()).await,
        RefundBegun::Pending(cheaper),
        "dismissed: asked again for its first amount"
    );

    store.end_refund("adj_a", RefundEnd::Abandoned).await.unwrap();
    store.end_refund("adj_a", RefundEnd::Recorded).await.unwrap();
    store.end_refund("adj_a", RefundEnd::Abandoned).await.unwrap();
    let state = |key: &'static str| {
        let store = store.clone();
        async move { store.refund(key).await.unwrap().map(|refund| refund.state) }
    };
    assert_eq!(state("adj_a").await, Some(RefundState::Ended(RefundEnd::Recorded)), "recorded after all");
    assert_eq!(begin(first.clone()).await, RefundBegun::Ended, "recorded stays so");
    store.end_refund("adj_c", RefundEnd::Recorded).await.unwrap();
    assert_eq!(begin(other.clone()).await, RefundBegun::Ended, "recorded stays so");
    assert!(intents(store.holding_refunds("ord_1").await.unwrap()).is_empty());
    let refused = intent("adj_r", 5, 900);
    begin(refused.clone()).await;
    store.end_refund("adj_r", RefundEnd::Abandoned).await.unwrap();
    let holding = store.holding_refunds("ord_1").await.unwrap();
    assert_eq!(holding.len(), 1, "an abandoned refund holds its money until the merchant reconciles it");
    assert_eq!((&holding[0].intent, holding[0].state), (&refused, RefundState::Ended(RefundEnd::Abandoned)));
    store.end_refund("adj_r", RefundEnd::Refused).await.unwrap();
    assert_eq!(state("adj_r").await, Some(RefundState::Ended(RefundEnd::Refused)), "refused after all");
    store.end_refund("adj_r", RefundEnd::Abandoned).await.unwrap();
    assert_eq!(state("adj_r").await, Some(RefundState::Ended(RefundEnd::Refused)), "an end is not abandoned");
    assert_eq!(state("adj_nope").await, None);
    let later = intent("adj_d", 5, 500);
    assert_eq!(begin(later.clone()).await, RefundBegun::Pending(later.clone()), "a new key of an ended request");

    store.end_refund("adj_d", RefundEnd::RecordedLater).await.unwrap();
    let again = RefundIntent { created_at: 200, ..intent("adj_e", 6, 500) };
    assert_eq!(store.begin_refund(&again, 101).await.unwrap(), RefundBegun::Pending(again.clone()), "too old");
    store.end_refund("adj_e", RefundEnd::RecordedLater).await.unwrap();
    assert_eq!(begin(intent("adj_f", 7, 500)).await, RefundBegun::RecordedLater(again), "seen now");
    let last = intent("adj_f", 7, 500);
    assert_eq!(begin(last.clone()).await, RefundBegun::RecordedLater(later.clone()), "the older one, once");
    assert_eq!(begin(last.clone()).await, RefundBegun::Pending(last), "then a refund of its own");
}

// Only an abandoned refund is dismissed; a dismissed one is pending again when its request
// is asked for again, and recorded when a late settler records it. Counted by state.
#[tokio::test]
async fn only_an_abandoned_refund_is_dismissed_and_a_dismissed_one_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let dismissed = RefundState::Ended(RefundEnd::Dismissed);
    let abandoned = RefundState::Ended(RefundEnd::Abandoned);
    let state = |key: &'static str| {
        let store = store.clone();
        async move { store.refund(key).await.unwrap().map(|refund| refund.state) }
    };
    let first = intent("adj_a", 3, 500);
    store.begin_refund(&first, 0).await.unwrap();
    assert!(!store.end_refund("adj_a", RefundEnd::Dismissed).await.unwrap(), "a pending one is not dismissed");
    assert!(store.end_refund("adj_a", RefundEnd::Abandoned).await.unwrap());
    assert_eq!((store.refund_count(abandoned).await.unwrap(), store.refund_count(dismissed).await.unwrap()), (1, 0));
    assert!(store.end_refund("adj_a", RefundEnd::Dismissed).await.unwrap());
    assert!(!store.end_refund("adj_a", RefundEnd::Dismissed).await.unwrap(), "once");
    assert!(!store.end_refund("adj_a", RefundEnd::Abandoned).await.unwrap(), "not abandoned again");
    assert_eq!(state("adj_a").await, Some(dismissed));
    assert_eq!((store.refund_count(abandoned).await.unwrap(), store.refund_count(dismissed).await.unwrap()), (0, 1));
    assert_eq!(store.begin_refund(&first, 0).await.unwrap(), RefundBegun::Pending(first.clone()), "asked again");
    assert_eq!(state("adj_a").await, Some(RefundState::Pending));

    let late = intent("adj_b", 4, 600);
    store.begin_refund(&late, 0).await.unwrap();
    store.end_refund("adj_b", RefundEnd::Abandoned).await.unwrap();
    store.end_refund("adj_b", RefundEnd::Dismissed).await.unwrap();
    assert!(store.end_refund("adj_b", RefundEnd::Recorded).await.unwrap(), "recorded after all");
    assert!(!store.end_refund("adj_b", RefundEnd::Dismissed).await.unwrap());
    assert_eq!(state("adj_b").await, Some(RefundState::Ended(RefundEnd::Recorded)));
}

// Migration 13 (the `dismissed` state) copies every refund with its rowid (the lists' order
// among refunds of one second) and makes the four indexes again; the new state is taken and
// an unknown one still refused.
#[test]
fn migration_13_keeps_every_refund() {
    use super::super::{expected_schema_version, migrate_to, open_connection};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("refunds.db");
    let mut connection = open_connection(&path, false).unwrap();
    migrate_to(&mut connection, 12).unwrap();
    connection
        .execute_batch(
            "INSERT INTO orders (id, checkout_id, platform, doc, created_at) VALUES ('ord_1', 'chk_1', 'p', '{}', 1);
             INSERT INTO order_refunds (rowid, key, order_id, version, action, amount, created_at, state, ended_at)
                 VALUES (7, 'adj_a', 'ord_1', 3, '{}', 500, 100, 'abandoned', 150),
                        (3, 'adj_b', 'ord_1', 4, '{}', 600, 100, 'pending', NULL);",
        )
        .unwrap();
    migrate_to(&mut connection, expected_schema_version() as usize).unwrap();
    let rows: Vec<(i64, String, String, Option<i64>)> = connection
        .prepare("SELECT rowid, key, state, ended_at FROM order_refunds ORDER BY rowid")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let expected =
        vec![(3, "adj_b".into(), "pending".into(), None), (7, "adj_a".into(), "abandoned".into(), Some(150))];
    assert_eq!(rows, expected);
    let indexes: i64 = connection
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'order_refunds' \
             AND name IN ('order_refunds_pending_request', 'order_refunds_recorded_later', \
             'order_refunds_by_state', 'order_refunds_by_age')",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 4);
    connection.execute("UPDATE order_refunds SET state = 'dismissed' WHERE key = 'adj_a'", []).unwrap();
    assert!(connection.execute("UPDATE order_refunds SET state = 'lost' WHERE key = 'adj_a'", []).is_err());
    let duplicate = "INSERT INTO order_refunds (key, order_id, version, action, amount, created_at) \
                     VALUES ('adj_c', 'ord_1', 5, '{}', 600, 100)";
    assert!(connection.execute(duplicate, []).is_err(), "still one pending refund per request");
}

// A pending refund whose stored request no longer decodes blocks neither its order's
// other refunds nor the sweeper's list: it is left out (and logged).
#[tokio::test]
async fn an_unreadable_pending_refund_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let readable = intent("adj_a", 3, 500);
    store.begin_refund(&readable, 0).await.unwrap();
    store
        .write(|connection| {
            connection
                .execute(
                    "INSERT INTO order_refunds (key, order_id, version, action, amount, created_at) \
                     VALUES ('adj_x', 'ord_1', 3, '{\"action\":\"explode\"}', 1, 50)",
                    [],
                )
                .map_err(super::backend)
        })
        .await
        .unwrap();
    assert_eq!(intents(store.holding_refunds("ord_1").await.unwrap()), vec![readable.clone()]);
    assert_eq!(store.stale_refunds(1_000, 10).await.unwrap(), vec![readable]);
    assert_eq!(store.stale_refunds_summary(1_000).await.unwrap().count, 2, "counted: it waits for a hand");
}

fn intents(refunds: Vec<ucp_domain::store::StoredRefund>) -> Vec<RefundIntent> {
    refunds.into_iter().map(|refund| refund.intent).collect()
}
