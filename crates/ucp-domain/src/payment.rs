//! Payment: the `PaymentProcessor` port a complete charges through, the handler instances a
//! business offers, which of them a checkout offers, and the deterministic sandbox processor.
//! Raw credentials pass through here to a processor and nowhere else: they are neither stored
//! nor logged, and `Charge`'s `Debug` redacts the token.

use std::sync::Arc;

use async_trait::async_trait;

/// The sandbox handler's name and instance id.
pub const SANDBOX_HANDLER: &str = "dev.ucpd.sandbox";
pub const SANDBOX_ID: &str = "sandbox";
pub const TOKEN_SUCCESS: &str = "tok_sandbox_success";
pub const TOKEN_DECLINE: &str = "tok_sandbox_decline";
pub const TOKEN_3DS: &str = "tok_sandbox_3ds";

/// What a processor is asked to do.
#[derive(Clone)]
pub struct Charge {
    pub checkout_id: String,
    pub amount: i64,
    pub currency: String,
    pub token: String,
    /// Same value on every retry of one complete.
    pub idempotency_key: String,
}

impl std::fmt::Debug for Charge {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Charge")
            .field("checkout_id", &self.checkout_id)
            .field("amount", &self.amount)
            .field("currency", &self.currency)
            .field("token", &"[redacted]")
            .field("idempotency_key", &self.idempotency_key)
            .finish()
    }
}

/// Money given back on an approved charge: all of it (an order that could not be placed) or
/// part (a merchant's refund). `idempotency_key` is ours, one per refund, the same on every
/// retry of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    /// The processor's reference of the charge.
    pub reference: String,
    pub amount: i64,
    pub currency: String,
    pub idempotency_key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentOutcome {
    Approved {
        reference: String,
    },
    Declined {
        reason: String,
    },
    /// The buyer must authenticate (3-D Secure); `reference` names the pending challenge.
    RequiresAction {
        reference: String,
    },
}

#[derive(Debug, thiserror::Error)]
#[error("payment processor unavailable: {0}")]
pub struct ProcessorUnavailable(pub String);

/// Why a refund was not made.
#[derive(Debug, thiserror::Error)]
pub enum RefundError {
    /// The processor answered and refused it (a 4xx answer): nothing was refunded, and asked
    /// again under the same key it refuses again.
    #[error("the payment processor refused the refund: {0}")]
    Refused(String),
    /// No answer, or a failure of the processor's own: the refund may or may not have been
    /// made. Asked again under the same key, it is made at most once.
    #[error(transparent)]
    Unavailable(#[from] ProcessorUnavailable),
}

#[async_trait]
pub trait PaymentProcessor: Send + Sync + std::fmt::Debug {
    /// Authorizes and captures `charge`.
    async fn charge(&self, charge: &Charge) -> Result<PaymentOutcome, ProcessorUnavailable>;
    /// Completes a charge that needed buyer authentication, once the buyer passed it.
    async fn confirm(&self, reference: &str, charge: &Charge) -> Result<PaymentOutcome, ProcessorUnavailable>;
    /// Gives back `refund.amount` of an approved charge (partial refunds are allowed), at most
    /// once per `refund.idempotency_key`.
    async fn refund(&self, refund: &Refund) -> Result<(), RefundError>;
    /// What became of the payment charged under our `idempotency_key` (its confirmation
    /// included): `None` when the processor has no charge under it. A refunded charge is
    /// `Declined`. Recovery asks this when a complete ended without storing the outcome.
    async fn lookup(&self, idempotency_key: &str) -> Result<Option<PaymentOutcome>, ProcessorUnavailable>;
}

/// One offered handler instance and the processor behind it.
#[derive(Debug, Clone)]
pub struct Handler {
    /// The handler's name (`dev.ucpd.sandbox`, `com.example.pay`).
    pub name: String,
    /// The instance id a platform names in `handler_id`.
    pub id: String,
    pub instrument_types: Vec<String>,
    pub processor: Arc<dyn PaymentProcessor>,
    /// Checkout currencies it takes (upper-case; empty: any).
    pub currencies: Vec<String>,
    /// Shipping countries it serves (upper-case; empty: any).
    pub countries: Vec<String>,
}

/// A payment handler a platform's profile declares: its name and the instrument types it
/// takes (`None`: every type, for an entry without `available_instruments`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformHandler {
    pub name: String,
    pub instrument_types: Option<Vec<String>>,
}

/// A handler a checkout offers, with the instrument types it offers there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedHandler {
    pub id: String,
    pub instrument_types: Vec<String>,
}

impl Handler {
    /// The instrument types this handler offers a platform that declares `platform`: ours and
    /// the platform's for it (checklist 139, `available_instruments` = platform ∩ ours); none
    /// when the platform declares handlers but not this one, or none of its types. A platform
    /// that declares no handler restricts nothing.
    pub fn instruments_for(&self, platform: &[PlatformHandler]) -> Vec<&str> {
        let ours = || self.instrument_types.iter().map(String::as_str);
        if platform.is_empty() {
            return ours().collect();
        }
        let mut declared: Vec<&str> = Vec::new();
        for entry in platform.iter().filter(|entry| entry.name == self.name) {
            match &entry.instrument_types {
                None => return ours().collect(),
                Some(types) => declared.extend(types.iter().map(String::as_str)),
            }
        }
        ours().filter(|kind| declared.contains(kind)).collect()
    }
}

/// What decides which handlers a checkout offers.
#[derive(Debug, Clone, Copy)]
pub struct CheckoutContext<'a> {
    pub currency: &'a str,
    /// The selected shipping country, or the context's, if known.
    pub country: Option<&'a str>,
    /// The handlers the platform declares; empty means it declares none (no restriction).
    pub platform_handlers: &'a [PlatformHandler],
}

/// The handlers configured for this business.
#[derive(Debug, Clone, Default)]
pub struct Handlers {
    pub handlers: Vec<Handler>,
}

impl Handlers {
    pub fn by_id(&self, id: &str) -> Option<&Handler> {
        self.handlers.iter().find(|handler| handler.id == id)
    }

    /// The handlers a checkout offers (checklist 25, 139), each with the instrument types it
    /// offers there: those the platform can use with an instrument of ours (when it declares
    /// any: [`Handler::instruments_for`]), that take the checkout's currency and serve its
    /// shipping country.
    pub fn for_checkout<'a>(
        &'a self,
        context: CheckoutContext<'a>,
    ) -> impl Iterator<Item = (&'a Handler, Vec<&'a str>)> + 'a {
        self.handlers
            .iter()
            .filter(move |handler| {
                (handler.currencies.is_empty() || handler.currencies.iter().any(|code| code == context.currency))
                    && match (context.country, handler.countries.is_empty()) {
                        (_, true) => true,
                        (Some(country), false) => {
                            handler.countries.iter().any(|code| code.eq_ignore_ascii_case(country))
                        }
                        (None, false) => true,
                    }
            })
            .map(move |handler| (handler, handler.instruments_for(context.platform_handlers)))
            .filter(|(_, instruments)| !instruments.is_empty())
    }

    /// The sandbox handler instance, when it is configured.
    pub fn sandbox(&self) -> Option<&Handler> {
        self.by_id(SANDBOX_ID)
    }
}

/// The sandbox handler: takes cards, any currency, any country.
pub fn sandbox_handler() -> Handler {
    Handler {
        name: SANDBOX_HANDLER.into(),
        id: SANDBOX_ID.into(),
        instrument_types: vec!["card".into()],
        processor: Arc::new(Sandbox::default()),
        currencies: Vec::new(),
        countries: Vec::new(),
    }
}

/// How many charge outcomes the sandbox remembers (the oldest are forgotten first).
const SANDBOX_MEMORY: usize = 10_000;

/// Deterministic test processor: the token decides. Like a real processor it answers a
/// repeated key with the first outcome and can be asked about a key later (`lookup`); it
/// remembers the last [`SANDBOX_MEMORY`] keys, in memory only (no money moves).
#[derive(Debug, Default)]
pub struct Sandbox {
    charges: std::sync::Mutex<SandboxCharges>,
}

#[derive(Debug, Default)]
struct SandboxCharges {
    by_key: std::collections::HashMap<String, PaymentOutcome>,
    order: std::collections::VecDeque<String>,
}

impl Sandbox {
    fn charges(&self) -> std::sync::MutexGuard<'_, SandboxCharges> {
        self.charges.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn remember(&self, key: &str, outcome: &PaymentOutcome) {
        let mut charges = self.charges();
        if charges.by_key.insert(key.to_owned(), outcome.clone()).is_none() {
            charges.order.push_back(key.to_owned());
            while charges.order.len() > SANDBOX_MEMORY {
                if let Some(oldest) = charges.order.pop_front() {
                    charges.by_key.remove(&oldest);
                }
            }
        }
    }
}

#[async_trait]
impl PaymentProcessor for Sandbox {
    async fn charge(&self, charge: &Charge) -> Result<PaymentOutcome, ProcessorUnavailable> {
        if let Some(outcome) = self.charges().by_key.get(&charge.idempotency_key) {
            return Ok(outcome.clone());
        }
        let reference = format!("sbx_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
        let outcome = match charge.token.as_str() {
            TOKEN_SUCCESS => PaymentOutcome::Approved { reference },
            TOKEN_3DS => PaymentOutcome::RequiresAction { reference },
            TOKEN_DECLINE => PaymentOutcome::Declined { reason: "The card was declined (sandbox).".into() },
            _ => PaymentOutcome::Declined {
                reason: format!("Unknown sandbox token; use {TOKEN_SUCCESS}, {TOKEN_DECLINE} or {TOKEN_3DS}."),
            },
        };
        self.remember(&charge.idempotency_key, &outcome);
        Ok(outcome)
    }

    async fn confirm(&self, reference: &str, charge: &Charge) -> Result<PaymentOutcome, ProcessorUnavailable> {
        let outcome = PaymentOutcome::Approved { reference: reference.to_owned() };
        self.remember(&charge.idempotency_key, &outcome);
        Ok(outcome)
    }

    async fn refund(&self, refund: &Refund) -> Result<(), RefundError> {
        let mut charges = self.charges();
        for outcome in charges.by_key.values_mut() {
            if matches!(outcome, PaymentOutcome::Approved { reference: approved } if *approved == refund.reference) {
                *outcome = PaymentOutcome::Declined { reason: "The payment was refunded (sandbox).".into() };
            }
        }
        Ok(())
    }

    async fn lookup(&self, idempotency_key: &str) -> Result<Option<PaymentOutcome>, ProcessorUnavailable> {
        Ok(self.charges().by_key.get(idempotency_key).cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Checklist 139: what a handler offers a platform is ours and the platform's.
    #[test]
    fn a_handler_offers_the_instruments_it_and_the_platform_share() {
        let mut handler = sandbox_handler();
        handler.instrument_types = vec!["card".into(), "wallet".into()];
        let declares = |name: &str, types: Option<&[&str]>| PlatformHandler {
            name: name.into(),
            instrument_types: types.map(|types| types.iter().map(|kind| kind.to_string()).collect()),
        };
        assert_eq!(handler.instruments_for(&[]), ["card", "wallet"], "nothing declared: no restriction");
        let other = declares("com.example.pay", None);
        assert!(handler.instruments_for(std::slice::from_ref(&other)).is_empty(), "declares handlers, not this one");
        assert_eq!(handler.instruments_for(&[other.clone(), declares(SANDBOX_HANDLER, None)]), ["card", "wallet"]);
        let cards = declares(SANDBOX_HANDLER, Some(&["card", "bnpl"]));
        assert_eq!(handler.instruments_for(std::slice::from_ref(&cards)), ["card"]);
        let wallets = declares(SANDBOX_HANDLER, Some(&["wallet"]));
        assert_eq!(handler.instruments_for(&[cards, wallets]), ["card", "wallet"], "two entries: either's types");
        assert!(handler.instruments_for(&[declares(SANDBOX_HANDLER, Some(&["bnpl"]))]).is_empty());
    }

    fn charge(key: &str, token: &str) -> Charge {
        Charge {
            checkout_id: "chk".into(),
            amount: 100,
            currency: "USD".into(),
            token: token.into(),
            idempotency_key: key.into(),
        }
    }

    // Issue 9 item 3: the sandbox answers a repeated key with its first outcome and tells
    // recovery what became of a key; a refunded charge looks declined.
    #[test]
    fn the_sandbox_is_idempotent_by_key_and_can_be_asked() {
        let sandbox = Sandbox::default();
        assert_eq!(block_on(Box::pin(sandbox.lookup("k1"))).unwrap(), None);
        let first = block_on(Box::pin(sandbox.charge(&charge("k1", TOKEN_SUCCESS)))).unwrap();
        let again = block_on(Box::pin(sandbox.charge(&charge("k1", TOKEN_DECLINE)))).unwrap();
        assert_eq!(first, again, "one key, one charge");
        assert_eq!(block_on(Box::pin(sandbox.lookup("k1"))).unwrap(), Some(first.clone()));
        let PaymentOutcome::Approved { reference } = first else { panic!("{first:?}") };
        let refund = Refund { reference, amount: 100, currency: "USD".into(), idempotency_key: "k1-refund".into() };
        block_on(Box::pin(sandbox.refund(&refund))).unwrap();
        assert!(matches!(block_on(Box::pin(sandbox.lookup("k1"))).unwrap(), Some(PaymentOutcome::Declined { .. })));
    }

    /// Polls a future that never waits (the sandbox does no I/O) to its end.
    fn block_on<T>(mut future: std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + '_>>) -> T {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        loop {
            if let std::task::Poll::Ready(value) = future.as_mut().poll(&mut context) {
                return value;
            }
        }
    }
}
