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
    busy: bool,
    message: String,
}

impl From<CommitFailed> for StoreError {
    fn from(failed: CommitFailed) -> StoreError {
        if failed.busy { StoreError::Unavailable(failed.message) } else { StoreError::Backend(failed.message) }
    }
}

fn failed(error: rusqlite::Error) -> CommitFailed {
    let message = error.to_string();
    // The store's one classification of SQLite errors: busy or locked is `Unavailable`.
    CommitFailed { busy: matches!(backend(error), StoreError::Unavailable(_)), message }
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
        let panicked = |_| StoreError::Backend("a write job panicked".into());
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
        commit_batch(&mut connection, batch);
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
            // A panicking job drops its savepoint (rolled back) and its answer channel (its
            // caller sees the failure); the batch goes on.
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
                    busy: false,
                    message: "the write transaction was rolled back by SQLite; nothing was saved".into(),
                });
                break;
            }
        }
        let committed = match aborted {
            Some(failure) => Err(failure),
            None => connection.execute_batch("COMMIT").map_err(failed),
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
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(30);

    fn writer(dir: &tempfile::TempDir) -> (Writer, std::path::PathBuf) {
        let path = dir.path().join("w.db");
        let connection = Connection::open(&path).unwrap();
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY); INSERT INTO t VALUES (-1);",
            )
            .unwrap();
        (Writer::start(connection, MAX_BATCH).unwrap(), path)
    }

    fn insert(n: i64) -> impl FnOnce(&mut Connection) -> Result<i64, StoreError> + Send + 'static {
        move |connection| {
            let savepoint = connection.savepoint().map_err(super::super::backend)?;
            savepoint.execute("INSERT INTO t (n) VALUES (?1)", [n]).map_err(super::super::backend)?;
            savepoint.commit().map_err(super::super::backend)?;
            Ok(n)
        }
    }

    // Concurrent jobs share commits, yet each one's outcome is its own: a job that fails (a
    // duplicate key) or panics loses only its own writes, and every answered write is in the
    // database for a fresh connection to read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn jobs_in_one_batch_succeed_or_fail_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, path) = writer(&dir);
        let writer = Arc::new(writer);
        let mut tasks = Vec::new();
        for n in 0..200_i64 {
            let writer = Arc::clone(&writer);
            tasks.push(tokio::spawn(async move {
                match n % 10 {
                    // Duplicates: refused, the rest of their batch unharmed.
                    7 => writer.submit(insert(-1), Durability::Synced, WAIT).await,
                    8 => {
                        writer
                            .submit(
                                move |connection: &mut Connection| -> Result<i64, StoreError> {
                                    let savepoint = connection.savepoint().unwrap();
                                    savepoint.execute("INSERT INTO t (n) VALUES (?1)", [n]).unwrap();
                                    panic!("a job that panics mid-write");
                                },
                                Durability::Synced,
                                WAIT,
                            )
                            .await
                    }
                    9 => writer.submit(insert(n), Durability::Relaxed, WAIT).await,
                    _ => writer.submit(insert(n), Durability::Synced, WAIT).await,
                }
            }));
        }
        let mut answered = vec![-1];
        for (n, task) in tasks.into_iter().enumerate() {
            let n = n as i64;
            match (n % 10, task.await.unwrap()) {
                (7, result) => assert!(matches!(result, Err(StoreError::Conflict { .. })), "{n}: {result:?}"),
                (8, result) => assert!(result.is_err(), "{n}: the panicking job fails"),
                (_, result) => answered.push(result.unwrap()),
            }
        }
        let reader = Connection::open(&path).unwrap();
        let mut stored: Vec<i64> = reader
            .prepare("SELECT n FROM t ORDER BY n")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        answered.sort_unstable();
        stored.sort_unstable();
        assert_eq!(stored, answered, "exactly the acknowledged writes are stored");
        assert_eq!(answered.len(), 161);
    }

    /// A job that holds the writer thread until the returned sender opens its gate.
    fn gate() -> (std::sync::mpsc::Sender<()>, impl FnOnce(&mut Connection) -> Result<(), StoreError> + Send + 'static)
    {
        let (open_gate, gate) = std::sync::mpsc::channel::<()>();
        (open_gate, move |_: &mut Connection| gate.recv().map_err(|_| StoreError::Backend("gate".into())))
    }

    /// Submits `work` from a task of its own, then gives the writer 100 ms to take it.
    async fn queued<T, F>(
        writer: &Arc<Writer>,
        work: F,
        durability: Durability,
    ) -> tokio::task::JoinHandle<Result<T, StoreError>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let writer = Arc::clone(writer);
        let task = tokio::spawn(async move { writer.submit(work, durability, WAIT).await });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        task
    }

    // An early job is answered while its batch still runs: here the job after it in the same
    // batch waits for the test to see that answer, so without it the batch would not finish.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_early_job_is_answered_before_its_batch_commits() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, path) = writer(&dir);
        let writer = Arc::new(writer);
        // Holds the writer thread until both jobs below are queued, so they share a batch.
        let (open_gate, gate) = gate();
        let gated = queued(&writer, gate, Durability::Synced).await;
        let early = queued(&writer, insert(1), Durability::Early).await;
        let (saw_early, early_seen) = std::sync::mpsc::channel::<()>();
        let after_early = move |connection: &mut Connection| {
            early_seen
                .recv_timeout(std::time::Duration::from_secs(10))
                .map_err(|_| StoreError::Backend("the early job was not answered".into()))?;
            insert(2)(connection)
        };
        let later = queued(&writer, after_early, Durability::Synced).await;
        open_gate.send(()).unwrap();
        gated.await.unwrap().unwrap();
        assert_eq!(early.await.unwrap().unwrap(), 1);
        saw_early.send(()).unwrap();
        assert_eq!(later.await.unwrap().unwrap(), 2);
        drop(writer);
        let reader = Connection::open(&path).unwrap();
        let stored: i64 = reader.query_row("SELECT count(*) FROM t WHERE n IN (1, 2)", [], |row| row.get(0)).unwrap();
        assert_eq!(stored, 2, "both writes are stored once their batch committed");
    }

    fn stored(path: &std::path::Path) -> Vec<i64> {
        let reader = Connection::open(path).unwrap();
        let mut statement = reader.prepare("SELECT n FROM t ORDER BY n").unwrap();
        statement.query_map([], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    }

    // A write the writer has not taken within its wait is answered `Unavailable` and never
    // runs, even once the writer is free again; one it has taken is waited for past the wait.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_not_taken_in_time_is_dropped_unwritten() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, path) = writer(&dir);
        let writer = Arc::new(writer);
        let (open_gate, gate) = std::sync::mpsc::channel::<()>();
        let holder = {
            let writer = Arc::clone(&writer);
            let short = Duration::from_millis(100);
            tokio::spawn(async move {
                writer
                    .submit(
                        move |connection: &mut Connection| {
                            gate.recv().map_err(|_| StoreError::Backend("gate".into()))?;
                            insert(1)(connection)
                        },
                        Durability::Synced,
                        short,
                    )
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = std::time::Instant::now();
        let refused = writer.submit(insert(2), Durability::Synced, Duration::from_millis(200)).await;
        assert!(
            matches!(&refused, Err(StoreError::Unavailable(message)) if message.contains("nothing was written")),
            "{refused:?}"
        );
        assert!(started.elapsed() >= Duration::from_millis(200));
        // The holder's own wait (100 ms) is long past, but it was taken: its caller still waits.
        open_gate.send(()).unwrap();
        assert_eq!(holder.await.unwrap().unwrap(), 1);
        assert_eq!(writer.submit(insert(3), Durability::Synced, WAIT).await.unwrap(), 3);
        assert_eq!(stored(&path), vec![-1, 1, 3], "the refused write never ran");
    }

    // A write its caller gave up on is freed then, with everything it holds, though the writer
    // is still busy and has not reached it in the queue: a stalled writer does not keep the
    // payloads of every caller that timed out meanwhile.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_given_up_on_is_freed_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let (writer, path) = writer(&dir);
        let writer = Arc::new(writer);
        let (open_gate, gate) = gate();
        let held = queued(&writer, gate, Durability::Synced).await;
        let payload = Arc::new(vec![0_u8; 1 << 20]);
        let kept = Arc::clone(&payload);
        let refused = writer
            .submit(
                move |connection: &mut Connection| {
                    assert_eq!(kept.len(), 1 << 20);
                    insert(2)(connection)
                },
                Durability::Synced,
                Duration::from_millis(100),
            )
            .await;
        assert!(matches!(refused, Err(StoreError::Unavailable(_))), "{refused:?}");
        assert_eq!(Arc::strong_count(&payload), 1, "the job and its payload are dropped while the writer is held");
        open_gate.send(()).unwrap();
        held.await.unwrap().unwrap();
        assert_eq!(writer.submit(insert(3), Durability::Synced, WAIT).await.unwrap(), 3);
        assert_eq!(stored(&path), vec![-1, 3]);
    }
}
