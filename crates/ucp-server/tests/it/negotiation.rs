//! Platform profiles and negotiation: checklist 15-28.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::{PlatformServer, platform_profile, spawn_app, spawn_app_with};
use crate::schema;

fn search() -> serde_json::Value {
    json!({ "query": "wool" })
}

// Checklist 15, 16: fetched once, cached at least 60 s even with no-store.
#[tokio::test]
async fn platform_profile_is_fetched_once_and_cached() {
    let app = spawn_app().await;
    for _ in 0..3 {
        app.tool("search_catalog", json!({ "catalog": search() })).await;
    }
    assert_eq!(app.platform.fetch_count(), 1);
}

// Checklist 15: calls that arrive together before the profile is cached share one fetch, and
// a fetch that failed is remembered (`profiles.failure_ttl_secs`), by the calls that waited on
// it and by the calls after, so neither a burst nor a retry loop fetches again.
#[tokio::test]
async fn concurrent_calls_share_one_profile_fetch_and_a_failure_is_remembered() {
    let app = spawn_app().await;
    let calls = (0..16).map(|_| app.tool("search_catalog", json!({ "catalog": search() })));
    for body in futures_util::future::join_all(calls).await {
        assert_eq!(body["ucp"]["status"], "success", "{body}");
    }
    assert_eq!(app.platform.fetch_count(), 1);

    let broken = PlatformServer::start(json!({ "not": "a profile" })).await;
    let meta = app.meta_for(&broken.profile_url());
    let calls = (0..16).map(|_| app.tool_error("search_catalog", json!({ "meta": meta, "catalog": search() })));
    for (status, error) in futures_util::future::join_all(calls).await {
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{error}");
        assert_eq!(error["data"]["code"], "profile_malformed", "{error}");
    }
    let (_, error) = app.tool_error("search_catalog", json!({ "meta": meta, "catalog": search() })).await;
    assert_eq!(error["data"]["code"], "profile_malformed", "{error}");
    assert_eq!(broken.fetch_count(), 1);
}

// Checklist 17, 18, 19, 20, 53: each failure has its code, HTTP status and -32001.
#[tokio::test]
async fn profile_failures_map_to_their_codes_and_statuses() {
    let app =
        spawn_app_with(crate::helpers::fixture_products(), |settings, _| settings.profiles.fetch_timeout_ms = 500)
            .await;
    let old = PlatformServer::start(json!({ "ucp": { "version": "2025-01-01", "capabilities": {} } })).await;
    let cases = [
        ("ftp://agent.example/profile.json".to_owned(), StatusCode::BAD_REQUEST, "invalid_profile_url"),
        ("not a url".to_owned(), StatusCode::BAD_REQUEST, "invalid_profile_url"),
        (app.platform.url("/redirect"), StatusCode::FAILED_DEPENDENCY, "profile_unreachable"),
        (app.platform.url("/error"), StatusCode::FAILED_DEPENDENCY, "profile_unreachable"),
        (app.platform.url("/slow"), StatusCode::FAILED_DEPENDENCY, "profile_unreachable"),
        (app.platform.url("/html"), StatusCode::UNPROCESSABLE_ENTITY, "profile_malformed"),
        (app.platform.url("/empty"), StatusCode::UNPROCESSABLE_ENTITY, "profile_malformed"),
        (app.platform.url("/huge"), StatusCode::UNPROCESSABLE_ENTITY, "profile_malformed"),
        (old.profile_url(), StatusCode::UNPROCESSABLE_ENTITY, "version_unsupported"),
    ];
    for (url, status, code) in cases {
        let (got_status, error) =
            app.tool_error("search_catalog", json!({ "meta": app.meta_for(&url), "catalog": search() })).await;
        assert_eq!(got_status, status, "{url}: {error}");
        assert_eq!(error["code"], -32001, "{url}");
        assert_eq!(error["data"]["code"], code, "{url}: {error}");
        assert!(error["data"]["content"].as_str().unwrap().len() > 10);
    }
}

// Checklist 26: without the development flag, loopback profile hosts are refused.
#[tokio::test]
async fn loopback_and_private_profile_hosts_are_refused() {
    let app =
        spawn_app_with(crate::helpers::fixture_products(), |settings, _| settings.dev_insecure_profiles = false).await;
    for url in [
        "https://127.0.0.1/profile.json",
        "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.8/p.json",
        "https://localhost/p.json",
        "https://[::1]/p.json",
        &app.platform.profile_url(),
    ] {
        let (status, error) =
            app.tool_error("search_catalog", json!({ "meta": app.meta_for(url), "catalog": search() })).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}");
        assert_eq!(error["data"]["code"], "invalid_profile_url", "{url}: {error}");
    }
    assert_eq!(app.platform.fetch_count(), 0);
}

// Checklist 22, 47: an operation whose capability was not negotiated is a business outcome.
#[tokio::test]
async fn missing_capability_is_a_capabilities_incompatible_error_response() {
    let app = spawn_app().await;
    let platform = PlatformServer::start(platform_profile(&["dev.ucp.shopping.catalog.search"])).await;
    let body = app
        .tool(
            "lookup_catalog",
            json!({ "meta": app.meta_for(&platform.profile_url()), "catalog": { "ids": ["shoe"] } }),
        )
        .await;
    assert_eq!(body["ucp"]["status"], "error");
    assert_eq!(body["messages"][0]["code"], "capabilities_incompatible");
    assert_eq!(body["messages"][0]["severity"], "unrecoverable");
    assert!(body.get("products").is_none());
    schema::error_response(&body);
}

// Checklist 23, 24, 107: the envelope names only the relevant negotiated capability.
#[tokio::test]
async fn envelope_carries_the_negotiated_version_and_relevant_capability_only() {
    let app = spawn_app().await;
    let body = app.tool("search_catalog", json!({ "catalog": search() })).await;
    assert_eq!(body["ucp"]["version"], "2026-04-08");
    assert_eq!(body["ucp"]["status"], "success");
    let capabilities = body["ucp"]["capabilities"].as_object().unwrap();
    assert_eq!(capabilities.keys().collect::<Vec<_>>(), vec!["dev.ucp.shopping.catalog.search"]);
    let body = app.tool("get_product", json!({ "catalog": { "id": "mug" } })).await;
    let capabilities = body["ucp"]["capabilities"].as_object().unwrap();
    assert_eq!(capabilities.keys().collect::<Vec<_>>(), vec!["dev.ucp.shopping.catalog.lookup"]);
}

// Checklist 27, 28: UCP-Agent header first, then meta; aliases for non-fetchable ids.
#[tokio::test]
async fn ucp_agent_header_wins_and_google_alias_resolves() {
    let app = spawn_app_with(crate::helpers::fixture_products(), |settings, platform| {
        settings.profiles.aliases.insert("https://www.google.com".into(), platform.profile_url());
    })
    .await;
    // meta alone: https://www.google.com resolves through the alias.
    let body = app
        .tool("search_catalog", json!({ "meta": app.meta_for("https://www.google.com"), "catalog": search() }))
        .await;
    assert_eq!(body["ucp"]["status"], "success");
    assert_eq!(app.platform.fetch_count(), 1);

    // The header wins over meta.
    let other = PlatformServer::start(platform_profile(&["dev.ucp.shopping.catalog.search"])).await;
    let header = format!("profile=\"{}\", agent=\"test\"", other.profile_url());
    let request = json!({
        "jsonrpc": "2.0", "id": "abc", "method": "tools/call",
        "params": { "name": "search_catalog", "arguments": { "meta": { "ucp-agent": { "profile": "https://www.google.com" } }, "catalog": search() } }
    });
    let (status, _, response) =
        app.post_with(request.to_string(), &[("content-type", "application/json"), ("ucp-agent", &header)]).await;
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["id"], "abc");
    assert_eq!(response["result"]["structuredContent"]["ucp"]["status"], "success");
    assert_eq!(other.fetch_count(), 1, "the header's profile was used");

    let (status, _, response) = app
        .post_with(request.to_string(), &[("content-type", "application/json"), ("ucp-agent", "profile=unquoted")])
        .await;
    assert_eq!(status, 400);
    assert_eq!(response["error"]["data"]["code"], "invalid_profile_url");
    assert_eq!(response["id"], "abc");
}

// overview.md §3: a platform's capability entry whose schema another authority publishes is
// left out (platforms leave out such entries of ours; a business applies the same check), so
// that capability is not negotiated, while the same profile with the schema on ucp.dev is.
#[tokio::test]
async fn a_platform_entry_published_by_another_authority_is_not_negotiated() {
    let app = spawn_app().await;
    let names = ["dev.ucp.shopping.catalog.search", "dev.ucp.shopping.catalog.lookup"];
    let bound = PlatformServer::start(platform_profile(&names)).await;
    let mut profile = platform_profile(&names);
    profile["ucp"]["capabilities"]["dev.ucp.shopping.catalog.lookup"][0]["schema"] =
        json!("https://ucp.dev.evil.example/2026-04-08/schemas/shopping/catalog_lookup.json");
    let unbound = PlatformServer::start(profile).await;
    let app = &app;
    let lookup = |url: String| async move {
        app.tool("lookup_catalog", json!({ "meta": app.meta_for(&url), "catalog": { "ids": ["shoe"] } })).await
    };

    let body = lookup(bound.profile_url()).await;
    assert_eq!(body["ucp"]["status"], "success", "{body}");
    let body = lookup(unbound.profile_url()).await;
    assert_eq!(body["ucp"]["status"], "error", "{body}");
    assert_eq!(body["messages"][0]["code"], "capabilities_incompatible", "{body}");
    schema::error_response(&body);
    let body =
        app.tool("search_catalog", json!({ "meta": app.meta_for(&unbound.profile_url()), "catalog": search() })).await;
    assert_eq!(body["ucp"]["status"], "success", "the bound entries still negotiate: {body}");
}
