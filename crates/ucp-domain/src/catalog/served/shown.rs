//! The products of a catalog answer: served products narrowed to some of their variants,
//! or products the answer changed.

use std::sync::Arc;

use super::Served;
use crate::catalog::{Product, Variant};

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
