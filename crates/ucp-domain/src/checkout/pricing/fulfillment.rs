//! Shipping: the destination, its zone, the options and their prices.

use super::{GROUP_ID, METHOD_ID, PricedDestination, PricedFulfillment, PricedGroup, PricedOption, PricingInput};
use crate::checkout::ShippingRate;
use crate::checkout::{Message, SessionKind, Severity};

/// What fulfillment decides for the rest of pricing.
pub(super) struct Shipping {
    pub(super) fulfillment: Option<PricedFulfillment>,
    /// The price of the selected option, once one is selected.
    pub(super) cost: Option<i64>,
    /// (country, region) that taxes follow: the selected destination, else the buyer's context.
    pub(super) tax_destination: Option<(String, Option<String>)>,
}

/// Prices fulfillment for a checkout with lines, when fulfillment is negotiated; a checkout
/// without it gets the message that shipping is collected on the merchant's page.
pub(super) fn fulfill(
    input: &PricingInput<'_>,
    has_lines: bool,
    discounted_items: i64,
    messages: &mut Vec<Message>,
) -> Shipping {
    let session = input.session;
    let mut shipping = Shipping {
        fulfillment: None,
        cost: None,
        tax_destination: session.context.as_ref().and_then(|context| {
            context.address_country.clone().map(|country| (country.to_uppercase(), context.address_region.clone()))
        }),
    };
    if session.kind != SessionKind::Checkout || !has_lines {
        return shipping;
    }
    if !input.fulfillment_enabled {
        messages.push(Message::error(
            "fulfillment_required",
            Severity::RequiresBuyerInput,
            "Shipping details are collected on the merchant's checkout page.",
            None,
        ));
        return shipping;
    }
    let fulfillment = price_fulfillment(input, discounted_items, weight_kg_started(input), messages);
    if let Some(address) = fulfillment
        .selected_destination_id
        .as_ref()
        .and_then(|id| fulfillment.destinations.iter().find(|destination| &destination.id == id))
        .map(|destination| &destination.address)
        && let Some(country) = &address.address_country
    {
        shipping.tax_destination = Some((country.to_uppercase(), address.address_region.clone()));
    }
    if let Some(group) = &fulfillment.group
        && let Some(option) =
            group.selected_option_id.as_ref().and_then(|id| group.options.iter().find(|option| &option.id == id))
    {
        shipping.cost = Some(option.amount);
    }
    shipping.fulfillment = Some(fulfillment);
    shipping
}

/// The weight of the known items in started kilograms (what `per_kg` rates charge for).
fn weight_kg_started(input: &PricingInput<'_>) -> i64 {
    let grams: i64 = input
        .session
        .lines
        .iter()
        .filter_map(|line| input.items.get(&line.item_id).map(|item| item.weight_grams.unwrap_or(0) * line.quantity))
        .sum();
    (grams + 999) / 1000
}

pub(super) fn price_fulfillment(
    input: &PricingInput<'_>,
    discounted_items: i64,
    weight_kg: i64,
    messages: &mut Vec<Message>,
) -> PricedFulfillment {
    let session = input.session;
    let choice = session.fulfillment.clone().unwrap_or_default();
    if !choice.unsupported.is_empty() {
        // Completing would ship what the buyer meant to collect (or receive otherwise).
        messages.push(Message::error(
            "fulfillment_method_unsupported",
            Severity::Recoverable,
            format!(
                "This store only ships; it offers no {} fulfillment. Remove that method and give a shipping address.",
                choice.unsupported.join(" or ")
            ),
            Some("$.fulfillment".into()),
        ));
    }
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

pub(super) fn priced_option(rate: &ShippingRate, discounted_items: i64, weight_kg: i64) -> PricedOption {
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
