//! The stored state of carts and checkouts: what the buyer and platform asked for. Prices,
//! totals, messages and status are computed from it (see `pricing`), never stored as truth.
//! Serde here is the storage encoding of the session, not the wire form.

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

/// One line as stored: our line id, the catalog item (variant) id and the quantity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    pub id: String,
    pub item_id: String,
    pub quantity: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buyer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

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

/// The platform's fulfillment choices: one shipping method for all lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FulfillmentChoice {
    pub destinations: Vec<Address>,
    pub selected_destination_id: Option<String>,
    pub selected_option_id: Option<String>,
}

/// Buyer context hints that change what we compute (tax and shipping region).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
}

/// A payment step that needs the buyer (3-D Secure), waiting on our handoff page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAuthentication {
    pub handler_id: String,
    pub instrument_type: String,
    /// The processor's reference for the challenge; the raw credential is never stored.
    pub reference: String,
    /// Set once the buyer passed the challenge on our page.
    pub approved: bool,
}

/// A cart or checkout session as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub kind: SessionKind,
    /// The stored lifecycle state: only `Completed` and `Canceled` are authoritative; the
    /// others are recomputed on every read.
    pub status: Status,
    pub currency: String,
    pub lines: Vec<Line>,
    /// The last number handed out for `li_N` line ids (0: none yet; the next id is `li_{next_line + 1}`);
    /// never reused within a session.
    pub next_line: u32,
    #[serde(default)]
    pub buyer: Option<Buyer>,
    #[serde(default)]
    pub context: Option<Context>,
    #[serde(default)]
    pub fulfillment: Option<FulfillmentChoice>,
    #[serde(default)]
    pub discount_codes: Vec<String>,
    #[serde(default)]
    pub cart_id: Option<String>,
    /// The platform profile URL that created the session (orders are visible to it).
    pub platform: String,
    #[serde(default)]
    pub attribution: Option<serde_json::Map<String, serde_json::Value>>,
    pub created_at: i64,
    pub expires_at: i64,
    #[serde(default)]
    pub order_id: Option<String>,
    #[serde(default)]
    pub pending_authentication: Option<PendingAuthentication>,
    /// Messages that outlive one call (a declined payment), cleared by the next update.
    #[serde(default)]
    pub sticky_messages: Vec<super::Message>,
    /// A completed checkout's body as it was at completion (without its `ucp` envelope):
    /// a completed checkout is immutable, so later reads show exactly what was bought and
    /// charged, not a re-pricing against today's stock and discount counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_body: Option<serde_json::Value>,
    /// Optimistic concurrency: the number of stored writes so far. A store writes a session
    /// only if its stored version still equals this one (then stores `version + 1`), so a
    /// writer working from a stale read cannot undo a concurrent change (a completion).
    #[serde(default)]
    pub version: u64,
}

impl Session {
    /// A new, empty, incomplete session that lives `ttl_secs` from `now`.
    pub fn new(id: String, kind: SessionKind, currency: String, platform: String, now: i64, ttl_secs: i64) -> Session {
        Session {
            id,
            kind,
            status: Status::Incomplete,
            currency,
            lines: Vec::new(),
            next_line: 0,
            buyer: None,
            context: None,
            fulfillment: None,
            discount_codes: Vec::new(),
            cart_id: None,
            platform,
            attribution: None,
            created_at: now,
            expires_at: now + ttl_secs,
            order_id: None,
            pending_authentication: None,
            sticky_messages: Vec::new(),
            final_body: None,
            version: 0,
        }
    }

    /// Replaces the lines, keeping the ids of lines the request names and numbering new ones.
    pub fn replace_lines(&mut self, requested: Vec<LineRequest>) {
        let mut lines = Vec::with_capacity(requested.len());
        for request in requested {
            // A named id is kept once: a second line naming the same id gets a fresh one.
            let keep = request
                .id
                .as_ref()
                .filter(|id| {
                    self.lines.iter().any(|line| &line.id == *id) && !lines.iter().any(|line: &Line| &line.id == *id)
                })
                .cloned();
            let id = keep.unwrap_or_else(|| {
                self.next_line += 1;
                format!("li_{}", self.next_line)
            });
            lines.push(Line { id, item_id: request.item_id, quantity: request.quantity });
        }
        self.lines = lines;
    }

    pub fn is_expired(&self, now: i64) -> bool {
        now >= self.expires_at
    }
}

/// A line as a request names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRequest {
    pub id: Option<String>,
    pub item_id: String,
    pub quantity: i64,
}
