//! Probes and metrics: `/healthz` (the process answers), `/readyz` (the store answers within
//! a timeout and its schema is this build's), and `/metrics` (Prometheus text: the traffic
//! counters, latencies by operation, orders per platform, store health, the order
//! webhook backlog), which is behind the
//! admin key unless `[metrics] public = true`.

use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;
use crate::traffic::prometheus::{Outstanding, StoreHealth};

/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// `/healthz` and `/readyz`: public, tiny, never rate-limited (`layers::probe_stack`).
pub fn probes() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz)).route("/readyz", get(readyz))
}

/// `/metrics`, behind the admin key unless public (`layers::admin_stack`).
pub fn metrics(state: &AppState) -> Router<AppState> {
    Router::new().route("/metrics", get(scrape)).layer(from_fn_with_state(state.clone(), gate))
}

fn text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/plain; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], body)
        .into_response()
}

async fn healthz() -> Response {
    text(StatusCode::OK, "ok\n".into())
}

async fn store_health(state: &AppState) -> StoreHealth {
    match tokio::time::timeout(READY_TIMEOUT, state.core.store_ready()).await {
        Ok(Ok(status)) => StoreHealth { up: true, schema: Some((status.current, status.expected)) },
        Ok(Err(error)) => {
            tracing::warn!(%error, "readiness: the store failed");
            StoreHealth { up: false, schema: None }
        }
        Err(_) => {
            tracing::warn!("readiness: the store did not answer in time");
            StoreHealth { up: false, schema: None }
        }
    }
}

async fn readyz(State(state): State<AppState>) -> Response {
    match store_health(&state).await {
        StoreHealth { up: true, schema: Some((current, expected)) } if current == expected => {
            text(StatusCode::OK, "ready\n".into())
        }
        StoreHealth { up: true, schema: Some((current, expected)) } => text(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: the store's schema is version {current}, this build expects {expected}\n"),
        ),
        StoreHealth { .. } => text(StatusCode::SERVICE_UNAVAILABLE, "not ready: the store does not answer\n".into()),
    }
}

/// The admin key unless `[metrics] public`; 404 while the admin surface is off.
async fn gate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if state.settings.metrics.public {
        return next.run(request).await;
    }
    crate::admin::require_key(State(state), request, next).await
}

async fn scrape(State(state): State<AppState>) -> Response {
    let health = store_health(&state).await;
    let totals = match state.traffic.totals(None).await {
        Ok(totals) => totals,
        Err(error) => {
            tracing::warn!(%error, "metrics: reading the traffic counters failed");
            Vec::new()
        }
    };
    let orders = match tokio::time::timeout(READY_TIMEOUT, state.core.orders_by_platform(None)).await {
        Ok(Ok(orders)) => orders,
        _ => Vec::new(),
    };
    let backlog = within(state.outbox.backlog(), "the webhook backlog").await;
    let charges = within(state.core.charges_in_doubt(), "the charges in doubt").await;
    let refunds = within(state.core.refunds_pending(), "the pending refunds").await;
    let abandoned = within(state.core.refunds_abandoned(), "the abandoned refunds").await;
    let outstanding = Outstanding { backlog, charges, refunds, abandoned };
    let body = state.traffic.exporter().render(&totals, &orders, health, outstanding);
    (StatusCode::OK, [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], body).into_response()
}

/// What `read` answers within [`READY_TIMEOUT`], or `None` (a failure logged as reading `what`).
async fn within<T, E: std::fmt::Display>(read: impl Future<Output = Result<T, E>>, what: &str) -> Option<T> {
    match tokio::time::timeout(READY_TIMEOUT, read).await {
        Ok(Ok(value)) => Some(value),
        Ok(Err(error)) => {
            tracing::warn!(%error, "metrics: reading {what} failed");
            None
        }
        Err(_) => None,
    }
}
