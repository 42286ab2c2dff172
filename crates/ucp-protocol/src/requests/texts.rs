//! The texts a session keeps as they were sent (the buyer, fulfillment destinations and
//! choices, discount codes), bounded in length. Every later read of the session reads them
//! again: without a bound, one large create made each small `get_checkout` after it read,
//! reprice and render a megabyte.

use ucp_domain::checkout::{Address, Buyer};

use super::{DiscountsRequest, FulfillmentRequest, InvalidInput};

/// The longest text a session keeps of a buyer, an address, a choice or a discount code, in
/// bytes. Postal lines, names and codes are a few dozen; the schemas set no limit.
pub const MAX_TEXT_BYTES: usize = 1024;

/// Checks each kept text of a cart or checkout request, named under `member` (`checkout`).
pub(super) fn check(
    member: &str,
    buyer: Option<&Buyer>,
    discounts: Option<&DiscountsRequest>,
    fulfillment: Option<&FulfillmentRequest>,
) -> Result<(), InvalidInput> {
    if let Some(buyer) = buyer {
        let Buyer { first_name, last_name, email, phone_number } = buyer;
        for (name, text) in
            [("first_name", first_name), ("last_name", last_name), ("email", email), ("phone_number", phone_number)]
        {
            fits(text.as_deref(), || format!("{member}.buyer.{name}"))?;
        }
    }
    for (index, code) in discounts.map(|discounts| discounts.codes.as_slice()).unwrap_or_default().iter().enumerate() {
        fits(Some(code), || format!("{member}.discounts.codes[{index}]"))?;
    }
    let methods = fulfillment.map(|fulfillment| fulfillment.methods.as_slice()).unwrap_or_default();
    for (index, method) in methods.iter().enumerate() {
        let at = || format!("{member}.fulfillment.methods[{index}]");
        fits(method.kind.as_deref(), || format!("{}.type", at()))?;
        fits(method.selected_destination_id.as_deref(), || format!("{}.selected_destination_id", at()))?;
        for (group, choice) in method.groups.iter().enumerate() {
            fits(choice.selected_option_id.as_deref(), || format!("{}.groups[{group}].selected_option_id", at()))?;
        }
        for (destination, address) in method.destinations.iter().enumerate() {
            address_fits(address, || format!("{}.destinations[{destination}]", at()))?;
        }
    }
    Ok(())
}

fn address_fits(address: &Address, at: impl Fn() -> String) -> Result<(), InvalidInput> {
    let Address {
        id,
        first_name,
        last_name,
        street_address,
        extended_address,
        address_locality,
        address_region,
        address_country,
        postal_code,
        phone_number,
    } = address;
    for (name, text) in [
        ("id", id),
        ("first_name", first_name),
        ("last_name", last_name),
        ("street_address", street_address),
        ("extended_address", extended_address),
        ("address_locality", address_locality),
        ("address_region", address_region),
        ("address_country", address_country),
        ("postal_code", postal_code),
        ("phone_number", phone_number),
    ] {
        fits(text.as_deref(), || format!("{}.{name}", at()))?;
    }
    Ok(())
}

fn fits(text: Option<&str>, path: impl FnOnce() -> String) -> Result<(), InvalidInput> {
    match text {
        Some(text) if text.len() > MAX_TEXT_BYTES => {
            Err(InvalidInput(format!("{} is longer than {MAX_TEXT_BYTES} bytes", path())))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{CartRequest, CheckoutRequest};
    use super::*;

    #[test]
    fn every_kept_text_is_bounded_and_named() {
        let long = "x".repeat(MAX_TEXT_BYTES + 1);
        let fits = "x".repeat(MAX_TEXT_BYTES);
        let address = |value: &str| json!({ "street_address": "1 Main St", "postal_code": value });
        let checkout = |buyer: &str, code: &str, postal: &str, option: &str| {
            serde_json::from_value::<CheckoutRequest>(json!({
                "line_items": [{ "item": { "id": "v1" }, "quantity": 1 }],
                "buyer": { "email": buyer },
                "discounts": { "codes": ["SAVE", code] },
                "fulfillment": { "methods": [{ "type": "shipping", "destinations": [address("94103"), address(postal)],
                    "groups": [{ "selected_option_id": option }] }] }
            }))
            .unwrap()
        };
        checkout(&fits, &fits, &fits, &fits).validate("checkout", None).unwrap();
        for (request, path) in [
            (checkout(&long, "A", "1", "o"), "checkout.buyer.email"),
            (checkout("a@b.c", &long, "1", "o"), "checkout.discounts.codes[1]"),
            (checkout("a@b.c", "A", &long, "o"), "checkout.fulfillment.methods[0].destinations[1].postal_code"),
            (checkout("a@b.c", "A", "1", &long), "checkout.fulfillment.methods[0].groups[0].selected_option_id"),
        ] {
            assert_eq!(request.validate("checkout", None).unwrap_err().0, format!("{path} is longer than 1024 bytes"));
        }
        let cart = serde_json::from_value::<CartRequest>(json!({
            "line_items": [{ "item": { "id": "v1" }, "quantity": 1 }], "buyer": { "first_name": long }
        }))
        .unwrap();
        assert_eq!(cart.validate("cart", None).unwrap_err().0, "cart.buyer.first_name is longer than 1024 bytes");
    }
}
