//! How single Merchant Center values read: prices, availability, quantities, conditions and
//! weights.

use ucp_domain::catalog::Availability;
use ucp_domain::money::{Price, is_currency_code, parse_decimal_amount};

/// `19.99 USD`, `19.99USD`, `USD 19.99` or `19.99` (in `default_currency`).
pub(super) fn parse_price(text: &str, default_currency: &str) -> Result<Price, String> {
    let text = text.trim();
    let invalid = |detail: String| format!("{text:?} is not a price like \"19.99 USD\": {detail}");
    let leading = text.bytes().take_while(u8::is_ascii_alphabetic).count();
    let trailing = text.bytes().rev().take_while(u8::is_ascii_alphabetic).count();
    let (amount, currency) = match (leading, trailing) {
        (0, 0) => {
            if !is_currency_code(default_currency) {
                return Err(invalid(format!(
                    "it has no currency and the default currency {default_currency:?} is not an ISO 4217 code"
                )));
            }
            (text, default_currency.to_owned())
        }
        (3, 0) => (text[3..].trim(), text[..3].to_ascii_uppercase()),
        (0, 3) => (text[..text.len() - 3].trim(), text[text.len() - 3..].to_ascii_uppercase()),
        _ => {
            return Err(invalid("the currency must be a 3-letter ISO 4217 code".to_owned()));
        }
    };
    let amount = parse_decimal_amount(amount, &currency).map_err(invalid)?;
    Ok(Price::new(amount, currency))
}

/// `in_stock`/`in stock`, `out_of_stock`/`out of stock`, `preorder`, `backorder`.
pub(super) fn parse_availability(text: &str) -> Result<Availability, String> {
    let status = text.trim().to_ascii_lowercase().replace(' ', "_");
    match status.as_str() {
        "in_stock" | "out_of_stock" | "preorder" | "backorder" => {
            Ok(Availability { available: Some(status != "out_of_stock"), status: Some(status) })
        }
        _ => Err(format!("{text:?} is not one of in_stock, out_of_stock, preorder, backorder")),
    }
}

pub(super) fn parse_quantity(text: &str) -> Result<i64, String> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|quantity| *quantity >= 0)
        .ok_or_else(|| format!("{text:?} is not a whole number of units (0 or more)"))
}

pub(super) fn parse_condition(text: &str) -> Result<String, String> {
    let condition = text.trim().to_ascii_lowercase();
    match condition.as_str() {
        "new" | "refurbished" | "used" => Ok(condition),
        _ => Err(format!("{text:?} is not one of new, refurbished, used")),
    }
}

/// `1.5 kg`, `3 lb`, `12oz`, `500 g` in whole grams.
pub(super) fn parse_weight_grams(text: &str) -> Result<i64, String> {
    let text = text.trim();
    let split = text.find(|ch: char| !(ch.is_ascii_digit() || ch == '.')).unwrap_or(text.len());
    let (number, unit) = (&text[..split], text[split..].trim().to_ascii_lowercase());
    let invalid = || format!("{text:?} is not a weight like \"1.5 kg\" (units g, kg, oz, lb)");
    let value: f64 = number.parse().map_err(|_| invalid())?;
    let grams_per_unit = match unit.as_str() {
        "g" => 1.0,
        "kg" => 1000.0,
        "oz" => 28.349_523_125,
        "lb" | "lbs" => 453.592_37,
        _ => return Err(invalid()),
    };
    let grams = (value * grams_per_unit).round();
    if !grams.is_finite() || !(0.0..=1e12).contains(&grams) {
        return Err(invalid());
    }
    Ok(grams as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_in_every_accepted_form() {
        let usd = |amount| Ok(Price::new(amount, "USD".to_owned()));
        assert_eq!(parse_price("19.99 USD", "EUR"), usd(1999));
        assert_eq!(parse_price("19.99USD", "EUR"), usd(1999));
        assert_eq!(parse_price("USD 19.99", "EUR"), usd(1999));
        assert_eq!(parse_price("usd19.99", "EUR"), usd(1999));
        assert_eq!(parse_price(" 19.99 ", "USD"), usd(1999));
        assert_eq!(parse_price("1500 JPY", "USD"), Ok(Price::new(1500, "JPY".to_owned())));
        assert!(parse_price("19.999 USD", "USD").is_err());
        assert!(parse_price("abc", "USD").is_err());
        assert!(parse_price("USD", "USD").is_err());
        assert!(parse_price("-5 USD", "USD").is_err());
        assert!(parse_price("$5", "USD").is_err());
        assert!(parse_price("5", "dollars").is_err());
    }

    #[test]
    fn availability_values() {
        let in_stock = parse_availability("in stock").unwrap();
        assert_eq!((in_stock.available, in_stock.status.as_deref()), (Some(true), Some("in_stock")));
        let out = parse_availability("Out_Of_Stock").unwrap();
        assert_eq!((out.available, out.status.as_deref()), (Some(false), Some("out_of_stock")));
        assert_eq!(parse_availability("preorder").unwrap().available, Some(true));
        assert_eq!(parse_availability("backorder").unwrap().status.as_deref(), Some("backorder"));
        assert!(parse_availability("maybe").is_err());
    }

    #[test]
    fn weights_in_grams() {
        assert_eq!(parse_weight_grams("1.5 kg"), Ok(1500));
        assert_eq!(parse_weight_grams("3 lb"), Ok(1361));
        assert_eq!(parse_weight_grams("16oz"), Ok(454));
        assert_eq!(parse_weight_grams("250 G"), Ok(250));
        assert!(parse_weight_grams("heavy").is_err());
        assert!(parse_weight_grams("12").is_err());
        assert!(parse_weight_grams("1,5 kg").is_err());
        assert!(parse_weight_grams("2 stone").is_err());
    }
}
