//! Unit tests of the pricing engine: a seeded property test of the totals and discount
//! invariants (checkout.md §6, §9), hand-computed pricing cases (§8, §9), the status rules
//! (§2) and line numbering (cart.md §3).

mod amounts;
mod invariants;
mod lines;
mod property;
mod status;

use super::discounts::allocate;
use super::*;
pub(super) use crate::checkout::{Address, PricingRules, Session, Status};
use crate::checkout::{
    Buyer, Context, DiscountKind, DiscountRule, FulfillmentChoice, Line, LineRequest, MessageKind,
    PendingAuthentication, Severity, ShippingRate, ShippingRules, ShippingZone, TaxRate,
};
pub(super) use std::collections::HashMap;

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
        let mut session =
            Session::new("chk_1".into(), kind, "USD".into(), "https://platform.example/profile".into(), NOW, 6 * 3600);
        // Priced as the platform's write: what the answer rejects, it sees (`lapsed_codes`).
        session.rejections_seen = None;
        Fixture {
            session,
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
            ..Default::default()
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
