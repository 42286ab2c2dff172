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

    /// The page of `query`: ranked by relevance (best first; `score` is the negated BM25 so
    /// that lower sorts first) when there are terms, by row otherwise.
    pub fn search(&self, query: &SearchQuery) -> IndexPage {
        let filter = Filter {
            categories: self.category_lists(&query.categories),
            price_min: query.price_min,
            price_max: query.price_max,
            required: self.price_bitmaps_for(query.price_min, query.price_max),
        };
        if query.terms.is_empty() {
            return self.browse(query, &filter);
        }
        let mut words: Vec<String> = Vec::new();
        for word in query.terms.iter().flat_map(|text| tokens(&self.stemmer, text)) {
            if !words.contains(&word) {
                words.push(word);
            }
        }
        let mut terms = Vec::with_capacity(words.len());
        for word in &words {
            match self.terms.find(word) {
                Some(term) => terms.push(self.query_term(term)),
                None if query.match_all_terms => return IndexPage { rows: Vec::new(), has_more: false },
                None => {}
            }
        }
        if terms.is_empty() {
            return IndexPage { rows: Vec::new(), has_more: false };
        }
        let mut filter = filter;
        if query.match_all_terms && terms.len() > 1 {
            filter.required.extend(terms.iter().filter_map(|term| term.bitmap));
        }
        let search = Search { index: self, terms: &terms, filter: &filter, match_all: query.match_all_terms };
        let mut top = TopK::new(query.limit, query.after, terms.len());
        search.titles(&mut top);
        search.bodies(&mut top);
        top.page(query.limit)
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

    /// Writes the index in the binary form [`CatalogIndex::read_from`] reads: a header (magic,
    /// format number, the array lengths, a checksum of the header), then every array as
    /// little-endian values, then a checksum of the arrays.
    pub fn write_to(&self, mut writer: impl Write) -> io::Result<()> {
        let mut header = Vec::with_capacity(HEADER_BYTES);
        header.extend_from_slice(&MAGIC);
        header.extend_from_slice(&FORMAT.to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        for count in self.counts() {
            header.extend_from_slice(&count.to_le_bytes());
        }
        let checksum = Checksum::of(&header);
        header.extend_from_slice(&checksum.to_le_bytes());
        writer.write_all(&header)?;
        let mut output = Output { writer, checksum: Checksum::default(), buffer: Vec::with_capacity(CHUNK_BYTES) };
        output.array(&self.rows)?;
        output.array(&self.title_norms)?;
        output.array(&self.body_norms)?;
        output.array(&self.prices)?;
        output.array(&self.price_offsets)?;
        output.array(&self.price_bounds)?;
        output.array(&self.price_bitmaps)?;
        output.array(self.terms.text.as_bytes())?;
        output.array(&self.terms.ends)?;
        output.array(&self.title.starts)?;
        output.array(&self.title.documents)?;
        output.array(&self.title_frequencies)?;
        output.array(&self.body.starts)?;
        output.array(&self.body.documents)?;
        output.array(&self.body_frequencies)?;
        output.array(&self.body_bounds)?;
        output.array(&self.title_blocks)?;
        output.array(&self.body_blocks)?;
        output.array(&self.term_bitmap)?;
        output.array(&self.term_bitmaps)?;
        output.array(self.categories.text.as_bytes())?;
        output.array(&self.categories.ends)?;
        output.array(&self.category_documents.starts)?;
        output.array(&self.category_documents.documents)?;
        output.array(&self.category_bitmap)?;
        output.array(&self.category_bitmaps)?;
        let checksum = output.checksum.finish();
        output.writer.write_all(&checksum.to_le_bytes())?;
        output.writer.flush()
    }

    /// Reads an index [`CatalogIndex::write_to`] wrote. A file of another format number, a
    /// truncated file, and one whose bytes or structure are damaged are errors
    /// (`InvalidData`, or `UnexpectedEof` when it ends early).
    pub fn read_from(mut reader: impl Read) -> io::Result<CatalogIndex> {
        let mut header = [0u8; HEADER_BYTES];
        reader.read_exact(&mut header).map_err(truncated)?;
        if header[..8] != MAGIC {
            return Err(invalid("not a ucpd search index"));
        }
        let format = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
        if format != FORMAT {
            return Err(invalid(format!("search index format {format}, this build reads {FORMAT}")));
        }
        let (body, stored) = header.split_at(HEADER_BYTES - 8);
        if Checksum::of(body) != u64::from_le_bytes(stored.try_into().unwrap_or_default()) {
            return Err(invalid("search index header is damaged"));
        }
        let mut counts = [0usize; COUNTS];
        for (slot, bytes) in counts.iter_mut().zip(body[16..].chunks_exact(8)) {
            let count = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
            *slot = usize::try_from(count).map_err(|_| invalid("search index too large for this machine"))?;
        }
        let [
            documents,
            prices,
            term_bytes,
            terms,
            title_postings,
            body_postings,
            category_bytes,
            categories,
            category_postings,
            bitmaps,
            price_bounds,
            term_bitmap_count,
        ] = counts;
        let plus_one = |count: usize| count.checked_add(1).ok_or_else(|| invalid("search index header is damaged"));
        let mut input = Input { reader, checksum: Checksum::default(), buffer: vec![0; CHUNK_BYTES] };
        let rows = input.array(documents)?;
        let title_norms = input.array(documents)?;
        let body_norms = input.array(documents)?;
        let price_list = input.array(prices)?;
        let price_offsets = input.array(plus_one(documents)?)?;
        let price_bound_list = input.array(price_bounds)?;
        let price_bitmaps = input.array(
            price_bounds
                .checked_mul(2 * documents.div_ceil(64))
                .ok_or_else(|| invalid("search index header is damaged"))?,
        )?;
        let term_text = input.text(term_bytes)?;
        let term_ends = input.array(terms)?;
        let title_starts = input.array(plus_one(terms)?)?;
        let title_documents = input.array(title_postings)?;
        let title_frequencies = input.array(title_postings)?;
        let body_starts = input.array(plus_one(terms)?)?;
        let body_documents = input.array(body_postings)?;
        let body_frequencies = input.array(body_postings)?;
        let body_bounds = input.array(terms)?;
        let title_blocks = input.array(title_postings.div_ceil(BLOCK))?;
        let body_blocks = input.array(body_postings.div_ceil(BLOCK))?;
        let term_bitmap = input.array(terms)?;
        let term_bitmaps = input.array(
            term_bitmap_count
                .checked_mul(documents.div_ceil(64))
                .ok_or_else(|| invalid("search index header is damaged"))?,
        )?;
        let category_text = input.text(category_bytes)?;
        let category_ends = input.array(categories)?;
        let category_starts = input.array(plus_one(categories)?)?;
        let category_list = input.array(category_postings)?;
        let category_bitmap = input.array(categories)?;
        let category_bitmaps = input.array(
            bitmaps.checked_mul(documents.div_ceil(64)).ok_or_else(|| invalid("search index header is damaged"))?,
        )?;
        let computed = input.checksum.finish();
        let mut stored = [0u8; 8];
        input.reader.read_exact(&mut stored).map_err(truncated)?;
        if computed != u64::from_le_bytes(stored) {
            return Err(invalid("search index is damaged (checksum mismatch)"));
        }
        let index = CatalogIndex {
            rows,
            title_norms,
            body_norms,
            prices: price_list,
            price_offsets,
            price_bounds: price_bound_list,
            price_bitmaps,
            terms: Dictionary { text: term_text, ends: term_ends },
            title: Lists { starts: title_starts, documents: title_documents },
            title_frequencies,
            body: Lists { starts: body_starts, documents: body_documents },
            body_frequencies,
            body_bounds,
            title_blocks,
            body_blocks,
            term_bitmaps,
            term_bitmap,
            categories: Dictionary { text: category_text, ends: category_ends },
            category_documents: Lists { starts: category_starts, documents: category_list },
            category_bitmaps,
            category_bitmap,
            stemmer: Stemmer::create(Algorithm::English),
        };
        index.validate().map_err(|problem| invalid(format!("search index is damaged: {problem}")))?;
        Ok(index)
    }

    /// The array lengths the header records, in its order.
    fn counts(&self) -> [u64; COUNTS] {
        [
            self.rows.len(),
            self.prices.len(),
            self.terms.text.len(),
            self.terms.len(),
            self.title.documents.len(),
            self.body.documents.len(),
            self.categories.text.len(),
            self.categories.len(),
            self.category_documents.documents.len(),
            self.category_bitmaps.len().checked_div(self.rows.len().div_ceil(64)).unwrap_or(0),
            self.price_bounds.len(),
            self.term_bitmaps.len().checked_div(self.rows.len().div_ceil(64)).unwrap_or(0),
        ]
        .map(|count| count as u64)
    }

    /// Everything a search relies on, checked on an index read from a file: lengths agree,
    /// offsets stay in their arrays, lists are sorted and name existing documents, and the
    /// dictionaries are sorted and cut at character boundaries.
    fn validate(&self) -> Result<(), &'static str> {
        let documents = self.rows.len();
        if documents >= END as usize {
            return Err("too many documents");
        }
        if self.title_norms.len() != documents || self.body_norms.len() != documents {
            return Err("norms do not match the documents");
        }
        if self.price_offsets.len() != documents + 1
            || self.price_offsets.first() != Some(&0)
            || self.price_offsets.windows(2).any(|pair| pair[0] > pair[1])
            || self.price_offsets.last().map(|last| *last as usize) != Some(self.prices.len())
        {
            return Err("price offsets out of order");
        }
        self.terms.validate()?;
        self.categories.validate()?;
        self.title.validate(self.terms.len(), documents)?;
        self.body.validate(self.terms.len(), documents)?;
        self.category_documents.validate(self.categories.len(), documents)?;
        let words = documents.div_ceil(64);
        for (numbers, bitmaps, keys) in [
            (&self.category_bitmap, &self.category_bitmaps, self.categories.len()),
            (&self.term_bitmap, &self.term_bitmaps, self.terms.len()),
        ] {
            let count = bitmaps.len().checked_div(words).unwrap_or(0);
            if numbers.len() != keys
                || bitmaps.len() != count * words
                || numbers.iter().any(|number| *number != u32::MAX && *number as usize >= count)
            {
                return Err("bitmaps do not match their keys");
            }
        }
        if self.price_bounds.windows(2).any(|pair| pair[0] >= pair[1])
            || self.price_bitmaps.len() != 2 * self.price_bounds.len() * words
        {
            return Err("price buckets out of order");
        }
        // Bits past the last document would name documents that do not exist.
        if !documents.is_multiple_of(64)
            && self
                .category_bitmaps
                .chunks_exact(words)
                .chain(self.price_bitmaps.chunks_exact(words))
                .chain(self.term_bitmaps.chunks_exact(words))
                .any(|bitmap| bitmap[words - 1] >> (documents % 64) != 0)
        {
            return Err("bitmap past the documents");
        }
        if self.title_frequencies.len() != self.title.documents.len()
            || self.body_frequencies.len() != self.body.documents.len()
        {
            return Err("frequencies do not match the postings");
        }
        if self.body_bounds.len() != self.terms.len()
            || self.title_blocks.len() != self.title.documents.len().div_ceil(BLOCK)
            || self.body_blocks.len() != self.body.documents.len().div_ceil(BLOCK)
            || self
                .body_bounds
                .iter()
                .chain(&self.title_blocks)
                .chain(&self.body_blocks)
                .any(|bound| bound.is_nan() || *bound < 0.0)
        {
            return Err("bad score bounds");
        }
        Ok(())
    }

    /// The documents of `categories` (and their descendants), one entry per category found,
    /// or `None` when there is no category filter.
    fn category_lists(&self, categories: &[String]) -> Option<Vec<Category<'_>>> {
        if categories.is_empty() {
            return None;
        }
        let words = self.rows.len().div_ceil(64);
        let lists = categories
            .iter()
            .filter_map(|category| self.categories.find(&ucp_domain::catalog::category_key(category)))
            .map(|category| Category {
                documents: self.category_documents.list(category),
                bitmap: match self.category_bitmap[category] {
                    u32::MAX => None,
                    bitmap => Some(&self.category_bitmaps[bitmap as usize * words..][..words]),
                },
            })
            .collect();
        Some(lists)
    }

    /// The price bitmaps every document with a price from `min` to `max` is in.
    fn price_bitmaps_for(&self, min: Option<i64>, max: Option<i64>) -> Vec<&[u64]> {
        let (words, last) = (self.rows.len().div_ceil(64), self.price_bounds.len());
        let bucket = |price: i64| self.price_bounds.partition_point(|bound| *bound <= price);
        let mut bitmaps = Vec::new();
        if let Some(max) = max
            && bucket(max) < last
        {
            bitmaps.push(&self.price_bitmaps[bucket(max) * words..][..words]);
        }
        if let Some(min) = min
            && bucket(min) > 0
        {
            bitmaps.push(&self.price_bitmaps[(last + bucket(min) - 1) * words..][..words]);
        }
        bitmaps
    }

    /// A page of the documents passing `filter`, in row order.
    fn browse(&self, query: &SearchQuery, filter: &Filter<'_>) -> IndexPage {
        let start = match query.after {
            Some(after) => self.rows.partition_point(|candidate| *candidate <= after.row),
            None => 0,
        } as u32;
        let keep = query.limit.saturating_add(1);
        let mut rows = Vec::with_capacity(keep.min(1024));
        let mut take = |doc: u32| {
            if self.price_passes(doc, filter) {
                rows.push(SearchPosition { score: 0.0, row: self.rows[doc as usize] });
            }
            rows.len() < keep
        };
        match filter.category_cursor() {
            None => {
                for doc in start..self.rows.len() as u32 {
                    if !take(doc) {
                        break;
                    }
                }
            }
            Some(mut categories) => {
                let mut doc = categories.seek(start);
                while doc != END && take(doc) {
                    doc = categories.seek(doc + 1);
                }
            }
        }
        let has_more = rows.len() > query.limit;
        rows.truncate(query.limit);
        IndexPage { rows, has_more }
    }

    fn price_passes(&self, doc: u32, filter: &Filter<'_>) -> bool {
        if filter.price_min.is_none() && filter.price_max.is_none() {
            return true;
        }
        let (start, end) = (self.price_offsets[doc as usize] as usize, self.price_offsets[doc as usize + 1] as usize);
        self.prices[start..end].iter().any(|price| {
            filter.price_min.is_none_or(|min| *price >= min) && filter.price_max.is_none_or(|max| *price <= max)
        })
    }

    fn query_term(&self, term: usize) -> QueryTerm<'_> {
        let (title, body) = (self.title.range(term), self.body.range(term));
        let frequency = (title.len() + body.len()) as f32;
        let (title_offset, body_offset) = (title.start, body.start);
        QueryTerm {
            idf: idf(self.rows.len() as f32, frequency),
            title_documents: &self.title.documents[title.clone()],
            title_frequencies: &self.title_frequencies[title],
            body_documents: &self.body.documents[body.clone()],
            body_frequencies: &self.body_frequencies[body],
            body_bound: self.body_bounds[term],
            title_offset,
            body_offset,
            bitmap: match self.term_bitmap[term] {
                u32::MAX => None,
                bitmap => {
                    let words = self.rows.len().div_ceil(64);
                    Some(&self.term_bitmaps[bitmap as usize * words..][..words])
                }
            },
        }
    }

    /// The BM25 contribution of one term to `doc`, from its title and body frequencies.
    fn title_contribution(&self, idf: f32, frequencies: u16, doc: u32) -> f32 {
        let title = f32::from(frequencies >> 8);
        let body = f32::from(frequencies & 0xff);
        let title_part = title * (K1 + 1.0) / (title + self.title_norms[doc as usize]);
        let body_part = body * (K1 + 1.0) / (body + self.body_norms[doc as usize]);
        idf * (TITLE_WEIGHT * title_part + BODY_WEIGHT * body_part)
    }

    /// The bound of the block holding posting `at` of `term`'s title list, and the last
    /// document of the list in that block.
    fn title_block(&self, term: &QueryTerm<'_>, at: usize) -> (f32, u32) {
        let block = (term.title_offset + at) / BLOCK;
        let end = ((block + 1) * BLOCK - term.title_offset).min(term.title_documents.len());
        (self.title_blocks[block], term.title_documents[end - 1])
    }

    /// The same for the body-only list.
    fn body_block(&self, term: &QueryTerm<'_>, at: usize) -> (f32, u32) {
        let block = (term.body_offset + at) / BLOCK;
        let end = ((block + 1) * BLOCK - term.body_offset).min(term.body_documents.len());
        (self.body_blocks[block], term.body_documents[end - 1])
    }

    /// [`CatalogIndex::title_contribution`] with no title frequency, to the same bits: the
    /// title part is `0.0`, and adding it changes nothing.
    fn body_contribution(&self, idf: f32, frequency: u8, doc: u32) -> f32 {
        let body = f32::from(frequency);
        idf * (BODY_WEIGHT * (body * (K1 + 1.0) / (body + self.body_norms[doc as usize])))
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

/// The builder's maps, keyed by the catalog's words and categories: hashed with foldhash, as
/// SipHash was a tenth of building a million products' index. (A catalog is the merchant's
/// own data; no request's input is hashed into these maps.)
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Builds an index one document at a time.
struct Builder {
    stemmer: Stemmer,
    /// The term of every distinct word seen, as written: each word is lower-cased and stemmed
    /// once, however often it occurs.
    words: FastMap<Box<str>, u32>,
    /// The number of every term, in the order first seen.
    term_numbers: FastMap<Box<str>, u32>,
    postings: Vec<TermPostings>,
    /// The terms of the current document with their title and body counts.
    counts: Vec<(u32, u32, u32)>,
    /// Where each term is in `counts`, or `u32::MAX` when the current document lacks it.
    slots: Vec<u32>,
    rows: Vec<i64>,
    title_lengths: Vec<u32>,
    body_lengths: Vec<u32>,
    categories: FastMap<String, Vec<u32>>,
    prices: Vec<i64>,
    price_offsets: Vec<u32>,
}

#[derive(Debug, Default)]
struct TermPostings {
    title_documents: Vec<u32>,
    title_frequencies: Vec<u16>,
    body_documents: Vec<u32>,
    body_frequencies: Vec<u8>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            stemmer: Stemmer::create(Algorithm::English),
            words: FastMap::default(),
            term_numbers: FastMap::default(),
            postings: Vec::new(),
            counts: Vec::new(),
            slots: Vec::new(),
            rows: Vec::new(),
            title_lengths: Vec::new(),
            body_lengths: Vec::new(),
            categories: FastMap::default(),
            prices: Vec::new(),
            price_offsets: vec![0],
        }
    }
}

impl Builder {
    fn add(&mut self, doc: IndexDoc) {
        let number =
            u32::try_from(self.rows.len()).ok().filter(|number| *number < END).expect("under 2^32 - 1 documents");
        self.rows.push(doc.row);
        let mut title_length = 0u32;
        for word in words(&doc.title) {
            let term = self.term_of(word);
            self.count(term, true);
            title_length += 1;
        }
        let mut body_length = 0u32;
        for word in words(&doc.body) {
            let term = self.term_of(word);
            self.count(term, false);
            body_length += 1;
        }
        for (term, title, body) in self.counts.drain(..) {
            self.slots[term as usize] = u32::MAX;
            let postings = &mut self.postings[term as usize];
            if title > 0 {
                postings.title_documents.push(number);
                postings.title_frequencies.push(((title.min(255) as u16) << 8) | body.min(255) as u16);
            } else {
                postings.body_documents.push(number);
                postings.body_frequencies.push(body.min(255) as u8);
            }
        }
        self.title_lengths.push(title_length);
        self.body_lengths.push(body_length);
        for category in doc.categories {
            let documents = self.categories.entry(category).or_default();
            if documents.last() != Some(&number) {
                documents.push(number);
            }
        }
        self.prices.extend(doc.prices);
        self.price_offsets.push(u32::try_from(self.prices.len()).expect("under 2^32 variant prices"));
    }

    fn term_of(&mut self, word: &str) -> u32 {
        if let Some(term) = self.words.get(word) {
            return *term;
        }
        let lower = word.to_lowercase();
        let stem = self.stemmer.stem(&lower);
        let term = match self.term_numbers.get(stem.as_ref()) {
            Some(term) => *term,
            None => {
                let term = self.postings.len() as u32;
                self.term_numbers.insert(stem.as_ref().into(), term);
                self.postings.push(TermPostings::default());
                self.slots.push(u32::MAX);
                term
            }
        };
        self.words.insert(word.into(), term);
        term
    }

    fn count(&mut self, term: u32, in_title: bool) {
        let slot = &mut self.slots[term as usize];
        if *slot == u32::MAX {
            *slot = self.counts.len() as u32;
            self.counts.push((term, 0, 0));
        }
        let counts = &mut self.counts[*slot as usize];
        if in_title {
            counts.1 = counts.1.saturating_add(1);
        } else {
            counts.2 = counts.2.saturating_add(1);
        }
    }

    fn finish(self) -> CatalogIndex {
        let Builder {
            term_numbers,
            mut postings,
            rows,
            title_lengths,
            body_lengths,
            categories,
            prices,
            price_offsets,
            ..
        } = self;
        let documents = rows.len().max(1) as f32;
        let title_total: u64 = title_lengths.iter().map(|length| u64::from(*length)).sum();
        let body_total: u64 = body_lengths.iter().map(|length| u64::from(*length)).sum();
        let average_title = (title_total as f32 / documents).max(1.0);
        let average_body = (body_total as f32 / documents).max(1.0);
        let title_norms =
            title_lengths.iter().map(|length| K1 * (1.0 - B + B * *length as f32 / average_title)).collect();
        let body_norms = body_lengths.iter().map(|length| K1 * (1.0 - B + B * *length as f32 / average_body)).collect();
        drop((title_lengths, body_lengths));

        let mut names: Vec<(Box<str>, u32)> = term_numbers.into_iter().collect();
        names.sort_unstable();
        let title_postings = postings.iter().map(|term| term.title_documents.len()).sum();
        let body_postings = postings.iter().map(|term| term.body_documents.len()).sum();
        let mut index = CatalogIndex {
            rows,
            title_norms,
            body_norms,
            prices,
            price_offsets,
            terms: Dictionary::from_sorted(names.iter().map(|(name, _)| &**name)),
            title: Lists { starts: Vec::with_capacity(names.len() + 1), documents: Vec::with_capacity(title_postings) },
            title_frequencies: Vec::with_capacity(title_postings),
            body: Lists { starts: Vec::with_capacity(names.len() + 1), documents: Vec::with_capacity(body_postings) },
            body_frequencies: Vec::with_capacity(body_postings),
            body_bounds: Vec::with_capacity(names.len()),
            title_blocks: vec![0.0; title_postings.div_ceil(BLOCK)],
            body_blocks: vec![0.0; body_postings.div_ceil(BLOCK)],
            term_bitmaps: Vec::new(),
            term_bitmap: Vec::with_capacity(names.len()),
            categories: Dictionary::default(),
            category_documents: Lists::default(),
            category_bitmaps: Vec::new(),
            category_bitmap: Vec::new(),
            price_bounds: Vec::new(),
            price_bitmaps: Vec::new(),
            stemmer: Stemmer::create(Algorithm::English),
        };
        index.bucket_prices();
        index.title.starts.push(0);
        index.body.starts.push(0);
        let all = index.rows.len() as f32;
        for (_, number) in &names {
            let term = std::mem::take(&mut postings[*number as usize]);
            let frequency = (term.title_documents.len() + term.body_documents.len()) as f32;
            let idf = idf(all, frequency);
            let title_offset = index.title.documents.len();
            for (position, (doc, frequencies)) in term.title_documents.iter().zip(&term.title_frequencies).enumerate() {
                let contribution = index.title_contribution(idf, *frequencies, *doc);
                let block = &mut index.title_blocks[(title_offset + position) / BLOCK];
                *block = block.max(contribution);
            }
            let (body_offset, mut bound) = (index.body.documents.len(), 0.0f32);
            for (position, (doc, frequency)) in term.body_documents.iter().zip(&term.body_frequencies).enumerate() {
                let contribution = index.body_contribution(idf, *frequency, *doc);
                let block = &mut index.body_blocks[(body_offset + position) / BLOCK];
                *block = block.max(contribution);
                bound = bound.max(contribution);
            }
            index.body_bounds.push(bound);
            index.title.documents.extend_from_slice(&term.title_documents);
            index.title_frequencies.extend_from_slice(&term.title_frequencies);
            index.title.starts.push(index.title.documents.len() as u64);
            index.body.documents.extend_from_slice(&term.body_documents);
            index.body_frequencies.extend_from_slice(&term.body_frequencies);
            index.body.starts.push(index.body.documents.len() as u64);
        }
        drop(postings);
        let words = index.rows.len().div_ceil(64);
        for term in 0..names.len() {
            let (title, body) = (index.title.list(term), index.body.list(term));
            if (title.len() + body.len()) * 16 < index.rows.len() {
                index.term_bitmap.push(u32::MAX);
                continue;
            }
            index.term_bitmap.push((index.term_bitmaps.len() / words) as u32);
            let start = index.term_bitmaps.len();
            index.term_bitmaps.resize(start + words, 0);
            for doc in title.iter().chain(body) {
                index.term_bitmaps[start + *doc as usize / 64] |= 1 << (doc % 64);
            }
        }
        index.term_bitmaps.shrink_to_fit();

        let mut categories: Vec<(String, Vec<u32>)> = categories.into_iter().collect();
        categories.sort_unstable();
        index.categories = Dictionary::from_sorted(categories.iter().map(|(name, _)| name.as_str()));
        let category_postings = categories.iter().map(|(_, documents)| documents.len()).sum();
        index.category_documents.starts.reserve_exact(categories.len() + 1);
        index.category_documents.starts.push(0);
        index.category_documents.documents.reserve_exact(category_postings);
        let words = index.rows.len().div_ceil(64);
        let dense = |documents: &Vec<u32>| documents.len() * 32 >= index.rows.len();
        let bitmaps = categories.iter().filter(|(_, documents)| dense(documents)).count();
        index.category_bitmaps.reserve_exact(bitmaps * words);
        index.category_bitmap.reserve_exact(categories.len());
        for (_, documents) in categories {
            if dense(&documents) {
                index.category_bitmap.push((index.category_bitmaps.len() / words) as u32);
                let start = index.category_bitmaps.len();
                index.category_bitmaps.resize(start + words, 0);
                for doc in &documents {
                    index.category_bitmaps[start + *doc as usize / 64] |= 1 << (doc % 64);
                }
            } else {
                index.category_bitmap.push(u32::MAX);
            }
            index.category_documents.documents.extend_from_slice(&documents);
            index.category_documents.starts.push(index.category_documents.documents.len() as u64);
        }
        index.rows.shrink_to_fit();
        index.prices.shrink_to_fit();
        index.price_offsets.shrink_to_fit();
        index
    }
}

impl CatalogIndex {
    /// Cuts the prices into `PRICE_BUCKETS` buckets of about as many prices each (quantiles of
    /// a sample) and fills `price_bitmaps`.
    fn bucket_prices(&mut self) {
        let step = (self.prices.len() / 65_536).max(1);
        let mut sample: Vec<i64> = self.prices.iter().step_by(step).copied().collect();
        sample.sort_unstable();
        self.price_bounds = (1..PRICE_BUCKETS)
            .filter_map(|bucket| sample.get(bucket * sample.len() / PRICE_BUCKETS).copied())
            .collect();
        self.price_bounds.dedup();
        let (words, last) = (self.rows.len().div_ceil(64), self.price_bounds.len());
        self.price_bitmaps = vec![0; 2 * last * words];
        for doc in 0..self.rows.len() {
            let prices = &self.prices[self.price_offsets[doc] as usize..self.price_offsets[doc + 1] as usize];
            let bucket = |price: &i64| self.price_bounds.partition_point(|bound| bound <= price);
            let (Some(lowest), Some(highest)) = (prices.iter().map(bucket).min(), prices.iter().map(bucket).max())
            else {
                continue;
            };
            let (word, bit) = (doc / 64, 1u64 << (doc % 64));
            for at_most in lowest..last {
                self.price_bitmaps[at_most * words + word] |= bit;
            }
            for at_least in 1..=highest {
                self.price_bitmaps[(last + at_least - 1) * words + word] |= bit;
            }
        }
    }
}

/// Price buckets (see `CatalogIndex::price_bounds`).
const PRICE_BUCKETS: usize = 16;

/// No document: past the end of every list (document numbers are below it).
const END: u32 = u32::MAX;

/// Postings per block bound (`title_blocks`, `body_blocks`).
const BLOCK: usize = 64;

/// One query term's postings and what ranking needs of them.
#[derive(Debug)]
struct QueryTerm<'a> {
    idf: f32,
    title_documents: &'a [u32],
    title_frequencies: &'a [u16],
    body_documents: &'a [u32],
    body_frequencies: &'a [u8],
    /// No body-only posting of the term contributes more.
    body_bound: f32,
    /// Where the term's lists start in the index's arrays (for the block bounds).
    title_offset: usize,
    body_offset: usize,
    /// The documents having the term, when it is common enough to have a bitmap.
    bitmap: Option<&'a [u64]>,
}

/// The category and price conditions of a query.
#[derive(Debug)]
struct Filter<'a> {
    /// The categories asked for (a document must be in one), or `None`.
    categories: Option<Vec<Category<'a>>>,
    price_min: Option<i64>,
    price_max: Option<i64>,
    /// Every document that may pass is in all of these: the price bitmaps of the range, and
    /// with `match_all` the bitmaps of the terms that have one.
    required: Vec<&'a [u64]>,
}

/// One category of a filter: its documents, and its bitmap when it has one.
#[derive(Debug, Clone, Copy)]
struct Category<'a> {
    documents: &'a [u32],
    bitmap: Option<&'a [u64]>,
}

impl<'a> Filter<'a> {
    fn category_cursor(&self) -> Option<Union<'a>> {
        self.categories.as_ref().map(|categories| Union {
            cursors: categories.iter().map(|category| Cursor::new(category.documents)).collect(),
        })
    }

    /// How a pass over about `candidates` postings applies the filter before scoring. The
    /// categories: it jumps from category document to category document when they are far
    /// fewer (or have no bitmaps), and otherwise looks each candidate up. The price bitmaps are
    /// looked up.
    fn check(&self, candidates: usize) -> Check<'a> {
        let mut check = Check { jump: None, members: None, required: self.required.clone() };
        if let Some(categories) = &self.categories {
            let documents: usize = categories.iter().map(|category| category.documents.len()).sum();
            if documents.saturating_mul(4) <= candidates || categories.iter().all(|category| category.bitmap.is_none())
            {
                check.jump = Some(Union {
                    cursors: categories.iter().map(|category| Cursor::new(category.documents)).collect(),
                });
            } else {
                check.members = Some(Members {
                    bitmaps: categories.iter().filter_map(|category| category.bitmap).collect(),
                    lists: categories
                        .iter()
                        .filter(|category| category.bitmap.is_none())
                        .map(|category| category.documents)
                        .collect(),
                });
            }
        }
        check
    }
}

/// How one pass over candidates in document order applies the filter before scoring: the
/// categories by jumping to their next document (`admit`) or by keeping every cursor on their
/// documents (`settle`), and the required bitmaps by keeping the cursors on documents in all
/// of them.
#[derive(Debug)]
struct Check<'a> {
    jump: Option<Union<'a>>,
    members: Option<Members<'a>>,
    required: Vec<&'a [u64]>,
}

/// The categories of a filter, to look documents up in.
#[derive(Debug)]
struct Members<'a> {
    bitmaps: Vec<&'a [u64]>,
    /// Categories too small for a bitmap, searched.
    lists: Vec<&'a [u32]>,
}

impl Members<'_> {
    fn contain(&self, doc: u32) -> bool {
        self.bitmaps.iter().any(|bitmap| contains(bitmap, doc))
            || self.lists.iter().any(|list| list.binary_search(&doc).is_ok())
    }
}

impl Check<'_> {
    /// `Ok` when `doc` is in a category the check jumps through (or there is none), otherwise
    /// the categories' next document (`END` when there is none).
    fn admit(&mut self, doc: u32) -> Result<(), u32> {
        match &mut self.jump {
            Some(categories) => {
                let allowed = categories.seek(doc);
                if allowed == doc { Ok(()) } else { Err(allowed) }
            }
            None => Ok(()),
        }
    }

    /// Moves `cursor` on to the first document at or after its own that is in the categories
    /// looked up and in every required bitmap, and returns it.
    fn settle(&self, cursor: &mut Cursor<'_>) -> u32 {
        if self.members.is_none() && self.required.is_empty() {
            return cursor.doc();
        }
        while let Some(doc) = cursor.documents.get(cursor.at)
            && !(self.required.iter().all(|bitmap| contains(bitmap, *doc))
                && self.members.as_ref().is_none_or(|members| members.contain(*doc)))
        {
            cursor.at += 1;
        }
        cursor.doc()
    }
}

fn contains(bitmap: &[u64], doc: u32) -> bool {
    bitmap[doc as usize / 64] >> (doc % 64) & 1 == 1
}

/// A position in a sorted document list.
#[derive(Debug, Clone)]
struct Cursor<'a> {
    documents: &'a [u32],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(documents: &'a [u32]) -> Cursor<'a> {
        Cursor { documents, at: 0 }
    }

    fn doc(&self) -> u32 {
        self.documents.get(self.at).copied().unwrap_or(END)
    }

    /// Moves to the first document at or after `target` (galloping from the current position)
    /// and returns it.
    fn seek(&mut self, target: u32) -> u32 {
        let rest = &self.documents[self.at.min(self.documents.len())..];
        if rest.first().is_none_or(|doc| *doc >= target) {
            return self.doc();
        }
        let mut step = 1;
        while step < rest.len() && rest[step] < target {
            step *= 2;
        }
        let (low, high) = (step / 2, step.min(rest.len()));
        self.at += low + rest[low..high].partition_point(|doc| *doc < target);
        self.doc()
    }
}

/// The union of several sorted lists (the categories of a filter).
#[derive(Debug)]
struct Union<'a> {
    cursors: Vec<Cursor<'a>>,
}

impl Union<'_> {
    /// The first document at or after `target` in any of the lists.
    fn seek(&mut self, target: u32) -> u32 {
        self.cursors.iter_mut().map(|cursor| cursor.seek(target)).min().unwrap_or(END)
    }
}

/// The best `limit + 1` positions after the query's `after`, in result order.
#[derive(Debug)]
struct TopK {
    keep: usize,
    after: Option<SearchPosition>,
    heap: BinaryHeap<Ranked>,
    /// Score bounds are compared after this factor, which covers the rounding of a sum of
    /// as many terms as the query has in whatever order it was added.
    slack: f32,
}

/// A position with its score, ordered as results are: the heap's greatest is the worst kept.
#[derive(Debug, Clone, Copy)]
struct Ranked {
    score: f32,
    position: SearchPosition,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        compare(&self.position, &other.position) == Ordering::Equal
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(&self.position, &other.position)
    }
}

impl TopK {
    fn new(limit: usize, after: Option<SearchPosition>, terms: usize) -> TopK {
        TopK { keep: limit.saturating_add(1), after, heap: BinaryHeap::new(), slack: 1.0 + 1e-6 * (terms as f32 + 1.0) }
    }

    fn full(&self) -> bool {
        self.heap.len() >= self.keep
    }

    /// Whether no document scoring at most `bound` can make the page.
    fn beyond(&self, bound: f32) -> bool {
        self.full() && self.heap.peek().is_some_and(|worst| bound * self.slack < worst.score)
    }

    fn offer(&mut self, score: f32, row: i64) {
        let position = SearchPosition { score: -f64::from(score), row };
        if let Some(after) = self.after
            && !after_key(&position, &after)
        {
            return;
        }
        if self.heap.len() < self.keep {
            self.heap.push(Ranked { score, position });
        } else if let Some(mut worst) = self.heap.peek_mut()
            && compare(&position, &worst.position) == Ordering::Less
        {
            *worst = Ranked { score, position };
        }
    }

    fn page(self, limit: usize) -> IndexPage {
        let mut rows: Vec<SearchPosition> =
            self.heap.into_sorted_vec().into_iter().map(|ranked| ranked.position).collect();
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        IndexPage { rows, has_more }
    }
}

/// One ranked search: every document that has a query term (all of them when `match_all`)
/// and passes the filter is either offered to the page or provably ranks below it.
struct Search<'a> {
    index: &'a CatalogIndex,
    terms: &'a [QueryTerm<'a>],
    filter: &'a Filter<'a>,
    match_all: bool,
}

impl Search<'_> {
    /// The documents with a query term in their title: each scored, unless the title
    /// contributions and the other terms' body bounds cannot reach the page. Runs of
    /// documents whose block bounds cannot reach it are skipped whole, and with `match_all` a
    /// missing term skips to the next document that has it.
    fn titles(&self, top: &mut TopK) {
        let mut titles: Vec<Cursor<'_>> = self.terms.iter().map(|term| Cursor::new(term.title_documents)).collect();
        let mut bodies: Vec<Cursor<'_>> = self.terms.iter().map(|term| Cursor::new(term.body_documents)).collect();
        let mut check = self.filter.check(self.terms.iter().map(|term| term.title_documents.len()).sum());
        let mut parts: Vec<Option<f32>> = vec![None; self.terms.len()];
        let mut in_body = vec![false; self.terms.len()];
        loop {
            let doc = titles.iter_mut().map(|cursor| check.settle(cursor)).min().unwrap_or(END);
            if doc == END {
                return;
            }
            if let Err(next) = check.admit(doc) {
                if next == END {
                    return;
                }
                seek_all(&mut titles, next);
                continue;
            }
            if top.full() {
                // Until `next`, only the blocks the cursors at `doc` are in hold title postings.
                let (mut bound, mut next) = (0.0f32, END);
                for (term, cursor) in self.terms.iter().zip(&titles) {
                    if cursor.doc() == doc {
                        let (block_bound, last) = self.index.title_block(term, cursor.at);
                        bound += block_bound.max(term.body_bound);
                        next = next.min(last + 1);
                    } else {
                        bound += term.body_bound;
                        next = next.min(cursor.doc());
                    }
                }
                if top.beyond(bound) {
                    seek_all(&mut titles, next);
                    continue;
                }
            }
            if self.match_all {
                // A term in neither of its lists at `doc`: no document before its next one has
                // every term.
                let missing = titles.iter().zip(&mut bodies).find_map(|(title, body)| {
                    let found = if title.doc() == doc { doc } else { body.seek(doc) };
                    (found != doc).then(|| found.min(title.doc()))
                });
                if let Some(next) = missing {
                    seek_all(&mut titles, next);
                    continue;
                }
            }
            // Each term: its title contribution, or in the body maybe (unless its bitmap says
            // the document lacks it).
            let mut bound = 0.0f32;
            for (((term, cursor), part), maybe) in self.terms.iter().zip(&mut titles).zip(&mut parts).zip(&mut in_body)
            {
                *part = None;
                *maybe = false;
                if cursor.doc() == doc {
                    let contribution = self.index.title_contribution(term.idf, term.title_frequencies[cursor.at], doc);
                    *part = Some(contribution);
                    cursor.at += 1;
                    bound += contribution;
                } else if term.bitmap.is_none_or(|bitmap| contains(bitmap, doc)) {
                    *maybe = true;
                    bound += term.body_bound;
                }
            }
            if top.beyond(bound) || !self.index.price_passes(doc, self.filter) {
                continue;
            }
            for (((term, cursor), part), maybe) in self.terms.iter().zip(&mut bodies).zip(&mut parts).zip(&in_body) {
                if *maybe && cursor.seek(doc) == doc {
                    *part = Some(self.index.body_contribution(term.idf, term.body_frequencies[cursor.at], doc));
                }
            }
            top.offer(sum(&parts), self.index.rows[doc as usize]);
        }
    }

    /// The documents with query terms in their body only, unless their bounds cannot reach the
    /// page.
    fn bodies(&self, top: &mut TopK) {
        let bound: f32 = self.terms.iter().map(|term| term.body_bound).sum();
        if top.beyond(bound) {
            return;
        }
        if self.match_all { self.body_intersection(top) } else { self.body_union(top) }
    }

    /// Documents with every term in the body only (a leapfrog join of the body-only lists,
    /// shortest first, and the category lists), skipping runs whose block bounds cannot
    /// reach the page.
    fn body_intersection(&self, top: &mut TopK) {
        let mut bodies: Vec<Cursor<'_>> = self.terms.iter().map(|term| Cursor::new(term.body_documents)).collect();
        let mut order: Vec<usize> = (0..self.terms.len()).collect();
        order.sort_by_key(|term| self.terms[*term].body_documents.len());
        let mut check = self.filter.check(self.terms[order[0]].body_documents.len());
        let mut parts: Vec<Option<f32>> = vec![None; self.terms.len()];
        let mut target = 0;
        'join: loop {
            loop {
                let mut moved = false;
                for term in &order {
                    bodies[*term].seek(target);
                    let doc = check.settle(&mut bodies[*term]);
                    if doc != target {
                        if doc == END {
                            break 'join;
                        }
                        target = doc;
                        moved = true;
                    }
                }
                if !moved {
                    break;
                }
            }
            let doc = target;
            if let Err(next) = check.admit(doc) {
                if next == END {
                    return;
                }
                target = next;
                continue;
            }
            if top.full() {
                let (mut bound, mut next) = (0.0f32, END);
                for (term, cursor) in self.terms.iter().zip(&bodies) {
                    let (block_bound, last) = self.index.body_block(term, cursor.at);
                    bound += block_bound;
                    next = next.min(last + 1);
                }
                if top.beyond(bound) {
                    target = next;
                    continue;
                }
            }
            if self.index.price_passes(doc, self.filter) {
                for ((term, cursor), part) in self.terms.iter().zip(&bodies).zip(&mut parts) {
                    *part = Some(self.index.body_contribution(term.idf, term.body_frequencies[cursor.at], doc));
                }
                top.offer(sum(&parts), self.index.rows[doc as usize]);
            }
            target = doc + 1;
        }
    }

    /// Documents with some term in the body only and none in the title (MaxScore over the
    /// body-only lists: those whose bounds together cannot reach the page only complete the
    /// scores of documents the others find; runs whose block bounds cannot reach it are
    /// skipped).
    fn body_union(&self, top: &mut TopK) {
        let mut bodies: Vec<Cursor<'_>> = self.terms.iter().map(|term| Cursor::new(term.body_documents)).collect();
        let mut titles: Vec<Cursor<'_>> = self.terms.iter().map(|term| Cursor::new(term.title_documents)).collect();
        let mut order: Vec<usize> = (0..self.terms.len()).collect();
        order.sort_by(|left, right| self.terms[*left].body_bound.total_cmp(&self.terms[*right].body_bound));
        // bounds[j]: the bounds of order[..=j] together.
        let bounds: Vec<f32> = order
            .iter()
            .scan(0.0f32, |total, term| {
                *total += self.terms[*term].body_bound;
                Some(*total)
            })
            .collect();
        let mut check = self.filter.check(self.terms.iter().map(|term| term.body_documents.len()).sum());
        let mut parts: Vec<Option<f32>> = vec![None; self.terms.len()];
        // order[essential..] are the lists a document must be in to make the page.
        let mut essential = 0;
        loop {
            while essential < order.len() && top.beyond(bounds[essential]) {
                essential += 1;
            }
            let doc = order[essential..].iter().map(|term| check.settle(&mut bodies[*term])).min().unwrap_or(END);
            if doc == END {
                return;
            }
            if let Err(next) = check.admit(doc) {
                if next == END {
                    return;
                }
                for term in &order[essential..] {
                    bodies[*term].seek(next);
                }
                continue;
            }
            if top.full() {
                // Until `next`, only the blocks the essential cursors at `doc` are in, and the
                // lists that are not essential, hold postings.
                let mut bound = if essential > 0 { bounds[essential - 1] } else { 0.0 };
                let mut next = END;
                for term in &order[essential..] {
                    let cursor = &bodies[*term];
                    if cursor.doc() == doc {
                        let (block_bound, last) = self.index.body_block(&self.terms[*term], cursor.at);
                        bound += block_bound;
                        next = next.min(last + 1);
                    } else {
                        next = next.min(cursor.doc());
                    }
                }
                if top.beyond(bound) {
                    for term in &order[essential..] {
                        bodies[*term].seek(next);
                    }
                    continue;
                }
            }
            parts.fill(None);
            let mut partial = 0.0f32;
            for term in &order[essential..] {
                let cursor = &mut bodies[*term];
                if cursor.doc() == doc {
                    let query_term = &self.terms[*term];
                    let contribution =
                        self.index.body_contribution(query_term.idf, query_term.body_frequencies[cursor.at], doc);
                    parts[*term] = Some(contribution);
                    partial += contribution;
                    cursor.at += 1;
                }
            }
            // A document with a term in its title was ranked with the titles.
            if titles.iter_mut().any(|cursor| cursor.seek(doc) == doc) || !self.index.price_passes(doc, self.filter) {
                continue;
            }
            let mut reaches = true;
            for position in (0..essential).rev() {
                if top.beyond(partial + bounds[position]) {
                    reaches = false;
                    break;
                }
                let term = order[position];
                if bodies[term].seek(doc) == doc {
                    let query_term = &self.terms[term];
                    let contribution =
                        self.index.body_contribution(query_term.idf, query_term.body_frequencies[bodies[term].at], doc);
                    parts[term] = Some(contribution);
                    partial += contribution;
                }
            }
            if reaches {
                top.offer(sum(&parts), self.index.rows[doc as usize]);
            }
        }
    }
}

/// Moves every cursor to its first document at or after `target`.
fn seek_all(cursors: &mut [Cursor<'_>], target: u32) {
    for cursor in cursors {
        cursor.seek(target);
    }
}

/// A document's score: its terms' contributions added in query order, as the exhaustive
/// accumulation adds them.
fn sum(parts: &[Option<f32>]) -> f32 {
    let mut score = 0.0f32;
    for part in parts.iter().flatten() {
        score += part;
    }
    score
}

fn compare(left: &SearchPosition, right: &SearchPosition) -> Ordering {
    left.score.total_cmp(&right.score).then(left.row.cmp(&right.row))
}

/// Whether `position` comes strictly after `after` in result order.
fn after_key(position: &SearchPosition, after: &SearchPosition) -> bool {
    compare(position, after) == Ordering::Greater
}

/// The words of `text`, as written.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|ch: char| !ch.is_alphanumeric()).filter(|word| !word.is_empty())
}

/// Lower-cased, stemmed words of `text`.
fn tokens<'a>(stemmer: &'a Stemmer, text: &'a str) -> impl Iterator<Item = String> + 'a {
    words(text).map(move |word| {
        let lower = word.to_lowercase();
        stemmer.stem(&lower).into_owned()
    })
}

/// The first bytes of an index file.
const MAGIC: [u8; 8] = *b"ucpdidx\n";
/// The layout, tokenization and scoring a file holds: bump it when any of them changes, so
/// that an older file is refused (and the index rebuilt) rather than misread.
const FORMAT: u32 = 1;
/// The array lengths in the header.
const COUNTS: usize = 12;
/// Magic, format, a reserved word, the counts, the header's checksum.
const HEADER_BYTES: usize = 8 + 4 + 4 + COUNTS * 8 + 8;
/// Arrays go through a buffer of this size (a multiple of every element size).
const CHUNK_BYTES: usize = 1 << 16;

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

fn truncated(error: io::Error) -> io::Error {
    if error.kind() == io::ErrorKind::UnexpectedEof {
        io::Error::new(io::ErrorKind::UnexpectedEof, "search index file is truncated")
    } else {
        error
    }
}

/// A value stored little-endian in an index file.
trait Element: Copy {
    const SIZE: usize;
    /// Appends the values' bytes to `out`.
    fn put(values: &[Self], out: &mut Vec<u8>);
    /// Appends the values of `bytes` (a multiple of `SIZE` long) to `values`.
    fn get(bytes: &[u8], values: &mut Vec<Self>);
}

macro_rules! elements {
    ($($kind:ty),*) => {$(
        impl Element for $kind {
            const SIZE: usize = size_of::<$kind>();

            fn put(values: &[Self], out: &mut Vec<u8>) {
                let start = out.len();
                out.resize(start + values.len() * Self::SIZE, 0);
                let (chunks, _) = out[start..].as_chunks_mut::<{ size_of::<$kind>() }>();
                for (chunk, value) in chunks.iter_mut().zip(values) {
                    *chunk = value.to_le_bytes();
                }
            }

            fn get(bytes: &[u8], values: &mut Vec<Self>) {
                let (chunks, _) = bytes.as_chunks::<{ size_of::<$kind>() }>();
                values.extend(chunks.iter().map(|chunk| <$kind>::from_le_bytes(*chunk)));
            }
        }
    )*};
}

elements!(u8, u16, u32, u64, i64, f32);

struct Output<W> {
    writer: W,
    checksum: Checksum,
    buffer: Vec<u8>,
}

impl<W: Write> Output<W> {
    fn array<T: Element>(&mut self, values: &[T]) -> io::Result<()> {
        for chunk in values.chunks(CHUNK_BYTES / T::SIZE) {
            self.buffer.clear();
            T::put(chunk, &mut self.buffer);
            self.checksum.update(&self.buffer);
            self.writer.write_all(&self.buffer)?;
        }
        Ok(())
    }
}

struct Input<R> {
    reader: R,
    checksum: Checksum,
    buffer: Vec<u8>,
}

impl<R: Read> Input<R> {
    /// `count` values, read through the buffer and converted as they come; the vector is
    /// reserved at once (refused, not aborted, when the count is absurd).
    fn array<T: Element>(&mut self, count: usize) -> io::Result<Vec<T>> {
        let mut values = Vec::new();
        values.try_reserve_exact(count).map_err(|_| invalid("search index header is damaged"))?;
        let mut remaining = count;
        while remaining > 0 {
            let take = remaining.min(CHUNK_BYTES / T::SIZE);
            let bytes = &mut self.buffer[..take * T::SIZE];
            self.reader.read_exact(bytes).map_err(truncated)?;
            self.checksum.update(bytes);
            T::get(bytes, &mut values);
            remaining -= take;
        }
        Ok(values)
    }

    fn text(&mut self, bytes: usize) -> io::Result<String> {
        String::from_utf8(self.array(bytes)?).map_err(|_| invalid("search index is damaged: text is not UTF-8"))
    }
}

/// A 64-bit checksum of a byte stream: four multiply-rotate lanes over 8-byte words, so a
/// changed word always changes the result. It detects damage, not tampering.
#[derive(Debug)]
struct Checksum {
    lanes: [u64; 4],
    pending: [u8; 32],
    pending_length: usize,
    length: u64,
}

impl Default for Checksum {
    fn default() -> Self {
        Checksum {
            lanes: [0x243f_6a88_85a3_08d3, 0x1319_8a2e_0370_7344, 0xa409_3822_299f_31d0, 0x082e_fa98_ec4e_6c89],
            pending: [0; 32],
            pending_length: 0,
            length: 0,
        }
    }
}

const CHECKSUM_PRIME: u64 = 0x9e37_79b9_7f4a_7c15 | 1;

impl Checksum {
    fn of(bytes: &[u8]) -> u64 {
        let mut checksum = Checksum::default();
        checksum.update(bytes);
        checksum.finish()
    }

    fn update(&mut self, mut bytes: &[u8]) {
        self.length += bytes.len() as u64;
        if self.pending_length > 0 {
            let take = (32 - self.pending_length).min(bytes.len());
            self.pending[self.pending_length..self.pending_length + take].copy_from_slice(&bytes[..take]);
            self.pending_length += take;
            bytes = &bytes[take..];
            if self.pending_length < 32 {
                return;
            }
            let block = self.pending;
            self.block(&block);
            self.pending_length = 0;
        }
        let (blocks, rest) = bytes.as_chunks::<32>();
        for block in blocks {
            self.block(block);
        }
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_length = rest.len();
    }

    fn block(&mut self, block: &[u8; 32]) {
        let (words, _) = block.as_chunks::<8>();
        for (lane, word) in self.lanes.iter_mut().zip(words) {
            *lane = (*lane ^ u64::from_le_bytes(*word)).wrapping_mul(CHECKSUM_PRIME).rotate_left(29);
        }
    }

    fn finish(mut self) -> u64 {
        let mut last = [0u8; 32];
        last[..self.pending_length].copy_from_slice(&self.pending[..self.pending_length]);
        self.block(&last);
        let mut result = self.length;
        for lane in self.lanes {
            result = (result ^ lane).wrapping_mul(CHECKSUM_PRIME).rotate_left(31);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(row: i64, title: &str, body: &str, categories: &[&str], prices: &[i64]) -> IndexDoc {
        IndexDoc {
            row,
            title: title.into(),
            body: body.into(),
            categories: categories.iter().map(|category| category.to_string()).collect(),
            prices: prices.to_vec(),
        }
    }

    fn query(terms: &[&str], all: bool, limit: usize) -> SearchQuery {
        SearchQuery {
            terms: terms.iter().map(|term| term.to_string()).collect(),
            match_all_terms: all,
            categories: vec![],
            price_min: None,
            price_max: None,
            limit,
            after: None,
        }
    }

    fn index() -> CatalogIndex {
        CatalogIndex::build(vec![
            doc(
                1,
                "Trail Running Shoes",
                "waterproof shoes for running",
                &["footwear", "footwear > running"],
                &[12000],
            ),
            doc(2, "Wool Sweater", "merino wool, warm", &["apparel"], &[8900]),
            doc(3, "Running Socks", "cotton socks for runners", &["apparel"], &[900, 1200]),
            doc(5, "Coffee Mug", "a mug for coffee; not for running", &["kitchen"], &[1500]),
        ])
    }

    #[test]
    fn ranks_title_matches_first_and_stems() {
        let index = index();
        let page = index.search(&query(&["running", "shoes"], true, 10));
        assert_eq!(page.rows.iter().map(|position| position.row).collect::<Vec<_>>(), vec![1]);
        let page = index.search(&query(&["runs"], true, 10));
        let rows: Vec<i64> = page.rows.iter().map(|position| position.row).collect();
        assert_eq!(rows[2], 5, "title matches (1, 3) outrank a body-only match (5): {rows:?}");
        assert_eq!(rows.len(), 3);
    }

    #[test]
    fn any_term_mode_and_missing_terms() {
        let index = index();
        assert!(index.search(&query(&["wool", "zebra"], true, 10)).rows.is_empty());
        let page = index.search(&query(&["wool", "zebra"], false, 10));
        assert_eq!(page.rows.iter().map(|position| position.row).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn filters_and_keyset_pages_cover_everything_once() {
        let index = index();
        let mut filtered = query(&[], true, 10);
        filtered.categories = vec!["Apparel".into()];
        filtered.price_max = Some(1000);
        assert_eq!(index.search(&filtered).rows.iter().map(|position| position.row).collect::<Vec<_>>(), vec![3]);

        for terms in [vec!["running"], vec![]] {
            let mut seen = Vec::new();
            let mut paged = query(&terms, false, 1);
            loop {
                let page = index.search(&paged);
                seen.extend(page.rows.iter().map(|position| position.row));
                if !page.has_more {
                    break;
                }
                paged.after = page.rows.last().copied();
            }
            let expected = if terms.is_empty() { 4 } else { 3 };
            assert_eq!(seen.len(), expected, "{terms:?}: {seen:?}");
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), expected);
        }
    }

    /// The index as it was before the tiers: every posting of every term scored, then sorted.
    /// The pruned search must answer exactly as it does.
    mod exhaustive {
        use std::collections::HashMap;

        use rust_stemmers::{Algorithm, Stemmer};
        use ucp_domain::store::{SearchPosition, SearchQuery};

        use super::super::{B, BODY_WEIGHT, IndexDoc, IndexPage, K1, TITLE_WEIGHT, after_key, compare, tokens};

        #[derive(Default)]
        struct Postings {
            docs: Vec<u32>,
            frequencies: Vec<u16>,
        }

        pub(super) struct Exhaustive {
            terms: HashMap<String, Postings>,
            rows: Vec<i64>,
            title_norms: Vec<f32>,
            body_norms: Vec<f32>,
            categories: HashMap<String, Vec<u32>>,
            prices: Vec<i64>,
            price_offsets: Vec<u32>,
            stemmer: Stemmer,
        }

        impl Exhaustive {
            pub(super) fn build(docs: impl IntoIterator<Item = IndexDoc>) -> Exhaustive {
                let mut index = Exhaustive {
                    terms: HashMap::new(),
                    rows: Vec::new(),
                    title_norms: Vec::new(),
                    body_norms: Vec::new(),
                    categories: HashMap::new(),
                    prices: Vec::new(),
                    price_offsets: vec![0],
                    stemmer: Stemmer::create(Algorithm::English),
                };
                let mut counts: HashMap<String, (u16, u16)> = HashMap::new();
                let (mut title_total, mut body_total) = (0u64, 0u64);
                let (mut title_lengths, mut body_lengths) = (Vec::new(), Vec::new());
                for doc in docs {
                    let number = index.rows.len() as u32;
                    index.rows.push(doc.row);
                    counts.clear();
                    let mut title_length = 0u32;
                    for term in tokens(&index.stemmer, &doc.title) {
                        counts.entry(term).or_default().0 += 1;
                        title_length += 1;
                    }
                    let mut body_length = 0u32;
                    for term in tokens(&index.stemmer, &doc.body) {
                        counts.entry(term).or_default().1 += 1;
                        body_length += 1;
                    }
                    for (term, (title, body)) in counts.drain() {
                        let postings = index.terms.entry(term).or_default();
                        postings.docs.push(number);
                        postings.frequencies.push((title.min(255) << 8) | body.min(255));
                    }
                    title_lengths.push(title_length);
                    body_lengths.push(body_length);
                    title_total += u64::from(title_length);
                    body_total += u64::from(body_length);
                    for category in doc.categories {
                        let documents = index.categories.entry(category).or_default();
                        if documents.last() != Some(&number) {
                            documents.push(number);
                        }
                    }
                    index.prices.extend(doc.prices);
                    index.price_offsets.push(index.prices.len() as u32);
                }
                let documents = index.rows.len().max(1) as f32;
                let average_title = (title_total as f32 / documents).max(1.0);
                let average_body = (body_total as f32 / documents).max(1.0);
                index.title_norms =
                    title_lengths.iter().map(|length| K1 * (1.0 - B + B * *length as f32 / average_title)).collect();
                index.body_norms =
                    body_lengths.iter().map(|length| K1 * (1.0 - B + B * *length as f32 / average_body)).collect();
                index
            }

            pub(super) fn search(&self, query: &SearchQuery) -> IndexPage {
                let allowed = (!query.categories.is_empty()).then(|| {
                    let mut allowed = vec![false; self.rows.len()];
                    for category in &query.categories {
                        if let Some(documents) = self.categories.get(&ucp_domain::catalog::category_key(category)) {
                            for doc in documents {
                                allowed[*doc as usize] = true;
                            }
                        }
                    }
                    allowed
                });
                let price_ok = |doc: u32| -> bool {
                    if query.price_min.is_none() && query.price_max.is_none() {
                        return true;
                    }
                    let (start, end) =
                        (self.price_offsets[doc as usize] as usize, self.price_offsets[doc as usize + 1] as usize);
                    self.prices[start..end].iter().any(|price| {
                        query.price_min.is_none_or(|min| *price >= min)
                            && query.price_max.is_none_or(|max| *price <= max)
                    })
                };
                let passes = |doc: u32| allowed.as_ref().is_none_or(|allowed| allowed[doc as usize]) && price_ok(doc);
                if query.terms.is_empty() {
                    let start = match query.after {
                        Some(after) => self.rows.partition_point(|candidate| *candidate <= after.row),
                        None => 0,
                    };
                    let mut rows = Vec::new();
                    for doc in start..self.rows.len() {
                        if passes(doc as u32) {
                            rows.push(SearchPosition { score: 0.0, row: self.rows[doc] });
                            if rows.len() > query.limit {
                                break;
                            }
                        }
                    }
                    let has_more = rows.len() > query.limit;
                    rows.truncate(query.limit);
                    return IndexPage { rows, has_more };
                }
                let mut terms: Vec<String> = Vec::new();
                for term in query.terms.iter().flat_map(|text| tokens(&self.stemmer, text)) {
                    if !terms.contains(&term) {
                        terms.push(term);
                    }
                }
                let postings: Vec<Option<&Postings>> = terms.iter().map(|term| self.terms.get(term)).collect();
                if query.match_all_terms && postings.iter().any(Option::is_none) || terms.is_empty() {
                    return IndexPage { rows: Vec::new(), has_more: false };
                }
                let documents = self.rows.len() as f32;
                let mut scores = vec![0.0f32; self.rows.len()];
                let mut matched = vec![0u8; self.rows.len()];
                let mut touched = Vec::new();
                for postings in postings.iter().flatten() {
                    let frequency = postings.docs.len() as f32;
                    let idf = ((documents - frequency + 0.5) / (frequency + 0.5) + 1.0).ln();
                    for (doc, frequencies) in postings.docs.iter().zip(&postings.frequencies) {
                        let index = *doc as usize;
                        let title = f32::from(frequencies >> 8);
                        let body = f32::from(frequencies & 0xff);
                        let title_part = title * (K1 + 1.0) / (title + self.title_norms[index]);
                        let body_part = body * (K1 + 1.0) / (body + self.body_norms[index]);
                        if matched[index] == 0 {
                            touched.push(*doc);
                        }
                        matched[index] = matched[index].saturating_add(1);
                        scores[index] += idf * (TITLE_WEIGHT * title_part + BODY_WEIGHT * body_part);
                    }
                }
                let needed = terms.len().min(255) as u8;
                let mut candidates = Vec::new();
                for doc in touched {
                    let index = doc as usize;
                    if query.match_all_terms && matched[index] < needed || !passes(doc) {
                        continue;
                    }
                    let position = SearchPosition { score: -f64::from(scores[index]), row: self.rows[index] };
                    if query.after.is_none_or(|after| after_key(&position, &after)) {
                        candidates.push(position);
                    }
                }
                candidates.sort_by(compare);
                let has_more = candidates.len() > query.limit;
                candidates.truncate(query.limit);
                IndexPage { rows: candidates, has_more }
            }
        }
    }

    /// xorshift64*: deterministic test data without another dependency.
    struct Random(u64);

    impl Random {
        fn below(&mut self, bound: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % bound
        }

        fn chance(&mut self, percent: usize) -> bool {
            self.below(100) < percent
        }

        /// A word of `VOCABULARY`, the first ones far more often (roughly Zipf).
        fn word(&mut self) -> &'static str {
            let rank = self.below(VOCABULARY.len()) * self.below(VOCABULARY.len() + 1) / VOCABULARY.len();
            VOCABULARY[rank]
        }
    }

    /// Common and rare words, some of them inflections of one stem, one of them never in a
    /// title (`available`), one only in titles (`Deluxe`).
    const VOCABULARY: [&str; 32] = [
        "the",
        "for",
        "available",
        "running",
        "Shoes",
        "runs",
        "black",
        "wool",
        "Runner",
        "blue",
        "cotton",
        "sweater",
        "kids",
        "jacket",
        "warm",
        "Deluxe",
        "socks",
        "mug",
        "coffee",
        "garden",
        "chair",
        "lamp",
        "Café",
        "novel",
        "mystery",
        "leather",
        "boots",
        "hiking",
        "tent",
        "steel",
        "knife",
        "zebra",
    ];

    const CATEGORIES: [&str; 6] = ["apparel", "apparel > shoes", "apparel > shirts", "home", "home > kitchen", "books"];

    fn random_docs(random: &mut Random, count: usize) -> Vec<IndexDoc> {
        let mut docs: Vec<IndexDoc> = Vec::with_capacity(count);
        for number in 0..count {
            let row = number as i64 * 2 + 1;
            if number > 0 && random.chance(3) {
                // Ties: the same words as an earlier document.
                let mut copy = docs[random.below(number)].clone();
                copy.row = row;
                docs.push(copy);
                continue;
            }
            let title_words = 1 + random.below(6);
            let title: Vec<&str> =
                (0..title_words).map(|_| random.word()).filter(|word| *word != "available").collect();
            let body_words = random.below(40);
            let mut body: Vec<&str> = (0..body_words).map(|_| random.word()).filter(|word| *word != "Deluxe").collect();
            if random.chance(2) {
                // Past the frequency cap of 255.
                body.extend(std::iter::repeat_n("socks", 300));
            }
            let mut categories = Vec::new();
            for _ in 0..random.below(3) {
                let category = CATEGORIES[random.below(CATEGORIES.len())];
                if let Some((parent, _)) = category.split_once(" > ")
                    && !categories.iter().any(|known: &String| known == parent)
                {
                    categories.push(parent.to_owned());
                }
                if !categories.iter().any(|known| known == category) {
                    categories.push(category.to_owned());
                }
            }
            if random.chance(1) {
                // Under 1/32 of the documents: a list without a bitmap.
                categories.push("books > rare".to_owned());
            }
            let prices = (0..random.below(4)).map(|_| 100 + random.below(10_000) as i64).collect();
            docs.push(IndexDoc { row, title: title.join(" "), body: body.join(", "), categories, prices });
        }
        docs
    }

    fn random_query(random: &mut Random) -> SearchQuery {
        let mut terms: Vec<String> = (0..random.below(4)).map(|_| random.word().to_owned()).collect();
        if random.chance(5) {
            terms.push("unheard".into());
        }
        if random.chance(10) {
            terms.push("Running-SHOES".into());
        }
        let mut categories = Vec::new();
        if random.chance(35) {
            categories.push(CATEGORIES[random.below(CATEGORIES.len())].replace("apparel", "Apparel"));
        }
        if random.chance(8) {
            categories.push(match random.below(3) {
                0 => "nowhere".into(),
                1 => "Books > Rare".into(),
                _ => CATEGORIES[random.below(3)].into(),
            });
        }
        let (price_min, price_max) = match random.below(4) {
            0 => (Some(random.below(8000) as i64), None),
            1 => {
                let low = random.below(8000) as i64;
                (Some(low), Some(low + random.below(3000) as i64))
            }
            _ => (None, None),
        };
        SearchQuery {
            terms,
            match_all_terms: random.chance(50),
            categories,
            price_min,
            price_max,
            limit: 1 + random.below(15),
            after: None,
        }
    }

    #[test]
    fn pruned_search_answers_exactly_as_scoring_every_posting() {
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        for (count, queries) in [(0, 20), (1, 50), (40, 300), (3000, 1200)] {
            let docs = random_docs(&mut random, count);
            let exhaustive = exhaustive::Exhaustive::build(docs.clone());
            let index = CatalogIndex::build(docs);
            for _ in 0..queries {
                let mut query = random_query(&mut random);
                // Up to four pages on from the first, and once from a position no page ends at.
                for page_number in 0..4 {
                    let expected = exhaustive.search(&query);
                    assert_eq!(index.search(&query), expected, "{count} documents, page {page_number} of {query:?}");
                    if !expected.has_more {
                        break;
                    }
                    query.after = expected.rows.last().copied();
                }
                if let Some(after) = &mut query.after {
                    after.row += 1;
                    after.score *= 0.999;
                    assert_eq!(index.search(&query), exhaustive.search(&query), "{query:?}");
                }
            }
        }
    }

    #[test]
    fn a_written_index_reads_back_answering_the_same() {
        let mut random = Random(0x1234_5678_9abc_def1);
        let index = CatalogIndex::build(random_docs(&mut random, 500));
        let mut bytes = Vec::new();
        index.write_to(&mut bytes).unwrap();
        let read = CatalogIndex::read_from(bytes.as_slice()).unwrap();
        assert_eq!(read.len(), index.len());
        let mut again = Vec::new();
        read.write_to(&mut again).unwrap();
        assert!(again == bytes, "a read index writes the same bytes");
        for _ in 0..200 {
            let query = random_query(&mut random);
            assert_eq!(read.search(&query), index.search(&query), "{query:?}");
        }

        let empty = CatalogIndex::build(Vec::new());
        let mut bytes = Vec::new();
        empty.write_to(&mut bytes).unwrap();
        assert!(CatalogIndex::read_from(bytes.as_slice()).unwrap().is_empty());
    }

    #[test]
    fn a_damaged_or_truncated_file_is_refused() {
        let mut random = Random(0x0bad_f11e_0bad_f11e);
        let index = CatalogIndex::build(random_docs(&mut random, 60));
        let mut bytes = Vec::new();
        index.write_to(&mut bytes).unwrap();
        for length in 0..bytes.len() {
            assert!(CatalogIndex::read_from(&bytes[..length]).is_err(), "truncated to {length} bytes");
        }
        for position in 0..bytes.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut damaged = bytes.clone();
                damaged[position] ^= flip;
                assert!(CatalogIndex::read_from(damaged.as_slice()).is_err(), "byte {position} ^ {flip:#x}");
            }
        }
        let mut future = bytes.clone();
        future[8] = 2;
        let error = CatalogIndex::read_from(future.as_slice()).unwrap_err();
        assert!(error.to_string().contains("format 2"), "{error}");
    }

    #[test]
    fn a_file_with_a_valid_checksum_but_a_broken_structure_is_refused() {
        let docs = || {
            vec![
                doc(1, "Trail Running Shoes", "shoes for running", &["footwear"], &[100, 200]),
                doc(2, "Running Socks", "socks for running", &["apparel"], &[300]),
                doc(3, "Café Mug", "a mug", &["kitchen"], &[400]),
            ]
        };
        type Breakage = (&'static str, fn(&mut CatalogIndex));
        let breakages: [Breakage; 12] = [
            ("a document past the end", |index| index.body.documents[0] = 3),
            ("a list out of order", |index| {
                let range = index.title.range(index.terms.find("run").unwrap());
                index.title.documents.swap(range.start, range.start + 1);
            }),
            ("offsets out of order", |index| index.body.starts[1] = u64::MAX),
            ("a price offset past the end", |index| index.price_offsets[1] = 9),
            ("a word cut inside a character", |index| {
                let cafe = index.terms.find("café").unwrap();
                index.terms.ends[cafe] -= 1;
            }),
            ("an unsorted dictionary", |index| {
                let mut words: Vec<String> =
                    (0..index.terms.len()).map(|term| index.terms.get(term).to_owned()).collect();
                words.swap(0, 1);
                index.terms = Dictionary::from_sorted(words.iter().map(String::as_str));
            }),
            ("missing norms", |index| {
                index.title_norms.pop();
            }),
            ("a category document past the end", |index| index.category_documents.documents[0] = 7),
            ("a negative bound", |index| index.body_bounds[0] = -1.0),
            ("price buckets out of order", |index| index.price_bounds.swap(0, 1)),
            ("a term bitmap past the documents", |index| {
                let last = index.term_bitmaps.len() - 1;
                index.term_bitmaps[last] |= 1 << 63;
            }),
            ("a category bitmap number past the bitmaps", |index| index.category_bitmap[0] = 7),
        ];
        for (name, breakage) in breakages {
            let mut index = CatalogIndex::build(docs());
            breakage(&mut index);
            let mut bytes = Vec::new();
            index.write_to(&mut bytes).unwrap();
            assert!(CatalogIndex::read_from(bytes.as_slice()).is_err(), "{name}");
        }
    }

    #[test]
    fn seeking_finds_the_first_document_at_or_after_the_target() {
        let documents: Vec<u32> = (0..200).map(|doc| doc * 3).collect();
        for start in [0, 1, 17, 199, 200] {
            for target in [0, 1, 2, 3, 50, 51, 300, 597, 598, 1000] {
                let mut cursor = Cursor { documents: &documents, at: start };
                let expected = documents[start.min(200)..].iter().copied().find(|doc| *doc >= target).unwrap_or(END);
                assert_eq!(cursor.seek(target), expected, "from {start} to {target}");
            }
        }
    }
}
