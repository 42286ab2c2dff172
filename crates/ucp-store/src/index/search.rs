//! Answering a query: the filters, the posting-list cursors, MaxScore over the title and
//! body tiers, and the exact top k.

use super::*;

impl CatalogIndex {
    /// The page of `query`: ranked by relevance (best first; `score` is the negated BM25 so
    /// that lower sorts first) when there are terms, by row otherwise.
    pub fn search(&self, query: &SearchQuery) -> IndexPage {
        let filter = Filter {
            categories: self.category_lists(&query.categories),
            price_min: query.price_min,
            price_max: query.price_max,
            required: self.price_bitmaps_for(query.price_min, query.price_max),
            passing: Default::default(),
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
    pub(super) fn title_contribution(&self, idf: f32, frequencies: u16, doc: u32) -> f32 {
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
    pub(super) fn body_contribution(&self, idf: f32, frequency: u8, doc: u32) -> f32 {
        let body = f32::from(frequency);
        idf * (BODY_WEIGHT * (body * (K1 + 1.0) / (body + self.body_norms[doc as usize])))
    }
}

/// Price buckets (see `CatalogIndex::price_bounds`).
pub(super) const PRICE_BUCKETS: usize = 16;

/// No document: past the end of every list (document numbers are below it).
pub(super) const END: u32 = u32::MAX;

/// Postings per block bound (`title_blocks`, `body_blocks`).
pub(super) const BLOCK: usize = 64;

/// One query term's postings and what ranking needs of them.
#[derive(Debug)]
pub(super) struct QueryTerm<'a> {
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

/// One ranked search: every document that has a query term (all of them when `match_all`)
/// and passes the filter is either offered to the page or provably ranks below it.
pub(super) struct Search<'a> {
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
