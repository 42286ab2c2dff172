//! Group commit: one thread owns the writer connection and runs queued write jobs in batches,
//! each batch one transaction and one fsync, each job in its own savepoint (a job that fails
//! or rolls itself back leaves the others' writes alone), and every job answered only after
//! its batch's COMMIT returned. A batch is whatever queued while the previous one committed
//! (at most [`MAX_BATCH`] jobs), so a lone write waits for nobody and under load one sync
//! covers many orders: durability per order is unchanged (nothing is acknowledged before its
//! commit is on disk), only the syncs are shared.
//!
//! A job waits for the writer to take it at most its caller's wait timeout; one not taken by
//! then is taken back by its caller and dropped unrun (what it holds freed then, not when the
//! writer reaches its place in the queue), so a timed-out write is certainly unwritten, and one
//! taken is always waited for.
//!
//! A batch whose COMMIT fails answers each of its jobs what that left on disk: nothing
//! (`Unavailable` when busy, else `Backend`), or, when SQLite failed while writing it, not
//! known (`InDoubt`).
//!
//! A job never begins or commits a transaction itself: it opens a savepoint
//! (`connection.savepoint()`, which begins a transaction when run alone, as in tests or
//! migrations) and commits or drops it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use rusqlite::Connection;
use ucp_domain::store::StoreError;

use super::backend;

/// At most this many jobs share one commit.
pub(super) const MAX_BATCH: usize = 256;

/// Whether a job's commit must be on disk before it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Durability {
    /// `synchronous = FULL`: survives a power cut once answered.
    Synced,
    /// Bookkeeping nobody was promised: a batch of only these commits without an fsync.
    Relaxed,
    /// Answered as soon as it ran, before its batch commits (synced, as [`Durability::Synced`]):
    /// for a write whose loss with its batch (an I/O error) harms nobody, and which nothing
    /// reads until its batch has committed. Every job its caller queues after the answer runs
    /// in a later batch, so commits after it in time are after it on disk. The idempotency
    /// claim is one: without it the call's own write waited for the claim's fsync.
    Early,
    /// Synced, for a job that rewrites much of the database in one savepoint (an import): its
    /// batch keeps its savepoints' sub-journal in a temporary file, not in memory. The
    /// sub-journal holds the old copy of every page a savepoint changes that existed before
    /// it, so a re-import of a catalog otherwise held the whole catalog's old pages in memory
    /// (455 MB for 100,000 products, 3.3 GB for a million). SQLite keeps the first 64 KiB in
    /// memory either way; other batches keep it all there, as before (a job's few pages).
    Bulk,
}

/// What a job leaves for after the commit: answers its caller with its own result, or the
/// commit's failure.
type Answer = Box<dyn FnOnce(Result<(), CommitFailed>) + Send>;

/// A queued write.
trait Job: Send {
    /// Runs the work inside the batch's transaction.
    fn run(self: Box<Self>, connection: &mut Connection) -> Answer;
    /// The batch could not begin: the work never ran.
    fn reject(self: Box<Self>, failure: CommitFailed);
}

struct Work<T, F> {
    work: F,
    answer: tokio::sync::oneshot::Sender<Result<T, StoreError>>,
}

impl<T, F> Job for Work<T, F>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
{
    fn run(self: Box<Self>, connection: &mut Connection) -> Answer {
        let Work { work, answer } = *self;
        let result = work(connection);
        Box::new(move |committed: Result<(), CommitFailed>| {
            let _ = answer.send(match (result, committed) {
                (Err(error), _) => Err(error),
                (Ok(_), Err(failed)) => Err(failed.into()),
                (Ok(value), Ok(())) => Ok(value),
            });
        })
    }

    fn reject(self: Box<Self>, failure: CommitFailed) {
        let _ = self.answer.send(Err(failure.into()));
    }
}

/// A job in the queue. Its slot holds it until the writer takes it for a batch or its caller
/// stops waiting and takes it back; whichever empties the slot first decides.
struct Queued {
    slot: Arc<Slot>,
    durability: Durability,
}

type Slot = Mutex<Option<Box<dyn Job>>>;

/// A job the writer took for a batch.
struct Taken {
    job: Box<dyn Job>,
    durability: Durability,
}

/// Empties `slot`: the job, unless the other side took it first.
fn take(slot: &Slot) -> Option<Box<dyn Job>> {
    slot.lock().unwrap_or_else(PoisonError::into_inner).take()
}

impl Queued {
    /// Takes the job for a batch, unless its caller gave up on it first.
    fn take(self) -> Option<Taken> {
        take(&self.slot).map(|job| Taken { job, durability: self.durability })
    }
}

/// Why a batch did not commit, for every job in it.
#[derive(Debug, Clone)]
struct CommitFailed {
    outcome: Outcome,
    message: String,
}

/// What a failed batch left on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Nothing, and only for now (busy or locked): `Unavailable`.
    Busy,
    /// Nothing: `Backend`.
    NotStored,
    /// Unknown: COMMIT failed after SQLite began writing it (an I/O error or a full disk while
    /// the WAL frames were written or synced; SQLite then ended the transaction itself), so
    /// its frames may be on disk and survive a restart: `InDoubt`.
    Unknown,
}

impl From<CommitFailed> for StoreError {
    fn from(failed: CommitFailed) -> StoreError {
        match failed.outcome {
            Outcome::Busy => StoreError::Unavailable(failed.message),
            Outcome::NotStored => StoreError::Backend(failed.message),
            Outcome::Unknown => StoreError::InDoubt(failed.message),
        }
    }
}

/// A failure before COMMIT: nothing of the batch was stored.
fn failed(error: rusqlite::Error) -> CommitFailed {
    let message = error.to_string();
    // The store's one classification of SQLite errors: busy or locked is `Unavailable`.
    let busy = matches!(backend(error), StoreError::Unavailable(_));
    CommitFailed { outcome: if busy { Outcome::Busy } else { Outcome::NotStored }, message }
}

/// A failed COMMIT. One that leaves the transaction open stored nothing (SQLite checks
/// deferred constraints and takes its locks before it writes; the caller rolls back); one
/// after which SQLite ended the transaction itself failed while writing it: unknown.
fn commit_failed(error: rusqlite::Error, connection: &Connection) -> CommitFailed {
    let mut failure = failed(error);
    if failure.outcome == Outcome::NotStored && connection.is_autocommit() {
        failure.outcome = Outcome::Unknown;
    }
    failure
}

/// The queue in front of the writer thread. Dropping it ends the thread and waits for it: the
/// jobs already queued run, and the writer's connection is closed, which checkpoints the WAL
/// and removes it (a process that exited first left a `-wal` file as large as its last
/// import, which the next open had to scan).
pub(super) struct Writer {
    queue: Option<mpsc::Sender<Queued>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Writer {
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

impl Writer {
    pub(super) fn start(connection: Connection, max_batch: usize) -> Result<Writer, StoreError> {
        let (queue, jobs) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("ucpd-sqlite-writer".into())
            .spawn(move || run(connection, &jobs, max_batch.max(1)))
            .map_err(|error| StoreError::Backend(format!("starting the SQLite writer thread: {error}")))?;
        Ok(Writer { queue: Some(queue), thread: Some(thread) })
    }

    /// Queues `work` and waits for its batch to commit. A job the writer has not taken within
    /// `wait` is dropped unrun and answered `Unavailable`.
    pub(super) async fn submit<T, F>(&self, work: F, durability: Durability, wait: Duration) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (answer, mut answered) = tokio::sync::oneshot::channel();
        let job: Box<dyn Job> = Box::new(Work { work, answer });
        let slot = Arc::new(Mutex::new(Some(job)));
        self.queue
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("the SQLite writer has stopped".into()))?
            .send(Queued { slot: Arc::clone(&slot), durability })
            .map_err(|_| StoreError::Unavailable("the SQLite writer has stopped".into()))?;
        // Unanswered: the job panicked (after releasing its savepoint, its writes commit with
        // its batch) or the writer thread died. Either way, what was written is not known.
        let panicked = |_| StoreError::InDoubt("a write job panicked; what it wrote may stand".into());
        match tokio::time::timeout(wait, &mut answered).await {
            Ok(answer) => answer.map_err(panicked)?,
            // Taken back unrun, and dropped here with what it holds.
            Err(_) if take(&slot).is_some() => Err(StoreError::Unavailable(format!(
                "the database writer did not take this write within {} ms; nothing was written",
                wait.as_millis()
            ))),
            // Taken: it runs to its commit, which is waited for.
            Err(_) => answered.await.map_err(panicked)?,
        }
    }
}

fn run(mut connection: Connection, jobs: &mpsc::Receiver<Queued>, max_batch: usize) {
    let mut synced = true;
    while let Ok(first) = jobs.recv() {
        let mut batch = Vec::with_capacity(8);
        batch.extend(first.take());
        while batch.len() < max_batch {
            match jobs.try_recv() {
                // Empty when its caller gave up: taken back unrun.
                Ok(queued) => batch.extend(queued.take()),
                Err(_) => break,
            }
        }
        if batch.is_empty() {
            continue;
        }
        let wants_sync = batch.iter().any(|queued| queued.durability != Durability::Relaxed);
        if wants_sync != synced {
            let pragma = if wants_sync { "PRAGMA synchronous = FULL;" } else { "PRAGMA synchronous = NORMAL;" };
            match connection.execute_batch(pragma) {
                Ok(()) => synced = wants_sync,
                Err(error) if wants_sync => {
                    // Never commit a promised write without the sync: fail the batch.
                    let failure = failed(error);
                    tracing::error!(error = %failure.message, "could not restore synchronous = FULL");
                    for queued in batch {
                        queued.job.reject(failure.clone());
                    }
                    continue;
                }
                Err(error) => tracing::warn!(%error, "could not relax synchronous; committing synced"),
            }
        }
        let bulk = batch.iter().any(|queued| queued.durability == Durability::Bulk);
        // Outside a transaction, where SQLite takes it (the write transaction's sub-journal
        // is placed when it begins).
        if bulk && let Err(error) = connection.execute_batch("PRAGMA temp_store = FILE") {
            tracing::warn!(%error, "could not move the sub-journal to a file; the import holds it in memory");
        }
        commit_batch(&mut connection, batch);
        if bulk && let Err(error) = connection.execute_batch("PRAGMA temp_store = MEMORY") {
            tracing::warn!(%error, "could not restore temp_store = MEMORY after an import");
        }
    }
}

/// Runs `batch` in one transaction and answers each job after the commit ([`Durability::Early`]
/// jobs as soon as they ran).
fn commit_batch(connection: &mut Connection, batch: Vec<Taken>) {
    let mut jobs = batch.into_iter();
    while jobs.len() > 0 {
        if let Err(error) = connection.execute_batch("BEGIN IMMEDIATE") {
            // Another process holds the database past the busy timeout: nothing ran.
            let failure = failed(error);
            for queued in jobs {
                queued.job.reject(failure.clone());
            }
            return;
        }
        let mut answers = Vec::new();
        let mut aborted = None;
        for queued in jobs.by_ref() {
            let early = queued.durability == Durability::Early;
            // A panicking job drops its savepoint (rolled back, unless it was released first)
            // and its answer channel (its caller is told `InDoubt`); the batch goes on.
            if let Ok(answer) = catch_unwind(AssertUnwindSafe(|| queued.job.run(connection))) {
                if early && !connection.is_autocommit() {
                    answer(Ok(()));
                } else {
                    answers.push(answer);
                }
            }
            if connection.is_autocommit() {
                // SQLite rolled the whole transaction back (an I/O error, a full disk): every
                // job of it so far lost its writes. The rest go on in a new transaction.
                aborted = Some(CommitFailed {
                    outcome: Outcome::NotStored,
                    message: "the write transaction was rolled back by SQLite; nothing was saved".into(),
                });
                break;
            }
        }
        let committed = match aborted {
            Some(failure) => Err(failure),
            None => connection.execute_batch("COMMIT").map_err(|error| commit_failed(error, connection)),
        };
        if committed.is_err() && !connection.is_autocommit() {
            let _ = connection.execute_batch("ROLLBACK");
        }
        for answer in answers {
            answer(committed.clone());
        }
    }
}

#[cfg(test)]
mod tests;
