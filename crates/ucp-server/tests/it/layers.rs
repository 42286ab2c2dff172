//! The middleware stack every binding shares (issue 7): request ids, admission, Host/Origin,
//! body limits and path decoding, each refusal in its own binding's shape.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{spawn_app, spawn_overloaded_app};
use crate::rest::rest_with;

// A client's Request-Id becomes ours and is echoed; without one we make a UUID.
#[tokio::test]
async fn every_response_carries_a_request_id() {
    let app = spawn_app().await;
    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    let generated = response.headers()["x-request-id"].to_str().unwrap();
    assert!(uuid::Uuid::parse_str(generated).is_ok(), "{generated}");
    let response = app
        .http
        .post(&app.mcp_url)
        .header("content-type", "application/json")
        .header("request-id", "3f1c0a4e-8f0d-4c55-9a52-2b7b7d1b9e11")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-request-id"], "3f1c0a4e-8f0d-4c55-9a52-2b7b7d1b9e11");
    // Refusals carry it too.
    let response = app.http.get(format!("{}/nope", app.base_url)).header("request-id", "r-404").send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.headers()["x-request-id"], "r-404");
}

// Path ids go through axum's Path: bad escapes and ids that are not UTF-8 are 400s in REST
// shape, never a panic or a guess.
#[tokio::test]
async fn rest_path_ids_with_bad_percent_encoding_are_clean_400s() {
    let app = spawn_app().await;
    // `%a` then a multi-byte character (reqwest sends `é` as `%C3%A9`); a lone `%`; a
    // truncated UTF-8 sequence.
    for path in ["/carts/%a\u{e9}", "/carts/%a%C3%A9", "/carts/abc%", "/carts/%C3", "/checkout-sessions/%ff/complete"] {
        let method = if path.ends_with("/complete") { "POST" } else { "GET" };
        let (status, error) = rest_with(&app, method, path, None, &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {error}");
        assert_eq!(error["code"], "invalid_request", "{path}: {error}");
        assert_eq!(error.as_object().unwrap().len(), 2, "{{code, content}}: {error}");
    }
    // Well-formed escapes decode: an unknown but valid id is an ordinary answer, not a 400.
    let (status, body) = rest_with(&app, "GET", "/carts/caf%C3%A9", None, &[]).await;
    assert_ne!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
}

// The same admission limit answers each binding in its own shape, with Retry-After.
#[tokio::test]
async fn overload_refuses_every_binding_in_its_own_shape() {
    let (app, holder) = spawn_overloaded_app().await;

    let (status, error) =
        rest_with(&app, "POST", "/catalog/search", Some(json!({ "query": "x" }).to_string()), &[]).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{error}");
    assert_eq!(error["code"], "unavailable");

    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");

    let response = app.http.get(format!("{}/policies/returns", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));

    assert_eq!(holder.await.unwrap().unwrap().status(), 424);
    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "the place is free again");
}

// Host and Origin refusals: JSON-RPC with the id on MCP, {code, content} on REST, a plain page
// for the browser pages.
#[tokio::test]
async fn host_and_origin_refusals_take_each_bindings_shape() {
    let app = spawn_app().await;
    let (status, _, response) = app
        .post_with(
            r#"{"jsonrpc":"2.0","id":"o-1","method":"ping"}"#,
            &[("content-type", "application/json"), ("origin", "https://evil.example")],
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(response["id"], "o-1");

    let (status, error) = rest_with(&app, "GET", "/carts/x", None, &[("origin", "https://evil.example")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(error["code"], "forbidden");

    let response =
        app.http.get(format!("{}/policies/returns", app.base_url)).header("host", "evil.example").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain"));
    assert_eq!(response.headers()["x-content-type-options"], "nosniff");
    // The stack's refusals of a buyer page carry the pages' security headers too.
    assert_eq!(response.headers()["content-security-policy"], ucp_server::layers::PAGE_CONTENT_SECURITY_POLICY);
    assert_eq!(response.headers()["x-frame-options"], "DENY");
    assert!(response.text().await.unwrap().contains("evil.example"));
}

// HTTP/2 has no Host header: the allow-list reads `:authority` instead (DNS-rebinding defence
// over h2 as well as HTTP/1.1).
#[tokio::test]
async fn the_host_allow_list_holds_over_http2() {
    let app = spawn_app().await;
    let address: std::net::SocketAddr = app.base_url.trim_start_matches("http://").parse().unwrap();
    let h2 = reqwest::Client::builder().http2_prior_knowledge().resolve("evil.example", address).build().unwrap();
    let body = r#"{"jsonrpc":"2.0","id":"h2-1","method":"ping"}"#;
    let foreign = h2
        .post(app.mcp_url.replace("127.0.0.1", "evil.example"))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.version(), reqwest::Version::HTTP_2);
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let ours = h2.post(&app.mcp_url).header("content-type", "application/json").body(body).send().await.unwrap();
    assert_eq!(ours.version(), reqwest::Version::HTTP_2);
    assert_eq!(ours.status(), StatusCode::OK);
}

// An unknown capability name is refused by `Application::build` itself, not only by `ucpd serve`.
#[tokio::test]
async fn an_unknown_capability_fails_the_build() {
    let data = tempfile::tempdir().unwrap();
    let mut settings = ucp_server::Settings {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.path().to_path_buf(),
        demo: false,
        ..Default::default()
    };
    settings.capabilities.enabled.push("teleportation".into());
    let Err(error) = ucp_server::Application::build(settings).await else { panic!("the build refuses") };
    assert!(error.to_string().contains("teleportation"), "{error}");
}

// The body limit is one layer: 413 in each shape, and MCP still echoes the id it read.
#[tokio::test]
async fn oversized_bodies_are_413_in_each_shape() {
    let app = spawn_app().await;
    let pad = "x".repeat(2 * 1024 * 1024);
    let (status, _, response) =
        app.post_raw(format!(r#"{{"jsonrpc":"2.0","id":"big","method":"ping","params":{{"pad":"{pad}"}}}}"#)).await;
    assert_eq!(status, 413);
    assert_eq!(response["id"], "big");
    assert_eq!(response["error"]["data"]["code"], "request_too_large");
    let (status, error) =
        rest_with(&app, "POST", "/catalog/search", Some(format!(r#"{{"query":"{pad}"}}"#)), &[]).await;
    assert_eq!(status, 413);
    assert_eq!(error["code"], "payload_too_large");
}
