//! The merchant's rules that pricing applies: shipping zones, tax rates and discounts.
//! Built from configuration by the server; plain data here.

/// Where we ship and at what price.
#[derive(Debug, Clone, Default)]
pub struct ShippingRules {
    pub zones: Vec<ShippingZone>,
}

#[derive(Debug, Clone)]
pub struct ShippingZone {
    pub name: String,
    /// ISO 3166-1 alpha-2 codes, upper case.
    pub countries: Vec<String>,
    /// Region codes within those countries; empty means all regions.
    pub regions: Vec<String>,
    pub options: Vec<ShippingRate>,
}

#[derive(Debug, Clone)]
pub struct ShippingRate {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub carrier: Option<String>,
    /// Flat price in minor units.
    pub amount: i64,
    /// Added per started kilogram of shipping weight, in minor units.
    pub per_kg: i64,
    /// Free when the discounted item subtotal reaches this amount.
    pub free_above: Option<i64>,
    pub min_days: u32,
    pub max_days: u32,
}

pub use crate::tax::TaxRate;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscountKind {
    /// Basis points off the eligible item subtotal (1000 = 10 %).
    Percentage(i64),
    /// A fixed amount off the eligible item subtotal, in minor units.
    FixedAmount(i64),
    /// The selected shipping option becomes free.
    FreeShipping,
}

/// A discount code or automatic promotion.
#[derive(Debug, Clone)]
pub struct DiscountRule {
    /// `None` for automatic promotions.
    pub code: Option<String>,
    pub title: String,
    pub kind: DiscountKind,
    /// The item subtotal the order must reach.
    pub min_subtotal: Option<i64>,
    /// Limits the discount to these product ids (empty: all).
    pub product_ids: Vec<String>,
    /// Limits the discount to products in these categories (case-insensitive prefix match).
    pub categories: Vec<String>,
    /// Unix seconds after which the code is expired.
    pub expires_at: Option<i64>,
    /// How many orders may use it; `uses` is how many have.
    pub usage_limit: Option<u64>,
    /// Whether it stacks with other codes.
    pub combinable: bool,
}

/// Everything pricing needs besides the session and the catalog.
#[derive(Debug, Clone, Default)]
pub struct PricingRules {
    pub shipping: ShippingRules,
    pub taxes: Vec<TaxRate>,
    pub discounts: Vec<DiscountRule>,
    /// Whether a buyer email is required before completion.
    pub require_email: bool,
    /// The notices shown beside the products they concern, on catalog answers as on lines.
    pub disclosures: crate::disclosure::Disclosures,
}
