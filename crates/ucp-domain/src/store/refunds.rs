//! A merchant's refund as stored before its processor is asked: the intent that makes the
//! refund and its record on the order one outcome, whatever fails between them.

use crate::order::action::OrderAction;

/// A refund kept from before its processor is asked until the order records it (or the
/// processor refuses it). While it is pending, the same request again settles it rather than
/// making a refund of its own, and the recovery sweeper settles it when nobody does: the
/// processor is asked again under the same key, and the order records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundIntent {
    /// Our processor key, which is also the id of the adjustment that records the refund.
    pub key: String,
    pub order_id: String,
    /// The order's version when it was asked for: the change's record ids derive from it.
    pub version: i64,
    /// The request, applied again to the order as it is when the refund is recorded.
    pub action: OrderAction,
    /// Minor units refunded.
    pub amount: i64,
    /// Unix seconds.
    pub created_at: i64,
}

/// How a pending refund ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundEnd {
    /// The order records it (an [`super::OrderChange`] that `settles` it ends it so itself).
    Recorded,
    /// The processor refused it: nothing was refunded.
    Refused,
    /// Given up: past the sweeper's patience, or made but not recordable on the order. The
    /// log says which; the merchant reconciles by hand.
    Abandoned,
}

impl RefundEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundEnd::Recorded => "recorded",
            RefundEnd::Refused => "refused",
            RefundEnd::Abandoned => "abandoned",
        }
    }
}
