//! `ucpd import` on feeds bigger than one batch: products whose rows are far apart, repeated
//! ids, imports that fail late and must leave the old catalog, and what the summary counts.

#[allow(dead_code, reason = "each test binary uses only some of the shared helpers")]
mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::ucpd;

const HEADER: &str = "id\titem_group_id\ttitle\tprice\tsize\n";

/// Products (id, handle, document) in catalog order, and the catalog version.
fn catalog(data: &Path) -> (i64, Vec<(String, String, String)>) {
    let connection = rusqlite::Connection::open(data.join("ucpd.db")).unwrap();
    let version = connection.query_row("SELECT version FROM catalog_meta", [], |row| row.get(0)).unwrap();
    let products = connection
        .prepare("SELECT id, handle, doc FROM products ORDER BY row")
        .unwrap()
        .query_map([], |row| {
            // Documents are stored LZ4-compressed, their length first.
            let doc = lz4_flex::decompress_size_prepended(row.get_ref(2)?.as_blob()?).unwrap();
            Ok((row.get(0)?, row.get(1)?, String::from_utf8(doc).unwrap()))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    (version, products)
}

fn variants_of(data: &Path, product_id: &str) -> Vec<String> {
    let connection = rusqlite::Connection::open(data.join("ucpd.db")).unwrap();
    connection
        .prepare(
            "SELECT v.id FROM variants v JOIN products p ON p.row = v.product_row WHERE p.id = ?1 ORDER BY v.position",
        )
        .unwrap()
        .query_map([product_id], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Nothing of the staging database is left behind in the data directory.
fn assert_no_staging_left(data: &Path) {
    let left: Vec<String> = std::fs::read_dir(data)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".ucpd-import"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

fn import(feed: &Path, data: &Path, extra: &[&str]) -> (bool, String, String) {
    let output = ucpd().arg("import").arg(feed).arg("--data-dir").arg(data).args(extra).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.success(), stdout, stderr)
}

/// A tee whose three rows are at the start, the middle and the end, 600 mugs between them, and
/// at the very end a row that replaces an early mug.
fn scattered_feed() -> String {
    let mut feed = String::from(HEADER);
    feed.push_str("tee-s\ttee\tTee\t9.00 USD\tS\n");
    for mug in 0..600 {
        writeln!(feed, "mug-{mug}\t\tMug\t{}.50 USD\t", mug % 40 + 1).unwrap();
        if mug == 300 {
            feed.push_str("tee-m\ttee\tTee\t9.00 USD\tM\n");
        }
    }
    feed.push_str("tee-l\ttee\tTee\t9.00 USD\tL\n");
    feed.push_str("mug-10\t\tTen Again\t1.00 USD\t\n");
    feed
}

#[test]
fn a_product_whose_rows_are_far_apart_imports_whole_in_its_first_place() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(&feed, scattered_feed()).unwrap();
    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(stdout.contains(": 604 rows, 601 products (601 new, 0 updated), 603 variants, 0 rows skipped"), "{stdout}");
    assert_no_staging_left(&data);

    let (version, products) = catalog(&data);
    assert_eq!(version, 1);
    assert_eq!(products.len(), 601);
    assert_eq!((products[0].0.as_str(), products[0].1.as_str()), ("tee", "tee-tee"));
    assert_eq!(variants_of(&data, "tee"), ["tee-s", "tee-m", "tee-l"]);
    assert_eq!(products[1].0, "mug-0");
    // Replaced by the last row, in the place of its first.
    assert_eq!((products[11].0.as_str(), products[11].1.as_str()), ("mug-10", "ten-again-mug-10"));
    assert!(products[11].2.contains("\"Ten Again\""));
    assert_eq!(products[600].0, "mug-599");

    // The same feed again: every product updated in place, in the same order.
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(stdout.contains("601 products (0 new, 601 updated), 603 variants"), "{stdout}");
    let (version, again) = catalog(&data);
    assert_eq!(version, 2);
    assert_eq!(again, products);
}

// A feed whose products' rows are together is written while it is read; the same feed with
// one early row repeated at the end (which changes nothing, but is only known to change
// nothing at the end) is written again from the staging. Both give the same catalog.
#[test]
fn a_feed_written_while_read_and_one_written_again_give_the_same_catalog() {
    let directory = tempfile::tempdir().unwrap();
    let mut together = String::from(HEADER);
    for tee in 0..400 {
        for size in ["S", "M", "L"] {
            writeln!(together, "tee-{tee}-{size}\ttee-{tee}\tTee {}\t{}.00 USD\t{size}", tee % 7, tee % 30 + 1)
                .unwrap();
        }
    }
    let repeated = format!("{together}tee-3-M\ttee-3\tTee 3\t4.00 USD\tM\n");
    let mut catalogs = Vec::new();
    for (name, feed) in [("together.tsv", together), ("repeated.tsv", repeated)] {
        let path = directory.path().join(name);
        std::fs::write(&path, feed).unwrap();
        let data = directory.path().join(format!("data-{name}"));
        let (success, stdout, stderr) = import(&path, &data, &[]);
        assert!(success, "{stdout}\n{stderr}");
        assert!(stdout.contains("400 products (400 new, 0 updated), 1200 variants, 0 rows skipped"), "{stdout}");
        catalogs.push(catalog(&data));
    }
    assert_eq!(catalogs[0], catalogs[1]);
    assert_eq!(catalogs[0].1.len(), 400);
    // A handle is the slug of the title, then of the id.
    assert_eq!(catalogs[0].1[7].1, "tee-0-tee-7");
}

// A product late in the feed takes a variant id that another product of the catalog holds:
// the store refuses it after hundreds of products were written, and the whole import goes.
#[test]
fn an_import_that_fails_late_leaves_the_old_catalog() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(&feed, scattered_feed()).unwrap();
    let data = directory.path().join("data");
    assert!(import(&feed, &data, &[]).0);
    let before = catalog(&data);

    let mut other = String::from(HEADER);
    for cup in 0..700 {
        writeln!(other, "cup-{cup}\t\tCup\t3.00 USD\t").unwrap();
    }
    other.push_str("tee-s\tthief\tThief\t1.00 USD\tS\n");
    let other_feed = directory.path().join("other.tsv");
    std::fs::write(&other_feed, other).unwrap();
    let (success, stdout, stderr) = import(&other_feed, &data, &[]);
    assert!(!success, "{stdout}\n{stderr}");
    assert!(stderr.contains("import failed, the catalog was not changed"), "{stderr}");
    assert!(stderr.contains("\"tee-s\""), "the error names the variant: {stderr}");
    assert_eq!(catalog(&data), before);
    assert_no_staging_left(&data);
}

// Rows that pass on their own but leave a product without a title once a later row moves its
// titled row to another product: found only when products are built, after the store began.
// With --strict nothing is written; without, the rest imports and the row is reported.
#[test]
fn a_product_that_fails_when_built_is_reported_and_strict_writes_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let data = directory.path().join("data");
    let first = directory.path().join("first.tsv");
    std::fs::write(&first, format!("{HEADER}keep\t\tKeep\t2.00 USD\t\n")).unwrap();
    assert!(import(&first, &data, &[]).0);
    let before = catalog(&data);

    let feed = directory.path().join("feed.tsv");
    std::fs::write(
        &feed,
        format!("{HEADER}a1\tg\tTitled\t1.00 USD\tS\na2\tg\t\t1.00 USD\tM\na1\th\tMoved\t1.00 USD\tS\n"),
    )
    .unwrap();
    let (success, stdout, stderr) = import(&feed, &data, &["--strict"]);
    assert!(!success, "{stdout}\n{stderr}");
    assert!(stderr.contains("feed.tsv: skipped line 3: title: must not be empty"), "{stderr}");
    assert!(stderr.contains("1 rows skipped and --strict is set; the catalog was not changed"), "{stderr}");
    assert_eq!(catalog(&data), before);

    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(stderr.contains("feed.tsv: skipped line 3: title: must not be empty"), "{stderr}");
    assert!(stdout.contains(": 3 rows, 1 products (1 new, 0 updated), 1 variants, 1 rows skipped"), "{stdout}");
    let ids: Vec<String> = catalog(&data).1.into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(ids, ["keep", "h"]);
    assert_no_staging_left(&data);
}

// A feed without one valid product changes nothing and leaves no data directory behind.
#[test]
fn a_feed_without_a_valid_product_creates_nothing() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(&feed, format!("{HEADER}x\t\tNo price\t\t\n")).unwrap();
    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(!success, "{stdout}\n{stderr}");
    assert!(stderr.contains("feed.tsv: skipped line 2: price: missing"), "{stderr}");
    assert!(stderr.contains("holds no valid product; the catalog was not changed"), "{stderr}");
    assert!(!data.exists(), "no data directory is left behind");
}

// Prices are in the catalog's currency, `catalog.currency` as `ucpd serve` reads it (USD by
// default; the configuration file or UCPD_CATALOG__CURRENCY): a row priced in another is
// skipped by line, since the server would serve its price as is and charge it in the catalog's
// currency. A --currency that names another is refused before anything is written.
#[test]
fn a_product_priced_in_another_currency_than_the_catalogs_is_skipped() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(&feed, format!("{HEADER}mug\t\tMug\t5.00 USD\t\ncup\t\tCup\t4.00 EUR\t\nbowl\t\tBowl\t6\t\n"))
        .unwrap();

    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("feed.tsv: skipped line 3: price: currency EUR is not the catalog's currency USD"),
        "{stderr}"
    );
    let products: Vec<(String, String)> = catalog(&data).1.into_iter().map(|(id, _, doc)| (id, doc)).collect();
    let ids: Vec<&str> = products.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["mug", "bowl"]);
    assert!(products.iter().all(|(_, doc)| doc.contains("\"currency\":\"USD\"") && !doc.contains("EUR")));

    // A shop in euros, set as the server reads it.
    let euros = directory.path().join("euros");
    let output = ucpd()
        .args(["import", "--data-dir"])
        .arg(&euros)
        .arg(&feed)
        .env("UCPD_CATALOG__CURRENCY", "EUR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("skipped line 2: price: currency USD is not the catalog's currency EUR"), "{stderr}");
    let ids: Vec<String> = catalog(&euros).1.into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(ids, ["cup", "bowl"]);
    assert!(catalog(&euros).1[1].2.contains("\"amount\":600,\"currency\":\"EUR\""), "no currency: the catalog's");

    let elsewhere = directory.path().join("elsewhere");
    let (success, stdout, stderr) = import(&feed, &elsewhere, &["--currency", "EUR"]);
    assert!(!success, "{stdout}\n{stderr}");
    assert!(stderr.contains("--currency EUR is not the catalog's currency USD"), "{stderr}");
    assert!(!elsewhere.exists(), "nothing is written");
    assert!(import(&feed, &elsewhere, &["--currency", "usd"]).0, "the catalog's own currency is accepted");
}

// A feed in euros under the default catalog currency (USD) is skipped row by row, and the
// report ends with one hint at the setting to change, before saying no product was valid.
#[test]
fn a_feed_in_another_currency_ends_with_a_hint_at_the_catalogs_currency() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(&feed, format!("{HEADER}mug\t\tMug\t5.00 EUR\t\ncup\t\tCup\t4.00 EUR\t\nhat\t\tHat\t3 GBP\t\n"))
        .unwrap();
    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(!success, "{stdout}\n{stderr}");
    let hint = "feed.tsv: rows priced in EUR (2), GBP (1) were skipped: the catalog's currency is USD \
                (catalog.currency). If the shop sells in EUR, set `currency = \"EUR\"` under [catalog] in the \
                configuration file, or UCPD_CATALOG__CURRENCY=EUR, for `ucpd serve` too, and import again\n";
    assert_eq!(stderr.matches("catalog.currency").count(), 1, "one hint: {stderr}");
    let (skips, rest) = stderr.split_once(hint).unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(skips.lines().filter(|line| line.contains(": skipped line ")).count(), 3, "{stderr}");
    assert!(rest.starts_with("import failed: "), "after the skipped rows, before the failure: {stderr}");

    std::fs::write(&feed, format!("{HEADER}mug\t\tMug\t5.00 USD\t\n")).unwrap();
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(!stderr.contains("catalog.currency"), "no hint without such a row: {stderr}");
}

// A product's id may not be another product's item (variant) id, nor an item id another
// product's id: get_product and cart lines would resolve it to the wrong product. Within one
// feed the row is skipped by line; against the stored catalog the import fails whole and the
// catalog stays as it was, as when a variant id moves to another product.
#[test]
fn ids_that_are_another_products_item_ids_are_refused() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(
        &feed,
        format!(
            "{HEADER}tee-s\ttee\tTee\t9.00\tS\ntee-m\ttee\tTee\t9.00\tM\nmug\ttee-m\tMug\t5.00\t\ncap\t\tCap\t3.00\t\n"
        ),
    )
    .unwrap();
    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("feed.tsv: skipped line 4: item_group_id: product id \"tee-m\" is already the id of an item of product \"tee\""),
        "{stderr}"
    );
    assert_eq!(variants_of(&data, "tee"), ["tee-s", "tee-m"]);
    // A lone item's product has the item's id, as Merchant Center has it, and imports again.
    assert_eq!(variants_of(&data, "cap"), ["cap"]);
    assert!(import(&feed, &data, &[]).0);
    let before = catalog(&data);

    for (rows, named) in [
        (
            "hat\ttee-s\tHat\t3.00\t\n",
            "product id \"tee-s\" is a variant id of product \"tee\", which is already in the catalog: give product \
             \"tee-s\" another id, or put \"tee\" in the same feed without that variant",
        ),
        (
            "tee\tshirts\tShirt\t3.00\t\n",
            "variant id \"tee\" of product \"shirts\" is the id of product \"tee\", which is already in the catalog \
             (an import never removes a product): give the variant another id",
        ),
    ] {
        let other = directory.path().join("other.tsv");
        std::fs::write(&other, format!("{HEADER}{rows}")).unwrap();
        let (success, stdout, stderr) = import(&other, &data, &[]);
        assert!(!success, "{stdout}\n{stderr}");
        assert!(
            stderr.contains(&format!("import failed, the catalog was not changed: conflict on {named}")),
            "{stderr}"
        );
        assert_eq!(catalog(&data), before);
        assert_no_staging_left(&data);
    }

    // The same feed that gives up item tee-s of tee makes it a product's id: the feed's order
    // does not matter.
    let (hat, tee) = ("tee-s-1\ttee-s\tHat\t3.00\t\n", "tee-m\ttee\tTee\t9.00\tM\n");
    for (order, rows) in [format!("{hat}{tee}"), format!("{tee}{hat}")].into_iter().enumerate() {
        let data = directory.path().join(format!("data-{order}"));
        assert!(import(&feed, &data, &[]).0);
        let other = directory.path().join("other.tsv");
        std::fs::write(&other, format!("{HEADER}{rows}")).unwrap();
        let (success, stdout, stderr) = import(&other, &data, &[]);
        assert!(success, "{rows}\n{stdout}\n{stderr}");
        assert_eq!(variants_of(&data, "tee"), ["tee-m"]);
        assert_eq!(variants_of(&data, "tee-s"), ["tee-s-1"]);
    }
}

// A link a platform would be handed (the product's page, an image) must be an absolute http(s)
// URL: a row with "javascript:" or a relative path is skipped by line and field, and --strict
// refuses the feed.
#[test]
fn rows_whose_links_are_not_web_urls_are_skipped() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(
        &feed,
        "id\ttitle\tprice\tlink\timage_link\n\
         a\tA\t1.00\thttps://shop.example/a\thttps://img.example/a.jpg\n\
         b\tB\t1.00\tjavascript:alert(1)\t\n\
         c\tC\t1.00\t\t/images/c.jpg\n",
    )
    .unwrap();
    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &["--strict"]);
    assert!(!success, "{stdout}\n{stderr}");
    assert!(stderr.contains("2 rows skipped and --strict is set"), "{stderr}");
    assert!(!data.exists());

    let (success, stdout, stderr) = import(&feed, &data, &[]);
    assert!(success, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("skipped line 3: link: \"javascript:alert(1)\" is not an absolute http(s) URL"),
        "{stderr}"
    );
    assert!(
        stderr.contains("skipped line 4: image_link: \"/images/c.jpg\" is not an absolute http(s) URL"),
        "{stderr}"
    );
    let products = catalog(&data).1;
    assert_eq!(products.len(), 1);
    assert!(products[0].2.contains("\"url\":\"https://shop.example/a\""), "{}", products[0].2);
}

// An additional image that is no URL is left out of its row, reported as a warning with its
// line, and the row is imported (a text feed splits that column at commas, which a Cloudinary
// URL holds, so the report says how to write one); --strict does not refuse the feed for it.
#[test]
fn an_additional_image_that_is_no_url_is_left_out_and_the_row_kept() {
    let directory = tempfile::tempdir().unwrap();
    let feed = directory.path().join("feed.tsv");
    std::fs::write(
        &feed,
        "id\ttitle\tprice\timage_link\tadditional_image_link\n\
         a\tA\t1.00\thttps://img.example/a.jpg\thttps://res.cloudinary.com/x/image/upload/w_400,h_400/a.jpg\n\
         b\tB\t1.00\thttps://img.example/b.jpg\thttps://img.example/b2.jpg\n",
    )
    .unwrap();
    let data = directory.path().join("data");
    let (success, stdout, stderr) = import(&feed, &data, &["--strict"]);
    assert!(success, "{stdout}\n{stderr}");
    let warning = "feed.tsv: warning: line 2: additional_image_link: \"h_400/a.jpg\" is not an absolute http(s) \
                   URL: the image is left out, the rest of the row imported\n";
    let hint = "feed.tsv: a text feed separates the URLs of additional_image_link with commas: write a comma \
                inside a URL as %2C\n";
    let at = |text: &str| stderr.find(text).unwrap_or_else(|| panic!("{text}\n{stderr}"));
    assert!(at(warning) < at(hint), "{stderr}");
    assert_eq!(stderr.matches("%2C").count(), 1, "{stderr}");
    assert!(
        stdout.contains("2 products (2 new, 0 updated), 2 variants, 0 rows skipped, 1 values left out"),
        "{stdout}"
    );
    let products = catalog(&data).1;
    assert!(products[0].2.contains("\"url\":\"https://res.cloudinary.com/x/image/upload/w_400\""), "{}", products[0].2);
    assert!(products[1].2.contains("\"url\":\"https://img.example/b2.jpg\""), "{}", products[1].2);
}
