//! Jewelry and accessories: necklaces, rings, wallets, belts, watches and bags.

use crate::demo::vocab::{Axis, Brand, Department, Kind, TitleStyle::Branded};

static METAL: Axis = Axis {
    name: "Metal",
    values: &["Sterling Silver", "Gold Vermeil", "14K Gold", "Rose Gold", "Platinum"],
    premiums: &[0, 40, 180, 160, 300],
    ordered: false,
};

static RING_SIZE: Axis =
    Axis { name: "Size", values: &["5", "6", "7", "8", "9", "10", "11"], premiums: &[], ordered: true };

static NECKLACE_LENGTH: Axis =
    Axis { name: "Length", values: &["16 in", "18 in", "20 in", "24 in"], premiums: &[0, 0, 5, 10], ordered: true };

static LEATHER_COLOR: Axis = Axis {
    name: "Color",
    values: &["Black", "Brown", "Tan", "Cognac", "Navy", "Burgundy", "Olive"],
    premiums: &[],
    ordered: false,
};

static WATCH_COLOR: Axis = Axis {
    name: "Color",
    values: &["Black", "Silver", "Gold", "Rose Gold", "Blue", "Green"],
    premiums: &[],
    ordered: false,
};

static BELT_SIZE: Axis =
    Axis { name: "Size", values: &["30", "32", "34", "36", "38", "40", "42", "44"], premiums: &[], ordered: true };

#[rustfmt::skip]
pub(super) static JEWELRY: Department = Department {
    name: "Jewelry & Accessories",
    tag: "accessories",
    weight: 8,
    brands: &[
        Brand { name: "Aurelia", code: "AU" },
        Brand { name: "Silver Fern", code: "SF" },
        Brand { name: "Goldcrest", code: "GC" },
        Brand { name: "Saddle & Stitch", code: "SS" },
        Brand { name: "Marlowe", code: "MW" },
        Brand { name: "Oakhide", code: "OH" },
    ],
    made: &["Made from", "Crafted from", "Handmade from"],
    verbs: &["designed for", "made for", "perfect for"],
    closers: &[
        "Arrives gift-ready in a signature box.",
        "Free returns within 60 days.",
        "Each piece is inspected by hand before it ships.",
        "Free engraving on request.",
    ],
    isbn: false,
    kinds: &[
        Kind {
            noun: "Necklace", code: "NCK", title: Branded,
            merchant: "Jewelry > Necklaces",
            google: "Apparel & Accessories > Jewelry > Necklaces",
            audiences: &[],
            adjectives: &["Dainty", "Minimalist", "Layered", "Statement", "Vintage"],
            materials: &[],
            styles: &["Pendant", "Chain", "Initial", "Pearl", "Birthstone"],
            uses: &["everyday wear", "layering", "anniversaries and birthdays"],
            features: &[
                "A lobster clasp keeps it secure.",
                "It is hypoallergenic and nickel free.",
                "The fine chain lies flat and resists tangling.",
            ],
            axes: &[&METAL, &NECKLACE_LENGTH],
            price: (2900, 19900),
            tags: &["necklace", "jewelry", "gift"],
        },
        Kind {
            noun: "Ring", code: "RNG", title: Branded,
            merchant: "Jewelry > Rings",
            google: "Apparel & Accessories > Jewelry > Rings",
            audiences: &[],
            adjectives: &["Stackable", "Classic", "Minimalist", "Vintage"],
            materials: &[],
            styles: &["Band", "Signet", "Solitaire", "Eternity"],
            uses: &["everyday wear", "stacking", "engagements and anniversaries"],
            features: &[
                "A comfort-fit interior slides on easily.",
                "It is polished by hand to a mirror finish.",
                "Free resizing within the first year.",
            ],
            axes: &[&METAL, &RING_SIZE],
            price: (3900, 29900),
            tags: &["ring", "jewelry"],
        },
        Kind {
            noun: "Earrings", code: "EAR", title: Branded,
            merchant: "Jewelry > Earrings",
            google: "Apparel & Accessories > Jewelry > Earrings",
            audiences: &[],
            adjectives: &["Dainty", "Classic", "Statement", "Lightweight"],
            materials: &[],
            styles: &["Hoop", "Stud", "Drop", "Huggie"],
            uses: &["everyday wear", "sensitive ears", "evenings out"],
            features: &[
                "Secure backs keep them in place all day.",
                "They are light enough to forget you are wearing them.",
                "Hypoallergenic posts are gentle on sensitive ears.",
            ],
            axes: &[&METAL],
            price: (1900, 17900),
            tags: &["earrings", "jewelry"],
        },
        Kind {
            noun: "Bracelet", code: "BRC", title: Branded,
            merchant: "Jewelry > Bracelets",
            google: "Apparel & Accessories > Jewelry > Bracelets",
            audiences: &[],
            adjectives: &["Adjustable", "Delicate", "Classic", "Stackable"],
            materials: &[],
            styles: &["Chain", "Cuff", "Tennis", "Charm", "Bangle"],
            uses: &["everyday wear", "stacking with a watch", "gifting"],
            features: &[
                "An extender chain adjusts the fit.",
                "It slips on and off with one hand.",
                "The finish resists tarnish with everyday wear.",
            ],
            axes: &[&METAL],
            price: (2400, 19900),
            tags: &["bracelet", "jewelry"],
        },
        Kind {
            noun: "Wallet", code: "WAL", title: Branded,
            merchant: "Accessories > Wallets",
            google: "Apparel & Accessories > Handbags, Wallets & Cases > Wallets & Money Clips",
            audiences: &["Men's", "Women's"],
            adjectives: &["Slim", "RFID-Blocking", "Minimalist", "Classic"],
            materials: &["Leather", "Full-Grain Leather", "Vegan Leather", "Canvas"],
            styles: &["Bifold", "Trifold", "Card", "Zip-Around"],
            uses: &["everyday carry", "front-pocket carry", "travel"],
            features: &[
                "It holds up to eight cards plus folded bills.",
                "RFID-blocking lining protects contactless cards.",
                "The edges are burnished and stitched by hand.",
                "It develops a rich patina over time.",
            ],
            axes: &[&LEATHER_COLOR],
            price: (2900, 12900),
            tags: &["wallet", "cardholder"],
        },
        Kind {
            noun: "Belt", code: "BLT", title: Branded,
            merchant: "Accessories > Belts",
            google: "Apparel & Accessories > Clothing Accessories > Belts",
            audiences: &["Men's", "Women's"],
            adjectives: &["Classic", "Reversible", "Casual", "Dress"],
            materials: &["Leather", "Full-Grain Leather", "Suede", "Canvas"],
            styles: &[],
            uses: &["jeans and chinos", "the office", "everyday wear"],
            features: &[
                "A solid brass buckle will not bend or peel.",
                "It is cut from a single strip, so it will not split.",
                "The buckle swaps out with a simple snap.",
            ],
            axes: &[&LEATHER_COLOR, &BELT_SIZE],
            price: (2900, 8900),
            tags: &["belt", "buckle"],
        },
        Kind {
            noun: "Watch", code: "WCH", title: Branded,
            merchant: "Accessories > Watches",
            google: "Apparel & Accessories > Jewelry > Watches",
            audiences: &["Men's", "Women's"],
            adjectives: &["Automatic", "Minimalist", "Classic", "Solar"],
            materials: &["Stainless Steel", "Titanium", "Ceramic"],
            styles: &["Field", "Dress", "Chronograph", "Dive"],
            uses: &["everyday wear", "the office", "weekend adventures"],
            features: &[
                "Sapphire crystal resists scratches.",
                "It is water resistant to 100 meters.",
                "Quick-release straps swap without tools.",
                "Luminous hands are easy to read in the dark.",
            ],
            axes: &[&WATCH_COLOR],
            price: (9900, 59900),
            tags: &["watch", "timepiece"],
        },
        Kind {
            noun: "Tote Bag", code: "TOT", title: Branded,
            merchant: "Accessories > Bags",
            google: "Apparel & Accessories > Handbags, Wallets & Cases > Handbags",
            audiences: &["Women's"],
            adjectives: &["Oversized", "Structured", "Everyday", "Classic"],
            materials: &["Leather", "Canvas", "Vegan Leather", "Waxed Canvas"],
            styles: &[],
            uses: &["work and travel", "everyday errands", "weekend getaways"],
            features: &[
                "An interior zip pocket keeps small things organized.",
                "It fits a 15-inch laptop.",
                "Reinforced handles sit comfortably on the shoulder.",
            ],
            axes: &[&LEATHER_COLOR],
            price: (4900, 29900),
            tags: &["tote", "bag", "handbag"],
        },
    ],
};
