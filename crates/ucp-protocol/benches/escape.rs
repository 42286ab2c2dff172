//! The MCP text mirror's escape ([`ucp_protocol::escape::escape_into`]) against serde_json's
//! own string escaper, a baseline timed in the same run, on the JSON of the demo catalog's
//! products (what a cold search or lookup escapes):
//!
//!     cargo bench -p ucp-protocol --bench escape
//!
//! Prints each escaper's throughput (median of the rounds) and their ratio. BENCHMARKS.md
//! keeps the figures.

// A benchmark reports on standard output.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use ucp_catalog_io::demo::{DemoOptions, generate};
use ucp_protocol::escape::escape_into;

const PRODUCTS: u64 = 2_000;
const PASSES: usize = 20;
const ROUNDS: usize = 9;

/// An escaper under test, and where its rounds' times go.
type Timed<'a> = (&'a mut Vec<Duration>, &'a dyn Fn(&String) -> Vec<u8>);

fn main() {
    let options = DemoOptions { products: PRODUCTS, seed: 42, ..DemoOptions::default() };
    let docs: Vec<String> =
        generate(&options).map(|product| serde_json::to_string(&product).expect("a demo product serializes")).collect();
    let bytes: usize = docs.iter().map(String::len).sum::<usize>() * PASSES;
    let escapes: usize = docs.iter().map(|doc| doc.bytes().filter(|byte| matches!(byte, b'"' | b'\\')).count()).sum();
    println!(
        "{PRODUCTS} demo products, {} bytes of JSON, one escape every {:.1} bytes; {PASSES} passes per round",
        bytes / PASSES,
        (bytes / PASSES) as f64 / escapes as f64
    );

    let ours = |doc: &String| {
        let mut out = Vec::with_capacity(doc.len() + doc.len() / 4);
        escape_into(&mut out, doc.as_bytes());
        out
    };
    let serde = |doc: &String| {
        let mut out = Vec::with_capacity(doc.len() + doc.len() / 4 + 2);
        serde_json::to_writer(&mut out, doc).expect("a string serializes");
        out
    };
    // Both write the same bytes (serde_json's between its quotes).
    for doc in docs.iter().take(50) {
        let (mine, theirs) = (ours(doc), serde(doc));
        assert_eq!(mine[..], theirs[1..theirs.len() - 1], "the escapes differ");
    }

    let (mut ours_times, mut serde_times) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Which goes first alternates, so drift favours neither.
        let order: [Timed; 2] = if round % 2 == 0 {
            [(&mut ours_times, &ours), (&mut serde_times, &serde)]
        } else {
            [(&mut serde_times, &serde), (&mut ours_times, &ours)]
        };
        for (times, escape) in order {
            let start = Instant::now();
            for _ in 0..PASSES {
                for doc in &docs {
                    black_box(escape(black_box(doc)));
                }
            }
            times.push(start.elapsed());
        }
    }
    let rate = |times: &mut Vec<Duration>| {
        times.sort();
        bytes as f64 / times[times.len() / 2].as_secs_f64() / 1e9
    };
    let (ours_rate, serde_rate) = (rate(&mut ours_times), rate(&mut serde_times));
    println!("serde_json's string escape: {serde_rate:.2} GB/s (median of {ROUNDS} rounds)");
    println!("ucp_protocol::escape::escape_into: {ours_rate:.2} GB/s ({:.2}x serde_json's)", ours_rate / serde_rate);
}
