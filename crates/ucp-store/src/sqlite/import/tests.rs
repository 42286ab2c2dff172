//! The import's tests: batches, compression, a failed import, ids that clash.

use ucp_domain::catalog::{Description, PriceRange, Variant};
use ucp_domain::money::Price;
use ucp_domain::store::CatalogStore;

use super::*;

pub(in crate::sqlite) fn product(id: &str, variant_id: &str, amount: i64) -> Product {
    let price = Price::new(amount, "USD".to_owned());
    let mut product = Product {
        id: id.to_owned(),
        handle: Some(format!("handle-{id}")),
        title: format!("Product {id}"),
        description: Description::plain("A thing"),
        url: None,
        categories: Vec::new(),
        price_range: PriceRange { min: price.clone(), max: price.clone() },
        list_price_range: None,
        media: Vec::new(),
        options: Vec::new(),
        variants: vec![Variant {
            id: variant_id.to_owned(),
            sku: Some(format!("sku-{variant_id}")),
            barcodes: Vec::new(),
            handle: None,
            url: None,
            title: String::new(),
            description: Description::default(),
            categories: Vec::new(),
            price,
            list_price: None,
            unit_price: None,
            availability: None,
            options: Vec::new(),
            media: Vec::new(),
            rating: None,
            tags: Vec::new(),
            metadata: None,
            seller: None,
            inventory_quantity: Some(3),
        }],
        rating: None,
        tags: Vec::new(),
        metadata: None,
    };
    product.normalize().unwrap();
    product
}

pub(in crate::sqlite) fn store(dir: &tempfile::TempDir) -> SqliteStore {
    SqliteStore::open(&dir.path().join("catalog.db"), 1).unwrap()
}

fn catalog(store: &SqliteStore) -> (i64, Vec<(String, i64)>) {
    let connection = Connection::open(store.path()).unwrap();
    let version = connection.query_row("SELECT version FROM catalog_meta", [], |row| row.get(0)).unwrap();
    let rows = connection
        .prepare("SELECT p.id, v.price FROM products p JOIN variants v ON v.product_row = p.row ORDER BY p.row")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (version, rows)
}

// Many batches in one transaction: all of them land, counted, and the version moves once.
#[tokio::test]
async fn a_stream_of_many_batches_imports_in_one_go() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let count = BATCH * 3 + 7;
    let products: Vec<Product> =
        (0..count).map(|n| product(&format!("p{n}"), &format!("v{n}"), n as i64 + 1)).collect();
    let summary = store.import_products(Box::new(products.into_iter().map(Ok))).await.unwrap();
    assert_eq!(summary, ImportSummary { products_inserted: count as u64, products_updated: 0, variants: count as u64 });
    let (version, rows) = catalog(&store);
    assert_eq!(version, 1);
    assert_eq!(rows.len(), count);
    assert_eq!(rows[count - 1], (format!("p{}", count - 1), count as i64));

    // Again, with some products changed: updated in place.
    let again = (0..10).map(|n| Ok(product(&format!("p{n}"), &format!("v{n}"), 999)));
    let summary = store.import_products(Box::new(again)).await.unwrap();
    assert_eq!((summary.products_inserted, summary.products_updated), (0, 10));
    let (version, rows) = catalog(&store);
    assert_eq!(version, 2);
    assert_eq!(rows[0], ("p0".to_owned(), 999));
    assert_eq!(store.product_count().await.unwrap(), count as u64);
}

// Documents are stored compressed; a catalog written before that keeps them as TEXT, and
// both read back as the product.
#[tokio::test]
async fn documents_are_stored_compressed_and_old_text_documents_still_read() {
    let dir = tempfile::tempdir().unwrap();
    let writer = store(&dir);
    writer.upsert_products(vec![product("p1", "v1", 100), product("p2", "v2", 200)]).await.unwrap();
    drop(writer);
    let connection = Connection::open(dir.path().join("catalog.db")).unwrap();
    let kinds: Vec<String> = connection
        .prepare("SELECT typeof(doc) FROM products ORDER BY row")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(kinds, ["blob", "blob"]);
    // p2 as an earlier release stored it.
    let old = serde_json::to_string(&product("p2", "v2", 250)).unwrap();
    connection.execute("UPDATE products SET doc = ?1 WHERE id = 'p2'", [old]).unwrap();
    drop(connection);

    let store = store(&dir);
    let mut served = store.products(&["p1".to_owned(), "p2".to_owned()]).await.unwrap();
    served.sort_by(|a, b| a.product().id.cmp(&b.product().id));
    let prices: Vec<(&str, i64)> =
        served.iter().map(|served| (served.product().id.as_str(), served.product().variants[0].price.amount)).collect();
    assert_eq!(prices, [("p1", 100), ("p2", 250)]);
    assert_eq!(served[1].product().variants[0].inventory_quantity, Some(3), "stock comes from its column");
}

// A rebuild of the search index that fails (a row it cannot read) is tried again by the next
// search; the index from before the change does not go on answering.
#[tokio::test]
async fn a_failed_index_rebuild_is_retried_by_the_next_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.upsert_products(vec![product("p1", "v1", 100)]).await.unwrap();
    let query = super::super::cache::tests::query("p2");
    assert!(store.search(&query).await.unwrap().products.is_empty());

    let connection = Connection::open(dir.path().join("catalog.db")).unwrap();
    connection.execute("UPDATE products SET search_title = x'00' WHERE id = 'p1'", []).unwrap();
    store.upsert_products(vec![product("p2", "v2", 200)]).await.unwrap();
    assert!(store.search(&query).await.is_err(), "the rebuild reads a title that is not text");

    connection.execute("UPDATE products SET search_title = 'Product p1' WHERE id = 'p1'", []).unwrap();
    let found = store.search(&query).await.unwrap();
    let ids: Vec<&str> = found.products.iter().map(|served| served.product().id.as_str()).collect();
    assert_eq!(ids, ["p2"]);
}

// In an empty catalog products are written as new without a lookup; an id that comes
// again in the same import still replaces the earlier product, as in a full catalog.
#[tokio::test]
async fn a_repeated_id_replaces_the_earlier_product_in_an_empty_catalog_too() {
    for preloaded in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir);
        if preloaded {
            store.upsert_products(vec![product("other", "v-other", 1)]).await.unwrap();
        }
        let products = vec![product("p1", "v1", 100), product("p2", "v2", 200), product("p1", "v1", 300)];
        let summary = store.upsert_products(products).await.unwrap();
        assert_eq!((summary.products_inserted, summary.products_updated, summary.variants), (2, 1, 3));
        let rows = catalog(&store).1;
        let ours: Vec<&(String, i64)> = rows.iter().filter(|(id, _)| id != "other").collect();
        assert_eq!(ours, [&("p1".to_owned(), 300), &("p2".to_owned(), 200)], "preloaded: {preloaded}");
    }
}

// A stream that fails after several batches, or a product the store refuses late in the
// stream, leaves the previous catalog exactly as it was.
#[tokio::test]
async fn a_failed_import_leaves_the_old_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.upsert_products(vec![product("old", "v-old", 5)]).await.unwrap();
    let before = catalog(&store);
    let writer_cache = || {
        store.write(|connection| {
            connection.query_row("PRAGMA cache_size", [], |row| row.get::<_, i64>(0)).map_err(backend)
        })
    };
    let cache_before = writer_cache().await.unwrap();

    let failing = (0..BATCH * 2)
        .map(|n| Ok(product(&format!("p{n}"), &format!("v{n}"), 1)))
        .chain(std::iter::once(Err(StoreError::Backend("the feed broke".to_owned()))))
        .chain(std::iter::once(Ok(product("late", "v-late", 1))));
    let error = store.import_products(Box::new(failing)).await.unwrap_err();
    assert!(error.to_string().contains("the feed broke"), "{error}");
    assert_eq!(catalog(&store), before);

    // The variant of "old" claimed by another product: a conflict, nothing written.
    let conflicting = (0..BATCH + 1)
        .map(|n| product(&format!("p{n}"), &format!("v{n}"), 1))
        .chain(std::iter::once(product("thief", "v-old", 1)))
        .map(Ok);
    let error = store.import_products(Box::new(conflicting)).await.unwrap_err();
    assert!(matches!(error, StoreError::Conflict { .. }), "{error}");
    assert_eq!(catalog(&store), before);

    // The store still writes, and its page cache is back to the writer's own size.
    store.upsert_products(vec![product("new", "v-new", 2)]).await.unwrap();
    assert_eq!(catalog(&store).1.len(), 2);
    assert_eq!(writer_cache().await.unwrap(), cache_before);
}

// A product id may not be another product's variant id, nor a variant id another product's
// id, whether that product is stored already or comes in the same import (after a few
// batches, say, and in either order): the import fails whole, the catalog stays as it was,
// and the message says which product was there already. A product's own variant may have its
// id, and so may a product updated in place.
#[tokio::test]
async fn a_product_id_that_is_another_products_variant_id_fails_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.upsert_products(vec![product("old", "v-old", 5), product("solo", "solo", 6)]).await.unwrap();
    let before = catalog(&store);
    let many = |last: Vec<Product>| -> Vec<Product> {
        (0..BATCH + 1).map(|n| product(&format!("p{n}"), &format!("v{n}"), 1)).chain(last).collect()
    };
    let both = "both in this import: give one of them another id";
    let cases = [
        (
            vec![product("v-old", "v-x", 1)],
            "product id \"v-old\" is a variant id of product \"old\", which is already in the catalog: give \
             product \"v-old\" another id, or put \"old\" in the same feed without that variant"
                .to_owned(),
        ),
        (
            vec![product("p", "old", 1)],
            "variant id \"old\" of product \"p\" is the id of product \"old\", which is already in the catalog \
             (an import never removes a product): give the variant another id"
                .to_owned(),
        ),
        (many(vec![product("v3", "x", 1)]), format!("product id \"v3\" is a variant id of product \"p3\", {both}")),
        (
            vec![product("a", "ab", 1), product("ab", "b", 1)],
            format!("product id \"ab\" is a variant id of product \"a\", {both}"),
        ),
        (
            vec![product("ab", "b", 1), product("a", "ab", 1)],
            format!("product id \"ab\" is a variant id of product \"a\", {both}"),
        ),
    ];
    for (products, expected) in cases {
        let error = store.upsert_products(products).await.unwrap_err();
        assert_eq!(error.to_string(), format!("conflict on {expected}"));
        assert_eq!(catalog(&store), before);
    }

    store.upsert_products(vec![product("solo", "solo", 7), product("new", "new", 8)]).await.unwrap();
    let rows = catalog(&store).1;
    assert_eq!(rows, [("old".to_owned(), 5), ("solo".to_owned(), 7), ("new".to_owned(), 8)]);
}

/// `id` with one variant per id of `variants`.
fn product_of(id: &str, variants: &[&str]) -> Product {
    let mut product = product(id, variants[0], 1);
    for variant_id in &variants[1..] {
        let variant = Variant { id: (*variant_id).to_owned(), ..product.variants[0].clone() };
        product.variants.push(variant);
    }
    product.normalize().unwrap();
    product
}

/// The variant ids of each product, in catalog order.
fn variant_ids(store: &SqliteStore) -> Vec<(String, Vec<String>)> {
    let connection = Connection::open(store.path()).unwrap();
    let mut products: Vec<(String, Vec<String>)> = Vec::new();
    let mut statement = connection
        .prepare(
            "SELECT p.id, v.id FROM products p JOIN variants v ON v.product_row = p.row ORDER BY p.row, v.position",
        )
        .unwrap();
    let rows = statement.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))).unwrap();
    for (product, variant) in rows.map(Result::unwrap) {
        match products.last_mut() {
            Some((last, variants)) if *last == product => variants.push(variant),
            _ => products.push((product, vec![variant])),
        }
    }
    products
}

// A stored product gives up a variant id in the same import that makes it a product's id:
// the import passes whichever of the two comes first, even batches apart, since the check is of
// the catalog as the whole import leaves it. Without the other, it fails.
#[tokio::test]
async fn a_variant_id_given_up_in_the_same_import_may_become_a_product_id_in_either_order() {
    let spacer = || (0..BATCH).map(|n| product(&format!("s{n}"), &format!("sv{n}"), 1));
    for taker_first in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let store = store(&dir);
        store.upsert_products(vec![product_of("p", &["a", "b"])]).await.unwrap();
        let (taker, giver) = (product_of("a", &["a-1"]), product_of("p", &["b"]));
        let products: Vec<Product> = match taker_first {
            true => std::iter::once(taker).chain(spacer()).chain([giver]).collect(),
            false => std::iter::once(giver).chain(spacer()).chain([taker]).collect(),
        };
        store.upsert_products(products).await.unwrap();
        let ids = variant_ids(&store);
        assert_eq!(ids[0], ("p".to_owned(), vec!["b".to_owned()]), "taker first: {taker_first}");
        assert_eq!(ids[1].0, if taker_first { "a" } else { "s0" });
        assert!(ids.contains(&("a".to_owned(), vec!["a-1".to_owned()])));
    }

    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.upsert_products(vec![product_of("p", &["a", "b"])]).await.unwrap();
    let error = store.upsert_products(vec![product_of("a", &["a-1"])]).await.unwrap_err();
    assert!(
        error.to_string().starts_with(
            "conflict on product id \"a\" is a variant id of product \"p\", which is already in the catalog"
        ),
        "{error}"
    );
    assert_eq!(variant_ids(&store), [("p".to_owned(), vec!["a".to_owned(), "b".to_owned()])]);
}

// A product updated in place whose new variant id is another stored product's id fails the
// import, naming the stored product; the catalog stays as it was.
#[tokio::test]
async fn a_product_updated_with_a_variant_id_that_is_a_stored_products_id_fails_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.upsert_products(vec![product_of("p", &["p1"]), product_of("q", &["q1"])]).await.unwrap();
    let before = catalog(&store);
    let error = store.upsert_products(vec![product_of("p", &["p1", "q"])]).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "conflict on variant id \"q\" of product \"p\" is the id of product \"q\", which is already in the \
         catalog (an import never removes a product): give the variant another id"
    );
    assert_eq!(catalog(&store), before);
}

// A clash an earlier release left in the catalog, between products an import does not write,
// does not fail it; one that writes either product does.
#[tokio::test]
async fn a_clash_left_by_an_earlier_release_fails_only_an_import_that_writes_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.upsert_products(vec![product("p", "x", 1), product("a", "a-1", 2)]).await.unwrap();
    let connection = Connection::open(store.path()).unwrap();
    connection.execute("UPDATE variants SET id = 'a' WHERE id = 'x'", []).unwrap();
    store.upsert_products(vec![product("n", "n-1", 3)]).await.unwrap();
    assert_eq!(catalog(&store).1.len(), 3);
    let error = store.upsert_products(vec![product("p", "a", 4)]).await.unwrap_err();
    assert!(error.to_string().contains("is the id of product \"a\", which is already in the catalog"), "{error}");
    store.upsert_products(vec![product("p", "p-1", 4)]).await.unwrap();
}

// The check reads the products' id index once and looks each id up in the variants' primary
// key: no scan of a table, and nothing per product but one search.
#[test]
fn the_clash_check_scans_one_index_and_searches_another() {
    let dir = tempfile::tempdir().unwrap();
    drop(store(&dir));
    let connection = Connection::open(dir.path().join("catalog.db")).unwrap();
    let plan: Vec<String> = connection
        .prepare(&format!("EXPLAIN QUERY PLAN {}", ids::CLASHES))
        .unwrap()
        .query_map([], |row| row.get(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        plan,
        [
            "SCAN p USING COVERING INDEX sqlite_autoindex_products_1",
            "SEARCH v USING INDEX sqlite_autoindex_variants_1 (id=?)",
            "CORRELATED SCALAR SUBQUERY 1",
            "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)",
        ]
    );
}
