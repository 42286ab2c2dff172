//! Stored idempotency (security.md §4, transport-mcp.md §4; checklist 79-84), once for MCP and
//! REST: [`crate::dispatch::run`] hands every state-changing call that carries a key to
//! [`Idempotency::once`], which runs it at most once per key and replays its answer.
//!
//! - Scope: the platform (the authenticated [`crate::trust::Principal`], else the claimed
//!   profile URL), the operation and the target resource id, with the caller's key.
//! - Fingerprint: SHA-256 of the RFC 8785 canonical JSON of `{operation, arguments}`, where
//!   the arguments are MCP's `params.arguments` without `meta`, or the REST body. The JSON-RPC
//!   `id` and the headers are not in it, so a retry with a new `id` replays.
//! - Same key, same fingerprint: the stored UCP body (and REST's created flag) is answered
//!   again and nothing runs. Same key, another fingerprint: 409 `idempotency_conflict`.
//! - A duplicate arriving while the first call runs waits for its answer: first on a
//!   per-key lock in this process, then (a call running in another instance, seen through
//!   its "in progress" record) by polling the store, up to `idempotency.wait_secs` in all;
//!   after that it gets 409 `idempotency_in_progress` with `retry_after`.
//! - Only answers are stored: a call that fails with a protocol error (invalid input, a
//!   processor outage) leaves no record, so its retry runs again.
//! - The store failing is 503 before anything runs (fail closed, checklist 82).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tokio::sync::OwnedMutexGuard;
use ucp_domain::store::{ClaimTerms, IdempotencyClaim, IdempotencyScope, IdempotencyStore, StoreError, StoredReply};

use crate::clock::Clock;
use crate::config::IdempotencySettings;
use crate::error::{ApiError, ErrorKind};
use crate::operations::{Operation, Payload};
use crate::response::Reply;

mod canonical;

/// The longest key we keep (clients send UUIDs; any 1-255 printable ASCII characters do).
pub const MAX_KEY_LEN: usize = 255;

/// How often a duplicate looks again at a record another instance has in progress.
const POLL: Duration = Duration::from_millis(50);

/// Whether `key` is an idempotency key we accept: 1-255 printable ASCII characters.
pub fn is_valid_key(key: &str) -> bool {
    (1..=MAX_KEY_LEN).contains(&key.len()) && key.bytes().all(|byte| (0x20..=0x7e).contains(&byte))
}

/// What the caller sent, as the fingerprint covers it.
#[derive(Debug, Clone, Copy)]
pub enum Arguments<'a> {
    /// MCP `params.arguments`; their `meta` is left out.
    Mcp(&'a Map<String, Value>),
    /// The REST body, if there was one.
    Rest(Option<&'a Value>),
}

/// SHA-256 (hex) of the canonical (RFC 8785) `{operation, arguments}`, hashed as it is written.
///
/// An id-only operation (the cancels) ignores whatever payload comes with it (Google sends
/// `"checkout": {}` on cancel_checkout; a REST cancel may have no body), and its id is in the
/// key's scope, so its fingerprint covers nothing but the operation: a retry that sends the
/// payload another way is the same request.
pub fn fingerprint(operation: Operation, arguments: Arguments<'_>) -> Result<String, ApiError> {
    fingerprint_named(operation.name(), covered(operation, arguments))
}

/// What of `arguments` the fingerprint of `operation` covers: nothing for an id-only one.
fn covered(operation: Operation, arguments: Arguments<'_>) -> Arguments<'_> {
    match operation.payload() {
        Payload::None => Arguments::Rest(None),
        _ => arguments,
    }
}

/// [`fingerprint`] of an operation outside UCP's (the admin API's), by its name.
fn fingerprint_named(operation: &str, arguments: Arguments<'_>) -> Result<String, ApiError> {
    use canonical::Sink;
    let mut hash = Sha256::new();
    // The two member names in canonical order.
    hash.put(b"{\"arguments\":");
    match arguments {
        Arguments::Mcp(arguments) => {
            canonical::object_into(arguments.iter().filter(|(name, _)| name.as_str() != "meta"), &mut hash)
        }
        Arguments::Rest(Some(body)) => canonical::write(body, &mut hash),
        // No body is an empty object: a cancel may be sent either way (transport-rest.md §1),
        // and a retry that sends the other is the same request.
        Arguments::Rest(None) => {
            hash.put(b"{}");
            Ok(())
        }
    }
    .map_err(ApiError::internal)?;
    hash.put(b",\"operation\":");
    canonical::string_into(operation, &mut hash);
    hash.put(b"}");
    Ok(hex::encode(hash.finalize()))
}

/// A state-changing call that came with a key: what it is stored under and compared by.
#[derive(Debug, Clone)]
pub struct Keyed {
    scope: IdempotencyScope,
    fingerprint: String,
}

/// The idempotency records and the per-key locks of this process. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Idempotency {
    store: Arc<dyn IdempotencyStore>,
    clock: Clock,
    settings: IdempotencySettings,
    /// One lock per scope in use: duplicates in this process queue here, not on the store.
    locks: Arc<Mutex<HashMap<IdempotencyScope, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Idempotency {
    pub fn new(store: Arc<dyn IdempotencyStore>, clock: Clock, settings: IdempotencySettings) -> Idempotency {
        Idempotency { store, clock, settings, locks: Arc::default() }
    }

    /// The scope and fingerprint of a call, or `None` when nothing is stored for it: reads
    /// (whose keys are accepted and ignored) and calls without a key.
    pub fn keyed(
        &self,
        operation: Operation,
        key: Option<&str>,
        platform: &str,
        target: Option<&str>,
        arguments: Arguments<'_>,
    ) -> Result<Option<Keyed>, ApiError> {
        let Some(key) = key.filter(|_| !operation.read_only()) else { return Ok(None) };
        self.keyed_named(operation.name(), key, platform, target, covered(operation, arguments)).map(Some)
    }

    /// The scope and fingerprint of a state-changing call named `operation` outside UCP's
    /// registry (the admin API's order changes, under the platform `admin`).
    pub fn keyed_named(
        &self,
        operation: &str,
        key: &str,
        platform: &str,
        target: Option<&str>,
        arguments: Arguments<'_>,
    ) -> Result<Keyed, ApiError> {
        if !is_valid_key(key) {
            return Err(ApiError::invalid_params(format!(
                "the idempotency key must be 1-{MAX_KEY_LEN} printable ASCII characters"
            )));
        }
        let scope = IdempotencyScope {
            platform: platform.to_owned(),
            operation: operation.to_owned(),
            target: target.unwrap_or_default().to_owned(),
            key: key.to_owned(),
        };
        Ok(Keyed { scope, fingerprint: fingerprint_named(operation, arguments)? })
    }

    /// Runs `work` unless a call with this key already ran (its stored answer is returned) or
    /// runs now (waits for its answer, bounded); stores what `work` answered.
    ///
    /// `work` makes the future only once the claim is taken: an `async fn` keeps a future it
    /// is handed twice in its state (the argument, and the awaited copy moved out of it).
    pub async fn once<W, F>(&self, keyed: Keyed, work: W) -> Result<Reply, ApiError>
    where
        W: FnOnce() -> F,
        F: Future<Output = Result<Reply, ApiError>>,
    {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(self.settings.wait_secs);
        let mut turn = self.turn(&keyed.scope);
        if tokio::time::timeout_at(deadline, turn.take()).await.is_err() {
            return Err(in_flight(&keyed));
        }
        let owner = uuid::Uuid::new_v4().to_string();
        loop {
            let now = self.clock.now();
            let terms = ClaimTerms {
                fingerprint: &keyed.fingerprint,
                owner: &owner,
                now,
                expired_before: now.saturating_sub(secs(self.settings.retention_secs)),
                stale_before: now.saturating_sub(secs(self.settings.lease_secs)),
            };
            match self.store.claim(&keyed.scope, terms).await.map_err(unavailable)? {
                IdempotencyClaim::Claimed => break,
                IdempotencyClaim::Finished { fingerprint, reply } => {
                    if fingerprint != keyed.fingerprint {
                        return Err(conflict(&keyed));
                    }
                    tracing::info!(operation = %keyed.scope.operation, target = %keyed.scope.target, "idempotent replay");
                    return Ok(Reply { body: reply.body.into_bytes(), created: reply.created, text: None });
                }
                IdempotencyClaim::InProgress { fingerprint } => {
                    if fingerprint != keyed.fingerprint {
                        return Err(conflict(&keyed));
                    }
                    if tokio::time::Instant::now() + POLL >= deadline {
                        return Err(in_flight(&keyed));
                    }
                    tokio::time::sleep(POLL).await;
                }
            }
        }
        let mut pending = Pending { store: Arc::clone(&self.store), scope: keyed.scope.clone(), owner, armed: true };
        let outcome = work().await;
        match &outcome {
            Ok(reply) => {
                let body = String::from_utf8(reply.body.clone()).map_err(ApiError::internal)?;
                let stored = StoredReply { body, created: reply.created };
                match self.store.finish(&keyed.scope, &pending.owner, &stored, self.clock.now()).await {
                    Ok(true) => pending.armed = false,
                    Ok(false) => {
                        pending.armed = false;
                        tracing::warn!(operation = %keyed.scope.operation, "an idempotency record was taken over while its call ran");
                    }
                    // The call ran: its answer goes out; the record is released (by the
                    // guard), so a retry runs again rather than waiting for nothing.
                    Err(error) => {
                        tracing::error!(%error, operation = %keyed.scope.operation, "storing an idempotent answer failed")
                    }
                }
            }
            Err(_) => pending.release().await,
        }
        outcome
    }

    /// Deletes the records past their retention; the session sweeper calls it.
    pub async fn sweep(&self) -> Result<u64, StoreError> {
        let now = self.clock.now();
        self.store.sweep(now.saturating_sub(secs(self.settings.retention_secs))).await
    }

    fn turn(&self, scope: &IdempotencyScope) -> Turn {
        let lock = Arc::clone(self.locked_map().entry(scope.clone()).or_default());
        Turn { owner: self.clone(), scope: scope.clone(), lock, guard: None }
    }

    fn locked_map(&self) -> std::sync::MutexGuard<'_, HashMap<IdempotencyScope, Arc<tokio::sync::Mutex<()>>>> {
        self.locks.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn secs(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn unavailable(error: StoreError) -> ApiError {
    tracing::warn!(%error, "idempotency store unavailable");
    ApiError::new(
        ErrorKind::Unavailable,
        "the idempotency store is unavailable, so nothing was run; retry with the same key",
    )
}

fn conflict(keyed: &Keyed) -> ApiError {
    ApiError::new(
        ErrorKind::IdempotencyConflict,
        format!(
            "this idempotency key was used for a different {} request; send a new key for a changed request",
            keyed.scope.operation
        ),
    )
}

fn in_flight(keyed: &Keyed) -> ApiError {
    ApiError::new(
        ErrorKind::IdempotencyInFlight,
        format!(
            "a {} request with this idempotency key is still running; retry with the same key shortly",
            keyed.scope.operation
        ),
    )
}

/// This call's place in the per-key queue of this process; leaving it removes the key's lock
/// when nobody else waits on it.
struct Turn {
    owner: Idempotency,
    scope: IdempotencyScope,
    lock: Arc<tokio::sync::Mutex<()>>,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Turn {
    async fn take(&mut self) {
        self.guard = Some(Arc::clone(&self.lock).lock_owned().await);
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.guard = None;
        let mut locks = self.owner.locked_map();
        // The map's reference and ours: nobody else holds or waits for this key.
        if Arc::strong_count(&self.lock) == 2 {
            locks.remove(&self.scope);
        }
    }
}

/// An in-progress record this call owns; if the call is dropped before it finishes (the
/// client went away), the record is released so a retry runs again.
struct Pending {
    store: Arc<dyn IdempotencyStore>,
    scope: IdempotencyScope,
    owner: String,
    armed: bool,
}

impl Pending {
    async fn release(mut self) {
        self.armed = false;
        if let Err(error) = self.store.release(&self.scope, &self.owner).await {
            tracing::warn!(%error, "releasing an idempotency record failed; it lapses after idempotency.lease_secs");
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let store = Arc::clone(&self.store);
        let scope = self.scope.clone();
        let owner = std::mem::take(&mut self.owner);
        runtime.spawn(crate::layers::carried(async move {
            if let Err(error) = store.release(&scope, &owner).await {
                tracing::warn!(%error, "releasing an idempotency record failed; it lapses after idempotency.lease_secs");
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_any_printable_ascii_up_to_255() {
        for good in ["7c9e6679-7425-40de-944b-e07fc1f90ae7", "k", "order 42/retry#1", &"x".repeat(255)] {
            assert!(is_valid_key(good), "{good}");
        }
        for bad in ["", "tab\there", "caf\u{e9}", "line\n", &"x".repeat(256)] {
            assert!(!is_valid_key(bad), "{bad:?}");
        }
    }

    #[test]
    fn the_fingerprint_is_canonical_and_leaves_out_meta() {
        let one = json!({ "meta": { "idempotency-key": "a" }, "id": "chk_1", "checkout": { "b": 1, "a": [1.0, "x"] } });
        let two = json!({ "checkout": { "a": [1, "x"], "b": 1 }, "id": "chk_1", "meta": { "idempotency-key": "b", "other": 1 } });
        let print =
            |value: &Value, operation| fingerprint(operation, Arguments::Mcp(value.as_object().unwrap())).unwrap();
        assert_eq!(print(&one, Operation::CompleteCheckout), print(&two, Operation::CompleteCheckout));
        assert_ne!(print(&one, Operation::CompleteCheckout), print(&one, Operation::UpdateCheckout));
        let changed = json!({ "id": "chk_1", "checkout": { "b": 2, "a": [1, "x"] } });
        assert_ne!(print(&one, Operation::CompleteCheckout), print(&changed, Operation::CompleteCheckout));
        let body = json!({ "b": 1, "a": 2 });
        let reordered = json!({ "a": 2, "b": 1 });
        assert_eq!(
            fingerprint(Operation::CreateCart, Arguments::Rest(Some(&body))).unwrap(),
            fingerprint(Operation::CreateCart, Arguments::Rest(Some(&reordered))).unwrap()
        );
        assert_eq!(
            fingerprint(Operation::CancelCheckout, Arguments::Rest(Some(&json!({})))).unwrap(),
            fingerprint(Operation::CancelCheckout, Arguments::Rest(None)).unwrap(),
            "an empty object is no body"
        );
        assert_ne!(
            fingerprint(Operation::CreateCart, Arguments::Rest(Some(&json!({ "a": 1 })))).unwrap(),
            fingerprint(Operation::CreateCart, Arguments::Rest(None)).unwrap()
        );
    }

    #[test]
    fn an_id_only_operation_is_fingerprinted_without_the_payload_it_ignores() {
        let cancel = |arguments: Arguments<'_>| fingerprint(Operation::CancelCheckout, arguments).unwrap();
        let bare = cancel(Arguments::Rest(None));
        let google = json!({ "id": "chk_1", "checkout": {} });
        let plain = json!({ "id": "chk_1" });
        assert_eq!(cancel(Arguments::Mcp(google.as_object().unwrap())), bare);
        assert_eq!(cancel(Arguments::Mcp(plain.as_object().unwrap())), bare);
        assert_eq!(cancel(Arguments::Rest(Some(&json!({ "reason": "x" })))), bare);
        assert_ne!(fingerprint(Operation::CancelCart, Arguments::Rest(None)).unwrap(), bare);
    }
}
