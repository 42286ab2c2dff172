//! The in-memory import the staged one replaced (Merchant Center grouping and JSON lines),
//! kept as the reference the staged one is checked against: the same feed must give the same
//! products and skipped rows.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;

use ucp_domain::catalog::{InvalidProduct, Product};

use super::jsonl::parse_product;
use super::product::{build_product, variant_index_of};
use super::row::{Attr, RawItem, Row, parse_row};
use super::{FeedError, FeedLine, FeedLines, ImportOptions, PROGRESS_EVERY, ParsedFeed, RowWarning, SkippedRow};

/// The rows of one product so far. Replaced rows leave a `None` so indexes stay valid.
struct Group {
    id: String,
    rows: Vec<Option<Row>>,
    /// Rows present.
    live: usize,
    /// Rows present that have a title.
    titled: usize,
}

/// Collects rows into products: groups by product id, replaces rows whose id repeats.
#[derive(Default)]
pub(super) struct ReferenceBuilder {
    groups: Vec<Group>,
    group_index: HashMap<String, usize>,
    /// Variant id to (group, slot).
    variant_index: HashMap<String, (usize, usize)>,
    skipped: Vec<SkippedRow>,
    warnings: Vec<RowWarning>,
    rows: u64,
}

impl ReferenceBuilder {
    /// Takes one row; the raw item is left empty for reuse.
    pub(super) fn add(&mut self, raw: &mut RawItem, options: &ImportOptions) {
        self.rows += 1;
        let mut warnings = Vec::new();
        match parse_row(raw, options, &mut warnings) {
            Ok(row) => match self.insert(row) {
                Ok(()) => self.warnings.append(&mut warnings),
                Err(skipped) => self.skipped.push(skipped),
            },
            Err(skipped) => self.skipped.push(skipped),
        }
    }

    fn insert(&mut self, row: Row) -> Result<(), SkippedRow> {
        let group_at = match self.group_index.get(&row.product_id) {
            Some(index) => *index,
            None => {
                self.groups.push(Group { id: row.product_id.clone(), rows: Vec::new(), live: 0, titled: 0 });
                self.group_index.insert(row.product_id.clone(), self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let previous = self.variant_index.get(&row.variant.id).copied();
        // One product's id may not be another product's variant id: the row's id may not be
        // a product keeping other rows, nor its product, new now, the id of another's row.
        if row.product_id != row.variant.id {
            if let Some(&named) = self.group_index.get(&row.variant.id) {
                let moved = previous.is_some_and(|(previous_group, _)| previous_group == named);
                if self.groups[named].live > usize::from(moved) {
                    return Err(SkippedRow::new(
                        row.line,
                        Attr::Id.name(),
                        format!("{:?} is already the id of another product", row.variant.id),
                    ));
                }
            }
            if self.groups[group_at].live == 0
                && let Some(&(holder, _)) = self.variant_index.get(&row.product_id)
            {
                return Err(SkippedRow::new(
                    row.line,
                    Attr::ItemGroupId.name(),
                    format!(
                        "product id {:?} is already the id of an item of product {:?}",
                        row.product_id, self.groups[holder].id
                    ),
                ));
            }
        }
        let group = &self.groups[group_at];
        // What the group holds with a title besides the row this one replaces.
        let mut titled_others = group.titled;
        if let Some((previous_group, previous_slot)) = previous
            && previous_group == group_at
            && let Some(replaced) = &group.rows[previous_slot]
        {
            titled_others -= usize::from(replaced.title.is_some());
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
        let ReferenceBuilder { groups, mut skipped, mut warnings, rows, .. } = self;
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
        warnings.sort_by_key(|warning| warning.line);
        ParsedFeed { products, rows, skipped, warnings }
    }
}

/// JSON lines read whole into memory.
pub(super) fn reference_jsonl(
    reader: impl BufRead,
    options: &ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ParsedFeed, FeedError> {
    let mut feed = ParsedFeed::default();
    // Product id to index in `feed.products`; variant id to the product id that holds it.
    let mut product_index: HashMap<String, usize> = HashMap::new();
    let mut variant_owner: HashMap<String, String> = HashMap::new();
    let mut lines = FeedLines::new(reader);
    let mut bytes = 0u64;
    while let Some(FeedLine { number, bytes: read, content }) = lines.next_line()? {
        bytes = read;
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        feed.rows += 1;
        if feed.rows.is_multiple_of(PROGRESS_EVERY) {
            progress(bytes);
        }
        let product = match parse_product(content, number, &options.currency) {
            Ok(product) => product,
            Err(skipped) => {
                feed.skipped.push(skipped);
                continue;
            }
        };
        // A product id seen again replaces the earlier product; a variant id must not belong
        // to another product, nor be another product's id.
        let clash = match variant_owner.get(&product.id).filter(|owner| **owner != product.id) {
            Some(owner) => Some(SkippedRow::new(
                number,
                "id",
                format!("product id {:?} already belongs to a variant of product {owner:?}", product.id),
            )),
            None => product.variants.iter().enumerate().find_map(|(index, variant)| {
                let field = format!("variants[{index}].id");
                match variant_owner.get(&variant.id).filter(|owner| **owner != product.id) {
                    Some(owner) => Some(SkippedRow::new(
                        number,
                        field,
                        format!("variant id {:?} already belongs to product {owner:?}", variant.id),
                    )),
                    None if variant.id != product.id && product_index.contains_key(&variant.id) => {
                        Some(SkippedRow::new(
                            number,
                            field,
                            format!("variant id {:?} is already the id of another product", variant.id),
                        ))
                    }
                    None => None,
                }
            }),
        };
        if let Some(skipped) = clash {
            feed.skipped.push(skipped);
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
