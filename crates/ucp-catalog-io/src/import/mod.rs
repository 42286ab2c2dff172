//! Catalog import: Google Merchant Center feeds (tab- or comma-separated text, RSS 2.0 / Atom
//! XML) and our own JSON-lines form, read as a stream into validated [`Product`]s.
//!
//! Parsing is pure: no database, no network (a scratch file aside). Every returned product has
//! passed [`Product::normalize`] (links are absolute http(s) URLs) and is priced in the
//! catalog's currency ([`ImportOptions::currency`]). A row that cannot become a valid variant
//! is skipped and reported ([`SkippedRow`]) without dropping the rest of its product (a bad
//! `additional_image_link` only is left out of its row, reported as a [`RowWarning`]); so is a
//! row or line that would make one product's id another product's variant id, either way round
//! (a lookup, get_product or a cart line would find the wrong product; a product's own variant
//! may share its id). A file-level problem (unreadable input, malformed XML, a text header
//! without `id`) is a [`FeedError`].
//!
//! Merchant Center rows are grouped into products by `item_group_id` (a row without one is a
//! single-variant product whose id is the row id). A row id seen twice replaces the earlier row;
//! in JSON lines a product id seen twice replaces the earlier product.
//!
//! Since the rows of one product may be anywhere in a feed, an import never holds the feed in
//! memory: [`stage_feed`] reads the feed into a staging database on disk ([`StagedFeed`]), then
//! [`StagedFeed::build_products`] hands the products on one by one, in order of first
//! appearance. Most feeds keep a product's rows together, so [`FeedImport`] streams products to
//! a store while it reads, on the guess that a product is complete once a row of a product
//! first seen later comes (staging only what the grouping rules need); a row that proves the
//! guess wrong makes it read the feed again, staged whole, and build every product from the
//! staging, in a second attempt that replaces the first. [`read_feed`] guesses the same way
//! into memory, for small feeds, building from its staging when a guess was wrong.

use std::fmt;
use std::io::{self, BufRead};
use std::path::Path;

use ucp_domain::catalog::Product;

mod group;
mod jsonl;
mod locate;
mod product;
#[cfg(test)]
mod reference;
mod report;
mod row;
mod staging;
mod stream;
mod text;
mod values;
mod xml;

pub use report::{RowWarning, SkippedRow};
pub use stream::{FeedImport, ImportProgress};

/// The kinds of file [`read_feed`] understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeedFormat {
    /// Merchant Center text feed: tab-separated, or comma-separated CSV.
    MerchantCenterText,
    /// Merchant Center RSS 2.0 (or Atom 1.0) XML feed.
    MerchantCenterXml,
    /// One UCP Product JSON document per line.
    JsonLines,
}

impl FeedFormat {
    /// The format named on a command line: `gmc-text`, `tsv`, `csv`, `gmc-xml`, `xml`, `rss`,
    /// `jsonl` or `json` (case-insensitive).
    pub fn from_name(name: &str) -> Option<FeedFormat> {
        match name.trim().to_ascii_lowercase().as_str() {
            "gmc-text" | "tsv" | "csv" => Some(FeedFormat::MerchantCenterText),
            "gmc-xml" | "xml" | "rss" => Some(FeedFormat::MerchantCenterXml),
            "jsonl" | "json" => Some(FeedFormat::JsonLines),
            _ => None,
        }
    }
}

/// Sniffs the format of a file from its first bytes and, when they do not tell, its extension:
/// content starting with `<` is XML, with `{` JSON lines; otherwise `.xml`/`.rss`/`.atom` is XML,
/// `.jsonl`/`.ndjson`/`.json` is JSON lines, and anything else a Merchant Center text feed.
pub fn detect_format(path: &Path, head: &[u8]) -> FeedFormat {
    let head = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    match head.iter().find(|byte| !byte.is_ascii_whitespace()) {
        Some(b'<') => return FeedFormat::MerchantCenterXml,
        Some(b'{') => return FeedFormat::JsonLines,
        _ => {}
    }
    let extension = path.extension().and_then(|extension| extension.to_str()).unwrap_or("").to_ascii_lowercase();
    match extension.as_str() {
        "xml" | "rss" | "atom" => FeedFormat::MerchantCenterXml,
        "jsonl" | "ndjson" | "json" => FeedFormat::JsonLines,
        _ => FeedFormat::MerchantCenterText,
    }
}

/// Choices the caller makes for a whole import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportOptions {
    /// The catalog's currency, the ISO 4217 code the server serves and charges prices in
    /// (its `catalog.currency`), e.g. `USD`: a feed price that names no currency is in it, and
    /// a product priced in another is skipped.
    pub currency: String,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { currency: "USD".to_owned() }
    }
}

/// What a feed held: its valid products, how many rows were read, and the rows left out.
#[derive(Debug, Clone, Default)]
pub struct ParsedFeed {
    /// Normalized products in order of first appearance.
    pub products: Vec<Product>,
    /// Data rows, items or non-blank lines read, skipped ones included.
    pub rows: u64,
    /// Skipped rows in line order.
    pub skipped: Vec<SkippedRow>,
    /// Rows imported without one of their values, in line order.
    pub warnings: Vec<RowWarning>,
}

/// A feed that cannot be read at all.
#[derive(thiserror::Error, Debug)]
pub enum FeedError {
    #[error("cannot read the feed: {0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {reason}")]
    Malformed { line: u64, reason: String },
    /// The scratch database failed (a full disk, say).
    #[error("cannot stage the feed: {0}")]
    Staging(String),
}

/// Reads a whole feed into memory: both passes of an import (staged in the system's temporary
/// directory), collected. `progress` is called now and then with the number of bytes consumed
/// so far, and once at the end with the total.
pub fn read_feed(
    reader: impl BufRead,
    format: FeedFormat,
    options: &ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ParsedFeed, FeedError> {
    let mut early = Collected::default();
    let staged = stage(reader, format, options, &std::env::temp_dir(), progress, Some(&mut early), true)?;
    collect(staged, early.products)
}

/// Pass one of an import: reads the feed into a staging database in a new directory under
/// `staging_dir` (removed when the result is dropped), checking every row on the way. Memory
/// stays bounded whatever the feed's size; the disk holds about the feed's size again.
/// `progress` is called now and then with the number of bytes consumed so far, and once at the
/// end with the total.
pub fn stage_feed(
    reader: impl BufRead,
    format: FeedFormat,
    options: &ImportOptions,
    staging_dir: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<StagedFeed, FeedError> {
    stage(reader, format, options, staging_dir, progress, None, true)
}

/// Where pass one hands the products it can already tell (guess) are complete, in order of
/// first appearance.
trait EarlyProducts {
    fn product(&mut self, product: Product);
    /// A row proved a guess wrong: the products handed on so far are to be forgotten, and no
    /// more come (they will be built from the staging).
    fn retract(&mut self);
    /// A row was skipped.
    fn skipped(&mut self) {}
}

/// [`stage_feed`], handing products on to `early` while reading if given. Without `payloads`,
/// the rows' values are not staged, and a wrong guess abandons the reading
/// ([`StagedFeed::abandoned`]): for a caller that can read the feed again.
fn stage(
    reader: impl BufRead,
    format: FeedFormat,
    options: &ImportOptions,
    staging_dir: &Path,
    progress: &mut dyn FnMut(u64),
    early: Option<&mut dyn EarlyProducts>,
    payloads: bool,
) -> Result<StagedFeed, FeedError> {
    let staged = match format {
        FeedFormat::MerchantCenterText | FeedFormat::MerchantCenterXml => {
            let staging = staging::Staging::create(staging_dir, group::SCHEMA)?;
            let mut builder = group::FeedBuilder::new(staging, early, payloads);
            if format == FeedFormat::MerchantCenterText {
                text::read_text(reader, options, &mut builder, progress)?;
            } else {
                xml::read_xml(reader, options, &mut builder, progress)?;
            }
            Staged::Rows(builder.finish(options)?)
        }
        FeedFormat::JsonLines => {
            let staging = staging::Staging::create(staging_dir, jsonl::SCHEMA)?;
            Staged::Lines(jsonl::stage_jsonl(reader, options, staging, early, payloads, progress)?)
        }
    };
    Ok(StagedFeed { staged })
}

/// A feed read and staged by [`stage_feed`]: rows checked and grouped, products not built yet.
pub struct StagedFeed {
    staged: Staged,
}

enum Staged {
    Rows(group::StagedRows),
    Lines(jsonl::StagedLines),
}

impl StagedFeed {
    /// Data rows, items or non-blank lines read, skipped ones included.
    pub fn rows(&self) -> u64 {
        match &self.staged {
            Staged::Rows(staged) => staged.rows,
            Staged::Lines(staged) => staged.rows,
        }
    }

    /// Rows skipped so far. Building can skip more: a product that does not normalize.
    pub fn skipped(&self) -> u64 {
        self.staging().skipped()
    }

    /// How many products the feed can give at most (some may not normalize).
    pub fn products_staged(&self) -> u64 {
        match &self.staged {
            Staged::Rows(staged) => staged.groups,
            Staged::Lines(staged) => staged.products,
        }
    }

    /// Whether the reading stopped at a wrong guess without the rows' values: the feed must be
    /// read again (see [`stage`]).
    fn abandoned(&self) -> bool {
        match &self.staged {
            Staged::Rows(staged) => staged.abandoned,
            Staged::Lines(staged) => staged.abandoned,
        }
    }

    /// Whether every product was handed on while reading (so [`StagedFeed::build_products`]
    /// has nothing left to build).
    fn handed(&self) -> Option<u64> {
        match &self.staged {
            Staged::Rows(staged) => staged.handed,
            Staged::Lines(staged) => staged.handed,
        }
    }

    /// Pass two: builds the products in order of first appearance and hands each to `emit`
    /// (Merchant Center rows grouped, handles made unique, each product normalized; a product
    /// that does not normalize is skipped). `progress` is told now and then how many of
    /// [`StagedFeed::products_staged`] are done. (If pass one handed every product on already,
    /// there is nothing to build: `emit` is not called.)
    pub fn build_products(
        self,
        emit: &mut dyn FnMut(Product),
        progress: &mut dyn FnMut(u64),
    ) -> Result<BuiltFeed, FeedError> {
        let rows = self.rows();
        let handed = self.handed();
        let (staging, products) = match self.staged {
            Staged::Rows(staged) => {
                let products = match handed {
                    Some(products) => products,
                    None => staged.build(emit, progress)?,
                };
                (staged.staging, products)
            }
            Staged::Lines(staged) => {
                let products = match handed {
                    Some(products) => products,
                    None => staged.build(emit, progress)?,
                };
                (staged.staging, products)
            }
        };
        Ok(BuiltFeed { staging, rows, products })
    }

    fn staging(&self) -> &staging::Staging {
        match &self.staged {
            Staged::Rows(staged) => &staged.staging,
            Staged::Lines(staged) => &staged.staging,
        }
    }
}

impl fmt::Debug for StagedFeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StagedFeed")
            .field("rows", &self.rows())
            .field("skipped", &self.skipped())
            .field("products_staged", &self.products_staged())
            .finish()
    }
}

/// A feed whose products were built: the counts, and the skipped rows still on disk.
pub struct BuiltFeed {
    staging: staging::Staging,
    rows: u64,
    products: u64,
}

impl BuiltFeed {
    /// Data rows, items or non-blank lines read, skipped ones included.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Products built and handed on.
    pub fn products(&self) -> u64 {
        self.products
    }

    /// Rows skipped, in either pass.
    pub fn skipped(&self) -> u64 {
        self.staging.skipped()
    }

    /// The skipped rows in line order.
    pub fn for_each_skipped(&self, visit: &mut dyn FnMut(SkippedRow)) -> Result<(), FeedError> {
        self.staging.for_each_skipped(visit)
    }

    /// The currencies rows were skipped for (priced in one that is not the catalog's), each
    /// with how many rows, the most first.
    pub fn foreign_currencies(&self) -> Result<Vec<(String, u64)>, FeedError> {
        self.staging.foreign_currencies()
    }

    /// Rows imported without one of their values.
    pub fn warnings(&self) -> u64 {
        self.staging.warnings()
    }

    /// The warnings about rows imported without one of their values, in line order.
    pub fn for_each_warning(&self, visit: &mut dyn FnMut(RowWarning)) -> Result<(), FeedError> {
        self.staging.for_each_warning(visit)
    }
}

impl fmt::Debug for BuiltFeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BuiltFeed")
            .field("rows", &self.rows)
            .field("products", &self.products)
            .field("skipped", &self.skipped())
            .field("warnings", &self.warnings())
            .finish()
    }
}

/// Products collected in memory as pass one hands them on.
#[derive(Default)]
struct Collected {
    products: Vec<Product>,
}

impl EarlyProducts for Collected {
    fn product(&mut self, product: Product) {
        self.products.push(product);
    }

    fn retract(&mut self) {
        self.products.clear();
    }
}

/// Pass two if needed, after the `products` pass one handed on; everything in memory.
fn collect(staged: StagedFeed, mut products: Vec<Product>) -> Result<ParsedFeed, FeedError> {
    let built = staged.build_products(&mut |product| products.push(product), &mut |_| {})?;
    let (mut skipped, mut warnings) = (Vec::new(), Vec::new());
    built.for_each_skipped(&mut |row| skipped.push(row))?;
    built.for_each_warning(&mut |warning| warnings.push(warning))?;
    Ok(ParsedFeed { products, rows: built.rows(), skipped, warnings })
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A JSON-lines feed read one line at a time, counting lines (from 1) and bytes read.
struct FeedLines<R> {
    reader: R,
    line: Vec<u8>,
    number: u64,
    bytes: u64,
}

impl<R: std::io::BufRead> FeedLines<R> {
    fn new(reader: R) -> FeedLines<R> {
        FeedLines { reader, line: Vec::new(), number: 0, bytes: 0 }
    }

    /// The next line (its content without a UTF-8 BOM on line 1; blank lines too), `None` at
    /// the end of the feed.
    fn next_line(&mut self) -> std::io::Result<Option<FeedLine<'_>>> {
        self.line.clear();
        let read = self.reader.read_until(b'\n', &mut self.line)?;
        if read == 0 {
            return Ok(None);
        }
        self.number += 1;
        self.bytes += read as u64;
        let content = match self.line.strip_prefix(UTF8_BOM) {
            Some(rest) if self.number == 1 => rest,
            _ => &self.line[..],
        };
        Ok(Some(FeedLine { number: self.number, bytes: self.bytes, content }))
    }
}

/// One line of a [`FeedLines`]: its number, the bytes read up to its end, and its content.
struct FeedLine<'a> {
    number: u64,
    bytes: u64,
    content: &'a [u8],
}

/// How often, in rows, the readers report progress.
const PROGRESS_EVERY: u64 = 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names() {
        assert_eq!(FeedFormat::from_name("gmc-text"), Some(FeedFormat::MerchantCenterText));
        assert_eq!(FeedFormat::from_name("TSV"), Some(FeedFormat::MerchantCenterText));
        assert_eq!(FeedFormat::from_name("csv"), Some(FeedFormat::MerchantCenterText));
        assert_eq!(FeedFormat::from_name("gmc-xml"), Some(FeedFormat::MerchantCenterXml));
        assert_eq!(FeedFormat::from_name("rss"), Some(FeedFormat::MerchantCenterXml));
        assert_eq!(FeedFormat::from_name("xml"), Some(FeedFormat::MerchantCenterXml));
        assert_eq!(FeedFormat::from_name("jsonl"), Some(FeedFormat::JsonLines));
        assert_eq!(FeedFormat::from_name("json"), Some(FeedFormat::JsonLines));
        assert_eq!(FeedFormat::from_name("excel"), None);
    }

    #[test]
    fn detect_format_sniffs_content_then_extension() {
        let path = Path::new;
        assert_eq!(detect_format(path("feed.txt"), b"<?xml version=\"1.0\"?><rss>"), FeedFormat::MerchantCenterXml);
        assert_eq!(detect_format(path("feed"), b"\xEF\xBB\xBF  \n<rss>"), FeedFormat::MerchantCenterXml);
        assert_eq!(detect_format(path("feed.data"), b"{\"id\":\"p1\"}"), FeedFormat::JsonLines);
        assert_eq!(detect_format(path("feed.tsv"), b"id\ttitle\tprice\n"), FeedFormat::MerchantCenterText);
        assert_eq!(detect_format(path("feed.csv"), b"id,title,price\n"), FeedFormat::MerchantCenterText);
        assert_eq!(detect_format(path("products.JSONL"), b""), FeedFormat::JsonLines);
        assert_eq!(detect_format(path("feed.xml"), b""), FeedFormat::MerchantCenterXml);
        assert_eq!(detect_format(path("feed"), b"id\ttitle"), FeedFormat::MerchantCenterText);
    }

    #[test]
    fn skipped_row_display() {
        let skipped = SkippedRow::new(7, "price", "missing");
        assert_eq!(skipped.to_string(), "line 7: price: missing");
    }

    #[test]
    fn read_feed_dispatches_and_reports_progress() {
        let feed = "id\ttitle\tprice\n1\tMug\t5.00 USD\n";
        let mut reported = Vec::new();
        let parsed =
            read_feed(feed.as_bytes(), FeedFormat::MerchantCenterText, &ImportOptions::default(), &mut |bytes| {
                reported.push(bytes)
            })
            .unwrap();
        assert_eq!(parsed.products.len(), 1);
        assert_eq!(reported.last(), Some(&(feed.len() as u64)));
    }
}
