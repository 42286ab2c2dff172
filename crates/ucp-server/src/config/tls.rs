//! `[tls]`: TLS termination by ucpd itself, and client certificates (mTLS).
//!
//! With `cert_file` and `key_file` set, `ucpd serve` speaks only https on its listen address.
//! With `client_ca_files` as well, a client may present a certificate; one that chains to a
//! listed CA identifies the connection, one from any other CA fails the handshake, and a client
//! without a certificate still connects and authenticates by other means (one port for all).

use std::fmt;
use std::path::PathBuf;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::{ConfigError, values};

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default, deny_unknown_fields)]
pub struct TlsSettings {
    /// PEM file of our certificate chain, leaf first.
    #[serde(deserialize_with = "optional_path")]
    pub cert_file: Option<PathBuf>,
    /// PEM file of the certificate's private key (PKCS#8, PKCS#1 or SEC1).
    #[serde(deserialize_with = "optional_path")]
    pub key_file: Option<PathBuf>,
    /// PEM files of the CAs whose client certificates we accept (mTLS). Empty: no client
    /// certificates are asked for.
    #[serde(deserialize_with = "paths")]
    pub client_ca_files: Vec<PathBuf>,
    /// The oldest protocol version offered: `"1.3"` (the default, as `security.md` §6 asks) or
    /// `"1.2"` for clients that cannot do 1.3.
    pub min_version: TlsVersion,
    /// How long a client has to finish the TLS handshake, in seconds.
    pub handshake_timeout_secs: u64,
}

impl Default for TlsSettings {
    fn default() -> Self {
        TlsSettings {
            cert_file: None,
            key_file: None,
            client_ca_files: Vec::new(),
            min_version: TlsVersion::default(),
            handshake_timeout_secs: 10,
        }
    }
}

impl TlsSettings {
    /// Whether ucpd terminates TLS (a certificate and its key are configured).
    pub fn enabled(&self) -> bool {
        self.cert_file.is_some() && self.key_file.is_some()
    }

    /// The certificate and its key come together, and client CAs need a certificate.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match (&self.cert_file, &self.key_file) {
            (Some(_), None) => return Err(ConfigError("tls.cert_file is set but tls.key_file is not".into())),
            (None, Some(_)) => return Err(ConfigError("tls.key_file is set but tls.cert_file is not".into())),
            (None, None) if !self.client_ca_files.is_empty() => {
                return Err(ConfigError(
                    "tls.client_ca_files needs tls.cert_file and tls.key_file (ucpd must terminate TLS)".into(),
                ));
            }
            _ => {}
        }
        if self.handshake_timeout_secs == 0 {
            return Err(ConfigError("tls.handshake_timeout_secs must be at least 1".into()));
        }
        Ok(())
    }
}

/// The oldest TLS version we accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TlsVersion {
    V1_2,
    #[default]
    V1_3,
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            TlsVersion::V1_2 => "1.2",
            TlsVersion::V1_3 => "1.3",
        })
    }
}

impl<'de> Deserialize<'de> for TlsVersion {
    /// `"1.2"` or `"1.3"`; also the bare number the environment's `UCPD_TLS__MIN_VERSION=1.2`
    /// reads as.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TlsVersion, D::Error> {
        let text = values::text(deserializer)?;
        match text.trim() {
            "1.2" => Ok(TlsVersion::V1_2),
            "1.3" => Ok(TlsVersion::V1_3),
            other => Err(de::Error::invalid_value(de::Unexpected::Str(other), &"\"1.2\" or \"1.3\"")),
        }
    }
}

impl Serialize for TlsVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

fn optional_path<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<PathBuf>, D::Error> {
    #[derive(Deserialize)]
    struct Wrapped(#[serde(deserialize_with = "values::path")] PathBuf);
    Ok(Option::<Wrapped>::deserialize(deserializer)?.map(|Wrapped(path)| path))
}

fn paths<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PathBuf>, D::Error> {
    Ok(values::list(deserializer)?.into_iter().map(PathBuf::from).collect())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::TlsVersion;
    use crate::config::Settings;

    fn environment(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn tls_is_off_and_1_3_by_default() {
        let settings = Settings::load(None, []).unwrap();
        assert!(!settings.tls.enabled());
        assert_eq!(settings.tls.min_version, TlsVersion::V1_3);
    }

    #[test]
    fn the_file_and_the_environment_set_tls() {
        let directory = tempfile::tempdir().unwrap();
        let file = directory.path().join("ucpd.toml");
        std::fs::write(
            &file,
            "[tls]\ncert_file = \"cert.pem\"\nkey_file = \"key.pem\"\nclient_ca_files = [\"a.pem\", \"b.pem\"]\n",
        )
        .unwrap();
        let settings = Settings::load(Some(&file), []).unwrap();
        assert!(settings.tls.enabled());
        assert_eq!(settings.tls.client_ca_files, [PathBuf::from("a.pem"), PathBuf::from("b.pem")]);

        // `1.2` reads as a number from the environment; a list is comma-separated there.
        let settings = Settings::load(
            None,
            environment(&[
                ("UCPD_TLS__CERT_FILE", "/etc/ucpd/cert.pem"),
                ("UCPD_TLS__KEY_FILE", "/etc/ucpd/key.pem"),
                ("UCPD_TLS__CLIENT_CA_FILES", "/etc/ucpd/google.pem, /etc/ucpd/other.pem"),
                ("UCPD_TLS__MIN_VERSION", "1.2"),
            ]),
        )
        .unwrap();
        assert_eq!(settings.tls.cert_file, Some(PathBuf::from("/etc/ucpd/cert.pem")));
        assert_eq!(settings.tls.client_ca_files.len(), 2);
        assert_eq!(settings.tls.min_version, TlsVersion::V1_2);
    }

    #[test]
    fn incomplete_or_bad_tls_settings_are_refused_by_key() {
        for (pairs, expected) in [
            (&[("UCPD_TLS__CERT_FILE", "cert.pem")][..], "tls.key_file"),
            (&[("UCPD_TLS__KEY_FILE", "key.pem")][..], "tls.cert_file"),
            (&[("UCPD_TLS__CLIENT_CA_FILES", "ca.pem")][..], "tls.client_ca_files"),
            (&[("UCPD_TLS__MIN_VERSION", "1.1")][..], "UCPD_TLS__MIN_VERSION"),
            (&[("UCPD_TLS__HANDSHAKE_TIMEOUT_SECS", "0")][..], "tls.handshake_timeout_secs"),
        ] {
            let error = Settings::load(None, environment(pairs)).unwrap_err().to_string();
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }
}
