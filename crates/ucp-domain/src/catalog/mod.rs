//! The catalog model: products, variants and the small value types around them.
//!
//! These types are the UCP `Product` document itself (`shopping/types/product.json`,
//! version 2026-04-08). They derive serde because that document is also our import format
//! (one product per JSON line) and the form the store keeps, so one definition serves the
//! wire, the importer and the store without two conversions on every catalog read.
//! See ARCHITECTURE.md, "Deviations from STYLE.md".

mod category;
mod detail;
mod lookup;
mod normalize;
mod served;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::money::Price;

pub use category::{category_key, category_matches, category_paths};
pub use detail::{
    Choice, DetailRequest, ProductDetail, default_choice, default_product_detail, default_view, default_view_of, detail,
};
pub use lookup::{LookupMatch, assemble_lookup};
pub use normalize::web_url;
pub use served::{
    DefaultDetail, Derive, Fact, Outline, Outliner, Parse, ProductJson, Served, Shown, StoredDocument, StoredVariant,
    ViewParts,
};

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
    /// Never empty in a normalized product; skipped when empty only so a lookup answer can
    /// write the variants itself, each with its `inputs` (`ucp_protocol::resources`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
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

    // A link that is not an absolute http(s) URL refuses the product, naming the field; a good
    // one is kept in its normalized form, a valid `format: uri`.
    #[test]
    fn normalize_refuses_links_that_are_not_web_urls_and_normalizes_the_others() {
        fn image(url: &str) -> Media {
            Media { kind: "image".into(), url: url.into(), alt_text: None, width: None, height: None }
        }
        type Spoil = fn(&mut Product);
        let cases: [(Spoil, &str); 6] = [
            (|p| p.url = Some("not a url".into()), "url"),
            (|p| p.media = vec![image("https://shop.example/a.jpg"), image("javascript:alert(1)")], "media[1].url"),
            (|p| p.variants[0].url = Some("data:text/html,<script>alert(1)</script>".into()), "variants[0].url"),
            (|p| p.variants[0].media = vec![image("/images/a.jpg")], "variants[0].media[0].url"),
            (|p| p.variants[0].url = Some("https://".into()), "variants[0].url"),
            (
                |p| {
                    p.variants[0].seller = Some(Seller {
                        name: None,
                        links: vec![Link { kind: "about".into(), url: "mailto:a@shop.example".into(), title: None }],
                    })
                },
                "variants[0].seller.links[0].url",
            ),
        ];
        for (spoil, field) in cases {
            let mut shirt = product(vec![variant("s", 1500, None)]);
            spoil(&mut shirt);
            let refused = shirt.normalize().unwrap_err();
            assert_eq!(refused.field, field);
            assert!(refused.reason.contains("is not an absolute http(s) URL"), "{}", refused.reason);
        }

        let mut shirt = product(vec![variant("s", 1500, None)]);
        shirt.url = Some(" HTTPS://Shop.Example/shirts/café blue ".into());
        shirt.media = vec![image("http://img.example/a.jpg")];
        shirt.normalize().unwrap();
        assert_eq!(shirt.url.as_deref(), Some("https://shop.example/shirts/caf%C3%A9%20blue"));
        assert_eq!(shirt.media[0].url, "http://img.example/a.jpg");
        let long = format!("data:text/plain,{}", "x".repeat(10_000));
        assert!(web_url(&long).unwrap_err().len() < 120, "a message quotes the start of a long value");
    }

    // What the `url` crate's serialization leaves that RFC 3986 does not allow (in a path, a
    // query, a fragment or user info) is percent-encoded, so every link served is a
    // `format: uri`; a host RFC 3986 cannot hold is refused; and an answer is its own answer.
    #[test]
    fn web_urls_hold_only_what_a_uri_may() {
        let cases = [
            (
                "https://a.example/p|q^r[s]t{u}v`w?q=|^[]{}`\\%zz%41#f|^[]{}`%#g\"",
                "https://a.example/p%7Cq%5Er%5Bs%5Dt%7Bu%7Dv%60w?q=%7C%5E%5B%5D%7B%7D%60%5C%25zz%41\
                 #f%7C%5E%5B%5D%7B%7D%60%25%23g%22",
            ),
            ("https://user:p|a%@host.example/", "https://user:p%7Ca%25@host.example/"),
            ("HTTPS://Héllo.Example:8080/ç?é", "https://xn--hllo-bpa.example:8080/%C3%A7?%C3%A9"),
            ("https://[::1]/a%2Cb", "https://[::1]/a%2Cb"),
            (
                "https://res.cloudinary.com/x/image/upload/w_400,h_400/a.jpg",
                "https://res.cloudinary.com/x/image/upload/w_400,h_400/a.jpg",
            ),
        ];
        let uri_byte = |byte: &u8| byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?#[]%".contains(byte);
        for (text, expected) in cases {
            assert_eq!(web_url(text).as_deref(), Ok(expected), "{text}");
            assert_eq!(web_url(expected).as_deref(), Ok(expected), "{expected} is its own answer");
            assert!(expected.bytes().all(|byte| uri_byte(&byte)), "{expected}");
        }
        for text in ["https://a{b}.example/", "https://a`b.example/", "https://a\"b.example/", "https://"] {
            assert!(web_url(text).is_err(), "{text}");
        }
    }

    // A product whose links are web_url's answers normalizes the same without asking again.
    #[test]
    fn normalizing_with_web_links_is_normalizing() {
        let image =
            |url: &str| Media { kind: "image".into(), url: url.into(), alt_text: None, width: None, height: None };
        let mut shirt = product(vec![variant("s", 1500, None), variant("m", 1500, None)]);
        shirt.url = Some(web_url("https://shop.example/shirt|blue").unwrap());
        shirt.media = vec![image(&web_url("https://img.example/a b.jpg").unwrap())];
        shirt.variants[1].url = shirt.url.clone();
        shirt.variants[1].media = shirt.media.clone();
        let mut again = shirt.clone();
        shirt.normalize().unwrap();
        again.normalize_with_web_links().unwrap();
        assert_eq!(again, shirt);
        assert_eq!(shirt.url.as_deref(), Some("https://shop.example/shirt%7Cblue"));
    }

    #[test]
    fn a_product_in_another_currency_than_the_catalogs_is_refused() {
        let mut shirt = product(vec![variant("s", 1500, None), variant("m", 1500, None)]);
        shirt.normalize().unwrap();
        assert_eq!(shirt.require_currency("USD"), Ok(()));
        let refused = shirt.require_currency("EUR").unwrap_err();
        assert_eq!(
            (refused.field.as_str(), refused.reason.as_str()),
            ("variants[0].price.currency", "USD is not the catalog's currency EUR")
        );
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
