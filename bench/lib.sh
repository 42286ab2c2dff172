# What the bench scripts share, sourced by each (directly, or through bench/setup.sh): the
# platform profiles they serve, a free port, process readings, the processes to stop on exit
# (PIDS) and the profile server. Defines only; starts nothing until a function is called.

# The catalog scenarios' platform: search and lookup.
CATALOG_PROFILE='{"ucp":{"version":"2026-04-08","capabilities":{"dev.ucp.shopping.catalog.search":[{"version":"2026-04-08"}],"dev.ucp.shopping.catalog.lookup":[{"version":"2026-04-08"}]}}}'
# The purchase scenarios' platform: every shopping capability (checkout needs fulfillment for
# the shipping address and option).
SHOP_CAPABILITIES='{"dev.ucp.shopping.catalog.search":[{"version":"2026-04-08"}],"dev.ucp.shopping.catalog.lookup":[{"version":"2026-04-08"}],"dev.ucp.shopping.cart":[{"version":"2026-04-08"}],"dev.ucp.shopping.checkout":[{"version":"2026-04-08"}],"dev.ucp.shopping.order":[{"version":"2026-04-08"}],"dev.ucp.shopping.fulfillment":[{"version":"2026-04-08"}],"dev.ucp.shopping.discount":[{"version":"2026-04-08"}]}'
SHOP_PROFILE="{\"ucp\":{\"version\":\"2026-04-08\",\"capabilities\":$SHOP_CAPABILITIES,\"payment_handlers\":{}}}"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
now() { date +%s.%N; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# The processes a script started, stopped by stop_all when it exits.
PIDS=()
# The EXIT trap (`trap stop_all EXIT`): stops every process in PIDS and waits for them, removes
# SCRATCH if the script set it, and leaves with the script's own exit status.
stop_all() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ -n "${SCRATCH:-}" ]]; then rm -rf "$SCRATCH"; fi
  exit "$rc"
}

# serve_profiles DIR LOG FILE: serves DIR on a free loopback port (PROFILE_PORT, PROFILE_PID, in
# PIDS) and waits until it answers for FILE.
serve_profiles() {
  PROFILE_PORT=$(free_port)
  python3 -m http.server "$PROFILE_PORT" --bind 127.0.0.1 --directory "$1" >"$2" 2>&1 &
  PROFILE_PID=$!
  PIDS+=("$PROFILE_PID")
  local _
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$PROFILE_PORT/$3" 2>/dev/null && return 0
    kill -0 "$PROFILE_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "the profile server is not answering for $3 (log: $2)" >&2
  return 1
}
