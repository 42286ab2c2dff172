//! The storage traits the use cases need. Backends live in `ucp-store`; nothing here knows SQL.

use async_trait::async_trait;

use crate::catalog::Product;

/// What can go wrong below the domain. Backends map their own errors into these.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("conflict on {constraint}")]
    Conflict { constraint: String },
    #[error("not found")]
    NotFound,
    #[error("storage is unavailable: {0}")]
    Unavailable(String),
    #[error("storage failure: {0}")]
    Backend(String),
}

/// A catalog search as the store executes it: already validated and clamped.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// Free-text terms (already split into words); empty browses by filters in catalog order.
    pub terms: Vec<String>,
    /// Whether a product must contain every term or any of them.
    pub match_all_terms: bool,
    /// OR within the list; matched case-insensitively against category values and their
    /// ancestors in `A > B > C` paths.
    pub categories: Vec<String>,
    /// Inclusive bounds on variant prices, in the catalog's own currency minor units.
    pub price_min: Option<i64>,
    pub price_max: Option<i64>,
    pub limit: usize,
    /// Where the previous page ended.
    pub after: Option<SearchPosition>,
}

/// A keyset position in a result ordering: relevance score (0 when browsing) and row order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchPosition {
    pub score: f64,
    pub row: i64,
}

#[derive(Debug, Clone)]
pub struct SearchPage {
    pub products: Vec<Product>,
    /// Set when more results follow; the position of the last product of this page.
    pub next: Option<SearchPosition>,
    pub total_count: Option<u64>,
}

/// How a lookup id matched a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The id names the variant itself (variant id, SKU, barcode).
    Exact,
    /// The id names the product (product id, handle); the variant was picked to represent it.
    Featured,
}

/// One id resolved to one product, and which variant of it the id names.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub input: String,
    pub product_id: String,
    /// `Some` when the id named a variant; `None` when it named the product.
    pub variant_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub products_inserted: u64,
    pub products_updated: u64,
    pub variants: u64,
}

#[async_trait]
pub trait CatalogStore: Send + Sync + std::fmt::Debug {
    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError>;

    /// Resolves each id as a product id, variant id, SKU, barcode or handle (all that apply).
    async fn resolve(&self, ids: &[String]) -> Result<Vec<Resolution>, StoreError>;

    /// Products by their ids, in no particular order; unknown ids are skipped.
    async fn products(&self, product_ids: &[String]) -> Result<Vec<Product>, StoreError>;

    /// Inserts or replaces (by product id) every product in one transaction: all or nothing.
    async fn upsert_products(&self, products: Vec<Product>) -> Result<ImportSummary, StoreError>;

    async fn product_count(&self) -> Result<u64, StoreError>;

    /// Picks up catalog changes made elsewhere (another process's import): rebuilds derived
    /// state such as search indexes. Returns whether anything changed.
    async fn refresh(&self) -> Result<bool, StoreError> {
        Ok(false)
    }
}
