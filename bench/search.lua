-- search_catalog cycling through realistic queries (words that occur in `ucpd demo-catalog`
-- titles) crossed with a few filter combinations (categories match by value or "prefix >";
-- price in minor units).
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")

local queries = {
  "running shoes", "wool sweater", "coffee maker", "espresso machine", "throw blanket",
  "rain jacket", "hiking boots", "chefs knife", "jigsaw puzzle", "trekking poles",
  "merino wool socks", "noise-cancelling earbuds", "water bottle", "yoga mat", "sleeping bag",
  "board game", "cotton hoodie", "leather belt", "cast iron skillet", "remote control car",
  "headlamp", "backpack", "denim jeans", "tote bag",
}

-- Every query with every filter combo (24 x 6 = 144 bodies); consecutive requests differ in query.
for _, f in ipairs(SEARCH_FILTERS) do
  for _, q in ipairs(queries) do
    local catalog = '{"query":' .. json_string(q)
    if f ~= "" then catalog = catalog .. ',"filters":' .. f end
    catalog = catalog .. '}'
    BODIES[#BODIES + 1] = tool_call("search_catalog", catalog)
  end
end
