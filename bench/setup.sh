# Shared set-up of bench/signed.sh, bench/webhooks.sh and bench/purchase.sh, sourced after they
# set BENCH_NAME and DEFAULT_RUNS: settings from the environment, bench/lib.sh, log/die, the
# release build (unless SKIP_BUILD=1), and a work directory with a demo catalog (stock set high),
# get_product ids (ids.json), purchase variants (items.txt) and the data directory imported.
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$BENCH_DIR/.." && pwd)"
PRODUCTS="${PRODUCTS:-10000}"
RUNS="${RUNS:-$DEFAULT_RUNS}"
DURATION="${DURATION:-10s}"
CONCURRENCY="${CONCURRENCY:-16}"
BENCH_THREADS="${BENCH_THREADS:-2}"
SKIP_BUILD="${SKIP_BUILD:-0}"
BIN_DIR="${BIN_DIR:-$ROOT/target/release}"
OUT_DIR="${OUT_DIR:-$ROOT/bench-out/$BENCH_NAME}"
UCPD="$BIN_DIR/ucpd"
UCPD_BENCH="$BIN_DIR/ucpd-bench"
# ucpd reads every UCPD_* variable as configuration: keep this one out of its environment.
export -n UCPD_BENCH

log() { printf '[%s %s] %s\n' "$BENCH_NAME" "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "$BENCH_NAME" "$*" >&2; exit 1; }
source "$BENCH_DIR/lib.sh"
trap stop_all EXIT

if [[ "$SKIP_BUILD" != "1" ]]; then
  log "cargo build --release -p ucp-cli -p ucp-bench"
  (cd "$ROOT" && cargo build --release -p ucp-cli -p ucp-bench) >/dev/null 2>&1 || die "release build failed"
fi
[[ -x "$UCPD" && -x "$UCPD_BENCH" ]] || die "$UCPD or $UCPD_BENCH missing"

WORK="$OUT_DIR/work"
rm -rf "$WORK"
mkdir -p "$WORK/profile"
"$UCPD" demo-catalog --products "$PRODUCTS" --output "$WORK/catalog.jsonl" >/dev/null 2>&1
python3 - "$WORK/catalog.jsonl" "$WORK/ids.json" "$WORK/items.txt" <<'PY'
import json, sys
products = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
step = max(1, len(products) // 1000)
pids = [p["id"] for p in products[::step]][:1000]
json.dump({"products": pids, "variants": []}, open(sys.argv[2], "w"))
# In-stock variants for the purchase flow: stock set high so no line runs out.
open(sys.argv[3], "w").write("\n".join(p["variants"][0]["id"] for p in products[:200] if p.get("variants")))
PY
python3 - "$WORK/catalog.jsonl" <<'PY'
import json, sys
lines = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for product in lines:
        for variant in product.get("variants", []):
            variant["inventory_quantity"] = 1_000_000
        out.write(json.dumps(product) + "\n")
PY
"$UCPD" import "$WORK/catalog.jsonl" --format jsonl --data-dir "$WORK/data" >/dev/null 2>&1 || die "import failed"
