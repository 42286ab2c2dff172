//! `catalog`: search_catalog, lookup_catalog or get_product over MCP or REST, with the bodies
//! of bench/search.lua.

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::cli::{CatalogArgs, CatalogOp, Transport};
use crate::fixed::{Check, Request, run_fixed};

/// The search queries of bench/search.lua, one a line of bench/queries.txt (each crossed with
/// the 6 filters below: 144 bodies).
pub(crate) fn queries() -> impl Iterator<Item = &'static str> {
    include_str!("../../../bench/queries.txt").lines().filter(|line| !line.is_empty())
}

pub(crate) fn search_filters() -> Vec<Option<Value>> {
    vec![
        None,
        None,
        Some(json!({ "price": { "min": 1000, "max": 5000 } })),
        Some(json!({ "categories": ["Apparel & Accessories"] })),
        Some(json!({ "categories": ["Home & Garden", "Sporting Goods"], "price": { "max": 20000 } })),
        Some(json!({ "categories": ["Footwear"], "price": { "min": 5000 } })),
    ]
}

pub(crate) fn catalog_payloads(op: CatalogOp, ids: Option<&str>) -> anyhow::Result<Vec<Value>> {
    let (products, variants) = match ids {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
            let value: Value = serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
            let list = |key: &str| -> Vec<String> {
                value[key]
                    .as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default()
            };
            (list("products"), list("variants"))
        }
        None => (Vec::new(), Vec::new()),
    };
    Ok(match op {
        CatalogOp::Search => search_filters()
            .into_iter()
            .flat_map(|filter| {
                queries().map(move |query| {
                    let mut catalog = json!({ "query": query });
                    if let Some(filter) = &filter {
                        catalog["filters"] = filter.clone();
                    }
                    catalog
                })
            })
            .collect(),
        CatalogOp::Lookup => {
            if products.is_empty() || variants.is_empty() {
                bail!("lookup needs --ids with products and variants");
            }
            let sets = (products.len().min(variants.len()) / 5).clamp(1, 200);
            (0..sets)
                .map(|set| {
                    let mut ids = Vec::new();
                    for k in 0..5 {
                        ids.push(products[(set * 5 + k) % products.len()].clone());
                        ids.push(variants[(set * 5 + k + 3) % variants.len()].clone());
                    }
                    json!({ "ids": ids })
                })
                .collect()
        }
        CatalogOp::GetProduct => {
            if products.is_empty() {
                bail!("get_product needs --ids with products");
            }
            products.iter().map(|id| json!({ "id": id })).collect()
        }
    })
}

pub(crate) async fn catalog(args: CatalogArgs) -> anyhow::Result<()> {
    let (tool, path, op): (&str, &str, &'static str) = match args.op {
        CatalogOp::Search => ("search_catalog", "/catalog/search", "search"),
        CatalogOp::Lookup => ("lookup_catalog", "/catalog/lookup", "lookup"),
        CatalogOp::GetProduct => ("get_product", "/catalog/product", "get_product"),
    };
    let payloads = catalog_payloads(args.op, args.ids.as_deref())?;
    let base = args.common.url.trim_end_matches('/');
    let (requests, headers, check) = match args.transport {
        Transport::Mcp => {
            let url = format!("{base}{}", args.common.mcp_path);
            let requests = payloads
                .into_iter()
                .enumerate()
                .map(|(index, catalog)| Request {
                    method: reqwest::Method::POST,
                    url: url.clone(),
                    body: json!({ "jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": { "name": tool,
                        "arguments": { "meta": { "ucp-agent": { "profile": args.profile } }, "catalog": catalog } } })
                    .to_string(),
                    own_headers: Vec::new(),
                })
                .collect();
            (requests, vec![("content-type", "application/json".to_owned())], Check::McpTool)
        }
        Transport::Rest => {
            let url = format!("{base}{}{path}", args.common.rest_path);
            let requests = payloads
                .into_iter()
                .map(|catalog| Request {
                    method: reqwest::Method::POST,
                    url: url.clone(),
                    body: catalog.to_string(),
                    own_headers: Vec::new(),
                })
                .collect();
            let headers = vec![
                ("content-type", "application/json".to_owned()),
                ("ucp-agent", format!("profile=\"{}\"", args.profile)),
            ];
            (requests, headers, Check::Rest)
        }
    };
    let mut requests: Vec<Request> = requests;
    let mut headers = headers;
    if args.common.sign {
        // Signed once per body before the run: the server's verification is what is measured,
        // not the load generator's signing (no `expires`, so the signatures stay valid).
        let signer = crate::sign::Signer::new();
        for request in &mut requests {
            request.own_headers = signer.headers("POST", &request.url, Some(request.body.as_bytes()), None);
        }
        if args.transport == Transport::Mcp {
            headers.push(("ucp-agent", format!("profile=\"{}\"", args.profile)));
        }
    }
    run_fixed(&args.common, op, args.transport, requests, headers, check).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_has_144_bodies() {
        assert_eq!(catalog_payloads(CatalogOp::Search, None).unwrap().len(), 144);
    }
}
