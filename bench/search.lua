-- search_catalog cycling through realistic queries (words that occur in `ucpd demo-catalog`
-- titles) crossed with a few filter combinations (categories match by value or "prefix >";
-- price in minor units).
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")

-- The queries are bench/queries.txt's lines, which `ucpd-bench catalog` and the index_scale
-- example read too.
local queries = {}
for line in io.lines((os.getenv("BENCH_DIR") or "bench") .. "/queries.txt") do
  if line ~= "" then queries[#queries + 1] = line end
end

-- Every query with every filter combo (24 x 6 = 144 bodies); consecutive requests differ in query.
for _, f in ipairs(SEARCH_FILTERS) do
  for _, q in ipairs(queries) do
    local catalog = '{"query":' .. json_string(q)
    if f ~= "" then catalog = catalog .. ',"filters":' .. f end
    catalog = catalog .. '}'
    BODIES[#BODIES + 1] = tool_call("search_catalog", catalog)
  end
end
