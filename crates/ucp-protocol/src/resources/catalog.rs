//! Catalog answers (`shopping/catalog_search.json`, `catalog_lookup.json`): products are
//! serialized straight from the domain documents, with no intermediate JSON tree.

use schemars::JsonSchema;
use serde::Serialize;
use ucp_domain::catalog::{Product, SelectedOption, Variant};
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
    pub products: Vec<LookupProduct>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

/// A product whose variants each carry the request ids that found them (`inputs`): the
/// product's own members (its variants moved out) and then the variants, each flattened
/// beside its `inputs`. Serialized directly, without a JSON tree.
#[derive(Debug, Serialize)]
pub struct LookupProduct {
    #[serde(flatten)]
    product: Product,
    variants: Vec<LookupVariant>,
}

#[derive(Debug, Serialize)]
struct LookupVariant {
    #[serde(flatten)]
    variant: Variant,
    inputs: Vec<LookupInput>,
}

#[derive(Debug, Serialize)]
struct LookupInput {
    id: String,
    #[serde(rename = "match")]
    kind: &'static str,
}

impl LookupProduct {
    fn new(mut product: Product, inputs: Vec<Vec<(String, MatchKind)>>) -> LookupProduct {
        let variants = std::mem::take(&mut product.variants)
            .into_iter()
            .zip(inputs)
            .map(|(variant, inputs)| LookupVariant {
                variant,
                inputs: inputs
                    .into_iter()
                    .map(|(id, kind)| LookupInput {
                        id,
                        kind: match kind {
                            MatchKind::Exact => "exact",
                            MatchKind::Featured => "featured",
                        },
                    })
                    .collect(),
            })
            .collect();
        LookupProduct { product, variants }
    }
}

impl<U: Serialize> LookupBody<U> {
    pub fn new(ucp: U, results: LookupResults) -> LookupBody<U> {
        LookupBody {
            ucp,
            messages: results.messages.iter().map(Message::from).collect(),
            products: results
                .products
                .into_iter()
                .map(|found| LookupProduct::new(found.product, found.inputs))
                .collect(),
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
