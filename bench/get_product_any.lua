-- get_product of products drawn at random from the whole catalog (ANY_IDS from bench/ids.py's
-- cold.lua, 20,000 ids): more products than the read cache holds, so most reads
-- are cold (the store's row, its stock, parsing and rendering). get_product.lua's 1,000 ids
-- stay cached after the warm-up.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
-- The cold data (bench/ids.py's cold.lua, beside BENCH_DATA), loaded by the cold scripts only.
local function load_cold()
  local path = os.getenv("BENCH_COLD_DATA")
  if not path or path == "" then
    path = (os.getenv("BENCH_DATA") or ""):gsub("[^/]*$", "") .. "cold.lua"
  end
  dofile(path)
end
load_cold()
assert(ANY_IDS and #ANY_IDS > 0, "get_product_any.lua needs ANY_IDS in cold.lua (bench/ids.py)")

BODIES = { tool_call("get_product", '{"id":' .. json_string(ANY_IDS[1]) .. '}') }

local seeded = false
function request()
  if not seeded then
    math.randomseed(2000 + (thread_index or 0))
    seeded = true
  end
  local id = ANY_IDS[math.random(#ANY_IDS)]
  return wrk.format(nil, nil, nil, tool_call("get_product", '{"id":' .. json_string(id) .. '}'))
end
