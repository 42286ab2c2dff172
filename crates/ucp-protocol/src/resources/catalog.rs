//! Catalog answers (`shopping/catalog_search.json`, `catalog_lookup.json`): products are
//! serialized straight from the domain documents, with no intermediate JSON tree.

use schemars::JsonSchema;
use serde::Serialize;
use ucp_domain::catalog::{Product, SelectedOption};
use ucp_domain::commerce::{LookupResults, ProductView, SearchResults};
use ucp_domain::store::MatchKind;

use super::Message;

#[derive(Debug, Serialize, JsonSchema)]
pub struct Pagination<'a> {
    pub has_next_page: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<&'a str>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchBody<'a, U: Serialize> {
    pub ucp: U,
    #[schemars(schema_with = "super::shapes::products")]
    pub products: &'a [Product],
    pub pagination: Pagination<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

impl<'a, U: Serialize> SearchBody<'a, U> {
    pub fn new(ucp: U, results: &'a SearchResults) -> SearchBody<'a, U> {
        SearchBody {
            ucp,
            products: &results.products,
            pagination: Pagination { has_next_page: results.has_next_page, cursor: results.cursor.as_deref() },
            messages: results.messages.iter().map(Message::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LookupBody<U: Serialize> {
    pub ucp: U,
    #[schemars(schema_with = "super::shapes::looked_up_products")]
    pub products: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

/// A product whose variants each carry the request ids that found them (`inputs`). Built
/// as a JSON tree: a lookup answers at most the lookup limit of products.
fn lookup_product(product: &Product, inputs: &[Vec<(String, MatchKind)>]) -> serde_json::Value {
    let mut value = serde_json::to_value(product).unwrap_or(serde_json::Value::Null);
    if let Some(variants) = value.get_mut("variants").and_then(serde_json::Value::as_array_mut) {
        for (variant, inputs) in variants.iter_mut().zip(inputs) {
            variant["inputs"] = inputs
                .iter()
                .map(|(id, kind)| {
                    let kind = match kind {
                        MatchKind::Exact => "exact",
                        MatchKind::Featured => "featured",
                    };
                    serde_json::json!({ "id": id, "match": kind })
                })
                .collect();
        }
    }
    value
}

impl<U: Serialize> LookupBody<U> {
    pub fn new(ucp: U, results: &LookupResults) -> LookupBody<U> {
        LookupBody {
            ucp,
            products: results.products.iter().map(|found| lookup_product(&found.product, &found.inputs)).collect(),
            messages: results.messages.iter().map(Message::from).collect(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DetailProduct<'a> {
    #[serde(flatten)]
    #[schemars(schema_with = "super::shapes::product")]
    pub product: &'a Product,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<crate::requests::shapes::SelectedOption>>")]
    pub selected: Option<&'a [SelectedOption]>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProductBody<'a, U: Serialize> {
    pub ucp: U,
    pub product: DetailProduct<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

impl<'a, U: Serialize> ProductBody<'a, U> {
    pub fn new(ucp: U, view: &'a ProductView) -> ProductBody<'a, U> {
        ProductBody {
            ucp,
            product: DetailProduct { product: &view.product, selected: view.selected.as_deref() },
            messages: view.messages.iter().map(Message::from).collect(),
        }
    }
}
