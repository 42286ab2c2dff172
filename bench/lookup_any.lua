-- lookup_catalog of 10 products drawn at random from the whole catalog (ANY_IDS from
-- bench/ids.py's cold.lua, 20,000 ids) per request: more products than the read cache holds,
-- so most are read cold (their rows, stock and stored JSON; a lookup does not parse them).
-- lookup.lua's 1,000 sets of ids stay cached after the warm-up.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
load_cold_data()
assert(ANY_IDS and #ANY_IDS > 0, "lookup_any.lua needs ANY_IDS in cold.lua (bench/ids.py)")

random_bodies(1000, function()
  local ids = {}
  for _ = 1, 10 do ids[#ids + 1] = ANY_IDS[math.random(#ANY_IDS)] end
  return tool_call("lookup_catalog", '{"ids":' .. json_list(ids) .. '}')
end)
