//! Self-contained JSON Schemas (2020-12) for `tools/list`: no remote `$ref`, object roots.
//! Written from the UCP 2026-04-08 catalog schemas; the output schemas also admit the UCP
//! error response, since clients validate `structuredContent` against them.

use serde_json::{Value, json};

use crate::operations::Operation;

pub(crate) fn input_schema(operation: Operation) -> Value {
    let mut meta = json!({
        "type": "object",
        "description": "Request metadata. ucp-agent.profile is the URL of the calling platform's UCP profile.",
        "required": ["ucp-agent"],
        "properties": {
            "ucp-agent": {
                "type": "object",
                "required": ["profile"],
                "properties": { "profile": { "type": "string", "format": "uri" } }
            },
            "idempotency-key": { "type": "string", "format": "uuid" }
        },
        "additionalProperties": true
    });
    if operation.requires_idempotency_key() {
        meta["required"] = json!(["ucp-agent", "idempotency-key"]);
    }
    let mut properties = serde_json::Map::new();
    properties.insert("meta".into(), meta);
    let mut required = vec!["meta"];
    if operation.takes_id() {
        properties.insert("id".into(), json!({ "type": "string", "description": "The id of the target resource." }));
        required.push("id");
    }
    let payload = match operation {
        Operation::SearchCatalog => Some(search_request()),
        Operation::LookupCatalog => Some(lookup_request()),
        Operation::GetProduct => Some(get_product_request()),
        Operation::CreateCart | Operation::UpdateCart => Some(session_request(false)),
        Operation::CreateCheckout | Operation::UpdateCheckout => Some(session_request(true)),
        Operation::CompleteCheckout => Some(complete_request()),
        Operation::GetCart
        | Operation::CancelCart
        | Operation::GetCheckout
        | Operation::CancelCheckout
        | Operation::GetOrder => None,
    };
    if let (Some(member), Some(schema)) = (operation.payload().member(), payload) {
        properties.insert(member.into(), schema);
        if !operation.payload_optional() {
            required.push(member);
        }
    }
    json!({
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": true,
        "$defs": shared_defs(),
    })
}

fn session_request(checkout: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "required": if checkout { json!([]) } else { json!(["line_items"]) },
        "properties": {
            "line_items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["item", "quantity"],
                    "properties": {
                        "id": { "type": "string", "description": "Our line id, to keep a line on update." },
                        "item": { "type": "object", "required": ["id"], "properties": { "id": { "type": "string", "description": "Variant id, SKU or product id." } } },
                        "quantity": { "type": "integer", "minimum": 1 }
                    }
                }
            },
            "buyer": {
                "type": "object",
                "properties": {
                    "first_name": { "type": "string" }, "last_name": { "type": "string" },
                    "email": { "type": "string" }, "phone_number": { "type": "string", "description": "E.164" }
                }
            },
            "context": context(),
            "discounts": { "type": "object", "properties": { "codes": { "type": "array", "items": { "type": "string" } } } }
        }
    });
    if checkout {
        schema["properties"]["cart_id"] =
            json!({ "type": "string", "description": "Start from this cart (create only)." });
        schema["properties"]["fulfillment"] = json!({
            "type": "object",
            "properties": {
                "methods": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "type": { "type": "string", "enum": ["shipping", "pickup"] },
                            "destinations": { "type": "array", "items": { "$ref": "#/$defs/postal_address" } },
                            "selected_destination_id": { "type": ["string", "null"] },
                            "groups": { "type": "array", "items": { "type": "object", "properties": { "id": { "type": "string" }, "selected_option_id": { "type": ["string", "null"] } } } }
                        }
                    }
                }
            }
        });
    }
    schema
}

fn complete_request() -> Value {
    json!({
        "type": "object",
        "properties": {
            "payment": {
                "type": "object",
                "properties": {
                    "instruments": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["id", "handler_id", "type"],
                            "properties": {
                                "id": { "type": "string" },
                                "handler_id": { "type": "string" },
                                "type": { "type": "string" },
                                "credential": { "type": "object", "required": ["type"], "properties": { "type": { "type": "string" }, "token": { "type": "string" } } }
                            }
                        }
                    }
                }
            }
        }
    })
}

pub(crate) fn output_schema(operation: Operation) -> Value {
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

fn context() -> Value {
    json!({
        "type": "object",
        "description": "Provisional buyer context: address_country, address_region, postal_code, intent, language, currency, eligibility.",
        "properties": {
            "address_country": { "type": "string" },
            "address_region": { "type": "string" },
            "postal_code": { "type": "string" },
            "intent": { "type": "string" },
            "language": { "type": "string" },
            "currency": { "type": "string" },
            "eligibility": { "type": "array", "items": { "type": "string" } }
        },
        "additionalProperties": true
    })
}

fn filters() -> Value {
    json!({
        "type": "object",
        "description": "All filters combine with AND. categories: any of the values. price: minor units of context.currency.",
        "properties": {
            "categories": { "type": "array", "items": { "type": "string" } },
            "price": {
                "type": "object",
                "properties": {
                    "min": { "type": "integer", "minimum": 0 },
                    "max": { "type": "integer", "minimum": 0 }
                }
            }
        },
        "additionalProperties": true
    })
}

fn search_request() -> Value {
    json!({
        "type": "object",
        "description": "At least one of query or filters.",
        "anyOf": [{ "required": ["query"] }, { "required": ["filters"] }],
        "properties": {
            "query": { "type": "string", "minLength": 1, "description": "Free-text search query (at least one word)." },
            "context": context(),
            "signals": { "type": "object" },
            "attribution": { "type": "object", "additionalProperties": { "type": "string" } },
            "filters": filters(),
            "pagination": {
                "type": "object",
                "properties": {
                    "cursor": { "type": "string", "description": "Opaque cursor from the previous page." },
                    "limit": { "type": "integer", "minimum": 1, "default": 10 }
                }
            }
        }
    })
}

fn lookup_request() -> Value {
    json!({
        "type": "object",
        "required": ["ids"],
        "properties": {
            "ids": {
                "type": "array",
                "minItems": 1,
                "items": { "type": "string" },
                "description": "Product ids, variant ids, SKUs, barcodes or handles."
            },
            "filters": filters(),
            "context": context(),
            "signals": { "type": "object" },
            "attribution": { "type": "object", "additionalProperties": { "type": "string" } }
        }
    })
}

fn get_product_request() -> Value {
    json!({
        "type": "object",
        "required": ["id"],
        "properties": {
            "id": { "type": "string", "description": "Product id or variant id." },
            "selected": { "type": "array", "items": { "$ref": "#/$defs/selected_option" } },
            "preferences": { "type": "array", "items": { "type": "string" } },
            "filters": filters(),
            "context": context(),
            "signals": { "type": "object" },
            "attribution": { "type": "object", "additionalProperties": { "type": "string" } }
        }
    })
}

fn shared_defs() -> Value {
    json!({
        "postal_address": {
            "type": "object",
            "properties": {
                "id": { "type": "string" },
                "first_name": { "type": "string" }, "last_name": { "type": "string" },
                "street_address": { "type": "string" }, "extended_address": { "type": "string" },
                "address_locality": { "type": "string" }, "address_region": { "type": "string" },
                "address_country": { "type": "string", "description": "ISO 3166-1 alpha-2" },
                "postal_code": { "type": "string" }, "phone_number": { "type": "string" }
            }
        },
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
