//! Time as an input: the system clock plus an offset tests can move forward, so expiry is
//! tested without sleeping.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

#[derive(Debug, Clone, Default)]
pub struct Clock {
    offset_secs: Arc<AtomicI64>,
}

impl Clock {
    /// Unix seconds now.
    pub fn now(&self) -> i64 {
        time::OffsetDateTime::now_utc().unix_timestamp() + self.offset_secs.load(Ordering::SeqCst)
    }

    /// Moves this clock (and every clone of it) forward.
    pub fn advance(&self, seconds: i64) {
        self.offset_secs.fetch_add(seconds, Ordering::SeqCst);
    }
}

/// Unix milliseconds now, by the system clock (timestamps of webhook events and attempts,
/// which the store compares across instances, so never offset).
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl ucp_domain::commerce::Clock for Clock {
    fn now(&self) -> i64 {
        Clock::now(self)
    }
}
