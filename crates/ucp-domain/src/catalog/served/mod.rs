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

use super::{Description, PriceRange, Product, ProductOption, SelectedOption, Variant};
use crate::money::Price;

mod shown;

pub use shown::Shown;

/// A product as served, shared between readers.
pub struct Served {
    /// Parsed on first use from `stored` when the store kept the product that way.
    product: OnceLock<Product>,
    /// What a view's product is made from until its rendering is made, which is then what
    /// serves it: let go then, and derived again by `derive` from the product it views if
    /// anything reads it after (a fallback path; the hot path reads the rendering alone).
    pending: Mutex<Option<Pending>>,
    derive: Option<Derive>,
    /// What a view made from an outline shows, which its rendering is cut by.
    parts: Option<ViewParts>,
    /// What the store read of the product, kept until both the product and its rendering are
    /// made (whichever comes second lets it go).
    stored: Mutex<Option<Arc<StoredDocument>>>,
    /// How the store's bytes become the product.
    parse: Option<Parse>,
    /// How the store's bytes give what get_product's default view needs of the product,
    /// without parsing it.
    outline: Option<Outliner>,
    /// For a product kept as stored: its id and what the store read of each variant, which
    /// answer without the parse ([`Served::id`], [`Served::facts`]); fixed for its life.
    stored_id: Box<str>,
    read: Arc<[StoredVariant]>,
    /// The length of the stored document it was made from, or 0.
    stored_len: usize,
    rendering: OnceLock<Box<dyn Any + Send + Sync>>,
    detail: OnceLock<Option<DefaultDetail>>,
    /// Which of the merchant's disclosures its categories name (`crate::disclosure`), found
    /// once per product, keyed by the disclosures' generation.
    disclosed: OnceLock<(u64, Box<[u32]>)>,
    /// For a view of another served product (get_product's default view): that product, whose
    /// rendering the view's can be cut from. Weak: the product holds its view.
    view_of: Weak<Served>,
}

/// The store's parse of what it kept: the product with the read's stock laid over.
pub type Parse = fn(&StoredDocument) -> Result<Product, String>;

/// How a view's product is made from the product it views ([`Served::view_of`]).
pub type Derive = fn(&Product) -> Option<Product>;

/// What get_product's default view needs of a product, read without parsing it: its options
/// and each variant's, in order (the rest of a variant, its id and availability, a served
/// product answers from what the store read: [`Served::facts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub options: Vec<ProductOption>,
    pub variants: Vec<Vec<SelectedOption>>,
}

/// The store's reading of the options of what it kept ([`Outline`]), or `None` when it cannot
/// read them without parsing the product.
pub type Outliner = fn(&StoredDocument) -> Option<Outline>;

/// What get_product's default view of a product shows, chosen from its outline
/// ([`super::default_choice`]): the product's options with their flags, and the indices of
/// the variants it shows, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewParts {
    pub options: Vec<ProductOption>,
    pub variants: Vec<usize>,
}

/// What a view's product is made from while it is pending.
enum Pending {
    /// The product itself, derived when the view was.
    Product(Box<Product>),
    /// What the store read of the product it views, and its parse: should that product be
    /// gone before the view is rendered, the view is derived from a parse of it.
    Stored(Arc<StoredDocument>, Parse),
}

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

impl<'a> Fact<'a> {
    fn read(read: &'a StoredVariant) -> Fact<'a> {
        Fact { id: &read.id, price: read.price, available: read.available }
    }

    fn of(variant: &'a Variant) -> Fact<'a> {
        Fact { id: &variant.id, price: variant.price.amount, available: variant.is_available() }
    }
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
            pending: Mutex::new(Some(Pending::Product(Box::new(product)))),
            derive: Some(derive),
            view_of: Arc::downgrade(of),
            ..Served::empty()
        }
    }

    /// A view of `of` made from its outline rather than a product: the `parts` it shows, which
    /// its rendering is cut by; its product, should anything read it, is `derive`d from `of`
    /// (or, while the view is not rendered yet and `of` is gone, from a parse of `stored`,
    /// what the store read of `of`, as [`Served::outline`] answered it: taken then, since `of`
    /// lets it go once it is parsed and rendered).
    pub fn view_parts(parts: ViewParts, of: &Arc<Served>, stored: Arc<StoredDocument>, derive: Derive) -> Served {
        let pending = of.parse.map(|parse| Pending::Stored(stored, parse));
        Served {
            stored_id: of.id().into(),
            pending: Mutex::new(pending),
            derive: Some(derive),
            parts: Some(parts),
            view_of: Arc::downgrade(of),
            ..Served::empty()
        }
    }

    /// A served product the store kept, which `outline` reads the options of without a parse.
    pub fn outlined(self, outline: Outliner) -> Served {
        Served { outline: Some(outline), ..self }
    }

    /// The outline of a product kept as stored and not parsed, when the store reads one for
    /// it: its options and each of its variants', without parsing it; with what the store
    /// read, for [`Served::view_parts`]. `None` too when what the store read of its variants
    /// does not name each once (a damaged catalog: the product is parsed instead).
    pub fn outline(&self) -> Option<(Outline, Arc<StoredDocument>)> {
        if self.product.get().is_some() {
            return None;
        }
        let (stored, outline) = (self.kept()?, self.outline?);
        let mut ids: Vec<&str> = self.read.iter().map(|read| &*read.id).collect();
        ids.sort_unstable();
        if ids.first().is_some_and(|first| first.is_empty()) || ids.windows(2).any(|pair| pair[0] == pair[1]) {
            return None;
        }
        let outline = outline(&stored).filter(|outline| outline.variants.len() == self.read.len())?;
        Some((outline, stored))
    }

    /// What a view made from an outline shows ([`Served::view_parts`]).
    pub fn parts(&self) -> Option<&ViewParts> {
        self.parts.as_ref()
    }

    /// Nothing in any slot: what the constructors fill in.
    fn empty() -> Served {
        Served {
            product: OnceLock::new(),
            pending: Mutex::new(None),
            derive: None,
            parts: None,
            stored: Mutex::new(None),
            parse: None,
            outline: None,
            stored_id: Box::default(),
            read: Arc::new([]),
            stored_len: 0,
            rendering: OnceLock::new(),
            detail: OnceLock::new(),
            disclosed: OnceLock::new(),
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
            let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(Pending::Product(product)) = pending {
                return *product;
            }
            if let Some(derive) = self.derive {
                // A view let go of once rendered (or made from an outline), read again: derived
                // again, from the product it views or, while that is pending, from what the
                // store read of it.
                let derived = self.viewed().and_then(|of| of.with_product(derive)).or_else(|| match &pending {
                    Some(Pending::Stored(stored, parse)) => parse(stored).ok().and_then(|product| derive(&product)),
                    _ => None,
                });
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
        match &self.parts {
            Some(parts) => parts.variants.len(),
            None if self.parse.is_some() => self.read.len(),
            None => self.with_product(|product| product.variants.len()),
        }
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
            if let Some(Pending::Product(product)) = pending.as_ref() {
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

    /// What `find` gives of the product for the disclosures of `generation` (the indices of
    /// those its categories name), found once and kept: read without keeping a parse
    /// ([`Served::with_product`]), so a search result shown as it is stays unparsed.
    pub fn disclosed(&self, generation: u64, find: impl FnOnce(&Product) -> Box<[u32]>) -> Box<[u32]> {
        let mut find = Some(find);
        let (kept, indices) = self.disclosed.get_or_init(|| {
            let find = find.take().expect("runs once");
            (generation, self.with_product(find))
        });
        match find {
            // Another generation's (only where two configurations share one process: tests).
            Some(find) if *kept != generation => self.with_product(find),
            _ => indices.clone(),
        }
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
            return self.read.iter().map(Fact::read).collect();
        }
        self.product().variants.iter().map(Fact::of).collect()
    }

    /// The fact of the variant at `index` alone ([`Served::facts`]).
    pub fn fact(&self, index: usize) -> Option<Fact<'_>> {
        if self.product.get().is_none() && self.parse.is_some() {
            return self.read.get(index).map(Fact::read);
        }
        self.product().variants.get(index).map(Fact::of)
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
    /// is outlined for it ([`Served::outline`]) or parsed for the derivation only
    /// ([`Served::with_product`]), and stays unparsed: the view holds what get_product shows,
    /// and the product's rendering (which the view's is cut from) comes from its stored JSON,
    /// so keeping the parse as well would hold a second copy of the product that nothing
    /// reads, the larger part of what a get_product's cache entry weighed (BENCHMARKS.md,
    /// "Where the peak RSS comes from").
    pub(crate) fn default_detail(
        &self,
        derive: impl FnOnce(&Served) -> Option<DefaultDetail>,
    ) -> Option<&DefaultDetail> {
        self.detail.get_or_init(|| derive(self)).as_ref()
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

#[cfg(test)]
mod tests;
