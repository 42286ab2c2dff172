//! Catalog data in and out of ucpd, with no storage and no network:
//! `import` reads Google Merchant Center feeds (text and RSS 2.0 XML) and our own JSON-lines
//! form into validated [`ucp_domain::catalog::Product`]s; `demo` generates a realistic,
//! deterministic catalog of any size.

pub mod demo;
pub mod import;

use ucp_domain::catalog::Product;

/// The product as a JSON line of our import format: the UCP document plus each variant's
/// `inventory_quantity`, which the wire form leaves out.
pub fn to_import_document(product: &Product) -> serde_json::Value {
    let mut document = serde_json::to_value(product).unwrap_or(serde_json::Value::Null);
    if let Some(variants) = document.get_mut("variants").and_then(serde_json::Value::as_array_mut) {
        for (json, variant) in variants.iter_mut().zip(&product.variants) {
            if let (Some(object), Some(quantity)) = (json.as_object_mut(), variant.inventory_quantity) {
                object.insert("inventory_quantity".into(), quantity.into());
            }
        }
    }
    document
}
