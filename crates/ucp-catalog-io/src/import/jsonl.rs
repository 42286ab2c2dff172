//! Our own import form: one UCP Product JSON document per line (`to_import_document`).

use std::collections::HashMap;
use std::io::BufRead;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use ucp_domain::catalog::{
    Availability, Barcode, Category, Description, Media, PriceRange, Product, ProductOption, Rating, SelectedOption,
    Seller, Variant,
};
use ucp_domain::money::Price;

use super::{FeedError, PROGRESS_EVERY, ParsedFeed, SkippedRow, UTF8_BOM};

pub(super) fn read_jsonl(mut reader: impl BufRead, progress: &mut dyn FnMut(u64)) -> Result<ParsedFeed, FeedError> {
    let mut feed = ParsedFeed::default();
    // Product id to index in `feed.products`; variant id to the product id that holds it.
    let mut product_index: HashMap<String, usize> = HashMap::new();
    let mut variant_owner: HashMap<String, String> = HashMap::new();
    let mut line = Vec::new();
    let (mut number, mut bytes) = (0u64, 0u64);
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        number += 1;
        bytes += read as u64;
        let content = match line.strip_prefix(UTF8_BOM) {
            Some(rest) if number == 1 => rest,
            _ => &line[..],
        };
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        feed.rows += 1;
        if feed.rows.is_multiple_of(PROGRESS_EVERY) {
            progress(bytes);
        }
        let product = match parse_product(content) {
            Ok(product) => product,
            Err((field, reason)) => {
                feed.skipped.push(SkippedRow::new(number, field, reason));
                continue;
            }
        };
        // A product id seen again replaces the earlier product; a variant id must not belong
        // to another product.
        let clash = product.variants.iter().enumerate().find_map(|(index, variant)| {
            variant_owner
                .get(&variant.id)
                .filter(|owner| **owner != product.id)
                .map(|owner| (index, &variant.id, owner))
        });
        if let Some((index, variant_id, owner)) = clash {
            feed.skipped.push(SkippedRow::new(
                number,
                format!("variants[{index}].id"),
                format!("variant id {variant_id:?} already belongs to product {owner:?}"),
            ));
            continue;
        }
        for variant in &product.variants {
            variant_owner.insert(variant.id.clone(), product.id.clone());
        }
        match product_index.get(&product.id) {
            Some(&index) => {
                let replaced = std::mem::replace(&mut feed.products[index], product);
                let current = &feed.products[index];
                for variant in &replaced.variants {
                    if current.variant_by_id(&variant.id).is_none() {
                        variant_owner.remove(&variant.id);
                    }
                }
            }
            None => {
                product_index.insert(product.id.clone(), feed.products.len());
                feed.products.push(product);
            }
        }
    }
    progress(bytes);
    Ok(feed)
}

/// One line into a normalized product, or the field at fault and why.
fn parse_product(line: &[u8]) -> Result<Product, (String, String)> {
    let mut product = match serde_json::from_slice::<Product>(line) {
        Ok(product) => product,
        Err(_) => parse_product_slowly(line)?,
    };
    product.normalize().map_err(|invalid| (invalid.field, invalid.reason))?;
    Ok(product)
}

/// The error path: find which field is wrong, and accept a missing `price_range` (derived).
fn parse_product_slowly(line: &[u8]) -> Result<Product, (String, String)> {
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

#[cfg(test)]
mod tests {
    use crate::to_import_document;

    use super::super::{FeedFormat, ImportOptions, read_feed};
    use super::*;

    fn parse(feed: &str) -> ParsedFeed {
        read_feed(feed.as_bytes(), FeedFormat::JsonLines, &ImportOptions::default(), &mut |_| {}).unwrap()
    }

    fn line(id: &str, variant_id: &str, amount: i64) -> String {
        serde_json::json!({
            "id": id,
            "title": format!("Product {id}"),
            "description": { "plain": "A thing" },
            "variants": [{
                "id": variant_id,
                "title": "",
                "description": {},
                "price": { "amount": amount, "currency": "USD" },
                "inventory_quantity": 4
            }]
        })
        .to_string()
    }

    #[test]
    fn good_and_bad_lines() {
        let feed = [
            line("p1", "v1", 1000),
            String::new(),
            "{not json".to_owned(),
            "[1, 2]".to_owned(),
            r#"{"id":"p2","title":"T","description":{},"variants":[{"id":"v2","title":"","description":{},"price":{"amount":"12","currency":"USD"}}]}"#.to_owned(),
            r#"{"id":"p3","description":{},"variants":[]}"#.to_owned(),
            r#"{"id":"p4","title":"T","description":{},"variants":[{"id":"v4","title":"","description":{},"price":{"amount":5,"currency":"usd"}}]}"#.to_owned(),
            r#"{"id":"p5","title":"T","description":{},"variants":[{"id":"v5","title":"","description":{},"price":{"amount":5}}]}"#.to_owned(),
            r#"{"id":"p6","title":"T","description":{},"tags":["a",7],"variants":[]}"#.to_owned(),
            line("p7", "v1", 1),
            line("p1", "v1b", 2000),
            "   ".to_owned(),
        ]
        .join("\n");
        let parsed = parse(&feed);
        assert_eq!(parsed.rows, 10);
        let skipped: Vec<(u64, &str)> =
            parsed.skipped.iter().map(|skipped| (skipped.line, skipped.field.as_str())).collect();
        assert_eq!(
            skipped,
            [
                (3, "json"),
                (4, "json"),
                (5, "variants[0].price"),
                (6, "title"),
                (7, "variants[0].price.currency"),
                (8, "variants[0].price"),
                (9, "tags[1]"),
                (10, "variants[0].id"),
            ],
            "{:?}",
            parsed.skipped
        );
        assert!(parsed.skipped[0].reason.starts_with("not valid JSON"));
        assert!(parsed.skipped[2].reason.contains("invalid type"), "{}", parsed.skipped[2].reason);
        assert!(parsed.skipped[5].reason.contains("missing field `currency`"), "{}", parsed.skipped[5].reason);
        assert!(parsed.skipped[7].reason.contains("already belongs to product \"p1\""));

        // p1 was replaced by its later line, which no longer holds v1.
        assert_eq!(parsed.products.len(), 1);
        let p1 = &parsed.products[0];
        assert_eq!(p1.variants[0].id, "v1b");
        assert_eq!(p1.price_range.min.amount, 2000);
        assert_eq!(p1.variants[0].inventory_quantity, Some(4));
        assert_eq!(p1.variants[0].title, "Product p1");
        assert!(p1.variants[0].is_available());
    }

    #[test]
    fn round_trips_the_import_document() {
        let mut original = parse(&line("p1", "v1", 1000)).products.remove(0);
        original.variants[0].inventory_quantity = Some(0);
        original.normalize().unwrap();
        let document = to_import_document(&original).to_string();
        let feed = format!("\u{feff}{document}\r\n\r\n{document}\n");
        let parsed = parse(&feed);
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!(parsed.rows, 2);
        assert_eq!(parsed.products, [original]);
    }
}
