//! Panic catching: a panic below answers 500 in the binding's shape (on MCP with the request's
//! id when it is known) instead of dropping the connection. It also installs the [`RpcId`]
//! slot the later layers fill, so the id survives the unwinding.

use std::panic::AssertUnwindSafe;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::FutureExt;

use super::{Binding, RpcId};
use crate::error::{ApiError, ErrorKind};

/// The layer.
pub(super) async fn catch(State(binding): State<Binding>, mut request: Request, next: Next) -> Response {
    let slot = RpcId::default();
    request.extensions_mut().insert(slot.clone());
    caught(binding, &slot, next.run(request)).await
}

/// Runs `work`, answering 500 in the binding's shape (with the id in `slot`, if known) when it
/// panics.
///
/// Not an `async fn`: one would keep `work` twice in its state, the argument and the
/// `CatchUnwind` it is moved into (rustc does not let the two share their storage), and every
/// request's future holds this one.
pub(super) fn caught(
    binding: Binding,
    slot: &RpcId,
    work: impl Future<Output = Response>,
) -> impl Future<Output = Response> {
    AssertUnwindSafe(work).catch_unwind().map(move |outcome| match outcome {
        Ok(response) => response,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            tracing::error!(panic = message, "a request handler panicked; answering 500");
            super::render(binding, &slot.get(), &ApiError::new(ErrorKind::Internal, "internal error"))
        }
    })
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::middleware::from_fn_with_state;
    use axum::routing::post;
    use serde_json::Value;
    use tower::ServiceExt;

    use super::*;

    /// Every request's future holds `caught`'s: it must hold its work once, not twice (as an
    /// `async fn` taking the work did).
    #[test]
    fn caught_holds_its_work_once() {
        let work = async {
            let buffer = [7u8; 4096];
            std::future::ready(()).await;
            std::hint::black_box(buffer);
            Response::default()
        };
        let work_size = std::mem::size_of_val(&work);
        let slot = RpcId::default();
        let wrapped = caught(Binding::Mcp, &slot, work);
        let size = std::mem::size_of_val(&wrapped);
        assert!(size < work_size + 256, "caught's future is {size} bytes around {work_size} bytes of work");
    }

    async fn answer(binding: Binding) -> (StatusCode, String, String) {
        let router: Router = Router::new()
            .route(
                "/",
                post(|request: Request| async move {
                    if let Some(slot) = request.extensions().get::<RpcId>() {
                        slot.record(&axum::body::Bytes::from_static(br#"{"id":"p-1"}"#));
                    }
                    if request.uri().path() == "/" {
                        panic!("boom");
                    }
                    "unreachable"
                }),
            )
            .layer(from_fn_with_state(binding, catch));
        let request = axum::http::Request::post("/").body(Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let content_type = response.headers()[axum::http::header::CONTENT_TYPE].to_str().unwrap().to_owned();
        let body = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        (status, content_type, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn a_panic_answers_500_in_each_bindings_shape() {
        let (status, _, body) = answer(Binding::Mcp).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["error"]["code"], -32603);
        assert_eq!(body["id"], "p-1", "the id recorded before the panic is echoed");

        let (status, _, body) = answer(Binding::Rest).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(body["code"], "internal_error");

        let (status, content_type, body) = answer(Binding::Page).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(content_type.starts_with("text/plain"), "{content_type}");
        assert!(body.contains("internal error"), "{body}");
    }
}
