//! Our wire types against the official UCP 2026-04-08 schemas under `UCP_SPEC_DIR`: requests
//! the official schemas accept are accepted by the generated `tools/list` input schemas, our
//! error response is an official one, and the registry names the official MCP methods.
//! Without the variable these checks say so and skip.

use std::path::{Path, PathBuf};

use jsonschema::{Retrieve, Uri, Validator};
use serde_json::{Value, json};
use ucp_protocol::error_response::ErrorResponse;
use ucp_protocol::operation::Operation;
use ucp_protocol::requests::{CartRequest, CheckoutRequest, GetProductRequest, LookupRequest, SearchRequest};
use ucp_protocol::tool_schema::{input_schema, payload_schema};

const PREFIX: &str = "https://ucp.dev/schemas/";

/// Maps `https://ucp.dev/schemas/...` to files of the released version.
struct SpecDir {
    root: PathBuf,
}

impl Retrieve for SpecDir {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let text = uri.as_str();
        let relative = text.strip_prefix(PREFIX).ok_or_else(|| format!("no local copy for {text}"))?;
        let relative = relative.strip_prefix("schemas/").unwrap_or(relative);
        let path = self.root.join(relative.split('#').next().unwrap_or(relative));
        let contents = std::fs::read_to_string(&path).map_err(|error| format!("{}: {error}", path.display()))?;
        Ok(serde_json::from_str(&contents)?)
    }
}

fn source_dir() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("UCP_SPEC_DIR") else {
        eprintln!("UCP_SPEC_DIR is not set: skipping the checks against the official UCP schemas");
        return None;
    };
    let root = PathBuf::from(dir).join("2026-04-08/source");
    assert!(root.is_dir(), "UCP_SPEC_DIR is set but {} does not exist", root.display());
    Some(root)
}

fn official(root: &Path, reference: &str) -> Validator {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("{PREFIX}{reference}")
    });
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_retriever(SpecDir { root: root.join("schemas") })
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|error| panic!("cannot build a validator for {reference}: {error}"))
}

/// Our schemas must be self-contained: no retriever, no remote `$ref`.
fn ours(schema: &Value) -> Validator {
    assert!(!schema.to_string().contains("\"$ref\":\"http"), "no remote $ref in {schema:#}");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .expect("a valid 2020-12 schema")
}

fn assert_accepts(name: &str, validator: &Validator, instance: &Value) {
    let errors: Vec<String> =
        validator.iter_errors(instance).map(|error| format!("{error} at {}", error.instance_path())).collect();
    assert!(errors.is_empty(), "{name} rejects:\n{}\n{instance:#}", errors.join("\n"));
}

fn meta() -> Value {
    json!({
        "ucp-agent": { "profile": "https://platform.example/profile.json" },
        "idempotency-key": "3f0c3c5e-8a4b-4f1e-9d2a-6b7c8d9e0f10"
    })
}

fn context() -> Value {
    json!({
        "address_country": "US", "address_region": "CA", "postal_code": "94103", "language": "en",
        "currency": "USD", "intent": "gift for a runner", "eligibility": ["com.example.member"]
    })
}

fn buyer() -> Value {
    json!({ "first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "phone_number": "+14155550100" })
}

fn address() -> Value {
    json!({
        "id": "dest_1", "first_name": "Ada", "last_name": "Lovelace", "street_address": "1 Market St",
        "address_locality": "San Francisco", "address_region": "CA", "address_country": "US", "postal_code": "94105"
    })
}

#[test]
fn catalog_requests_the_official_schemas_accept_pass_our_input_schemas() {
    let Some(root) = source_dir() else { return };
    let search = "shopping/catalog_search.json#/$defs/search_request";
    let cases = [
        (
            Operation::SearchCatalog,
            search,
            json!({
                "query": "running shoes", "context": context(),
                "filters": { "categories": ["Shoes"], "price": { "min": 1000, "max": 20000 } },
                "pagination": { "limit": 5 }
            }),
            payload_schema::<SearchRequest>(),
        ),
        (
            Operation::SearchCatalog,
            search,
            json!({ "filters": { "categories": ["Shoes"] }, "pagination": { "cursor": "abc", "limit": 10 } }),
            payload_schema::<SearchRequest>(),
        ),
        (
            Operation::LookupCatalog,
            "shopping/catalog_lookup.json#/$defs/lookup_request",
            json!({ "ids": ["prod_1", "var_2", "SKU-3"], "context": context(), "filters": { "price": { "max": 5000 } } }),
            payload_schema::<LookupRequest>(),
        ),
        (
            Operation::GetProduct,
            "shopping/catalog_lookup.json#/$defs/get_product_request",
            json!({
                "id": "prod_1", "selected": [{ "name": "Color", "label": "Blue" }],
                "preferences": ["Color", "Size"], "context": context()
            }),
            payload_schema::<GetProductRequest>(),
        ),
    ];
    for (operation, reference, request, payload) in cases {
        assert_accepts(reference, &official(&root, reference), &request);
        assert_accepts(operation.name(), &ours(&payload), &request);
        let arguments = json!({ "meta": meta(), "catalog": request });
        assert_accepts(operation.name(), &ours(&input_schema(operation)), &arguments);
    }
}

#[test]
fn cart_and_checkout_requests_built_from_official_parts_pass_our_input_schemas() {
    let Some(root) = source_dir() else { return };
    for (reference, part) in [
        ("shopping/types/buyer.json", buyer()),
        ("shopping/types/context.json", context()),
        ("shopping/types/postal_address.json", address()),
        ("shopping/types/selected_option.json", json!({ "name": "Size", "label": "10" })),
    ] {
        assert_accepts(reference, &official(&root, reference), &part);
    }
    let lines = json!([
        { "item": { "id": "var_1" }, "quantity": 2 },
        { "id": "li_2", "item": { "id": "SKU-3" }, "quantity": 1 }
    ]);
    let cart =
        json!({ "line_items": lines, "buyer": buyer(), "context": context(), "discounts": { "codes": ["WELCOME10"] } });
    let checkout = json!({
        "line_items": lines,
        "buyer": buyer(),
        "context": context(),
        "fulfillment": { "methods": [{
            "type": "shipping", "destinations": [address()], "selected_destination_id": "dest_1",
            "groups": [{ "id": "g1", "selected_option_id": "standard" }]
        }] },
        "discounts": { "codes": [] }
    });
    let complete = json!({ "payment": { "instruments": [{
        "id": "pi_1", "handler_id": "com.example.pay", "type": "card",
        "credential": { "type": "token", "token": "tok_1" }
    }] } });
    assert_accepts("cart", &ours(&payload_schema::<CartRequest>()), &cart);
    for request in [&checkout, &complete] {
        assert_accepts("checkout", &ours(&payload_schema::<CheckoutRequest>()), request);
    }
    for (operation, member, request) in [
        (Operation::CreateCart, "cart", &cart),
        (Operation::UpdateCart, "cart", &cart),
        (Operation::CreateCheckout, "checkout", &checkout),
        (Operation::UpdateCheckout, "checkout", &checkout),
        (Operation::CompleteCheckout, "checkout", &complete),
    ] {
        let mut arguments = json!({ "meta": meta(), member: request });
        if operation.takes_id() {
            arguments["id"] = "ses_1".into();
        }
        assert_accepts(operation.name(), &ours(&input_schema(operation)), &arguments);
    }
    // The same bodies deserialize and validate on the server side.
    let cart: CartRequest = serde_json::from_value(cart).unwrap();
    cart.validate("cart", None).unwrap();
    let checkout: CheckoutRequest = serde_json::from_value(checkout).unwrap();
    checkout.validate("checkout", None).unwrap();
}

#[test]
fn input_schemas_refuse_what_the_server_refuses() {
    let lookup = ours(&input_schema(Operation::LookupCatalog));
    assert!(!lookup.is_valid(&json!({ "meta": meta(), "catalog": { "ids": [] } })), "ids needs one entry");
    assert!(!lookup.is_valid(&json!({ "catalog": { "ids": ["a"] } })), "meta is required");
    let search = ours(&input_schema(Operation::SearchCatalog));
    assert!(!search.is_valid(&json!({ "meta": meta(), "catalog": { "pagination": { "limit": 5 } } })));
    let cancel = ours(&input_schema(Operation::CancelCart));
    let without_key = json!({ "meta": { "ucp-agent": { "profile": "https://p.example" } }, "id": "c1" });
    assert!(!cancel.is_valid(&without_key), "cancel_cart needs an idempotency key");
    let create = ours(&input_schema(Operation::CreateCart));
    let zero = json!({ "meta": meta(), "cart": { "line_items": [{ "item": { "id": "v" }, "quantity": 0 }] } });
    assert!(!create.is_valid(&zero), "quantity is at least 1");
}

#[test]
fn error_responses_are_official_error_responses() {
    let Some(root) = source_dir() else { return };
    let validator = official(&root, "shopping/types/error_response.json");
    let body = ErrorResponse::unrecoverable(
        "2026-04-08",
        "not_found",
        "Cart c1 was not found",
        Some("https://shop.example/".into()),
    );
    assert_accepts("error_response.json", &validator, &serde_json::to_value(&body).unwrap());
}

#[test]
fn the_registry_names_the_official_mcp_methods_with_their_params() {
    let Some(root) = source_dir() else { return };
    let path = root.join("services/shopping/mcp.openrpc.json");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let official_meta = ours(&document["components"]["schemas"]["meta"]);
    assert_accepts("official meta", &official_meta, &meta());
    let methods = document["methods"].as_array().unwrap();
    assert_eq!(methods.len(), Operation::ALL.len());
    for method in methods {
        let name = method["name"].as_str().unwrap();
        let operation = Operation::from_name(name).unwrap_or_else(|| panic!("no operation for {name}"));
        let params: Vec<&str> =
            method["params"].as_array().unwrap().iter().filter_map(|param| param["name"].as_str()).collect();
        assert_eq!(operation.takes_id(), params.contains(&"id"), "{name}: id");
        let member = params.iter().copied().find(|param| !matches!(*param, "meta" | "id"));
        assert_eq!(operation.payload().member(), member, "{name}: payload member");
        let mut arguments = json!({ "meta": meta() });
        if operation.takes_id() {
            arguments["id"] = "r1".into();
        }
        if let Some(member) = member {
            arguments[member] = match operation.payload() {
                ucp_protocol::operation::Payload::Catalog if operation == Operation::LookupCatalog => {
                    json!({ "ids": ["p1"] })
                }
                ucp_protocol::operation::Payload::Catalog if operation == Operation::GetProduct => {
                    json!({ "id": "p1" })
                }
                ucp_protocol::operation::Payload::Catalog => json!({ "query": "shoes" }),
                ucp_protocol::operation::Payload::Cart => json!({ "line_items": [] }),
                ucp_protocol::operation::Payload::Checkout | ucp_protocol::operation::Payload::None => json!({}),
            };
        }
        assert_accepts(name, &ours(&input_schema(operation)), &arguments);
    }
}
