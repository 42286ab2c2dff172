#!/usr/bin/env python3
"""Write the dedicated catalog for the purchase benchmark, and its variant ids.

Usage: purchase_catalog.py OUT.jsonl IDS.txt [PRODUCTS]

PRODUCTS (default 1000) products, one variant each, inventory_quantity 1,000,000, prices
between $5.00 and $104.99. A 10 s run at a few hundred orders/s takes a few thousand units,
spread over PRODUCTS variants, so no variant can run out of stock. IDS.txt gets one variant id
per line, for `ucpd-bench purchase --items`.
"""

import json
import sys

WORDS = ["Canvas", "Merino", "Trail", "Harbor", "Summit", "Cedar", "Juniper", "Atlas", "Nimbus", "Quartz"]
KINDS = ["Tote", "Beanie", "Mug", "Notebook", "Candle", "Scarf", "Water Bottle", "Pen Set", "Coaster", "Socks"]


def main():
    out_path, ids_path = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    ids = []
    with open(out_path, "w", encoding="utf-8") as out:
        for i in range(1, count + 1):
            pid = f"bench_{i:05d}"
            vid = f"{pid}-1"
            title = f"{WORDS[i % len(WORDS)]} {KINDS[(i // len(WORDS)) % len(KINDS)]} {i}"
            price = {"amount": 500 + (i * 37) % 10000, "currency": "USD"}
            product = {
                "id": pid,
                "handle": f"bench-{i:05d}",
                "title": title,
                "description": {"plain": f"{title}, a purchase-benchmark product."},
                "url": f"https://demo.ucpd.dev/products/bench-{i:05d}",
                "categories": [{"taxonomy": "merchant", "value": "Bench"}],
                "price_range": {"min": price, "max": price},
                "variants": [{
                    "id": vid,
                    "sku": f"BENCH-{i:05d}",
                    "title": "Default",
                    "description": {"plain": f"{title}."},
                    "price": price,
                    "availability": {"available": True, "status": "in_stock"},
                    "inventory_quantity": 1_000_000,
                }],
            }
            out.write(json.dumps(product, separators=(",", ":")) + "\n")
            ids.append(vid)
    with open(ids_path, "w", encoding="utf-8") as f:
        f.write("\n".join(ids) + "\n")
    print(f"purchase catalog: {count} products, 1 variant each, inventory_quantity 1000000", file=sys.stderr)


if __name__ == "__main__":
    main()
