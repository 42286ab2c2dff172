#!/usr/bin/env python3
"""Ids and query words for the wrk scripts, read from a demo catalog (JSON lines), streamed.

    python3 bench/ids.py CATALOG.jsonl OUT.lua [OUT.json]

OUT.lua (BENCH_DATA of bench/*.lua) defines:
  PRODUCT_IDS  1,000 product ids spread evenly over the catalog (the hot set: the warm
               get_product and lookup scenarios cycle through them, so they stay cached)
  VARIANT_IDS  1,000 variant ids, one from each of 1,000 products between those
cold.lua, beside OUT.lua, is read by the cold scenarios only (the warm scripts never load it:
in every wrk thread's Lua heap it slowed wrk by a third on search.lua):
  ANY_IDS      20,000 product ids drawn at random from the whole catalog (seed 42): more
               than the read cache holds, so get_product_any.lua and lookup_any.lua read mostly cold products
  TITLES       the words of 2,000 titles drawn at random (seed 43): search_varied.lua makes
               its queries from them, so few repeat and the search page cache rarely answers
cold.json, beside it too, holds the same for bench/callgrind_drive.py ({"any": [...], "titles": [[words]]}).
OUT.json holds PRODUCT_IDS and VARIANT_IDS for ucpd-bench ({"products": [...], "variants": [...]}).
"""
import json
import os
import random
import re
import sys

HOT, ANY, TITLES = 1000, 20000, 2000


def lua_string(text: str) -> str:
    """A Lua string literal of `text`, in ASCII: other bytes as \\ddd (JSON's \\uXXXX is not Lua)."""
    out = []
    for byte in text.encode("utf-8"):
        if byte in (0x22, 0x5C):
            out.append("\\" + chr(byte))
        elif byte < 0x20 or byte >= 0x7F:
            out.append("\\%03d" % byte)
        else:
            out.append(chr(byte))
    return '"' + "".join(out) + '"'


def main() -> None:
    catalog, out_lua = sys.argv[1], sys.argv[2]
    out_json = sys.argv[3] if len(sys.argv) > 3 else None
    with open(catalog, encoding="utf-8") as lines:
        count = sum(1 for line in lines if line.strip())
    step = max(1, count // HOT)
    any_random, title_random = random.Random(42), random.Random(43)
    pids, vids, any_ids, titles = [], [], [], []
    with open(catalog, encoding="utf-8") as lines:
        seen = 0
        for line in lines:
            if not line.strip():
                continue
            # Only the lines something takes are parsed (a million-product catalog is 3 GB).
            parsed = None

            def product():
                nonlocal parsed
                if parsed is None:
                    parsed = json.loads(line)
                return parsed

            if seen % step == 0 and len(pids) < HOT:
                pids.append(product()["id"])
            if seen % step == step // 2 and len(vids) < HOT and product().get("variants"):
                vids.append(product()["variants"][len(product()["variants"]) // 2]["id"])
            # Reservoir samples: uniform over the catalog, in one pass.
            for sample, size, rng, field in ((any_ids, ANY, any_random, "id"), (titles, TITLES, title_random, "title")):
                slot = len(sample) if len(sample) < size else rng.randrange(seen + 1)
                if slot < size:
                    value = product().get(field, "")
                    if slot == len(sample):
                        sample.append(value)
                    else:
                        sample[slot] = value
            seen += 1
    words = [[word.lower() for word in re.findall(r"[A-Za-z][A-Za-z'-]+", title)] for title in titles]
    words = [title for title in words if title]
    lua_list = lambda items: "{" + ",".join(lua_string(item) for item in items) + "}"
    with open(out_lua, "w", encoding="utf-8") as out:
        out.write(f"PRODUCT_IDS = {lua_list(pids)}\n")
        out.write(f"VARIANT_IDS = {lua_list(vids)}\n")
    beside = os.path.dirname(os.path.abspath(out_lua))
    with open(os.path.join(beside, "cold.lua"), "w", encoding="utf-8") as out:
        out.write(f"ANY_IDS = {lua_list(any_ids)}\n")
        out.write("TITLES = {" + ",".join(lua_list(title) for title in words) + "}\n")
    with open(os.path.join(beside, "cold.json"), "w", encoding="utf-8") as out:
        json.dump({"any": any_ids, "titles": words}, out)
    if out_json:
        with open(out_json, "w", encoding="utf-8") as out:
            json.dump({"products": pids, "variants": vids}, out)
    print(f"ids: {len(pids)} products, {len(vids)} variants, {len(any_ids)} any, {len(words)} titles", file=sys.stderr)


if __name__ == "__main__":
    main()
