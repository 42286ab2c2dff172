//! RFC 9421 HTTP message signatures as UCP profiles them (`security.md` §2), both ways, and
//! RFC 9530 `Content-Digest`:
//!
//! - [`digest`]: `Content-Digest` (sha-256, sha-512) over the exact bytes;
//! - [`base`]: `Signature-Input` / `Signature` parsing (sfv) and the signature base;
//! - [`keys`]: a platform profile's JWKs as verifying keys (ES256, ES384, Ed25519);
//! - [`verify`]: the coverage rules, time windows, tags, one-of-several;
//! - [`Signatures`]: what the signature layer (`layers/signature.rs`) shares: the settings and
//!   our current key, which signs our responses.

pub mod base;
pub mod digest;
pub mod keys;
pub mod verify;

#[cfg(test)]
mod tests;

use axum::http::{HeaderMap, HeaderValue};

use crate::config::SignatureSettings;
use crate::keys::SigningKey;

/// The label of our response and webhook signatures.
pub const RESPONSE_LABEL: &str = "sig1";

/// Signature settings and our signing key, built once at start.
#[derive(Debug)]
pub struct Signatures {
    pub settings: SignatureSettings,
    pub key: SigningKey,
}

impl Signatures {
    /// Adds `Content-Digest`, `Signature-Input` and `Signature` to a response: `@status`,
    /// `content-digest`, `content-type` (when the response has one), `created`, our `keyid`.
    pub fn sign_response(&self, status: u16, headers: &mut HeaderMap, body: &[u8], now: i64) {
        sign_response_with(&self.key, status, headers, body, now);
    }
}

/// [`Signatures::sign_response`] with any key (tests and the benchmark sign this way too).
pub fn sign_response_with(key: &SigningKey, status: u16, headers: &mut HeaderMap, body: &[u8], now: i64) {
    if let Ok(value) = HeaderValue::from_str(&digest::sha256_header(body)) {
        headers.insert("content-digest", value);
    }
    let mut components = vec!["@status", "content-digest"];
    if headers.contains_key("content-type") {
        components.push("content-type");
    }
    sign_message(key, base::Target::Response { status }, headers, &components, now);
}

/// Signs a request we send (order webhooks): sets `Content-Digest` over `body`, then
/// `Signature-Input` and `Signature` over `components` (in that order; derived ones from
/// `target`, the others from `headers`), with `created` and our `keyid`. Returns whether the
/// signature was added (every covered header present and visible ASCII).
pub fn sign_request_with(
    key: &SigningKey,
    target: base::Target<'_>,
    headers: &mut HeaderMap,
    body: &[u8],
    components: &[&str],
    now: i64,
) -> bool {
    if let Ok(value) = HeaderValue::from_str(&digest::sha256_header(body)) {
        headers.insert("content-digest", value);
    }
    sign_message(key, target, headers, components, now)
}

/// Adds `Signature-Input` and `Signature` (label [`RESPONSE_LABEL`]) covering `components`.
fn sign_message(
    key: &SigningKey,
    target: base::Target<'_>,
    headers: &mut HeaderMap,
    components: &[&str],
    now: i64,
) -> bool {
    let (Ok(keyid), Ok(created)) = (sfv::StringRef::from_str(&key.kid), sfv::Integer::try_from(now)) else {
        return false;
    };
    let mut serializer = sfv::ListSerializer::new();
    {
        let mut list = serializer.inner_list();
        for component in components {
            if let Ok(name) = sfv::StringRef::from_str(component) {
                list.bare_item(name);
            }
        }
        list.finish().parameter(sfv::key_ref("created"), created).parameter(sfv::key_ref("keyid"), keyid);
    }
    let Some(params_line) = serializer.finish() else { return false };
    let input = base::SignatureInput {
        label: RESPONSE_LABEL.to_owned(),
        components: components.iter().map(|name| (*name).to_owned()).collect(),
        created: Some(now),
        expires: None,
        keyid: Some(key.kid.clone()),
        alg: None,
        tag: None,
        params_line,
    };
    let message = base::Message { target, headers };
    let Ok(signature_base) = base::signature_base(&message, &input) else { return false };
    let Some(signature) = key.sign(signature_base.as_bytes()) else {
        tracing::warn!(kid = %key.kid, "the message could not be signed; sent without a signature");
        return false;
    };
    let encoded = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(signature)
    };
    match (
        HeaderValue::from_str(&format!("{RESPONSE_LABEL}={}", input.params_line)),
        HeaderValue::from_str(&format!("{RESPONSE_LABEL}=:{encoded}:")),
    ) {
        (Ok(input_value), Ok(signature_value)) => {
            headers.insert("signature-input", input_value);
            headers.insert("signature", signature_value);
            true
        }
        _ => false,
    }
}
