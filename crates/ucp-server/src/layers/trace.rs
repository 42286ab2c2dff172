//! Request ids and tracing, once around the whole router: every request gets an
//! `x-request-id` (the client's `Request-Id` when it sent one, so our logs and theirs share a
//! key; a fresh UUID otherwise), its log lines carry it, and the response echoes it. A response
//! with a 5xx status is logged as an error with its latency.
//!
//! The id reaches the log lines one of two ways. By default each request opens a tracing span,
//! `request{request_id=…}`, which any subscriber sees. ucpd's own text lines
//! (`ucp-cli/src/log_line.rs`) instead read the id from the task-local [`with_request_id`]
//! lends and write the same `request{request_id=…}:` prefix, so the process turns the span off
//! ([`log_request_ids_in_spans`]): a span cost about 3,000 instructions per request (its
//! creation with the id formatted into its fields, an enter and an exit per poll, its close),
//! a tenth of a `ping` (BENCHMARKS.md, "The request id without a span"). The task-local is
//! always set: it costs a swap per poll.
//!
//! Hand-written rather than tower-http's `SetRequestId`, `Trace` and `PropagateRequestId`: the
//! three did the same in three services and four nested futures per request, and formatted the
//! UUID through a `String` (BENCHMARKS.md, "The transport path").

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use futures_util::future::Either;
use tower::{Layer, Service};
use tracing::Instrument;

/// The longest client `Request-Id` we adopt as ours.
const MAX_CLIENT_ID: usize = 128;

const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

tokio::task_local! {
    /// The id of the request this task serves.
    static REQUEST_ID: HeaderValue;
}

/// Whether each request opens a tracing span carrying its id (see the module's documentation).
static SPANS: AtomicBool = AtomicBool::new(true);

/// Whether each request opens a `request{request_id=…}` tracing span (the default). Turn it off
/// only when the installed log format writes [`with_request_id`]'s id itself.
pub fn log_request_ids_in_spans(on: bool) {
    SPANS.store(on, Ordering::Relaxed);
}

/// Whether requests open a span carrying their id ([`log_request_ids_in_spans`]).
pub fn request_ids_in_spans() -> bool {
    SPANS.load(Ordering::Relaxed)
}

/// Calls `read` with the id of the request the current task serves, if it serves one.
pub fn with_request_id<R>(read: impl FnOnce(&str) -> R) -> Option<R> {
    REQUEST_ID.try_with(|id| id.to_str().ok().map(read)).ok().flatten()
}

/// `future` carrying the current request's id and span along, for a task spawned to finish a
/// request's work (its lines then name the request as the request's own do).
///
/// Combinators, not an `async` block: one would hold `future` twice in its state (captured,
/// and the copy it awaits).
pub(crate) fn carried<F: Future>(future: F) -> impl Future<Output = F::Output> {
    let future = future.instrument(tracing::Span::current());
    match REQUEST_ID.try_with(HeaderValue::clone) {
        Ok(id) => Either::Left(REQUEST_ID.scope(id, future)),
        Err(_) => Either::Right(future),
    }
}

/// Wraps the whole router (all bindings) in request ids and tracing.
pub fn shared<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    router.layer(RequestIds)
}

#[derive(Debug, Clone, Copy)]
struct RequestIds;

impl<S> Layer<S> for RequestIds {
    type Service = Traced<S>;

    fn layer(&self, inner: S) -> Traced<S> {
        Traced { inner }
    }
}

#[derive(Debug, Clone)]
pub(super) struct Traced<S> {
    inner: S,
}

impl<S> Traced<S> {
    pub(super) fn new(inner: S) -> Traced<S> {
        Traced { inner }
    }
}

/// A traced request's answer.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<S> Service<Request> for Traced<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The id is the span's and the response's: nothing below reads it from the request.
        let id = request_id(&request);
        // The id alone: the audit line names the operation, and every field here is
        // formatted on every request (method and path are on the 5xx line below).
        // `%`: Display writes it as is, where a `&str` value is escaped character by character.
        // Off, a span that is none: entering it is a check, nothing reaches the subscriber.
        let span = if SPANS.load(Ordering::Relaxed) {
            tracing::info_span!("request", request_id = %id.to_str().unwrap_or_default())
        } else {
            tracing::Span::none()
        };
        let started = Instant::now();
        let (method, uri) = (request.method().clone(), request.uri().clone());
        let answer = REQUEST_ID.sync_scope(id.clone(), || span.in_scope(|| self.inner.call(request)));
        let answered = async move {
            let Ok(mut response) = answer.await;
            let status = response.status();
            if status.is_server_error() {
                tracing::error!(
                    %method,
                    path = uri.path(),
                    status = status.as_u16(),
                    latency_ms = started.elapsed().as_millis() as u64,
                    "response failed"
                );
            }
            if let Ok(id) = REQUEST_ID.try_with(HeaderValue::clone) {
                response.headers_mut().insert(X_REQUEST_ID, id);
            }
            Ok(response)
        };
        Box::pin(REQUEST_ID.scope(id, answered.instrument(span)))
    }
}

/// The client's `Request-Id` when it is usable as ours, a fresh UUID otherwise. Usable: at
/// most 128 letters, digits and `-._:` (UUIDs, ULIDs, prefixed ids), since the text log writes
/// it unquoted: a space, brace or quote in it could forge the rest of a line.
fn request_id(request: &Request) -> HeaderValue {
    let client = request.headers().get("request-id").filter(|value| {
        !value.is_empty()
            && value.len() <= MAX_CLIENT_ID
            && value.as_bytes().iter().all(|byte| byte.is_ascii_alphanumeric() || b"-._:".contains(byte))
    });
    if let Some(value) = client {
        return value.clone();
    }
    let mut buffer = uuid::Uuid::encode_buffer();
    let fresh = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buffer);
    HeaderValue::from_str(fresh).unwrap_or_else(|_| HeaderValue::from_static("-"))
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    /// What the handler logged, captured.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The id the response echoes, and the line the handler logged inside the request span.
    async fn answer(request: axum::http::Request<Body>) -> (String, String) {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt().with_ansi(false).with_writer(move || writer.clone()).finish();
        // The test runtime runs on this thread: the handler logs through this subscriber.
        let _default = tracing::subscriber::set_default(subscriber);
        let router: Router = Router::new()
            .route(
                "/",
                get(|| async {
                    tracing::info!("handled");
                }),
            )
            .layer(RequestIds);
        let response = router.oneshot(request).await.unwrap();
        let echoed = response.headers()["x-request-id"].to_str().unwrap().to_owned();
        let logged = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        (echoed, logged)
    }

    #[tokio::test]
    async fn the_clients_request_id_is_adopted_and_echoed() {
        let request = axum::http::Request::get("/").header("request-id", "client-42").body(Body::empty()).unwrap();
        let (echoed, logged) = answer(request).await;
        assert_eq!(echoed, "client-42");
        assert!(logged.contains("request{request_id=client-42}"), "{logged}");
    }

    #[tokio::test]
    async fn without_a_usable_one_a_fresh_uuid_is_made() {
        for request in [
            axum::http::Request::get("/").body(Body::empty()).unwrap(),
            axum::http::Request::get("/")
                .header("request-id", "x".repeat(MAX_CLIENT_ID + 1))
                .body(Body::empty())
                .unwrap(),
            axum::http::Request::get("/").header("request-id", "").body(Body::empty()).unwrap(),
            axum::http::Request::get("/")
                .header("request-id", "1}: ucpd::audit: console login")
                .body(Body::empty())
                .unwrap(),
        ] {
            let (echoed, logged) = answer(request).await;
            assert!(
                logged.contains(&format!("request{{request_id={echoed}}}")),
                "the request's lines carry the id the response echoes: {logged}"
            );
            let parsed = uuid::Uuid::parse_str(&echoed).expect("a UUID");
            assert_eq!(parsed.get_version_num(), 4);
        }
    }
}
