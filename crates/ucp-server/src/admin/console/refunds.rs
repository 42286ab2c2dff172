//! The refunds page: the refunds asked of the processor, newest first (at most 100), their
//! keys and states, and for each abandoned one a form that records it on its order once the
//! merchant found it made at the processor (`Commerce::record_refund_by_hand`: no second
//! processor call).

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;

use askama::Template;
use ucp_domain::commerce::OrderOutcome;
use ucp_domain::store::{MAX_REFUND_PAGE, RefundEnd, RefundState, StoredRefund};

use super::views::{self, Frame, Section, render, timestamp};
use super::{Session, html};
use crate::state::AppState;

struct RefundRow {
    key: String,
    order_id: String,
    order_href: String,
    amount: i64,
    state: &'static str,
    request: &'static str,
    created_at: String,
    /// The record form's target, for an abandoned refund.
    record: Option<String>,
}

impl RefundRow {
    fn of(refund: StoredRefund) -> RefundRow {
        let intent = refund.intent;
        let abandoned = refund.state == RefundState::Ended(RefundEnd::Abandoned);
        RefundRow {
            record: abandoned.then(|| {
                format!(
                    "/admin/refunds/{}/record",
                    percent_encoding::utf8_percent_encode(&intent.key, super::actions::SEGMENT)
                )
            }),
            order_href: super::actions::order_href(&intent.order_id),
            key: intent.key,
            order_id: intent.order_id,
            amount: intent.amount,
            state: refund.state.as_str(),
            request: intent.action.name(),
            created_at: timestamp(intent.created_at),
        }
    }
}

#[derive(Template)]
#[template(path = "console/refunds.html", config = "templates/askama.toml")]
struct RefundsPage {
    frame: Frame,
    refunds: Vec<RefundRow>,
}

pub(super) async fn list(State(state): State<AppState>, Extension(session): Extension<Session>) -> Response {
    let refunds = match views::loaded(&state, "listing refunds", state.core.refunds(None, MAX_REFUND_PAGE)).await {
        Ok(refunds) => refunds,
        Err(page) => return page,
    };
    let page = RefundsPage {
        frame: Frame::new(&state, Section::Refunds, Some(&session)),
        refunds: refunds.into_iter().map(RefundRow::of).collect(),
    };
    html(StatusCode::OK, render(&page))
}

/// Records an abandoned refund on its order, then shows the order.
pub(super) async fn record(State(state): State<AppState>, Path(key): Path<String>) -> Response {
    match state.core.record_refund_by_hand(&key).await {
        Ok(OrderOutcome::Changed(order)) => {
            tracing::info!(target: "ucpd::audit", order = %order.stored.id, key, "console recorded a refund by hand");
            super::see_other(&super::actions::order_href(&order.stored.id))
        }
        Ok(OrderOutcome::NotFound) => {
            views::message(&state, StatusCode::NOT_FOUND, "Not found", "There is no such refund, or its order is gone.")
        }
        Ok(OrderOutcome::Refused(refusal)) => {
            views::message(&state, StatusCode::UNPROCESSABLE_ENTITY, "Not done", &refusal.to_string())
        }
        Err(failure) => views::unavailable(&state, &failure),
    }
}
