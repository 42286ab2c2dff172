//! `[idempotency]`: how long stored answers are replayed and how duplicates in flight wait
//! (security.md §4; checklist 79-84).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The least retention security.md §4 allows: a day.
const MIN_RETENTION_SECS: u64 = 24 * 60 * 60;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct IdempotencySettings {
    /// How long a state-changing call's answer is replayed for a retry with its key, in
    /// seconds (at least 86400; 48 h by default). Older records are swept.
    pub retention_secs: u64,
    /// How long a duplicate that arrives while the first call with its key still runs waits
    /// for that call's answer before it gets 409 with `retry_after`, in seconds (1-60).
    pub wait_secs: u64,
    /// After how many seconds a record still in progress counts as abandoned (its instance
    /// died), so an identical retry may run the call again (at least `wait_secs`).
    pub lease_secs: u64,
}

impl Default for IdempotencySettings {
    fn default() -> Self {
        IdempotencySettings { retention_secs: 2 * MIN_RETENTION_SECS, wait_secs: 10, lease_secs: 120 }
    }
}

impl IdempotencySettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if self.retention_secs < MIN_RETENTION_SECS {
            return Err(ConfigError(format!(
                "idempotency.retention_secs must be at least {MIN_RETENTION_SECS} (24 h)"
            )));
        }
        if !(1..=60).contains(&self.wait_secs) {
            return Err(ConfigError("idempotency.wait_secs must be between 1 and 60".into()));
        }
        if self.lease_secs < self.wait_secs {
            return Err(ConfigError("idempotency.lease_secs must be at least idempotency.wait_secs".into()));
        }
        Ok(())
    }
}
