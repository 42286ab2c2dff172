//! The order-webhook outbox on SQLite (migrations 7 and 8, `schema_7.sql`, `schema_8.sql`):
//! events are written by [`enqueue`] inside the transaction of the order change they
//! announce, their order snapshots apart in `webhook_payloads`, and `WebhookOutbox` lets a dispatcher lease due events, log attempts and list or revive them.
//!
//! Leases make two instances sharing one database safe: a claim sets `lease_owner` and
//! `lease_until` in one write transaction, and only the owner's outcome moves the event on
//! (a delivery is recorded whoever made it). Each order's events go out in order: an event
//! waits while an earlier event of its order is pending. A dead-lettered event whose order has
//! changed since is superseded ([`MOVED_ON`]): a revival never sends it, so a platform never
//! gets an older order after a newer one.

use async_trait::async_trait;
use rusqlite::params;
use ucp_domain::store::{StoreError, StoredOrder, WebhookOutbox};
use ucp_domain::webhook::{
    AttemptOutcome, AttemptRecord, Backlog, ClaimRequest, EventStatus, EventSummary, Retried, RetrySelector,
    WebhookEvent,
};

use super::{SqliteStore, backend};

mod round;

use round::{DUE, Lease, claim_in, now_ms, record};

impl SqliteStore {
    /// Called after a commit that added webhook events: wakes this process's dispatcher.
    pub(super) fn outbox_committed(&self) {
        self.inner.outbox_wake.notify_one();
    }
}

/// Whether event `e`'s order has changed since the event's change: a later event carries the
/// order as it is now (every change of an order with a target adds one). False for an event
/// written before migration 8, whose version is unknown.
const MOVED_ON: &str = "COALESCE(e.order_version < (SELECT o.version FROM orders o WHERE o.id = e.order_id), FALSE)";

/// Makes the events `WHERE` picks (alias `e`, bound `?1` the time now) due now with a fresh horizon.
const REVIVE: &str = "UPDATE webhook_events AS e SET status = 'pending', next_attempt = ?1, horizon_from = ?1, \
                      lease_owner = NULL, lease_until = NULL, delivered_at = NULL";

fn encoding(error: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(error))
}

/// Adds an `event_type` event (`ucp_domain::webhook::ORDER_CREATED`, `ORDER_UPDATED`) for
/// `order` at its version as written, to the outbox, inside `tx`: the event commits or rolls
/// back with the change; its snapshot is the order row while that row is at this version
/// ([`keep_snapshots`] writes it apart before the row moves on). A no-op when the order has no webhook target (the platform did not negotiate the
/// order capability or names no `webhook_url`). Every order change calls this in its own
/// transaction, after writing the order, with the order it wrote.
pub(crate) fn enqueue(tx: &rusqlite::Connection, order: &StoredOrder, event_type: &str) -> rusqlite::Result<()> {
    let Some(target) = &order.webhook else { return Ok(()) };
    let target = serde_json::to_string(target).map_err(encoding)?;
    let now = now_ms();
    tx.prepare_cached(
        "INSERT INTO webhook_events (id, order_id, platform, event_type, target, payload, created_at, horizon_from, \
         status, next_attempt, order_version) VALUES (?1, ?2, ?3, ?4, ?5, '', ?6, ?6, 'pending', ?6, ?7)",
    )?
    // A time-ordered id (UUIDv7): the unique index on it grows at its right edge, so the
    // events of one group commit share its pages instead of each dirtying a random one.
    .execute(params![
        uuid::Uuid::now_v7().to_string(),
        order.id,
        order.platform,
        event_type,
        target,
        now,
        order.version
    ])?;
    Ok(())
}

/// Before order `order_id`'s row moves to a new version: every event of it whose snapshot is
/// still the row itself gets that snapshot written apart, so each event keeps carrying the
/// order as it was at its change (whatever its status: a dead event may be retried).
pub(crate) fn keep_snapshots(tx: &rusqlite::Connection, order_id: &str) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO webhook_payloads (event_seq, payload) \
         SELECT e.seq, o.doc FROM webhook_events e, orders o WHERE e.order_id = ?1 AND o.id = ?1 \
         AND e.order_version = o.version AND NOT EXISTS (SELECT 1 FROM webhook_payloads p WHERE p.event_seq = e.seq)",
    )?
    .execute([order_id])?;
    Ok(())
}

#[async_trait]
impl WebhookOutbox for SqliteStore {
    async fn record_and_claim(
        &self,
        finished: &[AttemptRecord],
        claim: ClaimRequest<'_>,
    ) -> Result<Vec<WebhookEvent>, StoreError> {
        let lease = Lease::of(&claim);
        let now = lease.now;
        if finished.is_empty() {
            if claim.limit == 0 {
                return Ok(Vec::new());
            }
            // With nothing to record, a reader answers the common case (nothing due) without
            // taking the writer.
            let any_due = self
                .read(move |connection| {
                    let sql = format!("SELECT EXISTS (SELECT 1 FROM webhook_events e WHERE {DUE})");
                    connection
                        .prepare_cached(&sql)
                        .map_err(backend)?
                        .query_row([now], |row| row.get::<_, bool>(0))
                        .map_err(backend)
                })
                .await?;
            if !any_due {
                return Ok(Vec::new());
            }
        }
        let finished = finished.to_vec();
        let (delivered, (events, broken)) = self
            .write_relaxed(move |connection| {
                let transaction = connection.savepoint().map_err(backend)?;
                for attempt in &finished {
                    record(&transaction, attempt)?;
                }
                let claimed = if lease.limit == 0 { (Vec::new(), Vec::new()) } else { claim_in(&transaction, &lease)? };
                transaction.commit().map_err(backend)?;
                Ok((finished.iter().any(|attempt| attempt.outcome == AttemptOutcome::Delivered), claimed))
            })
            .await?;
        // A delivery can make the next event of its order due (for this dispatcher's next
        // round, or another instance's).
        if delivered {
            self.outbox_committed();
        }
        for (id, reason) in broken {
            tracing::error!(event = %id, %reason, "webhook event does not decode; dead-lettered");
        }
        Ok(events)
    }

    async fn backlog(&self) -> Result<Backlog, StoreError> {
        self.read(|connection| {
            let count = |condition: &str| -> Result<u64, StoreError> {
                connection
                    .prepare_cached(&format!("SELECT COUNT(*) FROM webhook_events e WHERE {condition}"))
                    .map_err(backend)?
                    .query_row([], |row| row.get::<_, i64>(0))
                    .map(|count| u64::try_from(count).unwrap_or(0))
                    .map_err(backend)
            };
            let oldest_pending_ms = connection
                .prepare_cached("SELECT MIN(created_at) FROM webhook_events WHERE status = 'pending'")
                .map_err(backend)?
                .query_row([], |row| row.get::<_, Option<i64>>(0))
                .map_err(backend)?;
            let dead = count(&format!("e.status = 'dead' AND NOT {MOVED_ON}"))?;
            Ok(Backlog { pending: count("e.status = 'pending'")?, dead, oldest_pending_ms })
        })
        .await
    }

    async fn enqueued(&self) {
        self.inner.outbox_wake.notified().await;
    }

    async fn list_events(&self, status: Option<EventStatus>, limit: usize) -> Result<Vec<EventSummary>, StoreError> {
        // A superseded event is stored dead: `?1` is the stored status, `?3` the shown one.
        let stored = status.map(|status| match status {
            EventStatus::Superseded => EventStatus::Dead.as_str(),
            other => other.as_str(),
        });
        let status = status.map(EventStatus::as_str);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |connection| {
            let shown = format!("CASE WHEN e.status = 'dead' AND {MOVED_ON} THEN 'superseded' ELSE e.status END");
            let sql = format!(
                "SELECT e.id, e.order_id, e.platform, e.event_type, json_extract(e.target, '$.url'), {shown}, \
                 e.attempts, e.created_at, e.next_attempt, e.delivered_at, a.status_code, a.error, a.latency_ms \
                 FROM webhook_events e LEFT JOIN webhook_attempts a ON a.event_id = e.id \
                 AND a.attempt = (SELECT MAX(attempt) FROM webhook_attempts WHERE event_id = e.id) \
                 WHERE (?1 IS NULL OR e.status = ?1) AND (?3 IS NULL OR {shown} = ?3) ORDER BY e.seq DESC LIMIT ?2"
            );
            let mut statement = connection.prepare_cached(&sql).map_err(backend)?;
            let rows = statement
                .query_map(params![stored, limit, status], |row| {
                    let status: String = row.get(5)?;
                    Ok(EventSummary {
                        id: row.get(0)?,
                        order_id: row.get(1)?,
                        platform: row.get(2)?,
                        event_type: row.get(3)?,
                        url: row.get::<_, Option<String>>(4)?.unwrap_or_default(),
                        status: EventStatus::parse(&status).unwrap_or(EventStatus::Pending),
                        attempts: u32::try_from(row.get::<_, i64>(6)?.max(0)).unwrap_or(u32::MAX),
                        created_at_ms: row.get(7)?,
                        next_attempt_at_ms: row.get(8)?,
                        delivered_at_ms: row.get(9)?,
                        last_status: row.get::<_, Option<i64>>(10)?.and_then(|code| u16::try_from(code).ok()),
                        last_error: row.get(11)?,
                        last_latency_ms: row.get(12)?,
                    })
                })
                .map_err(backend)?;
            rows.collect::<Result<_, _>>().map_err(backend)
        })
        .await
    }

    async fn retry_events(&self, selector: &RetrySelector, now_ms: i64) -> Result<Retried, StoreError> {
        let selector = selector.clone();
        // One write: the single writer commits no order change between the comparison of
        // versions and the revival.
        self.write(move |connection| {
            let transaction = connection.savepoint().map_err(backend)?;
            let count = |sql: &str, parameters: &[&dyn rusqlite::ToSql]| -> Result<u64, StoreError> {
                transaction.execute(sql, parameters).map(|changed| changed as u64).map_err(backend)
            };
            let retried = match &selector {
                RetrySelector::Event(id) => {
                    let sql = format!("{REVIVE} WHERE e.id = ?2 AND (e.status = 'pending' OR NOT {MOVED_ON})");
                    let due = count(&sql, params![now_ms, id])?;
                    let exists: bool = transaction
                        .prepare_cached("SELECT EXISTS (SELECT 1 FROM webhook_events WHERE id = ?1)")
                        .map_err(backend)?
                        .query_row([id], |row| row.get(0))
                        .map_err(backend)?;
                    if due == 1 || !exists {
                        Retried { due, superseded: 0 }
                    } else {
                        // Superseded: its order's latest event goes in its place, if it is dead.
                        let sql = format!(
                            "{REVIVE} WHERE e.status = 'dead' AND e.order_id = (SELECT order_id FROM webhook_events \
                             WHERE id = ?2) AND e.order_version = (SELECT o.version FROM orders o WHERE o.id = e.order_id)"
                        );
                        Retried { due: count(&sql, params![now_ms, id])?, superseded: 1 }
                    }
                }
                RetrySelector::Dead => {
                    let superseded = transaction
                        .prepare_cached(&format!(
                            "SELECT COUNT(*) FROM webhook_events e WHERE e.status = 'dead' AND {MOVED_ON}"
                        ))
                        .map_err(backend)?
                        .query_row([], |row| row.get::<_, i64>(0))
                        .map_err(backend)?;
                    let due = count(&format!("{REVIVE} WHERE e.status = 'dead' AND NOT {MOVED_ON}"), params![now_ms])?;
                    Retried { due, superseded: u64::try_from(superseded).unwrap_or(0) }
                }
            };
            transaction.commit().map_err(backend)?;
            Ok(retried)
        })
        .await
    }

    async fn prune_finished(&self, before_ms: i64, limit: u64) -> Result<u64, StoreError> {
        // Bookkeeping: a prune lost to a crash is done again by the next sweep.
        self.write_relaxed(move |connection| {
            let transaction = connection.savepoint().map_err(backend)?;
            let mut pruned = 0u64;
            for status in ["delivered", "dead"] {
                let left = i64::try_from(limit.saturating_sub(pruned)).unwrap_or(i64::MAX);
                if left == 0 {
                    break;
                }
                // Oldest first along `webhook_events_status`, stopping at the first event created
                // too recently: events are numbered as they are created, so a sweep reads at most
                // `limit` rows whatever the table holds. An event revived since (`retry_events`
                // restarts its horizon) counts from its revival, so it is passed over.
                let mut old = Vec::new();
                {
                    let mut statement = transaction
                        .prepare_cached(
                            "SELECT seq, created_at, horizon_from FROM webhook_events WHERE status = ?1 \
                             ORDER BY seq LIMIT ?2",
                        )
                        .map_err(backend)?;
                    let rows = statement
                        .query_map(params![status, left], |row| {
                            Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, i64>(2)?))
                        })
                        .map_err(backend)?;
                    for row in rows {
                        let (seq, created_at, horizon_from) = row.map_err(backend)?;
                        if created_at >= before_ms {
                            break;
                        }
                        if horizon_from < before_ms {
                            old.push(seq);
                        }
                    }
                }
                // The attempts and the stored snapshot go with the event (ON DELETE CASCADE).
                let mut delete =
                    transaction.prepare_cached("DELETE FROM webhook_events WHERE seq = ?1").map_err(backend)?;
                for seq in old {
                    pruned += delete.execute([seq]).map_err(backend)? as u64;
                }
            }
            transaction.commit().map_err(backend)?;
            Ok(pruned)
        })
        .await
    }
}
