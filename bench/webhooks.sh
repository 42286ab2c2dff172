#!/usr/bin/env bash
# Order webhooks must not cost the purchase flow (issue 9: completed orders/s with a webhook
# receiver within 10 % of the run without one, delivery lag p99 under 1 s at that rate).
#
# One ucpd serves two platform profiles from a loopback profile server: `profile.json`
# (no webhook_url: no events) and `webhook-profile.json`, whose order capability names a
# local receiver (`ucpd-bench bare-server` answering 200) as `config.webhook_url`. Each round
# runs the purchase flow (MCP) without and with webhooks, alternating the order per round;
# then waits for the outbox to drain and reads the delivery lag of every event from the
# database (`delivered_at - created_at`: the commit of the order to the receiver's 2xx).
#
# Environment [defaults]: PRODUCTS [10000] RUNS [3] DURATION [10s] CONCURRENCY [16]
#   BENCH_THREADS [2] SKIP_BUILD [0] BIN_DIR [target/release] OUT_DIR [bench-out/webhooks]
# Requires: cargo, python3, curl.
set -euo pipefail

BENCH_NAME=webhooks
DEFAULT_RUNS=3
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup.sh"

RECEIVER_PORT=$(free_port)
echo "$SHOP_PROFILE" >"$WORK/profile/profile.json"
python3 - "$WORK/profile/profile.json" "$WORK/profile/webhook-profile.json" "http://127.0.0.1:$RECEIVER_PORT/webhooks" <<'PY'
import json, sys
profile = json.load(open(sys.argv[1]))
profile["ucp"]["capabilities"]["dev.ucp.shopping.order"][0]["config"] = {"webhook_url": sys.argv[3]}
json.dump(profile, open(sys.argv[2], "w"))
PY
grep -q webhook_url "$WORK/profile/webhook-profile.json" || die "could not add the webhook_url"
serve_profiles "$WORK/profile" "$WORK/profile-server.log" webhook-profile.json
# The receiver: ucpd-bench's bare server (axum; reads the body, answers 200), so the stand-in
# platform costs the shared cores little (a Python receiver took a sizeable share of them).
"$UCPD_BENCH" bare-server --port "$RECEIVER_PORT" --mcp-path /webhooks --threads 1 >"$WORK/receiver.log" 2>&1 &
PIDS+=($!)
PLAIN="http://127.0.0.1:$PROFILE_PORT/profile.json"
HOOKED="http://127.0.0.1:$PROFILE_PORT/webhook-profile.json"

printf 'demo = false\n[payments]\nsandbox = true\n' >"$WORK/ucpd.toml"
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
UCPD_LOG=warn "$UCPD" serve --config "$WORK/ucpd.toml" --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
  --dev-insecure-profiles >"$WORK/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do curl -fsS -o /dev/null "$URL/.well-known/ucp" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$URL/.well-known/ucp" || die "ucpd not answering (log: $WORK/server.log)"

run() { # name profile
  local name="$1" profile="$2"
  local out="$WORK/$name.txt"
  "$UCPD_BENCH" purchase --items "$WORK/items.txt" --url "$URL" --profile "$profile" --concurrency "$CONCURRENCY" \
    --duration "$DURATION" --threads "$BENCH_THREADS" >"$out" 2>&1 || { cat "$out" >&2; die "ucpd-bench $name failed"; }
  grep '^BENCH_RESULT' "$out" | tail -n1 | sed "s/^BENCH_RESULT /BENCH_RESULT variant=$name /"
}
rate() { sed -n 's/.* orders_per_s=\([0-9.]*\).*/\1/p' <<<"$1" | tail -n1; }

log "warm-up"
DURATION=2s run warmup-plain "$PLAIN" >/dev/null
DURATION=2s run warmup-hooked "$HOOKED" >/dev/null
plain=(); hooked=()
for round in $(seq 1 "$RUNS"); do
  if ((round % 2)); then order=(plain hooked); else order=(hooked plain); fi
  for variant in "${order[@]}"; do
    profile="$PLAIN"; [[ "$variant" == hooked ]] && profile="$HOOKED"
    line=$(run "purchase-$variant-$round" "$profile")
    echo "$line"
    log "purchase $variant round $round: $(rate "$line") orders/s"
    if [[ "$variant" == hooked ]]; then hooked+=("$(rate "$line")"); else plain+=("$(rate "$line")"); fi
  done
done
log "waiting for the outbox to drain"
python3 - "$WORK/data/ucpd.db" "${plain[*]}" "${hooked[*]}" <<'PY'
import sqlite3, statistics, sys, time
db = sqlite3.connect(sys.argv[1])
for _ in range(300):
    pending = db.execute("SELECT count(*) FROM webhook_events WHERE status = 'pending'").fetchone()[0]
    if pending == 0:
        break
    time.sleep(0.1)
lags = sorted(row[0] for row in db.execute(
    "SELECT delivered_at - created_at FROM webhook_events WHERE status = 'delivered' AND event_type = 'order.created'"))
dead = db.execute("SELECT count(*) FROM webhook_events WHERE status = 'dead'").fetchone()[0]
plain = [float(x) for x in sys.argv[2].split()]
hooked = [float(x) for x in sys.argv[3].split()]
def pct(p):
    return lags[min(len(lags) - 1, int(len(lags) * p))] if lags else float("nan")
ratio = statistics.median(hooked) / statistics.median(plain) * 100
print(f"WEBHOOK_RESULT orders_plain_median={statistics.median(plain):.1f} orders_hooked_median={statistics.median(hooked):.1f} "
      f"hooked_over_plain_percent={ratio:.1f} target=90 events={len(lags)} pending_left={pending} dead={dead} "
      f"lag_p50_ms={pct(0.50)} lag_p99_ms={pct(0.99)} lag_max_ms={lags[-1] if lags else 'nan'} target_p99_ms=1000")
PY
