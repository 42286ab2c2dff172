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
use super::sink::{Sink, UcpMember, literal};

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

impl<'a, U: UcpMember> SearchBody<'a, U> {
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
        write_pagination(sink, &self.pagination);
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

impl<'a, U: UcpMember> LookupBody<'a, U> {
    pub fn new(ucp: U, results: &'a LookupResults) -> LookupBody<'a, U> {
        LookupBody { ucp, products: &results.products, messages: results.messages.iter().map(Message::from).collect() }
    }

    /// Writes what `Serialize` writes.
    pub fn write_json(&self, sink: &mut Sink) -> serde_json::Result<()> {
        sink.open_body(&self.ucp)?;
        sink.products(self.products, |sink, found| {
            let written = write_lookup_product(sink, &found.product, |variant, sink| {
                write_inputs(sink, found.inputs.get(variant).map(Vec::as_slice).unwrap_or_default());
                Ok(())
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

/// Appends `,"pagination":{…}` as serde_json writes it, written directly rather than through
/// serde and then the mirror's escape.
fn write_pagination(sink: &mut Sink, pagination: &Pagination<'_>) {
    // Every member of `Pagination`, in its order.
    let Pagination { has_next_page, cursor } = pagination;
    if *has_next_page {
        sink.literal(literal!(b",\"pagination\":{\"has_next_page\":true"));
    } else {
        sink.literal(literal!(b",\"pagination\":{\"has_next_page\":false"));
    }
    if let Some(cursor) = cursor {
        sink.literal(literal!(b",\"cursor\":"));
        sink.string(cursor);
    }
    sink.literal(literal!(b"}"));
}

/// Appends a variant's `,"inputs":[…]` as serde_json writes it ([`inputs_of`]), written
/// directly: through serde and then the mirror's escape, the members of a cached lookup's ten
/// variants were about 14 % of its instructions.
fn write_inputs(sink: &mut Sink, inputs: &[(String, MatchKind)]) {
    sink.literal(literal!(b",\"inputs\":["));
    for (position, (id, kind)) in inputs.iter().enumerate() {
        if position > 0 {
            sink.literal(literal!(b","));
        }
        sink.literal(literal!(b"{\"id\":"));
        sink.string(id);
        match kind {
            MatchKind::Exact => sink.literal(literal!(b",\"match\":\"exact\"}")),
            MatchKind::Featured => {
                sink.literal(literal!(b",\"match\":\"featured\"}"));
            }
        }
    }
    sink.literal(literal!(b"]"));
}

/// Appends `,"selected":[…]` as serde_json writes the selections, written directly rather than
/// through serde and then the mirror's escape (about 4 % of a cached `get_product`).
fn write_selected(sink: &mut Sink, selected: &[SelectedOption]) {
    sink.literal(literal!(b",\"selected\":["));
    for (position, option) in selected.iter().enumerate() {
        if position > 0 {
            sink.literal(literal!(b","));
        }
        // Every member of `SelectedOption`, in its order: the tests build one with all of them.
        let SelectedOption { name, label, id } = option;
        sink.literal(literal!(b"{\"name\":"));
        sink.string(name);
        sink.literal(literal!(b",\"label\":"));
        sink.string(label);
        if let Some(id) = id {
            sink.literal(literal!(b",\"id\":"));
            sink.string(id);
        }
        sink.literal(literal!(b"}"));
    }
    sink.literal(literal!(b"]"));
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

impl<'a, U: UcpMember> ProductBody<'a, U> {
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
        sink.literal(literal!(b",\"product\":"));
        write_product(sink, self.product.product)?;
        // The product's closing brace goes after `selected`, which `flatten` writes inside it.
        sink.reopen();
        if let Some(selected) = self.product.selected {
            write_selected(sink, selected);
        }
        sink.literal(literal!(b"}"));
        sink.close_body(&self.messages)
    }
}
