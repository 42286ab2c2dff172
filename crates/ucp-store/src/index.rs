//! The in-memory catalog search index: an inverted index over product titles and bodies,
//! ranked with BM25 (title weighted 10:1), with category and variant-price filters, and
//! exact top-k keyset pagination.
//!
//! It is a per-instance cache derived from the catalog tables: built at start, rebuilt when
//! the catalog's change counter moves. Every backend can build it from its own rows, so a
//! PostgreSQL deployment with several instances gets the same ranking on each.

use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};
use ucp_domain::store::{SearchPosition, SearchQuery};

const TITLE_WEIGHT: f32 = 10.0;
const BODY_WEIGHT: f32 = 1.0;
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// What the index needs of one product.
#[derive(Debug, Clone)]
pub(crate) struct IndexDoc {
    pub(crate) row: i64,
    pub(crate) title: String,
    pub(crate) body: String,
    /// Lower-cased category paths and their ancestors.
    pub(crate) categories: Vec<String>,
    pub(crate) prices: Vec<i64>,
}

/// Postings of one term: parallel arrays of document numbers and term frequencies
/// (title in the high byte, body in the low byte, each capped at 255).
#[derive(Debug, Default)]
struct Postings {
    docs: Vec<u32>,
    frequencies: Vec<u16>,
}

pub(crate) struct CatalogIndex {
    terms: HashMap<String, Postings>,
    rows: Vec<i64>,
    /// BM25 length normalisation per document: `K1 * (1 - B + B * length / average)`.
    title_norms: Vec<f32>,
    body_norms: Vec<f32>,
    categories: HashMap<String, Vec<u32>>,
    /// Variant prices of document `d` are `prices[price_offsets[d]..price_offsets[d + 1]]`.
    prices: Vec<i64>,
    price_offsets: Vec<u32>,
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
pub(crate) struct IndexPage {
    pub(crate) rows: Vec<SearchPosition>,
    pub(crate) has_more: bool,
}

impl CatalogIndex {
    /// Builds the index; `docs` should come in row order (browse order is row order).
    pub(crate) fn build(docs: impl IntoIterator<Item = IndexDoc>) -> CatalogIndex {
        let stemmer = Stemmer::create(Algorithm::English);
        let mut index = CatalogIndex {
            terms: HashMap::new(),
            rows: Vec::new(),
            title_norms: Vec::new(),
            body_norms: Vec::new(),
            categories: HashMap::new(),
            prices: Vec::new(),
            price_offsets: vec![0],
            stemmer,
        };
        let mut counts: HashMap<String, (u16, u16)> = HashMap::new();
        let (mut title_total, mut body_total) = (0u64, 0u64);
        let mut title_lengths: Vec<u32> = Vec::new();
        let mut body_lengths: Vec<u32> = Vec::new();
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
        for postings in index.terms.values_mut() {
            postings.docs.shrink_to_fit();
            postings.frequencies.shrink_to_fit();
        }
        index.terms.shrink_to_fit();
        index
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The page of `query`: ranked by relevance (best first; `score` is the negated BM25 so
    /// that lower sorts first) when there are terms, by row otherwise.
    pub(crate) fn search(&self, query: &SearchQuery) -> IndexPage {
        let allowed = self.category_filter(&query.categories);
        let price_ok = |doc: u32| -> bool {
            if query.price_min.is_none() && query.price_max.is_none() {
                return true;
            }
            let (start, end) =
                (self.price_offsets[doc as usize] as usize, self.price_offsets[doc as usize + 1] as usize);
            self.prices[start..end].iter().any(|price| {
                query.price_min.is_none_or(|min| *price >= min) && query.price_max.is_none_or(|max| *price <= max)
            })
        };
        let passes = |doc: u32| allowed.as_ref().is_none_or(|allowed| allowed[doc as usize]) && price_ok(doc);
        let mut candidates: Vec<SearchPosition> = Vec::new();
        if query.terms.is_empty() {
            let after_row = query.after.map(|after| after.row);
            let start = match after_row {
                Some(row) => self.rows.partition_point(|candidate| *candidate <= row),
                None => 0,
            };
            let mut rows = Vec::with_capacity(query.limit + 1);
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
        let terms: Vec<String> = {
            let mut terms: Vec<String> = Vec::new();
            for term in query.terms.iter().flat_map(|text| tokens(&self.stemmer, text)) {
                if !terms.contains(&term) {
                    terms.push(term);
                }
            }
            terms
        };
        let postings: Vec<Option<&Postings>> = terms.iter().map(|term| self.terms.get(term)).collect();
        if query.match_all_terms && postings.iter().any(Option::is_none) || terms.is_empty() {
            return IndexPage { rows: Vec::new(), has_more: false };
        }
        let documents = self.rows.len() as f32;
        SCRATCH.with(|scratch| {
            let mut scratch = scratch.borrow_mut();
            let Scratch { scores, matched, touched } = &mut *scratch;
            if scores.len() < self.rows.len() {
                scores.resize(self.rows.len(), 0.0);
                matched.resize(self.rows.len(), 0);
            }
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
            for doc in touched.drain(..) {
                let index = doc as usize;
                let (score, count) = (scores[index], matched[index]);
                scores[index] = 0.0;
                matched[index] = 0;
                if query.match_all_terms && count < needed {
                    continue;
                }
                if !passes(doc) {
                    continue;
                }
                let position = SearchPosition { score: -f64::from(score), row: self.rows[index] };
                if let Some(after) = query.after
                    && !after_key(&position, &after)
                {
                    continue;
                }
                candidates.push(position);
            }
        });
        let keep = query.limit + 1;
        if candidates.len() > keep {
            candidates.select_nth_unstable_by(keep - 1, compare);
            candidates.truncate(keep);
        }
        candidates.sort_by(compare);
        let has_more = candidates.len() > query.limit;
        candidates.truncate(query.limit);
        IndexPage { rows: candidates, has_more }
    }

    /// A membership mask of the documents in any of `categories` (and their descendants), or
    /// `None` when there is no category filter.
    fn category_filter(&self, categories: &[String]) -> Option<Vec<bool>> {
        if categories.is_empty() {
            return None;
        }
        let mut allowed = vec![false; self.rows.len()];
        for category in categories {
            if let Some(documents) = self.categories.get(&ucp_domain::catalog::category_key(category)) {
                for doc in documents {
                    allowed[*doc as usize] = true;
                }
            }
        }
        Some(allowed)
    }
}

/// Per-thread score accumulators, reused across queries; every entry a query touches is reset
/// before the query ends, so the buffers are all zeros between queries.
#[derive(Default)]
struct Scratch {
    scores: Vec<f32>,
    matched: Vec<u8>,
    touched: Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

fn compare(left: &SearchPosition, right: &SearchPosition) -> std::cmp::Ordering {
    left.score.total_cmp(&right.score).then(left.row.cmp(&right.row))
}

/// Whether `position` comes strictly after `after` in result order.
fn after_key(position: &SearchPosition, after: &SearchPosition) -> bool {
    compare(position, after) == std::cmp::Ordering::Greater
}

/// Lower-cased, stemmed words of `text`.
fn tokens<'a>(stemmer: &'a Stemmer, text: &'a str) -> impl Iterator<Item = String> + 'a {
    text.split(|ch: char| !ch.is_alphanumeric()).filter(|word| !word.is_empty()).map(move |word| {
        let lower = word.to_lowercase();
        stemmer.stem(&lower).into_owned()
    })
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
}
