//! One Merchant Center row or XML item: the attributes we read, their values checked and
//! turned into a variant plus the product-level attributes the row carries.

use ucp_domain::catalog::{Barcode, Category, Description, Media, SelectedOption, Variant, web_url};

use super::staging::{put_str, take_str};
use super::values::{parse_availability, parse_condition, parse_price, parse_quantity, parse_weight_grams};
use super::{ImportOptions, RowWarning, SkippedRow};

/// A Merchant Center attribute the importer maps; everything else in a feed is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Attr {
    Id,
    ItemGroupId,
    Title,
    Description,
    Link,
    ImageLink,
    AdditionalImageLink,
    Price,
    SalePrice,
    Availability,
    Quantity,
    SellOnGoogleQuantity,
    Brand,
    Gtin,
    Mpn,
    Condition,
    Color,
    Size,
    Material,
    Pattern,
    GoogleProductCategory,
    ProductType,
    ShippingWeight,
}

const ATTR_COUNT: usize = 23;

impl Attr {
    const ALL: [Attr; ATTR_COUNT] = [
        Attr::Id,
        Attr::ItemGroupId,
        Attr::Title,
        Attr::Description,
        Attr::Link,
        Attr::ImageLink,
        Attr::AdditionalImageLink,
        Attr::Price,
        Attr::SalePrice,
        Attr::Availability,
        Attr::Quantity,
        Attr::SellOnGoogleQuantity,
        Attr::Brand,
        Attr::Gtin,
        Attr::Mpn,
        Attr::Condition,
        Attr::Color,
        Attr::Size,
        Attr::Material,
        Attr::Pattern,
        Attr::GoogleProductCategory,
        Attr::ProductType,
        Attr::ShippingWeight,
    ];

    /// The attribute's Merchant Center name, as reported in [`SkippedRow::field`].
    pub(super) fn name(self) -> &'static str {
        match self {
            Attr::Id => "id",
            Attr::ItemGroupId => "item_group_id",
            Attr::Title => "title",
            Attr::Description => "description",
            Attr::Link => "link",
            Attr::ImageLink => "image_link",
            Attr::AdditionalImageLink => "additional_image_link",
            Attr::Price => "price",
            Attr::SalePrice => "sale_price",
            Attr::Availability => "availability",
            Attr::Quantity => "quantity",
            Attr::SellOnGoogleQuantity => "sell_on_google_quantity",
            Attr::Brand => "brand",
            Attr::Gtin => "gtin",
            Attr::Mpn => "mpn",
            Attr::Condition => "condition",
            Attr::Color => "color",
            Attr::Size => "size",
            Attr::Material => "material",
            Attr::Pattern => "pattern",
            Attr::GoogleProductCategory => "google_product_category",
            Attr::ProductType => "product_type",
            Attr::ShippingWeight => "shipping_weight",
        }
    }

    /// A text feed column header: case-insensitive, optional `g:` prefix, spaces or underscores.
    pub(super) fn from_header(header: &str) -> Option<Attr> {
        let header = header.trim().trim_start_matches('\u{feff}').trim().to_ascii_lowercase().replace(' ', "_");
        let header = header.strip_prefix("g:").unwrap_or(&header);
        Attr::from_name(header.as_bytes())
    }

    /// An exact attribute name, e.g. an XML element's local name.
    pub(super) fn from_name(name: &[u8]) -> Option<Attr> {
        Attr::ALL.into_iter().find(|attr| attr.name().as_bytes() == name)
    }
}

/// One row or item as read: trimmed, non-empty attribute values, nothing interpreted yet.
pub(super) struct RawItem {
    /// 1-based line where the row or item starts.
    pub(super) line: u64,
    values: [Option<String>; ATTR_COUNT],
    additional_images: Vec<String>,
    product_types: Vec<String>,
    /// The first problem met while reading the row, e.g. invalid UTF-8 in a field.
    error: Option<(Attr, String)>,
}

impl Default for RawItem {
    fn default() -> Self {
        RawItem {
            line: 0,
            values: [const { None }; ATTR_COUNT],
            additional_images: Vec::new(),
            product_types: Vec::new(),
            error: None,
        }
    }
}

impl RawItem {
    pub(super) fn reset(&mut self, line: u64) {
        self.line = line;
        self.values.iter_mut().for_each(|value| *value = None);
        self.additional_images.clear();
        self.product_types.clear();
        self.error = None;
    }

    /// Records a value. Empty values are ignored; `additional_image_link` and `product_type`
    /// collect every value, other attributes keep the first.
    pub(super) fn set(&mut self, attr: Attr, value: &str) {
        let value = value.trim();
        if value.is_empty() {
            return;
        }
        match attr {
            Attr::AdditionalImageLink => self.additional_images.push(value.to_owned()),
            Attr::ProductType => self.product_types.push(value.to_owned()),
            _ => {
                let slot = &mut self.values[attr as usize];
                if slot.is_none() {
                    *slot = Some(value.to_owned());
                }
            }
        }
    }

    /// Marks the row as unusable; the first error wins.
    pub(super) fn fail(&mut self, attr: Attr, reason: impl Into<String>) {
        if self.error.is_none() {
            self.error = Some((attr, reason.into()));
        }
    }

    fn take(&mut self, attr: Attr) -> Option<String> {
        self.values[attr as usize].take()
    }

    /// The values held, compactly, for the staging database: each as its attribute's index
    /// and a length-prefixed string. Read back by [`RawItem::decode`].
    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        out.clear();
        for (index, value) in self.values.iter().enumerate() {
            if let Some(value) = value {
                out.push(index as u8);
                put_str(out, value);
            }
        }
        for (attr, values) in
            [(Attr::AdditionalImageLink, &self.additional_images), (Attr::ProductType, &self.product_types)]
        {
            for value in values {
                out.push(attr as u8);
                put_str(out, value);
            }
        }
    }

    /// Resets the item to `line` holding what [`RawItem::encode`] wrote; `None` if `bytes`
    /// are not such an encoding.
    pub(super) fn decode(&mut self, line: u64, mut bytes: &[u8]) -> Option<()> {
        self.reset(line);
        while let Some((&index, rest)) = bytes.split_first() {
            bytes = rest;
            let attr = *Attr::ALL.get(usize::from(index))?;
            let value = take_str(&mut bytes)?.to_owned();
            match attr {
                Attr::AdditionalImageLink => self.additional_images.push(value),
                Attr::ProductType => self.product_types.push(value),
                _ => self.values[attr as usize] = Some(value),
            }
        }
        Some(())
    }
}

/// A row turned into a variant, plus the product-level attributes it carried.
pub(super) struct Row {
    pub(super) line: u64,
    pub(super) product_id: String,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) link: Option<String>,
    pub(super) images: Vec<String>,
    pub(super) brand: Option<String>,
    pub(super) condition: Option<String>,
    pub(super) categories: Vec<Category>,
    pub(super) variant: Variant,
}

/// Reads one row, or why it is skipped; a value it is read without is reported in `warnings`
/// (the caller's, cleared first).
pub(super) fn parse_row(
    raw: &mut RawItem,
    options: &ImportOptions,
    warnings: &mut Vec<RowWarning>,
) -> Result<Row, SkippedRow> {
    warnings.clear();
    let line = raw.line;
    let skip = |attr: Attr, reason: String| SkippedRow::new(line, attr.name(), reason);
    if let Some((attr, reason)) = raw.error.take() {
        return Err(skip(attr, reason));
    }
    let id = raw.take(Attr::Id).ok_or_else(|| skip(Attr::Id, "missing".into()))?;
    let price_text = raw.take(Attr::Price).ok_or_else(|| skip(Attr::Price, "missing".into()))?;
    let price = parse_price(&price_text, &options.currency).map_err(|reason| skip(Attr::Price, reason))?;
    if price.currency != options.currency {
        let reason = format!("currency {} is not the catalog's currency {}", price.currency, options.currency);
        return Err(skip(Attr::Price, reason).priced_in(price.currency));
    }
    let mut variant_price = price.clone();
    let mut list_price = None;
    if let Some(sale_text) = raw.take(Attr::SalePrice) {
        let sale = parse_price(&sale_text, &price.currency).map_err(|reason| skip(Attr::SalePrice, reason))?;
        if sale.currency != price.currency {
            return Err(skip(
                Attr::SalePrice,
                format!("currency {} differs from the price's {}", sale.currency, price.currency),
            ));
        }
        if sale.amount < price.amount {
            variant_price = sale;
            list_price = Some(price);
        }
    }
    let availability = match raw.take(Attr::Availability) {
        Some(text) => Some(parse_availability(&text).map_err(|reason| skip(Attr::Availability, reason))?),
        None => None,
    };
    let mut inventory_quantity = None;
    for attr in [Attr::Quantity, Attr::SellOnGoogleQuantity] {
        if let Some(text) = raw.take(attr)
            && inventory_quantity.is_none()
        {
            inventory_quantity = Some(parse_quantity(&text).map_err(|reason| skip(attr, reason))?);
        }
    }
    let condition = match raw.take(Attr::Condition) {
        Some(text) => Some(parse_condition(&text).map_err(|reason| skip(Attr::Condition, reason))?),
        None => None,
    };
    let mut variant_metadata = None;
    if let Some(text) = raw.take(Attr::ShippingWeight) {
        let grams = parse_weight_grams(&text).map_err(|reason| skip(Attr::ShippingWeight, reason))?;
        variant_metadata = Some(ucp_domain::json::JsonMap::from_iter([(
            "shipping_weight_grams".to_owned(),
            ucp_domain::json::Json::from(grams),
        )]));
    }

    let options =
        [(Attr::Color, "Color"), (Attr::Size, "Size"), (Attr::Material, "Material"), (Attr::Pattern, "Pattern")]
            .into_iter()
            .filter_map(|(attr, name)| {
                raw.take(attr).map(|label| SelectedOption { name: name.to_owned(), label, id: None })
            })
            .collect();
    let mut categories = Vec::new();
    if let Some(value) = raw.take(Attr::GoogleProductCategory) {
        categories.push(Category { value, taxonomy: Some("google_product_category".to_owned()) });
    }
    for value in raw.product_types.drain(..) {
        categories.push(Category { value, taxonomy: Some("merchant".to_owned()) });
    }
    // Links are checked here, where the attribute and the line are known, as the product's
    // normalization would (`web_url`: an absolute http(s) URL), which then takes them as they
    // are (`normalize_with_web_links`). A bad `link` or `image_link` skips the row; a bad
    // `additional_image_link` is only left out, reported: a text feed splits that column at
    // commas, and some image URLs hold one (`.../upload/w_400,h_400/a.jpg`).
    let checked = |attr: Attr, text: &str| web_url(text).map_err(|reason| skip(attr, reason));
    let mut images = Vec::with_capacity(1 + raw.additional_images.len());
    if let Some(text) = raw.take(Attr::ImageLink) {
        images.push(checked(Attr::ImageLink, &text)?);
    }
    let link = raw.take(Attr::Link).map(|text| checked(Attr::Link, &text)).transpose()?;
    for text in raw.additional_images.drain(..) {
        match web_url(&text) {
            Ok(url) => images.push(url),
            Err(reason) => warnings.push(RowWarning::new(
                line,
                Attr::AdditionalImageLink.name(),
                format!("{reason}: the image is left out, the rest of the row imported"),
            )),
        }
    }
    let barcodes = raw.take(Attr::Gtin).map(|value| Barcode { kind: "GTIN".to_owned(), value }).into_iter().collect();
    let sku = raw.take(Attr::Mpn).unwrap_or_else(|| id.clone());
    let product_id = raw.take(Attr::ItemGroupId).unwrap_or_else(|| id.clone());
    let title = raw.take(Attr::Title);
    let variant = Variant {
        id,
        sku: Some(sku),
        barcodes,
        handle: None,
        url: link.clone(),
        title: String::new(),
        description: Description::default(),
        categories: Vec::new(),
        price: variant_price,
        list_price,
        unit_price: None,
        availability,
        options,
        media: Vec::new(),
        rating: None,
        tags: Vec::new(),
        metadata: variant_metadata,
        seller: None,
        inventory_quantity,
    };
    Ok(Row {
        line,
        product_id,
        title,
        description: raw.take(Attr::Description),
        link,
        images,
        brand: raw.take(Attr::Brand),
        condition,
        categories,
        variant,
    })
}

pub(super) fn image(url: &str) -> Media {
    Media { kind: "image".to_owned(), url: url.to_owned(), alt_text: None, width: None, height: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_case_insensitive_with_optional_prefix_and_spaces() {
        assert_eq!(Attr::from_header("ID"), Some(Attr::Id));
        assert_eq!(Attr::from_header("g:image_link"), Some(Attr::ImageLink));
        assert_eq!(Attr::from_header(" Image Link "), Some(Attr::ImageLink));
        assert_eq!(Attr::from_header("\u{feff}id"), Some(Attr::Id));
        assert_eq!(Attr::from_header("G:Item Group ID"), Some(Attr::ItemGroupId));
        assert_eq!(Attr::from_header("shipping"), None);
        for attr in Attr::ALL {
            assert_eq!(Attr::from_name(attr.name().as_bytes()), Some(attr));
        }
    }

    #[test]
    fn encoded_items_decode_to_the_same_row() {
        for (index, attr) in Attr::ALL.into_iter().enumerate() {
            assert_eq!(attr as usize, index, "Attr::ALL is in declaration order");
        }
        let mut raw = RawItem::default();
        raw.reset(7);
        for (attr, value) in [
            (Attr::Id, "tee-1"),
            (Attr::ItemGroupId, "tee"),
            (Attr::Title, "Tee \u{e9}t\u{e9}"),
            (Attr::Price, "20 USD"),
            (Attr::SalePrice, "15 USD"),
            (Attr::AdditionalImageLink, "https://img.example/a.jpg"),
            (Attr::AdditionalImageLink, "https://img.example/b.jpg"),
            (Attr::ProductType, "A > B"),
            (Attr::ProductType, "C"),
            (Attr::Size, "M"),
            (Attr::ShippingWeight, "1 kg"),
        ] {
            raw.set(attr, value);
        }
        let mut encoded = Vec::new();
        raw.encode(&mut encoded);
        let mut decoded = RawItem::default();
        decoded.decode(7, &encoded).unwrap();
        let options = ImportOptions::default();
        let mut warnings = Vec::new();
        let original = parse_row(&mut raw, &options, &mut warnings).unwrap();
        let again = parse_row(&mut decoded, &options, &mut warnings).unwrap();
        assert_eq!(again.line, 7);
        assert_eq!(
            (&again.product_id, &again.title, &again.images),
            (&original.product_id, &original.title, &original.images)
        );
        assert_eq!(again.categories, original.categories);
        assert_eq!(again.variant, original.variant);
        assert!(decoded.decode(1, &[200, 0]).is_none());
    }
}
