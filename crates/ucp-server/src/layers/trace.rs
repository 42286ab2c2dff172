//! Request ids and tracing, once around the whole router: every request gets an
//! `x-request-id` (the client's `Request-Id` when it sent one, so our logs and theirs share a
//! key; a fresh UUID otherwise), its span carries it, and the response echoes it. A response
//! with a 5xx status is logged as an error with its latency.
//!
//! Hand-written rather than tower-http's `SetRequestId`, `Trace` and `PropagateRequestId`: the
//! three did the same in three services and four nested futures per request, and formatted the
//! UUID through a `String` (BENCHMARKS.md, "The transport path").

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use tower::{Layer, Service};
use tracing::Instrument;

use crate::state::AppState;

/// The longest client `Request-Id` we adopt as ours.
const MAX_CLIENT_ID: usize = 128;

const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Wraps the whole router (all bindings) in request ids and tracing.
pub fn shared(router: Router<AppState>) -> Router<AppState> {
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
        let span = tracing::info_span!("request", request_id = %id.to_str().unwrap_or_default());
        let started = Instant::now();
        let (method, uri) = (request.method().clone(), request.uri().clone());
        let answer = span.in_scope(|| self.inner.call(request));
        Box::pin(
            async move {
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
                response.headers_mut().insert(X_REQUEST_ID, id);
                Ok(response)
            }
            .instrument(span),
        )
    }
}

/// The client's `Request-Id` when it is usable as ours, a fresh UUID otherwise.
fn request_id(request: &Request) -> HeaderValue {
    let client = request
        .headers()
        .get("request-id")
        .filter(|value| !value.is_empty() && value.len() <= MAX_CLIENT_ID && value.to_str().is_ok());
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
