//! Home and kitchen: coffee makers, cookware, knives, bedding and decor.

use super::{APPLIANCE_COLOR, HOME_COLOR};
use crate::demo::vocab::{Axis, Brand, Department, Kind, TitleStyle::Branded};

static COFFEE_CAPACITY: Axis = Axis {
    name: "Capacity",
    values: &["4 Cup", "8 Cup", "10 Cup", "12 Cup"],
    premiums: &[0, 15, 25, 35],
    ordered: true,
};

static PAN_SIZE: Axis =
    Axis { name: "Size", values: &["8 in", "10 in", "12 in"], premiums: &[0, 20, 40], ordered: true };

static BLADE_LENGTH: Axis =
    Axis { name: "Blade Length", values: &["6 in", "8 in", "10 in"], premiums: &[0, 15, 30], ordered: true };

static MUG_SET: Axis =
    Axis { name: "Set", values: &["Single", "Set of 2", "Set of 4"], premiums: &[0, 80, 240], ordered: false };

static BED_SIZE: Axis = Axis {
    name: "Size",
    values: &["Twin", "Full", "Queen", "King", "California King"],
    premiums: &[0, 10, 20, 30, 35],
    ordered: true,
};

static SCENT: Axis = Axis {
    name: "Scent",
    values: &["Unscented", "Lavender", "Eucalyptus", "Citrus", "Sandalwood", "Vanilla", "Fig"],
    premiums: &[],
    ordered: false,
};

#[rustfmt::skip]
pub(super) static HOME_KITCHEN: Department = Department {
    name: "Home & Kitchen",
    tag: "home",
    weight: 14,
    brands: &[
        Brand { name: "Hearthstone", code: "HS" },
        Brand { name: "Copperline", code: "CP" },
        Brand { name: "Brewhaus", code: "BH" },
        Brand { name: "Maple & Main", code: "MM" },
        Brand { name: "Kinfolk Kitchen", code: "KK" },
        Brand { name: "Nestwell", code: "NW" },
    ],
    made: &["Made from", "Crafted from", "Built from"],
    verbs: &["designed for", "built for", "made for", "ideal for"],
    closers: &[
        "Backed by a two-year limited warranty.",
        "Ships in recyclable packaging.",
        "Free shipping on orders over $50.",
        "It makes a thoughtful housewarming gift.",
    ],
    isbn: false,
    kinds: &[
        Kind {
            noun: "Coffee Maker", code: "COF", title: Branded,
            merchant: "Home & Kitchen > Coffee & Tea",
            google: "Home & Garden > Kitchen & Dining > Kitchen Appliances > Coffee Makers & Espresso Machines",
            audiences: &[],
            adjectives: &["Programmable", "Compact", "Thermal", "Quiet", "Single-Serve"],
            materials: &["Stainless Steel", "Brushed Steel", "Glass"],
            styles: &["Drip", "Pour-Over", "Cold Brew"],
            uses: &["busy weekday mornings", "small kitchens and offices", "brewing a full pot for guests"],
            features: &[
                "A programmable timer has coffee ready when you wake up.",
                "The thermal carafe keeps coffee hot for hours without a hot plate.",
                "A reusable mesh filter means no paper filters to buy.",
                "Brew strength control lets you choose bold or regular.",
            ],
            axes: &[&APPLIANCE_COLOR, &COFFEE_CAPACITY],
            price: (3900, 19900),
            tags: &["coffee", "kitchen", "appliance"],
        },
        Kind {
            noun: "Espresso Machine", code: "ESP", title: Branded,
            merchant: "Home & Kitchen > Coffee & Tea",
            google: "Home & Garden > Kitchen & Dining > Kitchen Appliances > Coffee Makers & Espresso Machines",
            audiences: &[],
            adjectives: &["Semi-Automatic", "Compact", "Dual-Boiler", "Manual"],
            materials: &["Stainless Steel", "Brushed Steel"],
            styles: &["Home", "Barista", "Lever"],
            uses: &["cafe-style drinks at home", "latte and cappuccino lovers", "small countertops"],
            features: &[
                "A 15-bar pump pulls rich, balanced shots.",
                "The steam wand textures milk for latte art.",
                "It heats up in under a minute.",
                "A built-in grinder doses fresh grounds for every shot.",
            ],
            axes: &[&APPLIANCE_COLOR],
            price: (19900, 99900),
            tags: &["espresso", "coffee", "appliance"],
        },
        Kind {
            noun: "Blender", code: "BLN", title: Branded,
            merchant: "Home & Kitchen > Small Appliances",
            google: "Home & Garden > Kitchen & Dining > Kitchen Appliances > Blenders",
            audiences: &[],
            adjectives: &["High-Speed", "Compact", "Personal", "Professional", "Quiet"],
            materials: &[],
            styles: &["Countertop", "Immersion", "Smoothie"],
            uses: &["smoothies and protein shakes", "soups and sauces", "crushing ice"],
            features: &[
                "A powerful motor turns frozen fruit smooth in seconds.",
                "Preset programs handle smoothies, soups and ice.",
                "The BPA-free jar and blades are dishwasher safe.",
            ],
            axes: &[&APPLIANCE_COLOR],
            price: (3900, 44900),
            tags: &["blender", "smoothie", "appliance"],
        },
        Kind {
            noun: "Skillet", code: "SKL", title: Branded,
            merchant: "Home & Kitchen > Cookware",
            google: "Home & Garden > Kitchen & Dining > Cookware & Bakeware > Cookware > Skillets & Frying Pans",
            audiences: &[],
            adjectives: &["Nonstick", "Pre-Seasoned", "Tri-Ply", "Induction-Ready", "Heavy-Duty"],
            materials: &["Cast Iron", "Stainless Steel", "Carbon Steel", "Copper", "Ceramic"],
            styles: &["Deep", "Chef's", "Everyday"],
            uses: &["searing steaks", "everyday cooking", "stovetop-to-oven recipes"],
            features: &[
                "It heats evenly with no hot spots.",
                "It is oven safe to 500 degrees.",
                "A helper handle makes a full pan easy to lift.",
                "It works on gas, electric and induction cooktops.",
            ],
            axes: &[&PAN_SIZE],
            price: (2900, 17900),
            tags: &["skillet", "cookware", "pan"],
        },
        Kind {
            noun: "Chef's Knife", code: "KNF", title: Branded,
            merchant: "Home & Kitchen > Cutlery",
            google: "Home & Garden > Kitchen & Dining > Kitchen Tools & Utensils > Kitchen Knives",
            audiences: &[],
            adjectives: &["Forged", "Razor-Sharp", "Balanced", "Professional"],
            materials: &["German Steel", "Damascus Steel", "High-Carbon Steel", "Japanese Steel"],
            styles: &[],
            uses: &["everyday prep work", "slicing, dicing and mincing", "home cooks and professionals"],
            features: &[
                "A full tang gives it perfect balance in the hand.",
                "The blade is hand-sharpened to a 15-degree edge.",
                "An ergonomic handle stays comfortable through long prep sessions.",
            ],
            axes: &[&BLADE_LENGTH],
            price: (3900, 24900),
            tags: &["knife", "cutlery"],
        },
        Kind {
            noun: "Mug", code: "MUG", title: Branded,
            merchant: "Home & Kitchen > Drinkware",
            google: "Home & Garden > Kitchen & Dining > Tableware > Drinkware > Mugs",
            audiences: &[],
            adjectives: &["Handmade", "Insulated", "Speckled", "Classic", "Oversized"],
            materials: &["Stoneware", "Ceramic", "Porcelain", "Enamel"],
            styles: &["Coffee", "Tea", "Travel"],
            uses: &["your morning coffee", "tea at your desk", "slow weekend mornings"],
            features: &[
                "It holds a generous 14 ounces.",
                "It is microwave and dishwasher safe.",
                "A wide handle fits the whole hand.",
            ],
            axes: &[&HOME_COLOR, &MUG_SET],
            price: (1200, 4500),
            tags: &["mug", "drinkware"],
        },
        Kind {
            noun: "Throw Blanket", code: "THR", title: Branded,
            merchant: "Home & Kitchen > Bedding & Throws",
            google: "Home & Garden > Linens & Bedding > Bedding > Blankets",
            audiences: &[],
            adjectives: &["Cozy", "Chunky", "Lightweight", "Oversized", "Reversible"],
            materials: &["Wool", "Cotton", "Sherpa Fleece", "Cashmere", "Merino Wool", "Linen"],
            styles: &["Knit", "Waffle", "Herringbone", "Plaid"],
            uses: &["movie nights on the couch", "chilly evenings", "dressing up a bed or sofa"],
            features: &[
                "It is large enough to share on the couch.",
                "Fringed edges add a finished look.",
                "It gets softer with every wash.",
            ],
            axes: &[&HOME_COLOR],
            price: (3900, 19900),
            tags: &["blanket", "throw", "decor"],
        },
        Kind {
            noun: "Sheet Set", code: "SHT", title: Branded,
            merchant: "Home & Kitchen > Bedding",
            google: "Home & Garden > Linens & Bedding > Bedding > Bed Sheets",
            audiences: &[],
            adjectives: &["Breathable", "Cooling", "Wrinkle-Resistant", "Luxury", "Soft"],
            materials: &["Percale Cotton", "Sateen Cotton", "Linen", "Bamboo", "Egyptian Cotton", "Flannel"],
            styles: &[],
            uses: &["hot sleepers", "a hotel-style bed at home", "year-round comfort"],
            features: &[
                "Deep pockets fit mattresses up to 16 inches.",
                "The set includes a flat sheet, fitted sheet and two pillowcases.",
                "It gets softer with every wash.",
            ],
            axes: &[&HOME_COLOR, &BED_SIZE],
            price: (4900, 24900),
            tags: &["sheets", "bedding", "bedroom"],
        },
        Kind {
            noun: "Candle", code: "CND", title: Branded,
            merchant: "Home & Kitchen > Home Decor",
            google: "Home & Garden > Decor > Home Fragrances > Candles",
            audiences: &[],
            adjectives: &["Hand-Poured", "Long-Burning", "Scented"],
            materials: &["Soy Wax", "Beeswax", "Coconut Wax"],
            styles: &["Jar", "Pillar", "Three-Wick"],
            uses: &["relaxing evenings", "a calm, cozy room", "gifting"],
            features: &[
                "A cotton wick burns clean for up to 50 hours.",
                "The fragrance fills a room without overpowering it.",
                "The glass vessel can be reused once the candle is done.",
            ],
            axes: &[&SCENT],
            price: (1400, 5900),
            tags: &["candle", "fragrance", "decor"],
        },
    ],
};
