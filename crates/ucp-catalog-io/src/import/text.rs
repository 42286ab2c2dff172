//! Merchant Center text feeds: tab-separated, or comma-separated CSV with quoted fields.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

use super::group::FeedBuilder;
use super::row::{Attr, RawItem};
use super::{FeedError, ImportOptions, PROGRESS_EVERY, UTF8_BOM};

/// Reads every row of a text feed into `builder`.
pub(super) fn read_text(
    mut reader: impl BufRead,
    options: &ImportOptions,
    builder: &mut FeedBuilder,
    progress: &mut dyn FnMut(u64),
) -> Result<(), FeedError> {
    // The header line decides the delimiter; blank lines before it are kept so that line
    // numbers stay those of the file.
    let mut head = Vec::new();
    let mut header_start;
    let mut bom = 0;
    loop {
        header_start = head.len();
        let read = reader.read_until(b'\n', &mut head)?;
        if header_start == 0 && head.starts_with(UTF8_BOM) {
            head.drain(..UTF8_BOM.len());
            bom = UTF8_BOM.len() as u64;
        }
        if read == 0 || !head[header_start..].iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    let delimiter = if head[header_start..].contains(&b'\t') { b'\t' } else { b',' };
    // `\n` alone ends a record, so that the bytes the reader skips before a record are only
    // blank lines' `\n`s (a `\r` before it is trimmed with the last field).
    let mut csv = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(NewlineTracker::new(io::Cursor::new(head).chain(reader)));
    let mut lines = LineCursor::default();

    let mut record = csv::ByteRecord::new();
    if !read_record(&mut csv, &mut record)? {
        return Err(FeedError::Malformed { line: 1, reason: "the feed is empty: no header line".to_owned() });
    }
    let header_line = lines.record_line(&mut csv, &record);
    let columns: Vec<Option<Attr>> =
        record.iter().map(|name| Attr::from_header(&String::from_utf8_lossy(name))).collect();
    if !columns.contains(&Some(Attr::Id)) {
        return Err(FeedError::Malformed {
            line: header_line,
            reason: "the header has no `id` column (is this a Merchant Center feed?)".to_owned(),
        });
    }

    let mut raw = RawItem::default();
    let mut rows: u64 = 0;
    while read_record(&mut csv, &mut record)? {
        if record.iter().all(|field| field.iter().all(u8::is_ascii_whitespace)) {
            continue;
        }
        raw.reset(lines.record_line(&mut csv, &record));
        for (field, attr) in record.iter().zip(&columns) {
            let Some(attr) = *attr else { continue };
            let Ok(value) = std::str::from_utf8(field) else {
                raw.fail(attr, "not valid UTF-8");
                continue;
            };
            if attr == Attr::AdditionalImageLink {
                value.split(',').for_each(|url| raw.set(attr, url));
            } else {
                raw.set(attr, value);
            }
        }
        if !builder.add(&mut raw, options)? {
            break;
        }
        rows += 1;
        if rows.is_multiple_of(PROGRESS_EVERY) {
            progress(bom + csv.position().byte());
        }
    }
    progress(bom + csv.position().byte());
    Ok(())
}

/// Reads the next record; `false` at the end of the input.
fn read_record<R: Read>(csv: &mut csv::Reader<R>, record: &mut csv::ByteRecord) -> Result<bool, FeedError> {
    csv.read_byte_record(record).map_err(|error| {
        let line = error.position().map_or(0, csv::Position::line);
        match error.into_kind() {
            csv::ErrorKind::Io(error) => FeedError::Io(error),
            kind => FeedError::Malformed { line, reason: format!("{kind:?}") },
        }
    })
}

/// The csv crate's own line numbers are those of where it started reading, before the blank
/// lines it skips, so lines are counted here from the offsets of the `\n`s it reads.
struct NewlineTracker<R> {
    inner: R,
    offset: u64,
    /// Offsets of the `\n`s read and not yet passed by [`LineCursor`].
    newlines: VecDeque<u64>,
}

impl<R> NewlineTracker<R> {
    fn new(inner: R) -> Self {
        NewlineTracker { inner, offset: 0, newlines: VecDeque::new() }
    }
}

impl<R: Read> Read for NewlineTracker<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let count = self.inner.read(out)?;
        for (index, _) in out[..count].iter().enumerate().filter(|(_, byte)| **byte == b'\n') {
            self.newlines.push_back(self.offset + index as u64);
        }
        self.offset += count as u64;
        Ok(count)
    }
}

/// The line of the byte offsets read so far, moving forward only.
struct LineCursor {
    line: u64,
}

impl Default for LineCursor {
    fn default() -> Self {
        LineCursor { line: 1 }
    }
}

impl LineCursor {
    /// The 1-based line where `record`'s first byte is.
    fn record_line<R: Read>(&mut self, csv: &mut csv::Reader<NewlineTracker<R>>, record: &csv::ByteRecord) -> u64 {
        let Some(position) = record.position() else {
            return self.line;
        };
        let newlines = &mut csv.get_mut().newlines;
        let mut start = position.byte();
        while let Some(&offset) = newlines.front()
            && offset <= start
        {
            newlines.pop_front();
            self.line += 1;
            // A `\n` right where the record starts is a skipped blank line.
            if offset == start {
                start += 1;
            }
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::super::{FeedFormat, ParsedFeed, read_feed};
    use super::*;

    fn parse(feed: &str) -> ParsedFeed {
        let options = ImportOptions { currency: "USD".to_owned() };
        read_feed(feed.as_bytes(), FeedFormat::MerchantCenterText, &options, &mut |_| {}).unwrap()
    }

    #[test]
    fn tsv_group_of_three_variants() {
        let feed = "\
id\titem_group_id\ttitle\tdescription\tlink\timage link\tadditional_image_link\tprice\tavailability\tbrand\tgtin\tmpn\tcondition\tcolor\tsize\tgoogle_product_category\tproduct_type\tshipping_weight
tee-blue-m\ttee\tClassic Tee\tSoft cotton tee\thttps://shop.example/tee\thttps://img.example/blue.jpg\thttps://img.example/a.jpg,https://img.example/b.jpg\t19.99 USD\tin stock\tAcme\t00012345678905\tAC-1\tnew\tBlue\tM\tApparel & Accessories > Clothing\tShirts > Tees\t0.2 kg
tee-blue-l\ttee\tClassic Tee\tSoft cotton tee\thttps://shop.example/tee?l\thttps://img.example/blue.jpg\t\t21.99USD\tout_of_stock\tAcme\t\t\tnew\tBlue\tL\tApparel & Accessories > Clothing\tShirts > Tees\t
tee-red-m\ttee\tClassic Tee\tSoft cotton tee\thttps://shop.example/tee?r\thttps://img.example/red.jpg\t\tUSD 18.50\tbackorder\tAcme\t\t\tnew\tRed\tM\tApparel & Accessories > Clothing\tShirts > Tees\t8 oz
";
        let parsed = parse(feed);
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!(parsed.rows, 3);
        assert_eq!(parsed.products.len(), 1);
        let tee = &parsed.products[0];
        assert_eq!(tee.id, "tee");
        assert_eq!(tee.title, "Classic Tee");
        assert_eq!(tee.handle.as_deref(), Some("classic-tee-tee"));
        assert_eq!(tee.description.plain.as_deref(), Some("Soft cotton tee"));
        assert_eq!(tee.url.as_deref(), Some("https://shop.example/tee"));
        assert_eq!(tee.price_range.min.amount, 1850);
        assert_eq!(tee.price_range.max.amount, 2199);
        assert_eq!(tee.price_range.min.currency, "USD");
        let media: Vec<&str> = tee.media.iter().map(|media| media.url.as_str()).collect();
        assert_eq!(
            media,
            [
                "https://img.example/blue.jpg",
                "https://img.example/a.jpg",
                "https://img.example/b.jpg",
                "https://img.example/red.jpg"
            ]
        );
        assert!(tee.media.iter().all(|media| media.kind == "image"));
        assert_eq!(tee.categories.len(), 2);
        assert_eq!(tee.categories[0].value, "Apparel & Accessories > Clothing");
        assert_eq!(tee.categories[0].taxonomy.as_deref(), Some("google_product_category"));
        assert_eq!(tee.categories[1].value, "Shirts > Tees");
        assert_eq!(tee.categories[1].taxonomy.as_deref(), Some("merchant"));
        assert_eq!(tee.tags, ["Acme"]);
        let metadata = tee.metadata.as_ref().unwrap();
        assert_eq!(metadata["brand"], "Acme");
        assert_eq!(metadata["condition"], "new");
        let axes: Vec<(&str, usize)> =
            tee.options.iter().map(|option| (option.name.as_str(), option.values.len())).collect();
        assert_eq!(axes, [("Color", 2), ("Size", 2)]);

        let titles: Vec<&str> = tee.variants.iter().map(|variant| variant.title.as_str()).collect();
        assert_eq!(titles, ["Blue / M", "Blue / L", "Red / M"]);
        let [blue_m, blue_l, red_m] = &tee.variants[..] else { panic!() };
        assert_eq!(blue_m.sku.as_deref(), Some("AC-1"));
        assert_eq!(blue_l.sku.as_deref(), Some("tee-blue-l"));
        assert_eq!(blue_m.barcodes[0].kind, "GTIN");
        assert_eq!(blue_m.barcodes[0].value, "00012345678905");
        assert_eq!(blue_m.media.len(), 3);
        assert_eq!(blue_l.url.as_deref(), Some("https://shop.example/tee?l"));
        assert_eq!(blue_m.metadata.as_ref().unwrap()["shipping_weight_grams"], 200);
        assert_eq!(red_m.metadata.as_ref().unwrap()["shipping_weight_grams"], 227);
        assert!(blue_l.metadata.is_none());
        assert!(blue_m.is_available());
        assert!(!blue_l.is_available());
        assert_eq!(blue_l.availability.as_ref().unwrap().status.as_deref(), Some("out_of_stock"));
        assert!(red_m.is_available());
        assert_eq!(red_m.availability.as_ref().unwrap().status.as_deref(), Some("backorder"));
        assert!(tee.variants.iter().all(|variant| variant.inventory_quantity.is_none()));
        assert_eq!(blue_m.option_label("Color"), Some("Blue"));
    }

    #[test]
    fn csv_with_quoted_comma_and_newline() {
        let feed = "ID,Title,Description,Price,G:Availability\r\n\
                    1,Mug,\"Big, sturdy mug\r\nDishwasher safe\",5.00 USD,in stock\r\n\
                    2,Plate,Flat,2.50,in_stock\r\n\
                    3,Bowl,\"Deep\",abc,in_stock\r\n";
        let parsed = parse(feed);
        assert_eq!(parsed.rows, 3);
        assert_eq!(parsed.products.len(), 2);
        let mug = &parsed.products[0];
        assert_eq!(mug.description.plain.as_deref(), Some("Big, sturdy mug\r\nDishwasher safe"));
        assert_eq!(mug.variants[0].title, "Mug");
        assert_eq!(mug.variants[0].price.amount, 500);
        assert_eq!(mug.handle.as_deref(), Some("mug-1"));
        assert_eq!(parsed.products[1].variants[0].price.currency, "USD");
        // The mug spans lines 2 and 3, so the plate is on line 4 and the bowl on line 5.
        assert_eq!(parsed.skipped.len(), 1);
        assert_eq!(parsed.skipped[0].line, 5);
        assert_eq!(parsed.skipped[0].field, "price");
    }

    #[test]
    fn bad_rows_are_skipped_with_their_line_and_field_and_the_group_survives() {
        let feed = "\
id\titem_group_id\ttitle\tprice\tavailability\tsize\tquantity
s1\tshoe\tRunner\t80 USD\tin_stock\t40\t3

s2\tshoe\tRunner\teighty USD\tin_stock\t41\t3
s3\tshoe\tRunner\t80 USD\tsometimes\t42\t3
s4\tshoe\tRunner\t80 USD\tin_stock\t43\t-1
s5\tshoe\tRunner\t80 USD\tout of stock\t44\t
s6\tshoe\tRunner\t80 USD\tin stock\t45\t0
\tshoe\tRunner\t80 USD\tin stock\t46\t1
";
        let parsed = parse(feed);
        assert_eq!(parsed.rows, 7);
        let skipped: Vec<(u64, &str)> =
            parsed.skipped.iter().map(|skipped| (skipped.line, skipped.field.as_str())).collect();
        assert_eq!(skipped, [(4, "price"), (5, "availability"), (6, "quantity"), (9, "id")]);
        let shoe = &parsed.products[0];
        let ids: Vec<&str> = shoe.variants.iter().map(|variant| variant.id.as_str()).collect();
        assert_eq!(ids, ["s1", "s5", "s6"]);
        assert_eq!(shoe.variants[0].inventory_quantity, Some(3));
        assert!(shoe.variants[0].is_available());
        assert_eq!(shoe.variants[1].inventory_quantity, None);
        assert!(!shoe.variants[1].is_available());
        assert_eq!(shoe.variants[2].inventory_quantity, Some(0));
        assert!(!shoe.variants[2].is_available());
        assert_eq!(shoe.price_range.min.currency, "USD");
    }

    // A link a platform would be handed must be an absolute http(s) URL: a row whose `link` or
    // `image_link` is another is skipped, naming the attribute; a bad `additional_image_link`
    // is only left out of its row, reported (a text feed splits that column at commas, which a
    // Cloudinary URL holds); a good one is kept in its normalized form.
    #[test]
    fn rows_whose_links_are_not_web_urls_are_skipped() {
        let feed = "\
id\ttitle\tprice\tlink\timage_link\tadditional_image_link
a\tA\t1\tHTTPS://Shop.Example/a b\thttps://img.example/a.jpg\thttps://img.example/a2.jpg,http://img.example/a3.jpg
b\tB\t1\tnot a url\t\t
c\tC\t1\t\tjavascript:alert(1)\t
d\tD\t1\t\t\thttps://img.example/d.jpg,/images/d2.jpg
e\tE\t1\tdata:text/html;base64,PHNjcmlwdD4=\t\t
f\tF\t1\thttps://shop.example/f\t\t
g\tG\t1\t\thttps://img.example/g.jpg\thttps://res.cloudinary.com/x/image/upload/w_400,h_400/g.jpg
";
        let parsed = parse(feed);
        let skipped: Vec<String> = parsed.skipped.iter().map(ToString::to_string).collect();
        assert_eq!(
            skipped,
            [
                "line 3: link: \"not a url\" is not an absolute http(s) URL",
                "line 4: image_link: \"javascript:alert(1)\" is not an absolute http(s) URL",
                "line 6: link: \"data:text/html;base64,PHNjcmlwdD4=\" is not an absolute http(s) URL",
            ]
        );
        let warnings: Vec<String> = parsed.warnings.iter().map(ToString::to_string).collect();
        let left_out = ": the image is left out, the rest of the row imported";
        assert_eq!(
            warnings,
            [
                format!("line 5: additional_image_link: \"/images/d2.jpg\" is not an absolute http(s) URL{left_out}"),
                format!("line 8: additional_image_link: \"h_400/g.jpg\" is not an absolute http(s) URL{left_out}"),
            ]
        );
        let ids: Vec<&str> = parsed.products.iter().map(|product| product.id.as_str()).collect();
        assert_eq!(ids, ["a", "d", "f", "g"]);
        let media = |at: usize| -> Vec<&str> { parsed.products[at].media.iter().map(|m| m.url.as_str()).collect() };
        assert_eq!(media(1), ["https://img.example/d.jpg"]);
        assert_eq!(media(3), ["https://img.example/g.jpg", "https://res.cloudinary.com/x/image/upload/w_400"]);
        let a = &parsed.products[0];
        assert_eq!(a.url.as_deref(), Some("https://shop.example/a%20b"));
        assert_eq!(a.variants[0].url.as_deref(), Some("https://shop.example/a%20b"));
        let media: Vec<&str> = a.media.iter().map(|media| media.url.as_str()).collect();
        assert_eq!(media, ["https://img.example/a.jpg", "https://img.example/a2.jpg", "http://img.example/a3.jpg"]);
    }

    #[test]
    fn sale_price_lower_than_price_becomes_the_price() {
        let feed = "id\ttitle\tprice\tsale_price\n\
                    a\tA\t20.00 USD\t15.00 USD\n\
                    b\tB\t20.00 USD\t25.00 USD\n\
                    c\tC\t20.00 USD\t15.00 EUR\n\
                    d\tD\t20.00 USD\tfree\n\
                    e\tE\t20.00 USD\t15\n";
        let parsed = parse(feed);
        let a = &parsed.products[0].variants[0];
        assert_eq!((a.price.amount, a.list_price.as_ref().map(|price| price.amount)), (1500, Some(2000)));
        assert_eq!(parsed.products[0].list_price_range.as_ref().unwrap().max.amount, 2000);
        let b = &parsed.products[1].variants[0];
        assert_eq!((b.price.amount, b.list_price.is_none()), (2000, true));
        assert_eq!(parsed.products[2].variants[0].price.amount, 1500);
        let skipped: Vec<(u64, &str)> =
            parsed.skipped.iter().map(|skipped| (skipped.line, skipped.field.as_str())).collect();
        assert_eq!(skipped, [(4, "sale_price"), (5, "sale_price")]);
    }

    #[test]
    fn line_numbers_survive_crlf_blank_lines_and_multi_line_fields() {
        let feed = "id,title,price,description\r\n\r\n\
                    1,A,1 USD,\"one\r\ntwo\r\nthree\"\r\n\
                    \r\n\
                    \n\
                    2,B,bad,\"x\"\r\n\
                    3,C,1 USD,\"multi\nline\"\n\
                    4,D,bad,last line without a newline";
        let parsed = parse(feed);
        assert_eq!(parsed.rows, 4);
        let lines: Vec<u64> = parsed.skipped.iter().map(|skipped| skipped.line).collect();
        assert_eq!(lines, [8, 11]);
        assert_eq!(parsed.products[0].description.plain.as_deref(), Some("one\r\ntwo\r\nthree"));
        assert_eq!(parsed.products[1].description.plain.as_deref(), Some("multi\nline"));
    }

    #[test]
    fn missing_id_header_is_an_error() {
        let options = ImportOptions::default();
        let error =
            read_feed("title\tprice\nMug\t5 USD\n".as_bytes(), FeedFormat::MerchantCenterText, &options, &mut |_| {})
                .unwrap_err();
        assert!(matches!(error, FeedError::Malformed { line: 1, .. }), "{error}");
        let empty = read_feed(&b""[..], FeedFormat::MerchantCenterText, &options, &mut |_| {}).unwrap_err();
        assert!(matches!(empty, FeedError::Malformed { .. }));
    }

    #[test]
    fn bom_blank_lines_and_unknown_columns() {
        let feed = "\u{feff}\n\ng:id\tshipping\tg:title\tg:price\tcustom_label_0\n7\tUS::Standard:4.99 USD\tLamp\t30 USD\tx\n\t\t\t\t\n";
        let parsed = parse(feed);
        assert!(parsed.skipped.is_empty(), "{:?}", parsed.skipped);
        assert_eq!(parsed.rows, 1);
        assert_eq!(parsed.products[0].id, "7");
        assert_eq!(parsed.products[0].title, "Lamp");
    }

    #[test]
    fn invalid_utf8_field_skips_the_row() {
        let mut feed = b"id\ttitle\tprice\n1\tMug\t5 USD\n2\t".to_vec();
        feed.extend_from_slice(b"\xff\xfe\t6 USD\n");
        let parsed =
            read_feed(&feed[..], FeedFormat::MerchantCenterText, &ImportOptions::default(), &mut |_| {}).unwrap();
        assert_eq!(parsed.products.len(), 1);
        assert_eq!(parsed.skipped[0].to_string(), "line 3: title: not valid UTF-8");
    }

    #[test]
    fn twenty_thousand_rows() {
        let mut feed = String::from("id\titem_group_id\ttitle\tprice\tavailability\tcolor\tsize\n");
        for row in 0..20_000 {
            let group = row / 4;
            let size = ["S", "M", "L", "XL"][row % 4];
            writeln!(feed, "v{row}\tg{group}\tProduct {group}\t{}.99 USD\tin stock\tBlack\t{size}", row % 90 + 1)
                .unwrap();
        }
        let mut calls = 0;
        let parsed =
            read_feed(feed.as_bytes(), FeedFormat::MerchantCenterText, &ImportOptions::default(), &mut |_| calls += 1)
                .unwrap();
        assert_eq!(parsed.rows, 20_000);
        assert!(parsed.skipped.is_empty());
        assert_eq!(parsed.products.len(), 5_000);
        assert!(parsed.products.iter().all(|product| product.variants.len() == 4));
        assert_eq!(parsed.products[4_999].variants[3].id, "v19999");
        assert!(calls >= 19);
    }
}
