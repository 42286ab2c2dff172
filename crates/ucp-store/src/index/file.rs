//! The saved index: the binary form [`CatalogIndex::write_to`] writes and
//! [`CatalogIndex::read_from`] reads back, validated before use.

use super::*;

impl CatalogIndex {
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
}

/// The first bytes of an index file.
pub(super) const MAGIC: [u8; 8] = *b"ucpdidx\n";
/// The layout, tokenization and scoring a file holds: bump it when any of them changes, so
/// that an older file is refused (and the index rebuilt) rather than misread.
/// 2: words without their accents (`folded`); 3: only the Latin, Greek and Cyrillic diacritics
/// dropped, and composed again; 4: letters that do not decompose written plainly (`ß` as `ss`,
/// `ø` as `o`: `plain`).
pub(super) const FORMAT: u32 = 4;
/// The array lengths in the header.
pub(super) const COUNTS: usize = 12;
/// Magic, format, a reserved word, the counts, the header's checksum.
pub(super) const HEADER_BYTES: usize = 8 + 4 + 4 + COUNTS * 8 + 8;
/// Arrays go through a buffer of this size (a multiple of every element size).
pub(super) const CHUNK_BYTES: usize = 1 << 16;

pub(super) fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

pub(super) fn truncated(error: io::Error) -> io::Error {
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

pub(super) struct Output<W> {
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

pub(super) struct Input<R> {
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
pub(super) struct Checksum {
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

pub(super) const CHECKSUM_PRIME: u64 = 0x9e37_79b9_7f4a_7c15 | 1;

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
