use rusqlite::StatementStatus;
use ucp_domain::store::CatalogStore;

use super::super::import::tests::{product, store};
use super::*;

/// What `resolve_products` answers, as (input, product, variant) and the product ids.
type Answer = (Vec<(String, String, Option<String>)>, Vec<String>);

async fn answer(store: &SqliteStore, ids: &[&str]) -> (Answer, Answer) {
    let ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
    let shape = |resolutions: Vec<ucp_domain::store::Resolution>,
                 products: Vec<std::sync::Arc<ucp_domain::catalog::Served>>| {
        let mut products: Vec<String> = products.iter().map(|product| product.id.clone()).collect();
        products.sort();
        let resolutions =
            resolutions.into_iter().map(|found| (found.input, found.product_id, found.variant_id)).collect();
        (resolutions, products)
    };
    let (resolutions, products) = store.resolve_products(&ids, ucp_domain::store::resolved_products).await.unwrap();
    // The trait's own answer: resolve, then the products it named.
    let expected = store.resolve(&ids).await.unwrap();
    let named = store.products(&ucp_domain::store::resolved_products(&expected)).await.unwrap();
    (shape(resolutions, products), shape(expected, named))
}

// Resolving and reading in one trip answers as resolving, then reading, does: whatever
// mix of ids, resolutions and products the read cache already holds (a product cached
// but not the SKU naming it; a resolution cached but not its product; unknown ids).
#[tokio::test]
async fn resolve_products_answers_as_resolve_then_products() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let products = vec![product("a", "a1", 100), product("b", "b1", 200), product("c", "c1", 300)];
    store.import_products(Box::new(products.into_iter().map(Ok))).await.unwrap();
    let cases: [&[&str]; 6] = [
        &["a"],
        &["sku-b1", "a", "nope"],
        &["b"],
        &["sku-b1", "handle-c", "c1"],
        &["nope", "also-nope"],
        &["a", "a", "sku-a1"],
    ];
    for ids in cases {
        let (got, expected) = answer(&store, ids).await;
        assert_eq!(got, expected, "{ids:?}");
    }
    // Cold, and then with the products cached but none of the resolutions.
    for ids in cases {
        let dir = tempfile::tempdir().unwrap();
        let fresh = self::store(&dir);
        let products = vec![product("a", "a1", 100), product("b", "b1", 200), product("c", "c1", 300)];
        fresh.import_products(Box::new(products.into_iter().map(Ok))).await.unwrap();
        let cold = fresh
            .resolve_products(
                &ids.iter().map(|id| (*id).to_owned()).collect::<Vec<_>>(),
                ucp_domain::store::resolved_products,
            )
            .await
            .unwrap();
        let (_, expected) = answer(&store, ids).await;
        let mut cold_products: Vec<String> = cold.1.iter().map(|product| product.id.clone()).collect();
        cold_products.sort();
        assert_eq!(cold_products, expected.1, "cold {ids:?}");
        assert_eq!(cold.0.len(), expected.0.len(), "cold {ids:?}");
    }
    let (got, expected) = answer(&store, &["sku-a1", "sku-c1"]).await;
    assert_eq!(got.1, vec!["a".to_owned(), "c".to_owned()]);
    assert_eq!(got, expected);
    // Only the picked products are read, cold or cached: all three ids resolve, one
    // product comes back.
    fn last(resolutions: &[ucp_domain::store::Resolution]) -> Vec<String> {
        resolutions.last().map(|resolution| resolution.product_id.clone()).into_iter().collect()
    }
    let ids: Vec<String> = ["sku-a1", "b", "handle-c"].iter().map(|id| (*id).to_owned()).collect();
    let dir = tempfile::tempdir().unwrap();
    let cold = self::store(&dir);
    let products = vec![product("a", "a1", 100), product("b", "b1", 200), product("c", "c1", 300)];
    cold.import_products(Box::new(products.into_iter().map(Ok))).await.unwrap();
    for round in ["cold", "cached"] {
        let (resolutions, products) = cold.resolve_products(&ids, last).await.unwrap();
        assert_eq!(resolutions.len(), 3, "{round}");
        let products: Vec<&str> = products.iter().map(|product| product.id.as_str()).collect();
        assert_eq!(products, vec!["c"], "{round}");
    }
}

// A product read from the store comes with its stored document and cuts (migration 11),
// from which its JSON as served is the product's own serialization whatever its stock; a
// product imported before the cuts were kept is served without, and serialized on first
// use as before.
#[tokio::test]
async fn a_product_is_served_with_its_json_and_its_stock_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("catalog.db");
    let products = vec![product("a", "a1", 100), product("b", "b1", 200)];
    let store = super::super::SqliteStore::open(&path, 1).unwrap();
    store.import_products(Box::new(products.into_iter().map(Ok))).await.unwrap();
    drop(store);
    let connection = Connection::open(&path).unwrap();
    connection.execute("UPDATE variants SET stock = 0 WHERE id = 'b1'", []).unwrap();
    connection.execute("UPDATE products SET cuts = NULL WHERE id = 'a'", []).unwrap();
    let read = |row: i64| load_row(&connection, row).unwrap().expect("stored");
    let (a, b) = (read(1), read(2));
    assert!(a.kept().is_none() && a.is_parsed(), "no cuts kept: parsed now, rendered on first use");
    let stored = b.kept().expect("served with its stored document");
    assert!(!b.is_parsed(), "kept as stored: parsed when first read, not before");
    assert_eq!(*stored.variants, [StoredVariant { id: "b1".into(), stock: Some(0), price: 200, available: false }]);
    assert_eq!((b.id(), b.facts()[0].id, b.facts()[0].available), ("b", "b1", false));
    assert!(!b.is_parsed(), "its id and variants answered from the read");
    let weight = super::super::cache::weight_of(&b);
    let json = ucp_protocol::resources::stored::served_json(&stored.doc, &stored.cuts, &stored.variants).expect("fits");
    assert_eq!(*json.bytes, serde_json::to_vec(b.product()).unwrap()[..]);
    assert!(b.is_parsed());
    b.rendering(|_| ());
    assert!(b.kept().is_none(), "parsed and rendered: what was read is let go");
    assert_eq!(super::super::cache::weight_of(&b), weight, "the cache weighs an entry again as it leaves");
    assert_eq!(b.variants[0].inventory_quantity, Some(0), "the read's stock laid over");
    let variant = String::from_utf8(json.bytes[json.variants[0].clone()].to_vec()).unwrap();
    assert!(variant.contains(r#""availability":{"available":false,"status":"out_of_stock"}"#), "{variant}");
    assert_eq!(&json.bytes[json.after..], b"}");
}

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
        resolve(&connection, &ids, &mut Vec::new()).unwrap();
    }
    for sql in PRODUCT_SQL.iter().chain(VARIANT_SQL.iter()) {
        let statement = connection.prepare_cached(sql).unwrap();
        assert_eq!(statement.get_status(StatementStatus::RePrepare), 0, "{sql}");
        // From the indexes, whatever the catalog's size: no step of the plan scans a table.
        let mut plan = connection.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let steps: Vec<String> = plan.query_map(["x"], |row| row.get(3)).unwrap().map(Result::unwrap).collect();
        assert!(!steps.is_empty() && steps.iter().all(|step| !step.starts_with("SCAN")), "{sql}: {steps:?}");
    }
}

// Disclosures name products by their own id: against a real catalog, an id it does not hold
// and a variant's id or SKU (which name a product but never match a disclosure) are reported,
// each once, in id order; a product id is not.
#[tokio::test]
async fn disclosure_ids_are_checked_against_the_catalog() {
    use ucp_domain::checkout::WarningDisplay;
    use ucp_domain::disclosure::{Disclosure, Disclosures};

    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    store.import_products(Box::new(vec![product("a", "a1", 100)].into_iter().map(Ok))).await.unwrap();
    let disclosures = Disclosures::new([Disclosure {
        code: "prop65".into(),
        content: "WARNING".into(),
        display: WarningDisplay::default(),
        product_ids: ["a", "a1", "sku-a1", "gone", "a"].map(str::to_owned).to_vec(),
        categories: vec!["Anything".into()],
    }]);
    let problems = disclosures.unmatched(&store).await.unwrap();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].contains("\"a1\"") && problems[0].contains("names product \"a\""), "{problems:?}");
    assert!(problems[1].contains("\"gone\"") && problems[1].contains("does not hold"), "{problems:?}");
    assert!(problems[2].contains("\"sku-a1\""), "{problems:?}");
}

// Catalog.md §4: a product id resolves to that product first, though it is another product's
// handle (and the other way round): "beta" is product beta and alpha's handle.
#[tokio::test]
async fn a_product_id_resolves_to_its_own_product_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let mut alpha = product("alpha", "alpha-1", 100);
    alpha.handle = Some("beta".into());
    let mut beta = product("beta", "beta-1", 200);
    beta.handle = Some("alpha".into());
    store.import_products(Box::new(vec![alpha, beta].into_iter().map(Ok))).await.unwrap();
    for id in ["alpha", "beta"] {
        let resolutions = store.resolve(&[id.to_owned()]).await.unwrap();
        let named: Vec<&str> = resolutions.iter().map(|found| found.product_id.as_str()).collect();
        assert_eq!(named[0], id, "{named:?}");
        assert_eq!(named.len(), 2, "the handle's product is a match too: {named:?}");
    }
}
