//! The webhook deliveries page: the outbox's newest 100 events (event, order, type, status,
//! attempts, the last attempt's HTTP status and error, the next attempt), dead and failing
//! ones marked, superseded ones explained, read straight from `Shared::outbox`.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use askama::Template;
use ucp_domain::webhook::{EventStatus, EventSummary};

use super::views::{self, Frame, Section, render, timestamp};
use super::{Session, html};
use crate::state::AppState;

/// Events shown.
const PAGE_SIZE: usize = 100;

struct DeliveryRow {
    id: String,
    order_id: String,
    order_href: String,
    event_type: String,
    status: &'static str,
    /// Dead, or pending after a failed attempt: shown first in the row's status.
    failing: bool,
    attempts: u32,
    last_status: String,
    last_error: String,
    next_attempt: String,
}

impl DeliveryRow {
    fn of(event: EventSummary) -> DeliveryRow {
        let failing = event.status == EventStatus::Dead
            || (event.status == EventStatus::Pending && (event.last_error.is_some() || event.attempts > 0));
        DeliveryRow {
            id: event.id,
            order_href: super::actions::order_href(&event.order_id),
            order_id: event.order_id,
            event_type: event.event_type,
            status: event.status.as_str(),
            failing,
            attempts: event.attempts,
            last_status: event.last_status.map(|status| status.to_string()).unwrap_or_default(),
            last_error: event.last_error.unwrap_or_default(),
            next_attempt: match event.status {
                EventStatus::Pending => timestamp(event.next_attempt_at_ms.div_euclid(1000)),
                _ => String::new(),
            },
        }
    }
}

#[derive(Template)]
#[template(path = "console/webhooks.html", config = "templates/askama.toml")]
struct WebhooksPage {
    frame: Frame,
    events: Vec<DeliveryRow>,
    /// Some event shown is superseded: the page says what that means.
    superseded: bool,
}

pub(super) async fn list(State(state): State<AppState>, Extension(session): Extension<Session>) -> Response {
    let events = match views::loaded(&state, "listing webhook events", state.outbox.list_events(None, PAGE_SIZE)).await
    {
        Ok(events) => events,
        Err(page) => return page,
    };
    let page = WebhooksPage {
        frame: Frame::new(&state, Section::Webhooks, Some(&session)),
        superseded: events.iter().any(|event| event.status == EventStatus::Superseded),
        events: events.into_iter().map(DeliveryRow::of).collect(),
    };
    html(StatusCode::OK, render(&page))
}
