//! A product kept rendered by the store: its JSON written once, at import, with its cuts (where
//! each variant sits, and each variant's `availability` member), so that a read that misses the
//! read cache splices the stored bytes instead of serializing the product again.
//!
//! The document a store keeps is the product's JSON as `serde_json::to_vec` writes it, stock
//! aside (stock lives in its own column and is never serialized). What stock changes on the
//! wire is only a stock-tracked variant's `availability`, derived when the stock is laid over
//! on read; [`served_json`] writes that member afresh and splices it in where it changed.
//!
//! The cuts name a format version ([`CUTS_VERSION`]). Cuts of another version are ignored (the
//! product is then serialized on first use, as before), so a release that changes how a
//! product serializes bumps it, and catalogs imported before go on working until re-imported.

use std::ops::Range;

use ucp_domain::catalog::{Availability, Outline, Product, ProductJson, StoredVariant};

use super::split::split;

/// The version of the cuts' encoding and of the product serialization they were cut from.
/// Bump it whenever a product's JSON changes shape (a member added, renamed or reordered in
/// `ucp_domain::catalog::Product` or anything it holds): stored cuts of an older version are
/// then ignored. The test `a_products_json_keeps_the_shape_its_cuts_were_made_for` fails
/// first.
pub const CUTS_VERSION: u32 = 1;

/// A product's JSON for the store to keep, and its cuts (`None` when it cannot be cut: a
/// product without variants, which the store then serializes on read as before).
pub fn document(product: &Product) -> serde_json::Result<(Vec<u8>, Option<Vec<u8>>)> {
    let Some(split) = split(product, false) else {
        return Ok((serde_json::to_vec(product)?, None));
    };
    let cuts = &split.json;
    if cuts.variants.len() != product.variants.len() || cuts.availability.len() != cuts.variants.len() {
        return Ok((split.json.bytes, None));
    }
    let mut encoded = Vec::with_capacity(4 * (4 + 4 * cuts.variants.len()));
    let mut push = |value: usize| u32::try_from(value).map(|value| encoded.extend_from_slice(&value.to_le_bytes()));
    let pushed = (|| {
        push(CUTS_VERSION as usize)?;
        push(cuts.before)?;
        push(cuts.after)?;
        push(cuts.variants.len())?;
        for (variant, availability) in cuts.variants.iter().zip(&cuts.availability) {
            let availability = availability.clone().unwrap_or(0..0);
            for value in [variant.start, variant.end, availability.start, availability.end] {
                push(value)?;
            }
        }
        Ok::<(), std::num::TryFromIntError>(())
    })();
    let cuts = pushed.is_ok().then_some(encoded);
    Ok((split.json.bytes, cuts))
}

/// Decoded cuts, checked against the document they cut.
struct Cuts {
    before: usize,
    after: usize,
    variants: Vec<(Range<usize>, Option<Range<usize>>)>,
}

/// The cuts in `encoded`, when they are of this version, name `variants` variants and cut
/// `doc` where a product's JSON is cut (at its punctuation, in order).
fn decode(encoded: &[u8], doc: &[u8], variants: usize) -> Option<Cuts> {
    let mut words = encoded.chunks_exact(4).map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
    let mut next = || words.next().map(|word| word as usize);
    if !encoded.len().is_multiple_of(4) || next()? != CUTS_VERSION as usize {
        return None;
    }
    let (before, after, count) = (next()?, next()?, next()?);
    if count != variants || encoded.len() != 4 * (4 + 4 * count) {
        return None;
    }
    // `,"variants":[` then the variants, joined by commas, then `]`.
    let mut at = before + b",\"variants\":[".len();
    if doc.get(before..at)? != b",\"variants\":[" {
        return None;
    }
    let mut cut = Vec::with_capacity(count);
    for index in 0..count {
        let (start, end, available_start, available_end) = (next()?, next()?, next()?, next()?);
        let separator = if index == 0 { 0 } else { 1 };
        if start != at + separator || (separator == 1 && doc.get(at) != Some(&b',')) || end <= start {
            return None;
        }
        let (first, last) = (doc.get(start)?, doc.get(end - 1)?);
        if *first != b'{' || *last != b'}' {
            return None;
        }
        let availability = match (available_start, available_end) {
            (0, 0) => None,
            // From its comma to its object's closing brace, followed by the next member's comma
            // or the variant's closing brace.
            (from, to)
                if start < from
                    && from < to
                    && to < end
                    && doc.get(from) == Some(&b',')
                    && doc.get(to - 1) == Some(&b'}')
                    && matches!(doc.get(to), Some(b',' | b'}')) =>
            {
                Some(from..to)
            }
            _ => return None,
        };
        cut.push((start..end, availability));
        at = end;
    }
    if after != at + 1 || doc.get(at) != Some(&b']') || after >= doc.len() {
        return None;
    }
    Some(Cuts { before, after, variants: cut })
}

/// The JSON of a product as served: its stored document `doc` with the stock of this read
/// (`read`, each variant's in order) laid over, made from `doc`
/// itself and its stored `cuts` without parsing the product: each stock-tracked variant's
/// `availability` member written from its stock and the status its document states
/// (`Availability::for_stock`, the rule the parsed product follows) and, where it differs from
/// the stored one (the stock moved across zero since the import), spliced in; nothing else is
/// touched. `None` when the cuts do not fit (another version, damaged, another number of
/// variants, or a tracked variant whose document has no `availability` member to replace): the
/// product is then serialized on first use.
pub fn served_json(doc: &[u8], cuts: &[u8], read: &[StoredVariant]) -> Option<ProductJson> {
    let cuts = decode(cuts, doc, read.len())?;
    let mut bytes = doc.to_vec();
    let mut variants = Vec::with_capacity(cuts.variants.len());
    // How far the bytes after the last splice moved.
    let mut shift: isize = 0;
    let moved = |at: usize, shift: isize| at.checked_add_signed(shift);
    let mut member = Vec::new();
    for ((range, availability), variant) in cuts.variants.iter().zip(read) {
        let start = moved(range.start, shift)?;
        if let Some(quantity) = variant.stock {
            // Stock tracked: the served availability is the one the stock says.
            let stored = availability.as_ref()?;
            let old = doc.get(stored.clone())?;
            let new = match old {
                // What stock alone gives, as the serializer writes it (the usual case).
                IN_STOCK | OUT_OF_STOCK => {
                    if quantity > 0 {
                        IN_STOCK
                    } else {
                        OUT_OF_STOCK
                    }
                }
                _ => {
                    let stated = stated(old)?;
                    member.clear();
                    member.extend_from_slice(AVAILABILITY_KEY);
                    let served = Availability::for_stock(stated.status.as_deref(), quantity);
                    serde_json::to_writer(&mut member, &served).ok()?;
                    &member[..]
                }
            };
            if old != new {
                let stored = moved(stored.start, shift)?..moved(stored.end, shift)?;
                let (old, new_len) = (stored.len() as isize, new.len() as isize);
                bytes.splice(stored, new.iter().copied());
                shift += new_len - old;
            }
        }
        variants.push(start..moved(range.end, shift)?);
    }
    let after = moved(cuts.after, shift)?;
    Some(ProductJson { bytes: bytes.into_boxed_slice(), before: cuts.before, variants: variants.into(), after })
}

/// The `availability` each variant's document states, in order, read from the members the
/// cuts name (nothing else is parsed); `None` when the cuts do not fit `doc` and its
/// `variants` variants.
pub fn stated_availability(doc: &[u8], cuts: &[u8], variants: usize) -> Option<Vec<Option<Availability>>> {
    let cuts = decode(cuts, doc, variants)?;
    (cuts.variants.iter())
        .map(|(_, member)| match member {
            Some(member) => stated(doc.get(member.clone())?).map(Some),
            None => Some(None),
        })
        .collect()
}

/// What get_product's default view needs of a stored product, read without parsing it: its
/// `options` (the last member before its variants, when it has any: the serializer writes
/// them in `Product`'s order) and each variant's (the member right after its `availability`,
/// which the cuts name). `None` when the cuts do not fit, or a variant has no `availability`
/// member to find its options after (the product is then parsed for the view).
/// No member before a product's variants, and none before a variant's `options` but its
/// `unit_price`, holds free-form JSON, so `"options":` found there is that key: a string's
/// quotes are always escaped.
pub fn outline(doc: &[u8], cuts: &[u8], variants: usize) -> Option<Outline> {
    let cuts = decode(cuts, doc, variants)?;
    let before = doc.get(..cuts.before)?;
    let options = match options_value_at(before) {
        Some(at) => first_value(&before[at..])?,
        None => Vec::new(),
    };
    let variants = (cuts.variants.iter())
        .map(|(range, availability)| {
            let rest = doc.get(availability.as_ref()?.end..range.end)?;
            match rest.strip_prefix(OPTIONS_KEY) {
                Some(value) => first_value(value),
                None => Some(Vec::new()),
            }
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Outline { options, variants })
}

/// A product's or a variant's `options` member, up to its value.
const OPTIONS_KEY: &[u8] = b",\"options\":";

/// Where the value of a product's `options` member starts in `before`, its JSON up to its
/// variants, or `None` when it has no options. The member is the last one before the
/// variants, and its key the only `"options"` key at that level or below it (none of the
/// members before the variants holds one); a key's quotes are never escaped, a string's
/// always are, so no string can look like it.
pub(super) fn options_value_at(before: &[u8]) -> Option<usize> {
    memchr::memmem::rfind(before, OPTIONS_KEY).map(|at| at + OPTIONS_KEY.len())
}

/// The JSON value `bytes` starts with, whatever follows it.
fn first_value<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    T::deserialize(&mut serde_json::Deserializer::from_slice(bytes)).ok()
}

/// How a variant's `availability` member starts, as the cuts name it.
const AVAILABILITY_KEY: &[u8] = b",\"availability\":";
/// The members stock alone gives a tracked variant (`Availability::for_stock` of a status
/// that is neither backorder nor preorder), as the serializer writes them.
const IN_STOCK: &[u8] = b",\"availability\":{\"available\":true,\"status\":\"in_stock\"}";
const OUT_OF_STOCK: &[u8] = b",\"availability\":{\"available\":false,\"status\":\"out_of_stock\"}";

/// The availability an `availability` member states: the two forms stock gives matched as
/// bytes, any other parsed.
fn stated(member: &[u8]) -> Option<Availability> {
    let (available, status) = match member {
        IN_STOCK => (true, "in_stock"),
        OUT_OF_STOCK => (false, "out_of_stock"),
        _ => return serde_json::from_slice(member.strip_prefix(AVAILABILITY_KEY)?).ok(),
    };
    Some(Availability { available: Some(available), status: Some(status.to_owned()) })
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use ucp_domain::catalog::Product;

    use super::*;

    /// A product with stock-tracked variants (one out of stock), an untracked one, strings that
    /// look like the members the cuts name, and members after the variants.
    fn product() -> Product {
        let variant = |index: usize, stock: Option<i64>| {
            json!({
                "id": format!("v{index}"),
                "sku": ",\"availability\":{}",
                "title": format!("Variant {index} \"quoted\" é"),
                "description": {"plain": "x"},
                "price": {"amount": 1000 + index, "currency": "USD"},
                "unit_price": {"availability": [1], "x": ",\"availability\":"},
                "options": [{"name": "Size", "label": format!("S{index}")}],
                "inventory_quantity": stock,
            })
        };
        let mut product: Product = serde_json::from_value(json!({
            "id": "p",
            "title": "P \"variants\":[",
            "description": {"plain": ",\"variants\":["},
            "price_range": {"min": {"amount": 1000, "currency": "USD"}, "max": {"amount": 1002, "currency": "USD"}},
            "variants": [variant(0, Some(5)), variant(1, Some(0)), variant(2, None)],
            "rating": {"value": 4.5, "scale_max": 5.0, "count": 3},
            "tags": ["variants"],
            "metadata": {"variants": [{"availability": 1}]},
        }))
        .unwrap();
        product.refresh_availability();
        product
    }

    /// What the store reads beside a document: each variant's stock.
    fn variants(stock: &[Option<i64>]) -> Vec<StoredVariant> {
        stock
            .iter()
            .map(|stock| StoredVariant { id: Box::default(), stock: *stock, price: 0, available: false })
            .collect()
    }

    /// What the store does on read: parse the document, lay stock over it.
    fn read(doc: &[u8], stock: &[Option<i64>]) -> Product {
        let mut product: Product = serde_json::from_slice(doc).unwrap();
        for (variant, stock) in product.variants.iter_mut().zip(stock) {
            variant.inventory_quantity = *stock;
        }
        product.refresh_availability();
        product
    }

    fn check(json: &ProductJson, product: &Product) {
        assert_eq!(*json.bytes, serde_json::to_vec(product).unwrap()[..], "{}", String::from_utf8_lossy(&json.bytes));
        assert_eq!(&json.bytes[json.before..json.variants[0].start], b",\"variants\":[");
        for (range, variant) in json.variants.iter().zip(&product.variants) {
            assert_eq!(json.bytes[range.clone()], serde_json::to_vec(variant).unwrap()[..]);
        }
        assert_eq!(json.bytes[json.after - 1], b']');
    }

    /// Whatever the stock, the served JSON of `stored`'s document is the read product's JSON.
    fn check_stocks(stored: &Product, stocks: &[[Option<i64>; 3]]) {
        let (doc, cuts) = document(stored).unwrap();
        assert_eq!(doc, serde_json::to_vec(stored).unwrap(), "the document is serde_json's");
        let cuts = cuts.expect("a product with variants is cut");
        for stock in stocks {
            let served = read(&doc, stock);
            check(&served_json(&doc, &cuts, &variants(stock)).expect("the cuts fit"), &served);
        }
    }

    #[test]
    fn the_served_json_is_the_products_json_whatever_the_stock() {
        check_stocks(&product(), &[[Some(5), Some(0), None], [Some(0), Some(9), None], [Some(1), Some(1), None]]);
    }

    // The availability written from the stock keeps the status the document states where
    // that status is orderable without stock, as the parsed product's does.
    #[test]
    fn a_backordered_variant_stays_orderable_at_no_stock() {
        let mut stored = product();
        stored.variants[0].availability =
            Some(Availability { available: Some(true), status: Some("backorder".to_owned()) });
        let (doc, _) = document(&stored).unwrap();
        let stocks = [[Some(0), Some(0), None], [Some(4), Some(0), None]];
        for stock in &stocks {
            let served = read(&doc, stock);
            assert_eq!(served.variants[0].availability, stored.variants[0].availability, "{stock:?}");
        }
        check_stocks(&stored, &stocks);
    }

    // What a search picks its variants by, read beside the document without parsing it, is
    // what the parsed product says: each variant's availability with the read's stock.
    #[test]
    fn the_stated_availability_gives_what_the_parsed_product_says() {
        let mut backordered = product();
        backordered.variants[1].availability =
            Some(Availability { available: Some(true), status: Some("backorder".to_owned()) });
        let mut unavailable = product();
        unavailable.variants[2].availability = Some(Availability { available: Some(false), status: None });
        for stored in [product(), backordered, unavailable] {
            let (doc, cuts) = document(&stored).unwrap();
            let cuts = cuts.unwrap();
            let stated = stated_availability(&doc, &cuts, 3).expect("the cuts fit");
            assert!(stated_availability(&doc, &cuts, 2).is_none(), "another number of variants");
            for stock in [[Some(5), Some(0), None], [Some(0), Some(9), None], [Some(0), Some(0), None]] {
                let served = read(&doc, &stock);
                for ((variant, stated), stock) in served.variants.iter().zip(&stated).zip(stock) {
                    assert_eq!(Availability::is_orderable(stated.as_ref(), stock), variant.is_available(), "{stock:?}");
                }
            }
        }
    }

    // get_product's default view reads a stored product's options without parsing it: what it
    // reads is what the parse says, whatever the strings and free-form members around them.
    #[test]
    fn the_outline_is_what_the_parse_says() {
        let variant = |index: usize, options: serde_json::Value| {
            json!({
                "id": format!("v{index}"),
                "title": ",\"options\":[",
                "description": {"plain": "x"},
                "price": {"amount": 1000, "currency": "USD"},
                "unit_price": {"options": [{"name": "Size", "label": "not this"}], "x": ",\"options\":["},
                "availability": {"available": index != 1},
                "options": options,
                "media": [{"type": "image", "url": "https://example.com/options.jpg"}],
                "metadata": {"options": [1]},
            })
        };
        let size = |label: &str, id: Option<&str>| json!({"name": "Size \"EU\"", "label": label, "id": id});
        let stored: Product = serde_json::from_value(json!({
            "id": "p",
            "title": ",\"options\":[",
            "description": {"plain": "x"},
            "price_range": {"min": {"amount": 1000, "currency": "USD"}, "max": {"amount": 1000, "currency": "USD"}},
            "options": [{"name": "Size \"EU\"", "values": [{"id": "s0", "label": "S0"}, {"label": ",\"options\":[é"}]}],
            "variants": [
                variant(0, json!([size("S0", Some("s0"))])),
                variant(1, json!([])),
                variant(2, json!([size(",\"options\":[é", None), {"name": "Fit", "label": "\u{1F600}"}])),
            ],
            "metadata": {"options": [{"name": "x", "values": []}]},
        }))
        .unwrap();
        let (doc, cuts) = document(&stored).unwrap();
        let cuts = cuts.unwrap();
        let parsed: Product = serde_json::from_slice(&doc).unwrap();
        let outline = outline(&doc, &cuts, 3).expect("every variant states its availability");
        assert_eq!(outline.options, parsed.options);
        assert_eq!(outline.variants, parsed.variants.iter().map(|variant| variant.options.clone()).collect::<Vec<_>>());
        assert_eq!(outline.variants[1], [], "a variant without options");
        assert!(super::outline(&doc, &cuts, 2).is_none(), "another number of variants");

        // A product without options.
        let mut plain = stored.clone();
        plain.options.clear();
        plain.variants.iter_mut().for_each(|variant| variant.options.clear());
        let (doc, cuts) = document(&plain).unwrap();
        let outline = super::outline(&doc, &cuts.unwrap(), 3).unwrap();
        assert!(outline.options.is_empty() && outline.variants.iter().all(Vec::is_empty));

        // A variant with no availability member to find its options after: parsed instead.
        let (doc, cuts) = document(&product()).unwrap();
        assert!(product().variants[2].availability.is_none());
        assert!(super::outline(&doc, &cuts.unwrap(), 3).is_none());
    }

    #[test]
    fn cuts_that_do_not_fit_are_not_used() {
        let stored = product();
        let (doc, cuts) = document(&stored).unwrap();
        let cuts = cuts.unwrap();
        let stock = [Some(5), Some(0), None];
        let served = read(&doc, &stock);
        // Another version.
        let mut other = cuts.clone();
        other[0] = 2;
        assert!(served_json(&doc, &other, &variants(&stock)).is_none());
        // Damaged: every single word moved by one, and cut short.
        for word in 1..cuts.len() / 4 {
            let mut damaged = cuts.clone();
            damaged[4 * word] = damaged[4 * word].wrapping_add(1);
            if let Some(json) = served_json(&doc, &damaged, &variants(&stock)) {
                // A moved availability start can still land on a comma inside the variant;
                // whatever passes the checks must still be the product's JSON or be refused.
                assert_eq!(*json.bytes, serde_json::to_vec(&served).unwrap()[..], "word {word}");
            }
        }
        assert!(served_json(&doc, &cuts[..cuts.len() - 4], &variants(&stock)).is_none());
        assert!(served_json(&doc, &[], &variants(&stock)).is_none());
        // Another number of variants.
        assert!(served_json(&doc, &cuts, &variants(&stock[..2])).is_none());
        // A tracked variant whose document has no availability to replace.
        let mut bare = stored.clone();
        bare.variants[2].availability = None;
        let (doc, cuts) = document(&bare).unwrap();
        assert!(served_json(&doc, &cuts.unwrap(), &variants(&[Some(5), Some(0), Some(3)])).is_none());
    }

    // Stored cuts are only as good as the serialization they were cut from: a change in how a
    // product serializes must bump CUTS_VERSION, so catalogs imported before stop using theirs.
    #[test]
    fn the_members_stock_gives_are_what_the_serializer_writes() {
        for (quantity, member) in [(1, IN_STOCK), (0, OUT_OF_STOCK)] {
            let written = serde_json::to_vec(&Availability::for_stock(None, quantity)).unwrap();
            assert_eq!([AVAILABILITY_KEY, &written].concat(), member);
            assert_eq!(stated(member), Some(Availability::for_stock(None, quantity)));
        }
    }

    #[test]
    fn a_products_json_keeps_the_shape_its_cuts_were_made_for() {
        let (doc, _) = document(&product()).unwrap();
        assert_eq!(
            String::from_utf8(doc).unwrap(),
            concat!(
                r#"{"id":"p","title":"P \"variants\":[","description":{"plain":",\"variants\":["},"#,
                r#""price_range":{"min":{"amount":1000,"currency":"USD"},"max":{"amount":1002,"currency":"USD"}},"#,
                r#""variants":["#,
                r#"{"id":"v0","sku":",\"availability\":{}","title":"Variant 0 \"quoted\" é","description":{"plain":"x"},"#,
                r#""price":{"amount":1000,"currency":"USD"},"unit_price":{"availability":[1],"x":",\"availability\":"},"#,
                r#""availability":{"available":true,"status":"in_stock"},"options":[{"name":"Size","label":"S0"}]},"#,
                r#"{"id":"v1","sku":",\"availability\":{}","title":"Variant 1 \"quoted\" é","description":{"plain":"x"},"#,
                r#""price":{"amount":1001,"currency":"USD"},"unit_price":{"availability":[1],"x":",\"availability\":"},"#,
                r#""availability":{"available":false,"status":"out_of_stock"},"options":[{"name":"Size","label":"S1"}]},"#,
                r#"{"id":"v2","sku":",\"availability\":{}","title":"Variant 2 \"quoted\" é","description":{"plain":"x"},"#,
                r#""price":{"amount":1002,"currency":"USD"},"unit_price":{"availability":[1],"x":",\"availability\":"},"#,
                r#""options":[{"name":"Size","label":"S2"}]}],"#,
                r#""rating":{"value":4.5,"scale_max":5.0,"count":3},"tags":["variants"],"metadata":{"variants":[{"availability":1}]}}"#,
            ),
            "a product's JSON changed shape: bump CUTS_VERSION"
        );
    }
}
