//! The import's check that no product's id is another product's variant id, either way round:
//! a lookup, get_product or a cart line resolves an id as both, and would find the wrong
//! product. (A product's own variant may have its id, as a lone Merchant Center item does.)
//!
//! It runs once, on the catalog as the whole import leaves it, after the last batch and before
//! the version moves: asked product by product as the batches went, it depended on the feed's
//! order (a product that takes a stored product's variant id passed only if the product that
//! gives the variant up came first). One pass over the products' id index, each id looked up
//! in the variants' id index: about 30 ms for 100,000 products.

use std::collections::BTreeSet;

use rusqlite::Connection;
use ucp_domain::store::StoreError;

use super::backend;

/// Every product whose id is a variant id of another product, with that product: the product's
/// id and row, the other's row and id. `CROSS JOIN` keeps the products as the outer loop,
/// scanned in their covering id index (no document is read), each id a search of the variants'
/// primary key; the other product is read only for a clash.
pub(super) const CLASHES: &str = "\
    SELECT p.id, p.row, v.product_row, (SELECT o.id FROM products o WHERE o.row = v.product_row) \
    FROM products p CROSS JOIN variants v ON v.id = p.id \
    WHERE v.product_row <> p.row";

/// Product rows written by an import: a bit per row below [`DENSE_ROWS`] (SQLite numbers new
/// rows one past the highest, and products are never deleted, so a catalog's rows are dense:
/// 125 KB for a million products), a set for any row above.
#[derive(Default)]
pub(super) struct Touched {
    bits: Vec<u64>,
    sparse: BTreeSet<i64>,
}

/// Rows kept as bits: up to 32 MB of them.
const DENSE_ROWS: i64 = 1 << 28;

impl Touched {
    pub(super) fn insert(&mut self, row: i64) {
        if (0..DENSE_ROWS).contains(&row) {
            let (word, bit) = ((row / 64) as usize, row % 64);
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            self.bits[word] |= 1 << bit;
        } else {
            self.sparse.insert(row);
        }
    }

    pub(super) fn contains(&self, row: i64) -> bool {
        if (0..DENSE_ROWS).contains(&row) {
            self.bits.get((row / 64) as usize).is_some_and(|word| word & (1 << (row % 64)) != 0)
        } else {
            self.sparse.contains(&row)
        }
    }
}

/// Fails the import if, as it leaves the catalog, a product's id is another product's variant
/// id and the import wrote either of the two. A clash between two products it did not write
/// was there before it (an earlier release did not check) and is left as it was, logged.
pub(super) fn check(connection: &Connection, touched: &Touched) -> Result<(), StoreError> {
    let mut statement = connection.prepare_cached(CLASHES).map_err(backend)?;
    let mut clashes = statement.query([]).map_err(backend)?;
    while let Some(clash) = clashes.next().map_err(backend)? {
        let read = || -> rusqlite::Result<(String, i64, i64, String)> {
            Ok((clash.get(0)?, clash.get(1)?, clash.get(2)?, clash.get(3)?))
        };
        let (id, row, owner_row, owner) = read().map_err(backend)?;
        let constraint = match (touched.contains(row), touched.contains(owner_row)) {
            (true, false) => format!(
                "product id {id:?} is a variant id of product {owner:?}, which is already in the catalog: give \
                 product {id:?} another id, or put {owner:?} in the same feed without that variant"
            ),
            (false, true) => format!(
                "variant id {id:?} of product {owner:?} is the id of product {id:?}, which is already in the \
                 catalog (an import never removes a product): give the variant another id"
            ),
            (true, true) => format!(
                "product id {id:?} is a variant id of product {owner:?}, both in this import: give one of them \
                 another id"
            ),
            (false, false) => {
                tracing::warn!(
                    product = id,
                    of_product = owner,
                    "a product id is a variant id of another product, as an earlier release imported them; \
                     left as they are"
                );
                continue;
            }
        };
        return Err(StoreError::Conflict { constraint });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_rows_are_remembered_dense_or_not() {
        let mut touched = Touched::default();
        for row in [1, 64, 65, 1_000_000, DENSE_ROWS, i64::MAX, -3] {
            assert!(!touched.contains(row));
            touched.insert(row);
            assert!(touched.contains(row));
        }
        assert!(!touched.contains(2) && !touched.contains(63) && !touched.contains(DENSE_ROWS + 1));
        assert_eq!(touched.bits.len(), 1_000_000 / 64 + 1);
    }
}
