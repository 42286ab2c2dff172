//! The background task that delivers the outbox: every `poll_interval_ms` it leases the due
//! events it has room for (at most `max_in_flight` here, `max_concurrent_per_platform` per
//! platform across instances), delivers each on its own task and logs the attempt with its
//! outcome. Leases lapse after `lease_secs`, so the events of an instance that died (or was
//! stopped mid-delivery) go out from the next one: at least once, never lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use ucp_domain::store::WebhookOutbox;
use ucp_domain::webhook::{AttemptOutcome, AttemptRecord, ClaimRequest, RetryPolicy, WebhookEvent};

use super::deliver::{Delivery, Sender};
use crate::config::WebhookSettings;

/// Delivers order webhooks until aborted.
#[derive(Debug, Clone)]
pub struct Dispatcher {
    outbox: Arc<dyn WebhookOutbox>,
    sender: Sender,
    settings: WebhookSettings,
    policy: RetryPolicy,
    /// Names this process's leases.
    owner: String,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Dispatcher {
    pub fn new(outbox: Arc<dyn WebhookOutbox>, sender: Sender, settings: &WebhookSettings) -> Dispatcher {
        Dispatcher {
            outbox,
            sender,
            policy: settings.retry_policy(),
            settings: settings.clone(),
            owner: format!("dispatcher-{}", uuid::Uuid::new_v4().simple()),
        }
    }

    /// Runs the dispatcher on the runtime; abort the handle to stop it (what is in flight then
    /// goes out again after its lease lapses).
    pub fn spawn(self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(self.run())
    }

    async fn run(self) {
        let this = Arc::new(self);
        let in_flight = Arc::new(Semaphore::new(this.settings.max_in_flight.max(1)));
        let mut ticks = tokio::time::interval(Duration::from_millis(this.settings.poll_interval_ms.max(1)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let lease_ms = i64::try_from(this.settings.lease_secs.saturating_mul(1_000)).unwrap_or(i64::MAX);
        loop {
            ticks.tick().await;
            let room = in_flight.available_permits();
            if room == 0 {
                continue;
            }
            let claim = ClaimRequest {
                owner: &this.owner,
                now_ms: now_ms(),
                lease_ms,
                limit: room,
                per_platform: this.settings.max_concurrent_per_platform,
            };
            let events = match this.outbox.claim_due(claim).await {
                Ok(events) => events,
                Err(error) => {
                    tracing::warn!(%error, "claiming due webhooks failed");
                    continue;
                }
            };
            for event in events {
                let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else { return };
                let this = Arc::clone(&this);
                tokio::spawn(async move {
                    let _permit = permit;
                    this.attempt(event).await;
                });
            }
        }
    }

    /// Delivers one event and records what happened.
    async fn attempt(&self, event: WebhookEvent) {
        let started_at_ms = now_ms();
        let started = Instant::now();
        let delivery = self.sender.deliver(&event, started_at_ms / 1000).await;
        let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let attempts = event.attempts.saturating_add(1);
        let (outcome, status_code, error) = match delivery {
            Delivery::Delivered { status } => (AttemptOutcome::Delivered, Some(status), None),
            Delivery::Failed { status, error } => {
                let next = self.policy.after_failure(attempts, event.horizon_from_ms, now_ms(), rand::random::<f64>());
                (next, status, Some(error))
            }
            Delivery::Refused { error } => (AttemptOutcome::Dead, None, Some(error)),
        };
        match (&outcome, &error) {
            (AttemptOutcome::Delivered, _) => tracing::debug!(
                event = %event.id, order = %event.order_id, attempts, latency_ms, "webhook delivered"
            ),
            (AttemptOutcome::RetryAt(at), error) => tracing::warn!(
                event = %event.id, order = %event.order_id, url = %event.target.url, attempts, status = ?status_code,
                error = error.as_deref().unwrap_or_default(), retry_in_ms = at - now_ms(), "webhook delivery failed; will retry"
            ),
            (AttemptOutcome::Dead, error) => tracing::error!(
                event = %event.id, order = %event.order_id, url = %event.target.url, attempts, status = ?status_code,
                error = error.as_deref().unwrap_or_default(), "webhook dead-lettered (`ucpd webhooks retry` sends it again)"
            ),
        }
        let record = AttemptRecord {
            event_id: event.id.clone(),
            owner: self.owner.clone(),
            started_at_ms,
            latency_ms,
            status_code,
            error,
            outcome,
        };
        // Unrecorded, the lease lapses and the event goes out again: at least once.
        if let Err(error) = self.outbox.record_attempt(&record).await {
            tracing::warn!(event = %event.id, %error, "recording a webhook attempt failed");
        }
    }
}
