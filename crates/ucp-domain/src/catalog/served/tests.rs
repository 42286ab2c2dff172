use super::*;
use crate::catalog::{Description, default_view, default_view_of};
use crate::money::Price;

fn product(variants: usize) -> Product {
    let price = Price::new(100, "USD".to_owned());
    serde_json::from_value(serde_json::json!({
        "id": "p",
        "title": "P",
        "description": {"plain": "p"},
        "price_range": {"min": price, "max": price},
        "variants": (0..variants).map(|index| serde_json::json!({
            "id": format!("v{index}"),
            "title": "V",
            "description": Description::plain("v"),
            "price": price,
        })).collect::<Vec<_>>(),
    }))
    .expect("a valid product")
}

fn ids(shown: &Shown) -> Vec<String> {
    shown.variants().iter().map(|variant| variant.id.clone()).collect()
}

#[test]
fn a_shown_product_is_its_served_product_narrowed_without_a_copy_until_changed() {
    let served = Arc::new(Served::new(product(4)));
    let mut shown = Shown::Served { served: Arc::clone(&served), variants: Some(vec![3, 1, 9]) };
    assert_eq!(ids(&shown), ["v3", "v1"], "picked in order; an index past the end shows nothing");
    assert_eq!(shown.to_product().variants.len(), 2);
    assert_eq!(ids(&Shown::whole(Arc::clone(&served))), ["v0", "v1", "v2", "v3"]);
    shown.make_changed().title = "Changed".to_owned();
    assert!(matches!(&shown, Shown::Changed(product) if product.title == "Changed" && product.variants.len() == 2));
    assert_eq!(served.title, "P", "the served product is untouched");
}

#[test]
fn the_slots_are_filled_once() {
    let served = Served::new(product(1));
    assert_eq!(served.rendering(|product| product.variants.len()), Some(&1));
    assert_eq!(served.rendering(|_| 7usize), Some(&1), "made on first use only");
    assert_eq!(served.rendering(|_| "another type"), None, "a rendering of another type is not there");
    let mut derived = 0;
    for _ in 0..2 {
        served.default_detail(|served| {
            derived += 1;
            Some(DefaultDetail {
                product: Arc::new(Served::new(served.product().clone())),
                selected: Vec::new(),
                has_options: false,
            })
        });
    }
    assert_eq!(derived, 1);
}

fn kept(product: &Product, stock: Vec<Option<i64>>) -> StoredDocument {
    let doc = serde_json::to_vec(product).unwrap();
    let variants = (stock.iter().enumerate())
        .map(|(index, stock)| StoredVariant {
            id: format!("v{index}").into(),
            stock: *stock,
            price: 100,
            available: true,
        })
        .collect();
    StoredDocument { id: product.id.as_str().into(), doc: doc.into(), cuts: Box::default(), variants }
}

fn parse(stored: &StoredDocument) -> Result<Product, String> {
    serde_json::from_slice(&stored.doc).map_err(|error| error.to_string())
}

// get_product's default view of a product kept as stored is derived from a parse that is
// not kept: the served product stays as read (its rendering comes from the stored JSON),
// so its cache entry does not hold the product twice.
#[test]
fn a_stored_products_default_view_leaves_it_unparsed() {
    let served = Arc::new(Served::stored(kept(&product(3), vec![None, Some(1), Some(0)]), parse));
    let detail = served.default_detail(|_| default_view_of(&served));
    let view = &detail.expect("a default view").product;
    assert!(view.parts().is_none(), "no outline: derived from a parse");
    assert_eq!(view.variants.len(), 3);
    assert!(!served.is_parsed() && served.kept().is_some(), "the parse was the derivation's alone");
    assert_eq!(served.title, "P", "parsed still when something reads it");
    assert!(served.is_parsed());
}

/// The outline a store reads, here from a parse (the store's reads where the cuts say).
fn outline(stored: &StoredDocument) -> Option<Outline> {
    let product = parse(stored).ok()?;
    Some(Outline { options: product.options, variants: product.variants.into_iter().map(|v| v.options).collect() })
}

// With an outline, get_product's default view of a product kept as stored is chosen without
// parsing it at all, and is the view a parse gives: its options' flags and its variants, and,
// read, its product, derived from the product it views or, should that product be gone
// before the view is rendered, from a parse of what the store read of it.
#[test]
fn a_default_view_chosen_from_an_outline_is_the_one_a_parse_gives() {
    // What the store's parse does: the read's stock laid over.
    fn stocked(stored: &StoredDocument) -> Result<Product, String> {
        let mut product = parse(stored)?;
        for (variant, read) in product.variants.iter_mut().zip(stored.variants.iter()) {
            variant.inventory_quantity = read.stock;
        }
        product.refresh_availability();
        Ok(product)
    }
    // Two colours by two sizes and a second red small, the only one in stock: the view features
    // it and shows the other red small after it (it carries the selection), with every value
    // but red and small flagged unavailable.
    let mut sized = product(5);
    let axes = [("Red", "S"), ("Blue", "S"), ("Red", "M"), ("Blue", "M"), ("Red", "S")];
    for (variant, (color, size)) in sized.variants.iter_mut().zip(axes) {
        variant.options = [("Color", color), ("Size", size)]
            .map(|(name, label)| SelectedOption { name: name.into(), label: label.into(), id: None })
            .into();
    }
    sized.normalize().unwrap();
    let stock = vec![Some(0), Some(0), Some(0), Some(0), Some(3)];
    let stored = || {
        let mut read = kept(&sized, stock.clone());
        let parsed = stocked(&read).unwrap();
        read.variants = (read.variants.iter().zip(&parsed.variants))
            .map(|(read, variant)| StoredVariant { available: variant.is_available(), ..read.clone() })
            .collect();
        read
    };
    let expected = default_view(&stocked(&stored()).unwrap()).unwrap();
    assert_eq!(expected.variants.iter().map(|variant| variant.id.as_str()).collect::<Vec<_>>(), ["v4", "v0"]);
    for of_gone in [false, true] {
        let served = Arc::new(Served::stored(stored(), stocked).outlined(outline));
        let view = Arc::clone(&served.default_detail(|_| default_view_of(&served)).unwrap().product);
        assert!(!served.is_parsed(), "not parsed for its view");
        let parts = view.parts().expect("chosen from the outline").clone();
        assert_eq!(parts.options, expected.options, "the flags a parse gives");
        assert_eq!(parts.variants, [4, 0]);
        assert_eq!(view.variant_count(), 2);
        assert!(!view.is_parsed());
        if of_gone {
            drop(served);
        }
        assert_eq!(*view.product(), expected, "of gone: {of_gone}");
    }

    // What the store read of the variants names one of them twice, or none: parsed instead.
    for id in ["v0", ""] {
        let mut damaged = stored();
        damaged.variants = (damaged.variants.iter().enumerate())
            .map(|(index, read)| StoredVariant {
                id: if index == 1 { id.into() } else { read.id.clone() },
                ..read.clone()
            })
            .collect();
        let served = Arc::new(Served::stored(damaged, stocked).outlined(outline));
        assert!(served.outline().is_none(), "{id:?}");
        let view = &served.default_detail(|_| default_view_of(&served)).unwrap().product;
        assert!(view.parts().is_none(), "{id:?}: derived from a parse");
    }
}

// A view keeps its product until its rendering is made, then lets it go; read after that,
// it is derived again from the product it views.
#[test]
fn a_view_lets_its_product_go_once_rendered_and_derives_it_again() {
    fn titled(product: &Product) -> Option<Product> {
        Some(Product { title: "View".to_owned(), ..product.clone() })
    }
    let of = Arc::new(Served::new(product(2)));
    let view = Served::view_of(titled(&of).unwrap(), &of, titled);
    assert_eq!(view.id(), "p");
    assert_eq!(view.variant_count(), 2, "counted from the product it holds");
    assert_eq!(view.with_product(|product| product.title.clone()), "View");
    view.rendering(|view| view.with_product(|product| product.variants.len()));
    assert!(!view.is_parsed(), "rendered: its product let go");
    assert_eq!(view.id(), "p", "its id kept");
    assert_eq!(view.title, "View", "derived again from the product it views");
    assert!(view.is_parsed());
}

#[test]
fn a_stored_product_is_parsed_when_first_read_and_lets_what_was_read_go() {
    let served = Served::stored(kept(&product(2), vec![None, Some(3)]), parse);
    assert!(!served.is_parsed());
    assert_eq!(served.variant_count(), 2, "counted without parsing");
    let fact = |id| Fact { id, price: 100, available: true };
    assert_eq!(served.facts(), [fact("v0"), fact("v1")], "read without parsing");
    assert_eq!(served.id(), "p");
    let rendered = served.rendering(|served| served.kept().map(|kept| kept.variants.len()));
    assert_eq!(rendered, Some(&Some(2)), "rendered from what the store read");
    assert!(!served.is_parsed() && served.kept().is_some(), "rendered, not parsed: kept for the parse");
    assert_eq!(served.title, "P");
    assert!(served.is_parsed() && served.kept().is_none(), "parsed and rendered: let go");
    // Parsed first, rendered second.
    let served = Served::stored(kept(&product(1), vec![None]), parse);
    assert_eq!(served.variants.len(), 1);
    assert!(served.kept().is_some(), "parsed, not rendered: kept for the rendering");
    served.rendering(|_| ());
    assert!(served.kept().is_none());
}

#[test]
fn a_stored_product_that_does_not_parse_serves_with_nothing_to_show() {
    let mut stored = kept(&product(2), vec![None, None]);
    stored.doc = b"{\"id\":\"p\",\"title\":5}".to_vec().into();
    let served = Served::stored(stored, parse);
    assert_eq!(served.id, "p");
    assert!(served.variants.is_empty() && served.options.is_empty());
    assert_eq!(served.variant_count(), 2, "as read, whatever the parse found");
    assert!(served.facts().is_empty(), "nothing to pick from");
}
