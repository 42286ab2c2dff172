//! Schema-only mirrors of the domain types requests carry (ucp-domain does not depend on
//! schemars): what `tools/list` publishes for them. Deserialization uses the domain types.

use schemars::JsonSchema;

/// Who is buying.
#[derive(JsonSchema)]
pub struct Buyer {
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// E.164
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

/// Provisional buyer context: address_country, address_region, postal_code, intent, language, currency, eligibility.
#[derive(JsonSchema)]
pub struct Context {
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Reverse-domain claims. None is recognized: each of the first 16 is echoed with an
    /// `eligibility_not_accepted` warning; a value that is not one, one sent twice, and any past
    /// the 16th are ignored.
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub eligibility: Option<Vec<String>>,
}

/// A postal address (`shopping/types/postal_address.json`).
#[derive(JsonSchema)]
pub struct PostalAddress {
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub street_address: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub extended_address: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub address_locality: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    /// ISO 3166-1 alpha-2
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

/// One option selection (`shopping/types/selected_option.json`).
#[derive(JsonSchema)]
pub struct SelectedOption {
    pub name: String,
    pub label: String,
    #[schemars(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}
