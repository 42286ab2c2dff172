//! `CatalogStore` on SQLite: products as UCP JSON documents, variants and categories as
//! indexed rows, search through the in-memory `CatalogIndex` built from those rows.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};
use ucp_domain::catalog::{Product, category_paths};
use ucp_domain::store::{CatalogStore, ImportSummary, Resolution, SearchPage, SearchQuery, StoreError};

use super::{Inner, SqliteStore, backend};
use crate::index::{CatalogIndex, IndexDoc};

#[async_trait]
impl CatalogStore for SqliteStore {
    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError> {
        let query = query.clone();
        let inner = Arc::clone(&self.inner);
        self.read(move |connection| {
            let index = current_index(&inner, connection)?;
            let page = index.search(&query);
            let mut products = Vec::with_capacity(page.rows.len());
            for position in &page.rows {
                if let Some(product) = load_row(&inner, connection, position.row)? {
                    products.push(product);
                }
            }
            let next = if page.has_more { page.rows.last().copied() } else { None };
            Ok(SearchPage { products, next, total_count: None })
        })
        .await
    }

    async fn resolve(&self, ids: &[String]) -> Result<Vec<Resolution>, StoreError> {
        let ids = ids.to_vec();
        self.read(move |connection| resolve(connection, &ids)).await
    }

    async fn products(&self, product_ids: &[String]) -> Result<Vec<Product>, StoreError> {
        let product_ids = product_ids.to_vec();
        let inner = Arc::clone(&self.inner);
        self.read(move |connection| {
            current_index(&inner, connection)?;
            let mut statement = connection.prepare_cached("SELECT row FROM products WHERE id = ?1").map_err(backend)?;
            let mut products = Vec::with_capacity(product_ids.len());
            for product_id in &product_ids {
                let found =
                    statement.query_row([product_id], |row| row.get::<_, i64>(0)).optional().map_err(backend)?;
                if let Some(row) = found
                    && let Some(product) = load_row(&inner, connection, row)?
                {
                    products.push(product);
                }
            }
            Ok(products)
        })
        .await
    }

    async fn upsert_products(&self, products: Vec<Product>) -> Result<ImportSummary, StoreError> {
        let summary = self
            .write(move |connection| {
                let transaction = connection.savepoint().map_err(backend)?;
                let summary = upsert_all(&transaction, &products)?;
                transaction
                    .prepare_cached("UPDATE catalog_meta SET version = version + 1")
                    .map_err(backend)?
                    .execute([])
                    .map_err(backend)?;
                transaction.commit().map_err(backend)?;
                Ok(summary)
            })
            .await?;
        self.inner.index_stale.store(true, Ordering::SeqCst);
        Ok(summary)
    }

    async fn refresh(&self) -> Result<bool, StoreError> {
        let inner = Arc::clone(&self.inner);
        self.read(move |connection| {
            let before = inner.index.read().map(|guard| guard.1).unwrap_or(-1);
            current_index(&inner, connection)?;
            Ok(inner.index.read().map(|guard| guard.1).unwrap_or(-1) != before)
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

/// Rough memory weight of a parsed document, for the cache's budget.
pub(super) fn weight_of(product: &Product) -> u32 {
    let variants = product.variants.len() as u32;
    let text = product.description.plain.as_ref().map_or(0, String::len) as u32 + product.title.len() as u32;
    2048 + variants * 1024 + text * 2
}

/// The search index, rebuilt first when the catalog changed since it was built (a write in
/// this process, or another process's import seen through `catalog_meta.version`).
fn current_index(inner: &Inner, connection: &Connection) -> Result<Arc<CatalogIndex>, StoreError> {
    // Prepared once per connection: on a hot read this is one indexed step, not a parse.
    let stored: i64 = connection
        .prepare_cached("SELECT version FROM catalog_meta")
        .and_then(|mut statement| statement.query_row([], |row| row.get(0)))
        .map_err(backend)?;
    {
        let guard = inner.index.read().map_err(|_| StoreError::Backend("index lock poisoned".into()))?;
        if guard.1 == stored && !inner.index_stale.load(Ordering::SeqCst) {
            return Ok(Arc::clone(&guard.0));
        }
    }
    let mut guard = inner.index.write().map_err(|_| StoreError::Backend("index lock poisoned".into()))?;
    if guard.1 == stored && !inner.index_stale.load(Ordering::SeqCst) {
        return Ok(Arc::clone(&guard.0));
    }
    inner.index_stale.store(false, Ordering::SeqCst);
    let started = std::time::Instant::now();
    let (index, version) = load_index(connection)?;
    tracing::info!(
        products = index.len(),
        version,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "rebuilt the search index"
    );
    *guard = (Arc::new(index), version);
    inner.documents.invalidate_all();
    Ok(Arc::clone(&guard.0))
}

/// Builds the search index from the catalog tables, with the version it reflects.
pub(super) fn load_index(connection: &Connection) -> Result<(CatalogIndex, i64), StoreError> {
    let version: i64 = connection
        .prepare_cached("SELECT version FROM catalog_meta")
        .map_err(backend)?
        .query_row([], |row| row.get(0))
        .map_err(backend)?;
    let mut categories: std::collections::HashMap<i64, Vec<String>> = std::collections::HashMap::new();
    let mut statement = connection.prepare("SELECT product_row, value FROM product_categories").map_err(backend)?;
    let rows = statement.query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))).map_err(backend)?;
    for row in rows {
        let (product_row, value) = row.map_err(backend)?;
        categories.entry(product_row).or_default().push(value);
    }
    let mut prices: std::collections::HashMap<i64, Vec<i64>> = std::collections::HashMap::new();
    let mut statement = connection.prepare("SELECT product_row, price FROM variants").map_err(backend)?;
    let rows = statement.query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))).map_err(backend)?;
    for row in rows {
        let (product_row, price) = row.map_err(backend)?;
        prices.entry(product_row).or_default().push(price);
    }
    let mut statement =
        connection.prepare("SELECT row, search_title, search_body FROM products ORDER BY row").map_err(backend)?;
    let rows = statement
        .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?)))
        .map_err(backend)?;
    let mut docs = Vec::new();
    for row in rows {
        let (product_row, title, body) = row.map_err(backend)?;
        docs.push(IndexDoc {
            row: product_row,
            title,
            body,
            categories: categories.remove(&product_row).unwrap_or_default(),
            prices: prices.remove(&product_row).unwrap_or_default(),
        });
    }
    Ok((CatalogIndex::build(docs), version))
}

/// The product stored at `row`, from the document cache or the table, with live stock.
fn load_row(inner: &Inner, connection: &Connection, row: i64) -> Result<Option<Product>, StoreError> {
    let document = match inner.documents.get(&row) {
        Some(document) => document,
        None => {
            let mut statement =
                connection.prepare_cached("SELECT doc FROM products WHERE row = ?1").map_err(backend)?;
            let Some(doc) =
                statement.query_row([row], |found| found.get::<_, String>(0)).optional().map_err(backend)?
            else {
                return Ok(None);
            };
            let product: Product = serde_json::from_str(&doc)
                .map_err(|error| StoreError::Backend(format!("stored product {row}: {error}")))?;
            let product = Arc::new(product);
            inner.documents.insert(row, Arc::clone(&product));
            product
        }
    };
    let mut product = (*document).clone();
    let mut statement =
        connection.prepare_cached("SELECT id, stock FROM variants WHERE product_row = ?1").map_err(backend)?;
    let stocks = statement
        .query_map([row], |found| Ok((found.get::<_, String>(0)?, found.get::<_, Option<i64>>(1)?)))
        .map_err(backend)?;
    for stock in stocks {
        let (variant_id, quantity) = stock.map_err(backend)?;
        if let Some(variant) = product.variants.iter_mut().find(|variant| variant.id == variant_id) {
            variant.inventory_quantity = quantity;
        }
    }
    product.refresh_availability();
    Ok(Some(product))
}

// One indexed statement per kind of id, merged here. No UNION and no join around a bound
// parameter: SQLite (3.54) re-prepares such a statement on every run, which was a tenth of
// the purchase flow's CPU; a correlated scalar subquery names the product instead. (An OR
// across the columns would scan every variant.)
const PRODUCT_SQL: [&str; 2] = ["SELECT id FROM products WHERE id = ?1", "SELECT id FROM products WHERE handle = ?1"];
const VARIANT_SQL: [&str; 3] = [
    "SELECT (SELECT id FROM products WHERE row = v.product_row), v.id FROM variants v WHERE v.id = ?1",
    "SELECT (SELECT id FROM products WHERE row = v.product_row), v.id FROM variants v WHERE v.sku = ?1",
    "SELECT (SELECT id FROM products WHERE row = (SELECT product_row FROM variants WHERE id = b.variant_id)), \
     b.variant_id FROM variant_barcodes b WHERE b.value = ?1",
];

fn resolve(connection: &Connection, ids: &[String]) -> Result<Vec<Resolution>, StoreError> {
    let mut resolutions = Vec::new();
    for input in ids {
        let mut product_ids = Vec::new();
        for sql in PRODUCT_SQL {
            let mut statement = connection.prepare_cached(sql).map_err(backend)?;
            let rows = statement.query_map([input], |row| row.get::<_, String>(0)).map_err(backend)?;
            for row in rows {
                product_ids.push(row.map_err(backend)?);
            }
        }
        product_ids.sort_unstable();
        product_ids.dedup();
        for product_id in product_ids {
            resolutions.push(Resolution { input: input.clone(), product_id, variant_id: None });
        }
        let mut variant_ids = Vec::new();
        for sql in VARIANT_SQL {
            let mut statement = connection.prepare_cached(sql).map_err(backend)?;
            let rows = statement
                .query_map([input], |row| Ok((row.get::<_, Option<String>>(0)?, row.get::<_, String>(1)?)))
                .map_err(backend)?;
            for row in rows {
                if let (Some(product_id), variant_id) = row.map_err(backend)? {
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

fn upsert_all(connection: &Connection, products: &[Product]) -> Result<ImportSummary, StoreError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_secs() as i64).unwrap_or(0);
    let mut find = connection.prepare_cached("SELECT row FROM products WHERE id = ?1").map_err(backend)?;
    let mut insert_product = connection
        .prepare_cached(
            "INSERT INTO products (id, handle, doc, search_title, search_body, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .map_err(backend)?;
    let mut update_product = connection
        .prepare_cached(
            "UPDATE products SET handle = ?2, doc = ?3, search_title = ?4, search_body = ?5, updated_at = ?6 WHERE row = ?1",
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
        let doc = serde_json::to_string(product).map_err(|error| StoreError::Backend(error.to_string()))?;
        let existing: Option<i64> = find.query_row([&product.id], |row| row.get(0)).optional().map_err(backend)?;
        let body = search_body(product);
        let row = match existing {
            Some(row) => {
                update_product.execute(params![row, product.handle, doc, product.title, body, now]).map_err(backend)?;
                clear_variants.execute([row]).map_err(backend)?;
                clear_categories.execute([row]).map_err(backend)?;
                summary.products_updated += 1;
                row
            }
            None => {
                insert_product
                    .execute(params![product.id, product.handle, doc, product.title, body, now])
                    .map_err(backend)?;
                summary.products_inserted += 1;
                connection.last_insert_rowid()
            }
        };
        for (position, variant) in product.variants.iter().enumerate() {
            insert_variant
                .execute(params![
                    variant.id,
                    row,
                    position as i64,
                    variant.sku,
                    variant.price.amount,
                    variant.inventory_quantity
                ])
                .map_err(|error| match backend(error) {
                    StoreError::Conflict { .. } => StoreError::Conflict {
                        constraint: format!(
                            "variant id {:?} of product {:?} belongs to another product",
                            variant.id, product.id
                        ),
                    },
                    other => other,
                })?;
            for barcode in &variant.barcodes {
                insert_barcode.execute(params![barcode.value, variant.id]).map_err(backend)?;
            }
            summary.variants += 1;
        }
        for category in product.categories.iter().chain(product.variants.iter().flat_map(|variant| &variant.categories))
        {
            for value in category_paths(&category.value) {
                insert_category.execute(params![value, row]).map_err(backend)?;
            }
        }
    }
    Ok(summary)
}

/// Everything besides the title a buyer might search by.
fn search_body(product: &Product) -> String {
    let mut body = product.description.searchable_text();
    let mut push = |text: &str| {
        body.push(' ');
        body.push_str(text);
    };
    for tag in &product.tags {
        push(tag);
    }
    for category in &product.categories {
        push(&category.value);
    }
    if let Some(brand) = product.metadata.as_ref().and_then(|metadata| metadata.get("brand")).and_then(|v| v.as_str()) {
        push(brand);
    }
    for option in &product.options {
        for value in &option.values {
            push(&value.label);
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::*;

    // The id resolution runs on every catalog read and cart line: its statements must stay
    // prepared (a compound SELECT, or a join, around a parameter was re-prepared by SQLite on
    // every run).
    #[test]
    fn resolving_ids_never_reprepares_a_statement() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        drop(super::super::SqliteStore::open(&path, 1).unwrap());
        let connection = Connection::open(&path).unwrap();
        let ids = vec!["p1".to_owned(), "sku-1".to_owned(), "0123456789012".to_owned()];
        for _ in 0..3 {
            resolve(&connection, &ids).unwrap();
        }
        for sql in PRODUCT_SQL.iter().chain(VARIANT_SQL.iter()) {
            let statement = connection.prepare_cached(sql).unwrap();
            assert_eq!(statement.get_status(StatementStatus::RePrepare), 0, "{sql}");
        }
    }
}
