//! `[store]`: how the embedded SQLite store writes.

use serde::{Deserialize, Serialize};

use super::ConfigError;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSettings {
    /// At most this many concurrent write transactions share one commit (and one fsync) of
    /// the group commit; each is still acknowledged only after its commit is on disk. 1 turns
    /// sharing off: one fsync per write.
    pub group_commit_max_jobs: usize,
    /// Memory for catalog products as served (parsed, rendered, with get_product's default
    /// view), in MiB, weighed by what they measurably cost (about 23 KB for a product of three
    /// or four variants). More keeps more of a large catalog hot; each MiB is RSS.
    pub catalog_cache_mb: u64,
    /// The longest a request waits for the database, in milliseconds: for a reader connection
    /// and its read to finish (SQLite stops the read at the deadline), or for the writer to
    /// begin its write (one not begun by then is dropped unwritten). Past it the request is
    /// answered 503 `unavailable`, retryable, with nothing half-written; a write the writer has
    /// begun is always waited for, so its outcome is never in doubt.
    pub wait_timeout_ms: u64,
}

impl Default for StoreSettings {
    fn default() -> StoreSettings {
        StoreSettings {
            group_commit_max_jobs: 256,
            catalog_cache_mb: 44,
            wait_timeout_ms: ucp_store::DEFAULT_WAIT.as_millis() as u64,
        }
    }
}

impl StoreSettings {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=4096).contains(&self.group_commit_max_jobs) {
            return Err(ConfigError("store.group_commit_max_jobs must be between 1 and 4096".into()));
        }
        if !(1..=1 << 20).contains(&self.catalog_cache_mb) {
            return Err(ConfigError("store.catalog_cache_mb must be between 1 and 1048576".into()));
        }
        if !(10..=600_000).contains(&self.wait_timeout_ms) {
            return Err(ConfigError("store.wait_timeout_ms must be between 10 and 600000".into()));
        }
        Ok(())
    }
}
