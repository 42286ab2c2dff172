-- Shared wrk helpers for the ucpd MCP benchmarks (loaded by ping/search/lookup/get_product.lua).
--
-- Environment:
--   BENCH_PROFILE_URL  platform profile URL put in meta["ucp-agent"].profile
--   BENCH_DATA         Lua file written by run.sh defining PRODUCT_IDS, VARIANT_IDS (real ids)
--
-- Every script sets BODIES (a list of JSON request bodies); each wrk thread cycles through them,
-- starting at a different offset. The response() callback counts answers with "error" (a
-- JSON-RPC error, a UCP `ucp.status` of "error") or "isError":true in their envelope, so a
-- benchmark of errors is not mistaken for a fast one. An answer of up to 2 KB (every error
-- answer: a JSON-RPC error, an unknown id) is read whole; a larger one by its first and last
-- 1 KB. The first KB holds `{"jsonrpc","id","error"|"result":{"structuredContent":{"ucp":
-- {…,"status"`; on MCP the last KB is the end of the escaped text mirror, so an "error"
-- message deep inside a large answer whose `ucp.status` is "success" goes uncounted (catalog
-- answers carry none: lookup's not_found is "info"). A search answer is 53 KB; scanning all
-- of it twice for a pattern that starts with `"` (a memchr hit every few bytes) took more of
-- the shared cores than the server's own work and halved the searches measured.
-- BENCH_SCAN=full scans whole bodies as before.
--
-- done() prints one machine-readable line:
--   BENCH_RESULT requests=.. duration_s=.. rps=.. p50_ms=.. p90_ms=.. p99_ms=.. max_ms=..
--                non2xx=.. socket_errors=.. body_errors=.. is_error=.. responses=.. avg_body_bytes=..

wrk.method = "POST"
wrk.path = "/ucp/mcp"
wrk.headers["Content-Type"] = "application/json"

PROFILE_URL = os.getenv("BENCH_PROFILE_URL") or "http://127.0.0.1:8081/profile.json"
local data_file = os.getenv("BENCH_DATA")
if data_file and data_file ~= "" then
  dofile(data_file)
end
PRODUCT_IDS = PRODUCT_IDS or { "prod_0000001" }
VARIANT_IDS = VARIANT_IDS or { "prod_0000001-1" }

-- Minimal JSON string encoder (enough for ids and search words).
function json_string(s)
  s = tostring(s)
  s = s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end)
  return '"' .. s .. '"'
end

function json_list(items)
  local out = {}
  for i, v in ipairs(items) do out[i] = json_string(v) end
  return "[" .. table.concat(out, ",") .. "]"
end

local rpc_id = 0
-- A tools/call body; catalog_json is the already-encoded value of arguments.catalog.
function tool_call(name, catalog_json)
  rpc_id = rpc_id + 1
  return '{"jsonrpc":"2.0","id":' .. rpc_id .. ',"method":"tools/call","params":{"name":'
    .. json_string(name) .. ',"arguments":{"meta":{"ucp-agent":{"profile":'
    .. json_string(PROFILE_URL) .. '}},"catalog":' .. catalog_json .. '}}}'
end

BODIES = {}

-- search_catalog's filter combinations (search.lua, search_varied.lua): each the encoded value
-- of catalog.filters, or "" for no filters.
SEARCH_FILTERS = {
  "",
  "",
  '{"price":{"min":1000,"max":5000}}',
  '{"categories":["Apparel & Accessories"]}',
  '{"categories":["Home & Garden","Sporting Goods"],"price":{"max":20000}}',
  '{"categories":["Footwear"],"price":{"min":5000}}',
}

-- The cold scenarios' data (bench/ids.py's cold.lua, beside BENCH_DATA, or BENCH_COLD_DATA):
-- loaded by the cold scripts only, as it slows wrk when every thread holds it.
function load_cold_data()
  local path = os.getenv("BENCH_COLD_DATA")
  if not path or path == "" then
    path = (os.getenv("BENCH_DATA") or ""):gsub("[^/]*$", "") .. "cold.lua"
  end
  dofile(path)
end

-- A scenario that makes every body as it goes: request() asks `body()` for the next one,
-- drawing from math.random seeded with `seed` plus the thread's index (the same sequence in
-- every run, a different one per thread). BODIES keeps one body for init().
function random_bodies(seed, body)
  BODIES = { body() }
  local seeded = false
  request = function()
    if not seeded then
      math.randomseed(seed + (thread_index or 0))
      seeded = true
    end
    return wrk.format(nil, nil, nil, body())
  end
end

-- wrk callbacks ----------------------------------------------------------------------------

local threads = {}
local next_thread = 0

function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
  table.insert(threads, thread)
end

function init(args)
  responses, body_errors, is_error, body_bytes = 0, 0, 0, 0
  local n = #BODIES
  cursor = n > 0 and ((thread_index or 0) * 7919) % n or 0
  reqs = {}
  for i, body in ipairs(BODIES) do
    reqs[i] = wrk.format(nil, nil, nil, body)
  end
end

function request()
  cursor = cursor % #reqs + 1
  return reqs[cursor]
end

local scan_full = os.getenv("BENCH_SCAN") == "full"
local ENVELOPE = 1024

function response(status, headers, body)
  responses = responses + 1
  local size = #body
  body_bytes = body_bytes + size
  local head, tail = body, ""
  if not scan_full and size > 2 * ENVELOPE then
    head, tail = body:sub(1, ENVELOPE), body:sub(size - ENVELOPE + 1)
  end
  if head:find('"error"', 1, true) or tail:find('"error"', 1, true) then body_errors = body_errors + 1 end
  if head:find('"isError":true', 1, true) or tail:find('"isError":true', 1, true) then is_error = is_error + 1 end
end

function done(summary, latency, requests)
  local resp, berr, ierr, bytes = 0, 0, 0, 0
  for _, t in ipairs(threads) do
    resp = resp + (t:get("responses") or 0)
    berr = berr + (t:get("body_errors") or 0)
    ierr = ierr + (t:get("is_error") or 0)
    bytes = bytes + (t:get("body_bytes") or 0)
  end
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    "BENCH_RESULT requests=%d duration_s=%.3f rps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f "
      .. "non2xx=%d socket_errors=%d body_errors=%d is_error=%d responses=%d avg_body_bytes=%.0f\n",
    summary.requests, secs, summary.requests / secs,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, e.status, e.connect + e.read + e.write + e.timeout,
    berr, ierr, resp, resp > 0 and bytes / resp or 0))
end
