-- search_catalog with queries that rarely repeat: each request takes one to three words of a
-- title drawn at random (TITLES from bench/ids.py's cold.lua) and one of
-- search.lua's filter combinations. search.lua's 144 bodies are answered from the search page
-- cache and the read cache after the warm-up; these are not, so this scenario measures the
-- index and cold product reads: what a shopper population with its own words costs.
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
assert(TITLES and #TITLES > 0, "search_varied.lua needs TITLES in cold.lua (bench/ids.py)")

local filters = {
  "",
  "",
  '{"price":{"min":1000,"max":5000}}',
  '{"categories":["Apparel & Accessories"]}',
  '{"categories":["Home & Garden","Sporting Goods"],"price":{"max":20000}}',
  '{"categories":["Footwear"],"price":{"min":5000}}',
}

-- common.lua's init() prepares BODIES; this scenario builds every body in request().
BODIES = { tool_call("search_catalog", '{"query":"lamp"}') }

local seeded = false
function request()
  if not seeded then
    -- The same sequence in every run, a different one per thread.
    math.randomseed(1000 + (thread_index or 0))
    seeded = true
  end
  local words = TITLES[math.random(#TITLES)]
  local picked = {}
  for _ = 1, math.random(3) do picked[#picked + 1] = words[math.random(#words)] end
  local catalog = '{"query":' .. json_string(table.concat(picked, " "))
  local filter = filters[math.random(#filters)]
  if filter ~= "" then catalog = catalog .. ',"filters":' .. filter end
  return wrk.format(nil, nil, nil, tool_call("search_catalog", catalog .. "}"))
end
