//! Sports: yoga, strength, ball sports, racquets and running.

use super::{APPAREL_SIZE, SPORT_COLOR};
use crate::demo::vocab::{Axis, Brand, Department, Kind, TitleStyle::Branded};

static MAT_THICKNESS: Axis =
    Axis { name: "Thickness", values: &["3 mm", "5 mm", "6 mm", "8 mm"], premiums: &[0, 10, 15, 25], ordered: true };

static WEIGHT: Axis = Axis {
    name: "Weight",
    values: &["5 lb", "10 lb", "15 lb", "20 lb", "25 lb", "30 lb", "40 lb", "50 lb"],
    premiums: &[0, 50, 100, 150, 200, 250, 350, 450],
    ordered: true,
};

static SOCCER_BALL_SIZE: Axis =
    Axis { name: "Size", values: &["Size 3", "Size 4", "Size 5"], premiums: &[0, 5, 10], ordered: true };

static BASKETBALL_SIZE: Axis =
    Axis { name: "Size", values: &["Size 5", "Size 6", "Size 7"], premiums: &[0, 5, 10], ordered: true };

static GRIP_SIZE: Axis = Axis { name: "Grip Size", values: &["L1", "L2", "L3", "L4"], premiums: &[], ordered: true };

static RESISTANCE: Axis = Axis {
    name: "Resistance",
    values: &["Light", "Medium", "Heavy", "Extra Heavy"],
    premiums: &[0, 10, 20, 30],
    ordered: true,
};

#[rustfmt::skip]
pub(super) static SPORTS: Department = Department {
    name: "Sports",
    tag: "sports",
    weight: 8,
    brands: &[
        Brand { name: "Apex Athletics", code: "AX" },
        Brand { name: "Ironforge", code: "IF" },
        Brand { name: "Flowstate", code: "FL" },
        Brand { name: "Courtside", code: "CT" },
        Brand { name: "Kinetic", code: "KN" },
        Brand { name: "Peakform", code: "PF" },
    ],
    made: &["Made from", "Built with", "Made with"],
    verbs: &["designed for", "built for", "made for"],
    closers: &[
        "Built to withstand daily training.",
        "Wipe clean after each use.",
        "Backed by a one-year warranty.",
        "Trusted by coaches and athletes.",
    ],
    isbn: false,
    kinds: &[
        Kind {
            noun: "Yoga Mat", code: "YGM", title: Branded,
            merchant: "Sports > Yoga",
            google: "Sporting Goods > Exercise & Fitness > Yoga & Pilates > Yoga Mats",
            audiences: &[],
            adjectives: &["Non-Slip", "Extra-Thick", "Travel", "Eco-Friendly", "Reversible"],
            materials: &["Natural Rubber", "TPE", "Cork"],
            styles: &[],
            uses: &["yoga and pilates", "home workouts", "hot yoga classes"],
            features: &[
                "A grippy surface holds steady even when you sweat.",
                "Alignment lines help with positioning.",
                "It rolls up tight and includes a carrying strap.",
            ],
            axes: &[&SPORT_COLOR, &MAT_THICKNESS],
            price: (2500, 12900),
            tags: &["yoga", "mat", "fitness"],
        },
        Kind {
            noun: "Dumbbells", code: "DMB", title: Branded,
            merchant: "Sports > Strength Training",
            google: "Sporting Goods > Exercise & Fitness > Weight Lifting > Free Weights",
            audiences: &[],
            adjectives: &["Hex", "Rubber-Coated", "Neoprene", "Classic"],
            materials: &["Cast Iron", "Rubber", "Neoprene"],
            styles: &[],
            uses: &["home gyms", "strength training", "full-body workouts"],
            features: &[
                "Hex-shaped heads keep them from rolling away.",
                "Knurled handles give a secure grip.",
                "The coating protects floors and reduces noise.",
            ],
            axes: &[&WEIGHT],
            price: (1900, 6900),
            tags: &["dumbbells", "weights", "strength"],
        },
        Kind {
            noun: "Soccer Ball", code: "SCB", title: Branded,
            merchant: "Sports > Team Sports > Soccer",
            google: "Sporting Goods > Athletics > Soccer > Soccer Balls",
            audiences: &[],
            adjectives: &["Match", "Training", "Official", "Durable"],
            materials: &["Synthetic Leather", "Polyurethane"],
            styles: &[],
            uses: &["practices and matches", "youth leagues", "backyard pickup games"],
            features: &[
                "Thermally bonded panels keep their shape and absorb less water.",
                "A butyl bladder holds air for weeks.",
                "High-visibility graphics are easy to track.",
            ],
            axes: &[&SOCCER_BALL_SIZE],
            price: (1500, 16900),
            tags: &["soccer", "ball", "football"],
        },
        Kind {
            noun: "Basketball", code: "BKB", title: Branded,
            merchant: "Sports > Team Sports > Basketball",
            google: "Sporting Goods > Athletics > Basketball > Basketballs",
            audiences: &[],
            adjectives: &["Indoor", "Outdoor", "Official", "Grip-Control"],
            materials: &["Composite Leather", "Rubber", "Leather"],
            styles: &[],
            uses: &["indoor courts", "driveway games", "league play"],
            features: &[
                "Deep channels help with ball control.",
                "A cushioned cover gives a soft touch.",
                "It holds air through months of play.",
            ],
            axes: &[&BASKETBALL_SIZE],
            price: (1900, 16900),
            tags: &["basketball", "ball"],
        },
        Kind {
            noun: "Tennis Racquet", code: "TNR", title: Branded,
            merchant: "Sports > Racquet Sports",
            google: "Sporting Goods > Athletics > Tennis > Tennis Racquets",
            audiences: &["Kids'"],
            adjectives: &["Lightweight", "Power", "Control", "Tour"],
            materials: &["Graphite", "Carbon Fiber", "Aluminum"],
            styles: &[],
            uses: &["beginners and intermediate players", "baseline rallies", "doubles play"],
            features: &[
                "An oversized head offers a forgiving sweet spot.",
                "It comes pre-strung and ready to play.",
                "Vibration dampening reduces strain on the elbow.",
            ],
            axes: &[&GRIP_SIZE],
            price: (4900, 27900),
            tags: &["tennis", "racquet"],
        },
        Kind {
            noun: "Resistance Bands", code: "RBD", title: Branded,
            merchant: "Sports > Fitness Accessories",
            google: "Sporting Goods > Exercise & Fitness > Exercise Bands",
            audiences: &[],
            adjectives: &["Heavy-Duty", "Loop", "Non-Slip"],
            materials: &["Latex", "Fabric"],
            styles: &[],
            uses: &["home workouts", "physical therapy", "warming up before a run"],
            features: &[
                "Color-coded levels make progress easy to track.",
                "A mesh bag keeps them together in a gym bag.",
                "They will not roll or snap during squats.",
            ],
            axes: &[&RESISTANCE],
            price: (1200, 4500),
            tags: &["bands", "fitness", "workout"],
        },
        Kind {
            noun: "Jump Rope", code: "JRP", title: Branded,
            merchant: "Sports > Fitness Accessories",
            google: "Sporting Goods > Exercise & Fitness > Jump Ropes",
            audiences: &[],
            adjectives: &["Speed", "Weighted", "Adjustable", "Tangle-Free"],
            materials: &["Steel Cable", "PVC", "Leather"],
            styles: &[],
            uses: &["cardio workouts", "boxing training", "warm-ups"],
            features: &[
                "Ball-bearing handles spin smoothly.",
                "The length adjusts in seconds.",
                "Foam grips stay comfortable when your hands sweat.",
            ],
            axes: &[&SPORT_COLOR],
            price: (900, 3900),
            tags: &["jumprope", "cardio", "fitness"],
        },
        Kind {
            noun: "Running Shorts", code: "SHR", title: Branded,
            merchant: "Sports > Activewear",
            google: "Apparel & Accessories > Clothing > Activewear",
            audiences: &["Men's", "Women's"],
            adjectives: &["Lightweight", "Quick-Dry", "Breathable", "Lined"],
            materials: &["Recycled Polyester", "Nylon"],
            styles: &["5-Inch", "7-Inch", "Split"],
            uses: &["race day", "hot-weather training", "the gym"],
            features: &[
                "A zippered back pocket holds a phone or keys.",
                "The built-in liner means no chafing.",
                "Reflective trim keeps you seen after dark.",
            ],
            axes: &[&SPORT_COLOR, &APPAREL_SIZE],
            price: (2500, 6500),
            tags: &["running", "shorts", "activewear"],
        },
    ],
};
