//! Normalizing a product as it is imported: descriptions, derived options, prices and links
//! checked.

use super::*;

impl Description {
    pub fn plain(text: impl Into<String>) -> Self {
        Description { plain: Some(text.into()), html: None, markdown: None }
    }

    pub fn is_empty(&self) -> bool {
        self.plain.is_none() && self.html.is_none() && self.markdown.is_none()
    }

    /// The text a search index should see: plain, else markdown, else HTML with tags stripped.
    pub fn searchable_text(&self) -> String {
        if let Some(plain) = &self.plain {
            return plain.clone();
        }
        if let Some(markdown) = &self.markdown {
            return markdown.clone();
        }
        self.html.as_deref().map(strip_tags).unwrap_or_default()
    }
}

fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(ch),
            _ => {}
        }
    }
    out
}

impl Variant {
    /// Whether a buyer can order this variant now.
    pub fn is_available(&self) -> bool {
        if let Some(Availability { available: Some(available), .. }) = &self.availability {
            return *available;
        }
        self.inventory_quantity.is_none_or(|quantity| quantity > 0)
    }

    /// The label this variant has on option axis `name`.
    pub fn option_label(&self, name: &str) -> Option<&str> {
        self.options.iter().find(|option| option.name == name).map(|option| option.label.as_str())
    }
}

impl Product {
    /// Everything besides the title a buyer might search by: the description, tags,
    /// categories, brand and option values (what the search index reads as a product's body).
    pub fn search_body(&self) -> String {
        let mut body = self.description.searchable_text();
        let mut push = |text: &str| {
            body.push(' ');
            body.push_str(text);
        };
        for tag in &self.tags {
            push(tag);
        }
        for category in &self.categories {
            push(&category.value);
        }
        if let Some(brand) = self.metadata.as_ref().and_then(|metadata| metadata.get("brand")).and_then(|v| v.as_str())
        {
            push(brand);
        }
        for option in &self.options {
            for value in &option.values {
                push(&value.label);
            }
        }
        body
    }

    /// Checks what the UCP schema and our store require, and derives what is derived:
    /// `price_range`, `list_price_range`, variant availability from stock, option axes from
    /// variant options when the document has none; every link is put through [`web_url`].
    /// Call before storing.
    pub fn normalize(&mut self) -> Result<(), InvalidProduct> {
        self.normalize_links(Links::Parse)
    }

    /// [`Product::normalize`] for a product whose every link is already an answer of
    /// [`web_url`], which is not asked again: the Merchant Center importer checks each row's
    /// links as it reads the row, where it can name the line, and builds the product from
    /// them. (Debug builds check that they are.)
    pub fn normalize_with_web_links(&mut self) -> Result<(), InvalidProduct> {
        self.normalize_links(Links::Made)
    }

    fn normalize_links(&mut self, links: Links) -> Result<(), InvalidProduct> {
        if self.id.trim().is_empty() {
            return Err(InvalidProduct::new("id", "must not be empty"));
        }
        if self.title.trim().is_empty() {
            return Err(InvalidProduct::new("title", "must not be empty"));
        }
        if self.description.is_empty() {
            self.description = Description::plain(self.title.clone());
        }
        check_url(&mut self.url, || "url".to_owned(), links)?;
        check_media(&mut self.media, "media", links)?;
        if self.variants.is_empty() {
            return Err(InvalidProduct::new("variants", "a product needs at least one variant"));
        }
        let currency = self.variants[0].price.currency.clone();
        let mut seen_ids = std::collections::HashSet::new();
        for (index, variant) in self.variants.iter_mut().enumerate() {
            if variant.id.trim().is_empty() {
                return Err(InvalidProduct::new(format!("variants[{index}].id"), "must not be empty"));
            }
            if !seen_ids.insert(variant.id.clone()) {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].id"),
                    format!("duplicate variant id {:?}", variant.id),
                ));
            }
            check_price(&variant.price, &format!("variants[{index}].price"))?;
            if let Some(list_price) = &variant.list_price {
                check_price(list_price, &format!("variants[{index}].list_price"))?;
            }
            if variant.price.currency != currency {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].price.currency"),
                    format!("all variants must share one currency ({currency})"),
                ));
            }
            if let Some(list_price) = &variant.list_price
                && list_price.currency != currency
            {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].list_price.currency"),
                    format!("all variants must share one currency ({currency})"),
                ));
            }
            check_url(&mut variant.url, || format!("variants[{index}].url"), links)?;
            if !variant.media.is_empty() {
                check_media(&mut variant.media, &format!("variants[{index}].media"), links)?;
            }
            if let Some(seller) = &mut variant.seller {
                for (at, link) in seller.links.iter_mut().enumerate() {
                    check_link(&mut link.url, || format!("variants[{index}].seller.links[{at}].url"), links)?;
                }
            }
            if variant.title.trim().is_empty() {
                variant.title = self.title.clone();
            }
            if variant.description.is_empty() {
                variant.description = self.description.clone();
            }
            if let Some(quantity) = variant.inventory_quantity
                && quantity < 0
            {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].inventory_quantity"),
                    "must not be negative",
                ));
            }
        }
        self.refresh_availability();
        let prices = self.variants.iter().map(|variant| variant.price.amount);
        let (min, max) = (prices.clone().min().unwrap_or(0), prices.max().unwrap_or(0));
        self.price_range =
            PriceRange { min: Price::new(min, currency.clone()), max: Price::new(max, currency.clone()) };
        let list_prices: Vec<i64> =
            self.variants.iter().filter_map(|variant| variant.list_price.as_ref().map(|price| price.amount)).collect();
        self.list_price_range = match (list_prices.iter().min(), list_prices.iter().max()) {
            (Some(min), Some(max)) => {
                Some(PriceRange { min: Price::new(*min, currency.clone()), max: Price::new(*max, currency.clone()) })
            }
            _ => None,
        };
        if self.options.is_empty() {
            self.options = derive_options(&self.variants);
        }
        Ok(())
    }

    /// Recomputes each stock-tracked variant's `availability` from its `inventory_quantity`.
    /// A `backorder`/`preorder` status stays orderable at zero stock.
    pub fn refresh_availability(&mut self) {
        for variant in &mut self.variants {
            let Some(quantity) = variant.inventory_quantity else { continue };
            let stated = variant.availability.as_ref().and_then(|availability| availability.status.as_deref());
            variant.availability = Some(Availability::for_stock(stated, quantity));
        }
    }

    /// Refuses a product priced in another currency than the catalog's (the server's
    /// `catalog.currency`): the store serves a product's prices as they are, in their own
    /// currency, while carts and checkouts charge the same amounts in the catalog's.
    pub fn require_currency(&self, catalog_currency: &str) -> Result<(), InvalidProduct> {
        for (index, variant) in self.variants.iter().enumerate() {
            if variant.price.currency != catalog_currency {
                return Err(InvalidProduct::new(
                    format!("variants[{index}].price.currency"),
                    format!("{} is not the catalog's currency {catalog_currency}", variant.price.currency),
                ));
            }
        }
        Ok(())
    }

    /// The currency every variant is priced in.
    pub fn currency(&self) -> &str {
        &self.price_range.min.currency
    }

    pub fn variant_by_id(&self, variant_id: &str) -> Option<&Variant> {
        self.variants.iter().find(|variant| variant.id == variant_id)
    }
}

fn check_price(price: &Price, field: &str) -> Result<(), InvalidProduct> {
    if !crate::money::is_currency_code(&price.currency) {
        return Err(InvalidProduct::new(
            format!("{field}.currency"),
            format!("{:?} is not an ISO 4217 code", price.currency),
        ));
    }
    if !(0..=crate::money::MAX_AMOUNT).contains(&price.amount) {
        return Err(InvalidProduct::new(format!("{field}.amount"), "must be between 0 and 2^53-1 minor units"));
    }
    Ok(())
}

/// `text` as an absolute `http` or `https` URL, in the `url` crate's (WHATWG) serialization
/// (scheme and host lower-cased, an international domain in its ASCII form, spaces and
/// non-ASCII characters percent-encoded), with what that serialization still leaves that
/// RFC 3986 does not allow percent-encoded too (`|`, `^`, `[`, `]`, `\`, `{`, `}`, `` ` ``, a `%`
/// that starts no escape, a second `#`), so that what is served passes the schema's
/// `format: uri`; or why it is not one (a relative path, `javascript:`, `data:`, `mailto:`,
/// text that is no URL, a host RFC 3986 cannot hold such as `a{b}.example`). A link it
/// answered, it answers unchanged.
pub fn web_url(text: &str) -> Result<String, String> {
    let refused = || format!("{} is not an absolute http(s) URL", quoted(text));
    let url = url::Url::parse(text.trim()).map_err(|_| refused())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refused());
    }
    // The WHATWG parser lets a domain hold `{`, `"` or `` ` ``, which a URI's cannot.
    let host_is_uris = match url.host() {
        Some(url::Host::Domain(domain)) => !domain.is_empty() && domain.bytes().all(|byte| REG_NAME[usize::from(byte)]),
        Some(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => true,
        None => false,
    };
    if !host_is_uris {
        return Err(refused());
    }
    let host = url[..url::Position::BeforeHost].len()..url[..url::Position::AfterHost].len();
    Ok(encode_leftovers(url.into(), host))
}

/// `serialized` with every byte outside `host` that RFC 3986 does not allow there
/// percent-encoded: a `%` not followed by two hex digits, a `#` after the one that starts the
/// fragment, anything besides the unreserved and reserved characters. (Outside the host, the
/// WHATWG serialization is ASCII.) Copied only if something changes.
fn encode_leftovers(serialized: String, host: std::ops::Range<usize>) -> String {
    let bytes = serialized.as_bytes();
    // Most links hold neither an escape nor a fragment: one pass tells.
    let plain = |part: &[u8]| part.iter().all(|&byte| PLAIN[usize::from(byte)]);
    if plain(&bytes[..host.start]) && plain(&bytes[host.end..]) {
        return serialized;
    }
    let mut fragment = false;
    let mut encoded: Option<String> = None;
    for (at, &byte) in bytes.iter().enumerate() {
        let allowed = host.contains(&at)
            || match byte {
                b'%' => bytes.get(at + 1..at + 3).is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)),
                b'#' => !std::mem::replace(&mut fragment, true),
                _ => PLAIN[usize::from(byte)],
            };
        match (&mut encoded, allowed) {
            (None, true) => {}
            (None, false) => {
                let mut copy = String::with_capacity(serialized.len() + 8);
                copy.push_str(&serialized[..at]);
                push_escape(&mut copy, byte);
                encoded = Some(copy);
            }
            (Some(copy), true) => copy.push(char::from(byte)),
            (Some(copy), false) => push_escape(copy, byte),
        }
    }
    encoded.unwrap_or(serialized)
}

fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push('%');
    out.push(char::from(HEX[usize::from(byte >> 4)]));
    out.push(char::from(HEX[usize::from(byte & 0xf)]));
}

/// The bytes RFC 3986 allows anywhere outside a host, as themselves: the unreserved and the
/// reserved characters but `#` (one only, before the fragment) and `[`, `]` (an IPv6 host's).
const PLAIN: [bool; 256] = bytes_of(b"-._~!$&'()*+,;=:@/?");

/// The bytes RFC 3986 allows in a host name (`reg-name`, less the escapes WHATWG refuses
/// there).
const REG_NAME: [bool; 256] = bytes_of(b"-._~!$&'()*+,;=");

/// ASCII letters, digits and `others`.
const fn bytes_of(others: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 128 {
        table[byte] = (byte as u8).is_ascii_alphanumeric();
        byte += 1;
    }
    let mut at = 0;
    while at < others.len() {
        table[others[at] as usize] = true;
        at += 1;
    }
    table
}

// Every link a platform is handed (the product's and each variant's page, every image, a
// seller's links) must be an absolute http(s) URL: the served JSON must pass the schema's
// `format: uri`, and a `javascript:` or `data:` link would reach a buyer's screen. A product
// with a bad one is refused whole, named by the field, rather than imported without it: that
// is the importer's rule for every value it cannot read (the row is skipped and reported with
// its line, and `--strict` fails on it, where a dropped field would pass unnoticed), and a
// link that holds no URL is more often a feed whose columns slipped than a typo, where the
// rest of the row (its price) cannot be trusted either. (The Merchant Center importer makes
// one exception, reported: an `additional_image_link` that is no URL is left out of its row,
// since a text feed splits that column at commas, which some image URLs hold.)

/// Whether `normalize` parses the links it meets, or they are [`web_url`]'s answers already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Links {
    Parse,
    Made,
}

/// Checks a link, rewriting it in its normalized form (unless `links` says it is).
fn check_link(url: &mut String, field: impl FnOnce() -> String, links: Links) -> Result<(), InvalidProduct> {
    match links {
        Links::Parse => *url = web_url(url).map_err(|reason| InvalidProduct::new(field(), reason))?,
        Links::Made => debug_assert_eq!(web_url(url).as_deref(), Ok(url.as_str()), "{} is not web_url's", field()),
    }
    Ok(())
}

/// Checks an optional link, rewriting it in its normalized form.
fn check_url(url: &mut Option<String>, field: impl FnOnce() -> String, links: Links) -> Result<(), InvalidProduct> {
    match url {
        Some(url) => check_link(url, field, links),
        None => Ok(()),
    }
}

/// Checks each media item's link, rewriting it in its normalized form.
fn check_media(media: &mut [Media], field: &str, links: Links) -> Result<(), InvalidProduct> {
    for (index, item) in media.iter_mut().enumerate() {
        check_link(&mut item.url, || format!("{field}[{index}].url"), links)?;
    }
    Ok(())
}

/// `text` quoted for a message, cut after 64 characters (a `data:` URL can be megabytes).
fn quoted(text: &str) -> String {
    match text.char_indices().nth(64) {
        Some((end, _)) => format!("{:?}...", &text[..end]),
        None => format!("{text:?}"),
    }
}

/// Option axes in first-seen order, from the variants' own selections.
fn derive_options(variants: &[Variant]) -> Vec<ProductOption> {
    let mut axes: Vec<ProductOption> = Vec::new();
    let mut seen: BTreeMap<(String, String), ()> = BTreeMap::new();
    for variant in variants {
        for selected in &variant.options {
            if seen.insert((selected.name.clone(), selected.label.clone()), ()).is_some() {
                continue;
            }
            let value =
                OptionValue { id: selected.id.clone(), label: selected.label.clone(), available: None, exists: None };
            match axes.iter_mut().find(|axis| axis.name == selected.name) {
                Some(axis) => axis.values.push(value),
                None => axes.push(ProductOption { name: selected.name.clone(), values: vec![value] }),
            }
        }
    }
    axes
}

impl Availability {
    /// A stock-tracked variant's availability for `quantity` units on hand, given the status
    /// its document states: `backorder` and `preorder` stay orderable at zero stock.
    pub fn for_stock(stated: Option<&str>, quantity: i64) -> Availability {
        let in_stock = quantity > 0;
        let status = match stated {
            Some(status @ ("backorder" | "preorder")) => status,
            _ if in_stock => "in_stock",
            _ => "out_of_stock",
        };
        let available = in_stock || matches!(status, "backorder" | "preorder");
        Availability { available: Some(available), status: Some(status.to_owned()) }
    }

    /// Whether a variant whose document states `stated` is available with `stock` laid over
    /// it: what [`Variant::is_available`] answers once [`Product::refresh_availability`] ran.
    pub fn is_orderable(stated: Option<&Availability>, stock: Option<i64>) -> bool {
        match stock {
            Some(quantity) => {
                let status = stated.and_then(|availability| availability.status.as_deref());
                Availability::for_stock(status, quantity).available == Some(true)
            }
            None => stated.and_then(|availability| availability.available).unwrap_or(true),
        }
    }
}
