//! Response bodies of every resource, typed: carts and checkouts (with the fulfillment and
//! discount extensions), orders, catalog answers, and the resource-less error response.
//! Each is built from a domain view and serialized straight from borrowed data.
//!
//! The `ucp` member is a type parameter: the server passes its negotiated envelope.

mod catalog;
mod order;
mod session;
mod time;

pub use catalog::{LookupBody, ProductBody, SearchBody};
pub use order::OrderBody;
pub use session::{Links, SessionBody};
pub use time::rfc3339;

use serde::Serialize;
use ucp_domain::checkout::{Message, MessageKind, Total};
use ucp_domain::commerce::Refusal;

/// A UCP message (`types/message.json`).
#[derive(Debug, Clone, Serialize)]
pub struct WireMessage<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub code: &'a str,
    pub content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
}

impl<'a> From<&'a Message> for WireMessage<'a> {
    fn from(message: &'a Message) -> WireMessage<'a> {
        WireMessage {
            kind: match message.kind {
                MessageKind::Error => "error",
                MessageKind::Warning => "warning",
                MessageKind::Info => "info",
            },
            code: &message.code,
            content: &message.content,
            severity: message.severity.map(|severity| severity.as_str()),
            path: message.path.as_deref(),
        }
    }
}

/// A total (`types/total.json`).
#[derive(Debug, Clone, Serialize)]
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

/// The `ucp` member of an error response.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorUcp<'a> {
    pub version: &'a str,
    pub status: &'static str,
}

/// A business outcome with no resource (`shopping/types/error_response.json`): `ucp.status`
/// is `error` and one unrecoverable message.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorBody<'a> {
    pub ucp: ErrorUcp<'a>,
    pub messages: [WireMessage<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
}

impl<'a> ErrorBody<'a> {
    /// `continue_url` is the business's base URL (the buyer can carry on at the shop).
    pub fn new(version: &'a str, code: &'a str, content: &'a str, base_url: Option<&str>) -> ErrorBody<'a> {
        ErrorBody {
            ucp: ErrorUcp { version, status: "error" },
            messages: [WireMessage { kind: "error", code, content, severity: Some("unrecoverable"), path: None }],
            continue_url: base_url.map(|url| format!("{url}/")),
        }
    }

    pub fn refusal(version: &'a str, refusal: &'a Refusal, base_url: Option<&str>) -> ErrorBody<'a> {
        ErrorBody::new(version, refusal.code.as_str(), &refusal.content, base_url)
    }
}
