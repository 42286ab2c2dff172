//! One product built from its rows (a Merchant Center group, or a lone item): the product's
//! own fields from the first row that has each, one variant per row, and the handle.

use std::collections::HashSet;

use ucp_domain::catalog::{Category, Description, PriceRange, Product};
use ucp_domain::json::Json;
use ucp_domain::money::Price;

use super::row::{Row, image};

/// Lowercase ASCII letters and digits, other runs of characters folded into one `-`.
pub(super) fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() {
            slug.push(ch.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    slug
}

/// `<slug of title>-<slug of id>`: unique unless two ids differ only in what slugs drop, which
/// [`StagedRows::build`] resolves with a numeric suffix.
fn handle(title: &str, id: &str) -> String {
    let mut id_slug = slug(id);
    if id_slug.is_empty() {
        id_slug = id.bytes().map(|byte| format!("{byte:02x}")).collect();
    }
    match slug(title) {
        title_slug if title_slug.is_empty() => id_slug,
        title_slug => format!("{title_slug}-{id_slug}"),
    }
}

/// `3` for a field like `variants[3].price`.
pub(super) fn variant_index_of(field: &str) -> Option<usize> {
    let rest = field.strip_prefix("variants[")?;
    rest[..rest.find(']')?].parse().ok()
}

pub(super) fn build_product(id: String, rows: Vec<Row>) -> Product {
    let title = rows.iter().find_map(|row| row.title.clone()).unwrap_or_default();
    let description = rows.iter().find_map(|row| row.description.clone());
    let url = rows.iter().find_map(|row| row.link.clone());
    let brand = rows.iter().find_map(|row| row.brand.clone());
    let condition = rows.iter().find_map(|row| row.condition.clone());

    let mut categories: Vec<Category> = Vec::new();
    let mut media = Vec::new();
    let mut seen_images = HashSet::new();
    for row in &rows {
        for category in &row.categories {
            if !categories.contains(category) {
                categories.push(category.clone());
            }
        }
        for url in &row.images {
            if seen_images.insert(url.as_str()) {
                media.push(image(url));
            }
        }
    }
    let mut metadata = ucp_domain::json::JsonMap::new();
    let mut tags = Vec::new();
    if let Some(brand) = &brand {
        metadata.insert("brand".to_owned(), Json::from(brand.as_str()));
        tags.push(brand.clone());
    }
    if let Some(condition) = condition {
        metadata.insert("condition".to_owned(), Json::from(condition));
    }
    let currency = rows[0].variant.price.currency.clone();
    let several = rows.len() > 1;
    let variants = rows
        .into_iter()
        .map(|row| {
            let mut variant = row.variant;
            variant.title = match (several && !variant.options.is_empty(), row.title) {
                (true, _) => variant.options.iter().map(|option| option.label.as_str()).collect::<Vec<_>>().join(" / "),
                (false, Some(row_title)) => row_title,
                (false, None) => title.clone(),
            };
            // A lone variant's images are the product's.
            if several {
                variant.media = row.images.iter().map(|url| image(url)).collect();
            }
            if row.description.is_some() && row.description != description {
                variant.description = Description { plain: row.description, html: None, markdown: None };
            }
            variant
        })
        .collect();
    Product {
        handle: Some(handle(&title, &id)),
        id,
        title,
        description: Description { plain: description, html: None, markdown: None },
        url,
        categories,
        price_range: PriceRange { min: Price::new(0, currency.clone()), max: Price::new(0, currency) },
        list_price_range: None,
        media,
        options: Vec::new(),
        variants,
        rating: None,
        tags,
        metadata: (!metadata.is_empty()).then_some(metadata),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_handles() {
        assert_eq!(slug("  Men's T-Shirt (Blue)!  "), "men-s-t-shirt-blue");
        assert_eq!(handle("Classic Tee", "SKU_1"), "classic-tee-sku-1");
        assert_eq!(handle("Été", "É"), "t-c389");
    }
}
