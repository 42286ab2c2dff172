-- Baseline: JSON-RPC ping through the same MCP endpoint.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
for i = 1, 16 do
  BODIES[i] = '{"jsonrpc":"2.0","id":' .. i .. ',"method":"ping"}'
end
