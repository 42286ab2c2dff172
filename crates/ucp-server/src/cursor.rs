//! Opaque, tamper-evident keyset cursors for catalog search (the domain's `Cursors` port).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use ucp_domain::commerce::{self as core, Cursor, CursorError, SearchKey};
use ucp_domain::store::SearchPosition;

fn query_fingerprint(key: &SearchKey<'_>) -> [u8; 8] {
    let mut hasher = Sha256::new();
    for term in key.terms {
        hasher.update(term.as_bytes());
        hasher.update([0]);
    }
    hasher.update([1]);
    for category in key.categories {
        hasher.update(category.to_lowercase().as_bytes());
        hasher.update([0]);
    }
    hasher.update(key.price_min.unwrap_or(-1).to_le_bytes());
    hasher.update(key.price_max.unwrap_or(-1).to_le_bytes());
    hasher.update(key.currency.as_bytes());
    let digest = hasher.finalize();
    let mut fingerprint = [0u8; 8];
    fingerprint.copy_from_slice(&digest[..8]);
    fingerprint
}

/// Opaque, tamper-evident keyset cursors: the position, the search they belong to, and an
/// HMAC-SHA256 tag under a secret kept in the data directory.
#[derive(Clone)]
pub struct CursorCodec {
    /// The MAC keyed with the secret, cloned for each tag: keying hashes the two padded keys,
    /// half of a cursor tag's work, and most search pages carry a cursor.
    keyed: Hmac<Sha256>,
}

impl std::fmt::Debug for CursorCodec {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("CursorCodec")
    }
}

const CURSOR_VERSION: u8 = 1;
const CURSOR_PAYLOAD: usize = 1 + 8 + 1 + 8 + 8;
const CURSOR_TAG: usize = 16;

impl CursorCodec {
    pub fn new(secret: Vec<u8>) -> CursorCodec {
        CursorCodec { keyed: Hmac::<Sha256>::new_from_slice(&secret).expect("HMAC takes keys of any length") }
    }

    fn tag(&self, payload: &[u8]) -> [u8; CURSOR_TAG] {
        let mut mac = self.keyed.clone();
        mac.update(payload);
        let full = mac.finalize().into_bytes();
        let mut tag = [0u8; CURSOR_TAG];
        tag.copy_from_slice(&full[..CURSOR_TAG]);
        tag
    }

    fn encode(&self, fingerprint: &[u8; 8], match_all_terms: bool, position: SearchPosition) -> String {
        let mut bytes = Vec::with_capacity(CURSOR_PAYLOAD + CURSOR_TAG);
        bytes.push(CURSOR_VERSION);
        bytes.extend_from_slice(fingerprint);
        bytes.push(u8::from(match_all_terms));
        bytes.extend_from_slice(&position.score.to_bits().to_le_bytes());
        bytes.extend_from_slice(&position.row.to_le_bytes());
        let tag = self.tag(&bytes);
        bytes.extend_from_slice(&tag);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn decode(&self, cursor: &str, fingerprint: &[u8; 8]) -> Result<Cursor, CursorError> {
        let invalid = || CursorError::Invalid;
        let bytes = URL_SAFE_NO_PAD.decode(cursor.as_bytes()).map_err(|_| invalid())?;
        if bytes.len() != CURSOR_PAYLOAD + CURSOR_TAG || bytes[0] != CURSOR_VERSION {
            return Err(invalid());
        }
        let (payload, tag) = bytes.split_at(CURSOR_PAYLOAD);
        let mut mac = self.keyed.clone();
        mac.update(payload);
        mac.verify_truncated_left(tag).map_err(|_| invalid())?;
        if &payload[1..9] != fingerprint {
            return Err(CursorError::OtherSearch);
        }
        let score = f64::from_bits(u64::from_le_bytes(payload[10..18].try_into().map_err(|_| invalid())?));
        let row = i64::from_le_bytes(payload[18..26].try_into().map_err(|_| invalid())?);
        Ok(Cursor { match_all_terms: payload[9] == 1, position: SearchPosition { score, row } })
    }
}

impl core::Cursors for CursorCodec {
    fn encode(&self, key: &SearchKey<'_>, cursor: Cursor) -> String {
        CursorCodec::encode(self, &query_fingerprint(key), cursor.match_all_terms, cursor.position)
    }

    fn decode(&self, text: &str, key: &SearchKey<'_>) -> Result<Cursor, CursorError> {
        CursorCodec::decode(self, text, &query_fingerprint(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_tamper_evident_and_bound_to_their_search() {
        let codec = CursorCodec::new(vec![7; 32]);
        let cursor = codec.encode(&[1; 8], false, SearchPosition { score: -3.25, row: 42 });
        let decoded = codec.decode(&cursor, &[1; 8]).ok().unwrap();
        assert_eq!(decoded.position, SearchPosition { score: -3.25, row: 42 });
        assert!(!decoded.match_all_terms);
        assert!(codec.decode(&cursor, &[2; 8]).is_err());
        let mut tampered = URL_SAFE_NO_PAD.decode(&cursor).unwrap();
        tampered[20] ^= 1;
        assert!(codec.decode(&URL_SAFE_NO_PAD.encode(tampered), &[1; 8]).is_err());
        assert!(CursorCodec::new(vec![8; 32]).decode(&cursor, &[1; 8]).is_err());
        assert!(codec.decode("not a cursor", &[1; 8]).is_err());
    }

    #[test]
    fn each_tag_is_the_secrets_hmac_of_its_payload_alone() {
        let codec = CursorCodec::new(vec![7; 32]);
        let position = SearchPosition { score: 1.5, row: 9 };
        let first = codec.encode(&[3; 8], true, position);
        codec.encode(&[4; 8], false, SearchPosition { score: 0.0, row: 1 });
        assert_eq!(codec.encode(&[3; 8], true, position), first, "a tag carries nothing of the one before");
        let bytes = URL_SAFE_NO_PAD.decode(&first).unwrap();
        let (payload, tag) = bytes.split_at(CURSOR_PAYLOAD);
        let mut fresh = Hmac::<Sha256>::new_from_slice(&[7; 32]).unwrap();
        fresh.update(payload);
        assert_eq!(tag, &fresh.finalize().into_bytes()[..CURSOR_TAG]);
    }
}
