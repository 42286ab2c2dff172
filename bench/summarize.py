#!/usr/bin/env python3
"""Summarize a bench/run.sh work directory into a markdown report.

Usage: summarize.py WORK_DIR OUT.md

Reads WORK_DIR/meta.tsv (KEY<TAB>VALUE lines) and WORK_DIR/wrk-<op>-<run>.txt (each with one
BENCH_RESULT line printed by bench/common.lua). Per operation: median req/s, p50, p99 over runs,
and throughput as a % of the ping measured in the same run (median of the per-run ratios).

Each wrk and ucpd-bench output may also carry one CPU_RESULT line (bench/run.sh cpu_line): the
cores the measured server process used during the run, and the cores the machine used and left
idle.

Also reads the ucpd-bench outputs (WORK_DIR/ub-*.txt, one BENCH_RESULT line each):
ub-catalog-<op>-<transport>-<run>.txt (REST vs MCP), ub-ping-<run>.txt and
ub-purchase-<transport>-<run>.txt (purchase flow).
"""

import glob
import os
import re
import statistics
import sys

OPS = [("bare", "bare axum server, ping bytes (transport ceiling)"), ("ping", "ping (baseline)"), ("search", "search_catalog"), ("lookup", "lookup_catalog"),
       ("get_product", "get_product"),
       # The cold scenarios (measured after the others): queries that rarely repeat, products
       # drawn from 20,000.
       ("search_varied", "search_catalog, varied queries (cold)"), ("get_product_any", "get_product, any of 20,000 (cold)"),
       ("lookup_any", "lookup_catalog, 10 of any 20,000 (cold)")]


def read_meta(work):
    meta = {}
    with open(os.path.join(work, "meta.tsv"), encoding="utf-8") as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("\t")
            meta[key] = value
    return meta


def read_results(work):
    results = {}  # op -> {run: dict}
    for path in glob.glob(os.path.join(work, "wrk-*-*.txt")):
        m = re.match(r"wrk-(.+)-(\d+)\.txt$", os.path.basename(path))
        if not m:
            continue
        op, run = m.group(1), int(m.group(2))
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("BENCH_RESULT ") or line.startswith("CPU_RESULT "):
                    fields = dict(kv.split("=", 1) for kv in line.split()[1:])
                    results.setdefault(op, {}).setdefault(run, {}).update({k: float(v) for k, v in fields.items()})
    return results


def read_ub(work):
    """ucpd-bench results: {(kind, key...): {run: fields}} with numeric fields as floats."""
    results = {}
    for path in glob.glob(os.path.join(work, "ub-*.txt")):
        name = os.path.basename(path)
        if name.startswith("ub-warmup-"):
            continue
        m = re.match(r"ub-(.+)-(\d+)\.txt$", name)
        if not m:
            continue
        key, run = m.group(1), int(m.group(2))
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("BENCH_RESULT ") or line.startswith("CPU_RESULT "):
                    fields = results.setdefault(key, {}).get(run, {})
                    for kv in line.split()[1:]:
                        k, _, v = kv.partition("=")
                        try:
                            fields[k] = float(v)
                        except ValueError:
                            fields[k] = v
                    results[key][run] = fields
    return results


def med(runs, field):
    return statistics.median(r[field] for r in runs.values())


def cpu(runs):
    """'server / machine busy / idle' cores, medians over the runs that recorded them."""
    have = [r for r in runs.values() if "server_cores" in r]
    if not have:
        return "n/a"
    m = lambda field: statistics.median(r[field] for r in have)
    return f"{m('server_cores'):.2f} / {m('machine_busy_cores'):.2f} / {m('machine_idle_cores'):.2f}"


def ub_sections(meta, ub):
    lines = []
    targets = []
    ops = [("search", "search_catalog"), ("lookup", "lookup_catalog"), ("get_product", "get_product")]
    if any(f"catalog-{op}-mcp" in ub for op, _ in ops):
        lines += [
            "## REST vs MCP (same server, same tool: ucpd-bench catalog, "
            f"concurrency {meta.get('COMPARE_CONCURRENCY')}, {meta.get('COMPARE_RUNS')} rounds of {meta.get('DURATION')})",
            "",
            "| operation | MCP req/s | REST req/s | REST vs MCP | MCP p50 / p99 ms | REST p50 / p99 ms | "
            "MCP / REST avg body bytes | errors MCP / REST | req/s per round MCP; REST | "
            "server CPU cores / machine busy / idle, MCP; REST |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
        ]
        for op, label in ops:
            mcp, rest = ub.get(f"catalog-{op}-mcp"), ub.get(f"catalog-{op}-rest")
            if not mcp or not rest:
                continue
            m_rps, r_rps = med(mcp, "rps"), med(rest, "rps")
            diff = (r_rps - m_rps) / m_rps * 100 if m_rps else float("nan")
            per_round = ", ".join(f"{mcp[n]['rps']:.0f}" for n in sorted(mcp)) + "; " + ", ".join(
                f"{rest[n]['rps']:.0f}" for n in sorted(rest))
            errs = f"{sum(r['errors'] for r in mcp.values()):.0f} / {sum(r['errors'] for r in rest.values()):.0f}"
            lines.append(
                f"| {label} | {m_rps:,.0f} | {r_rps:,.0f} | {diff:+.1f}% | {med(mcp, 'p50_ms'):.2f} / {med(mcp, 'p99_ms'):.2f} | "
                f"{med(rest, 'p50_ms'):.2f} / {med(rest, 'p99_ms'):.2f} | {med(mcp, 'avg_body_bytes'):,.0f} / "
                f"{med(rest, 'avg_body_bytes'):,.0f} | {errs} | {per_round} | {cpu(mcp)}; {cpu(rest)} |")
            targets.append((f"{label}: REST and MCP throughput within 10% of each other", f"{diff:+.1f}%",
                            abs(diff) <= 10))
        lines.append("")
    if "purchase-mcp" in ub or "purchase-rest" in ub:
        ping = ub.get("ping", {})
        lines += [
            f"## Purchase flow (ucpd-bench purchase, concurrency {meta.get('PURCHASE_CONCURRENCY')}, "
            f"{meta.get('PURCHASE_RUNS')} rounds of {meta.get('DURATION')}; SQLite WAL, "
            f"synchronous={meta.get('SQLITE_SYNCHRONOUS')})",
            "",
            "| flow | orders/s (median) | % of ping (median of per-round ratios) | create p50 / p99 ms | "
            "update p50 / p99 ms | complete p50 / p99 ms | orders | failures | orders/s per round |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|",
        ]
        if ping:
            lines.append(
                f"| ping baseline (req/s) | {med(ping, 'rps'):,.0f} | 100% | p50 {med(ping, 'p50_ms'):.2f} / "
                f"p99 {med(ping, 'p99_ms'):.2f} | | | {sum(r['requests'] for r in ping.values()):,.0f} requests | "
                f"{sum(r['errors'] for r in ping.values()):.0f} | "
                + ", ".join(f"{ping[n]['rps']:.0f}" for n in sorted(ping)) + " |")
        for transport in ("mcp", "rest"):
            runs = ub.get(f"purchase-{transport}")
            if not runs:
                continue
            ratios = [runs[n]["orders_per_s"] / ping[n]["rps"] * 100 for n in runs if n in ping and ping[n]["rps"]]
            ratio = statistics.median(ratios) if ratios else float("nan")
            kinds = sorted({r["error_kinds"] for r in runs.values() if r.get("error_kinds") not in ("-", None)})
            fails = f"{sum(r['errors'] for r in runs.values()):.0f}" + (f" ({'; '.join(kinds)})" if kinds else "")
            ops_s = med(runs, "orders_per_s")
            lines.append(
                f"| purchase over {transport.upper()} | {ops_s:,.1f} | {ratio:.2f}% | "
                + " | ".join(f"{med(runs, c + '_p50_ms'):.2f} / {med(runs, c + '_p99_ms'):.2f}"
                             for c in ("create", "update", "complete"))
                + f" | {sum(r['orders'] for r in runs.values()):,.0f} | {fails} | "
                + ", ".join(f"{runs[n]['orders_per_s']:.0f}" for n in sorted(runs)) + " |")
            targets.append((f"purchase over {transport.upper()}: ≥ 500 completed orders/s", f"{ops_s:,.1f}",
                            ops_s >= 500 and sum(r["errors"] for r in runs.values()) == 0))
            for call in ("create", "update", "complete"):
                p99 = med(runs, call + "_p99_ms")
                targets.append((f"purchase over {transport.upper()}: {call}_checkout p99 ≤ 25 ms", f"{p99:.2f} ms",
                                p99 <= 25))
        lines += [
            "",
            f"Purchase server: RSS {mb(meta.get('PURCHASE_RSS_KB')):.1f} MB after the runs, store "
            f"{int(meta.get('PURCHASE_DB_BYTES', 0) or 0) / 1e6:.1f} MB, log ERROR / WARN lines "
            f"{meta.get('PURCHASE_LOG_ERRORS')} / {meta.get('PURCHASE_LOG_WARNINGS')}.",
            "",
        ]
    return lines, targets


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def mem_total_mb():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


def mb(kb):
    return float(kb or 0) / 1024


def main():
    work, out_path = sys.argv[1], sys.argv[2]
    meta = read_meta(work)
    results = read_results(work)
    if "ping" not in results:
        sys.exit("summarize.py: no ping results")
    ping = results["ping"]

    rows, summary = [], {}
    for op, label in OPS:
        runs = results.get(op, {})
        if not runs:
            continue
        rps = [r["rps"] for r in runs.values()]
        ratios = [runs[n]["rps"] / ping[n]["rps"] * 100 for n in runs if n in ping and ping[n]["rps"] > 0]
        s = {
            "rps": statistics.median(rps),
            "ratio": statistics.median(ratios) if ratios else float("nan"),
            "p50": statistics.median(r["p50_ms"] for r in runs.values()),
            "p99": statistics.median(r["p99_ms"] for r in runs.values()),
            "requests": sum(r["requests"] for r in runs.values()),
            "non2xx": sum(r["non2xx"] for r in runs.values()),
            "socket": sum(r["socket_errors"] for r in runs.values()),
            "body_errors": sum(r["body_errors"] for r in runs.values()),
            "is_error": sum(r["is_error"] for r in runs.values()),
            "bytes": statistics.median(r["avg_body_bytes"] for r in runs.values()),
            "per_run": ", ".join(f"{runs[n]['rps']:.0f}" for n in sorted(runs)),
            "cpu": cpu(runs),
        }
        summary[op] = s
        rows.append(
            f"| {label} | {s['rps']:,.0f} | {s['ratio']:.1f}% | {s['p50']:.2f} | {s['p99']:.2f} | "
            f"{s['requests']:,.0f} | {s['non2xx']:.0f} / {s['socket']:.0f} / {s['body_errors']:.0f} | "
            f"{s['bytes']:,.0f} | {s['per_run']} | {s['cpu']} |"
        )

    rss_load = mb(meta.get("RSS_AFTER_LOAD_KB"))
    rss_bench = mb(meta.get("RSS_AFTER_BENCH_KB"))
    rss_cold = mb(meta.get("RSS_AFTER_COLD_KB"))
    rss_peak = mb(meta.get("RSS_PEAK_KB"))
    imp_gmc = float(meta.get("IMPORT_GMC_SECONDS", "nan"))
    imp_jsonl = float(meta.get("IMPORT_JSONL_SECONDS", "nan"))

    def verdict(ok):
        return "**met**" if ok else "**not met**"

    def clean(op):
        s = summary.get(op)
        return s is not None and s["non2xx"] == 0 and s["socket"] == 0 and s["body_errors"] == 0

    targets = []
    if "bare" in results:
        bare = results["bare"]
        ratios = [ping[n]["rps"] / bare[n]["rps"] * 100 for n in ping if n in bare and bare[n]["rps"] > 0]
        ratio = statistics.median(ratios) if ratios else float("nan")
        targets.append(("ping ≥ 70% of the bare axum server (median of per-round ratios)", f"{ratio:.1f}%",
                        ratio >= 70 and clean("ping")))
    if "lookup" in summary:
        targets.append(("lookup_catalog (10 ids) ≥ 15% of ping throughput", f"{summary['lookup']['ratio']:.1f}%",
                        summary["lookup"]["ratio"] >= 15 and clean("lookup")))
    if "get_product" in summary:
        targets.append(("get_product ≥ 50% of ping throughput", f"{summary['get_product']['ratio']:.1f}%",
                        summary["get_product"]["ratio"] >= 50 and clean("get_product")))
    if "search" in summary:
        targets.append(("search_catalog ≥ 25% of ping throughput", f"{summary['search']['ratio']:.1f}%",
                        summary["search"]["ratio"] >= 25 and clean("search")))
    # The same targets for the cold scenarios: the issue names no query mix.
    if "get_product_any" in summary:
        targets.append(("get_product, cold: ≥ 50% of ping throughput (the warm rounds' ping)", f"{summary['get_product_any']['ratio']:.1f}%",
                        summary["get_product_any"]["ratio"] >= 50 and clean("get_product_any")))
    if "search_varied" in summary:
        targets.append(("search_catalog, cold: ≥ 25% of ping throughput (the warm rounds' ping)", f"{summary['search_varied']['ratio']:.1f}%",
                        summary["search_varied"]["ratio"] >= 25 and clean("search_varied")))
    if "lookup_any" in summary:
        targets.append(("lookup_catalog, cold: ≥ 15% of ping throughput (the warm rounds' ping)", f"{summary['lookup_any']['ratio']:.1f}%",
                        summary["lookup_any"]["ratio"] >= 15 and clean("lookup_any")))
    for op, label in OPS[2:]:
        if op in summary:
            targets.append((f"{label} p99 ≤ 10 ms", f"{summary[op]['p99']:.2f} ms", summary[op]["p99"] <= 10))
    targets.append(("RSS ≤ 200 MB with the catalog loaded (after load / after benchmark)",
                    f"{rss_load:.0f} MB / {rss_bench:.0f} MB", max(rss_load, rss_bench) <= 200))
    if meta.get("RSS_AFTER_COLD_KB"):  # the cold scenarios ran
        targets.append(("RSS ≤ 200 MB after the cold scenarios", f"{rss_cold:.0f} MB", rss_cold <= 200))
    targets.append(("Merchant Center feed import ≤ 10 s", f"{imp_gmc:.2f} s", imp_gmc <= 10))
    imp_rss = mb(meta.get("IMPORT_GMC_PEAK_RSS_KB"))
    targets.append(("importer peak RSS ≤ 300 MB", f"{imp_rss:.0f} MB", imp_rss <= 300))
    ub_lines, ub_targets = ub_sections(meta, read_ub(work))
    targets += ub_targets

    lines = [
        "# ucpd benchmark results",
        "",
        f"- date (UTC): {meta.get('DATE')}; git: {meta.get('GIT_REV')}; wrk {meta.get('WRK_VERSION')}",
        f"- machine: {os.cpu_count()} CPUs ({cpu_model()}), {mem_total_mb():,} MB RAM; "
        "wrk runs on the same machine and shares the CPUs with the server",
        f"- catalog: {int(meta.get('PRODUCTS', 0)):,} products (seed {meta.get('SEED')}), "
        f"feed {int(meta.get('FEED_ROWS', 0)):,} TSV rows ({int(meta.get('FEED_BYTES', 0)) / 1e6:.1f} MB)",
        f"- load: wrk -t{meta.get('THREADS')} -c{meta.get('CONNECTIONS')} -d{meta.get('DURATION')} --latency, "
        f"{meta.get('RUNS')} runs per operation (interleaved), warm-up {meta.get('WARMUP')} per operation; "
        "medians over runs",
        "",
        "| operation | req/s (median) | % of ping | p50 ms | p99 ms | requests | non-2xx / socket err / "
        "\"error\" bodies | avg body bytes | req/s per run | server CPU cores / machine busy / idle |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---|",
        *rows,
        "",
        "| measure | value |",
        "|---|---:|",
        f"| import Merchant Center TSV ({int(meta.get('FEED_ROWS', 0)):,} rows) | {imp_gmc:.2f} s |",
        f"| importer peak RSS (TSV) | {imp_rss:.1f} MB |",
        f"| import JSON lines (reference) | {imp_jsonl:.2f} s |",
        f"| store size after TSV import | {int(meta.get('IMPORT_GMC_DB_BYTES', 0)) / 1e6:.1f} MB |",
        f"| server start to \"ucpd ready\" | {float(meta.get('STARTUP_SECONDS', 'nan')):.2f} s |",
        f"| server RSS after load (ready) | {rss_load:.1f} MB |",
        f"| server RSS after warm-up | {mb(meta.get('RSS_AFTER_WARMUP_KB')):.1f} MB |",
        f"| server RSS after benchmark | {rss_bench:.1f} MB |",
        *([f"| server RSS after the cold scenarios | {rss_cold:.1f} MB |"] if meta.get("RSS_AFTER_COLD_KB") else []),
        *([f"| server RSS after the REST-vs-MCP phase | {mb(meta.get('RSS_AFTER_COMPARE_KB')):.1f} MB |"]
          if meta.get("RSS_AFTER_COMPARE_KB") else []),
        f"| server peak RSS (VmHWM) | {rss_peak:.1f} MB |",
        f"| server log ERROR / WARN lines | {meta.get('SERVER_LOG_ERRORS')} / {meta.get('SERVER_LOG_WARNINGS')} |",
        "",
        f"Import summaries: TSV: `{meta.get('IMPORT_GMC_SUMMARY')}`; JSONL: `{meta.get('IMPORT_JSONL_SUMMARY')}`",
        "",
        *ub_lines,
        f"Load (uptime): start `{meta.get('UPTIME_START', '').strip()}`; REST vs MCP `{meta.get('UPTIME_COMPARE', '').strip()}`; "
        f"purchase `{meta.get('UPTIME_PURCHASE', '').strip()}`; end `{meta.get('UPTIME_END', '').strip()}`",
        "",
        "| target | measured | verdict |",
        "|---|---:|---|",
        *[f"| {name} | {value} | {verdict(ok)} |" for name, value, ok in targets],
        "",
    ]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
