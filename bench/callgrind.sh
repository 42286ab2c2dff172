#!/usr/bin/env bash
# Instructions per request under valgrind's callgrind: a count, not a time, so the same binary,
# data and requests give the same figure however busy the machine is (to compare two builds
# of one change, where wall-clock A/Bs on these shared cores move by ±15 %).
#
#   bench/callgrind.sh UCPD DATA_DIR CATALOG_JSONL KIND [N] [OUT]
#
# UCPD a ucpd binary (release, with line tables for callgrind_annotate), DATA_DIR a data
# directory with CATALOG_JSONL imported (`ucpd demo-catalog --products 100000 --seed 42
# --output c.jsonl && ucpd import c.jsonl --format jsonl --data-dir d`), KIND search | get |
# lookup | ping (bench/callgrind_drive.py) | bare (pings to `ucpd-bench bare-server`, the
# transport's ceiling, from UCPD_BENCH [target/release/ucpd-bench]; UCPD and DATA_DIR are then
# unused), N requests [200]. The server runs on a copy of DATA_DIR; 50 requests of another seed
# warm it up uninstrumented, then the N are counted.
# MEASURE_SEED=99 measures the warm-up's own requests again: the warm path (cache hits).
# Prints the total and per-request instructions; OUT [callgrind.out] is for callgrind_annotate.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -ge 4 ]] || { sed -n 2,15p "${BASH_SOURCE[0]}" >&2; exit 2; }
UCPD="$(realpath "$1")" DATA="$(realpath "$2")" CATALOG="$(realpath "$3")" KIND="$4"
COUNT="${5:-200}" OUT="$(realpath -m "${6:-callgrind.out}")"
command -v valgrind >/dev/null || apt-get install -y valgrind >/dev/null
WORK="$(mktemp -d)"
source "$BENCH_DIR/lib.sh"
SCRATCH="$WORK"
trap stop_all EXIT

# The drive's data: bench/ids.py's cold.json, the ids and titles the cold wrk scenarios use.
python3 "$BENCH_DIR/ids.py" "$CATALOG" "$WORK/ids.lua" 2>/dev/null

mkdir -p "$WORK/profile"
echo "$CATALOG_PROFILE" >"$WORK/profile/profile.json"
serve_profiles "$WORK/profile" /dev/null profile.json
PROFILE="http://127.0.0.1:$PROFILE_PORT/profile.json"

PORT=$(free_port)
if [[ "$KIND" == bare ]]; then
  UCPD_BENCH="$(realpath "${UCPD_BENCH:-$BENCH_DIR/../target/release/ucpd-bench}")"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" \
    "$UCPD_BENCH" bare-server --port "$PORT" >"$WORK/server.log" 2>&1 &
  READY="bare-server ready" DRIVE=ping
else
  cp -r "$DATA" "$WORK/data"
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$OUT" \
    "$UCPD" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" --no-demo --dev-insecure-profiles \
    >"$WORK/server.log" 2>&1 &
  READY="ucpd ready" DRIVE="$KIND"
fi
SERVER=$!
PIDS+=("$SERVER")
for _ in $(seq 1 600); do grep -q "$READY" "$WORK/server.log" && break; sleep 0.5; done
grep -q "$READY" "$WORK/server.log" || { tail -n 20 "$WORK/server.log" >&2; exit 1; }
python3 "$BENCH_DIR/callgrind_drive.py" "http://127.0.0.1:$PORT" "$PROFILE" "$WORK/cold.json" "$DRIVE" 50 99 >/dev/null
callgrind_control -i on "$SERVER" >/dev/null 2>&1
python3 "$BENCH_DIR/callgrind_drive.py" "http://127.0.0.1:$PORT" "$PROFILE" "$WORK/cold.json" "$DRIVE" "$COUNT" \
  "${MEASURE_SEED:-7}"
callgrind_control -i off "$SERVER" >/dev/null 2>&1
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
total=$(callgrind_annotate "$OUT" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
echo "$KIND: $total instructions, $((total / COUNT)) per request ($OUT)"
