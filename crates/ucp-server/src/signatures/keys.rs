//! A platform's published keys (JWK, RFC 7517) as verifying keys. The algorithm comes from the
//! key (`kty`/`crv`), never from the request: EC P-256 → ES256, EC P-384 → ES384, OKP Ed25519
//! → EdDSA. A key we cannot use is kept with the reason, so a signature naming it gets
//! `algorithm_unsupported` while the other keys of the profile still verify.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

/// A verifying key, by algorithm.
#[derive(Debug, Clone)]
pub enum VerifyingKey {
    Es256(p256::ecdsa::VerifyingKey),
    Es384(p384::ecdsa::VerifyingKey),
    Ed25519(ed25519_dalek::VerifyingKey),
}

impl VerifyingKey {
    /// The RFC 9421 algorithm name (the value an `alg` parameter would carry).
    pub fn rfc9421_name(&self) -> &'static str {
        match self {
            VerifyingKey::Es256(_) => "ecdsa-p256-sha256",
            VerifyingKey::Es384(_) => "ecdsa-p384-sha384",
            VerifyingKey::Ed25519(_) => "ed25519",
        }
    }

    /// Checks `signature` (raw `r‖s` for ECDSA, the 64-byte RFC 8032 value for Ed25519) over
    /// `message`. A DER-encoded ECDSA value has the wrong length and fails.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        use p256::ecdsa::signature::Verifier;
        match self {
            VerifyingKey::Es256(key) => p256::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|signature| key.verify(message, &signature).is_ok()),
            VerifyingKey::Es384(key) => p384::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|signature| key.verify(message, &signature).is_ok()),
            VerifyingKey::Ed25519(key) => <[u8; 64]>::try_from(signature)
                .is_ok_and(|bytes| key.verify_strict(message, &ed25519_dalek::Signature::from_bytes(&bytes)).is_ok()),
        }
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
    let (algorithm, key) = match (member("kty"), member("crv")) {
        (Some("EC"), Some("P-256")) => {
            let point = [&[4u8][..], &coordinate("x", 32)?, &coordinate("y", 32)?].concat();
            let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&point)
                .map_err(|_| "the P-256 key is not a point of the curve".to_owned())?;
            ("ES256", VerifyingKey::Es256(key))
        }
        (Some("EC"), Some("P-384")) => {
            let point = [&[4u8][..], &coordinate("x", 48)?, &coordinate("y", 48)?].concat();
            let key = p384::ecdsa::VerifyingKey::from_sec1_bytes(&point)
                .map_err(|_| "the P-384 key is not a point of the curve".to_owned())?;
            ("ES384", VerifyingKey::Es384(key))
        }
        (Some("OKP"), Some("Ed25519")) => {
            let bytes: [u8; 32] = coordinate("x", 32)?.try_into().map_err(|_| "bad Ed25519 key".to_owned())?;
            let key = ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                .map_err(|_| "the Ed25519 key is not a valid point".to_owned())?;
            ("EdDSA", VerifyingKey::Ed25519(key))
        }
        (kty, crv) => {
            return Err(format!(
                "key type {} / curve {} is not supported (ES256, ES384 and Ed25519 are)",
                kty.unwrap_or("?"),
                crv.unwrap_or("none")
            ));
        }
    };
    match member("alg") {
        Some(alg) if alg != algorithm && !(algorithm == "EdDSA" && alg == "Ed25519") => {
            Err(format!("the key's alg {alg} does not match its curve ({algorithm})"))
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
        assert!(matches!(set.find("ed").unwrap().key, Ok(VerifyingKey::Ed25519(_))));
        assert!(set.find("rsa").unwrap().key.is_err());
        assert!(set.find("p521").unwrap().key.as_ref().unwrap_err().contains("P-521"));
        assert!(set.find("enc").is_none() && set.find("ops").is_none());
        assert!(set.find("mismatch").unwrap().key.is_err());
    }
}
