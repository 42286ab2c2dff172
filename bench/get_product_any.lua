-- get_product of products drawn at random from the whole catalog (ANY_IDS from bench/ids.py's
-- cold.lua, 20,000 ids): more products than the read cache holds, so most reads
-- are cold (the store's row, its stock, parsing and rendering). get_product.lua's 1,000 ids
-- stay cached after the warm-up.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
load_cold_data()
assert(ANY_IDS and #ANY_IDS > 0, "get_product_any.lua needs ANY_IDS in cold.lua (bench/ids.py)")

random_bodies(2000, function()
  return tool_call("get_product", '{"id":' .. json_string(ANY_IDS[math.random(#ANY_IDS)]) .. '}')
end)
