//! Self-contained JSON Schemas (draft 2020-12, no remote `$ref`, object roots) for MCP
//! `tools/list` and the OpenAPI document. Input schemas are derived from the request types in
//! [`crate::requests`] around the `meta`/`id` envelope; output schemas are still written by
//! hand from the UCP 2026-04-08 schemas, and also admit the UCP error response, since
//! clients validate `structuredContent` against them.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::operation::Operation;
use crate::requests::{CartRequest, CheckoutRequest, GetProductRequest, LookupRequest, SearchRequest};

/// The input schema of an operation's tool: `meta`, the target `id` when it takes one, and
/// its payload member, whose schema is derived from the request type.
pub fn input_schema(operation: Operation) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let payload = match operation {
        Operation::SearchCatalog => Some(generator.subschema_for::<SearchRequest>()),
        Operation::LookupCatalog => Some(generator.subschema_for::<LookupRequest>()),
        Operation::GetProduct => Some(generator.subschema_for::<GetProductRequest>()),
        Operation::CreateCart | Operation::UpdateCart => Some(generator.subschema_for::<CartRequest>()),
        Operation::CreateCheckout | Operation::UpdateCheckout | Operation::CompleteCheckout => {
            Some(generator.subschema_for::<CheckoutRequest>())
        }
        Operation::GetCart
        | Operation::CancelCart
        | Operation::GetCheckout
        | Operation::CancelCheckout
        | Operation::GetOrder => None,
    };
    let mut properties = serde_json::Map::new();
    properties.insert("meta".into(), meta_schema(operation));
    let mut required = vec!["meta"];
    if operation.takes_id() {
        properties.insert("id".into(), json!({ "type": "string", "description": "The id of the target resource." }));
        required.push("id");
    }
    if let (Some(member), Some(schema)) = (operation.payload().member(), payload) {
        properties.insert(member.into(), schema.to_value());
        if !operation.payload_optional() {
            required.push(member);
        }
    }
    json!({
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": true,
        "$defs": generator.take_definitions(true),
    })
}

/// The schema of `T` alone, with its definitions: for checking one payload.
pub fn payload_schema<T: JsonSchema>() -> Value {
    SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>().to_value()
}

/// `arguments.meta`: who is calling, and the idempotency key where the operation needs one.
fn meta_schema(operation: Operation) -> Value {
    let required = if operation.requires_idempotency_key() {
        json!(["ucp-agent", "idempotency-key"])
    } else {
        json!(["ucp-agent"])
    };
    json!({
        "type": "object",
        "description": "Request metadata. ucp-agent.profile is the URL of the calling platform's UCP profile.",
        "required": required,
        "properties": {
            "ucp-agent": {
                "type": "object",
                "required": ["profile"],
                "properties": { "profile": { "type": "string", "format": "uri" } }
            },
            "idempotency-key": { "type": "string", "format": "uuid" }
        },
        "additionalProperties": true
    })
}

/// The output schema of an operation's tool: its success body or the UCP error response.
/// Hand-written from the UCP 2026-04-08 schemas until the response types are typed.
pub fn output_schema(operation: Operation) -> Value {
    let resource = |required: Value| {
        json!({
            "type": "object",
            "required": required,
            "properties": {
                "ucp": { "$ref": "#/$defs/ucp" },
                "id": { "type": "string" },
                "totals": { "type": "array", "items": { "type": "object", "required": ["type", "amount"], "properties": { "type": { "type": "string" }, "amount": { "type": "integer" } } } },
                "messages": { "type": "array", "items": { "$ref": "#/$defs/message" } }
            }
        })
    };
    let success = match operation {
        Operation::SearchCatalog => search_output(),
        Operation::LookupCatalog => lookup_output(),
        Operation::GetProduct => product_output(),
        Operation::CreateCart | Operation::GetCart | Operation::UpdateCart | Operation::CancelCart => {
            resource(json!(["ucp", "id", "line_items", "currency", "totals"]))
        }
        Operation::CreateCheckout
        | Operation::GetCheckout
        | Operation::UpdateCheckout
        | Operation::CompleteCheckout
        | Operation::CancelCheckout => {
            resource(json!(["ucp", "id", "line_items", "status", "currency", "totals", "links"]))
        }
        Operation::GetOrder => resource(json!([
            "ucp",
            "id",
            "checkout_id",
            "permalink_url",
            "line_items",
            "fulfillment",
            "currency",
            "totals"
        ])),
    };
    json!({
        "type": "object",
        "anyOf": [success, { "$ref": "#/$defs/error_response" }],
        "$defs": shared_defs(),
    })
}

fn search_output() -> Value {
    json!({
            "type": "object",
            "required": ["ucp", "products"],
            "properties": {
                "ucp": { "$ref": "#/$defs/ucp" },
                "products": { "type": "array", "items": { "$ref": "#/$defs/product" } },
                "pagination": {
                    "type": "object",
                    "required": ["has_next_page"],
                    "properties": {
                        "cursor": { "type": "string" },
                        "has_next_page": { "type": "boolean" },
                        "total_count": { "type": "integer", "minimum": 0 }
                    }
                },
                "messages": { "type": "array", "items": { "$ref": "#/$defs/message" } }
            }
    })
}

fn lookup_output() -> Value {
    json!({
            "type": "object",
            "required": ["ucp", "products"],
            "properties": {
                "ucp": { "$ref": "#/$defs/ucp" },
                "products": {
                    "type": "array",
                    "items": {
                        "allOf": [{ "$ref": "#/$defs/product" }],
                        "properties": {
                            "variants": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["inputs"],
                                    "properties": {
                                        "inputs": {
                                            "type": "array",
                                            "minItems": 1,
                                            "items": {
                                                "type": "object",
                                                "required": ["id"],
                                                "properties": { "id": { "type": "string" }, "match": { "type": "string" } }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                },
                "messages": { "type": "array", "items": { "$ref": "#/$defs/message" } }
            }
    })
}

fn product_output() -> Value {
    json!({
        "type": "object",
        "required": ["ucp", "product"],
        "properties": {
            "ucp": { "$ref": "#/$defs/ucp" },
            "product": {
                "allOf": [{ "$ref": "#/$defs/product" }],
                "properties": { "selected": { "type": "array", "items": { "$ref": "#/$defs/selected_option" } } }
            },
            "messages": { "type": "array", "items": { "$ref": "#/$defs/message" } }
        }
    })
}

fn shared_defs() -> Value {
    json!({
        "price": {
            "type": "object",
            "required": ["amount", "currency"],
            "properties": {
                "amount": { "type": "integer", "minimum": 0 },
                "currency": { "type": "string", "pattern": "^[A-Z]{3}$" }
            }
        },
        "price_range": {
            "type": "object",
            "required": ["min", "max"],
            "properties": { "min": { "$ref": "#/$defs/price" }, "max": { "$ref": "#/$defs/price" } }
        },
        "description": {
            "type": "object",
            "minProperties": 1,
            "properties": { "plain": { "type": "string" }, "html": { "type": "string" }, "markdown": { "type": "string" } }
        },
        "selected_option": {
            "type": "object",
            "required": ["name", "label"],
            "properties": { "name": { "type": "string" }, "label": { "type": "string" }, "id": { "type": "string" } }
        },
        "variant": {
            "type": "object",
            "required": ["id", "title", "description", "price"],
            "properties": {
                "id": { "type": "string" },
                "sku": { "type": "string" },
                "title": { "type": "string" },
                "description": { "$ref": "#/$defs/description" },
                "price": { "$ref": "#/$defs/price" },
                "list_price": { "$ref": "#/$defs/price" },
                "availability": {
                    "type": "object",
                    "properties": { "available": { "type": "boolean" }, "status": { "type": "string" } }
                },
                "options": { "type": "array", "items": { "$ref": "#/$defs/selected_option" } }
            }
        },
        "product": {
            "type": "object",
            "required": ["id", "title", "description", "price_range", "variants"],
            "properties": {
                "id": { "type": "string" },
                "handle": { "type": "string" },
                "title": { "type": "string" },
                "description": { "$ref": "#/$defs/description" },
                "url": { "type": "string", "format": "uri" },
                "price_range": { "$ref": "#/$defs/price_range" },
                "list_price_range": { "$ref": "#/$defs/price_range" },
                "variants": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/variant" } },
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
        },
        "ucp": {
            "type": "object",
            "required": ["version"],
            "properties": {
                "version": { "type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$" },
                "status": { "type": "string", "enum": ["success", "error"] },
                "capabilities": { "type": "object" }
            }
        },
        "message": {
            "type": "object",
            "required": ["type", "content"],
            "properties": {
                "type": { "type": "string", "enum": ["error", "warning", "info"] },
                "code": { "type": "string" },
                "content": { "type": "string" },
                "path": { "type": "string" },
                "severity": { "type": "string" }
            }
        },
        "error_response": {
            "type": "object",
            "required": ["ucp", "messages"],
            "additionalProperties": false,
            "properties": {
                "ucp": {
                    "allOf": [{ "$ref": "#/$defs/ucp" }],
                    "properties": { "status": { "const": "error" } },
                    "required": ["status"]
                },
                "messages": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/message" } },
                "continue_url": { "type": "string", "format": "uri" }
            }
        }
    })
}
