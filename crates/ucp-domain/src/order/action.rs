//! What a merchant asks of an order ([`OrderAction`]), as the operations receive it, the ids
//! derived from it, and the encoding a refund intent keeps it in until it is recorded
//! (`store::RefundIntent`): serde's, with field names that must not change while an intent
//! written by an older build may still be pending.

use serde::{Deserialize, Serialize};

use super::AdjustmentStatus;

/// Some units of one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineQuantity {
    pub id: String,
    pub quantity: i64,
}

/// Tracking details of a shipment (or of a return parcel).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tracking {
    pub carrier: Option<String>,
    pub tracking_number: Option<String>,
    pub tracking_url: Option<String>,
}

/// What the merchant asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum OrderAction {
    /// Hand units to a carrier: they count as fulfilled. Tracking number and URL required.
    Ship { lines: Vec<LineQuantity>, tracking: Tracking, description: Option<String> },
    /// Shipped units reached the buyer; `None`: every shipped unit not yet delivered.
    Deliver { lines: Option<Vec<LineQuantity>>, description: Option<String> },
    /// A delivery attempt of shipped units failed.
    FailDelivery { lines: Option<Vec<LineQuantity>>, description: Option<String> },
    /// Fulfilled units came back: they leave the line's total (money back is a refund).
    Return { lines: Vec<LineQuantity>, tracking: Tracking, description: Option<String> },
    /// Units not yet fulfilled will never be; `None`: all of them. Money back for them.
    Cancel { lines: Option<Vec<LineQuantity>>, amount: Option<i64>, description: Option<String> },
    /// Money back to the buyer, at most what was paid minus what was refunded.
    Refund { amount: i64, description: Option<String> },
    /// Any other recorded adjustment (credit, price_adjustment, dispute…); moves no money
    /// through the processor.
    Adjust { kind: String, amount: i64, status: AdjustmentStatus, description: Option<String> },
}

impl OrderAction {
    /// The request as the parts that identify it, for the ids derived from it
    /// (`commerce::orders::record_id`, so the processor's refund key): written out here, not
    /// taken from `Debug`, so that they stay the same across builds. `~` is a field not given,
    /// `=` starts one given.
    pub fn identity(&self) -> Vec<String> {
        fn text(value: &Option<String>) -> String {
            value.as_ref().map_or_else(|| "~".to_owned(), |value| format!("={value}"))
        }
        fn lines(parts: &mut Vec<String>, lines: &[LineQuantity]) {
            parts.push(format!("={}", lines.len()));
            parts.extend(lines.iter().flat_map(|line| [line.id.clone(), line.quantity.to_string()]));
        }
        fn some_lines(parts: &mut Vec<String>, given: &Option<Vec<LineQuantity>>) {
            match given {
                Some(given) => lines(parts, given),
                None => parts.push("~".to_owned()),
            }
        }
        fn tracking(parts: &mut Vec<String>, tracking: &Tracking) {
            parts.extend([text(&tracking.carrier), text(&tracking.tracking_number), text(&tracking.tracking_url)]);
        }
        let mut parts = vec![self.name().to_owned()];
        match self {
            OrderAction::Ship { lines: given, tracking: shipped, description }
            | OrderAction::Return { lines: given, tracking: shipped, description } => {
                lines(&mut parts, given);
                tracking(&mut parts, shipped);
                parts.push(text(description));
            }
            OrderAction::Deliver { lines: given, description }
            | OrderAction::FailDelivery { lines: given, description } => {
                some_lines(&mut parts, given);
                parts.push(text(description));
            }
            OrderAction::Cancel { lines: given, amount, description } => {
                some_lines(&mut parts, given);
                parts.push(amount.map_or_else(|| "~".to_owned(), |amount| format!("={amount}")));
                parts.push(text(description));
            }
            OrderAction::Refund { amount, description } => {
                parts.push(amount.to_string());
                parts.push(text(description));
            }
            OrderAction::Adjust { kind, amount, status, description } => {
                parts.extend([kind.clone(), amount.to_string(), status.as_str().to_owned(), text(description)]);
            }
        }
        parts
    }

    /// Whether the request can give money back through the processor (`changes::apply` sets
    /// `Applied::refund` for these alone), and so can have a refund pending.
    pub fn moves_money(&self) -> bool {
        matches!(self, OrderAction::Cancel { .. } | OrderAction::Refund { .. })
    }

    /// The merchant's note on the request, if any.
    pub fn description(&self) -> Option<&String> {
        match self {
            OrderAction::Ship { description, .. }
            | OrderAction::Deliver { description, .. }
            | OrderAction::FailDelivery { description, .. }
            | OrderAction::Return { description, .. }
            | OrderAction::Cancel { description, .. }
            | OrderAction::Refund { description, .. }
            | OrderAction::Adjust { description, .. } => description.as_ref(),
        }
    }

    /// The operation's name, for the log.
    pub fn name(&self) -> &'static str {
        match self {
            OrderAction::Ship { .. } => "ship",
            OrderAction::Deliver { .. } => "deliver",
            OrderAction::FailDelivery { .. } => "fail_delivery",
            OrderAction::Return { .. } => "return",
            OrderAction::Cancel { .. } => "cancel",
            OrderAction::Refund { .. } => "refund",
            OrderAction::Adjust { .. } => "adjust",
        }
    }
}
