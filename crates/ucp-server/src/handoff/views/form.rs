//! The checkout form as the buyer fills it in, and the messages the pages show.

use serde::Deserialize;
use ucp_domain::checkout::{Message, MessageKind, Priced, Session};

/// What the buyer typed (or what is stored), field by field.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub(in crate::handoff) struct CheckoutForm {
    pub(in crate::handoff) email: String,
    pub(in crate::handoff) first_name: String,
    pub(in crate::handoff) last_name: String,
    pub(in crate::handoff) phone: String,
    pub(in crate::handoff) street: String,
    pub(in crate::handoff) street2: String,
    pub(in crate::handoff) city: String,
    pub(in crate::handoff) region: String,
    pub(in crate::handoff) postal_code: String,
    pub(in crate::handoff) country: String,
    pub(in crate::handoff) shipping_option: String,
    pub(in crate::handoff) discount_codes: String,
}

/// Longest value a form field may hold.
pub(in crate::handoff) const MAX_FIELD: usize = 256;

impl CheckoutForm {
    /// The stored buyer, selected destination, option and codes.
    pub(in crate::handoff) fn from_session(session: &Session, priced: &Priced) -> CheckoutForm {
        let buyer = session.buyer.clone().unwrap_or_default();
        let fulfillment = priced.fulfillment.as_ref();
        let address = fulfillment
            .and_then(|fulfillment| {
                let selected = fulfillment.selected_destination_id.as_ref();
                fulfillment
                    .destinations
                    .iter()
                    .find(|destination| Some(&destination.id) == selected)
                    .or(fulfillment.destinations.first())
                    .map(|destination| destination.address.clone())
            })
            .or_else(|| session.fulfillment.as_ref().and_then(|choice| choice.destinations.first().cloned()))
            .unwrap_or_default();
        let option = fulfillment
            .and_then(|fulfillment| fulfillment.group.as_ref())
            .and_then(|group| group.selected_option_id.clone())
            .or_else(|| session.fulfillment.as_ref().and_then(|choice| choice.selected_option_id.clone()));
        CheckoutForm {
            email: buyer.email.unwrap_or_default(),
            first_name: buyer.first_name.or(address.first_name).unwrap_or_default(),
            last_name: buyer.last_name.or(address.last_name).unwrap_or_default(),
            phone: buyer.phone_number.unwrap_or_default(),
            street: address.street_address.unwrap_or_default(),
            street2: address.extended_address.unwrap_or_default(),
            city: address.address_locality.unwrap_or_default(),
            region: address.address_region.unwrap_or_default(),
            postal_code: address.postal_code.unwrap_or_default(),
            country: address.address_country.unwrap_or_default(),
            shipping_option: option.unwrap_or_default(),
            discount_codes: session.discount_codes.join(", "),
        }
    }

    /// Trims every field; names the first field that is too long.
    pub(in crate::handoff) fn normalize(&mut self) -> Result<(), &'static str> {
        for (label, value) in [
            ("Email", &mut self.email),
            ("First name", &mut self.first_name),
            ("Last name", &mut self.last_name),
            ("Phone", &mut self.phone),
            ("Street address", &mut self.street),
            ("Apartment, suite", &mut self.street2),
            ("City", &mut self.city),
            ("State or region", &mut self.region),
            ("Postal code", &mut self.postal_code),
            ("Country", &mut self.country),
            ("Shipping option", &mut self.shipping_option),
            ("Discount codes", &mut self.discount_codes),
        ] {
            *value = value.trim().to_owned();
            if value.chars().count() > MAX_FIELD {
                return Err(label);
            }
        }
        self.country = self.country.to_uppercase();
        Ok(())
    }

    pub(in crate::handoff) fn has_address(&self) -> bool {
        [&self.street, &self.street2, &self.city, &self.region, &self.postal_code, &self.country]
            .iter()
            .any(|value| !value.is_empty())
    }

    /// The codes, split on commas and white space.
    pub(in crate::handoff) fn codes(&self) -> Vec<String> {
        self.discount_codes
            .split(|ch: char| ch == ',' || ch.is_whitespace())
            .filter(|code| !code.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// A message as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::handoff) struct Notice {
    pub(in crate::handoff) error: bool,
    pub(in crate::handoff) code: String,
    pub(in crate::handoff) content: String,
    pub(in crate::handoff) path: Option<String>,
    /// A disclosure, shown under its line rather than among the alerts.
    pub(in crate::handoff) disclosure: bool,
}

impl Notice {
    pub(in crate::handoff) fn error(code: &str, content: impl Into<String>) -> Notice {
        Notice { error: true, code: code.into(), content: content.into(), path: None, disclosure: false }
    }
}

impl From<&Message> for Notice {
    fn from(message: &Message) -> Notice {
        Notice {
            error: message.kind == MessageKind::Error,
            code: message.code.clone(),
            content: message.content.clone(),
            path: message.path.clone(),
            disclosure: message.disclosure.is_some(),
        }
    }
}

/// The form field a message's path points at.
pub(super) fn field_of(path: &str) -> Option<&'static str> {
    if path.starts_with("$.buyer.") {
        return match path.rsplit('.').next()? {
            "email" => Some("email"),
            "phone_number" => Some("phone"),
            "first_name" => Some("first_name"),
            "last_name" => Some("last_name"),
            _ => None,
        };
    }
    if path.starts_with("$.discounts") {
        return Some("discount_codes");
    }
    if path.ends_with("selected_option_id") {
        return Some("shipping_option");
    }
    if path.contains(".destinations") {
        if path.ends_with(".destinations") || path.ends_with("selected_destination_id") {
            return Some("street");
        }
        if path.ends_with(']') {
            // The destination as a whole: we do not deliver there.
            return Some("country");
        }
        return match path.rsplit('.').next()? {
            "street_address" => Some("street"),
            "extended_address" => Some("street2"),
            "address_locality" => Some("city"),
            "address_region" => Some("region"),
            "postal_code" => Some("postal_code"),
            "address_country" => Some("country"),
            _ => None,
        };
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_paths_point_at_form_fields() {
        assert_eq!(field_of("$.buyer.email"), Some("email"));
        assert_eq!(field_of("$.buyer.phone_number"), Some("phone"));
        assert_eq!(field_of("$.fulfillment.methods[0].destinations"), Some("street"));
        assert_eq!(field_of("$.fulfillment.methods[0].destinations[0].postal_code"), Some("postal_code"));
        assert_eq!(field_of("$.fulfillment.methods[0].destinations[0]"), Some("country"));
        assert_eq!(field_of("$.fulfillment.methods[0].groups[0].selected_option_id"), Some("shipping_option"));
        assert_eq!(field_of("$.discounts.codes[1]"), Some("discount_codes"));
        assert_eq!(field_of("$.line_items[0]"), None);
        assert_eq!(field_of("$"), None);
    }

    #[test]
    fn codes_split_on_commas_and_spaces() {
        let form = CheckoutForm { discount_codes: " save10, SHIP  free,,".into(), ..CheckoutForm::default() };
        assert_eq!(form.codes(), vec!["save10", "SHIP", "free"]);
    }

    #[test]
    fn normalize_trims_and_bounds() {
        let mut form = CheckoutForm { country: " us ".into(), email: " a@b.co ".into(), ..CheckoutForm::default() };
        assert_eq!(form.normalize(), Ok(()));
        assert_eq!((form.country.as_str(), form.email.as_str()), ("US", "a@b.co"));
        let mut long = CheckoutForm { city: "x".repeat(MAX_FIELD + 1), ..CheckoutForm::default() };
        assert_eq!(long.normalize(), Err("City"));
    }
}
