-- Migration 9: variant_barcodes by variant. Replacing a product deletes its variants, and each
-- deleted variant cascades to its barcodes; without this index every cascade scanned the whole
-- barcode table, so re-importing a catalog was quadratic (10,000 products: 37 s).
CREATE INDEX variant_barcodes_variant ON variant_barcodes (variant_id);
