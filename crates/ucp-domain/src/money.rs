//! Money: integer amounts in minor units of an ISO 4217 currency. Never a float.

use serde::{Deserialize, Serialize};

/// An amount in minor units (cents for USD, yen for JPY) and its currency code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Price {
    pub amount: i64,
    pub currency: String,
}

impl Price {
    pub fn new(amount: i64, currency: String) -> Self {
        Price { amount, currency }
    }
}

/// Whether `code` looks like an ISO 4217 alphabetic code (three upper-case ASCII letters).
pub fn is_currency_code(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|byte| byte.is_ascii_uppercase())
}

/// How many minor units a currency has (ISO 4217 exponent). Unknown codes default to 2.
pub fn currency_exponent(code: &str) -> u32 {
    match code {
        "BIF" | "CLP" | "DJF" | "GNF" | "ISK" | "JPY" | "KMF" | "KRW" | "PYG" | "RWF" | "UGX" | "UYI" | "VND"
        | "VUV" | "XAF" | "XOF" | "XPF" => 0,
        "BHD" | "IQD" | "JOD" | "KWD" | "LYD" | "OMR" | "TND" => 3,
        _ => 2,
    }
}

/// Parses a decimal amount such as `"19.99"` into minor units of `currency`.
/// Rejects negative values, more fraction digits than the currency has, and anything that
/// is not plain digits with at most one dot.
pub fn parse_decimal_amount(text: &str, currency: &str) -> Result<i64, String> {
    let text = text.trim();
    let exponent = currency_exponent(currency) as usize;
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (text, ""),
    };
    if whole.is_empty() && fraction.is_empty() {
        return Err(format!("{text:?} is not an amount"));
    }
    if !whole.bytes().all(|byte| byte.is_ascii_digit()) || !fraction.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("{text:?} is not a non-negative decimal amount"));
    }
    let fraction = fraction.trim_end_matches('0');
    if fraction.len() > exponent {
        return Err(format!("{text:?} has more decimals than {currency} allows ({exponent})"));
    }
    let mut minor: i64 = 0;
    for byte in whole.bytes().chain(fraction.bytes()).chain(std::iter::repeat_n(b'0', exponent - fraction.len())) {
        minor = minor
            .checked_mul(10)
            .and_then(|value| value.checked_add(i64::from(byte - b'0')))
            .filter(|value| *value <= MAX_AMOUNT)
            .ok_or_else(|| format!("{text:?} is too large"))?;
    }
    Ok(minor)
}

/// The largest amount we accept: 2^53 - 1, so every amount is exact in any JSON reader.
pub const MAX_AMOUNT: i64 = (1 << 53) - 1;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_decimal_amounts_in_minor_units() {
        assert_eq!(parse_decimal_amount("19.99", "USD"), Ok(1999));
        assert_eq!(parse_decimal_amount("19.9", "USD"), Ok(1990));
        assert_eq!(parse_decimal_amount("19", "USD"), Ok(1900));
        assert_eq!(parse_decimal_amount("1500", "JPY"), Ok(1500));
        assert_eq!(parse_decimal_amount("1.500", "KWD"), Ok(1500));
        assert_eq!(parse_decimal_amount("0.50", "USD"), Ok(50));
        assert_eq!(parse_decimal_amount(".5", "USD"), Ok(50));
        assert!(parse_decimal_amount("19.999", "USD").is_err());
        assert!(parse_decimal_amount("1.5", "JPY").is_err());
        assert!(parse_decimal_amount("-1", "USD").is_err());
        assert!(parse_decimal_amount("1e3", "USD").is_err());
        assert!(parse_decimal_amount("", "USD").is_err());
        assert!(parse_decimal_amount("99999999999999999999", "USD").is_err());
    }

    #[test]
    fn currency_codes_are_three_upper_case_letters() {
        assert!(is_currency_code("USD"));
        assert!(!is_currency_code("usd"));
        assert!(!is_currency_code("US"));
    }
}
