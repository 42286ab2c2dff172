//! Tax rates: what pricing charges and what a partial cancel gives back of it. A module of
//! its own, which imports nothing, so the order's rules can read rates without the checkout's.

/// A tax rate (parts per million: 72,500 = 7.25 %, 88,750 = 8.875 %) for a country, optionally
/// one region of it.
#[derive(Debug, Clone)]
pub struct TaxRate {
    pub country: String,
    pub region: Option<String>,
    pub parts_per_million: i64,
    /// Whether shipping is taxed too.
    pub shipping_taxable: bool,
}

impl TaxRate {
    /// The rate for (country, region): the region's, else the country's.
    pub fn find<'a>(rates: &'a [TaxRate], country: &str, region: Option<&str>) -> Option<&'a TaxRate> {
        let region = region.map(str::to_uppercase);
        rates
            .iter()
            .find(|rate| {
                rate.country == country
                    && rate.region.is_some()
                    && rate.region.as_deref().map(str::to_uppercase) == region
            })
            .or_else(|| rates.iter().find(|rate| rate.country == country && rate.region.is_none()))
    }

    /// The tax on `base`, rounded half up.
    pub fn on(&self, base: i64) -> i64 {
        let tax = (i128::from(base) * i128::from(self.parts_per_million) * 2 + 1_000_000) / 2_000_000;
        i64::try_from(tax).unwrap_or(i64::MAX)
    }
}
