//! Self-contained JSON Schemas (draft 2020-12, no remote `$ref`, object roots) for MCP
//! `tools/list` and the OpenAPI document. Input schemas are derived from the request types in
//! [`crate::requests`] around the `meta`/`id` envelope; output schemas from the response
//! types in [`crate::resources`], and also admit the UCP error response.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::envelope::Ucp;
use crate::operation::Operation;
use crate::requests::{CartRequest, CheckoutRequest, GetProductRequest, LookupRequest, SearchRequest};
use crate::resources::{ErrorResponse, LookupBody, OrderBody, ProductBody, SearchBody, SessionBody};

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

/// The output schema of an operation's tool: its success body or the UCP error response,
/// both derived from the response types in [`crate::resources`] (clients validate
/// `structuredContent` against it).
pub fn output_schema(operation: Operation) -> Value {
    // What the server emits: a field skipped when empty is not required.
    let mut generator = SchemaSettings::draft2020_12().for_serialize().into_generator();
    let success = match operation {
        Operation::SearchCatalog => generator.subschema_for::<SearchBody<'static, Ucp>>().to_value(),
        Operation::LookupCatalog => generator.subschema_for::<LookupBody<'static, Ucp>>().to_value(),
        Operation::GetProduct => generator.subschema_for::<ProductBody<'static, Ucp>>().to_value(),
        Operation::CreateCart | Operation::GetCart | Operation::UpdateCart | Operation::CancelCart => {
            generator.subschema_for::<SessionBody<'static, Ucp>>().to_value()
        }
        // One body type serves carts and checkouts; a checkout always has its status and links.
        Operation::CreateCheckout
        | Operation::GetCheckout
        | Operation::UpdateCheckout
        | Operation::CompleteCheckout
        | Operation::CancelCheckout => json!({
            "allOf": [generator.subschema_for::<SessionBody<'static, Ucp>>().to_value()],
            "required": ["status", "links"]
        }),
        Operation::GetOrder => generator.subschema_for::<OrderBody<'static, Ucp>>().to_value(),
    };
    let error = generator.subschema_for::<ErrorResponse>().to_value();
    json!({
        "type": "object",
        "anyOf": [success, error],
        "$defs": generator.take_definitions(true),
    })
}
