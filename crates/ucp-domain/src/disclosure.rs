//! Disclosures (checkout.md §4, catalog.md §6): notices the merchant must keep visible beside
//! the products they concern (a Proposition 65 warning, allergens, an energy label), declared
//! in configuration (`[[disclosures]]`) and sent as `warning` messages with
//! `presentation: "disclosure"`, which a platform must show near the `path` and must not hide,
//! wherever such a product is shown: each product of a catalog answer (`$.products[i]`,
//! get_product's `$.product`) and each cart and checkout line of one (`$.line_items[i]`).
//!
//! A disclosure names the products it concerns by id and by category (a category and every
//! category below it, as the search filter matches them); a product named either way gets it,
//! once however many ways. A product's categories are its own and all its variants' (taken
//! before another currency copies it with only the variants an answer shows); a cart or
//! checkout line's are its product's and its own variant's.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::catalog::{Product, Served, Shown, category_key, category_paths};
use crate::checkout::{Message, WarningDisplay};
use crate::store::{CatalogStore, StoreError};

/// One notice and the products it concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disclosure {
    /// The warning's `code` (`prop65`, `allergens`, `energy_label`, or the merchant's own).
    pub code: String,
    /// The text the platform must display.
    pub content: String,
    /// How it is displayed: markdown or plain, and the image and reference URLs.
    pub display: WarningDisplay,
    /// Product ids it concerns.
    pub product_ids: Vec<String>,
    /// Categories it concerns, with everything below them.
    pub categories: Vec<String>,
}

/// The merchant's disclosures, indexed by product id and category path, so a product shown
/// costs a lookup per id and category path rather than a pass over every disclosure.
#[derive(Debug, Clone, Default)]
pub struct Disclosures {
    notices: Vec<(String, String, Arc<WarningDisplay>)>,
    by_product: HashMap<String, Vec<u32>>,
    /// Keys in the form [`category_key`] gives.
    by_category: HashMap<String, Vec<u32>>,
    /// Tells these disclosures from any other set in the process, for what a served product
    /// keeps of them ([`Served::disclosed`]).
    generation: u64,
}

/// Most disclosures one product or line carries, the first in declaration order: an answer's
/// size stays bounded by its products and lines, however the declarations overlap.
pub const MAX_PER_PRODUCT: usize = 8;

/// The next [`Disclosures::generation`].
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

impl Disclosures {
    /// At most `u32::MAX` disclosures are indexed (the configuration allows a few hundred).
    pub fn new(disclosures: impl IntoIterator<Item = Disclosure>) -> Disclosures {
        let mut index = Disclosures { generation: GENERATIONS.fetch_add(1, Ordering::Relaxed), ..Default::default() };
        for (at, disclosure) in disclosures.into_iter().enumerate() {
            let Ok(at) = u32::try_from(at) else { break };
            for id in disclosure.product_ids {
                index.by_product.entry(id).or_default().push(at);
            }
            for category in disclosure.categories {
                index.by_category.entry(category_key(&category)).or_default().push(at);
            }
            index.notices.push((disclosure.code, disclosure.content, Arc::new(disclosure.display)));
        }
        index
    }

    pub fn is_empty(&self) -> bool {
        self.notices.is_empty()
    }

    /// What is amiss with the product ids the disclosures name, against `catalog` as it is
    /// now, one sentence each for the log: an id that names no product, or one that names a
    /// variant (a disclosure names products by their own id, so it never matches).
    pub async fn unmatched(&self, catalog: &dyn CatalogStore) -> Result<Vec<String>, StoreError> {
        let mut ids: Vec<String> = self.by_product.keys().cloned().collect();
        ids.sort_unstable();
        let resolutions = catalog.resolve(&ids).await?;
        let mut problems = Vec::new();
        let mut by_input: HashMap<&str, Vec<&str>> = HashMap::new();
        for resolution in &resolutions {
            by_input.entry(resolution.input.as_str()).or_default().push(resolution.product_id.as_str());
        }
        for id in &ids {
            // A product's own id, though it may also be another product's handle.
            match by_input.get(id.as_str()) {
                None => problems.push(format!("disclosures name product {id:?}, which the catalog does not hold")),
                Some(named) if !named.contains(&id.as_str()) => problems.push(format!(
                    "disclosures name {id:?}, which is not a product id but names product {:?}: name that instead",
                    named[0]
                )),
                Some(_) => {}
            }
        }
        Ok(problems)
    }

    /// Adds the warnings for a cart or checkout line of the product `id`, whose item has
    /// `categories` (read only when some disclosure names a category), each at `path`.
    pub fn warn<'a>(
        &self,
        id: &str,
        categories: impl IntoIterator<Item = &'a str>,
        path: impl FnOnce() -> String,
        out: &mut Vec<Message>,
    ) {
        if self.is_empty() {
            return;
        }
        let by_category = if self.by_category.is_empty() { Box::default() } else { self.naming(categories) };
        self.emit(id, &by_category, path, out);
    }

    /// [`Disclosures::warn`] for a product of a catalog answer (before another currency
    /// changes it, so all its variants count, as for a served product).
    pub fn warn_shown(&self, shown: &Shown, path: impl FnOnce() -> String, out: &mut Vec<Message>) {
        match shown {
            Shown::Served { served, .. } => self.warn_served(served, path, out),
            Shown::Changed(product) => self.warn(&product.id, categories_of(product), path, out),
        }
    }

    /// [`Disclosures::warn`] for a served product: its id without parsing it, and which
    /// disclosures its categories name found once per product and kept with it, without
    /// keeping a parse ([`Served::disclosed`]).
    pub fn warn_served(&self, served: &Served, path: impl FnOnce() -> String, out: &mut Vec<Message>) {
        if self.is_empty() {
            return;
        }
        let by_category = if self.by_category.is_empty() {
            Box::default()
        } else {
            served.disclosed(self.generation, |product| self.naming(categories_of(product)))
        };
        self.emit(served.id(), &by_category, path, out);
    }

    /// The disclosures that name one of `categories` or a category above it, in order.
    fn naming<'a>(&self, categories: impl IntoIterator<Item = &'a str>) -> Box<[u32]> {
        let mut found: Vec<u32> = Vec::new();
        for category in categories {
            for key in category_paths(category) {
                found.extend(self.by_category.get(&key).into_iter().flatten());
            }
        }
        found.sort_unstable();
        found.dedup();
        found.into()
    }

    /// One warning per disclosure that names `id` or is in `by_category`, in declaration
    /// order and at most [`MAX_PER_PRODUCT`], at `path` (made only when there is one).
    fn emit(&self, id: &str, by_category: &[u32], path: impl FnOnce() -> String, out: &mut Vec<Message>) {
        let by_id = self.by_product.get(id).map_or(&[][..], Vec::as_slice);
        if by_id.is_empty() && by_category.is_empty() {
            return;
        }
        let mut found: Vec<u32> = by_id.iter().chain(by_category).copied().collect();
        found.sort_unstable();
        found.dedup();
        found.truncate(MAX_PER_PRODUCT);
        let path = path();
        for at in found {
            let (code, content, display) = &self.notices[at as usize];
            out.push(Message::disclosure(code, content, Arc::clone(display), path.clone()));
        }
    }
}

/// A product's categories and its variants'.
fn categories_of(product: &Product) -> impl Iterator<Item = &str> {
    product
        .categories
        .iter()
        .chain(product.variants.iter().flat_map(|variant| &variant.categories))
        .map(|category| category.value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disclosure(code: &str, ids: &[&str], categories: &[&str]) -> Disclosure {
        Disclosure {
            code: code.into(),
            content: format!("{code} notice"),
            display: WarningDisplay::default(),
            product_ids: ids.iter().map(|id| id.to_string()).collect(),
            categories: categories.iter().map(|category| category.to_string()).collect(),
        }
    }

    fn codes(disclosures: &Disclosures, id: &str, categories: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        disclosures.warn(id, categories.iter().copied(), || "$.product".into(), &mut out);
        assert!(out.iter().all(|message| message.path.as_deref() == Some("$.product")));
        out.into_iter().map(|message| message.code).collect()
    }

    #[test]
    fn a_product_gets_each_disclosure_that_names_it_once_in_declaration_order() {
        let disclosures = Disclosures::new([
            disclosure("prop65", &["mug"], &[]),
            disclosure("allergens", &["cookie"], &["Food > Baked Goods"]),
            disclosure("energy_label", &[], &["Electronics"]),
        ]);
        assert_eq!(codes(&disclosures, "mug", &[]), ["prop65"]);
        // By id and by category: once.
        assert_eq!(codes(&disclosures, "cookie", &["food > baked goods > Cookies"]), ["allergens"]);
        // A category below the named one, case and spacing aside.
        assert_eq!(codes(&disclosures, "bread", &["FOOD>Baked Goods>Bread"]), ["allergens"]);
        assert_eq!(codes(&disclosures, "mug", &["Electronics > Kettles", "Food"]), ["prop65", "energy_label"]);
        // A parent of the named category, or a name that only starts the same, is not it.
        assert!(codes(&disclosures, "flour", &["Food"]).is_empty());
        assert!(codes(&disclosures, "x", &["Electronics Accessories"]).is_empty());
        assert!(codes(&Disclosures::default(), "mug", &["Electronics"]).is_empty());
        // However many name a product, it carries the first few.
        let many = Disclosures::new((0..20).map(|at| disclosure(&format!("d{at:02}"), &["mug"], &["Home"])));
        let first: Vec<String> = (0..MAX_PER_PRODUCT).map(|at| format!("d{at:02}")).collect();
        assert_eq!(codes(&many, "mug", &["Home > Kitchen"]), first);
    }

    // A served product is read for its categories once, and only when a disclosure names a
    // category; with ids alone it is never parsed.
    #[test]
    fn a_served_product_is_read_for_its_categories_once_and_never_parsed_for_ids() {
        use crate::catalog::{Served, StoredDocument};

        fn parse(stored: &StoredDocument) -> Result<Product, String> {
            PARSES.fetch_add(1, Ordering::Relaxed);
            serde_json::from_slice(&stored.doc).map_err(|error| error.to_string())
        }
        static PARSES: AtomicU64 = AtomicU64::new(0);
        let product = serde_json::json!({
            "id": "mug", "title": "Mug", "description": { "plain": "A mug" },
            "categories": [{ "value": "Home & Garden > Kitchen" }],
            "price_range": { "min": { "amount": 1500, "currency": "USD" }, "max": { "amount": 1500, "currency": "USD" } },
            "variants": [{ "id": "mug-1", "title": "Mug", "description": { "plain": "Mug" },
                           "price": { "amount": 1500, "currency": "USD" } }]
        });
        let stored = StoredDocument {
            id: "mug".into(),
            doc: serde_json::to_vec(&product).unwrap().into(),
            cuts: Box::default(),
            variants: Arc::new([]),
        };
        let served = Served::stored(stored, parse);
        let by_id = Disclosures::new([disclosure("prop65", &["mug"], &[])]);
        let mut out = Vec::new();
        by_id.warn_served(&served, || "$.products[0]".into(), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].disclosure.as_deref(), Some(&WarningDisplay::default()));
        assert_eq!(PARSES.load(Ordering::Relaxed), 0);
        let by_category = Disclosures::new([disclosure("care", &[], &["home & garden"])]);
        for _ in 0..3 {
            by_category.warn_served(&served, || "$.products[0]".into(), &mut out);
        }
        assert_eq!(out.len(), 4);
        assert_eq!(PARSES.load(Ordering::Relaxed), 1);
        assert!(!served.is_parsed(), "the parse is not kept");
    }
}
