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
    /// The order's version its request found (read before the request held the order): the
    /// change's record ids derive from it.
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
    /// The order records it, and the request that recorded it (or a later repeat) was told so
    /// (an [`super::OrderChange`] that `settles` it ends it so itself).
    Recorded,
    /// The order records it, recorded by the recovery sweeper: whoever asked for it was told it
    /// was pending, so the same request again is this refund, not a new one (until it is seen,
    /// within [`crate::commerce::REFUND_PATIENCE_SECS`] of its start).
    RecordedLater,
    /// The processor refused it: nothing was refunded.
    Refused,
    /// Given up before it was settled: past the sweeper's patience, the order no longer
    /// justifying it, or no processor left to ask. It may or may not have been made (an
    /// earlier ask may have gone unanswered); the log names its key, for the merchant to
    /// reconcile by hand: record it on the order if the processor made it, dismiss it if not.
    Abandoned,
    /// An abandoned refund the merchant found the processor did not make: the same request
    /// again is asked for under its key (as after a refusal), not refused as abandoned.
    Dismissed,
}

/// What storing a refund as pending found ([`super::CommerceStore::begin_refund`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundBegun {
    /// Pending: the caller's intent, or the same request's pending under another key (asked
    /// at another order version), which the caller settles instead.
    Pending(RefundIntent),
    /// The same request, recorded by the sweeper after its caller was told it was pending: now
    /// seen (it ends as [`RefundEnd::Recorded`]), and the caller's answer is the order.
    RecordedLater(RefundIntent),
    /// Nothing stored: asking would take back more than the order has left, the refunds
    /// recorded on it and those pending for other requests counted (`available` is what is
    /// left). Decided in the write that would store the intent, so two refunds asked at once
    /// cannot both pass on the same remainder.
    Exceeds { available: i64 },
    /// The caller's key ended otherwise (abandoned, or recorded): it is not asked for again
    /// (an abandoned one until the merchant dismisses it).
    Ended,
}

impl RefundEnd {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundEnd::Recorded => "recorded",
            RefundEnd::RecordedLater => "recorded_later",
            RefundEnd::Refused => "refused",
            RefundEnd::Abandoned => "abandoned",
            RefundEnd::Dismissed => "dismissed",
        }
    }
}

/// Where a refund is: pending, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundState {
    Pending,
    Ended(RefundEnd),
}

impl RefundState {
    pub fn as_str(self) -> &'static str {
        match self {
            RefundState::Pending => "pending",
            RefundState::Ended(end) => end.as_str(),
        }
    }

    pub fn parse(text: &str) -> Option<RefundState> {
        Some(match text {
            "pending" => RefundState::Pending,
            "recorded" => RefundState::Ended(RefundEnd::Recorded),
            "recorded_later" => RefundState::Ended(RefundEnd::RecordedLater),
            "refused" => RefundState::Ended(RefundEnd::Refused),
            "abandoned" => RefundState::Ended(RefundEnd::Abandoned),
            "dismissed" => RefundState::Ended(RefundEnd::Dismissed),
            _ => return None,
        })
    }
}

/// A refund as stored, for the merchant to reconcile (`ucpd orders refunds`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRefund {
    pub intent: RefundIntent,
    pub state: RefundState,
    /// Unix seconds, once it ended.
    pub ended_at: Option<i64>,
}

/// A page of refunds, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundList {
    pub refunds: Vec<StoredRefund>,
    /// Where the next page starts, when this one is full (there may be more).
    pub next: Option<RefundCursor>,
}

/// A place in the list of refunds (newest first): the creation time and row of the last refund
/// a page showed. A position, not a refund's key, so that it does not move when that refund is
/// asked for again (which gives it a new creation time). Written `<created_at>.<row>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefundCursor {
    pub created_at: i64,
    pub row: i64,
}

impl RefundCursor {
    /// The cursor `text` writes, as [`RefundCursor`]'s `Display` writes it (no sign but a
    /// leading `-`, no leading zeros), or `None`.
    pub fn parse(text: &str) -> Option<RefundCursor> {
        let (created_at, row) = text.split_once('.')?;
        let cursor = RefundCursor { created_at: created_at.parse().ok()?, row: row.parse().ok()? };
        (cursor.row >= 0 && cursor.to_string() == text).then_some(cursor)
    }
}

impl std::fmt::Display for RefundCursor {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}.{}", self.created_at, self.row)
    }
}

/// At most this many refunds in one list.
pub const MAX_REFUND_PAGE: u64 = 100;
