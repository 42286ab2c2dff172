#!/usr/bin/env bash
# Group commit and the purchase flow (issue 10: ≥ 500 completed orders/s, every acknowledged
# order fsync'd before its answer, p99 ≤ 25 ms per call at 16 connections).
#
# Two ucpd processes of the same build on copies of one imported store: `shared` with the
# default group commit, `alone` with `UCPD_STORE__GROUP_COMMIT_MAX_JOBS=1` (one fsync per write,
# the baseline). Each round runs the purchase flow (create → update → update → complete, MCP)
# against both, alternating which goes first; only one is loaded at a time. Halfway through the
# rounds both servers are restarted the other way round: an A/A run of one build in both found
# the first-started server 13-21 % slower (BENCHMARKS.md, "The idempotency key's cost"). Prints
# one BENCH_RESULT per run and a PURCHASE_RESULT line with the medians and their ratio.
#
# Environment [defaults]: PRODUCTS [10000] RUNS [3] DURATION [10s] CONCURRENCY [16]
#   BENCH_THREADS [2] SKIP_BUILD [0] BIN_DIR [target/release] OUT_DIR [bench-out/purchase]
#   TRANSPORT [mcp]  KEYS [complete]: `every` sends MCP's idempotency key on create and update
#   too, as Google does (REST sends one on every call whatever KEYS says)
#   B_UCPD: another build's ucpd. Then the two servers are `a` (BIN_DIR's ucpd) and `b` (this
#   one), both with the default group commit, on copies of one store: an A/B of two builds,
#   with the same alternation and restart; PURCHASE_RESULT then gives b_over_a.
# Requires: cargo, python3, curl.
set -euo pipefail

BENCH_NAME=purchase
DEFAULT_RUNS=3
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup.sh"
TRANSPORT="${TRANSPORT:-mcp}"
KEY_FLAGS=()
[[ "${KEYS:-complete}" == every ]] && KEY_FLAGS=(--keys-on-every-call)

echo "$SHOP_PROFILE" >"$WORK/profile/profile.json"
serve_profiles "$WORK/profile" "$WORK/profile-server.log" profile.json
PROFILE="http://127.0.0.1:$PROFILE_PORT/profile.json"

printf 'demo = false\n[payments]\nsandbox = true\n' >"$WORK/ucpd.toml"
cp -a "$WORK/data" "$WORK/data-alone"
declare -A URLS SERVER_PIDS
if [[ -n "${B_UCPD:-}" ]]; then
  [[ -x "$B_UCPD" ]] || die "B_UCPD $B_UCPD is not an executable"
  VARIANTS=(a b)
else
  VARIANTS=(shared alone)
fi
start() { # name data-dir [env...]
  local name="$1" data="$2"; shift 2
  local port; port=$(free_port)
  local binary="$UCPD"
  [[ "$name" == b ]] && binary="$B_UCPD"
  env "$@" UCPD_LOG=warn "$binary" serve --config "$WORK/ucpd.toml" --listen "127.0.0.1:$port" --data-dir "$data" \
    --dev-insecure-profiles >>"$WORK/server-$name.log" 2>&1 &
  PIDS+=($!)
  SERVER_PIDS[$name]=$!
  URLS[$name]="http://127.0.0.1:$port"
  for _ in $(seq 1 300); do curl -fsS -o /dev/null "${URLS[$name]}/.well-known/ucp" 2>/dev/null && break; sleep 0.1; done
  curl -fsS -o /dev/null "${URLS[$name]}/.well-known/ucp" || die "ucpd $name not answering (log: $WORK/server-$name.log)"
}
start_both() { # first second
  for name in "$@"; do
    case "$name" in
      shared) start shared "$WORK/data" ;;
      alone) start alone "$WORK/data-alone" UCPD_STORE__GROUP_COMMIT_MAX_JOBS=1 ;;
      a) start a "$WORK/data" ;;
      b) start b "$WORK/data-alone" ;;
    esac
  done
}
start_both "${VARIANTS[@]}"

run() { # variant round-label
  local variant="$1" label="$2"
  local out="$WORK/$variant-$label.txt"
  "$UCPD_BENCH" purchase --items "$WORK/items.txt" --url "${URLS[$variant]}" --profile "$PROFILE" \
    --transport "$TRANSPORT" "${KEY_FLAGS[@]}" --concurrency "$CONCURRENCY" --duration "$DURATION" --threads "$BENCH_THREADS" \
    >"$out" 2>&1 || { cat "$out" >&2; die "ucpd-bench $variant failed"; }
  grep '^BENCH_RESULT' "$out" | tail -n1 | sed "s/^BENCH_RESULT /BENCH_RESULT variant=$variant round=$label /"
}

FIRST="${VARIANTS[0]}" SECOND="${VARIANTS[1]}"
log "warm-up"
DURATION=2s run "$FIRST" warmup >/dev/null
DURATION=2s run "$SECOND" warmup >/dev/null
RESULTS="$WORK/results.txt"
: >"$RESULTS"
for round in $(seq 1 "$RUNS"); do
  if ((RUNS > 1 && round == RUNS / 2 + 1)); then
    log "restarting both servers, $SECOND first"
    for name in "$FIRST" "$SECOND"; do kill "${SERVER_PIDS[$name]}" && wait "${SERVER_PIDS[$name]}" 2>/dev/null || true; done
    start_both "$SECOND" "$FIRST"
    DURATION=2s run "$FIRST" warmup2 >/dev/null
    DURATION=2s run "$SECOND" warmup2 >/dev/null
  fi
  if ((round % 2)); then order=("$FIRST" "$SECOND"); else order=("$SECOND" "$FIRST"); fi
  for variant in "${order[@]}"; do
    line=$(run "$variant" "$round")
    echo "$line" | tee -a "$RESULTS"
    log "$variant round $round: $(sed -n 's/.* orders_per_s=\([0-9.]*\).*/\1/p' <<<"$line") orders/s, load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
python3 - "$RESULTS" "$FIRST" "$SECOND" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    fields = dict(re.findall(r"(\w+)=(\S+)", line))
    rows.setdefault(fields["variant"], []).append(fields)
def med(variant, key):
    return statistics.median(float(row[key]) for row in rows[variant])
first, second = sys.argv[2], sys.argv[3]
if first == "shared":
    shared, alone = med("shared", "orders_per_s"), med("alone", "orders_per_s")
    p99 = {call: med("shared", f"{call}_p99_ms") for call in ("create", "update", "complete")}
    print(f"PURCHASE_RESULT orders_shared_median={shared:.1f} orders_alone_median={alone:.1f} "
          f"shared_over_alone={shared / alone:.2f} target_orders=500 "
          + " ".join(f"{call}_p99_ms={value:.1f}" for call, value in p99.items()) + " target_p99_ms=25")
else:
    a, b = med("a", "orders_per_s"), med("b", "orders_per_s")
    p99 = " ".join(f"{variant}_{call}_p99_ms={med(variant, f'{call}_p99_ms'):.1f}"
                   for variant in ("a", "b") for call in ("create", "update", "complete"))
    print(f"PURCHASE_RESULT orders_a_median={a:.1f} orders_b_median={b:.1f} b_over_a={b / a:.2f} {p99}")
PY
