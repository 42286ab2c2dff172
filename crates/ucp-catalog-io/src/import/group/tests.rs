use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::import::reference::ReferenceBuilder;
use crate::import::row::Attr;
use crate::import::{ParsedFeed, Staged, StagedFeed, collect};

fn raw(line: u64, values: &[(Attr, &str)]) -> RawItem {
    let mut raw = RawItem::default();
    raw.reset(line);
    for (attr, value) in values {
        raw.set(*attr, value);
    }
    raw
}

fn builder() -> FeedBuilder<'static> {
    FeedBuilder::new(Staging::create(&std::env::temp_dir(), SCHEMA).unwrap(), None, true)
}

fn finish(builder: FeedBuilder<'_>) -> ParsedFeed {
    collect_rows(builder.finish(&ImportOptions::default()).unwrap(), Vec::new())
}

/// The feed staged, after the `early` products handed on while reading.
fn collect_rows(staged: StagedRows, early: Vec<Product>) -> ParsedFeed {
    let groups: i64 = staged
        .staging
        .connection()
        .query_row(&format!("SELECT count(DISTINCT key >> {SLOT_BITS}) FROM rows"), [], |row| row.get(0))
        .unwrap();
    assert_eq!(staged.groups, groups as u64, "groups with rows are counted as they come and go");
    collect(StagedFeed { staged: Staged::Rows(staged) }, early).unwrap()
}

#[test]
fn duplicate_ids_replace_earlier_rows_even_across_groups() {
    let options = ImportOptions::default();
    let mut builder = builder();
    let rows = [
        raw(2, &[(Attr::Id, "a"), (Attr::Title, "First"), (Attr::Price, "1 USD")]),
        raw(3, &[(Attr::Id, "b"), (Attr::ItemGroupId, "g"), (Attr::Title, "Group"), (Attr::Price, "2 USD")]),
        raw(4, &[(Attr::Id, "a"), (Attr::Title, "Second"), (Attr::Price, "3 USD")]),
        raw(5, &[(Attr::Id, "b"), (Attr::ItemGroupId, "h"), (Attr::Title, "Moved"), (Attr::Price, "4 USD")]),
    ];
    for mut row in rows {
        builder.add(&mut row, &options).unwrap();
    }
    let feed = finish(builder);
    assert_eq!(feed.rows, 4);
    assert!(feed.skipped.is_empty(), "{:?}", feed.skipped);
    let ids: Vec<&str> = feed.products.iter().map(|product| product.id.as_str()).collect();
    assert_eq!(ids, ["a", "h"]);
    assert_eq!(feed.products[0].handle.as_deref(), Some("second-a"));
    assert_eq!(feed.products[0].title, "Second");
    assert_eq!(feed.products[0].price_range.min.amount, 300);
    assert_eq!(feed.products[1].variants[0].id, "b");
}

#[test]
fn handles_are_unique() {
    let options = ImportOptions::default();
    let mut builder = builder();
    for (line, id) in [(2, "a_1"), (3, "a-1"), (4, "A.1")] {
        let mut row = raw(line, &[(Attr::Id, id), (Attr::Title, "Cup"), (Attr::Price, "1")]);
        builder.add(&mut row, &options).unwrap();
    }
    let handles: Vec<String> = finish(builder).products.into_iter().filter_map(|product| product.handle).collect();
    assert_eq!(handles, ["cup-a-1", "cup-a-1-2", "cup-a-1-3"]);
}

// Every row is priced in the catalog's currency (a price without one is in it), and a
// product's first row has a title.
#[test]
fn rows_need_the_catalogs_currency_and_a_product_a_first_title() {
    let options = ImportOptions::default();
    let mut builder = builder();
    let rows = [
        raw(2, &[(Attr::Id, "a1"), (Attr::ItemGroupId, "a"), (Attr::Price, "1 USD")]),
        raw(3, &[(Attr::Id, "a2"), (Attr::ItemGroupId, "a"), (Attr::Title, "A"), (Attr::Price, "1 USD")]),
        raw(4, &[(Attr::Id, "a3"), (Attr::ItemGroupId, "a"), (Attr::Price, "1 EUR")]),
        raw(5, &[(Attr::Id, "a4"), (Attr::ItemGroupId, "a"), (Attr::Price, "2"), (Attr::Size, "L")]),
        raw(6, &[(Attr::Id, "b"), (Attr::Title, "B"), (Attr::Price, "EUR 3")]),
    ];
    for mut row in rows {
        builder.add(&mut row, &options).unwrap();
    }
    let feed = finish(builder);
    let skipped: Vec<String> = feed.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "line 2: title: missing (the first item of a product needs a title)",
            "line 4: price: currency EUR is not the catalog's currency USD",
            "line 6: price: currency EUR is not the catalog's currency USD",
        ]
    );
    assert_eq!(feed.products.len(), 1);
    let product = &feed.products[0];
    assert_eq!(product.variants.len(), 2);
    assert_eq!(product.variants[0].title, "A");
    assert_eq!(product.variants[1].title, "L");
    assert_eq!(product.variants[1].price, ucp_domain::money::Price::new(200, "USD".to_owned()));
}

// A product's id (its item_group_id, or a lone item's id) may not be an item of another
// product, and an item's id may not be another product's id: get_product and cart lines would
// resolve it to the wrong product. A lone item's product shares its item's id, and an item
// may still move away from the product its id names once it is that product's last.
#[test]
fn one_products_id_may_not_be_another_products_item() {
    let options = ImportOptions::default();
    let mut builder = builder();
    let rows: [&[(Attr, &str)]; 8] = [
        &[(Attr::Id, "tee-s"), (Attr::ItemGroupId, "tee"), (Attr::Title, "Tee"), (Attr::Price, "9")],
        &[(Attr::Id, "tee"), (Attr::Title, "Tee"), (Attr::Price, "9")],
        &[(Attr::Id, "mug"), (Attr::ItemGroupId, "tee-s"), (Attr::Title, "Mug"), (Attr::Price, "5")],
        &[(Attr::Id, "cap"), (Attr::ItemGroupId, "hats"), (Attr::Title, "Cap"), (Attr::Price, "7")],
        &[(Attr::Id, "hats"), (Attr::ItemGroupId, "scarves"), (Attr::Title, "Scarf"), (Attr::Price, "8")],
        &[(Attr::Id, "solo"), (Attr::Title, "Solo"), (Attr::Price, "3")],
        &[(Attr::Id, "solo"), (Attr::ItemGroupId, "hats"), (Attr::Title, "Solo hat"), (Attr::Price, "4")],
        &[(Attr::Id, "x"), (Attr::ItemGroupId, "solo"), (Attr::Title, "X"), (Attr::Price, "2")],
    ];
    for (line, values) in (2..).zip(rows) {
        builder.add(&mut raw(line, values), &options).unwrap();
    }
    let feed = finish(builder);
    let skipped: Vec<String> = feed.skipped.iter().map(ToString::to_string).collect();
    assert_eq!(
        skipped,
        [
            "line 4: item_group_id: product id \"tee-s\" is already the id of an item of product \"tee\"",
            "line 6: id: \"hats\" is already the id of another product",
            "line 9: item_group_id: product id \"solo\" is already the id of an item of product \"hats\"",
        ]
    );
    let products: Vec<(&str, Vec<&str>)> = feed
        .products
        .iter()
        .map(|product| (product.id.as_str(), product.variants.iter().map(|variant| variant.id.as_str()).collect()))
        .collect();
    assert_eq!(products, [("tee", vec!["tee-s", "tee"]), ("hats", vec!["cap", "solo"])]);
}

// Many other products (more than the group cache holds) between a product's first row and
// its last: the product is still whole, in the place of its first row.
#[test]
fn a_group_whose_rows_are_far_apart_is_one_product_in_its_first_place() {
    let options = ImportOptions::default();
    let mut builder = builder();
    let others = GROUP_CACHE * 3;
    let mut line = 1;
    let mut add = |builder: &mut FeedBuilder, values: &[(Attr, &str)]| {
        line += 1;
        builder.add(&mut raw(line, values), &options).unwrap();
    };
    let tee = |id, size| {
        [(Attr::Id, id), (Attr::ItemGroupId, "tee"), (Attr::Title, "Tee"), (Attr::Price, "9 USD"), (Attr::Size, size)]
    };
    add(&mut builder, &tee("tee-s", "S"));
    for other in 0..others {
        let id = format!("mug-{other}");
        add(&mut builder, &[(Attr::Id, &id), (Attr::Title, "Mug"), (Attr::Price, "5 USD")]);
        if other == others / 2 {
            add(&mut builder, &tee("tee-m", "M"));
        }
    }
    add(&mut builder, &tee("tee-l", "L"));
    // A repeat far from the first: replaces it in place.
    add(&mut builder, &[(Attr::Id, "tee-s"), (Attr::ItemGroupId, "tee"), (Attr::Price, "7 USD"), (Attr::Size, "XS")]);
    let feed = finish(builder);
    assert!(feed.skipped.is_empty(), "{:?}", feed.skipped);
    assert_eq!(feed.products.len(), others + 1);
    let tee = &feed.products[0];
    assert_eq!(tee.id, "tee");
    let variants: Vec<(&str, &str)> =
        tee.variants.iter().map(|variant| (variant.id.as_str(), variant.title.as_str())).collect();
    assert_eq!(variants, [("tee-s", "XS"), ("tee-m", "M"), ("tee-l", "L")]);
    assert_eq!(tee.price_range.min.amount, 700);
    assert_eq!(feed.products[1].id, "mug-0");
    assert_eq!(feed.products[others].handle.as_deref(), Some(format!("mug-mug-{}", others - 1).as_str()));
}

/// Products handed on while reading, and whether they were retracted.
#[derive(Default)]
struct Early {
    products: Vec<Product>,
    retracted: bool,
}

impl EarlyProducts for Early {
    fn product(&mut self, product: Product) {
        assert!(!self.retracted, "no product comes after a retraction");
        self.products.push(product);
    }

    fn retract(&mut self) {
        self.retracted = true;
        self.products.clear();
    }
}

/// A random feed: products one after the other (`scattered`: rows in random order), each
/// of a few rows, with now and then a row of an earlier product (`moved`), with the id of
/// an earlier row (`repeated`), or with an id or item_group_id that is a product's or an
/// item's (`clashing`); random currencies, titles (colliding handles), missing titles, bad
/// prices and additional images, some no URL.
fn random_feed(
    rng: &mut ChaCha8Rng,
    scattered: bool,
    moved: f64,
    repeated: f64,
    clashing: f64,
) -> Vec<Vec<(Attr, String)>> {
    let most = [4, 12, GROUP_CACHE * 4][rng.random_range(0..3)];
    let groups = rng.random_range(1..most + 1);
    let mut rows = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    for group in 0..groups {
        for variant in 0..rng.random_range(1..4) {
            let mut group = group;
            if rng.random_bool(moved) {
                group = rng.random_range(0..=group);
            }
            let id = match ids.len() {
                0 => format!("v{group}-{variant}"),
                known if rng.random_bool(repeated) => ids[rng.random_range(0..known)].clone(),
                // The id of a product, earlier or later.
                _ if rng.random_bool(clashing) => format!("g{}", rng.random_range(0..groups)),
                _ => format!("{}{group}-{variant}", ["v", "V_", "v-"][rng.random_range(0..3)]),
            };
            ids.push(id.clone());
            // A product whose id is an item's, earlier or later.
            let group_id = match rng.random_bool(clashing) {
                true => ids[rng.random_range(0..ids.len())].clone(),
                false => format!("g{group}"),
            };
            let price = match rng.random_range(0..20) {
                0 => "1 EUR".to_owned(),
                1 => "free".to_owned(),
                cents => format!("{cents}.50 USD"),
            };
            let mut values = vec![
                (Attr::Id, id),
                (Attr::Price, price),
                (Attr::Size, ["S", "M", "L"][rng.random_range(0..3)].to_owned()),
            ];
            if rng.random_bool(0.7) {
                values.push((Attr::ItemGroupId, group_id));
            }
            if rng.random_bool(0.85) {
                values.push((Attr::Title, ["Tee", "Mug", "tee"][rng.random_range(0..3)].to_owned()));
            }
            if rng.random_bool(0.2) {
                values.push((Attr::AdditionalImageLink, "https://img.example/upload/w_4".to_owned()));
                let second = ["h_4/a.jpg", "https://img.example/a|b.jpg"][rng.random_range(0..2)];
                values.push((Attr::AdditionalImageLink, second.to_owned()));
            }
            rows.push(values);
        }
    }
    if scattered {
        for index in (1..rows.len()).rev() {
            rows.swap(index, rng.random_range(0..=index));
        }
    }
    rows
}

// Random feeds built to hit every rule (repeated ids in and across groups, groups emptied
// by moves, ids clashing, currencies other than the catalog's, untitled first rows, handle
// collisions, bad prices), with far more groups than the cache holds: staged, with products
// built after reading or handed on while reading (and retracted when a guess was wrong), they
// give exactly what the in-memory grouping gives.
#[test]
fn staged_grouping_matches_the_in_memory_grouping() {
    let options = ImportOptions::default();
    let (mut guessed_right, mut retracted, mut clashes, mut warnings) = (0, 0, 0, 0);
    for seed in 0..150 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (moved, repeated) = [(0.0, 0.0), (0.0, 0.01), (0.0, 0.2), (0.01, 0.0), (0.2, 0.2)][seed as usize % 5];
        let clashing = [0.0, 0.02, 0.1][seed as usize % 3];
        let feed = random_feed(&mut rng, seed % 7 == 0, moved, repeated, clashing);
        let mut reference = ReferenceBuilder::default();
        let mut staged = builder();
        let (mut early, mut early_alone) = (Early::default(), Early::default());
        let mut guessing =
            FeedBuilder::new(Staging::create(&std::env::temp_dir(), SCHEMA).unwrap(), Some(&mut early), true);
        let mut alone =
            FeedBuilder::new(Staging::create(&std::env::temp_dir(), SCHEMA).unwrap(), Some(&mut early_alone), false);
        let mut reading_alone = true;
        for (line, values) in (2..).zip(&feed) {
            let values: Vec<(Attr, &str)> = values.iter().map(|(attr, value)| (*attr, value.as_str())).collect();
            reference.add(&mut raw(line, &values), &options);
            staged.add(&mut raw(line, &values), &options).unwrap();
            guessing.add(&mut raw(line, &values), &options).unwrap();
            if reading_alone {
                reading_alone = alone.add(&mut raw(line, &values), &options).unwrap();
            }
        }
        let (reference, staged) = (reference.finish(), finish(staged));
        clashes += reference.skipped.iter().filter(|skipped| skipped.reason.contains("is already the id of")).count();
        warnings += reference.warnings.len();
        let guessing = guessing.finish(&options).unwrap();
        let guessed = collect_rows(guessing, std::mem::take(&mut early.products));
        let alone = alone.finish(&options).unwrap();
        // Without the rows' values, a wrong guess abandons the reading, as soon as it is made.
        assert_eq!(alone.abandoned, early.retracted, "seed {seed}");
        assert_eq!(early_alone.retracted, early.retracted, "seed {seed}");
        let mut ways = vec![("after reading", staged), ("while reading", guessed)];
        if !alone.abandoned {
            ways.push(("while reading, values not kept", collect_rows(alone, early_alone.products)));
        }
        if early.retracted {
            retracted += 1;
        } else {
            guessed_right += 1;
        }
        for (how, feed) in ways {
            assert_eq!(feed.rows, reference.rows, "seed {seed}, built {how}");
            assert_eq!(feed.skipped, reference.skipped, "seed {seed}, built {how}");
            assert_eq!(feed.warnings, reference.warnings, "seed {seed}, built {how}");
            assert_eq!(feed.products, reference.products, "seed {seed}, built {how}");
        }
    }
    assert!(guessed_right > 20 && retracted > 20, "both ways are tried: {guessed_right} right, {retracted} retracted");
    assert!(clashes > 50, "ids clash now and then: {clashes}");
    assert!(warnings > 50, "images are left out now and then: {warnings}");
}
