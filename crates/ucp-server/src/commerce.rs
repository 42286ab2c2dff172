//! From configuration to the domain's pricing rules.

use ucp_domain::checkout::{
    DiscountKind, DiscountRule, PricingRules, ShippingRate, ShippingRules, ShippingZone, TaxRate,
};

use crate::config::{DiscountSettings, Settings};

/// `"7.25"` percent → 725 basis points. At most two decimals.
pub fn percent_to_basis_points(text: &str) -> Option<i64> {
    let text = text.trim();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || fraction.len() > 2 || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: i64 = whole.parse().ok()?;
    let fraction: i64 = format!("{fraction:0<2}").parse().ok()?;
    let points = whole.checked_mul(100)?.checked_add(fraction)?;
    (0..=10_000).contains(&points).then_some(points)
}

/// A configured discount as a domain rule, or why it is not one.
pub fn discount_rule(settings: &DiscountSettings) -> Result<DiscountRule, String> {
    let kind = match settings.kind.as_str() {
        "percentage" => {
            let value = settings.value.as_deref().ok_or("a percentage needs a value")?;
            DiscountKind::Percentage(percent_to_basis_points(value).ok_or("value is not a percentage (0-100)")?)
        }
        "fixed_amount" => {
            let value = settings.value.as_deref().ok_or("a fixed amount needs a value")?;
            let amount: i64 = value.trim().parse().map_err(|_| "value must be an amount in minor units")?;
            if amount <= 0 {
                return Err("value must be positive".into());
            }
            DiscountKind::FixedAmount(amount)
        }
        "free_shipping" => DiscountKind::FreeShipping,
        other => return Err(format!("unknown kind {other:?} (percentage, fixed_amount, free_shipping)")),
    };
    let expires_at = match &settings.expires_at {
        Some(text) => Some(
            time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                .map_err(|error| format!("expires_at {text:?}: {error}"))?
                .unix_timestamp(),
        ),
        None => None,
    };
    Ok(DiscountRule {
        code: settings.code.clone(),
        title: settings.title.clone(),
        kind,
        min_subtotal: settings.min_subtotal,
        product_ids: settings.product_ids.clone(),
        categories: settings.categories.clone(),
        expires_at,
        usage_limit: settings.usage_limit,
        combinable: settings.combinable,
    })
}

/// The pricing rules of this business (validated at start, so conversion cannot fail here).
pub fn pricing_rules(settings: &Settings) -> PricingRules {
    PricingRules {
        shipping: ShippingRules {
            zones: settings
                .shipping
                .iter()
                .map(|zone| ShippingZone {
                    name: zone.name.clone(),
                    countries: zone.countries.iter().map(|code| code.to_uppercase()).collect(),
                    regions: zone.regions.iter().map(|code| code.to_uppercase()).collect(),
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
        taxes: settings
            .taxes
            .iter()
            .filter_map(|tax| {
                Some(TaxRate {
                    country: tax.country.to_uppercase(),
                    region: tax.region.as_ref().map(|region| region.to_uppercase()),
                    basis_points: percent_to_basis_points(&tax.rate)?,
                    shipping_taxable: tax.shipping_taxable,
                })
            })
            .collect(),
        discounts: settings.discounts.iter().filter_map(|discount| discount_rule(discount).ok()).collect(),
        require_email: settings.checkout.require_email,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_to_basis_points() {
        assert_eq!(percent_to_basis_points("7.25"), Some(725));
        assert_eq!(percent_to_basis_points("10"), Some(1000));
        assert_eq!(percent_to_basis_points("0.5"), Some(50));
        assert_eq!(percent_to_basis_points("100"), Some(10_000));
        for bad in ["101", "7.255", "-1", "abc", ""] {
            assert_eq!(percent_to_basis_points(bad), None, "{bad}");
        }
    }
}
