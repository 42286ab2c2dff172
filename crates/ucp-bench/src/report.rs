//! The report of a run: the table for people, then the one `BENCH_RESULT` line for scripts.

use crate::stats::Tally;

/// Prints the table, the errors and the BENCH_RESULT line (last, with `errors` and `error_kinds`).
pub(crate) fn finish(mut line: String, table: Vec<String>, errors: &Tally) {
    for row in table {
        println!("{row}");
    }
    if errors.total() > 0 {
        println!("failures by kind:");
        for (kind, count) in errors.iter() {
            println!("  {kind:<50} {count}");
        }
    }
    line.push_str(&format!(" errors={} error_kinds={}", errors.total(), errors.compact()));
    println!("{line}");
}
