//! Toys: building sets, puzzles, plush, games and vehicles.

use crate::demo::vocab::{Axis, Brand, Department, Kind, TitleStyle::Branded};

static PIECES: Axis = Axis {
    name: "Pieces",
    values: &["100 Pieces", "250 Pieces", "500 Pieces", "1000 Pieces"],
    premiums: &[0, 40, 90, 180],
    ordered: true,
};

static PUZZLE_PIECES: Axis = Axis {
    name: "Pieces",
    values: &["300 Pieces", "500 Pieces", "1000 Pieces", "1500 Pieces"],
    premiums: &[0, 10, 25, 40],
    ordered: true,
};

static PLUSH_SIZE: Axis =
    Axis { name: "Size", values: &["Small", "Medium", "Large", "Jumbo"], premiums: &[0, 40, 100, 220], ordered: true };

static EDITION: Axis =
    Axis { name: "Edition", values: &["Standard Edition", "Deluxe Edition"], premiums: &[0, 60], ordered: true };

static TOY_COLOR: Axis = Axis {
    name: "Color",
    values: &["Red", "Blue", "Green", "Yellow", "Black", "Orange"],
    premiums: &[],
    ordered: false,
};

#[rustfmt::skip]
pub(super) static TOYS: Department = Department {
    name: "Toys",
    tag: "toys",
    weight: 8,
    brands: &[
        Brand { name: "Brightblock", code: "BB" },
        Brand { name: "Tinker Town", code: "TT" },
        Brand { name: "Wonderwood", code: "WW" },
        Brand { name: "Little Otter", code: "LO" },
        Brand { name: "Playful Pines", code: "PP" },
        Brand { name: "Starlight Games", code: "SG" },
    ],
    made: &["Made from", "Made with"],
    verbs: &["designed for", "made for", "perfect for"],
    closers: &[
        "Meets all US toy safety standards.",
        "It makes a great gift for birthdays and holidays.",
        "Everything stores neatly in the included box.",
        "Adult supervision is recommended for young children.",
    ],
    isbn: false,
    kinds: &[
        Kind {
            noun: "Building Set", code: "BLD", title: Branded,
            merchant: "Toys > Building Toys",
            google: "Toys & Games > Toys > Building Toys > Construction Set Toys",
            audiences: &[],
            adjectives: &["Creative", "Magnetic", "Deluxe", "Starter", "Classic"],
            materials: &[],
            styles: &["Castle", "Space Station", "City", "Dinosaur", "Robot"],
            uses: &["kids ages 6 and up", "family building nights", "young engineers"],
            features: &[
                "Pieces are compatible with other major brick brands.",
                "Illustrated instructions guide builders step by step.",
                "It encourages problem solving and creativity.",
            ],
            axes: &[&PIECES],
            price: (1900, 12900),
            tags: &["building", "blocks", "stem"],
        },
        Kind {
            noun: "Jigsaw Puzzle", code: "PZL", title: Branded,
            merchant: "Toys > Puzzles",
            google: "Toys & Games > Puzzles > Jigsaw Puzzles",
            audiences: &[],
            adjectives: &["Challenging", "Family", "Scenic", "Vintage"],
            materials: &[],
            styles: &["Landscape", "Animal", "World Map", "Art"],
            uses: &["rainy afternoons", "puzzle lovers", "family game night"],
            features: &[
                "Thick, precision-cut pieces snap together snugly.",
                "A glare-free finish makes the image easy to see.",
                "A poster of the finished image is included.",
            ],
            axes: &[&PUZZLE_PIECES],
            price: (1400, 3900),
            tags: &["puzzle", "jigsaw"],
        },
        Kind {
            noun: "Stuffed Animal", code: "PLS", title: Branded,
            merchant: "Toys > Plush",
            google: "Toys & Games > Toys > Stuffed Animals",
            audiences: &[],
            adjectives: &["Cuddly", "Soft", "Huggable", "Plush"],
            materials: &["Organic Cotton", "Recycled Polyester"],
            styles: &["Bear", "Bunny", "Dinosaur", "Elephant", "Fox", "Unicorn"],
            uses: &["bedtime snuggles", "babies and toddlers", "gifting"],
            features: &[
                "Embroidered eyes are safe for little ones.",
                "It is machine washable.",
                "The super-soft fabric is made for hugging.",
            ],
            axes: &[&PLUSH_SIZE],
            price: (1200, 4900),
            tags: &["plush", "stuffed", "animal"],
        },
        Kind {
            noun: "Board Game", code: "BGM", title: Branded,
            merchant: "Toys > Games",
            google: "Toys & Games > Games > Board Games",
            audiences: &[],
            adjectives: &["Strategy", "Cooperative", "Family", "Party", "Classic"],
            materials: &[],
            styles: &["Trivia", "Adventure", "Word", "Racing"],
            uses: &["game night with 2 to 6 players", "families with kids 8 and up", "parties"],
            features: &[
                "A round takes about 45 minutes.",
                "Easy rules mean you can start playing in minutes.",
                "Every game plays out differently.",
            ],
            axes: &[&EDITION],
            price: (1900, 6900),
            tags: &["boardgame", "game", "family"],
        },
        Kind {
            noun: "Remote Control Car", code: "RCC", title: Branded,
            merchant: "Toys > Vehicles",
            google: "Toys & Games > Toys > Remote Control Toys",
            audiences: &[],
            adjectives: &["High-Speed", "Off-Road", "Rechargeable", "All-Terrain"],
            materials: &[],
            styles: &["Racing", "Stunt", "Rock Crawler"],
            uses: &["backyard racing", "kids ages 8 and up", "off-road adventures"],
            features: &[
                "It reaches speeds of up to 20 miles per hour.",
                "Two rechargeable batteries double the run time.",
                "Shock-absorbing suspension handles grass, gravel and dirt.",
            ],
            axes: &[&TOY_COLOR],
            price: (2900, 14900),
            tags: &["rc", "car", "remote"],
        },
        Kind {
            noun: "Train Set", code: "TRN", title: Branded,
            merchant: "Toys > Vehicles",
            google: "Toys & Games > Toys > Play Vehicles > Toy Trains & Train Sets",
            audiences: &[],
            adjectives: &["Wooden", "Classic", "Deluxe", "Starter"],
            materials: &["Beechwood", "Maple Wood"],
            styles: &[],
            uses: &["toddlers and preschoolers", "imaginative play", "playroom floors"],
            features: &[
                "The tracks connect in endless layouts.",
                "Magnetic couplers make linking cars easy for small hands.",
                "Non-toxic paint is safe for little ones.",
            ],
            axes: &[&EDITION],
            price: (2900, 11900),
            tags: &["train", "toddler"],
        },
        Kind {
            noun: "Art Kit", code: "ART", title: Branded,
            merchant: "Toys > Arts & Crafts",
            google: "Toys & Games > Toys > Art & Drawing Toys",
            audiences: &[],
            adjectives: &["Deluxe", "Washable", "Travel", "Beginner"],
            materials: &[],
            styles: &["Watercolor", "Drawing", "Craft"],
            uses: &["budding artists", "rainy-day projects", "road trips"],
            features: &[
                "Everything comes in a sturdy carrying case.",
                "The washable paints come out of most fabrics.",
                "A booklet of project ideas is included.",
            ],
            axes: &[&EDITION],
            price: (1500, 5900),
            tags: &["art", "craft", "kids"],
        },
    ],
};
