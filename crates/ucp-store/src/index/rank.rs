//! Posting-list cursors and the exact top k of a ranked search.

use super::*;

/// A position in a sorted document list.
#[derive(Debug, Clone)]
pub(super) struct Cursor<'a> {
    pub(super) documents: &'a [u32],
    pub(super) at: usize,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(documents: &'a [u32]) -> Cursor<'a> {
        Cursor { documents, at: 0 }
    }

    pub(super) fn doc(&self) -> u32 {
        self.documents.get(self.at).copied().unwrap_or(END)
    }

    /// Moves to the first document at or after `target` (galloping from the current position)
    /// and returns it.
    pub(super) fn seek(&mut self, target: u32) -> u32 {
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
pub(super) struct Union<'a> {
    pub(super) cursors: Vec<Cursor<'a>>,
}

impl Union<'_> {
    /// The first document at or after `target` in any of the lists.
    pub(super) fn seek(&mut self, target: u32) -> u32 {
        self.cursors.iter_mut().map(|cursor| cursor.seek(target)).min().unwrap_or(END)
    }
}

/// The best `limit + 1` positions after the query's `after`, in result order.
#[derive(Debug)]
pub(super) struct TopK {
    pub(super) keep: usize,
    pub(super) after: Option<SearchPosition>,
    pub(super) heap: BinaryHeap<Ranked>,
    /// Score bounds are compared after this factor, which covers the rounding of a sum of
    /// as many terms as the query has in whatever order it was added.
    pub(super) slack: f32,
}

/// A position with its score, ordered as results are: the heap's greatest is the worst kept.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ranked {
    pub(super) score: f32,
    pub(super) position: SearchPosition,
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
    pub(super) fn new(limit: usize, after: Option<SearchPosition>, terms: usize) -> TopK {
        TopK { keep: limit.saturating_add(1), after, heap: BinaryHeap::new(), slack: 1.0 + 1e-6 * (terms as f32 + 1.0) }
    }

    pub(super) fn full(&self) -> bool {
        self.heap.len() >= self.keep
    }

    /// Whether no document scoring at most `bound` can make the page.
    pub(super) fn beyond(&self, bound: f32) -> bool {
        self.full() && self.heap.peek().is_some_and(|worst| bound * self.slack < worst.score)
    }

    pub(super) fn offer(&mut self, score: f32, row: i64) {
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

    pub(super) fn page(self, limit: usize) -> IndexPage {
        let mut rows: Vec<SearchPosition> =
            self.heap.into_sorted_vec().into_iter().map(|ranked| ranked.position).collect();
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        IndexPage { rows, has_more }
    }
}

/// Moves every cursor to its first document at or after `target`.
pub(super) fn seek_all(cursors: &mut [Cursor<'_>], target: u32) {
    for cursor in cursors {
        cursor.seek(target);
    }
}

/// A document's score: its terms' contributions added in query order, as the exhaustive
/// accumulation adds them.
pub(super) fn sum(parts: &[Option<f32>]) -> f32 {
    let mut score = 0.0f32;
    for part in parts.iter().flatten() {
        score += part;
    }
    score
}

pub(super) fn compare(left: &SearchPosition, right: &SearchPosition) -> Ordering {
    left.score.total_cmp(&right.score).then(left.row.cmp(&right.row))
}

/// Whether `position` comes strictly after `after` in result order.
pub(super) fn after_key(position: &SearchPosition, after: &SearchPosition) -> bool {
    compare(position, after) == Ordering::Greater
}

#[cfg(test)]
mod tests {
    use super::*;

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
