//! The embedded SQLite backend: one database file, WAL journal, a pool of reader
//! connections and a single writer connection, every call run on tokio's blocking pool.

mod cache;
#[cfg(test)]
mod cart_tests;
mod carts;
mod catalog;
mod commerce;
mod document;
mod holds;
mod idempotency;
mod import;
mod index_file;
mod indexing;
mod orders;
mod outbox;
mod refunds;
mod traffic;
#[cfg(test)]
mod wait_tests;
mod writer;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::index::CatalogIndex;
use tokio::sync::Semaphore;
use ucp_domain::store::StoreError;

/// Unix seconds now (bookkeeping columns; the domain passes its own clock where it matters).
fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or(0)
}

/// Migrations in order; the index + 1 is the schema version. Never edit a shipped one.
const MIGRATIONS: &[&str] = &[
    include_str!("schema.sql"),
    include_str!("schema_2.sql"),
    include_str!("schema_3.sql"),
    include_str!("schema_4.sql"),
    include_str!("schema_5.sql"),
    include_str!("schema_6.sql"),
    include_str!("schema_7.sql"),
    include_str!("schema_8.sql"),
    include_str!("schema_9.sql"),
    include_str!("schema_10.sql"),
    include_str!("schema_11.sql"),
    include_str!("schema_12.sql"),
    include_str!("schema_13.sql"),
];

/// How long a call waits for the store by default ([`SqliteStore::set_wait_timeout`]).
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// SQLite virtual-machine steps between two looks at a read's deadline (a few microseconds of
/// work; the look is one clock read).
const DEADLINE_CHECK_STEPS: std::ffi::c_int = 4096;

/// A SQLite database shared by every store trait.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    /// The search index and the catalog version it reflects.
    index: std::sync::RwLock<(Arc<CatalogIndex>, i64)>,
    /// Set when this process wrote the catalog: the next read rebuilds the index.
    index_stale: std::sync::atomic::AtomicBool,
    /// Products as served, product rows and id resolutions (see [`cache`]).
    cache: cache::ReadCache,
    readers: Mutex<Vec<Connection>>,
    reader_permits: Arc<Semaphore>,
    /// The longest a call waits for the store, in milliseconds: for a reader connection and
    /// its read to run, or for the writer to take its write ([`SqliteStore::set_wait_timeout`]).
    wait_ms: AtomicU64,
    /// The queue of the writer thread, which owns the only connection that writes.
    writer: writer::Writer,
    /// Signalled after a commit that added a webhook event, so this process's dispatcher sends
    /// it at once instead of at its next poll (`WebhookOutbox::enqueued`).
    outbox_wake: tokio::sync::Notify,
    /// The orders a merchant change holds now (`CommerceStore::hold_order`).
    holds: holds::Holds,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("SqliteStore").field("path", &self.inner.path).finish()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and runs pending migrations.
    pub fn open(path: &Path, readers: usize) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_with(path, readers, writer::MAX_BATCH)
    }

    /// [`SqliteStore::open`] with at most `group_commit_max_jobs` writes sharing a commit.
    pub fn open_with(path: &Path, readers: usize, group_commit_max_jobs: usize) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_inner(path, readers, group_commit_max_jobs, true)
    }

    /// Opens the store for `ucpd import`: without loading or building the search index (a
    /// million products' index is a quarter of a gigabyte the importer has no use for). A read
    /// through it would build the index first.
    pub fn open_for_import(path: &Path) -> Result<SqliteStore, StoreError> {
        SqliteStore::open_inner(path, 1, writer::MAX_BATCH, false)
    }

    fn open_inner(
        path: &Path,
        readers: usize,
        group_commit_max_jobs: usize,
        with_index: bool,
    ) -> Result<SqliteStore, StoreError> {
        let mut writer = open_connection(path, false)?;
        migrate(&mut writer)?;
        let started = std::time::Instant::now();
        let built = indexing::built_of(&writer)?;
        let index = match with_index.then(|| index_file::load(path, built)) {
            None => Arc::new(CatalogIndex::build(std::iter::empty())),
            Some(Some(index)) => {
                tracing::info!(
                    products = index.len(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "loaded the saved search index"
                );
                Arc::new(index)
            }
            Some(None) => {
                let (index, built) = indexing::load_index(&writer)?;
                tracing::info!(
                    products = index.len(),
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "built the search index"
                );
                let index = Arc::new(index);
                indexing::save_index_later(path, &index, built);
                index
            }
        };
        let version = built.version;
        let readers = readers.max(1);
        let mut pool = Vec::with_capacity(readers);
        for _ in 0..readers {
            pool.push(open_connection(path, true)?);
        }
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                path: path.to_owned(),
                index: std::sync::RwLock::new((index, version)),
                index_stale: std::sync::atomic::AtomicBool::new(!with_index),
                cache: cache::ReadCache::new(),
                readers: Mutex::new(pool),
                reader_permits: Arc::new(Semaphore::new(readers)),
                wait_ms: AtomicU64::new(DEFAULT_WAIT.as_millis() as u64),
                writer: writer::Writer::start(writer, group_commit_max_jobs)?,
                outbox_wake: tokio::sync::Notify::new(),
                holds: holds::Holds::default(),
            }),
        })
    }

    /// Sets the memory the catalog read cache may spend on products as served, in bytes of
    /// their measured weight (`[store] catalog_cache_mb`).
    pub fn set_catalog_cache_bytes(&self, bytes: u64) {
        self.inner.cache.set_product_bytes(bytes);
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Sets the longest a call waits for the store (`[store] wait_timeout_ms`): a read that gets
    /// no reader connection in that time, or whose statements are still running at its end, is
    /// stopped; a write the writer has not begun in that time is dropped unwritten. Either is
    /// `StoreError::Unavailable` (503, retry later), and neither leaves anything half-written. A
    /// write the writer has begun is always waited for, so its outcome is never in doubt.
    pub fn set_wait_timeout(&self, wait: Duration) {
        self.inner.wait_ms.store(wait.as_millis().clamp(1, u64::MAX as u128) as u64, Ordering::Relaxed);
    }

    fn wait_timeout(&self) -> Duration {
        Duration::from_millis(self.inner.wait_ms.load(Ordering::Relaxed))
    }

    /// Runs `work` on a reader connection on the blocking pool, answered within the wait
    /// timeout from this call: for a connection to come free, then for `work`, whose
    /// statements SQLite interrupts at the deadline. The permit and the connection travel with
    /// the blocking task, so a caller that gives up (a client disconnects) cannot strand a
    /// connection: the task finishes and returns it to the pool.
    pub(crate) async fn read<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.read_within(work, true).await
    }

    /// [`SqliteStore::read`] whose statements run to their end once it has a connection: for
    /// rebuilding the search index, which a deadline would fail again at every try.
    pub(crate) async fn read_to_end<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.read_within(work, false).await
    }

    async fn read_within<T, F>(&self, work: F, bounded: bool) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let wait = self.wait_timeout();
        let deadline = Instant::now() + wait;
        let permits = Arc::clone(&self.inner.reader_permits);
        let permit = match tokio::time::timeout(wait, permits.acquire_owned()).await {
            Ok(permit) => permit.map_err(|_| unavailable())?,
            Err(_) => {
                return Err(StoreError::Unavailable(format!(
                    "no database reader came free within {} ms",
                    wait.as_millis()
                )));
            }
        };
        let late =
            move || StoreError::Unavailable(format!("the database read did not finish within {} ms", wait.as_millis()));
        let inner = Arc::clone(&self.inner);
        let task = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            // Its caller was answered while it queued for the blocking pool: not run at all.
            if bounded && Instant::now() >= deadline {
                return Err(late());
            }
            let mut connection = inner.readers.lock().map_err(|_| unavailable())?.pop().ok_or_else(unavailable)?;
            let armed = if bounded {
                connection.progress_handler(DEADLINE_CHECK_STEPS, Some(move || Instant::now() >= deadline))
            } else {
                connection.progress_handler(0, None::<fn() -> bool>)
            };
            // A panic in `work` must not cost the pool its connection (the permit would outlive
            // it, and a later read find the pool empty): it goes back, then the panic goes on.
            let result = match armed {
                Ok(()) => catch_unwind(AssertUnwindSafe(|| work(&connection))),
                Err(error) => Ok(Err(backend(error))),
            };
            if !connection.is_autocommit() {
                let _ = connection.execute_batch("ROLLBACK");
            }
            if let Ok(mut readers) = inner.readers.lock() {
                readers.push(connection);
            }
            let result = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            match result {
                Err(_) if bounded && Instant::now() >= deadline => Err(late()),
                result => result,
            }
        });
        // The progress handler stops statements, not a read blocked outside them (on the disk,
        // a lock, the blocking pool's queue): the caller is answered at the deadline whatever
        // the task is doing, and the task, which holds the permit and the connection, gives
        // both back when it ends.
        let joined = if bounded {
            match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline), task).await {
                Ok(joined) => joined,
                Err(_) => return Err(late()),
            }
        } else {
            task.await
        };
        joined.map_err(|error| StoreError::Backend(format!("reader task failed: {error}")))?
    }

    /// Runs `work` on the writer thread inside the group commit of a batch of jobs (see
    /// [`writer`]), answering only after that batch's commit has been synced to disk. `work`
    /// opens its own savepoint (`connection.savepoint()`) and commits it, never a transaction:
    /// the writer has begun one for the batch.
    pub(crate) async fn write<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.submit(work, writer::Durability::Synced, self.wait_timeout()).await
    }

    /// [`SqliteStore::write`] answered as soon as `work` ran, before its batch commits (see
    /// [`writer::Durability::Early`]): for a write whose loss harms nobody.
    pub(crate) async fn write_early<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.submit(work, writer::Durability::Early, self.wait_timeout()).await
    }

    /// [`SqliteStore::write`] for a job that rewrites much of the database (an import): see
    /// [`writer::Durability::Bulk`].
    pub(crate) async fn write_bulk<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.submit(work, writer::Durability::Bulk, self.wait_timeout()).await
    }

    /// [`SqliteStore::write`] for bookkeeping nobody was promised (leases, delivery marks):
    /// a batch of such jobs only is committed without waiting for the fsync (WAL,
    /// `synchronous = NORMAL`); the next synced commit makes it durable, in order.
    pub(crate) async fn write_relaxed<T, F>(&self, work: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        self.inner.writer.submit(work, writer::Durability::Relaxed, self.wait_timeout()).await
    }
}

/// The schema version this build migrates to.
pub(crate) fn expected_schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// Runs `work` in one read transaction on a reader: every statement sees the same snapshot
/// (a product's document and its stock agree), and the WAL's read lock is taken once for all
/// of them rather than once per statement (a cold search reads twenty rows).
pub(crate) fn snapshot<T>(
    connection: &Connection,
    work: impl FnOnce(&Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let transaction = connection.unchecked_transaction().map_err(backend)?;
    let result = work(&transaction)?;
    transaction.commit().map_err(backend)?;
    Ok(result)
}

fn unavailable() -> StoreError {
    StoreError::Unavailable("the SQLite connection pool is closed".into())
}

fn open_connection(path: &Path, read_only: bool) -> Result<Connection, StoreError> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI
    };
    let connection = Connection::open_with_flags(path, flags).map_err(backend)?;
    connection
        .execute_batch(
            "PRAGMA busy_timeout = 5000;
             PRAGMA foreign_keys = ON;
             PRAGMA temp_store = MEMORY;",
        )
        .map_err(backend)?;
    // Page cache per connection: readers fetch only what the read cache misses (a product's
    // document and variants by row, an id's resolution), so they keep a small one: 2 MB holds
    // the B-tree interiors those lookups walk. The writer's is as small: every COMMIT in WAL mode
    // walks its page cache's hash table (pcache1Truncate), which at 16 MB was 3-4 % of the
    // server's CPU under the purchase benchmark; its hot pages (the B-tree interiors of
    // sessions, orders, the outbox) fit in 2 MB.
    let cache_kib = 2_000;
    connection.execute_batch(&format!("PRAGMA cache_size = -{cache_kib};")).map_err(backend)?;
    if !read_only {
        connection.pragma_update(None, "journal_mode", "WAL").map_err(backend)?;
        // Durable commits: a placed order survives a power loss, not only a process crash.
        // (The writer is the only connection that commits.)
        connection.execute_batch("PRAGMA synchronous = FULL;").map_err(backend)?;
    }
    connection.set_prepared_statement_cache_capacity(128);
    Ok(connection)
}

fn migrate(connection: &mut Connection) -> Result<(), StoreError> {
    migrate_to(connection, MIGRATIONS.len())
}

/// Applies the migrations after the database's `user_version` up to version `last`.
fn migrate_to(connection: &mut Connection, last: usize) -> Result<(), StoreError> {
    let current: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0)).map_err(backend)?;
    for (index, migration) in MIGRATIONS[..last].iter().enumerate() {
        let version = index as i64 + 1;
        if version <= current {
            continue;
        }
        let transaction = connection.transaction().map_err(backend)?;
        transaction.execute_batch(migration).map_err(backend)?;
        transaction.pragma_update(None, "user_version", version).map_err(backend)?;
        transaction.commit().map_err(backend)?;
        tracing::info!(version, "applied SQLite migration");
    }
    Ok(())
}

/// Maps a SQLite error into the domain's terms: constraint violations become `Conflict`,
/// a locked or busy database, or a read stopped at its deadline, `Unavailable`, the rest
/// `Backend`.
pub(crate) fn backend(error: rusqlite::Error) -> StoreError {
    if let rusqlite::Error::SqliteFailure(failure, message) = &error {
        match failure.code {
            rusqlite::ErrorCode::ConstraintViolation => {
                return StoreError::Conflict { constraint: message.clone().unwrap_or_else(|| error.to_string()) };
            }
            rusqlite::ErrorCode::DatabaseBusy
            | rusqlite::ErrorCode::DatabaseLocked
            | rusqlite::ErrorCode::OperationInterrupted => {
                return StoreError::Unavailable(error.to_string());
            }
            _ => {}
        }
    }
    StoreError::Backend(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn categories(connection: &Connection) -> Vec<(i64, String)> {
        connection
            .prepare("SELECT product_row, value FROM product_categories")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    // Migration 10 keys product_categories by product: a catalog written before it keeps every
    // category of a product that exists (an orphan row is dropped rather than failing the start),
    // duplicates are still refused, a product's deletion still cascades to its
    // categories, and no second index is left on the table.
    #[test]
    fn migration_10_keeps_every_category_under_the_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.db");
        let mut connection = open_connection(&path, false).unwrap();
        migrate_to(&mut connection, 9).unwrap();
        connection
            .execute_batch(
                "INSERT INTO products (row, id, doc, search_title, search_body, updated_at)
                     VALUES (1, 'p1', '{}', 't', 'b', 0), (2, 'p2', '{}', 't', 'b', 0);
                 INSERT INTO product_categories (value, product_row)
                     VALUES ('Toys > Trains', 1), ('Toys', 2), ('Apparel', 2), ('Toys', 1);
                 -- A row whose product is gone, as a database edited with foreign keys off has.
                 PRAGMA foreign_keys = OFF;
                 INSERT INTO product_categories (value, product_row) VALUES ('Orphans', 99);
                 PRAGMA foreign_keys = ON;",
            )
            .unwrap();
        drop(connection);

        let mut connection = open_connection(&path, false).unwrap();
        migrate(&mut connection).unwrap();
        let version: i64 = connection.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
        assert_eq!(version, expected_schema_version());
        let expected =
            |rows: &[(i64, &str)]| rows.iter().map(|(row, value)| (*row, value.to_string())).collect::<Vec<_>>();
        assert_eq!(
            categories(&connection),
            expected(&[(1, "Toys"), (1, "Toys > Trains"), (2, "Apparel"), (2, "Toys")])
        );
        let added = connection
            .execute("INSERT OR IGNORE INTO product_categories (value, product_row) VALUES ('Toys', 1)", [])
            .unwrap();
        assert_eq!(added, 0);
        connection.execute("DELETE FROM products WHERE row = 1", []).unwrap();
        assert_eq!(categories(&connection), expected(&[(2, "Apparel"), (2, "Toys")]));
        let indexes: i64 = connection
            .query_row(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'product_categories' AND sql IS NOT NULL",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(indexes, 0);
    }
}
