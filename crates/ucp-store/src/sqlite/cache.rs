//! What the catalog read path keeps in memory, so that a hot `get_product`, `lookup_catalog`
//! or search page runs without the blocking pool or a single SQLite statement: products as
//! served (the stored document with live stock laid over it), the row of each product id, the
//! resolution of each id a caller sent, and the rows of each search page the index answered.
//!
//! Every cache is weighed in bytes and bounded. Stock is the only part of a served product
//! that changes without an import, and it changes only through this process's writer (orders);
//! [`ReadCache::stock_changed`] drops the products it touched after their commit. An import
//! (here, or another process's seen by the refresher) drops everything. A search page depends
//! on the index alone (titles, bodies, categories, prices), never on stock, so only a catalog
//! change drops the pages. The `epoch` closes the race between a reader that read the old
//! stock and the invalidation: see [`ReadCache::keep`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quick_cache::Weighter;
use quick_cache::sync::Cache;
use ucp_domain::catalog::Served;
use ucp_domain::store::{Resolution, SearchQuery};

use crate::index::IndexPage;

/// Memory for products as served, with what hangs off each (its rendering, its default view),
/// unless the configuration sets another ([`ReadCache::set_product_bytes`]).
const PRODUCT_BYTES: u64 = 48 * 1024 * 1024;
/// Memory for id resolutions and product rows (ids a stranger sends are cached too, misses
/// included, so this is bounded like the rest).
const ID_BYTES: u64 = 8 * 1024 * 1024;
/// Memory for search pages (a page is its query and ten or so row positions, about 300 bytes).
const PAGE_BYTES: u64 = 4 * 1024 * 1024;
/// A served product is dropped after this long even if nothing invalidated it: a safety net
/// for stock changed behind this process's back (another process writing the file).
const PRODUCT_TTL: Duration = Duration::from_secs(30);
/// Typical weights, for sizing the caches' tables: a served product with a few variants, and
/// an id with its row or resolution.
const TYPICAL_PRODUCT: u64 = 16 * 1024;
const TYPICAL_ID: u64 = 160;
const TYPICAL_PAGE: u64 = 320;

/// The caches are `quick_cache`'s (sharded, a read lock and a reference bit per hit, CLOCK-Pro
/// eviction by weight), not moka's: a lookup of ten ids reads about thirty entries, and
/// moka's bookkeeping per read (its access log, its pending-task drains) was about 30 % of a
/// lookup's server CPU (BENCHMARKS.md, "Where the time went at 100,000 products").
pub(super) struct ReadCache {
    /// Products as served, by row, with when each was loaded (for the TTL).
    products: Cache<i64, (Arc<Served>, Instant), ProductWeight>,
    /// The row of each product id.
    rows: Cache<Arc<str>, i64, IdWeight>,
    /// What each id a caller sent resolved to (empty: nothing).
    resolutions: Cache<Arc<str>, Arc<[Resolution]>, IdWeight>,
    /// The page the index answered for each search ([`page_key`]).
    pages: Cache<Box<[u8]>, Arc<IndexPage>, PageWeight>,
    /// Moves on every change a cached entry could miss.
    epoch: AtomicU64,
}

#[derive(Debug, Clone, Copy)]
struct ProductWeight;

impl Weighter<i64, (Arc<Served>, Instant)> for ProductWeight {
    fn weight(&self, _row: &i64, (product, _): &(Arc<Served>, Instant)) -> u64 {
        weight_of(product)
    }
}

#[derive(Debug, Clone, Copy)]
struct IdWeight;

impl Weighter<Arc<str>, i64> for IdWeight {
    fn weight(&self, id: &Arc<str>, _row: &i64) -> u64 {
        64 + id.len() as u64
    }
}

impl Weighter<Arc<str>, Arc<[Resolution]>> for IdWeight {
    fn weight(&self, id: &Arc<str>, found: &Arc<[Resolution]>) -> u64 {
        let found: usize = found
            .iter()
            .map(|resolution| 96 + resolution.product_id.len() + resolution.variant_id.as_ref().map_or(0, String::len))
            .sum();
        (64 + id.len() + found) as u64
    }
}

#[derive(Debug, Clone, Copy)]
struct PageWeight;

impl Weighter<Box<[u8]>, Arc<IndexPage>> for PageWeight {
    fn weight(&self, key: &Box<[u8]>, page: &Arc<IndexPage>) -> u64 {
        (96 + key.len() + page.rows.len() * std::mem::size_of::<ucp_domain::store::SearchPosition>()) as u64
    }
}

/// The key of a search's page: every field of the query, each string behind its length, so
/// two different queries never share a key.
pub(super) fn page_key(query: &SearchQuery) -> Vec<u8> {
    fn text(key: &mut Vec<u8>, text: &str) {
        key.extend_from_slice(&(text.len() as u64).to_le_bytes());
        key.extend_from_slice(text.as_bytes());
    }
    fn bound(key: &mut Vec<u8>, bound: Option<i64>) {
        match bound {
            Some(value) => {
                key.push(1);
                key.extend_from_slice(&value.to_le_bytes());
            }
            None => key.push(0),
        }
    }
    let mut key = Vec::with_capacity(64);
    key.push(u8::from(query.match_all_terms));
    key.extend_from_slice(&(query.limit as u64).to_le_bytes());
    key.extend_from_slice(&(query.terms.len() as u64).to_le_bytes());
    for term in &query.terms {
        text(&mut key, term);
    }
    key.extend_from_slice(&(query.categories.len() as u64).to_le_bytes());
    for category in &query.categories {
        text(&mut key, category);
    }
    bound(&mut key, query.price_min);
    bound(&mut key, query.price_max);
    match query.after {
        Some(after) => {
            key.push(1);
            key.extend_from_slice(&after.score.to_bits().to_le_bytes());
            key.extend_from_slice(&after.row.to_le_bytes());
        }
        None => key.push(0),
    }
    key
}

impl ReadCache {
    pub(super) fn new() -> ReadCache {
        let ids = (ID_BYTES / 2 / TYPICAL_ID) as usize;
        ReadCache {
            products: Cache::with_weighter((PRODUCT_BYTES / TYPICAL_PRODUCT) as usize, PRODUCT_BYTES, ProductWeight),
            rows: Cache::with_weighter(ids, ID_BYTES / 2, IdWeight),
            resolutions: Cache::with_weighter(ids, ID_BYTES / 2, IdWeight),
            pages: Cache::with_weighter((PAGE_BYTES / TYPICAL_PAGE) as usize, PAGE_BYTES, PageWeight),
            epoch: AtomicU64::new(0),
        }
    }

    /// Sets the memory for products as served (default 64 MiB); a smaller budget evicts at once.
    pub(super) fn set_product_bytes(&self, bytes: u64) {
        self.products.set_capacity(bytes.max(1));
    }

    /// Read before loading anything that [`ReadCache::keep`] will store.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    pub(super) fn product(&self, row: i64) -> Option<Arc<Served>> {
        let (product, loaded) = self.products.get(&row)?;
        if loaded.elapsed() < PRODUCT_TTL {
            return Some(product);
        }
        self.products.remove(&row);
        None
    }

    pub(super) fn row(&self, product_id: &str) -> Option<i64> {
        self.rows.get(product_id)
    }

    pub(super) fn resolution(&self, id: &str) -> Option<Arc<[Resolution]>> {
        self.resolutions.get(id)
    }

    /// The page of the search whose [`page_key`] is `key`.
    pub(super) fn page(&self, key: &[u8]) -> Option<Arc<IndexPage>> {
        self.pages.get(key)
    }

    /// Stores what a reader loaded after reading `epoch`. Inserted first and checked after:
    /// a change that committed while the reader read has moved the epoch, so either the
    /// reader sees the new epoch here and takes its entry back, or the change's invalidation
    /// (which follows its epoch move) comes after this insert and removes it.
    pub(super) fn keep(&self, epoch: u64, loaded: Loaded) {
        match loaded {
            Loaded::Product(row, product) => self.insert(&self.products, epoch, row, (product, Instant::now())),
            Loaded::Row(id, row) => self.insert(&self.rows, epoch, id, row),
            Loaded::Resolution(id, found) => self.insert(&self.resolutions, epoch, id, found),
            Loaded::Page(key, page) => self.insert(&self.pages, epoch, key.into_boxed_slice(), page),
        }
    }

    /// [`ReadCache::keep`] for one cache: insert, then take it back if the epoch moved.
    fn insert<K, V, W>(&self, cache: &Cache<K, V, W>, epoch: u64, key: K, value: V)
    where
        K: Eq + std::hash::Hash + Clone,
        V: Clone,
        W: Weighter<K, V> + Clone,
    {
        cache.insert(key.clone(), value);
        if self.epoch() != epoch {
            cache.remove(&key);
        }
    }

    /// After a commit that changed the stock of the products at `rows`.
    pub(super) fn stock_changed(&self, rows: &[i64]) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        for row in rows {
            self.products.remove(row);
        }
    }

    /// After a commit that changed the catalog itself (an import).
    pub(super) fn catalog_changed(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.products.clear();
        self.rows.clear();
        self.resolutions.clear();
        self.pages.clear();
    }
}

/// One thing a reader loaded, for [`ReadCache::keep`].
pub(super) enum Loaded {
    Product(i64, Arc<Served>),
    Row(Arc<str>, i64),
    Resolution(Arc<str>, Arc<[Resolution]>),
    /// A search's page, under its [`page_key`].
    Page(Vec<u8>, Arc<IndexPage>),
}

/// Memory weight of a served product, for the cache's budget: the parsed document and what
/// hangs off it once it is read (the transport's rendering and its escape, get_product's default
/// view and its rendering), as measured: a demo product of three or four variants (about 2.5 KB
/// of JSON) grew the server's RSS by about 23 KB once cached, read and rendered (BENCHMARKS.md,
/// "What a cached product costs"). The weight is fixed when the entry goes in, so it counts them
/// whether or not they are ever made.
pub(in crate::sqlite) fn weight_of(served: &Served) -> u64 {
    let variants = served.variant_count() as u64;
    // A product kept as stored is weighed without parsing it, by its JSON, which for the demo
    // catalog's products is about fourteen times its title and description (so a product
    // weighs about the same either way); a parsed one by that text. (Never by anything that
    // changes while the entry is in: the cache weighs it again when it leaves.)
    let text = match served.stored_len() {
        Some(len) => len as u64 / 14,
        None => {
            let product = served.product();
            product.description.plain.as_ref().map_or(0, String::len) as u64 + product.title.len() as u64
        }
    };
    (2048 + variants * 1024 + text * 2) * 7 / 2
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn row(id: &str, row: i64) -> Loaded {
        Loaded::Row(Arc::from(id), row)
    }

    #[test]
    fn an_entry_loaded_across_a_change_is_not_kept() {
        let cache = ReadCache::new();
        let before = cache.epoch();
        cache.stock_changed(&[7]);
        cache.keep(before, row("p7", 7));
        assert!(cache.row("p7").is_none(), "loaded before the change: may be stale");
        cache.keep(cache.epoch(), row("p7", 7));
        assert_eq!(cache.row("p7"), Some(7));
    }

    #[test]
    fn an_import_drops_everything() {
        let cache = ReadCache::new();
        let epoch = cache.epoch();
        cache.keep(epoch, row("p1", 1));
        cache.keep(epoch, Loaded::Resolution(Arc::from("p1"), Arc::from(Vec::new())));
        assert!(cache.row("p1").is_some() && cache.resolution("p1").is_some());
        cache.keep(
            epoch,
            Loaded::Page(page_key(&query("lamp")), Arc::new(IndexPage { rows: Vec::new(), has_more: false })),
        );
        assert!(cache.page(&page_key(&query("lamp"))).is_some());
        cache.catalog_changed();
        assert!(cache.row("p1").is_none() && cache.resolution("p1").is_none());
        assert!(cache.page(&page_key(&query("lamp"))).is_none());
    }

    /// A search for one term, the first page of ten.
    pub(in crate::sqlite) fn query(term: &str) -> SearchQuery {
        SearchQuery {
            terms: vec![term.to_owned()],
            match_all_terms: true,
            categories: Vec::new(),
            price_min: None,
            price_max: None,
            limit: 10,
            after: None,
        }
    }

    // A page does not depend on stock: an order's commit leaves it, and a page computed while
    // the catalog changed is not kept.
    #[test]
    fn pages_outlive_stock_changes_but_not_a_change_during_their_search() {
        let cache = ReadCache::new();
        let page = Arc::new(IndexPage { rows: Vec::new(), has_more: true });
        cache.keep(cache.epoch(), Loaded::Page(page_key(&query("lamp")), Arc::clone(&page)));
        cache.stock_changed(&[1, 2]);
        assert_eq!(cache.page(&page_key(&query("lamp"))), Some(page));
        let before = cache.epoch();
        cache.catalog_changed();
        cache.keep(
            before,
            Loaded::Page(page_key(&query("desk")), Arc::new(IndexPage { rows: Vec::new(), has_more: false })),
        );
        assert!(cache.page(&page_key(&query("desk"))).is_none());
    }

    #[test]
    fn queries_that_differ_in_any_field_have_different_keys() {
        let base = query("lamp");
        let variants = [
            SearchQuery { terms: vec!["lam".into(), "p".into()], ..base.clone() },
            SearchQuery { match_all_terms: false, ..base.clone() },
            SearchQuery { categories: vec!["lamp".into()], terms: Vec::new(), ..base.clone() },
            SearchQuery { price_min: Some(0), ..base.clone() },
            SearchQuery { price_max: Some(0), ..base.clone() },
            SearchQuery { limit: 11, ..base.clone() },
            SearchQuery { after: Some(ucp_domain::store::SearchPosition { score: -1.0, row: 3 }), ..base.clone() },
        ];
        let mut keys: Vec<Vec<u8>> = variants.iter().map(page_key).collect();
        keys.push(page_key(&base));
        let count = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), count);
    }
}
