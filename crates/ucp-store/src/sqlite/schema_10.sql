-- Migration 10: product_categories keyed by product first. Every reader wants a product's
-- categories (the search index's load, in row order; a product's replacement, which deletes
-- them), never the products of a category (the in-memory index answers that), so the key
-- (value, product_row) and a second index on product_row were two B-trees where one serves.
-- An import appends to this key (rows come in order) instead of inserting all over a tree
-- sorted by value: at a million products the two trees were 440 MB and this one is half that.
CREATE TABLE product_categories_by_row (
    product_row INTEGER NOT NULL REFERENCES products (row) ON DELETE CASCADE,
    value       TEXT    NOT NULL,
    PRIMARY KEY (product_row, value)
) WITHOUT ROWID;
INSERT INTO product_categories_by_row (product_row, value)
    SELECT product_row, value FROM product_categories
    -- A row whose product is gone (written with foreign keys off) would fail this insert's
    -- check and, with it, every start.
    WHERE product_row IN (SELECT row FROM products)
    ORDER BY product_row, value;
DROP TABLE product_categories;
ALTER TABLE product_categories_by_row RENAME TO product_categories;
