//! get_product: option selection with relaxation, and availability signals on option values.

use super::{Product, SelectedOption, Variant};

/// What a buyer asked to see of one product.
#[derive(Debug, Clone, Default)]
pub struct DetailRequest {
    /// Set when the request id named a variant: that variant leads and its options win.
    pub variant_id: Option<String>,
    pub selected: Vec<SelectedOption>,
    /// Option names in relaxation priority; the last is dropped first.
    pub preferences: Vec<String>,
}

/// A product narrowed for display: featured variant first, the effective selections, and
/// `available`/`exists` on every option value.
#[derive(Debug, Clone)]
pub struct ProductDetail {
    pub product: Product,
    pub selected: Vec<SelectedOption>,
    /// Whether some requested selections were dropped to find a variant.
    pub relaxed: bool,
}

/// get_product's default view of `product`: what a request naming the product and nothing
/// else shows, with the options it selects.
pub fn default_product_detail(product: &Product) -> Option<ProductDetail> {
    detail(product, &DetailRequest::default(), &|_| true)
}

/// The product of [`default_product_detail`]: the [`super::Derive`] of the default view, which
/// makes the view's product again should something read it after its rendering let it go.
pub fn default_view(product: &Product) -> Option<Product> {
    default_product_detail(product).map(|detailed| detailed.product)
}

/// Narrows `product` per `request`; `keep_variant` applies request filters (e.g. price).
/// Returns `None` when no variant survives the filters.
/// Only what the view shows is copied: the product's members and the variants it keeps.
pub fn detail(
    product: &Product,
    request: &DetailRequest,
    keep_variant: &dyn Fn(&Variant) -> bool,
) -> Option<ProductDetail> {
    let (featured, selected, relaxed) = match request.variant_id.as_deref().and_then(|id| product.variant_by_id(id)) {
        Some(variant) => (variant.id.clone(), variant.options.clone(), false),
        None => {
            let (selected, relaxed) = relax(product, request, keep_variant)?;
            let matching: Vec<&Variant> = product
                .variants
                .iter()
                .filter(|variant| keep_variant(variant) && matches(variant, &selected))
                .collect();
            let featured = matching.iter().find(|variant| variant.is_available()).or(matching.first())?;
            let selected = if request.selected.is_empty() { featured.options.clone() } else { selected };
            (featured.id.clone(), selected, relaxed)
        }
    };

    let mut view = without_variants(product);
    // Option signals are relative to the effective selections, over all variants.
    for option in &mut view.options {
        for value in &mut option.values {
            // The effective selections with this value in place of this option's: compared
            // where they are, not copied into a probe per value.
            let others = || selected.iter().filter(|selection| selection.name != option.name);
            let candidates = product.variants.iter().filter(|variant| {
                carries(variant, &option.name, &value.label, value.id.as_deref())
                    && others()
                        .all(|selection| carries(variant, &selection.name, &selection.label, selection.id.as_deref()))
            });
            let (mut exists, mut available) = (false, false);
            for variant in candidates {
                exists = true;
                available |= variant.is_available();
            }
            value.exists = Some(exists);
            value.available = Some(available);
        }
    }

    let featured_index = product.variants.iter().position(|variant| variant.id == featured)?;
    let featured_variant = &product.variants[featured_index];
    if !keep_variant(featured_variant) {
        return None;
    }
    view.variants.push(featured_variant.clone());
    view.variants.extend(
        (product.variants.iter().enumerate())
            .filter(|&(index, variant)| index != featured_index && keep_variant(variant) && matches(variant, &selected))
            .map(|(_, variant)| variant.clone()),
    );
    Some(ProductDetail { product: view, selected, relaxed })
}

/// A copy of `product` but for its variants, which the view picks.
fn without_variants(product: &Product) -> Product {
    // Every member named, so a new one is not forgotten.
    let Product {
        id,
        handle,
        title,
        description,
        url,
        categories,
        price_range,
        list_price_range,
        media,
        options,
        variants: _,
        rating,
        tags,
        metadata,
    } = product;
    Product {
        id: id.clone(),
        handle: handle.clone(),
        title: title.clone(),
        description: description.clone(),
        url: url.clone(),
        categories: categories.clone(),
        price_range: price_range.clone(),
        list_price_range: list_price_range.clone(),
        media: media.clone(),
        options: options.clone(),
        variants: Vec::new(),
        rating: rating.clone(),
        tags: tags.clone(),
        metadata: metadata.clone(),
    }
}

/// Whether the variant carries every selection (by value id when both sides have one, else by label).
fn matches(variant: &Variant, selections: &[SelectedOption]) -> bool {
    selections.iter().all(|selection| carries(variant, &selection.name, &selection.label, selection.id.as_deref()))
}

/// Whether the variant carries the option value `name`: `label` (or `id`, when both sides have
/// one).
fn carries(variant: &Variant, name: &str, label: &str, id: Option<&str>) -> bool {
    variant.options.iter().any(|option| {
        option.name == name
            && match (option.id.as_deref(), id) {
                (Some(left), Some(right)) => left == right,
                _ => option.label == label,
            }
    })
}

/// Drops selections, lowest priority first, until some kept variant matches them all.
fn relax(
    product: &Product,
    request: &DetailRequest,
    keep_variant: &dyn Fn(&Variant) -> bool,
) -> Option<(Vec<SelectedOption>, bool)> {
    // One selection per option name: the first one sent wins.
    let mut selections: Vec<SelectedOption> = Vec::new();
    for selection in &request.selected {
        if !selections.iter().any(|kept| kept.name == selection.name) {
            selections.push(selection.clone());
        }
    }
    // Priority order: names listed in `preferences` (in that order), then the rest in request order.
    // Relaxation pops from the end of this list.
    let mut ordered: Vec<SelectedOption> = Vec::with_capacity(selections.len());
    for name in &request.preferences {
        if let Some(position) = selections.iter().position(|selection| &selection.name == name) {
            ordered.push(selections.remove(position));
        }
    }
    ordered.extend(selections);
    let mut relaxed = false;
    loop {
        if product.variants.iter().any(|variant| keep_variant(variant) && matches(variant, &ordered)) {
            return Some((ordered, relaxed));
        }
        ordered.pop()?;
        relaxed = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Description, PriceRange};
    use crate::money::Price;

    fn variant(id: &str, color: &str, size: &str, stock: i64) -> Variant {
        Variant {
            id: id.into(),
            sku: None,
            barcodes: vec![],
            handle: None,
            url: None,
            title: format!("{color} / {size}"),
            description: Description::plain("x"),
            categories: vec![],
            price: Price::new(1000, "USD".into()),
            list_price: None,
            unit_price: None,
            availability: None,
            options: vec![option("Color", color), option("Size", size)],
            media: vec![],
            rating: None,
            tags: vec![],
            metadata: None,
            seller: None,
            inventory_quantity: Some(stock),
        }
    }

    fn option(name: &str, label: &str) -> SelectedOption {
        SelectedOption { name: name.into(), label: label.into(), id: None }
    }

    fn shoe() -> Product {
        let mut product = Product {
            id: "shoe".into(),
            handle: None,
            title: "Shoe".into(),
            description: Description::plain("A shoe"),
            url: None,
            categories: vec![],
            price_range: PriceRange { min: Price::new(0, "USD".into()), max: Price::new(0, "USD".into()) },
            list_price_range: None,
            media: vec![],
            options: vec![],
            variants: vec![
                variant("blue-10", "Blue", "10", 0),
                variant("blue-11", "Blue", "11", 4),
                variant("green-10", "Green", "10", 2),
            ],
            rating: None,
            tags: vec![],
            metadata: None,
        };
        product.normalize().unwrap();
        product
    }

    fn signals(detail: &ProductDetail, name: &str, label: &str) -> (Option<bool>, Option<bool>) {
        let option = detail.product.options.iter().find(|option| option.name == name).unwrap();
        let value = option.values.iter().find(|value| value.label == label).unwrap();
        (value.available, value.exists)
    }

    // Conformance 101: unsatisfiable selections relax from the end of `preferences`.
    #[test]
    fn relaxation_drops_the_last_preference_first() {
        let request = DetailRequest {
            variant_id: None,
            selected: vec![option("Color", "Green"), option("Size", "11")],
            preferences: vec!["Color".into(), "Size".into()],
        };
        let detail = detail(&shoe(), &request, &|_| true).unwrap();
        assert!(detail.relaxed);
        assert_eq!(detail.selected, vec![option("Color", "Green")]);
        assert_eq!(detail.product.variants[0].id, "green-10");

        let request = DetailRequest { preferences: vec!["Size".into(), "Color".into()], ..request };
        let detail = super::detail(&shoe(), &request, &|_| true).unwrap();
        assert_eq!(detail.selected, vec![option("Size", "11")]);
        assert_eq!(detail.product.variants[0].id, "blue-11");
    }

    // Conformance 100: a variant id leads and its options are the selection.
    #[test]
    fn variant_id_wins_over_conflicting_selection() {
        let request = DetailRequest {
            variant_id: Some("blue-10".into()),
            selected: vec![option("Color", "Green")],
            preferences: vec![],
        };
        let detail = detail(&shoe(), &request, &|_| true).unwrap();
        assert_eq!(detail.product.variants[0].id, "blue-10");
        assert_eq!(detail.selected, vec![option("Color", "Blue"), option("Size", "10")]);
    }

    // Conformance 102: available/exists relative to the effective selection.
    #[test]
    fn option_values_carry_availability_signals() {
        let request =
            DetailRequest { selected: vec![option("Color", "Blue"), option("Size", "10")], ..Default::default() };
        let detail = detail(&shoe(), &request, &|_| true).unwrap();
        // Blue/10 exists but is out of stock; Green/10 is in stock; Size 11 with Blue exists.
        assert_eq!(signals(&detail, "Color", "Blue"), (Some(false), Some(true)));
        assert_eq!(signals(&detail, "Color", "Green"), (Some(true), Some(true)));
        assert_eq!(signals(&detail, "Size", "11"), (Some(true), Some(true)));
        let request = DetailRequest { selected: vec![option("Color", "Green")], ..Default::default() };
        let detail = super::detail(&shoe(), &request, &|_| true).unwrap();
        assert_eq!(signals(&detail, "Size", "11"), (Some(false), Some(false)));
    }

    #[test]
    fn no_selection_features_the_first_available_variant() {
        let detail = detail(&shoe(), &DetailRequest::default(), &|_| true).unwrap();
        assert_eq!(detail.product.variants[0].id, "blue-11");
        assert_eq!(detail.selected, vec![option("Color", "Blue"), option("Size", "11")]);
        assert!(super::detail(&shoe(), &DetailRequest::default(), &|_| false).is_none());
    }
}
