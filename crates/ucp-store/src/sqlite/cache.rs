//! What the catalog read path keeps in memory, so that a hot `get_product`, `lookup_catalog`
//! or search page runs without the blocking pool or a single SQLite statement: products as
//! served (the stored document with live stock laid over it), the row of each product id, and
//! the resolution of each id a caller sent.
//!
//! Every cache is weighed in bytes and bounded. Stock is the only part of a served product
//! that changes without an import, and it changes only through this process's writer (orders);
//! [`ReadCache::stock_changed`] drops the products it touched after their commit. An import
//! (here, or another process's seen by the refresher) drops everything. The `epoch` closes
//! the race between a reader that read the old stock and the invalidation: see
//! [`ReadCache::keep`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ucp_domain::catalog::{Product, Served};
use ucp_domain::store::Resolution;

/// Memory for products as served, with what hangs off each (its rendering, its default view).
const PRODUCT_BYTES: u64 = 64 * 1024 * 1024;
/// Memory for id resolutions and product rows (ids a stranger sends are cached too, misses
/// included, so this is bounded like the rest).
const ID_BYTES: u64 = 8 * 1024 * 1024;
/// A served product is dropped after this long even if nothing invalidated it: a safety net
/// for stock changed behind this process's back (another process writing the file).
const PRODUCT_TTL: Duration = Duration::from_secs(30);

pub(super) struct ReadCache {
    /// Products as served, by row.
    products: moka::sync::Cache<i64, Arc<Served>>,
    /// The row of each product id.
    rows: moka::sync::Cache<Arc<str>, i64>,
    /// What each id a caller sent resolved to (empty: nothing).
    resolutions: moka::sync::Cache<Arc<str>, Arc<[Resolution]>>,
    /// Moves on every change a cached entry could miss.
    epoch: AtomicU64,
}

impl ReadCache {
    pub(super) fn new() -> ReadCache {
        ReadCache {
            products: moka::sync::Cache::builder()
                .weigher(|_, product: &Arc<Served>| weight_of(product))
                .max_capacity(PRODUCT_BYTES)
                .time_to_live(PRODUCT_TTL)
                .build(),
            rows: moka::sync::Cache::builder()
                .weigher(|id: &Arc<str>, _| 64 + id.len() as u32)
                .max_capacity(ID_BYTES / 2)
                .build(),
            resolutions: moka::sync::Cache::builder()
                .weigher(|id: &Arc<str>, found: &Arc<[Resolution]>| {
                    let found: usize = found
                        .iter()
                        .map(|resolution| {
                            96 + resolution.product_id.len() + resolution.variant_id.as_ref().map_or(0, String::len)
                        })
                        .sum();
                    (64 + id.len() + found) as u32
                })
                .max_capacity(ID_BYTES / 2)
                .build(),
            epoch: AtomicU64::new(0),
        }
    }

    /// Read before loading anything that [`ReadCache::keep`] will store.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    pub(super) fn product(&self, row: i64) -> Option<Arc<Served>> {
        self.products.get(&row)
    }

    pub(super) fn row(&self, product_id: &str) -> Option<i64> {
        self.rows.get(product_id)
    }

    pub(super) fn resolution(&self, id: &str) -> Option<Arc<[Resolution]>> {
        self.resolutions.get(id)
    }

    /// Stores what a reader loaded after reading `epoch`. Inserted first and checked after:
    /// a change that committed while the reader read has moved the epoch, so either the
    /// reader sees the new epoch here and takes its entry back, or the change's invalidation
    /// (which follows its epoch move) comes after this insert and removes it.
    pub(super) fn keep(&self, epoch: u64, loaded: Loaded) {
        match loaded {
            Loaded::Product(row, product) => {
                self.products.insert(row, product);
                if self.epoch() != epoch {
                    self.products.invalidate(&row);
                }
            }
            Loaded::Row(id, row) => {
                self.rows.insert(Arc::clone(&id), row);
                if self.epoch() != epoch {
                    self.rows.invalidate(&id);
                }
            }
            Loaded::Resolution(id, found) => {
                self.resolutions.insert(Arc::clone(&id), found);
                if self.epoch() != epoch {
                    self.resolutions.invalidate(&id);
                }
            }
        }
    }

    /// After a commit that changed the stock of the products at `rows`.
    pub(super) fn stock_changed(&self, rows: &[i64]) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        for row in rows {
            self.products.invalidate(row);
        }
    }

    /// After a commit that changed the catalog itself (an import).
    pub(super) fn catalog_changed(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.products.invalidate_all();
        self.rows.invalidate_all();
        self.resolutions.invalidate_all();
    }
}

/// One thing a reader loaded, for [`ReadCache::keep`].
pub(super) enum Loaded {
    Product(i64, Arc<Served>),
    Row(Arc<str>, i64),
    Resolution(Arc<str>, Arc<[Resolution]>),
}

/// Rough memory weight of a served product, for the cache's budget: the parsed document, and
/// as much again for what hangs off it once it is read (the transport's rendering, about half
/// the document's size; get_product's default view, the document with one variant, and its
/// rendering). The weight is fixed when the entry goes in, so it counts them whether or not
/// they are ever made.
fn weight_of(product: &Product) -> u32 {
    let variants = product.variants.len() as u32;
    let text = product.description.plain.as_ref().map_or(0, String::len) as u32 + product.title.len() as u32;
    2 * (2048 + variants * 1024 + text * 2)
}

#[cfg(test)]
mod tests {
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
        cache.catalog_changed();
        assert!(cache.row("p1").is_none() && cache.resolution("p1").is_none());
    }
}
