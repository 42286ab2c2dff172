//! Merchant Center XML feeds: RSS 2.0 (`<rss><channel><item>`) or Atom 1.0 (`<feed><entry>`),
//! attributes in the `g:` namespace or as plain RSS/Atom elements, read as a stream of events.

use std::io::{self, BufRead, Read};

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

use super::group::FeedBuilder;
use super::row::{Attr, RawItem};
use super::{FeedError, ImportOptions, PROGRESS_EVERY};

const GOOGLE_NS: &[u8] = b"http://base.google.com/ns/1.0";
const ATOM_NS: &[u8] = b"http://www.w3.org/2005/Atom";

/// Reads every item of an XML feed into `builder`.
pub(super) fn read_xml(
    reader: impl BufRead,
    options: &ImportOptions,
    builder: &mut FeedBuilder,
    progress: &mut dyn FnMut(u64),
) -> Result<(), FeedError> {
    let mut xml = NsReader::from_reader(LineCounter::new(reader));
    let mut buf = Vec::new();
    let mut raw = RawItem::default();
    let mut text = String::new();
    // Open elements; the item's own depth while inside one; the attribute being read.
    let mut depth = 0usize;
    let mut item_depth: Option<usize> = None;
    let mut field: Option<Attr> = None;
    let mut seen_element = false;
    let mut items: u64 = 0;
    loop {
        let (ours, event) = match xml.read_resolved_event_into(&mut buf) {
            Ok((namespace, event)) => (is_feed_namespace(&namespace), event),
            Err(error) => {
                let line = xml.get_ref().line();
                return Err(FeedError::Malformed { line, reason: format!("invalid XML: {error}") });
            }
        };
        match event {
            Event::Start(start) => {
                seen_element = true;
                depth += 1;
                match item_depth {
                    None if is_item(&start) => {
                        item_depth = Some(depth);
                        raw.reset(start_line(xml.get_ref(), &start));
                    }
                    Some(item) if depth == item + 1 && ours => {
                        field = Attr::from_name(start.local_name().as_ref());
                        text.clear();
                        read_href(&start, field, &mut raw);
                    }
                    _ => {}
                }
            }
            Event::Empty(start) => {
                seen_element = true;
                match item_depth {
                    None if is_item(&start) => {
                        raw.reset(start_line(xml.get_ref(), &start));
                        if !builder.add(&mut raw, options)? {
                            return Ok(());
                        }
                        items += 1;
                    }
                    Some(item) if depth == item && ours => {
                        read_href(&start, Attr::from_name(start.local_name().as_ref()), &mut raw);
                    }
                    _ => {}
                }
            }
            Event::End(_) => {
                match item_depth {
                    Some(item) if depth == item + 1 => {
                        if let Some(attr) = field.take() {
                            raw.set(attr, &text);
                        }
                    }
                    Some(item) if depth == item => {
                        item_depth = None;
                        if !builder.add(&mut raw, options)? {
                            return Ok(());
                        }
                        items += 1;
                        if items.is_multiple_of(PROGRESS_EVERY) {
                            progress(xml.get_ref().bytes);
                        }
                    }
                    _ => {}
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(content) => {
                if let Some(attr) = field
                    && item_depth.is_some_and(|item| depth == item + 1)
                {
                    match content.xml10_content() {
                        Ok(content) => text.push_str(&content),
                        Err(error) => raw.fail(attr, format!("cannot decode the text: {error}")),
                    }
                }
            }
            Event::CData(content) => {
                if let Some(attr) = field
                    && item_depth.is_some_and(|item| depth == item + 1)
                {
                    match content.xml10_content() {
                        Ok(content) => text.push_str(&content),
                        Err(error) => raw.fail(attr, format!("cannot decode the CDATA: {error}")),
                    }
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(attr) = field
                    && item_depth.is_some_and(|item| depth == item + 1)
                {
                    match resolve_reference(&reference) {
                        Ok(ch) => text.push(ch),
                        Err(reason) => raw.fail(attr, reason),
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    let counter = xml.get_ref();
    if !seen_element {
        return Err(FeedError::Malformed { line: counter.line(), reason: "no XML element found".to_owned() });
    }
    if depth != 0 {
        return Err(FeedError::Malformed {
            line: counter.line(),
            reason: format!("invalid XML: the file ends with {depth} element(s) still open"),
        });
    }
    progress(counter.bytes);
    Ok(())
}

/// Elements we read attributes from: the Merchant Center namespace (whatever its prefix, or an
/// undeclared `g:`), no namespace (RSS core elements), or Atom's.
fn is_feed_namespace(namespace: &ResolveResult<'_>) -> bool {
    match namespace {
        ResolveResult::Unbound => true,
        ResolveResult::Bound(namespace) => matches!(namespace.as_ref(), GOOGLE_NS | ATOM_NS),
        ResolveResult::Unknown(prefix) => prefix == b"g",
    }
}

fn is_item(start: &BytesStart<'_>) -> bool {
    matches!(start.local_name().as_ref(), b"item" | b"entry")
}

/// The line of the `<` of a tag just read: the reader has consumed up to its `>`.
fn start_line<R>(counter: &LineCounter<R>, start: &BytesStart<'_>) -> u64 {
    let newlines_in_tag = start.iter().filter(|byte| **byte == b'\n').count() as u64;
    counter.line() - newlines_in_tag
}

/// Atom's `<link href="…"/>`.
fn read_href(start: &BytesStart<'_>, attr: Option<Attr>, raw: &mut RawItem) {
    if attr != Some(Attr::Link) {
        return;
    }
    if let Ok(Some(href)) = start.try_get_attribute("href")
        && let Ok(href) = href.unescape_value()
    {
        raw.set(Attr::Link, &href);
    }
}

/// `&amp;`, `&#233;`, `&#xE9;` and the other XML predefined entities.
fn resolve_reference(reference: &BytesRef<'_>) -> Result<char, String> {
    if let Ok(Some(ch)) = reference.resolve_char_ref() {
        return Ok(ch);
    }
    let name = reference.decode().map_err(|error| format!("cannot decode an entity: {error}"))?;
    match name.as_ref() {
        "amp" => Ok('&'),
        "lt" => Ok('<'),
        "gt" => Ok('>'),
        "quot" => Ok('"'),
        "apos" => Ok('\''),
        _ => Err(format!("unknown or invalid entity &{name};")),
    }
}

/// A `BufRead` that counts the bytes and newlines its user has consumed.
struct LineCounter<R> {
    inner: R,
    bytes: u64,
    newlines: u64,
}

impl<R> LineCounter<R> {
    fn new(inner: R) -> Self {
        LineCounter { inner, bytes: 0, newlines: 0 }
    }

    /// The 1-based line the next unconsumed byte is on.
    fn line(&self) -> u64 {
        self.newlines + 1
    }
}

impl<R: BufRead> Read for LineCounter<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let count = available.len().min(out.len());
        out[..count].copy_from_slice(&available[..count]);
        self.consume(count);
        Ok(count)
    }
}

impl<R: BufRead> BufRead for LineCounter<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        // The buffer is the one just returned by `fill_buf`, so this does no I/O.
        if amount > 0
            && let Ok(buffer) = self.inner.fill_buf()
        {
            let consumed = &buffer[..amount.min(buffer.len())];
            self.newlines += consumed.iter().filter(|byte| **byte == b'\n').count() as u64;
        }
        self.bytes += amount as u64;
        self.inner.consume(amount);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FeedFormat, ParsedFeed, read_feed};
    use super::*;

    fn parse(feed: &str) -> Result<ParsedFeed, FeedError> {
        let options = ImportOptions { currency: "EUR".to_owned() };
        read_feed(feed.as_bytes(), FeedFormat::MerchantCenterXml, &options, &mut |_| {})
    }

    const FEED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:g="http://base.google.com/ns/1.0">
  <channel>
    <title>Example store</title>
    <link>https://shop.example</link>
    <description>All the things</description>
    <item>
      <g:id>kettle-1</g:id>
      <title><![CDATA[Kettle <Steel> & Glass]]></title>
      <description>Boils water &amp; more &#8212; fast&#x21;</description>
      <link>https://shop.example/kettle</link>
      <g:image_link>https://img.example/kettle.jpg</g:image_link>
      <g:additional_image_link>https://img.example/kettle-2.jpg</g:additional_image_link>
      <g:additional_image_link>https://img.example/kettle-3.jpg</g:additional_image_link>
      <g:price>49.90 EUR</g:price>
      <g:sale_price>39.90 EUR</g:sale_price>
      <g:availability>in stock</g:availability>
      <g:brand>Boilco</g:brand>
      <g:gtin>4006381333931</g:gtin>
      <g:condition>refurbished</g:condition>
      <g:shipping_weight>1.2 kg</g:shipping_weight>
      <g:shipping>
        <g:country>DE</g:country>
        <g:price>4.95 EUR</g:price>
      </g:shipping>
      <g:product_type>Kitchen &gt; Appliances</g:product_type>
      <g:product_type>Kitchen &gt; Appliances</g:product_type>
      <g:custom_label_0>ignored</g:custom_label_0>
    </item>
    <item>
      <g:id>mug-1</g:id>
      <g:title>Mug</g:title>
      <g:price>seven</g:price>
    </item>
    <item>
      <g:id>mug-2</g:id>
      <g:title>Mug</g:title>
      <g:price>7</g:price>
      <g:availability>whenever</g:availability>
    </item>
    <item>
      <g:id>mug-3</g:id>
      <g:title>Mug &nbsp; deluxe</g:title>
      <g:price>7</g:price>
    </item>
    <item><g:id>mug-4</g:id><g:title>Plain mug</g:title><g:price>7</g:price><g:quantity>12</g:quantity></item>
  </channel>
</rss>
"#;

    #[test]
    fn rss_feed_with_namespace_cdata_entities_and_repeats() {
        let parsed = parse(FEED).unwrap();
        assert_eq!(parsed.rows, 5);
        let kettle = &parsed.products[0];
        assert_eq!(kettle.id, "kettle-1");
        assert_eq!(kettle.title, "Kettle <Steel> & Glass");
        assert_eq!(kettle.description.plain.as_deref(), Some("Boils water & more \u{2014} fast!"));
        assert_eq!(kettle.url.as_deref(), Some("https://shop.example/kettle"));
        let media: Vec<&str> = kettle.media.iter().map(|media| media.url.as_str()).collect();
        assert_eq!(
            media,
            ["https://img.example/kettle.jpg", "https://img.example/kettle-2.jpg", "https://img.example/kettle-3.jpg"]
        );
        let variant = &kettle.variants[0];
        assert_eq!(variant.price.amount, 3990);
        assert_eq!(variant.price.currency, "EUR");
        assert_eq!(variant.list_price.as_ref().map(|price| price.amount), Some(4990));
        assert_eq!(variant.title, "Kettle <Steel> & Glass");
        assert_eq!(variant.barcodes[0].value, "4006381333931");
        assert_eq!(variant.metadata.as_ref().unwrap()["shipping_weight_grams"], 1200);
        assert_eq!(kettle.metadata.as_ref().unwrap()["condition"], "refurbished");
        assert_eq!(kettle.tags, ["Boilco"]);
        assert_eq!(kettle.categories.len(), 1);
        assert_eq!(kettle.categories[0].value, "Kitchen > Appliances");
        assert_eq!(kettle.categories[0].taxonomy.as_deref(), Some("merchant"));

        let mug = &parsed.products[1];
        assert_eq!(mug.id, "mug-4");
        assert_eq!(mug.variants[0].price.amount, 700);
        assert_eq!(mug.variants[0].price.currency, "EUR");
        assert_eq!(mug.variants[0].inventory_quantity, Some(12));
        assert_eq!(parsed.products.len(), 2);

        let skipped: Vec<String> = parsed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(skipped.len(), 3, "{skipped:?}");
        assert!(skipped[0].starts_with("line 30: price: "), "{skipped:?}");
        assert!(skipped[1].starts_with("line 35: availability: "), "{skipped:?}");
        assert_eq!(skipped[2], "line 41: title: unknown or invalid entity &nbsp;");
    }

    #[test]
    fn item_lines_count_newlines_inside_the_tag() {
        let feed = "<rss xmlns:g=\"http://base.google.com/ns/1.0\"><channel>\n<item\n><g:id>a</g:id></item>\n\n<item><g:id>b</g:id><g:price>1 EUR</g:price></item></channel></rss>";
        let parsed = parse(feed).unwrap();
        let lines: Vec<(u64, &str)> =
            parsed.skipped.iter().map(|skipped| (skipped.line, skipped.field.as_str())).collect();
        assert_eq!(lines, [(2, "price"), (5, "title")]);
    }

    #[test]
    fn item_groups_and_other_prefixes_and_atom() {
        let feed = r#"<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:google="http://base.google.com/ns/1.0" xmlns:x="urn:other">
  <entry>
    <google:id>a-s</google:id><google:item_group_id>a</google:item_group_id>
    <title>Socks</title><link href="https://shop.example/socks?x=1&amp;y=2"/>
    <google:price>5 EUR</google:price><google:size>S</google:size><x:size>XXL</x:size>
  </entry>
  <entry>
    <google:id>a-m</google:id><google:item_group_id>a</google:item_group_id>
    <google:price>6 EUR</google:price><google:size>M</google:size>
  </entry>
</feed>"#;
        let parsed = parse(feed).unwrap();
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        let socks = &parsed.products[0];
        assert_eq!(socks.id, "a");
        assert_eq!(socks.url.as_deref(), Some("https://shop.example/socks?x=1&y=2"));
        let titles: Vec<&str> = socks.variants.iter().map(|variant| variant.title.as_str()).collect();
        assert_eq!(titles, ["S", "M"]);
        assert_eq!(socks.options[0].name, "Size");
    }

    #[test]
    fn undeclared_g_prefix_is_still_merchant_center() {
        let feed =
            "<rss><channel><item><g:id>1</g:id><g:title>Cup</g:title><g:price>2 EUR</g:price></item></channel></rss>";
        let parsed = parse(feed).unwrap();
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!(parsed.products[0].title, "Cup");
    }

    #[test]
    fn malformed_xml_is_an_error() {
        let mismatched = "<rss>\n<channel>\n<item><g:id>a</g:id></channel></rss>";
        let error = parse(mismatched).unwrap_err();
        assert!(matches!(error, FeedError::Malformed { line: 3, .. }), "{error}");
        let truncated = "<rss><channel><item><g:id>a</g:id>";
        assert!(matches!(parse(truncated), Err(FeedError::Malformed { .. })));
        assert!(matches!(parse("id\ttitle\n"), Err(FeedError::Malformed { .. })));
        assert!(matches!(parse(""), Err(FeedError::Malformed { .. })));
    }

    #[test]
    fn progress_reaches_the_end() {
        let mut last = 0;
        let parsed =
            read_feed(FEED.as_bytes(), FeedFormat::MerchantCenterXml, &ImportOptions::default(), &mut |bytes| {
                last = bytes;
            })
            .unwrap();
        assert_eq!(parsed.rows, 5);
        assert_eq!(last, FEED.len() as u64);
    }
}
