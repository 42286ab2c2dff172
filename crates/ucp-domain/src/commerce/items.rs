//! From the catalog to the items pricing needs.

use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::{Product, Served, Variant};
use crate::checkout::CatalogItem;
use crate::store::resolved_products;

use super::{Commerce, Error};

impl Commerce {
    /// Resolves item ids (variant ids, SKUs, or product ids meaning their featured variant)
    /// to the catalog items pricing needs, keyed by the id as given and by the canonical
    /// variant id. Also returns the canonical variant id each given id resolved to.
    pub(super) async fn catalog_items(
        &self,
        item_ids: &[String],
    ) -> Result<(HashMap<String, CatalogItem>, HashMap<String, String>), Error> {
        let mut unique: Vec<String> = Vec::new();
        for id in item_ids {
            if !unique.contains(id) {
                unique.push(id.clone());
            }
        }
        if unique.is_empty() {
            return Ok((HashMap::new(), HashMap::new()));
        }
        let (resolutions, products) = self.ports.catalog.resolve_products(&unique, resolved_products).await?;
        let products: HashMap<String, Arc<Served>> =
            products.into_iter().map(|product| (product.id.clone(), product)).collect();
        let mut items = HashMap::new();
        let mut canonical = HashMap::new();
        for id in &unique {
            // A variant match wins over a product match of the same id.
            let mut matches = resolutions.iter().filter(|resolution| &resolution.input == id).collect::<Vec<_>>();
            matches.sort_by_key(|resolution| resolution.variant_id.is_none());
            let Some(resolution) = matches.first() else { continue };
            let Some(product) = products.get(&resolution.product_id) else { continue };
            let variant = match &resolution.variant_id {
                Some(variant_id) => product.variant_by_id(variant_id),
                None => product.variants.iter().find(|variant| variant.is_available()).or(product.variants.first()),
            };
            let Some(variant) = variant else { continue };
            let item = catalog_item(product, variant);
            canonical.insert(id.clone(), variant.id.clone());
            items.insert(variant.id.clone(), item.clone());
            items.insert(id.clone(), item);
        }
        Ok((items, canonical))
    }
}

fn catalog_item(product: &Product, variant: &Variant) -> CatalogItem {
    let title = if product.variants.len() > 1 && variant.title != product.title {
        format!("{} - {}", product.title, variant.title)
    } else {
        product.title.clone()
    };
    let backorder = variant
        .availability
        .as_ref()
        .and_then(|availability| availability.status.as_deref())
        .is_some_and(|status| matches!(status, "backorder" | "preorder"));
    let available_quantity = if !variant.is_available() {
        Some(0)
    } else if backorder {
        None
    } else {
        variant.inventory_quantity
    };
    let weight_grams =
        variant.metadata.as_ref().and_then(|metadata| metadata.get("shipping_weight_grams")).and_then(|v| v.as_i64());
    CatalogItem {
        product_id: product.id.clone(),
        title,
        unit_price: variant.price.amount,
        currency: variant.price.currency.clone(),
        image_url: variant.media.first().or(product.media.first()).map(|media| media.url.clone()),
        available_quantity,
        categories: product
            .categories
            .iter()
            .chain(variant.categories.iter())
            .map(|category| category.value.clone())
            .collect(),
        weight_grams,
    }
}
