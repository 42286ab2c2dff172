#!/usr/bin/env python3
"""Sends N deterministic MCP requests over one keep-alive connection (bench/callgrind.sh).

    python3 bench/callgrind_drive.py URL PROFILE_URL DATA_JSON KIND N [SEED]

KIND: search (one to three words of a random title, search.lua's filter mixes), get
(get_product of a random product), lookup (lookup_catalog of 10 random products), ping.
DATA_JSON: {"any": [product ids], "titles": [[words]]} (bench/ids.py's cold.json).
The same SEED gives the same requests, so two builds are measured on the same work.
"""
import http.client
import json
import random
import sys

FILTERS = [None, None, {"price": {"min": 1000, "max": 5000}}, {"categories": ["Apparel & Accessories"]},
           {"categories": ["Home & Garden", "Sporting Goods"], "price": {"max": 20000}},
           {"categories": ["Footwear"], "price": {"min": 5000}}]


def main() -> None:
    url, profile, data_path, kind, count = sys.argv[1:6]
    seed = int(sys.argv[6]) if len(sys.argv) > 6 else 7
    host, port = url.split("//")[1].split(":")
    with open(data_path) as file:
        data = json.load(file)
    rng = random.Random(seed)
    connection = http.client.HTTPConnection(host, int(port), timeout=600)
    errors = total = 0
    for number in range(int(count)):
        if kind == "ping":
            body = {"jsonrpc": "2.0", "id": number, "method": "ping"}
        else:
            if kind == "search":
                words = rng.choice(data["titles"])
                catalog = {"query": " ".join(rng.choice(words) for _ in range(rng.randint(1, 3)))}
                filters = rng.choice(FILTERS)
                if filters:
                    catalog["filters"] = filters
                name = "search_catalog"
            elif kind == "get":
                catalog, name = {"id": rng.choice(data["any"])}, "get_product"
            elif kind == "lookup":
                catalog, name = {"ids": [rng.choice(data["any"]) for _ in range(10)]}, "lookup_catalog"
            else:
                sys.exit(f"unknown kind {kind!r}")
            body = {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {
                "name": name, "arguments": {"meta": {"ucp-agent": {"profile": profile}}, "catalog": catalog}}}
        connection.request("POST", "/ucp/mcp", json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        total += len(answer)
        if response.status != 200 or b'"isError":true' in answer[:2000] or b'"error"' in answer[:200]:
            errors += 1
    print(f"{kind}: {count} requests (seed {seed}), {errors} errors, {total / max(int(count), 1):.0f} bytes per answer")
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
