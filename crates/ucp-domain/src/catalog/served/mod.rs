//! Products as the store serves them, shared rather than copied per read, and the products
//! of a catalog answer as views of them.
//!
//! A [`Served`] product is what the store's read cache holds: the document with its live
//! stock laid over, and (when the store kept them) the document's bytes and cuts, from which
//! the transport makes its JSON ([`StoredDocument`], [`ProductJson`]) instead of serializing
//! it. Readers share it behind an `Arc`. A product the store kept that way is parsed only when
//! something reads it ([`Served::product`]): a search result that shows the product as it is
//! only splices its stored JSON, and never pays for the parse. It carries two slots filled on
//! first use and dropped with it (so whatever drops the product, a stock change or an import,
//! drops them too): the transport's rendering of it, opaque here, and get_product's default
//! view of it.
//! A [`Shown`] product is one product of an answer: a served product narrowed to some of its
//! variants (search results, lookup matches) with nothing copied, or a product the answer had
//! to change (prices in another currency, get_product's selections).

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use super::{Description, PriceRange, Product, SelectedOption, Variant};
use crate::money::Price;

/// A product as served, shared between readers.
pub struct Served {
    /// Parsed on first use from `stored` when the store kept the product that way.
    product: OnceLock<Product>,
    /// A view's product until its rendering is made, which is then what serves it: let go
    /// then, and derived again by `derive` from the product it views if anything reads it
    /// after (a fallback path; the hot path reads the rendering alone).
    pending: Mutex<Option<Box<Product>>>,
    derive: Option<Derive>,
    /// What the store read of the product, kept until both the product and its rendering are
    /// made (whichever comes second lets it go).
    stored: Mutex<Option<Arc<StoredDocument>>>,
    /// How the store's bytes become the product.
    parse: Option<Parse>,
    /// For a product kept as stored: its id and what the store read of each variant, which
    /// answer without the parse ([`Served::id`], [`Served::facts`]); fixed for its life.
    stored_id: Box<str>,
    read: Arc<[StoredVariant]>,
    /// The length of the stored document it was made from, or 0.
    stored_len: usize,
    rendering: OnceLock<Box<dyn Any + Send + Sync>>,
    detail: OnceLock<Option<DefaultDetail>>,
    /// For a view of another served product (get_product's default view): that product, whose
    /// rendering the view's can be cut from. Weak: the product holds its view.
    view_of: Weak<Served>,
}

/// The store's parse of what it kept: the product with the read's stock laid over.
pub type Parse = fn(&StoredDocument) -> Result<Product, String>;

/// How a view's product is made from the product it views ([`Served::view_of`]).
pub type Derive = fn(&Product) -> Option<Product>;

/// What the store read of a product: the stored document's JSON (the product's, but for the
/// availability the stock of this read may change), its cuts (opaque here), and the stock of
/// each variant in this read, in the document's order.
pub struct StoredDocument {
    pub id: Box<str>,
    pub doc: Box<[u8]>,
    pub cuts: Box<[u8]>,
    /// Each variant as this read found it, in the document's order.
    pub variants: Arc<[StoredVariant]>,
}

/// What the store read of a variant beside its document: enough to pick a search result's
/// variants, or a lookup's, without parsing the product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredVariant {
    pub id: Box<str>,
    /// Units on hand; `None` where stock is not tracked.
    pub stock: Option<i64>,
    /// Its price's amount, in the catalog's currency's minor units.
    pub price: i64,
    /// What `Variant::is_available` answers for it once its stock is laid over.
    pub available: bool,
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

/// What a catalog answer needs of a variant to pick it: its id, its price's amount (in the
/// catalog's currency) and whether it is available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fact<'a> {
    pub id: &'a str,
    pub price: i64,
    pub available: bool,
}

/// get_product's answer for a request that names the product and nothing else (no
/// selection, no variant, no price filter): derived once per served product.
#[derive(Debug, Clone)]
pub struct DefaultDetail {
    pub product: Arc<Served>,
    pub selected: Vec<SelectedOption>,
    /// Whether the view has options: read on every call, so kept here rather than read from
    /// the view's product, which is let go once rendered.
    pub has_options: bool,
}

impl Served {
    pub fn new(product: Product) -> Served {
        Served { product: OnceLock::from(product), ..Served::empty() }
    }

    /// A served product the store kept as `stored`, parsed by `parse` when first read.
    pub fn stored(stored: StoredDocument, parse: Parse) -> Served {
        Served {
            stored_len: stored.doc.len(),
            stored_id: stored.id.clone(),
            read: Arc::clone(&stored.variants),
            stored: Mutex::new(Some(Arc::new(stored))),
            parse: Some(parse),
            ..Served::empty()
        }
    }

    /// A view of `of` (the same members but for its options' flags, and some of its variants,
    /// unchanged), `derive`d from it as `product`: its rendering may then be cut from the
    /// rendering of `of`. It keeps `product` until its rendering is made.
    pub fn view_of(product: Product, of: &Arc<Served>, derive: Derive) -> Served {
        Served {
            stored_id: product.id.as_str().into(),
            pending: Mutex::new(Some(Box::new(product))),
            derive: Some(derive),
            view_of: Arc::downgrade(of),
            ..Served::empty()
        }
    }

    /// Nothing in any slot: what the constructors fill in.
    fn empty() -> Served {
        Served {
            product: OnceLock::new(),
            pending: Mutex::new(None),
            derive: None,
            stored: Mutex::new(None),
            parse: None,
            stored_id: Box::default(),
            read: Arc::new([]),
            stored_len: 0,
            rendering: OnceLock::new(),
            detail: OnceLock::new(),
            view_of: Weak::new(),
        }
    }

    /// The served product this one is a view of, while it is served.
    pub fn viewed(&self) -> Option<Arc<Served>> {
        self.view_of.upgrade()
    }

    /// Whether the product's rendering is made, or the store kept what makes it without
    /// serializing: a view of it is then best cut from it.
    pub fn is_rendered_cheaply(&self) -> bool {
        self.rendering.get().is_some() || self.kept().is_some()
    }

    /// The product, parsed from what the store kept on first use. A stored document that does
    /// not parse (the database was damaged behind our back: it was written by this release's
    /// serializer, or its cuts would not be of this release) serves as a product with no
    /// variants, which nothing can show or buy, and is logged.
    pub fn product(&self) -> &Product {
        self.product.get_or_init(|| {
            if let Some(pending) = self.pending.lock().unwrap_or_else(PoisonError::into_inner).take() {
                return *pending;
            }
            if let Some(derive) = self.derive {
                // A view let go of once rendered, read again: derived again.
                let derived = self.viewed().and_then(|of| of.with_product(derive));
                return derived.unwrap_or_else(|| {
                    tracing::error!(product = %self.stored_id, "a view outlived its product; served without variants");
                    Product::unreadable(&self.stored_id)
                });
            }
            let kept = self.kept();
            let parsed = match (&kept, self.parse) {
                (Some(stored), Some(parse)) => parse(stored).map_err(|error| (stored.id.to_string(), error)),
                _ => Err((String::new(), "nothing kept to parse".to_owned())),
            };
            let product = parsed.unwrap_or_else(|(id, error)| {
                tracing::error!(product = %id, %error, "a stored product does not parse; served without variants");
                Product::unreadable(&id)
            });
            if self.rendering.get().is_some() {
                self.release();
            }
            product
        })
    }

    /// Whether the product was parsed (or never needed to be).
    pub fn is_parsed(&self) -> bool {
        self.product.get().is_some()
    }

    /// How many variants the product has, without parsing it (as read: fixed for the served
    /// product's life, so the cache can weigh by it).
    pub fn variant_count(&self) -> usize {
        if self.parse.is_some() { self.read.len() } else { self.with_product(|product| product.variants.len()) }
    }

    /// `read` of the product, without keeping a parse or a view's product for it: the parsed
    /// product when there is one, a view's product while it has it, and otherwise a parse
    /// (or derivation) made for `read` alone.
    pub fn with_product<R>(&self, read: impl FnOnce(&Product) -> R) -> R {
        if let Some(product) = self.product.get() {
            return read(product);
        }
        {
            let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(product) = pending.as_deref() {
                return read(product);
            }
        }
        if let (Some(stored), Some(parse)) = (self.kept(), self.parse)
            && let Ok(product) = parse(&stored)
        {
            return read(&product);
        }
        read(self.product())
    }

    /// The length of the stored document a product kept as stored was made from (whether or
    /// not it was parsed since); `None` for a product made parsed.
    pub fn stored_len(&self) -> Option<usize> {
        (self.stored_len > 0).then_some(self.stored_len)
    }

    /// The product's id, without parsing it.
    pub fn id(&self) -> &str {
        match self.product.get() {
            Some(product) => &product.id,
            None => &self.stored_id,
        }
    }

    /// Each variant's id, price amount and availability, in order, without parsing the product
    /// when the store read them beside its document.
    pub fn facts(&self) -> Vec<Fact<'_>> {
        if self.product.get().is_none() && self.parse.is_some() {
            return (self.read.iter())
                .map(|read| Fact { id: &read.id, price: read.price, available: read.available })
                .collect();
        }
        (self.product().variants.iter())
            .map(|variant| Fact { id: &variant.id, price: variant.price.amount, available: variant.is_available() })
            .collect()
    }

    /// What the store read of the product, while the product or its rendering still needs it.
    pub fn kept(&self) -> Option<Arc<StoredDocument>> {
        self.stored.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    fn release(&self) {
        self.stored.lock().unwrap_or_else(PoisonError::into_inner).take();
    }

    /// The transport's rendering of this product, made by `render` on first use. `None` when
    /// the slot already holds a rendering of another type (one transport renders products
    /// one way, so that does not happen in the server).
    pub fn rendering<T: Any + Send + Sync>(&self, render: impl FnOnce(&Served) -> T) -> Option<&T> {
        let mut made = false;
        let rendering = self.rendering.get_or_init(|| {
            made = true;
            Box::new(render(self))
        });
        if made && self.product.get().is_some() {
            self.release();
        }
        if made && self.derive.is_some() {
            self.pending.lock().unwrap_or_else(PoisonError::into_inner).take();
        }
        rendering.downcast_ref()
    }

    /// get_product's default view, derived by `derive` on first use. A product kept as stored
    /// is parsed for the derivation only, and stays unparsed: the view holds what get_product
    /// shows, and the product's rendering (which the view's is cut from) comes from its stored
    /// JSON, so keeping the parse as well would hold a second copy of the product that nothing
    /// reads, the larger part of what a get_product's cache entry weighed (BENCHMARKS.md,
    /// "Where the peak RSS comes from").
    pub(crate) fn default_detail(
        &self,
        derive: impl FnOnce(&Product) -> Option<DefaultDetail>,
    ) -> Option<&DefaultDetail> {
        self.detail.get_or_init(|| self.with_product(derive)).as_ref()
    }
}

impl Product {
    /// What serves in place of a stored product that does not parse: its id, and nothing to
    /// show or buy.
    fn unreadable(id: &str) -> Product {
        let nothing = Price::new(0, String::new());
        Product {
            id: id.to_owned(),
            handle: None,
            title: String::new(),
            description: Description::plain(""),
            url: None,
            categories: Vec::new(),
            price_range: PriceRange { min: nothing.clone(), max: nothing },
            list_price_range: None,
            media: Vec::new(),
            options: Vec::new(),
            variants: Vec::new(),
            rating: None,
            tags: Vec::new(),
            metadata: None,
        }
    }
}

impl std::ops::Deref for Served {
    type Target = Product;

    fn deref(&self) -> &Product {
        self.product()
    }
}

impl fmt::Debug for Served {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("Served").field("product", &self.product.get()).finish_non_exhaustive()
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
            Shown::Served { served, variants: None } => served.product().variants.iter().collect(),
            Shown::Served { served, variants: Some(picked) } => {
                picked.iter().filter_map(|index| served.product().variants.get(*index)).collect()
            }
            Shown::Changed(product) => product.variants.iter().collect(),
        }
    }

    /// The product as it shows: a copy for a served product.
    pub fn to_product(&self) -> Product {
        match self {
            Shown::Served { served, variants: None } => served.product().clone(),
            Shown::Served { served, variants: Some(_) } => {
                let mut product = served.product().clone_without_variants();
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
            Shown::Served { served, variants: None } => served.product().serialize(serializer),
            Shown::Served { .. } => self.to_product().serialize(serializer),
            Shown::Changed(product) => product.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests;
