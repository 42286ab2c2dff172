//! `CatalogStore` on SQLite: products as UCP JSON documents, variants and categories as
//! indexed rows, full-text search with FTS5 ranked by BM25 (title weighted above body).

use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};
use ucp_domain::catalog::Product;
use ucp_domain::store::{CatalogStore, ImportSummary, Resolution, SearchPage, SearchPosition, SearchQuery, StoreError};

use super::{SqliteStore, backend};

/// BM25 column weights: title, body.
const TITLE_WEIGHT: f64 = 10.0;
const BODY_WEIGHT: f64 = 1.0;

#[async_trait]
impl CatalogStore for SqliteStore {
    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError> {
        let query = query.clone();
        self.read(move |connection| search(connection, &query)).await
    }

    async fn resolve(&self, ids: &[String]) -> Result<Vec<Resolution>, StoreError> {
        let ids = ids.to_vec();
        self.read(move |connection| resolve(connection, &ids)).await
    }

    async fn products(&self, product_ids: &[String]) -> Result<Vec<Product>, StoreError> {
        let product_ids = product_ids.to_vec();
        self.read(move |connection| {
            let mut statement =
                connection.prepare_cached("SELECT row, doc FROM products WHERE id = ?1").map_err(backend)?;
            let mut products = Vec::with_capacity(product_ids.len());
            for product_id in &product_ids {
                let found = statement
                    .query_row([product_id], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)))
                    .optional()
                    .map_err(backend)?;
                if let Some((row, doc)) = found {
                    products.push(load_product(connection, row, &doc)?);
                }
            }
            Ok(products)
        })
        .await
    }

    async fn upsert_products(&self, products: Vec<Product>) -> Result<ImportSummary, StoreError> {
        self.write(move |connection| {
            let transaction = connection.transaction().map_err(backend)?;
            let summary = upsert_all(&transaction, &products)?;
            transaction.commit().map_err(backend)?;
            Ok(summary)
        })
        .await
    }

    async fn product_count(&self) -> Result<u64, StoreError> {
        self.read(|connection| {
            connection
                .query_row("SELECT count(*) FROM products", [], |row| row.get::<_, i64>(0))
                .map(|count| count as u64)
                .map_err(backend)
        })
        .await
    }
}

/// Reads a stored document and lays the live stock of its variants over it.
fn load_product(connection: &Connection, row: i64, doc: &str) -> Result<Product, StoreError> {
    let mut product: Product =
        serde_json::from_str(doc).map_err(|error| StoreError::Backend(format!("stored product {row}: {error}")))?;
    let mut statement =
        connection.prepare_cached("SELECT id, stock FROM variants WHERE product_row = ?1").map_err(backend)?;
    let stocks = statement
        .query_map([row], |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?)))
        .map_err(backend)?;
    for stock in stocks {
        let (variant_id, quantity) = stock.map_err(backend)?;
        if let Some(variant) = product.variants.iter_mut().find(|variant| variant.id == variant_id) {
            variant.inventory_quantity = quantity;
        }
    }
    product.refresh_availability();
    Ok(product)
}

fn search(connection: &Connection, query: &SearchQuery) -> Result<SearchPage, StoreError> {
    let mut sql = String::with_capacity(512);
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    let text = !query.terms.is_empty();
    if text {
        let joiner = if query.match_all_terms { " " } else { " OR " };
        let expression = query
            .terms
            .iter()
            .map(|term| format!("\"{}\"", term.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(joiner);
        values.push(expression.into());
        sql.push_str(&format!(
            "SELECT p.row, p.doc, f.score FROM (SELECT rowid, bm25(products_fts, {TITLE_WEIGHT:.1}, {BODY_WEIGHT:.1}) \
             AS score FROM products_fts WHERE products_fts MATCH ?1) AS f JOIN products p ON p.row = f.rowid WHERE 1"
        ));
    } else {
        sql.push_str("SELECT p.row, p.doc, 0.0 AS score FROM products p WHERE 1");
    }
    if !query.categories.is_empty() {
        sql.push_str(" AND p.row IN (SELECT product_row FROM product_categories WHERE value IN (");
        for (index, category) in query.categories.iter().enumerate() {
            if index > 0 {
                sql.push(',');
            }
            values.push(category.to_lowercase().into());
            sql.push_str(&format!("?{}", values.len()));
        }
        sql.push_str("))");
    }
    if query.price_min.is_some() || query.price_max.is_some() {
        values.push(query.price_min.unwrap_or(0).into());
        let min = values.len();
        values.push(query.price_max.unwrap_or(i64::MAX).into());
        let max = values.len();
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM variants v WHERE v.product_row = p.row AND v.price BETWEEN ?{min} AND ?{max})"
        ));
    }
    if let Some(after) = query.after {
        values.push(after.row.into());
        let row = values.len();
        if text {
            values.push(after.score.into());
            let score = values.len();
            sql.push_str(&format!(" AND (score > ?{score} OR (score = ?{score} AND p.row > ?{row}))"));
        } else {
            sql.push_str(&format!(" AND p.row > ?{row}"));
        }
    }
    sql.push_str(if text { " ORDER BY score, p.row" } else { " ORDER BY p.row" });
    values.push(((query.limit + 1) as i64).into());
    sql.push_str(&format!(" LIMIT ?{}", values.len()));

    let mut statement = connection.prepare_cached(&sql).map_err(backend)?;
    let rows = statement
        .query_map(rusqlite::params_from_iter(values), |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, f64>(2)?))
        })
        .map_err(backend)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(backend)?;
    let has_more = rows.len() > query.limit;
    let mut products = Vec::with_capacity(query.limit);
    let mut last = None;
    for (row, doc, score) in rows.into_iter().take(query.limit) {
        products.push(load_product(connection, row, &doc)?);
        last = Some(SearchPosition { score, row });
    }
    Ok(SearchPage { products, next: if has_more { last } else { None }, total_count: None })
}

fn resolve(connection: &Connection, ids: &[String]) -> Result<Vec<Resolution>, StoreError> {
    const PRODUCT_SQL: &str = "SELECT id FROM products WHERE id = ?1 UNION SELECT id FROM products WHERE handle = ?1";
    const VARIANT_SQL: &str = "SELECT p.id, v.id FROM variants v JOIN products p ON p.row = v.product_row \
         WHERE v.id = ?1 OR v.sku = ?1 \
         UNION SELECT p.id, v.id FROM variant_barcodes b JOIN variants v ON v.id = b.variant_id \
         JOIN products p ON p.row = v.product_row WHERE b.value = ?1";
    let mut products = connection.prepare_cached(PRODUCT_SQL).map_err(backend)?;
    let mut variants = connection.prepare_cached(VARIANT_SQL).map_err(backend)?;
    let mut resolutions = Vec::new();
    for input in ids {
        let product_ids = products
            .query_map([input], |row| row.get::<_, String>(0))
            .map_err(backend)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(backend)?;
        for product_id in product_ids {
            resolutions.push(Resolution { input: input.clone(), product_id, variant_id: None });
        }
        let variant_ids = variants
            .query_map([input], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))
            .map_err(backend)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(backend)?;
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
        .prepare_cached("INSERT INTO products (id, handle, doc, updated_at) VALUES (?1, ?2, ?3, ?4)")
        .map_err(backend)?;
    let mut update_product = connection
        .prepare_cached("UPDATE products SET handle = ?2, doc = ?3, updated_at = ?4 WHERE row = ?1")
        .map_err(backend)?;
    let mut clear_variants =
        connection.prepare_cached("DELETE FROM variants WHERE product_row = ?1").map_err(backend)?;
    let mut clear_categories =
        connection.prepare_cached("DELETE FROM product_categories WHERE product_row = ?1").map_err(backend)?;
    let mut clear_text = connection.prepare_cached("DELETE FROM products_fts WHERE rowid = ?1").map_err(backend)?;
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
    let mut insert_text = connection
        .prepare_cached("INSERT INTO products_fts (rowid, title, body) VALUES (?1, ?2, ?3)")
        .map_err(backend)?;

    let mut summary = ImportSummary::default();
    for product in products {
        let doc = serde_json::to_string(product).map_err(|error| StoreError::Backend(error.to_string()))?;
        let existing: Option<i64> = find.query_row([&product.id], |row| row.get(0)).optional().map_err(backend)?;
        let row = match existing {
            Some(row) => {
                update_product.execute(params![row, product.handle, doc, now]).map_err(backend)?;
                clear_variants.execute([row]).map_err(backend)?;
                clear_categories.execute([row]).map_err(backend)?;
                clear_text.execute([row]).map_err(backend)?;
                summary.products_updated += 1;
                row
            }
            None => {
                insert_product.execute(params![product.id, product.handle, doc, now]).map_err(backend)?;
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
        insert_text.execute(params![row, product.title, search_body(product)]).map_err(backend)?;
    }
    Ok(summary)
}

/// A category value and each of its ancestors in an `A > B > C` path, lower-cased, so a
/// filter on `Apparel & Accessories` matches `Apparel & Accessories > Shoes`.
fn category_paths(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('>').map(str::trim).filter(|part| !part.is_empty()).collect();
    let mut paths = Vec::with_capacity(parts.len() + 1);
    for end in 1..=parts.len() {
        paths.push(parts[..end].join(" > ").to_lowercase());
    }
    let whole = value.trim().to_lowercase();
    if !paths.contains(&whole) {
        paths.push(whole);
    }
    paths
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
    for variant in &product.variants {
        if let Some(sku) = &variant.sku {
            push(sku);
        }
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_paths_include_ancestors() {
        assert_eq!(
            category_paths("Apparel & Accessories > Shoes > Running"),
            vec!["apparel & accessories", "apparel & accessories > shoes", "apparel & accessories > shoes > running"]
        );
        assert_eq!(category_paths("Footwear"), vec!["footwear"]);
    }
}
