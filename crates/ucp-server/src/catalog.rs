//! The catalog capability on the wire: the request bodies of search_catalog,
//! lookup_catalog and get_product, their conversion into the core's requests, the rendering
//! of its answers, and the HMAC-tagged cursors the core pages with.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use ucp_domain::commerce::{self as core, Answer, Cursor, CursorError, SearchKey};
use ucp_domain::store::SearchPosition;
use ucp_protocol::resources::{ErrorBody, LookupBody, ProductBody, SearchBody};

use crate::error::ApiError;
use crate::response::Envelope;
use crate::state::AppState;

use ucp_protocol::requests::{Filters, RequestContext};
pub use ucp_protocol::requests::{GetProductRequest, LookupRequest, SearchRequest};

fn filters_of(filters: Option<Filters>) -> core::CatalogFilters {
    let filters = filters.unwrap_or_default();
    let price = filters.price.unwrap_or_default();
    core::CatalogFilters {
        categories: filters.categories.unwrap_or_default(),
        price_min: price.min,
        price_max: price.max,
    }
}

fn currency_of(context: Option<RequestContext>) -> Option<String> {
    context.and_then(|context| context.currency)
}

fn to_json<T: serde::Serialize>(body: &T) -> Result<String, ApiError> {
    serde_json::to_string(body).map_err(ApiError::internal)
}

/// `search_catalog`.
pub async fn search_catalog(state: &AppState, envelope: &Envelope, request: SearchRequest) -> Result<String, ApiError> {
    let pagination = request.pagination.unwrap_or_default();
    let request = core::SearchRequest {
        query: request.query,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
        cursor: pagination.cursor,
        limit: pagination.limit,
    };
    let results = state.core.search_catalog(request).await?;
    to_json(&SearchBody::new(envelope.ucp(), &results))
}

/// `lookup_catalog`.
pub async fn lookup_catalog(state: &AppState, envelope: &Envelope, request: LookupRequest) -> Result<String, ApiError> {
    let request = core::LookupRequest {
        ids: request.ids,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
    };
    let results = state.core.lookup_catalog(request).await?;
    to_json(&LookupBody::new(envelope.ucp(), &results))
}

/// `get_product`.
pub async fn get_product(
    state: &AppState,
    envelope: &Envelope,
    request: GetProductRequest,
) -> Result<String, ApiError> {
    let request = core::ProductRequest {
        id: request.id,
        selected: request.selected,
        preferences: request.preferences,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
    };
    match state.core.get_product(request).await? {
        Answer::Resource(view) => to_json(&ProductBody::new(envelope.ucp(), &view)),
        Answer::Refused(refusal) => {
            to_json(&ErrorBody::refusal(&envelope.version, &refusal, Some(&state.profile.base_url)))
        }
    }
}

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
    secret: Vec<u8>,
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
        CursorCodec { secret }
    }

    fn tag(&self, payload: &[u8]) -> [u8; CURSOR_TAG] {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
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
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
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
}
