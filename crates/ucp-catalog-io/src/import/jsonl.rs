//! Our own import form: one UCP Product JSON document per line (`to_import_document`), staged
//! line by line (the same product id may come again) and read back as products.

use std::io::BufRead;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use ucp_domain::catalog::{
    Availability, Barcode, Category, Description, Media, PriceRange, Product, ProductOption, Rating, SelectedOption,
    Seller, Variant,
};
use ucp_domain::money::Price;

use super::staging::{Phase, Staging, staging_error};
use super::{EarlyProducts, FeedError, FeedLine, FeedLines, PROGRESS_EVERY, SkippedRow};

/// The staging tables of a JSON-lines feed: the lines of the products present (a product id
/// seen again replaces the earlier line, in its place), in order of first appearance, and which
/// product each variant id belongs to.
pub(super) const SCHEMA: &str = "
    CREATE TABLE products (
        ord  INTEGER PRIMARY KEY,
        id   TEXT    NOT NULL UNIQUE,
        raw  BLOB    NOT NULL
    );
    CREATE TABLE owners (
        variant TEXT    PRIMARY KEY,
        ord     INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX owners_ord ON owners (ord);";

/// Pass one: checks every line and stages the valid ones. With an `early` sink, each product
/// is handed on as soon as its line is read, on the guess that no later line replaces it; a
/// line that does retracts them all (the products are then built from the staging, or, if the
/// lines are not kept (`payloads` false), the reading stops there, abandoned).
pub(super) fn stage_jsonl(
    reader: impl BufRead,
    staging: Staging,
    mut early: Option<&mut dyn EarlyProducts>,
    payloads: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<StagedLines, FeedError> {
    let connection = staging.connection();
    let mut handed = 0u64;
    let (mut rows, mut products) = (0u64, 0u64);
    let mut lines = FeedLines::new(reader);
    let mut bytes = 0u64;
    while let Some(FeedLine { number, bytes: read, content }) = lines.next_line()? {
        bytes = read;
        if content.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        rows += 1;
        if rows.is_multiple_of(PROGRESS_EVERY) {
            progress(bytes);
        }
        let product = match parse_product(content) {
            Ok(product) => product,
            Err((field, reason)) => {
                staging.skip(&SkippedRow::new(number, field, reason), Phase::Read)?;
                if let Some(early) = &mut early {
                    early.skipped();
                }
                continue;
            }
        };
        // A product id seen again replaces the earlier product; a variant id must not belong
        // to another product.
        let ord: Option<i64> = connection
            .prepare_cached("SELECT ord FROM products WHERE id = ?1")
            .and_then(|mut statement| statement.query_row([&product.id], |row| row.get(0)).optional())
            .map_err(staging_error)?;
        if let Some(skipped) = clash(connection, &product, ord, number)? {
            staging.skip(&skipped, Phase::Read)?;
            if let Some(early) = &mut early {
                early.skipped();
            }
            continue;
        }
        let ord = match ord {
            Some(ord) => {
                if let Some(early) = early.take() {
                    early.retract();
                    if !payloads {
                        return Ok(StagedLines { staging, rows, products, handed: None, abandoned: true });
                    }
                }
                connection
                    .prepare_cached("UPDATE products SET raw = ?2 WHERE ord = ?1")
                    .and_then(|mut statement| statement.execute(params![ord, kept(payloads, content)]))
                    .and_then(|_| connection.prepare_cached("DELETE FROM owners WHERE ord = ?1"))
                    .and_then(|mut statement| statement.execute([ord]))
                    .map_err(staging_error)?;
                ord
            }
            None => {
                products += 1;
                connection
                    .prepare_cached("INSERT INTO products (ord, id, raw) VALUES (?1, ?2, ?3)")
                    .and_then(|mut statement| {
                        statement.execute(params![products as i64, product.id, kept(payloads, content)])
                    })
                    .map_err(staging_error)?;
                products as i64
            }
        };
        let mut own = connection
            .prepare_cached("INSERT OR REPLACE INTO owners (variant, ord) VALUES (?1, ?2)")
            .map_err(staging_error)?;
        for variant in &product.variants {
            own.execute(params![variant.id, ord]).map_err(staging_error)?;
        }
        if let Some(early) = &mut early {
            early.product(product);
            handed += 1;
        }
    }
    progress(bytes);
    let handed = early.is_some().then_some(handed);
    Ok(StagedLines { staging, rows, products, handed, abandoned: false })
}

/// What is staged of a line: all of it if `payloads`, else nothing.
fn kept(payloads: bool, content: &[u8]) -> &[u8] {
    if payloads { content } else { &[] }
}

/// The first variant of `product` (staged at `ord` if seen before) that another product
/// holds, as the skipped row of line `number`.
fn clash(
    connection: &Connection,
    product: &Product,
    ord: Option<i64>,
    number: u64,
) -> Result<Option<SkippedRow>, FeedError> {
    let mut owner_of = connection.prepare_cached("SELECT ord FROM owners WHERE variant = ?1").map_err(staging_error)?;
    for (index, variant) in product.variants.iter().enumerate() {
        let owner: Option<i64> =
            owner_of.query_row([&variant.id], |row| row.get(0)).optional().map_err(staging_error)?;
        let Some(owner) = owner.filter(|owner| Some(*owner) != ord) else { continue };
        let owner: String = connection
            .prepare_cached("SELECT id FROM products WHERE ord = ?1")
            .and_then(|mut statement| statement.query_row([owner], |row| row.get(0)))
            .map_err(staging_error)?;
        return Ok(Some(SkippedRow::new(
            number,
            format!("variants[{index}].id"),
            format!("variant id {:?} already belongs to product {owner:?}", variant.id),
        )));
    }
    Ok(None)
}

/// The valid lines of a JSON-lines feed, staged, ready to become products.
pub(super) struct StagedLines {
    pub(super) staging: Staging,
    pub(super) rows: u64,
    /// Products staged (each product id once).
    pub(super) products: u64,
    /// Every product was handed on while reading (how many): nothing is left to build.
    pub(super) handed: Option<u64>,
    /// The reading stopped at a wrong guess, without the lines: nothing can be built.
    pub(super) abandoned: bool,
}

impl StagedLines {
    /// Pass two: the products in order of first appearance, each from its last line.
    pub(super) fn build(&self, emit: &mut dyn FnMut(Product), progress: &mut dyn FnMut(u64)) -> Result<u64, FeedError> {
        if self.abandoned {
            return Err(FeedError::Staging("the reading was abandoned: read the feed again".to_owned()));
        }
        let mut statement =
            self.staging.connection().prepare("SELECT raw FROM products ORDER BY ord").map_err(staging_error)?;
        let mut cursor = statement.query([]).map_err(staging_error)?;
        let mut built = 0u64;
        while let Some(found) = cursor.next().map_err(staging_error)? {
            let raw = found.get_ref(0).and_then(|value| Ok(value.as_blob()?)).map_err(staging_error)?;
            let product = parse_product(raw)
                .map_err(|_| FeedError::Staging("a staged product no longer reads back".to_owned()))?;
            emit(product);
            built += 1;
            if built.is_multiple_of(PROGRESS_EVERY) {
                progress(built);
            }
        }
        progress(built);
        Ok(built)
    }
}

/// One line into a normalized product, or the field at fault and why.
pub(super) fn parse_product(line: &[u8]) -> Result<Product, (String, String)> {
    let mut product = match serde_json::from_slice::<Product>(line) {
        Ok(product) => product,
        Err(_) => parse_product_slowly(line)?,
    };
    product.normalize().map_err(|invalid| (invalid.field, invalid.reason))?;
    Ok(product)
}

/// The error path: find which field is wrong, and accept a missing `price_range` (derived).
fn parse_product_slowly(line: &[u8]) -> Result<Product, (String, String)> {
    let mut value: Value =
        serde_json::from_slice(line).map_err(|error| ("json".to_owned(), format!("not valid JSON: {error}")))?;
    let Some(object) = value.as_object_mut() else {
        return Err(("json".to_owned(), "expected a JSON object: one product per line".to_owned()));
    };
    if !object.contains_key("price_range") {
        let zero = serde_json::json!({ "amount": 0, "currency": "XXX" });
        object.insert("price_range".to_owned(), serde_json::json!({ "min": zero, "max": zero }));
    }
    match locate::<Product>(&value, &product_fields()) {
        None => Product::deserialize(&value).map_err(|error| ("product".to_owned(), error.to_string())),
        Some((path, reason)) if path.is_empty() => Err(("product".to_owned(), reason)),
        Some(failure) => Err(failure),
    }
}

/// A check of one field's value: `None` if it deserializes, else the path below the field
/// (`""`, `[2]`, `[0].price`) and the reason.
type Probe = fn(&Value) -> Option<(String, String)>;

/// Where deserializing `value` as `T` fails: the path (`""` for the object itself) and why.
fn locate<T: DeserializeOwned>(value: &Value, fields: &[(&str, Probe)]) -> Option<(String, String)> {
    let error = T::deserialize(value).err()?;
    if let Some(object) = value.as_object() {
        for (name, probe) in fields {
            if let Some((below, reason)) = object.get(*name).and_then(probe) {
                return Some((format!("{name}{below}"), reason));
            }
        }
    }
    let reason = error.to_string();
    let missing = reason.strip_prefix("missing field `").and_then(|rest| rest.split('`').next());
    Some((missing.unwrap_or_default().to_owned(), reason))
}

fn whole<T: DeserializeOwned>(value: &Value) -> Option<(String, String)> {
    T::deserialize(value).err().map(|error| (String::new(), error.to_string()))
}

fn each<T: DeserializeOwned>(value: &Value) -> Option<(String, String)> {
    let Some(items) = value.as_array() else {
        return whole::<Vec<T>>(value);
    };
    items
        .iter()
        .enumerate()
        .find_map(|(index, item)| T::deserialize(item).err().map(|error| (format!("[{index}]"), error.to_string())))
}

fn variants(value: &Value) -> Option<(String, String)> {
    let Some(items) = value.as_array() else {
        return whole::<Vec<Variant>>(value);
    };
    items.iter().enumerate().find_map(|(index, item)| {
        locate::<Variant>(item, &variant_fields()).map(|(path, reason)| match path.as_str() {
            "" => (format!("[{index}]"), reason),
            path => (format!("[{index}].{path}"), reason),
        })
    })
}

fn product_fields() -> [(&'static str, Probe); 14] {
    [
        ("id", whole::<String>),
        ("handle", whole::<Option<String>>),
        ("title", whole::<String>),
        ("description", whole::<Description>),
        ("url", whole::<Option<String>>),
        ("categories", each::<Category>),
        ("price_range", whole::<PriceRange>),
        ("list_price_range", whole::<Option<PriceRange>>),
        ("media", each::<Media>),
        ("options", each::<ProductOption>),
        ("variants", variants),
        ("rating", whole::<Option<Rating>>),
        ("tags", each::<String>),
        ("metadata", whole::<Option<ucp_domain::json::JsonMap>>),
    ]
}

fn variant_fields() -> [(&'static str, Probe); 19] {
    [
        ("id", whole::<String>),
        ("sku", whole::<Option<String>>),
        ("barcodes", each::<Barcode>),
        ("handle", whole::<Option<String>>),
        ("url", whole::<Option<String>>),
        ("title", whole::<String>),
        ("description", whole::<Description>),
        ("categories", each::<Category>),
        ("price", whole::<Price>),
        ("list_price", whole::<Option<Price>>),
        ("unit_price", whole::<Option<ucp_domain::json::Json>>),
        ("availability", whole::<Option<Availability>>),
        ("options", each::<SelectedOption>),
        ("media", each::<Media>),
        ("rating", whole::<Option<Rating>>),
        ("tags", each::<String>),
        ("metadata", whole::<Option<ucp_domain::json::JsonMap>>),
        ("seller", whole::<Option<Seller>>),
        ("inventory_quantity", whole::<Option<i64>>),
    ]
}

#[cfg(test)]
mod tests {
    use crate::to_import_document;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::super::reference::reference_jsonl;
    use std::env::temp_dir;

    use super::super::{FeedFormat, ImportOptions, ParsedFeed, collect, read_feed, stage_feed};

    fn parse(feed: &str) -> ParsedFeed {
        read_feed(feed.as_bytes(), FeedFormat::JsonLines, &ImportOptions::default(), &mut |_| {}).unwrap()
    }

    fn line(id: &str, variant_id: &str, amount: i64) -> String {
        serde_json::json!({
            "id": id,
            "title": format!("Product {id}"),
            "description": { "plain": "A thing" },
            "variants": [{
                "id": variant_id,
                "title": "",
                "description": {},
                "price": { "amount": amount, "currency": "USD" },
                "inventory_quantity": 4
            }]
        })
        .to_string()
    }

    #[test]
    fn good_and_bad_lines() {
        let feed = [
            line("p1", "v1", 1000),
            String::new(),
            "{not json".to_owned(),
            "[1, 2]".to_owned(),
            r#"{"id":"p2","title":"T","description":{},"variants":[{"id":"v2","title":"","description":{},"price":{"amount":"12","currency":"USD"}}]}"#.to_owned(),
            r#"{"id":"p3","description":{},"variants":[]}"#.to_owned(),
            r#"{"id":"p4","title":"T","description":{},"variants":[{"id":"v4","title":"","description":{},"price":{"amount":5,"currency":"usd"}}]}"#.to_owned(),
            r#"{"id":"p5","title":"T","description":{},"variants":[{"id":"v5","title":"","description":{},"price":{"amount":5}}]}"#.to_owned(),
            r#"{"id":"p6","title":"T","description":{},"tags":["a",7],"variants":[]}"#.to_owned(),
            line("p7", "v1", 1),
            line("p1", "v1b", 2000),
            "   ".to_owned(),
        ]
        .join("\n");
        let parsed = parse(&feed);
        assert_eq!(parsed.rows, 10);
        let skipped: Vec<(u64, &str)> =
            parsed.skipped.iter().map(|skipped| (skipped.line, skipped.field.as_str())).collect();
        assert_eq!(
            skipped,
            [
                (3, "json"),
                (4, "json"),
                (5, "variants[0].price"),
                (6, "title"),
                (7, "variants[0].price.currency"),
                (8, "variants[0].price"),
                (9, "tags[1]"),
                (10, "variants[0].id"),
            ],
            "{:?}",
            parsed.skipped
        );
        assert!(parsed.skipped[0].reason.starts_with("not valid JSON"));
        assert!(parsed.skipped[2].reason.contains("invalid type"), "{}", parsed.skipped[2].reason);
        assert!(parsed.skipped[5].reason.contains("missing field `currency`"), "{}", parsed.skipped[5].reason);
        assert!(parsed.skipped[7].reason.contains("already belongs to product \"p1\""));

        // p1 was replaced by its later line, which no longer holds v1.
        assert_eq!(parsed.products.len(), 1);
        let p1 = &parsed.products[0];
        assert_eq!(p1.variants[0].id, "v1b");
        assert_eq!(p1.price_range.min.amount, 2000);
        assert_eq!(p1.variants[0].inventory_quantity, Some(4));
        assert_eq!(p1.variants[0].title, "Product p1");
        assert!(p1.variants[0].is_available());
    }

    #[test]
    fn round_trips_the_import_document() {
        let mut original = parse(&line("p1", "v1", 1000)).products.remove(0);
        original.variants[0].inventory_quantity = Some(0);
        original.normalize().unwrap();
        let document = to_import_document(&original).to_string();
        let feed = format!("\u{feff}{document}\r\n\r\n{document}\n");
        let parsed = parse(&feed);
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!(parsed.rows, 2);
        assert_eq!(parsed.products, [original]);
    }

    // Random feeds of repeated product ids, variants moving between products (refused) and
    // away from them (freed), bad lines and blank lines: staged, they give exactly what the
    // in-memory reading gives.
    #[test]
    fn staged_lines_match_the_in_memory_reading() {
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut feed = String::new();
            for _ in 0..rng.random_range(1..200) {
                let text = match rng.random_range(0..12) {
                    0 => "{broken".to_owned(),
                    1 => "  ".to_owned(),
                    _ => {
                        let id = format!("p{}", rng.random_range(0..15));
                        let variant = format!("v{}", rng.random_range(0..25));
                        line(&id, &variant, rng.random_range(1..5000))
                    }
                };
                feed.push_str(&text);
                feed.push('\n');
            }
            let reference = reference_jsonl(feed.as_bytes(), &mut |_| {}).unwrap();
            let options = ImportOptions::default();
            let after_reading = stage_feed(feed.as_bytes(), FeedFormat::JsonLines, &options, &temp_dir(), &mut |_| {});
            let after_reading = collect(after_reading.unwrap(), Vec::new()).unwrap();
            for (how, staged) in [("while reading", parse(&feed)), ("after reading", after_reading)] {
                assert_eq!(staged.rows, reference.rows, "seed {seed}, built {how}");
                assert_eq!(staged.skipped, reference.skipped, "seed {seed}, built {how}");
                assert_eq!(staged.products, reference.products, "seed {seed}, built {how}");
            }
        }
    }
}
