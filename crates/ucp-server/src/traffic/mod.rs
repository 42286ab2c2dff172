//! Traffic counters (issue 9 item 4): calls and errors per platform and operation, latency
//! by operation, and the purchase funnel (search → cart → checkout) per platform.
//!
//! The hot path ([`Traffic::record_call`], [`Traffic::record_funnel`]) touches only atomics
//! behind a short read lock (never held across an await); the error path takes one
//! uncontended mutex. Counts accumulate as deltas and [`Traffic::flush`] adds them to the
//! store's hourly cells (every few seconds, and before a console page or `/metrics` reads
//! them), so they survive restarts and "the last day / week" can be answered. Memory is
//! bounded: at most [`MAX_PLATFORMS`] distinct platforms are tracked (later ones count as
//! [`OTHER_PLATFORM`]), operations are the fixed registry, outcomes are static error codes.
//! Orders placed are not counted here: they are the `orders` rows themselves.

pub mod prometheus;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ucp_domain::store::{StoreError, TrafficCount, TrafficKind, TrafficStore};

use crate::operations::Operation;

pub use prometheus::Exporter;

/// The most platforms tracked one by one; the rest share [`OTHER_PLATFORM`].
pub const MAX_PLATFORMS: usize = 100;
/// Where platforms past the cap are counted.
pub const OTHER_PLATFORM: &str = "(other platforms)";
/// Where calls that named no platform are counted.
pub const NO_PLATFORM: &str = "(none)";
/// The longest platform name kept (profile URLs are short; a longer one is cut).
const MAX_PLATFORM_CHARS: usize = 200;
/// Hourly cells older than this are folded into the history cell.
pub const KEEP_HOURS: i64 = 24 * 8;
/// The outcome of a successful call.
pub const OK: &str = "ok";

const OPERATIONS: usize = Operation::ALL.len();

/// A step of the purchase funnel that the dispatcher sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunnelStep {
    Search,
    Cart,
    Checkout,
}

impl FunnelStep {
    pub const ALL: [FunnelStep; 3] = [FunnelStep::Search, FunnelStep::Cart, FunnelStep::Checkout];

    pub fn name(self) -> &'static str {
        match self {
            FunnelStep::Search => "search",
            FunnelStep::Cart => "cart",
            FunnelStep::Checkout => "checkout",
        }
    }

    fn index(self) -> usize {
        match self {
            FunnelStep::Search => 0,
            FunnelStep::Cart => 1,
            FunnelStep::Checkout => 2,
        }
    }
}

/// The funnel step a successful call reached, if any: a search, or a cart or checkout that the
/// call created (an idempotent replay never gets here: it does not run the operation).
pub fn funnel_step(operation: Operation, created: bool) -> Option<FunnelStep> {
    match operation {
        Operation::SearchCatalog => Some(FunnelStep::Search),
        Operation::CreateCart if created => Some(FunnelStep::Cart),
        Operation::CreateCheckout if created => Some(FunnelStep::Checkout),
        _ => None,
    }
}

fn index_of(operation: Operation) -> usize {
    Operation::ALL.iter().position(|candidate| *candidate == operation).unwrap_or(0)
}

/// The pending counts of one platform.
#[derive(Debug, Default)]
struct Cells {
    ok: [AtomicU64; OPERATIONS],
    funnel: [AtomicU64; 3],
    /// Errors by (operation index, outcome code): rarer than successes, so a mutex.
    errors: Mutex<HashMap<(usize, Box<str>), u64>>,
}

/// The server's traffic counters.
pub struct Traffic {
    platforms: RwLock<HashMap<Box<str>, Arc<Cells>>>,
    other: Arc<Cells>,
    store: Arc<dyn TrafficStore>,
    exporter: Exporter,
    /// The hour cell the last compaction folded up to.
    compacted: std::sync::atomic::AtomicI64,
}

impl std::fmt::Debug for Traffic {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Traffic").finish_non_exhaustive()
    }
}

/// The current hour cell (Unix seconds / 3600).
pub fn hour_of(unix_seconds: i64) -> i64 {
    unix_seconds.div_euclid(3600)
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or(0)
}

impl Traffic {
    pub fn new(store: Arc<dyn TrafficStore>) -> Traffic {
        Traffic {
            platforms: RwLock::new(HashMap::new()),
            other: Arc::default(),
            store,
            exporter: Exporter::new(),
            compacted: std::sync::atomic::AtomicI64::new(0),
        }
    }

    pub fn exporter(&self) -> &Exporter {
        &self.exporter
    }

    /// The cells of `platform`. Only `admit`ted platforms (a call that succeeded: the
    /// profile was fetched and negotiated) take one of the [`MAX_PLATFORMS`] places, so
    /// failing calls with made-up profile URLs cannot crowd the real platforms out.
    fn cells(&self, platform: Option<&str>, admit: bool) -> Arc<Cells> {
        let name = platform.filter(|name| !name.is_empty()).unwrap_or(NO_PLATFORM);
        let name = match name.char_indices().nth(MAX_PLATFORM_CHARS) {
            Some((end, _)) => &name[..end],
            None => name,
        };
        if let Ok(platforms) = self.platforms.read()
            && let Some(cells) = platforms.get(name)
        {
            return Arc::clone(cells);
        }
        if !admit {
            return Arc::clone(&self.other);
        }
        let Ok(mut platforms) = self.platforms.write() else { return Arc::clone(&self.other) };
        if let Some(cells) = platforms.get(name) {
            return Arc::clone(cells);
        }
        if platforms.len() >= MAX_PLATFORMS {
            return Arc::clone(&self.other);
        }
        let cells = Arc::<Cells>::default();
        platforms.insert(name.into(), Arc::clone(&cells));
        cells
    }

    /// One call of `operation` by `platform` (its profile URL, if it named one): `Ok` or the
    /// error's code, and how long it took.
    pub fn record_call(
        &self,
        platform: Option<&str>,
        operation: Operation,
        outcome: Result<(), &'static str>,
        elapsed: Duration,
    ) {
        let index = index_of(operation);
        self.exporter.latency(index, elapsed);
        let cells = self.cells(platform, outcome.is_ok());
        match outcome {
            Ok(()) => {
                cells.ok[index].fetch_add(1, Ordering::Relaxed);
            }
            Err(code) => {
                if let Ok(mut errors) = cells.errors.lock() {
                    *errors.entry((index, code.into())).or_default() += 1;
                }
            }
        }
    }

    /// One step of the funnel reached by `platform`.
    pub fn record_funnel(&self, platform: &str, step: FunnelStep) {
        self.cells(Some(platform), true).funnel[step.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// Takes every pending count (leaving zeros) as store cells of `hour`.
    fn drain(&self, hour: i64) -> Vec<TrafficCount> {
        let mut platforms: Vec<(String, Arc<Cells>)> = match self.platforms.read() {
            Ok(platforms) => platforms.iter().map(|(name, cells)| (name.to_string(), Arc::clone(cells))).collect(),
            Err(_) => Vec::new(),
        };
        platforms.push((OTHER_PLATFORM.to_owned(), Arc::clone(&self.other)));
        let mut counts = Vec::new();
        let cell = |platform: &str, kind, name: &str, outcome: &str, count| TrafficCount {
            platform: platform.to_owned(),
            kind,
            name: name.to_owned(),
            outcome: outcome.to_owned(),
            hour,
            count,
        };
        for (platform, cells) in &platforms {
            for (index, operation) in Operation::ALL.iter().enumerate() {
                let count = cells.ok[index].swap(0, Ordering::Relaxed);
                if count > 0 {
                    counts.push(cell(platform, TrafficKind::Call, operation.name(), OK, count));
                }
            }
            for step in FunnelStep::ALL {
                let count = cells.funnel[step.index()].swap(0, Ordering::Relaxed);
                if count > 0 {
                    counts.push(cell(platform, TrafficKind::Funnel, step.name(), "", count));
                }
            }
            let errors = cells.errors.lock().map(|mut errors| std::mem::take(&mut *errors)).unwrap_or_default();
            for ((index, code), count) in errors {
                counts.push(cell(platform, TrafficKind::Call, Operation::ALL[index].name(), &code, count));
            }
        }
        counts
    }

    /// Puts counts that could not be stored back, to go with the next flush.
    fn restore(&self, counts: Vec<TrafficCount>) {
        for count in counts {
            let cells = self.cells(Some(&count.platform), true);
            let operation = Operation::ALL.iter().position(|operation| operation.name() == count.name);
            match (count.kind, operation) {
                (TrafficKind::Call, Some(index)) if count.outcome == OK => {
                    cells.ok[index].fetch_add(count.count, Ordering::Relaxed);
                }
                (TrafficKind::Call, Some(index)) => {
                    if let Ok(mut errors) = cells.errors.lock() {
                        *errors.entry((index, count.outcome.as_str().into())).or_default() += count.count;
                    }
                }
                (TrafficKind::Funnel, _) => {
                    if let Some(step) = FunnelStep::ALL.iter().find(|step| step.name() == count.name) {
                        cells.funnel[step.index()].fetch_add(count.count, Ordering::Relaxed);
                    }
                }
                (TrafficKind::Call, None) => {}
            }
        }
    }

    /// Adds the pending counts to the store; on failure they stay pending.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let counts = self.drain(hour_of(now_seconds()));
        if counts.is_empty() {
            return Ok(());
        }
        match tokio::time::timeout(STORE_TIMEOUT, self.store.add_traffic(&counts)).await {
            Ok(Ok(())) => Ok(()),
            // Its outcome unknown, the counts are not put back: counting twice is worse.
            Ok(Err(error @ StoreError::InDoubt(_))) => Err(error),
            Ok(Err(error)) => {
                self.restore(counts);
                Err(error)
            }
            Err(_) => {
                // The write may still land; counting twice is worse than losing a few seconds.
                Err(StoreError::InDoubt("storing traffic counters timed out; they may still be stored".into()))
            }
        }
    }

    /// Flushes, then sums the stored cells from `since_hour` on (everything when `None`).
    pub async fn totals(&self, since_hour: Option<i64>) -> Result<Vec<TrafficCount>, StoreError> {
        if let Err(error) = self.flush().await {
            tracing::warn!(%error, "flushing traffic counters failed");
        }
        tokio::time::timeout(STORE_TIMEOUT, self.store.traffic_totals(since_hour))
            .await
            .map_err(|_| StoreError::Unavailable("reading traffic counters timed out".into()))?
    }

    /// The periodic work: flush, fold old cells, drain the latency histograms.
    pub async fn tick(&self) {
        if let Err(error) = self.flush().await {
            tracing::warn!(%error, "flushing traffic counters failed");
        }
        let before = hour_of(now_seconds()) - KEEP_HOURS;
        if self.compacted.swap(before, Ordering::Relaxed) != before
            && let Err(error) = self.store.compact_traffic(before).await
        {
            tracing::warn!(%error, "compacting traffic counters failed");
        }
        self.exporter.upkeep();
    }
}

/// How long a counter read or write may take.
pub const STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// How often [`Traffic::tick`] runs.
pub const FLUSH_INTERVAL: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn platforms_past_the_cap_count_together_and_flushes_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(ucp_store::SqliteStore::open(&dir.path().join("t.db"), 1).unwrap());
        let traffic = Traffic::new(store);
        // A failing call takes no place: it counts with the rest until its platform has one.
        traffic.record_call(Some("https://made-up.example"), Operation::GetCart, Err("forbidden"), Duration::ZERO);
        traffic.record_call(None, Operation::GetCart, Ok(()), Duration::ZERO);
        for index in 0..MAX_PLATFORMS + 50 {
            let platform = format!("https://p{index}.example/profile.json");
            traffic.record_call(Some(&platform), Operation::SearchCatalog, Ok(()), Duration::from_millis(1));
            traffic.record_funnel(&platform, FunnelStep::Search);
        }
        traffic.flush().await.unwrap();
        traffic.record_funnel("https://p0.example/profile.json", FunnelStep::Search);
        let totals = traffic.totals(None).await.unwrap();
        let funnel = |platform: &str| {
            totals
                .iter()
                .find(|total| total.kind == TrafficKind::Funnel && total.platform == platform)
                .map(|total| total.count)
        };
        assert_eq!(funnel("https://p0.example/profile.json"), Some(2), "two flushes add up");
        assert_eq!(funnel(OTHER_PLATFORM), Some(51), "the 51 past the cap");
        let named = totals.iter().filter(|total| total.kind == TrafficKind::Funnel).count();
        assert_eq!(named, MAX_PLATFORMS, "99 named platforms and the rest together");
        assert!(totals.iter().any(|total| total.platform == NO_PLATFORM && total.outcome == OK));
        let error = totals.iter().find(|total| total.outcome == "forbidden").unwrap();
        assert_eq!((error.platform.as_str(), error.name.as_str(), error.count), (OTHER_PLATFORM, "get_cart", 1));
    }
}
