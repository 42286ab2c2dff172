//! Storage backends for ucpd.
//!
//! The embedded SQLite backend (`sqlite`) is the default: one file in the data directory,
//! WAL mode, a small pool of reader connections and one writer. Every backend implements the
//! traits of `ucp_domain::store`; the server only ever holds `Arc<dyn ...Store>`.

#[doc(hidden)]
pub mod index;
mod sqlite;

pub use sqlite::{DEFAULT_WAIT, SqliteStore};
