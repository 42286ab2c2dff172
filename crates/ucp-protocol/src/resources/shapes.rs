//! The JSON Schemas of the documents the domain owns and the bodies embed as they are: a
//! catalog product (serialized straight from `ucp_domain::catalog::Product`) and a stored
//! order. Every other part of the response schemas is derived from the body types; these two
//! are kept by hand because the domain carries no schema dependency, and the tests validate
//! every served product and order against them.

use schemars::{Schema, SchemaGenerator, json_schema};
use serde_json::json;

fn price() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["amount", "currency"],
        "properties": {
            "amount": { "type": "integer", "minimum": 0 },
            "currency": { "type": "string", "pattern": "^[A-Z]{3}$" }
        }
    })
}

fn price_range() -> serde_json::Value {
    json!({ "type": "object", "required": ["min", "max"], "properties": { "min": price(), "max": price() } })
}

fn description() -> serde_json::Value {
    json!({
        "type": "object",
        "minProperties": 1,
        "properties": { "plain": { "type": "string" }, "html": { "type": "string" }, "markdown": { "type": "string" } }
    })
}

fn selected_option() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["name", "label"],
        "properties": { "name": { "type": "string" }, "label": { "type": "string" }, "id": { "type": "string" } }
    })
}

/// A variant; `extra` adds properties (a lookup's `inputs`).
fn variant(extra: serde_json::Value, required: &[&str]) -> serde_json::Value {
    let mut schema = json!({
        "type": "object",
        "required": ["id", "title", "description", "price"],
        "properties": {
            "id": { "type": "string" },
            "sku": { "type": "string" },
            "title": { "type": "string" },
            "description": description(),
            "price": price(),
            "list_price": price(),
            "availability": {
                "type": "object",
                "properties": { "available": { "type": "boolean" }, "status": { "type": "string" } }
            },
            "options": { "type": "array", "items": selected_option() }
        }
    });
    if let (Some(properties), Some(extra)) = (schema["properties"].as_object_mut(), extra.as_object()) {
        properties.extend(extra.clone());
    }
    if let Some(list) = schema["required"].as_array_mut() {
        list.extend(required.iter().map(|name| json!(name)));
    }
    schema
}

fn product_value(variant: serde_json::Value) -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["id", "title", "description", "price_range", "variants"],
        "properties": {
            "id": { "type": "string" },
            "handle": { "type": "string" },
            "title": { "type": "string" },
            "description": description(),
            "url": { "type": "string", "format": "uri" },
            "price_range": price_range(),
            "list_price_range": price_range(),
            "variants": { "type": "array", "minItems": 1, "items": variant },
            "options": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["name", "values"],
                    "properties": {
                        "name": { "type": "string" },
                        "values": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "required": ["label"],
                                "properties": {
                                    "id": { "type": "string" },
                                    "label": { "type": "string" },
                                    "available": { "type": "boolean" },
                                    "exists": { "type": "boolean" }
                                }
                            }
                        }
                    }
                }
            }
        }
    })
}

fn schema(value: serde_json::Value) -> Schema {
    Schema::try_from(value).unwrap_or_else(|_| json_schema!({}))
}

/// A catalog product (`shopping/types/product.json`).
pub fn product(_: &mut SchemaGenerator) -> Schema {
    schema(product_value(variant(json!({}), &[])))
}

/// Search results: products.
pub fn products(_: &mut SchemaGenerator) -> Schema {
    schema(json!({ "type": "array", "items": product_value(variant(json!({}), &[])) }))
}

/// Lookup results: products whose variants each say which request ids found them.
pub fn looked_up_products(_: &mut SchemaGenerator) -> Schema {
    let inputs = json!({
        "inputs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": { "id": { "type": "string" }, "match": { "type": "string" } }
            }
        }
    });
    schema(json!({ "type": "array", "items": product_value(variant(inputs, &["inputs"])) }))
}

/// A placed order (`shopping/order.json`), as stored.
pub fn order(_: &mut SchemaGenerator) -> Schema {
    schema(json!({
        "type": "object",
        "required": ["id", "checkout_id", "permalink_url", "line_items", "fulfillment", "currency", "totals"],
        "properties": {
            "id": { "type": "string" },
            "checkout_id": { "type": "string" },
            "permalink_url": { "type": "string", "format": "uri" },
            "line_items": { "type": "array", "items": { "type": "object" } },
            "fulfillment": { "type": "object" },
            "currency": { "type": "string", "pattern": "^[A-Z]{3}$" },
            "totals": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type", "amount"],
                    "properties": { "type": { "type": "string" }, "amount": { "type": "integer" } }
                }
            }
        }
    }))
}
