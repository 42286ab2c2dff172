//! The catalog capability: search_catalog, lookup_catalog and get_product, from typed
//! request to UCP response body. Transport-neutral: MCP (and later REST) call these.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use ucp_domain::catalog::{DetailRequest, Product, SelectedOption, Variant, assemble_lookup, category_matches, detail};
use ucp_domain::money::{Price, currency_exponent};
use ucp_domain::store::{MatchKind, SearchPosition, SearchQuery};

use crate::error::{ApiError, ErrorKind};
use crate::response::{Envelope, error_response};
use crate::state::AppState;

/// Longest free-text query accepted, in characters.
const MAX_QUERY_CHARS: usize = 1000;
/// Most search terms used; the rest of a very long query is ignored.
const MAX_TERMS: usize = 16;

use ucp_protocol::requests::{Filters, RequestContext};
pub use ucp_protocol::requests::{GetProductRequest, LookupRequest, SearchRequest};

/// A decimal exchange rate as an exact fraction: `0.92` is 92/100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    numerator: i128,
    denominator: i128,
}

impl Rate {
    pub fn parse(text: &str) -> Option<Rate> {
        let text = text.trim();
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.len() > 12 || whole.len() > 12 {
            return None;
        }
        if !whole.bytes().chain(fraction.bytes()).all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        let numerator: i128 = format!("{whole}{fraction}").parse().ok()?;
        let denominator = 10i128.pow(fraction.len() as u32);
        (numerator > 0).then_some(Rate { numerator, denominator })
    }
}

/// The currency a response is presented in, and how to get there from the catalog's.
#[derive(Debug, Clone)]
struct Presentment {
    base: String,
    currency: String,
    rate: Option<Rate>,
}

impl Presentment {
    fn choose(state: &AppState, context: Option<&RequestContext>) -> (Presentment, Option<Value>) {
        let base = state.settings.catalog.currency.clone();
        let requested = context.and_then(|context| context.currency.as_deref()).map(str::to_uppercase);
        match requested {
            Some(code) if code != base => {
                match state.settings.catalog.exchange_rates.get(&code).and_then(|rate| Rate::parse(rate)) {
                    Some(rate) => (Presentment { base, currency: code, rate: Some(rate) }, None),
                    None => {
                        let message = json!({
                            "type": "info",
                            "code": "currency_unavailable",
                            "content": format!("Prices are shown in {base}; {code} is not offered."),
                        });
                        (Presentment { currency: base.clone(), base, rate: None }, Some(message))
                    }
                }
            }
            _ => (Presentment { currency: base.clone(), base, rate: None }, None),
        }
    }

    /// Converts an amount of the catalog currency into the presentment currency (half up).
    fn present(&self, amount: i64) -> i64 {
        let Some(rate) = self.rate else { return amount };
        let scale_from = 10i128.pow(currency_exponent(&self.base));
        let scale_to = 10i128.pow(currency_exponent(&self.currency));
        let numerator = i128::from(amount) * rate.numerator * scale_to;
        let denominator = rate.denominator * scale_from;
        ((numerator * 2 + denominator) / (denominator * 2)) as i64
    }

    /// Converts a filter bound in the presentment currency back into catalog minor units.
    fn to_base(&self, amount: u64, round_up: bool) -> i64 {
        let amount = amount.min(ucp_domain::money::MAX_AMOUNT as u64) as i128;
        let Some(rate) = self.rate else { return amount as i64 };
        let scale_from = 10i128.pow(currency_exponent(&self.base));
        let scale_to = 10i128.pow(currency_exponent(&self.currency));
        let numerator = amount * rate.denominator * scale_from;
        let denominator = rate.numerator * scale_to;
        let quotient = numerator / denominator;
        let rounded = if round_up && numerator % denominator != 0 { quotient + 1 } else { quotient };
        rounded.min(i128::from(i64::MAX)) as i64
    }

    fn apply(&self, product: &mut Product) {
        if self.rate.is_none() {
            return;
        }
        let convert = |price: &mut Price| {
            price.amount = self.present(price.amount);
            price.currency = self.currency.clone();
        };
        convert(&mut product.price_range.min);
        convert(&mut product.price_range.max);
        if let Some(range) = &mut product.list_price_range {
            convert(&mut range.min);
            convert(&mut range.max);
        }
        for variant in &mut product.variants {
            convert(&mut variant.price);
            if let Some(list_price) = &mut variant.list_price {
                convert(list_price);
            }
            // A unit price would need its own conversion; it is informational, so leave it out.
            variant.unit_price = None;
        }
    }
}

/// Price and category filters as one predicate, in catalog currency.
struct VariantFilter {
    price_min: Option<i64>,
    price_max: Option<i64>,
}

impl VariantFilter {
    fn new(filters: Option<&Filters>, presentment: &Presentment) -> Result<VariantFilter, ApiError> {
        let price = filters.and_then(|filters| filters.price.as_ref());
        let price_min = price.and_then(|price| price.min).map(|min| presentment.to_base(min, true));
        let price_max = price.and_then(|price| price.max).map(|max| presentment.to_base(max, false));
        if let (Some(min), Some(max)) = (price_min, price_max)
            && min > max
        {
            return Err(ApiError::invalid_params("filters.price.min is greater than filters.price.max"));
        }
        Ok(VariantFilter { price_min, price_max })
    }

    fn keeps(&self, variant: &Variant) -> bool {
        self.price_min.is_none_or(|min| variant.price.amount >= min)
            && self.price_max.is_none_or(|max| variant.price.amount <= max)
    }
}

fn category_filter(filters: Option<&Filters>) -> Vec<String> {
    filters
        .and_then(|filters| filters.categories.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|category| category.trim().to_owned())
        .filter(|category| !category.is_empty())
        .collect()
}

fn in_categories(product: &Product, categories: &[String]) -> bool {
    if categories.is_empty() {
        return true;
    }
    let mut all = product.categories.iter().chain(product.variants.iter().flat_map(|variant| &variant.categories));
    all.any(|category| categories.iter().any(|wanted| category_matches(&category.value, wanted)))
}

/// `search_catalog`.
pub async fn search_catalog(state: &AppState, envelope: &Envelope, request: SearchRequest) -> Result<String, ApiError> {
    let (presentment, currency_message) = Presentment::choose(state, request.context.as_ref());
    let filters = request.filters.as_ref();
    let query_text = request.query.as_deref().map(str::trim);
    if let Some(text) = query_text
        && text.chars().count() > MAX_QUERY_CHARS
    {
        return Err(ApiError::invalid_params(format!("catalog.query is longer than {MAX_QUERY_CHARS} characters")));
    }
    let terms = query_text.map(terms_of).unwrap_or_default();
    let categories = category_filter(filters);
    let variant_filter = VariantFilter::new(filters, &presentment)?;
    let has_filters =
        !categories.is_empty() || variant_filter.price_min.is_some() || variant_filter.price_max.is_some();
    if terms.is_empty() && !has_filters {
        match query_text {
            // Checklist 90: a search with neither query nor filters is invalid (and an empty
            // query string is no query: our policy, catalog.md "Input presence").
            None => return Err(ApiError::invalid_params("a search needs catalog.query or catalog.filters")),
            Some("") => return Err(ApiError::invalid_params("catalog.query is empty; send search words or filters")),
            // Checklist 89, 104: a query that matches nothing (`*`, punctuation) is an empty
            // success, not an error.
            Some(_) => {
                #[derive(serde::Serialize)]
                struct EmptyBody {
                    ucp: Value,
                    products: [(); 0],
                    pagination: Value,
                }
                let body =
                    EmptyBody { ucp: envelope.ucp(), products: [], pagination: json!({ "has_next_page": false }) };
                return serde_json::to_string(&body).map_err(ApiError::internal);
            }
        }
    }
    let pagination = request.pagination.unwrap_or_default();
    let limit = match pagination.limit {
        Some(0) => return Err(ApiError::invalid_params("catalog.pagination.limit must be at least 1")),
        Some(limit) => (limit as usize).min(state.settings.catalog.max_page_size),
        None => state.settings.catalog.default_page_size,
    };
    let fingerprint = query_fingerprint(&terms, &categories, &variant_filter, &presentment.currency);
    let (match_all_terms, after) = match pagination.cursor.as_deref() {
        Some(cursor) => {
            let decoded = state.cursors.decode(cursor, &fingerprint)?;
            (decoded.match_all_terms, Some(decoded.position))
        }
        None => (true, None),
    };
    let mut query = SearchQuery {
        terms,
        match_all_terms,
        categories,
        price_min: variant_filter.price_min,
        price_max: variant_filter.price_max,
        limit,
        after,
    };
    let mut page = state.catalog.search(&query).await?;
    // Every word first; when that finds nothing, any word, ranked by relevance.
    if page.products.is_empty() && after.is_none() && query.terms.len() > 1 {
        query.match_all_terms = false;
        page = state.catalog.search(&query).await?;
    }
    let mut products = page.products;
    for product in &mut products {
        trim_variants_for_search(product, &variant_filter);
        presentment.apply(product);
    }
    let mut pagination = json!({ "has_next_page": page.next.is_some() });
    if let Some(next) = page.next {
        pagination["cursor"] = state.cursors.encode(&fingerprint, query.match_all_terms, next).into();
    }
    // Serialized straight from the products: no intermediate JSON tree on the hot path.
    #[derive(serde::Serialize)]
    struct SearchBody<'a> {
        ucp: Value,
        products: &'a [Product],
        pagination: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        messages: Option<[Value; 1]>,
    }
    let body = SearchBody {
        ucp: envelope.ucp(),
        products: &products,
        pagination,
        messages: currency_message.map(|message| [message]),
    };
    serde_json::to_string(&body).map_err(ApiError::internal)
}

/// `lookup_catalog`.
pub async fn lookup_catalog(state: &AppState, envelope: &Envelope, request: LookupRequest) -> Result<String, ApiError> {
    let max_ids = state.settings.catalog.max_lookup_ids;
    if request.ids.is_empty() {
        return Err(ApiError::invalid_params("catalog.ids must name at least one id"));
    }
    let mut ids: Vec<String> = Vec::with_capacity(request.ids.len());
    for id in request.ids {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.len() > max_ids {
        return Err(ApiError::new(
            ErrorKind::RequestTooLarge,
            format!("catalog.ids names {} distinct ids; at most {max_ids} are allowed per lookup", ids.len()),
        ));
    }
    let (presentment, currency_message) = Presentment::choose(state, request.context.as_ref());
    let filters = request.filters.as_ref();
    let variant_filter = VariantFilter::new(filters, &presentment)?;
    let categories = category_filter(filters);
    let resolutions = state.catalog.resolve(&ids).await?;
    let mut product_ids: Vec<String> = Vec::new();
    for resolution in &resolutions {
        if !product_ids.contains(&resolution.product_id) {
            product_ids.push(resolution.product_id.clone());
        }
    }
    let products: Vec<Product> = state
        .catalog
        .products(&product_ids)
        .await?
        .into_iter()
        .filter(|product| in_categories(product, &categories))
        .collect();
    let matches = assemble_lookup(&resolutions, products, &|variant| variant_filter.keeps(variant));
    let mut out = Vec::with_capacity(matches.len());
    for mut found in matches {
        presentment.apply(&mut found.product);
        let mut product = serde_json::to_value(&found.product).unwrap_or(Value::Null);
        if let Some(variants) = product.get_mut("variants").and_then(Value::as_array_mut) {
            for (variant, inputs) in variants.iter_mut().zip(&found.inputs) {
                variant["inputs"] = inputs
                    .iter()
                    .map(|(id, kind)| {
                        json!({ "id": id, "match": match kind { MatchKind::Exact => "exact", MatchKind::Featured => "featured" } })
                    })
                    .collect();
            }
        }
        out.push(product);
    }
    let mut messages: Vec<Value> = ids
        .iter()
        .filter(|id| !resolutions.iter().any(|resolution| &resolution.input == *id))
        .map(|id| json!({ "type": "info", "code": "not_found", "content": id }))
        .collect();
    messages.extend(currency_message);
    let mut body = json!({ "ucp": envelope.ucp(), "products": out });
    if !messages.is_empty() {
        body["messages"] = messages.into();
    }
    serde_json::to_string(&body).map_err(ApiError::internal)
}

/// `get_product`.
pub async fn get_product(
    state: &AppState,
    envelope: &Envelope,
    request: GetProductRequest,
) -> Result<String, ApiError> {
    let (presentment, currency_message) = Presentment::choose(state, request.context.as_ref());
    let filters = request.filters.as_ref();
    let variant_filter = VariantFilter::new(filters, &presentment)?;
    let categories = category_filter(filters);
    let mut seen_names = Vec::new();
    for selection in &request.selected {
        if seen_names.contains(&&selection.name) {
            return Err(ApiError::invalid_params(format!(
                "catalog.selected names option {:?} more than once",
                selection.name
            )));
        }
        seen_names.push(&selection.name);
    }
    let not_found = |content: String| {
        serde_json::to_string(&error_response(&envelope.version, "not_found", &content, Some(&state.profile.base_url)))
            .map_err(ApiError::internal)
    };
    let resolutions = state.catalog.resolve(std::slice::from_ref(&request.id)).await?;
    // A variant id (or SKU) names one variant; otherwise the id named the product.
    let Some(resolution) = resolutions
        .iter()
        .find(|resolution| resolution.variant_id.is_some() && resolution.product_id != request.id)
        .or_else(|| resolutions.first())
    else {
        return not_found(format!("Product {} was not found", request.id));
    };
    let Some(product) = state.catalog.products(std::slice::from_ref(&resolution.product_id)).await?.into_iter().next()
    else {
        return not_found(format!("Product {} was not found", request.id));
    };
    if !in_categories(&product, &categories) {
        return not_found(format!("Product {} does not match the filters", request.id));
    }
    let detail_request = DetailRequest {
        variant_id: resolution.variant_id.clone(),
        selected: request.selected,
        preferences: request.preferences,
    };
    let Some(mut detailed) = detail(product, &detail_request, &|variant| variant_filter.keeps(variant)) else {
        return not_found(format!("Product {} has no variant that matches the filters", request.id));
    };
    presentment.apply(&mut detailed.product);
    #[derive(serde::Serialize)]
    struct DetailProduct<'a> {
        #[serde(flatten)]
        product: &'a Product,
        #[serde(skip_serializing_if = "Option::is_none")]
        selected: Option<&'a [SelectedOption]>,
    }
    #[derive(serde::Serialize)]
    struct DetailBody<'a> {
        ucp: Value,
        product: DetailProduct<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        messages: Option<[Value; 1]>,
    }
    let has_axes = !detailed.product.options.is_empty() || !detailed.selected.is_empty();
    let body = DetailBody {
        ucp: envelope.ucp(),
        product: DetailProduct {
            product: &detailed.product,
            selected: has_axes.then_some(detailed.selected.as_slice()),
        },
        messages: currency_message.map(|message| [message]),
    };
    serde_json::to_string(&body).map_err(ApiError::internal)
}

/// Search results carry at most this many variants per product; get_product has them all.
pub const SEARCH_RESULT_VARIANTS: usize = 5;

/// Keeps the variants a shopper most likely wants to see in a result list: those inside the
/// price filter and available first (catalog order otherwise), at most
/// [`SEARCH_RESULT_VARIANTS`]. The product's `price_range` still spans every variant.
fn trim_variants_for_search(product: &mut Product, filter: &VariantFilter) {
    if product.variants.len() <= SEARCH_RESULT_VARIANTS && filter.price_min.is_none() && filter.price_max.is_none() {
        return;
    }
    let mut variants = std::mem::take(&mut product.variants);
    variants.sort_by_key(|variant| (!filter.keeps(variant), !variant.is_available()));
    variants.truncate(SEARCH_RESULT_VARIANTS);
    product.variants = variants;
}

/// Lower-cased words of a query, at most [`MAX_TERMS`], each at most 64 characters.
fn terms_of(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|ch: char| !ch.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let word: String = word.to_lowercase().chars().take(64).collect();
        if !terms.contains(&word) {
            terms.push(word);
        }
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    terms
}

fn query_fingerprint(terms: &[String], categories: &[String], filter: &VariantFilter, currency: &str) -> [u8; 8] {
    let mut hasher = Sha256::new();
    for term in terms {
        hasher.update(term.as_bytes());
        hasher.update([0]);
    }
    hasher.update([1]);
    for category in categories {
        hasher.update(category.to_lowercase().as_bytes());
        hasher.update([0]);
    }
    hasher.update(filter.price_min.unwrap_or(-1).to_le_bytes());
    hasher.update(filter.price_max.unwrap_or(-1).to_le_bytes());
    hasher.update(currency.as_bytes());
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

struct DecodedCursor {
    match_all_terms: bool,
    position: SearchPosition,
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

    fn decode(&self, cursor: &str, fingerprint: &[u8; 8]) -> Result<DecodedCursor, ApiError> {
        let invalid =
            || ApiError::invalid_params("catalog.pagination.cursor is not a cursor this server issued for this search");
        let bytes = URL_SAFE_NO_PAD.decode(cursor.as_bytes()).map_err(|_| invalid())?;
        if bytes.len() != CURSOR_PAYLOAD + CURSOR_TAG || bytes[0] != CURSOR_VERSION {
            return Err(invalid());
        }
        let (payload, tag) = bytes.split_at(CURSOR_PAYLOAD);
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes keys of any length");
        mac.update(payload);
        mac.verify_truncated_left(tag).map_err(|_| invalid())?;
        if &payload[1..9] != fingerprint {
            return Err(ApiError::invalid_params(
                "catalog.pagination.cursor belongs to a different search; send the same query and filters as the first page",
            ));
        }
        let score = f64::from_bits(u64::from_le_bytes(payload[10..18].try_into().map_err(|_| invalid())?));
        let row = i64::from_le_bytes(payload[18..26].try_into().map_err(|_| invalid())?);
        Ok(DecodedCursor { match_all_terms: payload[9] == 1, position: SearchPosition { score, row } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_convert_with_exponents_and_round_half_up() {
        let presentment = Presentment { base: "USD".into(), currency: "JPY".into(), rate: Rate::parse("150.5") };
        assert_eq!(presentment.present(1999), 3008); // 19.99 USD * 150.5 = 3008.495 JPY
        let presentment = Presentment { base: "USD".into(), currency: "EUR".into(), rate: Rate::parse("0.92") };
        assert_eq!(presentment.present(1000), 920);
        assert_eq!(presentment.to_base(920, false), 1000);
        assert_eq!(presentment.to_base(921, true), 1002);
        assert!(Rate::parse("0").is_none());
        assert!(Rate::parse("-1").is_none());
        assert!(Rate::parse("abc").is_none());
    }

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
    fn query_terms_are_lowercased_words() {
        assert_eq!(terms_of("Running  SHOES, running!"), vec!["running", "shoes"]);
        assert!(terms_of("  !!! ").is_empty());
    }
}
