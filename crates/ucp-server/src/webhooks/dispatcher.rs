//! The background task that delivers the outbox. It looks for due events when this process
//! commits one (`WebhookOutbox::enqueued`), when a delivery finishes (each after
//! `batch_window_ms`, so one round covers what arrives meanwhile), and every
//! `poll_interval_ms` (for other instances' events and retries coming due); it leases the due
//! events it has room for (at most `max_in_flight` here, `max_concurrent_per_platform` per
//! platform across instances), delivers each on its own task, and logs finished attempts with
//! their outcomes in one transaction per batch before their slots are reused. Leases lapse after `lease_secs`, so the events of an instance that died (or was
//! stopped mid-delivery) go out from the next one: at least once, never lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use ucp_domain::store::WebhookOutbox;
use ucp_domain::webhook::{AttemptOutcome, AttemptRecord, ClaimRequest, RetryPolicy, WebhookEvent};

use super::deliver::{Delivery, Sender};
use crate::clock::unix_ms;
use crate::config::WebhookSettings;

/// At most this many attempts are recorded in one transaction.
const RECORD_BATCH: usize = 256;

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
        // Finished attempts come back here with their permit; the loop records them in one
        // transaction per batch and only then frees the permits (and the platform's slots).
        let (finished_tx, mut finished) = mpsc::unbounded_channel::<(AttemptRecord, OwnedSemaphorePermit)>();
        let mut ticks = tokio::time::interval(Duration::from_millis(this.settings.poll_interval_ms.max(1)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let lease_ms = i64::try_from(this.settings.lease_secs.saturating_mul(1_000)).unwrap_or(i64::MAX);
        let mut batch = Vec::new();
        loop {
            // Wait for a reason to look: a poll tick (events of other instances, retries coming
            // due), a commit here that added events, or attempts to record.
            let ticked = tokio::select! {
                _ = ticks.tick() => true,
                () = this.outbox.enqueued() => false,
                done = finished.recv() => match done {
                    Some(done) => {
                        batch.push(done);
                        false
                    }
                    None => return,
                },
            };
            if !ticked && this.settings.batch_window_ms > 0 {
                // Let what is arriving join this round: one lease and one log write for many.
                tokio::time::sleep(Duration::from_millis(this.settings.batch_window_ms)).await;
            }
            while batch.len() < RECORD_BATCH {
                match finished.try_recv() {
                    Ok(done) => batch.push(done),
                    Err(_) => break,
                }
            }
            let (records, held): (Vec<AttemptRecord>, Vec<OwnedSemaphorePermit>) = batch.drain(..).unzip();
            this.round(&in_flight, &finished_tx, lease_ms, &records, held).await;
        }
    }

    /// One round: records the finished attempts and leases as many due events as there is
    /// room for (their slots included), in one store write, and sends each on its own task.
    /// Unrecorded (the store failed), the leases lapse and the events go out again: at least
    /// once.
    async fn round(
        self: &Arc<Self>,
        in_flight: &Arc<Semaphore>,
        finished: &mpsc::UnboundedSender<(AttemptRecord, OwnedSemaphorePermit)>,
        lease_ms: i64,
        records: &[AttemptRecord],
        mut held: Vec<OwnedSemaphorePermit>,
    ) {
        let room = in_flight.available_permits() + held.len();
        let claim = ClaimRequest {
            owner: &self.owner,
            now_ms: unix_ms(),
            lease_ms,
            limit: room,
            per_platform: self.settings.max_concurrent_per_platform,
        };
        let events = match self.outbox.record_and_claim(records, claim).await {
            Ok(events) => events,
            Err(error) => {
                tracing::warn!(%error, attempts = records.len(), "recording webhook attempts or claiming due ones failed");
                return;
            }
        };
        for event in events {
            // The loop is the only taker of permits, and it claimed no more than `room`.
            let permit = match held.pop() {
                Some(permit) => permit,
                None => match Arc::clone(in_flight).try_acquire_owned() {
                    Ok(permit) => permit,
                    Err(_) => return,
                },
            };
            let this = Arc::clone(self);
            let finished = finished.clone();
            tokio::spawn(async move {
                let record = this.attempt(event).await;
                let _ = finished.send((record, permit));
            });
        }
    }

    /// Delivers one event and records what happened.
    async fn attempt(&self, event: WebhookEvent) -> AttemptRecord {
        let started_at_ms = unix_ms();
        let started = Instant::now();
        let delivery = self.sender.deliver(&event, started_at_ms / 1000).await;
        let latency_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let attempts = event.attempts.saturating_add(1);
        let (outcome, status_code, error) = match delivery {
            Delivery::Delivered { status } => (AttemptOutcome::Delivered, Some(status), None),
            Delivery::Failed { status, error } => {
                let next = self.policy.after_failure(attempts, event.horizon_from_ms, unix_ms(), rand::random::<f64>());
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
                error = error.as_deref().unwrap_or_default(), retry_in_ms = at - unix_ms(), "webhook delivery failed; will retry"
            ),
            (AttemptOutcome::Dead, error) => tracing::error!(
                event = %event.id, order = %event.order_id, url = %event.target.url, attempts, status = ?status_code,
                error = error.as_deref().unwrap_or_default(), "webhook dead-lettered (`ucpd webhooks retry` sends it again, or its order's latest event if the order changed since)"
            ),
        }
        AttemptRecord {
            event_id: event.id.clone(),
            owner: self.owner.clone(),
            started_at_ms,
            latency_ms,
            status_code,
            error,
            outcome,
        }
    }
}
