//! get_product: option selection with relaxation, and availability signals on option values.

use std::sync::Arc;

use super::{DefaultDetail, Fact, Outline, Product, ProductOption, SelectedOption, Served, Variant, ViewParts};

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

/// get_product's default view of `product`, a served product of its own whose rendering is
/// cut from the product's: chosen from the product's outline when the store reads one (so a
/// product kept as stored is not parsed for it: its options and each variant's are read
/// where the store's cuts say they are), derived from the product otherwise. `None` when the
/// product has no variant.
pub fn default_view_of(product: &Arc<Served>) -> Option<DefaultDetail> {
    if let Some((outline, stored)) = product.outline() {
        let choice = default_choice(&outline, &product.facts())?;
        let has_options = !choice.options.is_empty();
        let parts = ViewParts { options: choice.options, variants: choice.shown };
        let view = Served::view_parts(parts, product, stored, default_view);
        return Some(DefaultDetail { product: Arc::new(view), selected: choice.selected, has_options });
    }
    product.with_product(|parsed| {
        let detailed = default_product_detail(parsed)?;
        let has_options = !detailed.product.options.is_empty();
        let view = Served::view_of(detailed.product, product, default_view);
        Some(DefaultDetail { product: Arc::new(view), selected: detailed.selected, has_options })
    })
}

/// Narrows `product` per `request`; `keep_variant` applies request filters (e.g. price).
/// Returns `None` when no variant survives the filters.
/// Only what the view shows is copied: the product's members and the variants it keeps.
pub fn detail(
    product: &Product,
    request: &DetailRequest,
    keep_variant: &dyn Fn(&Variant) -> bool,
) -> Option<ProductDetail> {
    let choice = choose(&product.options, &product.variants, request, keep_variant)?;
    let mut view = without_variants(product, choice.options);
    view.variants = choice.shown.iter().map(|&index| product.variants[index].clone()).collect();
    Some(ProductDetail { product: view, selected: choice.selected, relaxed: choice.relaxed })
}

/// get_product's default view as a choice among a product's variants: what
/// [`default_product_detail`] shows of the product `outline` and `facts` describe (`facts[i]`
/// of the variant whose options are `outline.variants[i]`), without the product. `None` when
/// the two disagree on the number of variants, or there is none.
pub fn default_choice(outline: &Outline, facts: &[Fact<'_>]) -> Option<Choice> {
    if outline.variants.len() != facts.len() {
        return None;
    }
    let variants: Vec<Outlined<'_>> =
        (outline.variants.iter().zip(facts)).map(|(options, fact)| Outlined { options, fact }).collect();
    choose(&outline.options, &variants, &DetailRequest::default(), &|_| true)
}

/// A request's choice among a product's variants: the effective selections, whether some
/// were dropped to find a variant, the product's options with `available`/`exists` on every
/// value, and the variants shown (indices into the product's: the featured one first, then
/// the others that carry the selections, in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub selected: Vec<SelectedOption>,
    pub relaxed: bool,
    pub options: Vec<ProductOption>,
    pub shown: Vec<usize>,
}

/// What choosing reads of a variant: a parsed one, or an outlined one with its facts.
trait Axes {
    fn id(&self) -> &str;
    fn options(&self) -> &[SelectedOption];
    fn is_available(&self) -> bool;
}

impl Axes for Variant {
    fn id(&self) -> &str {
        &self.id
    }

    fn options(&self) -> &[SelectedOption] {
        &self.options
    }

    fn is_available(&self) -> bool {
        Variant::is_available(self)
    }
}

/// A variant of an [`Outline`], with what the store read of it.
struct Outlined<'a> {
    options: &'a [SelectedOption],
    fact: &'a Fact<'a>,
}

impl Axes for Outlined<'_> {
    fn id(&self) -> &str {
        self.fact.id
    }

    fn options(&self) -> &[SelectedOption] {
        self.options
    }

    fn is_available(&self) -> bool {
        self.fact.available
    }
}

fn choose<V: Axes>(
    options: &[ProductOption],
    variants: &[V],
    request: &DetailRequest,
    keep_variant: &dyn Fn(&V) -> bool,
) -> Option<Choice> {
    let by_id = request.variant_id.as_deref().and_then(|id| variants.iter().position(|variant| variant.id() == id));
    let (featured_index, selected, relaxed) = match by_id {
        Some(index) => (index, variants[index].options().to_vec(), false),
        None => {
            let (selected, relaxed) = relax(variants, request, keep_variant)?;
            let matching: Vec<usize> = (0..variants.len())
                .filter(|&index| keep_variant(&variants[index]) && matches(&variants[index], &selected))
                .collect();
            let featured = *matching.iter().find(|&&index| variants[index].is_available()).or(matching.first())?;
            // No selection left (none sent, or none any variant carries): the featured variant's
            // options anchor the view, as for a request without selections.
            let selected = if selected.is_empty() { variants[featured].options().to_vec() } else { selected };
            (featured, selected, relaxed)
        }
    };

    let mut options = options.to_vec();
    // Option signals are relative to the effective selections, over all variants.
    for option in &mut options {
        for value in &mut option.values {
            // The effective selections with this value in place of this option's: compared
            // where they are, not copied into a probe per value.
            let others = || selected.iter().filter(|selection| selection.name != option.name);
            let candidates = variants.iter().filter(|variant| {
                carries(*variant, &option.name, &value.label, value.id.as_deref())
                    && others()
                        .all(|selection| carries(*variant, &selection.name, &selection.label, selection.id.as_deref()))
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

    if !keep_variant(&variants[featured_index]) {
        return None;
    }
    let mut shown = vec![featured_index];
    shown.extend(
        (variants.iter().enumerate())
            .filter(|&(index, variant)| index != featured_index && keep_variant(variant) && matches(variant, &selected))
            .map(|(index, _)| index),
    );
    Some(Choice { selected, relaxed, options, shown })
}

/// A copy of `product` but for its options, given, and its variants, which the view picks.
fn without_variants(product: &Product, options: Vec<ProductOption>) -> Product {
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
        options: _,
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
        options,
        variants: Vec::new(),
        rating: rating.clone(),
        tags: tags.clone(),
        metadata: metadata.clone(),
    }
}

/// Whether the variant carries every selection (by value id when both sides have one, else by label).
fn matches(variant: &impl Axes, selections: &[SelectedOption]) -> bool {
    selections.iter().all(|selection| carries(variant, &selection.name, &selection.label, selection.id.as_deref()))
}

/// Whether the variant carries the option value `name`: `label` (or `id`, when both sides have
/// one).
fn carries(variant: &impl Axes, name: &str, label: &str, id: Option<&str>) -> bool {
    variant.options().iter().any(|option| {
        option.name == name
            && match (option.id.as_deref(), id) {
                (Some(left), Some(right)) => left == right,
                _ => option.label == label,
            }
    })
}

/// Drops selections, lowest priority first, until some kept variant matches them all. Without
/// `preferences` (our own heuristic, catalog.md §4), each selection in request order is kept
/// if some variant carries it with those kept before it, so a satisfiable one is never dropped
/// for an unsatisfiable one sent before it.
fn relax<V: Axes>(
    variants: &[V],
    request: &DetailRequest,
    keep_variant: &dyn Fn(&V) -> bool,
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
    if request.preferences.is_empty() {
        let sent = ordered.len();
        let mut kept: Vec<SelectedOption> = Vec::with_capacity(sent);
        for selection in ordered {
            kept.push(selection);
            if !variants.iter().any(|variant| keep_variant(variant) && matches(variant, &kept)) {
                kept.pop();
            }
        }
        // Nothing kept: some variant must still be shown.
        if !variants.iter().any(keep_variant) {
            return None;
        }
        let relaxed = kept.len() < sent;
        return Some((kept, relaxed));
    }
    let mut relaxed = false;
    loop {
        if variants.iter().any(|variant| keep_variant(variant) && matches(variant, &ordered)) {
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

    // Conformance 101, our heuristic without preferences: a selection no variant carries is
    // dropped, and the ones that fit are kept; with none left, the featured variant anchors.
    #[test]
    fn without_preferences_only_the_unsatisfiable_selection_is_dropped() {
        let request = DetailRequest {
            variant_id: None,
            selected: vec![option("Color", "Purple"), option("Size", "11")],
            preferences: vec![],
        };
        let detail = detail(&shoe(), &request, &|_| true).unwrap();
        assert!(detail.relaxed);
        assert_eq!(detail.selected, vec![option("Size", "11")]);
        assert_eq!(detail.product.variants[0].id, "blue-11");
        let request = DetailRequest { selected: vec![option("Color", "Purple")], ..request };
        let detail = super::detail(&shoe(), &request, &|_| true).unwrap();
        assert!(detail.relaxed);
        let featured = detail.product.variants[0].options.clone();
        assert_eq!(detail.selected, featured, "anchored on the featured variant, not empty");
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

    // get_product's default view of a product kept as stored is chosen from its outline and
    // what the store read of each variant, without the product: the same choice.
    #[test]
    fn the_default_choice_from_an_outline_is_the_default_detail() {
        // Each stock, and the variants the view shows: the first available one (else the first)
        // and those with its options.
        let stocks = [
            ([0, 4, 2], vec!["blue-11"]),
            ([0, 0, 0], vec!["blue-10", "blue-10-twin"]),
            ([3, 3, 3], vec!["blue-10", "blue-10-twin"]),
            ([0, 0, 5], vec!["green-10"]),
            ([1, 0, 0], vec!["blue-10", "blue-10-twin"]),
        ];
        for (stock, wanted) in stocks {
            let mut product = shoe();
            for (variant, stock) in product.variants.iter_mut().zip(stock) {
                variant.inventory_quantity = Some(stock);
            }
            product.refresh_availability();
            // A fourth variant carrying the first one's options: shown beside it.
            let mut twin = product.variants[0].clone();
            twin.id = "blue-10-twin".into();
            product.variants.push(twin);
            let outline = Outline {
                options: product.options.clone(),
                variants: product.variants.iter().map(|variant| variant.options.clone()).collect(),
            };
            let facts: Vec<Fact<'_>> = (product.variants.iter())
                .map(|variant| Fact { id: &variant.id, price: variant.price.amount, available: variant.is_available() })
                .collect();
            let choice = default_choice(&outline, &facts).expect("a variant to show");
            let detailed = default_product_detail(&product).unwrap();
            assert_eq!(choice.options, detailed.product.options, "{stock:?}");
            assert_eq!(choice.selected, detailed.selected, "{stock:?}");
            let shown: Vec<&str> = choice.shown.iter().map(|&index| product.variants[index].id.as_str()).collect();
            let viewed: Vec<&str> = detailed.product.variants.iter().map(|variant| variant.id.as_str()).collect();
            assert_eq!(shown, viewed, "{stock:?}");
            assert_eq!(shown, wanted, "{stock:?}");
            assert!(default_choice(&outline, &facts[..2]).is_none(), "the outline and the facts disagree");
        }
        let empty = Outline { options: vec![], variants: vec![] };
        assert!(default_choice(&empty, &[]).is_none(), "no variant, no view");
    }

    #[test]
    fn no_selection_features_the_first_available_variant() {
        let detail = detail(&shoe(), &DetailRequest::default(), &|_| true).unwrap();
        assert_eq!(detail.product.variants[0].id, "blue-11");
        assert_eq!(detail.selected, vec![option("Color", "Blue"), option("Size", "11")]);
        assert!(super::detail(&shoe(), &DetailRequest::default(), &|_| false).is_none());
    }
}
