//! The catalog model: products, variants and the small value types around them.
//!
//! These types are the UCP `Product` document itself (`shopping/types/product.json`,
//! version 2026-04-08). They derive serde because that document is also our import format
//! (one product per JSON line) and the form the store keeps, so one definition serves the
//! wire, the importer and the store without two conversions on every catalog read.
//! See ARCHITECTURE.md, "Deviations from STYLE.md".

mod detail;
mod lookup;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::money::Price;

pub use detail::{DetailRequest, ProductDetail, detail};
pub use lookup::{LookupMatch, assemble_lookup};

/// A product: one or more purchasable variants that share a title and option axes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Product {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    pub title: String,
    pub description: Description,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    /// Computed from the variants by [`Product::normalize`]; an imported value is replaced.
    pub price_range: PriceRange,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_price_range: Option<PriceRange>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<Media>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<ProductOption>,
    pub variants: Vec<Variant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<Rating>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<crate::json::JsonMap>,
}

/// One purchasable item: `line_items[].item.id` in carts and checkouts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub barcodes: Vec<Barcode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub title: String,
    pub description: Description,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<Category>,
    pub price: Price,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_price: Option<Price>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit_price: Option<crate::json::Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<Availability>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SelectedOption>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<Media>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rating: Option<Rating>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<crate::json::JsonMap>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seller: Option<Seller>,
    /// Units on hand; `None` means stock is not tracked (always available).
    /// Kept by the store in its own column and never sent on the wire.
    #[serde(default, skip_serializing)]
    pub inventory_quantity: Option<i64>,
}

/// Text in one or more formats; at least one must be present.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Category {
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taxonomy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriceRange {
    pub min: Price,
    pub max: Price,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Media {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt_text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductOption {
    pub name: String,
    pub values: Vec<OptionValue>,
}

/// A value of an option axis. `available`/`exists` are only filled in get_product responses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionValue {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exists: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectedOption {
    pub name: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub value: f64,
    pub scale_max: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Barcode {
    #[serde(rename = "type")]
    pub kind: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seller {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Why a product document cannot enter the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct InvalidProduct {
    /// A JSON-path-like name of the offending field, e.g. `variants[2].price.currency`.
    pub field: String,
    pub reason: String,
}

impl InvalidProduct {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        InvalidProduct { field: field.into(), reason: reason.into() }
    }
}

impl Description {
    pub fn plain(text: impl Into<String>) -> Self {
        Description { plain: Some(text.into()), html: None, markdown: None }
    }

    pub fn is_empty(&self) -> bool {
        self.plain.is_none() && self.html.is_none() && self.markdown.is_none()
    }

    /// The text a search index should see: plain, else markdown, else HTML with tags stripped.
    pub fn searchable_text(&self) -> String {
        if let Some(plain) = &self.plain {
            return plain.clone();
        }
        if let Some(markdown) = &self.markdown {
            return markdown.clone();
        }
        self.html.as_deref().map(strip_tags).unwrap_or_default()
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(ch),
            _ => {}
        }
    }
    out
}

impl Variant {
    /// Whether a buyer can order this variant now.
    pub fn is_available(&self) -> bool {
        if let Some(Availability { available: Some(available), .. }) = &self.availability {
            return *available;
        }
        self.inventory_quantity.is_none_or(|quantity| quantity > 0)
    }

    /// The label this variant has on option axis `name`.
    pub fn option_label(&self, name: &str) -> Option<&str> {
        self.options.iter().find(|option| option.name == name).map(|option| option.label.as_str())
    }
}

impl Product {
    /// Checks what the UCP schema and our store require, and derives what is derived:
    /// `price_range`, `list_price_range`, variant availability from stock, option axes from
    /// variant options when the document has none. Call before storing.
    pub fn normalize(&mut self) -> Result<(), InvalidProduct> {
        if self.id.trim().is_empty() {
            return Err(InvalidProduct::new("id", "must not be empty"));
        }
        if self.title.trim().is_empty() {
            return Err(InvalidProduct::new("title", "must not be empty"));
        }
        if self.description.is_empty() {
            self.description = Description::plain(self.title.clone());
        }
        if self.variants.is_empty() {
            return Err(InvalidProduct::new("variants", "a product needs at least one variant"));
        }
        let currency = self.variants[0].price.currency.clone();
        let mut seen_ids = std::collections::HashSet::new();
        for (index, variant) in self.variants.iter_mut().enumerate() {
            if variant.id.trim().is_empty() {
                return Err(InvalidProduct::new(format!("variants[{index}].id"), "must not be empty"));
            }
            if !seen_ids.insert(variant.id.clone()) {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].id"),
                    format!("duplicate variant id {:?}", variant.id),
                ));
            }
            check_price(&variant.price, &format!("variants[{index}].price"))?;
            if let Some(list_price) = &variant.list_price {
                check_price(list_price, &format!("variants[{index}].list_price"))?;
            }
            if variant.price.currency != currency {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].price.currency"),
                    format!("all variants must share one currency ({currency})"),
                ));
            }
            if let Some(list_price) = &variant.list_price
                && list_price.currency != currency
            {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].list_price.currency"),
                    format!("all variants must share one currency ({currency})"),
                ));
            }
            if variant.title.trim().is_empty() {
                variant.title = self.title.clone();
            }
            if variant.description.is_empty() {
                variant.description = self.description.clone();
            }
            if let Some(quantity) = variant.inventory_quantity
                && quantity < 0
            {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].inventory_quantity"),
                    "must not be negative",
                ));
            }
        }
        self.refresh_availability();
        let prices = self.variants.iter().map(|variant| variant.price.amount);
        let (min, max) = (prices.clone().min().unwrap_or(0), prices.max().unwrap_or(0));
        self.price_range =
            PriceRange { min: Price::new(min, currency.clone()), max: Price::new(max, currency.clone()) };
        let list_prices: Vec<i64> =
            self.variants.iter().filter_map(|variant| variant.list_price.as_ref().map(|price| price.amount)).collect();
        self.list_price_range = match (list_prices.iter().min(), list_prices.iter().max()) {
            (Some(min), Some(max)) => {
                Some(PriceRange { min: Price::new(*min, currency.clone()), max: Price::new(*max, currency.clone()) })
            }
            _ => None,
        };
        if self.options.is_empty() {
            self.options = derive_options(&self.variants);
        }
        Ok(())
    }

    /// Recomputes each stock-tracked variant's `availability` from its `inventory_quantity`.
    /// A `backorder`/`preorder` status stays orderable at zero stock.
    pub fn refresh_availability(&mut self) {
        for variant in &mut self.variants {
            let Some(quantity) = variant.inventory_quantity else { continue };
            let in_stock = quantity > 0;
            let status = variant.availability.as_ref().and_then(|availability| availability.status.clone());
            let status = match status.as_deref() {
                Some("backorder" | "preorder") => status,
                _ if in_stock => Some("in_stock".to_owned()),
                _ => Some("out_of_stock".to_owned()),
            };
            let available = in_stock || matches!(status.as_deref(), Some("backorder" | "preorder"));
            variant.availability = Some(Availability { available: Some(available), status });
        }
    }

    /// The currency every variant is priced in.
    pub fn currency(&self) -> &str {
        &self.price_range.min.currency
    }

    pub fn variant_by_id(&self, variant_id: &str) -> Option<&Variant> {
        self.variants.iter().find(|variant| variant.id == variant_id)
    }
}

fn check_price(price: &Price, field: &str) -> Result<(), InvalidProduct> {
    if !crate::money::is_currency_code(&price.currency) {
        return Err(InvalidProduct::new(
            format!("{field}.currency"),
            format!("{:?} is not an ISO 4217 code", price.currency),
        ));
    }
    if !(0..=crate::money::MAX_AMOUNT).contains(&price.amount) {
        return Err(InvalidProduct::new(format!("{field}.amount"), "must be between 0 and 2^53-1 minor units"));
    }
    Ok(())
}

/// A category value and each of its ancestors in an `A > B > C` path, lower-cased, so a
/// filter on `Apparel & Accessories` matches `Apparel & Accessories > Shoes`.
pub fn category_paths(value: &str) -> Vec<String> {
    let parts: Vec<&str> = value.split('>').map(str::trim).filter(|part| !part.is_empty()).collect();
    let mut paths = Vec::with_capacity(parts.len() + 1);
    for end in 1..=parts.len() {
        paths.push(parts[..end].join(" > ").to_lowercase());
    }
    let whole = value.trim().to_lowercase();
    if !paths.contains(&whole) {
        paths.push(whole);
    }
    paths
}

/// A category filter value in the form [`category_paths`] produces.
pub fn category_key(wanted: &str) -> String {
    let parts: Vec<&str> = wanted.split('>').map(str::trim).filter(|part| !part.is_empty()).collect();
    if parts.is_empty() { wanted.trim().to_lowercase() } else { parts.join(" > ").to_lowercase() }
}

/// Whether category `value` is `wanted` or lies below it (case-insensitive).
pub fn category_matches(value: &str, wanted: &str) -> bool {
    category_paths(value).contains(&category_key(wanted))
}

/// Option axes in first-seen order, from the variants' own selections.
fn derive_options(variants: &[Variant]) -> Vec<ProductOption> {
    let mut axes: Vec<ProductOption> = Vec::new();
    let mut seen: BTreeMap<(String, String), ()> = BTreeMap::new();
    for variant in variants {
        for selected in &variant.options {
            if seen.insert((selected.name.clone(), selected.label.clone()), ()).is_some() {
                continue;
            }
            let value =
                OptionValue { id: selected.id.clone(), label: selected.label.clone(), available: None, exists: None };
            match axes.iter_mut().find(|axis| axis.name == selected.name) {
                Some(axis) => axis.values.push(value),
                None => axes.push(ProductOption { name: selected.name.clone(), values: vec![value] }),
            }
        }
    }
    axes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(id: &str, amount: i64, stock: Option<i64>) -> Variant {
        Variant {
            id: id.into(),
            sku: None,
            barcodes: vec![],
            handle: None,
            url: None,
            title: String::new(),
            description: Description::default(),
            categories: vec![],
            price: Price::new(amount, "USD".into()),
            list_price: None,
            unit_price: None,
            availability: None,
            options: vec![SelectedOption { name: "Size".into(), label: id.to_uppercase(), id: None }],
            media: vec![],
            rating: None,
            tags: vec![],
            metadata: None,
            seller: None,
            inventory_quantity: stock,
        }
    }

    fn product(variants: Vec<Variant>) -> Product {
        Product {
            id: "p1".into(),
            handle: None,
            title: "Shirt".into(),
            description: Description::default(),
            url: None,
            categories: vec![],
            price_range: PriceRange { min: Price::new(0, "USD".into()), max: Price::new(0, "USD".into()) },
            list_price_range: None,
            media: vec![],
            options: vec![],
            variants,
            rating: None,
            tags: vec![],
            metadata: None,
        }
    }

    #[test]
    fn normalize_derives_price_range_options_and_availability() {
        let mut shirt =
            product(vec![variant("s", 1500, Some(0)), variant("m", 1200, Some(3)), variant("l", 1800, None)]);
        shirt.normalize().unwrap();
        assert_eq!(shirt.price_range.min.amount, 1200);
        assert_eq!(shirt.price_range.max.amount, 1800);
        assert_eq!(shirt.options.len(), 1);
        assert_eq!(shirt.options[0].values.len(), 3);
        assert!(!shirt.variants[0].is_available());
        assert_eq!(shirt.variants[0].availability.as_ref().unwrap().status.as_deref(), Some("out_of_stock"));
        assert!(shirt.variants[1].is_available());
        assert!(shirt.variants[2].is_available());
        assert_eq!(shirt.variants[0].title, "Shirt");
        assert_eq!(shirt.description.plain.as_deref(), Some("Shirt"));
    }

    #[test]
    fn normalize_rejects_mixed_currencies_and_duplicate_variants() {
        let mut mixed = product(vec![variant("a", 1, None), variant("b", 1, None)]);
        mixed.variants[1].price.currency = "EUR".into();
        assert_eq!(mixed.normalize().unwrap_err().field, "variants[1].price.currency");
        let mut duplicated = product(vec![variant("a", 1, None), variant("a", 1, None)]);
        assert_eq!(duplicated.normalize().unwrap_err().field, "variants[1].id");
        let mut empty = product(vec![]);
        assert_eq!(empty.normalize().unwrap_err().field, "variants");
    }

    #[test]
    fn category_paths_include_ancestors() {
        assert_eq!(
            category_paths("Apparel & Accessories > Shoes > Running"),
            vec!["apparel & accessories", "apparel & accessories > shoes", "apparel & accessories > shoes > running"]
        );
        assert_eq!(category_paths("Footwear"), vec!["footwear"]);
        assert!(category_matches("Footwear > Running", "footwear"));
        assert!(category_matches("Footwear > Running", "Footwear>Running"));
        assert!(!category_matches("Footwear", "Footwear > Running"));
        assert!(!category_matches("Footwear > Running", "Running"));
    }

    #[test]
    fn inventory_quantity_never_reaches_the_wire() {
        let mut shirt = product(vec![variant("s", 1500, Some(7))]);
        shirt.normalize().unwrap();
        let json = serde_json::to_string(&shirt).unwrap();
        assert!(!json.contains("inventory_quantity"));
    }
}
