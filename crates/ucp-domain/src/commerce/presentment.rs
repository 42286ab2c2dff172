//! The currency a catalog answer is presented in, and exact conversion into it.

use crate::catalog::{Product, Shown};
use crate::checkout::Message;
use crate::money::{MAX_AMOUNT, Price, Rate, currency_exponent};

use super::CommerceSettings;

#[derive(Debug, Clone)]
pub(super) struct Presentment {
    base: String,
    pub(super) currency: String,
    rate: Option<Rate>,
    /// The request asked for a currency we do not offer: prices show in `base`, and a price
    /// filter (in the asked currency) cannot be applied.
    unoffered: bool,
}

impl Presentment {
    /// The requested currency when we have a rate for it; else the catalog's, with a message
    /// that also says a price filter (`price_filtered`), being in the requested currency, was
    /// not applied (price_filter.json: a filter we cannot honour is ignored and said so).
    pub(super) fn choose(
        settings: &CommerceSettings,
        requested: Option<&str>,
        price_filtered: bool,
    ) -> (Presentment, Option<Message>) {
        let base = settings.currency.clone();
        match requested.map(str::to_uppercase) {
            Some(code) if code != base => match settings.exchange_rates.get(&code) {
                Some(rate) => (Presentment { base, currency: code, rate: Some(*rate), unoffered: false }, None),
                None => {
                    let ignored =
                        if price_filtered { " The price filter, in that currency, was not applied." } else { "" };
                    let message = Message::info(
                        "currency_unavailable",
                        format!("Prices are shown in {base}; {code} is not offered.{ignored}"),
                        None,
                    );
                    (Presentment { currency: base.clone(), base, rate: None, unoffered: true }, Some(message))
                }
            },
            _ => (Presentment { currency: base.clone(), base, rate: None, unoffered: false }, None),
        }
    }

    /// Whether a price filter in the requested currency can be applied.
    pub(super) fn filters_prices(&self) -> bool {
        !self.unoffered
    }

    /// Converts an amount of the catalog currency into the presentment currency (half up).
    pub(super) fn present(&self, amount: i64) -> i64 {
        let Some(rate) = self.rate else { return amount };
        let scale_from = 10i128.pow(currency_exponent(&self.base));
        let scale_to = 10i128.pow(currency_exponent(&self.currency));
        let numerator = i128::from(amount) * rate.numerator() * scale_to;
        let denominator = rate.denominator() * scale_from;
        ((numerator * 2 + denominator) / (denominator * 2)) as i64
    }

    /// Converts a filter bound in the presentment currency back into catalog minor units.
    pub(super) fn to_base(&self, amount: u64, round_up: bool) -> i64 {
        let amount = amount.min(MAX_AMOUNT as u64) as i128;
        let Some(rate) = self.rate else { return amount as i64 };
        let scale_from = 10i128.pow(currency_exponent(&self.base));
        let scale_to = 10i128.pow(currency_exponent(&self.currency));
        let numerator = amount * rate.denominator() * scale_from;
        let denominator = rate.numerator() * scale_to;
        let quotient = numerator / denominator;
        let rounded = if round_up && numerator % denominator != 0 { quotient + 1 } else { quotient };
        rounded.min(i128::from(i64::MAX)) as i64
    }

    /// Whether prices show in the catalog's own currency (nothing to convert).
    pub(super) fn is_base(&self) -> bool {
        self.rate.is_none()
    }

    /// [`Presentment::apply`] to a shown product, which becomes a copy only when its prices change.
    pub(super) fn apply_shown(&self, shown: &mut Shown) {
        if self.rate.is_some() {
            self.apply(shown.make_changed());
        }
    }

    pub(super) fn apply(&self, product: &mut Product) {
        if self.rate.is_none() {
            return;
        }
        let convert = |price: &mut Price| {
            price.amount = self.present(price.amount);
            price.currency = self.currency.clone();
        };
        convert(&mut product.price_range.min);
        convert(&mut product.price_range.max);
        if let Some(range) = &mut product.list_price_range {
            convert(&mut range.min);
            convert(&mut range.max);
        }
        for variant in &mut product.variants {
            convert(&mut variant.price);
            if let Some(list_price) = &mut variant.list_price {
                convert(list_price);
            }
            // A unit price would need its own conversion; it is informational, so leave it out.
            variant.unit_price = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_convert_with_exponents_and_round_half_up() {
        let presentment =
            Presentment { base: "USD".into(), currency: "JPY".into(), rate: "150.5".parse().ok(), unoffered: false };
        assert_eq!(presentment.present(1999), 3008); // 19.99 USD * 150.5 = 3008.495 JPY
        let presentment =
            Presentment { base: "USD".into(), currency: "EUR".into(), rate: "0.92".parse().ok(), unoffered: false };
        assert_eq!(presentment.present(1000), 920);
        assert_eq!(presentment.to_base(920, false), 1000);
        assert_eq!(presentment.to_base(921, true), 1002);
    }
}
