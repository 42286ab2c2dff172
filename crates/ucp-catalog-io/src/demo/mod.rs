//! A realistic, deterministic demo catalog of any size.
//!
//! Product `i` is drawn from its own ChaCha8 stream, seeded from the catalog seed and `i`
//! alone, so a catalog streams in constant memory, any product can be regenerated on its
//! own, and the same options always give byte-identical output. The words come from static
//! tables in `departments/`: ten departments, each with brands and product kinds that carry
//! their own adjectives, materials, option axes, price range and category paths.

mod departments;
mod numbers;
mod text;
mod vocab;

#[cfg(test)]
mod tests;

use std::io::{self, Write};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ucp_domain::catalog::{
    Barcode, Category, Description, Media, PriceRange, Product, Rating, SelectedOption, Variant, web_url,
};
use ucp_domain::money::{Price, currency_exponent, is_currency_code};

use departments::DEPARTMENTS;
use numbers::{Ending, chance, choose_values, gtin13, push_code, quantity, round_price, weighted};
use text::{describe, slug, tags, title};
use vocab::{Brand, Department, IMAGE_VIEWS, Kind};

/// What [`generate`] makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoOptions {
    /// How many products.
    pub products: u64,
    /// The same seed always gives the same catalog.
    pub seed: u64,
    /// The ISO 4217 code of every price. Amounts keep their digits across currencies: a
    /// 24.99 USD price is 2499 minor units in any two-decimal currency and 2499 yen, and ten
    /// times that in a three-decimal currency.
    pub currency: String,
    /// The start of every product and image URL, e.g. `https://shop.example`.
    pub base_url: String,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            products: 1000,
            seed: 42,
            currency: "USD".to_owned(),
            base_url: "https://demo.ucpd.dev".to_owned(),
        }
    }
}

/// Lazily yields `options.products` normalized products; product `i` depends only on
/// `(seed, i)`, so it scales to 1,000,000 products in constant memory and the same options
/// always give byte-identical output.
///
/// # Panics
///
/// If `options.currency` is not three upper-case ASCII letters, or `options.base_url` not an
/// absolute http(s) URL.
pub fn generate(options: &DemoOptions) -> impl Iterator<Item = Product> + use<> {
    let generator = Generator::new(options);
    (0..options.products).map(move |index| generator.product(index))
}

/// Product `index` (counting from zero) of the catalog `options` describes, whatever its size:
/// the same product [`generate`] yields at that position.
///
/// # Panics
///
/// If `options.currency` is not three upper-case ASCII letters, or `options.base_url` not an
/// absolute http(s) URL.
pub fn product_at(options: &DemoOptions, index: u64) -> Product {
    Generator::new(options).product(index)
}

/// Writes the catalog as JSON lines (our import format, see
/// [`crate::to_import_document`]) and returns the number of products written.
/// `progress` is called after every product with the count so far. The writer is not
/// buffered here: pass a `BufWriter` for files.
pub fn write_json_lines(
    options: &DemoOptions,
    mut writer: impl Write,
    progress: &mut dyn FnMut(u64),
) -> io::Result<u64> {
    if !is_currency_code(&options.currency) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{:?} is not an ISO 4217 currency code", options.currency),
        ));
    }
    if let Err(reason) = web_url(&options.base_url) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("base URL {reason}")));
    }
    let mut written = 0;
    for product in generate(options) {
        serde_json::to_writer(&mut writer, &crate::to_import_document(&product))?;
        writer.write_all(b"\n")?;
        written += 1;
        progress(written);
    }
    writer.flush()?;
    Ok(written)
}

/// Spreads consecutive product indexes across the seed space (the 64-bit golden ratio).
const INDEX_MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// The most variants one product has.
const MAX_VARIANTS: usize = 12;

/// Relative frequency of 1, 2, … 12 variants per product.
const VARIANT_COUNT_WEIGHTS: [u32; MAX_VARIANTS] = [22, 16, 14, 12, 7, 8, 4, 5, 3, 3, 2, 4];

/// Relative frequency of 1, 2, 3 and 4 images per product.
const IMAGE_COUNT_WEIGHTS: [u32; 4] = [25, 35, 25, 15];

/// Sale discounts, in percent.
const DISCOUNTS: [i64; 6] = [10, 15, 20, 25, 30, 40];

/// Everything derived once from the options.
#[derive(Debug)]
struct Generator {
    seed: u64,
    currency: String,
    /// Multiplies every amount: 10 for three-decimal currencies, else 1.
    scale: i64,
    base_url: String,
    total_weight: u32,
}

/// How a product's stock is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stock {
    Tracked,
    SoldOut,
    Untracked,
}

impl Generator {
    fn new(options: &DemoOptions) -> Self {
        assert!(
            is_currency_code(&options.currency),
            "demo catalog currency {:?} is not an ISO 4217 code",
            options.currency
        );
        if let Err(reason) = web_url(&options.base_url) {
            panic!("demo catalog base URL {reason}");
        }
        Generator {
            seed: options.seed,
            currency: options.currency.clone(),
            scale: if currency_exponent(&options.currency) == 3 { 10 } else { 1 },
            base_url: options.base_url.trim_end_matches('/').to_owned(),
            total_weight: DEPARTMENTS.iter().map(|department| department.weight).sum(),
        }
    }

    fn product(&self, index: u64) -> Product {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ index.wrapping_mul(INDEX_MIX));
        let rng = &mut rng;
        let number = index + 1;
        let (department_index, department) = self.department(rng);
        let kind = &department.kinds[rng.random_range(0..department.kinds.len())];
        let brand_index = rng.random_range(0..department.brands.len());
        let brand = &department.brands[brand_index];
        let id = format!("prod_{number:07}");

        let (title, words) = title(rng, kind, brand);
        let wanted = 1 + weighted(rng, &VARIANT_COUNT_WEIGHTS);
        let selection = choose_values(rng, kind.axes, wanted);
        let description = describe(rng, department, kind, brand, &title, &words, &selection);
        let handle = format!("{}-{number}", slug(&title));
        let url = format!("{}/products/{handle}", self.base_url);

        let images = 1 + weighted(rng, &IMAGE_COUNT_WEIGHTS);
        let media = (1..=images)
            .map(|image| {
                let alt_text = match image {
                    1 => title.clone(),
                    _ => format!("{title}, {}", IMAGE_VIEWS[image - 2]),
                };
                self.image(format!("{}/images/{id}/{image}.jpg", self.base_url), alt_text)
            })
            .collect();

        let barcode_prefix = if department.isbn {
            Some(978)
        } else if chance(rng, 55) {
            Some((department_index * 10 + brand_index) as u64)
        } else {
            None
        };
        let context = VariantContext { id: &id, number, title: &title, kind, brand, barcode_prefix };
        let variants = self.variants(rng, &context, &selection, wanted);

        let rating = chance(rng, 80).then(|| {
            let tenths = rng.random_range(25..=50).max(rng.random_range(25..=50));
            let most = [20, 150, 800, 3000][rng.random_range(0..4)];
            Rating {
                value: f64::from(tenths) / 10.0,
                scale_max: 5.0,
                scale_min: Some(1.0),
                count: Some(rng.random_range(1..=most)),
            }
        });

        let mut metadata = ucp_domain::json::JsonMap::new();
        metadata.insert("brand".to_owned(), brand.name.into());
        metadata.insert("department".to_owned(), department.name.into());

        let mut product = Product {
            id,
            handle: Some(handle),
            title,
            description: Description::plain(description),
            url: Some(url),
            categories: vec![
                Category { value: kind.google.to_owned(), taxonomy: Some("google_product_category".to_owned()) },
                Category { value: kind.merchant.to_owned(), taxonomy: Some("merchant".to_owned()) },
            ],
            price_range: PriceRange {
                min: Price::new(0, self.currency.clone()),
                max: Price::new(0, self.currency.clone()),
            },
            list_price_range: None,
            media,
            options: Vec::new(),
            variants,
            rating,
            tags: tags(department, kind, &words),
            metadata: Some(metadata),
        };
        if let Err(error) = product.normalize() {
            unreachable!("demo product {} does not normalize: {error}", product.id);
        }
        product
    }

    fn department(&self, rng: &mut ChaCha8Rng) -> (usize, &'static Department) {
        let mut roll = rng.random_range(0..self.total_weight);
        for (index, department) in DEPARTMENTS.iter().enumerate() {
            if roll < department.weight {
                return (index, department);
            }
            roll -= department.weight;
        }
        (DEPARTMENTS.len() - 1, DEPARTMENTS[DEPARTMENTS.len() - 1])
    }

    fn image(&self, url: String, alt_text: String) -> Media {
        Media { kind: "image".to_owned(), url, alt_text: Some(alt_text), width: Some(1200), height: Some(1200) }
    }

    fn variants(
        &self,
        rng: &mut ChaCha8Rng,
        product: &VariantContext<'_>,
        selection: &[Vec<usize>],
        wanted: usize,
    ) -> Vec<Variant> {
        let base = rng.random_range(product.kind.price.0..=product.kind.price.1);
        let ending = match rng.random_range(0..10) {
            0..=6 => Ending::NinetyNine,
            7 => Ending::NinetyFive,
            _ => Ending::Zero,
        };
        let discount = chance(rng, 30).then(|| DISCOUNTS[rng.random_range(0..DISCOUNTS.len())]);
        let stock = match rng.random_range(0..100) {
            0..=2 => Stock::SoldOut,
            3..=4 => Stock::Untracked,
            _ => Stock::Tracked,
        };
        let combinations = selection.iter().map(Vec::len).product::<usize>().clamp(1, wanted);
        let mut variants = Vec::with_capacity(combinations);
        for position in 0..combinations {
            let variant_number = position + 1;
            let id = format!("{}-{variant_number}", product.id);
            let mut sku = format!("{}-{}-{:07}", product.brand.code, product.kind.code, product.number);
            let mut variant_title = String::new();
            let mut options = Vec::with_capacity(selection.len());
            let mut premium = 0;
            // Mixed-radix decoding of `position`: the last axis changes fastest.
            let mut rest = position;
            let mut picks = [0; 4];
            for (slot, values) in selection.iter().enumerate().rev() {
                picks[slot] = values[rest % values.len()];
                rest /= values.len();
            }
            for (axis, &value) in product.kind.axes.iter().zip(&picks) {
                let label = axis.values[value];
                sku.push('-');
                push_code(&mut sku, label);
                if !variant_title.is_empty() {
                    variant_title.push_str(" / ");
                }
                variant_title.push_str(label);
                options.push(SelectedOption { name: axis.name.to_owned(), label: label.to_owned(), id: None });
                premium += i64::from(axis.premiums.get(value).copied().unwrap_or(0));
            }
            if variant_title.is_empty() {
                variant_title = product.title.to_owned();
            }

            let regular = round_price(base * (100 + premium) / 100, ending);
            let (price, list_price) = match discount {
                Some(percent) if position == 0 || chance(rng, 70) => {
                    let sale = round_price(regular * (100 - percent) / 100, ending);
                    if sale < regular { (sale, Some(regular)) } else { (regular, None) }
                }
                _ => (regular, None),
            };
            let inventory_quantity = match stock {
                Stock::SoldOut => Some(0),
                Stock::Untracked => None,
                Stock::Tracked if chance(rng, 5) => Some(0),
                Stock::Tracked => Some(quantity(rng)),
            };
            let barcodes = product
                .barcode_prefix
                .map(|prefix| Barcode {
                    kind: if prefix == 978 { "ISBN" } else { "GTIN" }.to_owned(),
                    value: gtin13(prefix, product.number, variant_number as u64),
                })
                .into_iter()
                .collect();
            let image_url = format!("{}/images/{}/{id}.jpg", self.base_url, product.id);
            let alt_text = format!("{}, {variant_title}", product.title);

            variants.push(Variant {
                id,
                sku: Some(sku),
                barcodes,
                handle: None,
                url: None,
                description: Description::plain(format!("{alt_text}.")),
                media: vec![self.image(image_url, alt_text)],
                title: variant_title,
                categories: Vec::new(),
                price: Price::new(price * self.scale, self.currency.clone()),
                list_price: list_price.map(|amount| Price::new(amount * self.scale, self.currency.clone())),
                unit_price: None,
                availability: None,
                options,
                rating: None,
                tags: Vec::new(),
                metadata: None,
                seller: None,
                inventory_quantity,
            });
        }
        variants
    }
}

/// What every variant of one product shares.
#[derive(Debug)]
struct VariantContext<'a> {
    id: &'a str,
    number: u64,
    title: &'a str,
    kind: &'static Kind,
    brand: &'static Brand,
    /// The first digits of the variants' barcodes (978 for an ISBN), when they have one.
    barcode_prefix: Option<u64>,
}
