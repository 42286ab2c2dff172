//! Discounts, shipping and tax, hand-computed (checkout.md §8, §9).

use super::*;

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
        TaxRate { country: "US".into(), region: None, parts_per_million: 50_000, shipping_taxable: false },
        TaxRate { country: "US".into(), region: Some("CA".into()), parts_per_million: 72_500, shipping_taxable: true },
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
        vec![TaxRate { country: "DE".into(), region: None, parts_per_million: 50_000, shipping_taxable: true }];
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
