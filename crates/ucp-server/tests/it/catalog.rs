//! The catalog capability: checklist 89-107.

use serde_json::{Value, json};

use crate::helpers::{spawn_app, spawn_app_with};
use crate::schema;

fn ids(body: &Value) -> Vec<String> {
    body["products"].as_array().unwrap().iter().map(|product| product["id"].as_str().unwrap().to_owned()).collect()
}

// Checklist 89, 104: no match is an empty success without messages.
#[tokio::test]
async fn search_without_match_is_an_empty_success() {
    let app = spawn_app().await;
    let body = app.tool("search_catalog", json!({ "catalog": { "query": "zzzzqqq" } })).await;
    assert_eq!(body["products"], json!([]));
    assert!(body.get("messages").is_none());
    assert_eq!(body["pagination"]["has_next_page"], false);
    schema::search_response(&body);
}

// Relevance: BM25 over title and body, not substring matching.
#[tokio::test]
async fn search_ranks_by_relevance() {
    let app = spawn_app().await;
    let body = app.tool("search_catalog", json!({ "catalog": { "query": "running shoes" } })).await;
    assert_eq!(ids(&body)[0], "shoe");
    schema::search_response(&body);
    let body = app.tool("search_catalog", json!({ "catalog": { "query": "wool" } })).await;
    assert_eq!(ids(&body), vec!["sweater"]);
    // Stemming: "sweaters" finds "Sweater".
    let body = app.tool("search_catalog", json!({ "catalog": { "query": "sweaters" } })).await;
    assert_eq!(ids(&body), vec!["sweater"]);
    // All words first; when nothing has all of them, any of them.
    let body = app.tool("search_catalog", json!({ "catalog": { "query": "wool mug" } })).await;
    let found = ids(&body);
    assert!(found.contains(&"sweater".to_owned()) && found.contains(&"mug".to_owned()), "{found:?}");
}

// Checklist 90: an empty search is rejected.
#[tokio::test]
async fn empty_search_is_invalid_params() {
    let app = spawn_app().await;
    for catalog in
        [json!({}), json!({ "query": "" }), json!({ "query": "   " }), json!({ "pagination": { "limit": 5 } })]
    {
        let (status, error) = app.tool_error("search_catalog", json!({ "catalog": catalog })).await;
        assert_eq!(status, 200);
        assert_eq!(error["code"], -32602, "{catalog}");
    }
    let (_, error) = app
        .tool_error("search_catalog", json!({ "catalog": { "query": "x", "pagination": { "limit": "ten" } } }))
        .await;
    assert!(error["message"].as_str().unwrap().contains("catalog.pagination.limit"), "{error}");
}

// Checklist 89, 90, 104: a query with no searchable words is still a query: an empty
// success (HTTP 200, no error), or a browse when filters are present.
#[tokio::test]
async fn a_query_without_searchable_words_is_an_empty_success() {
    let app = spawn_app().await;
    for query in ["*", "  !!! ", "%%"] {
        let body = app.tool("search_catalog", json!({ "catalog": { "query": query } })).await;
        assert_eq!(body["products"], json!([]), "{query}: {body}");
        assert_eq!(body["ucp"]["status"], "success", "{query}: {body}");
        assert!(body.get("messages").is_none(), "{query}: {body}");
        assert_eq!(body["pagination"]["has_next_page"], false);
        schema::search_response(&body);
    }
    // With filters, the words that are not there leave a browse by the filters.
    let body = app
        .tool("search_catalog", json!({ "catalog": { "query": "*", "filters": { "categories": ["Home & Garden"] } } }))
        .await;
    assert_eq!(ids(&body), vec!["mug"], "{body}");
}

// Checklist 91: categories OR within, AND with price; price in minor units.
#[tokio::test]
async fn filters_combine_with_and_and_categories_with_or() {
    let app = spawn_app().await;
    let body = app
        .tool(
            "search_catalog",
            json!({ "catalog": { "filters": { "categories": ["Footwear > Running", "Home & Garden"] } } }),
        )
        .await;
    let mut found = ids(&body);
    found.sort();
    assert_eq!(found, vec!["mug", "shoe"]);
    let body = app
        .tool("search_catalog", json!({ "catalog": { "filters": { "categories": ["apparel & accessories"], "price": { "min": 8000, "max": 11500 } } } }))
        .await;
    let mut found = ids(&body);
    found.sort();
    assert_eq!(found, vec!["shoe", "sweater"], "shoe has an 11000 variant, sweater is 8900");
    let body = app
        .tool("search_catalog", json!({ "catalog": { "query": "socks", "filters": { "price": { "max": 520 } } } }))
        .await;
    let mut found = ids(&body);
    found.sort();
    assert_eq!(found, vec!["sock-00", "sock-01", "sock-02"]);
    schema::search_response(&body);
}

// Checklist 92, 93: cursor pagination, default 10, clamped limit, tamper-evident cursors.
#[tokio::test]
async fn pagination_walks_all_results_with_opaque_cursors() {
    let app = spawn_app().await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = Vec::new();
    loop {
        let mut catalog = json!({ "query": "cotton socks" });
        if let Some(cursor) = &cursor {
            catalog["pagination"] = json!({ "cursor": cursor });
        }
        let body = app.tool("search_catalog", json!({ "catalog": catalog })).await;
        schema::search_response(&body);
        pages.push(body["products"].as_array().unwrap().len());
        seen.extend(ids(&body));
        if body["pagination"]["has_next_page"] == true {
            cursor = Some(body["pagination"]["cursor"].as_str().unwrap().to_owned());
        } else {
            assert!(body["pagination"].get("cursor").is_none());
            break;
        }
    }
    assert_eq!(pages, vec![10, 10, 5]);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 25);

    let body =
        app.tool("search_catalog", json!({ "catalog": { "query": "socks", "pagination": { "limit": 1000 } } })).await;
    assert_eq!(body["products"].as_array().unwrap().len(), 25, "clamped to the maximum (50) silently");
    assert!(body.get("messages").is_none());

    let first =
        app.tool("search_catalog", json!({ "catalog": { "query": "socks", "pagination": { "limit": 3 } } })).await;
    let cursor = first["pagination"]["cursor"].as_str().unwrap();
    let (_, error) = app
        .tool_error("search_catalog", json!({ "catalog": { "query": "mug", "pagination": { "cursor": cursor } } }))
        .await;
    assert_eq!(error["code"], -32602, "a cursor is bound to its search");
    let mut tampered = cursor.to_owned();
    tampered.replace_range(5..6, if &cursor[5..6] == "A" { "B" } else { "A" });
    let (_, error) = app
        .tool_error("search_catalog", json!({ "catalog": { "query": "socks", "pagination": { "cursor": tampered } } }))
        .await;
    assert_eq!(error["code"], -32602);
}

// Checklist 94, 95, 96, 97: lookup by every kind of id, deduplicated, correlated.
#[tokio::test]
async fn lookup_resolves_dedupes_and_correlates_inputs() {
    let app = spawn_app().await;
    let body = app
        .tool("lookup_catalog", json!({ "catalog": { "ids": ["shoe", "shoe", "shoe-green-10", "SHOE-B-11", "trail-runner", "0001234567895", "mug", "nope"] } }))
        .await;
    schema::lookup_response(&body);
    assert_eq!(ids(&body), vec!["shoe", "mug"]);
    let shoe = &body["products"][0];
    let variants: Vec<(&str, &Value)> = shoe["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|variant| (variant["id"].as_str().unwrap(), &variant["inputs"]))
        .collect();
    let inputs_of = |id: &str| variants.iter().find(|(variant, _)| *variant == id).map(|(_, inputs)| (*inputs).clone());
    // The featured variant of "shoe" is the first available one (blue-10 is out of stock).
    assert_eq!(
        inputs_of("shoe-blue-11").unwrap(),
        json!([{ "id": "shoe", "match": "featured" }, { "id": "SHOE-B-11", "match": "exact" }, { "id": "trail-runner", "match": "featured" }])
    );
    assert_eq!(inputs_of("shoe-green-10").unwrap(), json!([{ "id": "shoe-green-10", "match": "exact" }]));
    assert_eq!(inputs_of("shoe-blue-10").unwrap(), json!([{ "id": "0001234567895", "match": "exact" }]));
    assert_eq!(body["messages"], json!([{ "type": "info", "code": "not_found", "content": "nope" }]));

    let body = app.tool("lookup_catalog", json!({ "catalog": { "ids": ["nope", "nada"] } })).await;
    assert_eq!(body["products"], json!([]));
    schema::lookup_response(&body);
}

// Checklist 37, 98: at least 10 ids accepted; over the limit is -32602 request_too_large.
#[tokio::test]
async fn lookup_batch_limit() {
    let app = spawn_app().await;
    let ten: Vec<String> = (0..10).map(|n| format!("sock-{n:02}")).collect();
    let body = app.tool("lookup_catalog", json!({ "catalog": { "ids": ten } })).await;
    assert_eq!(body["products"].as_array().unwrap().len(), 10);
    let many: Vec<String> = (0..51).map(|n| format!("id-{n}")).collect();
    let (status, error) = app.tool_error("lookup_catalog", json!({ "catalog": { "ids": many } })).await;
    assert_eq!(status, 200);
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["code"], "request_too_large");
    let (_, error) = app.tool_error("lookup_catalog", json!({ "catalog": { "ids": [] } })).await;
    assert_eq!(error["code"], -32602);
}

// Checklist 99: filters apply after resolution.
#[tokio::test]
async fn lookup_filters_apply_after_resolution() {
    let app = spawn_app().await;
    let body = app
        .tool(
            "lookup_catalog",
            json!({ "catalog": { "ids": ["shoe", "mug"], "filters": { "price": { "max": 11500 } } } }),
        )
        .await;
    assert_eq!(ids(&body), vec!["shoe", "mug"]);
    assert_eq!(body["products"][0]["variants"][0]["id"], "shoe-green-10", "featured among the variants that pass");
    let body = app
        .tool("lookup_catalog", json!({ "catalog": { "ids": ["shoe"], "filters": { "price": { "max": 100 } } } }))
        .await;
    assert_eq!(body["products"], json!([]));
}

// Checklist 100, 101, 102: get_product narrowing, relaxation and signals.
#[tokio::test]
async fn get_product_narrows_relaxes_and_signals_availability() {
    let app = spawn_app().await;
    let body = app
        .tool(
            "get_product",
            json!({ "catalog": { "id": "shoe-blue-10", "selected": [{ "name": "Color", "label": "Green" }] } }),
        )
        .await;
    schema::get_product_response(&body);
    let product = &body["product"];
    assert_eq!(product["variants"][0]["id"], "shoe-blue-10");
    assert_eq!(product["selected"], json!([{ "name": "Color", "label": "Blue" }, { "name": "Size", "label": "10" }]));
    let color = product["options"].as_array().unwrap().iter().find(|option| option["name"] == "Color").unwrap();
    let blue = color["values"].as_array().unwrap().iter().find(|value| value["label"] == "Blue").unwrap();
    assert_eq!((blue["available"].clone(), blue["exists"].clone()), (json!(false), json!(true)));

    let body = app
        .tool("get_product", json!({ "catalog": { "id": "shoe", "selected": [{ "name": "Color", "label": "Green" }, { "name": "Size", "label": "11" }], "preferences": ["Color", "Size"] } }))
        .await;
    schema::get_product_response(&body);
    assert_eq!(body["product"]["selected"], json!([{ "name": "Color", "label": "Green" }]));
    assert_eq!(body["product"]["variants"][0]["id"], "shoe-green-10");
    let size = body["product"]["options"].as_array().unwrap().iter().find(|option| option["name"] == "Size").unwrap();
    let eleven = size["values"].as_array().unwrap().iter().find(|value| value["label"] == "11").unwrap();
    assert_eq!((eleven["available"].clone(), eleven["exists"].clone()), (json!(false), json!(false)));
}

// Checklist 47, 103: unknown id is a business outcome.
#[tokio::test]
async fn get_product_unknown_id_is_a_not_found_error_response() {
    let app = spawn_app().await;
    let body = app.tool("get_product", json!({ "catalog": { "id": "nope" } })).await;
    assert_eq!(body["ucp"]["status"], "error");
    assert_eq!(body["ucp"]["version"], "2026-04-08");
    assert_eq!(body["messages"][0]["code"], "not_found");
    assert_eq!(body["messages"][0]["severity"], "unrecoverable");
    assert!(body.get("product").is_none());
    schema::error_response(&body);
}

// Context currency: converted with a configured rate; otherwise an info message.
#[tokio::test]
async fn context_currency_converts_prices_and_filters() {
    let app = spawn_app_with(crate::helpers::fixture_products(), |settings, _| {
        settings.catalog.exchange_rates.insert("EUR".parse().unwrap(), "0.5".parse().unwrap());
    })
    .await;
    let body = app
        .tool("search_catalog", json!({ "catalog": { "query": "mug", "context": { "currency": "EUR" }, "filters": { "price": { "max": 750 } } } }))
        .await;
    assert_eq!(body["products"][0]["variants"][0]["price"], json!({ "amount": 750, "currency": "EUR" }));
    assert_eq!(body["products"][0]["price_range"]["min"]["currency"], "EUR");
    schema::search_response(&body);
    let body =
        app.tool("search_catalog", json!({ "catalog": { "query": "mug", "context": { "currency": "GBP" } } })).await;
    assert_eq!(body["products"][0]["variants"][0]["price"]["currency"], "USD");
    assert_eq!(body["messages"][0]["type"], "info");
    // A price filter in a currency we do not offer cannot be applied: it is left out (the mug,
    // far above 1.00 in any currency, is found) and the message says so; nothing is filtered
    // as if the bounds were dollars (price_filter.json, checklist 91).
    let cheap = json!({ "price": { "max": 100 } });
    for (tool, catalog) in [
        ("search_catalog", json!({ "query": "mug", "context": { "currency": "GBP" }, "filters": cheap })),
        ("search_catalog", json!({ "context": { "currency": "GBP" }, "filters": cheap })),
        ("lookup_catalog", json!({ "ids": ["mug"], "context": { "currency": "GBP" }, "filters": cheap })),
    ] {
        let body = app.tool(tool, json!({ "catalog": catalog })).await;
        assert!(ids(&body).contains(&"mug".to_owned()), "{tool}: {body}");
        let message =
            body["messages"].as_array().unwrap().iter().find(|m| m["code"] == "currency_unavailable").unwrap();
        assert!(message["content"].as_str().unwrap().contains("price filter"), "{message}");
    }
    let body = app
        .tool("get_product", json!({ "catalog": { "id": "mug", "context": { "currency": "GBP" }, "filters": cheap } }))
        .await;
    assert_eq!(body["product"]["id"], "mug", "{body}");
}

// An import by another process (the CLI) reaches a running server's search and lookups
// within its refresh interval (a second): reads do not ask the database whether the catalog
// moved, the refresher does.
#[tokio::test]
async fn catalog_written_by_another_process_is_searchable_within_a_second() {
    let app = spawn_app().await;
    let before = app.tool("search_catalog", json!({ "catalog": { "query": "zebra" } })).await;
    assert_eq!(before["products"], json!([]));
    let store = ucp_store::SqliteStore::open(&app.data_dir.path().join(ucp_server::startup::DATABASE_FILE), 1).unwrap();
    let mut lamp: ucp_domain::catalog::Product = serde_json::from_value(json!({
        "id": "lamp", "title": "Zebra Desk Lamp", "description": { "plain": "A striped lamp." },
        "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
        "variants": [{ "id": "lamp-1", "title": "Lamp", "description": { "plain": "Lamp" }, "price": { "amount": 4200, "currency": "USD" } }]
    }))
    .unwrap();
    lamp.normalize().unwrap();
    use ucp_domain::store::CatalogStore;
    store.upsert_products(vec![lamp]).await.unwrap();
    let started = std::time::Instant::now();
    let after = loop {
        let after = app.tool("search_catalog", json!({ "catalog": { "query": "zebra" } })).await;
        if after["products"] != json!([]) || started.elapsed() > std::time::Duration::from_secs(5) {
            break after;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(ids(&after), vec!["lamp"]);
    let body = app.tool("get_product", json!({ "catalog": { "id": "lamp" } })).await;
    assert_eq!(body["product"]["title"], "Zebra Desk Lamp");
}

// Checklist 105: within a product the first variant and the first media are the featured
// ones. The merchant's first image stays first on every answer; search, lookup and
// get_product lead with the featured variant, the first available one (the lamp's first is
// out of stock).
#[tokio::test]
async fn the_first_variant_and_the_first_media_are_the_featured_ones() {
    let image = |name: &str| json!({ "type": "image", "url": format!("https://shop.example/i/{name}.jpg") });
    let variant = |color: &str, stock: i64| json!({ "id": format!("lamp-{color}"), "title": color, "description": { "plain": color }, "price": { "amount": 4200, "currency": "USD" }, "options": [{ "name": "Color", "label": color }], "inventory_quantity": stock, "media": [image(&format!("{color}-1")), image(&format!("{color}-2"))] });
    let mut lamp: ucp_domain::catalog::Product = serde_json::from_value(json!({
        "id": "lamp", "title": "Zebra Desk Lamp", "description": { "plain": "A striped desk lamp." },
        "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
        "media": [image("front"), image("side")],
        "variants": [variant("black", 0), variant("white", 4)]
    }))
    .unwrap();
    lamp.normalize().unwrap();
    let mut products = crate::helpers::fixture_products();
    products.push(lamp);
    let app = spawn_app_with(products, |_, _| {}).await;
    let search = app.tool("search_catalog", json!({ "catalog": { "query": "zebra lamp" } })).await;
    let lookup = app.tool("lookup_catalog", json!({ "catalog": { "ids": ["lamp"] } })).await;
    let detail = app.tool("get_product", json!({ "catalog": { "id": "lamp" } })).await;
    for product in [&search["products"][0], &lookup["products"][0], &detail["product"]] {
        assert_eq!(product["media"], json!([image("front"), image("side")]), "{product}");
        for shown in product["variants"].as_array().unwrap() {
            let color = shown["title"].as_str().unwrap();
            assert_eq!(shown["media"][0], image(&format!("{color}-1")), "{shown}");
        }
    }
    assert_eq!(search["products"][0]["variants"][0]["id"], "lamp-white", "{search}");
    assert_eq!(search["products"][0]["variants"][1]["id"], "lamp-black", "{search}: then the rest");
    assert_eq!(lookup["products"][0]["variants"][0]["id"], "lamp-white", "{lookup}");
    assert_eq!(lookup["products"][0]["variants"][0]["inputs"][0]["match"], "featured", "{lookup}");
    assert_eq!(detail["product"]["variants"][0]["id"], "lamp-white", "{detail}");
}

// Checklist 93: a limit past the maximum page size is clamped to it silently: with
// `max_page_size = 10`, `limit: 1000` over 25 matches answers 10 and a cursor, no message
// (the fixture's 25 socks sit below the default maximum of 50, so it cannot show the clamp).
#[tokio::test]
async fn a_limit_past_the_maximum_page_is_clamped_silently() {
    let app =
        spawn_app_with(crate::helpers::fixture_products(), |settings, _| settings.catalog.max_page_size = 10).await;
    let body =
        app.tool("search_catalog", json!({ "catalog": { "query": "socks", "pagination": { "limit": 1000 } } })).await;
    assert_eq!(body["products"].as_array().map(Vec::len), Some(10), "{body}");
    assert!(body["pagination"]["cursor"].is_string(), "{body}");
    assert!(body.get("messages").is_none(), "{body}");
}

// Accents: a query without them (or with them decomposed, as some keyboards send) finds a
// product whose title has them, and the other way round.
#[tokio::test]
async fn accents_do_not_keep_a_query_from_its_products() {
    let mut mug: ucp_domain::catalog::Product = serde_json::from_value(json!({
        "id": "mug-creme", "title": "Café Crème Mug", "description": { "plain": "For crème brûlée lovers." },
        "price_range": { "min": { "amount": 1500, "currency": "USD" }, "max": { "amount": 1500, "currency": "USD" } },
        "variants": [{ "id": "mug-creme-1", "title": "Mug", "description": { "plain": "Mug" }, "price": { "amount": 1500, "currency": "USD" }, "inventory_quantity": 5 }]
    }))
    .unwrap();
    mug.normalize().unwrap();
    let mut products = crate::helpers::fixture_products();
    products.push(mug);
    let app = spawn_app_with(products, |_, _| {}).await;
    for query in ["cafe creme", "CAFÉ", "cre\u{300}me brulee", "Cafe\u{301}"] {
        let found = app.tool("search_catalog", json!({ "catalog": { "query": query } })).await;
        assert_eq!(ids(&found), vec!["mug-creme"], "{query}: {found}");
    }
}
