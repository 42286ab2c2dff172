//! What the pricing engine computes: priced lines, totals, the fulfillment offer, applied
//! discounts, messages and the status. A completed checkout keeps its `Priced` as it was.

use super::Message;
use super::parts::{Address, Status};

#[derive(Debug, Clone)]
pub struct CatalogItem {
    pub product_id: String,
    pub title: String,
    pub unit_price: i64,
    pub currency: String,
    pub image_url: Option<String>,
    /// Units that can be sold now; `None` when stock is not tracked.
    pub available_quantity: Option<i64>,
    pub categories: Vec<String>,
    pub weight_grams: Option<i64>,
}

/// Deserialize: `interned`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Total {
    pub kind: &'static str,
    pub amount: i64,
    pub display_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedLine {
    pub id: String,
    pub item_id: String,
    pub title: String,
    pub unit_price: i64,
    pub image_url: Option<String>,
    pub quantity: i64,
    pub totals: Vec<Total>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedOption {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub carrier: Option<String>,
    pub amount: i64,
    pub min_days: u32,
    pub max_days: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedGroup {
    pub id: String,
    pub line_item_ids: Vec<String>,
    pub options: Vec<PricedOption>,
    pub selected_option_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedDestination {
    pub id: String,
    pub address: Address,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedFulfillment {
    pub method_id: String,
    pub line_item_ids: Vec<String>,
    pub destinations: Vec<PricedDestination>,
    pub selected_destination_id: Option<String>,
    pub group: Option<PricedGroup>,
}

/// Deserialize: `interned`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AppliedDiscount {
    pub code: Option<String>,
    pub title: String,
    pub amount: i64,
    pub automatic: bool,
    pub method: &'static str,
    pub priority: u32,
    /// (JSONPath, amount) pairs summing to `amount`.
    pub allocations: Vec<(String, i64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Priced {
    pub lines: Vec<PricedLine>,
    pub totals: Vec<Total>,
    pub messages: Vec<Message>,
    pub fulfillment: Option<PricedFulfillment>,
    /// The codes as submitted (for echo) and what was applied.
    pub discount_codes: Vec<String>,
    pub applied_discounts: Vec<AppliedDiscount>,
    pub status: Status,
    /// Codes (upper-case) of applied code discounts, to count their use at completion.
    pub used_codes: Vec<String>,
}
