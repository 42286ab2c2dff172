//! `--sign`: RFC 9421 signatures on every request, the way Google signs (label `sig-ucp`,
//! `tag="ucp-rest-request"`, covering `@method @path @authority`, `content-type` and
//! `content-digest` with a body, `idempotency-key` when sent), with a fixed ES256 test key
//! whose public JWK `ucpd-bench jwk` prints for the benchmark platform's profile. Signing is
//! aws-lc-rs (the server's library): the driver shares the machine's cores with the server,
//! so its own signing should cost as little of them as it can.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use sha2::{Digest, Sha256};

/// The benchmark platform's key id.
pub(crate) const KID: &str = "ucpd-bench-es256";

/// The fixed benchmark key (a test key: never use it for anything else).
pub(crate) struct Signer {
    key: p256::ecdsa::SigningKey,
    pair: aws_lc_rs::signature::EcdsaKeyPair,
}

impl Signer {
    pub(crate) fn new() -> Signer {
        let key = p256::ecdsa::SigningKey::from_slice(&[0x42; 32]).expect("a valid P-256 scalar");
        let public = key.verifying_key().to_encoded_point(false);
        let pair = aws_lc_rs::signature::EcdsaKeyPair::from_private_key_and_public_key(
            &aws_lc_rs::signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            &key.to_bytes(),
            public.as_bytes(),
        )
        .expect("the same key in aws-lc-rs");
        Signer { key, pair }
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
        let signature = self.pair.sign(&aws_lc_rs::rand::SystemRandom::new(), base.as_bytes()).expect("ECDSA signing");
        headers.push(("signature-input", format!("sig-ucp={params}")));
        headers.push(("signature", format!("sig-ucp=:{}:", STANDARD.encode(signature.as_ref()))));
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
        // Raw r‖s, 64 bytes, that the published key verifies (p256, independently).
        use p256::ecdsa::signature::Verifier as _;
        let signer = Signer::new();
        let headers = signer.headers("GET", "http://127.0.0.1:1/ucp/v1/orders/1", None, None);
        let value = headers[1].1.trim_start_matches("sig-ucp=:").trim_end_matches(':');
        let signature = p256::ecdsa::Signature::from_slice(&STANDARD.decode(value).unwrap()).unwrap();
        let params = headers[0].1.trim_start_matches("sig-ucp=");
        let base = format!(
            "\"@method\": GET\n\"@path\": /ucp/v1/orders/1\n\"@authority\": 127.0.0.1:1\n\"@signature-params\": {params}"
        );
        assert!(signer.key.verifying_key().verify(base.as_bytes(), &signature).is_ok());
    }
}
