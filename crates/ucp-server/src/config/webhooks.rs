//! `[webhooks]`: how order webhooks are delivered (order.md §3; checklist 153-158): the
//! retry schedule and its horizon, timeouts, concurrency, leases, and how long finished events
//! are kept.

use serde::{Deserialize, Serialize};

use super::ConfigError;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookSettings {
    /// Run the dispatcher in this instance. Events are recorded either way (another instance
    /// sharing the database may deliver them).
    pub enabled: bool,
    /// How long one delivery may take (connect, send, answer), in milliseconds.
    pub timeout_ms: u64,
    /// The delay after the first failed attempt, in milliseconds; it doubles after each
    /// further failure, with jitter (between half and all of it).
    pub initial_backoff_ms: u64,
    /// The longest delay between two attempts, in seconds.
    pub max_backoff_secs: u64,
    /// An event not delivered this long after it was created is dead-lettered, in seconds
    /// (`ucpd webhooks retry` revives it with a fresh horizon, or, when its order changed since, its
    /// order's latest event in its place).
    pub horizon_secs: u64,
    /// Deliveries to one platform at once, across every instance sharing the database.
    pub max_concurrent_per_platform: usize,
    /// Deliveries at once in this instance.
    pub max_in_flight: usize,
    /// How often the outbox is checked for due events, in milliseconds.
    pub poll_interval_ms: u64,
    /// After a wake-up (a new event committed here, a delivery finished), the dispatcher
    /// waits this long, in milliseconds, so one lease and one log write cover what arrived
    /// meanwhile instead of one each; 0 turns the wait off.
    pub batch_window_ms: u64,
    /// How long a claimed event is this instance's; then another instance may take it over
    /// (this one died), in seconds. Must exceed `timeout_ms`.
    pub lease_secs: u64,
    /// How long a finished event (delivered, or dead-lettered) is kept with its attempts and
    /// order snapshot, counted from its creation (or its revival by `ucpd webhooks retry`), in
    /// seconds; then the session sweeper (`checkout.sweep_interval_secs`) deletes it. Longer than
    /// `horizon_secs`, so a dead-lettered event is kept for a while after it dies and can still
    /// be revived; 0 keeps every event. A pending event is never deleted.
    pub retention_secs: u64,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            enabled: true,
            timeout_ms: 10_000,
            initial_backoff_ms: 1_000,
            max_backoff_secs: 3_600,
            horizon_secs: 3 * 24 * 3_600,
            max_concurrent_per_platform: 32,
            max_in_flight: 64,
            poll_interval_ms: 200,
            batch_window_ms: 20,
            lease_secs: 60,
            retention_secs: 30 * 24 * 3_600,
        }
    }
}

impl WebhookSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if !(100..=120_000).contains(&self.timeout_ms) {
            return Err(ConfigError("webhooks.timeout_ms must be between 100 and 120000".into()));
        }
        if self.lease_secs.saturating_mul(1_000) <= self.timeout_ms {
            return Err(ConfigError("webhooks.lease_secs must be longer than webhooks.timeout_ms".into()));
        }
        if self.initial_backoff_ms == 0 || self.max_backoff_secs == 0 || self.horizon_secs == 0 {
            return Err(ConfigError(
                "webhooks.initial_backoff_ms, max_backoff_secs and horizon_secs must be at least 1".into(),
            ));
        }
        if self.max_concurrent_per_platform == 0 || self.max_in_flight == 0 {
            return Err(ConfigError(
                "webhooks.max_concurrent_per_platform and max_in_flight must be at least 1".into(),
            ));
        }
        if self.batch_window_ms > 1_000 {
            return Err(ConfigError("webhooks.batch_window_ms must be at most 1000".into()));
        }
        if self.retention_secs != 0 && self.retention_secs <= self.horizon_secs {
            return Err(ConfigError(
                "webhooks.retention_secs must be 0 (keep every event) or longer than webhooks.horizon_secs".into(),
            ));
        }
        if !(10..=60_000).contains(&self.poll_interval_ms) {
            return Err(ConfigError("webhooks.poll_interval_ms must be between 10 and 60000".into()));
        }
        Ok(())
    }

    /// The domain's retry schedule.
    pub fn retry_policy(&self) -> ucp_domain::webhook::RetryPolicy {
        let ms = |value: u64| i64::try_from(value).unwrap_or(i64::MAX);
        ucp_domain::webhook::RetryPolicy {
            initial_backoff_ms: ms(self.initial_backoff_ms),
            max_backoff_ms: ms(self.max_backoff_secs.saturating_mul(1_000)),
            horizon_ms: ms(self.horizon_secs.saturating_mul(1_000)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_hold_and_a_lease_must_outlast_a_delivery() {
        let defaults = WebhookSettings::default();
        assert!(defaults.validate().is_ok());
        assert_eq!(defaults.retry_policy().horizon_ms, 259_200_000, "three days, as documented");
        let short_lease = WebhookSettings { lease_secs: 10, timeout_ms: 10_000, ..WebhookSettings::default() };
        assert!(short_lease.validate().unwrap_err().0.contains("lease_secs"));
        let no_cap = WebhookSettings { max_concurrent_per_platform: 0, ..WebhookSettings::default() };
        assert!(no_cap.validate().is_err());
        assert_eq!(defaults.retention_secs, 2_592_000, "thirty days, as documented");
        let before_the_horizon = WebhookSettings { retention_secs: 3_600, ..WebhookSettings::default() };
        assert!(before_the_horizon.validate().unwrap_err().0.contains("retention_secs"));
        let at_the_horizon = WebhookSettings { retention_secs: 259_200, ..WebhookSettings::default() };
        assert!(at_the_horizon.validate().is_err(), "a dead event would go as it dies");
        let forever = WebhookSettings { retention_secs: 0, ..WebhookSettings::default() };
        assert!(forever.validate().is_ok());
    }
}
