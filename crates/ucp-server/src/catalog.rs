//! The catalog capability on the wire: the request bodies of search_catalog,
//! lookup_catalog and get_product, their conversion into the core's requests, and the
//! rendering of its answers (the cursors the core pages with are in [`crate::cursor`]).

use ucp_domain::commerce::{self as core, Answer};
use ucp_protocol::resources::{ErrorResponse, LookupBody, ProductBody, SearchBody};

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

/// Roughly what one product of a catalog answer serializes to: buffers start that large per
/// product, so a 50 KB answer is written without being copied through a series of regrowths.
const PRODUCT_BYTES_HINT: usize = 6 * 1024;

fn to_json<T: serde::Serialize>(body: &T, products: usize) -> Result<String, ApiError> {
    let mut buffer = Vec::with_capacity(1024 + products * PRODUCT_BYTES_HINT);
    serde_json::to_writer(&mut buffer, body).map_err(ApiError::internal)?;
    // serde_json writes UTF-8 only.
    String::from_utf8(buffer).map_err(ApiError::internal)
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
    to_json(&SearchBody::new(envelope.ucp(), &results), results.products.len())
}

/// `lookup_catalog`.
pub async fn lookup_catalog(state: &AppState, envelope: &Envelope, request: LookupRequest) -> Result<String, ApiError> {
    let request = core::LookupRequest {
        ids: request.ids,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
    };
    let results = state.core.lookup_catalog(request).await?;
    let products = results.products.len();
    to_json(&LookupBody::new(envelope.ucp(), results), products)
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
        Answer::Resource(view) => to_json(&ProductBody::new(envelope.ucp(), &view), 1),
        Answer::Refused(refusal) => {
            to_json(&ErrorResponse::refusal(&envelope.version, &refusal, Some(&state.profile.base_url)), 0)
        }
    }
}
