//! The scratch database an import stages its rows in, so that no feed is ever held whole in
//! memory: a SQLite file in a temporary directory of its own, deleted with the [`Staging`].
//! Nothing in it has to survive a crash, so it runs without a journal and without syncs, in
//! one transaction that is never committed.
//!
//! Besides what each reader stages, it keeps the skipped rows (on disk too: a feed may have
//! millions of bad rows), read back in line order: of one line, those skipped while reading
//! first, then those skipped while building products, each in the order they were skipped;
//! and the warnings about rows imported without a value, in line order too.

use std::cell::Cell;
use std::path::Path;

use rusqlite::{Connection, params};

use super::{FeedError, RowWarning, SkippedRow};

/// Page cache of the scratch database. Its hot pages are the B-tree interiors of what is
/// looked up row by row (row ids, group ids, handles); the rows themselves stream through.
const CACHE_KIB: i64 = 32 * 1024;

const SCHEMA: &str = "
    CREATE TABLE skipped (
        line   INTEGER NOT NULL,
        phase  INTEGER NOT NULL,
        seq    INTEGER NOT NULL,
        field  TEXT    NOT NULL,
        reason TEXT    NOT NULL,
        -- The currency of a row skipped for not being priced in the catalog's.
        currency TEXT,
        PRIMARY KEY (line, phase, seq)
    ) WITHOUT ROWID;
    CREATE TABLE warnings (
        line   INTEGER NOT NULL,
        seq    INTEGER NOT NULL,
        field  TEXT    NOT NULL,
        reason TEXT    NOT NULL,
        PRIMARY KEY (line, seq)
    ) WITHOUT ROWID;";

/// When a row was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// While reading the feed: the row itself is wrong, or cannot join its product.
    Read = 0,
    /// While building products: the product the row belongs to does not normalize.
    Build = 1,
}

pub(super) struct Staging {
    // Declared first, so it closes before the directory is removed.
    connection: Connection,
    _directory: tempfile::TempDir,
    /// Skipped rows recorded, and the next arrival number (which keeps rows of one line in the
    /// order they were skipped, as a stable sort by line would).
    skipped: Cell<u64>,
    /// Warnings recorded, and the next arrival number.
    warnings: Cell<u64>,
}

impl Staging {
    /// A fresh scratch database in a new directory under `parent`, with the skipped-row table
    /// and `schema` (the caller's own tables).
    pub(super) fn create(parent: &Path, schema: &str) -> Result<Staging, FeedError> {
        let directory = tempfile::Builder::new().prefix(".ucpd-import-").tempdir_in(parent)?;
        let connection = Connection::open(directory.path().join("staging.db")).map_err(staging_error)?;
        connection
            .execute_batch(&format!(
                "PRAGMA page_size = 8192;
                 PRAGMA journal_mode = OFF;
                 PRAGMA synchronous = OFF;
                 PRAGMA locking_mode = EXCLUSIVE;
                 PRAGMA temp_store = FILE;
                 PRAGMA cache_size = -{CACHE_KIB};
                 {SCHEMA}
                 {schema}
                 BEGIN;"
            ))
            .map_err(staging_error)?;
        connection.set_prepared_statement_cache_capacity(32);
        Ok(Staging { connection, _directory: directory, skipped: Cell::new(0), warnings: Cell::new(0) })
    }

    pub(super) fn connection(&self) -> &Connection {
        &self.connection
    }

    /// Records a skipped row.
    pub(super) fn skip(&self, skipped: &SkippedRow, phase: Phase) -> Result<(), FeedError> {
        let seq = self.skipped.get();
        self.connection
            .prepare_cached(
                "INSERT INTO skipped (line, phase, seq, field, reason, currency) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .and_then(|mut statement| {
                let SkippedRow { line, field, reason, currency } = skipped;
                statement.execute(params![*line as i64, phase as i64, seq as i64, field, reason, currency])
            })
            .map_err(staging_error)?;
        self.skipped.set(seq + 1);
        Ok(())
    }

    /// Records a warning about a row imported without one of its values.
    pub(super) fn warn(&self, warning: &RowWarning) -> Result<(), FeedError> {
        let seq = self.warnings.get();
        self.connection
            .prepare_cached("INSERT INTO warnings (line, seq, field, reason) VALUES (?1, ?2, ?3, ?4)")
            .and_then(|mut statement| {
                statement.execute(params![warning.line as i64, seq as i64, warning.field, warning.reason])
            })
            .map_err(staging_error)?;
        self.warnings.set(seq + 1);
        Ok(())
    }

    /// Forgets the rows skipped while building products, to build them again.
    pub(super) fn forget_build_skips(&self) -> Result<(), FeedError> {
        let forgotten = self
            .connection
            .execute("DELETE FROM skipped WHERE phase = ?1", [Phase::Build as i64])
            .map_err(staging_error)?;
        self.skipped.set(self.skipped.get() - forgotten as u64);
        Ok(())
    }

    /// How many rows were skipped so far.
    pub(super) fn skipped(&self) -> u64 {
        self.skipped.get()
    }

    /// How many warnings were recorded so far.
    pub(super) fn warnings(&self) -> u64 {
        self.warnings.get()
    }

    /// The skipped rows in line order (rows of one line in the order they were skipped).
    pub(super) fn for_each_skipped(&self, visit: &mut dyn FnMut(SkippedRow)) -> Result<(), FeedError> {
        let mut statement = self
            .connection
            .prepare("SELECT line, field, reason, currency FROM skipped ORDER BY line, phase, seq")
            .map_err(staging_error)?;
        let mut rows = statement.query([]).map_err(staging_error)?;
        while let Some(row) = rows.next().map_err(staging_error)? {
            let line: i64 = row.get(0).map_err(staging_error)?;
            visit(SkippedRow {
                line: line as u64,
                field: row.get(1).map_err(staging_error)?,
                reason: row.get(2).map_err(staging_error)?,
                currency: row.get(3).map_err(staging_error)?,
            });
        }
        Ok(())
    }

    /// The warnings in line order (those of one line in the order they came).
    pub(super) fn for_each_warning(&self, visit: &mut dyn FnMut(RowWarning)) -> Result<(), FeedError> {
        let mut statement = self
            .connection
            .prepare("SELECT line, field, reason FROM warnings ORDER BY line, seq")
            .map_err(staging_error)?;
        let mut rows = statement.query([]).map_err(staging_error)?;
        while let Some(row) = rows.next().map_err(staging_error)? {
            let read = || -> rusqlite::Result<(i64, String, String)> { Ok((row.get(0)?, row.get(1)?, row.get(2)?)) };
            let (line, field, reason) = read().map_err(staging_error)?;
            visit(RowWarning::new(line as u64, field, reason));
        }
        Ok(())
    }

    /// The currencies of the rows skipped for not being priced in the catalog's, each with how
    /// many rows, the most first.
    pub(super) fn foreign_currencies(&self) -> Result<Vec<(String, u64)>, FeedError> {
        let mut statement = self
            .connection
            .prepare(
                "SELECT currency, count(*) FROM skipped WHERE currency IS NOT NULL \
                 GROUP BY currency ORDER BY count(*) DESC, currency",
            )
            .map_err(staging_error)?;
        let found = statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)? as u64)))
            .and_then(Iterator::collect)
            .map_err(staging_error)?;
        Ok(found)
    }
}

pub(super) fn staging_error(error: rusqlite::Error) -> FeedError {
    FeedError::Staging(error.to_string())
}

/// Appends `value` as a LEB128 varint.
pub(super) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a LEB128 varint off the front of `bytes`.
pub(super) fn take_varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// Appends a length-prefixed string.
pub(super) fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// Reads a length-prefixed string off the front of `bytes`.
pub(super) fn take_str<'a>(bytes: &mut &'a [u8]) -> Option<&'a str> {
    let length = usize::try_from(take_varint(bytes)?).ok()?;
    if length > bytes.len() {
        return None;
    }
    let (text, rest) = bytes.split_at(length);
    *bytes = rest;
    std::str::from_utf8(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_strings_round_trip() {
        let mut out = Vec::new();
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            put_varint(&mut out, value);
        }
        put_str(&mut out, "");
        put_str(&mut out, "héllo");
        let mut bytes = &out[..];
        for value in [0, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(take_varint(&mut bytes), Some(value));
        }
        assert_eq!(take_str(&mut bytes), Some(""));
        assert_eq!(take_str(&mut bytes), Some("héllo"));
        assert!(bytes.is_empty());
        assert_eq!(take_str(&mut &[5, b'a'][..]), None);
    }

    #[test]
    fn skipped_rows_come_back_in_line_then_phase_order_and_the_directory_goes() {
        let parent = tempfile::tempdir().unwrap();
        let staging = Staging::create(parent.path(), "").unwrap();
        let skips = [
            (9, "b", Phase::Build),
            (3, "a", Phase::Read),
            (9, "c", Phase::Read),
            (1, "d", Phase::Read),
            (9, "e", Phase::Build),
        ];
        for (line, field, phase) in skips {
            staging.skip(&SkippedRow::new(line, field, "why"), phase).unwrap();
        }
        assert_eq!(staging.skipped(), 5);
        let seen = |staging: &Staging| {
            let mut seen = Vec::new();
            staging.for_each_skipped(&mut |skipped| seen.push(format!("{}{}", skipped.line, skipped.field))).unwrap();
            seen
        };
        assert_eq!(seen(&staging), ["1d", "3a", "9c", "9b", "9e"]);
        staging.forget_build_skips().unwrap();
        assert_eq!(staging.skipped(), 3);
        assert_eq!(seen(&staging), ["1d", "3a", "9c"]);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
        drop(staging);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0, "the scratch directory is removed");
    }
}
