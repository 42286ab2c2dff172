#!/usr/bin/env bash
# The server's RSS through the catalog scenarios, sampled every 100 ms, with the highest
# reading of each phase: where a peak (VmHWM) comes from, which bench/run.sh's readings between
# phases do not show.
#
#   bench/rss.sh UCPD DATA_DIR IDS_LUA
#   OPS="" COLD="get_product_any" UCPD_STORE__CATALOG_CACHE_MB=16 bench/rss.sh ...
#
# DATA_DIR a data directory with an imported catalog (bench/run.sh leaves one at
# bench-out/work/data-gmc); the server runs on a copy of its database, without its saved index
# unless KEEP_INDEX=1 (so the first start builds it, as in bench/run.sh). IDS_LUA bench/ids.py's
# ids file, with its cold.lua beside it (bench/run.sh leaves both in bench-out/work/).
# Environment: OPS [ping search lookup get_product] (a 3 s warm-up each, then 5 s each), COLD
# [search_varied get_product_any lookup_any] (5 s each), CONNECTIONS [32], THREADS [2]; any
# UCPD_* variable configures the server as usual. Prints one line: phase:max-RSS/VmHWM in MB.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 3 ]] || { sed -n 2,15p "${BASH_SOURCE[0]}" >&2; exit 2; }
UCPD="$(realpath "$1")" DATA="$(realpath "$2")" IDS="$(realpath "$3")"
OPS="${OPS-ping search lookup get_product}"
COLD="${COLD-search_varied get_product_any lookup_any}"
CONNECTIONS="${CONNECTIONS:-32}" THREADS="${THREADS:-2}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
WORK="$(mktemp -d)"
source "$BENCH_DIR/lib.sh"
SCRATCH="$WORK"
trap stop_all EXIT

mkdir -p "$WORK/data" "$WORK/profile"
cp "$DATA/ucpd.db" "$WORK/data/"
for file in cursor-secret signing-key.pem; do [[ -f "$DATA/$file" ]] && cp "$DATA/$file" "$WORK/data/"; done
[[ "${KEEP_INDEX:-0}" == 1 && -f "$DATA/ucpd.db.index" ]] && cp "$DATA/ucpd.db.index" "$WORK/data/"
echo "$CATALOG_PROFILE" >"$WORK/profile/profile.json"
serve_profiles "$WORK/profile" /dev/null profile.json
PORT=$(free_port)
"$UCPD" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" --no-demo --dev-insecure-profiles >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
PIDS+=("$SERVER_PID")
for _ in $(seq 1 3000); do
  grep -q 'ucpd ready' "$WORK/server.log" && break
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -n 20 "$WORK/server.log" >&2; exit 1; }
  sleep 0.1
done
grep -q 'ucpd ready' "$WORK/server.log" || { echo "ucpd not ready" >&2; exit 1; }

SAMPLES="$WORK/samples.txt"
: >"$SAMPLES"
mark() { echo "MARK $1" >>"$SAMPLES"; }
mark ready
(while kill -0 "$SERVER_PID" 2>/dev/null; do
  awk '/^VmRSS:/ {rss = $2} /^VmHWM:/ {hwm = $2} END {print rss, hwm}' "/proc/$SERVER_PID/status" 2>/dev/null || true
  sleep 0.1
done) >>"$SAMPLES" &
PIDS+=($!)

export BENCH_DIR BENCH_DATA="$IDS" BENCH_PROFILE_URL="http://127.0.0.1:$PROFILE_PORT/profile.json"
load() { # phase script duration
  mark "$1"
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$3" --timeout 10s -s "$BENCH_DIR/$2.lua" "http://127.0.0.1:$PORT" >"$WORK/wrk.txt" 2>&1 \
    || { cat "$WORK/wrk.txt" >&2; exit 1; }
}
for op in $OPS; do load "warm-up-$op" "$op" 3s; done
for op in $OPS; do load "$op" "$op" 5s; done
for op in $COLD; do load "cold-$op" "$op" 5s; done
mark after
sleep 0.5

python3 - "$SAMPLES" <<'PY'
import sys
phase, seen = "ready", {}
for line in open(sys.argv[1]):
    fields = line.split()
    if fields[:1] == ["MARK"]:
        phase = fields[1]
        seen.setdefault(phase, [0, 0])
    elif len(fields) == 2:
        highest = seen.setdefault(phase, [0, 0])
        highest[0], highest[1] = max(highest[0], int(fields[0])), int(fields[1])
print("  ".join(f"{phase}:{rss / 1024:.0f}/{hwm / 1024:.0f}" for phase, (rss, hwm) in seen.items() if rss))
PY
