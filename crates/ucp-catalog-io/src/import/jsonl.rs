//! Our own import form: one UCP Product JSON document per line (`to_import_document`), staged
//! line by line (the same product id may come again) and read back as products.

use std::io::BufRead;

use rusqlite::{Connection, OptionalExtension, params};
use ucp_domain::catalog::Product;

use super::locate::parse_product_slowly;
use super::staging::{Phase, Staging, staging_error};
use super::{EarlyProducts, FeedError, FeedLine, FeedLines, ImportOptions, PROGRESS_EVERY, SkippedRow};

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
    options: &ImportOptions,
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
        let product = match parse_product(content, number, &options.currency) {
            Ok(product) => product,
            Err(skipped) => {
                staging.skip(&skipped, Phase::Read)?;
                if let Some(early) = &mut early {
                    early.skipped();
                }
                continue;
            }
        };
        // A product id seen again replaces the earlier product; a variant id must not belong
        // to another product, nor be another product's id.
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
                        return Ok(StagedLines {
                            staging,
                            currency: options.currency.clone(),
                            rows,
                            products,
                            handed: None,
                            abandoned: true,
                        });
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
    Ok(StagedLines { staging, currency: options.currency.clone(), rows, products, handed, abandoned: false })
}

/// What is staged of a line: all of it if `payloads`, else nothing.
fn kept(payloads: bool, content: &[u8]) -> &[u8] {
    if payloads { content } else { &[] }
}

/// Where `product` (staged at `ord` if seen before) clashes with the other products, as the
/// skipped row of line `number`: its id is another product's variant id, or one of its
/// variants (the first) belongs to another product or is another product's id. (A variant may
/// have its own product's id.)
fn clash(
    connection: &Connection,
    product: &Product,
    ord: Option<i64>,
    number: u64,
) -> Result<Option<SkippedRow>, FeedError> {
    let mut owner_of = connection.prepare_cached("SELECT ord FROM owners WHERE variant = ?1").map_err(staging_error)?;
    let mut product_of = connection.prepare_cached("SELECT ord FROM products WHERE id = ?1").map_err(staging_error)?;
    let id_of = |ord: i64| -> Result<String, FeedError> {
        connection
            .prepare_cached("SELECT id FROM products WHERE ord = ?1")
            .and_then(|mut statement| statement.query_row([ord], |row| row.get(0)))
            .map_err(staging_error)
    };
    let other = |found: Option<i64>| found.filter(|found| Some(*found) != ord);
    let owner = owner_of.query_row([&product.id], |row| row.get(0)).optional().map_err(staging_error)?;
    if let Some(owner) = other(owner) {
        return Ok(Some(SkippedRow::new(
            number,
            "id",
            format!("product id {:?} already belongs to a variant of product {:?}", product.id, id_of(owner)?),
        )));
    }
    for (index, variant) in product.variants.iter().enumerate() {
        let owner = owner_of.query_row([&variant.id], |row| row.get(0)).optional().map_err(staging_error)?;
        if let Some(owner) = other(owner) {
            return Ok(Some(SkippedRow::new(
                number,
                format!("variants[{index}].id"),
                format!("variant id {:?} already belongs to product {:?}", variant.id, id_of(owner)?),
            )));
        }
        if variant.id != product.id
            && product_of
                .query_row([&variant.id], |row| row.get::<_, i64>(0))
                .optional()
                .map_err(staging_error)?
                .is_some()
        {
            return Ok(Some(SkippedRow::new(
                number,
                format!("variants[{index}].id"),
                format!("variant id {:?} is already the id of another product", variant.id),
            )));
        }
    }
    Ok(None)
}

/// The valid lines of a JSON-lines feed, staged, ready to become products.
pub(super) struct StagedLines {
    pub(super) staging: Staging,
    /// The catalog's currency ([`ImportOptions::currency`]).
    pub(super) currency: String,
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
            let product = parse_product(raw, 0, &self.currency)
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

/// Line `number` into a normalized product priced in `currency` (the catalog's), or why it is
/// skipped.
pub(super) fn parse_product(line: &[u8], number: u64, currency: &str) -> Result<Product, SkippedRow> {
    let mut product = match serde_json::from_slice::<Product>(line) {
        Ok(product) => product,
        Err(_) => parse_product_slowly(line).map_err(|(field, reason)| SkippedRow::new(number, field, reason))?,
    };
    product.normalize().map_err(|invalid| SkippedRow::new(number, invalid.field, invalid.reason))?;
    if let Err(invalid) = product.require_currency(currency) {
        // Every variant is priced in the product's one currency.
        return Err(SkippedRow::new(number, invalid.field, invalid.reason).priced_in(product.currency()));
    }
    Ok(product)
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

    // A product in another currency than the catalog's, with a link that is no web URL, or
    // whose id is another product's variant id (or a variant id another product's id) is
    // skipped; a variant may have its own product's id, and a variant id freed by a later line
    // may become a product's id.
    #[test]
    fn lines_in_another_currency_with_bad_links_or_clashing_ids_are_skipped() {
        let with = |id: &str, change: &dyn Fn(&mut serde_json::Value)| {
            let mut value: serde_json::Value = serde_json::from_str(&line(id, &format!("{id}-v"), 100)).unwrap();
            change(&mut value);
            value.to_string()
        };
        let feed = [
            line("p1", "v1", 100),
            line("v1", "v9", 100),
            line("p2", "p1", 100),
            line("p3", "p3", 100),
            with("p4", &|value| value["variants"][0]["price"]["currency"] = "EUR".into()),
            with("p5", &|value| value["url"] = "javascript:alert(1)".into()),
            with("p6", &|value| value["media"] = serde_json::json!([{ "type": "image", "url": "data:image/png," }])),
            line("p1", "p1-b", 100),
            line("v1", "v1-b", 100),
        ]
        .join("\n");
        let parsed = parse(&feed);
        let skipped: Vec<String> = parsed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(
            skipped,
            [
                "line 2: id: product id \"v1\" already belongs to a variant of product \"p1\"",
                "line 3: variants[0].id: variant id \"p1\" is already the id of another product",
                "line 5: variants[0].price.currency: EUR is not the catalog's currency USD",
                "line 6: url: \"javascript:alert(1)\" is not an absolute http(s) URL",
                "line 7: media[0].url: \"data:image/png,\" is not an absolute http(s) URL",
            ]
        );
        let products: Vec<(&str, &str)> =
            parsed.products.iter().map(|product| (product.id.as_str(), product.variants[0].id.as_str())).collect();
        assert_eq!(products, [("p1", "p1-b"), ("p3", "p3"), ("v1", "v1-b")]);
        let in_euros = ImportOptions { currency: "EUR".to_owned() };
        let parsed = read_feed(feed.as_bytes(), FeedFormat::JsonLines, &in_euros, &mut |_| {}).unwrap();
        let ids: Vec<&str> = parsed.products.iter().map(|product| product.id.as_str()).collect();
        assert_eq!(ids, ["p4"], "the other products are in dollars");
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
    // away from them (freed), variant ids that are product ids, bad lines and blank lines:
    // staged, they give exactly what the in-memory reading gives.
    #[test]
    fn staged_lines_match_the_in_memory_reading() {
        let mut clashes = 0;
        for seed in 0..40 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut feed = String::new();
            for _ in 0..rng.random_range(1..200) {
                let text = match rng.random_range(0..12) {
                    0 => "{broken".to_owned(),
                    1 => "  ".to_owned(),
                    _ => {
                        let id = format!("p{}", rng.random_range(0..15));
                        let variant = match rng.random_range(0..10) {
                            0 => format!("p{}", rng.random_range(0..15)),
                            _ => format!("v{}", rng.random_range(0..25)),
                        };
                        line(&id, &variant, rng.random_range(1..5000))
                    }
                };
                feed.push_str(&text);
                feed.push('\n');
            }
            let reference = reference_jsonl(feed.as_bytes(), &ImportOptions::default(), &mut |_| {}).unwrap();
            clashes +=
                reference.skipped.iter().filter(|skipped| skipped.reason.contains("a variant of product")).count();
            let options = ImportOptions::default();
            let after_reading = stage_feed(feed.as_bytes(), FeedFormat::JsonLines, &options, &temp_dir(), &mut |_| {});
            let after_reading = collect(after_reading.unwrap(), Vec::new()).unwrap();
            for (how, staged) in [("while reading", parse(&feed)), ("after reading", after_reading)] {
                assert_eq!(staged.rows, reference.rows, "seed {seed}, built {how}");
                assert_eq!(staged.skipped, reference.skipped, "seed {seed}, built {how}");
                assert_eq!(staged.products, reference.products, "seed {seed}, built {how}");
            }
        }
        assert!(clashes > 20, "product ids clash with variant ids now and then: {clashes}");
    }
}
