//! The merchant console: server-rendered pages under `/admin`, behind the admin credential.
//!
//! A browser logs in with the admin key (`POST /admin/login`) and gets a session cookie
//! (`crate::admin::session`); every other page needs it, and every form post needs the same
//! origin (`Origin` equal to the request's host) and the session's CSRF token in a `csrf`
//! field. Pages are askama templates in `templates/console/`, with no scripts and the pages'
//! security headers (the `Page` binding's layer). Everything shown comes from `Commerce`
//! methods and the traffic counters; nothing here decides anything.

mod actions;
mod orders;
mod refunds;
mod traffic;
mod views;
mod webhooks;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::session::{self, ConsoleKeys};
use crate::layers::RawBody;
use crate::state::AppState;

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/admin", get(|| async { see_other("/admin/orders") }))
        .route("/admin/login", get(login_page).post(login))
        .route("/admin/logout", post(logout))
        .route("/admin/orders", get(orders::list))
        .route("/admin/orders/{id}", get(orders::show))
        .route(
            "/admin/orders/{id}/{action}",
            post(actions::apply).route_layer(axum::middleware::from_fn(super::idempotent::to_the_end)),
        )
        .route("/admin/traffic", get(traffic::calls))
        .route("/admin/funnel", get(traffic::funnel))
        .route("/admin/webhooks", get(webhooks::list))
        .route("/admin/refunds", get(refunds::list))
        .route("/admin/refunds/{key}/record", post(refunds::record))
        .route("/admin/refunds/{key}/dismiss", post(refunds::dismiss))
        .layer(from_fn_with_state(state.clone(), guard))
}

/// The logged-in session of a request, as the guard found it (pages render its CSRF token).
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub csrf: String,
}

fn now(state: &AppState) -> i64 {
    state.clock.now()
}

pub(super) fn html(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

pub(super) fn see_other(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(value) => (StatusCode::SEE_OTHER, [(header::LOCATION, value)]).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Whether a form post comes from our own page: `Origin` present and naming the host the
/// request was sent to (the Host guard already refused foreign hosts).
fn same_origin(headers: &HeaderMap) -> bool {
    let (Some(origin), Some(host)) = (headers.get(header::ORIGIN), headers.get(header::HOST)) else { return false };
    let (Ok(origin), Ok(host)) = (origin.to_str(), host.to_str()) else { return false };
    let rest = origin.strip_prefix("https://").or_else(|| origin.strip_prefix("http://"));
    rest.is_some_and(|rest| rest.eq_ignore_ascii_case(host))
}

/// The first value of `name` in a form body.
fn form_field(body: &[u8], name: &str) -> Option<String> {
    url::form_urlencoded::parse(body).find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
}

/// The console's gate: 404 without admin keys; the login page and post are open (posts
/// same-origin only); everything else needs a valid session, and posts its CSRF token.
async fn guard(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if !state.admin.enabled() {
        return views::message(&state, StatusCode::NOT_FOUND, "Not found", "There is no page here.");
    }
    let posting = request.method() == Method::POST;
    if posting && !same_origin(request.headers()) {
        return views::message(&state, StatusCode::FORBIDDEN, "Refused", "Forms are accepted only from this console.");
    }
    if request.uri().path() == "/admin/login" {
        return next.run(request).await;
    }
    let keys: &ConsoleKeys = &state.console;
    let Some(cookie) = session::cookie_of(request.headers()).filter(|cookie| keys.verify(cookie, now(&state))) else {
        return if posting {
            views::message(&state, StatusCode::FORBIDDEN, "Refused", "Your session has ended; log in again.")
        } else {
            see_other("/admin/login")
        };
    };
    let cookie = cookie.to_owned();
    if posting {
        let token = request.extensions().get::<RawBody>().and_then(|body| form_field(&body.0, "csrf"));
        if !token.is_some_and(|token| keys.verify_csrf(&cookie, &token)) {
            return views::message(
                &state,
                StatusCode::FORBIDDEN,
                "Refused",
                "This form has expired or did not come from this console; reload the page and try again.",
            );
        }
    }
    request.extensions_mut().insert(Session { csrf: keys.csrf(&cookie) });
    next.run(request).await
}

async fn login_page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if session::cookie_of(&headers).is_some_and(|cookie| state.console.verify(cookie, now(&state))) {
        return see_other("/admin/orders");
    }
    html(StatusCode::OK, views::login(&state, None))
}

async fn login(State(state): State<AppState>, request: Request) -> Response {
    let key = request.extensions().get::<RawBody>().and_then(|body| form_field(&body.0, "key")).unwrap_or_default();
    if key.is_empty() || !state.admin.accepts(key.trim()) {
        let client = crate::admin::client_of(&state, &request);
        tracing::warn!(target: "ucpd::audit", %client, "console login refused");
        return html(StatusCode::UNAUTHORIZED, views::login(&state, Some("That key is not accepted.")));
    }
    tracing::info!(target: "ucpd::audit", "console login");
    let cookie = state.console.issue(now(&state));
    let mut response = see_other("/admin/orders");
    if let Ok(value) = HeaderValue::from_str(&state.console.set_cookie(&cookie)) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

async fn logout(State(state): State<AppState>) -> Response {
    let mut response = see_other("/admin/login");
    if let Ok(value) = HeaderValue::from_str(&state.console.clear_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}
