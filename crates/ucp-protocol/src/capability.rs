//! The capabilities we know how to serve, each declared once: its configuration (short)
//! name, its name below a namespace, where its specification and schema live, and the
//! capabilities it extends.

/// A UCP capability. Every `match` on it is exhaustive, so a new capability does not compile
/// until every property below is declared for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    CatalogSearch,
    CatalogLookup,
    Cart,
    Checkout,
    Order,
    Fulfillment,
    Discount,
}

impl Capability {
    /// Every capability, in the order profiles list them.
    pub const ALL: [Capability; 7] = [
        Capability::CatalogSearch,
        Capability::CatalogLookup,
        Capability::Cart,
        Capability::Checkout,
        Capability::Order,
        Capability::Fulfillment,
        Capability::Discount,
    ];

    /// The name in configuration (`capabilities.enabled`): `catalog.search`.
    pub const fn short_name(self) -> &'static str {
        match self {
            Capability::CatalogSearch => "catalog.search",
            Capability::CatalogLookup => "catalog.lookup",
            Capability::Cart => "cart",
            Capability::Checkout => "checkout",
            Capability::Order => "order",
            Capability::Fulfillment => "fulfillment",
            Capability::Discount => "discount",
        }
    }

    /// The name below a namespace: `shopping.catalog.search` (full name
    /// `dev.ucp.shopping.catalog.search`).
    pub const fn suffix(self) -> &'static str {
        match self {
            Capability::CatalogSearch => "shopping.catalog.search",
            Capability::CatalogLookup => "shopping.catalog.lookup",
            Capability::Cart => "shopping.cart",
            Capability::Checkout => "shopping.checkout",
            Capability::Order => "shopping.order",
            Capability::Fulfillment => "shopping.fulfillment",
            Capability::Discount => "shopping.discount",
        }
    }

    /// Path of the specification page below `<spec base>/<version>/specification/`.
    pub const fn spec_path(self) -> &'static str {
        match self {
            Capability::CatalogSearch => "catalog/search",
            Capability::CatalogLookup => "catalog/lookup",
            Capability::Cart => "cart",
            Capability::Checkout => "checkout",
            Capability::Order => "order",
            Capability::Fulfillment => "fulfillment",
            Capability::Discount => "discount",
        }
    }

    /// Path of the schema below `<schema base>/<version>/schemas/`.
    pub const fn schema_path(self) -> &'static str {
        match self {
            Capability::CatalogSearch => "shopping/catalog_search.json",
            Capability::CatalogLookup => "shopping/catalog_lookup.json",
            Capability::Cart => "shopping/cart.json",
            Capability::Checkout => "shopping/checkout.json",
            Capability::Order => "shopping/order.json",
            Capability::Fulfillment => "shopping/fulfillment.json",
            Capability::Discount => "shopping/discount.json",
        }
    }

    /// The parents of an extension; empty for a root capability.
    pub const fn extends(self) -> &'static [Capability] {
        match self {
            Capability::CatalogSearch
            | Capability::CatalogLookup
            | Capability::Cart
            | Capability::Checkout
            | Capability::Order => &[],
            Capability::Fulfillment => &[Capability::Checkout],
            Capability::Discount => &[Capability::Checkout, Capability::Cart],
        }
    }

    /// The capability configured as `name`, if we know it.
    pub fn from_short_name(name: &str) -> Option<Capability> {
        Capability::ALL.into_iter().find(|capability| capability.short_name() == name)
    }

    /// The full name in `namespace`: `dev.ucp.shopping.cart`.
    pub fn name_in(self, namespace: &str) -> String {
        format!("{namespace}.{}", self.suffix())
    }

    /// The capabilities relevant to an operation of this capability: itself and the
    /// extensions that extend it, in [`Capability::ALL`] order.
    pub fn relevant(self) -> impl Iterator<Item = Capability> {
        Capability::ALL
            .into_iter()
            .filter(move |capability| *capability == self || capability.extends().contains(&self))
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.short_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_round_trip_and_extensions_name_known_parents() {
        for capability in Capability::ALL {
            assert_eq!(Capability::from_short_name(capability.short_name()), Some(capability));
            assert!(capability.suffix().ends_with(capability.spec_path().replace('/', ".").as_str()));
        }
        assert_eq!(Capability::from_short_name("fulfilment"), None);
        let relevant: Vec<Capability> = Capability::Checkout.relevant().collect();
        assert_eq!(relevant, [Capability::Checkout, Capability::Fulfillment, Capability::Discount]);
        let relevant: Vec<Capability> = Capability::Cart.relevant().collect();
        assert_eq!(relevant, [Capability::Cart, Capability::Discount]);
    }
}
