//! lookup_catalog: from resolved ids to products whose variants say which inputs found them.

use std::sync::Arc;

use super::{Served, Shown, Variant};
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
/// `keep_variant` applies the request filters; products left without variants are dropped.
pub fn assemble_lookup(
    resolutions: &[Resolution],
    products: Vec<Arc<Served>>,
    keep_variant: &dyn Fn(&Variant) -> bool,
) -> Vec<LookupMatch> {
    let mut order: Vec<&str> = Vec::new();
    for resolution in resolutions {
        if !order.contains(&resolution.product_id.as_str()) {
            order.push(&resolution.product_id);
        }
    }
    let mut matches = Vec::with_capacity(order.len());
    for product_id in order {
        let Some(product) = products.iter().find(|product| product.id == product_id) else { continue };
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
                    if let Some(index) = product.variants.iter().position(|variant| &variant.id == variant_id)
                        && keep_variant(&product.variants[index])
                    {
                        add(index, &resolution.input, MatchKind::Exact);
                    }
                }
                None => {
                    let candidates =
                        || product.variants.iter().enumerate().filter(|(_, variant)| keep_variant(variant));
                    let featured =
                        candidates().find(|(_, variant)| variant.is_available()).or_else(|| candidates().next());
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
