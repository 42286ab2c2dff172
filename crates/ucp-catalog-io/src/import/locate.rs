//! Which field of a JSON-lines product fails to read: the slow path of a line that does not
//! deserialize, probing its members one by one to name the one at fault (`variants[2].price`).

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use ucp_domain::catalog::{
    Availability, Barcode, Category, Description, Media, PriceRange, Product, ProductOption, Rating, SelectedOption,
    Seller, Variant,
};
use ucp_domain::money::Price;

/// The error path: find which field is wrong, and accept a missing `price_range` (derived).
pub(super) fn parse_product_slowly(line: &[u8]) -> Result<Product, (String, String)> {
    let mut value: Value =
        serde_json::from_slice(line).map_err(|error| ("json".to_owned(), format!("not valid JSON: {error}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err(("json".to_owned(), "expected a JSON object: one product per line".to_owned()));
    };
    if !object.contains_key("price_range") {
        let zero = serde_json::json!({ "amount": 0, "currency": "XXX" });
        object.insert("price_range".to_owned(), serde_json::json!({ "min": zero, "max": zero }));
    }
    match locate::<Product>(&value, &product_fields()) {
        None => Product::deserialize(&value).map_err(|error| ("product".to_owned(), error.to_string())),
        Some((path, reason)) if path.is_empty() => Err(("product".to_owned(), reason)),
        Some(failure) => Err(failure),
    }
}

/// A check of one field's value: `None` if it deserializes, else the path below the field
/// (`""`, `[2]`, `[0].price`) and the reason.
type Probe = fn(&Value) -> Option<(String, String)>;

/// Where deserializing `value` as `T` fails: the path (`""` for the object itself) and why.
fn locate<T: DeserializeOwned>(value: &Value, fields: &[(&str, Probe)]) -> Option<(String, String)> {
    let error = T::deserialize(value).err()?;
    if let Some(object) = value.as_object() {
        for (name, probe) in fields {
            if let Some((below, reason)) = object.get(*name).and_then(probe) {
                return Some((format!("{name}{below}"), reason));
            }
        }
    }
    let reason = error.to_string();
    let missing = reason.strip_prefix("missing field `").and_then(|rest| rest.split('`').next());
    Some((missing.unwrap_or_default().to_owned(), reason))
}

fn whole<T: DeserializeOwned>(value: &Value) -> Option<(String, String)> {
    T::deserialize(value).err().map(|error| (String::new(), error.to_string()))
}

fn each<T: DeserializeOwned>(value: &Value) -> Option<(String, String)> {
    let Some(items) = value.as_array() else {
        return whole::<Vec<T>>(value);
    };
    items
        .iter()
        .enumerate()
        .find_map(|(index, item)| T::deserialize(item).err().map(|error| (format!("[{index}]"), error.to_string())))
}

fn variants(value: &Value) -> Option<(String, String)> {
    let Some(items) = value.as_array() else {
        return whole::<Vec<Variant>>(value);
    };
    items.iter().enumerate().find_map(|(index, item)| {
        locate::<Variant>(item, &variant_fields()).map(|(path, reason)| match path.as_str() {
            "" => (format!("[{index}]"), reason),
            path => (format!("[{index}].{path}"), reason),
        })
    })
}

fn product_fields() -> [(&'static str, Probe); 14] {
    [
        ("id", whole::<String>),
        ("handle", whole::<Option<String>>),
        ("title", whole::<String>),
        ("description", whole::<Description>),
        ("url", whole::<Option<String>>),
        ("categories", each::<Category>),
        ("price_range", whole::<PriceRange>),
        ("list_price_range", whole::<Option<PriceRange>>),
        ("media", each::<Media>),
        ("options", each::<ProductOption>),
        ("variants", variants),
        ("rating", whole::<Option<Rating>>),
        ("tags", each::<String>),
        ("metadata", whole::<Option<ucp_domain::json::JsonMap>>),
    ]
}

fn variant_fields() -> [(&'static str, Probe); 19] {
    [
        ("id", whole::<String>),
        ("sku", whole::<Option<String>>),
        ("barcodes", each::<Barcode>),
        ("handle", whole::<Option<String>>),
        ("url", whole::<Option<String>>),
        ("title", whole::<String>),
        ("description", whole::<Description>),
        ("categories", each::<Category>),
        ("price", whole::<Price>),
        ("list_price", whole::<Option<Price>>),
        ("unit_price", whole::<Option<ucp_domain::json::Json>>),
        ("availability", whole::<Option<Availability>>),
        ("options", each::<SelectedOption>),
        ("media", each::<Media>),
        ("rating", whole::<Option<Rating>>),
        ("tags", each::<String>),
        ("metadata", whole::<Option<ucp_domain::json::JsonMap>>),
        ("seller", whole::<Option<Seller>>),
        ("inventory_quantity", whole::<Option<i64>>),
    ]
}
