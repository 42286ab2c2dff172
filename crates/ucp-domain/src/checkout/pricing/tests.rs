//! Unit tests of the pricing engine: a seeded property test of the totals and discount
//! invariants (checkout.md §6, §9), hand-computed pricing cases (§8, §9), the status rules
//! (§2) and line numbering (cart.md §3).

use super::*;
use crate::checkout::{
    Buyer, Context, FulfillmentChoice, Line, LineRequest, PendingAuthentication, ShippingRules, ShippingZone, TaxRate,
};

#[test]
fn allocation_is_proportional_and_exact() {
    assert_eq!(allocate(100, &[100, 100, 100]), vec![34, 33, 33]);
    assert_eq!(allocate(10, &[1, 1]), vec![1, 1]);
    assert_eq!(allocate(0, &[5, 5]), vec![0, 0]);
    let shares = allocate(999, &[333, 500, 1]);
    assert_eq!(shares.iter().sum::<i64>(), 834);
}

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

const NOW: i64 = 1_700_000_000;

/// Everything `price` reads, owned, so a test can tweak one thing and price again.
#[derive(Clone)]
struct Fixture {
    session: Session,
    items: HashMap<String, CatalogItem>,
    rules: PricingRules,
    uses: HashMap<String, u64>,
    fulfillment_enabled: bool,
    discounts_enabled: bool,
    payment_available: bool,
    now: i64,
}

impl Fixture {
    /// An empty session of `kind` with every extension and a payment handler available.
    fn new(kind: SessionKind) -> Fixture {
        Fixture {
            session: Session::new(
                "chk_1".into(),
                kind,
                "USD".into(),
                "https://platform.example/profile".into(),
                NOW,
                6 * 3600,
            ),
            items: HashMap::new(),
            rules: PricingRules::default(),
            uses: HashMap::new(),
            fulfillment_enabled: true,
            discounts_enabled: true,
            payment_available: true,
            now: NOW,
        }
    }

    /// A checkout that is `ready_for_complete`: one line (2 × 2,500, 500 g each), a buyer
    /// email, a US-CA destination and the `std` option (500) of a zone covering the US.
    fn ready() -> Fixture {
        let mut fixture = Fixture::new(SessionKind::Checkout);
        fixture.line("v1", CatalogItem { weight_grams: Some(500), ..item("p1", 2_500) }, 2);
        fixture.session.buyer = Some(Buyer { email: Some("ada@example.com".into()), ..Buyer::default() });
        fixture.rules.require_email = true;
        fixture.rules.shipping = ShippingRules {
            zones: vec![ShippingZone {
                name: "US".into(),
                countries: vec!["US".into()],
                regions: Vec::new(),
                options: vec![rate("std", 500, 0, None), rate("express", 1_500, 0, None)],
            }],
        };
        fixture.ship_to(address("US", Some("CA")), Some("std"));
        fixture
    }

    /// Adds a line `li_N` for `item_id` (registering the catalog item) and returns its index.
    fn line(&mut self, item_id: &str, item: CatalogItem, quantity: i64) -> usize {
        self.items.insert(item_id.into(), item);
        self.line_without_item(item_id, quantity)
    }

    fn line_without_item(&mut self, item_id: &str, quantity: i64) -> usize {
        self.session.next_line += 1;
        self.session.lines.push(Line {
            id: format!("li_{}", self.session.next_line),
            item_id: item_id.into(),
            quantity,
        });
        self.session.lines.len() - 1
    }

    fn ship_to(&mut self, address: Address, option: Option<&str>) {
        self.session.fulfillment = Some(FulfillmentChoice {
            destinations: vec![address],
            selected_destination_id: None,
            selected_option_id: option.map(String::from),
        });
    }

    fn codes(&mut self, codes: &[&str]) {
        self.session.discount_codes = codes.iter().map(|code| code.to_string()).collect();
    }

    fn run(&self) -> Priced {
        price(&PricingInput {
            session: &self.session,
            items: &self.items,
            rules: &self.rules,
            discount_uses: &self.uses,
            fulfillment_enabled: self.fulfillment_enabled,
            discounts_enabled: self.discounts_enabled,
            payment_available: self.payment_available,
            now: self.now,
        })
    }
}

fn item(product_id: &str, unit_price: i64) -> CatalogItem {
    CatalogItem {
        product_id: product_id.into(),
        title: format!("Product {product_id}"),
        unit_price,
        currency: "USD".into(),
        image_url: None,
        available_quantity: None,
        categories: Vec::new(),
        weight_grams: None,
    }
}

fn rate(id: &str, amount: i64, per_kg: i64, free_above: Option<i64>) -> ShippingRate {
    ShippingRate {
        id: id.into(),
        title: format!("Shipping {id}"),
        description: None,
        carrier: None,
        amount,
        per_kg,
        free_above,
        min_days: 2,
        max_days: 5,
    }
}

fn address(country: &str, region: Option<&str>) -> Address {
    Address {
        street_address: Some("1 Main St".into()),
        address_locality: Some("Springfield".into()),
        address_region: region.map(String::from),
        address_country: Some(country.into()),
        postal_code: Some("94016".into()),
        ..Address::default()
    }
}

fn rule(code: Option<&str>, kind: DiscountKind) -> DiscountRule {
    DiscountRule {
        code: code.map(String::from),
        title: format!("Rule {}", code.unwrap_or("auto")),
        kind,
        min_subtotal: None,
        product_ids: Vec::new(),
        categories: Vec::new(),
        expires_at: None,
        usage_limit: None,
        combinable: true,
    }
}

fn code(code: &str, kind: DiscountKind) -> DiscountRule {
    rule(Some(code), kind)
}

fn amount_of(totals: &[Total], kind: &str) -> Option<i64> {
    let mut found = totals.iter().filter(|total| total.kind == kind);
    let amount = found.next().map(|total| total.amount);
    assert!(found.next().is_none(), "more than one {kind} in {totals:?}");
    amount
}

fn kinds(totals: &[Total]) -> Vec<&'static str> {
    totals.iter().map(|total| total.kind).collect()
}

fn with_code<'a>(priced: &'a Priced, code: &str) -> Vec<&'a Message> {
    priced.messages.iter().filter(|message| message.code == code).collect()
}

fn only<'a>(priced: &'a Priced, code: &str) -> &'a Message {
    let found = with_code(priced, code);
    assert_eq!(found.len(), 1, "expected exactly one {code} message in {:#?}", priced.messages);
    found[0]
}

fn errors(priced: &Priced) -> Vec<&Message> {
    priced.messages.iter().filter(|message| message.kind == MessageKind::Error).collect()
}

fn path(message: &Message) -> &str {
    message.path.as_deref().unwrap_or("<none>")
}

// ---------------------------------------------------------------------------------------
// Property test
// ---------------------------------------------------------------------------------------

/// splitmix64: a tiny deterministic generator so the property test is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    fn range(&mut self, low: i64, high: i64) -> i64 {
        let span = (high - low + 1) as u64;
        low + (self.next() % span) as i64
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, options: &'a [T]) -> &'a T {
        &options[(self.next() % options.len() as u64) as usize]
    }
}

const CODE_POOL: [&str; 6] = ["SAVE10", "TENOFF", "FREESHIP", "VIP", "HALF", "Mixed"];

fn random_fixture(rng: &mut Rng) -> Fixture {
    let kind = if rng.chance(15) { SessionKind::Cart } else { SessionKind::Checkout };
    let mut fixture = Fixture::new(kind);

    // Catalog: eight variants of four products.
    let category_pool = ["Apparel > Shirts", "Apparel", "Home", "home > Kitchen", "Toys > Plush", "Garden"];
    for index in 1..=8 {
        let mut categories = Vec::new();
        for _ in 0..rng.range(0, 2) {
            categories.push(rng.pick(&category_pool).to_string());
        }
        let catalog_item = CatalogItem {
            categories,
            weight_grams: if rng.chance(70) { Some(rng.range(0, 2_500)) } else { None },
            available_quantity: if rng.chance(75) { None } else { Some(rng.range(-1, 6)) },
            ..item(&format!("p{}", index % 4 + 1), rng.range(0, 50_000))
        };
        fixture.items.insert(format!("v{index}"), catalog_item);
    }

    // Lines: 1–6, quantities 1–5, now and then an item missing from the catalog.
    for _ in 0..rng.range(1, 6) {
        let item_id = if rng.chance(5) { "ghost".to_string() } else { format!("v{}", rng.range(1, 8)) };
        let quantity = rng.range(1, 5);
        fixture.line_without_item(&item_id, quantity);
    }

    // Discount rules.
    for index in 0..rng.range(0, 5) {
        let kind = match rng.range(0, 2) {
            0 => DiscountKind::Percentage(rng.range(1, 10_000)),
            1 => DiscountKind::FixedAmount(rng.range(1, 60_000)),
            _ => DiscountKind::FreeShipping,
        };
        let code = if rng.chance(20) { None } else { Some(*rng.pick(&CODE_POOL)) };
        let mut discount = rule(code, kind);
        discount.title = format!("Rule {index}");
        if rng.chance(25) {
            discount.min_subtotal = Some(rng.range(0, 100_000));
        }
        if rng.chance(25) {
            for _ in 0..rng.range(1, 2) {
                discount.product_ids.push(format!("p{}", rng.range(1, 5)));
            }
        }
        if rng.chance(20) {
            discount.categories.push(rng.pick(&["apparel", "Home", "toys > plush", "Garden", "app"]).to_string());
        }
        if rng.chance(20) {
            discount.expires_at = Some(NOW + rng.range(-100, 100));
        }
        if rng.chance(20) {
            discount.usage_limit = Some(rng.range(0, 3) as u64);
        }
        discount.combinable = rng.chance(50);
        fixture.rules.discounts.push(discount);
    }
    for code in CODE_POOL {
        if rng.chance(50) {
            fixture.uses.insert(code.to_uppercase(), rng.range(0, 3) as u64);
        }
    }

    // Submitted codes: known, unknown, duplicated, lower-case, padded.
    for _ in 0..rng.range(0, 4) {
        let mut submitted = if rng.chance(15) { "BOGUS".to_string() } else { rng.pick(&CODE_POOL).to_string() };
        if rng.chance(30) {
            submitted = submitted.to_lowercase();
        }
        if rng.chance(10) {
            submitted = format!(" {submitted} ");
        }
        fixture.session.discount_codes.push(submitted);
    }

    // Shipping zones with flat / per_kg / free_above rates.
    let countries = ["US", "CA", "DE", "FR"];
    let zone_count = if rng.chance(10) { 0 } else { rng.range(1, 3) };
    for zone_index in 0..zone_count {
        let mut zone_countries = vec![rng.pick(&countries).to_string()];
        if rng.chance(40) {
            zone_countries.push(rng.pick(&countries).to_string());
        }
        let regions = if rng.chance(30) { vec![rng.pick(&["CA", "NY", "QC", "BY"]).to_string()] } else { Vec::new() };
        let mut options = Vec::new();
        let option_count = if rng.chance(10) { 0 } else { rng.range(1, 3) };
        for option_index in 0..option_count {
            let per_kg = if rng.chance(50) { rng.range(0, 500) } else { 0 };
            let free_above = if rng.chance(30) { Some(rng.range(0, 100_000)) } else { None };
            options.push(rate(&format!("opt_{option_index}"), rng.range(0, 2_000), per_kg, free_above));
        }
        fixture.rules.shipping.zones.push(ShippingZone {
            name: format!("zone {zone_index}"),
            countries: zone_countries,
            regions,
            options,
        });
    }

    // Destinations (in or out of the zones) and the selected option.
    if rng.chance(90) {
        let mut destinations = Vec::new();
        let destination_count = if rng.chance(70) { 1 } else { rng.range(0, 2) };
        for destination_index in 0..destination_count {
            let country = *rng.pick(&["US", "CA", "DE", "FR", "JP", "us", "ca"]);
            let region = *rng.pick(&[None, Some("CA"), Some("ca"), Some("NY"), Some("QC"), Some("BY")]);
            let mut destination = address(country, region);
            if rng.chance(10) {
                destination.street_address = None;
            }
            if rng.chance(50) {
                destination.id = Some(format!("addr_{destination_index}"));
            }
            destinations.push(destination);
        }
        let selected_destination_id = if !destinations.is_empty() && rng.chance(50) {
            let index = rng.range(0, destinations.len() as i64 - 1) as usize;
            Some(destinations[index].id.clone().unwrap_or_else(|| format!("dest_{}", index + 1)))
        } else if rng.chance(10) {
            Some("nope".to_string())
        } else {
            None
        };
        let selected_option_id = if rng.chance(75) {
            Some(format!("opt_{}", rng.range(0, 2)))
        } else if rng.chance(30) {
            Some("nope".to_string())
        } else {
            None
        };
        fixture.session.fulfillment =
            Some(FulfillmentChoice { destinations, selected_destination_id, selected_option_id });
    }

    // Tax rates, with and without region, shipping taxable or not.
    for _ in 0..rng.range(0, 3) {
        fixture.rules.taxes.push(TaxRate {
            country: rng.pick(&["US", "CA", "DE", "JP"]).to_string(),
            region: if rng.chance(40) { Some(rng.pick(&["CA", "ny", "QC"]).to_string()) } else { None },
            basis_points: rng.range(0, 2_500),
            shipping_taxable: rng.chance(50),
        });
    }
    if rng.chance(50) {
        fixture.session.context = Some(Context {
            address_country: Some(rng.pick(&["US", "de", "FR"]).to_string()),
            address_region: if rng.chance(50) { Some("ca".into()) } else { None },
            postal_code: None,
        });
    }

    // Buyer, escalation and lifecycle state.
    if rng.chance(70) {
        fixture.session.buyer = Some(Buyer {
            email: if rng.chance(80) { Some(rng.pick(&["ada@example.com", "not-an-email"]).to_string()) } else { None },
            phone_number: if rng.chance(30) { Some(rng.pick(&["+14155550123", "12345"]).to_string()) } else { None },
            ..Buyer::default()
        });
    }
    if rng.chance(10) {
        fixture.session.pending_authentication = Some(PendingAuthentication {
            handler_id: "card".into(),
            instrument_type: "card".into(),
            reference: "3ds_ref".into(),
            approved: rng.chance(50),
        });
    }
    if rng.chance(10) {
        fixture.session.status = *rng.pick(&[
            Status::Completed,
            Status::Canceled,
            Status::CompleteInProgress,
            Status::ReadyForComplete,
            Status::RequiresEscalation,
        ]);
    }
    fixture.rules.require_email = rng.chance(70);
    fixture.fulfillment_enabled = rng.chance(85);
    fixture.discounts_enabled = rng.chance(85);
    fixture.payment_available = rng.chance(90);
    fixture
}

/// The contract of checkout.md §2, §6 and §9 on one priced session.
fn check_invariants(fixture: &Fixture, priced: &Priced) {
    let session = &fixture.session;
    let totals = &priced.totals;

    // Checklist 120: exactly one subtotal and one total; the rest sums to the total.
    assert_eq!(totals.iter().filter(|total| total.kind == "subtotal").count(), 1, "{totals:?}");
    assert_eq!(totals.iter().filter(|total| total.kind == "total").count(), 1, "{totals:?}");
    let total = amount_of(totals, "total").unwrap();
    let sum: i64 = totals.iter().filter(|total| total.kind != "total").map(|total| total.amount).sum();
    assert_eq!(sum, total, "{totals:?}");
    assert!(total >= 0, "{totals:?}");
    // Checklist 120: discount types negative, subtotal/fulfillment/tax non-negative.
    for entry in totals {
        match entry.kind {
            "items_discount" | "discount" => assert!(entry.amount < 0, "{entry:?}"),
            "subtotal" | "fulfillment" | "tax" | "total" => assert!(entry.amount >= 0, "{entry:?}"),
            other => panic!("unexpected total type {other}"),
        }
    }

    // Lines: one priced line per stored line; subtotal + items_discount == total.
    assert_eq!(priced.lines.len(), session.lines.len());
    let mut line_discount_sum = 0;
    let mut subtotal_sum = 0;
    for (line, stored) in priced.lines.iter().zip(&session.lines) {
        assert_eq!(line.id, stored.id);
        assert_eq!(line.quantity, stored.quantity);
        let line_subtotal = amount_of(&line.totals, "subtotal").expect("line subtotal");
        let line_total = amount_of(&line.totals, "total").expect("line total");
        let line_discount = amount_of(&line.totals, "items_discount").unwrap_or(0);
        assert_eq!(line_subtotal, line.unit_price * line.quantity, "{line:?}");
        assert_eq!(line_subtotal + line_discount, line_total, "{line:?}");
        assert!(line_discount <= 0 && -line_discount <= line_subtotal, "discount exceeds line: {line:?}");
        assert!(line_total >= 0, "{line:?}");
        if amount_of(&line.totals, "items_discount").is_some() {
            assert!(line_discount < 0, "zero items_discount entry on {line:?}");
        }
        assert_eq!(line.totals.len(), 2 + usize::from(line_discount != 0), "{line:?}");
        line_discount_sum += line_discount;
        subtotal_sum += line_subtotal;
    }
    assert_eq!(amount_of(totals, "subtotal"), Some(subtotal_sum));
    // Checklist 144: top-level items_discount equals the sum over lines.
    assert_eq!(amount_of(totals, "items_discount").unwrap_or(0), line_discount_sum, "{priced:#?}");

    // Applied discounts: amounts >= 0, allocations sum to the amount and point at lines.
    let mut allocated_per_line = vec![0i64; priced.lines.len()];
    let mut item_level = 0;
    let mut order_level = 0;
    for (position, applied) in priced.applied_discounts.iter().enumerate() {
        assert!(applied.amount >= 0, "{applied:?}");
        assert!(applied.priority >= 1, "{applied:?}");
        assert_eq!(applied.automatic, applied.code.is_none(), "{applied:?}");
        assert!(
            priced.applied_discounts[..position].iter().all(|other| other.priority != applied.priority),
            "duplicate priority {applied:?}"
        );
        if applied.allocations.is_empty() {
            order_level += applied.amount;
        } else {
            assert_eq!(
                applied.allocations.iter().map(|(_, amount)| amount).sum::<i64>(),
                applied.amount,
                "{applied:?}"
            );
            item_level += applied.amount;
            for (allocation_path, amount) in &applied.allocations {
                assert!(*amount > 0, "{applied:?}");
                let index: usize = allocation_path
                    .strip_prefix("$.line_items[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .and_then(|index| index.parse().ok())
                    .unwrap_or_else(|| panic!("bad allocation path {allocation_path}"));
                assert!(index < priced.lines.len(), "{allocation_path}");
                allocated_per_line[index] += amount;
            }
        }
        if let Some(code) = &applied.code {
            assert!(
                session.discount_codes.iter().any(|submitted| submitted.trim().eq_ignore_ascii_case(code)),
                "applied {code} was not submitted"
            );
        }
    }
    for (index, line) in priced.lines.iter().enumerate() {
        assert_eq!(-amount_of(&line.totals, "items_discount").unwrap_or(0), allocated_per_line[index], "line {index}");
    }
    assert_eq!(item_level, -amount_of(totals, "items_discount").unwrap_or(0));
    assert_eq!(order_level, -amount_of(totals, "discount").unwrap_or(0));
    // Codes counted at completion are exactly the applied codes.
    let applied_codes: Vec<String> = priced
        .applied_discounts
        .iter()
        .filter_map(|applied| applied.code.as_ref().map(|code| code.to_uppercase()))
        .collect();
    assert_eq!(priced.used_codes, applied_codes);

    // Shipping: the fulfillment total is the selected option's price; free shipping never
    // discounts more than it costs.
    let selected_option =
        priced.fulfillment.as_ref().and_then(|fulfillment| fulfillment.group.as_ref()).and_then(|group| {
            group.selected_option_id.as_ref().and_then(|id| group.options.iter().find(|option| &option.id == id))
        });
    assert_eq!(amount_of(totals, "fulfillment"), selected_option.map(|option| option.amount));
    assert!(-amount_of(totals, "discount").unwrap_or(0) <= amount_of(totals, "fulfillment").unwrap_or(0));
    if session.kind == SessionKind::Cart || !fixture.fulfillment_enabled {
        assert!(priced.fulfillment.is_none());
    }

    // Messages: every path is a JSONPath; rejected codes point at a submitted code, once each.
    let mut rejected = vec![0; session.discount_codes.len()];
    for message in &priced.messages {
        if let Some(message_path) = &message.path {
            assert!(message_path.starts_with('$'), "{message:?}");
        }
        if message.kind == MessageKind::Error {
            assert!(message.severity.is_some(), "{message:?}");
        }
        if message.code.starts_with("discount_code_") {
            assert_eq!(message.kind, MessageKind::Warning, "{message:?}");
            let index: usize = path(message)
                .strip_prefix("$.discounts.codes[")
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|index| index.parse().ok())
                .unwrap_or_else(|| panic!("bad rejection path {message:?}"));
            assert!(index < session.discount_codes.len(), "{message:?}");
            rejected[index] += 1;
        }
    }
    assert!(rejected.iter().all(|count| *count <= 1), "{:#?}", priced.messages);
    if !fixture.discounts_enabled {
        assert!(priced.applied_discounts.is_empty() && priced.discount_codes.is_empty());
        assert!(rejected.iter().all(|count| *count == 0));
    } else {
        assert_eq!(priced.discount_codes, session.discount_codes);
    }

    // Status (checklist 121, 122): derived from the error messages unless stored as final.
    let errors = errors(priced);
    let expected = if session.status.is_terminal() || session.status == Status::CompleteInProgress {
        session.status
    } else if session.kind == SessionKind::Cart {
        Status::Incomplete
    } else if errors
        .iter()
        .any(|message| matches!(message.severity, Some(Severity::RequiresBuyerInput | Severity::RequiresBuyerReview)))
    {
        Status::RequiresEscalation
    } else if !errors.is_empty() || session.lines.is_empty() {
        Status::Incomplete
    } else {
        Status::ReadyForComplete
    };
    assert_eq!(priced.status, expected, "{:#?}", priced.messages);
    if session.kind == SessionKind::Cart {
        // cart.md: carts have no checkout requirements (contact, payment, shipping).
        for message in &priced.messages {
            assert!(
                !["field_required", "invalid_email", "invalid_phone", "payment_unavailable", "requires_3ds"]
                    .contains(&message.code.as_str())
                    && message.code != "fulfillment_required",
                "{message:?}"
            );
        }
    }
}

// Checklist 120, 141, 144: totals, discount and status invariants over random sessions.
#[test]
fn random_sessions_keep_the_totals_invariants() {
    let mut applied_any = 0;
    let mut rejected_any = 0;
    let mut shipped = 0;
    let mut taxed = 0;
    let mut ready = 0;
    for seed in 0..2_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0x5EED);
        let fixture = random_fixture(&mut rng);
        let priced = fixture.run();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check_invariants(&fixture, &priced)));
        if let Err(panic) = result {
            eprintln!("seed {seed} violates an invariant");
            std::panic::resume_unwind(panic);
        }

        // Checklist 141: determinism, also with freshly built (differently hashed) maps.
        assert_eq!(fixture.run(), priced, "seed {seed}");
        let mut shuffled = fixture.clone();
        let mut entries: Vec<(String, CatalogItem)> =
            fixture.items.iter().map(|(key, value)| (key.clone(), value.clone())).collect();
        entries.reverse();
        shuffled.items = entries.into_iter().collect();
        shuffled.uses = fixture.uses.iter().map(|(key, value)| (key.clone(), *value)).collect();
        assert_eq!(shuffled.run(), priced, "seed {seed}");

        applied_any += usize::from(!priced.applied_discounts.is_empty());
        rejected_any += usize::from(priced.messages.iter().any(|message| message.code.starts_with("discount_code_")));
        shipped += usize::from(amount_of(&priced.totals, "fulfillment").is_some());
        taxed += usize::from(amount_of(&priced.totals, "tax").is_some());
        ready += usize::from(priced.status == Status::ReadyForComplete);
    }
    // The generator must actually reach the interesting cases.
    for (what, count) in
        [("applied", applied_any), ("rejected", rejected_any), ("shipped", shipped), ("taxed", taxed), ("ready", ready)]
    {
        assert!(count >= 20, "only {count} sessions with {what}");
    }
}

// ---------------------------------------------------------------------------------------
// Discounts, shipping and tax, hand-computed (checkout.md §8, §9)
// ---------------------------------------------------------------------------------------

// Checklist 144: 10 % of 8,665 = 866 (rounded down), split 200 / 666 by largest remainder.
#[test]
fn percentage_code_is_allocated_across_lines() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_999), 1);
    fixture.line("v2", item("p2", 3_333), 2);
    fixture.rules.discounts.push(code("SAVE10", DiscountKind::Percentage(1_000)));
    fixture.codes(&["SAVE10"]);
    let priced = fixture.run();

    assert_eq!(kinds(&priced.totals), ["subtotal", "items_discount", "total"]);
    assert_eq!(amount_of(&priced.totals, "subtotal"), Some(8_665));
    assert_eq!(amount_of(&priced.totals, "items_discount"), Some(-866));
    assert_eq!(amount_of(&priced.totals, "total"), Some(7_799));
    let line_totals: Vec<Vec<i64>> =
        priced.lines.iter().map(|line| line.totals.iter().map(|total| total.amount).collect()).collect();
    assert_eq!(line_totals, [vec![1_999, -200, 1_799], vec![6_666, -666, 6_000]]);
    assert_eq!(
        priced.applied_discounts,
        [AppliedDiscount {
            code: Some("SAVE10".into()),
            title: "Rule SAVE10".into(),
            amount: 866,
            automatic: false,
            method: "across",
            priority: 1,
            allocations: vec![("$.line_items[0]".into(), 200), ("$.line_items[1]".into(), 666)],
        }]
    );
    assert_eq!(priced.used_codes, ["SAVE10"]);
    assert!(priced.messages.is_empty(), "{:?}", priced.messages);
    assert_eq!(priced.status, Status::Incomplete);
}

#[test]
fn fixed_code_is_capped_at_the_eligible_subtotal() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_200), 1);
    fixture.rules.discounts.push(code("BIG", DiscountKind::FixedAmount(5_000)));
    fixture.codes(&["BIG"]);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts[0].amount, 1_200);
    assert_eq!(amount_of(&priced.totals, "items_discount"), Some(-1_200));
    assert_eq!(amount_of(&priced.totals, "total"), Some(0));
    assert_eq!(amount_of(&priced.lines[0].totals, "total"), Some(0));

    // Scoped to p1: only line 0 is discounted, and only up to its own subtotal.
    fixture.line("v2", item("p2", 3_000), 1);
    fixture.rules.discounts[0].product_ids = vec!["p1".into()];
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts[0].amount, 1_200);
    assert_eq!(priced.applied_discounts[0].allocations, [("$.line_items[0]".to_string(), 1_200)]);
    assert_eq!(amount_of(&priced.lines[1].totals, "items_discount"), None);
    assert_eq!(amount_of(&priced.totals, "total"), Some(3_000));
}

#[test]
fn category_scope_matches_case_insensitive_prefixes() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", CatalogItem { categories: vec!["Apparel > Shirts".into()], ..item("p1", 1_000) }, 1);
    fixture.line("v2", CatalogItem { categories: vec!["Appliances".into()], ..item("p2", 1_000) }, 1);
    fixture
        .rules
        .discounts
        .push(DiscountRule { categories: vec!["apparel".into()], ..code("WEAR", DiscountKind::Percentage(5_000)) });
    fixture.codes(&["WEAR"]);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts[0].allocations, [("$.line_items[0]".to_string(), 500)]);

    // A code that applies to no line is rejected.
    fixture.rules.discounts[0].categories = vec!["garden".into()];
    let priced = fixture.run();
    assert!(priced.applied_discounts.is_empty());
    assert_eq!(path(only(&priced, "discount_code_user_ineligible")), "$.discounts.codes[0]");
}

#[test]
fn free_shipping_discounts_exactly_the_shipping_cost() {
    let mut fixture = Fixture::ready();
    fixture.rules.discounts.push(code("FREESHIP", DiscountKind::FreeShipping));
    fixture.codes(&["freeship"]);
    let priced = fixture.run();
    assert_eq!(kinds(&priced.totals), ["subtotal", "discount", "fulfillment", "total"]);
    assert_eq!(amount_of(&priced.totals, "discount"), Some(-500));
    assert_eq!(amount_of(&priced.totals, "fulfillment"), Some(500));
    assert_eq!(amount_of(&priced.totals, "total"), Some(5_000));
    let applied = &priced.applied_discounts[0];
    assert_eq!((applied.amount, applied.allocations.is_empty()), (500, true));
    assert_eq!(priced.used_codes, ["FREESHIP"]);
    assert_eq!(priced.status, Status::ReadyForComplete);

    // Express costs 1,500: the discount follows the selected option.
    fixture.session.fulfillment.as_mut().unwrap().selected_option_id = Some("express".into());
    let priced = fixture.run();
    assert_eq!(amount_of(&priced.totals, "discount"), Some(-1_500));
    assert_eq!(amount_of(&priced.totals, "total"), Some(5_000));
}

#[test]
fn free_above_uses_the_discounted_item_subtotal() {
    let mut fixture = Fixture::ready();
    fixture.rules.shipping.zones[0].options = vec![rate("std", 700, 0, Some(5_000))];
    // 2 × 2,500 = 5,000 reaches the threshold exactly.
    let priced = fixture.run();
    assert_eq!(amount_of(&priced.totals, "fulfillment"), Some(0));
    assert_eq!(amount_of(&priced.totals, "total"), Some(5_000));

    // 10 % off brings the items to 4,500: shipping is charged again.
    fixture.rules.discounts.push(code("SAVE10", DiscountKind::Percentage(1_000)));
    fixture.codes(&["SAVE10"]);
    let priced = fixture.run();
    assert_eq!(amount_of(&priced.totals, "items_discount"), Some(-500));
    assert_eq!(amount_of(&priced.totals, "fulfillment"), Some(700));
    assert_eq!(amount_of(&priced.totals, "total"), Some(5_200));
    let group = priced.fulfillment.unwrap().group.unwrap();
    assert_eq!(group.options[0].amount, 700);
}

#[test]
fn per_kg_counts_started_kilograms() {
    let mut fixture = Fixture::ready();
    fixture.rules.shipping.zones[0].options = vec![rate("std", 300, 150, None)];
    // 2 × 500 g = 1,000 g: one kilogram.
    assert_eq!(amount_of(&fixture.run().totals, "fulfillment"), Some(450));
    // + 1 g → 1,001 g: two started kilograms.
    fixture.line("v2", CatalogItem { weight_grams: Some(1), ..item("p2", 100) }, 1);
    assert_eq!(amount_of(&fixture.run().totals, "fulfillment"), Some(600));
    // Items without a weight add nothing; 3 × 333 g more = 2,000 g: still two.
    fixture.line("v3", item("p3", 100), 4);
    fixture.line("v4", CatalogItem { weight_grams: Some(333), ..item("p4", 100) }, 3);
    assert_eq!(amount_of(&fixture.run().totals, "fulfillment"), Some(600));
    fixture.items.get_mut("v4").unwrap().weight_grams = Some(334);
    assert_eq!(amount_of(&fixture.run().totals, "fulfillment"), Some(750));
}

#[test]
fn tax_uses_the_region_rate_and_taxes_shipping_when_configured() {
    let mut fixture = Fixture::ready();
    fixture.line("v2", item("p2", 5_000), 1); // items 10,000, shipping 500
    fixture.rules.taxes = vec![
        TaxRate { country: "US".into(), region: None, basis_points: 500, shipping_taxable: false },
        TaxRate { country: "US".into(), region: Some("CA".into()), basis_points: 725, shipping_taxable: true },
    ];
    // US-CA (address says "ca"): 7.25 % of 10,500 = 761.25 → 761.
    fixture.ship_to(address("us", Some("ca")), Some("std"));
    let priced = fixture.run();
    assert_eq!(kinds(&priced.totals), ["subtotal", "fulfillment", "tax", "total"]);
    assert_eq!(amount_of(&priced.totals, "tax"), Some(761));
    assert_eq!(amount_of(&priced.totals, "total"), Some(11_261));

    // US-NY falls back to the country rate, shipping untaxed: 5 % of 10,000.
    fixture.ship_to(address("US", Some("NY")), Some("std"));
    assert_eq!(amount_of(&fixture.run().totals, "tax"), Some(500));

    // Free shipping removes shipping from the taxable base: 7.25 % of 10,000 = 725.
    fixture.ship_to(address("US", Some("CA")), Some("std"));
    fixture.rules.discounts.push(code("FREESHIP", DiscountKind::FreeShipping));
    fixture.codes(&["FREESHIP"]);
    let priced = fixture.run();
    assert_eq!(amount_of(&priced.totals, "tax"), Some(725));
    assert_eq!(amount_of(&priced.totals, "total"), Some(10_725));

    // No rate for the country: no tax entry at all.
    fixture.rules.taxes.retain(|rate| rate.region.is_some());
    fixture.ship_to(address("US", None), Some("std"));
    assert_eq!(amount_of(&fixture.run().totals, "tax"), None);
}

#[test]
fn tax_rounds_half_up_and_follows_the_context_without_an_address() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 10), 1);
    fixture.rules.taxes =
        vec![TaxRate { country: "DE".into(), region: None, basis_points: 500, shipping_taxable: true }];
    fixture.session.context = Some(Context { address_country: Some("de".into()), ..Context::default() });
    // 5 % of 10 = 0.5 → 1.
    assert_eq!(amount_of(&fixture.run().totals, "tax"), Some(1));
    fixture.items.get_mut("v1").unwrap().unit_price = 9; // 0.45 → 0
    assert_eq!(amount_of(&fixture.run().totals, "tax"), Some(0));
}

// Checklist 144: matching is case-insensitive; the echo keeps the submitted spelling.
#[test]
fn codes_match_case_insensitively() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_000), 1);
    fixture.rules.discounts.push(code("Save10", DiscountKind::Percentage(1_000)));
    fixture.codes(&[" sAVE10 "]);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts.len(), 1);
    assert_eq!(priced.applied_discounts[0].code.as_deref(), Some("Save10"));
    assert_eq!(priced.discount_codes, [" sAVE10 "]);
    assert_eq!(priced.used_codes, ["SAVE10"]);
    assert!(priced.messages.is_empty());
}

#[test]
fn duplicate_code_is_already_applied() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_000), 1);
    fixture.rules.discounts.push(code("SAVE10", DiscountKind::Percentage(1_000)));
    fixture.codes(&["SAVE10", "save10"]);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts.len(), 1);
    assert_eq!(amount_of(&priced.totals, "items_discount"), Some(-100));
    let warning = only(&priced, "discount_code_already_applied");
    assert_eq!((warning.kind, path(warning)), (MessageKind::Warning, "$.discounts.codes[1]"));
    assert_eq!(priced.used_codes, ["SAVE10"]);
}

#[test]
fn expired_code_is_rejected_from_its_expiry_second() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_000), 1);
    fixture
        .rules
        .discounts
        .push(DiscountRule { expires_at: Some(NOW), ..code("OLD", DiscountKind::Percentage(1_000)) });
    fixture.codes(&["BOGUS", "old"]);
    let priced = fixture.run();
    assert!(priced.applied_discounts.is_empty());
    assert_eq!(path(only(&priced, "discount_code_expired")), "$.discounts.codes[1]");
    assert_eq!(amount_of(&priced.totals, "total"), Some(1_000));

    fixture.now = NOW - 1;
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts.len(), 1);
    assert!(with_code(&priced, "discount_code_expired").is_empty());
}

#[test]
fn usage_limit_reached_rejects_the_code() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_000), 1);
    fixture
        .rules
        .discounts
        .push(DiscountRule { usage_limit: Some(5), ..code("Limited", DiscountKind::FixedAmount(100)) });
    fixture.uses.insert("LIMITED".into(), 5);
    fixture.codes(&["limited"]);
    let priced = fixture.run();
    assert!(priced.applied_discounts.is_empty());
    let warning = only(&priced, "discount_code_invalid");
    assert_eq!(path(warning), "$.discounts.codes[0]");
    assert!(warning.content.contains("usage limit"), "{warning:?}");
    assert!(priced.used_codes.is_empty());

    fixture.uses.insert("LIMITED".into(), 4);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts[0].amount, 100);
    assert_eq!(priced.used_codes, ["LIMITED"]);
}

#[test]
fn non_combinable_codes_are_rejected_after_the_first() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 10_000), 1);
    fixture.rules.discounts = vec![
        DiscountRule { combinable: false, ..code("SOLO", DiscountKind::Percentage(1_000)) },
        code("STACK", DiscountKind::FixedAmount(500)),
        code("STACK2", DiscountKind::Percentage(1_000)),
    ];
    // A non-combinable code first blocks the others.
    fixture.codes(&["SOLO", "STACK"]);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts.len(), 1);
    assert_eq!(path(only(&priced, "discount_code_combination_disallowed")), "$.discounts.codes[1]");

    // A non-combinable code after a combinable one is itself rejected.
    fixture.codes(&["STACK", "SOLO"]);
    let priced = fixture.run();
    assert_eq!(priced.applied_discounts[0].code.as_deref(), Some("STACK"));
    assert_eq!(path(only(&priced, "discount_code_combination_disallowed")), "$.discounts.codes[1]");

    // Combinable codes stack in order: 500 off, then 10 % of the remaining 9,500.
    fixture.codes(&["STACK", "STACK2"]);
    let priced = fixture.run();
    let amounts: Vec<(i64, u32)> =
        priced.applied_discounts.iter().map(|applied| (applied.amount, applied.priority)).collect();
    assert_eq!(amounts, [(500, 1), (950, 2)]);
    assert_eq!(amount_of(&priced.totals, "items_discount"), Some(-1_450));
    assert!(priced.messages.is_empty());
}

#[test]
fn unknown_and_unmet_codes_are_warnings_at_their_index() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 1_000), 1);
    fixture
        .rules
        .discounts
        .push(DiscountRule { min_subtotal: Some(1_001), ..code("MIN", DiscountKind::FixedAmount(1)) });
    fixture.codes(&["NOPE", "MIN"]);
    let priced = fixture.run();
    let invalid = only(&priced, "discount_code_invalid");
    assert_eq!((invalid.kind, invalid.severity, path(invalid)), (MessageKind::Warning, None, "$.discounts.codes[0]"));
    assert_eq!(path(only(&priced, "discount_code_minimum_not_met")), "$.discounts.codes[1]");
    assert!(priced.applied_discounts.is_empty());
    // Rejected codes are warnings: the cart status is unaffected.
    assert_eq!(priced.status, Status::Incomplete);
}

#[test]
fn automatic_promotions_apply_first_without_a_code() {
    let mut fixture = Fixture::new(SessionKind::Cart);
    fixture.line("v1", item("p1", 2_000), 1);
    fixture.rules.discounts = vec![
        DiscountRule { min_subtotal: Some(2_000), ..rule(None, DiscountKind::FixedAmount(200)) },
        DiscountRule { expires_at: Some(NOW), ..rule(None, DiscountKind::FixedAmount(1)) },
        code("SAVE10", DiscountKind::Percentage(1_000)),
    ];
    fixture.codes(&["SAVE10"]);
    let priced = fixture.run();
    let summary: Vec<(Option<&str>, bool, i64, u32)> = priced
        .applied_discounts
        .iter()
        .map(|applied| (applied.code.as_deref(), applied.automatic, applied.amount, applied.priority))
        .collect();
    assert_eq!(summary, [(None, true, 200, 1), (Some("SAVE10"), false, 180, 2)]);
    assert_eq!(priced.used_codes, ["SAVE10"]);

    // Discounts not negotiated: nothing applied, nothing echoed.
    fixture.discounts_enabled = false;
    let priced = fixture.run();
    assert!(priced.applied_discounts.is_empty() && priced.discount_codes.is_empty());
    assert_eq!(amount_of(&priced.totals, "total"), Some(2_000));
}

// ---------------------------------------------------------------------------------------
// Status rules (checkout.md §2; checklist 121, 122, 124, 130)
// ---------------------------------------------------------------------------------------

// Checklist 121, 130: with everything present the checkout may be completed.
#[test]
fn complete_checkout_is_ready() {
    let priced = Fixture::ready().run();
    assert_eq!(priced.status, Status::ReadyForComplete);
    assert!(priced.messages.is_empty(), "{:?}", priced.messages);
    assert_eq!(kinds(&priced.totals), ["subtotal", "fulfillment", "total"]);
    let fulfillment = priced.fulfillment.unwrap();
    assert_eq!(fulfillment.selected_destination_id.as_deref(), Some("dest_1"));
    assert_eq!(fulfillment.line_item_ids, ["li_1"]);
    assert_eq!(fulfillment.group.unwrap().selected_option_id.as_deref(), Some("std"));
}

// Checklist 124, 130: a missing email keeps the checkout incomplete.
#[test]
fn missing_email_is_required() {
    let mut fixture = Fixture::ready();
    fixture.session.buyer = Some(Buyer { first_name: Some("Ada".into()), ..Buyer::default() });
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "field_required");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.buyer.email"));

    // No buyer object at all: the path names the root, where `buyer` is missing.
    fixture.session.buyer = None;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "field_required")), "$");

    // Not required by the merchant: ready.
    fixture.rules.require_email = false;
    assert_eq!(fixture.run().status, Status::ReadyForComplete);

    // An invalid email is always reported.
    fixture.session.buyer = Some(Buyer { email: Some("ada@example".into()), ..Buyer::default() });
    let priced = fixture.run();
    assert_eq!((priced.status, path(only(&priced, "invalid_email"))), (Status::Incomplete, "$.buyer.email"));
}

#[test]
fn invalid_phone_keeps_the_checkout_incomplete() {
    let mut fixture = Fixture::ready();
    fixture.session.buyer.as_mut().unwrap().phone_number = Some("415 555 0123".into());
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "invalid_phone");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.buyer.phone_number"));

    fixture.session.buyer.as_mut().unwrap().phone_number = Some("+14155550123".into());
    assert_eq!(fixture.run().status, Status::ReadyForComplete);
}

#[test]
fn missing_destination_is_required() {
    let mut fixture = Fixture::ready();
    fixture.session.fulfillment = None;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "field_required");
    assert_eq!(path(message), "$.fulfillment.methods[0].destinations");
    assert_eq!(amount_of(&priced.totals, "fulfillment"), None);

    // Two destinations and none selected: the selection is required.
    fixture.session.fulfillment = Some(FulfillmentChoice {
        destinations: vec![address("US", None), address("US", Some("NY"))],
        selected_destination_id: None,
        selected_option_id: Some("std".into()),
    });
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "field_required")), "$.fulfillment.methods[0].selected_destination_id");
    fixture.session.fulfillment.as_mut().unwrap().selected_destination_id = Some("dest_2".into());
    assert_eq!(fixture.run().status, Status::ReadyForComplete);

    // An incomplete address names the missing field.
    fixture.ship_to(Address { postal_code: Some("  ".into()), ..address("US", None) }, Some("std"));
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "field_required")), "$.fulfillment.methods[0].destinations[0].postal_code");
}

// Checklist 124, 128: an undeliverable address is recoverable and points at the destination.
#[test]
fn undeliverable_country_is_reported_at_the_destination() {
    let mut fixture = Fixture::ready();
    fixture.ship_to(address("JP", None), Some("std"));
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "address_undeliverable");
    assert_eq!(
        (message.kind, message.severity, path(message)),
        (MessageKind::Error, Some(Severity::Recoverable), "$.fulfillment.methods[0].destinations[0]")
    );
    assert!(priced.fulfillment.unwrap().group.is_none());
    assert_eq!(amount_of(&priced.totals, "fulfillment"), None);

    // A zone limited to regions excludes the others of its country.
    fixture.rules.shipping.zones[0].regions = vec!["NY".into()];
    fixture.ship_to(address("us", Some("ca")), Some("std"));
    assert_eq!(with_code(&fixture.run(), "address_undeliverable").len(), 1);
    fixture.ship_to(address("us", Some("ny")), Some("std"));
    assert_eq!(fixture.run().status, Status::ReadyForComplete);
}

#[test]
fn shipping_option_must_be_selected() {
    let mut fixture = Fixture::ready();
    fixture.session.fulfillment.as_mut().unwrap().selected_option_id = None;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "field_required")), "$.fulfillment.methods[0].groups[0].selected_option_id");
    let group = priced.fulfillment.unwrap().group.unwrap();
    assert_eq!(group.options.iter().map(|option| option.amount).collect::<Vec<_>>(), [500, 1_500]);
    assert_eq!(amount_of(&priced.totals, "fulfillment"), None);

    // An option that is not offered is invalid input at the same path.
    fixture.session.fulfillment.as_mut().unwrap().selected_option_id = Some("overnight".into());
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "invalid_input")), "$.fulfillment.methods[0].groups[0].selected_option_id");
    assert_eq!(priced.status, Status::Incomplete);
}

// Checklist 122, 135: an open 3-D Secure challenge needs the buyer.
#[test]
fn pending_authentication_requires_escalation() {
    let mut fixture = Fixture::ready();
    fixture.session.pending_authentication = Some(unapproved_challenge());
    let priced = fixture.run();
    assert_eq!(priced.status, Status::RequiresEscalation);
    let message = only(&priced, "requires_3ds");
    assert_eq!((message.kind, message.severity), (MessageKind::Error, Some(Severity::RequiresBuyerInput)));

    // Escalation wins over recoverable problems.
    fixture.session.fulfillment = None;
    assert_eq!(fixture.run().status, Status::RequiresEscalation);

    // Once the buyer passed the challenge the checkout is ready again.
    fixture = Fixture::ready();
    fixture.session.pending_authentication = Some(PendingAuthentication { approved: true, ..unapproved_challenge() });
    let priced = fixture.run();
    assert_eq!(priced.status, Status::ReadyForComplete);
    assert!(with_code(&priced, "requires_3ds").is_empty());
}

fn unapproved_challenge() -> PendingAuthentication {
    PendingAuthentication {
        handler_id: "card".into(),
        instrument_type: "card".into(),
        reference: "pi_3ds".into(),
        approved: false,
    }
}

// Checklist 122: without the fulfillment extension, shipping is collected on our page.
#[test]
fn fulfillment_not_negotiated_requires_escalation() {
    let mut fixture = Fixture::ready();
    fixture.fulfillment_enabled = false;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::RequiresEscalation);
    let message = only(&priced, "fulfillment_required");
    assert_eq!(message.severity, Some(Severity::RequiresBuyerInput));
    assert!(priced.fulfillment.is_none());
    assert_eq!(kinds(&priced.totals), ["subtotal", "total"]);

    // No payment handler: also escalated.
    fixture.fulfillment_enabled = true;
    fixture.payment_available = false;
    let priced = fixture.run();
    assert_eq!(priced.status, Status::RequiresEscalation);
    assert_eq!(only(&priced, "payment_unavailable").severity, Some(Severity::RequiresBuyerInput));
}

// Checklist 110, 128: stock problems are recoverable and point at the line or its quantity.
#[test]
fn stock_problems_point_at_the_line() {
    let mut fixture = Fixture::ready();
    fixture.line("v2", CatalogItem { available_quantity: Some(0), ..item("p2", 100) }, 1);
    fixture.line("v3", CatalogItem { available_quantity: Some(2), ..item("p3", 100) }, 3);
    fixture.line("v4", CatalogItem { available_quantity: Some(3), ..item("p4", 100) }, 3);
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let found: Vec<(Option<Severity>, &str)> =
        with_code(&priced, "out_of_stock").into_iter().map(|message| (message.severity, path(message))).collect();
    assert_eq!(
        found,
        [(Some(Severity::Recoverable), "$.line_items[1]"), (Some(Severity::Recoverable), "$.line_items[2].quantity")]
    );

    // Oversold stock (negative availability) is out of stock too, not "only -1 left".
    fixture.items.get_mut("v3").unwrap().available_quantity = Some(-1);
    let priced = fixture.run();
    let paths: Vec<&str> = with_code(&priced, "out_of_stock").into_iter().map(path).collect();
    assert_eq!(paths, ["$.line_items[1]", "$.line_items[2]"]);

    // An item missing from the catalog is unavailable and priced at zero.
    let mut fixture = Fixture::ready();
    fixture.line_without_item("gone", 2);
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    let message = only(&priced, "item_unavailable");
    assert_eq!((message.severity, path(message)), (Some(Severity::Recoverable), "$.line_items[1]"));
    assert_eq!(amount_of(&priced.lines[1].totals, "total"), Some(0));
    assert_eq!(amount_of(&priced.totals, "subtotal"), Some(5_000));
}

#[test]
fn empty_checkout_is_incomplete() {
    let mut fixture = Fixture::ready();
    fixture.session.lines.clear();
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "missing")), "$.line_items");
    assert!(priced.fulfillment.is_none());
    assert_eq!(kinds(&priced.totals), ["subtotal", "total"]);
}

// Checklist 132: terminal stored statuses are authoritative.
#[test]
fn terminal_statuses_are_kept() {
    for status in [Status::Completed, Status::Canceled, Status::CompleteInProgress] {
        let mut fixture = Fixture::ready();
        fixture.session.status = status;
        assert_eq!(fixture.run().status, status);
        // Even when the session would otherwise be incomplete or escalated.
        fixture.session.fulfillment = None;
        fixture.payment_available = false;
        assert_eq!(fixture.run().status, status);
    }
    // A stale stored non-final status is recomputed.
    let mut fixture = Fixture::ready();
    fixture.session.status = Status::RequiresEscalation;
    assert_eq!(fixture.run().status, Status::ReadyForComplete);
}

// cart.md §3: a cart has no checkout requirements and no fulfillment.
#[test]
fn carts_have_no_checkout_requirements() {
    let mut fixture = Fixture::ready();
    fixture.session.kind = SessionKind::Cart;
    fixture.session.buyer = None;
    fixture.session.fulfillment = None;
    fixture.payment_available = false;
    fixture.fulfillment_enabled = false;
    fixture.session.pending_authentication = Some(unapproved_challenge());
    let priced = fixture.run();
    assert_eq!(priced.status, Status::Incomplete);
    assert!(priced.messages.is_empty(), "{:?}", priced.messages);
    assert!(priced.fulfillment.is_none());
    assert_eq!(kinds(&priced.totals), ["subtotal", "total"]);

    // Stock problems are still reported on carts (checklist 110).
    fixture.items.get_mut("v1").unwrap().available_quantity = Some(1);
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "out_of_stock")), "$.line_items[0].quantity");

    // A canceled cart stays canceled.
    fixture.session.status = Status::Canceled;
    assert_eq!(fixture.run().status, Status::Canceled);
}

#[test]
fn sticky_messages_are_appended() {
    let mut fixture = Fixture::ready();
    let declined = Message::error("payment_failed", Severity::Recoverable, "Declined.", None);
    fixture.session.sticky_messages = vec![declined.clone()];
    let priced = fixture.run();
    assert_eq!(priced.messages.last(), Some(&declined));
}

// ---------------------------------------------------------------------------------------
// Line numbering (cart.md §3; checklist 111, 129)
// ---------------------------------------------------------------------------------------

fn request(id: Option<&str>, item_id: &str, quantity: i64) -> LineRequest {
    LineRequest { id: id.map(String::from), item_id: item_id.into(), quantity }
}

fn line_ids(session: &Session) -> Vec<&str> {
    session.lines.iter().map(|line| line.id.as_str()).collect()
}

#[test]
fn replace_lines_keeps_named_ids_and_never_reuses_numbers() {
    let mut session = Fixture::new(SessionKind::Checkout).session;
    session.replace_lines(vec![request(None, "v1", 1), request(None, "v2", 2)]);
    assert_eq!(line_ids(&session), ["li_1", "li_2"]);
    assert_eq!(session.next_line, 2);

    // Keep li_2 (with a new quantity), drop li_1, add one line.
    session.replace_lines(vec![request(Some("li_2"), "v2", 5), request(None, "v3", 1)]);
    assert_eq!(line_ids(&session), ["li_2", "li_3"]);
    assert_eq!(session.lines[0], Line { id: "li_2".into(), item_id: "v2".into(), quantity: 5 });

    // A removed id (li_1) or an id we never issued is not resurrected: the line is new.
    session.replace_lines(vec![
        request(Some("li_1"), "v1", 1),
        request(Some("li_3"), "v3", 2),
        request(Some("li_99"), "v4", 1),
    ]);
    assert_eq!(line_ids(&session), ["li_4", "li_3", "li_5"]);

    // Naming the same existing id twice keeps it once; the second line gets a fresh id.
    session.replace_lines(vec![request(Some("li_3"), "v3", 1), request(Some("li_3"), "v5", 1)]);
    assert_eq!(line_ids(&session), ["li_3", "li_6"]);

    // Clearing and re-adding continues the numbering.
    session.replace_lines(Vec::new());
    assert!(session.lines.is_empty());
    session.replace_lines(vec![request(None, "v1", 1)]);
    assert_eq!(line_ids(&session), ["li_7"]);
    assert_eq!(session.next_line, 7);
}

// Checklist 128: lines of the same variant share its stock; the line that overdraws it is named.
#[test]
fn stock_is_shared_by_lines_of_the_same_variant() {
    let mut fixture = Fixture::ready();
    fixture.items.get_mut("v1").unwrap().available_quantity = Some(3);
    let mut second = fixture.session.lines[0].clone();
    second.id = "li_2".into();
    fixture.session.lines.push(second.clone());
    let priced = fixture.run();
    // 2 + 2 wanted, 3 left: the second line may have 1.
    assert_eq!(priced.status, Status::Incomplete);
    assert_eq!(path(only(&priced, "out_of_stock")), "$.line_items[1].quantity");

    // A third line gets nothing: the message names the whole line.
    second.id = "li_3".into();
    fixture.session.lines.push(second);
    fixture.items.get_mut("v1").unwrap().available_quantity = Some(4);
    let priced = fixture.run();
    assert_eq!(path(only(&priced, "out_of_stock")), "$.line_items[2]");
}
