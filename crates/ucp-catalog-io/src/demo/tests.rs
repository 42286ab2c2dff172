use std::collections::HashSet;

use ucp_domain::catalog::Product;

use super::departments::DEPARTMENTS;
use super::numbers::{Ending, gtin13, push_code, round_price};
use super::text::{lower_words, push_list, slug};
use super::vocab::TitleStyle;
use super::*;

fn options(products: u64) -> DemoOptions {
    DemoOptions { products, ..DemoOptions::default() }
}

fn catalog(products: u64) -> Vec<Product> {
    generate(&options(products)).collect()
}

fn json(products: &[Product]) -> Vec<String> {
    products.iter().map(|product| crate::to_import_document(product).to_string()).collect()
}

#[test]
fn same_seed_gives_identical_json_and_another_seed_does_not() {
    let first = json(&catalog(200));
    let second = json(&catalog(200));
    assert_eq!(first, second);
    let other: Vec<Product> = generate(&DemoOptions { seed: 7, ..options(200) }).collect();
    let other = json(&other);
    assert_ne!(first, other);
    let differing = first.iter().zip(&other).filter(|(a, b)| a != b).count();
    assert!(differing > 190, "only {differing} of 200 products changed with the seed");
}

#[test]
fn a_product_does_not_depend_on_catalog_size() {
    let small = catalog(50);
    let large = catalog(500);
    assert_eq!(small.len(), 50);
    assert_eq!(large.len(), 500);
    assert_eq!(small[..], large[..50]);
    assert_eq!(product_at(&options(1), 321), large[321]);
}

#[test]
fn every_product_normalizes_and_has_one_to_twelve_variants() {
    let products = catalog(2000);
    let mut variant_counts = [0usize; 13];
    for product in &products {
        let mut again = product.clone();
        again.normalize().unwrap();
        assert_eq!(&again, product, "normalize is not idempotent for {}", product.id);
        assert!((1..=12).contains(&product.variants.len()), "{} has {} variants", product.id, product.variants.len());
        variant_counts[product.variants.len()] += 1;
        assert_eq!(product.currency(), "USD");
        for variant in &product.variants {
            assert_eq!(variant.price.currency, "USD");
            assert!(variant.price.amount > 0);
            assert!(matches!(variant.price.amount % 100, 99 | 95 | 0), "odd price {}", variant.price.amount);
            if let Some(list_price) = &variant.list_price {
                assert!(list_price.amount > variant.price.amount);
            }
            assert_eq!(variant.options.len(), product.options.len());
            assert_eq!(variant.media.len(), 1);
        }
    }
    let few = variant_counts[1..=4].iter().sum::<usize>();
    assert!(few > products.len() / 2, "variant counts: {variant_counts:?}");
    assert!(variant_counts[12] > 0, "variant counts: {variant_counts:?}");
}

#[test]
fn products_look_like_a_real_shop() {
    let products = catalog(2000);
    let on_sale = products.iter().filter(|product| product.list_price_range.is_some()).count();
    assert!((400..=800).contains(&on_sale), "{on_sale} of 2000 products on sale");
    let rated = products.iter().filter(|product| product.rating.is_some()).count();
    assert!((1500..=1700).contains(&rated), "{rated} of 2000 products rated");
    for product in &products {
        let number: u64 = product.id["prod_".len()..].parse().unwrap();
        assert_eq!(product.id.len(), "prod_0000000".len());
        let handle = product.handle.as_deref().unwrap();
        assert!(handle.ends_with(&format!("-{number}")), "{handle}");
        assert!(handle.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-'));
        assert_eq!(product.url.as_deref(), Some(format!("https://demo.ucpd.dev/products/{handle}").as_str()));
        assert!((1..=4).contains(&product.media.len()));
        assert_eq!(product.media[0].url, format!("https://demo.ucpd.dev/images/{}/1.jpg", product.id));
        let taxonomies: Vec<_> = product.categories.iter().map(|category| category.taxonomy.as_deref()).collect();
        assert_eq!(taxonomies, [Some("google_product_category"), Some("merchant")]);
        assert!((3..=6).contains(&product.tags.len()), "{:?}", product.tags);
        for tag in &product.tags {
            assert!(
                tag.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-'),
                "{tag}"
            );
        }
        let sentences = product.description.plain.as_deref().unwrap().matches(". ").count() + 1;
        assert!((2..=4).contains(&sentences), "{:?}", product.description.plain);
        if let Some(rating) = &product.rating {
            assert!((2.5..=5.0).contains(&rating.value));
            assert_eq!((rating.value * 10.0).fract(), 0.0);
        }
        assert!(product.metadata.as_ref().unwrap()["brand"].is_string());
        for variant in &product.variants {
            let sku = variant.sku.as_deref().unwrap();
            assert!(sku.contains(&format!("-{}", &product.id["prod_".len()..])), "{sku}");
            for barcode in &variant.barcodes {
                assert_eq!(barcode.value.len(), 13);
                assert!(valid_check_digit(&barcode.value), "{}", barcode.value);
            }
        }
    }
    assert!(products.iter().any(|product| !product.variants[0].barcodes.is_empty()));
    assert!(products.iter().any(|product| product.variants[0].barcodes.is_empty()));
}

fn valid_check_digit(code: &str) -> bool {
    let sum: u32 = code
        .bytes()
        .enumerate()
        .map(|(position, digit)| u32::from(digit - b'0') * if position % 2 == 0 { 1 } else { 3 })
        .sum();
    sum.is_multiple_of(10)
}

#[test]
fn stock_has_sold_out_variants_products_and_untracked_ones() {
    let products = catalog(2000);
    let variants: Vec<_> = products.iter().flat_map(|product| &product.variants).collect();
    let sold_out = variants.iter().filter(|variant| variant.inventory_quantity == Some(0)).count();
    let share = sold_out * 100 / variants.len();
    assert!((5..=12).contains(&share), "{sold_out} of {} variants sold out", variants.len());
    assert!(variants.iter().any(|variant| variant.inventory_quantity.is_none()));
    assert!(
        variants.iter().all(|variant| variant.inventory_quantity.is_none_or(|quantity| (0..=250).contains(&quantity)))
    );
    let unavailable =
        products.iter().filter(|product| product.variants.iter().all(|variant| !variant.is_available())).count();
    assert!((20..=120).contains(&unavailable), "{unavailable} products entirely out of stock");
    let out = variants.iter().find(|variant| variant.inventory_quantity == Some(0)).unwrap();
    assert_eq!(out.availability.as_ref().unwrap().status.as_deref(), Some("out_of_stock"));
}

#[test]
fn vocabulary_matches_realistic_queries_on_some_products_but_not_all() {
    let products = catalog(2000);
    let titles: Vec<String> = products.iter().map(|product| product.title.to_lowercase()).collect();
    for word in ["running", "wool", "sweater", "coffee maker", "leather", "wallet", "shoes"] {
        let hits = titles.iter().filter(|title| title.contains(word)).count();
        assert!(hits > 0 && hits < titles.len() / 4, "{word:?} is in {hits} of 2000 titles");
    }
    let running_shoes = titles.iter().filter(|title| title.contains("running shoes")).count();
    assert!(running_shoes > 5, "{running_shoes} running shoes");
    let blue = products
        .iter()
        .filter(|product| {
            product.variants.iter().any(|variant| variant.title.split(" / ").any(|label| label == "Blue"))
        })
        .count();
    assert!(blue > 20 && blue < 1000, "{blue} products come in blue");
}

#[test]
fn json_lines_parse_back_with_inventory() {
    let options = options(300);
    let mut out = Vec::new();
    let mut last_progress = 0;
    let written = write_json_lines(&options, &mut out, &mut |count| last_progress = count).unwrap();
    assert_eq!(written, 300);
    assert_eq!(last_progress, 300);
    let text = String::from_utf8(out).unwrap();
    assert!(text.ends_with('\n'));
    let expected = catalog(300);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 300);
    for (line, expected) in lines.iter().zip(&expected) {
        let product: Product = serde_json::from_str(line).unwrap();
        assert_eq!(&product, expected);
    }
    assert!(expected.iter().flat_map(|product| &product.variants).any(|variant| variant.inventory_quantity.is_some()));
}

#[test]
fn write_json_lines_rejects_a_bad_currency() {
    let options = DemoOptions { currency: "usd".to_owned(), ..options(3) };
    let error = write_json_lines(&options, Vec::new(), &mut |_| {}).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn write_json_lines_rejects_a_base_url_that_is_no_web_url() {
    let options = DemoOptions { base_url: "shop.example".to_owned(), ..options(3) };
    let error = write_json_lines(&options, Vec::new(), &mut |_| {}).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    assert!(error.to_string().contains("is not an absolute http(s) URL"), "{error}");
}

#[test]
fn ids_skus_and_handles_are_unique() {
    let products = catalog(3000);
    let mut ids = HashSet::new();
    let mut handles = HashSet::new();
    let mut skus = HashSet::new();
    let mut barcodes = HashSet::new();
    for product in &products {
        assert!(ids.insert(product.id.clone()), "duplicate id {}", product.id);
        assert!(handles.insert(product.handle.clone().unwrap()));
        for variant in &product.variants {
            assert!(ids.insert(variant.id.clone()), "duplicate id {}", variant.id);
            assert!(variant.id.starts_with(&format!("{}-", product.id)));
            assert!(skus.insert(variant.sku.clone().unwrap()), "duplicate sku {:?}", variant.sku);
            for barcode in &variant.barcodes {
                assert!(barcodes.insert(barcode.value.clone()), "duplicate barcode {}", barcode.value);
            }
        }
    }
}

#[test]
fn other_currencies_and_base_urls_carry_through() {
    let kuwait =
        DemoOptions { currency: "KWD".to_owned(), base_url: "https://shop.example/".to_owned(), ..options(20) };
    let dollars = catalog(20);
    for (product, usd) in generate(&kuwait).zip(&dollars) {
        assert_eq!(product.currency(), "KWD");
        assert_eq!(product.price_range.min.amount, usd.price_range.min.amount * 10);
        assert!(product.url.as_deref().unwrap().starts_with("https://shop.example/products/"));
        assert!(product.media[0].url.starts_with("https://shop.example/images/"));
    }
}

#[test]
fn vocabulary_tables_are_consistent() {
    for department in DEPARTMENTS {
        assert!(!department.brands.is_empty() && !department.kinds.is_empty() && !department.closers.is_empty());
        for brand in department.brands {
            assert_eq!(brand.code.len(), 2, "{}", brand.name);
        }
        for kind in department.kinds {
            assert_eq!(kind.code.len(), 3, "{}", kind.noun);
            assert!(kind.price.0 > 0 && kind.price.0 < kind.price.1, "{}", kind.noun);
            assert!(!kind.uses.is_empty() && !kind.features.is_empty(), "{}", kind.noun);
            assert!(kind.google.contains(" > ") && kind.merchant.contains(" > "), "{}", kind.noun);
            assert!(kind.tags.len() >= 2 && !kind.tags.contains(&department.tag), "{}", kind.noun);
            assert!(kind.axes.len() <= 4, "{}", kind.noun);
            assert!(kind.materials.is_empty() || !department.made.is_empty(), "{}", kind.noun);
            if kind.title != TitleStyle::Branded {
                assert!(!kind.styles.is_empty(), "{}", kind.noun);
            }
            for axis in kind.axes {
                assert!(axis.premiums.is_empty() || axis.premiums.len() == axis.values.len(), "{}", axis.name);
                let codes: HashSet<String> = axis
                    .values
                    .iter()
                    .map(|value| {
                        let mut code = String::new();
                        push_code(&mut code, value);
                        code
                    })
                    .collect();
                assert_eq!(codes.len(), axis.values.len(), "SKU codes collide on {} {:?}", axis.name, axis.values);
            }
        }
    }
}

#[test]
fn helpers_format_as_documented() {
    let mut code = String::new();
    for label in ["Blue", "Heather Gray", "M", "6.5", "128 GB", "14K Gold", "Set of 2"] {
        code.push('-');
        push_code(&mut code, label);
    }
    assert_eq!(code, "-BLU-HGR-M-65-128G-14K-S2");
    assert_eq!(slug("Cobble & Co. Men's 3-in-1 Chef's Knife"), "cobble-co-mens-3-in-1-chefs-knife");
    assert_eq!(gtin13(978, 123, 2), "9780000123022");
    assert!(valid_check_digit(&gtin13(42, 9_999_999, 12)));
    assert_eq!(round_price(2_417, Ending::NinetyNine), 2_399);
    assert_eq!(round_price(12_730, Ending::Zero), 12_500);
    assert_eq!(round_price(24_870, Ending::NinetyFive), 24_995);
    assert_eq!(lower_words("Egyptian Cotton"), "Egyptian cotton");
    assert_eq!(lower_words("TPE"), "TPE");
    let mut text = String::new();
    push_list(&mut text, ["Blue", "Black", "Navy"].into_iter());
    assert_eq!(text, "Blue, Black and Navy");
}
