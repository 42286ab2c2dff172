//! Keeping the search index current: rebuilt when the catalog moved (`current_index`), built
//! from the catalog tables on a thread beside the reader (`load_index`), and saved beside the
//! database so a start can load it (`save_index_later`, `index_file.rs`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use rusqlite::Connection;
use ucp_domain::store::StoreError;

use super::index_file::{self, Built};
use super::{Inner, backend};
use crate::index::{CatalogIndex, IndexDoc};

/// The search index, rebuilt first when the catalog changed since it was built (`index_stale`:
/// a write in this process, or another process's import seen by `refresh`). A rebuild also
/// empties the read caches.
pub(super) fn current_index(inner: &Inner, connection: &Connection) -> Result<Arc<CatalogIndex>, StoreError> {
    if !inner.index_stale.load(Ordering::SeqCst) {
        // A rebuild that panicked left the index it replaces whole (it is swapped only once
        // built), so a poisoned lock is taken as it is.
        let guard = inner.index.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        return Ok(Arc::clone(&guard.0));
    }
    let mut guard = inner.index.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !inner.index_stale.load(Ordering::SeqCst) {
        return Ok(Arc::clone(&guard.0));
    }
    // Cleared before the reading, so a write during it leaves the index stale again.
    inner.index_stale.store(false, Ordering::SeqCst);
    let started = std::time::Instant::now();
    let (index, built) = match load_index(connection) {
        Ok(loaded) => loaded,
        Err(error) => {
            // The next search tries again, rather than the old index answering until a write.
            inner.index_stale.store(true, Ordering::SeqCst);
            return Err(error);
        }
    };
    tracing::info!(
        products = index.len(),
        version = built.version,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "rebuilt the search index"
    );
    let index = Arc::new(index);
    *guard = (Arc::clone(&index), built.version);
    inner.cache.catalog_changed();
    save_index_later(&inner.path, &index, built);
    Ok(Arc::clone(&guard.0))
}

/// Which catalog the tables hold now, as a saved index names it.
pub(super) fn built_of(connection: &Connection) -> Result<Built, StoreError> {
    let version: i64 = connection
        .prepare_cached("SELECT version FROM catalog_meta")
        .map_err(backend)?
        .query_row([], |row| row.get(0))
        .map_err(backend)?;
    let max_row: i64 = connection
        .prepare_cached("SELECT COALESCE(max(row), 0) FROM products")
        .map_err(backend)?
        .query_row([], |row| row.get(0))
        .map_err(backend)?;
    Ok(Built { version, max_row })
}

/// Saves `index` beside the database on a thread of its own (a start does not wait for it).
pub(super) fn save_index_later(database: &std::path::Path, index: &Arc<CatalogIndex>, built: Built) {
    let (database, index) = (database.to_owned(), Arc::clone(index));
    let spawned = std::thread::Builder::new()
        .name("ucpd-index-save".into())
        .spawn(move || index_file::save(&database, &index, built));
    if let Err(error) = spawned {
        tracing::warn!(%error, "could not start saving the search index");
    }
}

/// Builds the search index from the catalog tables, with the catalog it reflects. (One read
/// transaction, so the tables cannot move between the counts and the rows.)
pub(super) fn load_index(connection: &Connection) -> Result<(CatalogIndex, Built), StoreError> {
    let read = connection.unchecked_transaction().map_err(backend)?;
    let built = built_of(&read)?;
    // Three scans in row order, merged as they go: nothing but the index under construction
    // is held, whatever the catalog's size.
    let mut categories =
        read.prepare("SELECT product_row, value FROM product_categories ORDER BY product_row").map_err(backend)?;
    let mut prices = read.prepare("SELECT product_row, price FROM variants ORDER BY product_row").map_err(backend)?;
    let mut products =
        read.prepare("SELECT row, search_title, search_body FROM products ORDER BY row").map_err(backend)?;
    let mut categories = categories
        .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
        .map_err(backend)?
        .peekable();
    let mut prices =
        prices.query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))).map_err(backend)?.peekable();
    let products = products
        .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?)))
        .map_err(backend)?;
    let failed: std::cell::RefCell<Option<rusqlite::Error>> = std::cell::RefCell::new(None);
    let fail = |error: rusqlite::Error| {
        failed.borrow_mut().get_or_insert(error);
    };
    let docs = products.map_while(|found| {
        let (row, title, body) = found.map_err(&fail).ok()?;
        let mut doc = IndexDoc { row, title, body, categories: Vec::new(), prices: Vec::new() };
        // Rows of other tables before this product's belong to no product (cannot happen with
        // the foreign keys) and are skipped.
        while let Some(next) = categories.next_if(|next| next.as_ref().is_ok_and(|(owner, _)| *owner <= row)) {
            match next {
                Ok((owner, value)) if owner == row => doc.categories.push(value),
                Ok(_) => {}
                Err(error) => fail(error),
            }
        }
        while let Some(next) = prices.next_if(|next| next.as_ref().is_ok_and(|(owner, _)| *owner <= row)) {
            match next {
                Ok((owner, price)) if owner == row => doc.prices.push(price),
                Ok(_) => {}
                Err(error) => fail(error),
            }
        }
        if let Some(Err(_)) = categories.peek() {
            categories.next().and_then(Result::err).map(&fail);
        }
        if let Some(Err(_)) = prices.peek() {
            prices.next().and_then(Result::err).map(&fail);
        }
        Some(doc)
    });
    let index = build_beside(docs);
    if let Some(error) = failed.into_inner() {
        return Err(backend(error));
    }
    Ok((index, built))
}

/// Documents handed to the building thread at once, and batches read ahead of it at most.
const BUILD_BATCH: usize = 512;
const BUILD_QUEUE: usize = 8;

/// Builds the index from `docs` on a thread of its own while this one reads them: at a million
/// products reading the rows was a quarter of the build, which ran on one core.
fn build_beside(docs: impl Iterator<Item = IndexDoc>) -> CatalogIndex {
    // Fused: the reading ends at its first error (`map_while`), and `peek` must not resume it.
    let mut docs = docs.fuse().peekable();
    std::thread::scope(|scope| {
        let (sender, batches) = std::sync::mpsc::sync_channel::<Vec<IndexDoc>>(BUILD_QUEUE);
        let building = std::thread::Builder::new()
            .name("ucpd-index".to_owned())
            .spawn_scoped(scope, move || CatalogIndex::build(batches.into_iter().flatten()));
        let Ok(building) = building else {
            return CatalogIndex::build(docs);
        };
        while docs.peek().is_some() {
            let batch: Vec<IndexDoc> = docs.by_ref().take(BUILD_BATCH).collect();
            if sender.send(batch).is_err() {
                break;
            }
        }
        drop(sender);
        building.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The index built beside the reading thread, over several batches, is the index built in
    // place: the same bytes once written.
    #[test]
    fn an_index_built_beside_the_reader_is_the_index_built_in_place() {
        let docs = |count: usize| {
            (0..count).map(|n| IndexDoc {
                row: n as i64 + 1,
                title: format!("Wool sweater number {n}"),
                body: format!("warm {} knit", ["red", "blue", "green"][n % 3]),
                categories: vec![format!("apparel > {}", n % 7)],
                prices: vec![100 + n as i64],
            })
        };
        for count in [0, 1, BUILD_BATCH, BUILD_BATCH * (BUILD_QUEUE + 3) + 5] {
            let (mut beside, mut in_place) = (Vec::new(), Vec::new());
            build_beside(docs(count)).write_to(&mut beside).unwrap();
            CatalogIndex::build(docs(count)).write_to(&mut in_place).unwrap();
            assert!(beside == in_place, "{count} documents");
        }
    }
}
