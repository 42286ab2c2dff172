//! The in-memory catalog search index: an inverted index over product titles and bodies,
//! ranked with BM25 (title weighted 10:1), with category and variant-price filters, and
//! exact top-k keyset pagination.
//!
//! It is a per-instance cache derived from the catalog tables: built at start, rebuilt when
//! the catalog's change counter moves, and saved with [`CatalogIndex::write_to`] so that a
//! start can read it back ([`CatalogIndex::read_from`]) instead of building it. Every backend
//! can build it from its own rows, so a PostgreSQL deployment with several instances gets the
//! same ranking on each.
//!
//! Each term's postings come in two tiers: the documents with the term in their title, and
//! those with it in the body only. The title weight makes a title hit worth several times the
//! best body-only hit, so a search scores the title tiers first and reads the body-only tiers
//! only while the page is not full or a tier's highest contribution could still reach it
//! (MaxScore); a bound per run of 64 postings skips runs that cannot reach the page. Bitmaps
//! of the common terms, the large categories and the price buckets let a pass step over
//! documents that lack a required term, lie outside the categories or have no price near the
//! range before scoring anything; small categories are joined by leapfrogging. Nothing a
//! search skips could have made its page, so the pages are exactly those of scoring every
//! posting (a test compares the two on random catalogs and queries).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::io::{self, Read, Write};

use rust_stemmers::{Algorithm, Stemmer};
use ucp_domain::store::{SearchPosition, SearchQuery};
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

mod build;
mod file;
mod filter;
mod rank;
mod search;
#[cfg(test)]
mod tests;

use build::*;
use filter::*;
use rank::*;
use search::*;

const TITLE_WEIGHT: f32 = 10.0;
const BODY_WEIGHT: f32 = 1.0;
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// What the index needs of one product.
#[derive(Debug, Clone)]
pub struct IndexDoc {
    pub row: i64,
    pub title: String,
    pub body: String,
    /// Lower-cased category paths and their ancestors.
    pub categories: Vec<String>,
    pub prices: Vec<i64>,
}

pub struct CatalogIndex {
    /// The catalog row of each document; documents are numbered in build order.
    rows: Vec<i64>,
    /// BM25 length normalisation per document: `K1 * (1 - B + B * length / average)`.
    title_norms: Vec<f32>,
    body_norms: Vec<f32>,
    /// Variant prices of document `d` are `prices[price_offsets[d]..price_offsets[d + 1]]`.
    prices: Vec<i64>,
    price_offsets: Vec<u32>,
    /// Price buckets: bucket `j` holds the prices from `price_bounds[j - 1]` (inclusive) to
    /// `price_bounds[j]`, the first and last ones open-ended. With `K` buckets, bitmap `j` of
    /// `price_bitmaps` (`j < K - 1`) holds the documents with a price in bucket `j` or below,
    /// and bitmap `K - 2 + j` (`j >= 1`) those with a price in bucket `j` or above: a document
    /// with a price in a range is in both bitmaps of the range's ends, so cursors can skip the
    /// others before the exact check.
    price_bounds: Vec<i64>,
    price_bitmaps: Vec<u64>,
    /// The stemmed terms, sorted; a term's number selects its lists in both tiers.
    terms: Dictionary,
    /// Documents with the term in the title, with frequencies `title << 8 | body` (each
    /// capped at 255).
    title: Lists,
    title_frequencies: Vec<u16>,
    /// Documents with the term in the body only, with the body frequency (capped at 255).
    body: Lists,
    body_frequencies: Vec<u8>,
    /// Per term, the highest contribution of a posting of its body-only tier.
    body_bounds: Vec<f32>,
    /// The highest contribution of each run of `BLOCK` postings of `title` (counted over the
    /// whole array, so a run may span two terms) and of `body`.
    title_blocks: Vec<f32>,
    body_blocks: Vec<f32>,
    /// Bitmaps of the documents having the terms found in at least 1/16 of them, for
    /// intersections: `rows.len().div_ceil(64)` words each.
    term_bitmaps: Vec<u64>,
    /// Per term, the number of its bitmap in `term_bitmaps`, or `u32::MAX`.
    term_bitmap: Vec<u32>,
    /// The lower-cased category paths, sorted, and the documents of each.
    categories: Dictionary,
    category_documents: Lists,
    /// Bitmaps of the categories holding at least 1/32 of the documents (where a bitmap is no
    /// larger than the list), for membership tests: `rows.len().div_ceil(64)` words each.
    category_bitmaps: Vec<u64>,
    /// Per category, the number of its bitmap in `category_bitmaps`, or `u32::MAX`.
    category_bitmap: Vec<u32>,
    stemmer: Stemmer,
}

impl std::fmt::Debug for CatalogIndex {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CatalogIndex")
            .field("documents", &self.rows.len())
            .field("terms", &self.terms.len())
            .finish()
    }
}

/// One page of ranked rows.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexPage {
    pub rows: Vec<SearchPosition>,
    pub has_more: bool,
}

impl CatalogIndex {
    /// Builds the index; `docs` should come in row order (browse order is row order).
    ///
    /// # Panics
    ///
    /// With 2^32 - 1 documents or more, or 2^32 variant prices or more.
    pub fn build(docs: impl IntoIterator<Item = IndexDoc>) -> CatalogIndex {
        let mut builder = Builder::default();
        for doc in docs {
            builder.add(doc);
        }
        builder.finish()
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Heap bytes held, from the capacities of the structures.
    pub fn heap_bytes(&self) -> usize {
        self.rows.capacity() * 8
            + (self.title_norms.capacity() + self.body_norms.capacity()) * 4
            + self.prices.capacity() * 8
            + self.price_offsets.capacity() * 4
            + self.price_bounds.capacity() * 8
            + self.price_bitmaps.capacity() * 8
            + self.terms.heap_bytes()
            + self.title.heap_bytes()
            + self.title_frequencies.capacity() * 2
            + self.body.heap_bytes()
            + self.body_frequencies.capacity()
            + (self.body_bounds.capacity() + self.title_blocks.capacity() + self.body_blocks.capacity()) * 4
            + self.term_bitmaps.capacity() * 8
            + self.term_bitmap.capacity() * 4
            + self.categories.heap_bytes()
            + self.category_documents.heap_bytes()
            + self.category_bitmaps.capacity() * 8
            + self.category_bitmap.capacity() * 4
    }
}

fn idf(documents: f32, frequency: f32) -> f32 {
    ((documents - frequency + 0.5) / (frequency + 0.5) + 1.0).ln()
}

/// Sorted strings in one buffer; string `i` ends at `ends[i]`.
#[derive(Debug, Default)]
struct Dictionary {
    text: String,
    ends: Vec<u64>,
}

impl Dictionary {
    /// `words` must come sorted.
    fn from_sorted<'a>(words: impl IntoIterator<Item = &'a str>) -> Dictionary {
        let mut dictionary = Dictionary::default();
        for word in words {
            dictionary.text.push_str(word);
            dictionary.ends.push(dictionary.text.len() as u64);
        }
        dictionary.text.shrink_to_fit();
        dictionary.ends.shrink_to_fit();
        dictionary
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, index: usize) -> &str {
        let start = if index == 0 { 0 } else { self.ends[index - 1] as usize };
        &self.text[start..self.ends[index] as usize]
    }

    fn find(&self, word: &str) -> Option<usize> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            match self.get(middle).cmp(word) {
                Ordering::Less => low = middle + 1,
                Ordering::Greater => high = middle,
                Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    fn validate(&self) -> Result<(), &'static str> {
        let mut start = 0;
        for end in &self.ends {
            let end = usize::try_from(*end).map_err(|_| "dictionary offset out of range")?;
            if end < start || end > self.text.len() || !self.text.is_char_boundary(end) {
                return Err("dictionary offsets out of order");
            }
            start = end;
        }
        if start != self.text.len() {
            return Err("dictionary text does not end with its last word");
        }
        if (1..self.len()).any(|index| self.get(index - 1) >= self.get(index)) {
            return Err("dictionary out of order");
        }
        Ok(())
    }

    fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.ends.capacity() * 8
    }
}

/// Sorted document lists, one per key: list `k` is `documents[starts[k]..starts[k + 1]]`.
#[derive(Debug, Default)]
struct Lists {
    starts: Vec<u64>,
    documents: Vec<u32>,
}

impl Lists {
    fn range(&self, key: usize) -> std::ops::Range<usize> {
        self.starts[key] as usize..self.starts[key + 1] as usize
    }

    fn list(&self, key: usize) -> &[u32] {
        &self.documents[self.range(key)]
    }

    fn validate(&self, keys: usize, documents: usize) -> Result<(), &'static str> {
        if self.starts.len() != keys + 1 || self.starts[0] != 0 {
            return Err("list offsets do not match the keys");
        }
        if self.starts.windows(2).any(|pair| pair[0] > pair[1]) || self.starts[keys] != self.documents.len() as u64 {
            return Err("list offsets out of order");
        }
        for key in 0..keys {
            let list = self.list(key);
            if !strictly_increasing(list) || list.last().is_some_and(|last| *last as usize >= documents) {
                return Err("document list out of order");
            }
        }
        Ok(())
    }

    fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 8 + self.documents.capacity() * 4
    }
}

/// Whether each document of `list` is above the one before (without branches, so that it
/// runs at memory speed on an index being read).
fn strictly_increasing(list: &[u32]) -> bool {
    let Some(rest) = list.get(1..) else { return true };
    !list.iter().zip(rest).fold(false, |unordered, (before, after)| unordered | (before >= after))
}

/// The words of `text`, as written: runs of letters and digits, with the combining marks a text
/// in decomposed form writes after its letters; a run of accents alone is no word.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|ch: char| !ch.is_alphanumeric() && (ch.is_ascii() || !is_combining_mark(ch)))
        .filter(|word| word.chars().any(|ch| ch.is_alphanumeric() && !is_accent(ch)))
}

/// Whether `ch` is one of the combining diacritics that accent Latin, Greek and Cyrillic
/// letters (the Combining Diacritical Marks blocks), which folding drops. Other scripts' marks
/// (a Devanagari vowel sign, the Japanese voicing mark) tell words apart and are kept.
fn is_accent(ch: char) -> bool {
    matches!(ch as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// A word as the index keeps it, before stemming: lower-cased and, when it is not ASCII,
/// without accents (decomposed, the diacritics dropped, composed again), so `Café`, `cafe`,
/// `CAFÉ` and a decomposed `Cafe\u{301}` are one term; then the Latin letters that do not
/// decompose written as a plain keyboard writes them ([`plain`]), so `Łódź`, `Ørsted` and
/// `Straße` match `lodz`, `orsted` and `strasse`.
fn folded(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let mut folded = String::with_capacity(word.len());
    for ch in word.to_lowercase().nfd().filter(|ch| !is_accent(*ch)).nfc() {
        match plain(ch) {
            Some(letters) => folded.push_str(letters),
            None => folded.push(ch),
        }
    }
    folded
}

/// The ASCII letters a lower-case Latin letter with a stroke, a ligature or a letter of its
/// own (which Unicode does not decompose) is written as without its keyboard: the
/// transliterations search engines' ASCII folding uses.
fn plain(ch: char) -> Option<&'static str> {
    Some(match ch {
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        'ø' => "o",
        'ł' | 'ŀ' => "l",
        'đ' | 'ð' => "d",
        'þ' => "th",
        'ı' => "i",
        'ħ' => "h",
        'ŧ' => "t",
        'ƒ' => "f",
        _ => return None,
    })
}

/// Folded, stemmed words of `text`.
fn tokens<'a>(stemmer: &'a Stemmer, text: &'a str) -> impl Iterator<Item = String> + 'a {
    words(text).map(move |word| stemmer.stem(&folded(word)).into_owned())
}
