//! How the search index grows with the catalog: build time, memory, query latency, and the
//! size and load time of its serialized form, for demo catalogs of the given sizes.
//!
//! Run one size per process, so that the RSS figures are this size's alone:
//!
//! ```text
//! for n in 10000 100000 1000000; do
//!     cargo run --release -p ucp-store --example index_scale -- $n
//!     cargo run --release -p ucp-store --example index_scale -- --load /tmp/index_scale.$n.idx
//! done
//! ```
//!
//! Each run leaves its serialized index in the temporary directory (`index_scale.<n>.idx`,
//! about 260 MB at 1,000,000 products) for `--load`, which reads it in a fresh process as a
//! start would. `INDEX_SCALE_SLOWEST=1` also prints the three slowest queries of each kind.
//!
//! The documents are made from the demo catalog (`ucp_catalog_io::demo`, seed 42) the way the
//! SQLite store makes them (title, `search_body`, category paths, variant prices). The queries
//! are drawn from the catalog's own title words; each kind runs a few hundred times (each query
//! three times, its best run counting: the machine is shared) and the fingerprint (a hash of
//! every page) tells two implementations apart.

#![allow(clippy::print_stdout, reason = "an example that reports on stdout")]

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use ucp_catalog_io::demo::{DemoOptions, generate};
use ucp_domain::catalog::{Product, category_paths};
use ucp_domain::store::{SearchPosition, SearchQuery};
use ucp_store::index::{CatalogIndex, IndexDoc, IndexPage};

/// Queries per kind.
const QUERIES: usize = 300;
/// The server's default page size.
const LIMIT: usize = 10;
/// The queries of bench/search.lua and `ucpd-bench catalog`, one a line of bench/queries.txt,
/// each under the 6 filters below.
const BENCH_QUERIES: &str = include_str!("../../../bench/queries.txt");

/// The filters of the same benchmark: categories, price minimum and maximum.
const BENCH_FILTERS: [(&[&str], Option<i64>, Option<i64>); 6] = [
    (&[], None, None),
    (&[], None, None),
    (&[], Some(1000), Some(5000)),
    (&["Apparel & Accessories"], None, None),
    (&["Home & Garden", "Sporting Goods"], None, Some(20000)),
    (&["Footwear"], Some(5000), None),
];

/// Runs of each query; its best counts.
const RUNS: usize = 3;
/// Products whose words and filters the queries are drawn from.
const SAMPLED: usize = 2000;
/// Single-word queries use the most common title words.
const COMMON_WORDS: usize = 40;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, path] = arguments.as_slice()
        && flag == "--load"
    {
        load(path);
        return;
    }
    let sizes: Vec<u64> = arguments.iter().map(|arg| arg.parse().expect("sizes are numbers")).collect();
    let sizes = if sizes.is_empty() { vec![10_000] } else { sizes };
    for size in sizes {
        run(size);
    }
}

/// What a start does with a saved index: read it from its file, in a fresh process.
fn load(path: &str) {
    let started = Instant::now();
    let file = std::fs::File::open(path).expect("index file opens");
    let index = CatalogIndex::read_from(std::io::BufReader::with_capacity(1 << 20, file)).expect("index reads");
    let elapsed = started.elapsed();
    let (rss, peak) = memory();
    println!(
        "loaded {} documents from {path} in {:.0} ms; RSS {:.1} MB, peak {:.1} MB",
        index.len(),
        elapsed.as_secs_f64() * 1e3,
        mb(rss),
        mb(peak)
    );
}

/// What the queries are drawn from: a sample of products and the catalog's title words.
struct Sample {
    /// Lower-cased title words of each sampled product.
    titles: Vec<Vec<String>>,
    /// A category path (second level when there is one) of each sampled product.
    categories: Vec<String>,
    /// The top-level category of each sampled product.
    departments: Vec<String>,
    /// The first variant price of each sampled product.
    prices: Vec<i64>,
    /// The most common title words, most common first.
    common: Vec<String>,
}

fn run(size: u64) {
    let rss_start = memory();
    let started = Instant::now();
    let options = DemoOptions { products: size, ..DemoOptions::default() };
    let stride = (size as usize / SAMPLED).max(1);
    let mut title_frequency: HashMap<String, u64> = HashMap::new();
    let mut sample = Sample {
        titles: Vec::new(),
        categories: Vec::new(),
        departments: Vec::new(),
        prices: Vec::new(),
        common: Vec::new(),
    };
    let mut docs = Vec::with_capacity(size as usize);
    for (number, product) in generate(&options).enumerate() {
        let words: Vec<String> = words(&product.title);
        for word in words.iter().collect::<HashSet<_>>() {
            *title_frequency.entry(word.clone()).or_default() += 1;
        }
        let doc = index_doc(number as i64 + 1, &product);
        if number % stride == 0 {
            sample.titles.push(words);
            let paths = category_paths(&product.categories[0].value);
            sample.departments.push(paths[0].clone());
            sample.categories.push(paths.get(1).unwrap_or(&paths[0]).clone());
            sample.prices.push(product.variants[0].price.amount);
        }
        docs.push(doc);
    }
    let generated = started.elapsed();
    let mut common: Vec<(String, u64)> = title_frequency.into_iter().collect();
    common.sort_by(|left, right| right.1.cmp(&left.1).then(left.0.cmp(&right.0)));
    sample.common = common.into_iter().take(COMMON_WORDS).map(|(word, _)| word).collect();
    let text_bytes: usize = docs.iter().map(|doc| doc.title.len() + doc.body.len()).sum();
    let rss_docs = memory();

    let started = Instant::now();
    let index = CatalogIndex::build(docs);
    let built = started.elapsed();
    let rss_built = memory();

    println!("== {size} products (seed 42)");
    println!(
        "generate {:.2} s ({} MB of title+body text); build {:.2} s",
        generated.as_secs_f64(),
        text_bytes >> 20,
        built.as_secs_f64()
    );
    println!(
        "index heap {:.1} MB; RSS start {:.1} MB, with docs {:.1} MB, after build {:.1} MB, peak {:.1} MB",
        mb(index.heap_bytes()),
        mb(rss_start.0),
        mb(rss_docs.0),
        mb(rss_built.0),
        mb(rss_built.1)
    );

    let path = std::env::temp_dir().join(format!("index_scale.{size}.idx"));
    let started = Instant::now();
    let written = std::fs::File::create(&path).and_then(|file| {
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
        index.write_to(&mut writer)?;
        writer.into_inner().map_err(|error| error.into_error())?.sync_all()
    });
    let write_time = started.elapsed();
    let started = Instant::now();
    let loaded = written.and_then(|()| {
        CatalogIndex::read_from(std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&path)?))
    });
    let read_time = started.elapsed();
    match &loaded {
        Ok(_) => println!(
            "serialized {:.1} MB to {}: write+fsync {:.0} ms, read {:.0} ms (in this process; `--load` for a fresh one)",
            mb(std::fs::metadata(&path).map_or(0, |metadata| metadata.len() as usize)),
            path.display(),
            write_time.as_secs_f64() * 1e3,
            read_time.as_secs_f64() * 1e3
        ),
        Err(error) => println!("serialized: {error}"),
    }

    println!("{:<28} {:>9} {:>9} {:>9} {:>7}  fingerprint", "query", "median", "p99", "max", "hits");
    let kinds = queries(&index, &sample);
    let slowest = std::env::var_os("INDEX_SCALE_SLOWEST").is_some();
    for (name, queries) in &kinds {
        let (latencies, fingerprint, hits) = measure(&index, queries);
        if let Ok(loaded) = &loaded {
            let (_, loaded_fingerprint, _) = measure(loaded, queries);
            assert_eq!(fingerprint, loaded_fingerprint, "{name}: the loaded index answers differently");
        }
        println!(
            "{name:<28} {:>9} {:>9} {:>9} {hits:>7}  {fingerprint:016x}",
            micros(percentile(&latencies, 50)),
            micros(percentile(&latencies, 99)),
            micros(percentile(&latencies, 100)),
        );
        if slowest {
            let mut timed: Vec<(Duration, &Vec<SearchQuery>)> =
                queries.iter().map(|request| (best_of(&index, request), request)).collect();
            timed.sort_by_key(|(latency, _)| std::cmp::Reverse(*latency));
            for (latency, request) in timed.iter().take(3) {
                let last = request.last().expect("requests run a query");
                println!(
                    "    {} {:?} all={} categories={:?} price={:?}..{:?}",
                    micros(*latency),
                    last.terms,
                    request[0].match_all_terms,
                    last.categories,
                    last.price_min,
                    last.price_max
                );
            }
        }
    }
}

/// One kind of query: each item is the queries one search request runs, in order (the
/// any-term fallback runs match-all first, a second page runs after the first).
type Kind = (&'static str, Vec<Vec<SearchQuery>>);

fn queries(index: &CatalogIndex, sample: &Sample) -> Vec<Kind> {
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    let mut kinds: Vec<Kind> = Vec::new();

    let one_word: Vec<Vec<SearchQuery>> =
        (0..QUERIES).map(|_| vec![query(&[random.pick(&sample.common)], true)]).collect();
    kinds.push(("one common word", one_word.clone()));

    let two_words = (0..QUERIES)
        .map(|_| {
            let title = random.pick(&sample.titles);
            let first = random.pick(title);
            let second = random.pick(title);
            vec![query(&[first, second], true)]
        })
        .collect();
    kinds.push(("two words, all", two_words));

    let mut fallback = Vec::new();
    for _ in 0..QUERIES * 20 {
        let pair = [random.pick(&sample.common), random.pick(&sample.common)];
        let all = query(&pair, true);
        if pair[0] != pair[1] && index.search(&all).rows.is_empty() {
            fallback.push(vec![all, query(&pair, false)]);
            if fallback.len() == QUERIES {
                break;
            }
        }
    }
    kinds.push(("two words, any (fallback)", fallback));

    let category = (0..QUERIES)
        .map(|_| {
            let which = random.below(sample.titles.len());
            let mut query = query(&[random.pick(&sample.common)], true);
            query.categories = vec![sample.departments[which].clone()];
            vec![query]
        })
        .collect();
    kinds.push(("common word + department", category));

    let narrow = (0..QUERIES)
        .map(|_| {
            let which = random.below(sample.titles.len());
            let mut query = query(&[random.pick(&sample.titles[which])], true);
            query.categories = vec![sample.categories[which].clone()];
            vec![query]
        })
        .collect();
    kinds.push(("title word + subcategory", narrow));

    let price = (0..QUERIES)
        .map(|_| {
            let which = random.below(sample.titles.len());
            let mut query = query(&[random.pick(&sample.common)], true);
            query.price_min = Some(sample.prices[which] / 2);
            query.price_max = Some(sample.prices[which]);
            vec![query]
        })
        .collect();
    kinds.push(("common word + price range", price));

    let second_page = one_word
        .iter()
        .map(|first| {
            let mut second = first[0].clone();
            second.after = index.search(&first[0]).rows.last().copied();
            vec![second]
        })
        .collect();
    kinds.push(("one common word, page 2", second_page));

    let browse = (0..QUERIES)
        .map(|_| {
            let which = random.below(sample.titles.len());
            let mut query = query(&[], true);
            query.categories = vec![sample.categories[which].clone()];
            vec![query]
        })
        .collect();
    kinds.push(("browse subcategory", browse));

    // As `Commerce::search_catalog` runs them: every word first, any word when that finds
    // nothing.
    let mut bench = Vec::new();
    for (categories, price_min, price_max) in BENCH_FILTERS {
        for text in BENCH_QUERIES.lines().filter(|line| !line.is_empty()) {
            let words = terms_of(text);
            let mut all = query(&words.iter().collect::<Vec<_>>(), true);
            all.categories = categories.iter().map(|category| category.to_string()).collect();
            all.price_min = price_min;
            all.price_max = price_max;
            let mut request = vec![all.clone()];
            if words.len() > 1 && index.search(&all).rows.is_empty() {
                request.push(SearchQuery { match_all_terms: false, ..all });
            }
            bench.push(request);
        }
    }
    kinds.push(("ucpd-bench search mix", bench));
    kinds
}

/// Latencies of each request of `requests` (after one warm-up pass), the fingerprint of every
/// page and the number of rows found. A request's latency is its best of `RUNS` runs, so that
/// a run the scheduler interrupted (the machine is shared) does not count.
fn measure(index: &CatalogIndex, requests: &[Vec<SearchQuery>]) -> (Vec<Duration>, u64, usize) {
    for request in requests {
        for query in request {
            std::hint::black_box(index.search(query));
        }
    }
    let mut latencies = vec![Duration::MAX; requests.len()];
    let mut fingerprint = Fingerprint::default();
    let mut hits = 0;
    for run in 0..RUNS {
        for (request, latency) in requests.iter().zip(&mut latencies) {
            let started = Instant::now();
            let pages: Vec<IndexPage> = request.iter().map(|query| index.search(query)).collect();
            *latency = (*latency).min(started.elapsed());
            if run == 0 {
                for page in &pages {
                    hits += page.rows.len();
                    fingerprint.page(page);
                }
            }
        }
    }
    latencies.sort();
    (latencies, fingerprint.0, hits)
}

fn best_of(index: &CatalogIndex, request: &[SearchQuery]) -> Duration {
    (0..RUNS)
        .map(|_| {
            let started = Instant::now();
            for query in request {
                std::hint::black_box(index.search(query));
            }
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn query(terms: &[&String], match_all_terms: bool) -> SearchQuery {
    SearchQuery {
        terms: terms.iter().map(|term| term.to_string()).collect(),
        match_all_terms,
        categories: Vec::new(),
        price_min: None,
        price_max: None,
        limit: LIMIT,
        after: None,
    }
}

/// The document the SQLite store indexes for `product` (`sqlite/import.rs`: the title,
/// `Product::search_body`, the category paths of the product's and its variants' categories, and the
/// variant prices).
fn index_doc(row: i64, product: &Product) -> IndexDoc {
    let body = product.search_body();
    let mut categories: Vec<String> = Vec::new();
    for category in product.categories.iter().chain(product.variants.iter().flat_map(|variant| &variant.categories)) {
        for path in category_paths(&category.value) {
            if !categories.contains(&path) {
                categories.push(path);
            }
        }
    }
    IndexDoc {
        row,
        title: product.title.clone(),
        body,
        categories,
        prices: product.variants.iter().map(|variant| variant.price.amount).collect(),
    }
}

/// The terms `Commerce::search_catalog` makes of a query text.
fn terms_of(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text.split(|ch: char| !ch.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let word: String = word.to_lowercase().chars().take(64).collect();
        if !terms.contains(&word) && terms.len() < 16 {
            terms.push(word);
        }
    }
    terms
}

/// Title words worth searching for (longer than one letter), lower-cased.
fn words(text: &str) -> Vec<String> {
    text.split(|ch: char| !ch.is_alphanumeric()).filter(|word| word.len() > 1).map(str::to_lowercase).collect()
}

/// FNV-1a over the rows, score bits and `has_more` of every page.
struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0xcbf2_9ce4_8422_2325)
    }
}

impl Fingerprint {
    fn page(&mut self, page: &IndexPage) {
        for SearchPosition { score, row } in &page.rows {
            self.add(*row as u64);
            self.add(score.to_bits());
        }
        self.add(u64::from(page.has_more));
    }

    fn add(&mut self, value: u64) {
        for byte in value.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// xorshift64*: deterministic query draws without another dependency.
struct Random(u64);

impl Random {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % bound
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn percentile(sorted: &[Duration], percent: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) * percent).div_ceil(100)]
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Resident and peak resident bytes of this process (`VmRSS`, `VmHWM`).
fn memory() -> (usize, usize) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| -> usize {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map_or(0, |kilobytes| kilobytes * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}
