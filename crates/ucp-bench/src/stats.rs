//! Latency samples and failure counts. Samples are kept whole (microseconds, a few hundred
//! thousand at most per run) and sorted once, so percentiles are exact.

use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, Default)]
pub(crate) struct Latencies {
    micros: Vec<u32>,
}

impl Latencies {
    pub(crate) fn push(&mut self, elapsed: Duration) {
        self.micros.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
    }

    pub(crate) fn extend(&mut self, other: Latencies) {
        self.micros.extend(other.micros);
    }

    pub(crate) fn sort(&mut self) {
        self.micros.sort_unstable();
    }

    pub(crate) fn len(&self) -> usize {
        self.micros.len()
    }

    /// The nearest-rank quantile in milliseconds (call `sort` first); 0 without samples.
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        if self.micros.is_empty() {
            return 0.0;
        }
        let rank = ((q * self.micros.len() as f64).ceil() as usize).clamp(1, self.micros.len());
        f64::from(self.micros[rank - 1]) / 1000.0
    }

    pub(crate) fn max_ms(&self) -> f64 {
        self.micros.iter().max().map_or(0.0, |&m| f64::from(m) / 1000.0)
    }
}

/// Failures counted by kind ("call:kind").
#[derive(Debug, Default)]
pub(crate) struct Tally {
    counts: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn add(&mut self, kind: String) {
        *self.counts.entry(kind).or_default() += 1;
    }

    pub(crate) fn merge(&mut self, other: Tally) {
        for (kind, count) in other.counts {
            *self.counts.entry(kind).or_default() += count;
        }
    }

    pub(crate) fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &u64)> {
        self.counts.iter()
    }

    /// `kind=count,kind=count` with no spaces ("-" when empty), for the BENCH_RESULT line.
    pub(crate) fn compact(&self) -> String {
        if self.counts.is_empty() {
            return "-".into();
        }
        self.counts
            .iter()
            .map(|(kind, count)| format!("{}={count}", kind.replace([' ', '='], "_")))
            .collect::<Vec<_>>()
            .join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let mut latencies = Latencies::default();
        for ms in 1..=100u64 {
            latencies.push(Duration::from_millis(ms));
        }
        latencies.sort();
        assert_eq!(latencies.quantile_ms(0.5), 50.0);
        assert_eq!(latencies.quantile_ms(0.99), 99.0);
        assert_eq!(latencies.max_ms(), 100.0);
        assert_eq!(Latencies::default().quantile_ms(0.5), 0.0);
    }

    #[test]
    fn tally_is_compact() {
        let mut tally = Tally::default();
        tally.add("create:out_of_stock".into());
        tally.add("create:out_of_stock".into());
        tally.add("complete:http 500".into());
        assert_eq!(tally.total(), 3);
        assert_eq!(tally.compact(), "complete:http_500=1,create:out_of_stock=2");
    }
}
