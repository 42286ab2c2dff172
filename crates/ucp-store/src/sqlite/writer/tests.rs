//! The writer's batches, durability classes, wait and commit outcomes.

use super::*;

const WAIT: Duration = Duration::from_secs(30);

fn writer(dir: &tempfile::TempDir) -> (Writer, std::path::PathBuf) {
    let path = dir.path().join("w.db");
    let connection = Connection::open(&path).unwrap();
    connection
        .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY); INSERT INTO t VALUES (-1);")
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
            (8, result) => assert!(matches!(result, Err(StoreError::InDoubt(_))), "{n}: the panicking job fails"),
            (_, result) => answered.push(result.unwrap()),
        }
    }
    answered.sort_unstable();
    assert_eq!(stored(&path), answered, "exactly the acknowledged writes are stored");
    assert_eq!(answered.len(), 161);
}

/// A job that holds the writer thread until the returned sender opens its gate.
fn gate() -> (std::sync::mpsc::Sender<()>, impl FnOnce(&mut Connection) -> Result<(), StoreError> + Send + 'static) {
    let (open_gate, gate) = std::sync::mpsc::channel::<()>();
    (open_gate, move |_: &mut Connection| gate.recv().map_err(|_| StoreError::Backend("gate".into())))
}

/// Submits `work` while the writer is [`held`] and returns once it is in the writer's queue
/// (one poll of `submit` sends it), its answer awaited on a task of its own: jobs queued one
/// after another are queued in that order, however the tasks are scheduled.
fn queued<T, F>(writer: &Arc<Writer>, work: F, durability: Durability) -> tokio::task::JoinHandle<Result<T, StoreError>>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
{
    let writer = Arc::clone(writer);
    let mut submitted = Box::pin(async move { writer.submit(work, durability, WAIT).await });
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(submitted.as_mut().poll(&mut context).is_pending(), "the writer answered before it was queued");
    tokio::spawn(submitted)
}

/// Holds the writer thread with a [`gate`] job and returns once the writer runs it, waiting
/// for it at most `wait`.
async fn held(
    writer: &Arc<Writer>,
    wait: Duration,
) -> (std::sync::mpsc::Sender<()>, tokio::task::JoinHandle<Result<(), StoreError>>) {
    let (open_gate, gate) = gate();
    let (running, runs) = tokio::sync::oneshot::channel();
    let writer = Arc::clone(writer);
    let task = tokio::spawn(async move {
        let work = move |connection: &mut Connection| {
            let _ = running.send(());
            gate(connection)
        };
        writer.submit(work, Durability::Synced, wait).await
    });
    tokio::time::timeout(WAIT, runs).await.expect("the writer took the gate job").unwrap();
    (open_gate, task)
}

// An early job is answered while its batch still runs: here the job after it in the same
// batch waits for the test to see that answer, so without it the batch would not finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_early_job_is_answered_before_its_batch_commits() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path) = writer(&dir);
    let writer = Arc::new(writer);
    // Holds the writer thread until both jobs below are queued, so they share a batch.
    let (open_gate, gated) = held(&writer, WAIT).await;
    let early = queued(&writer, insert(1), Durability::Early);
    let (saw_early, early_seen) = std::sync::mpsc::channel::<()>();
    let after_early = move |connection: &mut Connection| {
        early_seen
            .recv_timeout(std::time::Duration::from_secs(10))
            .map_err(|_| StoreError::Backend("the early job was not answered".into()))?;
        insert(2)(connection)
    };
    let later = queued(&writer, after_early, Durability::Synced);
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
    // Taken within its wait of 300 ms, and held past it.
    let holder_wait = Duration::from_millis(300);
    let (open_gate, holder) = held(&writer, holder_wait).await;
    let started = std::time::Instant::now();
    let refused = writer.submit(insert(2), Durability::Synced, Duration::from_millis(200)).await;
    assert!(
        matches!(&refused, Err(StoreError::Unavailable(message)) if message.contains("nothing was written")),
        "{refused:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    tokio::time::sleep(holder_wait).await;
    // The holder's own wait is long past, but it was taken: its caller still waits.
    open_gate.send(()).unwrap();
    holder.await.unwrap().unwrap();
    assert_eq!(writer.submit(insert(3), Durability::Synced, WAIT).await.unwrap(), 3);
    assert_eq!(stored(&path), vec![-1, 3], "the refused write never ran");
}

// A write its caller gave up on is freed then, with everything it holds, though the writer
// is still busy and has not reached it in the queue: a stalled writer does not keep the
// payloads of every caller that timed out meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_given_up_on_is_freed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path) = writer(&dir);
    let writer = Arc::new(writer);
    let (open_gate, holder) = held(&writer, WAIT).await;
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
    holder.await.unwrap().unwrap();
    assert_eq!(writer.submit(insert(3), Durability::Synced, WAIT).await.unwrap(), 3);
    assert_eq!(stored(&path), vec![-1, 3]);
}

/// A writer whose COMMITs fail while `failing` is set: a vetoing commit hook, which fails the
/// COMMIT before anything is written but, as an I/O error while writing does, has SQLite end
/// the transaction itself. That is what the writer tells apart; the I/O error itself is
/// tested on the real binary (`ucp-cli/tests/crash.rs`, a file-size limit).
fn failing_writer(dir: &tempfile::TempDir) -> (Writer, std::path::PathBuf, Arc<std::sync::atomic::AtomicBool>) {
    let path = dir.path().join("w.db");
    let mut connection = Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; CREATE TABLE t (n INTEGER PRIMARY KEY); \
             CREATE TABLE parent (id INTEGER PRIMARY KEY); \
             CREATE TABLE child (parent INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);",
        )
        .unwrap();
    let failing = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let veto = Arc::clone(&failing);
    connection.commit_hook(Some(move || veto.load(std::sync::atomic::Ordering::SeqCst))).unwrap();
    (Writer::start(connection, MAX_BATCH).unwrap(), path, failing)
}

// A COMMIT after which SQLite ended the transaction itself (as it does on an I/O error or a
// full disk while writing, when the WAL frames may be on disk and survive a restart) answers
// its jobs `InDoubt`, never `Backend` ("not stored"), so nobody refunds a charge whose order
// may stand. The writer goes on.
#[tokio::test]
async fn a_commit_that_fails_while_writing_is_in_doubt() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path, failing) = failing_writer(&dir);
    failing.store(true, std::sync::atomic::Ordering::SeqCst);
    let failed = writer.submit(insert(1), Durability::Synced, WAIT).await;
    assert!(matches!(&failed, Err(StoreError::InDoubt(_))), "{failed:?}");
    failing.store(false, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(writer.submit(insert(2), Durability::Synced, WAIT).await.unwrap(), 2);
    assert_eq!(stored(&path), vec![2], "the vetoed commit rolled back; the next one stands");
}

// A COMMIT SQLite refuses before writing anything (a deferred constraint; the transaction stays
// open and the writer rolls it back) stored nothing: `Backend`, not `InDoubt`.
#[tokio::test]
async fn a_commit_refused_before_writing_stored_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, path, _) = failing_writer(&dir);
    let orphan = |connection: &mut Connection| -> Result<(), StoreError> {
        let savepoint = connection.savepoint().map_err(super::super::backend)?;
        savepoint.execute("INSERT INTO t (n) VALUES (5)", []).map_err(super::super::backend)?;
        savepoint.execute("INSERT INTO child (parent) VALUES (7)", []).map_err(super::super::backend)?;
        savepoint.commit().map_err(super::super::backend)
    };
    let refused = writer.submit(orphan, Durability::Synced, WAIT).await;
    assert!(matches!(&refused, Err(StoreError::Backend(message)) if message.contains("FOREIGN KEY")), "{refused:?}");
    assert_eq!(writer.submit(insert(6), Durability::Synced, WAIT).await.unwrap(), 6);
    assert_eq!(stored(&path), vec![6], "the refused batch was rolled back");
}

// A bulk job's batch keeps its sub-journal in a file (temp_store = FILE, set before the batch
// begins, when SQLite takes it); the batches after it keep theirs in memory again.
#[tokio::test]
async fn a_bulk_batch_journals_to_a_file_and_the_next_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (writer, _) = writer(&dir);
    let temp_store = |connection: &mut Connection| -> Result<i64, StoreError> {
        connection.query_row("PRAGMA temp_store", [], |row| row.get(0)).map_err(super::super::backend)
    };
    assert_eq!(writer.submit(temp_store, Durability::Bulk, WAIT).await.unwrap(), 1, "FILE");
    assert_eq!(writer.submit(temp_store, Durability::Synced, WAIT).await.unwrap(), 2, "MEMORY");
    assert_eq!(writer.submit(insert(1), Durability::Bulk, WAIT).await.unwrap(), 1);
}
