//! `IdempotencyStore` on SQLite: one row per scope, claimed with `INSERT … ON CONFLICT DO
//! NOTHING` (the statement PostgreSQL runs unchanged) on the single writer connection, so a
//! key is claimed once however many requests and instances race for it.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};
use ucp_domain::store::{ClaimTerms, IdempotencyClaim, IdempotencyScope, IdempotencyStore, StoreError, StoredReply};

use super::{SqliteStore, backend};

/// Rows one sweep statement deletes, so a large backlog never holds the writer for long.
const SWEEP_BATCH: i64 = 1_000;

/// A stored row, as `claim` reads it.
struct Row {
    fingerprint: String,
    owner: String,
    state: String,
    body: Option<String>,
    created: bool,
    created_at: i64,
    updated_at: i64,
}

#[async_trait]
impl IdempotencyStore for SqliteStore {
    async fn claim(&self, scope: &IdempotencyScope, terms: ClaimTerms<'_>) -> Result<IdempotencyClaim, StoreError> {
        let scope = scope.clone();
        let fingerprint = terms.fingerprint.to_owned();
        let owner = terms.owner.to_owned();
        let (now, expired_before, stale_before) = (terms.now, terms.expired_before, terms.stale_before);
        // Answered before its batch commits: a claim lost with its batch is no worse than one
        // a crash left in progress (the retry runs the call again, at once or once the claim
        // is stale), and the call's own write lands in a later batch, after it on disk.
        self.write_early(move |connection| {
            let transaction =
                connection.savepoint().map_err(backend)?;
            let inserted = transaction
                .prepare_cached("INSERT INTO idempotency (platform, operation, target, key, fingerprint, owner, state, created_at, updated_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7) \
                     ON CONFLICT (platform, operation, target, key) DO NOTHING").map_err(backend)?.execute(params![scope.platform, scope.operation, scope.target, scope.key, fingerprint, owner, now])
                .map_err(backend)?;
            if inserted == 1 {
                transaction.commit().map_err(backend)?;
                return Ok(IdempotencyClaim::Claimed);
            }
            let row = transaction
                .prepare_cached("SELECT fingerprint, owner, state, body, created, created_at, updated_at FROM idempotency \
                     WHERE platform = ?1 AND operation = ?2 AND target = ?3 AND key = ?4").map_err(backend)?.query_row(params![scope.platform, scope.operation, scope.target, scope.key],
                    |row| {
                        Ok(Row {
                            fingerprint: row.get(0)?,
                            owner: row.get(1)?,
                            state: row.get(2)?,
                            body: row.get(3)?,
                            created: row.get::<_, i64>(4)? != 0,
                            created_at: row.get(5)?,
                            updated_at: row.get(6)?,
                        })
                    })
                .optional()
                .map_err(backend)?
                .ok_or_else(|| StoreError::Backend("an idempotency record vanished inside its transaction".into()))?;
            let expired = row.created_at <= expired_before;
            // Only an identical retry takes over a record its request left behind: a
            // different payload under the key stays a conflict.
            let abandoned = row.state == "pending" && row.updated_at <= stale_before && row.fingerprint == fingerprint;
            let claim = if expired || abandoned {
                let changed = transaction
                    .prepare_cached("UPDATE idempotency SET fingerprint = ?5, owner = ?6, state = 'pending', body = NULL, created = 0, \
                         created_at = ?7, updated_at = ?7 \
                         WHERE platform = ?1 AND operation = ?2 AND target = ?3 AND key = ?4 AND owner = ?8").map_err(backend)?.execute(params![
                            scope.platform,
                            scope.operation,
                            scope.target,
                            scope.key,
                            fingerprint,
                            owner,
                            now,
                            row.owner
                        ])
                    .map_err(backend)?;
                if changed == 1 {
                    IdempotencyClaim::Claimed
                } else {
                    IdempotencyClaim::InProgress { fingerprint: row.fingerprint }
                }
            } else if row.state == "finished" {
                let body = row.body.ok_or_else(|| StoreError::Backend("a finished idempotency record has no body".into()))?;
                IdempotencyClaim::Finished {
                    fingerprint: row.fingerprint,
                    reply: StoredReply { body, created: row.created },
                }
            } else {
                IdempotencyClaim::InProgress { fingerprint: row.fingerprint }
            };
            transaction.commit().map_err(backend)?;
            Ok(claim)
        })
        .await
    }

    async fn finish(
        &self,
        scope: &IdempotencyScope,
        owner: &str,
        reply: &StoredReply,
        now: i64,
    ) -> Result<bool, StoreError> {
        let scope = scope.clone();
        let owner = owner.to_owned();
        let reply = reply.clone();
        // Answered before its batch commits (as the claim is): the call's own write is on disk
        // already, and an answer lost with its batch (or a crash right after it went out)
        // leaves the record in progress, taken over by an identical retry once stale, as when
        // storing the answer fails outright (its caller sends the answer all the same).
        self.write_early(move |connection| {
            let changed = connection
                .prepare_cached("UPDATE idempotency SET state = 'finished', body = ?6, created = ?7, updated_at = ?8 \
                     WHERE platform = ?1 AND operation = ?2 AND target = ?3 AND key = ?4 AND owner = ?5 AND state = 'pending'").map_err(backend)?.execute(params![
                        scope.platform,
                        scope.operation,
                        scope.target,
                        scope.key,
                        owner,
                        reply.body,
                        i64::from(reply.created),
                        now
                    ])
                .map_err(backend)?;
            Ok(changed == 1)
        })
        .await
    }

    async fn release(&self, scope: &IdempotencyScope, owner: &str) -> Result<(), StoreError> {
        let scope = scope.clone();
        let owner = owner.to_owned();
        self.write(move |connection| {
            connection
                .prepare_cached("DELETE FROM idempotency \
                     WHERE platform = ?1 AND operation = ?2 AND target = ?3 AND key = ?4 AND owner = ?5 AND state = 'pending'").map_err(backend)?.execute(params![scope.platform, scope.operation, scope.target, scope.key, owner])
                .map_err(backend)?;
            Ok(())
        })
        .await
    }

    async fn sweep(&self, expired_before: i64) -> Result<u64, StoreError> {
        let mut swept = 0;
        loop {
            let deleted = self
                .write(move |connection| {
                    connection
                        .prepare_cached(
                            "DELETE FROM idempotency WHERE rowid IN \
                             (SELECT rowid FROM idempotency WHERE created_at <= ?1 LIMIT ?2)",
                        )
                        .map_err(backend)?
                        .execute(params![expired_before, SWEEP_BATCH])
                        .map_err(backend)
                })
                .await? as u64;
            swept += deleted;
            if deleted < SWEEP_BATCH as u64 {
                return Ok(swept);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(key: &str) -> IdempotencyScope {
        IdempotencyScope {
            platform: "https://platform.example/profile.json".into(),
            operation: "complete_checkout".into(),
            target: "chk_1".into(),
            key: key.into(),
        }
    }

    fn terms<'a>(fingerprint: &'a str, owner: &'a str, now: i64) -> ClaimTerms<'a> {
        ClaimTerms { fingerprint, owner, now, expired_before: now - 100, stale_before: now - 10 }
    }

    fn open() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("test.db"), 1).unwrap();
        (dir, store)
    }

    // The stored answer is answered while its batch still runs (the call's own write is on
    // disk before it is stored): the write after it in the same batch waits for the test to
    // see that answer, so without it the batch would not finish. Then a retry replays it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stored_answer_is_answered_before_its_batch_commits() {
        let (_dir, store) = open();
        let scope = scope("early");
        assert_eq!(store.claim(&scope, terms("f", "a", 1_000)).await.unwrap(), IdempotencyClaim::Claimed);
        let settle = || tokio::time::sleep(std::time::Duration::from_millis(100));
        // Holds the writer until the two writes below are queued, so they share a batch.
        let (open_gate, gate) = std::sync::mpsc::channel::<()>();
        let gated = tokio::spawn({
            let store = store.clone();
            async move { store.write(move |_| gate.recv().map_err(|_| StoreError::Backend("gate".into()))).await }
        });
        settle().await;
        let reply = StoredReply { body: "{\"id\":\"chk_1\"}".into(), created: false };
        let finished = tokio::spawn({
            let (store, scope, reply) = (store.clone(), scope.clone(), reply.clone());
            async move { store.finish(&scope, "a", &reply, 1_001).await }
        });
        settle().await;
        let (saw_answer, answer_seen) = std::sync::mpsc::channel::<()>();
        let later = tokio::spawn({
            let store = store.clone();
            async move {
                store
                    .write(move |_| {
                        answer_seen
                            .recv_timeout(std::time::Duration::from_secs(10))
                            .map_err(|_| StoreError::Backend("the stored answer was not answered".into()))
                    })
                    .await
            }
        });
        settle().await;
        open_gate.send(()).unwrap();
        gated.await.unwrap().unwrap();
        assert!(finished.await.unwrap().unwrap());
        saw_answer.send(()).unwrap();
        later.await.unwrap().unwrap();
        assert_eq!(
            store.claim(&scope, terms("f", "b", 1_002)).await.unwrap(),
            IdempotencyClaim::Finished { fingerprint: "f".into(), reply }
        );
    }

    #[tokio::test]
    async fn a_key_is_claimed_once_then_replayed() {
        let (_dir, store) = open();
        let scope = scope("k1");
        assert_eq!(store.claim(&scope, terms("f", "a", 1_000)).await.unwrap(), IdempotencyClaim::Claimed);
        assert_eq!(
            store.claim(&scope, terms("f", "b", 1_001)).await.unwrap(),
            IdempotencyClaim::InProgress { fingerprint: "f".into() }
        );
        let reply = StoredReply { body: "{\"id\":\"chk_1\"}".into(), created: true };
        assert!(!store.finish(&scope, "b", &reply, 1_002).await.unwrap(), "only the owner finishes");
        assert!(store.finish(&scope, "a", &reply, 1_002).await.unwrap());
        assert_eq!(
            store.claim(&scope, terms("f", "c", 1_003)).await.unwrap(),
            IdempotencyClaim::Finished { fingerprint: "f".into(), reply: reply.clone() }
        );
        // Another key, operation or target is another record.
        let mut other = scope.clone();
        other.target = "chk_2".into();
        assert_eq!(store.claim(&other, terms("f", "d", 1_003)).await.unwrap(), IdempotencyClaim::Claimed);
    }

    #[tokio::test]
    async fn released_stale_and_expired_records_are_claimed_anew() {
        let (_dir, store) = open();
        let scope = scope("k2");
        assert_eq!(store.claim(&scope, terms("f", "a", 1_000)).await.unwrap(), IdempotencyClaim::Claimed);
        store.release(&scope, "a").await.unwrap();
        assert_eq!(store.claim(&scope, terms("f", "b", 1_001)).await.unwrap(), IdempotencyClaim::Claimed);
        // Left in progress past the lease: an identical retry takes it over, another payload does not.
        assert_eq!(
            store.claim(&scope, terms("g", "c", 1_020)).await.unwrap(),
            IdempotencyClaim::InProgress { fingerprint: "f".into() }
        );
        assert_eq!(store.claim(&scope, terms("f", "c", 1_020)).await.unwrap(), IdempotencyClaim::Claimed);
        assert!(!store.finish(&scope, "b", &StoredReply { body: "{}".into(), created: false }, 1_021).await.unwrap());
        assert!(store.finish(&scope, "c", &StoredReply { body: "{}".into(), created: false }, 1_021).await.unwrap());
        // Past retention, anything may claim the key again; the sweep deletes old records.
        assert_eq!(store.claim(&scope, terms("g", "d", 1_200)).await.unwrap(), IdempotencyClaim::Claimed);
        assert_eq!(store.sweep(1_199).await.unwrap(), 0);
        assert_eq!(store.sweep(1_200).await.unwrap(), 1);
        assert_eq!(store.claim(&scope, terms("h", "e", 1_201)).await.unwrap(), IdempotencyClaim::Claimed);
    }
}
