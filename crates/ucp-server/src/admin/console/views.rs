//! The console's templates (`templates/console/`) and the frame every page shares.

use askama::Template;
use axum::http::StatusCode;
use axum::response::Response;

use super::{Session, html};
use crate::state::AppState;

/// The sections of the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    Orders,
    Traffic,
    Funnel,
    Webhooks,
    Refunds,
    None,
}

/// What the layout needs: the business name, the current section, the logout form's token.
pub(crate) struct Frame {
    pub business: String,
    pub section: Section,
    pub csrf: Option<String>,
}

impl Frame {
    pub(crate) fn new(state: &AppState, section: Section, session: Option<&Session>) -> Frame {
        Frame {
            business: state.settings.business_name.clone(),
            section,
            csrf: session.map(|session| session.csrf.clone()),
        }
    }

    /// `aria-current` for a navigation link.
    pub(crate) fn current(&self, section: Section) -> &'static str {
        if self.section == section { "page" } else { "false" }
    }
}

/// Renders a template; a failure (a bug) becomes a plain page, never a panic.
pub(crate) fn render(page: &impl Template) -> String {
    page.render().unwrap_or_else(|error| {
        tracing::error!(%error, "rendering a console page failed");
        "<!doctype html>\n<html lang=\"en\"><title>Error</title><main><h1>Something went wrong</h1></main></html>\n"
            .to_owned()
    })
}

#[derive(Template)]
#[template(path = "console/login.html", config = "templates/askama.toml")]
struct LoginPage<'a> {
    frame: Frame,
    error: Option<&'a str>,
}

pub(crate) fn login(state: &AppState, error: Option<&str>) -> String {
    render(&LoginPage { frame: Frame::new(state, Section::None, None), error })
}

#[derive(Template)]
#[template(path = "console/message.html", config = "templates/askama.toml")]
struct MessagePage<'a> {
    frame: Frame,
    heading: &'a str,
    text: &'a str,
}

/// A short page: a refusal, a missing order, a failure of ours.
pub(crate) fn message(state: &AppState, status: StatusCode, heading: &str, text: &str) -> Response {
    html(status, render(&MessagePage { frame: Frame::new(state, Section::None, None), heading, text }))
}

/// The page for a store failure (logged here once).
pub(crate) fn unavailable(state: &AppState, error: &dyn std::fmt::Display) -> Response {
    tracing::error!(%error, "a console page could not load its data");
    message(state, StatusCode::SERVICE_UNAVAILABLE, "Please try again", "The store did not answer in time.")
}

/// How long a console page waits for the store.
const STORE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What `read` answers within [`STORE_TIMEOUT`], or the "Please try again" page to answer
/// instead (its failure, or that `what` timed out, logged).
pub(crate) async fn loaded<T, E: std::fmt::Display>(
    state: &AppState,
    what: &str,
    read: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, Response> {
    match tokio::time::timeout(STORE_TIMEOUT, read).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(unavailable(state, &error)),
        Err(_) => Err(unavailable(state, &format!("{what} timed out"))),
    }
}

/// `2026-04-08 14:03 UTC` of a Unix timestamp.
pub(crate) fn timestamp(seconds: i64) -> String {
    let Ok(instant) = time::OffsetDateTime::from_unix_timestamp(seconds) else { return String::new() };
    format!(
        "{}-{:02}-{:02} {:02}:{:02} UTC",
        instant.year(),
        u8::from(instant.month()),
        instant.day(),
        instant.hour(),
        instant.minute()
    )
}
