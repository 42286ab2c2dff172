//! RFC 9530 `Content-Digest`: `sha-256` and `sha-512` over the exact bytes received (or sent),
//! never over re-serialized JSON.

use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256, Sha512};

use crate::error::{ApiError, ErrorKind};

/// `sha-256=:<base64>:` for `body`, the value we send.
pub fn sha256_header(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
}

/// Checks every `Content-Digest` member we know (`sha-256`, `sha-512`) against `body`; other
/// algorithms are ignored, but at least one known one must be there. `Ok(false)` when the
/// request has no `Content-Digest` at all.
pub fn check(headers: &HeaderMap, body: &[u8]) -> Result<bool, ApiError> {
    let mismatch = |reason: String| ApiError::new(ErrorKind::DigestMismatch, reason);
    let Some(text) = super::base::joined_field(headers, "content-digest")
        .map_err(|_| mismatch("Content-Digest is not visible ASCII".into()))?
    else {
        return Ok(false);
    };
    let dictionary: sfv::Dictionary = sfv::Parser::new(&text)
        .parse_dictionary()
        .map_err(|_| mismatch("Content-Digest is not an RFC 8941 dictionary".into()))?;
    let mut checked = 0;
    for (algorithm, entry) in &dictionary {
        let expected: Vec<u8> = match algorithm.as_str() {
            "sha-256" => Sha256::digest(body).to_vec(),
            "sha-512" => Sha512::digest(body).to_vec(),
            _ => continue,
        };
        let sent = match entry {
            sfv::ListEntry::Item(item) => item.bare_item.as_byte_sequence(),
            sfv::ListEntry::InnerList(_) => None,
        }
        .ok_or_else(|| mismatch(format!("Content-Digest {algorithm} is not a byte sequence (:base64:)")))?;
        if sent != expected.as_slice() {
            return Err(mismatch(format!("Content-Digest {algorithm} does not match the request body as received")));
        }
        checked += 1;
    }
    if checked == 0 {
        // Only algorithms we do not compute: not a mismatch, an algorithm we cannot check.
        return Err(ApiError::new(
            ErrorKind::AlgorithmUnsupported,
            "Content-Digest has neither sha-256 nor sha-512, the algorithms this server checks",
        ));
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("content-digest", HeaderValue::from_str(value).unwrap());
        headers
    }

    // RFC 9530 Appendix B.1 (`{"hello": "world"}`), and checklist 65.
    #[test]
    fn rfc_9530_examples_verify_and_one_flipped_byte_fails() {
        let body = br#"{"hello": "world"}"#;
        assert_eq!(sha256_header(body), "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:");
        assert_eq!(check(&with("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"), body), Ok(true));
        let sha512 =
            "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:";
        assert_eq!(check(&with(sha512), body), Ok(true));
        assert_eq!(check(&with(&format!("{sha512}, md5=:AAAA:")), body), Ok(true));
        assert_eq!(check(&HeaderMap::new(), body), Ok(false));
        let tampered = br#"{"hello": "worle"}"#;
        for (headers, bytes) in [
            (with("sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"), &tampered[..]),
            (with(sha512), tampered),
            (with("sha-256=\"X48E9q\""), body),
            (with("sha-256=:!!:"), body),
            (with("((("), body),
        ] {
            assert_eq!(check(&headers, bytes).unwrap_err().kind, ErrorKind::DigestMismatch);
        }
        // Checklist 73: only algorithms we do not compute is `algorithm_unsupported`.
        assert_eq!(check(&with("md5=:AAAA:"), body).unwrap_err().kind, ErrorKind::AlgorithmUnsupported);
    }
}
