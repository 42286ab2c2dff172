//! The refunds page: the refunds asked of the processor, newest first (100 a page), their
//! keys and states, and for each abandoned one a form that records it on its order once the
//! merchant found it made at the processor (`Commerce::record_refund_by_hand`: no second
//! processor call) and one that dismisses it when the processor did not make it
//! (`Commerce::dismiss_refund`).

use axum::Extension;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use askama::Template;
use serde::Deserialize;
use ucp_domain::commerce::{Dismissal, OrderOutcome, RefundPage};
use ucp_domain::store::{MAX_REFUND_PAGE, RefundEnd, RefundList, RefundState, StoredRefund};

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
    /// The record form's target, for an abandoned or dismissed refund.
    record: Option<String>,
    /// The dismiss form's target, for an abandoned refund.
    dismiss: Option<String>,
}

impl RefundRow {
    fn of(refund: StoredRefund) -> RefundRow {
        let intent = refund.intent;
        let abandoned = refund.state == RefundState::Ended(RefundEnd::Abandoned);
        let dismissed = refund.state == RefundState::Ended(RefundEnd::Dismissed);
        let target = |what: &str| {
            format!(
                "/admin/refunds/{}/{what}",
                percent_encoding::utf8_percent_encode(&intent.key, super::actions::SEGMENT)
            )
        };
        RefundRow {
            record: (abandoned || dismissed).then(|| target("record")),
            dismiss: abandoned.then(|| target("dismiss")),
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
    /// The next page's address, after a full one.
    next: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ListQuery {
    /// Where the page starts: the previous page's "Older refunds" link.
    before: Option<String>,
}

pub(super) async fn list(
    State(state): State<AppState>,
    Extension(session): Extension<Session>,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let Query(query) = query.unwrap_or_default();
    let read = state.core.refunds(None, MAX_REFUND_PAGE, query.before.as_deref());
    let RefundList { refunds, next } = match views::loaded(&state, "listing refunds", read).await {
        Ok(RefundPage::Refunds(list)) => list,
        Ok(RefundPage::BadCursor) => {
            return views::message(&state, StatusCode::BAD_REQUEST, "Bad request", "There is no such page of refunds.");
        }
        Err(page) => return page,
    };
    let next = next.map(|cursor| format!("/admin/refunds?before={cursor}"));
    let page = RefundsPage {
        frame: Frame::new(&state, Section::Refunds, Some(&session)),
        refunds: refunds.into_iter().map(RefundRow::of).collect(),
        next,
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
            views::message(&state, super::actions::refusal_status(&refusal), "Not done", &refusal.to_string())
        }
        Err(failure) => views::unavailable(&state, &failure),
    }
}

/// Dismisses an abandoned refund the processor did not make, then shows the refunds.
pub(super) async fn dismiss(State(state): State<AppState>, Path(key): Path<String>) -> Response {
    match state.core.dismiss_refund(&key).await {
        Ok(Dismissal::Dismissed(refund)) => {
            tracing::info!(target: "ucpd::audit", order = %refund.intent.order_id, key, "console dismissed a refund");
            super::see_other("/admin/refunds")
        }
        Ok(Dismissal::NotFound) => {
            views::message(&state, StatusCode::NOT_FOUND, "Not found", "There is no such refund.")
        }
        Ok(Dismissal::Refused(refusal)) => {
            views::message(&state, StatusCode::CONFLICT, "Not done", &refusal.to_string())
        }
        Err(failure) => views::unavailable(&state, &failure),
    }
}
