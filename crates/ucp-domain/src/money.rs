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

/// A non-negative decimal number written in plain digits with at most one dot (`"7.25"`,
/// `"0.92"`, `".5"`, `"150"`), kept exact: `units / 10^scale`. The one parser behind money
/// amounts, exchange rates and percentages. Trailing zeros of the fraction are dropped, so
/// `"1.50"` and `"1.5"` are the same decimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    units: u128,
    scale: u32,
}

/// Most digits a [`Decimal`] may have, whole and fraction together: far above any setting,
/// well below what `u128` holds.
const MAX_DECIMAL_DIGITS: usize = 30;

impl Decimal {
    /// The value with the dot removed: `7.25` is 725.
    pub fn units(self) -> u128 {
        self.units
    }

    /// How many fraction digits the value has (after dropping trailing zeros): `7.25` has 2.
    pub fn scale(self) -> u32 {
        self.scale
    }

    /// The digits before the dot: `7.25` has 1 whole digit, `0.5` none.
    fn whole_digits(self) -> u32 {
        let whole = self.units / 10u128.pow(self.scale);
        if whole == 0 { 0 } else { whole.ilog10() + 1 }
    }

    /// The value in units of `10^-scale`, when it has no more fraction digits than `scale`.
    pub fn scaled(self, scale: u32) -> Option<u128> {
        let extra = scale.checked_sub(self.scale)?;
        self.units.checked_mul(10u128.checked_pow(extra)?)
    }
}

/// Why a text is not a [`Decimal`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a non-negative decimal number (digits with at most one dot)")]
pub struct DecimalError(pub String);

impl std::str::FromStr for Decimal {
    type Err = DecimalError;

    fn from_str(text: &str) -> Result<Decimal, DecimalError> {
        let error = || DecimalError(text.to_owned());
        let trimmed = text.trim();
        let (whole, fraction) = trimmed.split_once('.').unwrap_or((trimmed, ""));
        let fraction = fraction.trim_end_matches('0');
        let whole = whole.trim_start_matches('0');
        let plain = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
        if trimmed.is_empty() || trimmed == "." || !plain(whole) || !plain(fraction) {
            return Err(error());
        }
        if whole.len() + fraction.len() > MAX_DECIMAL_DIGITS {
            return Err(error());
        }
        let units =
            whole.bytes().chain(fraction.bytes()).fold(0u128, |units, byte| units * 10 + u128::from(byte - b'0'));
        Ok(Decimal { units, scale: fraction.len() as u32 })
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let divisor = 10u128.pow(self.scale);
        let (whole, fraction) = (self.units / divisor, self.units % divisor);
        if self.scale == 0 {
            write!(formatter, "{whole}")
        } else {
            write!(formatter, "{whole}.{fraction:0width$}", width = self.scale as usize)
        }
    }
}

/// Parses a decimal amount such as `"19.99"` into minor units of `currency`.
/// Rejects negative values, more fraction digits than the currency has, and anything that
/// is not plain digits with at most one dot.
pub fn parse_decimal_amount(text: &str, currency: &str) -> Result<i64, String> {
    let decimal: Decimal =
        text.parse().map_err(|_| format!("{:?} is not a non-negative decimal amount", text.trim()))?;
    let exponent = currency_exponent(currency);
    let minor = decimal
        .scaled(exponent)
        .ok_or_else(|| format!("{:?} has more decimals than {currency} allows ({exponent})", text.trim()))?;
    i64::try_from(minor)
        .ok()
        .filter(|minor| *minor <= MAX_AMOUNT)
        .ok_or_else(|| format!("{:?} is too large", text.trim()))
}

/// An exchange rate as an exact fraction: `0.92` is 92/100. Positive, at most 12 digits
/// before and 12 after the dot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    numerator: i128,
    denominator: i128,
}

impl Rate {
    pub fn numerator(self) -> i128 {
        self.numerator
    }

    pub fn denominator(self) -> i128 {
        self.denominator
    }

    fn decimal(self) -> Decimal {
        Decimal { units: self.numerator as u128, scale: self.denominator.ilog10() }
    }
}

impl std::str::FromStr for Rate {
    type Err = String;

    fn from_str(text: &str) -> Result<Rate, String> {
        let decimal: Decimal = text.parse().map_err(|error: DecimalError| error.to_string())?;
        if decimal.units == 0 || decimal.scale > 12 || decimal.whole_digits() > 12 {
            return Err(format!(
                "{:?} is not a positive rate (at most 12 digits before and after the dot)",
                text.trim()
            ));
        }
        Ok(Rate { numerator: decimal.units as i128, denominator: 10i128.pow(decimal.scale) })
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.decimal().fmt(formatter)
    }
}

/// A percentage from 0 to 100 with at most four decimals, held in parts per million of the
/// whole: `"7.25"` is 72,500 (725 basis points), New York City's `"8.875"` is 88,750.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percent(u32);

impl Percent {
    pub const MAX_BASIS_POINTS: u16 = 10_000;
    const PER_BASIS_POINT: u32 = 100;

    pub fn from_basis_points(points: u16) -> Option<Percent> {
        (points <= Percent::MAX_BASIS_POINTS).then_some(Percent(u32::from(points) * Percent::PER_BASIS_POINT))
    }

    /// 725 for 7.25 %; a finer percentage is cut to whole basis points (see
    /// [`Percent::in_basis_points`]).
    pub fn basis_points(self) -> i64 {
        i64::from(self.0 / Percent::PER_BASIS_POINT)
    }

    /// Whether it is a whole number of basis points (at most two decimals).
    pub fn in_basis_points(self) -> bool {
        self.0.is_multiple_of(Percent::PER_BASIS_POINT)
    }

    /// 88,750 for 8.875 %.
    pub fn parts_per_million(self) -> i64 {
        i64::from(self.0)
    }
}

impl std::str::FromStr for Percent {
    type Err = String;

    fn from_str(text: &str) -> Result<Percent, String> {
        let error = || format!("{:?} is not a percentage (0 to 100, at most four decimals)", text.trim());
        let decimal: Decimal = text.parse().map_err(|_| error())?;
        let parts = decimal.scaled(4).and_then(|parts| u32::try_from(parts).ok()).ok_or_else(error)?;
        (parts <= u32::from(Percent::MAX_BASIS_POINTS) * Percent::PER_BASIS_POINT)
            .then_some(Percent(parts))
            .ok_or_else(error)
    }
}

impl std::fmt::Display for Percent {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let decimal = Decimal { units: u128::from(self.0), scale: 4 };
        let text = decimal.to_string();
        formatter.write_str(text.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// An ISO 4217 alphabetic code: three ASCII letters, held in upper case (`"usd"` reads as
/// `USD`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CurrencyCode(String);

impl CurrencyCode {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for CurrencyCode {
    type Err = String;

    fn from_str(text: &str) -> Result<CurrencyCode, String> {
        let code = text.trim().to_ascii_uppercase();
        if is_currency_code(&code) {
            Ok(CurrencyCode(code))
        } else {
            Err(format!("{text:?} is not an ISO 4217 currency code (three letters)"))
        }
    }
}

impl std::fmt::Display for CurrencyCode {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::borrow::Borrow<str> for CurrencyCode {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<CurrencyCode> for String {
    fn from(code: CurrencyCode) -> String {
        code.0
    }
}

/// Serde for the types above: each reads from its text form. Rates and percentages also
/// read from a bare number (TOML `rate = 7`, or a value from the environment, which arrives
/// as a number): a float is taken by its shortest decimal form, which is the text written.
mod serde_impls {
    use std::fmt;
    use std::marker::PhantomData;
    use std::str::FromStr;

    use serde::de::{self, Deserializer, Visitor};
    use serde::{Deserialize, Serialize, Serializer};

    use super::{CurrencyCode, Percent, Rate};

    struct FromText<T>(PhantomData<T>, &'static str, bool);

    impl<T: FromStr<Err = String>> Visitor<'_> for FromText<T> {
        type Value = T;

        fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
            formatter.write_str(self.1)
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
            text.parse().map_err(E::custom)
        }

        fn visit_u64<E: de::Error>(self, number: u64) -> Result<T, E> {
            if !self.2 {
                return Err(E::invalid_type(de::Unexpected::Unsigned(number), &self));
            }
            self.visit_str(&number.to_string())
        }

        fn visit_i64<E: de::Error>(self, number: i64) -> Result<T, E> {
            if !self.2 {
                return Err(E::invalid_type(de::Unexpected::Signed(number), &self));
            }
            self.visit_str(&number.to_string())
        }

        fn visit_f64<E: de::Error>(self, number: f64) -> Result<T, E> {
            if !self.2 || !number.is_finite() {
                return Err(E::invalid_type(de::Unexpected::Float(number), &self));
            }
            self.visit_str(&number.to_string())
        }
    }

    macro_rules! text_serde {
        ($type:ty, $expecting:literal, $numbers:literal) => {
            impl<'de> Deserialize<'de> for $type {
                fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$type, D::Error> {
                    deserializer.deserialize_any(FromText(PhantomData, $expecting, $numbers))
                }
            }

            impl Serialize for $type {
                fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                    serializer.collect_str(self)
                }
            }
        };
    }

    text_serde!(Rate, "a positive decimal rate such as \"0.92\"", true);
    text_serde!(Percent, "a percentage such as \"7.25\"", true);
    text_serde!(CurrencyCode, "an ISO 4217 currency code such as \"USD\"", false);
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
    fn decimals_are_exact_and_plain() {
        let decimal: Decimal = "007.250".parse().unwrap();
        assert_eq!((decimal.units(), decimal.scale()), (725, 2));
        assert_eq!(decimal.to_string(), "7.25");
        assert_eq!(".5".parse::<Decimal>().unwrap().to_string(), "0.5");
        for bad in ["", ".", "-1", "+1", "1e3", "1.2.3", "abc", " 1 2", "0x10"] {
            assert!(bad.parse::<Decimal>().is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_are_positive_exact_fractions() {
        let rate: Rate = "0.92".parse().unwrap();
        assert_eq!((rate.numerator(), rate.denominator()), (92, 100));
        assert_eq!(rate.to_string(), "0.92");
        assert_eq!("150.5".parse::<Rate>().unwrap().to_string(), "150.5");
        for bad in ["0", "0.000", "-1", "abc", "", "1234567890123", "0.0000000000001"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }

    #[test]
    fn percentages_parse_to_basis_points() {
        let points = |text: &str| text.parse::<Percent>().ok().map(Percent::basis_points);
        assert_eq!(points("7.25"), Some(725));
        assert_eq!(points("10"), Some(1000));
        assert_eq!(points("0.5"), Some(50));
        assert_eq!(points("100"), Some(10_000));
        assert_eq!(points("0"), Some(0));
        for bad in ["101", "7.25551", "-1", "abc", ""] {
            assert_eq!(points(bad), None, "{bad}");
        }
        let nyc = "8.875".parse::<Percent>().unwrap();
        assert_eq!((nyc.parts_per_million(), nyc.basis_points(), nyc.in_basis_points()), (88_750, 887, false));
        assert_eq!(nyc.to_string(), "8.875");
        assert!("7.25".parse::<Percent>().unwrap().in_basis_points());
        assert_eq!("7.25".parse::<Percent>().unwrap().to_string(), "7.25");
        assert_eq!("10".parse::<Percent>().unwrap().to_string(), "10");
    }

    #[test]
    fn currency_codes_normalize_to_upper_case() {
        assert_eq!("eur".parse::<CurrencyCode>().unwrap().as_str(), "EUR");
        assert!("EURO".parse::<CurrencyCode>().is_err());
        assert!("E1R".parse::<CurrencyCode>().is_err());
    }

    #[test]
    fn currency_codes_are_three_upper_case_letters() {
        assert!(is_currency_code("USD"));
        assert!(!is_currency_code("usd"));
        assert!(!is_currency_code("US"));
    }
}
