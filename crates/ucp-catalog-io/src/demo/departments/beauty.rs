//! Beauty: skin care, makeup, hair care and fragrance.

use crate::demo::vocab::{Axis, Brand, Department, Kind, TitleStyle::Branded};

static BEAUTY_SIZE: Axis =
    Axis { name: "Size", values: &["30 ml", "50 ml", "100 ml"], premiums: &[0, 45, 120], ordered: true };

static SERUM_SIZE: Axis =
    Axis { name: "Size", values: &["15 ml", "30 ml", "50 ml"], premiums: &[0, 60, 130], ordered: true };

static HAIR_SIZE: Axis =
    Axis { name: "Size", values: &["250 ml", "500 ml", "1 L"], premiums: &[0, 55, 140], ordered: true };

static LIP_SHADE: Axis = Axis {
    name: "Shade",
    values: &["Nude", "Rose", "Berry", "Coral", "Classic Red", "Mauve", "Plum"],
    premiums: &[],
    ordered: false,
};

#[rustfmt::skip]
pub(super) static BEAUTY: Department = Department {
    name: "Beauty",
    tag: "beauty",
    weight: 9,
    brands: &[
        Brand { name: "Luma Botanics", code: "LB" },
        Brand { name: "Verdant Skin", code: "VS" },
        Brand { name: "Rosewater Apothecary", code: "RW" },
        Brand { name: "Pure Theory", code: "PT" },
        Brand { name: "Solstice", code: "SO" },
        Brand { name: "Bloom Lab", code: "BL" },
    ],
    made: &["Formulated with", "Made with", "Enriched with"],
    verbs: &["designed for", "made for", "formulated for"],
    closers: &[
        "Dermatologist tested and cruelty free.",
        "Free of parabens and synthetic dyes.",
        "Patch test before first use.",
        "Packaged in recyclable glass.",
    ],
    isbn: false,
    kinds: &[
        Kind {
            noun: "Moisturizer", code: "MST", title: Branded,
            merchant: "Beauty > Skin Care",
            google: "Health & Beauty > Personal Care > Cosmetics > Skin Care > Lotion & Moisturizer",
            audiences: &[],
            adjectives: &["Hydrating", "Lightweight", "Fragrance-Free", "Oil-Free", "Rich", "Overnight"],
            materials: &["Hyaluronic Acid", "Shea Butter", "Aloe", "Squalane", "Ceramide"],
            styles: &["Face", "Day", "Night", "Gel"],
            uses: &["dry and sensitive skin", "daily morning routines", "all skin types"],
            features: &[
                "It absorbs quickly and leaves no greasy film.",
                "Skin stays plump and hydrated for up to 24 hours.",
                "It layers well under sunscreen and makeup.",
            ],
            axes: &[&BEAUTY_SIZE],
            price: (1400, 6900),
            tags: &["moisturizer", "skincare", "face"],
        },
        Kind {
            noun: "Cleanser", code: "CLN", title: Branded,
            merchant: "Beauty > Skin Care",
            google: "Health & Beauty > Personal Care > Cosmetics > Skin Care > Facial Cleansers",
            audiences: &[],
            adjectives: &["Gentle", "Foaming", "Exfoliating", "Balancing"],
            materials: &["Green Tea", "Charcoal", "Salicylic Acid", "Oat", "Vitamin C"],
            styles: &["Face", "Gel", "Cream"],
            uses: &["morning and evening cleansing", "oily and combination skin", "removing makeup"],
            features: &[
                "It lifts away dirt and sunscreen without stripping the skin.",
                "A rich lather rinses clean with no residue.",
                "It leaves skin soft, balanced and never tight.",
            ],
            axes: &[&BEAUTY_SIZE],
            price: (1000, 4500),
            tags: &["cleanser", "skincare", "face"],
        },
        Kind {
            noun: "Serum", code: "SRM", title: Branded,
            merchant: "Beauty > Skin Care",
            google: "Health & Beauty > Personal Care > Cosmetics > Skin Care > Anti-Aging Skin Care Products",
            audiences: &[],
            adjectives: &["Brightening", "Firming", "Hydrating", "Overnight"],
            materials: &["Vitamin C", "Retinol", "Niacinamide", "Hyaluronic Acid", "Peptide"],
            styles: &["Face", "Eye"],
            uses: &["uneven skin tone", "fine lines", "a dull complexion"],
            features: &[
                "A few drops are enough for the whole face.",
                "Visible results appear within four weeks of daily use.",
                "The glass dropper keeps the formula fresh.",
            ],
            axes: &[&SERUM_SIZE],
            price: (1800, 8900),
            tags: &["serum", "skincare"],
        },
        Kind {
            noun: "Lipstick", code: "LIP", title: Branded,
            merchant: "Beauty > Makeup",
            google: "Health & Beauty > Personal Care > Cosmetics > Makeup > Lip Makeup > Lipstick",
            audiences: &[],
            adjectives: &["Matte", "Satin", "Long-Wear", "Hydrating", "Sheer"],
            materials: &["Shea Butter", "Jojoba Oil", "Vitamin E"],
            styles: &["Cream", "Liquid"],
            uses: &["all-day color", "everyday looks", "special occasions"],
            features: &[
                "One swipe gives rich, even color.",
                "It wears for up to eight hours without drying the lips.",
                "The transfer-resistant finish survives coffee and lunch.",
            ],
            axes: &[&LIP_SHADE],
            price: (1200, 3800),
            tags: &["lipstick", "makeup", "lips"],
        },
        Kind {
            noun: "Shampoo", code: "SHP", title: Branded,
            merchant: "Beauty > Hair Care",
            google: "Health & Beauty > Personal Care > Hair Care > Shampoo & Conditioner",
            audiences: &[],
            adjectives: &["Volumizing", "Moisturizing", "Clarifying", "Color-Safe", "Sulfate-Free", "Strengthening"],
            materials: &["Argan Oil", "Tea Tree", "Coconut Oil", "Rosemary", "Keratin"],
            styles: &["Daily"],
            uses: &["fine and flat hair", "dry, damaged hair", "color-treated hair", "every hair type"],
            features: &[
                "It cleans gently enough for everyday washing.",
                "Hair is left soft, shiny and easy to detangle.",
                "A light herbal scent lingers after rinsing.",
            ],
            axes: &[&HAIR_SIZE],
            price: (900, 3400),
            tags: &["shampoo", "haircare", "hair"],
        },
        Kind {
            noun: "Eau de Parfum", code: "PRF", title: Branded,
            merchant: "Beauty > Fragrance",
            google: "Health & Beauty > Personal Care > Cosmetics > Perfume & Cologne",
            audiences: &["Men's", "Women's", "Unisex"],
            adjectives: &["Floral", "Woody", "Fresh", "Warm"],
            materials: &["Jasmine", "Sandalwood", "Bergamot", "Vanilla", "Amber", "Rose"],
            styles: &[],
            uses: &["evenings out", "everyday wear", "gifting"],
            features: &[
                "Top notes of citrus settle into a warm, lasting base.",
                "A few sprays last well into the evening.",
                "The weighted glass bottle looks beautiful on a dresser.",
            ],
            axes: &[&BEAUTY_SIZE],
            price: (3900, 11900),
            tags: &["perfume", "fragrance", "scent"],
        },
        Kind {
            noun: "Sunscreen", code: "SUN", title: Branded,
            merchant: "Beauty > Sun Care",
            google: "Health & Beauty > Personal Care > Cosmetics > Skin Care > Sunscreen",
            audiences: &["Kids'"],
            adjectives: &["Mineral", "Broad-Spectrum", "Water-Resistant", "Lightweight", "Tinted"],
            materials: &["Zinc Oxide", "Aloe"],
            styles: &["SPF 30", "SPF 50"],
            uses: &["daily sun protection", "beach days and outdoor sports", "sensitive skin"],
            features: &[
                "It rubs in clear with no white cast.",
                "The formula is reef-friendly and water-resistant for 80 minutes.",
                "It doubles as a light moisturizer.",
            ],
            axes: &[&BEAUTY_SIZE],
            price: (1200, 3900),
            tags: &["sunscreen", "spf", "skincare"],
        },
    ],
};
