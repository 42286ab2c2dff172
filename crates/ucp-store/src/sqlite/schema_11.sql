-- Migration 11: each product's rendering cuts beside its document (`products.cuts`): where the
-- document's variants and their `availability` members sit, so that a read that misses the read
-- cache copies the stored JSON instead of serializing the product again
-- (`ucp_protocol::resources::stored`). NULL for a product imported before (or one without
-- variants): such a product is serialized on first use, as before, until the next import.
ALTER TABLE products ADD COLUMN cuts BLOB;
