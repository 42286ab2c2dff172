//! The commerce core: the one API every transport calls. One method per UCP operation, each
//! taking a typed request and answering a typed result: the resource and its messages, a
//! business refusal (not found, out of stock, …), or an [`Error`] whose [`Error::code`] the
//! transports map through their one table.
//!
//! [`Commerce`] holds the ports it needs (catalog and commerce stores, the clock, payment
//! handlers, notifications, cursors, page links) and the merchant's pricing rules; it does no I/O itself.

mod cart;
mod catalog;
mod checkout;
mod complete;
mod error;
mod inputs;
mod items;
mod orders;
mod presentment;
mod reapply;
mod reconcile;
mod recovery;
mod refunds;
mod session;
mod settle;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use catalog::{
    CatalogFilters, Cursor, CursorError, Cursors, LookupRequest, LookupResults, ProductRequest, ProductView,
    SEARCH_RESULT_VARIANTS, SearchKey, SearchRequest, SearchResults,
};
pub use error::{Error, ErrorCode};
pub use inputs::{CartInput, CheckoutInput, Instrument, LineInput, MAX_CODES, Payment};
pub use orders::{MAX_ORDER_PAGE, MerchantOrder, OrderFilter, OrderOutcome};
pub use reconcile::{Dismissal, RefundPage};
pub use recovery::{Overdue, Recovered};
pub use refunds::{REFUND_PATIENCE_SECS, RefundsSettled};

use crate::catalog::Served;
use crate::checkout::{Message, Priced, PricingRules, Session};
use crate::money::Rate;
use crate::order::Order;
use crate::payment::Handlers;
use crate::store::{CatalogStore, CommerceStore};

/// Time as an input, so expiry is testable without sleeping.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Unix seconds now.
    fn now(&self) -> i64;
}

/// Which buyer page a link opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    Cart,
    Checkout,
    Order,
}

impl Page {
    pub fn as_str(self) -> &'static str {
        match self {
            Page::Cart => "cart",
            Page::Checkout => "checkout",
            Page::Order => "order",
        }
    }
}

/// The absolute URLs of the buyer pages (`continue_url`, order permalinks). A port: the
/// server makes them unguessable (a per-resource token); the core only stores and returns them.
pub trait PageLinks: Send + Sync + std::fmt::Debug {
    fn url(&self, page: Page, id: &str) -> String;
}

/// Tells the buyer (and, later, platforms) about placed orders. Never fails the order: an
/// implementation logs its own failures.
pub trait Notifier: Send + Sync + std::fmt::Debug {
    fn order_placed(&self, checkout: &Session, order: &Order);
}

/// What the business decided that is not pricing: currency, page sizes, lifetimes.
#[derive(Debug, Clone)]
pub struct CommerceSettings {
    /// The catalog's (and every session's) currency, ISO 4217.
    pub currency: String,
    /// Presentment currencies: code → units of it per unit of `currency`.
    pub exchange_rates: BTreeMap<String, Rate>,
    pub default_page_size: usize,
    pub max_page_size: usize,
    pub max_lookup_ids: usize,
    pub cart_ttl_secs: i64,
    pub checkout_ttl_secs: i64,
    /// How long a checkout may stay `complete_in_progress` before recovery asks the processor
    /// what became of its charge (longer than any processor call with its retries).
    pub payment_recovery_secs: i64,
}

/// Everything the core is built from.
#[derive(Debug, Clone)]
pub struct Ports {
    pub catalog: Arc<dyn CatalogStore>,
    pub store: Arc<dyn CommerceStore>,
    pub clock: Arc<dyn Clock>,
    pub payments: Arc<Handlers>,
    pub rules: Arc<PricingRules>,
    pub notifier: Arc<dyn Notifier>,
    pub cursors: Arc<dyn Cursors>,
    /// The buyer pages' URLs (order permalinks).
    pub pages: Arc<dyn PageLinks>,
}

#[derive(Debug, Clone)]
pub struct Commerce {
    ports: Ports,
    settings: Arc<CommerceSettings>,
}

/// Who is calling and what was negotiated with it, for one operation.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    /// The platform profile URL: sessions and orders belong to the platform that made them.
    pub platform: &'a str,
    /// Whether the fulfillment, discount and cart capabilities were negotiated.
    pub fulfillment: bool,
    pub discounts: bool,
    pub cart: bool,
    /// The payment handlers the platform declares (empty: no restriction).
    pub payment_handlers: &'a [crate::payment::PlatformHandler],
    /// Where the platform takes order webhooks, when the order capability was negotiated and
    /// its profile names a `webhook_url`: stored with an order this call places.
    pub order_webhook: Option<&'a crate::webhook::WebhookTarget>,
}

impl<'a> Caller<'a> {
    /// The buyer on our own pages, acting for the platform that owns the session: every
    /// extension applies and every handler of the checkout is usable.
    pub fn buyer_page(platform: &'a str) -> Caller<'a> {
        Caller { platform, fulfillment: true, discounts: true, cart: true, payment_handlers: &[], order_webhook: None }
    }
}

/// A business outcome that has no resource (UCP's error response).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: RefusalCode,
    pub content: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    NotFound,
    OutOfStock,
    ItemUnavailable,
    Unauthorized,
}

impl RefusalCode {
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::NotFound => "not_found",
            RefusalCode::OutOfStock => "out_of_stock",
            RefusalCode::ItemUnavailable => "item_unavailable",
            RefusalCode::Unauthorized => "unauthorized",
        }
    }
}

impl Refusal {
    fn not_found(what: &str) -> Refusal {
        Refusal { code: RefusalCode::NotFound, content: format!("{what} not found or has expired.") }
    }
}

/// What an operation answers when nothing went wrong below it.
#[derive(Debug, Clone)]
pub enum Answer<T> {
    Resource(T),
    Refused(Refusal),
}

impl<T> Answer<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Answer<U> {
        match self {
            Answer::Resource(resource) => Answer::Resource(f(resource)),
            Answer::Refused(refusal) => Answer::Refused(refusal),
        }
    }

    pub fn resource(self) -> Option<T> {
        match self {
            Answer::Resource(resource) => Some(resource),
            Answer::Refused(_) => None,
        }
    }
}

/// A cart or checkout as an operation leaves it: the stored session, its pricing (the
/// frozen final pricing for a completed checkout), and what to say about it.
#[derive(Debug, Clone)]
pub struct SessionView {
    pub session: Session,
    pub priced: Priced,
    /// Messages of this call, after the pricing's own.
    pub extra: Vec<Message>,
    /// The payment handlers this checkout offers, with the instrument types it offers for each
    /// (empty for carts).
    pub payment_handlers: Vec<crate::payment::OfferedHandler>,
    /// Whether the fulfillment and discount extensions apply to this answer.
    pub fulfillment: bool,
    pub discounts: bool,
    /// The time the view is as of (a completed checkout: its completion).
    pub as_of: i64,
    /// Whether this call created the session (REST answers 201 only then).
    pub created: bool,
}

impl SessionView {
    /// Every message: the pricing's, then this call's.
    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.priced.messages.iter().chain(self.extra.iter())
    }
}

/// An order as stored, for its platform.
#[derive(Debug, Clone)]
pub struct OrderView {
    pub order: Order,
    pub created_at: i64,
}

/// An order as the merchant sees it: with the platform that placed it.
#[derive(Debug, Clone)]
pub struct StoredOrderView {
    pub platform: String,
    pub view: OrderView,
}

impl Commerce {
    pub fn new(ports: Ports, settings: CommerceSettings) -> Commerce {
        Commerce { ports, settings: Arc::new(settings) }
    }

    pub fn settings(&self) -> &CommerceSettings {
        &self.settings
    }

    pub fn payments(&self) -> &Handlers {
        &self.ports.payments
    }

    pub fn rules(&self) -> &PricingRules {
        &self.ports.rules
    }

    pub fn now(&self) -> i64 {
        self.ports.clock.now()
    }

    /// Marks expired carts and checkouts as canceled in storage; returns how many.
    pub async fn expire_sessions(&self) -> Result<u64, Error> {
        Ok(self.ports.store.expire_sessions(self.now()).await?)
    }

    /// Deletes carts and checkouts that expired more than `retention_secs` ago (completed
    /// checkouts stay: their orders refer to them); returns how many, in batches so the writer
    /// is never held for long.
    pub async fn delete_expired_sessions(&self, retention_secs: i64) -> Result<u64, Error> {
        const BATCH: u64 = 1000;
        let before = self.now().saturating_sub(retention_secs.max(0));
        let mut deleted = 0;
        loop {
            let batch = self.ports.store.delete_expired_sessions(before, BATCH).await?;
            deleted += batch;
            if batch < BATCH {
                return Ok(deleted);
            }
        }
    }

    /// The catalog products a search would page through, for callers that list them.
    /// The merchant's order list (the console): newest first, clamped to
    /// [`OrderFilter::MAX_LIMIT`], every platform's orders unless the filter names one.
    pub async fn search_orders(&self, filter: &crate::store::OrderFilter) -> Result<Vec<StoredOrderView>, Error> {
        let mut filter = filter.clone();
        filter.limit = filter.limit.clamp(1, crate::store::OrderFilter::MAX_LIMIT);
        filter.query = filter.query.map(|query| query.trim().to_owned()).filter(|query| !query.is_empty());
        filter.platform = filter.platform.filter(|platform| !platform.is_empty());
        let orders = self.ports.store.list_orders(&filter).await?;
        Ok(orders
            .into_iter()
            .map(|stored| StoredOrderView {
                platform: stored.platform,
                view: OrderView { order: stored.order, created_at: stored.created_at },
            })
            .collect())
    }

    /// An order by id with the platform that placed it (the merchant's order page).
    pub async fn order_for_merchant(&self, id: &str) -> Result<Option<StoredOrderView>, Error> {
        Ok(self.ports.store.order(id).await?.map(|stored| StoredOrderView {
            platform: stored.platform,
            view: OrderView { order: stored.order, created_at: stored.created_at },
        }))
    }

    /// Orders placed per platform since `since` (Unix seconds; ever when `None`).
    pub async fn orders_by_platform(&self, since: Option<i64>) -> Result<Vec<(String, u64)>, Error> {
        Ok(self.ports.store.order_counts(since).await?)
    }

    /// Whether the store answers and its schema is this build's (`/readyz`).
    pub async fn store_ready(&self) -> Result<crate::store::SchemaStatus, Error> {
        Ok(self.ports.store.schema_status().await?)
    }

    pub async fn product_count(&self) -> Result<u64, Error> {
        Ok(self.ports.catalog.product_count().await?)
    }

    /// Products by id, for internal callers (the handoff pages show images and titles).
    pub async fn products(&self, ids: &[String]) -> Result<Vec<Arc<Served>>, Error> {
        Ok(self.ports.catalog.products(ids).await?)
    }
}
