//! Our OpenAPI 3.1 document, generated from the operation registry and the same JSON Schemas
//! `tools/list` publishes, served at `<rest endpoint>/openapi.json`.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::config::ResponseSigning;
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
        entry[operation.rest_method().as_str().to_lowercase()] = operation_object(state, operation, &mut schemas);
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
                "request_id": { "name": "Request-Id", "in": "header", "required": true, "schema": { "type": "string" }, "description": "A UUID per attempt, for tracing; echoed as X-Request-Id" },
                "idempotency_key": { "name": "Idempotency-Key", "in": "header", "required": true, "schema": { "type": "string", "format": "uuid" }, "description": "The same on every retry of one request: a repeat is answered with the first answer (1-255 printable ASCII characters are taken)" },
                "signature": { "name": "Signature", "in": "header", "required": false, "schema": { "type": "string" }, "description": "RFC 9421 HTTP Message Signature (ES256/ES384/Ed25519 keys from the signer's profile), with Signature-Input" },
                "signature_input": { "name": "Signature-Input", "in": "header", "required": false, "schema": { "type": "string" }, "description": "RFC 9421 Signature-Input: @method, @authority, @path, @query when there is one, content-digest and content-type with a body, idempotency-key when sent" },
                "content_digest": { "name": "Content-Digest", "in": "header", "required": false, "schema": { "type": "string" }, "description": "RFC 9530 digest of the body (sha-256 or sha-512); checked whenever it is sent" },
                "id": { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }
            },
            "headers": {
                "x_request_id": { "required": true, "schema": { "type": "string" }, "description": "The request's Request-Id, or one we made" },
                "retry_after": { "required": false, "schema": { "type": "integer", "minimum": 0 }, "description": "Seconds to wait before trying again" },
                "www_authenticate": { "required": false, "schema": { "type": "string" }, "description": "The challenge: Bearer, or Signature for a signature refusal" },
                "signature": { "required": false, "schema": { "type": "string" }, "description": "RFC 9421 signature of the response by a key of our profile's signing_keys" },
                "signature_input": { "required": false, "schema": { "type": "string" }, "description": "RFC 9421 Signature-Input of the response" },
                "content_digest": { "required": false, "schema": { "type": "string" }, "description": "RFC 9530 digest of the signed response's body" }
            },
            "securitySchemes": security_schemes(state)
        },
        "security": security(state, None)
    })
}

/// The credentials an onboarded platform may present (`[[platforms]]`); a verified RFC 9421
/// signature of an onboarded platform counts too, which OpenAPI has no scheme for.
fn security_schemes(state: &AppState) -> Value {
    json!({
        "oauth2_bearer": { "type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "An OAuth 2.0 access token of the platform (client credentials), verified against its issuer's JWKS" },
        "api_key": { "type": "apiKey", "in": "header", "name": state.settings.auth.api_key_header, "description": "An API key the business issued to the platform" },
        "mutual_tls": { "type": "mutualTLS", "description": "A client certificate mapped to the platform" }
    })
}

/// The security requirement of `operation` (of the whole API for `None`): any one credential,
/// or none at all where the server asks for none.
fn security(state: &AppState, operation: Option<Operation>) -> Value {
    let mut ways = vec![json!({ "oauth2_bearer": [] }), json!({ "api_key": [] }), json!({ "mutual_tls": [] })];
    let required = match operation {
        Some(operation) => state.auth.requires(operation),
        None => Operation::ALL.into_iter().any(|operation| state.auth.requires(operation)),
    };
    if !required {
        ways.push(json!({}));
    }
    Value::Array(ways)
}

/// Response headers: every answer's, and a signed one's where `signed`.
fn headers(status: &str, signed: bool) -> Value {
    let mut headers = json!({ "X-Request-Id": { "$ref": "#/components/headers/x_request_id" } });
    if matches!(status, "409" | "429" | "503") {
        headers["Retry-After"] = json!({ "$ref": "#/components/headers/retry_after" });
    }
    if status == "401" {
        headers["WWW-Authenticate"] = json!({ "$ref": "#/components/headers/www_authenticate" });
    }
    if signed {
        for (name, component) in
            [("Signature", "signature"), ("Signature-Input", "signature_input"), ("Content-Digest", "content_digest")]
        {
            headers[name] = json!({ "$ref": format!("#/components/headers/{component}") });
        }
    }
    headers
}

fn operation_object(state: &AppState, operation: Operation, schemas: &mut Map<String, Value>) -> Value {
    let mut parameters = vec![
        json!({ "$ref": "#/components/parameters/ucp_agent" }),
        json!({ "$ref": "#/components/parameters/request_id" }),
        json!({ "$ref": "#/components/parameters/signature" }),
        json!({ "$ref": "#/components/parameters/signature_input" }),
    ];
    if payload_member(operation).is_some() {
        parameters.push(json!({ "$ref": "#/components/parameters/content_digest" }));
    }
    if operation.rest_requires_idempotency_key() {
        parameters.push(json!({ "$ref": "#/components/parameters/idempotency_key" }));
    }
    if operation.takes_id() {
        parameters.push(json!({ "$ref": "#/components/parameters/id" }));
    }
    let success_status = if operation.creates() { "201" } else { "200" };
    let signed = match state.settings.signatures.sign_responses {
        ResponseSigning::None => false,
        ResponseSigning::CompleteCheckout => operation == Operation::CompleteCheckout,
        ResponseSigning::All => true,
    };
    let output = hoist(output_schema(operation), schemas);
    let mut responses = Map::new();
    responses.insert(
        success_status.into(),
        json!({ "description": "The resource", "headers": headers(success_status, signed), "content": { "application/json": { "schema": output.clone() } } }),
    );
    if operation.creates() {
        responses.insert(
            "200".into(),
            json!({ "description": "Nothing was created: a UCP error response", "headers": headers("200", signed), "content": { "application/json": { "schema": output } } }),
        );
    }
    for (status, description) in ERROR_STATUSES {
        responses.insert(
            (*status).into(),
            json!({ "description": description, "headers": headers(status, signed), "content": { "application/json": { "schema": { "$ref": "#/components/schemas/protocol_error" } } } }),
        );
    }
    let mut object = json!({
        "operationId": operation.name(),
        "summary": operation.description(),
        "parameters": parameters,
        "security": security(state, Some(operation)),
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
