//! The shape of the demo vocabulary (departments, brands, product kinds, option axes) and
//! the few word lists that are not tied to one department. The departments themselves live
//! in `departments/`.

/// How the titles of one kind are put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TitleStyle {
    /// "{Brand} {Audience} {Adjective} {Material} {Style} {Noun}", each middle part optional:
    /// "Trailblazer Men's Waterproof Mesh Trail Running Shoes".
    Branded,
    /// Non-fiction books: "{Opening} {Topic} {Noun}", the opening drawn from `adjectives` and
    /// the topic from `styles`: "The Essential Sourdough Cookbook".
    Guide,
    /// Fiction: "The {First} {Second}: A {Genre} {Noun}", the genre drawn from `styles`:
    /// "The Silent Harbor: A Mystery Novel".
    Fiction,
}

/// One option axis ("Color", "Size", "Storage") and the values a product may offer on it.
#[derive(Debug)]
pub(super) struct Axis {
    pub(super) name: &'static str,
    pub(super) values: &'static [&'static str],
    /// Percent added to the product's base price for each value, index for index; empty when
    /// the axis leaves the price alone.
    pub(super) premiums: &'static [u32],
    /// Whether the values form a scale (sizes, capacities) that a product offers as one
    /// contiguous run, rather than a palette it picks a few from.
    pub(super) ordered: bool,
}

#[derive(Debug)]
pub(super) struct Brand {
    pub(super) name: &'static str,
    /// Two upper-case letters that start every SKU of the brand.
    pub(super) code: &'static str,
}

/// A product type ("Running Shoes") and everything needed to dress one up.
#[derive(Debug)]
pub(super) struct Kind {
    /// The head noun of the title, in title case. A noun ending in a single `s` is plural.
    pub(super) noun: &'static str,
    /// Three upper-case letters, the middle of the SKU.
    pub(super) code: &'static str,
    pub(super) title: TitleStyle,
    /// The merchant's own category path, "Footwear > Running".
    pub(super) merchant: &'static str,
    /// A Google product taxonomy path.
    pub(super) google: &'static str,
    pub(super) audiences: &'static [&'static str],
    pub(super) adjectives: &'static [&'static str],
    pub(super) materials: &'static [&'static str],
    pub(super) styles: &'static [&'static str],
    /// What the product is for, completing "is designed for ...".
    pub(super) uses: &'static [&'static str],
    /// Whole sentences about the product's features.
    pub(super) features: &'static [&'static str],
    pub(super) axes: &'static [&'static Axis],
    /// The base price range in minor units of a two-decimal currency.
    pub(super) price: (i64, i64),
    /// Single lower-case words, at least two, none equal to the department tag.
    pub(super) tags: &'static [&'static str],
}

#[derive(Debug)]
pub(super) struct Department {
    pub(super) name: &'static str,
    /// A single lower-case word added to every product's tags.
    pub(super) tag: &'static str,
    /// Relative share of the catalog.
    pub(super) weight: u32,
    pub(super) brands: &'static [Brand],
    /// Openings of the material clause: "Made from", "Formulated with".
    pub(super) made: &'static [&'static str],
    /// Links a title to a use: "designed for", "written for".
    pub(super) verbs: &'static [&'static str],
    /// Closing sentences: care, warranty, shipping.
    pub(super) closers: &'static [&'static str],
    /// Books carry an ISBN on every variant; other departments a GTIN on some products.
    pub(super) isbn: bool,
    pub(super) kinds: &'static [Kind],
}

/// First words of fiction titles: "The {First} {Second}".
pub(super) static FICTION_FIRST: &[&str] = &[
    "Silent",
    "Last",
    "Hidden",
    "Winter",
    "Golden",
    "Burning",
    "Forgotten",
    "Distant",
    "Paper",
    "Midnight",
    "Glass",
    "Salt",
    "Quiet",
    "Lost",
    "Seventh",
    "Wild",
];

/// Second words of fiction titles.
pub(super) static FICTION_SECOND: &[&str] = &[
    "Harbor",
    "Orchard",
    "Lighthouse",
    "Garden",
    "Kingdom",
    "Letter",
    "River",
    "Station",
    "Map",
    "Island",
    "Crown",
    "Forest",
    "House",
    "Season",
    "Tide",
    "Fox",
];

/// Image alt-text suffixes after the first (featured) image.
pub(super) static IMAGE_VIEWS: &[&str] = &["side view", "detail", "in use", "back view"];
