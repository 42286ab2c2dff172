//! The pricing engine: session + catalog + rules → priced lines, totals, messages, status.
//! Deterministic (same inputs, same outputs) and integer-only. Invariants it guarantees:
//! exactly one `subtotal` and one `total`; every other entry sums to `total`; discounts are
//! negative and never exceed what they discount; `items_discount` equals the sum over lines.

use std::collections::HashMap;

use super::rules::{DiscountKind, DiscountRule, PricingRules, ShippingRate};
use super::{Address, Message, MessageKind, Session, SessionKind, Severity, Status, is_valid_email, is_valid_phone};

/// What pricing needs to know about one catalog item (variant).
#[derive(Debug, Clone)]
pub struct CatalogItem {
    pub product_id: String,
    pub title: String,
    pub unit_price: i64,
    pub currency: String,
    pub image_url: Option<String>,
    /// Units that can be sold now; `None` when stock is not tracked.
    pub available_quantity: Option<i64>,
    pub categories: Vec<String>,
    pub weight_grams: Option<i64>,
}

pub struct PricingInput<'a> {
    pub session: &'a Session,
    /// Catalog items by item id; a line whose item is missing is unavailable.
    pub items: &'a HashMap<String, CatalogItem>,
    pub rules: &'a PricingRules,
    /// Orders that already used each discount code (upper-case).
    pub discount_uses: &'a HashMap<String, u64>,
    pub fulfillment_enabled: bool,
    pub discounts_enabled: bool,
    /// Whether at least one payment handler is available for this session.
    pub payment_available: bool,
    pub now: i64,
}

/// Deserialize: `interned`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Total {
    pub kind: &'static str,
    pub amount: i64,
    pub display_text: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedLine {
    pub id: String,
    pub item_id: String,
    pub title: String,
    pub unit_price: i64,
    pub image_url: Option<String>,
    pub quantity: i64,
    pub totals: Vec<Total>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedOption {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub carrier: Option<String>,
    pub amount: i64,
    pub min_days: u32,
    pub max_days: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedGroup {
    pub id: String,
    pub line_item_ids: Vec<String>,
    pub options: Vec<PricedOption>,
    pub selected_option_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedDestination {
    pub id: String,
    pub address: Address,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PricedFulfillment {
    pub method_id: String,
    pub line_item_ids: Vec<String>,
    pub destinations: Vec<PricedDestination>,
    pub selected_destination_id: Option<String>,
    pub group: Option<PricedGroup>,
}

/// Deserialize: `interned`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AppliedDiscount {
    pub code: Option<String>,
    pub title: String,
    pub amount: i64,
    pub automatic: bool,
    pub method: &'static str,
    pub priority: u32,
    /// (JSONPath, amount) pairs summing to `amount`.
    pub allocations: Vec<(String, i64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Priced {
    pub lines: Vec<PricedLine>,
    pub totals: Vec<Total>,
    pub messages: Vec<Message>,
    pub fulfillment: Option<PricedFulfillment>,
    /// The codes as submitted (for echo) and what was applied.
    pub discount_codes: Vec<String>,
    pub applied_discounts: Vec<AppliedDiscount>,
    pub status: Status,
    /// Codes (upper-case) of applied code discounts, to count their use at completion.
    pub used_codes: Vec<String>,
}

const METHOD_ID: &str = "fm_1";
const GROUP_ID: &str = "fg_1";

pub fn price(input: &PricingInput<'_>) -> Priced {
    let session = input.session;
    let mut messages: Vec<Message> = Vec::new();

    // Lines: price each, check stock.
    let mut lines = Vec::with_capacity(session.lines.len());
    let mut base_amounts = Vec::with_capacity(session.lines.len());
    let mut claimed_units: HashMap<&str, i64> = HashMap::new();
    for (index, line) in session.lines.iter().enumerate() {
        let path = format!("$.line_items[{index}]");
        let Some(item) = input.items.get(&line.item_id) else {
            messages.push(Message::error(
                "item_unavailable",
                Severity::Recoverable,
                format!("Item {} is no longer available; remove it to continue.", line.item_id),
                Some(path.clone()),
            ));
            lines.push(PricedLine {
                id: line.id.clone(),
                item_id: line.item_id.clone(),
                title: format!("Unavailable item {}", line.item_id),
                unit_price: 0,
                image_url: None,
                quantity: line.quantity,
                totals: Vec::new(),
            });
            base_amounts.push(0);
            continue;
        };
        // Stock is shared by every line of the same variant: earlier lines claim it first.
        let claimed = claimed_units.entry(line.item_id.as_str()).or_insert(0);
        let earlier = *claimed;
        *claimed = claimed.saturating_add(line.quantity);
        match item.available_quantity {
            Some(available) if available <= 0 => messages.push(Message::error(
                "out_of_stock",
                Severity::Recoverable,
                format!("{} is out of stock.", item.title),
                Some(path.clone()),
            )),
            Some(available) if available <= earlier => messages.push(Message::error(
                "out_of_stock",
                Severity::Recoverable,
                format!("All {available} of {} left are already in earlier lines.", item.title),
                Some(path.clone()),
            )),
            Some(available) if available - earlier < line.quantity => {
                let left = available - earlier;
                let content = if earlier == 0 {
                    format!("Only {left} of {} left; lower the quantity to {left} or less.", item.title)
                } else {
                    format!(
                        "Only {left} more of {} left after earlier lines; lower the quantity to {left} or less.",
                        item.title
                    )
                };
                messages.push(Message::error(
                    "out_of_stock",
                    Severity::Recoverable,
                    content,
                    Some(format!("{path}.quantity")),
                ));
            }
            _ => {}
        }
        base_amounts.push(item.unit_price.saturating_mul(line.quantity));
        lines.push(PricedLine {
            id: line.id.clone(),
            item_id: line.item_id.clone(),
            title: item.title.clone(),
            unit_price: item.unit_price,
            image_url: item.image_url.clone(),
            quantity: line.quantity,
            totals: Vec::new(),
        });
    }
    let subtotal: i64 = base_amounts.iter().sum();

    // Discounts on items.
    let mut line_discounts = vec![0i64; lines.len()];
    let mut applied = Vec::new();
    let mut used_codes = Vec::new();
    let mut free_shipping: Option<(Option<String>, String, u32)> = None;
    let discount_codes = if input.discounts_enabled { session.discount_codes.clone() } else { Vec::new() };
    if input.discounts_enabled {
        let accepted = select_discounts(input, subtotal, &base_amounts, &mut messages);
        for (priority, rule) in accepted.iter().enumerate() {
            let priority = priority as u32 + 1;
            match rule.kind {
                DiscountKind::FreeShipping => {
                    free_shipping = Some((rule.code.clone(), rule.title.clone(), priority));
                    continue;
                }
                DiscountKind::Percentage(_) | DiscountKind::FixedAmount(_) => {}
            }
            let eligible: Vec<usize> = (0..lines.len()).filter(|index| rule_applies_to(rule, input, *index)).collect();
            let remaining: Vec<i64> =
                eligible.iter().map(|index| base_amounts[*index] - line_discounts[*index]).collect();
            let eligible_total: i64 = remaining.iter().sum();
            let amount = match rule.kind {
                DiscountKind::Percentage(basis_points) => eligible_total * basis_points.clamp(0, 10_000) / 10_000,
                DiscountKind::FixedAmount(value) => value.clamp(0, eligible_total),
                DiscountKind::FreeShipping => 0,
            };
            if amount <= 0 {
                continue;
            }
            let shares = allocate(amount, &remaining);
            let mut allocations = Vec::new();
            for (share, index) in shares.into_iter().zip(&eligible) {
                if share > 0 {
                    line_discounts[*index] += share;
                    allocations.push((format!("$.line_items[{index}]"), share));
                }
            }
            if let Some(code) = &rule.code {
                used_codes.push(code.to_uppercase());
            }
            applied.push(AppliedDiscount {
                code: rule.code.clone(),
                title: rule.title.clone(),
                amount,
                automatic: rule.code.is_none(),
                method: "across",
                priority,
                allocations,
            });
        }
    }
    let items_discount: i64 = line_discounts.iter().sum();
    for (index, line) in lines.iter_mut().enumerate() {
        let base = base_amounts[index];
        line.totals.push(Total { kind: "subtotal", amount: base, display_text: None });
        if line_discounts[index] > 0 {
            line.totals.push(Total { kind: "items_discount", amount: -line_discounts[index], display_text: None });
        }
        line.totals.push(Total { kind: "total", amount: base - line_discounts[index], display_text: None });
    }
    let discounted_items = subtotal - items_discount;

    // Fulfillment.
    let mut shipping_cost = None;
    let mut tax_destination: Option<(String, Option<String>)> = session.context.as_ref().and_then(|context| {
        context.address_country.clone().map(|country| (country.to_uppercase(), context.address_region.clone()))
    });
    let weight_kg_started = {
        let grams: i64 = session
            .lines
            .iter()
            .filter_map(|line| {
                input.items.get(&line.item_id).map(|item| item.weight_grams.unwrap_or(0) * line.quantity)
            })
            .sum();
        (grams + 999) / 1000
    };
    let fulfillment = if session.kind == SessionKind::Checkout && input.fulfillment_enabled && !lines.is_empty() {
        let fulfillment = price_fulfillment(input, discounted_items, weight_kg_started, &mut messages);
        if let Some(address) = fulfillment
            .selected_destination_id
            .as_ref()
            .and_then(|id| fulfillment.destinations.iter().find(|destination| &destination.id == id))
            .map(|destination| &destination.address)
            && let Some(country) = &address.address_country
        {
            tax_destination = Some((country.to_uppercase(), address.address_region.clone()));
        }
        if let Some(group) = &fulfillment.group
            && let Some(option) =
                group.selected_option_id.as_ref().and_then(|id| group.options.iter().find(|option| &option.id == id))
        {
            shipping_cost = Some(option.amount);
        }
        Some(fulfillment)
    } else {
        if session.kind == SessionKind::Checkout && !input.fulfillment_enabled && !lines.is_empty() {
            messages.push(Message::error(
                "fulfillment_required",
                Severity::RequiresBuyerInput,
                "Shipping details are collected on the merchant's checkout page.",
                None,
            ));
        }
        None
    };

    // Order-level discount: free shipping.
    let mut order_discount = 0;
    if let (Some((code, title, priority)), Some(cost)) = (free_shipping, shipping_cost) {
        if let Some(code) = &code {
            used_codes.push(code.to_uppercase());
        }
        order_discount = cost;
        applied.push(AppliedDiscount {
            code: code.clone(),
            title,
            amount: cost,
            automatic: code.is_none(),
            method: "across",
            priority,
            allocations: Vec::new(),
        });
    }

    // Tax.
    let tax = tax_destination.as_ref().and_then(|(country, region)| {
        let rate = input
            .rules
            .taxes
            .iter()
            .find(|rate| {
                rate.country == *country
                    && rate.region.is_some()
                    && rate.region.as_deref().map(str::to_uppercase) == region.as_deref().map(str::to_uppercase)
            })
            .or_else(|| input.rules.taxes.iter().find(|rate| rate.country == *country && rate.region.is_none()))?;
        let shipping_base = if rate.shipping_taxable { shipping_cost.unwrap_or(0) - order_discount } else { 0 };
        let base = discounted_items + shipping_base.max(0);
        let tax = (i128::from(base) * i128::from(rate.basis_points) * 2 + 10_000) / 20_000;
        Some(i64::try_from(tax).unwrap_or(i64::MAX))
    });

    let mut totals = vec![Total { kind: "subtotal", amount: subtotal, display_text: None }];
    if items_discount > 0 {
        totals.push(Total { kind: "items_discount", amount: -items_discount, display_text: None });
    }
    if order_discount > 0 {
        totals.push(Total { kind: "discount", amount: -order_discount, display_text: None });
    }
    if let Some(cost) = shipping_cost {
        totals.push(Total { kind: "fulfillment", amount: cost, display_text: None });
    }
    if let Some(tax) = tax {
        totals.push(Total { kind: "tax", amount: tax, display_text: None });
    }
    let total: i64 = totals.iter().map(|entry| entry.amount).sum();
    totals.push(Total { kind: "total", amount: total, display_text: None });

    if session.kind == SessionKind::Checkout {
        checkout_requirements(input, &lines, &mut messages);
    }
    let status = status_of(session, &messages, lines.is_empty());
    messages.extend(session.sticky_messages.iter().cloned());
    Priced { lines, totals, messages, fulfillment, discount_codes, applied_discounts: applied, status, used_codes }
}

/// Buyer contact, payment and escalation requirements of a checkout.
fn checkout_requirements(input: &PricingInput<'_>, lines: &[PricedLine], messages: &mut Vec<Message>) {
    let session = input.session;
    if lines.is_empty() {
        messages.push(Message::error(
            "missing",
            Severity::Recoverable,
            "Add at least one item.",
            Some("$.line_items".into()),
        ));
    }
    let buyer = session.buyer.clone().unwrap_or_default();
    match buyer.email.as_deref() {
        Some(email) if !is_valid_email(email) => messages.push(Message::error(
            "invalid_email",
            Severity::Recoverable,
            format!("{email:?} is not a valid email address."),
            Some("$.buyer.email".into()),
        )),
        None if input.rules.require_email => messages.push(Message::error(
            "field_required",
            Severity::Recoverable,
            "The buyer's email address is required for the order confirmation.",
            Some(if session.buyer.is_some() { "$.buyer.email".into() } else { "$".into() }),
        )),
        _ => {}
    }
    if let Some(phone) = buyer.phone_number.as_deref()
        && !is_valid_phone(phone)
    {
        messages.push(Message::error(
            "invalid_phone",
            Severity::Recoverable,
            format!("{phone:?} is not an E.164 phone number (e.g. +14155550123)."),
            Some("$.buyer.phone_number".into()),
        ));
    }
    if !input.payment_available {
        messages.push(Message::error(
            "payment_unavailable",
            Severity::RequiresBuyerInput,
            "No payment method is available for this checkout; the buyer can pay on the merchant's page.",
            None,
        ));
    }
    if let Some(pending) = &session.pending_authentication
        && !pending.approved
    {
        messages.push(Message::error(
            "requires_3ds",
            Severity::RequiresBuyerInput,
            "The card issuer requires the buyer to authenticate this payment (3-D Secure) on the merchant's page.",
            None,
        ));
    }
}

fn status_of(session: &Session, messages: &[Message], empty: bool) -> Status {
    if session.status.is_terminal() || session.status == Status::CompleteInProgress {
        return session.status;
    }
    if session.kind == SessionKind::Cart {
        return Status::Incomplete;
    }
    let errors = messages.iter().filter(|message| message.kind == MessageKind::Error);
    let mut incomplete = empty;
    for message in errors {
        match message.severity {
            Some(Severity::RequiresBuyerInput | Severity::RequiresBuyerReview) => return Status::RequiresEscalation,
            _ => incomplete = true,
        }
    }
    if incomplete { Status::Incomplete } else { Status::ReadyForComplete }
}

fn price_fulfillment(
    input: &PricingInput<'_>,
    discounted_items: i64,
    weight_kg: i64,
    messages: &mut Vec<Message>,
) -> PricedFulfillment {
    let session = input.session;
    let choice = session.fulfillment.clone().unwrap_or_default();
    let line_item_ids: Vec<String> = session.lines.iter().map(|line| line.id.clone()).collect();
    let destinations: Vec<PricedDestination> = choice
        .destinations
        .iter()
        .enumerate()
        .map(|(index, address)| PricedDestination {
            id: address.id.clone().unwrap_or_else(|| format!("dest_{}", index + 1)),
            address: address.clone(),
        })
        .collect();
    let method_path = "$.fulfillment.methods[0]";
    let mut selected_destination_id = choice.selected_destination_id.clone();
    if selected_destination_id.is_none() && destinations.len() == 1 {
        selected_destination_id = Some(destinations[0].id.clone());
    }
    let mut fulfillment = PricedFulfillment {
        method_id: METHOD_ID.into(),
        line_item_ids: line_item_ids.clone(),
        destinations: destinations.clone(),
        selected_destination_id: None,
        group: None,
    };
    let Some(selected) = selected_destination_id else {
        let (code, content) = if destinations.is_empty() {
            ("field_required", "A shipping address is required.")
        } else {
            ("field_required", "Select one of the shipping destinations.")
        };
        let path = if destinations.is_empty() {
            format!("{method_path}.destinations")
        } else {
            format!("{method_path}.selected_destination_id")
        };
        messages.push(Message::error(code, Severity::Recoverable, content, Some(path)));
        return fulfillment;
    };
    let Some(index) = destinations.iter().position(|destination| destination.id == selected) else {
        messages.push(Message::error(
            "invalid_input",
            Severity::Recoverable,
            format!("selected_destination_id {selected:?} names no destination."),
            Some(format!("{method_path}.selected_destination_id")),
        ));
        return fulfillment;
    };
    fulfillment.selected_destination_id = Some(selected);
    let address = &destinations[index].address;
    let destination_path = format!("{method_path}.destinations[{index}]");
    for (field, value) in [
        ("street_address", &address.street_address),
        ("address_locality", &address.address_locality),
        ("postal_code", &address.postal_code),
        ("address_country", &address.address_country),
    ] {
        if value.as_deref().is_none_or(|text| text.trim().is_empty()) {
            messages.push(Message::error(
                "field_required",
                Severity::Recoverable,
                format!("The shipping address needs {}.", field.replace('_', " ")),
                Some(format!("{destination_path}.{field}")),
            ));
            return fulfillment;
        }
    }
    let country = address.address_country.clone().unwrap_or_default().to_uppercase();
    let region = address.address_region.clone().map(|region| region.to_uppercase());
    let zone = input.rules.shipping.zones.iter().find(|zone| {
        zone.countries.contains(&country)
            && (zone.regions.is_empty() || region.as_ref().is_some_and(|region| zone.regions.contains(region)))
    });
    let Some(zone) = zone else {
        messages.push(Message::error(
            "address_undeliverable",
            Severity::Recoverable,
            format!("We do not ship to {country}{}.", region.map(|region| format!("-{region}")).unwrap_or_default()),
            Some(destination_path),
        ));
        return fulfillment;
    };
    let options: Vec<PricedOption> =
        zone.options.iter().map(|rate| priced_option(rate, discounted_items, weight_kg)).collect();
    let selected_option = choice.selected_option_id.clone().filter(|id| options.iter().any(|option| &option.id == id));
    let group_path = format!("{method_path}.groups[0]");
    match (&choice.selected_option_id, &selected_option) {
        (Some(requested), None) => messages.push(Message::error(
            "invalid_input",
            Severity::Recoverable,
            format!("Shipping option {requested:?} is not offered for this address; choose one of the listed options."),
            Some(format!("{group_path}.selected_option_id")),
        )),
        (None, _) => messages.push(Message::error(
            "field_required",
            Severity::Recoverable,
            "Choose a shipping option.",
            Some(format!("{group_path}.selected_option_id")),
        )),
        _ => {}
    }
    fulfillment.group =
        Some(PricedGroup { id: GROUP_ID.into(), line_item_ids, options, selected_option_id: selected_option });
    fulfillment
}

fn priced_option(rate: &ShippingRate, discounted_items: i64, weight_kg: i64) -> PricedOption {
    let free = rate.free_above.is_some_and(|threshold| discounted_items >= threshold);
    let amount = if free { 0 } else { rate.amount + rate.per_kg * weight_kg };
    PricedOption {
        id: rate.id.clone(),
        title: rate.title.clone(),
        description: rate.description.clone(),
        carrier: rate.carrier.clone(),
        amount,
        min_days: rate.min_days,
        max_days: rate.max_days,
    }
}

/// Picks the discounts that apply: automatic promotions whose conditions hold, then the
/// submitted codes in order; rejected codes become warnings at `$.discounts.codes[i]`.
fn select_discounts<'a>(
    input: &'a PricingInput<'_>,
    subtotal: i64,
    base_amounts: &[i64],
    messages: &mut Vec<Message>,
) -> Vec<&'a DiscountRule> {
    let mut accepted: Vec<&DiscountRule> = Vec::new();
    let eligible_subtotal = |rule: &DiscountRule| -> i64 {
        (0..base_amounts.len())
            .filter(|index| rule_applies_to(rule, input, *index))
            .map(|index| base_amounts[index])
            .sum()
    };
    for rule in input.rules.discounts.iter().filter(|rule| rule.code.is_none()) {
        let live = rule.expires_at.is_none_or(|expires| input.now < expires);
        if live && rule.min_subtotal.is_none_or(|min| subtotal >= min) && eligible_subtotal(rule) > 0 {
            accepted.push(rule);
        }
    }
    let mut seen: Vec<String> = Vec::new();
    for (index, code) in input.session.discount_codes.iter().enumerate() {
        let path = Some(format!("$.discounts.codes[{index}]"));
        let normalized = code.trim().to_uppercase();
        if seen.contains(&normalized) {
            // A repeat of an accepted code is "already applied"; a repeat of a rejected one
            // already has its rejection at the first occurrence.
            if accepted.iter().any(|rule| rule.code.as_deref().map(str::to_uppercase) == Some(normalized.clone())) {
                messages.push(Message::warning(
                    "discount_code_already_applied",
                    format!("{code} is already applied."),
                    path,
                ));
            }
            continue;
        }
        seen.push(normalized.clone());
        let Some(rule) = input
            .rules
            .discounts
            .iter()
            .find(|rule| rule.code.as_deref().map(str::to_uppercase) == Some(normalized.clone()))
        else {
            messages.push(Message::warning(
                "discount_code_invalid",
                format!("{code} is not a valid discount code."),
                path,
            ));
            continue;
        };
        if rule.expires_at.is_some_and(|expires| input.now >= expires) {
            messages.push(Message::warning("discount_code_expired", format!("{code} has expired."), path));
            continue;
        }
        if let Some(limit) = rule.usage_limit
            && input.discount_uses.get(&normalized).copied().unwrap_or(0) >= limit
        {
            messages.push(Message::warning(
                "discount_code_invalid",
                format!("{code} has reached its usage limit."),
                path,
            ));
            continue;
        }
        if let Some(min) = rule.min_subtotal
            && subtotal < min
        {
            messages.push(Message::warning(
                "discount_code_minimum_not_met",
                format!("{code} needs an item subtotal of at least {min} minor units."),
                path,
            ));
            continue;
        }
        if rule.kind != DiscountKind::FreeShipping && eligible_subtotal(rule) == 0 {
            messages.push(Message::warning(
                "discount_code_user_ineligible",
                format!("{code} does not apply to any item in this order."),
                path,
            ));
            continue;
        }
        let codes_so_far: Vec<&&DiscountRule> = accepted.iter().filter(|accepted| accepted.code.is_some()).collect();
        if !codes_so_far.is_empty() && (!rule.combinable || codes_so_far.iter().any(|other| !other.combinable)) {
            messages.push(Message::warning(
                "discount_code_combination_disallowed",
                format!("{code} cannot be combined with the other codes."),
                path,
            ));
            continue;
        }
        accepted.push(rule);
    }
    accepted
}

fn rule_applies_to(rule: &DiscountRule, input: &PricingInput<'_>, line_index: usize) -> bool {
    let Some(line) = input.session.lines.get(line_index) else { return false };
    let Some(item) = input.items.get(&line.item_id) else { return false };
    let product_ok = rule.product_ids.is_empty() || rule.product_ids.contains(&item.product_id);
    let category_ok = rule.categories.is_empty()
        || rule
            .categories
            .iter()
            .any(|wanted| item.categories.iter().any(|category| crate::catalog::category_matches(category, wanted)));
    product_ok && category_ok
}

/// Splits `amount` over `weights` proportionally (largest remainder), never exceeding a weight.
fn allocate(amount: i64, weights: &[i64]) -> Vec<i64> {
    let total: i64 = weights.iter().sum();
    if total <= 0 || amount <= 0 {
        return vec![0; weights.len()];
    }
    let amount = amount.min(total);
    let mut shares: Vec<i64> =
        weights.iter().map(|weight| (i128::from(amount) * i128::from(*weight) / i128::from(total)) as i64).collect();
    let mut remainder = amount - shares.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..weights.len()).collect();
    order.sort_by_key(|index| {
        let exact = i128::from(amount) * i128::from(weights[*index]) % i128::from(total);
        (std::cmp::Reverse(exact), *index)
    });
    for index in order {
        if remainder == 0 {
            break;
        }
        if shares[index] < weights[index] {
            shares[index] += 1;
            remainder -= 1;
        }
    }
    shares
}

#[cfg(test)]
mod tests;
