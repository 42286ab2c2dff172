#!/usr/bin/env python3
"""Convert a `ucpd demo-catalog` JSON-lines catalog into a Google Merchant Center TSV feed.

Usage: jsonl_to_gmc.py CATALOG.jsonl FEED.tsv

One row per variant; item_group_id = the product id. Mapping:
  id                       variant id
  item_group_id            product id
  title / description      product title / product description.plain
  link                     product url
  image_link               first variant image, else first product image
  additional_image_link    remaining product images (comma-separated)
  price / sale_price       "12.34 USD"; when the variant has a list_price (compare-at price),
                           price = list_price and sale_price = price, as Merchant Center expects
  availability             in_stock / out_of_stock from availability.status; when the variant has
                           none, from inventory_quantity (> 0 => in_stock), else in_stock
  quantity                 inventory_quantity (empty when absent)
  brand                    metadata.brand
  gtin                     first GTIN/ISBN/EAN/UPC barcode
  mpn                      sku
  condition                new
  color / size / material  options named Color / Size / Material or Metal; any other option
                           (Capacity, Storage, Format, ...) goes to size if free, else pattern
  google_product_category  category with taxonomy google_product_category
  product_type             categories with any other taxonomy (e.g. merchant)

Tabs and newlines inside values are replaced by spaces (TSV has no quoting).
"""

import json
import sys

COLUMNS = [
    "id", "item_group_id", "title", "description", "link", "image_link", "additional_image_link",
    "price", "sale_price", "availability", "quantity", "brand", "gtin", "mpn", "condition",
    "color", "size", "material", "pattern", "google_product_category", "product_type",
]
ZERO_DECIMAL = {"JPY", "KRW", "VND", "CLP", "ISK", "HUF", "TWD", "UGX"}


def clean(value):
    if value is None:
        return ""
    return str(value).replace("\t", " ").replace("\r", " ").replace("\n", " ").strip()


def money(m):
    if not m:
        return ""
    amount, currency = int(m["amount"]), m.get("currency", "USD")
    if currency in ZERO_DECIMAL:
        return f"{amount} {currency}"
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    return f"{sign}{amount // 100}.{amount % 100:02d} {currency}"


def availability(variant):
    status = (variant.get("availability") or {}).get("status")
    if status in ("in_stock", "out_of_stock", "preorder", "backorder"):
        return status
    qty = variant.get("inventory_quantity")
    if qty is not None:
        return "in_stock" if qty > 0 else "out_of_stock"
    return "in_stock"


def option_columns(variant):
    cols = {"color": "", "size": "", "material": "", "pattern": ""}
    others = []
    for opt in variant.get("options") or []:
        name, label = (opt.get("name") or "").lower(), clean(opt.get("label"))
        if name in ("color", "colour"):
            cols["color"] = label
        elif name == "size":
            cols["size"] = label
        elif name in ("material", "metal"):
            cols["material"] = label
        elif name == "pattern":
            cols["pattern"] = label
        else:
            others.append(label)
    for label in others:
        if not cols["size"]:
            cols["size"] = label
        elif not cols["pattern"]:
            cols["pattern"] = label
    return cols


def rows(product):
    gpc = ""
    ptypes = []
    for cat in product.get("categories") or []:
        if cat.get("taxonomy") == "google_product_category":
            gpc = gpc or clean(cat.get("value"))
        else:
            ptypes.append(clean(cat.get("value")))
    images = [m["url"] for m in product.get("media") or [] if m.get("url")]
    brand = clean((product.get("metadata") or {}).get("brand"))
    title = clean(product.get("title"))
    desc = clean((product.get("description") or {}).get("plain"))
    link = clean(product.get("url"))
    for variant in product.get("variants") or []:
        vimages = [m["url"] for m in variant.get("media") or [] if m.get("url")]
        image = (vimages or images or [""])[0]
        extra = [u for u in images if u != image][:10]
        price, list_price = variant.get("price"), variant.get("list_price")
        if list_price and price and int(list_price["amount"]) > int(price["amount"]):
            price_col, sale_col = money(list_price), money(price)
        else:
            price_col, sale_col = money(price), ""
        gtin = ""
        for barcode in variant.get("barcodes") or []:
            if (barcode.get("type") or "").upper() in ("GTIN", "ISBN", "EAN", "UPC"):
                gtin = clean(barcode.get("value"))
                break
        qty = variant.get("inventory_quantity")
        opts = option_columns(variant)
        row = {
            "id": clean(variant["id"]),
            "item_group_id": clean(product["id"]),
            "title": title,
            "description": desc,
            "link": link,
            "image_link": clean(image),
            "additional_image_link": ",".join(clean(u) for u in extra),
            "price": price_col,
            "sale_price": sale_col,
            "availability": availability(variant),
            "quantity": "" if qty is None else str(int(qty)),
            "brand": brand,
            "gtin": gtin,
            "mpn": clean(variant.get("sku")),
            "condition": "new",
            "google_product_category": gpc,
            "product_type": ptypes[0] if ptypes else "",
            **opts,
        }
        yield row


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: jsonl_to_gmc.py CATALOG.jsonl FEED.tsv")
    products = variants = 0
    with open(sys.argv[1], encoding="utf-8") as src, open(sys.argv[2], "w", encoding="utf-8", newline="\n") as out:
        out.write("\t".join(COLUMNS) + "\n")
        for line in src:
            line = line.strip()
            if not line:
                continue
            products += 1
            for row in rows(json.loads(line)):
                variants += 1
                out.write("\t".join(row[c] for c in COLUMNS) + "\n")
    print(f"jsonl_to_gmc: {products} products -> {variants} rows in {sys.argv[2]}", file=sys.stderr)


if __name__ == "__main__":
    main()
