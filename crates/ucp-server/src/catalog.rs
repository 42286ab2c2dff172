//! The catalog capability on the wire: the request bodies of search_catalog,
//! lookup_catalog and get_product, their conversion into the core's requests, and the
//! rendering of its answers (the cursors the core pages with are in [`crate::cursor`]).

use ucp_domain::commerce::{self as core, Answer};
use ucp_protocol::resources::{ErrorResponse, LookupBody, ProductBody, SearchBody, Sink};

use crate::error::ApiError;
use crate::response::{Envelope, Reply};
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
        unsupported: filters.unsupported,
    }
}

fn currency_of(context: Option<RequestContext>) -> Option<String> {
    context.and_then(|context| context.currency)
}

/// Roughly what one product of a catalog answer serializes to: buffers start that large per
/// product, so a 50 KB answer is written without being copied through a series of regrowths.
const PRODUCT_BYTES_HINT: usize = 6 * 1024;

/// The reply a catalog body's writer makes (`write_json`, which splices each served product's
/// rendering), sized for `products`; with the body's escape beside it when `mirror`.
fn to_reply(
    products: usize,
    mirror: bool,
    write: impl FnOnce(&mut Sink) -> Result<(), serde_json::Error>,
) -> Result<Reply, ApiError> {
    let mut sink = Sink::new(1024 + products * PRODUCT_BYTES_HINT, mirror);
    write(&mut sink).map_err(ApiError::internal)?;
    // serde_json writes UTF-8 only, and so do the writers (whole pieces of its output, and
    // escapes that replace ASCII bytes by ASCII).
    let (body, text) = sink.into_parts();
    Ok(Reply { body, created: false, text })
}

/// `search_catalog`.
pub async fn search_catalog(
    state: &AppState,
    envelope: &Envelope,
    request: SearchRequest,
    mirror: bool,
) -> Result<Reply, ApiError> {
    let pagination = request.pagination.unwrap_or_default();
    let request = core::SearchRequest {
        query: request.query,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
        cursor: pagination.cursor,
        limit: pagination.limit,
    };
    let results = state.core.search_catalog(request).await?;
    to_reply(results.products.len(), mirror, |sink| SearchBody::new(envelope.ucp_json(), &results).write_json(sink))
}

/// `lookup_catalog`.
pub async fn lookup_catalog(
    state: &AppState,
    envelope: &Envelope,
    request: LookupRequest,
    mirror: bool,
) -> Result<Reply, ApiError> {
    let request = core::LookupRequest {
        ids: request.ids,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
    };
    let results = state.core.lookup_catalog(request).await?;
    to_reply(results.products.len(), mirror, |sink| LookupBody::new(envelope.ucp_json(), &results).write_json(sink))
}

/// `get_product`.
pub async fn get_product(
    state: &AppState,
    envelope: &Envelope,
    request: GetProductRequest,
    mirror: bool,
) -> Result<Reply, ApiError> {
    let request = core::ProductRequest {
        id: request.id,
        selected: request.selected,
        preferences: request.preferences,
        currency: currency_of(request.context),
        filters: filters_of(request.filters),
    };
    match state.core.get_product(request).await? {
        Answer::Resource(view) => {
            to_reply(1, mirror, |sink| ProductBody::new(envelope.ucp_json(), &view).write_json(sink))
        }
        Answer::Refused(refusal) => {
            let body = ErrorResponse::refusal(&envelope.version, &refusal, Some(&state.profile.base_url));
            serde_json::to_string(&body).map(Reply::from).map_err(ApiError::internal)
        }
    }
}
