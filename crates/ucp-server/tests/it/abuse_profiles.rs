//! The abuse suite's cases that come through platform profiles (issue 8 item 5, continued from
//! `abuse.rs`): many large profiles stay within the cache's byte budget, profile hosts whose
//! DNS never answers do not slow the store, the SSRF guard refuses tunnelled and site-local
//! addresses (checklist 26), and a profile dense with JSON objects is refused before it is
//! parsed into a tree.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_server::{Application, Settings};

use crate::abuse::cart_of;
use crate::helpers::{ALL_CAPABILITIES, platform_profile, spawn_app, spawn_app_with};

/// A server on loopback that serves a distinct profile of about `size` bytes at `/p/{n}.json`,
/// its bulk in `signing_keys` (kept by the profile cache).
async fn start_profile_farm(size: usize) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = Router::new().route(
        "/p/{name}",
        get(move |Path(name): Path<String>| async move {
            let mut profile = platform_profile(ALL_CAPABILITIES);
            // Sixteen keys (a profile may publish 32), large enough together to make `size`.
            let half = size / 32;
            let key = json!({ "kid": name, "kty": "EC", "crv": "P-256", "x": "x".repeat(half), "y": "y".repeat(half) });
            profile["signing_keys"] = Value::Array(vec![key; 16]);
            ([("content-type", "application/json")], profile.to_string())
        }),
    );
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        axum::serve(listener, router).with_graceful_shutdown(stopped.cancelled_owned()).await.ok();
    });
    (base, stop)
}

/// The resident set of this test process (the server runs in it), in bytes.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Boots ucpd (fixture catalog) and keeps its state at hand.
async fn boot(configure: impl FnOnce(&mut Settings)) -> (String, ucp_server::state::AppState, Guard) {
    let data_dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::for_tests(data_dir.path());
    settings.dev_insecure_profiles = true;
    settings.payments.sandbox = Some(true);
    configure(&mut settings);
    let application = Application::build(settings).await.unwrap();
    let base_url = format!("http://{}", application.local_addr());
    let state = application.state().clone();
    let stop = CancellationToken::new();
    tokio::spawn(application.run_until_stopped(stop.clone().cancelled_owned()));
    (base_url, state, Guard { stop, _data_dir: data_dir })
}

struct Guard {
    stop: CancellationToken,
    _data_dir: tempfile::TempDir,
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn search_with_profile(http: &reqwest::Client, base_url: &str, profile: &str) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "search_catalog",
        "arguments": { "meta": { "ucp-agent": { "profile": profile } }, "catalog": { "query": "mug" } } } });
    let response =
        http.post(format!("{base_url}/ucp/mcp")).header("content-type", "application/json").body(body.to_string());
    response.send().await.unwrap().json().await.unwrap()
}

// "400 calls naming distinct 217 KiB profile URLs raised RSS from 230 MB to 2.2 GB (the profile
// cache counts entries, not bytes)".
#[tokio::test]
async fn distinct_large_profiles_stay_within_the_cache_byte_budget() {
    const BUDGET: u64 = 8 * 1024 * 1024;
    let (farm, _farm) = start_profile_farm(217 * 1024).await;
    let (base_url, state, _guard) = boot(|settings| {
        settings.profiles.cache_max_bytes = BUDGET;
        settings.profiles.max_concurrent_fetches = 8;
    })
    .await;
    let http = reqwest::Client::new();
    let before = resident_bytes();
    let mut calls = futures_util::stream::iter(0..400)
        .map(|n| {
            let (http, base_url, profile) = (http.clone(), base_url.clone(), format!("{farm}/p/{n}.json"));
            async move { search_with_profile(&http, &base_url, &profile).await }
        })
        .buffer_unordered(16);
    let mut answered = 0;
    while let Some(reply) = futures_util::StreamExt::next(&mut calls).await {
        assert!(reply.get("result").is_some(), "{reply}");
        answered += 1;
    }
    assert_eq!(answered, 400);
    let cached = state.platforms.cached_bytes();
    assert!(cached <= BUDGET, "the profile cache holds {cached} bytes");
    let grown = resident_bytes().saturating_sub(before);
    eprintln!("abuse: 400 distinct 217 KiB profiles: cache {cached} bytes, RSS grew {} MiB", grown / (1024 * 1024));
    assert!(grown < 400 * 1024 * 1024, "RSS grew by {} MiB", grown / (1024 * 1024));
}

use futures_util::StreamExt as _;

/// A UDP "name server" that reads queries and never answers.
async fn silent_name_server() -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let address = socket.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut buffer = [0u8; 2048];
        while socket.recv_from(&mut buffer).await.is_ok() {}
    });
    (address, task)
}

// "40 profile URLs on a host whose DNS never answers filled the 32 blocking threads shared with
// SQLite (`get_checkout` went from 5 ms to 9 s)": resolution runs on the async runtime under a
// timeout, and store reads stay fast meanwhile.
#[tokio::test]
async fn profile_hosts_whose_dns_never_answers_do_not_slow_the_store() {
    let (name_server, _server) = silent_name_server().await;
    let app = spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.profiles.dns_servers = vec![name_server];
        settings.profiles.dns_timeout_ms = 1_000;
    })
    .await;
    let cart = app.tool("create_cart", json!({ "cart": cart_of("mug-1") })).await;
    let cart_id = cart["id"].as_str().unwrap().to_owned();
    let hung: Vec<_> = (0..40)
        .map(|n| {
            let (http, base_url) = (app.http.clone(), app.base_url.clone());
            tokio::spawn(async move {
                let started = Instant::now();
                let reply =
                    search_with_profile(&http, &base_url, &format!("https://h{n}.never-answers.test/p.json")).await;
                (reply, started.elapsed())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut slowest = Duration::ZERO;
    for _ in 0..5 {
        let started = Instant::now();
        let again = app.tool("get_cart", json!({ "id": cart_id })).await;
        assert_eq!(again["id"], cart_id.as_str());
        slowest = slowest.max(started.elapsed());
    }
    let mut longest = Duration::ZERO;
    for call in hung {
        let (reply, took) = call.await.unwrap();
        assert_eq!(reply["error"]["data"]["code"], "profile_unreachable", "{reply}");
        longest = longest.max(took);
    }
    eprintln!("abuse: 40 silent-DNS profiles: slowest get_cart {slowest:?}, longest refused call {longest:?}");
    assert!(slowest < Duration::from_secs(1), "get_cart took {slowest:?} while DNS hung");
    assert!(longest < Duration::from_secs(10), "a hung-DNS call took {longest:?}");
}

// The SSRF guard refuses IPv4-compatible, site-local and 6to4 literals (checklist 26).
#[tokio::test]
async fn profile_urls_on_tunnelled_or_site_local_addresses_are_refused() {
    let app = spawn_app().await;
    for host in ["[::127.0.0.1]", "[fec0::1]", "[2002:7f00:1::1]", "[64:ff9b::7f00:1]", "[::ffff:10.0.0.1]"] {
        let profile = format!("https://{host}/profile.json");
        let (status, error) = app
            .tool_error("search_catalog", json!({ "meta": app.meta_for(&profile), "catalog": { "query": "x" } }))
            .await;
        assert_eq!(status, 400, "{host}: {error}");
        assert_eq!(error["data"]["code"], "invalid_profile_url", "{host}: {error}");
    }
}

// A profile of 200 KB of one-member objects was 24 MB of maps in the server for each fetch at
// once (16 by default); it is now counted before it is parsed and refused by name.
#[tokio::test]
async fn a_profile_dense_with_objects_is_refused_before_it_becomes_a_tree() {
    let app = spawn_app().await;
    let mut dense = platform_profile(ALL_CAPABILITIES);
    dense["x"] = Value::Array(vec![json!({ "": 0 }); 30_000]);
    let body = dense.to_string();
    assert!(body.len() < 256 * 1024, "within the body cap: {}", body.len());
    let farm = crate::helpers::PlatformServer::start(dense).await;
    let meta = app.meta_for(&farm.profile_url());
    let (status, error) =
        app.tool_error("search_catalog", json!({ "meta": meta, "catalog": { "query": "mug" } })).await;
    assert_eq!(status, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{error}");
    assert_eq!(error["data"]["code"], "profile_malformed", "{error}");
    let reason = format!("more than {} JSON objects", ucp_protocol::profile::MAX_PROFILE_OBJECTS);
    assert!(error.to_string().contains(&reason), "{error}");
}
