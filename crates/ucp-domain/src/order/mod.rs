//! Orders (order.md §1): what was bought, at what price, how it is to be fulfilled, and what
//! happened since. An order is made from a completed checkout and its final pricing; the
//! merchant's operations ([`changes`]) then append fulfillment events and adjustments and
//! re-derive the quantities and statuses. Serde here is the storage encoding, which is also
//! the UCP order body without its `ucp` envelope (orders written before this type existed
//! read back unchanged).

pub mod action;
pub mod changes;
mod pending;
mod share;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::checkout::{Address, Priced, Session, Total};
use crate::json::JsonMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Order {
    pub id: String,
    pub checkout_id: String,
    pub permalink_url: String,
    pub line_items: Vec<OrderLine>,
    pub fulfillment: OrderFulfillment,
    pub currency: String,
    pub totals: Vec<OrderTotal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<JsonMap>,
    /// Money and quantity changes after placement (refunds, cancellations, returns…),
    /// append-only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adjustments: Vec<Adjustment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderItem {
    pub id: String,
    pub title: String,
    pub price: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderQuantity {
    pub original: i64,
    pub total: i64,
    pub fulfilled: i64,
}

/// A line's derived status (order.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineStatus {
    Processing,
    Partial,
    Fulfilled,
    Removed,
}

impl LineStatus {
    /// order.md §1, never stored independently of the quantities: `total == 0` → removed,
    /// `fulfilled == total` → fulfilled, `fulfilled > 0` → partial, otherwise processing.
    pub fn of(quantity: &OrderQuantity) -> LineStatus {
        if quantity.total == 0 {
            LineStatus::Removed
        } else if quantity.fulfilled >= quantity.total {
            LineStatus::Fulfilled
        } else if quantity.fulfilled > 0 {
            LineStatus::Partial
        } else {
            LineStatus::Processing
        }
    }
}

/// The order as a whole, derived from its lines (our own summary for the merchant's list and
/// the buyer's page; the UCP order body has no order-level status).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    /// Nothing fulfilled yet.
    Processing,
    /// Some units fulfilled, some still to come.
    Partial,
    /// Every remaining unit fulfilled.
    Fulfilled,
    /// Every line removed before anything was fulfilled: nothing more can change.
    Canceled,
    /// Every line removed after some units were fulfilled (returned or canceled).
    Closed,
}

impl OrderStatus {
    pub const ALL: [OrderStatus; 5] = [
        OrderStatus::Processing,
        OrderStatus::Partial,
        OrderStatus::Fulfilled,
        OrderStatus::Canceled,
        OrderStatus::Closed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Processing => "processing",
            OrderStatus::Partial => "partial",
            OrderStatus::Fulfilled => "fulfilled",
            OrderStatus::Canceled => "canceled",
            OrderStatus::Closed => "closed",
        }
    }

    pub fn parse(text: &str) -> Option<OrderStatus> {
        OrderStatus::ALL.into_iter().find(|status| status.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderLine {
    pub id: String,
    pub item: OrderItem,
    pub quantity: OrderQuantity,
    pub totals: Vec<OrderTotal>,
    pub status: LineStatus,
}

/// A total as stored on an order: `type` is an owned string here (pricing's are static).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderTotal {
    #[serde(rename = "type")]
    pub kind: String,
    pub amount: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_text: Option<String>,
}

impl From<&Total> for OrderTotal {
    fn from(total: &Total) -> OrderTotal {
        OrderTotal { kind: total.kind.to_owned(), amount: total.amount, display_text: total.display_text.clone() }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderFulfillment {
    #[serde(default)]
    pub expectations: Vec<Expectation>,
    #[serde(default)]
    pub events: Vec<FulfillmentEvent>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedLine {
    pub id: String,
    pub quantity: i64,
}

/// How and where some lines are expected to be fulfilled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expectation {
    pub id: String,
    pub line_items: Vec<ExpectedLine>,
    pub method_type: String,
    pub destination: Address,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub fulfillable_on: String,
}

/// Something that happened to some lines (shipped, delivered, …), append-only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FulfillmentEvent {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub occurred_at: String,
    #[serde(default)]
    pub line_items: Vec<ExpectedLine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdjustmentStatus {
    Pending,
    Completed,
    Failed,
}

impl AdjustmentStatus {
    pub fn parse(text: &str) -> Option<AdjustmentStatus> {
        match text {
            "pending" => Some(AdjustmentStatus::Pending),
            "completed" => Some(AdjustmentStatus::Completed),
            "failed" => Some(AdjustmentStatus::Failed),
            _ => None,
        }
    }

    /// The status as its wire name (what [`AdjustmentStatus::parse`] reads).
    pub fn as_str(self) -> &'static str {
        match self {
            AdjustmentStatus::Pending => "pending",
            AdjustmentStatus::Completed => "completed",
            AdjustmentStatus::Failed => "failed",
        }
    }
}

/// A line an adjustment affects, with a signed quantity (negative: units taken off).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdjustedLine {
    pub id: String,
    pub quantity: i64,
}

/// A money or quantity change independent of shipping (refund, cancellation, return…);
/// `totals` are signed, negative for money back to the buyer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adjustment {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub occurred_at: String,
    pub status: AdjustmentStatus,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_items: Vec<AdjustedLine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<OrderTotal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl Order {
    /// The order a completed checkout becomes, from its final pricing.
    pub fn from_checkout(session: &Session, priced: &Priced, id: &str, permalink_url: &str) -> Order {
        let line_items = priced
            .lines
            .iter()
            .map(|line| OrderLine {
                id: line.id.clone(),
                item: OrderItem {
                    id: line.item_id.clone(),
                    title: line.title.clone(),
                    price: line.unit_price,
                    image_url: line.image_url.clone(),
                },
                quantity: OrderQuantity { original: line.quantity, total: line.quantity, fulfilled: 0 },
                totals: line.totals.iter().map(OrderTotal::from).collect(),
                status: LineStatus::Processing,
            })
            .collect();
        let mut expectations = Vec::new();
        if let Some(fulfillment) = &priced.fulfillment
            && let Some(destination) = fulfillment
                .selected_destination_id
                .as_ref()
                .and_then(|id| fulfillment.destinations.iter().find(|destination| &destination.id == id))
        {
            let description = fulfillment
                .group
                .as_ref()
                .and_then(|group| {
                    group
                        .selected_option_id
                        .as_ref()
                        .and_then(|id| group.options.iter().find(|option| &option.id == id))
                })
                .map(|option| {
                    format!("{}: arrives in {}-{} business days", option.title, option.min_days, option.max_days)
                });
            expectations.push(Expectation {
                id: "exp_1".into(),
                line_items: priced
                    .lines
                    .iter()
                    .map(|line| ExpectedLine { id: line.id.clone(), quantity: line.quantity })
                    .collect(),
                method_type: "shipping".into(),
                destination: destination.address.clone(),
                description,
                fulfillable_on: "now".into(),
            });
        }
        Order {
            id: id.to_owned(),
            checkout_id: session.id.clone(),
            permalink_url: permalink_url.to_owned(),
            line_items,
            fulfillment: OrderFulfillment { expectations, events: Vec::new() },
            currency: session.currency.clone(),
            totals: priced.totals.iter().map(OrderTotal::from).collect(),
            attribution: session.attribution.clone(),
            adjustments: Vec::new(),
        }
    }

    /// The order-level summary of the line statuses.
    pub fn status(&self) -> OrderStatus {
        let statuses: Vec<LineStatus> = self.line_items.iter().map(|line| LineStatus::of(&line.quantity)).collect();
        if statuses.iter().all(|status| *status == LineStatus::Removed) {
            let ever_fulfilled = self.fulfillment.events.iter().any(|event| event.kind == changes::SHIPPED);
            return if ever_fulfilled { OrderStatus::Closed } else { OrderStatus::Canceled };
        }
        let live = statuses.iter().filter(|status| **status != LineStatus::Removed);
        if live.clone().all(|status| *status == LineStatus::Fulfilled) {
            OrderStatus::Fulfilled
        } else if live.clone().any(|status| matches!(status, LineStatus::Fulfilled | LineStatus::Partial)) {
            OrderStatus::Partial
        } else {
            OrderStatus::Processing
        }
    }

    /// Money given back so far: completed refunds and cancellations, as a positive amount.
    pub fn refunded(&self) -> i64 {
        self.adjustments
            .iter()
            .filter(|adjustment| {
                adjustment.status == AdjustmentStatus::Completed
                    && matches!(adjustment.kind.as_str(), changes::REFUND | changes::CANCELLATION)
            })
            .flat_map(|adjustment| adjustment.totals.iter().filter(|total| total.kind == "total"))
            .map(|total| -total.amount)
            .sum()
    }
}
