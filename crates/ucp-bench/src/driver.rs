//! The closed loop: an HTTP client sized for the load, `concurrency` workers run for a warm-up
//! and then the measured duration, and what each worker reports.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::cli::CommonArgs;
use crate::stats::{Latencies, Tally};

pub(crate) fn client(common: &CommonArgs) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(common.concurrency * 2)
        .tcp_nodelay(true)
        .timeout(common.timeout)
        .build()?)
}

/// What one worker measured.
#[derive(Default)]
pub(crate) struct WorkerReport {
    /// Latency per call type (create, update, complete; or the one operation).
    pub(crate) latencies: BTreeMap<&'static str, Latencies>,
    /// Successful units: completed orders, or good responses.
    pub(crate) ok: u64,
    /// Failures by "call:kind".
    pub(crate) errors: Tally,
    /// Response bytes (catalog and ping).
    pub(crate) bytes: u64,
}

impl WorkerReport {
    pub(crate) fn merge(&mut self, other: WorkerReport) {
        for (name, latencies) in other.latencies {
            self.latencies.entry(name).or_default().extend(latencies);
        }
        self.ok += other.ok;
        self.errors.merge(other.errors);
        self.bytes += other.bytes;
    }

    pub(crate) fn record(&mut self, call: &'static str, elapsed: Duration) {
        self.latencies.entry(call).or_default().push(elapsed);
    }
}

/// Runs `concurrency` copies of `worker` for warm-up (discarded) then the measured duration.
/// Workers stop starting new units at the deadline and finish the one in flight.
pub(crate) async fn drive<F, Fut>(common: &CommonArgs, worker: F) -> (WorkerReport, Duration)
where
    F: Fn(usize, Instant) -> Fut,
    Fut: std::future::Future<Output = WorkerReport> + Send + 'static,
{
    if !common.warmup.is_zero() {
        let deadline = Instant::now() + common.warmup;
        let handles: Vec<_> = (0..common.concurrency).map(|index| tokio::spawn(worker(index, deadline))).collect();
        for handle in handles {
            let _ = handle.await;
        }
    }
    let start = Instant::now();
    let deadline = start + common.duration;
    let handles: Vec<_> = (0..common.concurrency).map(|index| tokio::spawn(worker(index + 1000, deadline))).collect();
    let mut total = WorkerReport::default();
    for handle in handles {
        match handle.await {
            Ok(report) => total.merge(report),
            Err(error) => total.errors.add(format!("worker:panic:{error}")),
        }
    }
    (total, start.elapsed())
}

/// A small xorshift generator, seeded per worker (no dependency; quality is irrelevant here).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}
