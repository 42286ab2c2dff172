//! The business's signing keys (ES256, P-256): the current one is generated on first start
//! (or by `ucpd keys generate`) and kept in the data directory as PKCS#8 PEM (mode 0600);
//! `ucpd keys rotate` makes a new current key and moves the old one to `retired-keys/`, where
//! it stays published in the profile (so still verifiable) for a grace period, then drops
//! out. Also the random secret that makes catalog cursors tamper-evident.

use std::io::Write;
use std::path::Path;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::SecretKey;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use rand::RngCore;
use sha2::{Digest, Sha256};

const SIGNING_KEY_FILE: &str = "signing-key.pem";
/// `<retired unix seconds>-<kid>.pem` per rotated-out key.
const RETIRED_DIR: &str = "retired-keys";
const CURSOR_SECRET_FILE: &str = "cursor-secret";

/// The business signing key and its published form.
#[derive(Clone)]
pub struct SigningKey {
    secret: SecretKey,
    /// The same key in aws-lc-rs, which signs (several times faster than the pure-Rust p256).
    signer: std::sync::Arc<EcdsaKeyPair>,
    /// RFC 7638 thumbprint of the public key, used as `kid`.
    pub kid: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("SigningKey").field("kid", &self.kid).finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Loads the key from `data_dir`, creating it on first start.
    pub fn load_or_create(data_dir: &Path) -> std::io::Result<SigningKey> {
        let path = data_dir.join(SIGNING_KEY_FILE);
        match SigningKey::read(&path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let key = SigningKey::generate();
                write_private(&path, key.pem()?.as_bytes())?;
                tracing::info!(path = %path.display(), kid = %key.kid, "generated a new business signing key");
                Ok(key)
            }
            other => other,
        }
    }

    /// A fresh random key.
    pub fn generate() -> SigningKey {
        loop {
            if let Ok(key) = SigningKey::from_secret(generate_secret()) {
                return key;
            }
        }
    }

    fn from_secret(secret: SecretKey) -> Result<SigningKey, aws_lc_rs::error::KeyRejected> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let public = secret.public_key().to_encoded_point(false);
        let signer = EcdsaKeyPair::from_private_key_and_public_key(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &secret.to_bytes(),
            public.as_bytes(),
        )?;
        let kid = thumbprint(&secret);
        Ok(SigningKey { secret, signer: std::sync::Arc::new(signer), kid })
    }

    fn read(path: &Path) -> std::io::Result<SigningKey> {
        let pem = std::fs::read_to_string(path)?;
        let invalid = |error: &dyn std::fmt::Display| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display()))
        };
        let secret = SecretKey::from_pkcs8_pem(&pem).map_err(|error| invalid(&error))?;
        SigningKey::from_secret(secret).map_err(|error| invalid(&error))
    }

    fn pem(&self) -> std::io::Result<String> {
        self.secret
            .to_pkcs8_pem(LineEnding::LF)
            .map(|pem| pem.to_string())
            .map_err(|error| std::io::Error::other(format!("encoding the signing key: {error}")))
    }

    /// An ES256 signature over `message`: raw `r‖s`, 64 bytes (RFC 9421 §3.3.4).
    /// `None` only if the library fails internally (never for a key it accepted).
    pub fn sign(&self, message: &[u8]) -> Option<[u8; 64]> {
        let signature = self.signer.sign(&SystemRandom::new(), message).ok()?;
        signature.as_ref().try_into().ok()
    }

    /// The public JWK, with no private members.
    pub fn public_jwk(&self) -> serde_json::Value {
        let (x, y) = coordinates(&self.secret);
        serde_json::json!({ "kid": self.kid, "kty": "EC", "crv": "P-256", "x": x, "y": y, "use": "sig", "alg": "ES256" })
    }
}

/// A rotated-out key, still published until `retired_at` + the grace period.
#[derive(Debug, Clone)]
pub struct RetiredKey {
    pub key: SigningKey,
    /// Unix seconds of the rotation that retired it.
    pub retired_at: i64,
}

/// The current signing key and the retired ones still inside their grace period.
#[derive(Debug, Clone)]
pub struct KeyRing {
    pub current: SigningKey,
    pub retired: Vec<RetiredKey>,
}

impl KeyRing {
    /// The current key (created on first start) and the retired keys whose grace period
    /// (`grace_secs` after their retirement) has not ended at `now`.
    pub fn load(data_dir: &Path, grace_secs: i64, now: i64) -> std::io::Result<KeyRing> {
        let current = SigningKey::load_or_create(data_dir)?;
        let retired = retired_keys(data_dir)?
            .into_iter()
            .filter(|retired| retired.retired_at + grace_secs > now && retired.key.kid != current.kid)
            .collect();
        Ok(KeyRing { current, retired })
    }

    /// The public JWKs to publish: the current key first, then the retired ones in grace.
    pub fn public_jwks(&self) -> Vec<serde_json::Value> {
        std::iter::once(&self.current)
            .chain(self.retired.iter().map(|retired| &retired.key))
            .map(SigningKey::public_jwk)
            .collect()
    }

    /// `ucpd keys generate`: creates the first key; an existing key is kept (`Err` names it).
    pub fn generate(data_dir: &Path) -> std::io::Result<Result<String, String>> {
        let path = data_dir.join(SIGNING_KEY_FILE);
        if path.exists() {
            return Ok(Err(SigningKey::read(&path)?.kid));
        }
        std::fs::create_dir_all(data_dir)?;
        Ok(Ok(SigningKey::load_or_create(data_dir)?.kid))
    }

    /// `ucpd keys rotate`: a new current key; the old one moves to `retired-keys/` (published
    /// for the grace period from `now`); retired keys past their grace period are deleted.
    /// Returns (old kid, new kid).
    pub fn rotate(data_dir: &Path, grace_secs: i64, now: i64) -> std::io::Result<(String, String)> {
        let current_path = data_dir.join(SIGNING_KEY_FILE);
        let old = SigningKey::load_or_create(data_dir)?;
        let retired_dir = data_dir.join(RETIRED_DIR);
        std::fs::create_dir_all(&retired_dir)?;
        for retired in retired_keys(data_dir)? {
            if retired.retired_at + grace_secs <= now {
                std::fs::remove_file(retired_dir.join(format!("{}-{}.pem", retired.retired_at, retired.key.kid)))?;
            }
        }
        let new = SigningKey::generate();
        let staged = data_dir.join(format!("{SIGNING_KEY_FILE}.new"));
        let _ = std::fs::remove_file(&staged);
        write_private(&staged, new.pem()?.as_bytes())?;
        std::fs::rename(&current_path, retired_dir.join(format!("{now}-{}.pem", old.kid)))?;
        std::fs::rename(&staged, &current_path)?;
        Ok((old.kid, new.kid))
    }

    /// `ucpd keys list`: (kid, state) for every key on disk, current first; a retired key's
    /// state says until when it stays published.
    pub fn list(data_dir: &Path, grace_secs: i64, now: i64) -> std::io::Result<Vec<(String, String)>> {
        let mut rows = Vec::new();
        match SigningKey::read(&data_dir.join(SIGNING_KEY_FILE)) {
            Ok(current) => rows.push((current.kid, "current (signing, published)".to_owned())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
        for retired in retired_keys(data_dir)? {
            let until = retired.retired_at + grace_secs;
            let state = if until > now {
                format!("retired, published until {}", rfc3339(until))
            } else {
                format!("retired, expired {} (no longer published)", rfc3339(until))
            };
            rows.push((retired.key.kid, state));
        }
        Ok(rows)
    }
}

fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|instant| instant.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| unix.to_string())
}

/// The keys in `retired-keys/`, newest first; files that are not `<unix>-<kid>.pem` are ignored.
fn retired_keys(data_dir: &Path) -> std::io::Result<Vec<RetiredKey>> {
    let directory = data_dir.join(RETIRED_DIR);
    let entries = match std::fs::read_dir(&directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut keys = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".pem") else { continue };
        let Some((when, _kid)) = stem.split_once('-') else { continue };
        let Ok(retired_at) = when.parse::<i64>() else { continue };
        keys.push(RetiredKey { key: SigningKey::read(&entry.path())?, retired_at });
    }
    keys.sort_by_key(|retired| std::cmp::Reverse(retired.retired_at));
    Ok(keys)
}

/// The 32-byte secret for cursor MACs, created on first start.
pub fn load_or_create_cursor_secret(data_dir: &Path) -> std::io::Result<Vec<u8>> {
    let path = data_dir.join(CURSOR_SECRET_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => hex::decode(text.trim()).map_err(|error| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display()))
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let mut secret = vec![0u8; 32];
            rand::rng().fill_bytes(&mut secret);
            write_private(&path, hex::encode(&secret).as_bytes())?;
            Ok(secret)
        }
        Err(error) => Err(error),
    }
}

fn generate_secret() -> SecretKey {
    loop {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        if let Ok(secret) = SecretKey::from_slice(&bytes) {
            return secret;
        }
    }
}

fn coordinates(secret: &SecretKey) -> (String, String) {
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    let point = secret.public_key().to_encoded_point(false);
    let x = point.x().map(|x| URL_SAFE_NO_PAD.encode(x)).unwrap_or_default();
    let y = point.y().map(|y| URL_SAFE_NO_PAD.encode(y)).unwrap_or_default();
    (x, y)
}

fn thumbprint(secret: &SecretKey) -> String {
    let (x, y) = coordinates(secret);
    let canonical = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_keeps_the_old_key_published_for_the_grace_period_only() {
        let directory = tempfile::tempdir().unwrap();
        let data = directory.path();
        let first = KeyRing::generate(data).unwrap().unwrap();
        assert_eq!(KeyRing::generate(data).unwrap(), Err(first.clone()));
        let (old, new) = KeyRing::rotate(data, 100, 1_000).unwrap();
        assert_eq!(old, first);
        assert_ne!(new, first);
        let ring = KeyRing::load(data, 100, 1_050).unwrap();
        assert_eq!(ring.current.kid, new);
        let kids: Vec<String> = ring.public_jwks().iter().map(|jwk| jwk["kid"].as_str().unwrap().to_owned()).collect();
        assert_eq!(kids, [new.clone(), first.clone()]);
        assert_eq!(KeyRing::load(data, 100, 1_100).unwrap().public_jwks().len(), 1, "out after the grace period");
        let listed = KeyRing::list(data, 100, 1_100).unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed[1].1.contains("no longer published"));
        // The next rotation deletes the expired file.
        KeyRing::rotate(data, 100, 2_000).unwrap();
        assert_eq!(KeyRing::list(data, 100, 2_000).unwrap().len(), 2);
    }

    #[test]
    fn signatures_are_raw_r_s_and_verify_with_the_published_jwk() {
        let key = SigningKey::generate();
        let signature = key.sign(b"base").unwrap();
        let published = crate::signatures::keys::parse_jwk(&key.public_jwk()).unwrap();
        assert!(published.verify(b"base", &signature));
        assert!(!published.verify(b"other", &signature));
        // Our signer is aws-lc-rs; an independent ECDSA implementation (p256) accepts it too.
        use p256::ecdsa::signature::Verifier;
        let independent = p256::ecdsa::VerifyingKey::from(key.secret.public_key());
        let value = p256::ecdsa::Signature::from_slice(&signature).unwrap();
        assert!(independent.verify(b"base", &value).is_ok());
    }
}
