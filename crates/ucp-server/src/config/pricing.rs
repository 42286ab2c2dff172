//! The pricing rules of the settings file, `[[shipping]]`, `[[taxes]]` and `[[discounts]]`,
//! already typed at load, and their plain conversion into the domain's [`PricingRules`].

use serde::{Deserialize, Serialize};
use ucp_domain::checkout::{
    DiscountKind, DiscountRule, PricingRules, ShippingRate, ShippingRules, ShippingZone, TaxRate,
};
use ucp_domain::money::{MAX_AMOUNT, Percent};

use super::values;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShippingZoneSettings {
    pub name: String,
    /// ISO 3166-1 alpha-2 country codes, upper-cased at load.
    #[serde(deserialize_with = "values::country_codes")]
    pub countries: Vec<String>,
    /// Region codes (e.g. US states), upper-cased at load; empty means the whole country.
    #[serde(default, deserialize_with = "values::region_codes")]
    pub regions: Vec<String>,
    pub options: Vec<ShippingOptionSettings>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShippingOptionSettings {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub carrier: Option<String>,
    /// Flat price in minor units.
    pub amount: i64,
    /// Added per started kilogram, in minor units.
    #[serde(default)]
    pub per_kg: i64,
    /// Free when the discounted item subtotal reaches this (minor units).
    #[serde(default)]
    pub free_above: Option<i64>,
    pub min_days: u32,
    pub max_days: u32,
}

impl ShippingZoneSettings {
    /// A zone a checkout can offer as it is: countries and options, and options a buyer can
    /// tell apart (ids and titles unique in the zone: checklist 143) with prices that are not
    /// negative and a delivery window that does not end before it starts.
    pub(super) fn validate(&self) -> Result<(), super::ConfigError> {
        let zone = &self.name;
        let refuse = |problem: String| Err(super::ConfigError(format!("shipping zone {zone:?}: {problem}")));
        if self.options.is_empty() || self.countries.is_empty() {
            return refuse("needs countries and options".into());
        }
        for (index, option) in self.options.iter().enumerate() {
            let earlier = &self.options[..index];
            if option.id.trim().is_empty() || option.title.trim().is_empty() {
                return refuse(format!("option {index} needs an id and a title"));
            }
            if earlier.iter().any(|other| other.id == option.id) {
                return refuse(format!("two options have the id {:?}", option.id));
            }
            if earlier.iter().any(|other| other.title == option.title) {
                return refuse(format!(
                    "two options have the title {:?}; a buyer could not tell them apart",
                    option.title
                ));
            }
            if option.amount < 0 || option.per_kg < 0 || option.free_above.is_some_and(|above| above < 0) {
                return refuse(format!("option {:?} has a negative amount, per_kg or free_above", option.id));
            }
            if option.min_days > option.max_days {
                return refuse(format!("option {:?} has min_days after max_days", option.id));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaxSettings {
    /// ISO 3166-1 alpha-2, upper-cased at load.
    #[serde(deserialize_with = "values::country_code")]
    pub country: String,
    #[serde(default, deserialize_with = "values::optional_region")]
    pub region: Option<String>,
    /// Written as a percent string: `"7.25"`, `"8.875"` (at most four decimals).
    pub rate: Percent,
    #[serde(default, deserialize_with = "values::flag")]
    pub shipping_taxable: bool,
}

/// A discount code or automatic promotion. In the file its kind and value are two keys:
/// `kind = "percentage", value = "10"` (percent), `kind = "fixed_amount", value = "500"`
/// (minor units) or `kind = "free_shipping"`; `expires_at` is RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(try_from = "DiscountFile", into = "DiscountFile")]
pub struct DiscountSettings {
    /// The code buyers enter; absent for an automatic promotion.
    pub code: Option<String>,
    pub title: String,
    pub kind: DiscountKind,
    pub min_subtotal: Option<i64>,
    pub product_ids: Vec<String>,
    pub categories: Vec<String>,
    /// Unix seconds after which the code no longer works.
    pub expires_at: Option<i64>,
    pub usage_limit: Option<u64>,
    pub combinable: bool,
}

/// A discount as the file writes it.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct DiscountFile {
    #[serde(default)]
    code: Option<String>,
    title: String,
    kind: KindName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Scalar>,
    #[serde(default)]
    min_subtotal: Option<i64>,
    #[serde(default, deserialize_with = "values::list")]
    product_ids: Vec<String>,
    #[serde(default, deserialize_with = "values::list")]
    categories: Vec<String>,
    #[serde(default)]
    expires_at: Option<String>,
    #[serde(default)]
    usage_limit: Option<u64>,
    #[serde(default, deserialize_with = "values::flag")]
    combinable: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
enum KindName {
    Percentage,
    FixedAmount,
    FreeShipping,
}

/// A value written as a string or a bare number (`value = "10"`, `value = 10`, `value = 12.5`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Whole(i64),
    /// Read back through its shortest decimal (12.5 is "12.5"), as a tax rate's number is.
    Decimal(f64),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Text(text) => text.trim().to_owned(),
            Scalar::Whole(number) => number.to_string(),
            Scalar::Decimal(number) => number.to_string(),
        }
    }
}

impl TryFrom<DiscountFile> for DiscountSettings {
    type Error = String;

    fn try_from(file: DiscountFile) -> Result<DiscountSettings, String> {
        let named = |reason: String| format!("discount {:?}: {reason}", file.title);
        let value = file.value.as_ref().map(Scalar::text);
        let kind = match (file.kind, value) {
            (KindName::Percentage, Some(value)) => {
                let percent = value.parse::<Percent>().ok().filter(|percent| percent.in_basis_points());
                let Some(percent) = percent else {
                    return Err(named(format!("value {value:?} is not a percentage (0 to 100, at most two decimals)")));
                };
                DiscountKind::Percentage(percent.basis_points())
            }
            (KindName::FixedAmount, Some(value)) => match value.parse::<i64>() {
                Ok(amount) if amount > 0 && amount <= MAX_AMOUNT => DiscountKind::FixedAmount(amount),
                _ => return Err(named(format!("value {value:?} must be a positive amount in minor units"))),
            },
            (KindName::FreeShipping, None) => DiscountKind::FreeShipping,
            (KindName::FreeShipping, Some(_)) => return Err(named("free_shipping takes no value".into())),
            (_, None) => return Err(named("a percentage or fixed_amount needs a value".into())),
        };
        let expires_at = match &file.expires_at {
            Some(text) => Some(
                time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                    .map_err(|error| named(format!("expires_at {text:?} is not RFC 3339: {error}")))?
                    .unix_timestamp(),
            ),
            None => None,
        };
        Ok(DiscountSettings {
            code: file.code,
            title: file.title,
            kind,
            min_subtotal: file.min_subtotal,
            product_ids: file.product_ids,
            categories: file.categories,
            expires_at,
            usage_limit: file.usage_limit,
            combinable: file.combinable,
        })
    }
}

impl From<DiscountSettings> for DiscountFile {
    fn from(discount: DiscountSettings) -> DiscountFile {
        let (kind, value) = match discount.kind {
            DiscountKind::Percentage(points) => {
                let percent = u16::try_from(points).ok().and_then(Percent::from_basis_points);
                (
                    KindName::Percentage,
                    Some(Scalar::Text(percent.map_or_else(|| points.to_string(), |p| p.to_string()))),
                )
            }
            DiscountKind::FixedAmount(amount) => (KindName::FixedAmount, Some(Scalar::Text(amount.to_string()))),
            DiscountKind::FreeShipping => (KindName::FreeShipping, None),
        };
        let expires_at = discount.expires_at.and_then(|seconds| {
            time::OffsetDateTime::from_unix_timestamp(seconds)
                .ok()?
                .format(&time::format_description::well_known::Rfc3339)
                .ok()
        });
        DiscountFile {
            code: discount.code,
            title: discount.title,
            kind,
            value,
            min_subtotal: discount.min_subtotal,
            product_ids: discount.product_ids,
            categories: discount.categories,
            expires_at,
            usage_limit: discount.usage_limit,
            combinable: discount.combinable,
        }
    }
}

impl From<&DiscountSettings> for DiscountRule {
    fn from(discount: &DiscountSettings) -> DiscountRule {
        DiscountRule {
            code: discount.code.clone(),
            title: discount.title.clone(),
            kind: discount.kind,
            min_subtotal: discount.min_subtotal,
            product_ids: discount.product_ids.clone(),
            categories: discount.categories.clone(),
            expires_at: discount.expires_at,
            usage_limit: discount.usage_limit,
            combinable: discount.combinable,
        }
    }
}

/// The domain's pricing rules from settings that were typed at load: a copy, never a parse.
pub(super) fn pricing_rules(
    shipping: &[ShippingZoneSettings],
    taxes: &[TaxSettings],
    discounts: &[DiscountSettings],
    require_email: bool,
) -> PricingRules {
    PricingRules {
        shipping: ShippingRules {
            zones: shipping
                .iter()
                .map(|zone| ShippingZone {
                    name: zone.name.clone(),
                    countries: zone.countries.clone(),
                    regions: zone.regions.clone(),
                    options: zone
                        .options
                        .iter()
                        .map(|option| ShippingRate {
                            id: option.id.clone(),
                            title: option.title.clone(),
                            description: option.description.clone(),
                            carrier: option.carrier.clone(),
                            amount: option.amount,
                            per_kg: option.per_kg,
                            free_above: option.free_above,
                            min_days: option.min_days,
                            max_days: option.max_days,
                        })
                        .collect(),
                })
                .collect(),
        },
        taxes: taxes
            .iter()
            .map(|tax| TaxRate {
                country: tax.country.clone(),
                region: tax.region.clone(),
                parts_per_million: tax.rate.parts_per_million(),
                shipping_taxable: tax.shipping_taxable,
            })
            .collect(),
        discounts: discounts.iter().map(DiscountRule::from).collect(),
        require_email,
        ..PricingRules::default()
    }
}

fn shipping_option(
    id: &str,
    title: &str,
    amount: i64,
    free_above: Option<i64>,
    days: (u32, u32),
) -> ShippingOptionSettings {
    ShippingOptionSettings {
        id: id.into(),
        title: title.into(),
        description: Some(format!("Arrives in {}-{} business days.", days.0, days.1)),
        carrier: None,
        amount,
        per_kg: 0,
        free_above,
        min_days: days.0,
        max_days: days.1,
    }
}

/// The demo shop's zones: replace them in your configuration.
pub(super) fn demo_shipping() -> Vec<ShippingZoneSettings> {
    vec![
        ShippingZoneSettings {
            name: "United States".into(),
            countries: vec!["US".into()],
            regions: vec![],
            options: vec![
                shipping_option("standard", "Standard shipping", 599, Some(5000), (3, 5)),
                shipping_option("express", "Express shipping", 1999, None, (1, 2)),
            ],
        },
        ShippingZoneSettings {
            name: "Canada and Europe".into(),
            countries: ["CA", "GB", "DE", "FR", "NL", "ES", "IT", "IE"].iter().map(|code| code.to_string()).collect(),
            regions: vec![],
            options: vec![shipping_option("international", "International shipping", 1999, Some(15000), (5, 10))],
        },
    ]
}

pub(super) fn demo_taxes() -> Vec<TaxSettings> {
    let tax = |region: &str, basis_points: u16, shipping_taxable: bool| TaxSettings {
        country: "US".into(),
        region: Some(region.into()),
        rate: Percent::from_basis_points(basis_points).unwrap_or_default(),
        shipping_taxable,
    };
    vec![tax("CA", 725, false), tax("NY", 400, true)]
}

pub(super) fn demo_discounts() -> Vec<DiscountSettings> {
    let discount = |code: &str, title: &str, kind: DiscountKind, min_subtotal: Option<i64>| DiscountSettings {
        code: Some(code.into()),
        title: title.into(),
        kind,
        min_subtotal,
        product_ids: vec![],
        categories: vec![],
        expires_at: None,
        usage_limit: None,
        combinable: false,
    };
    vec![
        discount("WELCOME10", "10% off your order", DiscountKind::Percentage(1000), None),
        discount("SAVE5", "$5 off orders of $50 or more", DiscountKind::FixedAmount(500), Some(5000)),
        discount("FREESHIP", "Free shipping", DiscountKind::FreeShipping, None),
    ]
}
