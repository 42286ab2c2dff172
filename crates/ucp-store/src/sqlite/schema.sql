-- Migration 1: the catalog. Never edit after it has shipped; add a new migration instead.
CREATE TABLE products (
    row        INTEGER PRIMARY KEY,
    id         TEXT    NOT NULL UNIQUE,
    handle     TEXT,
    doc        TEXT    NOT NULL,
    -- What the search index reads: the title and the rest of the searchable text.
    search_title TEXT  NOT NULL,
    search_body  TEXT  NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX products_handle ON products (handle);

CREATE TABLE variants (
    id          TEXT    PRIMARY KEY,
    product_row INTEGER NOT NULL REFERENCES products (row) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    sku         TEXT,
    price       INTEGER NOT NULL,
    stock       INTEGER CHECK (stock IS NULL OR stock >= 0)
);
CREATE INDEX variants_product ON variants (product_row, price);
CREATE INDEX variants_sku ON variants (sku);

CREATE TABLE variant_barcodes (
    value      TEXT NOT NULL,
    variant_id TEXT NOT NULL REFERENCES variants (id) ON DELETE CASCADE,
    PRIMARY KEY (value, variant_id)
) WITHOUT ROWID;

CREATE TABLE product_categories (
    value       TEXT    NOT NULL,
    product_row INTEGER NOT NULL REFERENCES products (row) ON DELETE CASCADE,
    PRIMARY KEY (value, product_row)
) WITHOUT ROWID;
CREATE INDEX product_categories_row ON product_categories (product_row);

-- A counter bumped by every catalog write, so every instance knows when to rebuild its
-- in-memory search index and drop cached documents.
CREATE TABLE catalog_meta (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO catalog_meta (id, version) VALUES (1, 0);
