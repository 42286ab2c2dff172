#!/usr/bin/env bash
# How ucpd's costs grow with the catalog (issue 10): for each size, a Merchant Center TSV feed of
# the demo catalog is imported (wall time, importer peak RSS), the server is started on it
# (start-up to ready, RSS), then search_catalog and get_product run under wrk at 32 connections
# (req/s, p50/p99, server RSS under load, server cores), each round beside a bare-server ping
# baseline measured in the same run.
#
#   SKIP_BUILD=1 bench/scale.sh                    # 10k, 100k, 1M products
#   SIZES="1000000" RUNS=3 bench/scale.sh          # the million-product round alone
#
# Environment (defaults in brackets): SIZES ["10000 100000 1000000"], SEED [42], RUNS [3],
# DURATION [10s], CONNECTIONS [32], THREADS [2], WARMUP [3s], READY_TIMEOUT [300],
# SKIP_BUILD [0], UCPD / UCPD_BENCH (binaries), OUT_DIR [bench-out/scale].
# Output: $OUT_DIR/scale.md (one table per size) and the raw data under $OUT_DIR/work/.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
SIZES="${SIZES:-10000 100000 1000000}"
SEED="${SEED:-42}"
RUNS="${RUNS:-3}"
DURATION="${DURATION:-10s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-2}"
WARMUP="${WARMUP:-3s}"
READY_TIMEOUT="${READY_TIMEOUT:-300}"
SKIP_BUILD="${SKIP_BUILD:-0}"
UCPD="${UCPD:-$ROOT/target/release/ucpd}"
UCPD_BENCH="${UCPD_BENCH:-$ROOT/target/release/ucpd-bench}"
# ucpd reads every UCPD_* variable as configuration: keep this one out of its environment.
export -n UCPD_BENCH
OUT_DIR="${OUT_DIR:-$ROOT/bench-out/scale}"
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
WORK="$OUT_DIR/work"

log() { printf '[scale %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[scale] ERROR: %s\n' "$*" >&2; exit 1; }

source "$BENCH_DIR/lib.sh"
trap stop_all EXIT
trap 'exit 130' INT TERM

command -v wrk >/dev/null || apt-get install -y wrk >/dev/null 2>&1 || die "wrk is required (apt-get install wrk)"
[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null 2>&1 || die "/usr/bin/time is required (apt-get install time)"
if [[ "$SKIP_BUILD" != "1" ]]; then
  log "cargo build --release -p ucp-cli -p ucp-bench"
  (cd "$ROOT" && cargo build --release -p ucp-cli -p ucp-bench) >/dev/null 2>&1 || die "release build failed"
fi


rm -rf "$WORK"
mkdir -p "$WORK/profile"
echo "$CATALOG_PROFILE" >"$WORK/profile/profile.json"
serve_profiles "$WORK/profile" /dev/null profile.json
export BENCH_DIR BENCH_PROFILE_URL="http://127.0.0.1:$PROFILE_PORT/profile.json"
BARE_PORT=$(free_port)
"$UCPD_BENCH" bare-server --port "$BARE_PORT" >"$WORK/bare.log" 2>&1 &
PIDS+=($!)
BARE_PID=$!
sleep 1

REPORT="$OUT_DIR/scale.md"
{
  echo "# Catalog size curve ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown))"
  echo
  echo "$(nproc) cores, $(uptime | sed 's/.*load/load/'); wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $RUNS rounds, medians."
} >"$REPORT"

# run_wrk script url pid -> "rps p50 p99 cores"
run_wrk() {
  local before after t0 t1 line
  before=$(cpu_ticks "$3"); t0=$(now)
  line=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency --timeout 10s -s "$BENCH_DIR/$1.lua" "$2" | grep '^BENCH_RESULT')
  after=$(cpu_ticks "$3"); t1=$(now)
  python3 - "$line" "$before" "$after" "$t0" "$t1" "$(getconf CLK_TCK)" <<'PY'
import sys
fields = dict(item.split("=", 1) for item in sys.argv[1].split()[1:])
if int(fields["body_errors"]) or int(fields["non2xx"]) or int(fields["is_error"]):
    sys.exit(f"errors in the answers: {sys.argv[1]}")
cores = (float(sys.argv[3]) - float(sys.argv[2])) / float(sys.argv[6]) / (float(sys.argv[5]) - float(sys.argv[4]))
print(fields["rps"], fields["p50_ms"], fields["p99_ms"], f"{cores:.2f}")
PY
}

for size in $SIZES; do
  dir="$WORK/$size"
  mkdir -p "$dir"
  log "$size products: generating the feed"
  "$UCPD" demo-catalog --products "$size" --seed "$SEED" --output "$dir/catalog.jsonl" >/dev/null 2>&1
  python3 "$BENCH_DIR/jsonl_to_gmc.py" "$dir/catalog.jsonl" "$dir/feed.tsv" 2>/dev/null
  python3 "$BENCH_DIR/ids.py" "$dir/catalog.jsonl" "$dir/ids.lua" 2>/dev/null
  rm -f "$dir/catalog.jsonl"
  sync
  log "$size products: import"
  t0=$(now)
  /usr/bin/time -f '%M' -o "$dir/import.rss" "$UCPD" import "$dir/feed.tsv" --data-dir "$dir/data" --format gmc-text \
    >"$dir/import.out" 2>"$dir/import.err" || { tail "$dir/import.err" >&2; die "import failed"; }
  import_s=$(python3 -c "print(f'{$(now) - $t0:.1f}')")
  import_rss=$(tail -n1 "$dir/import.rss")
  rm -f "$dir/feed.tsv"
  port=$(free_port)
  t0=$(now)
  "$UCPD" serve --listen "127.0.0.1:$port" --data-dir "$dir/data" --no-demo --dev-insecure-profiles >"$dir/server.log" 2>&1 &
  server=$!
  PIDS+=("$server")
  deadline=$((SECONDS + READY_TIMEOUT))
  until grep -q 'ucpd ready' "$dir/server.log"; do
    kill -0 "$server" 2>/dev/null || die "server exited (log: $dir/server.log)"
    ((SECONDS < deadline)) || die "not ready after ${READY_TIMEOUT}s"
    sleep 0.05
  done
  startup_s=$(python3 -c "print(f'{$(now) - $t0:.2f}')")
  ready_rss=$(rss_kb "$server")
  log "$size products: import ${import_s}s (peak ${import_rss} kB), ready in ${startup_s}s (RSS ${ready_rss} kB)"
  export BENCH_DATA="$dir/ids.lua"
  for op in search get_product; do wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$BENCH_DIR/$op.lua" "http://127.0.0.1:$port" >/dev/null; done
  : >"$dir/rounds.tsv"
  for run in $(seq 1 "$RUNS"); do
    line=$(run_wrk ping "http://127.0.0.1:$BARE_PORT" "$BARE_PID") || die "bare failed at $size products"
    echo "bare $line" >>"$dir/rounds.tsv"
    for op in ping search get_product; do
      line=$(run_wrk "$op" "http://127.0.0.1:$port" "$server") || die "$op failed at $size products"
      echo "$op $line" >>"$dir/rounds.tsv"
    done
    log "$size products: round $run/$RUNS done"
  done
  # The cold scenarios after the others (they evict the hot set from the read cache).
  for op in search_varied get_product_any; do wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$BENCH_DIR/$op.lua" "http://127.0.0.1:$port" >/dev/null; done
  for run in $(seq 1 "$RUNS"); do
    for op in search_varied get_product_any; do
      line=$(run_wrk "$op" "http://127.0.0.1:$port" "$server") || die "$op failed at $size products"
      echo "$op $line" >>"$dir/rounds.tsv"
    done
    log "$size products: cold round $run/$RUNS done"
  done
  load_rss=$(rss_kb "$server")
  kill "$server"; wait "$server" 2>/dev/null || true
  python3 - "$dir/rounds.tsv" "$size" "$import_s" "$import_rss" "$startup_s" "$ready_rss" "$load_rss" "$(du -sb "$dir/data" | cut -f1)" >>"$REPORT" <<'PY'
import statistics, sys
rounds = {}
for line in open(sys.argv[1]):
    op, *values = line.split()
    rounds.setdefault(op, []).append([float(v) for v in values])
size, import_s, import_rss, startup_s, ready_rss, load_rss, disk = sys.argv[2:]
med = lambda op, i: statistics.median(r[i] for r in rounds[op])
print(f"\n## {int(size):,} products\n")
print(f"import {import_s} s, importer peak RSS {int(import_rss) // 1024} MB; database {int(disk) // 2**20} MB; "
      f"start-up to ready {startup_s} s; server RSS {int(ready_rss) // 1024} MB ready, {int(load_rss) // 1024} MB after the load\n")
print("| scenario | req/s | of bare | of ping | p50 ms | p99 ms | server cores | CPU µs per request |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for op in ["bare", "ping", "search", "get_product", "search_varied", "get_product_any"]:
    if op not in rounds:
        continue
    rps = med(op, 0)
    cores = med(op, 3)
    of_ping = "" if op == "bare" else f"{100 * rps / med('ping', 0):.1f} %"
    print(f"| {op} | {rps:,.0f} | {100 * rps / med('bare', 0):.1f} % | {of_ping} | {med(op, 1):.2f} | "
          f"{med(op, 2):.2f} | {cores:.2f} | {1e6 * cores / rps:.0f} |")
PY
  rm -rf "$dir/data"
done
cat "$REPORT"
