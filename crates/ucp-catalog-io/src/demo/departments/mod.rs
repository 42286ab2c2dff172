//! The departments of the demo catalog, one file each, and the option axes they share.
//! The department tables are hand-aligned data, so rustfmt leaves them alone.

mod apparel;
mod beauty;
mod books;
mod electronics;
mod footwear;
mod home_kitchen;
mod jewelry;
mod outdoor;
mod sports;
mod toys;

use super::vocab::{Axis, Department};

/// Every department of the demo catalog.
pub(super) static DEPARTMENTS: [&Department; 10] = [
    &apparel::APPAREL,
    &footwear::FOOTWEAR,
    &beauty::BEAUTY,
    &jewelry::JEWELRY,
    &home_kitchen::HOME_KITCHEN,
    &electronics::ELECTRONICS,
    &outdoor::OUTDOOR,
    &toys::TOYS,
    &books::BOOKS,
    &sports::SPORTS,
];

static APPAREL_COLOR: Axis = Axis {
    name: "Color",
    values: &[
        "Black",
        "White",
        "Navy",
        "Blue",
        "Red",
        "Green",
        "Heather Gray",
        "Olive",
        "Burgundy",
        "Beige",
        "Pink",
        "Charcoal",
    ],
    premiums: &[],
    ordered: false,
};

static APPAREL_SIZE: Axis =
    Axis { name: "Size", values: &["XS", "S", "M", "L", "XL", "XXL"], premiums: &[0, 0, 0, 0, 0, 8], ordered: true };

static SMALL_SIZE: Axis = Axis { name: "Size", values: &["S", "M", "L", "XL"], premiums: &[], ordered: true };

static SHOE_SIZE: Axis = Axis {
    name: "Size",
    values: &["6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "11.5", "12", "13"],
    premiums: &[],
    ordered: true,
};

static WAIST_SIZE: Axis = Axis {
    name: "Size",
    values: &["28", "30", "32", "34", "36", "38", "40", "42"],
    premiums: &[0, 0, 0, 0, 0, 0, 5, 5],
    ordered: true,
};

static HOME_COLOR: Axis = Axis {
    name: "Color",
    values: &["White", "Ivory", "Gray", "Navy", "Sage Green", "Rose", "Charcoal", "Blue", "Terracotta"],
    premiums: &[],
    ordered: false,
};

static APPLIANCE_COLOR: Axis = Axis {
    name: "Color",
    values: &["Stainless Steel", "Matte Black", "White", "Black", "Red", "Cream", "Sage Green", "Blue"],
    premiums: &[],
    ordered: false,
};

static TECH_COLOR: Axis = Axis {
    name: "Color",
    values: &["Black", "White", "Silver", "Space Gray", "Blue", "Midnight Green", "Red"],
    premiums: &[],
    ordered: false,
};

static OUTDOOR_COLOR: Axis = Axis {
    name: "Color",
    values: &["Forest Green", "Black", "Orange", "Blue", "Gray", "Red", "Olive", "Sand", "Yellow"],
    premiums: &[],
    ordered: false,
};

static SPORT_COLOR: Axis = Axis {
    name: "Color",
    values: &["Black", "Blue", "Purple", "Teal", "Gray", "Pink", "Red", "Green"],
    premiums: &[],
    ordered: false,
};
