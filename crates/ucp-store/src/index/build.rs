//! Building an index one document at a time.

use super::*;

/// The builder's maps, keyed by the catalog's words and categories: hashed with foldhash, as
/// SipHash was a tenth of building a million products' index. (A catalog is the merchant's
/// own data; no request's input is hashed into these maps.)
pub(super) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Builds an index one document at a time.
pub(super) struct Builder {
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
pub(super) struct TermPostings {
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
    pub(super) fn add(&mut self, doc: IndexDoc) {
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
        let lower = folded(word);
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

    pub(super) fn finish(self) -> CatalogIndex {
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
