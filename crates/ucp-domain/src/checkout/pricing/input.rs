//! What the pricing engine reads.

use std::collections::HashMap;

use super::CatalogItem;
use crate::checkout::{PricingRules, Session};

pub struct PricingInput<'a> {
    pub session: &'a Session,
    /// Catalog items by item id; a line whose item is missing is unavailable.
    pub items: &'a HashMap<String, CatalogItem>,
    pub rules: &'a PricingRules,
    /// Orders that already used each discount code (upper-case).
    pub discount_uses: &'a HashMap<String, u64>,
    pub fulfillment_enabled: bool,
    pub discounts_enabled: bool,
    /// Whether at least one payment handler is available for this session.
    pub payment_available: bool,
    pub now: i64,
}
