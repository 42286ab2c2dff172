//! The search index saved beside the database (`<database>.index`), so that a start loads it
//! instead of rebuilding it from every product row (at a million products the rebuild is most
//! of a start). It is a cache: it names the catalog it was built from (`catalog_meta.version`
//! and the highest product row) and the ucpd release that built it (a new release may stem or
//! rank differently without changing the file format); anything else (missing, another
//! catalog or release, corrupt, truncated) means a rebuild, and a failed save only costs the
//! next start that rebuild.

use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use crate::index::CatalogIndex;

/// What an index file was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Built {
    pub(super) version: i64,
    pub(super) max_row: i64,
}

/// FNV-1a of the release that writes or reads the file.
fn release_tag() -> [u8; 8] {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in env!("CARGO_PKG_VERSION").bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash.to_le_bytes()
}

fn path_of(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".index");
    PathBuf::from(name)
}

/// The saved index, if it was built from the catalog `wanted` describes.
pub(super) fn load(database: &Path, wanted: Built) -> Option<CatalogIndex> {
    let path = path_of(database);
    let file = std::fs::File::open(&path).ok()?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut header = [0u8; 24];
    reader.read_exact(&mut header).ok()?;
    let built = Built {
        version: i64::from_le_bytes(header[..8].try_into().ok()?),
        max_row: i64::from_le_bytes(header[8..16].try_into().ok()?),
    };
    if built != wanted || header[16..] != release_tag() {
        return None;
    }
    match CatalogIndex::read_from(&mut reader) {
        Ok(index) => Some(index),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "the saved search index is unreadable; rebuilding it");
            None
        }
    }
}

/// Saves `index` for the next start: written to a temporary file (owner-only), synced, then
/// renamed over the old one, so a crash leaves either file whole.
pub(super) fn save(database: &Path, index: &CatalogIndex, built: Built) {
    let path = path_of(database);
    let temporary = path.with_extension("index.tmp");
    let written = (|| -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&temporary)?;
        let mut writer = BufWriter::with_capacity(1 << 20, file);
        writer.write_all(&built.version.to_le_bytes())?;
        writer.write_all(&built.max_row.to_le_bytes())?;
        writer.write_all(&release_tag())?;
        index.write_to(&mut writer)?;
        let file = writer.into_inner().map_err(|error| error.into_error())?;
        file.sync_all()?;
        std::fs::rename(&temporary, &path)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        tracing::warn!(path = %path.display(), %error, "could not save the search index; the next start rebuilds it");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::IndexDoc;

    fn index() -> CatalogIndex {
        CatalogIndex::build((1..=3).map(|row| IndexDoc {
            row,
            title: format!("Blue mug {row}"),
            body: "ceramic".to_owned(),
            categories: vec!["kitchen".to_owned()],
            prices: vec![1000 * row],
        }))
    }

    #[test]
    fn a_saved_index_loads_only_for_the_catalog_it_was_built_from() {
        let dir = tempfile::tempdir().unwrap();
        let database = dir.path().join("ucpd.db");
        let built = Built { version: 4, max_row: 3 };
        assert!(load(&database, built).is_none(), "nothing saved yet");
        save(&database, &index(), built);
        assert_eq!(load(&database, built).map(|index| index.len()), Some(3));
        assert!(load(&database, Built { version: 5, max_row: 3 }).is_none(), "another catalog version");
        assert!(load(&database, Built { version: 4, max_row: 9 }).is_none(), "other rows");

        // A truncated file is a rebuild, not a panic.
        let path = path_of(&database);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        assert!(load(&database, built).is_none());
    }
}
