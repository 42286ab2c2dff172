//! lookup_catalog: from resolved ids to products whose variants say which inputs found them.

use std::sync::Arc;

use super::{Served, Shown};
use crate::store::{MatchKind, Resolution};

/// A product in a lookup answer; `inputs[i]` lists the request ids that resolved to the
/// `i`th variant it shows and how (never empty).
#[derive(Debug, Clone)]
pub struct LookupMatch {
    pub product: Shown,
    pub inputs: Vec<Vec<(String, MatchKind)>>,
}

/// Builds the lookup answer: one entry per product (in order of first resolution), holding
/// the variants named exactly and, for ids that named the product, its featured variant.
/// `keep_price` applies the request's price filter to a variant's price (in catalog minor
/// units); products left without variants are dropped. Products are not parsed for it
/// ([`Served::facts`]).
pub fn assemble_lookup(
    resolutions: &[Resolution],
    products: Vec<Arc<Served>>,
    keep_price: &dyn Fn(i64) -> bool,
) -> Vec<LookupMatch> {
    let mut order: Vec<&str> = Vec::new();
    for resolution in resolutions {
        if !order.contains(&resolution.product_id.as_str()) {
            order.push(&resolution.product_id);
        }
    }
    let mut matches = Vec::with_capacity(order.len());
    for product_id in order {
        let Some(product) = products.iter().find(|product| product.id() == product_id) else { continue };
        let facts = product.facts();
        let mut picked: Vec<(usize, Vec<(String, MatchKind)>)> = Vec::new();
        let mut add = |index: usize, input: &str, kind: MatchKind| {
            let entry = match picked.iter_mut().find(|(picked_index, _)| *picked_index == index) {
                Some(entry) => entry,
                None => {
                    picked.push((index, Vec::new()));
                    picked.last_mut().expect("just pushed")
                }
            };
            if !entry.1.iter().any(|(seen, _)| seen == input) {
                entry.1.push((input.to_owned(), kind));
            }
        };
        for resolution in resolutions.iter().filter(|resolution| resolution.product_id == product_id) {
            match &resolution.variant_id {
                Some(variant_id) => {
                    if let Some(index) = facts.iter().position(|fact| fact.id == variant_id)
                        && keep_price(facts[index].price)
                    {
                        add(index, &resolution.input, MatchKind::Exact);
                    }
                }
                None => {
                    let candidates = || facts.iter().enumerate().filter(|(_, fact)| keep_price(fact.price));
                    let featured = candidates().find(|(_, fact)| fact.available).or_else(|| candidates().next());
                    if let Some((index, _)) = featured {
                        add(index, &resolution.input, MatchKind::Featured);
                    }
                }
            }
        }
        if picked.is_empty() {
            continue;
        }
        picked.sort_by_key(|(index, _)| *index);
        let (variants, inputs) = picked.into_iter().unzip();
        matches.push(LookupMatch {
            product: Shown::Served { served: Arc::clone(product), variants: Some(variants) },
            inputs,
        });
    }
    matches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Product, StoredDocument, StoredVariant};

    fn unparsable(_: &StoredDocument) -> Result<Product, String> {
        Err("a lookup does not parse".to_owned())
    }

    /// A product kept as stored whose parse fails: whatever the lookup answers came from what
    /// the store read beside the document.
    fn stored(id: &str, variants: &[(&str, i64, bool)]) -> Arc<Served> {
        let variants = (variants.iter())
            .map(|(id, price, available)| StoredVariant {
                id: (*id).into(),
                stock: None,
                price: *price,
                available: *available,
            })
            .collect();
        let kept = StoredDocument { id: id.into(), doc: Box::default(), cuts: Box::default(), variants };
        Arc::new(Served::stored(kept, unparsable))
    }

    fn resolution(input: &str, product_id: &str, variant_id: Option<&str>) -> Resolution {
        Resolution {
            input: input.to_owned(),
            product_id: product_id.to_owned(),
            variant_id: variant_id.map(str::to_owned),
        }
    }

    #[test]
    fn a_lookup_picks_variants_from_what_the_store_read_without_parsing() {
        let (a, b) = (
            stored("a", &[("a0", 100, false), ("a1", 200, true), ("a2", 300, true)]),
            stored("b", &[("b0", 50, true)]),
        );
        let resolutions = [
            resolution("b", "b", None),
            resolution("sku-a2", "a", Some("a2")),
            resolution("a", "a", None),
            resolution("a0", "a", Some("a0")),
        ];
        let matches = assemble_lookup(&resolutions, vec![Arc::clone(&a), Arc::clone(&b)], &|price| price >= 100);
        let shown: Vec<(&str, Option<Vec<usize>>)> = (matches.iter())
            .map(|found| match &found.product {
                Shown::Served { served, variants } => (served.id(), variants.clone()),
                Shown::Changed(_) => panic!("a served product changed"),
            })
            .collect();
        assert_eq!(shown, [("a", Some(vec![0, 1, 2]))], "b's one variant is filtered out by its price");
        let inputs: Vec<Vec<&str>> =
            matches[0].inputs.iter().map(|inputs| inputs.iter().map(|(input, _)| input.as_str()).collect()).collect();
        assert_eq!(inputs, [vec!["a0"], vec!["a"], vec!["sku-a2"]], "the featured variant is the first available");
        assert!(!a.is_parsed() && !b.is_parsed());
    }
}
