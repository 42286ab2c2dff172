//! The merchant's refunds for reconciling by hand, over the admin API: the list (every state,
//! or one, a page at a time), recording an abandoned refund the merchant found made at the
//! processor, and dismissing one it did not make. The rules are the core's
//! (`Commerce::refunds`, `Commerce::record_refund_by_hand`, `Commerce::dismiss_refund`).

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use ucp_domain::commerce::{Dismissal, OrderOutcome, RefundPage};
use ucp_domain::store::{RefundList, RefundState, StoredRefund};
use ucp_protocol::resources::rfc3339;

use super::{API_PREFIX, error};
use crate::state::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(&format!("{API_PREFIX}/refunds"), get(list))
        .route(&format!("{API_PREFIX}/refunds/{{key}}/record"), post(record))
        .route(&format!("{API_PREFIX}/refunds/{{key}}/dismiss"), post(dismiss))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    state: Option<String>,
    limit: Option<u64>,
    /// Where the page starts: the previous page's `next`.
    before: Option<String>,
}

/// One refund as the admin API lists it.
#[derive(Serialize)]
struct RefundSummary<'a> {
    /// Our processor key, and the id of the adjustment that records it.
    key: &'a str,
    order_id: &'a str,
    amount: i64,
    state: &'static str,
    /// The operation that asked for it (refund, cancel, return…).
    request: &'static str,
    description: Option<&'a String>,
    created_at: String,
    ended_at: Option<String>,
}

impl<'a> RefundSummary<'a> {
    fn of(refund: &'a StoredRefund) -> RefundSummary<'a> {
        let intent = &refund.intent;
        RefundSummary {
            key: &intent.key,
            order_id: &intent.order_id,
            amount: intent.amount,
            state: refund.state.as_str(),
            request: intent.action.name(),
            description: intent.action.description(),
            created_at: rfc3339(intent.created_at),
            ended_at: refund.ended_at.map(rfc3339),
        }
    }
}

async fn list(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let query = match query {
        Ok(Query(query)) => query,
        Err(rejection) => return super::bad_query(&rejection, "state, limit, before"),
    };
    let wanted = match query.state.as_deref().map(RefundState::parse) {
        None => None,
        Some(Some(wanted)) => Some(wanted),
        Some(None) => {
            let message = "state must be pending, recorded, recorded_later, refused, abandoned or dismissed";
            return error(StatusCode::BAD_REQUEST, "invalid_input", message);
        }
    };
    // Above the page's cap is the cap (documented); 0 asks for a page of nothing.
    if query.limit == Some(0) {
        return error(StatusCode::BAD_REQUEST, "invalid_input", "limit must be at least 1");
    }
    let limit = query.limit.unwrap_or(20).min(ucp_domain::store::MAX_REFUND_PAGE);
    match state.core.refunds(wanted, limit, query.before.as_deref()).await {
        Ok(RefundPage::Refunds(RefundList { refunds, next })) => {
            // `next`: the cursor for the page after a full one (there may be more).
            let refunds: Vec<RefundSummary<'_>> = refunds.iter().map(RefundSummary::of).collect();
            let next = next.map(|cursor| cursor.to_string());
            axum::Json(serde_json::json!({ "refunds": refunds, "next": next })).into_response()
        }
        Ok(RefundPage::BadCursor) => error(
            StatusCode::BAD_REQUEST,
            "invalid_input",
            "before must be the next of an earlier page (<created_at>.<row>)",
        ),
        Err(failure) => super::orders::domain_error(failure),
    }
}

/// Records an abandoned refund on its order, without asking the processor; the order's
/// details, as an order change answers them.
async fn record(State(state): State<AppState>, Path(key): Path<String>) -> Response {
    match state.core.record_refund_by_hand(&key).await {
        Ok(OrderOutcome::NotFound) => {
            error(StatusCode::NOT_FOUND, "not_found", "No such refund, or its order is gone.")
        }
        outcome => super::orders::answer(outcome),
    }
}

/// Dismisses an abandoned refund the merchant found the processor did not make: the refund as
/// it is now. The same request asked again is then asked for under its key.
async fn dismiss(State(state): State<AppState>, Path(key): Path<String>) -> Response {
    match state.core.dismiss_refund(&key).await {
        Ok(Dismissal::Dismissed(refund)) => axum::Json(RefundSummary::of(&refund)).into_response(),
        Ok(Dismissal::NotFound) => error(StatusCode::NOT_FOUND, "not_found", "No such refund."),
        Ok(Dismissal::Refused(refusal)) => error(StatusCode::CONFLICT, refusal.code(), &refusal.to_string()),
        Err(failure) => super::orders::domain_error(failure),
    }
}
