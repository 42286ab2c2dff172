//! Disclosures (checkout.md §4, catalog.md §6): a merchant's `[[disclosures]]` reach every
//! answer that shows one of their products, as warnings with `presentation: "disclosure"` at
//! the product's or the line's path, over MCP and REST, and validate against the schemas.

use reqwest::StatusCode;
use serde_json::{Value, json};
use ucp_server::config::{DisclosureFormat, DisclosureSettings};

use crate::checkout::{ready_checkout, valid_checkout};
use crate::helpers::{TestApp, assert_messages_resolve, fixture_products, messages_with, resolve_path, spawn_app_with};
use crate::rest::rest;
use crate::schema;

const PROP65: &str = "**WARNING**: This product can expose you to lead. See www.P65Warnings.ca.gov.";

/// The fixture shop with two disclosures: prop65 on the mug by id, and a care label on
/// clothing by category (the sweater is `Apparel & Accessories > Clothing`).
async fn shop() -> TestApp {
    // A kettle whose second variant alone is in a category a disclosure names.
    let mut kettle: ucp_domain::catalog::Product = serde_json::from_value(json!({
        "id": "kettle", "title": "Kettle", "description": { "plain": "A kettle." },
        "price_range": { "min": { "amount": 0, "currency": "USD" }, "max": { "amount": 0, "currency": "USD" } },
        "variants": [
            { "id": "kettle-1", "title": "Stovetop", "description": { "plain": "Stovetop" }, "price": { "amount": 3000, "currency": "USD" } },
            { "id": "kettle-2", "title": "Electric", "description": { "plain": "Electric" }, "price": { "amount": 5000, "currency": "USD" },
              "categories": [{ "value": "Electronics > Household Appliances" }] }
        ]
    }))
    .unwrap();
    kettle.normalize().unwrap();
    let mut products = fixture_products();
    products.push(kettle);
    spawn_app_with(products, |settings, _| {
        settings.catalog.exchange_rates.insert("EUR".parse().unwrap(), "0.5".parse().unwrap());
        settings.disclosures = vec![
            DisclosureSettings {
                code: "prop65".into(),
                content: PROP65.into(),
                content_type: DisclosureFormat::Markdown,
                image_url: Some("https://shop.example/img/prop65.svg".into()),
                url: Some("https://www.p65warnings.ca.gov/".into()),
                products: vec!["mug".into()],
                categories: vec![],
            },
            DisclosureSettings {
                code: "care_label".into(),
                content: "Hand wash cold.".into(),
                content_type: DisclosureFormat::Plain,
                image_url: None,
                url: None,
                products: vec![],
                categories: vec!["apparel & accessories>CLOTHING".into()],
            },
            DisclosureSettings {
                code: "energy_label".into(),
                content: "Energy class A.".into(),
                content_type: DisclosureFormat::Plain,
                image_url: None,
                url: None,
                products: vec![],
                categories: vec!["Electronics".into()],
            },
        ];
    })
    .await
}

/// The disclosures of `body`, as (code, the id of the item or product at its path), sorted.
fn disclosed(body: &Value) -> Vec<(String, String)> {
    assert_messages_resolve(body);
    let mut found: Vec<(String, String)> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["presentation"] == "disclosure")
        .map(|message| {
            assert_eq!(message["type"], "warning", "{message}");
            let path = message["path"].as_str().unwrap();
            let at = resolve_path(body, path).unwrap();
            // A line's item, or a product.
            let id = at["item"]["id"].as_str().or(at["id"].as_str()).unwrap_or(path);
            (message["code"].as_str().unwrap().to_owned(), id.to_owned())
        })
        .collect();
    found.sort();
    found
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> =
        expected.iter().map(|(code, id)| (code.to_string(), id.to_string())).collect();
    pairs.sort();
    pairs
}

// Catalog answers: each product shown gets its disclosures once, at its own path; the
// message carries every member of message_warning.json we were given.
#[tokio::test]
async fn catalog_answers_carry_the_disclosures_of_the_products_they_show() {
    let app = shop().await;
    let found = app.tool("search_catalog", json!({ "catalog": { "query": "mug" } })).await;
    schema::search_response(&found);
    assert_eq!(disclosed(&found), pairs(&[("prop65", "mug")]), "{found}");
    let prop65 = messages_with(&found, "prop65")[0];
    assert_eq!(
        prop65,
        &json!({ "type": "warning", "code": "prop65", "content": PROP65, "content_type": "markdown",
                 "presentation": "disclosure", "image_url": "https://shop.example/img/prop65.svg",
                 "url": "https://www.p65warnings.ca.gov/", "path": prop65["path"] })
    );
    let wool = app.tool("search_catalog", json!({ "catalog": { "query": "wool" } })).await;
    assert_eq!(disclosed(&wool), pairs(&[("care_label", "sweater")]), "{wool}");
    let care = messages_with(&wool, "care_label")[0];
    assert!(care.get("content_type").is_none() && care.get("url").is_none(), "{care}");

    // Two products in one answer, each at its own index; and products another currency
    // changed (no longer the served product itself).
    for (context, currency) in [(json!({}), "USD"), (json!({ "currency": "EUR" }), "EUR")] {
        let both = app.tool("search_catalog", json!({ "catalog": { "query": "wool mug", "context": context } })).await;
        schema::search_response(&both);
        assert_eq!(both["products"][1]["price_range"]["min"]["currency"], currency);
        assert_eq!(both["products"].as_array().unwrap().len(), 2, "{both}");
        assert_eq!(disclosed(&both), pairs(&[("prop65", "mug"), ("care_label", "sweater")]), "{both}");
    }

    // A product is disclosed by any of its variants' categories, whichever variants an answer
    // shows and in whatever currency.
    for context in [json!({}), json!({ "currency": "EUR" })] {
        let kettle =
            app.tool("lookup_catalog", json!({ "catalog": { "ids": ["kettle-1"], "context": context } })).await;
        assert_eq!(kettle["products"][0]["variants"].as_array().unwrap().len(), 1, "{kettle}");
        assert_eq!(disclosed(&kettle), pairs(&[("energy_label", "kettle")]), "{kettle}");
        let found = app.tool("search_catalog", json!({ "catalog": { "query": "kettle", "context": context } })).await;
        assert_eq!(disclosed(&found), pairs(&[("energy_label", "kettle")]), "{found}");
    }

    let looked = app.tool("lookup_catalog", json!({ "catalog": { "ids": ["shoe", "mug-1", "sweater-m"] } })).await;
    schema::lookup_response(&looked);
    assert_eq!(disclosed(&looked), pairs(&[("prop65", "mug"), ("care_label", "sweater")]), "{looked}");

    for id in ["mug", "mug-1"] {
        let product = app.tool("get_product", json!({ "catalog": { "id": id } })).await;
        schema::get_product_response(&product);
        assert_eq!(messages_with(&product, "prop65")[0]["path"], "$.product", "{product}");
        assert_eq!(disclosed(&product), pairs(&[("prop65", "mug")]));
    }
    let shoe = app.tool("get_product", json!({ "catalog": { "id": "shoe" } })).await;
    assert!(disclosed(&shoe).is_empty(), "{shoe}");
}

// Carts and checkouts: each line of a disclosed product gets it at `$.line_items[i]`, on
// every read, and a warning changes no status.
#[tokio::test]
async fn cart_and_checkout_lines_carry_the_disclosures_of_their_products() {
    let app = shop().await;
    let cart = app
        .tool(
            "create_cart",
            json!({ "cart": { "line_items": [
                { "item": { "id": "shoe-blue-11" }, "quantity": 1 },
                { "item": { "id": "sweater-m" }, "quantity": 1 },
                { "item": { "id": "mug-1" }, "quantity": 2 }
            ] } }),
        )
        .await;
    schema::assert_valid("shopping/cart.json", &cart);
    assert_eq!(disclosed(&cart), pairs(&[("care_label", "sweater-m"), ("prop65", "mug-1")]), "{cart}");
    assert_eq!(messages_with(&cart, "prop65")[0]["path"], "$.line_items[2]");

    let checkout = app.tool("create_checkout", json!({ "checkout": ready_checkout("mug-1", 1) })).await;
    valid_checkout(&checkout);
    assert_eq!(checkout["status"], "ready_for_complete", "{checkout}");
    assert_eq!(disclosed(&checkout), pairs(&[("prop65", "mug-1")]));
    let id = checkout["id"].as_str().unwrap();
    let read = app.tool("get_checkout", json!({ "id": id })).await;
    assert_eq!(disclosed(&read), pairs(&[("prop65", "mug-1")]), "{read}");

    let plain = app.tool("create_checkout", json!({ "checkout": ready_checkout("shoe-blue-11", 1) })).await;
    assert!(disclosed(&plain).is_empty(), "{plain}");

    // The buyer's page behind continue_url (where a platform that cannot show a disclosure
    // sends the buyer) shows it under its line, with its symbol and link, and not as an alert.
    let page = app.http.get(checkout["continue_url"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    // The symbol loads from its own origin, and from no other.
    assert_eq!(
        page.headers()["content-security-policy"],
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; img-src https://shop.example"
    );
    let html = page.text().await.unwrap();
    let row = html.find("<tr class=\"disclosure\">").unwrap_or_else(|| panic!("no disclosure row: {html}"));
    let mug = html.find("Ceramic Coffee Mug").unwrap();
    let symbol = "<img src=\"https://shop.example/img/prop65.svg\" alt=\"prop65\" class=\"symbol\"> ";
    let expected = format!("<tr class=\"disclosure\"><td colspan=\"4\">{symbol}{PROP65}");
    assert!(mug < row && html[row..].starts_with(&expected), "{html}");
    assert!(html[row..].contains("href=\"https://www.p65warnings.ca.gov/\""), "{html}");
    assert!(!html.contains("role=\"alert\""), "a disclosure is no alert: {html}");
}

// The REST binding answers from the same core: the same messages.
#[tokio::test]
async fn rest_answers_carry_them_too() {
    let app = shop().await;
    let (status, product) = rest(&app, "POST", "/catalog/product", Some(json!({ "id": "mug" }))).await;
    assert_eq!(status, StatusCode::OK, "{product}");
    assert_eq!(disclosed(&product), pairs(&[("prop65", "mug")]));
    let (status, checkout) = rest(&app, "POST", "/checkout-sessions", Some(ready_checkout("sweater-m", 1))).await;
    assert_eq!(status, StatusCode::CREATED, "{checkout}");
    valid_checkout(&checkout);
    assert_eq!(disclosed(&checkout), pairs(&[("care_label", "sweater-m")]));
}
