//! `--sign`: RFC 9421 signatures on every request, the way Google signs (label `sig-ucp`,
//! `tag="ucp-rest-request"`, covering `@method @path @authority`, `content-type` and
//! `content-digest` with a body, `idempotency-key` when sent), with a fixed ES256 test key
//! whose public JWK `ucpd-bench jwk` prints for the benchmark platform's profile.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use p256::ecdsa::signature::Signer as _;
use sha2::{Digest, Sha256};

/// The benchmark platform's key id.
pub(crate) const KID: &str = "ucpd-bench-es256";

/// The fixed benchmark key (a test key: never use it for anything else).
pub(crate) struct Signer {
    key: p256::ecdsa::SigningKey,
}

impl Signer {
    pub(crate) fn new() -> Signer {
        Signer { key: p256::ecdsa::SigningKey::from_slice(&[0x42; 32]).expect("a valid P-256 scalar") }
    }

    /// The public JWK to publish in the platform profile's `signing_keys`.
    pub(crate) fn jwk(&self) -> serde_json::Value {
        let point = self.key.verifying_key().to_encoded_point(false);
        let coordinate =
            |bytes: Option<&p256::FieldBytes>| bytes.map(|b| URL_SAFE_NO_PAD.encode(b)).unwrap_or_default();
        serde_json::json!({ "kid": KID, "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256",
                            "x": coordinate(point.x()), "y": coordinate(point.y()) })
    }

    /// The headers that sign a request to `url` (`Content-Digest`, `Signature-Input`,
    /// `Signature`); `content_type` and `idempotency_key` must be sent as given.
    pub(crate) fn headers(
        &self,
        method: &str,
        url: &str,
        body: Option<&[u8]>,
        idempotency_key: Option<&str>,
    ) -> Vec<(&'static str, String)> {
        let (authority, path) = split(url);
        let mut headers = Vec::with_capacity(3);
        let mut components = vec![("@method", method.to_owned()), ("@path", path), ("@authority", authority)];
        if let Some(body) = body {
            let digest = format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)));
            components.push(("content-type", "application/json".to_owned()));
            components.push(("content-digest", digest.clone()));
            headers.push(("content-digest", digest));
        }
        if let Some(key) = idempotency_key {
            components.push(("idempotency-key", key.to_owned()));
        }
        let names: Vec<String> = components.iter().map(|(name, _)| format!("\"{name}\"")).collect();
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_secs())
            .unwrap_or_default();
        let params = format!(r#"({});created={created};keyid="{KID}";tag="ucp-rest-request""#, names.join(" "));
        let mut base = String::with_capacity(512);
        for (name, value) in &components {
            base.push_str(&format!("\"{name}\": {value}\n"));
        }
        base.push_str(&format!("\"@signature-params\": {params}"));
        let signature: p256::ecdsa::Signature = self.key.sign(base.as_bytes());
        headers.push(("signature-input", format!("sig-ucp={params}")));
        headers.push(("signature", format!("sig-ucp=:{}:", STANDARD.encode(signature.to_bytes()))));
        headers
    }
}

/// `http://host:port/path?query` → (`host:port`, `/path`).
fn split(url: &str) -> (String, String) {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(authority, path)| (authority, path));
    let path = path.split('?').next().unwrap_or_default();
    (authority.to_ascii_lowercase(), format!("/{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_authority_and_path() {
        assert_eq!(split("http://127.0.0.1:8080/ucp/mcp"), ("127.0.0.1:8080".into(), "/ucp/mcp".into()));
        assert_eq!(split("http://Shop.example"), ("shop.example".into(), "/".into()));
    }

    #[test]
    fn signed_requests_carry_digest_and_signature() {
        let headers = Signer::new().headers("POST", "http://127.0.0.1:1/ucp/mcp", Some(b"{}"), Some("k"));
        let names: Vec<&str> = headers.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["content-digest", "signature-input", "signature"]);
        assert!(headers[1].1.contains(r#""idempotency-key");created="#), "{}", headers[1].1);
    }
}
