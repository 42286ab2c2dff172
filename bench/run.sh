#!/usr/bin/env bash
# ucpd end-to-end benchmark: import time, RSS, and MCP throughput/latency vs a ping baseline.
#
#   bench/run.sh                      # full run: 100,000 products, 3 runs x 10 s per operation
#   RUNS=1 DURATION=5s bench/run.sh   # quicker
#
# Environment (defaults in brackets):
#   PRODUCTS [100000]  catalog size        SEED [42]          demo-catalog seed
#   RUNS [3]           runs per operation  DURATION [10s]     wrk -d per run
#   THREADS [2]        wrk -t              CONNECTIONS [32]   wrk -c
#   WARMUP [3s]        wrk -d of the warm-up pass per operation
#   READY_TIMEOUT [180] seconds to wait for "ucpd ready"
#   SKIP_BUILD [0]     1 = use the existing target/release/ucpd
#   OUT_DIR [bench-out] results go to $OUT_DIR/results.md, raw data to $OUT_DIR/work/
#
# Requires: cargo, python3, curl; installs wrk with apt-get when missing (run as root).
# Note: wrk runs on the same machine as the server and competes with it for the CPUs.
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
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
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
WORK="$OUT_DIR/work"
UCPD="$ROOT/target/release/ucpd"
OPS=(ping search lookup get_product)

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[bench] ERROR: %s\n' "$*" >&2; exit 1; }

SERVER_PID=""
PROFILE_PID=""
cleanup() {
  local rc=$?
  for pid in "$SERVER_PID" "$PROFILE_PID"; do
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
if ! command -v wrk >/dev/null; then
  log "installing wrk (apt-get)"
  if ! apt-get install -y wrk >/dev/null 2>&1; then
    apt-get update >/dev/null || die "apt-get update failed"
    apt-get install -y wrk >/dev/null || die "apt-get install -y wrk failed"
  fi
fi
command -v wrk >/dev/null || die "wrk is not installed"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$2"; }

rm -rf "$WORK"
mkdir -p "$WORK"
META="$WORK/meta.tsv"
: >"$META"
meta() { printf '%s\t%s\n' "$1" "${2//$'\n'/ }" >>"$META"; }
meta PRODUCTS "$PRODUCTS"; meta SEED "$SEED"; meta RUNS "$RUNS"; meta DURATION "$DURATION"
meta THREADS "$THREADS"; meta CONNECTIONS "$CONNECTIONS"; meta WARMUP "$WARMUP"
meta DATE "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
meta GIT_REV "$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD -- crates 2>/dev/null || echo '+dirty')"
meta WRK_VERSION "$(wrk -v 2>&1 | head -n1 | awk '{print $2}')"

# --- 2. build, catalog, feed, import --------------------------------------------------------
if [[ "$SKIP_BUILD" != "1" ]]; then
  log "cargo build --release -p ucp-cli"
  (cd "$ROOT" && cargo build --release -p ucp-cli) >"$WORK/build.log" 2>&1 \
    || { tail -n 30 "$WORK/build.log" >&2; die "release build failed (log: $WORK/build.log)"; }
fi
[[ -x "$UCPD" ]] || die "$UCPD not found (build failed or SKIP_BUILD=1 without a build)"

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
  "$UCPD" import "$file" --data-dir "$dir" --format "$format" >"$WORK/import-$name.out" 2>"$WORK/import-$name.err" || rc=$?
  t1=$(now)
  [[ $rc -eq 0 ]] || { tail -n 20 "$WORK/import-$name.err" >&2; die "ucpd import ($name) exited with $rc"; }
  local secs summary
  secs=$(elapsed "$t0" "$t1")
  summary=$({ grep -h 'imported' "$WORK/import-$name.out" "$WORK/import-$name.err" || true; } | tail -n1 | sed 's/\x1b\[[0-9;]*m//g')
  log "import $name: ${secs}s wall — $summary"
  meta "IMPORT_${name^^}_SECONDS" "$secs"
  meta "IMPORT_${name^^}_SUMMARY" "$summary"
  meta "IMPORT_${name^^}_DB_BYTES" "$(du -sb "$dir" | awk '{print $1}')"
}
DATA_GMC="$WORK/data-gmc"
time_import gmc "$FEED" gmc-text "$DATA_GMC"
time_import jsonl "$CATALOG" jsonl "$WORK/data-jsonl"
rm -rf "$WORK/data-jsonl"

# Ids for the Lua scripts: 1,000 product ids and 1,000 variant ids spread over the catalog.
python3 - "$CATALOG" "$WORK/ids.lua" <<'PY'
import json, sys
products = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
step = max(1, len(products) // 1000)
pids = [p["id"] for p in products[::step]][:1000]
vids = [p["variants"][len(p["variants"]) // 2]["id"] for p in products[step // 2::step] if p.get("variants")][:1000]
with open(sys.argv[2], "w") as out:
    out.write("PRODUCT_IDS = {" + ",".join(json.dumps(x) for x in pids) + "}\n")
    out.write("VARIANT_IDS = {" + ",".join(json.dumps(x) for x in vids) + "}\n")
print(f"ids: {len(pids)} products, {len(vids)} variants", file=sys.stderr)
PY

# --- 3. servers -----------------------------------------------------------------------------
PROFILE_PORT=$(free_port)
mkdir -p "$WORK/profile"
cat >"$WORK/profile/profile.json" <<'JSON'
{"ucp":{"version":"2026-04-08","capabilities":{"dev.ucp.shopping.catalog.search":[{"version":"2026-04-08"}],"dev.ucp.shopping.catalog.lookup":[{"version":"2026-04-08"}]}}}
JSON
python3 -m http.server "$PROFILE_PORT" --bind 127.0.0.1 --directory "$WORK/profile" >"$WORK/profile-server.log" 2>&1 &
PROFILE_PID=$!
PROFILE_URL="http://127.0.0.1:$PROFILE_PORT/profile.json"
for _ in $(seq 1 100); do
  curl -fsS -o /dev/null "$PROFILE_URL" 2>/dev/null && break
  kill -0 "$PROFILE_PID" 2>/dev/null || die "profile server exited (log: $WORK/profile-server.log)"
  sleep 0.1
done
curl -fsS -o /dev/null "$PROFILE_URL" || die "profile server not answering at $PROFILE_URL"

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
for op in "${OPS[@]}"; do
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
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$2" --latency --timeout 10s -s "$BENCH_DIR/$1.lua" "$URL" >"$3" 2>&1 \
    || { cat "$3" >&2; die "wrk failed for $1"; }
  grep -q '^BENCH_RESULT' "$3" || { cat "$3" >&2; die "wrk output for $1 has no BENCH_RESULT line"; }
}

log "warm-up ($WARMUP per operation)"
for op in "${OPS[@]}"; do run_wrk "$op" "$WARMUP" "$WORK/warmup-$op.txt"; done
meta RSS_AFTER_WARMUP_KB "$(rss_kb "$SERVER_PID")"

# Operations are interleaved within each run so drift affects all of them alike.
for run in $(seq 1 "$RUNS"); do
  for op in "${OPS[@]}"; do
    log "run $run/$RUNS: $op (wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency)"
    run_wrk "$op" "$DURATION" "$WORK/wrk-$op-$run.txt"
    grep '^BENCH_RESULT' "$WORK/wrk-$op-$run.txt" | sed 's/^BENCH_RESULT /    /' >&2
  done
done
meta RSS_AFTER_BENCH_KB "$(rss_kb "$SERVER_PID")"
meta RSS_PEAK_KB "$(hwm_kb "$SERVER_PID")"
kill -0 "$SERVER_PID" 2>/dev/null || die "ucpd died during the benchmark (log: $WORK/server.log)"
sed 's/\x1b\[[0-9;]*m//g' "$WORK/server.log" >"$WORK/server.plain.log"
meta SERVER_LOG_ERRORS "$(grep -c ' ERROR ' "$WORK/server.plain.log" || true)"
meta SERVER_LOG_WARNINGS "$(grep -c ' WARN ' "$WORK/server.plain.log" || true)"
meta SERVER_LOG_LINES "$(wc -l <"$WORK/server.log")"

# --- 4. report ------------------------------------------------------------------------------
python3 "$BENCH_DIR/summarize.py" "$WORK" "$OUT_DIR/results.md"
cat "$OUT_DIR/results.md"
log "results: $OUT_DIR/results.md (raw wrk output, logs: $WORK/)"
