//! Stored idempotency records (security.md §4): what a key is compared within, and the store
//! that claims, finishes and releases them.

use async_trait::async_trait;

use super::StoreError;

/// What one idempotency record is for: a key is only ever compared within the platform that
/// sent it, the operation it was sent with and the resource it targets (security.md §4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyScope {
    /// The authenticated platform, or the profile URL it claims when nothing authenticated it.
    pub platform: String,
    /// The operation's name (`complete_checkout`).
    pub operation: String,
    /// The target resource id; empty for the operations that create one.
    pub target: String,
    /// The caller's key, as sent.
    pub key: String,
}

/// A finished call's answer, as the transports render it again on a replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReply {
    /// The UCP body, serialized.
    pub body: String,
    /// Whether the call created its resource (REST answered 201).
    pub created: bool,
}

/// What [`IdempotencyStore::claim`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// There was no live record: now there is one, in progress and owned by the claimant, who
    /// must [`finish`](IdempotencyStore::finish) or [`release`](IdempotencyStore::release) it.
    Claimed,
    /// Another request with this key is still running (here or in another instance).
    InProgress { fingerprint: String },
    /// A request with this key finished; its answer is stored.
    Finished { fingerprint: String, reply: StoredReply },
}

/// A claim's terms: who claims, for which payload, and which old records no longer count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimTerms<'a> {
    /// SHA-256 (hex) of the canonical request the key was sent with.
    pub fingerprint: &'a str,
    /// A fresh id naming this claim: only its owner finishes or releases a record.
    pub owner: &'a str,
    /// Unix seconds now.
    pub now: i64,
    /// A record created at or before this instant is past its retention: claimed anew.
    pub expired_before: i64,
    /// A record still in progress since at or before this instant was left by a request
    /// that died (a crashed instance): an identical retry takes it over.
    pub stale_before: i64,
}

/// Stored idempotency records: one per [`IdempotencyScope`], in progress or finished.
/// "Insert if absent" is one statement (`INSERT … ON CONFLICT DO NOTHING` in SQL), so two
/// instances sharing a database never both claim a key.
#[async_trait]
pub trait IdempotencyStore: Send + Sync + std::fmt::Debug {
    /// Marks `scope` in progress for `terms.owner` unless a live record exists, and says which.
    /// A claim may be answered before it is on disk, if every write its caller makes after the
    /// answer lands after it: one lost with a failed commit is no worse than one a crash left in
    /// progress (the retry runs the call again, at once or once the claim is stale).
    async fn claim(&self, scope: &IdempotencyScope, terms: ClaimTerms<'_>) -> Result<IdempotencyClaim, StoreError>;

    /// Stores the answer of the owner's claim. `Ok(false)`: the record is no longer the
    /// owner's (taken over as stale, or swept). Called once the call's own writes are on
    /// disk, it may be answered before its own write is: one lost with a failed commit (or a
    /// crash right after the call's answer went out) leaves the record in progress, so an
    /// identical retry runs the call again once the record is stale, as when storing fails.
    async fn finish(
        &self,
        scope: &IdempotencyScope,
        owner: &str,
        reply: &StoredReply,
        now: i64,
    ) -> Result<bool, StoreError>;

    /// Drops the owner's in-progress record (the call failed and may be retried).
    async fn release(&self, scope: &IdempotencyScope, owner: &str) -> Result<(), StoreError>;

    /// Deletes records created at or before `expired_before`; returns how many.
    async fn sweep(&self, expired_before: i64) -> Result<u64, StoreError>;
}
