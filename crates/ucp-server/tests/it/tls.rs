//! TLS termination and client certificates (mTLS) on one port: issue 8 item 1, checklist 62
//! (TLS 1.3 at the edge) and 63 (mTLS as a way to authenticate platforms).
//!
//! Every certificate is made by rcgen when the test runs: a CA that the server trusts for
//! client certificates (which also issues the server's certificate for 127.0.0.1 and
//! localhost), and a second CA the server knows nothing about.

use std::path::PathBuf;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use ucp_server::config::{TlsSettings, TlsVersion};
use ucp_server::trust::ClientCertificate;

use crate::helpers::{PlatformServer, TestApp, fixture_products, spawn_app_with};
use crate::rest::rest;

/// A client's certificate and key, as reqwest wants them (one PEM with both), and its DER.
pub(crate) struct ClientIdentity {
    pub(crate) pem: String,
    pub(crate) der: Vec<u8>,
}

impl ClientIdentity {
    /// A client certificate issued by `issuer` from `params` (client-auth usage added).
    pub(crate) fn issue(issuer: &CertifiedIssuer<'static, KeyPair>, mut params: CertificateParams) -> ClientIdentity {
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().unwrap();
        let certificate = params.signed_by(&key, issuer).unwrap();
        ClientIdentity { pem: format!("{}{}", key.serialize_pem(), certificate.pem()), der: certificate.der().to_vec() }
    }

    fn reqwest(&self) -> reqwest::Identity {
        reqwest::Identity::from_pem(self.pem.as_bytes()).expect("identity")
    }
}

/// The certificates of one test, written to a temp dir as the server reads them.
pub(crate) struct Pki {
    dir: tempfile::TempDir,
    ca_pem: String,
    /// The CA the server trusts for client certificates (tests issue more with it).
    pub(crate) trusted_ca: CertifiedIssuer<'static, KeyPair>,
    /// A client certificate issued by the CA the server trusts.
    pub(crate) trusted: ClientIdentity,
    /// A client certificate issued by a CA the server does not know.
    stranger: ClientIdentity,
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

fn leaf(
    issuer: &CertifiedIssuer<'static, KeyPair>,
    names: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> (rcgen::Certificate, KeyPair) {
    let mut params = CertificateParams::new(names.iter().map(|name| name.to_string()).collect::<Vec<_>>()).unwrap();
    params.distinguished_name.push(DnType::CommonName, names.first().copied().unwrap_or("client"));
    params.extended_key_usages = vec![usage];
    let key = KeyPair::generate().unwrap();
    let certificate = params.signed_by(&key, issuer).unwrap();
    (certificate, key)
}

fn client(issuer: &CertifiedIssuer<'static, KeyPair>, name: &str) -> ClientIdentity {
    let mut params = CertificateParams::new(vec![name.to_owned()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    ClientIdentity::issue(issuer, params)
}

impl Pki {
    pub(crate) fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let trusted_ca = ca("ucpd test platform CA");
        let other_ca = ca("some other CA");
        let (server, server_key) = leaf(&trusted_ca, &["localhost", "127.0.0.1"], ExtendedKeyUsagePurpose::ServerAuth);
        std::fs::write(dir.path().join("server.pem"), server.pem()).unwrap();
        std::fs::write(dir.path().join("server.key"), server_key.serialize_pem()).unwrap();
        std::fs::write(dir.path().join("client-ca.pem"), trusted_ca.pem()).unwrap();
        Pki {
            ca_pem: trusted_ca.pem(),
            trusted: client(&trusted_ca, "platform.example"),
            stranger: client(&other_ca, "platform.example"),
            trusted_ca,
            dir,
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `[tls]` with our certificate and, with `mtls`, the trusted CA for client certificates.
    pub(crate) fn settings(&self, mtls: bool) -> TlsSettings {
        TlsSettings {
            cert_file: Some(self.path("server.pem")),
            key_file: Some(self.path("server.key")),
            client_ca_files: if mtls { vec![self.path("client-ca.pem")] } else { Vec::new() },
            ..TlsSettings::default()
        }
    }

    /// A client that trusts only our test CA, presenting `identity` if given.
    pub(crate) fn client(&self, identity: Option<&ClientIdentity>) -> reqwest::Client {
        self.client_builder(identity).build().unwrap()
    }

    fn client_builder(&self, identity: Option<&ClientIdentity>) -> reqwest::ClientBuilder {
        let root = reqwest::Certificate::from_pem(self.ca_pem.as_bytes()).unwrap();
        let builder = reqwest::Client::builder().tls_certs_only([root]).timeout(Duration::from_secs(10));
        match identity {
            Some(identity) => builder.identity(identity.reqwest()),
            None => builder,
        }
    }
}

/// ucpd with `tls`, reached over https with `client`.
async fn spawn_tls_app(tls: TlsSettings, client: reqwest::Client) -> TestApp {
    spawn_tls_app_with(tls, client, |_, _| {}).await
}

/// [`spawn_tls_app`] with more settings (`[[platforms]]`, say).
pub(crate) async fn spawn_tls_app_with(
    tls: TlsSettings,
    client: reqwest::Client,
    configure: impl FnOnce(&mut ucp_server::Settings, &PlatformServer),
) -> TestApp {
    let mut app = spawn_app_with(fixture_products(), move |settings, server| {
        settings.tls = tls;
        configure(settings, server);
    })
    .await;
    app.base_url = app.base_url.replacen("http://", "https://", 1);
    app.mcp_url = app.mcp_url.replacen("http://", "https://", 1);
    app.http = client;
    app
}

async fn search_over_both_bindings(app: &TestApp) {
    let body = app.tool("search_catalog", json!({ "catalog": { "query": "wool" } })).await;
    assert!(!body["products"].as_array().unwrap().is_empty(), "{body}");
    let (status, body) = rest(app, "POST", "/catalog/search", Some(json!({ "query": "wool" }))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body["products"].as_array().unwrap().is_empty(), "{body}");
}

// Checklist 62, 63: with client CAs configured, a client without a certificate is still
// served on the same port (it authenticates otherwise), over TLS 1.3 with ALPN h2; the
// profile is served over https and advertises https endpoints.
#[tokio::test]
async fn a_client_without_a_certificate_is_served_over_https() {
    let pki = Pki::new();
    let app = spawn_tls_app(pki.settings(true), pki.client(None)).await;

    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.version(), reqwest::Version::HTTP_2, "ALPN offers h2");
    let profile: Value = response.json().await.unwrap();
    let text = profile.to_string();
    assert!(text.contains(&format!("{}/ucp/mcp", app.base_url)), "the profile advertises https endpoints: {text}");
    assert!(!text.contains("http://127.0.0.1"), "{text}");

    search_over_both_bindings(&app).await;
    // A browser that reached an https shop's page comes back over https only.
    let page = app.http.get(format!("{}/policies/privacy", app.base_url)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["strict-transport-security"], "max-age=31536000");
}

// Checklist 63: a client certificate from the configured CA completes the handshake and the
// client is served over MCP and REST.
#[tokio::test]
async fn a_client_certificate_from_the_configured_ca_is_served() {
    let pki = Pki::new();
    let app = spawn_tls_app(pki.settings(true), pki.client(Some(&pki.trusted))).await;
    search_over_both_bindings(&app).await;
}

// Checklist 63, issue 8 "bad input": a client certificate from another CA fails the
// handshake, so nothing is served; the same client with a trusted certificate is.
#[tokio::test]
async fn a_client_certificate_from_another_ca_fails_the_handshake() {
    let pki = Pki::new();
    let app = spawn_tls_app(pki.settings(true), pki.client(Some(&pki.stranger))).await;

    let error = app
        .http
        .post(&app.mcp_url)
        .header("content-type", "application/json")
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string())
        .send()
        .await
        .expect_err("the handshake fails");
    assert!(error.is_connect() || error.is_request(), "{error:?}");

    let trusted = pki.client(Some(&pki.trusted));
    let response = trusted.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

// Checklist 63: the chain the client proved reaches every request of its connection as the
// `ClientCertificate` extension, leaf first, and a connection without one carries none. The
// router here echoes the extension; the accept loop and acceptor are the server's own.
#[tokio::test]
async fn the_verified_chain_reaches_every_request_of_its_connection() {
    let pki = Pki::new();
    let acceptor = ucp_server::tls::TlsAcceptor::from_settings(&pki.settings(true)).unwrap();
    let echo = Router::new().route(
        "/whoami",
        get(|certificate: Option<axum::Extension<ClientCertificate>>| async move {
            match certificate {
                Some(axum::Extension(certificate)) => {
                    axum::Json(json!({ "chain": certificate.chain.iter().map(hex::encode).collect::<Vec<_>>() }))
                }
                None => axum::Json(json!({ "chain": null })),
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("https://localhost:{}/whoami", listener.local_addr().unwrap().port());
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone().cancelled_owned();
    let server = tokio::spawn(async move {
        let limits = ucp_server::config::ConnectionLimits::default();
        ucp_server::listener::serve(listener, echo, &limits, Some(acceptor), stop).await
    });

    let with_certificate = pki.client(Some(&pki.trusted));
    for _ in 0..3 {
        let body: Value = with_certificate.get(&url).send().await.unwrap().json().await.unwrap();
        assert_eq!(body["chain"][0], hex::encode(&pki.trusted.der), "leaf first: {body}");
    }
    let without = pki.client(None);
    let body: Value = without.get(&url).send().await.unwrap().json().await.unwrap();
    assert_eq!(body["chain"], Value::Null);

    // Graceful shutdown: the loop ends even though both clients keep idle connections open.
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("serve returns after shutdown")
        .unwrap()
        .unwrap();
}

// Plain HTTP on the TLS port gets no HTTP answer and a closed connection, and the server
// keeps serving https.
#[tokio::test]
async fn plain_http_to_the_tls_port_fails_cleanly() {
    let pki = Pki::new();
    let app = spawn_tls_app(pki.settings(false), pki.client(None)).await;
    let address = app.base_url.trim_start_matches("https://").to_owned();

    let plain = reqwest::Client::new().get(format!("http://{address}/.well-known/ucp")).send().await;
    assert!(plain.is_err(), "plain http is not answered: {plain:?}");

    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    stream.write_all(b"GET /.well-known/ucp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the server closes the connection");
    assert!(!answer.starts_with(b"HTTP/"), "no HTTP response: {:?}", String::from_utf8_lossy(&answer));

    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

// Checklist 62: TLS 1.2 is refused by default (`openssl s_client -tls1_2` fails) and
// accepted only when `tls.min_version = "1.2"` says so.
#[tokio::test]
async fn tls_1_2_is_refused_by_default_and_accepted_by_setting() {
    let pki = Pki::new();
    let tls12_only = || pki.client_builder(None).tls_version_max(reqwest::tls::Version::TLS_1_2).build().unwrap();

    let app = spawn_tls_app(pki.settings(false), tls12_only()).await;
    let refused = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await;
    assert!(refused.is_err(), "TLS 1.2 is refused: {refused:?}");

    let settings = TlsSettings { min_version: TlsVersion::V1_2, ..pki.settings(false) };
    let app = spawn_tls_app(settings, tls12_only()).await;
    let response = app.http.get(format!("{}/.well-known/ucp", app.base_url)).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

// Slowloris on the handshake: a client that connects and never speaks TLS is dropped once
// the handshake timeout passes (loose bound for a noisy machine).
#[tokio::test]
async fn a_silent_client_is_dropped_after_the_handshake_timeout() {
    let pki = Pki::new();
    let settings = TlsSettings { handshake_timeout_secs: 1, ..pki.settings(false) };
    let app = spawn_tls_app(settings, pki.client(None)).await;
    let mut stream = tokio::net::TcpStream::connect(app.base_url.trim_start_matches("https://")).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(15), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the silent connection is closed");
    assert!(answer.is_empty());
}

// Bad files stop the start with a message naming the setting and the file; nothing binds.
#[tokio::test]
async fn unusable_tls_files_stop_the_start_naming_the_setting() {
    let pki = Pki::new();
    let other_key = KeyPair::generate().unwrap();
    std::fs::write(pki.path("other.key"), other_key.serialize_pem()).unwrap();
    std::fs::write(pki.path("empty.pem"), "not a certificate\n").unwrap();
    let cases = [
        (TlsSettings { key_file: Some(pki.path("missing.key")), ..pki.settings(false) }, "tls.key_file"),
        (TlsSettings { cert_file: Some(pki.path("empty.pem")), ..pki.settings(false) }, "tls.cert_file"),
        (TlsSettings { client_ca_files: vec![pki.path("empty.pem")], ..pki.settings(false) }, "tls.client_ca_files"),
        (
            TlsSettings { key_file: Some(pki.path("other.key")), ..pki.settings(false) },
            "is not the key of the certificate",
        ),
    ];
    for (tls, expected) in cases {
        let data = tempfile::tempdir().unwrap();
        let mut settings = ucp_server::Settings::for_tests(data.path());
        settings.tls = tls;
        let error = ucp_server::Application::build(settings).await.expect_err("start refused").to_string();
        assert!(error.contains(expected), "{expected}: {error}");
    }
}
