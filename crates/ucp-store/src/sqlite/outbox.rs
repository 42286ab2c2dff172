//! The order-webhook outbox on SQLite (migrations 7 and 8, `schema_7.sql`, `schema_8.sql`):
//! events are written by [`enqueue`] inside the transaction of the order change they
//! announce, their order snapshots apart in `webhook_payloads`, and `WebhookOutbox` lets a dispatcher lease due events, log attempts and list or revive them.
//!
//! Leases make two instances sharing one database safe: a claim sets `lease_owner` and
//! `lease_until` in one write transaction, and only the owner's outcome moves the event on
//! (a delivery is recorded whoever made it). Each order's events go out in order: an event
//! waits while an earlier event of its order is pending.

use std::collections::HashMap;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};
use ucp_domain::store::{StoreError, StoredOrder, WebhookOutbox};
use ucp_domain::webhook::{
    AttemptOutcome, AttemptRecord, Backlog, ClaimRequest, EventStatus, EventSummary, RetrySelector, WebhookEvent,
    WebhookTarget,
};

use super::{SqliteStore, backend};

impl SqliteStore {
    /// Called after a commit that added webhook events: wakes this process's dispatcher.
    pub(super) fn outbox_committed(&self) {
        self.inner.outbox_wake.notify_one();
    }
}

/// How much of the error text of an attempt the log keeps.
const MAX_ERROR_CHARS: usize = 500;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

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

/// A claimed row before it is decoded.
struct Claimed {
    id: String,
    order_id: String,
    platform: String,
    event_type: String,
    target: String,
    payload: String,
    created_at: i64,
    horizon_from: i64,
    attempts: i64,
}

fn decode(row: Claimed) -> Result<WebhookEvent, (String, String)> {
    let target: WebhookTarget =
        serde_json::from_str(&row.target).map_err(|error| (row.id.clone(), format!("stored target: {error}")))?;
    // Sent as stored (the bytes of the order as it was): only checked to be a JSON object.
    let payload = row.payload.trim();
    if !(payload.starts_with('{') && payload.ends_with('}')) {
        return Err((row.id, "stored order is not a JSON object".into()));
    }
    let order_json = payload.to_owned();
    Ok(WebhookEvent {
        id: row.id,
        order_id: row.order_id,
        platform: row.platform,
        event_type: row.event_type,
        target,
        order_json,
        created_at_ms: row.created_at,
        horizon_from_ms: row.horizon_from,
        attempts: u32::try_from(row.attempts.max(0)).unwrap_or(u32::MAX),
    })
}

const DUE: &str = "e.status = 'pending' AND e.next_attempt <= ?1 AND (e.lease_until IS NULL OR e.lease_until <= ?1) \
     AND NOT EXISTS (SELECT 1 FROM webhook_events p WHERE p.order_id = e.order_id AND p.status = 'pending' AND p.seq < e.seq)";

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
            let count = |status: &str| -> Result<u64, StoreError> {
                connection
                    .prepare_cached("SELECT COUNT(*) FROM webhook_events WHERE status = ?1")
                    .map_err(backend)?
                    .query_row([status], |row| row.get::<_, i64>(0))
                    .map(|count| u64::try_from(count).unwrap_or(0))
                    .map_err(backend)
            };
            let oldest_pending_ms = connection
                .prepare_cached("SELECT MIN(created_at) FROM webhook_events WHERE status = 'pending'")
                .map_err(backend)?
                .query_row([], |row| row.get::<_, Option<i64>>(0))
                .map_err(backend)?;
            Ok(Backlog { pending: count("pending")?, dead: count("dead")?, oldest_pending_ms })
        })
        .await
    }

    async fn enqueued(&self) {
        self.inner.outbox_wake.notified().await;
    }

    async fn list_events(&self, status: Option<EventStatus>, limit: usize) -> Result<Vec<EventSummary>, StoreError> {
        let status = status.map(EventStatus::as_str);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |connection| {
            let mut statement = connection
                .prepare_cached(
                    "SELECT e.id, e.order_id, e.platform, e.event_type, json_extract(e.target, '$.url'), e.status, \
                     e.attempts, e.created_at, e.next_attempt, e.delivered_at, a.status_code, a.error, a.latency_ms \
                     FROM webhook_events e LEFT JOIN webhook_attempts a ON a.event_id = e.id \
                     AND a.attempt = (SELECT MAX(attempt) FROM webhook_attempts WHERE event_id = e.id) \
                     WHERE ?1 IS NULL OR e.status = ?1 ORDER BY e.seq DESC LIMIT ?2",
                )
                .map_err(backend)?;
            let rows = statement
                .query_map(params![status, limit], |row| {
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

    async fn retry_events(&self, selector: &RetrySelector, now_ms: i64) -> Result<u64, StoreError> {
        let selector = selector.clone();
        self.write(move |connection| {
            const REVIVE: &str = "UPDATE webhook_events SET status = 'pending', next_attempt = ?1, horizon_from = ?1, \
                                  lease_owner = NULL, lease_until = NULL, delivered_at = NULL";
            let changed = match &selector {
                RetrySelector::Event(id) => {
                    connection.execute(&format!("{REVIVE} WHERE id = ?2"), params![now_ms, id]).map_err(backend)?
                }
                RetrySelector::Dead => {
                    connection.execute(&format!("{REVIVE} WHERE status = 'dead'"), [now_ms]).map_err(backend)?
                }
            };
            Ok(changed as u64)
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

/// Leases due events inside `transaction` (see `WebhookOutbox::record_and_claim`); also returns the
/// events that no longer decode, dead-lettered here, with why.
fn claim_in(transaction: &rusqlite::Connection, lease: &Lease) -> Result<ClaimOutcome, StoreError> {
    let &Lease { ref owner, now, limit, per_platform, lease_until } = lease;
    let mut leased: HashMap<String, usize> = HashMap::new();
    {
        let mut statement = transaction
            .prepare_cached(
                "SELECT platform, COUNT(*) FROM webhook_events \
                 WHERE status = 'pending' AND lease_until > ?1 GROUP BY platform",
            )
            .map_err(backend)?;
        let rows =
            statement.query_map([now], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))).map_err(backend)?;
        for row in rows {
            let (platform, count) = row.map_err(backend)?;
            leased.insert(platform, usize::try_from(count).unwrap_or(usize::MAX));
        }
    }
    // A window of candidates, without platforms already at their cap, so one
    // platform's backlog cannot crowd the others out.
    let window = i64::try_from(limit.saturating_mul(4)).unwrap_or(i64::MAX);
    let candidates: Vec<(i64, String)> = {
        let sql = format!(
            "SELECT e.seq, e.platform FROM webhook_events e WHERE {DUE} AND e.platform NOT IN \
             (SELECT platform FROM webhook_events WHERE status = 'pending' AND lease_until > ?1 \
              GROUP BY platform HAVING COUNT(*) >= ?3) \
             ORDER BY e.next_attempt, e.seq LIMIT ?2"
        );
        let mut statement = transaction.prepare_cached(&sql).map_err(backend)?;
        let cap = i64::try_from(per_platform).unwrap_or(i64::MAX);
        let rows =
            statement.query_map(params![now, window, cap], |row| Ok((row.get(0)?, row.get(1)?))).map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)?
    };
    let mut chosen = Vec::new();
    for (seq, platform) in candidates {
        if chosen.len() >= limit {
            break;
        }
        let count = leased.entry(platform).or_insert(0);
        if *count < per_platform {
            *count += 1;
            chosen.push(seq);
        }
    }
    let mut events = Vec::with_capacity(chosen.len());
    let mut broken = Vec::new();
    {
        let mut statement = transaction
            .prepare_cached(
                "UPDATE webhook_events SET lease_owner = ?2, lease_until = ?3 WHERE seq = ?1 \
                 RETURNING id, order_id, platform, event_type, target, payload, created_at, horizon_from, attempts",
            )
            .map_err(backend)?;
        let mut payload_of =
            transaction.prepare_cached("SELECT payload FROM webhook_payloads WHERE event_seq = ?1").map_err(backend)?;
        // No snapshot apart: the order row is still at the event's version.
        let mut current_of = transaction
            .prepare_cached(
                "SELECT doc FROM orders WHERE id = ?1 AND version = (SELECT order_version FROM webhook_events WHERE seq = ?2)",
            )
            .map_err(backend)?;
        for seq in chosen {
            let row = statement
                .query_row(params![seq, owner, lease_until], |row| {
                    Ok(Claimed {
                        id: row.get(0)?,
                        order_id: row.get(1)?,
                        platform: row.get(2)?,
                        event_type: row.get(3)?,
                        target: row.get(4)?,
                        payload: row.get(5)?,
                        created_at: row.get(6)?,
                        horizon_from: row.get(7)?,
                        attempts: row.get(8)?,
                    })
                })
                .map_err(backend)?;
            let mut row = row;
            if let Some(payload) =
                payload_of.query_row([seq], |found| found.get::<_, String>(0)).optional().map_err(backend)?
            {
                row.payload = payload;
            } else if let Some(doc) = current_of
                .query_row(params![row.order_id, seq], |found| found.get::<_, String>(0))
                .optional()
                .map_err(backend)?
            {
                row.payload = doc;
            }
            match decode(row) {
                Ok(event) => events.push(event),
                Err(failure) => broken.push(failure),
            }
        }
    }
    // An event that no longer decodes can never be sent: dead-lettered, with why.
    for (id, reason) in &broken {
        insert_attempt(transaction, id, now, 0, None, Some(reason), "dead")?;
        transaction
            .prepare_cached(
                "UPDATE webhook_events SET status = 'dead', lease_owner = NULL, lease_until = NULL WHERE id = ?1",
            )
            .map_err(backend)?
            .execute([id])
            .map_err(backend)?;
    }
    Ok((events, broken))
}

/// A claim's terms, owned (they travel into the writer).
struct Lease {
    owner: String,
    now: i64,
    limit: usize,
    per_platform: usize,
    lease_until: i64,
}

type ClaimOutcome = (Vec<WebhookEvent>, Vec<(String, String)>);

impl Lease {
    fn of(claim: &ClaimRequest<'_>) -> Lease {
        Lease {
            owner: claim.owner.to_owned(),
            now: claim.now_ms,
            limit: claim.limit,
            per_platform: claim.per_platform.max(1),
            lease_until: claim.now_ms.saturating_add(claim.lease_ms.max(1)),
        }
    }
}

/// Logs one attempt and applies its outcome inside `transaction` (a delivery also when the
/// lease was no longer `attempt.owner`'s).
fn record(transaction: &rusqlite::Connection, attempt: &AttemptRecord) -> Result<(), StoreError> {
    let error: Option<String> = attempt.error.as_ref().map(|text| text.chars().take(MAX_ERROR_CHARS).collect());
    // An event deleted since it was leased (a lease that lapsed, another instance's delivery,
    // then the retention sweep) has nothing left to log against: its attempt row would break
    // the foreign key and with it the whole round.
    let exists: bool = transaction
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM webhook_events WHERE id = ?1)")
        .map_err(backend)?
        .query_row([&attempt.event_id], |row| row.get(0))
        .map_err(backend)?;
    if !exists {
        return Ok(());
    }
    let (outcome, status, next, delivered_at) = match attempt.outcome {
        AttemptOutcome::Delivered => ("delivered", "delivered", None, Some(now_ms())),
        AttemptOutcome::RetryAt(at) => ("retry", "pending", Some(at), None),
        AttemptOutcome::Dead => ("dead", "dead", None, None),
    };
    insert_attempt(
        transaction,
        &attempt.event_id,
        attempt.started_at_ms,
        attempt.latency_ms,
        attempt.status_code,
        error.as_deref(),
        outcome,
    )?;
    let owned = transaction
        .prepare_cached(
            "UPDATE webhook_events SET attempts = attempts + 1, status = ?3, next_attempt = COALESCE(?4, next_attempt), \
             delivered_at = ?5, lease_owner = NULL, lease_until = NULL \
             WHERE id = ?1 AND lease_owner = ?2 AND status = 'pending'",
        )
        .map_err(backend)?
        .execute(params![attempt.event_id, attempt.owner, status, next, delivered_at])
        .map_err(backend)?
        > 0;
    if !owned && attempt.outcome == AttemptOutcome::Delivered {
        // The lease lapsed meanwhile, but the platform has the event: say so, so it is not
        // sent again.
        transaction
            .prepare_cached(
                "UPDATE webhook_events SET attempts = attempts + 1, status = 'delivered', delivered_at = ?2 \
                 WHERE id = ?1 AND status = 'pending'",
            )
            .map_err(backend)?
            .execute(params![attempt.event_id, delivered_at])
            .map_err(backend)?;
    }
    Ok(())
}

fn insert_attempt(
    transaction: &rusqlite::Connection,
    event_id: &str,
    started_at: i64,
    latency_ms: i64,
    status_code: Option<u16>,
    error: Option<&str>,
    outcome: &str,
) -> Result<(), StoreError> {
    // Two plain statements rather than an INSERT around a subquery, which SQLite re-prepares
    // on every run when it holds a bound parameter.
    let last: i64 = transaction
        .prepare_cached("SELECT COALESCE(MAX(attempt), 0) FROM webhook_attempts WHERE event_id = ?1")
        .map_err(backend)?
        .query_row([event_id], |row| row.get(0))
        .map_err(backend)?;
    transaction
        .prepare_cached(
            "INSERT INTO webhook_attempts (event_id, attempt, started_at, latency_ms, status_code, error, outcome) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(backend)?
        .execute(params![event_id, last + 1, started_at, latency_ms, status_code, error, outcome])
        .map_err(backend)?;
    Ok(())
}
