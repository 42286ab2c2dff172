//! How a product's document is kept in `products.doc`: its JSON compressed with LZ4 (the
//! uncompressed length first, four bytes little-endian) as a BLOB. A catalog written before
//! documents were compressed holds them as TEXT, which still reads: the column's type says which
//! form a row has, so no migration rewrites a catalog.
//!
//! Why: at a million products the documents were 5.4 of the database's 6.2 GB, each spilling
//! into an overflow page of its own, and an import wrote some 20 GB (the WAL, then the
//! checkpoint) for them. Compressed they take about a quarter of that and fit beside their row
//! on its leaf page; a read pays a few microseconds to decompress on a read-cache miss only.

use rusqlite::types::ValueRef;

/// The largest document stored. `pack` refuses a bigger one, so a bigger claim read back is a
/// damaged value, refused before any allocation. (A product is a few KB.)
const MAX_DOCUMENT: usize = 64 << 20;

/// The stored form of a document's JSON, or why it cannot be stored.
pub(super) fn pack(json: &[u8]) -> Result<Vec<u8>, String> {
    if json.len() > MAX_DOCUMENT {
        return Err(format!("its document is {} bytes, over the {MAX_DOCUMENT} a product may have", json.len()));
    }
    Ok(lz4_flex::compress_prepend_size(json))
}

/// The JSON of a stored document, whichever form it has.
pub(super) fn unpack(value: ValueRef<'_>) -> Result<Vec<u8>, String> {
    match value {
        ValueRef::Text(json) => Ok(json.to_vec()),
        ValueRef::Blob(packed) => {
            let (size, _) = lz4_flex::block::uncompressed_size(packed).map_err(|error| error.to_string())?;
            if size > MAX_DOCUMENT {
                return Err(format!("the stored document claims {size} bytes"));
            }
            lz4_flex::decompress_size_prepended(packed).map_err(|error| error.to_string())
        }
        other => Err(format!("a stored document of type {:?}", other.data_type())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_document_unpacks_to_the_same_json() {
        let json = br#"{"id":"p1","title":"Wool Sweater","description":{"plain":"Warm wool, warm wool, warm wool."}}"#;
        let packed = pack(json).unwrap();
        assert!(packed.len() < json.len(), "{} >= {}", packed.len(), json.len());
        assert_eq!(unpack(ValueRef::Blob(&packed)).unwrap(), json);
        // A document stored before compression reads as it is.
        assert_eq!(unpack(ValueRef::Text(json)).unwrap(), json);
    }

    #[test]
    fn a_damaged_value_is_an_error_not_a_panic_or_a_huge_allocation() {
        let json = br#"{"id":"p1","title":"Wool Sweater"}"#;
        let mut packed = pack(json).unwrap();
        // The length prefix claims 4 GB.
        packed[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(unpack(ValueRef::Blob(&packed)).unwrap_err().contains("claims"));
        // The body cut short.
        let packed = pack(json).unwrap();
        assert!(unpack(ValueRef::Blob(&packed[..packed.len() / 2])).is_err());
        assert!(unpack(ValueRef::Blob(&[1, 2])).is_err());
        assert!(unpack(ValueRef::Integer(7)).is_err());
        assert!(unpack(ValueRef::Null).is_err());
    }

    #[test]
    fn a_document_over_the_limit_is_refused_when_stored() {
        let json = vec![b' '; MAX_DOCUMENT + 1];
        assert!(pack(&json).unwrap_err().contains("over the"));
    }
}
