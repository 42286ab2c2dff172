-- search_catalog with queries that rarely repeat: each request takes one to three words of a
-- title drawn at random (TITLES from bench/ids.py's cold.lua) and one of
-- search.lua's filter combinations. search.lua's 144 bodies are answered from the search page
-- cache and the read cache after the warm-up; these are not, so this scenario measures the
-- index and cold product reads: what a shopper population with its own words costs.
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
load_cold_data()
assert(TITLES and #TITLES > 0, "search_varied.lua needs TITLES in cold.lua (bench/ids.py)")

random_bodies(1000, function()
  local words = TITLES[math.random(#TITLES)]
  local picked = {}
  for _ = 1, math.random(3) do picked[#picked + 1] = words[math.random(#words)] end
  local catalog = '{"query":' .. json_string(table.concat(picked, " "))
  local filter = SEARCH_FILTERS[math.random(#SEARCH_FILTERS)]
  if filter ~= "" then catalog = catalog .. ',"filters":' .. filter end
  return tool_call("search_catalog", catalog .. "}")
end)
