//! The small value types a session and its pricing share: the lifecycle status, the kind of
//! session, and a postal address.

use serde::{Deserialize, Serialize};

/// Lifecycle of a checkout (checkout.md §2). Carts only use `Incomplete`/`Canceled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Incomplete,
    RequiresEscalation,
    ReadyForComplete,
    CompleteInProgress,
    Completed,
    Canceled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Incomplete => "incomplete",
            Status::RequiresEscalation => "requires_escalation",
            Status::ReadyForComplete => "ready_for_complete",
            Status::CompleteInProgress => "complete_in_progress",
            Status::Completed => "completed",
            Status::Canceled => "canceled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Canceled)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    Cart,
    Checkout,
}

/// A postal address (`types/postal_address.json`), as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Address {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub street_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_locality: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}
