//! The storage traits the use cases need. Backends live in `ucp-store`; nothing here knows SQL.

use async_trait::async_trait;

use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::{Product, Served};
use crate::checkout::Session;

mod idempotency;
mod orders;
mod refunds;
mod traffic;

pub use idempotency::{ClaimTerms, IdempotencyClaim, IdempotencyScope, IdempotencyStore, StoredReply};
pub use orders::{
    CartCheckout, OrderChange, OrderFilter, OrderHold, OrderPayment, OrderQuery, PlaceOrder, PlaceOrderError,
    StoredOrder,
};
pub use refunds::{
    MAX_REFUND_PAGE, RefundBegun, RefundCursor, RefundEnd, RefundIntent, RefundList, RefundState, StoredRefund,
};
pub use traffic::{TrafficCount, TrafficKind, TrafficStore};

/// What can go wrong below the domain. Backends map their own errors into these.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("conflict on {constraint}")]
    Conflict { constraint: String },
    #[error("not found")]
    NotFound,
    /// For now only, and the call took no effect: nothing of a write was stored (the store
    /// was busy, or the wait for it ran out before the write began), so a retry is safe and
    /// the caller may act as if the write never happened (settle.rs keeps an approved charge
    /// for a later order on it). A write whose outcome is unknown is never this.
    #[error("storage is unavailable: {0}")]
    Unavailable(String),
    /// A write whose outcome is unknown: its commit failed where its changes may already be on
    /// disk (SQLite ended the transaction itself on an I/O error or a full disk while
    /// committing; for a networked store, the connection lost during COMMIT). Whoever acts on
    /// the outcome (a refund) must not take it for "not stored", nor trust a read at once:
    /// SQLite's own process reads such a write as absent though a restart may find it. It
    /// leaves the decision to something that settles it later (settle.rs keeps an approved
    /// charge claimed, in doubt, for recovery), or tells its caller to check before repeating.
    #[error("storage failure; the write may or may not have been stored: {0}")]
    InDoubt(String),
    /// Anything else: the write (if one) was not stored, or there was none.
    #[error("storage failure: {0}")]
    Backend(String),
}

/// What has waited past recovery's delay without an outcome: checkouts whose charge is in
/// doubt, or merchants' refunds not yet recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StuckSummary {
    pub count: u64,
    /// When the oldest one started (unix seconds).
    pub oldest_started_at: Option<i64>,
}

/// A catalog search as the store executes it: already validated and clamped.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// Free-text terms (already split into words); empty browses by filters in catalog order.
    pub terms: Vec<String>,
    /// Whether a product must contain every term or any of them.
    pub match_all_terms: bool,
    /// OR within the list; matched case-insensitively against category values and their
    /// ancestors in `A > B > C` paths.
    pub categories: Vec<String>,
    /// Inclusive bounds on variant prices, in the catalog's own currency minor units.
    pub price_min: Option<i64>,
    pub price_max: Option<i64>,
    pub limit: usize,
    /// Where the previous page ended.
    pub after: Option<SearchPosition>,
}

/// A keyset position in a result ordering: relevance score (0 when browsing) and row order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchPosition {
    pub score: f64,
    pub row: i64,
}

#[derive(Debug, Clone)]
pub struct SearchPage {
    pub products: Vec<Arc<Served>>,
    /// Set when more results follow; the position of the last product of this page.
    pub next: Option<SearchPosition>,
    pub total_count: Option<u64>,
}

/// How a lookup id matched a variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The id names the variant itself (variant id, SKU, barcode).
    Exact,
    /// The id names the product (product id, handle); the variant was picked to represent it.
    Featured,
}

/// One id resolved to one product, and which variant of it the id names.
#[derive(Debug, Clone)]
pub struct Resolution {
    pub input: String,
    pub product_id: String,
    /// `Some` when the id named a variant; `None` when it named the product.
    pub variant_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    pub products_inserted: u64,
    pub products_updated: u64,
    pub variants: u64,
}

/// Which products of some resolutions to read ([`CatalogStore::resolve_products`]).
pub type Pick = fn(&[Resolution]) -> Vec<String>;

/// The distinct products `resolutions` name, in the order first named.
pub fn resolved_products(resolutions: &[Resolution]) -> Vec<String> {
    let mut seen = std::collections::HashSet::with_capacity(resolutions.len());
    resolutions
        .iter()
        .filter(|resolution| seen.insert(resolution.product_id.as_str()))
        .map(|resolution| resolution.product_id.clone())
        .collect()
}

/// Products for [`CatalogStore::import_products`], pulled one at a time. An `Err` stops the
/// import: nothing of it is written.
pub type ProductStream = Box<dyn Iterator<Item = Result<Product, StoreError>> + Send>;

#[async_trait]
pub trait CatalogStore: Send + Sync + std::fmt::Debug {
    async fn search(&self, query: &SearchQuery) -> Result<SearchPage, StoreError>;

    /// Resolves each id as a product id, variant id, SKU, barcode or handle (all that apply).
    /// Of an id's product matches, the product whose own id it is comes first (catalog.md §4:
    /// a product id resolves to that product, though it may be another product's handle).
    async fn resolve(&self, ids: &[String]) -> Result<Vec<Resolution>, StoreError>;

    /// Products by their ids, in no particular order; unknown ids are skipped. Shared, as
    /// served: a read copies nothing.
    async fn products(&self, product_ids: &[String]) -> Result<Vec<Arc<Served>>, StoreError>;

    /// [`CatalogStore::resolve`] the ids, then [`CatalogStore::products`] the products `pick`
    /// names among the resolutions ([`resolved_products`]: all of them): what a lookup, a
    /// get_product and a cart's items read. A store may do both in one trip (SQLite does, on
    /// one reader, when either misses its cache).
    async fn resolve_products(
        &self,
        ids: &[String],
        pick: Pick,
    ) -> Result<(Vec<Resolution>, Vec<Arc<Served>>), StoreError> {
        let resolutions = self.resolve(ids).await?;
        let products = self.products(&pick(&resolutions)).await?;
        Ok((resolutions, products))
    }

    /// Inserts or replaces (by product id) every product in one transaction: all or nothing.
    async fn upsert_products(&self, products: Vec<Product>) -> Result<ImportSummary, StoreError> {
        self.import_products(Box::new(products.into_iter().map(Ok))).await
    }

    /// Inserts or replaces (by product id) every product of the stream in one transaction, all
    /// or nothing, without holding them all: the stream is drained as it is written. The first
    /// `Err` it yields stops the import, which then writes nothing and returns that error.
    async fn import_products(&self, products: ProductStream) -> Result<ImportSummary, StoreError>;

    async fn product_count(&self) -> Result<u64, StoreError>;

    /// Picks up catalog changes made elsewhere (another process's import): rebuilds derived
    /// state such as search indexes. Returns whether anything changed.
    async fn refresh(&self) -> Result<bool, StoreError> {
        Ok(false)
    }
}

/// The schema a store has and the one this build expects (`/readyz`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchemaStatus {
    pub current: i64,
    pub expected: i64,
}

impl SchemaStatus {
    pub fn is_current(&self) -> bool {
        self.current == self.expected
    }
}

/// Carts, checkouts and orders.
#[async_trait]
pub trait CommerceStore: Send + Sync + std::fmt::Debug {
    async fn insert_session(&self, session: &Session) -> Result<(), StoreError>;

    async fn session(&self, id: &str) -> Result<Option<Session>, StoreError>;

    /// Replaces a stored session if it is still at `session.version` and neither completed nor
    /// canceled (optimistic concurrency); `Conflict` otherwise, `NotFound` if it does not exist.
    async fn update_session(&self, session: &Session) -> Result<(), StoreError>;

    /// The newest open (not completed, not canceled, not expired) checkout `platform` created
    /// from `cart_id`.
    async fn open_checkout_for_cart(
        &self,
        cart_id: &str,
        platform: &str,
        now: i64,
    ) -> Result<Option<Session>, StoreError>;

    /// Inserts `session`, a checkout made from its cart, unless an open checkout of that cart
    /// for its platform exists (as [`CommerceStore::open_checkout_for_cart`] finds it at
    /// `now`), which it answers instead, or the cart is done (canceled, gone, or already
    /// bought: a completed checkout of it for its platform, when an open cart is ended too) or
    /// a checkout of it past its expiry is still being completed, when it inserts nothing. All
    /// in one atomic step, so of creates racing for one cart one inserts and the others answer
    /// its checkout (checklist 116), and a create racing the order of the cart's checkout
    /// cannot open a second purchase of it. A store shared by several servers must hold a lock on
    /// the cart (or a unique constraint) across the looks and the insert.
    async fn insert_checkout_of_cart(&self, session: &Session, now: i64) -> Result<CartCheckout, StoreError>;

    /// Takes stock, counts discount uses, writes the order (and its "order created" webhook
    /// event when it has a webhook target) and completes the checkout, all or nothing. Fails with `NotOpen` if the checkout was completed or canceled since.
    async fn place_order(&self, order: PlaceOrder) -> Result<(), PlaceOrderError>;

    async fn order(&self, id: &str) -> Result<Option<StoredOrder>, StoreError>;

    /// Orders newest first per `filter` (a merchant's list; never a platform's).
    async fn list_orders(&self, filter: &OrderFilter) -> Result<Vec<StoredOrder>, StoreError>;

    /// How many orders each platform placed at or after `since` (Unix seconds; all when
    /// `None`): the funnel's last step, counted from the orders themselves.
    async fn order_counts(&self, since: Option<i64>) -> Result<Vec<(String, u64)>, StoreError>;

    /// The schema version stored and the one this build migrates to; also proves the store
    /// answers (`/readyz`).
    async fn schema_status(&self) -> Result<SchemaStatus, StoreError>;
    /// Appends the change's records and replaces the order document, if the stored order is
    /// still at `change.order.version` (stored as `version + 1`), puts its `restock` units back
    /// in stock (a variant whose stock is not tracked, or that left the catalog, is skipped)
    /// and enqueues its webhook: all or nothing. `Conflict` if it changed meanwhile, `NotFound` if it does not exist.
    async fn apply_order_change(&self, change: &OrderChange) -> Result<(), StoreError>;

    /// Holds order `id` for one merchant change, from reading the order until its record
    /// (with any refund between): a change of the same order waits for the hold to drop, so a
    /// change is always worked out on the version its record lands on. (Two partial cancels at
    /// once would otherwise both refund the first unit's share, and the second, recorded as the
    /// last unit with the rest of the shipping and tax, be abandoned with its refund made.)
    /// `Unavailable` when the order stays held past `wait` (zero: only if it is free now). A
    /// store shared by several servers must hold it across them (PostgreSQL: an advisory lock
    /// on a connection of its own).
    async fn hold_order(&self, id: &str, wait: std::time::Duration) -> Result<OrderHold, StoreError>;

    /// Orders newest first, at most `query.limit`.
    async fn orders(&self, query: &OrderQuery) -> Result<Vec<StoredOrder>, StoreError>;

    /// How many orders used each code (upper-case).
    async fn discount_uses(&self, codes: &[String]) -> Result<HashMap<String, u64>, StoreError>;

    /// Marks sessions whose `expires_at` has passed as canceled; returns how many. A checkout
    /// `complete_in_progress` with a recorded payment attempt is skipped: its charge is
    /// unresolved, and recovery settles it first.
    async fn expire_sessions(&self, now: i64) -> Result<u64, StoreError>;

    /// At most `limit` checkouts `complete_in_progress` with a payment attempt started at or
    /// before `started_before`, oldest first (recovery asks the processor about each).
    async fn stuck_checkouts(&self, started_before: i64, limit: u64) -> Result<Vec<Session>, StoreError>;

    /// How many checkouts [`CommerceStore::stuck_checkouts`] would list with no limit, and
    /// when the oldest of their payment attempts started.
    async fn stuck_summary(&self, started_before: i64) -> Result<StuckSummary, StoreError>;

    /// Deletes at most `limit` carts and checkouts that expired at or before `expired_before`,
    /// except completed checkouts, any checkout an order was made from, and any with an
    /// unresolved payment attempt; returns how many.
    async fn delete_expired_sessions(&self, expired_before: i64, limit: u64) -> Result<u64, StoreError>;

    /// Stores `intent` as pending, durably, in one write, and answers what it found
    /// ([`RefundBegun`]): the same request (order and action) pending already; or recorded
    /// later by the sweeper and started at or after `seen_since`, which is marked seen; or else
    /// `intent` stored (a refused one with its key is pending again), unless its key ended
    /// otherwise.
    async fn begin_refund(&self, intent: &RefundIntent, seen_since: i64) -> Result<RefundBegun, StoreError>;

    /// The refund of the same request recorded later by the sweeper and started at or after
    /// `seen_since`, marked seen as `begin_refund` does: for a repeat the order now refuses (a
    /// cancel of the order that cancel canceled), which is that request all the same.
    async fn claim_recorded_later(
        &self,
        order_id: &str,
        action: &crate::order::changes::OrderAction,
        seen_since: i64,
    ) -> Result<Option<RefundIntent>, StoreError>;

    /// Whether the refund `key` is pending (read before it is asked for again).
    async fn refund_pending(&self, key: &str) -> Result<bool, StoreError>;

    /// The refunds that hold part of one order's money (and a cancel's units): the pending
    /// ones, then the abandoned ones, which the processor may have made, until the merchant
    /// records or dismisses them; at most [`MAX_PENDING_REFUNDS`] of each, oldest first. One
    /// whose request no longer decodes is left out (and logged).
    async fn holding_refunds(&self, order_id: &str) -> Result<Vec<StoredRefund>, StoreError>;

    /// At most `limit` pending refunds created at or before `created_before`, oldest first
    /// (the recovery sweeper settles each).
    async fn stale_refunds(&self, created_before: i64, limit: u64) -> Result<Vec<RefundIntent>, StoreError>;

    /// How many refunds [`CommerceStore::stale_refunds`] would list with no limit, and when the
    /// oldest was created.
    async fn stale_refunds_summary(&self, created_before: i64) -> Result<StuckSummary, StoreError>;

    /// Ends a pending refund (nothing when it has ended already; an abandoned one may be
    /// dismissed, and an abandoned or dismissed one recorded or refused after all); whether it
    /// changed the refund.
    async fn end_refund(&self, key: &str, end: RefundEnd) -> Result<bool, StoreError>;

    /// The refund `key`, in whatever state.
    async fn refund(&self, key: &str) -> Result<Option<StoredRefund>, StoreError>;

    /// Refunds newest first (all states, or one), at most `limit` (clamped to
    /// [`MAX_REFUND_PAGE`]), after `before` in that order when it is given; one whose request
    /// does not decode is left out (and logged).
    async fn refunds(
        &self,
        state: Option<RefundState>,
        limit: u64,
        before: Option<RefundCursor>,
    ) -> Result<RefundList, StoreError>;

    /// How many refunds are in `state`.
    async fn refund_count(&self, state: RefundState) -> Result<u64, StoreError>;
}

/// At most this many pending refunds of one order are read back.
pub const MAX_PENDING_REFUNDS: u64 = 100;

/// The order-webhook outbox (order.md §3). Events are added by the order changes themselves,
/// inside their transactions (so nothing here enqueues); a dispatcher claims due events under a
/// lease, so instances sharing a database never deliver one event at the same time, and records
/// every attempt in the delivery log.
#[async_trait]
pub trait WebhookOutbox: Send + Sync + std::fmt::Debug {
    /// A dispatcher's round, in one transaction: logs the `finished` attempts and applies
    /// their outcomes (delivered, retry at, dead), releasing their leases (an attempt whose
    /// lease lapsed meanwhile is logged all the same; a delivery counts whoever made it), then
    /// leases up to `claim.limit` pending events that are due, not leased by a live claim, not
    /// behind an earlier pending event of the same order (each order's events go out in
    /// order), and of platforms with fewer than `claim.per_platform` events leased: oldest due
    /// first. A `claim.limit` of 0 only records.
    async fn record_and_claim(
        &self,
        finished: &[crate::webhook::AttemptRecord],
        claim: crate::webhook::ClaimRequest<'_>,
    ) -> Result<Vec<crate::webhook::WebhookEvent>, StoreError>;

    /// Resolves when this process may have committed new webhook events (or made an order's
    /// next event due) since the last call, so a dispatcher need not wait for its next poll.
    /// Events written by other instances are found by polling; the default never resolves.
    async fn enqueued(&self) {
        std::future::pending::<()>().await;
    }

    /// What is waiting: pending and dead-lettered events (not superseded ones), and when the
    /// oldest pending one was committed (`/metrics`).
    async fn backlog(&self) -> Result<crate::webhook::Backlog, StoreError>;

    /// The newest events first, at most `limit`, optionally of one status. A dead-lettered
    /// event whose order has changed since it was written (its order's version is past the
    /// event's) is `Superseded`.
    async fn list_events(
        &self,
        status: Option<crate::webhook::EventStatus>,
        limit: usize,
    ) -> Result<Vec<crate::webhook::EventSummary>, StoreError>;

    /// Makes the selected events pending and due at `now_ms` with a fresh horizon (their
    /// attempts so far stay in the log), each only if it is pending or its order is still at
    /// the event's version: one whose order has changed since is superseded and left as it is
    /// (a platform must never get an older order after a newer one), and its order's event at
    /// the order's version is made due in its place when that one is dead-lettered (so the
    /// latest order still goes out). One atomic decision: no change of the order may commit
    /// between the comparison of versions and the revival (on PostgreSQL, hold the order row,
    /// `FOR SHARE`, in the same transaction).
    async fn retry_events(
        &self,
        selector: &crate::webhook::RetrySelector,
        now_ms: i64,
    ) -> Result<crate::webhook::Retried, StoreError>;

    /// Deletes finished events (delivered or dead-lettered) created, and if revived revived,
    /// before `before_ms`, with their attempts and order snapshots: at most `limit`, the oldest
    /// delivered first, then the oldest dead-lettered; returns how many. A pending event is
    /// never deleted, whatever its age.
    async fn prune_finished(&self, before_ms: i64, limit: u64) -> Result<u64, StoreError>;
}
