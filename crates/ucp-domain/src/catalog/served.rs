//! Products as the store serves them, shared rather than copied per read, and the products
//! of a catalog answer as views of them.
//!
//! A [`Served`] product is what the store's read cache holds: the document with its live
//! stock laid over, and (when the store kept them) the document's bytes and cuts, from which
//! the transport makes its JSON ([`StoredDocument`], [`ProductJson`]) instead of serializing
//! it. Readers share it behind an `Arc`. It carries two slots filled on first use
//! and dropped with it (so whatever drops the product, a stock change or an import, drops them
//! too): the transport's rendering of it, opaque here, and get_product's default view of it.
//! A [`Shown`] product is one product of an answer: a served product narrowed to some of its
//! variants (search results, lookup matches) with nothing copied, or a product the answer had
//! to change (prices in another currency, get_product's selections).

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use super::{Product, SelectedOption, Variant};

/// A product as served, shared between readers.
pub struct Served {
    product: Product,
    /// Taken by the first rendering (a product only get_product shows is never rendered
    /// itself, and pays nothing for it).
    stored: Mutex<Option<StoredDocument>>,
    rendering: OnceLock<Box<dyn Any + Send + Sync>>,
    detail: OnceLock<Option<DefaultDetail>>,
    /// For a view of another served product (get_product's default view): that product, whose
    /// rendering the view's can be cut from. Weak: the product holds its view.
    view_of: Weak<Served>,
}

/// What the store read of a product's rendering: the stored document's JSON (the product's,
/// but for the availability the stock of this read may change) and its cuts, opaque here.
pub struct StoredDocument {
    pub doc: Vec<u8>,
    pub cuts: Box<[u8]>,
}

/// A served product's JSON: the bytes `serde_json::to_vec` writes for it, with where the
/// elements of its `variants` array sit. The transport makes it from a [`StoredDocument`], so
/// it copies the stored bytes instead of serializing the product.
pub struct ProductJson {
    pub bytes: Box<[u8]>,
    /// The members before `variants`: `bytes[..before]`, without the comma before them.
    pub before: usize,
    /// Each variant, in order.
    pub variants: Box<[Range<usize>]>,
    /// The members after the variants, each with its leading comma, and the closing brace:
    /// `bytes[after..]`.
    pub after: usize,
}

/// get_product's answer for a request that names the product and nothing else (no
/// selection, no variant, no price filter): derived once per served product.
#[derive(Debug, Clone)]
pub struct DefaultDetail {
    pub product: Arc<Served>,
    pub selected: Vec<SelectedOption>,
}

impl Served {
    pub fn new(product: Product) -> Served {
        Served {
            product,
            stored: Mutex::new(None),
            rendering: OnceLock::new(),
            detail: OnceLock::new(),
            view_of: Weak::new(),
        }
    }

    /// A view of `of` (the same members but for its options' flags, and some of its variants,
    /// unchanged): its rendering may then be cut from the rendering of `of`.
    pub fn view_of(product: Product, of: &Arc<Served>) -> Served {
        Served { view_of: Arc::downgrade(of), ..Served::new(product) }
    }

    /// The served product this one is a view of, while it is served.
    pub fn viewed(&self) -> Option<Arc<Served>> {
        self.view_of.upgrade()
    }

    /// Whether the product's rendering is made, or the store kept what makes it without
    /// serializing: a view of it is then best cut from it.
    pub fn is_rendered_cheaply(&self) -> bool {
        self.rendering.get().is_some() || self.stored.lock().unwrap_or_else(PoisonError::into_inner).is_some()
    }

    /// A served product with what the store read of its rendering.
    pub fn with_stored(product: Product, stored: StoredDocument) -> Served {
        Served { stored: Mutex::new(Some(stored)), ..Served::new(product) }
    }

    pub fn product(&self) -> &Product {
        &self.product
    }

    /// What the store read of the product's rendering, once: for the rendering to take.
    pub fn take_stored(&self) -> Option<StoredDocument> {
        self.stored.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// The transport's rendering of this product, made by `render` on first use. `None` when
    /// the slot already holds a rendering of another type (one transport renders products
    /// one way, so that does not happen in the server).
    pub fn rendering<T: Any + Send + Sync>(&self, render: impl FnOnce(&Product) -> T) -> Option<&T> {
        self.rendering.get_or_init(|| Box::new(render(&self.product))).downcast_ref()
    }

    /// get_product's default view, derived by `derive` on first use.
    pub(crate) fn default_detail(
        &self,
        derive: impl FnOnce(&Product) -> Option<DefaultDetail>,
    ) -> Option<&DefaultDetail> {
        self.detail.get_or_init(|| derive(&self.product)).as_ref()
    }
}

impl std::ops::Deref for Served {
    type Target = Product;

    fn deref(&self) -> &Product {
        &self.product
    }
}

impl fmt::Debug for Served {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("Served").field("product", &self.product).finish_non_exhaustive()
    }
}

/// One product of a catalog answer.
#[derive(Debug, Clone)]
pub enum Shown {
    /// A served product as it is, but for which of its variants show and in what order:
    /// indices into its variants, or all of them in order when `None`.
    Served { served: Arc<Served>, variants: Option<Vec<usize>> },
    /// A product the answer changed.
    Changed(Box<Product>),
}

impl Shown {
    pub fn whole(served: Arc<Served>) -> Shown {
        Shown::Served { served, variants: None }
    }

    /// The variants that show, in order.
    pub fn variants(&self) -> Vec<&Variant> {
        match self {
            Shown::Served { served, variants: None } => served.product.variants.iter().collect(),
            Shown::Served { served, variants: Some(picked) } => {
                picked.iter().filter_map(|index| served.product.variants.get(*index)).collect()
            }
            Shown::Changed(product) => product.variants.iter().collect(),
        }
    }

    /// The product as it shows: a copy for a served product.
    pub fn to_product(&self) -> Product {
        match self {
            Shown::Served { served, variants: None } => served.product.clone(),
            Shown::Served { served, variants: Some(_) } => {
                let mut product = served.product.clone_without_variants();
                product.variants = self.variants().into_iter().cloned().collect();
                product
            }
            Shown::Changed(product) => Product::clone(product),
        }
    }

    /// The product as it shows, to change it: a served product becomes a copy.
    pub fn make_changed(&mut self) -> &mut Product {
        if let Shown::Served { .. } = self {
            *self = Shown::Changed(Box::new(self.to_product()));
        }
        match self {
            Shown::Changed(product) => product,
            Shown::Served { .. } => unreachable!("just replaced"),
        }
    }
}

impl Product {
    /// A copy of everything but the variants (left empty).
    pub fn clone_without_variants(&self) -> Product {
        Product {
            id: self.id.clone(),
            handle: self.handle.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            url: self.url.clone(),
            categories: self.categories.clone(),
            price_range: self.price_range.clone(),
            list_price_range: self.list_price_range.clone(),
            media: self.media.clone(),
            options: self.options.clone(),
            variants: Vec::new(),
            rating: self.rating.clone(),
            tags: self.tags.clone(),
            metadata: self.metadata.clone(),
        }
    }
}

impl serde::Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Shown::Served { served, variants: None } => served.product.serialize(serializer),
            Shown::Served { .. } => self.to_product().serialize(serializer),
            Shown::Changed(product) => product.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Description;
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
            served.default_detail(|product| {
                derived += 1;
                Some(DefaultDetail { product: Arc::new(Served::new(product.clone())), selected: Vec::new() })
            });
        }
        assert_eq!(derived, 1);
    }
}
