//! Order webhooks (order.md §3): what an event is, where it goes, and when a failed delivery is
//! tried again. Events are written to an outbox in the same transaction as the order change
//! they announce (`store::WebhookOutbox`), so an event exists if and only if its change
//! committed; a dispatcher in the server delivers them at least once.

use serde::{Deserialize, Serialize};

/// The event sent right after an order is placed.
pub const ORDER_CREATED: &str = "order.created";
/// The event sent after every later change of an order (the full order, never a delta).
pub const ORDER_UPDATED: &str = "order.updated";

/// Where a platform wants its order webhooks, captured when the order is placed: the order
/// capability's `config.webhook_url` of the platform profile, and what was negotiated, so every
/// later event renders the same `ucp` envelope (only the order capability, checklist 158).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookTarget {
    pub url: String,
    /// The negotiated protocol version (`ucp.version`).
    pub version: String,
    /// The order capability's name as negotiated (`dev.ucp.shopping.order`, or an alias).
    pub capability: String,
    /// The order capability's negotiated version.
    pub capability_version: String,
}

/// Where an event is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventStatus {
    /// Not yet delivered; due at its next attempt time.
    Pending,
    /// A 2xx answer was received.
    Delivered,
    /// Given up after the retry horizon (or refused for good); `ucpd webhooks retry` revives it.
    Dead,
    /// Given up, and its order has changed since: a later event carries the order as it is
    /// now, so this one's older order is never sent again (`retry` passes it over for that
    /// later event, which it revives when that one is dead-lettered too).
    Superseded,
}

impl EventStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EventStatus::Pending => "pending",
            EventStatus::Delivered => "delivered",
            EventStatus::Dead => "dead",
            EventStatus::Superseded => "superseded",
        }
    }

    pub fn parse(text: &str) -> Option<EventStatus> {
        match text {
            "pending" => Some(EventStatus::Pending),
            "delivered" => Some(EventStatus::Delivered),
            "dead" => Some(EventStatus::Dead),
            "superseded" => Some(EventStatus::Superseded),
            _ => None,
        }
    }
}

/// The outbox's backlog.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    pub pending: u64,
    /// Dead-lettered events that carry their order as it is now (superseded ones do not count:
    /// a later event of their order carries it).
    pub dead: u64,
    /// Unix ms at which the oldest pending event was committed.
    pub oldest_pending_ms: Option<i64>,
}

/// One event, claimed for delivery: the order as it was when the change committed.
#[derive(Debug, Clone)]
pub struct WebhookEvent {
    /// `Webhook-Id`: a UUID, the same on every redelivery.
    pub id: String,
    pub order_id: String,
    /// The platform the order belongs to (its profile URL): the concurrency cap's key.
    pub platform: String,
    pub event_type: String,
    pub target: WebhookTarget,
    /// The order snapshot of this change, as the JSON object stored with the event (the
    /// body is this object with the `ucp` envelope added, the same bytes on every attempt).
    pub order_json: String,
    /// When the change committed, Unix milliseconds (`Webhook-Timestamp` is its seconds).
    pub created_at_ms: i64,
    /// Where the retry horizon counts from: the creation, or the last manual retry.
    pub horizon_from_ms: i64,
    /// Attempts made so far.
    pub attempts: u32,
}

/// An event as `ucpd webhooks list` shows it.
#[derive(Debug, Clone)]
pub struct EventSummary {
    pub id: String,
    pub order_id: String,
    pub platform: String,
    pub event_type: String,
    pub url: String,
    pub status: EventStatus,
    pub attempts: u32,
    pub created_at_ms: i64,
    pub next_attempt_at_ms: i64,
    pub delivered_at_ms: Option<i64>,
    /// The last attempt's HTTP status, if it got one.
    pub last_status: Option<u16>,
    pub last_error: Option<String>,
    /// The last attempt's latency.
    pub last_latency_ms: Option<i64>,
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// Try again at this instant (Unix milliseconds).
    RetryAt(i64),
    Dead,
}

/// One delivery attempt, as the delivery log keeps it.
#[derive(Debug, Clone)]
pub struct AttemptRecord {
    pub event_id: String,
    /// The claim's owner: an attempt whose lease was taken over is not recorded twice.
    pub owner: String,
    pub started_at_ms: i64,
    pub latency_ms: i64,
    pub status_code: Option<u16>,
    pub error: Option<String>,
    pub outcome: AttemptOutcome,
}

/// Which due events a dispatcher takes, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct ClaimRequest<'a> {
    /// A fresh id naming this dispatcher (one per process start).
    pub owner: &'a str,
    pub now_ms: i64,
    /// The claim lapses after this long (a dead instance's events are taken over).
    pub lease_ms: i64,
    /// At most this many events.
    pub limit: usize,
    /// At most this many events of one platform leased at once, across every instance.
    pub per_platform: usize,
}

/// Which events `retry` makes due again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetrySelector {
    /// One event by id, whatever its status.
    Event(String),
    /// Every dead-lettered event.
    Dead,
}

/// What `retry` did: a selected event is sent again only while its order is still as it
/// carries it, so a platform never gets an older order after a newer one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retried {
    /// Events made due now with a fresh horizon: selected ones, and in place of a superseded
    /// one its order's latest event when that was dead-lettered.
    pub due: u64,
    /// Selected events left as they were, their order having changed since (a later event
    /// carries it): not sent again.
    pub superseded: u64,
}

/// The retry schedule: exponential backoff with jitter, until a horizon after the event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The delay after the first failure; it doubles after each further failure.
    pub initial_backoff_ms: i64,
    /// No delay is longer than this.
    pub max_backoff_ms: i64,
    /// An event not delivered this long after it was created is dead-lettered.
    pub horizon_ms: i64,
}

impl RetryPolicy {
    /// After the `attempts`-th failed attempt (1 for the first) at `now_ms`: when to try again,
    /// or dead when that would pass the horizon (counted from `horizon_from_ms`). `jitter` in `[0, 1)` spreads retries: the
    /// delay is between half and all of the exponential one ("equal jitter"), so a platform
    /// that comes back is not hit by every retry at once.
    pub fn after_failure(&self, attempts: u32, horizon_from_ms: i64, now_ms: i64, jitter: f64) -> AttemptOutcome {
        let exponent = attempts.saturating_sub(1).min(40);
        let full = self.initial_backoff_ms.max(1).saturating_mul(1_i64 << exponent).min(self.max_backoff_ms.max(1));
        let jitter = if jitter.is_finite() { jitter.clamp(0.0, 1.0) } else { 0.0 };
        // Integer milliseconds: `full / 2` plus a fraction of the other half.
        let spread = ((full - full / 2) as f64 * jitter) as i64;
        let next = now_ms.saturating_add(full / 2 + spread);
        if next > horizon_from_ms.saturating_add(self.horizon_ms) {
            AttemptOutcome::Dead
        } else {
            AttemptOutcome::RetryAt(next)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_stops_at_the_horizon() {
        let policy = RetryPolicy { initial_backoff_ms: 1_000, max_backoff_ms: 8_000, horizon_ms: 60_000 };
        let at = |attempts, jitter| policy.after_failure(attempts, 0, 10_000, jitter);
        assert_eq!(at(1, 0.0), AttemptOutcome::RetryAt(10_500));
        assert_eq!(at(1, 0.999_999), AttemptOutcome::RetryAt(10_999));
        assert_eq!(at(2, 0.0), AttemptOutcome::RetryAt(11_000));
        assert_eq!(at(3, 0.5), AttemptOutcome::RetryAt(13_000));
        // Capped at max_backoff_ms, however many attempts.
        assert_eq!(at(10, 1.0), AttemptOutcome::RetryAt(18_000));
        assert_eq!(at(u32::MAX, 1.0), AttemptOutcome::RetryAt(18_000));
        // Past the horizon: dead.
        assert_eq!(policy.after_failure(4, 0, 56_000, 0.0), AttemptOutcome::RetryAt(60_000));
        assert_eq!(policy.after_failure(4, 0, 56_001, 0.0), AttemptOutcome::Dead);
        // Nonsense jitter is no jitter.
        assert_eq!(at(1, f64::NAN), AttemptOutcome::RetryAt(10_500));
    }

    #[test]
    fn statuses_round_trip() {
        for status in [EventStatus::Pending, EventStatus::Delivered, EventStatus::Dead, EventStatus::Superseded] {
            assert_eq!(EventStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(EventStatus::parse("queued"), None);
    }
}
