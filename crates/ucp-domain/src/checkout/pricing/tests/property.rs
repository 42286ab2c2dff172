//! A seeded property test: random sessions priced, checked against the invariants, and priced
//! again to show determinism.

use super::invariants::check_invariants;
use super::*;

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
            Some(FulfillmentChoice { destinations, selected_destination_id, selected_option_id, ..Default::default() });
    }

    // Tax rates, with and without region, shipping taxable or not.
    for _ in 0..rng.range(0, 3) {
        fixture.rules.taxes.push(TaxRate {
            country: rng.pick(&["US", "CA", "DE", "JP"]).to_string(),
            region: if rng.chance(40) { Some(rng.pick(&["CA", "ny", "QC"]).to_string()) } else { None },
            // Some in whole basis points, some finer (8.875 %), with no draw of its own.
            parts_per_million: {
                let points = rng.range(0, 2_500);
                points * 100 + points % 3 * 25
            },
            shipping_taxable: rng.chance(50),
        });
    }
    if rng.chance(50) {
        fixture.session.context = Some(Context {
            address_country: Some(rng.pick(&["US", "de", "FR"]).to_string()),
            address_region: if rng.chance(50) { Some("ca".into()) } else { None },
            postal_code: None,
            eligibility: if rng.chance(30) { Some(vec!["com.example.loyalty_gold".into()]) } else { None },
            currency: if rng.chance(30) { Some(rng.pick(&["USD", "EUR"]).to_string()) } else { None },
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
            ..Default::default()
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
