//! Catalog import: Google Merchant Center feeds (tab- or comma-separated text, RSS 2.0 / Atom
//! XML) and our own JSON-lines form, read as a stream into validated [`Product`]s.
//!
//! Parsing is pure: no database, no network. Every returned product has passed
//! [`Product::normalize`]. A row that cannot become a valid variant is skipped and reported in
//! [`ParsedFeed::skipped`] without dropping the rest of its product; a file-level problem
//! (unreadable input, malformed XML, a text header without `id`) is a [`FeedError`].
//!
//! Merchant Center rows are grouped into products by `item_group_id` (a row without one is a
//! single-variant product whose id is the row id). A row id seen twice replaces the earlier row.

use std::fmt;
use std::io::{self, BufRead};
use std::path::Path;

use ucp_domain::catalog::Product;

mod group;
mod jsonl;
mod row;
mod text;
mod xml;

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
    /// ISO 4217 code used when a feed price has no currency, e.g. `USD`.
    pub default_currency: String,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions { default_currency: "USD".to_owned() }
    }
}

/// A row (text feed), item (XML) or line (JSON lines) left out of the import, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// 1-based physical line of the file where the row or item starts.
    pub line: u64,
    /// The feed attribute (e.g. `price`) or, for JSON lines, the JSON path at fault.
    pub field: String,
    pub reason: String,
}

impl SkippedRow {
    pub(crate) fn new(line: u64, field: impl Into<String>, reason: impl Into<String>) -> Self {
        SkippedRow { line, field: field.into(), reason: reason.into() }
    }
}

impl fmt::Display for SkippedRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.field, self.reason)
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
}

/// A feed that cannot be read at all.
#[derive(thiserror::Error, Debug)]
pub enum FeedError {
    #[error("cannot read the feed: {0}")]
    Io(#[from] io::Error),
    #[error("line {line}: {reason}")]
    Malformed { line: u64, reason: String },
}

/// Reads a whole feed. `progress` is called now and then with the number of bytes consumed so
/// far, and once at the end with the total.
pub fn read_feed(
    reader: impl BufRead,
    format: FeedFormat,
    options: &ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ParsedFeed, FeedError> {
    match format {
        FeedFormat::MerchantCenterText => text::read_text(reader, options, progress),
        FeedFormat::MerchantCenterXml => xml::read_xml(reader, options, progress),
        FeedFormat::JsonLines => jsonl::read_jsonl(reader, progress),
    }
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

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
