#!/usr/bin/env bash
# A/B of two ucpd builds on the same catalog: both servers run at once on copies of one data
# directory; in each round every operation is measured on A and on B back to back (the other
# server idle), and which goes first alternates per round, so drift favours neither. Halfway
# through the rounds both servers are restarted the other way round (B started first), so
# neither build keeps the slot an A/A run found favoured.
#
#   bench/ab.sh A_BINARY B_BINARY DATA_DIR                  # e.g. the build before a change and after
#   ROUNDS=5 DURATION=5s OPS="ping get_product" bench/ab.sh ...
#
# DATA_DIR is a data directory with an imported catalog (bench/run.sh leaves one at
# bench-out/work/data-gmc) and IDS a Lua file of product and variant ids (bench/run.sh leaves
# bench-out/work/ids.lua). Prints one line per (operation, build, round) and a table of medians:
# req/s, p99 and server CPU per request (utime + stime of the server over the run / requests).
#
# Environment: ROUNDS [3], DURATION [5s], WARMUP [2s], CONNECTIONS [32], THREADS [2],
# OPS [ping search lookup get_product], IDS [bench-out/work/ids.lua], WORK [a temporary dir],
# B_DATA [DATA_DIR]: B's own data directory, for a B that stores the catalog differently (the
# same feed imported by B; A cannot open a database B migrated).
set -euo pipefail

BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
[[ $# -eq 3 ]] || { sed -n 2,15p "${BASH_SOURCE[0]}" >&2; exit 2; }
A_BIN="$(realpath "$1")" B_BIN="$(realpath "$2")" DATA="$(realpath "$3")"
ROUNDS="${ROUNDS:-3}"
DURATION="${DURATION:-5s}"
WARMUP="${WARMUP:-2s}"
CONNECTIONS="${CONNECTIONS:-32}"
THREADS="${THREADS:-2}"
read -r -a OPS <<<"${OPS:-ping search lookup get_product}"
IDS="$(realpath "${IDS:-$ROOT/bench-out/work/ids.lua}")"
WORK="${WORK:-$(mktemp -d)}"
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null
[[ -f "$IDS" ]] || { echo "no ids file at $IDS (run bench/run.sh once, or set IDS)" >&2; exit 2; }

source "$BENCH_DIR/lib.sh"
trap stop_all EXIT

mkdir -p "$WORK/profile"
echo "$CATALOG_PROFILE" >"$WORK/profile/profile.json"
serve_profiles "$WORK/profile" "$WORK/profile.log" profile.json

declare -A URL PID
B_DATA="$(realpath "${B_DATA:-$DATA}")"
# Starts both servers, in the order given: the first started gets the first port and data copy.
# The rounds' second half restarts them the other way round, so whatever favours one slot (an
# A/A run measured the second server's lookup about 8 % slower) falls on both builds alike.
start_servers() {
  for pid in "${PID[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  for side in "$@"; do
    bin="${side}_BIN"
    rm -rf "$WORK/data-$side"
    source_data="$DATA"
    [[ "$side" == B ]] && source_data="$B_DATA"
    cp -r "$source_data" "$WORK/data-$side"
    port=$(free_port)
    "${!bin}" serve --listen "127.0.0.1:$port" --data-dir "$WORK/data-$side" --no-demo --dev-insecure-profiles \
      >"$WORK/server-$side.log" 2>&1 &
    PID[$side]=$!
    PIDS+=($!)
    URL[$side]="http://127.0.0.1:$port"
    for _ in $(seq 1 600); do grep -q 'ucpd ready' "$WORK/server-$side.log" && break; sleep 0.1; done
    grep -q 'ucpd ready' "$WORK/server-$side.log" || { tail "$WORK/server-$side.log" >&2; exit 1; }
  done
}
start_servers A B

export BENCH_DIR BENCH_DATA="$IDS" BENCH_PROFILE_URL="http://127.0.0.1:$PROFILE_PORT/profile.json"
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
measure() { # side op duration -> "rps p99_ms cpu_us_per_request"
  local side="$1" op="$2" before after out
  out="$WORK/wrk-$side-$op.txt"
  before=$(ticks "${PID[$side]}")
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$3" --latency -s "$BENCH_DIR/$op.lua" "${URL[$side]}" >"$out" 2>&1
  after=$(ticks "${PID[$side]}")
  python3 - "$out" "$before" "$after" "$(getconf CLK_TCK)" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
fields = dict(re.findall(r"(\w+)=([\d.]+)", re.search(r"^BENCH_RESULT .*$", text, re.M).group(0)))
requests = float(fields["requests"])
cpu = (float(sys.argv[3]) - float(sys.argv[2])) / float(sys.argv[4])
bad = int(fields["non2xx"]) + int(fields["socket_errors"]) + int(fields["body_errors"]) + int(fields["is_error"])
print(f'{float(fields["rps"]):.0f} {float(fields["p99_ms"]):.2f} {cpu / requests * 1e6:.1f} {bad}')
PY
}

warm_up() {
  for op in "${OPS[@]}"; do
    for side in A B; do measure "$side" "$op" "$WARMUP" >/dev/null; done
  done
}
warm_up
RESULTS="$WORK/results.tsv"
: >"$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
  if ((ROUNDS > 1 && round == ROUNDS / 2 + 1)); then
    echo "restarting the servers the other way round (B first) for rounds $round-$ROUNDS" >&2
    start_servers B A
    warm_up
  fi
  order=(A B)
  ((round % 2 == 0)) && order=(B A)
  for op in "${OPS[@]}"; do
    for side in "${order[@]}"; do
      read -r rps p99 cpu bad < <(measure "$side" "$op" "$DURATION")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$op" "$side" "$round" "$rps" "$p99" "$cpu" "$bad" | tee -a "$RESULTS" >&2
    done
  done
done
echo "A: $A_BIN" && echo "B: $B_BIN" && echo "$(nproc) CPUs; load: $(uptime)"
python3 - "$RESULTS" "${OPS[@]}" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
print("| operation | A req/s | B req/s | B/A | A p99 ms | B p99 ms | A CPU µs/req | B CPU µs/req | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for op in sys.argv[2:]:
    med = lambda side, col: statistics.median(float(r[col]) for r in rows if r[0] == op and r[1] == side)
    errors = sum(int(r[6]) for r in rows if r[0] == op)
    a, b = med("A", 3), med("B", 3)
    print(f"| {op} | {a:,.0f} | {b:,.0f} | {b / a:.2f}x | {med('A', 4):.2f} | {med('B', 4):.2f} | {med('A', 5):.1f} | {med('B', 5):.1f} | {errors} |")
PY
