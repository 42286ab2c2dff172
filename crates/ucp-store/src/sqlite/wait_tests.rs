//! The store's wait timeout on reads (`SqliteStore::set_wait_timeout`); the writer's side is
//! tested in `writer/tests.rs`.

use std::time::Duration;

use ucp_domain::store::StoreError;

use super::SqliteStore;

/// Counts to `n` in SQL, row by row: a read that takes as long as it is asked to.
fn count_to(n: i64) -> impl FnOnce(&rusqlite::Connection) -> Result<i64, StoreError> + Send + 'static {
    move |connection| {
        connection
            .query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?1) SELECT count(*) FROM c",
                [n],
                |row| row.get(0),
            )
            .map_err(super::backend)
    }
}

fn store(dir: &tempfile::TempDir, wait: Duration) -> SqliteStore {
    let store = SqliteStore::open(&dir.path().join("wait.db"), 1).unwrap();
    store.set_wait_timeout(wait);
    store
}

/// Which of the store's connections [`held`] holds: its one reader, or its writer.
enum Held {
    Reader,
    Writer,
}

/// Holds `store`'s reader or writer until the returned gate is opened (sent to), from a task
/// that answers what the store answered the held call; given 50 ms to get there.
async fn held(
    store: &SqliteStore,
    which: Held,
) -> (std::sync::mpsc::Sender<()>, tokio::task::JoinHandle<Result<(), StoreError>>) {
    let (open_gate, gate) = std::sync::mpsc::channel::<()>();
    let wait = move || gate.recv().map_err(|_| StoreError::Backend("gate".into()));
    let store = store.clone();
    let holder = tokio::spawn(async move {
        match which {
            Held::Reader => store.read(move |_| wait()).await,
            Held::Writer => store.write(move |_| wait()).await,
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    (open_gate, holder)
}

// A read that gets no connection within the wait is answered `Unavailable` and runs nothing;
// the reader it waited for is not harmed and serves the next read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_waits_for_a_reader_at_most_the_wait_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir, Duration::from_millis(200));
    let (open_gate, holder) = held(&store, Held::Reader).await;
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&ran);
    let refused = store
        .read(move |_| {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        })
        .await;
    assert!(
        matches!(&refused, Err(StoreError::Unavailable(message)) if message.contains("no database reader came free within 200 ms")),
        "{refused:?}"
    );
    // The holder, blocked outside SQLite past its own deadline, is answered at it too, its
    // gate still shut.
    let started = std::time::Instant::now();
    while !holder.is_finished() && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    open_gate.send(()).unwrap();
    let held = holder.await.unwrap();
    assert!(matches!(&held, Err(StoreError::Unavailable(message)) if message.contains("did not finish")), "{held:?}");
    assert_eq!(store.read(count_to(3)).await.unwrap(), 3);
    assert!(!ran.load(std::sync::atomic::Ordering::SeqCst), "the refused read never ran");
}

// A read whose statements outrun the wait is interrupted by SQLite and answered `Unavailable`,
// and its connection serves the next read; an index rebuild's read (`read_to_end`) is not
// stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_running_past_the_wait_is_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir, Duration::from_millis(100));
    let endless = |connection: &rusqlite::Connection| {
        connection
            .query_row(
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
                [],
                |row| row.get::<_, i64>(0),
            )
            .map_err(super::backend)
    };
    let stopped = store.read(endless).await;
    assert!(
        matches!(&stopped, Err(StoreError::Unavailable(message)) if message.contains("did not finish within 100 ms")),
        "{stopped:?}"
    );
    assert_eq!(store.read(count_to(10)).await.unwrap(), 10);
    // Five million rows take far longer than a millisecond; only `read_to_end` gets there.
    store.set_wait_timeout(Duration::from_millis(1));
    assert!(matches!(store.read(count_to(5_000_000)).await, Err(StoreError::Unavailable(_))));
    assert_eq!(store.read_to_end(count_to(5_000_000)).await.unwrap(), 5_000_000);
}

// A read blocked outside SQLite's statements (a stalled disk, a lock), where the progress
// handler never runs, is answered at the deadline all the same; its connection comes back to
// the pool when the work ends, and serves the next read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_blocked_outside_its_statements_is_answered_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir, Duration::from_millis(100));
    let started = std::time::Instant::now();
    let stalled = store
        .read(|_| {
            std::thread::sleep(Duration::from_millis(1_500));
            Ok(())
        })
        .await;
    let waited = started.elapsed();
    assert!(
        matches!(&stalled, Err(StoreError::Unavailable(message)) if message.contains("did not finish within 100 ms")),
        "{stalled:?}"
    );
    assert!(waited < Duration::from_millis(1_000), "answered at the deadline, not when the work ended: {waited:?}");
    // Every reader serves again: the stalled one once its work ends.
    store.set_wait_timeout(Duration::from_secs(5));
    for _ in 0..8 {
        assert_eq!(store.read(count_to(3)).await.unwrap(), 3);
    }
}

// An import the writer does not take within the wait is answered `Unavailable` then, and its
// preparer, stopped by the dropped job, does not hold the caller until the writer frees;
// nothing of it is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_not_taken_in_time_is_answered_at_the_wait() {
    use ucp_domain::store::CatalogStore;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir, Duration::from_millis(200));
    let (open_gate, holder) = held(&store, Held::Writer).await;
    let products: Vec<_> =
        (0..2_000).map(|n| Ok(super::import::tests::product(&format!("p{n}"), &format!("v{n}"), n + 1))).collect();
    let started = std::time::Instant::now();
    let refused = tokio::time::timeout(Duration::from_secs(10), store.import_products(Box::new(products.into_iter())))
        .await
        .expect("the import is answered while the writer is still held");
    let waited = started.elapsed();
    assert!(
        matches!(&refused, Err(StoreError::Unavailable(message)) if message.contains("nothing was written")),
        "{refused:?}"
    );
    assert!(waited < Duration::from_secs(2), "answered at the wait, not when the writer freed: {waited:?}");
    open_gate.send(()).unwrap();
    holder.await.unwrap().unwrap();
    assert_eq!(store.product_count().await.unwrap(), 0);
}

// A read whose work panics fails alone: its connection goes back to the pool (here the only
// one), which serves the next read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_that_panics_gives_its_connection_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir, Duration::from_secs(5));
    let panicked = store
        .read(|connection| -> Result<(), StoreError> {
            connection.execute_batch("BEGIN").map_err(super::backend)?;
            panic!("a read that panics in its transaction")
        })
        .await;
    assert!(
        matches!(&panicked, Err(StoreError::Backend(message)) if message.contains("reader task failed")),
        "{panicked:?}"
    );
    for _ in 0..3 {
        assert_eq!(store.read(count_to(3)).await.unwrap(), 3);
    }
}
