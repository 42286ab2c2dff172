#!/usr/bin/env bash
# Signed vs unsigned throughput (issue 8: signed >= 70 % of unsigned in the same run).
#
# One ucpd serves two platform profiles from a loopback profile server: `profile.json`
# (signatures off, the default) and `signed-profile.json`, which publishes the ucpd-bench test
# key in `signing_keys` and has `policy = "enforce"` in [[signatures.platforms]]. Each round
# runs get_product (MCP) and the purchase flow (MCP) unsigned, then signed (`ucpd-bench --sign`,
# Google's signature shape), alternating the order per round; prints BENCH_RESULT lines and
# the signed/unsigned ratio per operation.
#
# Environment [defaults]: PRODUCTS [10000] RUNS [2] DURATION [10s] CONCURRENCY [16]
#   BENCH_THREADS [2] SKIP_BUILD [0] BIN_DIR [target/release] OUT_DIR [bench-out/signed]
# Requires: cargo, python3, curl.
set -euo pipefail

BENCH_NAME=signed
DEFAULT_RUNS=2
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/setup.sh"

JWK="$("$UCPD_BENCH" jwk)"
echo "$SHOP_PROFILE" >"$WORK/profile/profile.json"
printf '{"ucp":{"version":"2026-04-08","capabilities":%s,"payment_handlers":{}},"signing_keys":[%s]}\n' "$SHOP_CAPABILITIES" "$JWK" >"$WORK/profile/signed-profile.json"
serve_profiles "$WORK/profile" "$WORK/profile-server.log" signed-profile.json
UNSIGNED="http://127.0.0.1:$PROFILE_PORT/profile.json"
SIGNED="http://127.0.0.1:$PROFILE_PORT/signed-profile.json"

cat >"$WORK/ucpd.toml" <<TOML
demo = false
[payments]
sandbox = true
[signatures]
policy = "off"
[[signatures.platforms]]
profile = "$SIGNED"
policy = "enforce"
TOML
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
UCPD_LOG=warn "$UCPD" serve --config "$WORK/ucpd.toml" --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
  --dev-insecure-profiles >"$WORK/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do curl -fsS -o /dev/null "$URL/.well-known/ucp" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$URL/.well-known/ucp" || die "ucpd not answering (log: $WORK/server.log)"

run() { # name profile extra-args...
  local name="$1" profile="$2"; shift 2
  local out="$WORK/$name.txt"
  "$UCPD_BENCH" "$@" --url "$URL" --profile "$profile" --concurrency "$CONCURRENCY" --duration "$DURATION" \
    --threads "$BENCH_THREADS" >"$out" 2>&1 || { cat "$out" >&2; die "ucpd-bench $name failed"; }
  grep '^BENCH_RESULT' "$out" | tail -n1 | sed "s/^BENCH_RESULT /BENCH_RESULT variant=$name /"
}
rps() { sed -n 's/.* \(rps\|orders_per_s\)=\([0-9.]*\).*/\2/p' <<<"$1" | tail -n1; }

log "warm-up"
DURATION=2s run warmup-unsigned "$UNSIGNED" catalog --op get-product --ids "$WORK/ids.json" >/dev/null
DURATION=2s run warmup-signed "$SIGNED" catalog --op get-product --ids "$WORK/ids.json" --sign >/dev/null
declare -A total
for round in $(seq 1 "$RUNS"); do
  if ((round % 2)); then order=(unsigned signed); else order=(signed unsigned); fi
  for op in get_product purchase; do
    for variant in "${order[@]}"; do
      profile="$UNSIGNED"; flags=()
      [[ "$variant" == signed ]] && { profile="$SIGNED"; flags=(--sign); }
      if [[ "$op" == get_product ]]; then
        line=$(run "$op-$variant-$round" "$profile" catalog --op get-product --ids "$WORK/ids.json" "${flags[@]}")
      else
        line=$(run "$op-$variant-$round" "$profile" purchase --items "$WORK/items.txt" "${flags[@]}")
      fi
      echo "$line"
      log "$op $variant round $round: $(rps "$line") req/s"
      total[$op-$variant]=$(python3 -c "print(${total[$op-$variant]:-0} + $(rps "$line"))")
    done
  done
done
for op in get_product purchase; do
  ratio=$(python3 -c "u=${total[$op-unsigned]}; s=${total[$op-signed]}; print(f'{s / u * 100:.1f}' if u else 'n/a')")
  echo "SIGNED_RATIO op=$op signed_over_unsigned_percent=$ratio target=70"
done
