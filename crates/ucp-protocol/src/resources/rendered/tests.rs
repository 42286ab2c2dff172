use std::sync::Arc;

use serde_json::json;
use ucp_domain::catalog::{
    DetailRequest, LookupMatch, Outline, Product, SelectedOption, Served, Shown, StoredDocument, StoredVariant,
    default_view_of, detail,
};
use ucp_domain::checkout::Message;
use ucp_domain::commerce::{LookupResults, ProductView, SearchResults};
use ucp_domain::store::MatchKind;

use super::{Json, Rendered, Sink, Source};
use crate::resources::{LookupBody, ProductBody, SearchBody};

fn variant(product: &str, index: usize) -> serde_json::Value {
    json!({
        "id": format!("{product}-{index}"),
        "sku": format!("SKU \"{index}\" \\ é"),
        "title": format!("Variant {index} \u{1F600}\n"),
        "description": {"plain": "line\tone"},
        "price": {"amount": 1000 + index as i64, "currency": "USD"},
        "availability": {"available": index.is_multiple_of(2)},
        "options": [{"name": "Size", "label": format!("S{index}")}],
        "metadata": {"variants": [], "note": ",\"variants\":["},
        "inventory_quantity": 3,
    })
}

/// A product with members after its variants (rating, tags, metadata), one of them holding
/// what the variants' key looks like; or one with nothing after them.
fn product(id: &str, variants: usize, members_after: bool) -> Product {
    let mut product = json!({
        "id": id,
        "title": "A \"quoted\" title",
        "description": {"plain": "Plain", "html": "<p>x</p>"},
        "price_range": {"min": {"amount": 1000, "currency": "USD"}, "max": {"amount": 1006, "currency": "USD"}},
        "options": [{"name": "Size", "values": [{"label": "S0"}, {"label": "S1", "id": "s1"}]}],
        "variants": (0..variants).map(|index| variant(id, index)).collect::<Vec<_>>(),
    });
    if members_after {
        product["rating"] = json!({"value": 4.25, "scale_max": 5.0, "count": 12});
        product["tags"] = json!(["a", "b"]);
        product["metadata"] = json!({"variants": [{"id": format!("{id}-0")}], "x": ",\"variants\":[]"});
    }
    serde_json::from_value(product).expect("a valid product")
}

fn served(product: Product) -> Arc<Served> {
    Arc::new(Served::new(product))
}

/// `product` as the store serves it when it kept its rendering: read back from its stored
/// document with its stock laid over, and the stored JSON with that stock spliced in.
fn stored(product: Product) -> Arc<Served> {
    let (doc, cuts) = crate::resources::stored::document(&product).unwrap();
    let variants: std::sync::Arc<[StoredVariant]> = (product.variants.iter())
        .map(|variant| StoredVariant {
            id: variant.id.as_str().into(),
            stock: variant.inventory_quantity,
            price: variant.price.amount,
            available: variant.is_available(),
        })
        .collect();
    let mut kept = StoredDocument { id: product.id.as_str().into(), doc: doc.into(), cuts: Box::default(), variants };
    // Each variant's availability as the store reads it: what the read product says, its
    // stock laid over.
    if let Ok(read) = parse(&kept) {
        kept.variants = (kept.variants.iter().zip(&read.variants))
            .map(|(stored, variant)| StoredVariant { available: variant.is_available(), ..stored.clone() })
            .collect();
    }
    match cuts {
        Some(cuts) => Arc::new(Served::stored(StoredDocument { cuts: cuts.into(), ..kept }, parse).outlined(outline)),
        None => {
            assert!(product.variants.is_empty(), "a product with variants is cut");
            Arc::new(Served::new(parse(&kept).unwrap()))
        }
    }
}

/// What the store reads of a product for get_product's default view, without parsing it.
fn outline(stored: &StoredDocument) -> Option<Outline> {
    crate::resources::stored::outline(&stored.doc, &stored.cuts, stored.variants.len())
}

/// What the store does on read: parse the document, lay the stock over it.
fn parse(stored: &StoredDocument) -> Result<Product, String> {
    let mut read: Product = serde_json::from_slice(&stored.doc).map_err(|error| error.to_string())?;
    for (variant, stored) in read.variants.iter_mut().zip(stored.variants.iter()) {
        variant.inventory_quantity = stored.stock;
    }
    read.refresh_availability();
    Ok(read)
}

/// Served as rendered on first use, or as the store made its JSON.
fn serve(product: Product, from_store: bool) -> Arc<Served> {
    if from_store { stored(product) } else { served(product) }
}

fn ucp() -> serde_json::Value {
    json!({"version": "2026-04-08", "capabilities": {}})
}

/// `write` as a plain body and as a mirrored one: the JSON is what serde_json writes for
/// `body`, the mirror its escape.
/// `write` as a plain body and as a mirrored one, the mirrored first when `mirror_first`
/// (the products are then rendered with their escapes as they are written; otherwise the
/// escapes are made from the pieces later).
fn assert_written_as_serialized(body: &impl serde::Serialize, mirror_first: bool, write: impl Fn(&mut Sink)) {
    let serialized = String::from_utf8(serde_json::to_vec(body).unwrap()).unwrap();
    let mut expected_mirror = serde_json::to_string(&serialized).unwrap();
    expected_mirror.pop();
    expected_mirror.remove(0);
    for mirror in if mirror_first { [true, false] } else { [false, true] } {
        // Twice: the first write renders each served product, the second reuses it.
        for _ in 0..2 {
            let mut sink = Sink::new(0, mirror);
            write(&mut sink);
            let (json, escaped) = sink.into_parts();
            assert_eq!(String::from_utf8(json).unwrap(), serialized);
            assert_eq!(
                escaped.map(|escaped| String::from_utf8(escaped).unwrap()),
                mirror.then(|| expected_mirror.clone())
            );
        }
    }
}

#[test]
fn products_split_around_their_variants() {
    for (variants, after) in [(7, true), (1, true), (3, false), (0, true), (0, false)] {
        let product = product("p", variants, after);
        let rendered = Rendered::of(&product, false).expect("the product splits");
        // Escaped as it is written, the pieces are what escaping them afterwards gives.
        let mirrored = Rendered::of(&product, true).expect("the product splits");
        let Json::Pieces(pieces) = &rendered.json else { panic!("serialized") };
        let source = Source::Pieces(pieces);
        let (now, later) = (mirrored.escaped.get().expect("escaped as written"), source.escaped());
        assert_eq!(now.before, later.before);
        assert_eq!(now.after, later.after);
        for index in 0..variants {
            assert!(now.variants[index].get().is_some(), "escaped as written");
            assert!(later.variants[index].get().is_none(), "escaped when first shown");
            assert_eq!(now.variant(source, index), later.variant(source, index));
            assert_eq!(later.variant(source, index), super::escape(pieces.variants[index].as_ref()).as_ref());
        }
        assert!(rendered.escaped.get().is_none(), "escaped only when mirrored");
        assert_eq!(pieces.variants.len(), variants);
        // With no variants the whole head is `before`: nothing goes between it and `after`.
        let only_brace = !after || variants == 0;
        assert_eq!(pieces.after.as_ref() == b"}", only_brace, "{variants} variants, members after: {after}");
    }
}

#[test]
fn a_search_body_is_written_as_serde_serializes_it() {
    for (mirror_first, from_store) in [(false, false), (true, false), (false, true), (true, true)] {
        search_body_is_written_as_serde_serializes_it(mirror_first, from_store);
    }
}

// A search answer of products the store kept rendered, shown whole or narrowed by index, is
// spliced from their stored JSON: none of them is parsed (BENCHMARKS.md, "Parsed when read").
#[test]
fn a_search_body_of_stored_products_parses_none_of_them() {
    let (long, short) = (stored(product("long", 7, true)), stored(product("short", 3, false)));
    let results = SearchResults {
        products: vec![
            Shown::Served { served: Arc::clone(&long), variants: Some(vec![6, 0, 3]) },
            Shown::whole(Arc::clone(&short)),
        ],
        has_next_page: false,
        cursor: None,
        messages: vec![],
    };
    let body = SearchBody::new(ucp(), &results);
    for mirror in [true, false] {
        let mut sink = Sink::new(0, mirror);
        body.write_json(&mut sink).unwrap();
    }
    assert!(!long.is_parsed() && !short.is_parsed(), "written from the stored JSON alone");
    assert_written_as_serialized(&body, true, |sink| body.write_json(sink).unwrap());
}

fn search_body_is_written_as_serde_serializes_it(mirror_first: bool, from_store: bool) {
    let long = serve(product("long", 7, true), from_store);
    let short = serve(product("short", 3, false), from_store);
    let results = SearchResults {
        products: vec![
            Shown::whole(Arc::clone(&long)),
            Shown::Served { served: Arc::clone(&long), variants: Some(vec![6, 0, 3]) },
            Shown::Served { served: Arc::clone(&short), variants: Some(vec![]) },
            Shown::whole(Arc::clone(&short)),
            Shown::Changed(Box::new(product("changed", 2, true))),
        ],
        has_next_page: true,
        cursor: Some("c\"ursor".to_owned()),
        messages: vec![Message::info("currency_unavailable", "Prices are shown in USD".to_owned(), None)],
    };
    for messages in [true, false] {
        let mut results = results.clone();
        if !messages {
            results.messages.clear();
        }
        let body = SearchBody::new(ucp(), &results);
        assert_written_as_serialized(&body, mirror_first, |sink| body.write_json(sink).unwrap());
    }
}

#[test]
fn a_lookup_body_is_written_as_serde_serializes_it() {
    for (mirror_first, from_store) in [(false, false), (true, false), (false, true), (true, true)] {
        lookup_body_is_written_as_serde_serializes_it(mirror_first, from_store);
    }
}

fn lookup_body_is_written_as_serde_serializes_it(mirror_first: bool, from_store: bool) {
    let long = serve(product("long", 7, true), from_store);
    let short = serve(product("short", 3, false), from_store);
    let inputs = |ids: &[&str]| -> Vec<(String, MatchKind)> {
        ids.iter().map(|id| ((*id).to_owned(), MatchKind::Exact)).collect()
    };
    let results = LookupResults {
        products: vec![
            LookupMatch {
                product: Shown::Served { served: Arc::clone(&long), variants: Some(vec![1, 4]) },
                inputs: vec![
                    inputs(&["long-1", "SKU \"1\"", "tab\tback\\slash \u{1}é\u{1F600}"]),
                    vec![("long".to_owned(), MatchKind::Featured)],
                ],
            },
            LookupMatch {
                product: Shown::whole(Arc::clone(&short)),
                inputs: vec![inputs(&["a"]), inputs(&["b"]), inputs(&["c"])],
            },
            LookupMatch {
                product: Shown::Changed(Box::new(product("changed", 1, true))),
                inputs: vec![inputs(&["changed-0"])],
            },
        ],
        messages: vec![Message::info("not_found", "nope".to_owned(), None)],
    };
    let body = LookupBody::new(ucp(), &results);
    assert_written_as_serialized(&body, mirror_first, |sink| body.write_json(sink).unwrap());
}

#[test]
fn a_product_body_is_written_as_serde_serializes_it() {
    // Every member of a selection, and text that needs escapes (written directly, not by serde).
    let selected = vec![
        SelectedOption { name: "Size".to_owned(), label: "S1".to_owned(), id: Some("s1".to_owned()) },
        SelectedOption { name: "Co\"lor\\".to_owned(), label: "r\u{1}é\t\u{1F600}".to_owned(), id: None },
    ];
    for (index, (shown, selected, messages)) in [
        (Shown::whole(served(product("p", 4, true))), Some(selected.clone()), vec![]),
        (Shown::whole(served(product("q", 2, false))), None, vec![Message::info("x", "y".to_owned(), None)]),
        (Shown::whole(stored(product("s", 4, true))), Some(selected.clone()), vec![]),
        (Shown::whole(stored(product("t", 3, false))), None, vec![]),
        (Shown::Changed(Box::new(product("r", 2, true))), Some(selected), vec![]),
    ]
    .into_iter()
    .enumerate()
    {
        let view = ProductView { product: shown, selected, messages };
        let body = ProductBody::new(ucp(), &view);
        assert_written_as_serialized(&body, index % 2 == 0, |sink| body.write_json(sink).unwrap());
    }
}

// get_product's default view, as get_product derives it (`default_view_of`: chosen from the
// product's outline when the store kept its JSON, which the view is then cut from without
// parsing the product; derived from the product otherwise): the bytes of the default view's
// serialization either way, also with a title that reads like the options' key.
#[test]
fn a_default_view_is_cut_from_its_products_rendering() {
    for (variants, after, from_store) in [(4, true, true), (3, false, true), (1, true, true), (4, true, false)] {
        let mut source = product("p", variants, after);
        source.title = ",\"options\":[{\"name\":\"Size\"}],\"variants\":[".to_owned();
        // The first variant out of stock, so the second leads, and the last carrying the
        // second's options, so it shows after it.
        source.variants[0].inventory_quantity = Some(0);
        if variants > 2 {
            source.variants[variants - 1].options = source.variants[1].options.clone();
        }
        source.refresh_availability();
        // The view as a parse of the product gives it, from a twin: `of` itself is not parsed.
        let twin = serve(source.clone(), from_store);
        let expected = detail(&twin, &DetailRequest::default(), &|_| true).expect("a default view");
        assert_ne!(expected.product.options, twin.options, "the view flags its options");
        let of = serve(source, from_store);
        let default = default_view_of(&of).expect("a default view");
        let view = Arc::clone(&default.product);
        assert_eq!(view.parts().is_some(), from_store, "{variants} variants: chosen from the outline");
        assert_eq!(default.selected, expected.selected);
        let shown_ids: Vec<&str> = expected.product.variants.iter().map(|variant| variant.id.as_str()).collect();
        let wanted = match variants {
            1 => vec!["p-0"],
            3 => vec!["p-1", "p-2"],
            _ => vec!["p-1", "p-3"],
        };
        assert_eq!(shown_ids, wanted, "{variants} variants");
        let shown = ProductView {
            product: Shown::whole(Arc::clone(&view)),
            selected: Some(default.selected),
            messages: vec![],
        };
        let body = ProductBody::new(ucp(), &shown);
        let mut sink = Sink::new(0, true);
        body.write_json(&mut sink).unwrap();
        let expected_body = ProductView {
            product: Shown::Changed(Box::new(expected.product)),
            selected: Some(expected.selected),
            messages: vec![],
        };
        assert_eq!(
            String::from_utf8(sink.into_parts().0).unwrap(),
            serde_json::to_string(&ProductBody::new(ucp(), &expected_body)).unwrap(),
            "{variants} variants"
        );
        // A view cut from its product's rendering holds no product of its own once it is
        // written (a serialized one keeps the product it was serialized from).
        assert_eq!(view.is_parsed(), !from_store, "{variants} variants: no product held once cut");
        assert_eq!(view.id(), "p");
        // (Serializing the body, as the comparison does, reads the view's product again.)
        assert_written_as_serialized(&body, false, |sink| body.write_json(sink).unwrap());
        assert_eq!(of.is_rendered_cheaply(), from_store, "{variants} variants: the product rendered for its view");
        assert_eq!(of.is_parsed(), !from_store, "{variants} variants: a stored product is cut from, not parsed");
    }
}
