//! Cart and checkout request bodies: tolerant of unknown and response-only fields, strict on
//! what we act on (quantities, ids, line counts).

use serde::Deserialize;
use serde_json::Value;
use ucp_domain::checkout::{Address, Buyer, Context, FulfillmentChoice};

use super::{MAX_LINES, MAX_QUANTITY};
use crate::error::ApiError;

#[derive(Debug, Clone, Deserialize)]
pub struct LineItemRequest {
    #[serde(default)]
    pub id: Option<String>,
    pub item: ItemRequest,
    pub quantity: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ItemRequest {
    pub id: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct DiscountsRequest {
    #[serde(default)]
    pub codes: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CartRequest {
    #[serde(default)]
    pub id: Option<String>,
    pub line_items: Vec<LineItemRequest>,
    #[serde(default)]
    pub buyer: Option<Buyer>,
    #[serde(default)]
    pub context: Option<Context>,
    #[serde(default)]
    pub discounts: Option<DiscountsRequest>,
    #[serde(default)]
    pub attribution: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct CheckoutRequest {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub line_items: Option<Vec<LineItemRequest>>,
    #[serde(default)]
    pub buyer: Option<Buyer>,
    #[serde(default)]
    pub context: Option<Context>,
    #[serde(default)]
    pub fulfillment: Option<FulfillmentRequest>,
    #[serde(default)]
    pub discounts: Option<DiscountsRequest>,
    #[serde(default)]
    pub cart_id: Option<String>,
    #[serde(default)]
    pub payment: Option<PaymentRequest>,
    #[serde(default)]
    pub attribution: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FulfillmentRequest {
    #[serde(default)]
    pub methods: Vec<MethodRequest>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MethodRequest {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub destinations: Vec<Address>,
    #[serde(default)]
    pub selected_destination_id: Option<String>,
    #[serde(default)]
    pub groups: Vec<GroupRequest>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GroupRequest {
    #[serde(default)]
    pub selected_option_id: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PaymentRequest {
    #[serde(default)]
    pub instruments: Vec<InstrumentRequest>,
}

#[derive(Clone, Deserialize)]
pub struct InstrumentRequest {
    #[serde(default)]
    pub id: Option<String>,
    pub handler_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub credential: Option<CredentialRequest>,
}

/// A payment credential. Its `Debug` never shows the token.
#[derive(Clone, Deserialize)]
pub struct CredentialRequest {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub token: Option<String>,
}

impl std::fmt::Debug for InstrumentRequest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("InstrumentRequest")
            .field("id", &self.id)
            .field("handler_id", &self.handler_id)
            .field("kind", &self.kind)
            .field("credential", &self.credential)
            .finish()
    }
}

impl std::fmt::Debug for CredentialRequest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("CredentialRequest").field("kind", &self.kind).field("token", &"[redacted]").finish()
    }
}

impl FulfillmentRequest {
    /// The one shipping method we support; pickup requests are ignored (we offer no pickup).
    pub fn into_choice(self) -> Option<FulfillmentChoice> {
        let method =
            self.methods.into_iter().find(|method| method.kind.as_deref().is_none_or(|kind| kind == "shipping"))?;
        let selected_option_id = method.groups.into_iter().find_map(|group| group.selected_option_id);
        Some(FulfillmentChoice {
            destinations: method.destinations,
            selected_destination_id: method.selected_destination_id,
            selected_option_id,
        })
    }
}

fn check_lines(member: &str, lines: &[LineItemRequest]) -> Result<(), ApiError> {
    if lines.len() > MAX_LINES {
        return Err(ApiError::invalid_params(format!(
            "{member}.line_items has {} lines; at most {MAX_LINES} are allowed",
            lines.len()
        )));
    }
    let mut seen_ids: Vec<&str> = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        if line.quantity < 1 {
            return Err(ApiError::invalid_params(format!("{member}.line_items[{index}].quantity must be at least 1")));
        }
        if line.quantity > MAX_QUANTITY {
            return Err(ApiError::invalid_params(format!(
                "{member}.line_items[{index}].quantity must be at most {MAX_QUANTITY}"
            )));
        }
        if line.item.id.trim().is_empty() {
            return Err(ApiError::invalid_params(format!("{member}.line_items[{index}].item.id must not be empty")));
        }
        if let Some(id) = &line.id {
            if seen_ids.contains(&id.as_str()) {
                return Err(ApiError::invalid_params(format!("{member}.line_items[{index}].id {id:?} appears twice")));
            }
            seen_ids.push(id);
        }
    }
    Ok(())
}

/// The resource id inside a payload may only repeat the target id.
fn check_id(member: &str, body_id: Option<&str>, target: Option<&str>) -> Result<(), ApiError> {
    match (body_id, target) {
        (Some(body), Some(target)) if body != target => Err(ApiError::invalid_params(format!(
            "{member}.id {body:?} disagrees with the id argument {target:?}; leave it out"
        ))),
        _ => Ok(()),
    }
}

impl CartRequest {
    pub fn validate(&self, member: &str, target: Option<&str>) -> Result<(), ApiError> {
        check_id(member, self.id.as_deref(), target)?;
        check_lines(member, &self.line_items)
    }
}

impl CheckoutRequest {
    pub fn validate(&self, member: &str, target: Option<&str>) -> Result<(), ApiError> {
        check_id(member, self.id.as_deref(), target)?;
        if let Some(lines) = &self.line_items {
            check_lines(member, lines)?;
        }
        if let Some(discounts) = &self.discounts
            && discounts.codes.len() > 20
        {
            return Err(ApiError::invalid_params(format!("{member}.discounts.codes holds more than 20 codes")));
        }
        Ok(())
    }
}
