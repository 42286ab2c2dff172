use super::*;

fn environment(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

fn load_toml(text: &str) -> Result<Settings, ConfigError> {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("ucpd.toml");
    std::fs::write(&file, text).unwrap();
    Settings::load(Some(&file), [])
}

#[test]
fn environment_overrides_file_and_types_follow_defaults() {
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("ucpd.toml");
    std::fs::write(&file, "listen = \"127.0.0.1:9000\"\n[catalog]\nmax_page_size = 20\n").unwrap();
    let settings = Settings::load(
        Some(&file),
        environment(&[
            ("UCPD_CATALOG__MAX_PAGE_SIZE", "30"),
            ("UCPD_DEV_INSECURE_PROFILES", "true"),
            ("UCPD_DEMO", "no"),
            ("UCPD_PAYMENTS__SANDBOX", "true"),
            ("UCPD_HTTP__ALLOWED_HOSTS", "shop.example, www.shop.example"),
            ("UCPD_CAPABILITIES__ENABLED", "catalog.search"),
            ("UCPD_PROFILES__CACHE_TTL_SECS", "600"),
            ("UCPD_CATALOG__EXCHANGE_RATES__eur", "0.92"),
            ("UCPD_BUSINESS_NAME", "1999"),
            ("UCPD_DATA_DIR", "2026"),
            ("UCPD_LOG", "debug"),
            ("UCPD_ADMIN__API_KEYS", &format!("{}, {}", "a".repeat(64), "b".repeat(64))),
            ("HOME", "/root"),
        ]),
    )
    .unwrap();
    assert_eq!(settings.listen.port(), 9000);
    assert_eq!(settings.catalog.max_page_size, 30);
    assert!(settings.dev_insecure_profiles);
    assert!(!settings.demo);
    assert_eq!(settings.payments.sandbox, Some(true));
    assert_eq!(settings.http.allowed_hosts, vec!["shop.example", "www.shop.example"]);
    assert_eq!(settings.capabilities.enabled, vec!["catalog.search"]);
    assert_eq!(settings.profiles.cache_ttl_secs, 600);
    assert_eq!((settings.business_name.as_str(), settings.data_dir.as_path()), ("1999", Path::new("2026")));
    assert_eq!(settings.catalog.exchange_rates.get("EUR").map(ToString::to_string).as_deref(), Some("0.92"));
    // A list from the environment is comma-separated (it was refused as "expected a sequence").
    assert_eq!(settings.admin.api_keys, vec!["a".repeat(64), "b".repeat(64)]);
}

#[test]
fn bad_values_are_named() {
    let error = Settings::load(None, environment(&[("UCPD_CATALOG__MAX_PAGE_SIZE", "lots")])).unwrap_err();
    assert!(error.to_string().contains("UCPD_CATALOG__MAX_PAGE_SIZE"), "{error}");
    let error = Settings::load(None, environment(&[("UCPD_HTTP__PROFILE_MAX_AGE_SECS", "5")])).unwrap_err();
    assert!(error.to_string().contains("profile_max_age_secs"), "{error}");
    let error = Settings::load(None, environment(&[("UCPD_DEMO", "maybe")])).unwrap_err();
    assert!(error.to_string().contains("UCPD_DEMO"), "{error}");
    let error = Settings::load(None, environment(&[("UCPD_NO_SUCH_SETTING", "1")])).unwrap_err();
    assert!(error.to_string().contains("no_such_setting"), "{error}");
    let error = Settings::load(None, environment(&[("UCPD_STORE__CATALOG_CACHE_MB", "0")])).unwrap_err();
    assert!(error.to_string().contains("catalog_cache_mb"), "{error}");
    let settings = Settings::load(None, environment(&[("UCPD_STORE__CATALOG_CACHE_MB", "128")])).unwrap();
    assert_eq!(settings.store.catalog_cache_mb, 128);
    let error = Settings::load(None, environment(&[("UCPD_STORE__WAIT_TIMEOUT_MS", "0")])).unwrap_err();
    assert!(error.to_string().contains("wait_timeout_ms"), "{error}");
    assert_eq!(Settings::load(None, environment(&[])).unwrap().store.wait_timeout_ms, 5_000);
}

#[test]
fn the_documented_file_format_loads_into_types() {
    let settings = load_toml(
        r#"
public_url = "https://shop.example/"
[catalog]
currency = "eur"
exchange_rates = { usd = "1.08", JPY = "160.5" }
[checkout]
links = { privacy_policy = "https://shop.example/privacy" }
[[payments.http]]
id = "acme"
name = "com.acme.pay"
url = "https://pay.example/authorize"
currencies = ["usd"]
countries = ["us", "CA"]
[[shipping]]
name = "Home"
countries = ["de"]
options = [{ id = "standard", title = "Standard", amount = 499, min_days = 1, max_days = 3 }]
[[taxes]]
country = "de"
rate = "19"
[[taxes]]
country = "us"
region = "ca"
rate = "7.25"
[[discounts]]
code = "WELCOME10"
title = "10% off"
kind = "percentage"
value = "10"
expires_at = "2030-01-01T00:00:00Z"
[[discounts]]
title = "5 off"
kind = "fixed_amount"
value = "500"
[[discounts]]
title = "Free shipping"
kind = "free_shipping"
"#,
    )
    .unwrap();
    assert_eq!(settings.public_url.as_ref().map(PublicUrl::as_str), Some("https://shop.example"));
    assert_eq!(settings.catalog.currency, "EUR");
    let rates: Vec<String> =
        settings.catalog.exchange_rates.iter().map(|(code, rate)| format!("{code}={rate}")).collect();
    assert_eq!(rates, vec!["JPY=160.5", "USD=1.08"]);
    assert_eq!(settings.payments.http[0].currencies, vec!["USD"]);
    assert_eq!(settings.payments.http[0].countries, vec!["US", "CA"]);
    let rules = settings.pricing_rules();
    assert_eq!(rules.shipping.zones[0].countries, vec!["DE"]);
    assert_eq!(rules.taxes[0].parts_per_million, 190_000);
    assert_eq!((rules.taxes[1].region.as_deref(), rules.taxes[1].parts_per_million), (Some("CA"), 72_500));
    let kinds: Vec<_> = rules.discounts.iter().map(|discount| discount.kind).collect();
    use ucp_domain::checkout::DiscountKind;
    assert_eq!(kinds, vec![DiscountKind::Percentage(1000), DiscountKind::FixedAmount(500), DiscountKind::FreeShipping]);
    assert_eq!(rules.discounts[0].expires_at, Some(1_893_456_000));
}

// New York City's 8.875 %: a tax rate takes four decimals, and charges them.
#[test]
fn a_tax_rate_may_have_four_decimals() {
    let settings = load_toml("[[taxes]]\ncountry = \"US\"\nregion = \"NY\"\nrate = \"8.875\"\n").unwrap();
    let rules = settings.pricing_rules();
    assert_eq!(rules.taxes[0].parts_per_million, 88_750);
    assert_eq!(rules.taxes[0].on(10_000), 888, "887.5 rounds half up");
    assert_eq!(rules.taxes[0].on(1_000), 89);
}

// A discount's value may be a bare number, whole or not, as a tax rate's may.
#[test]
fn a_discount_value_may_be_a_bare_number() {
    let settings = load_toml("[[discounts]]\ntitle = \"Spring\"\nkind = \"percentage\"\nvalue = 12.5\n").unwrap();
    assert_eq!(settings.discounts[0].kind, ucp_domain::checkout::DiscountKind::Percentage(1250));
}

#[test]
fn invalid_typed_values_fail_at_load_naming_the_key() {
    for (text, expected) in [
        ("[[taxes]]\ncountry = \"US\"\nrate = \"7.25555\"\n", "7.25555"),
        ("[[discounts]]\ntitle = \"Fine\"\nkind = \"percentage\"\nvalue = \"8.875\"\n", "at most two decimals"),
        ("[[taxes]]\ncountry = \"USA\"\nrate = \"7\"\n", "USA"),
        ("[catalog]\ncurrency = \"dollars\"\n", "dollars"),
        ("[catalog]\nexchange_rates = { EUR = \"0\" }\n", "exchange_rates"),
        ("[catalog]\nexchange_rates = { EURO = \"0.9\" }\n", "EURO"),
        ("[[discounts]]\ntitle = \"Half\"\nkind = \"percentage\"\nvalue = \"150\"\n", "Half"),
        // A discount's own words (two decimals), not a tax rate's (four).
        ("[[discounts]]\ntitle = \"Most\"\nkind = \"percentage\"\nvalue = \"101\"\n", "0 to 100, at most two decimals"),
        ("[[discounts]]\ntitle = \"Bare\"\nkind = \"fixed_amount\"\nvalue = 10.5\n", "positive amount in minor units"),
        ("[[discounts]]\ntitle = \"Odd\"\nkind = \"bogof\"\n", "bogof"),
        ("[[discounts]]\ntitle = \"None\"\nkind = \"fixed_amount\"\n", "needs a value"),
        ("[[discounts]]\ntitle = \"Later\"\nkind = \"free_shipping\"\nexpires_at = \"soon\"\n", "expires_at"),
        ("[[discounts]]\ntitle = \"X\"\nkind = \"free_shipping\"\ncolour = \"red\"\n", "colour"),
        ("public_url = \"http://shop.example\"\n", "public_url"),
        ("[checkout]\nlinks = { privacy_policy = \"/privacy\" }\n", "privacy_policy"),
        ("[[payments.http]]\nid = \"a\"\nname = \"b\"\nurl = \"ftp://pay.example\"\n", "ftp://pay.example"),
        ("[http]\nunknown = 1\n", "unknown"),
    ] {
        let error = load_toml(text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
        assert!(error.contains("ucpd.toml"), "{text}: names the file: {error}");
    }
}

// Checklist 143, 120: shipping options a buyer can tell apart, with no negative price and
// no delivery window that ends before it starts; refused at start-up, naming the zone.
#[test]
fn shipping_options_are_checked_at_load() {
    let zone = |options: &str| format!("[[shipping]]\nname = \"Home\"\ncountries = [\"de\"]\noptions = [{options}]\n");
    let option = |id: &str, title: &str, rest: &str| format!("{{ id = \"{id}\", title = \"{title}\", {rest} }}");
    let fine = "amount = 499, min_days = 1, max_days = 3";
    let settings = load_toml(&zone(&[option("a", "Standard", fine), option("b", "Express", fine)].join(", "))).unwrap();
    settings.validate().expect("two distinct options");
    for (options, expected) in [
        (vec![option("a", "Standard", fine), option("a", "Express", fine)], "two options have the id"),
        (vec![option("a", "Standard", fine), option("b", "Standard", fine)], "two options have the title"),
        (vec![option("a", "Standard", "amount = -500, min_days = 1, max_days = 3")], "negative"),
        (vec![option("a", "Standard", "amount = 5, per_kg = -1, min_days = 1, max_days = 3")], "negative"),
        (vec![option("a", "Standard", "amount = 5, min_days = 5, max_days = 1")], "min_days after max_days"),
        (vec![option("", "Standard", fine)], "needs an id and a title"),
    ] {
        let error =
            load_toml(&zone(&options.join(", "))).and_then(|settings| settings.validate()).unwrap_err().to_string();
        assert!(error.contains(expected) && error.contains("\"Home\""), "{options:?}: {error}");
    }
}

#[test]
fn a_missing_file_is_an_error() {
    let error = Settings::load(Some(Path::new("/nonexistent/ucpd.toml")), []).unwrap_err();
    assert!(error.to_string().contains("cannot read"), "{error}");
}

#[test]
fn defaults_round_trip_through_the_file_format() {
    let text = toml::to_string(&Settings::default()).unwrap();
    let settings = load_toml(&text).unwrap();
    assert_eq!(settings.discounts, Settings::default().discounts);
    assert_eq!(settings.pricing_rules().taxes.len(), 2);
}

#[test]
fn unknown_capabilities_are_refused() {
    let mut settings = Settings::default();
    assert!(settings.check_capabilities(|name| name != "nope").is_ok());
    settings.capabilities.enabled.push("nope".into());
    let error = settings.check_capabilities(|name| name != "nope").unwrap_err();
    assert!(error.to_string().contains("nope"), "{error}");
}

// overview.md §3: an alias namespace is published on its own authority's host, or platforms
// leave its entries out; a bad alias is named at load, not discovered by a silent platform.
#[test]
fn namespace_aliases_must_be_published_by_their_authority() {
    let alias = |namespace: &str, version: &str, spec: &str, schema: &str| {
        format!(
            "[[capabilities.aliases]]\nnamespace = \"{namespace}\"\nversion = \"{version}\"\nspec_base = \"{spec}\"\nschema_base = \"{schema}\"\n"
        )
    };
    let good =
        load_toml(&alias("br.dev.bcp", "2026-07-14", "https://bcp.dev.br", "https://bcp.dev.br/2026-07-14/schemas"))
            .unwrap();
    assert_eq!(good.capabilities.aliases[0].namespace, "br.dev.bcp");
    for (text, named) in [
        (alias("br.dev.bcp", "2026-07-14", "https://bcp.dev.br", "https://cdn.example/schemas"), "schema_base"),
        (alias("br.dev.bcp", "2026-07-14", "https://www.bcp.dev.br", "https://bcp.dev.br"), "spec_base"),
        (alias("br.dev.bcp", "2026-07-14", "http://bcp.dev.br", "https://bcp.dev.br"), "spec_base"),
        (alias("BR.dev", "2026-07-14", "https://dev.br", "https://dev.br"), "reverse-domain"),
        (alias("bcp", "2026-07-14", "https://bcp", "https://bcp"), "reverse-domain"),
        (alias("b_r.dev", "2026-07-14", "https://dev.b_r", "https://dev.b_r"), "reverse-domain"),
        (alias("dev.ucp", "2026-07-14", "https://ucp.dev", "https://ucp.dev"), "governing body"),
        (alias("dev.ucp.bcp", "2026-07-14", "https://ucp.dev", "https://ucp.dev"), "governing body"),
        (alias("br.dev.bcp", "2026-07-14", "https://bcp.dev.br:8443", "https://bcp.dev.br"), "spec_base"),
        (alias("br.dev.bcp", "2026-07-14", "https://bcp.dev.br", "https://bcp.dev.br./schemas"), "schema_base"),
        (alias("br.dev.bcp", "July", "https://bcp.dev.br", "https://bcp.dev.br"), "YYYY-MM-DD"),
    ] {
        let error = load_toml(&text).unwrap_err().to_string();
        assert!(error.contains(named), "{text}: {error}");
    }
    let bcp = alias("br.dev.bcp", "2026-07-14", "https://bcp.dev.br", "https://bcp.dev.br");
    let error = load_toml(&format!("{bcp}{bcp}")).unwrap_err().to_string();
    assert!(error.contains("aliased twice"), "{error}");
}

// checkout.md §4: disclosures load from TOML into the rules (ids and categories as arrays,
// never split on commas: `Food, Beverages & Tobacco` is one category; URLs sent as they
// parse), and one that cannot be shown as declared is refused at start, named by its index.
#[test]
fn disclosures_are_checked_at_load() {
    let valid = "[[disclosures]]\ncode = \"allergens\"\ncontent = \"Contains nuts\"\ncontent_type = \"markdown\"\n\
                 url = \" https://shop.example/allergens guide\"\ncategories = [\"Food, Beverages & Tobacco\"]\n";
    let settings = load_toml(valid).unwrap();
    assert_eq!(settings.disclosures[0].content_type, super::DisclosureFormat::Markdown);
    let rules = settings.pricing_rules();
    let mut messages = Vec::new();
    rules.disclosures.warn(
        "cookie",
        ["food, beverages & tobacco > snacks"],
        || "$.line_items[0]".into(),
        &mut messages,
    );
    let display = messages[0].disclosure.as_deref().unwrap();
    assert!(display.markdown);
    assert_eq!(display.url.as_deref(), Some("https://shop.example/allergens%20guide"));
    let disclosure = |rest: &str| format!("[[disclosures]]\n{rest}\n");
    for (text, expected) in [
        (disclosure("code = \"Prop 65\"\ncontent = \"x\"\nproducts = [\"mug\"]"), "disclosures[0]: code"),
        (disclosure("code = \"prop65\"\ncontent = \" \"\nproducts = [\"mug\"]"), "content"),
        (disclosure("code = \"prop65\"\ncontent = \"x\""), "name the products"),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\nproducts = [\"\"]"), "empty product id"),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\nproducts = [\"mug\"]\nurl = \"http://p65.example\""), "https"),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\nproducts = [\"mug\"]\nimage_url = \"/p65.svg\""), "image_url"),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\nproducts = [\"mug\"]\ncontent_type = \"html\""), "html"),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\ncategories = [\" > \"]"), "empty product id or category"),
        (disclosure("code = \"prop65\"\ncontent = \"a\\u0000b\"\nproducts = [\"mug\"]"), "control character"),
        (
            disclosure(&format!("code = \"prop65\"\ncontent = \"{}\"\nproducts = [\"mug\"]", "x".repeat(2049))),
            "2048 bytes",
        ),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\nproducts = \"mug\""), "products"),
        (disclosure("code = \"prop65\"\ncontent = \"x\"\nproduct = [\"mug\"]"), "product"),
    ] {
        let error = load_toml(&text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text}: {error}");
    }
    let too_many = disclosure("code = \"a\"\ncontent = \"x\"\nproducts = [\"mug\"]").repeat(257);
    assert!(load_toml(&too_many).unwrap_err().to_string().contains("at most 256"));
}
