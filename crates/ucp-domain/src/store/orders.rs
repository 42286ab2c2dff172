//! Orders as stored, and what changes them: an order's placement, its merchant changes (one
//! transaction each, under the order's version) and the hold that keeps a merchant change of
//! one order from interleaving with another.

use crate::checkout::Session;

use super::{RefundEnd, StoreError};

/// An order as stored, with the platform it belongs to.
#[derive(Debug, Clone)]
pub struct StoredOrder {
    pub id: String,
    pub checkout_id: String,
    pub platform: String,
    pub order: crate::order::Order,
    pub created_at: i64,
    /// Where this order's webhooks go: set when the order capability was negotiated with its
    /// platform and the platform's profile names a `webhook_url` (checklist 157).
    pub webhook: Option<crate::webhook::WebhookTarget>,
    /// Raised by one on every change (optimistic concurrency).
    pub version: i64,
    /// The charge the order was paid with (orders placed before it was recorded: `None`).
    pub payment: Option<OrderPayment>,
}

/// The charge behind an order: what a refund gives back against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPayment {
    pub handler_id: String,
    /// The processor's reference of the approved charge.
    pub reference: String,
    /// Minor units charged.
    pub amount: i64,
    pub currency: String,
}

/// One change of an order, written in one transaction: the records appended to its event log,
/// the order document as it becomes (`order.version` is the version it was read at), and a
/// webhook announcing it.
#[derive(Debug, Clone)]
pub struct OrderChange {
    pub order: StoredOrder,
    pub records: Vec<crate::order::changes::OrderRecord>,
    /// The webhook event type (`order.updated`).
    pub webhook: &'static str,
    /// The key of the pending refund this change records, and how it ends (recorded, or
    /// recorded later by the sweeper), in the same transaction.
    pub settles: Option<(String, RefundEnd)>,
    /// Units that go back on sale, by variant id, in the same transaction: a cancel's, which
    /// never left (a return's do not: what comes back may not be fit to sell again).
    pub restock: Vec<(String, i64)>,
}

/// Which orders a merchant lists: newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderQuery {
    pub status: Option<crate::order::OrderStatus>,
    pub limit: usize,
    /// Orders strictly older than this `(created_at, id)` position.
    pub before: Option<(i64, String)>,
}

/// What [`CommerceStore::insert_checkout_of_cart`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum CartCheckout {
    /// The new checkout was stored.
    Inserted,
    /// The cart already has this open checkout; nothing was stored.
    Open(Box<Session>),
    /// The cart is canceled, gone or already bought (then it is ended, if it was still open);
    /// nothing was stored.
    CartDone,
    /// A checkout of the cart past its expiry is still being completed (recovery may place
    /// its order): nothing was stored; asking again once it settles gets an answer.
    Completing,
}

/// Everything that changes when an order is placed, written in one transaction.
#[derive(Debug, Clone)]
pub struct PlaceOrder {
    /// The checkout, already marked completed with its order id.
    pub checkout: Session,
    pub order: StoredOrder,
    /// Units to take from stock, by variant id.
    pub stock: Vec<(String, i64)>,
    /// Discount codes (upper-case) whose use this order counts, with each code's usage limit:
    /// the count is checked and raised in the same transaction, so concurrent orders cannot
    /// exceed a limit.
    pub used_codes: Vec<(String, Option<u64>)>,
}

/// Why an order could not be placed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum PlaceOrderError {
    #[error("not enough stock of {variant_id}")]
    OutOfStock { variant_id: String },
    /// The checkout changed state meanwhile (completed or canceled by another request).
    #[error("the checkout is no longer open")]
    NotOpen,
    /// A discount code reached its usage limit meanwhile.
    #[error("discount code {code} has reached its usage limit")]
    DiscountExhausted { code: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Which orders a merchant's list shows: newest first, at most `limit`, optionally of one
/// platform, matching a search, or older than a position (keyset paging).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderFilter {
    /// Only orders of this platform (profile URL, exactly).
    pub platform: Option<String>,
    /// A substring of the order id, checkout id or platform (case-insensitive).
    pub query: Option<String>,
    /// How many orders at most; the store clamps it to [`OrderFilter::MAX_LIMIT`].
    pub limit: usize,
    /// Only orders created before this instant (Unix seconds): where the previous page ended.
    pub before: Option<i64>,
}

impl OrderFilter {
    /// The most orders one list returns.
    pub const MAX_LIMIT: usize = 200;
}

/// A merchant change's hold on one order ([`super::CommerceStore::hold_order`]): released when
/// dropped.
pub struct OrderHold {
    _guard: Box<dyn Send + Sync>,
}

impl OrderHold {
    /// A hold that lasts as long as `guard` is kept.
    pub fn new(guard: impl Send + Sync + 'static) -> OrderHold {
        OrderHold { _guard: Box::new(guard) }
    }
}

impl std::fmt::Debug for OrderHold {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("OrderHold")
    }
}
