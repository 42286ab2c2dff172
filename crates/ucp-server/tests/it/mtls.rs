//! Client certificates mapped to onboarded platforms (security.md §1; checklist 63, 64), with
//! real certificates over TLS: `[platforms.mtls]` names a platform's leaf certificate by its
//! SHA-256 fingerprint, its subject DN, or a subjectAltName (DNS name or URI). A certificate
//! from the trusted CA that maps to no platform is no credential: an operation that needs one
//! is 401 with `WWW-Authenticate`; a mapped certificate claiming another platform's profile
//! is 403.
//!
//! Every certificate is issued by rcgen when the test runs, from the CA of `tls.rs`.

use rcgen::{CertificateParams, DnType, SanType};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use ucp_server::config::{MtlsSettings, PlatformSettings};

use crate::helpers::TestApp;
use crate::rest::rest;
use crate::tls::{ClientIdentity, Pki, spawn_tls_app_with};

/// A client certificate from the trusted CA with common name `cn`, an organization, and
/// `sans` as its subjectAltName.
fn certificate(pki: &Pki, cn: &str, sans: Vec<SanType>) -> ClientIdentity {
    let mut params = CertificateParams::default();
    params.distinguished_name.push(DnType::CommonName, cn);
    params.distinguished_name.push(DnType::OrganizationName, "Example Platform");
    params.subject_alt_names = sans;
    ClientIdentity::issue(&pki.trusted_ca, params)
}

fn dns(name: &str) -> SanType {
    SanType::DnsName(name.try_into().unwrap())
}

fn uri(name: &str) -> SanType {
    SanType::URI(name.try_into().unwrap())
}

/// ucpd over TLS with one onboarded platform, `certified`, known only by `mtls` and allowed
/// our test platform's profile; reached with `identity`'s certificate. With a platform
/// configured, every operation needs a credential.
async fn app_for(pki: &Pki, identity: &ClientIdentity, mtls: MtlsSettings) -> TestApp {
    spawn_tls_app_with(pki.settings(true), pki.client(Some(identity)), |settings, server| {
        settings.platforms = vec![PlatformSettings {
            id: "certified".into(),
            profiles: vec![server.profile_url()],
            api_keys: Vec::new(),
            oauth: None,
            mtls: Some(mtls),
        }];
    })
    .await
}

fn search_call(profile: &str) -> String {
    json!({ "jsonrpc": "2.0", "id": "mtls-1", "method": "tools/call", "params": { "name": "search_catalog",
        "arguments": { "meta": { "ucp-agent": { "profile": profile } }, "catalog": { "query": "wool" } } } })
    .to_string()
}

async fn mcp(app: &TestApp, profile: &str) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    app.post_with(search_call(profile), &[("content-type", "application/json")]).await
}

/// The certificate authenticates: search (which needs a credential here) answers on MCP and
/// REST.
async fn assert_authenticated(app: &TestApp) {
    let (status, _, body) = mcp(app, &app.platform.profile_url()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body["result"]["structuredContent"]["products"].as_array().unwrap().is_empty(), "{body}");
    let (status, body) = rest(app, "POST", "/catalog/search", Some(json!({ "query": "wool" }))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body["products"].as_array().unwrap().is_empty(), "{body}");
}

/// The certificate is no credential: 401 with a challenge on MCP (JSON-RPC -32000, the id
/// echoed, nothing run) and on REST.
async fn assert_unauthenticated(app: &TestApp) {
    let (status, headers, body) = mcp(app, &app.platform.profile_url()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(headers.contains_key("www-authenticate"), "{headers:?}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    assert_eq!(body["id"], "mtls-1", "{body}");
    assert!(body.get("result").is_none(), "{body}");
    let (status, body) = rest(app, "POST", "/catalog/search", Some(json!({ "query": "wool" }))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
}

/// `certified` authenticates with `identity`; the same server refuses `other`, a certificate
/// from the same trusted CA that the mapping does not name.
async fn mapped_and_not(pki: &Pki, identity: &ClientIdentity, other: &ClientIdentity, mtls: MtlsSettings) {
    let mut app = app_for(pki, identity, mtls).await;
    assert_authenticated(&app).await;
    app.http = pki.client(Some(other));
    assert_unauthenticated(&app).await;
    // Without any certificate the handshake still succeeds (one port for every mechanism),
    // but nothing authenticates the call.
    app.http = pki.client(None);
    assert_unauthenticated(&app).await;
}

// Checklist 63: a platform mapped by its subject DN (RFC 4514 text; spaces after the commas
// do not matter); another common name from the same CA is refused.
#[tokio::test]
async fn a_certificate_maps_to_its_platform_by_subject() {
    let pki = Pki::new();
    let agent = certificate(&pki, "agent.example", vec![dns("agent.example")]);
    let other = certificate(&pki, "intruder.example", vec![dns("agent.example")]);
    let mtls =
        MtlsSettings { subjects: vec!["CN=agent.example, O=Example Platform".into()], ..MtlsSettings::default() };
    mapped_and_not(&pki, &agent, &other, mtls).await;
}

// Checklist 63: a platform mapped by a DNS subjectAltName (compared without regard to case);
// a certificate whose SAN names another host is refused, even with the same subject.
#[tokio::test]
async fn a_certificate_maps_to_its_platform_by_dns_san() {
    let pki = Pki::new();
    let agent = certificate(&pki, "agent", vec![dns("other.example"), dns("Agent.Platform.Example")]);
    let other = certificate(&pki, "agent", vec![dns("intruder.example")]);
    let mtls = MtlsSettings { sans: vec!["agent.platform.example".into()], ..MtlsSettings::default() };
    mapped_and_not(&pki, &agent, &other, mtls).await;
}

// Checklist 63: a platform mapped by a URI subjectAltName (a SPIFFE id, say); another URI
// from the same CA is refused.
#[tokio::test]
async fn a_certificate_maps_to_its_platform_by_uri_san() {
    let pki = Pki::new();
    let agent = certificate(&pki, "agent", vec![uri("spiffe://platform.example/agent")]);
    let other = certificate(&pki, "agent", vec![uri("spiffe://platform.example/intruder")]);
    let mtls = MtlsSettings { sans: vec!["spiffe://platform.example/agent".into()], ..MtlsSettings::default() };
    mapped_and_not(&pki, &agent, &other, mtls).await;
}

// Checklist 63: a platform mapped by the SHA-256 fingerprint of its leaf (hex with colons, as
// `openssl x509 -fingerprint -sha256` prints it); a certificate with the same names but
// another key is refused.
#[tokio::test]
async fn a_certificate_maps_to_its_platform_by_fingerprint() {
    let pki = Pki::new();
    let agent = certificate(&pki, "agent.example", vec![dns("agent.example")]);
    let other = certificate(&pki, "agent.example", vec![dns("agent.example")]);
    let fingerprint = Sha256::digest(&agent.der).iter().map(|byte| format!("{byte:02X}")).collect::<Vec<_>>().join(":");
    let mtls = MtlsSettings { fingerprints: vec![fingerprint], ..MtlsSettings::default() };
    mapped_and_not(&pki, &agent, &other, mtls).await;
}

// Checklist 64: a mapped certificate binds the caller to its platform's profiles; claiming
// another profile is 403 before anything runs or is fetched.
#[tokio::test]
async fn a_mapped_certificate_cannot_claim_another_platforms_profile() {
    let pki = Pki::new();
    let agent = certificate(&pki, "agent", vec![uri("spiffe://platform.example/agent")]);
    let mtls = MtlsSettings { sans: vec!["spiffe://platform.example/agent".into()], ..MtlsSettings::default() };
    let app = app_for(&pki, &agent, mtls).await;
    let (status, _, body) = mcp(&app, "https://other-platform.example/profile.json").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    assert!(body["error"]["message"].as_str().unwrap_or_default().contains("may not act for profile"), "{body}");
    assert_authenticated(&app).await;
}
