//! EXTENSION POINT (issue 9 item 2): the webhook deliveries page.
//!
//! TODO(webhooks): once the outbox and its delivery log land, list the deliveries here
//! (event, order, target URL, attempts, last status, next retry, the failures first) from the
//! `Commerce` method the webhooks branch adds for it (e.g. `Commerce::webhook_deliveries`),
//! and feed the backlog gauge in `crate::traffic::prometheus`. Until then the page says so.

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use askama::Template;

use super::views::{Frame, Section, render};
use super::{Session, html};
use crate::state::AppState;

#[derive(Template)]
#[template(path = "console/webhooks.html", config = "templates/askama.toml")]
struct WebhooksPage {
    frame: Frame,
}

pub(super) async fn list(State(state): State<AppState>, Extension(session): Extension<Session>) -> Response {
    html(StatusCode::OK, render(&WebhooksPage { frame: Frame::new(&state, Section::Webhooks, Some(&session)) }))
}
