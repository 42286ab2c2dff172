//! A query's category and price conditions, applied before scoring.

use std::cell::OnceCell;

use super::*;

/// The category and price conditions of a query.
#[derive(Debug)]
pub(super) struct Filter<'a> {
    /// The categories asked for (a document must be in one), or `None`.
    pub(super) categories: Option<Vec<Category<'a>>>,
    pub(super) price_min: Option<i64>,
    pub(super) price_max: Option<i64>,
    /// Every document that may pass is in all of these: the price bitmaps of the range, and
    /// with `match_all` the bitmaps of the terms that have one.
    pub(super) required: Vec<&'a [u64]>,
    /// [`Check::passing`] for a pass that jumps through the categories (`[0]`) and for one
    /// that looks them up (`[1]`), made at most once each per query and shared by its passes.
    pub(super) passing: [OnceCell<Vec<u64>>; 2],
}

/// One category of a filter: its documents, and its bitmap when it has one.
#[derive(Debug, Clone, Copy)]
pub(super) struct Category<'a> {
    pub(super) documents: &'a [u32],
    pub(super) bitmap: Option<&'a [u64]>,
}

impl<'a> Filter<'a> {
    pub(super) fn category_cursor(&self) -> Option<Union<'a>> {
        self.categories.as_ref().map(|categories| Union {
            cursors: categories.iter().map(|category| Cursor::new(category.documents)).collect(),
        })
    }

    /// How a pass over about `candidates` postings applies the filter before scoring. The
    /// categories: it jumps from category document to category document when they are far
    /// fewer (or have no bitmaps), and otherwise looks each candidate up. The price bitmaps are
    /// looked up.
    pub(super) fn check(&self, candidates: usize) -> Check<'_> {
        let mut check = Check { jump: None, members: None, required: self.required.clone(), passing: None };
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
        let cell = &self.passing[usize::from(check.members.is_some())];
        let passing = match cell.get() {
            Some(passing) => Some(passing.as_slice()),
            None => check.repays_passing(candidates).then(|| cell.get_or_init(|| check.make_passing()).as_slice()),
        };
        check.passing = passing;
        check
    }
}

/// How one pass over candidates in document order applies the filter before scoring: the
/// categories by jumping to their next document (`admit`) or by keeping every cursor on their
/// documents (`settle`), and the required bitmaps by keeping the cursors on documents in all
/// of them.
#[derive(Debug)]
pub(super) struct Check<'a> {
    pub(super) jump: Option<Union<'a>>,
    pub(super) members: Option<Members<'a>>,
    pub(super) required: Vec<&'a [u64]>,
    /// The documents in every required bitmap and in the categories looked up, as one
    /// bitmap, when the pass looks up enough candidates to repay making it: then each
    /// candidate costs one lookup, however many bitmaps and small categories the filter has.
    pub(super) passing: Option<&'a [u64]>,
}

/// The categories of a filter, to look documents up in.
#[derive(Debug)]
pub(super) struct Members<'a> {
    pub(super) bitmaps: Vec<&'a [u64]>,
    /// Categories too small for a bitmap, searched.
    pub(super) lists: Vec<&'a [u32]>,
}

impl Members<'_> {
    pub(super) fn contain(&self, doc: u32) -> bool {
        self.bitmaps.iter().any(|bitmap| contains(bitmap, doc))
            || self.lists.iter().any(|list| list.binary_search(&doc).is_ok())
    }
}

impl Check<'_> {
    /// `Ok` when `doc` is in a category the check jumps through (or there is none), otherwise
    /// the categories' next document (`END` when there is none).
    pub(super) fn admit(&mut self, doc: u32) -> Result<(), u32> {
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
    pub(super) fn settle(&self, cursor: &mut Cursor<'_>) -> u32 {
        if self.members.is_none() && self.required.is_empty() {
            return cursor.doc();
        }
        if let Some(passing) = self.passing {
            let rest = cursor.documents.get(cursor.at..).unwrap_or_default();
            cursor.at += rest.iter().position(|doc| contains(passing, *doc)).unwrap_or(rest.len());
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

    /// Whether a pass over about `candidates` postings repays making [`Check::passing`]: making
    /// it costs a pass over the bitmaps' words (a 64th of the documents each); looking a
    /// candidate up in all of them costs a few instructions per bitmap and small category.
    fn repays_passing(&self, candidates: usize) -> bool {
        let members = self.members.as_ref();
        let lookups = self.required.len() + members.map_or(0, |members| members.bitmaps.len() + members.lists.len());
        lookups >= 2 && self.words().is_some_and(|words| candidates.saturating_mul(2) >= words)
    }

    /// The bitmaps' length in words, when the check has any.
    fn words(&self) -> Option<usize> {
        let members = self.members.as_ref().and_then(|members| members.bitmaps.first());
        self.required.first().or(members).map(|bitmap| bitmap.len())
    }

    /// The documents in every required bitmap and (when looked up) in a category.
    fn make_passing(&self) -> Vec<u64> {
        let words = self.words().unwrap_or_default();
        let (mut passing, required) = match (&self.members, self.required.split_first()) {
            (Some(members), _) => {
                let mut any = vec![0u64; words];
                for bitmap in &members.bitmaps {
                    any.iter_mut().zip(bitmap.iter()).for_each(|(word, bits)| *word |= bits);
                }
                for doc in members.lists.iter().flat_map(|list| list.iter()) {
                    if let Some(word) = any.get_mut(*doc as usize / 64) {
                        *word |= 1 << (doc % 64);
                    }
                }
                (any, &self.required[..])
            }
            (None, Some((first, rest))) => (first.to_vec(), rest),
            (None, None) => (vec![u64::MAX; words], &self.required[..]),
        };
        for bitmap in required {
            passing.iter_mut().zip(bitmap.iter()).for_each(|(word, bits)| *word &= bits);
        }
        passing
    }
}

pub(super) fn contains(bitmap: &[u64], doc: u32) -> bool {
    bitmap[doc as usize / 64] >> (doc % 64) & 1 == 1
}
