//! `CatalogStore` on SQLite: products as UCP JSON documents, variants and categories as
//! indexed rows, search through the in-memory `CatalogIndex` built from those rows.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension};
use ucp_domain::catalog::{Availability, Outline, Product, Served, StoredDocument, StoredVariant};
use ucp_domain::store::{CatalogStore, ImportSummary, Pick, Resolution, SearchPage, SearchQuery, StoreError};

use super::cache::{self, Loaded};
use super::indexing::current_index;
use super::{Inner, SqliteStore, backend, document, snapshot};
use crate::index::CatalogIndex;

#[async_trait]
impl CatalogStore for SqliteStore {
    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError> {
        let epoch = self.inner.cache.epoch();
        let index = self.index().await?;
        // A repeated search reuses its page; the index answers the others in memory, on this
        // task: a page costs well under a millisecond, less than a hop to the blocking pool.
        let key = cache::page_key(query);
        let page = match self.inner.cache.page(&key) {
            Some(page) => page,
            None => {
                let page = Arc::new(index.search(query));
                self.inner.cache.keep(epoch, Loaded::Page(key, Arc::clone(&page)));
                page
            }
        };
        let rows: Vec<i64> = page.rows.iter().map(|position| position.row).collect();
        let products = self.products_at(&rows).await?;
        let next = if page.has_more { page.rows.last().copied() } else { None };
        Ok(SearchPage { products, next, total_count: None })
    }

    async fn resolve(&self, ids: &[String]) -> Result<Vec<Resolution>, StoreError> {
        // Resolving and reading no product: the same cache and trip as a read.
        Ok(self.resolve_products(ids, |_| Vec::new()).await?.0)
    }

    async fn products(&self, product_ids: &[String]) -> Result<Vec<Arc<Served>>, StoreError> {
        self.catalog_current().await?;
        let cache = &self.inner.cache;
        let epoch = cache.epoch();
        let (mut products, missing) = cached_products(cache, product_ids);
        if missing.is_empty() {
            return Ok(products);
        }
        let inner = Arc::clone(&self.inner);
        let loaded = self
            .read(move |connection| snapshot(connection, |connection| read_products(&inner, connection, missing, &[])))
            .await?;
        keep_products(cache, epoch, loaded, &mut products);
        Ok(products)
    }

    async fn resolve_products(
        &self,
        ids: &[String],
        pick: Pick,
    ) -> Result<(Vec<Resolution>, Vec<Arc<Served>>), StoreError> {
        self.catalog_current().await?;
        let cache = &self.inner.cache;
        let epoch = cache.epoch();
        let found: Vec<Option<Arc<[Resolution]>>> = ids.iter().map(|id| cache.resolution(id)).collect();
        if found.iter().all(Option::is_some) {
            let resolutions = flatten(found);
            let products = self.products(&pick(&resolutions)).await?;
            return Ok((resolutions, products));
        }
        // One trip to a reader for both: the ids not yet resolved, then the picked products
        // the cache lacks.
        let (ids, inner) = (ids.to_vec(), Arc::clone(&self.inner));
        let (resolved, resolutions, mut products, loaded) = self
            .read(move |connection| {
                snapshot(connection, |connection| {
                    let missing: Vec<String> =
                        ids.iter().zip(&found).filter(|(_, hit)| hit.is_none()).map(|(id, _)| id.clone()).collect();
                    let mut rows = Vec::new();
                    let resolved = resolve_each(connection, &missing, &mut rows)?;
                    let mut found = found;
                    fill(&mut found, &ids, &resolved);
                    let resolutions = flatten(found);
                    let (products, missing) = cached_products(&inner.cache, &pick(&resolutions));
                    let loaded = read_products(&inner, connection, missing, &rows)?;
                    Ok((resolved, resolutions, products, loaded))
                })
            })
            .await?;
        for (id, resolutions) in resolved {
            cache.keep(epoch, Loaded::Resolution(Arc::from(id), resolutions));
        }
        keep_products(cache, epoch, loaded, &mut products);
        Ok((resolutions, products))
    }

    async fn import_products(&self, products: ucp_domain::store::ProductStream) -> Result<ImportSummary, StoreError> {
        super::import::import_products(self, products).await
    }

    async fn refresh(&self) -> Result<bool, StoreError> {
        let inner = Arc::clone(&self.inner);
        // To its end: it may rebuild the index.
        self.read_to_end(move |connection| {
            let stored: i64 = connection
                .prepare_cached("SELECT version FROM catalog_meta")
                .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
                .map_err(backend)?;
            let built = inner.index.read().unwrap_or_else(std::sync::PoisonError::into_inner).1;
            if stored == built {
                return Ok(false);
            }
            // Another process changed the catalog (an import).
            inner.index_stale.store(true, Ordering::SeqCst);
            current_index(&inner, connection)?;
            Ok(true)
        })
        .await
    }

    async fn product_count(&self) -> Result<u64, StoreError> {
        self.read(|connection| {
            connection
                .prepare_cached("SELECT count(*) FROM products")
                .map_err(backend)?
                .query_row([], |row| row.get::<_, i64>(0))
                .map(|count| count as u64)
                .map_err(backend)
        })
        .await
    }
}

impl SqliteStore {
    /// The search index, rebuilt first when this process changed the catalog (or the
    /// refresher saw another process do it).
    async fn index(&self) -> Result<Arc<CatalogIndex>, StoreError> {
        if !self.inner.index_stale.load(Ordering::SeqCst) {
            let guard = self.inner.index.read().unwrap_or_else(std::sync::PoisonError::into_inner);
            return Ok(Arc::clone(&guard.0));
        }
        let inner = Arc::clone(&self.inner);
        self.read_to_end(move |connection| current_index(&inner, connection)).await
    }

    /// Brings the index and the read caches up to a catalog change first, if there was one.
    async fn catalog_current(&self) -> Result<(), StoreError> {
        if self.inner.index_stale.load(Ordering::SeqCst) {
            self.index().await?;
        }
        Ok(())
    }

    /// The products at `rows`, in that order (a row that is gone is left out): from the read
    /// cache, the others loaded in one read.
    async fn products_at(&self, rows: &[i64]) -> Result<Vec<Arc<Served>>, StoreError> {
        let cache = &self.inner.cache;
        let epoch = cache.epoch();
        let mut found: Vec<Option<Arc<Served>>> = rows.iter().map(|row| cache.product(*row)).collect();
        let missing: Vec<i64> = rows.iter().zip(&found).filter(|(_, hit)| hit.is_none()).map(|(row, _)| *row).collect();
        if !missing.is_empty() {
            let loaded = self
                .read(move |connection| {
                    snapshot(connection, |connection| {
                        let mut loaded = Vec::with_capacity(missing.len());
                        for row in missing {
                            if let Some(product) = load_row(connection, row)? {
                                loaded.push((row, product));
                            }
                        }
                        Ok(loaded)
                    })
                })
                .await?;
            for (row, product) in loaded {
                for (slot, wanted) in found.iter_mut().zip(rows) {
                    if *wanted == row && slot.is_none() {
                        *slot = Some(Arc::clone(&product));
                    }
                }
                cache.keep(epoch, Loaded::Product(row, product));
            }
        }
        Ok(found.into_iter().flatten().collect())
    }
}

/// Every id's resolutions, in the order the ids were asked.
fn flatten(found: Vec<Option<Arc<[Resolution]>>>) -> Vec<Resolution> {
    found.into_iter().flatten().flat_map(|resolutions| resolutions.to_vec()).collect()
}

/// Puts each id's fresh resolutions at every place it was asked at (a repeated id too).
fn fill(found: &mut [Option<Arc<[Resolution]>>], ids: &[String], resolved: &[Resolved]) {
    for (id, resolutions) in resolved {
        for (slot, wanted) in found.iter_mut().zip(ids) {
            if wanted == id && slot.is_none() {
                *slot = Some(Arc::clone(resolutions));
            }
        }
    }
}

/// A product read for the cache: its id, its row, the product, and whether it was read from
/// the store (rather than found in the cache by the reader).
type ReadProduct = (String, i64, Arc<Served>, bool);

/// The products of `product_ids` the read cache holds, and the ids it does not.
fn cached_products(cache: &cache::ReadCache, product_ids: &[String]) -> (Vec<Arc<Served>>, Vec<String>) {
    let mut products = Vec::with_capacity(product_ids.len());
    let mut missing = Vec::new();
    for product_id in product_ids {
        match cache.row(product_id).and_then(|row| cache.product(row)) {
            Some(product) => products.push(product),
            None => missing.push(product_id.clone()),
        }
    }
    (products, missing)
}

/// The products of `product_ids` (unknown ids are skipped), each taken from the read cache
/// when another request put it there meanwhile, read otherwise. `rows` are rows the caller
/// already knows (what resolving the ids found), so their ids are not looked up again.
fn read_products(
    inner: &Inner,
    connection: &Connection,
    product_ids: Vec<String>,
    rows: &[(String, i64)],
) -> Result<Vec<ReadProduct>, StoreError> {
    let mut statement = connection.prepare_cached("SELECT row FROM products WHERE id = ?1").map_err(backend)?;
    let mut loaded = Vec::with_capacity(product_ids.len());
    for product_id in product_ids {
        let known = || rows.iter().find(|(id, _)| *id == product_id).map(|(_, row)| *row);
        let row = match inner.cache.row(&product_id).or_else(known) {
            Some(row) => Some(row),
            None => statement.query_row([&product_id], |row| row.get::<_, i64>(0)).optional().map_err(backend)?,
        };
        let Some(row) = row else { continue };
        let cached = inner.cache.product(row);
        let fresh = cached.is_none();
        let product = match cached {
            Some(product) => Some(product),
            None => load_row(connection, row)?,
        };
        if let Some(product) = product {
            loaded.push((product_id, row, product, fresh));
        }
    }
    Ok(loaded)
}

/// Puts what [`read_products`] read into the read cache and `products`.
fn keep_products(cache: &cache::ReadCache, epoch: u64, loaded: Vec<ReadProduct>, products: &mut Vec<Arc<Served>>) {
    for (product_id, row, product, fresh) in loaded {
        products.push(Arc::clone(&product));
        cache.keep(epoch, Loaded::Row(Arc::from(product_id), row));
        if fresh {
            cache.keep(epoch, Loaded::Product(row, product));
        }
    }
}

/// The product stored at `row` as served: its document with live stock laid over it. When the
/// import kept its cuts, the product is not parsed here: the served product keeps the stored
/// JSON, its cuts and the read's stock, renders from them, and is parsed by [`parse_stored`]
/// only when something reads it (a search result shown whole never does).
fn load_row(connection: &Connection, row: i64) -> Result<Option<Arc<Served>>, StoreError> {
    let mut statement =
        connection.prepare_cached("SELECT doc, cuts, id FROM products WHERE row = ?1").map_err(backend)?;
    let Some((doc, cuts, id)) = statement
        .query_row([row], |found| {
            Ok((document::unpack(found.get_ref(0)?), found.get::<_, Option<Vec<u8>>>(1)?, found.get::<_, String>(2)?))
        })
        .optional()
        .map_err(backend)?
    else {
        return Ok(None);
    };
    let doc = doc.map_err(|error| StoreError::Backend(format!("stored product {row}: {error}")))?;
    let mut statement = connection
        .prepare_cached("SELECT position, stock, price, id FROM variants WHERE product_row = ?1")
        .map_err(backend)?;
    let mut rows = statement.query([row]).map_err(backend)?;
    let mut variants: Vec<StoredVariant> = Vec::with_capacity(4);
    let mut positions_fit = true;
    while let Some(found) = rows.next().map_err(backend)? {
        let position = found.get::<_, i64>(0).map_err(backend)?;
        let read = StoredVariant {
            id: found.get_ref(3).and_then(|id| Ok(id.as_str()?)).map_err(backend)?.into(),
            stock: found.get(1).map_err(backend)?,
            price: found.get(2).map_err(backend)?,
            available: true,
        };
        // Positions are 0..n, written by the import in the document's order.
        let Some(slot) = usize::try_from(position).ok().filter(|position| *position < MAX_POSITION) else {
            positions_fit = false;
            continue;
        };
        if variants.len() <= slot {
            variants.resize(slot + 1, StoredVariant { id: Box::default(), stock: None, price: 0, available: false });
        }
        variants[slot] = read;
    }
    // Each variant's availability from the member its document states and its stock, read
    // where the cuts say it is: a search picks its variants by it without parsing the product.
    let stated = cuts
        .as_deref()
        .filter(|_| positions_fit)
        .and_then(|cuts| ucp_protocol::resources::stored::stated_availability(&doc, cuts, variants.len()));
    let served = match (cuts, stated) {
        (Some(cuts), Some(stated)) => {
            for (variant, stated) in variants.iter_mut().zip(&stated) {
                variant.available = Availability::is_orderable(stated.as_ref(), variant.stock);
            }
            let stored =
                StoredDocument { id: id.into(), doc: doc.into(), cuts: cuts.into(), variants: variants.into() };
            Served::stored(stored, parse_stored).outlined(outline_stored)
        }
        // A catalog imported before cuts were kept (or cuts that do not fit): parsed now, and
        // serialized on first use.
        _ => {
            let read =
                StoredDocument { id: id.into(), doc: doc.into(), cuts: Box::default(), variants: variants.into() };
            Served::new(
                parse_stored(&read).map_err(|error| StoreError::Backend(format!("stored product {row}: {error}")))?,
            )
        }
    };
    Ok(Some(Arc::new(served)))
}

/// What get_product's default view needs of a stored product (its options and each
/// variant's), read from its document where its cuts say they are, without parsing it.
fn outline_stored(stored: &StoredDocument) -> Option<Outline> {
    ucp_protocol::resources::stored::outline(&stored.doc, &stored.cuts, stored.variants.len())
}

/// The most variant positions a read lays out without parsing: a position past it is damage
/// (or a product of more variants than any catalog seen), and the product is parsed instead.
const MAX_POSITION: usize = 1 << 16;

/// A stored product with the stock of its read laid over: its document parsed, each variant
/// given its stock by position (the import writes a product's variants in its document's
/// order), and the availability of the stock-tracked ones derived from it.
fn parse_stored(stored: &StoredDocument) -> Result<Product, String> {
    // UTF-8 checked once over the document, then parsed as text: serde_json checks each
    // string of a byte slice on its own, which was a twentieth of a cold search.
    let text = std::str::from_utf8(&stored.doc).map_err(|error| error.to_string())?;
    let mut product: Product = serde_json::from_str(text).map_err(|error| error.to_string())?;
    if product.variants.len() != stored.variants.len() {
        return Err(format!(
            "the document has {} variants and the catalog {}",
            product.variants.len(),
            stored.variants.len()
        ));
    }
    for (variant, read) in product.variants.iter_mut().zip(stored.variants.iter()) {
        variant.inventory_quantity = read.stock;
    }
    product.refresh_availability();
    Ok(product)
}

// One statement per table an id can name a row of, merged here. Where one table has two
// indexed columns an id may match (a product's id or handle, a variant's id or SKU), an OR
// between them: SQLite answers it from both indexes (MULTI-INDEX OR) in one statement, where
// two statements cost a statement-cache lookup, a bind, a step and a reset each (a tenth of a
// cold get_product went to resolving its id). No UNION and no join around a bound parameter:
// SQLite (3.54) re-prepares such a statement on every run, which was a tenth of the purchase
// flow's CPU; a correlated scalar subquery names the product instead. (An OR across the
// tables, through a join, would scan every variant.)
// Each statement also answers the product's row where it has it at hand, so reading the
// product after resolving does not look its id up again.
const PRODUCT_SQL: [&str; 1] = ["SELECT id, row FROM products WHERE id = ?1 OR handle = ?1"];
const VARIANT_SQL: [&str; 2] = [
    "SELECT (SELECT id FROM products WHERE row = v.product_row), v.id, v.product_row FROM variants v \
     WHERE v.id = ?1 OR v.sku = ?1",
    "SELECT (SELECT id FROM products WHERE row = (SELECT product_row FROM variants WHERE id = b.variant_id)), \
     b.variant_id, NULL FROM variant_barcodes b WHERE b.value = ?1",
];

/// What `ids` resolve to; the rows of the products found are appended to `rows`.
fn resolve(
    connection: &Connection,
    ids: &[String],
    rows: &mut Vec<(String, i64)>,
) -> Result<Vec<Resolution>, StoreError> {
    let mut resolutions = Vec::new();
    for input in ids {
        let mut product_ids = Vec::new();
        for sql in PRODUCT_SQL {
            let mut statement = connection.prepare_cached(sql).map_err(backend)?;
            let found = statement
                .query_map([input], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?)))
                .map_err(backend)?;
            for found in found {
                let (product_id, row) = found.map_err(backend)?;
                rows.push((product_id.clone(), row));
                product_ids.push(product_id);
            }
        }
        // The product whose own id this is first: every caller that takes one product of an
        // id's matches takes the first (catalog.md §4).
        product_ids.sort_unstable_by(|a, b| (a != input).cmp(&(b != input)).then_with(|| a.cmp(b)));
        product_ids.dedup();
        for product_id in product_ids {
            resolutions.push(Resolution { input: input.clone(), product_id, variant_id: None });
        }
        let mut variant_ids = Vec::new();
        for sql in VARIANT_SQL {
            let mut statement = connection.prepare_cached(sql).map_err(backend)?;
            let found = statement
                .query_map([input], |row| {
                    Ok((row.get::<_, Option<String>>(0)?, row.get::<_, String>(1)?, row.get::<_, Option<i64>>(2)?))
                })
                .map_err(backend)?;
            for found in found {
                if let (Some(product_id), variant_id, row) = found.map_err(backend)? {
                    if let Some(row) = row {
                        rows.push((product_id.clone(), row));
                    }
                    variant_ids.push((product_id, variant_id));
                }
            }
        }
        variant_ids.sort_unstable();
        variant_ids.dedup();
        for (product_id, variant_id) in variant_ids {
            resolutions.push(Resolution { input: input.clone(), product_id, variant_id: Some(variant_id) });
        }
    }
    Ok(resolutions)
}

/// An id a caller sent and what it resolved to.
type Resolved = (String, Arc<[Resolution]>);

/// [`resolve`] per id: what each of `ids` resolved to, for the read cache.
fn resolve_each(
    connection: &Connection,
    ids: &[String],
    rows: &mut Vec<(String, i64)>,
) -> Result<Vec<Resolved>, StoreError> {
    let mut each = Vec::with_capacity(ids.len());
    for id in ids {
        let found = resolve(connection, std::slice::from_ref(id), rows)?;
        each.push((id.clone(), Arc::from(found)));
    }
    Ok(each)
}

#[cfg(test)]
mod tests;
