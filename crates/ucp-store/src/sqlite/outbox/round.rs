//! A dispatcher's round in the outbox (`WebhookOutbox::record_and_claim`): the attempts it
//! finished, logged and applied, then the due events it leases.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};
use ucp_domain::store::StoreError;
use ucp_domain::webhook::{AttemptOutcome, AttemptRecord, ClaimRequest, WebhookEvent, WebhookTarget};

use crate::sqlite::backend;

/// How much of the error text of an attempt the log keeps.
const MAX_ERROR_CHARS: usize = 500;

/// Unix milliseconds now, by the system clock (the times the outbox compares across instances).
pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
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

/// An event that may go out now: pending, due, not leased by a live claim, and not behind an
/// earlier pending event of its order (alias `e`, bound `?1` the time now).
pub(super) const DUE: &str = "e.status = 'pending' AND e.next_attempt <= ?1 AND (e.lease_until IS NULL OR e.lease_until <= ?1) \
     AND NOT EXISTS (SELECT 1 FROM webhook_events p WHERE p.order_id = e.order_id AND p.status = 'pending' AND p.seq < e.seq)";

/// Leases due events inside `transaction` (see `WebhookOutbox::record_and_claim`); also returns the
/// events that no longer decode, dead-lettered here, with why.
pub(super) fn claim_in(transaction: &rusqlite::Connection, lease: &Lease) -> Result<ClaimOutcome, StoreError> {
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
pub(super) struct Lease {
    owner: String,
    pub(super) now: i64,
    pub(super) limit: usize,
    per_platform: usize,
    lease_until: i64,
}

type ClaimOutcome = (Vec<WebhookEvent>, Vec<(String, String)>);

impl Lease {
    pub(super) fn of(claim: &ClaimRequest<'_>) -> Lease {
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
pub(super) fn record(transaction: &rusqlite::Connection, attempt: &AttemptRecord) -> Result<(), StoreError> {
    let error: Option<String> = attempt.error.as_ref().map(|text| text.chars().take(MAX_ERROR_CHARS).collect());
    let (outcome, status, next, delivered_at) = match attempt.outcome {
        AttemptOutcome::Delivered => ("delivered", "delivered", None, Some(now_ms())),
        AttemptOutcome::RetryAt(at) => ("retry", "pending", Some(at), None),
        AttemptOutcome::Dead => ("dead", "dead", None, None),
    };
    let logged = insert_attempt(
        transaction,
        &attempt.event_id,
        attempt.started_at_ms,
        attempt.latency_ms,
        attempt.status_code,
        error.as_deref(),
        outcome,
    )?;
    if !logged {
        // The event was deleted since it was leased (a lease that lapsed, another instance's
        // delivery, then the retention sweep): nothing is left to apply the outcome to.
        return Ok(());
    }
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

/// Logs an attempt on the event `event_id`; answers `false`, logging nothing, when there is no
/// such event (the foreign key refuses the row, and only that statement is undone, so the
/// round's other attempts stand).
fn insert_attempt(
    transaction: &rusqlite::Connection,
    event_id: &str,
    started_at: i64,
    latency_ms: i64,
    status_code: Option<u16>,
    error: Option<&str>,
    outcome: &str,
) -> Result<bool, StoreError> {
    // Two plain statements rather than an INSERT around a subquery, which SQLite re-prepares
    // on every run when it holds a bound parameter.
    let last: i64 = transaction
        .prepare_cached("SELECT COALESCE(MAX(attempt), 0) FROM webhook_attempts WHERE event_id = ?1")
        .map_err(backend)?
        .query_row([event_id], |row| row.get(0))
        .map_err(backend)?;
    let inserted = transaction
        .prepare_cached(
            "INSERT INTO webhook_attempts (event_id, attempt, started_at, latency_ms, status_code, error, outcome) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(backend)?
        .execute(params![event_id, last + 1, started_at, latency_ms, status_code, error, outcome]);
    match inserted {
        Ok(_) => Ok(true),
        Err(rusqlite::Error::SqliteFailure(failure, _))
            if failure.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
        {
            Ok(false)
        }
        Err(error) => Err(backend(error)),
    }
}
