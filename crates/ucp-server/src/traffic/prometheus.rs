//! `/metrics` in the Prometheus text format, through `metrics-exporter-prometheus`: a recorder
//! of our own (not the process-global one, so every server in a process has its own), the
//! latency histograms fed on every call, and the stored counters set to their totals when
//! scraped (so they survive restarts and equal what the console shows).

use std::time::Duration;

use metrics::{Counter, Gauge, Histogram, Key, Label, Level, Metadata, Recorder};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle, PrometheusRecorder};
use ucp_domain::commerce::Overdue;
use ucp_domain::store::{TrafficCount, TrafficKind};
use ucp_domain::webhook::Backlog;

use crate::clock::unix_ms;
use crate::operations::Operation;

const LATENCY: &str = "ucpd_operation_duration_seconds";
const CALLS: &str = "ucpd_operation_calls_total";
const FUNNEL: &str = "ucpd_funnel_events_total";
const ORDERS: &str = "ucpd_orders_placed_total";
const STORE_UP: &str = "ucpd_store_up";
const SCHEMA: &str = "ucpd_store_schema_version";
const SCHEMA_EXPECTED: &str = "ucpd_store_schema_version_expected";
const WEBHOOK_BACKLOG: &str = "ucpd_webhook_backlog";
const WEBHOOK_OLDEST: &str = "ucpd_webhook_oldest_pending_seconds";
const IN_DOUBT: &str = "ucpd_payments_in_doubt";
const IN_DOUBT_OLDEST: &str = "ucpd_payments_in_doubt_oldest_seconds";
const REFUNDS_PENDING: &str = "ucpd_refunds_pending";
const REFUNDS_PENDING_OLDEST: &str = "ucpd_refunds_pending_oldest_seconds";
const REFUNDS_ABANDONED: &str = "ucpd_refunds_abandoned";

/// Latency buckets, seconds: sub-millisecond catalog reads to multi-second payments.
const BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

static METADATA: Metadata<'static> = Metadata::new("ucpd", Level::INFO, Some(module_path!()));

/// The store's state at scrape time.
#[derive(Debug, Clone, Copy)]
pub struct StoreHealth {
    pub up: bool,
    pub schema: Option<(i64, i64)>,
}

/// What waits to be settled, each `None` when the store did not answer for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outstanding {
    pub backlog: Option<Backlog>,
    pub charges: Option<Overdue>,
    pub refunds: Option<Overdue>,
    /// Abandoned refunds waiting for the merchant to record or dismiss them.
    pub abandoned: Option<u64>,
}

/// The recorder and the per-operation latency histograms.
pub struct Exporter {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    latency: Vec<Histogram>,
}

impl Exporter {
    pub fn new() -> Exporter {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(LATENCY.into()), BUCKETS)
            .map(PrometheusBuilder::build_recorder)
            .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
        let handle = recorder.handle();
        let describe = |name: &'static str, text: &'static str| {
            recorder.describe_counter(name.into(), None, text.into());
        };
        describe(CALLS, "Operation calls by platform, operation and outcome (ok or the error code).");
        describe(FUNNEL, "Purchase funnel steps by platform: search, cart created, checkout created.");
        describe(ORDERS, "Orders placed, by platform.");
        recorder.describe_histogram(LATENCY.into(), Some(metrics::Unit::Seconds), "Operation latency.".into());
        recorder.describe_gauge(STORE_UP.into(), None, "1 when the store answered the scrape's check.".into());
        recorder.describe_gauge(SCHEMA.into(), None, "The store's schema version.".into());
        recorder.describe_gauge(SCHEMA_EXPECTED.into(), None, "The schema version this build expects.".into());
        recorder.describe_gauge(
            WEBHOOK_BACKLOG.into(),
            None,
            "Order webhook events not delivered, by status (pending, dead).".into(),
        );
        recorder.describe_gauge(
            WEBHOOK_OLDEST.into(),
            Some(metrics::Unit::Seconds),
            "Age of the oldest pending order webhook event (0 when none is pending).".into(),
        );
        recorder.describe_gauge(
            IN_DOUBT.into(),
            None,
            "Checkouts whose charge has waited longer than payments.recovery_after_secs for an outcome (the \
             processor cannot say, or the store cannot record the order); each may hold the buyer's money."
                .into(),
        );
        recorder.describe_gauge(
            IN_DOUBT_OLDEST.into(),
            Some(metrics::Unit::Seconds),
            "Age of the oldest charge in doubt (0 when there is none).".into(),
        );
        recorder.describe_gauge(
            REFUNDS_PENDING.into(),
            None,
            "Merchants' refunds not recorded on their order after payments.recovery_after_secs (the processor did \
             not answer, or the store could not record); the sweeper keeps asking for 12 hours, then abandons them."
                .into(),
        );
        recorder.describe_gauge(
            REFUNDS_PENDING_OLDEST.into(),
            Some(metrics::Unit::Seconds),
            "Age of the oldest pending refund (0 when there is none).".into(),
        );
        recorder.describe_gauge(
            REFUNDS_ABANDONED.into(),
            None,
            "Merchants' refunds abandoned and not reconciled: each may or may not have been made, and waits for the \
             merchant to record it (made) or dismiss it (not made) after asking the processor (ucpd orders refunds)."
                .into(),
        );
        let latency = Operation::ALL
            .iter()
            .map(|operation| {
                let key = Key::from_parts(LATENCY, vec![Label::new("operation", operation.name())]);
                recorder.register_histogram(&key, &METADATA)
            })
            .collect();
        Exporter { recorder, handle, latency }
    }

    pub(super) fn latency(&self, index: usize, elapsed: Duration) {
        if let Some(histogram) = self.latency.get(index) {
            histogram.record(elapsed.as_secs_f64());
        }
    }

    pub(super) fn upkeep(&self) {
        self.handle.run_upkeep();
    }

    fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.recorder.register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    fn gauge(&self, name: &'static str) -> Gauge {
        self.recorder.register_gauge(&Key::from_static_name(name), &METADATA)
    }

    /// The text exposition: stored totals, orders per platform, store health, what waits to
    /// be settled (when the store answered for it), latencies.
    pub fn render(
        &self,
        totals: &[TrafficCount],
        orders: &[(String, u64)],
        health: StoreHealth,
        outstanding: Outstanding,
    ) -> String {
        for total in totals {
            let platform = Label::new("platform", total.platform.clone());
            match total.kind {
                TrafficKind::Call => self
                    .counter(
                        CALLS,
                        vec![
                            platform,
                            Label::new("operation", total.name.clone()),
                            Label::new("outcome", total.outcome.clone()),
                        ],
                    )
                    .absolute(total.count),
                TrafficKind::Funnel => {
                    self.counter(FUNNEL, vec![platform, Label::new("step", total.name.clone())]).absolute(total.count)
                }
            }
        }
        for (platform, count) in orders {
            self.counter(ORDERS, vec![Label::new("platform", platform.clone())]).absolute(*count);
        }
        self.gauge(STORE_UP).set(if health.up { 1.0 } else { 0.0 });
        if let Some((current, expected)) = health.schema {
            self.gauge(SCHEMA).set(current as f64);
            self.gauge(SCHEMA_EXPECTED).set(expected as f64);
        }
        if let Some(charges) = outstanding.charges {
            self.gauge(IN_DOUBT).set(charges.count as f64);
            self.gauge(IN_DOUBT_OLDEST).set(charges.oldest_secs as f64);
        }
        if let Some(refunds) = outstanding.refunds {
            self.gauge(REFUNDS_PENDING).set(refunds.count as f64);
            self.gauge(REFUNDS_PENDING_OLDEST).set(refunds.oldest_secs as f64);
        }
        if let Some(abandoned) = outstanding.abandoned {
            self.gauge(REFUNDS_ABANDONED).set(abandoned as f64);
        }
        if let Some(backlog) = outstanding.backlog {
            let by_status = |status: &'static str| {
                self.recorder
                    .register_gauge(&Key::from_parts(WEBHOOK_BACKLOG, vec![Label::new("status", status)]), &METADATA)
            };
            by_status("pending").set(backlog.pending as f64);
            by_status("dead").set(backlog.dead as f64);
            let age_ms = backlog.oldest_pending_ms.map_or(0, |oldest| unix_ms().saturating_sub(oldest).max(0));
            self.gauge(WEBHOOK_OLDEST).set(age_ms as f64 / 1000.0);
        }
        self.handle.render()
    }
}

impl Default for Exporter {
    fn default() -> Exporter {
        Exporter::new()
    }
}
