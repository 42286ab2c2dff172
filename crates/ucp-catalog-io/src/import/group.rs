//! Grouping rows into products by `item_group_id`, with upsert of repeated row ids.

use std::collections::{HashMap, HashSet};

use ucp_domain::catalog::{Category, Description, InvalidProduct, PriceRange, Product};
use ucp_domain::json::Json;
use ucp_domain::money::Price;

use super::row::{Attr, RawItem, Row, image, parse_row};
use super::{ImportOptions, ParsedFeed, SkippedRow};

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
/// [`FeedBuilder::finish`] resolves with a numeric suffix.
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

/// The rows of one product so far. Replaced rows leave a `None` so indexes stay valid.
struct Group {
    id: String,
    rows: Vec<Option<Row>>,
    /// Rows present.
    live: usize,
    /// Rows present that have a title.
    titled: usize,
    /// The currency of the rows present.
    currency: String,
}

/// Collects rows into products: groups by product id, replaces rows whose id repeats.
#[derive(Default)]
pub(super) struct FeedBuilder {
    groups: Vec<Group>,
    group_index: HashMap<String, usize>,
    /// Variant id to (group, slot).
    variant_index: HashMap<String, (usize, usize)>,
    skipped: Vec<SkippedRow>,
    rows: u64,
}

impl FeedBuilder {
    /// Takes one row; the raw item is left empty for reuse.
    pub(super) fn add(&mut self, raw: &mut RawItem, options: &ImportOptions) {
        self.rows += 1;
        match parse_row(raw, options) {
            Ok(row) => {
                if let Err(skipped) = self.insert(row) {
                    self.skipped.push(skipped);
                }
            }
            Err(skipped) => self.skipped.push(skipped),
        }
    }

    fn insert(&mut self, row: Row) -> Result<(), SkippedRow> {
        let group_at = match self.group_index.get(&row.product_id) {
            Some(index) => *index,
            None => {
                self.groups.push(Group {
                    id: row.product_id.clone(),
                    rows: Vec::new(),
                    live: 0,
                    titled: 0,
                    currency: String::new(),
                });
                self.group_index.insert(row.product_id.clone(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let previous = self.variant_index.get(&row.variant.id).copied();
        let group = &self.groups[group_at];
        // What the group holds besides the row this one replaces.
        let (mut others, mut titled_others) = (group.live, group.titled);
        if let Some((previous_group, previous_slot)) = previous
            && previous_group == group_at
            && let Some(replaced) = &group.rows[previous_slot]
        {
            others -= 1;
            titled_others -= usize::from(replaced.title.is_some());
        }
        if others > 0 && row.variant.price.currency != group.currency {
            return Err(SkippedRow::new(
                row.line,
                Attr::Price.name(),
                format!(
                    "currency {} differs from {} used by the other items of product {:?}",
                    row.variant.price.currency, group.currency, group.id
                ),
            ));
        }
        if titled_others == 0 && row.title.is_none() {
            return Err(SkippedRow::new(
                row.line,
                Attr::Title.name(),
                "missing (the first item of a product needs a title)",
            ));
        }

        if let Some((previous_group, previous_slot)) = previous
            && let Some(replaced) = self.groups[previous_group].rows[previous_slot].take()
        {
            let old = &mut self.groups[previous_group];
            old.live -= 1;
            old.titled -= usize::from(replaced.title.is_some());
        }
        let group = &mut self.groups[group_at];
        group.currency.clone_from(&row.variant.price.currency);
        group.live += 1;
        group.titled += usize::from(row.title.is_some());
        let slot = match previous {
            Some((previous_group, previous_slot)) if previous_group == group_at => previous_slot,
            _ => {
                group.rows.push(None);
                group.rows.len() - 1
            }
        };
        self.variant_index.insert(row.variant.id.clone(), (group_at, slot));
        group.rows[slot] = Some(row);
        Ok(())
    }

    /// Builds and normalizes the products, in order of first appearance.
    pub(super) fn finish(self) -> ParsedFeed {
        let FeedBuilder { groups, mut skipped, rows, .. } = self;
        let mut products: Vec<Product> = Vec::with_capacity(groups.len());
        let mut handles = HashSet::with_capacity(groups.len());
        for group in groups {
            let rows: Vec<Row> = group.rows.into_iter().flatten().collect();
            if rows.is_empty() {
                continue;
            }
            let lines: Vec<u64> = rows.iter().map(|row| row.line).collect();
            let mut product = build_product(group.id, rows);
            match product.normalize() {
                Ok(()) => {
                    if let Some(handle) = &mut product.handle {
                        let base_len = handle.len();
                        let mut suffix = 1;
                        while !handles.insert(handle.clone()) {
                            suffix += 1;
                            handle.truncate(base_len);
                            handle.push_str(&format!("-{suffix}"));
                        }
                    }
                    products.push(product);
                }
                Err(InvalidProduct { field, reason }) => {
                    let line = variant_index_of(&field).and_then(|index| lines.get(index)).unwrap_or(&lines[0]);
                    skipped.push(SkippedRow::new(*line, field, reason));
                }
            }
        }
        skipped.sort_by_key(|skipped| skipped.line);
        ParsedFeed { products, rows, skipped }
    }
}

/// `3` for a field like `variants[3].price`.
fn variant_index_of(field: &str) -> Option<usize> {
    let rest = field.strip_prefix("variants[")?;
    rest[..rest.find(']')?].parse().ok()
}

fn build_product(id: String, rows: Vec<Row>) -> Product {
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
    use crate::import::row::Attr;

    #[test]
    fn slugs_and_handles() {
        assert_eq!(slug("  Men's T-Shirt (Blue)!  "), "men-s-t-shirt-blue");
        assert_eq!(handle("Classic Tee", "SKU_1"), "classic-tee-sku-1");
        assert_eq!(handle("Été", "É"), "t-c389");
    }

    fn raw(line: u64, values: &[(Attr, &str)]) -> RawItem {
        let mut raw = RawItem::default();
        raw.reset(line);
        for (attr, value) in values {
            raw.set(*attr, value);
        }
        raw
    }

    #[test]
    fn duplicate_ids_replace_earlier_rows_even_across_groups() {
        let options = ImportOptions::default();
        let mut builder = FeedBuilder::default();
        let rows = [
            raw(2, &[(Attr::Id, "a"), (Attr::Title, "First"), (Attr::Price, "1 USD")]),
            raw(3, &[(Attr::Id, "b"), (Attr::ItemGroupId, "g"), (Attr::Title, "Group"), (Attr::Price, "2 USD")]),
            raw(4, &[(Attr::Id, "a"), (Attr::Title, "Second"), (Attr::Price, "3 USD")]),
            raw(5, &[(Attr::Id, "b"), (Attr::ItemGroupId, "h"), (Attr::Title, "Moved"), (Attr::Price, "4 USD")]),
        ];
        for mut row in rows {
            builder.add(&mut row, &options);
        }
        let feed = builder.finish();
        assert_eq!(feed.rows, 4);
        assert!(feed.skipped.is_empty(), "{:?}", feed.skipped);
        let ids: Vec<&str> = feed.products.iter().map(|product| product.id.as_str()).collect();
        assert_eq!(ids, ["a", "h"]);
        assert_eq!(feed.products[0].handle.as_deref(), Some("second-a"));
        assert_eq!(feed.products[0].title, "Second");
        assert_eq!(feed.products[0].price_range.min.amount, 300);
        assert_eq!(feed.products[1].variants[0].id, "b");
    }

    #[test]
    fn handles_are_unique() {
        let options = ImportOptions::default();
        let mut builder = FeedBuilder::default();
        for (line, id) in [(2, "a_1"), (3, "a-1"), (4, "A.1")] {
            let mut row = raw(line, &[(Attr::Id, id), (Attr::Title, "Cup"), (Attr::Price, "1")]);
            builder.add(&mut row, &options);
        }
        let handles: Vec<String> = builder.finish().products.into_iter().filter_map(|product| product.handle).collect();
        assert_eq!(handles, ["cup-a-1", "cup-a-1-2", "cup-a-1-3"]);
    }

    #[test]
    fn group_rows_need_one_currency_and_a_first_title() {
        let options = ImportOptions::default();
        let mut builder = FeedBuilder::default();
        let rows = [
            raw(2, &[(Attr::Id, "a1"), (Attr::ItemGroupId, "a"), (Attr::Price, "1 USD")]),
            raw(3, &[(Attr::Id, "a2"), (Attr::ItemGroupId, "a"), (Attr::Title, "A"), (Attr::Price, "1 USD")]),
            raw(4, &[(Attr::Id, "a3"), (Attr::ItemGroupId, "a"), (Attr::Price, "1 EUR")]),
            raw(5, &[(Attr::Id, "a4"), (Attr::ItemGroupId, "a"), (Attr::Price, "2 USD"), (Attr::Size, "L")]),
        ];
        for mut row in rows {
            builder.add(&mut row, &options);
        }
        let feed = builder.finish();
        let skipped: Vec<String> = feed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].starts_with("line 2: title: "));
        assert!(skipped[1].starts_with("line 4: price: currency EUR differs"));
        let product = &feed.products[0];
        assert_eq!(product.variants.len(), 2);
        assert_eq!(product.variants[0].title, "A");
        assert_eq!(product.variants[1].title, "L");
    }
}
