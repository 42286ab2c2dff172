//! What the operations take: requested lines, cart and checkout bodies, payment instruments.

use crate::checkout::{Buyer, Context, FulfillmentChoice};
use crate::json::JsonMap;

use super::Error;

/// A requested line: our line id to keep (if any), the item (variant id, SKU or product id)
/// and the quantity. Bounds are checked where the request was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInput {
    pub id: Option<String>,
    pub item_id: String,
    pub quantity: i64,
}

/// A cart create or update (full replacement).
#[derive(Debug, Clone, Default)]
pub struct CartInput {
    pub lines: Vec<LineInput>,
    pub buyer: Option<Buyer>,
    pub context: Option<Context>,
    /// `None`: no discounts member was sent.
    pub discount_codes: Option<Vec<String>>,
    pub attribution: Option<JsonMap>,
}

/// A checkout create, update (full replacement) or complete.
#[derive(Debug, Clone, Default)]
pub struct CheckoutInput {
    /// Required on update; on create, required unless `cart_id` is given.
    pub lines: Option<Vec<LineInput>>,
    pub buyer: Option<Buyer>,
    pub context: Option<Context>,
    pub fulfillment: Option<FulfillmentChoice>,
    pub discount_codes: Option<Vec<String>>,
    pub cart_id: Option<String>,
    pub attribution: Option<JsonMap>,
    /// Only read by complete.
    pub payment: Option<Payment>,
}

#[derive(Debug, Clone, Default)]
pub struct Payment {
    pub instruments: Vec<Instrument>,
}

/// A payment instrument. Its `Debug` never shows the token.
#[derive(Clone)]
pub struct Instrument {
    pub handler_id: String,
    pub kind: String,
    pub token: Option<String>,
}

impl std::fmt::Debug for Instrument {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Instrument")
            .field("handler_id", &self.handler_id)
            .field("kind", &self.kind)
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// Most discount codes one checkout may carry.
pub const MAX_CODES: usize = 20;

/// Carts and checkouts alike carry at most [`MAX_CODES`] discount codes.
pub(super) fn check_code_count(member: &str, codes: Option<&[String]>) -> Result<(), Error> {
    match codes {
        Some(codes) if codes.len() > MAX_CODES => {
            Err(Error::invalid(format!("{member}.discounts.codes holds more than {MAX_CODES} codes")))
        }
        _ => Ok(()),
    }
}
