//! `CommerceStore` on SQLite: sessions as JSON documents with their lookup columns, orders,
//! and order placement in one transaction on the single writer connection, whose conditional
//! stock update makes overselling impossible.

use std::collections::HashMap;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};
use ucp_domain::checkout::{Session, SessionKind, Status};
use ucp_domain::order::changes::OrderAction;
use ucp_domain::store::{
    CartCheckout, CommerceStore, MAX_PENDING_REFUNDS, OrderChange, OrderFilter, OrderHold, OrderQuery, PlaceOrder,
    PlaceOrderError, RefundBegun, RefundCursor, RefundEnd, RefundIntent, RefundList, RefundState, SchemaStatus,
    StoreError, StoredOrder, StoredRefund, StuckSummary,
};

use super::carts::{CartStanding, cart_standing};
use super::{SqliteStore, backend, now_seconds};

fn encode(session: &Session) -> Result<String, StoreError> {
    serde_json::to_string(session)
        .map_err(|error| StoreError::Backend(format!("encoding session {}: {error}", session.id)))
}

fn decode(id: &str, doc: &str) -> Result<Session, StoreError> {
    serde_json::from_str(doc).map_err(|error| StoreError::Backend(format!("stored session {id}: {error}")))
}

fn insert(connection: &rusqlite::Connection, session: &Session, doc: &str) -> Result<(), StoreError> {
    connection
        .prepare_cached(
            "INSERT INTO sessions (id, kind, status, cart_id, platform, expires_at, doc, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )
        .map_err(backend)?
        .execute(params![
            session.id,
            kind_of(session),
            session.status.as_str(),
            session.cart_id,
            session.platform,
            session.expires_at,
            doc,
            now_seconds()
        ])
        .map_err(backend)?;
    Ok(())
}

/// The newest open (not completed, not canceled, not expired) checkout `platform` made from
/// `cart_id`.
fn open_checkout_of(
    connection: &rusqlite::Connection,
    cart_id: &str,
    platform: &str,
    now: i64,
) -> Result<Option<Session>, StoreError> {
    let found: Option<(String, String)> = connection
        .prepare_cached(
            "SELECT id, doc FROM sessions WHERE cart_id = ?1 AND kind = 'checkout' AND platform = ?3 \
             AND status NOT IN ('completed', 'canceled') AND expires_at > ?2 ORDER BY updated_at DESC LIMIT 1",
        )
        .map_err(backend)?
        .query_row(params![cart_id, now, platform], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()
        .map_err(backend)?;
    found.map(|(id, doc)| decode(&id, &doc)).transpose()
}

fn kind_of(session: &Session) -> &'static str {
    match session.kind {
        SessionKind::Cart => "cart",
        SessionKind::Checkout => "checkout",
    }
}

#[async_trait]
impl CommerceStore for SqliteStore {
    async fn insert_session(&self, session: &Session) -> Result<(), StoreError> {
        let session = session.clone();
        let doc = encode(&session)?;
        self.write(move |connection| insert(connection, &session, &doc)).await
    }

    async fn insert_checkout_of_cart(&self, session: &Session, now: i64) -> Result<CartCheckout, StoreError> {
        let Some(cart_id) = session.cart_id.clone() else {
            return Err(StoreError::Backend(format!("checkout {} is not made from a cart", session.id)));
        };
        let session = session.clone();
        let doc = encode(&session)?;
        // One write: the writer runs one job at a time, so neither another create of this cart's
        // checkout nor the order of one comes between the looks and the insert.
        self.write(move |connection| {
            let CartStanding::Open { completing } = cart_standing(connection, &cart_id, &session.platform, now)? else {
                return Ok(CartCheckout::CartDone);
            };
            if let Some(open) = open_checkout_of(connection, &cart_id, &session.platform, now)? {
                return Ok(CartCheckout::Open(Box::new(open)));
            }
            if completing {
                return Ok(CartCheckout::Completing);
            }
            insert(connection, &session, &doc).map(|()| CartCheckout::Inserted)
        })
        .await
    }

    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let id = id.to_owned();
        self.read(move |connection| {
            let mut statement = connection.prepare_cached("SELECT doc FROM sessions WHERE id = ?1").map_err(backend)?;
            let doc: Option<String> = statement.query_row([&id], |row| row.get(0)).optional().map_err(backend)?;
            doc.map(|doc| decode(&id, &doc)).transpose()
        })
        .await
    }

    /// Writes `session` only if the stored copy is still the one it was read from (same
    /// `version`) and is not final (completed or canceled); stores `version + 1`. A stale or
    /// final session is a `Conflict`, an unknown one `NotFound`.
    async fn update_session(&self, session: &Session) -> Result<(), StoreError> {
        let expected = session.version;
        let mut session = session.clone();
        session.version = expected + 1;
        let doc = encode(&session)?;
        self.write(move |connection| {
            let changed = connection
                .prepare_cached(
                    "UPDATE sessions SET status = ?2, cart_id = ?3, expires_at = ?4, doc = ?5, updated_at = ?6 \
                     WHERE id = ?1 AND COALESCE(json_extract(doc, '$.version'), 0) = ?7 \
                     AND status NOT IN ('completed', 'canceled')",
                )
                .map_err(backend)?
                .execute(params![
                    session.id,
                    session.status.as_str(),
                    session.cart_id,
                    session.expires_at,
                    doc,
                    now_seconds(),
                    expected as i64
                ])
                .map_err(backend)?;
            if changed > 0 {
                return Ok(());
            }
            let exists: bool = connection
                .prepare_cached("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)")
                .map_err(backend)?
                .query_row([&session.id], |row| row.get(0))
                .map_err(backend)?;
            if exists {
                Err(StoreError::Conflict { constraint: "session version".into() })
            } else {
                Err(StoreError::NotFound)
            }
        })
        .await
    }

    async fn open_checkout_for_cart(
        &self,
        cart_id: &str,
        platform: &str,
        now: i64,
    ) -> Result<Option<Session>, StoreError> {
        let (cart_id, platform) = (cart_id.to_owned(), platform.to_owned());
        self.read(move |connection| open_checkout_of(connection, &cart_id, &platform, now)).await
    }

    /// Places the order only if the checkout is still open and unchanged since it was read
    /// (same `version`, see `update_session`); otherwise `NotOpen`.
    async fn place_order(&self, order: PlaceOrder) -> Result<(), PlaceOrderError> {
        let expected = order.checkout.version;
        let mut stored = order.checkout.clone();
        stored.version = expected + 1;
        let doc = encode(&stored)?;
        let announces = order.order.webhook.is_some();
        let placed = self
            .write(move |connection| {
                let transaction = connection.savepoint().map_err(backend)?;
                let found: Option<(String, i64)> = transaction
                    .prepare_cached(
                        "SELECT status, COALESCE(json_extract(doc, '$.version'), 0) FROM sessions WHERE id = ?1",
                    )
                    .map_err(backend)?
                    .query_row([&order.checkout.id], |row| Ok((row.get(0)?, row.get(1)?)))
                    .optional()
                    .map_err(backend)?;
                let open = found.is_some_and(|(status, version)| {
                    !matches!(status.as_str(), "completed" | "canceled") && version == expected as i64
                });
                if !open {
                    return Ok(Err(PlaceOrderError::NotOpen));
                }
                // The products whose stock moved, for the catalog read cache.
                let mut stocked_rows = Vec::with_capacity(order.stock.len());
                for (variant_id, quantity) in &order.stock {
                    let changed: Option<i64> = transaction
                        .prepare_cached(
                            "UPDATE variants SET stock = stock - ?2 WHERE id = ?1 AND (stock IS NULL OR stock >= ?2) \
                             RETURNING product_row",
                        )
                        .map_err(backend)?
                        .query_row(params![variant_id, quantity], |row| row.get(0))
                        .optional()
                        .map_err(backend)?;
                    let Some(row) = changed else {
                        // Dropping the transaction rolls back every decrement made so far.
                        return Ok(Err(PlaceOrderError::OutOfStock { variant_id: variant_id.clone() }));
                    };
                    stocked_rows.push(row);
                }
                for (code, limit) in &order.used_codes {
                    let limit = limit.map_or(i64::MAX, |limit| i64::try_from(limit).unwrap_or(i64::MAX));
                    let changed = transaction
                        .prepare_cached(
                            "INSERT INTO discount_usage (code, uses) SELECT ?1, 1 WHERE ?2 >= 1 \
                         ON CONFLICT (code) DO UPDATE SET uses = uses + 1 WHERE uses < ?2",
                        )
                        .map_err(backend)?
                        .execute(params![code, limit])
                        .map_err(backend)?;
                    if changed == 0 {
                        return Ok(Err(PlaceOrderError::DiscountExhausted { code: code.clone() }));
                    }
                }
                super::orders::insert(&transaction, &order.order)?;
                // The "order created" event commits with the order, or not at all.
                super::outbox::enqueue(&transaction, &order.order, ucp_domain::webhook::ORDER_CREATED)
                    .map_err(backend)?;
                transaction
                    .prepare_cached("UPDATE sessions SET status = ?2, doc = ?3, updated_at = ?4 WHERE id = ?1")
                    .map_err(backend)?
                    .execute(params![order.checkout.id, Status::Completed.as_str(), doc, now_seconds()])
                    .map_err(backend)?;
                transaction.commit().map_err(backend)?;
                Ok(Ok(stocked_rows))
            })
            .await?;
        let stocked_rows = placed?;
        // Committed (the write answers after its batch's COMMIT): served products with the old
        // stock go.
        self.inner.cache.stock_changed(&stocked_rows);
        if announces {
            self.outbox_committed();
        }
        Ok(())
    }

    async fn order(&self, id: &str) -> Result<Option<StoredOrder>, StoreError> {
        let id = id.to_owned();
        self.read(move |connection| super::orders::read(connection, &id)).await
    }

    async fn apply_order_change(&self, change: &OrderChange) -> Result<(), StoreError> {
        let change = change.clone();
        let announces = change.order.webhook.is_some();
        let restocked = self.write(move |connection| super::orders::apply(connection, &change)).await?;
        // Committed: served products with the old stock go.
        if !restocked.is_empty() {
            self.inner.cache.stock_changed(&restocked);
        }
        if announces {
            self.outbox_committed();
        }
        Ok(())
    }

    async fn hold_order(&self, id: &str, wait: std::time::Duration) -> Result<OrderHold, StoreError> {
        self.inner.holds.hold(id, wait).await
    }

    async fn orders(&self, query: &OrderQuery) -> Result<Vec<StoredOrder>, StoreError> {
        let query = query.clone();
        self.read(move |connection| super::orders::list(connection, &query)).await
    }

    async fn list_orders(&self, filter: &OrderFilter) -> Result<Vec<StoredOrder>, StoreError> {
        let filter = filter.clone();
        let limit = filter.limit.clamp(1, OrderFilter::MAX_LIMIT) as i64;
        let query = filter.query.as_deref().map(str::to_lowercase);
        self.read(move |connection| {
            let mut statement = connection
                .prepare_cached(&format!(
                    "SELECT {} FROM orders \
                     WHERE (?1 IS NULL OR platform = ?1) \
                       AND (?2 IS NULL OR instr(lower(id), ?2) > 0 OR instr(lower(checkout_id), ?2) > 0 \
                            OR instr(lower(platform), ?2) > 0) \
                       AND (?3 IS NULL OR created_at < ?3) \
                     ORDER BY created_at DESC, id DESC LIMIT ?4",
                    super::orders::COLUMNS
                ))
                .map_err(backend)?;
            let rows = statement
                .query_map(params![filter.platform, query, filter.before, limit], super::orders::raw)
                .map_err(backend)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(backend)?;
            let orders = rows.into_iter().map(super::orders::decode).collect::<Result<Vec<_>, _>>()?;
            Ok(orders)
        })
        .await
    }

    async fn order_counts(&self, since: Option<i64>) -> Result<Vec<(String, u64)>, StoreError> {
        self.read(move |connection| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT platform, COUNT(*) FROM orders WHERE (?1 IS NULL OR created_at >= ?1) \
                     GROUP BY platform ORDER BY platform",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map(params![since], |row| {
                    Ok((row.get::<_, String>(0)?, u64::try_from(row.get::<_, i64>(1)?).unwrap_or(0)))
                })
                .map_err(backend)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(backend)
        })
        .await
    }

    async fn schema_status(&self) -> Result<SchemaStatus, StoreError> {
        self.read(|connection| {
            let current: i64 =
                connection.pragma_query_value(None, "user_version", |row| row.get(0)).map_err(backend)?;
            Ok(SchemaStatus { current, expected: super::expected_schema_version() })
        })
        .await
    }

    async fn discount_uses(&self, codes: &[String]) -> Result<HashMap<String, u64>, StoreError> {
        let codes = codes.to_vec();
        self.read(move |connection| {
            let mut statement =
                connection.prepare_cached("SELECT uses FROM discount_usage WHERE code = ?1").map_err(backend)?;
            let mut uses = HashMap::new();
            for code in codes {
                let count: Option<i64> = statement.query_row([&code], |row| row.get(0)).optional().map_err(backend)?;
                uses.insert(code, count.unwrap_or(0).max(0) as u64);
            }
            Ok(uses)
        })
        .await
    }

    async fn expire_sessions(&self, now: i64) -> Result<u64, StoreError> {
        self.write(move |connection| {
            let changed = connection
                .prepare_cached("UPDATE sessions SET status = 'canceled', doc = json_set(doc, '$.status', 'canceled'), updated_at = ?1 \
                     WHERE expires_at <= ?1 AND status NOT IN ('completed', 'canceled') \
                     AND NOT (status = 'complete_in_progress' AND json_extract(doc, '$.payment_attempt') IS NOT NULL)").map_err(backend)?.execute([now])
                .map_err(backend)?;
            Ok(changed as u64)
        })
        .await
    }

    async fn stuck_checkouts(&self, started_before: i64, limit: u64) -> Result<Vec<Session>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |connection| {
            // The partial index holds only checkouts being completed (migration 4).
            let mut statement = connection
                .prepare_cached(
                    "SELECT id, doc FROM sessions WHERE status = 'complete_in_progress' AND kind = 'checkout' \
                     AND json_extract(doc, '$.payment_attempt.started_at') <= ?1 \
                     ORDER BY json_extract(doc, '$.payment_attempt.started_at'), id LIMIT ?2",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map(params![started_before, limit], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
                })
                .map_err(backend)?;
            let mut stuck = Vec::new();
            for row in rows {
                let (id, doc) = row.map_err(backend)?;
                stuck.push(decode(&id, &doc)?);
            }
            Ok(stuck)
        })
        .await
    }

    async fn stuck_summary(&self, started_before: i64) -> Result<StuckSummary, StoreError> {
        self.read(move |connection| {
            let (count, oldest): (i64, Option<i64>) = connection
                .prepare_cached(
                    "SELECT count(*), min(json_extract(doc, '$.payment_attempt.started_at')) FROM sessions \
                     WHERE status = 'complete_in_progress' AND kind = 'checkout' \
                     AND json_extract(doc, '$.payment_attempt.started_at') <= ?1",
                )
                .map_err(backend)?
                .query_row([started_before], |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(backend)?;
            Ok(StuckSummary { count: u64::try_from(count).unwrap_or_default(), oldest_started_at: oldest })
        })
        .await
    }

    async fn delete_expired_sessions(&self, expired_before: i64, limit: u64) -> Result<u64, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.write(move |connection| {
            let deleted = connection
                .prepare_cached("DELETE FROM sessions WHERE rowid IN (SELECT s.rowid FROM sessions s \
                     WHERE s.expires_at <= ?1 AND s.status <> 'completed' \
                     AND NOT (s.status = 'complete_in_progress' AND json_extract(s.doc, '$.payment_attempt') IS NOT NULL) \
                     AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.checkout_id = s.id) LIMIT ?2)").map_err(backend)?.execute(params![expired_before, limit])
                .map_err(backend)?;
            Ok(deleted as u64)
        })
        .await
    }

    async fn begin_refund(&self, intent: &RefundIntent, seen_since: i64) -> Result<RefundBegun, StoreError> {
        let intent = intent.clone();
        self.write(move |connection| super::refunds::begin(connection, &intent, seen_since)).await
    }

    async fn claim_recorded_later(
        &self,
        order_id: &str,
        action: &OrderAction,
        seen_since: i64,
    ) -> Result<Option<RefundIntent>, StoreError> {
        let (order_id, action) = (order_id.to_owned(), action.clone());
        self.write(move |connection| super::refunds::claim_recorded_later(connection, &order_id, &action, seen_since))
            .await
    }

    async fn refund_pending(&self, key: &str) -> Result<bool, StoreError> {
        let key = key.to_owned();
        self.read(move |connection| super::refunds::is_pending(connection, &key)).await
    }

    async fn holding_refunds(&self, order_id: &str) -> Result<Vec<StoredRefund>, StoreError> {
        let order_id = order_id.to_owned();
        self.read(move |connection| super::refunds::holding(connection, &order_id, MAX_PENDING_REFUNDS)).await
    }

    async fn stale_refunds(&self, created_before: i64, limit: u64) -> Result<Vec<RefundIntent>, StoreError> {
        self.read(move |connection| super::refunds::stale(connection, created_before, limit)).await
    }

    async fn stale_refunds_summary(&self, created_before: i64) -> Result<StuckSummary, StoreError> {
        self.read(move |connection| super::refunds::stale_summary(connection, created_before)).await
    }

    async fn refund(&self, key: &str) -> Result<Option<StoredRefund>, StoreError> {
        let key = key.to_owned();
        self.read(move |connection| super::refunds::one(connection, &key)).await
    }

    async fn refunds(
        &self,
        state: Option<RefundState>,
        limit: u64,
        before: Option<RefundCursor>,
    ) -> Result<RefundList, StoreError> {
        self.read(move |connection| super::refunds::list(connection, state, limit, before)).await
    }

    async fn refund_count(&self, state: RefundState) -> Result<u64, StoreError> {
        self.read(move |connection| super::refunds::count(connection, state)).await
    }

    async fn end_refund(&self, key: &str, end: RefundEnd) -> Result<bool, StoreError> {
        let key = key.to_owned();
        self.write(move |connection| super::refunds::end(connection, &key, end)).await
    }
}
