//! Our OpenAPI 3.1 document, generated from the operation registry and the same JSON Schemas
//! `tools/list` publishes, served at `<rest endpoint>/openapi.json`.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::dispatch::payload_member;
use crate::mcp::schemas::{input_schema, output_schema};
use crate::operations::{self, Operation};
use crate::state::AppState;

pub(super) async fn serve(State(state): State<AppState>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], document(&state).to_string()).into_response()
}

/// Protocol error statuses the binding can answer with.
const ERROR_STATUSES: &[(&str, &str)] = &[
    ("400", "Malformed request: bad JSON, schema-invalid body, missing header, invalid profile URL"),
    ("401", "Credentials missing or not valid (WWW-Authenticate), signature missing or invalid, unknown signing key"),
    (
        "403",
        "Host or Origin not allowed, credential not allowed for the claimed profile, profile not trusted, insufficient scope",
    ),
    ("409", "Idempotency key reused with another payload, or its first call is still running (Retry-After)"),
    ("413", "Body over the size limit"),
    ("415", "Content-Type is not application/json"),
    ("422", "Platform profile malformed or protocol version unsupported"),
    ("424", "Platform profile unreachable"),
    ("429", "Rate limited; see Retry-After"),
    ("500", "Unexpected failure"),
    ("503", "Temporarily unavailable; see Retry-After"),
];

pub(super) fn document(state: &AppState) -> Value {
    let enabled = &state.settings.capabilities.enabled;
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for operation in
        Operation::ALL.into_iter().filter(|operation| operations::is_enabled(enabled, operation.capability()))
    {
        let entry = paths.entry(operation.rest_path().to_owned()).or_insert_with(|| json!({}));
        entry[operation.rest_method().as_str().to_lowercase()] = operation_object(operation, &mut schemas);
    }
    schemas.insert(
        "protocol_error".into(),
        json!({
            "type": "object",
            "required": ["code", "content"],
            "properties": { "code": { "type": "string" }, "content": { "type": "string" }, "continue_url": { "type": "string", "format": "uri" } }
        }),
    );
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": format!("{} — UCP REST binding", state.settings.business_name),
            "version": crate::discovery::PROTOCOL_VERSION,
            "description": "The UCP shopping service (catalog, cart, checkout, order) served by ucpd. Every operation also exists as an MCP tool of the same name."
        },
        "servers": [{ "url": format!("{}{}", state.profile.base_url, state.settings.http.rest_path) }],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "parameters": {
                "ucp_agent": { "name": "UCP-Agent", "in": "header", "required": true, "schema": { "type": "string" }, "description": "RFC 8941 dictionary: profile=\"https://platform.example/profile.json\"" },
                "request_id": { "name": "Request-Id", "in": "header", "required": true, "schema": { "type": "string" } },
                "idempotency_key": { "name": "Idempotency-Key", "in": "header", "required": true, "schema": { "type": "string", "format": "uuid" } },
                "id": { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }
            }
        }
    })
}

fn operation_object(operation: Operation, schemas: &mut Map<String, Value>) -> Value {
    let mut parameters = vec![
        json!({ "$ref": "#/components/parameters/ucp_agent" }),
        json!({ "$ref": "#/components/parameters/request_id" }),
    ];
    if operation.rest_requires_idempotency_key() {
        parameters.push(json!({ "$ref": "#/components/parameters/idempotency_key" }));
    }
    if operation.takes_id() {
        parameters.push(json!({ "$ref": "#/components/parameters/id" }));
    }
    let success_status = if operation.creates() { "201" } else { "200" };
    let output = hoist(output_schema(operation), schemas);
    let mut responses = Map::new();
    responses.insert(
        success_status.into(),
        json!({ "description": "The resource", "content": { "application/json": { "schema": output.clone() } } }),
    );
    if operation.creates() {
        responses.insert(
            "200".into(),
            json!({ "description": "Nothing was created: a UCP error response", "content": { "application/json": { "schema": output } } }),
        );
    }
    for (status, description) in ERROR_STATUSES {
        responses.insert(
            (*status).into(),
            json!({ "description": description, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/protocol_error" } } } }),
        );
    }
    let mut object = json!({
        "operationId": operation.name(),
        "summary": operation.description(),
        "parameters": parameters,
        "responses": responses,
    });
    if let Some(member) = payload_member(operation) {
        let input = hoist(input_schema(operation), schemas);
        let body_schema = input["properties"][member].clone();
        object["requestBody"] = json!({
            "required": !operation.payload_optional(),
            "content": { "application/json": { "schema": body_schema } }
        });
    }
    object
}

/// Moves a schema's `$defs` into the shared components and rewrites its references.
fn hoist(mut schema: Value, schemas: &mut Map<String, Value>) -> Value {
    if let Some(Value::Object(definitions)) = schema.as_object_mut().and_then(|object| object.remove("$defs")) {
        for (name, definition) in definitions {
            schemas.entry(name).or_insert_with(|| rewrite(definition));
        }
    }
    rewrite(schema)
}

fn rewrite(schema: Value) -> Value {
    let text = schema.to_string().replace("\"#/$defs/", "\"#/components/schemas/");
    serde_json::from_str(&text).unwrap_or(schema)
}
