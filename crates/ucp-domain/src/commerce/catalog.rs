//! The catalog capability: `search_catalog`, `lookup_catalog` and `get_product`.

use std::collections::HashSet;

/// A set of a request's own ids, bounded by its caps: foldhash rather than SipHash (a tenth of
/// the hashing a lookup did), since a set that lives for one request and holds at most a
/// capped list cannot be flooded.
type RequestSet<'a> = HashSet<&'a str, foldhash::fast::RandomState>;
use std::sync::Arc;

use crate::catalog::{
    DetailRequest, LookupMatch, SelectedOption, Served, Shown, Variant, assemble_lookup, category_key, category_paths,
    default_view_of, detail,
};
use crate::checkout::Message;
use crate::store::{Resolution, SearchPosition, SearchQuery, resolved_products};
use unicode_normalization::char::is_combining_mark;

use super::presentment::Presentment;
use super::{Answer, Commerce, Error, Refusal, RefusalCode};

/// Longest free-text query accepted, in characters.
const MAX_QUERY_CHARS: usize = 1000;
/// Most search terms used; the rest of a very long query is ignored.
const MAX_TERMS: usize = 16;
/// Search results carry at most this many variants per product; get_product has them all.
pub const SEARCH_RESULT_VARIANTS: usize = 5;

/// Category and price filters as the platform sent them (prices in presentment minor units).
#[derive(Debug, Clone, Default)]
pub struct CatalogFilters {
    pub categories: Vec<String>,
    pub price_min: Option<u64>,
    pub price_max: Option<u64>,
    /// Names of the other filters sent (`filters` is open to merchant filters; we support
    /// none): not applied, and said so (a few, capped by the transport).
    pub unsupported: Vec<String>,
}

impl CatalogFilters {
    /// Whether the request filters by price.
    pub fn has_price(&self) -> bool {
        self.price_min.is_some() || self.price_max.is_some()
    }

    /// The info messages saying which filters were not applied: none unless some were sent.
    /// Without a path, since a request member has none in the response (as `currency_unavailable`).
    fn unsupported_messages(&self) -> impl Iterator<Item = Message> + '_ {
        self.unsupported.iter().map(|name| {
            let content = format!("{} is not supported and was not applied.", filter_member(name));
            Message::info("filter_unsupported", content, None)
        })
    }

    /// The refusal of a search with nothing to search by but filters we do not support.
    fn unsupported_only(&self) -> Error {
        let members: Vec<String> = self.unsupported.iter().map(|name| filter_member(name)).collect();
        let (verb, them) = if members.len() == 1 { ("is not a filter", "it") } else { ("are not filters", "them") };
        Error::invalid(format!(
            "{} {verb} this store supports (categories, price); put {them} in catalog.query",
            members.join(", ")
        ))
    }
}

/// The request member of a filter's name: `catalog.filters.brand`, or for a name that is not
/// a plain word `catalog.filters["shipping speed"]`.
fn filter_member(name: &str) -> String {
    let plain = !name.is_empty() && name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-');
    if plain { format!("catalog.filters.{name}") } else { format!("catalog.filters[{name:?}]") }
}

#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: Option<String>,
    /// The presentment currency the platform asks for.
    pub currency: Option<String>,
    pub filters: CatalogFilters,
    pub cursor: Option<String>,
    pub limit: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub struct LookupRequest {
    pub ids: Vec<String>,
    pub currency: Option<String>,
    pub filters: CatalogFilters,
}

#[derive(Debug, Clone, Default)]
pub struct ProductRequest {
    pub id: String,
    pub selected: Vec<SelectedOption>,
    pub preferences: Vec<String>,
    pub currency: Option<String>,
    pub filters: CatalogFilters,
}

#[derive(Debug, Clone)]
pub struct SearchResults {
    pub products: Vec<Shown>,
    pub has_next_page: bool,
    /// Set when more results follow.
    pub cursor: Option<String>,
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone)]
pub struct LookupResults {
    /// Each product with, per variant, the request ids that resolved to it.
    pub products: Vec<LookupMatch>,
    pub messages: Vec<Message>,
}

#[derive(Debug, Clone)]
pub struct ProductView {
    pub product: Shown,
    /// The effective option selection, when the product has option axes.
    pub selected: Option<Vec<SelectedOption>>,
    pub messages: Vec<Message>,
}

/// What a cursor is bound to: the normalized search it continues.
#[derive(Debug, Clone, Copy)]
pub struct SearchKey<'a> {
    pub terms: &'a [String],
    pub categories: &'a [String],
    pub price_min: Option<i64>,
    pub price_max: Option<i64>,
    pub currency: &'a str,
}

/// Where a page ended, and how its terms were matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cursor {
    pub match_all_terms: bool,
    pub position: SearchPosition,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("catalog.pagination.cursor is not a cursor this server issued for this search")]
    Invalid,
    #[error(
        "catalog.pagination.cursor belongs to a different search; send the same query and filters as the first page"
    )]
    OtherSearch,
}

/// Opaque, tamper-evident cursors (the server signs them with a secret of its own).
pub trait Cursors: Send + Sync + std::fmt::Debug {
    fn encode(&self, key: &SearchKey<'_>, cursor: Cursor) -> String;
    fn decode(&self, text: &str, key: &SearchKey<'_>) -> Result<Cursor, CursorError>;
}

/// Price bounds in catalog minor units.
struct VariantFilter {
    price_min: Option<i64>,
    price_max: Option<i64>,
}

impl VariantFilter {
    fn new(filters: &CatalogFilters, presentment: &Presentment) -> Result<VariantFilter, Error> {
        if let (Some(min), Some(max)) = (filters.price_min, filters.price_max)
            && min > max
        {
            return Err(Error::invalid("filters.price.min is greater than filters.price.max"));
        }
        if !presentment.filters_prices() {
            return Ok(VariantFilter { price_min: None, price_max: None });
        }
        let price_min = filters.price_min.map(|min| presentment.to_base(min, true));
        let price_max = filters.price_max.map(|max| presentment.to_base(max, false));
        if let (Some(min), Some(max)) = (price_min, price_max)
            && min > max
        {
            return Err(Error::invalid("filters.price.min is greater than filters.price.max"));
        }
        Ok(VariantFilter { price_min, price_max })
    }

    fn keeps(&self, variant: &Variant) -> bool {
        self.keeps_price(variant.price.amount)
    }

    fn keeps_price(&self, amount: i64) -> bool {
        self.price_min.is_none_or(|min| amount >= min) && self.price_max.is_none_or(|max| amount <= max)
    }

    fn is_set(&self) -> bool {
        self.price_min.is_some() || self.price_max.is_some()
    }
}

/// The category filters, each in the form [`category_paths`] produces (`category_key`), made
/// once a request: a lookup checks every product it finds against every filter, and a filter
/// value may be as long as the body.
fn categories_of(filters: &CatalogFilters) -> Vec<String> {
    filters
        .categories
        .iter()
        .map(|category| category.trim())
        .filter(|category| !category.is_empty())
        .map(category_key)
        .collect()
}

/// Whether the product is in one of `categories` ([`categories_of`]; all of them pass when
/// none is asked, and the product is then not parsed). Each of the product's categories is
/// split into its paths once, whatever the number of filters.
fn in_categories(served: &Served, categories: &[String]) -> bool {
    if categories.is_empty() {
        return true;
    }
    let product = served.product();
    let mut all = product.categories.iter().chain(product.variants.iter().flat_map(|variant| &variant.categories));
    all.any(|category| category_paths(&category.value).iter().any(|path| categories.contains(path)))
}

impl Commerce {
    pub async fn search_catalog(&self, request: SearchRequest) -> Result<SearchResults, Error> {
        let settings = &self.settings;
        let (presentment, currency_message) =
            Presentment::choose(settings, request.currency.as_deref(), request.filters.has_price());
        let query_text = request.query.as_deref().map(str::trim);
        if let Some(text) = query_text
            && text.chars().count() > MAX_QUERY_CHARS
        {
            return Err(Error::invalid(format!("catalog.query is longer than {MAX_QUERY_CHARS} characters")));
        }
        let terms = query_text.map(terms_of).unwrap_or_default();
        let categories = categories_of(&request.filters);
        let variant_filter = VariantFilter::new(&request.filters, &presentment)?;
        // A price filter left unapplied still makes the request a browse, not an empty search.
        let has_filters = !categories.is_empty() || request.filters.has_price();
        if terms.is_empty() && !has_filters {
            match query_text {
                // Nothing to search by but filters we do not apply: say so, not that none were sent.
                None | Some("") if !request.filters.unsupported.is_empty() => {
                    return Err(request.filters.unsupported_only());
                }
                // Checklist 90: a search with neither query nor filters is invalid (and an
                // empty query string is no query: our policy, catalog.md "Input presence").
                None => return Err(Error::invalid("a search needs catalog.query or catalog.filters")),
                Some("") => return Err(Error::invalid("catalog.query is empty; send search words or filters")),
                // Checklist 89, 104: a query that matches nothing (`*`, punctuation) is an
                // empty success, not an error.
                Some(_) => {
                    return Ok(SearchResults {
                        products: Vec::new(),
                        has_next_page: false,
                        cursor: None,
                        messages: request.filters.unsupported_messages().collect(),
                    });
                }
            }
        }
        let limit = match request.limit {
            Some(0) => return Err(Error::invalid("catalog.pagination.limit must be at least 1")),
            Some(limit) => (limit.min(usize::MAX as u64) as usize).min(settings.max_page_size),
            None => settings.default_page_size,
        };
        let key = SearchKey {
            terms: &terms,
            categories: &categories,
            price_min: variant_filter.price_min,
            price_max: variant_filter.price_max,
            currency: &presentment.currency,
        };
        let (match_all_terms, after) = match request.cursor.as_deref() {
            Some(text) => {
                let cursor =
                    self.ports.cursors.decode(text, &key).map_err(|error| Error::invalid(error.to_string()))?;
                (cursor.match_all_terms, Some(cursor.position))
            }
            None => (true, None),
        };
        let mut query = SearchQuery {
            terms: terms.clone(),
            match_all_terms,
            categories: categories.clone(),
            price_min: variant_filter.price_min,
            price_max: variant_filter.price_max,
            limit,
            after,
        };
        let mut page = self.ports.catalog.search(&query).await?;
        // Every word first; when that finds nothing, any word, ranked by relevance.
        if page.products.is_empty() && after.is_none() && query.terms.len() > 1 {
            query.match_all_terms = false;
            page = self.ports.catalog.search(&query).await?;
        }
        let mut messages: Vec<Message> = currency_message.into_iter().collect();
        messages.extend(request.filters.unsupported_messages());
        let disclosures = &self.ports.rules.disclosures;
        let products: Vec<Shown> = page
            .products
            .into_iter()
            .enumerate()
            .map(|(index, served)| {
                // From the served product itself, before another currency makes it a copy.
                disclosures.warn_served(&served, || format!("$.products[{index}]"), &mut messages);
                let variants = variants_for_search(&served, &variant_filter);
                let mut shown = Shown::Served { served, variants };
                presentment.apply_shown(&mut shown);
                shown
            })
            .collect();
        let cursor = page.next.map(|position| {
            self.ports.cursors.encode(&key, Cursor { match_all_terms: query.match_all_terms, position })
        });
        Ok(SearchResults { products, has_next_page: cursor.is_some(), cursor, messages })
    }

    pub async fn lookup_catalog(&self, request: LookupRequest) -> Result<LookupResults, Error> {
        let max_ids = self.settings.max_lookup_ids;
        if request.ids.is_empty() {
            return Err(Error::invalid("catalog.ids must name at least one id"));
        }
        // Capped before any per-id work: duplicates are tolerated (checklist 95), up to as many
        // again as the distinct limit.
        let most = max_ids.saturating_mul(2);
        if request.ids.len() > most {
            return Err(Error::RequestTooLarge(format!(
                "catalog.ids names more than {most} ids, duplicates included; at most {max_ids} distinct ids are allowed per lookup"
            )));
        }
        let mut seen = RequestSet::with_capacity_and_hasher(request.ids.len(), Default::default());
        let ids: Vec<String> = request.ids.iter().filter(|id| seen.insert(id.as_str())).map(String::clone).collect();
        if ids.len() > max_ids {
            return Err(Error::RequestTooLarge(format!(
                "catalog.ids names {} distinct ids; at most {max_ids} are allowed per lookup",
                ids.len()
            )));
        }
        let (presentment, currency_message) =
            Presentment::choose(&self.settings, request.currency.as_deref(), request.filters.has_price());
        let variant_filter = VariantFilter::new(&request.filters, &presentment)?;
        let categories = categories_of(&request.filters);
        let (resolutions, products) = self.ports.catalog.resolve_products(&ids, resolved_products).await?;
        let products: Vec<Arc<Served>> =
            products.into_iter().filter(|product| in_categories(product, &categories)).collect();
        let mut matches = assemble_lookup(&resolutions, products, &|price| variant_filter.keeps_price(price));
        // From the served products themselves, before another currency makes them copies.
        let mut disclosed = Vec::new();
        for (index, found) in matches.iter_mut().enumerate() {
            self.ports.rules.disclosures.warn_shown(&found.product, || format!("$.products[{index}]"), &mut disclosed);
            presentment.apply_shown(&mut found.product);
        }
        let resolved: RequestSet<'_> = resolutions.iter().map(|resolution| resolution.input.as_str()).collect();
        let mut messages: Vec<Message> = ids
            .iter()
            .filter(|id| !resolved.contains(id.as_str()))
            .map(|id| Message::info("not_found", id.clone(), None))
            .collect();
        messages.extend(currency_message);
        messages.extend(request.filters.unsupported_messages());
        messages.append(&mut disclosed);
        Ok(LookupResults { products: matches, messages })
    }

    pub async fn get_product(&self, request: ProductRequest) -> Result<Answer<ProductView>, Error> {
        let (presentment, currency_message) =
            Presentment::choose(&self.settings, request.currency.as_deref(), request.filters.has_price());
        let variant_filter = VariantFilter::new(&request.filters, &presentment)?;
        let categories = categories_of(&request.filters);
        let mut seen_names = Vec::new();
        for selection in &request.selected {
            if seen_names.contains(&&selection.name) {
                return Err(Error::invalid(format!(
                    "catalog.selected names option {:?} more than once",
                    selection.name
                )));
            }
            seen_names.push(&selection.name);
        }
        let not_found = |content: String| Ok(Answer::Refused(Refusal { code: RefusalCode::NotFound, content }));
        // Only the product the id names is read, however many share a handle, SKU or barcode.
        let (resolutions, products) =
            self.ports.catalog.resolve_products(std::slice::from_ref(&request.id), named_product).await?;
        let Some(resolution) = named(&resolutions) else {
            return not_found(format!("Product {} was not found", request.id));
        };
        let Some(product) = products.into_iter().find(|product| product.id() == resolution.product_id) else {
            return not_found(format!("Product {} was not found", request.id));
        };
        if !in_categories(&product, &categories) {
            return not_found(format!("Product {} does not match the filters", request.id));
        }
        let no_variant = || not_found(format!("Product {} has no variant that matches the filters", request.id));
        // A request that names the product and nothing else gets its default view, derived once
        // per served product and shared (with its rendering) by every such request.
        let default = request.selected.is_empty()
            && resolution.variant_id.is_none()
            && !variant_filter.is_set()
            && presentment.is_base();
        let (shown, selected, has_options) = if default {
            let Some(default) = product.default_detail(|_| default_view_of(&product)) else {
                return no_variant();
            };
            let has_options = default.has_options;
            (Shown::whole(Arc::clone(&default.product)), default.selected.clone(), has_options)
        } else {
            let detail_request = DetailRequest {
                variant_id: resolution.variant_id.clone(),
                selected: request.selected,
                preferences: request.preferences,
            };
            let Some(mut detailed) =
                detail(product.product(), &detail_request, &|variant| variant_filter.keeps(variant))
            else {
                return no_variant();
            };
            presentment.apply(&mut detailed.product);
            let has_options = !detailed.product.options.is_empty();
            (Shown::Changed(Box::new(detailed.product)), detailed.selected, has_options)
        };
        let has_axes = has_options || !selected.is_empty();
        let mut messages: Vec<Message> = currency_message.into_iter().collect();
        messages.extend(request.filters.unsupported_messages());
        // From the product the id named: a default view would derive a product to be read.
        self.ports.rules.disclosures.warn_served(&product, || "$.product".to_owned(), &mut messages);
        Ok(Answer::Resource(ProductView { product: shown, selected: has_axes.then_some(selected), messages }))
    }
}

/// The resolution get_product answers for, among those of its one id: a variant id (or SKU)
/// names one variant; otherwise the id named the product.
fn named(resolutions: &[Resolution]) -> Option<&Resolution> {
    resolutions
        .iter()
        .find(|resolution| resolution.variant_id.is_some() && resolution.product_id != resolution.input)
        .or_else(|| resolutions.first())
}

/// The product of [`named`], the only one get_product reads.
fn named_product(resolutions: &[Resolution]) -> Vec<String> {
    named(resolutions).map(|resolution| resolution.product_id.clone()).into_iter().collect()
}

/// The variants a shopper most likely wants to see in a result list, as indices into the
/// product's: those inside the price filter and available first (catalog order otherwise), at
/// most [`SEARCH_RESULT_VARIANTS`], so the first shown is the featured one (checklist 105);
/// `None` (all of them) when that is every variant in order.
/// The product's `price_range` still spans every variant.
/// (Nor is the product parsed for it: [`Served::variant_count`], [`Served::fact`].)
fn variants_for_search(served: &Served, filter: &VariantFilter) -> Option<Vec<usize>> {
    // Every variant in catalog order, when the first is available: the usual case, told from
    // the first variant alone.
    if served.variant_count() <= SEARCH_RESULT_VARIANTS
        && !filter.is_set()
        && served.fact(0).is_none_or(|fact| fact.available)
    {
        return None;
    }
    let facts = served.facts();
    let mut picked: Vec<usize> = (0..facts.len()).collect();
    picked.sort_by_key(|&index| (!filter.keeps_price(facts[index].price), !facts[index].available));
    picked.truncate(SEARCH_RESULT_VARIANTS);
    let in_order = picked.len() == facts.len() && picked.iter().enumerate().all(|(at, &index)| at == index);
    (!in_order).then_some(picked)
}

/// Lower-cased words of a query, at most [`MAX_TERMS`], each at most 64 characters. A word
/// keeps the combining marks written after its letters (a decomposed `cre\u{300}me`), as the
/// index's words do, which then fold the accents away.
fn terms_of(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    let separator = |ch: char| !ch.is_alphanumeric() && (ch.is_ascii() || !is_combining_mark(ch));
    for word in text.split(separator).filter(|word| word.chars().any(char::is_alphanumeric)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_terms_are_lowercased_words() {
        assert_eq!(terms_of("Running  SHOES, running!"), vec!["running", "shoes"]);
        assert_eq!(terms_of("cre\u{300}me \u{301} brûlée"), vec!["cre\u{300}me", "brûlée"], "marks stay in their word");
        assert!(terms_of("  !!! ").is_empty());
    }
}
