//! The business's signing key (ES256, P-256): generated on first start, kept in the data
//! directory as PKCS#8 PEM (mode 0600), published as a public JWK in the profile.
//! Also the random secret that makes catalog cursors tamper-evident.

use std::io::Write;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use p256::SecretKey;
use p256::pkcs8::{DecodePrivateKey, EncodePrivateKey, LineEnding};
use rand::RngCore;
use sha2::{Digest, Sha256};

const SIGNING_KEY_FILE: &str = "signing-key.pem";
const CURSOR_SECRET_FILE: &str = "cursor-secret";

/// The business signing key and its published form.
#[derive(Clone)]
pub struct SigningKey {
    secret: SecretKey,
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
        let secret = match std::fs::read_to_string(&path) {
            Ok(pem) => SecretKey::from_pkcs8_pem(&pem).map_err(|error| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: {error}", path.display()))
            })?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let secret = generate_secret();
                let pem = secret
                    .to_pkcs8_pem(LineEnding::LF)
                    .map_err(|error| std::io::Error::other(format!("encoding the signing key: {error}")))?;
                write_private(&path, pem.as_bytes())?;
                tracing::info!(path = %path.display(), "generated a new business signing key");
                secret
            }
            Err(error) => return Err(error),
        };
        let kid = thumbprint(&secret);
        Ok(SigningKey { secret, kid })
    }

    /// The public JWK, with no private members.
    pub fn public_jwk(&self) -> serde_json::Value {
        let (x, y) = coordinates(&self.secret);
        serde_json::json!({ "kid": self.kid, "kty": "EC", "crv": "P-256", "x": x, "y": y, "use": "sig", "alg": "ES256" })
    }
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
