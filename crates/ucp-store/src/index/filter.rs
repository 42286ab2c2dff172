//! A query's category and price conditions, applied before scoring.

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
    pub(super) fn check(&self, candidates: usize) -> Check<'a> {
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
pub(super) struct Check<'a> {
    pub(super) jump: Option<Union<'a>>,
    pub(super) members: Option<Members<'a>>,
    pub(super) required: Vec<&'a [u64]>,
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
        while let Some(doc) = cursor.documents.get(cursor.at)
            && !(self.required.iter().all(|bitmap| contains(bitmap, *doc))
                && self.members.as_ref().is_none_or(|members| members.contain(*doc)))
        {
            cursor.at += 1;
        }
        cursor.doc()
    }
}

pub(super) fn contains(bitmap: &[u64], doc: u32) -> bool {
    bitmap[doc as usize / 64] >> (doc % 64) & 1 == 1
}
