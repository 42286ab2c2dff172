//! Response bodies of every resource, typed: carts and checkouts (with the fulfillment and
//! discount extensions), orders and catalog answers; the resource-less error response is
//! [`ErrorResponse`]. Their JSON Schemas (`tools/list`, OpenAPI) are derived from these types.
//! Each is built from a domain view and serialized straight from borrowed data.
//!
//! The `ucp` member is a type parameter: the server passes its negotiated envelope.

mod catalog;
mod order;
mod rendered;
mod session;
pub mod shapes;
mod sink;
mod split;
pub mod stored;
mod time;

pub use catalog::{LookupBody, ProductBody, SearchBody};
pub use order::OrderBody;
pub use session::{Links, SessionBody};
pub use sink::Sink;
pub use time::rfc3339;

use schemars::JsonSchema;
use serde::Serialize;
use ucp_domain::checkout::Total;

pub use crate::error_response::ErrorResponse;
pub use crate::message::Message;

/// A total (`types/total.json`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WireTotal<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub amount: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_text: Option<&'a str>,
}

impl<'a> From<&'a Total> for WireTotal<'a> {
    fn from(total: &'a Total) -> WireTotal<'a> {
        WireTotal { kind: total.kind, amount: total.amount, display_text: total.display_text.as_deref() }
    }
}

pub(crate) fn totals(totals: &[Total]) -> Vec<WireTotal<'_>> {
    totals.iter().map(WireTotal::from).collect()
}
