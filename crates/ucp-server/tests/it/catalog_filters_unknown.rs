//! Filters this store does not support: `catalog.filters` is open to merchant filters
//! (search_filters.json), and we apply only `categories` and `price`. Another filter is named in
//! an info message when the request has something else to go by, and refused in words when it
//! has nothing else (catalog.md §2, "Input presence").

use serde_json::{Value, json};

use crate::helpers::{TestApp, messages_with, spawn_app};
use crate::rest::{rest, rest_with};
use crate::schema;

const BRAND_ONLY: &str =
    "catalog.filters.brand is not a filter this store supports (categories, price); put it in catalog.query";
const BRAND_IGNORED: &str = "catalog.filters.brand is not supported and was not applied.";

fn ids(body: &Value) -> Vec<String> {
    body["products"].as_array().unwrap().iter().map(|product| product["id"].as_str().unwrap().to_owned()).collect()
}

/// The `filter_unsupported` messages of a body: info, with no path (a request member has no
/// place in the response); their contents.
fn unsupported(body: &Value) -> Vec<String> {
    messages_with(body, "filter_unsupported")
        .into_iter()
        .map(|message| {
            assert_eq!(message["type"], "info", "{message}");
            assert!(message.get("path").is_none(), "{message}");
            message["content"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The same search over MCP and REST: both bodies, after checking they agree and validate.
async fn search_both(app: &TestApp, catalog: Value) -> Value {
    let over_mcp = app.tool("search_catalog", json!({ "catalog": catalog })).await;
    let (status, over_rest) = rest(app, "POST", "/catalog/search", Some(catalog)).await;
    assert_eq!(status, 200, "{over_rest}");
    assert_eq!(over_mcp["products"], over_rest["products"]);
    assert_eq!(over_mcp.get("messages"), over_rest.get("messages"));
    schema::search_response(&over_mcp);
    schema::search_response(&over_rest);
    over_mcp
}

// A search with only filters we do not apply stays invalid (checklist 90), but says why:
// not that no filter was sent.
#[tokio::test]
async fn a_search_by_unsupported_filters_alone_is_refused_naming_them() {
    let app = spawn_app().await;
    for catalog in [
        json!({ "filters": { "brand": "Acme" } }),
        json!({ "query": "", "filters": { "brand": "Acme" } }),
        json!({ "filters": { "brand": { "any": ["Acme", "Globex"] }, "categories": [] } }),
        json!({ "filters": { "brand": "Acme", "price": null }, "pagination": { "limit": 5 } }),
    ] {
        let (status, error) = app.tool_error("search_catalog", json!({ "catalog": catalog })).await;
        assert_eq!(status, 200, "{catalog}");
        assert_eq!(error["code"], -32602, "{catalog}: {error}");
        assert_eq!(error["message"], BRAND_ONLY, "{catalog}: {error}");
        let (status, error) = rest(&app, "POST", "/catalog/search", Some(catalog.clone())).await;
        assert_eq!(status, 400, "{catalog}: {error}");
        assert_eq!(error, json!({ "code": "invalid_input", "content": BRAND_ONLY }), "{catalog}");
    }
    let (_, error) = app
        .tool_error("search_catalog", json!({ "catalog": { "filters": { "brand": "Acme", "color": "red" } } }))
        .await;
    assert_eq!(
        error["message"],
        "catalog.filters.brand, catalog.filters.color are not filters this store supports (categories, price); put them in catalog.query"
    );
    // A name that is not a plain word is quoted.
    let (_, error) = app.tool_error("search_catalog", json!({ "catalog": { "filters": { "ships in": 2 } } })).await;
    assert!(
        error["message"].as_str().unwrap().starts_with(r#"catalog.filters["ships in"] is not a filter"#),
        "{error}"
    );
    // With no filter at all, the message is the one it was.
    let (_, error) = app.tool_error("search_catalog", json!({ "catalog": { "filters": {} } })).await;
    assert_eq!(error["message"], "a search needs catalog.query or catalog.filters");
}

// Beside a query (or a filter we apply) the search runs, unfiltered by what we do not support,
// and an info message says so: the agent must not believe the results are filtered by brand.
#[tokio::test]
async fn a_search_with_an_unsupported_filter_says_it_was_not_applied() {
    let app = spawn_app().await;
    let body = search_both(&app, json!({ "query": "mug", "filters": { "brand": "Acme" } })).await;
    assert_eq!(ids(&body), vec!["mug"], "{body}");
    assert_eq!(unsupported(&body), vec![BRAND_IGNORED]);
    assert_eq!(body["messages"].as_array().unwrap().len(), 1, "{body}");

    let body =
        search_both(&app, json!({ "filters": { "categories": ["Home & Garden"], "brand": "Acme", "color": "red" } }))
            .await;
    assert_eq!(ids(&body), vec!["mug"], "{body}");
    assert_eq!(
        unsupported(&body),
        vec![BRAND_IGNORED, "catalog.filters.color is not supported and was not applied."],
        "in the order sent"
    );

    // A query without searchable words is still an empty success, now with the message.
    let body = search_both(&app, json!({ "query": "*", "filters": { "brand": "Acme" } })).await;
    assert_eq!(body["products"], json!([]));
    assert_eq!(unsupported(&body), vec![BRAND_IGNORED]);
}

// lookup_catalog and get_product apply filters too (catalog.md §3): the same message there.
#[tokio::test]
async fn lookup_and_get_product_say_an_unsupported_filter_was_not_applied() {
    let app = spawn_app().await;
    let lookup = json!({ "ids": ["mug", "nope"], "filters": { "brand": "Acme" } });
    let over_mcp = app.tool("lookup_catalog", json!({ "catalog": lookup })).await;
    let (status, over_rest) = rest(&app, "POST", "/catalog/lookup", Some(lookup)).await;
    assert_eq!(status, 200, "{over_rest}");
    for body in [&over_mcp, &over_rest] {
        assert_eq!(ids(body), vec!["mug"], "{body}");
        assert_eq!(unsupported(body), vec![BRAND_IGNORED]);
        assert_eq!(messages_with(body, "not_found").len(), 1, "{body}");
        schema::lookup_response(body);
    }

    let product = json!({ "id": "shoe", "filters": { "brand": "Acme", "price": { "max": 11500 } } });
    let over_mcp = app.tool("get_product", json!({ "catalog": product })).await;
    let (status, over_rest) = rest(&app, "POST", "/catalog/product", Some(product)).await;
    assert_eq!(status, 200, "{over_rest}");
    for body in [&over_mcp, &over_rest] {
        assert_eq!(body["product"]["id"], "shoe", "{body}");
        let variants: Vec<&str> =
            body["product"]["variants"].as_array().unwrap().iter().map(|v| v["id"].as_str().unwrap()).collect();
        assert_eq!(variants, vec!["shoe-green-10"], "the price filter still applies: {body}");
        assert_eq!(unsupported(body), vec![BRAND_IGNORED]);
        schema::get_product_response(body);
    }
    // A product the filters we apply leave out is not found, as before; nothing else to say.
    let body = app
        .tool(
            "get_product",
            json!({ "catalog": { "id": "mug", "filters": { "brand": "Acme", "price": { "max": 1 } } } }),
        )
        .await;
    assert_eq!(body["ucp"]["status"], "error", "{body}");
    schema::error_response(&body);
}

/// Every product id of a "cotton socks" search, 7 a page, with `filters` (unless null).
async fn walk(app: &TestApp, filters: Value) -> Vec<String> {
    let (mut seen, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let mut catalog = json!({ "query": "cotton socks", "pagination": { "limit": 7 } });
        if !filters.is_null() {
            catalog["filters"] = filters.clone();
        }
        if let Some(cursor) = &cursor {
            catalog["pagination"]["cursor"] = json!(cursor);
        }
        let body = search_both(app, catalog).await;
        assert_eq!(unsupported(&body).is_empty(), filters.is_null(), "{body}");
        seen.extend(ids(&body));
        match body["pagination"]["cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return seen,
        }
    }
}

// What we ignore does not change the results, so neither does it change the cursors: a page's
// cursor continues the same search, which pages exactly as it would without the filter.
#[tokio::test]
async fn unsupported_filters_leave_results_and_cursors_unchanged() {
    let app = spawn_app().await;
    let plain = walk(&app, Value::Null).await;
    assert_eq!(plain.len(), 25);
    assert_eq!(walk(&app, json!({ "brand": "Acme", "material": { "in": ["cotton"] } })).await, plain);
}

// Every other request is untouched: no message, and no name kept.
#[tokio::test]
async fn an_ordinary_catalog_request_has_no_filter_unsupported_message() {
    let app = spawn_app().await;
    let body = search_both(&app, json!({ "query": "mug" })).await;
    assert!(body.get("messages").is_none(), "{body}");
    let body = search_both(
        &app,
        json!({ "query": "shoes", "filters": { "categories": ["Footwear"], "price": { "min": 1 } } }),
    )
    .await;
    assert!(body.get("messages").is_none(), "{body}");
    let body = app
        .tool(
            "lookup_catalog",
            json!({ "catalog": { "ids": ["mug"], "filters": { "categories": ["Home & Garden"] } } }),
        )
        .await;
    assert!(unsupported(&body).is_empty(), "{body}");
    let body = app.tool("get_product", json!({ "catalog": { "id": "mug", "filters": {} } })).await;
    assert!(unsupported(&body).is_empty(), "{body}");
}

// The names kept are bounded whatever the body holds: the first eight distinct names in the
// order sent, each cut to 64 characters; the values are skipped unread, however large; a filter
// we apply still refuses a duplicate. (Raw bodies, so the members keep their order.)
#[tokio::test]
async fn unsupported_filter_names_are_capped_and_cut() {
    let app = spawn_app().await;
    let long = "é".repeat(300);
    let mut members: Vec<String> =
        (0..20).map(|at| format!(r#""f{at:02}":{{"deep":[[[[1,2,{{"a":"b"}}]]]]}}"#)).collect();
    members.insert(0, format!(r#""{long}":1"#));
    members.insert(2, r#""f00":"again""#.to_owned());
    members.push(format!(r#""blob":"{}""#, "y".repeat(100_000)));
    let catalog = format!(r#"{{"query":"mug","filters":{{{}}}}}"#, members.join(","));
    let (status, body) = rest_with(&app, "POST", "/catalog/search", Some(catalog), &[]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids(&body), vec!["mug"]);
    let contents = unsupported(&body);
    let cut: String = long.chars().take(64).collect();
    assert_eq!(contents.len(), 8, "{contents:?}");
    assert_eq!(contents[0], format!("catalog.filters[\"{cut}\"] is not supported and was not applied."));
    assert_eq!(contents[1], "catalog.filters.f00 is not supported and was not applied.");
    assert_eq!(contents[2], "catalog.filters.f01 is not supported and was not applied.", "f00 once");
    assert_eq!(contents[7], "catalog.filters.f06 is not supported and was not applied.");
    schema::search_response(&body);

    let duplicate = r#"{"query":"mug","filters":{"price":{"max":1},"brand":1,"price":null}}"#;
    let (status, error) = rest_with(&app, "POST", "/catalog/search", Some(duplicate.to_owned()), &[]).await;
    assert_eq!(status, 400, "{error}");
    assert!(error["content"].as_str().unwrap().contains("duplicate field `price`"), "{error}");
}
