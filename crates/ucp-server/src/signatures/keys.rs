//! A platform's published keys (JWK, RFC 7517) as verifying keys. The algorithm comes from the
//! key (`kty`/`crv`), never from the request: EC P-256 → ES256, EC P-384 → ES384, OKP Ed25519
//! → EdDSA. A key we cannot use is kept with the reason, so a signature naming it gets
//! `algorithm_unsupported` while the other keys of the profile still verify.
//!
//! Keys are parsed once, when a profile enters the cache ([`KeySet::from_jwks`]), into
//! aws-lc-rs `ParsedPublicKey`s (the library rustls already uses): a request's verification is
//! one curve operation, with no key decoding or point validation on the hot path.

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, ECDSA_P384_SHA384_FIXED, ED25519, ParsedPublicKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

/// The algorithms we verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    Es256,
    Es384,
    Ed25519,
}

impl Algorithm {
    /// The RFC 9421 algorithm name (the value an `alg` parameter would carry).
    pub fn rfc9421_name(self) -> &'static str {
        match self {
            Algorithm::Es256 => "ecdsa-p256-sha256",
            Algorithm::Es384 => "ecdsa-p384-sha384",
            Algorithm::Ed25519 => "ed25519",
        }
    }

    /// The JWS name (RFC 7518 / RFC 8037) a JWK's `alg` would carry.
    fn jws_name(self) -> &'static str {
        match self {
            Algorithm::Es256 => "ES256",
            Algorithm::Es384 => "ES384",
            Algorithm::Ed25519 => "EdDSA",
        }
    }
}

/// A verifying key, parsed and validated once.
#[derive(Clone)]
pub struct VerifyingKey {
    algorithm: Algorithm,
    key: ParsedPublicKey,
}

impl std::fmt::Debug for VerifyingKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("VerifyingKey").field("algorithm", &self.algorithm).finish_non_exhaustive()
    }
}

impl VerifyingKey {
    /// A key from its public bytes: the uncompressed SEC1 point (`04‖x‖y`) for ECDSA, the
    /// 32-byte RFC 8032 value for Ed25519. A point off the curve, or a small-order Ed25519
    /// key (which would verify forged signatures), is refused.
    pub fn from_public_bytes(algorithm: Algorithm, bytes: &[u8]) -> Result<VerifyingKey, String> {
        let parsed = match algorithm {
            Algorithm::Es256 => ParsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, bytes)
                .map_err(|_| "the P-256 key is not a point of the curve".to_owned())?,
            Algorithm::Es384 => ParsedPublicKey::new(&ECDSA_P384_SHA384_FIXED, bytes)
                .map_err(|_| "the P-384 key is not a point of the curve".to_owned())?,
            Algorithm::Ed25519 => {
                let bytes: [u8; 32] = bytes.try_into().map_err(|_| "bad Ed25519 key".to_owned())?;
                let point = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                    .map_err(|_| "the Ed25519 key is not a valid point".to_owned())?;
                if point.is_weak() {
                    return Err("the Ed25519 key is of small order".to_owned());
                }
                ParsedPublicKey::new(&ED25519, bytes).map_err(|_| "the Ed25519 key is not a valid point".to_owned())?
            }
        };
        Ok(VerifyingKey { algorithm, key: parsed })
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The RFC 9421 algorithm name (the value an `alg` parameter would carry).
    pub fn rfc9421_name(&self) -> &'static str {
        self.algorithm.rfc9421_name()
    }

    /// Checks `signature` (raw `r‖s` for ECDSA, the 64-byte RFC 8032 value for Ed25519) over
    /// `message`. A DER-encoded ECDSA value has the wrong length and fails.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        self.key.verify_sig(message, signature).is_ok()
    }
}

/// One published key: usable, or why not.
#[derive(Debug, Clone)]
pub struct PublishedKey {
    pub kid: String,
    pub key: Result<VerifyingKey, String>,
}

/// The signature keys of one profile.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    pub keys: Vec<PublishedKey>,
}

impl KeySet {
    /// Reads `keys` / `signing_keys` entries (already checked for `kid`, `kty` and no private
    /// member by the profile parser). Keys for encryption (`use: "enc"`, or `key_ops` without
    /// `verify`) are left out; a kid published twice keeps its first usable entry.
    pub fn from_jwks(jwks: &[Value]) -> KeySet {
        let mut keys: Vec<PublishedKey> = Vec::new();
        for jwk in jwks {
            let Some(kid) = jwk.get("kid").and_then(Value::as_str) else { continue };
            if jwk.get("use").and_then(Value::as_str).is_some_and(|usage| usage != "sig") {
                continue;
            }
            if let Some(operations) = jwk.get("key_ops").and_then(Value::as_array)
                && !operations.iter().any(|operation| operation == "verify")
            {
                continue;
            }
            let key = parse_jwk(jwk);
            match keys.iter_mut().find(|known| known.kid == kid) {
                Some(known) if known.key.is_err() && key.is_ok() => known.key = key,
                Some(_) => {}
                None => keys.push(PublishedKey { kid: kid.to_owned(), key }),
            }
        }
        KeySet { keys }
    }

    pub fn find(&self, kid: &str) -> Option<&PublishedKey> {
        self.keys.iter().find(|key| key.kid == kid)
    }
}

/// One JWK as a verifying key.
pub fn parse_jwk(jwk: &Value) -> Result<VerifyingKey, String> {
    let member = |name: &str| jwk.get(name).and_then(Value::as_str);
    let coordinate = |name: &str, length: usize| -> Result<Vec<u8>, String> {
        let bytes = URL_SAFE_NO_PAD
            .decode(member(name).ok_or_else(|| format!("the key has no {name}"))?)
            .map_err(|_| format!("the key's {name} is not base64url"))?;
        if bytes.len() != length {
            return Err(format!("the key's {name} is {} bytes, expected {length}", bytes.len()));
        }
        Ok(bytes)
    };
    let (algorithm, bytes) = match (member("kty"), member("crv")) {
        (Some("EC"), Some("P-256")) => {
            (Algorithm::Es256, [&[4u8][..], &coordinate("x", 32)?, &coordinate("y", 32)?].concat())
        }
        (Some("EC"), Some("P-384")) => {
            (Algorithm::Es384, [&[4u8][..], &coordinate("x", 48)?, &coordinate("y", 48)?].concat())
        }
        (Some("OKP"), Some("Ed25519")) => (Algorithm::Ed25519, coordinate("x", 32)?),
        (kty, crv) => {
            return Err(format!(
                "key type {} / curve {} is not supported (ES256, ES384 and Ed25519 are)",
                kty.unwrap_or("?"),
                crv.unwrap_or("none")
            ));
        }
    };
    let key = VerifyingKey::from_public_bytes(algorithm, &bytes)?;
    let expected = algorithm.jws_name();
    match member("alg") {
        Some(alg) if alg != expected && !(algorithm == Algorithm::Ed25519 && alg == "Ed25519") => {
            Err(format!("the key's alg {alg} does not match its curve ({expected})"))
        }
        _ => Ok(key),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_typed_by_curve_and_unusable_ones_do_not_spoil_the_rest() {
        let set = KeySet::from_jwks(&[
            json!({ "kid": "ed", "kty": "OKP", "crv": "Ed25519", "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }),
            json!({ "kid": "rsa", "kty": "RSA", "n": "AQAB", "e": "AQAB" }),
            json!({ "kid": "p521", "kty": "EC", "crv": "P-521", "x": "AA", "y": "AA" }),
            json!({ "kid": "enc", "kty": "OKP", "crv": "Ed25519", "use": "enc", "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }),
            json!({ "kid": "ops", "kty": "OKP", "crv": "Ed25519", "key_ops": ["encrypt"], "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }),
            json!({ "kid": "mismatch", "kty": "OKP", "crv": "Ed25519", "alg": "ES256", "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }),
        ]);
        assert_eq!(set.find("ed").unwrap().key.as_ref().unwrap().algorithm(), Algorithm::Ed25519);
        assert!(set.find("rsa").unwrap().key.is_err());
        assert!(set.find("p521").unwrap().key.as_ref().unwrap_err().contains("P-521"));
        assert!(set.find("enc").is_none() && set.find("ops").is_none());
        assert!(set.find("mismatch").unwrap().key.is_err());
    }

    // A small-order Ed25519 key (here the identity point) would accept forged signatures.
    #[test]
    fn weak_and_off_curve_keys_are_refused() {
        let identity = URL_SAFE_NO_PAD.encode([&[1u8][..], &[0u8; 31]].concat());
        let weak = parse_jwk(&json!({ "kid": "weak", "kty": "OKP", "crv": "Ed25519", "x": identity }));
        assert!(weak.unwrap_err().contains("small order"));
        let zero = URL_SAFE_NO_PAD.encode([0u8; 32]);
        let off = parse_jwk(&json!({ "kid": "off", "kty": "EC", "crv": "P-256", "x": zero, "y": zero }));
        assert!(off.unwrap_err().contains("not a point"));
    }
}
