-- lookup_catalog with 10 real ids per request (5 product ids + 5 variant ids), cycling through
-- sets drawn from PRODUCT_IDS / VARIANT_IDS (BENCH_DATA).
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
local np, nv = #PRODUCT_IDS, #VARIANT_IDS
local sets = math.min(200, math.max(1, math.floor(math.min(np, nv) / 5)))
for s = 0, sets - 1 do
  local ids = {}
  for k = 0, 4 do
    ids[#ids + 1] = PRODUCT_IDS[((s * 5 + k) % np) + 1]
    ids[#ids + 1] = VARIANT_IDS[((s * 5 + k + 3) % nv) + 1]
  end
  BODIES[#BODIES + 1] = tool_call("lookup_catalog", '{"ids":' .. json_list(ids) .. '}')
end
