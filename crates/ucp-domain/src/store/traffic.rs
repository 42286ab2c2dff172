//! The traffic counters the console and `/metrics` read, in hourly cells.

use async_trait::async_trait;

use super::StoreError;

/// What a traffic counter counts: operation calls by outcome, or steps of the purchase funnel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrafficKind {
    Call,
    Funnel,
}

impl TrafficKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TrafficKind::Call => "call",
            TrafficKind::Funnel => "funnel",
        }
    }
}

/// One counter cell: how many `kind` events named `name` (an operation or a funnel step) with
/// `outcome` (`ok` or an error code; empty for the funnel) a platform had in one hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrafficCount {
    pub platform: String,
    pub kind: TrafficKind,
    pub name: String,
    pub outcome: String,
    /// Unix seconds / 3600; 0 in totals and in compacted history.
    pub hour: i64,
    pub count: u64,
}

/// The server's traffic counters, persisted in hourly cells so "the last day" and "the last
/// week" can be answered after a restart.
#[async_trait]
pub trait TrafficStore: Send + Sync + std::fmt::Debug {
    /// Adds each count to its cell (creating it), in one transaction.
    async fn add_traffic(&self, counts: &[TrafficCount]) -> Result<(), StoreError>;

    /// Sums per (platform, kind, name, outcome) over the cells from `since_hour` on (every
    /// cell, compacted history included, when `None`); `hour` is 0 in the answer.
    async fn traffic_totals(&self, since_hour: Option<i64>) -> Result<Vec<TrafficCount>, StoreError>;

    /// Folds the hourly cells before `before_hour` into one history cell (hour 0) per counter,
    /// so the table stays bounded while all-time totals stay right; returns how many rows went.
    async fn compact_traffic(&self, before_hour: i64) -> Result<u64, StoreError>;
}
