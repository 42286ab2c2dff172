//! The stored state of carts and checkouts: what the buyer and platform asked for. Prices,
//! totals, messages and status are computed from it (see `pricing`), never stored as truth.
//! Serde here is the storage encoding of the session, not the wire form.

use serde::{Deserialize, Serialize};

use super::attempt::PaymentAttempt;
use super::parts::{Address, SessionKind, Status};

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

/// The platform's fulfillment choices: one shipping method for all lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FulfillmentChoice {
    pub destinations: Vec<Address>,
    pub selected_destination_id: Option<String>,
    pub selected_option_id: Option<String>,
    /// The types of the methods it asked for that we do not offer (`pickup`, or `other` for
    /// any type of the platform's own), each once: the checkout cannot be completed until
    /// they are gone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<String>,
}

/// Buyer context hints that change what we compute (tax and shipping region), and the
/// platform's eligibility claims, which change nothing (`super::eligibility`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    /// The well-formed claims the platform sent, each once, in its order: echoed, and each
    /// answered with an `eligibility_not_accepted` warning.
    #[serde(default, deserialize_with = "super::eligibility::claims", skip_serializing_if = "Option::is_none")]
    pub eligibility: Option<Vec<String>>,
    /// The currency the platform would rather pay in (ISO 4217, upper-cased; anything else is
    /// ignored without error, as before it was read): a session is in the store's currency,
    /// and one in another gets a `currency_unavailable` note saying so.
    #[serde(default, deserialize_with = "super::eligibility::currency_hint", skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

/// A payment step that needs the buyer (3-D Secure), waiting on our handoff page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingAuthentication {
    pub handler_id: String,
    pub instrument_type: String,
    /// The processor's reference for the challenge; the raw credential is never stored.
    pub reference: String,
    /// Set once the buyer passed the challenge on our page.
    pub approved: bool,
    /// The challenged charge's [`super::PaymentAttempt::instrument`] (absent on challenges
    /// stored before it was kept): a complete with another card is another payment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instrument: Option<String>,
}

impl PendingAuthentication {
    /// Whether paying with `handler_id` and the credential of digest `instrument` is another
    /// payment than the one this challenge waits for.
    pub fn is_other_payment(&self, handler_id: &str, instrument: &str) -> bool {
        self.handler_id != handler_id || self.instrument.as_deref().is_some_and(|digest| digest != instrument)
    }
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
    pub attribution: Option<crate::json::JsonMap>,
    pub created_at: i64,
    pub expires_at: i64,
    #[serde(default)]
    pub order_id: Option<String>,
    #[serde(default)]
    pub pending_authentication: Option<PendingAuthentication>,
    /// Messages that outlive one call (a declined payment), cleared by the next update.
    #[serde(default)]
    pub sticky_messages: Vec<super::Message>,
    /// The discount codes the answer to the platform's last write rejected (upper-cased);
    /// `None` while a write is priced, whose answer the platform sees. A code rejected now and
    /// not among them applied at the price the platform last saw: the checkout cannot complete
    /// at another until the codes are written again (a checkout stored before this field
    /// counts every rejection as new, as complete always did).
    #[serde(default = "no_rejections")]
    pub rejections_seen: Option<Vec<String>>,
    /// A completed checkout's pricing as it was at completion: a completed checkout is
    /// immutable, so later reads show exactly what was bought and charged, not a re-pricing
    /// against today's stock and discount counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_pricing: Option<Box<super::Priced>>,
    /// When the checkout was completed (the time its final pricing is shown at).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    /// Optimistic concurrency: the number of stored writes so far. A store writes a session
    /// only if its stored version still equals this one (then stores `version + 1`), so a
    /// writer working from a stale read cannot undo a concurrent change (a completion).
    #[serde(default)]
    pub version: u64,
    /// Charges of this checkout that ended (declined, or approved and refunded because no
    /// order could be placed): the next charge is attempt `payment_attempts + 1`, and its
    /// processor idempotency key ([`Session::charge_key`]) is new.
    #[serde(default)]
    pub payment_attempts: u32,
    /// The charge of the claim in progress, recorded before it is sent; kept on a completed
    /// checkout as the record of what paid its order. Unresolved while the checkout is
    /// `complete_in_progress` ([`Session::unresolved_attempt`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_attempt: Option<PaymentAttempt>,
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
            rejections_seen: Some(Vec::new()),
            final_pricing: None,
            completed_at: None,
            version: 0,
            payment_attempts: 0,
            payment_attempt: None,
        }
    }

    /// The idempotency key of the charge this checkout makes now: ours, derived from the
    /// checkout and the attempt, never the platform's key. Every retry of one attempt (a
    /// processor timeout, a lost response, a replayed complete) sends the same key, so the
    /// processor charges once; after a decline or a refund the next attempt has a new one.
    pub fn charge_key(&self) -> String {
        format!("{}-attempt-{}", self.id, self.payment_attempts + 1)
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

    /// Why this session cannot change now: completed, canceled, or being completed.
    pub fn locked(&self) -> Option<Locked> {
        match self.status {
            Status::Completed => Some(Locked::Completed),
            Status::Canceled => Some(Locked::Canceled),
            Status::CompleteInProgress => Some(Locked::CompleteInProgress),
            Status::Incomplete | Status::RequiresEscalation | Status::ReadyForComplete => None,
        }
    }

    /// Takes the recomputed status of an open session (pricing decides it); a locked session
    /// keeps its own.
    pub fn reprice(&mut self, status: Status) -> Result<(), Locked> {
        if let Some(locked) = self.locked() {
            return Err(locked);
        }
        self.status = status;
        Ok(())
    }

    /// Claims an open checkout for completion and records the charge about to be made: until
    /// the outcome is stored it is `complete_in_progress`, which updates, cancels and other
    /// completes refuse.
    pub fn claim(&mut self, attempt: PaymentAttempt) -> Result<(), Locked> {
        if let Some(locked) = self.locked() {
            return Err(locked);
        }
        self.status = Status::CompleteInProgress;
        self.payment_attempt = Some(attempt);
        Ok(())
    }

    /// Gives a claimed checkout back when its complete ended without an order (and without
    /// money held under its key). Returns whether anything changed.
    pub fn release(&mut self) -> bool {
        if self.status != Status::CompleteInProgress {
            return false;
        }
        self.status = Status::Incomplete;
        self.payment_attempt = None;
        true
    }

    /// The charge of a claim whose outcome is not stored yet.
    pub fn unresolved_attempt(&self) -> Option<&PaymentAttempt> {
        self.payment_attempt.as_ref().filter(|_| self.status == Status::CompleteInProgress)
    }

    /// Whether recovery should settle this checkout now: its charge's outcome is unknown (the
    /// processor call failed) or it has been in progress for `after_secs` or more.
    pub fn is_stuck(&self, now: i64, after_secs: i64) -> bool {
        self.unresolved_attempt()
            .is_some_and(|attempt| attempt.in_doubt || attempt.started_at <= now.saturating_sub(after_secs))
    }

    /// The processor call of the claim ended without an answer: the checkout stays claimed
    /// (the money may have moved) until the processor says what happened.
    pub fn doubt_payment(&mut self) -> bool {
        let in_progress = self.status == Status::CompleteInProgress;
        match self.payment_attempt.as_mut() {
            Some(attempt) if in_progress && !attempt.in_doubt => {
                attempt.in_doubt = true;
                true
            }
            _ => false,
        }
    }

    /// Cancels an open session.
    pub fn cancel(&mut self) -> Result<(), Locked> {
        if let Some(locked) = self.locked() {
            return Err(locked);
        }
        self.status = Status::Canceled;
        Ok(())
    }

    /// Records a declined payment: the reason stays on the checkout until the next update, a
    /// claim is given back, and the next charge is a new attempt.
    pub fn fail_payment(&mut self, message: super::Message) {
        self.sticky_messages = vec![message];
        self.pending_authentication = None;
        self.release();
        self.payment_attempts += 1;
    }

    /// Records a payment refused before anything was charged under the current key (a bad
    /// instrument; the processor has no charge under it): the reason stays until the next
    /// update, a claim is given back, and the key stays, so a late charge under it is found;
    /// unless a 3-D Secure challenge was waiting under it, which this abandons.
    pub fn refuse_payment(&mut self, message: super::Message) {
        self.sticky_messages = vec![message];
        self.abandon_authentication();
        self.release();
    }

    /// Drops a 3-D Secure challenge nobody will finish (the checkout changed, or the platform
    /// pays another way): its charge waits at the processor under the current key for an
    /// authentication that will not come, so the next charge is a new attempt with a new key
    /// (a processor would answer the old key with the old charge, its amount and its card).
    /// Returns whether there was one.
    pub fn abandon_authentication(&mut self) -> bool {
        let abandoned = self.pending_authentication.take().is_some();
        if abandoned {
            self.payment_attempts += 1;
        }
        abandoned
    }

    /// The charge was refunded because no order could be placed (stock or a discount ran
    /// out, the store failed): the claim ends and the next charge is a new attempt.
    pub fn refunded(&mut self) {
        self.payment_attempts += 1;
        self.release();
    }

    /// The processor wants the buyer to authenticate: the checkout waits for our page. What an
    /// earlier attempt was told (a decline) is no longer the checkout's state.
    pub fn await_authentication(&mut self, pending: PendingAuthentication) {
        self.pending_authentication = Some(pending);
        self.sticky_messages.clear();
        self.release();
    }

    /// Marks a pending 3-D Secure challenge as passed (the handoff page's approve button).
    /// Returns whether there was one to approve.
    pub fn approve_challenge(&mut self) -> bool {
        match &mut self.pending_authentication {
            Some(pending) if !pending.approved => {
                pending.approved = true;
                true
            }
            _ => false,
        }
    }

    /// Completes a claimed checkout with its order, freezing the pricing it was charged at.
    pub fn complete(&mut self, order_id: String, mut pricing: super::Priced, now: i64) -> Result<(), NotClaimed> {
        if self.status != Status::CompleteInProgress {
            return Err(NotClaimed(self.status));
        }
        self.status = Status::Completed;
        if let Some(attempt) = self.payment_attempt.as_mut() {
            attempt.in_doubt = false;
        }
        self.order_id = Some(order_id);
        self.pending_authentication = None;
        self.sticky_messages.clear();
        pricing.status = Status::Completed;
        pricing.messages.clear();
        self.final_pricing = Some(Box::new(pricing));
        self.completed_at = Some(now);
        Ok(())
    }
}

/// Why a session refuses a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Locked {
    #[error("is completed")]
    Completed,
    #[error("is canceled")]
    Canceled,
    #[error("is being completed")]
    CompleteInProgress,
}

/// `complete` on a checkout that was not claimed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a checkout must be claimed before it completes (it is {0:?})")]
pub struct NotClaimed(pub Status);

/// A line as a request names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRequest {
    pub id: Option<String>,
    pub item_id: String,
    pub quantity: i64,
}

fn no_rejections() -> Option<Vec<String>> {
    Some(Vec::new())
}
