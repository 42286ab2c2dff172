use super::file::FORMAT;
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
        doc(1, "Trail Running Shoes", "waterproof shoes for running", &["footwear", "footwear > running"], &[12000]),
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
fn accents_and_case_do_not_keep_a_word_from_its_matches() {
    let index = CatalogIndex::build(vec![
        doc(1, "Café Crème Mug", "for crème brûlée", &[], &[1500]),
        // Decomposed form: e followed by a combining acute accent.
        doc(2, "Cafe\u{301} Table", "pine", &[], &[9000]),
        doc(3, "Smørrebrød Plate", "Straße", &[], &[2000]),
        doc(4, "Łódź Poster", "Ærø, Ørsted", &[], &[2500]),
    ]);
    let rows = |terms: &[&str]| {
        let mut rows: Vec<i64> =
            index.search(&query(terms, true, 10)).rows.iter().map(|position| position.row).collect();
        rows.sort_unstable();
        rows
    };
    for spelling in ["cafe", "CAFÉ", "café", "Cafe\u{301}"] {
        assert_eq!(rows(&[spelling]), [1, 2], "{spelling}");
    }
    assert_eq!(rows(&["creme", "brulee"]), [1]);
    for spelling in ["smørrebrød", "smorrebrod", "SMØRREBRØD"] {
        assert_eq!(rows(&[spelling]), [3], "a letter that does not decompose, as written or plainly: {spelling}");
    }
    for spelling in ["straße", "STRASSE", "strasse", "STRAẞE"] {
        assert_eq!(rows(&[spelling]), [3], "ß is ss: {spelling}");
    }
    assert_eq!(rows(&["lodz"]), [4]);
    assert_eq!(rows(&["Łódź"]), [4]);
    assert_eq!(rows(&["aeroe", "orsted"]), [4]);
}

#[test]
fn folding_drops_accents_and_keeps_the_marks_that_tell_words_apart() {
    for (word, expected) in [
        ("Café", "cafe"),
        ("Cafe\u{301}", "cafe"),
        ("ÅNGSTRÖM", "angstrom"),
        ("naïve", "naive"),
        ("Łódź", "lodz"),
        ("Œuvre", "oeuvre"),
        ("Þórsmörk", "thorsmork"),
        ("Đorđe", "dorde"),
        ("ǿ", "o"),
        ("ıstanbul", "istanbul"),
    ] {
        assert_eq!(folded(word), expected, "{word}");
    }
    // Japanese: ガラス (glass) is not カラス (crow); Hindi: a vowel sign is part of the word.
    assert_ne!(folded("ガラス"), folded("カラス"));
    assert_eq!(folded("ガラス"), folded("カ\u{3099}ラス"), "composed or not, one word");
    assert_eq!(folded("किताब"), "किताब");
    // A run of accents alone is no word; a word keeps the marks written after its letters.
    assert_eq!(words("a \u{301} cafe\u{301}, x").collect::<Vec<_>>(), ["a", "cafe\u{301}", "x"]);
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

/// The index as it was before the tiers (the oracle of the pruned search).
mod exhaustive;

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
        let title: Vec<&str> = (0..title_words).map(|_| random.word()).filter(|word| *word != "available").collect();
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
    future[8] = (FORMAT + 1) as u8;
    let error = CatalogIndex::read_from(future.as_slice()).unwrap_err();
    assert!(error.to_string().contains(&format!("format {}", FORMAT + 1)), "{error}");
}

#[test]
fn a_file_with_a_valid_checksum_but_a_broken_structure_is_refused() {
    let docs = || {
        vec![
            doc(1, "Trail Running Shoes", "shoes for running", &["footwear"], &[100, 200]),
            doc(2, "Running Socks", "socks for running", &["apparel"], &[300]),
            // A word whose letters the index keeps as written, not ASCII (Greek, its accent dropped).
            doc(3, "Γάλα Mug", "a mug", &["kitchen"], &[400]),
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
            let word = index.stemmer.stem("γαλα").into_owned();
            let word = index.terms.find(&word).unwrap();
            index.terms.ends[word] -= 1;
        }),
        ("an unsorted dictionary", |index| {
            let mut words: Vec<String> = (0..index.terms.len()).map(|term| index.terms.get(term).to_owned()).collect();
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
