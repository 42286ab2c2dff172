//! The index as it was before the tiers: every posting of every term scored, then sorted.
//! The pruned search must answer exactly as it does.

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
                query.price_min.is_none_or(|min| *price >= min) && query.price_max.is_none_or(|max| *price <= max)
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
