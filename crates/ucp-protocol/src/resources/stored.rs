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

use ucp_domain::catalog::{Product, ProductJson};

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

/// The JSON of `product` (its stored document `doc` with the stock of this read laid over)
/// made from `doc` itself and its stored `cuts`: each stock-tracked variant's `availability`
/// member written from `product` and, where it differs from the stored one (the stock moved
/// across zero since the import), spliced in; nothing else is touched or copied. `None` when
/// the cuts do not fit (another version, damaged, or a tracked variant whose document has no
/// `availability` member to replace): the product is then serialized on first use.
pub fn served_json(mut doc: Vec<u8>, cuts: &[u8], product: &Product) -> Option<ProductJson> {
    let cuts = decode(cuts, &doc, product.variants.len())?;
    let mut variants = Vec::with_capacity(cuts.variants.len());
    // How far the bytes after the last splice moved.
    let mut shift: isize = 0;
    let moved = |at: usize, shift: isize| at.checked_add_signed(shift);
    let mut member = Vec::new();
    for ((range, availability), variant) in cuts.variants.iter().zip(&product.variants) {
        let start = moved(range.start, shift)?;
        if variant.inventory_quantity.is_some() {
            // Stock tracked: the served availability is the one the stock says.
            let stored = availability.as_ref()?;
            member.clear();
            member.extend_from_slice(b",\"availability\":");
            serde_json::to_writer(&mut member, variant.availability.as_ref()?).ok()?;
            let stored = moved(stored.start, shift)?..moved(stored.end, shift)?;
            if doc[stored.clone()] != member[..] {
                let (old, new) = (stored.len() as isize, member.len() as isize);
                doc.splice(stored, member.iter().copied());
                shift += new - old;
            }
        }
        variants.push(start..moved(range.end, shift)?);
    }
    let after = moved(cuts.after, shift)?;
    Some(ProductJson { bytes: doc.into_boxed_slice(), before: cuts.before, variants: variants.into(), after })
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

    #[test]
    fn the_served_json_is_the_products_json_whatever_the_stock() {
        let stored = product();
        let (doc, cuts) = document(&stored).unwrap();
        assert_eq!(doc, serde_json::to_vec(&stored).unwrap(), "the document is serde_json's");
        let cuts = cuts.expect("a product with variants is cut");
        for stock in [[Some(5), Some(0), None], [Some(0), Some(9), None], [Some(1), Some(1), None]] {
            let served = read(&doc, &stock);
            check(&served_json(doc.clone(), &cuts, &served).expect("the cuts fit"), &served);
        }
    }

    #[test]
    fn cuts_that_do_not_fit_are_not_used() {
        let stored = product();
        let (doc, cuts) = document(&stored).unwrap();
        let cuts = cuts.unwrap();
        let served = read(&doc, &[Some(5), Some(0), None]);
        // Another version.
        let mut other = cuts.clone();
        other[0] = 2;
        assert!(served_json(doc.clone(), &other, &served).is_none());
        // Damaged: every single word moved by one, and cut short.
        for word in 1..cuts.len() / 4 {
            let mut damaged = cuts.clone();
            damaged[4 * word] = damaged[4 * word].wrapping_add(1);
            if let Some(json) = served_json(doc.clone(), &damaged, &served) {
                // A moved availability start can still land on a comma inside the variant;
                // whatever passes the checks must still be the product's JSON or be refused.
                assert_eq!(*json.bytes, serde_json::to_vec(&served).unwrap()[..], "word {word}");
            }
        }
        assert!(served_json(doc.clone(), &cuts[..cuts.len() - 4], &served).is_none());
        assert!(served_json(doc.clone(), &[], &served).is_none());
        // Another product's variants.
        let mut fewer = served.clone();
        fewer.variants.pop();
        assert!(served_json(doc.clone(), &cuts, &fewer).is_none());
        // A tracked variant whose document has no availability to replace.
        let mut bare = stored.clone();
        bare.variants[2].availability = None;
        let (doc, cuts) = document(&bare).unwrap();
        let served = read(&doc, &[Some(5), Some(0), Some(3)]);
        assert!(served_json(doc, &cuts.unwrap(), &served).is_none());
    }

    // Stored cuts are only as good as the serialization they were cut from: a change in how a
    // product serializes must bump CUTS_VERSION, so catalogs imported before stop using theirs.
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
