#!/usr/bin/env bash
# ucpd end-to-end benchmark: import time, RSS, MCP throughput/latency vs a ping baseline, the
# same catalog operations over REST and MCP, and the purchase flow (create → update → complete
# checkout) over MCP and REST with its own ping baseline.
#
#   bench/run.sh                      # full run: 100,000 products, 3 runs x 10 s per operation
#   RUNS=1 DURATION=5s bench/run.sh   # quicker
#   SKIP_PURCHASE=1 SKIP_COMPARE=1 bench/run.sh   # only the wrk catalog phase
#
# Environment (defaults in brackets):
#   PRODUCTS [100000]  catalog size        SEED [42]          demo-catalog seed
#   RUNS [3]           runs per operation  DURATION [10s]     wrk -d per run
#   THREADS [2]        wrk -t              CONNECTIONS [32]   wrk -c
#   WARMUP [3s]        wrk -d of the warm-up pass per operation
#   READY_TIMEOUT [180] seconds to wait for "ucpd ready"
#   SKIP_BUILD [0]     1 = use the existing target/release/ucpd and target/release/ucpd-bench
#   SKIP_COMPARE [0]   1 = skip the REST-vs-MCP catalog comparison (ucpd-bench catalog)
#   COMPARE_RUNS [4]   rounds of the comparison (transport order alternates per round)
#   COMPARE_CONCURRENCY [32]  ucpd-bench --concurrency for the comparison
#   SKIP_PURCHASE [0]  1 = skip the purchase phase (ucpd-bench purchase + ping)
#   PURCHASE_RUNS [3]  rounds of ping, purchase/mcp, purchase/rest (interleaved)
#   PURCHASE_CONCURRENCY [16]  ucpd-bench --concurrency for purchase and its ping baseline
#   PURCHASE_PRODUCTS [1000]   products in the dedicated purchase catalog (bench/purchase_catalog.py)
#   BENCH_THREADS [2]  ucpd-bench runtime threads
#   SKIP_JSONL_IMPORT [0]  1 = skip the reference JSON-lines import (time and disk)
#   UCPD, UCPD_BENCH   the binaries [target/release/ucpd, target/release/ucpd-bench] (to measure
#                      another build, e.g. the one before a change, with SKIP_BUILD=1)
#   OUT_DIR [bench-out] results go to $OUT_DIR/results.md, raw data to $OUT_DIR/work/
#
# Requires: cargo, python3, curl; installs wrk with apt-get when missing (run as root).
# Note: wrk runs on the same machine as the server and competes with it for the CPUs.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$BENCH_DIR/lib.sh"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
PRODUCTS="${PRODUCTS:-100000}"
SEED="${SEED:-42}"
RUNS="${RUNS:-3}"
DURATION="${DURATION:-10s}"
THREADS="${THREADS:-2}"
CONNECTIONS="${CONNECTIONS:-32}"
WARMUP="${WARMUP:-3s}"
READY_TIMEOUT="${READY_TIMEOUT:-180}"
SKIP_BUILD="${SKIP_BUILD:-0}"
OUT_DIR="${OUT_DIR:-$ROOT/bench-out}"
SKIP_COMPARE="${SKIP_COMPARE:-0}"
COMPARE_RUNS="${COMPARE_RUNS:-4}"
COMPARE_CONCURRENCY="${COMPARE_CONCURRENCY:-32}"
SKIP_PURCHASE="${SKIP_PURCHASE:-0}"
PURCHASE_RUNS="${PURCHASE_RUNS:-$RUNS}"
PURCHASE_CONCURRENCY="${PURCHASE_CONCURRENCY:-16}"
PURCHASE_PRODUCTS="${PURCHASE_PRODUCTS:-1000}"
BENCH_THREADS="${BENCH_THREADS:-2}"
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
WORK="$OUT_DIR/work"
SKIP_JSONL_IMPORT="${SKIP_JSONL_IMPORT:-0}"
UCPD="${UCPD:-$ROOT/target/release/ucpd}"
UCPD_BENCH="${UCPD_BENCH:-$ROOT/target/release/ucpd-bench}"
# ucpd reads every UCPD_* variable as configuration: keep this one out of its environment.
export -n UCPD_BENCH
# `bare` is ucpd-bench bare-server: the same ping bytes from a bare axum server (the transport's
# ceiling), measured in the same rounds as ucpd's ping.
OPS=(bare ping search lookup get_product)
# The cold scenarios, measured after the others (they evict the hot set from the read cache):
# queries that rarely repeat, get_product over 20,000 products drawn at random, and lookups of
# 10 of them.
COLD_OPS=(search_varied get_product_any lookup_any)

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }

SERVER_PID=""
PROFILE_PID=""
PURCHASE_PID=""
BARE_PID=""
cleanup() {
  local rc=$?
  for pid in "$SERVER_PID" "$PURCHASE_PID" "$PROFILE_PID" "$BARE_PID"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'printf "[bench] ERROR: command failed (exit %s) at %s line %s: %s\n" "$?" "${BASH_SOURCE[0]}" "$LINENO" "$BASH_COMMAND" >&2' ERR

# --- 1. tools -------------------------------------------------------------------------------
for tool in python3 curl cargo; do
  command -v "$tool" >/dev/null || die "$tool is required"
done
[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null 2>&1 || die "/usr/bin/time is required (apt-get install time)"
if ! command -v wrk >/dev/null; then
  log "installing wrk (apt-get)"
  if ! apt-get install -y wrk >/dev/null 2>&1; then
    apt-get update >/dev/null || die "apt-get update failed"
    apt-get install -y wrk >/dev/null || die "apt-get install -y wrk failed"
  fi
fi
command -v wrk >/dev/null || die "wrk is not installed"

# CPU accounting: "<process utime+stime ticks> <machine busy ticks> <machine total ticks>
# <wall seconds>" now; cpu_line turns two such marks into the CPU line of a scenario (cores the
# process used, cores the whole machine used, cores left idle).
cpu_mark() {
  local proc machine
  proc=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0)
  machine=$(awk '/^cpu / {busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6}' /proc/stat)
  echo "$proc $machine $(now)"
}
cpu_line() { # mark_before mark_after
  python3 - "$1" "$2" "$(getconf CLK_TCK)" <<'PY'
import sys
b, a, hz = sys.argv[1].split(), sys.argv[2].split(), float(sys.argv[3])
wall = float(a[3]) - float(b[3])
server = (float(a[0]) - float(b[0])) / hz / wall
busy = (float(a[1]) - float(b[1])) / hz / wall
total = (float(a[2]) - float(b[2])) / hz / wall
print(f"CPU_RESULT server_cores={server:.2f} machine_busy_cores={busy:.2f} machine_idle_cores={total - busy:.2f}")
PY
}
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

rm -rf "$WORK"
mkdir -p "$WORK"
META="$WORK/meta.tsv"
: >"$META"
meta() { printf '%s\t%s\n' "$1" "${2//$'\n'/ }" >>"$META"; }
meta PRODUCTS "$PRODUCTS"; meta SEED "$SEED"; meta RUNS "$RUNS"; meta DURATION "$DURATION"
meta THREADS "$THREADS"; meta CONNECTIONS "$CONNECTIONS"; meta WARMUP "$WARMUP"
meta SKIP_COMPARE "$SKIP_COMPARE"; meta COMPARE_RUNS "$COMPARE_RUNS"; meta COMPARE_CONCURRENCY "$COMPARE_CONCURRENCY"
meta SKIP_PURCHASE "$SKIP_PURCHASE"; meta PURCHASE_RUNS "$PURCHASE_RUNS"; meta PURCHASE_CONCURRENCY "$PURCHASE_CONCURRENCY"
meta PURCHASE_PRODUCTS "$PURCHASE_PRODUCTS"; meta BENCH_THREADS "$BENCH_THREADS"
meta UPTIME_START "$(uptime)"
meta DATE "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta GIT_REV "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- crates 2>/dev/null || echo '+dirty')"
meta WRK_VERSION "$(wrk -v 2>&1 | head -n1 | awk '{print $2}')"

# --- 2. build, catalog, feed, import --------------------------------------------------------
if [[ "$SKIP_BUILD" != "1" ]]; then
  log "cargo build --release -p ucp-cli -p ucp-bench"
  (cd "$ROOT" && cargo build --release -p ucp-cli -p ucp-bench) >"$WORK/build.log" 2>&1 \
    || { tail -n 30 "$WORK/build.log" >&2; die "release build failed (log: $WORK/build.log)"; }
fi
[[ -x "$UCPD" ]] || die "$UCPD not found (build failed or SKIP_BUILD=1 without a build)"
if [[ "$SKIP_COMPARE" != "1" || "$SKIP_PURCHASE" != "1" ]]; then
  [[ -x "$UCPD_BENCH" ]] || die "$UCPD_BENCH not found (build failed or SKIP_BUILD=1 without a build)"
fi

CATALOG="$WORK/catalog.jsonl"
FEED="$WORK/feed.tsv"
log "generating $PRODUCTS-product catalog (seed $SEED)"
"$UCPD" demo-catalog --products "$PRODUCTS" --seed "$SEED" --output "$CATALOG" >/dev/null \
  || die "ucpd demo-catalog failed"
log "converting to a Merchant Center TSV feed"
python3 "$BENCH_DIR/jsonl_to_gmc.py" "$CATALOG" "$FEED" 2>"$WORK/convert.log" \
  || { cat "$WORK/convert.log" >&2; die "jsonl_to_gmc.py failed"; }
cat "$WORK/convert.log" >&2
meta FEED_ROWS "$(($(wc -l <"$FEED") - 1))"
meta FEED_BYTES "$(stat -c %s "$FEED")"

time_import() { # name file format data_dir
  local name="$1" file="$2" format="$3" dir="$4" t0 t1 rc=0
  rm -rf "$dir"
  sync
  t0=$(now)
  /usr/bin/time -f '%M' -o "$WORK/import-$name.rss" \
    "$UCPD" import "$file" --data-dir "$dir" --format "$format" >"$WORK/import-$name.out" 2>"$WORK/import-$name.err" || rc=$?
  t1=$(now)
  [[ $rc -eq 0 ]] || { tail -n 20 "$WORK/import-$name.err" >&2; die "ucpd import ($name) exited with $rc"; }
  local secs summary
  secs=$(elapsed "$t0" "$t1")
  summary=$({ grep -h 'imported' "$WORK/import-$name.out" "$WORK/import-$name.err" || true; } | tail -n1 | sed 's/\x1b\[[0-9;]*m//g')
  log "import $name: ${secs}s wall — $summary"
  meta "IMPORT_${name^^}_SECONDS" "$secs"
  meta "IMPORT_${name^^}_PEAK_RSS_KB" "$(tail -n1 "$WORK/import-$name.rss")"
  meta "IMPORT_${name^^}_SUMMARY" "$summary"
  meta "IMPORT_${name^^}_DB_BYTES" "$(du -sb "$dir" | awk '{print $1}')"
}
DATA_GMC="$WORK/data-gmc"
time_import gmc "$FEED" gmc-text "$DATA_GMC"
if [[ "$SKIP_JSONL_IMPORT" != "1" ]]; then
  time_import jsonl "$CATALOG" jsonl "$WORK/data-jsonl"
  rm -rf "$WORK/data-jsonl"
fi

# Ids for the Lua scripts (bench/ids.py): 1,000 product ids and 1,000 variant ids spread over
# the catalog, 20,000 drawn at random and 2,000 titles' words for the cold scenarios; the
# first two also as JSON for ucpd-bench (ids.json).
python3 "$BENCH_DIR/ids.py" "$CATALOG" "$WORK/ids.lua" "$WORK/ids.json"

# --- 3. servers -----------------------------------------------------------------------------
mkdir -p "$WORK/profile"
echo "$CATALOG_PROFILE" >"$WORK/profile/profile.json"
# The purchase phase's platform shares every shopping capability.
echo "$SHOP_PROFILE" >"$WORK/profile/purchase-profile.json"
serve_profiles "$WORK/profile" "$WORK/profile-server.log" profile.json || die "profile server not answering"
PROFILE_URL="http://127.0.0.1:$PROFILE_PORT/profile.json"

PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
log "starting ucpd serve on $URL"
"$UCPD" serve --listen "127.0.0.1:$PORT" --data-dir "$DATA_GMC" --no-demo --dev-insecure-profiles \
  >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
t0=$(now)
deadline=$((SECONDS + READY_TIMEOUT))
until grep -q 'ucpd ready' "$WORK/server.log"; do
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 20 "$WORK/server.log" >&2; die "ucpd serve exited before ready"; }
  ((SECONDS < deadline)) || { tail -n 20 "$WORK/server.log" >&2; die "ucpd not ready after ${READY_TIMEOUT}s"; }
  sleep 0.05
done
meta STARTUP_SECONDS "$(elapsed "$t0" "$(now)")"
meta RSS_AFTER_LOAD_KB "$(rss_kb "$SERVER_PID")"
log "ready; RSS $(rss_kb "$SERVER_PID") kB"

export BENCH_DIR BENCH_DATA="$WORK/ids.lua" BENCH_PROFILE_URL="$PROFILE_URL"

# The bare-server baseline: idle while ucpd is measured, and ucpd idle while it is.
BARE_PORT=$(free_port)
BARE_URL="http://127.0.0.1:$BARE_PORT"
"$UCPD_BENCH" bare-server --port "$BARE_PORT" >"$WORK/bare-server.log" 2>&1 &
BARE_PID=$!
for _ in $(seq 1 100); do
  grep -q 'bare-server ready' "$WORK/bare-server.log" && break
  kill -0 "$BARE_PID" 2>/dev/null || die "ucpd-bench bare-server exited (log: $WORK/bare-server.log)"
  sleep 0.05
done
grep -q 'bare-server ready' "$WORK/bare-server.log" || die "bare-server not ready"

# Sanity: one request per operation, show what comes back.
mcp() { curl -sS --max-time 30 -H 'Content-Type: application/json' -d "$1" "$URL/ucp/mcp"; }
first_pid=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["id"])' "$CATALOG")
sanity_meta="\"meta\":{\"ucp-agent\":{\"profile\":\"$PROFILE_URL\"}}"
declare -A SANITY=(
  [ping]='{"jsonrpc":"2.0","id":1,"method":"ping"}'
  [search]="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"search_catalog\",\"arguments\":{$sanity_meta,\"catalog\":{\"query\":\"running shoes\"}}}}"
  [lookup]="{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"lookup_catalog\",\"arguments\":{$sanity_meta,\"catalog\":{\"ids\":[\"$first_pid\"]}}}}"
  [get_product]="{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"get_product\",\"arguments\":{$sanity_meta,\"catalog\":{\"id\":\"$first_pid\"}}}}"
)
SANITY[search_varied]="${SANITY[search]}"
SANITY[get_product_any]="${SANITY[get_product]}"
SANITY[lookup_any]="${SANITY[lookup]}"
bare_body=$(curl -sS --max-time 5 -H 'Content-Type: application/json' -d "${SANITY[ping]}" "$BARE_URL/ucp/mcp")
[[ "$bare_body" == "$(mcp "${SANITY[ping]}")" ]] || die "bare-server does not answer ping with ucpd's bytes: $bare_body"
log "sanity bare ok (the same ${#bare_body} bytes as ucpd's ping)"
for op in "${OPS[@]}" "${COLD_OPS[@]}"; do
  [[ "$op" == bare ]] && continue
  body=$(mcp "${SANITY[$op]}") || die "sanity request for $op failed (curl)"
  printf '%s\n' "$body" >"$WORK/sanity-$op.json"
  if grep -q '"error"' <<<"$body"; then
    log "WARNING: sanity $op returned an error: ${body:0:300}"
  elif [[ "$op" != ping ]] && ! grep -q 'prod_' <<<"$body"; then
    log "WARNING: sanity $op returned no products: ${body:0:300}"
  else
    log "sanity $op ok (${#body} bytes)"
  fi
done

run_wrk() { # op duration outfile
  local script="$1" target="$URL" pid="$SERVER_PID" before
  if [[ "$1" == bare ]]; then script=ping target="$BARE_URL" pid="$BARE_PID"; fi
  before=$(cpu_mark "$pid")
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$2" --latency --timeout 10s -s "$BENCH_DIR/$script.lua" "$target" >"$3" 2>&1 \
    || { cat "$3" >&2; die "wrk failed for $1"; }
  cpu_line "$before" "$(cpu_mark "$pid")" >>"$3"
  grep -q '^BENCH_RESULT' "$3" || { cat "$3" >&2; die "wrk output for $1 has no BENCH_RESULT line"; }
}

log "warm-up ($WARMUP per operation)"
for op in "${OPS[@]}"; do run_wrk "$op" "$WARMUP" "$WORK/warmup-$op.txt"; done
meta RSS_AFTER_WARMUP_KB "$(rss_kb "$SERVER_PID")"

# Operations are interleaved within each run so drift affects all of them alike.
rounds() { # op...: RUNS rounds, each running every op once, in order
  for run in $(seq 1 "$RUNS"); do
    for op in "$@"; do
      log "run $run/$RUNS: $op (wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency)"
      run_wrk "$op" "$DURATION" "$WORK/wrk-$op-$run.txt"
      grep -E '^(BENCH|CPU)_RESULT' "$WORK/wrk-$op-$run.txt" | sed -E 's/^(BENCH|CPU)_RESULT /    /' >&2
    done
  done
}
rounds "${OPS[@]}"
meta RSS_AFTER_BENCH_KB "$(rss_kb "$SERVER_PID")"
# The cold scenarios: each run's ratio is against that run's ping above.
for op in "${COLD_OPS[@]}"; do run_wrk "$op" "$WARMUP" "$WORK/warmup-$op.txt"; done
rounds "${COLD_OPS[@]}"
meta RSS_AFTER_COLD_KB "$(rss_kb "$SERVER_PID")"
kill "$BARE_PID" 2>/dev/null || true
wait "$BARE_PID" 2>/dev/null || true
BARE_PID=""
meta RSS_PEAK_KB "$(hwm_kb "$SERVER_PID")"

# --- 3b. REST vs MCP: the same catalog operations, same server, same tool (ucpd-bench) ------
# Each round runs every operation over both transports back to back; the order of the two
# transports alternates per round so drift does not favour one.
ucpd_bench() { # outfile args...
  local out="$1" before; shift
  before=$(cpu_mark "${SERVER_PID:-$PURCHASE_PID}")
  "$UCPD_BENCH" "$@" --threads "$BENCH_THREADS" >"$out" 2>&1 || { cat "$out" >&2; die "ucpd-bench $1 failed"; }
  cpu_line "$before" "$(cpu_mark "${SERVER_PID:-$PURCHASE_PID}")" >>"$out"
  grep -q '^BENCH_RESULT' "$out" || { cat "$out" >&2; die "ucpd-bench output has no BENCH_RESULT line ($out)"; }
  grep '^BENCH_RESULT' "$out" | sed 's/^BENCH_RESULT /    /' >&2
}
if [[ "$SKIP_COMPARE" != "1" ]]; then
  meta UPTIME_COMPARE "$(uptime)"
  compare() { # op transport duration outfile
    ucpd_bench "$4" catalog --op "$1" --transport "$2" --url "$URL" --profile "$PROFILE_URL" --ids "$WORK/ids.json" \
      --concurrency "$COMPARE_CONCURRENCY" --duration "$3"
  }
  log "REST vs MCP warm-up ($WARMUP per operation and transport)"
  for op in search lookup get-product; do
    for transport in mcp rest; do compare "$op" "$transport" "$WARMUP" "$WORK/ub-warmup-$op-$transport.txt"; done
  done
  for run in $(seq 1 "$COMPARE_RUNS"); do
    if ((run % 2)); then order=(mcp rest); else order=(rest mcp); fi
    for op in search lookup get-product; do
      for transport in "${order[@]}"; do
        log "compare $run/$COMPARE_RUNS: $op over $transport (ucpd-bench -c $COMPARE_CONCURRENCY, $DURATION)"
        compare "$op" "$transport" "$DURATION" "$WORK/ub-catalog-${op//-/_}-$transport-$run.txt"
      done
    done
  done
  meta RSS_AFTER_COMPARE_KB "$(rss_kb "$SERVER_PID")"
fi
kill -0 "$SERVER_PID" 2>/dev/null || die "ucpd died during the benchmark (log: $WORK/server.log)"
sed 's/\x1b\[[0-9;]*m//g' "$WORK/server.log" >"$WORK/server.plain.log"
meta SERVER_LOG_ERRORS "$(grep -c ' ERROR ' "$WORK/server.plain.log" || true)"
meta SERVER_LOG_WARNINGS "$(grep -c ' WARN ' "$WORK/server.plain.log" || true)"
meta SERVER_LOG_LINES "$(wc -l <"$WORK/server.log")"

# --- 3c. purchase flow: its own store and server -------------------------------------------
# A dedicated catalog (bench/purchase_catalog.py: PURCHASE_PRODUCTS products, one variant each,
# inventory_quantity 1,000,000) so no line can run out of stock, on a fresh store. The catalog
# server is stopped first so the two do not share the CPUs. The sandbox payment handler is
# switched on through a config file (it defaults to on only with demo = true).
if [[ "$SKIP_PURCHASE" != "1" ]]; then
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
  log "purchase: generating a $PURCHASE_PRODUCTS-product catalog and importing it"
  python3 "$BENCH_DIR/purchase_catalog.py" "$WORK/purchase-catalog.jsonl" "$WORK/purchase-items.txt" "$PURCHASE_PRODUCTS" \
    2>"$WORK/purchase-catalog.log" || { cat "$WORK/purchase-catalog.log" >&2; die "purchase_catalog.py failed"; }
  DATA_PURCHASE="$WORK/data-purchase"
  rm -rf "$DATA_PURCHASE"
  "$UCPD" import "$WORK/purchase-catalog.jsonl" --data-dir "$DATA_PURCHASE" --format jsonl \
    >"$WORK/import-purchase.out" 2>"$WORK/import-purchase.err" \
    || { tail -n 20 "$WORK/import-purchase.err" >&2; die "ucpd import (purchase catalog) failed"; }
  printf '[payments]\nsandbox = true\n' >"$WORK/purchase.toml"
  PURCHASE_PORT=$(free_port)
  PURCHASE_URL="http://127.0.0.1:$PURCHASE_PORT"
  PURCHASE_PROFILE_URL="http://127.0.0.1:$PROFILE_PORT/purchase-profile.json"
  log "starting the purchase ucpd on $PURCHASE_URL"
  "$UCPD" serve --config "$WORK/purchase.toml" --listen "127.0.0.1:$PURCHASE_PORT" --data-dir "$DATA_PURCHASE" \
    --no-demo --dev-insecure-profiles >"$WORK/purchase-server.log" 2>&1 &
  PURCHASE_PID=$!
  deadline=$((SECONDS + READY_TIMEOUT))
  until grep -q 'ucpd ready' "$WORK/purchase-server.log"; do
    kill -0 "$PURCHASE_PID" 2>/dev/null || { tail -n 20 "$WORK/purchase-server.log" >&2; die "purchase ucpd exited before ready"; }
    ((SECONDS < deadline)) || die "purchase ucpd not ready after ${READY_TIMEOUT}s"
    sleep 0.05
  done
  purchase() { # transport duration outfile
    ucpd_bench "$3" purchase --transport "$1" --url "$PURCHASE_URL" --profile "$PURCHASE_PROFILE_URL" \
      --items "$WORK/purchase-items.txt" --concurrency "$PURCHASE_CONCURRENCY" --duration "$2"
  }
  ping_baseline() { # duration outfile
    ucpd_bench "$2" ping --url "$PURCHASE_URL" --concurrency "$PURCHASE_CONCURRENCY" --duration "$1"
  }
  log "purchase warm-up ($WARMUP each)"
  ping_baseline "$WARMUP" "$WORK/ub-warmup-ping.txt"
  purchase mcp "$WARMUP" "$WORK/ub-warmup-purchase-mcp.txt"
  purchase rest "$WARMUP" "$WORK/ub-warmup-purchase-rest.txt"
  meta UPTIME_PURCHASE "$(uptime)"
  for run in $(seq 1 "$PURCHASE_RUNS"); do
    log "purchase run $run/$PURCHASE_RUNS: ping, purchase/mcp, purchase/rest (-c $PURCHASE_CONCURRENCY, $DURATION)"
    ping_baseline "$DURATION" "$WORK/ub-ping-$run.txt"
    purchase mcp "$DURATION" "$WORK/ub-purchase-mcp-$run.txt"
    purchase rest "$DURATION" "$WORK/ub-purchase-rest-$run.txt"
  done
  kill -0 "$PURCHASE_PID" 2>/dev/null || die "purchase ucpd died during the benchmark (log: $WORK/purchase-server.log)"
  meta PURCHASE_RSS_KB "$(rss_kb "$PURCHASE_PID")"
  sed 's/\x1b\[[0-9;]*m//g' "$WORK/purchase-server.log" >"$WORK/purchase-server.plain.log"
  meta PURCHASE_LOG_ERRORS "$(grep -c ' ERROR ' "$WORK/purchase-server.plain.log" || true)"
  meta PURCHASE_LOG_WARNINGS "$(grep -c ' WARN ' "$WORK/purchase-server.plain.log" || true)"
  meta PURCHASE_DB_BYTES "$(du -sb "$DATA_PURCHASE" | awk '{print $1}')"
  # The writer connection's setting (it is the only connection that commits).
  meta SQLITE_SYNCHRONOUS "$(grep -ho 'PRAGMA synchronous = [A-Z]*' "$ROOT/crates/ucp-store/src/sqlite/mod.rs" | tail -n1 | awk '{print $4}')"
fi
meta UPTIME_END "$(uptime)"

# --- 4. report ------------------------------------------------------------------------------
python3 "$BENCH_DIR/summarize.py" "$WORK" "$OUT_DIR/results.md"
cat "$OUT_DIR/results.md"
log "results: $OUT_DIR/results.md (raw wrk output, logs: $WORK/)"
