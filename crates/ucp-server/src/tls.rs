//! TLS termination with rustls (aws-lc-rs, the provider reqwest already builds) and client
//! certificates (mTLS) on the same port as every other client.
//!
//! [`server_config`] turns `[tls]` into a `rustls::ServerConfig`: our certificate chain and key,
//! TLS 1.3 (or 1.2 by setting) and newer, ALPN `h2` and `http/1.1`, and, with client CAs
//! configured, a verifier that accepts clients without a certificate but fails the handshake of
//! one whose certificate does not chain to a configured CA. [`TlsAcceptor::accept`] runs the
//! handshake on any stream and hands back the verified chain as a [`ClientCertificate`];
//! [`serve`] is the accept loop that puts it on every request of its connection.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::server::TlsStream;

use crate::config::{TlsSettings, TlsVersion};
use crate::trust::ClientCertificate;

/// Why the TLS settings cannot be used; each names the file and the setting.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("tls.{setting} {path}: {reason}")]
    File { setting: &'static str, path: String, reason: String },
    #[error("{0}")]
    Config(String),
}

/// The crypto provider of every TLS connection we make or accept.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The server configuration `[tls]` describes. Fails when TLS is not enabled, or on a file
/// that is missing, holds no PEM item of the right kind, or does not fit its peer (a key that
/// is not the certificate's).
pub fn server_config(settings: &TlsSettings) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let (Some(cert_file), Some(key_file)) = (&settings.cert_file, &settings.key_file) else {
        return Err(TlsError::Config("tls.cert_file and tls.key_file are both needed".into()));
    };
    let chain = certificates("cert_file", cert_file)?;
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|error| file_error("key_file", key_file, error))?;
    let versions: &[&rustls::SupportedProtocolVersion] = match settings.min_version {
        TlsVersion::V1_2 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::V1_3 => &[&rustls::version::TLS13],
    };
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|error| TlsError::Config(format!("tls.min_version: {error}")))?;
    let builder = if settings.client_ca_files.is_empty() {
        builder.with_no_client_auth()
    } else {
        let mut roots = RootCertStore::empty();
        for path in &settings.client_ca_files {
            for certificate in certificates("client_ca_files", path)? {
                roots.add(certificate).map_err(|error| file_error("client_ca_files", path, error))?;
            }
        }
        // One port for everyone: a client without a certificate is let through (it
        // authenticates otherwise); one with a certificate from another CA is not.
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .allow_unauthenticated()
            .build()
            .map_err(|error| TlsError::Config(format!("tls.client_ca_files: {error}")))?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|error| match error {
        rustls::Error::InconsistentKeys(_) => {
            TlsError::Config("the key in tls.key_file is not the key of the certificate in tls.cert_file".into())
        }
        other => TlsError::Config(format!("tls.cert_file and tls.key_file: {other}")),
    })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn certificates(setting: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certificates = CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| file_error(setting, path, error))?;
    if certificates.is_empty() {
        return Err(file_error(setting, path, "no PEM CERTIFICATE in the file"));
    }
    Ok(certificates)
}

fn file_error(setting: &'static str, path: &Path, reason: impl std::fmt::Display) -> TlsError {
    TlsError::File { setting, path: path.display().to_string(), reason: reason.to_string() }
}

/// Runs TLS handshakes: the server side of a connection and the client certificate it proved.
#[derive(Clone)]
pub struct TlsAcceptor {
    inner: tokio_rustls::TlsAcceptor,
    handshake_timeout: Duration,
}

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("TlsAcceptor").field("handshake_timeout", &self.handshake_timeout).finish()
    }
}

impl TlsAcceptor {
    pub fn new(config: Arc<rustls::ServerConfig>, handshake_timeout: Duration) -> TlsAcceptor {
        TlsAcceptor { inner: tokio_rustls::TlsAcceptor::from(config), handshake_timeout }
    }

    pub fn from_settings(settings: &TlsSettings) -> Result<TlsAcceptor, TlsError> {
        Ok(TlsAcceptor::new(server_config(settings)?, Duration::from_secs(settings.handshake_timeout_secs)))
    }

    /// The handshake on `stream`, bounded by the handshake timeout. A client certificate comes
    /// back only when the client sent one, which the verifier has then checked against the
    /// configured CAs (an unverified one fails the handshake).
    pub async fn accept<S>(&self, stream: S) -> std::io::Result<(TlsStream<S>, Option<ClientCertificate>)>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        let stream = tokio::time::timeout(self.handshake_timeout, self.inner.accept(stream))
            .await
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::TimedOut, "TLS handshake timed out"))??;
        let certificate =
            stream.get_ref().1.peer_certificates().filter(|chain| !chain.is_empty()).map(|chain| ClientCertificate {
                chain: chain.iter().map(|certificate| certificate.to_vec()).collect(),
            });
        Ok((stream, certificate))
    }
}
