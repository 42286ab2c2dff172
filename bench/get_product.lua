-- get_product cycling through real product ids (PRODUCT_IDS from BENCH_DATA).
dofile((os.getenv("BENCH_DIR") or "bench") .. "/common.lua")
for i, id in ipairs(PRODUCT_IDS) do
  BODIES[i] = tool_call("get_product", '{"id":' .. json_string(id) .. '}')
end
