//! Catalog answers (`shopping/catalog_search.json`, `catalog_lookup.json`): products are
//! written from each served product's rendering ([`super::rendered`]), or serialized straight
//! from the domain documents, with no intermediate JSON tree. Each body's `write_json` writes
//! exactly what its `Serialize` writes, without serializing a served product again.

use schemars::JsonSchema;
use serde::Serialize;
use ucp_domain::catalog::{LookupMatch, Product, SelectedOption, Shown, Variant};
use ucp_domain::commerce::{LookupResults, ProductView, SearchResults};
use ucp_domain::store::MatchKind;

use super::Message;
use super::rendered::{write_lookup_product, write_product};
use super::sink::Sink;

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
    pub products: &'a [Shown],
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

    /// Writes what `Serialize` writes.
    pub fn write_json(&self, sink: &mut Sink) -> serde_json::Result<()> {
        sink.open_body(&self.ucp)?;
        sink.products(self.products, write_product)?;
        sink.member("pagination", &self.pagination)?;
        sink.close_body(&self.messages)
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct LookupBody<'a, U: Serialize> {
    pub ucp: U,
    #[schemars(schema_with = "super::shapes::looked_up_products")]
    #[serde(serialize_with = "lookup_products")]
    pub products: &'a [LookupMatch],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
}

impl<'a, U: Serialize> LookupBody<'a, U> {
    pub fn new(ucp: U, results: &'a LookupResults) -> LookupBody<'a, U> {
        LookupBody { ucp, products: &results.products, messages: results.messages.iter().map(Message::from).collect() }
    }

    /// Writes what `Serialize` writes.
    pub fn write_json(&self, sink: &mut Sink) -> serde_json::Result<()> {
        sink.open_body(&self.ucp)?;
        sink.products(self.products, |sink, found| {
            let written = write_lookup_product(sink, &found.product, |variant, sink| {
                let inputs = found.inputs.get(variant).map(Vec::as_slice).unwrap_or_default();
                sink.member("inputs", &inputs_of(inputs))
            })?;
            if !written {
                sink.serialize(&LookupProduct::of(found))?;
            }
            Ok(())
        })?;
        sink.close_body(&self.messages)
    }
}

fn lookup_products<S: serde::Serializer>(products: &&[LookupMatch], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(products.iter().map(LookupProduct::of))
}

/// A product whose variants each carry the request ids that found them (`inputs`): the
/// product's own members (its variants moved out) and then the variants, each flattened
/// beside its `inputs`. Serialized directly, without a JSON tree.
#[derive(Debug, Serialize)]
struct LookupProduct<'a> {
    #[serde(flatten)]
    product: Product,
    variants: Vec<LookupVariant<'a>>,
}

#[derive(Debug, Serialize)]
struct LookupVariant<'a> {
    #[serde(flatten)]
    variant: Variant,
    inputs: Vec<LookupInput<'a>>,
}

#[derive(Debug, Serialize)]
struct LookupInput<'a> {
    id: &'a str,
    #[serde(rename = "match")]
    kind: &'static str,
}

fn inputs_of(inputs: &[(String, MatchKind)]) -> Vec<LookupInput<'_>> {
    inputs
        .iter()
        .map(|(id, kind)| LookupInput {
            id,
            kind: match kind {
                MatchKind::Exact => "exact",
                MatchKind::Featured => "featured",
            },
        })
        .collect()
}

impl<'a> LookupProduct<'a> {
    /// A copy of the match's product, its variants zipped with their inputs.
    fn of(found: &'a LookupMatch) -> LookupProduct<'a> {
        let mut product = found.product.to_product();
        let variants = std::mem::take(&mut product.variants)
            .into_iter()
            .zip(&found.inputs)
            .map(|(variant, inputs)| LookupVariant { variant, inputs: inputs_of(inputs) })
            .collect();
        LookupProduct { product, variants }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct DetailProduct<'a> {
    #[serde(flatten)]
    #[schemars(schema_with = "super::shapes::product")]
    pub product: &'a Shown,
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

    /// Writes what `Serialize` writes.
    pub fn write_json(&self, sink: &mut Sink) -> serde_json::Result<()> {
        sink.open_body(&self.ucp)?;
        sink.text(b",\"product\":");
        write_product(sink, self.product.product)?;
        // The product's closing brace goes after `selected`, which `flatten` writes inside it.
        sink.reopen();
        if let Some(selected) = self.product.selected {
            sink.member("selected", &selected)?;
        }
        sink.text(b"}");
        sink.close_body(&self.messages)
    }
}
