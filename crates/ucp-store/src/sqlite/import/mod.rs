//! Catalog import on SQLite (`CatalogStore::import_products`): a stream of products written in
//! one transaction without holding the catalog in memory.
//!
//! Two threads share the work: a preparer on the blocking pool drains the stream (whatever
//! building the products costs the stream happens there) and renders each product's document and
//! search text; the writer thread runs one write job, upserting the prepared products batch by
//! batch inside one savepoint, checks that no product's id is another's variant id (`ids.rs`,
//! once, on the catalog as the whole import leaves it), then moves `catalog_meta.version`. The
//! preparer hands over at most [`QUEUE`] batches ahead, so memory is bounded whatever the
//! catalog's size (besides a bit per product row written, for the check). An `Err` in the
//! stream, or a stream that ends without saying it is complete (the preparer panicked),
//! rolls the savepoint back: the catalog stays as it was.

use std::sync::atomic::Ordering;
use std::sync::mpsc;

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use ucp_domain::catalog::Product;
use ucp_domain::catalog::category_paths;
use ucp_domain::store::{ImportSummary, ProductStream, StoreError};

use super::{SqliteStore, backend, document};

mod ids;

/// Products per batch handed to the writer.
const BATCH: usize = 256;

/// Batches prepared ahead of the writer at most.
const QUEUE: usize = 4;

/// The writer's page cache while an import runs, in KiB. The writer normally keeps a small
/// cache (every COMMIT walks it); an import touches the B-tree pages of every catalog index
/// again and again, which a small cache writes out and reads back many times over. Restored
/// when the job ends, so the server's later commits are unaffected.
const IMPORT_CACHE_KIB: i64 = 64 * 1024;

/// What the writer stores of a product, rendered and taken apart off the writer thread (which
/// then frees a few strings rather than a whole product).
pub(super) struct Prepared {
    pub(super) id: String,
    pub(super) handle: Option<String>,
    pub(super) title: String,
    /// The product's JSON document, packed (`document::pack`).
    pub(super) doc: Vec<u8>,
    /// Where the document's variants and their availability sit (`products.cuts`).
    pub(super) cuts: Option<Vec<u8>>,
    /// Its searchable text besides the title.
    pub(super) body: String,
    pub(super) variants: Vec<PreparedVariant>,
    /// The category values of the product and of its variants, in that order.
    pub(super) categories: Vec<String>,
}

pub(super) struct PreparedVariant {
    pub(super) id: String,
    pub(super) sku: Option<String>,
    /// In minor units.
    pub(super) price: i64,
    pub(super) stock: Option<i64>,
    pub(super) barcodes: Vec<String>,
}

impl Prepared {
    fn of(product: Product) -> Result<Prepared, StoreError> {
        let (json, cuts) = ucp_protocol::resources::stored::document(&product)
            .map_err(|error| StoreError::Backend(format!("product {:?}: {error}", product.id)))?;
        let doc =
            document::pack(&json).map_err(|error| StoreError::Backend(format!("product {:?}: {error}", product.id)))?;
        let body = product.search_body();
        let Product { id, handle, title, categories, variants, .. } = product;
        let mut categories: Vec<String> = categories.into_iter().map(|category| category.value).collect();
        let variants = variants
            .into_iter()
            .map(|variant| {
                categories.extend(variant.categories.into_iter().map(|category| category.value));
                PreparedVariant {
                    id: variant.id,
                    sku: variant.sku,
                    price: variant.price.amount,
                    stock: variant.inventory_quantity,
                    barcodes: variant.barcodes.into_iter().map(|barcode| barcode.value).collect(),
                }
            })
            .collect();
        Ok(Prepared { id, handle, title, doc, cuts, body, variants, categories })
    }
}

/// What the preparer hands the writer.
enum Batch {
    Products(Vec<Prepared>),
    /// The stream is drained: the import may commit.
    End,
    /// The stream failed: the import must write nothing.
    Failed(StoreError),
}

pub(super) async fn import_products(store: &SqliteStore, products: ProductStream) -> Result<ImportSummary, StoreError> {
    let (sender, receiver) = mpsc::sync_channel(QUEUE);
    let preparer = tokio::task::spawn_blocking(move || prepare(products, &sender));
    let written = store.write_bulk(move |connection| write_all(connection, &receiver)).await;
    // The preparer ends once the stream does, or once its receiver is dropped: by the writer, or
    // with the job by a caller that stopped waiting for the writer to take it.
    let _ = preparer.await;
    let summary = written?;
    store.inner.index_stale.store(true, Ordering::SeqCst);
    Ok(summary)
}

/// Drains the stream into batches of prepared products.
fn prepare(products: ProductStream, sender: &mpsc::SyncSender<Batch>) {
    let mut batch = Vec::with_capacity(BATCH);
    for item in products {
        match item.and_then(Prepared::of) {
            Ok(prepared) => batch.push(prepared),
            Err(error) => {
                let _ = sender.send(Batch::Failed(error));
                return;
            }
        }
        if batch.len() == BATCH && sender.send(Batch::Products(std::mem::take(&mut batch))).is_err() {
            // The writer gave up; dropping the stream tells its source.
            return;
        }
    }
    if !batch.is_empty() && sender.send(Batch::Products(batch)).is_err() {
        return;
    }
    let _ = sender.send(Batch::End);
}

/// The write job: every batch in one savepoint, then the version bump; with the page cache
/// enlarged for the job's length.
fn write_all(connection: &mut Connection, batches: &mpsc::Receiver<Batch>) -> Result<ImportSummary, StoreError> {
    let cache_size: i64 = connection.query_row("PRAGMA cache_size", [], |row| row.get(0)).map_err(backend)?;
    connection.execute_batch(&format!("PRAGMA cache_size = -{IMPORT_CACHE_KIB}")).map_err(backend)?;
    let written = write_batches(connection, batches);
    // Not a reason to fail the job: its writes are committed with the batch either way.
    if let Err(error) = connection.execute_batch(&format!("PRAGMA cache_size = {cache_size}")) {
        tracing::warn!(%error, "could not restore the writer's page cache size after an import");
    }
    written
}

fn write_batches(connection: &mut Connection, batches: &mpsc::Receiver<Batch>) -> Result<ImportSummary, StoreError> {
    let savepoint = connection.savepoint().map_err(backend)?;
    let fresh: bool =
        savepoint.query_row("SELECT NOT EXISTS (SELECT 1 FROM products)", [], |row| row.get(0)).map_err(backend)?;
    let mut summary = ImportSummary::default();
    let mut touched = ids::Touched::default();
    loop {
        match batches.recv() {
            Ok(Batch::Products(batch)) => {
                let written = upsert_all(&savepoint, &batch, fresh, &mut touched)?;
                summary.products_inserted += written.products_inserted;
                summary.products_updated += written.products_updated;
                summary.variants += written.variants;
            }
            Ok(Batch::End) => break,
            Ok(Batch::Failed(error)) => return Err(error),
            Err(_) => return Err(StoreError::Backend("the import stream ended before its end".to_owned())),
        }
    }
    ids::check(&savepoint, &touched)?;
    savepoint
        .prepare_cached("UPDATE catalog_meta SET version = version + 1")
        .map_err(backend)?
        .execute([])
        .map_err(backend)?;
    savepoint.commit().map_err(backend)?;
    Ok(summary)
}

/// Writes one batch, noting each product's row in `touched`.
fn upsert_all(
    connection: &Connection,
    products: &[Prepared],
    fresh: bool,
    touched: &mut ids::Touched,
) -> Result<ImportSummary, StoreError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs() as i64).unwrap_or(0);
    let mut find = connection.prepare_cached("SELECT row FROM products WHERE id = ?1").map_err(backend)?;
    let mut insert_product = connection
        .prepare_cached(
            "INSERT INTO products (id, handle, doc, cuts, search_title, search_body, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )
        .map_err(backend)?;
    let mut update_product = connection
        .prepare_cached(
            "UPDATE products SET handle = ?2, doc = ?3, cuts = ?4, search_title = ?5, search_body = ?6, updated_at = ?7 \
             WHERE row = ?1",
        )
        .map_err(backend)?;
    let mut clear_variants =
        connection.prepare_cached("DELETE FROM variants WHERE product_row = ?1").map_err(backend)?;
    let mut clear_categories =
        connection.prepare_cached("DELETE FROM product_categories WHERE product_row = ?1").map_err(backend)?;
    let mut insert_variant = connection
        .prepare_cached(
            "INSERT INTO variants (id, product_row, position, sku, price, stock) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(backend)?;
    let mut insert_barcode = connection
        .prepare_cached("INSERT OR IGNORE INTO variant_barcodes (value, variant_id) VALUES (?1, ?2)")
        .map_err(backend)?;
    let mut insert_category = connection
        .prepare_cached("INSERT OR IGNORE INTO product_categories (value, product_row) VALUES (?1, ?2)")
        .map_err(backend)?;

    let mut summary = ImportSummary::default();
    for product in products {
        let Prepared { id, handle, title, doc, cuts, body, .. } = product;
        // In a fresh catalog a product is new, unless its id came earlier in this import.
        let inserted = if fresh {
            match insert_product.execute(params![id, handle, doc, cuts, title, body, now]).map_err(backend) {
                Ok(_) => Some(connection.last_insert_rowid()),
                Err(StoreError::Conflict { .. }) => None,
                Err(other) => return Err(other),
            }
        } else {
            None
        };
        let existing = match inserted {
            Some(_) => None,
            None => find.query_row([id], |row| row.get::<_, i64>(0)).optional().map_err(backend)?,
        };
        let row = match (inserted, existing) {
            (Some(row), _) => {
                summary.products_inserted += 1;
                row
            }
            (None, Some(row)) => {
                update_product.execute(params![row, handle, doc, cuts, title, body, now]).map_err(backend)?;
                clear_variants.execute([row]).map_err(backend)?;
                clear_categories.execute([row]).map_err(backend)?;
                summary.products_updated += 1;
                row
            }
            (None, None) => {
                insert_product.execute(params![id, handle, doc, cuts, title, body, now]).map_err(backend)?;
                summary.products_inserted += 1;
                connection.last_insert_rowid()
            }
        };
        touched.insert(row);
        for (position, variant) in product.variants.iter().enumerate() {
            insert_variant
                .execute(params![variant.id, row, position as i64, variant.sku, variant.price, variant.stock])
                .map_err(|error| match backend(error) {
                    StoreError::Conflict { .. } => StoreError::Conflict {
                        constraint: format!("variant id {:?} of product {id:?} belongs to another product", variant.id),
                    },
                    other => other,
                })?;
            for barcode in &variant.barcodes {
                insert_barcode.execute(params![barcode, variant.id]).map_err(backend)?;
            }
            summary.variants += 1;
        }
        for category in &product.categories {
            for value in category_paths(category) {
                insert_category.execute(params![value, row]).map_err(backend)?;
            }
        }
    }
    Ok(summary)
}

#[cfg(test)]
pub(super) mod tests;
