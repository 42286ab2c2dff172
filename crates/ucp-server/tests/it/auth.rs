//! Authentication and identity binding over real HTTP: checklist 63, 64, 86 (platform scopes)
//! and 87 (`aud`, `exp`, `iss`, client id), with a JWKS served from 127.0.0.1.

use std::sync::Arc;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::pkcs8::EncodePrivateKey;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use ucp_server::config::{OAuthSettings, PlatformSettings};

use crate::helpers::{ALL_CAPABILITIES, PlatformServer, TestApp, fixture_products, platform_profile, spawn_app_with};

const KEY_A: &str = "key-of-platform-a-0123456789";
const KEY_B: &str = "key-of-platform-b-9876543210";
const ISSUER: &str = "https://issuer.test";
const AUDIENCE: &str = "https://shop.test";

/// An OAuth issuer on 127.0.0.1 publishing one ES256 key, and signing tokens with it.
struct Issuer {
    jwks_url: String,
    key: EncodingKey,
    _shutdown: CancellationToken,
}

impl Issuer {
    async fn start() -> Issuer {
        let secret = loop {
            let mut bytes = [0u8; 32];
            rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
            if let Ok(secret) = p256::SecretKey::from_slice(&bytes) {
                break secret;
            }
        };
        let point = {
            use p256::elliptic_curve::sec1::ToEncodedPoint;
            secret.public_key().to_encoded_point(false)
        };
        let jwk = json!({
            "kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
            "x": URL_SAFE_NO_PAD.encode(point.x().unwrap()), "y": URL_SAFE_NO_PAD.encode(point.y().unwrap()),
        });
        // A key type we do not read sits beside it: skipped, not fatal.
        let set = Arc::new(json!({ "keys": [{ "kty": "weird", "kid": "odd" }, jwk] }).to_string());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let jwks_url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        let router = Router::new().route("/jwks.json", get(move || async move { set.as_ref().clone() }));
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        tokio::spawn(async move { axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned()).await });
        let der = secret.to_pkcs8_der().unwrap();
        Issuer { jwks_url, key: EncodingKey::from_ec_der(der.as_bytes()), _shutdown: shutdown }
    }

    fn token(&self, claims: Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        jsonwebtoken::encode(&header, &claims, &self.key).unwrap()
    }
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn claims(audience: &str, expires_in: i64, not_before_in: i64) -> Value {
    json!({ "iss": ISSUER, "aud": audience, "sub": "platform-a", "iat": now(), "exp": now() + expires_in, "nbf": now() + not_before_in, "scope": "ucp:merchant" })
}

fn platform(id: &str, profile: &str, key: &str) -> PlatformSettings {
    PlatformSettings {
        id: id.into(),
        profiles: vec![profile.into()],
        api_keys: vec![ucp_server::auth::hash_key_hex(key)],
        oauth: None,
        mtls: None,
    }
}

/// ucpd with platform `a` (our test platform's profile) and `b` (another platform's), both
/// by API key; `a` also by OAuth when an issuer is given.
async fn app_with(
    issuer: Option<&Issuer>,
    configure: impl FnOnce(&mut ucp_server::Settings),
) -> (TestApp, PlatformServer) {
    let other = PlatformServer::start(platform_profile(ALL_CAPABILITIES)).await;
    let other_url = other.profile_url();
    let oauth = issuer.map(|issuer| OAuthSettings {
        issuer: ISSUER.into(),
        jwks_url: issuer.jwks_url.parse().unwrap(),
        audiences: vec![AUDIENCE.into()],
        scopes: vec!["ucp:merchant".into()],
        client_id: None,
    });
    let app = spawn_app_with(fixture_products(), |settings, server| {
        let mut a = platform_a(server);
        a.oauth = oauth;
        settings.platforms = vec![a, platform("b", &other_url, KEY_B)];
        configure(settings);
    })
    .await;
    (app, other)
}

fn platform_a(server: &PlatformServer) -> PlatformSettings {
    platform("a", &server.profile_url(), KEY_A)
}

/// A `tools/call` with extra headers: status, headers and the JSON-RPC response.
async fn call(
    app: &TestApp,
    name: &str,
    mut arguments: Value,
    headers: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    if arguments.get("meta").is_none() {
        arguments["meta"] = app.meta_for(&app.platform.profile_url());
    }
    let body = json!({ "jsonrpc": "2.0", "id": "auth-1", "method": "tools/call", "params": { "name": name, "arguments": arguments } });
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    app.post_with(body.to_string(), &all).await
}

fn search() -> Value {
    json!({ "catalog": { "query": "mug" } })
}

fn cart() -> Value {
    json!({ "cart": { "line_items": [{ "item": { "id": "mug-1" }, "quantity": 1 }] } })
}

fn assert_refused(status: StatusCode, body: &Value, expected: StatusCode) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    assert_eq!(body["id"], "auth-1", "the refusal echoes the JSON-RPC id: {body}");
    assert!(body.get("result").is_none(), "nothing ran: {body}");
}

fn challenge(headers: &reqwest::header::HeaderMap) -> String {
    headers.get("www-authenticate").map(|value| value.to_str().unwrap().to_owned()).unwrap_or_default()
}

// Checklist 63: no credential → 401 with WWW-Authenticate, on MCP and REST, before any work.
#[tokio::test]
async fn no_credential_is_401_with_a_challenge() {
    let (app, _other) = app_with(None, |_| {}).await;
    let fetches = app.platform.fetch_count();
    for (name, arguments) in [("search_catalog", search()), ("create_cart", cart())] {
        let (status, headers, body) = call(&app, name, arguments, &[]).await;
        assert_refused(status, &body, StatusCode::UNAUTHORIZED);
        let challenge = challenge(&headers);
        assert!(challenge.starts_with("Bearer realm=\""), "{challenge}");
        assert!(!challenge.contains("error="), "no token was sent: {challenge}");
    }
    assert_eq!(app.platform.fetch_count(), fetches, "refused before the profile fetch");

    let response = app
        .http
        .post(format!("{}/ucp/v1/catalog/search", app.base_url))
        .header("ucp-agent", format!("profile=\"{}\"", app.platform.profile_url()))
        .header("request-id", uuid::Uuid::new_v4().to_string())
        .json(&search()["catalog"])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert!(response.headers().contains_key("www-authenticate"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["code"], "unauthenticated", "{body}");

    // Tools are still listed without a credential.
    let (status, _, body) =
        app.post_raw(json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }).to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

// Checklist 63: a known API key passes; an unknown one is 401.
#[tokio::test]
async fn api_keys_are_checked_by_hash() {
    let (app, _other) = app_with(None, |_| {}).await;
    let (status, _, body) = call(&app, "create_cart", cart(), &[("x-api-key", KEY_A)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"]["structuredContent"]["id"].is_string(), "{body}");

    let (status, headers, body) = call(&app, "create_cart", cart(), &[("x-api-key", "not-a-key-we-issued")]).await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED);
    assert!(challenge(&headers).starts_with("Bearer realm="), "{headers:?}");
    // The hash itself is not a key.
    let hash = ucp_server::auth::hash_key_hex(KEY_A);
    let (status, _, body) = call(&app, "create_cart", cart(), &[("x-api-key", &hash)]).await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED);
}

// The API key header name is configurable.
#[tokio::test]
async fn the_api_key_header_is_configurable() {
    let (app, _other) = app_with(None, |settings| settings.auth.api_key_header = "X-Merchant-Key".into()).await;
    let (status, _, body) = call(&app, "create_cart", cart(), &[("x-api-key", KEY_A)]).await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED);
    let (status, _, body) = call(&app, "create_cart", cart(), &[("x-merchant-key", KEY_A)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

// Checklist 64: platform B's key claiming platform A's profile → 403, nothing runs.
#[tokio::test]
async fn a_key_of_platform_b_cannot_claim_platform_a() {
    let (app, other) = app_with(None, |_| {}).await;
    let (status, headers, body) = call(&app, "create_cart", cart(), &[("x-api-key", KEY_B)]).await;
    assert_refused(status, &body, StatusCode::FORBIDDEN);
    assert!(!headers.contains_key("www-authenticate"));
    assert_eq!(body["error"]["data"]["code"], "profile_not_trusted", "{body}");
    // Through the UCP-Agent header too (it wins over meta).
    let header = format!("profile=\"{}\"", app.platform.profile_url());
    let meta = json!({ "meta": app.meta_for(&other.profile_url()), "cart": cart()["cart"] });
    let (status, _, body) = call(&app, "create_cart", meta, &[("x-api-key", KEY_B), ("ucp-agent", &header)]).await;
    assert_refused(status, &body, StatusCode::FORBIDDEN);
    // B with its own profile is fine.
    let own = json!({ "meta": app.meta_for(&other.profile_url()), "cart": cart()["cart"] });
    let (status, _, body) = call(&app, "create_cart", own, &[("x-api-key", KEY_B)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

// Checklist 87 (for platform tokens): wrong audience, expired, not yet valid → 401 with
// error="invalid_token"; a valid token → 200. Google's refresh-and-retry-once after a 401
// then succeeds.
#[tokio::test]
async fn bearer_tokens_are_validated() {
    let issuer = Issuer::start().await;
    let (app, other) = app_with(Some(&issuer), |_| {}).await;
    for (case, token) in [
        ("wrong audience", issuer.token(claims("https://another-shop.test", 300, -10))),
        ("expired", issuer.token(claims(AUDIENCE, -600, -900))),
        ("not yet valid", issuer.token(claims(AUDIENCE, 3600, 900))),
        ("no scope", issuer.token(json!({ "iss": ISSUER, "aud": AUDIENCE, "exp": now() + 300 }))),
        ("another issuer", issuer.token(json!({ "iss": "https://evil.test", "aud": AUDIENCE, "exp": now() + 300 }))),
        ("garbage", "not.a.jwt".to_owned()),
    ] {
        let authorization = format!("Bearer {token}");
        let (status, headers, body) = call(&app, "create_cart", cart(), &[("authorization", &authorization)]).await;
        if case == "no scope" {
            assert_refused(status, &body, StatusCode::FORBIDDEN);
            assert_eq!(body["error"]["data"]["code"], "insufficient_scope", "{body}");
            let challenge = challenge(&headers);
            assert!(challenge.contains("error=\"insufficient_scope\", scope=\"ucp:merchant\""), "{challenge}");
            continue;
        }
        assert_refused(status, &body, StatusCode::UNAUTHORIZED);
        let challenge = challenge(&headers);
        assert!(
            challenge.starts_with("Bearer realm=") && challenge.contains("error=\"invalid_token\""),
            "{case}: {challenge}"
        );
    }
    // The retry with a fresh token.
    let fresh = format!("Bearer {}", issuer.token(claims(AUDIENCE, 300, -10)));
    let (status, _, body) = call(&app, "create_cart", cart(), &[("authorization", &fresh)]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // A token of platform A claiming B's profile is 403 (checklist 64).
    let theirs = json!({ "meta": app.meta_for(&other.profile_url()), "cart": cart()["cart"] });
    let (status, _, body) = call(&app, "create_cart", theirs, &[("authorization", &fresh)]).await;
    assert_refused(status, &body, StatusCode::FORBIDDEN);
    // Credentials naming two platforms (A's token, B's key) are refused.
    let (status, _, body) = call(&app, "create_cart", cart(), &[("authorization", &fresh), ("x-api-key", KEY_B)]).await;
    assert_refused(status, &body, StatusCode::FORBIDDEN);
}

// Catalog reads may be left public by configuration; the rest still needs a credential.
#[tokio::test]
async fn catalog_reads_can_be_public() {
    let (app, _other) = app_with(None, |settings| {
        settings.auth.public_operations = vec!["search_catalog".into(), "lookup_catalog".into(), "get_product".into()];
    })
    .await;
    let (status, _, body) = call(&app, "search_catalog", search(), &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body["result"]["structuredContent"]["products"].is_array(), "{body}");
    let (status, _, body) = call(&app, "create_cart", cart(), &[]).await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED);
    // A credential sent to a public operation is still checked.
    let (status, _, body) = call(&app, "search_catalog", search(), &[("x-api-key", "wrong")]).await;
    assert_refused(status, &body, StatusCode::UNAUTHORIZED);
}

// With the allow-list on, a profile no platform lists is profile_not_trusted (403), also on
// public operations.
#[tokio::test]
async fn unknown_profiles_are_not_trusted() {
    let (app, _other) = app_with(None, |settings| {
        settings.auth.trusted_only = true;
        settings.auth.public_operations = vec!["search_catalog".into()];
    })
    .await;
    let stranger = PlatformServer::start(platform_profile(ALL_CAPABILITIES)).await;
    let arguments = json!({ "meta": app.meta_for(&stranger.profile_url()), "catalog": { "query": "mug" } });
    let (status, _, body) = call(&app, "search_catalog", arguments, &[]).await;
    assert_refused(status, &body, StatusCode::FORBIDDEN);
    assert_eq!(body["error"]["data"]["code"], "profile_not_trusted", "{body}");
    assert_eq!(stranger.fetch_count(), 0, "an untrusted profile is never fetched");
    let (status, _, body) = call(&app, "search_catalog", search(), &[]).await;
    assert_eq!(status, StatusCode::OK, "a listed profile is fine: {body}");
}

// Without [[platforms]] the demo start stays open: existing behaviour.
#[tokio::test]
async fn without_platforms_everything_stays_open() {
    let app = spawn_app_with(fixture_products(), |_, _| {}).await;
    let (status, _, body) = call(&app, "create_cart", cart(), &[]).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
