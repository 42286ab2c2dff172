//! Orders (order.md §1): what was bought, at what price, and how it is to be fulfilled. An
//! order is made once from a completed checkout and its final pricing. Serde here is the
//! storage encoding, which is also the UCP order body without its `ucp` envelope (orders
//! written before this type existed read back unchanged).

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

/// Something that happened to some lines (shipped, delivered, …). None are recorded yet:
/// merchant order operations are planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FulfillmentEvent {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub occurred_at: String,
    #[serde(default)]
    pub line_items: Vec<ExpectedLine>,
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
        }
    }
}
