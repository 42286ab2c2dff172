//! The admin API's own OpenAPI 3.1 document, served at `/admin/api/openapi.json` (behind the
//! admin key, like every admin route). A second document rather than paths in the UCP REST
//! binding's: the admin API has its own credential, error shape and base path.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::API_PREFIX;

pub(super) async fn serve() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], document().to_string()).into_response()
}

fn error_responses(extra: &[(&str, &str)]) -> Value {
    let mut responses = serde_json::Map::new();
    let common = [
        ("400", "Malformed body or query (invalid_input)"),
        ("401", "No admin key, or not one of them (WWW-Authenticate: Bearer realm=\"ucpd-admin\")"),
        ("404", "No such order, or the admin API is not configured"),
        ("413", "Body over the size limit"),
        ("429", "Rate limited; see Retry-After"),
        ("500", "Unexpected failure"),
        ("503", "Payment processor or storage unavailable; nothing was recorded"),
    ];
    for (status, description) in common.iter().chain(extra) {
        responses.insert(
            (*status).to_owned(),
            json!({ "description": description, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/error" } } } }),
        );
    }
    Value::Object(responses)
}

fn change(summary: &str, body: &str, required: bool) -> Value {
    let mut responses = error_responses(&[
        (
            "409",
            "The order is canceled (order_canceled): nothing more can change but a refund of what is left; or a pending refund can no longer be settled (refund_abandoned: it may have been made, reconcile by hand); or the Idempotency-Key was used with another body (idempotency_conflict) or its first request still runs (idempotency_in_progress, with Retry-After)",
        ),
        (
            "422",
            "Unknown line (unknown_line), more units than the line allows (quantity_exceeded), a refund over what is left (refund_exceeds_payment), or one the payment processor refused (refund_refused; nothing was refunded)",
        ),
        (
            "503",
            "Storage unavailable, nothing recorded (unavailable); or the payment processor did not confirm a refund (refund_pending): it is kept, asked for again under the same key until the processor answers, and recorded on the order, so repeating the request is safe",
        ),
    ]);
    responses["200"] = json!({ "description": "The order as it is now", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/order_details" } } } });
    json!({
        "summary": summary,
        "parameters": [
            { "name": "id", "in": "path", "required": true, "schema": { "type": "string" } },
            { "name": "Idempotency-Key", "in": "header", "required": false,
              "description": "The same key and body again answer the stored 200 without running the change again (a refund is made once); another body is 409",
              "schema": { "type": "string", "minLength": 1, "maxLength": 255 } }
        ],
        "requestBody": { "required": required, "content": { "application/json": { "schema": { "$ref": format!("#/components/schemas/{body}") } } } },
        "responses": responses,
    })
}

fn text() -> Value {
    json!({ "type": "string", "maxLength": 500 })
}

pub fn document() -> Value {
    let lines = json!({
        "type": "array", "minItems": 1, "maxItems": 100,
        "items": { "type": "object", "required": ["id", "quantity"], "additionalProperties": false,
                   "properties": { "id": { "type": "string" }, "quantity": { "type": "integer", "minimum": 1 } } }
    });
    let order = |action: &str| format!("{API_PREFIX}/orders/{{id}}/{action}");
    let mut list_responses = error_responses(&[]);
    list_responses["200"] = json!({ "description": "Orders, newest first", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/order_list" } } } });
    let mut show_responses = error_responses(&[]);
    show_responses["200"] = json!({ "description": "The order", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/order_details" } } } });
    let statuses = json!(["processing", "partial", "fulfilled", "canceled", "closed"]);
    let refund_states = json!(["pending", "recorded", "recorded_later", "refused", "abandoned", "dismissed"]);
    let mut refunds_responses = error_responses(&[]);
    refunds_responses["200"] = json!({ "description": "Refunds, newest first", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/refund_list" } } } });
    let mut record_responses = error_responses(&[
        ("409", "The refund is neither abandoned nor dismissed (refund_not_abandoned)"),
        ("422", "The order cannot take it: more than is left to refund (refund_exceeds_payment)"),
    ]);
    record_responses["409"] = json!({ "description": "The refund is neither abandoned nor dismissed (refund_not_abandoned): a pending one is the sweeper's, a refused one was not made", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/error" } } } });
    record_responses["404"] = json!({ "description": "No such refund, or its order is gone", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/error" } } } });
    let mut dismiss_responses = error_responses(&[(
        "409",
        "The refund is not abandoned (refund_not_abandoned): a pending one is the sweeper's, a refused one was not made, a recorded one is on its order",
    )]);
    dismiss_responses["404"] = json!({ "description": "No such refund", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/error" } } } });
    dismiss_responses["200"] = json!({ "description": "The refund as it is now: dismissed (or, when the same request was made again or a late settler recorded it meanwhile, pending or recorded)", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/refund" } } } });
    record_responses["200"] = json!({ "description": "The order as it is now, the refund recorded under its key", "content": { "application/json": { "schema": { "$ref": "#/components/schemas/order_details" } } } });
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "ucpd admin API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The merchant's order operations. Every change appends a fulfillment event or an adjustment to the order (nothing is rewritten), re-derives line statuses (order.md §1) and is announced to the platform by webhook."
        },
        "security": [{ "adminKey": [] }],
        "paths": {
            format!("{API_PREFIX}/orders"): { "get": {
                "summary": "List orders, newest first",
                "parameters": [
                    { "name": "status", "in": "query", "schema": { "type": "string", "enum": statuses } },
                    { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 100 } },
                    { "name": "before", "in": "query", "schema": { "type": "string" }, "description": "`next` of the previous page" }
                ],
                "responses": list_responses
            } },
            format!("{API_PREFIX}/orders/{{id}}"): { "get": {
                "summary": "One order",
                "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": show_responses
            } },
            order("ship"): { "post": change("Ship units (they count as fulfilled)", "ship", true) },
            order("deliver"): { "post": change("Shipped units were delivered (default: every unit in transit)", "delivery", false) },
            order("fail-delivery"): { "post": change("A delivery attempt failed", "delivery", false) },
            order("return"): { "post": change("Fulfilled units came back (they leave the line's total)", "return", true) },
            order("cancel"): { "post": change("Cancel units not yet shipped (default: all) and refund them", "cancel", false) },
            order("refund"): { "post": change("Refund through the order's payment handler", "refund", true) },
            order("adjust"): { "post": change("Record another adjustment (credit, price_adjustment, dispute…)", "adjust", true) },
            format!("{API_PREFIX}/refunds"): { "get": {
                "summary": "Refunds asked of the processor, newest first: pending, recorded (recorded_later: by the recovery sweeper), refused, abandoned (to reconcile by hand: record or dismiss), or dismissed",
                "parameters": [
                    { "name": "state", "in": "query", "schema": { "type": "string", "enum": refund_states } },
                    { "name": "limit", "in": "query", "schema": { "type": "integer", "minimum": 1, "maximum": 100 } },
                    { "name": "before", "in": "query", "description": "Where the page starts: the previous page's next", "schema": { "type": "string", "pattern": "^-?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$" } }
                ],
                "responses": refunds_responses
            } },
            format!("{API_PREFIX}/refunds/{{key}}/record"): { "post": {
                "summary": "Record an abandoned (or dismissed) refund the processor made (checked there by its key) on its order, without asking the processor again; recording it again answers the order",
                "parameters": [{ "name": "key", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": record_responses
            } },
            format!("{API_PREFIX}/refunds/{{key}}/dismiss"): { "post": {
                "summary": "Dismiss an abandoned refund the processor did not make (checked there by its key): the same request made again asks the processor anew under that key (within the processor's key lifetime a refund it made after all is answered under the key; past it, asking again is a new refund); dismissing it again answers it",
                "parameters": [{ "name": "key", "in": "path", "required": true, "schema": { "type": "string" } }],
                "responses": dismiss_responses
            } }
        },
        "components": {
            "securitySchemes": { "adminKey": { "type": "http", "scheme": "bearer", "description": "An admin key of [admin] api_keys (stored hashed); never a platform credential" } },
            "schemas": {
                "error": { "type": "object", "required": ["code", "message"], "properties": { "code": { "type": "string" }, "message": { "type": "string" } } },
                "ship": { "type": "object", "additionalProperties": false, "required": ["line_items", "tracking_number", "tracking_url"], "properties": {
                    "line_items": lines, "carrier": { "type": "string", "maxLength": 100 }, "tracking_number": { "type": "string", "maxLength": 100 },
                    "tracking_url": { "type": "string", "format": "uri" }, "description": text() } },
                "delivery": { "type": "object", "additionalProperties": false, "properties": { "line_items": lines, "description": text() } },
                "return": { "type": "object", "additionalProperties": false, "required": ["line_items"], "properties": {
                    "line_items": lines, "carrier": { "type": "string" }, "tracking_number": { "type": "string" }, "tracking_url": { "type": "string", "format": "uri" }, "description": text() } },
                "cancel": { "type": "object", "additionalProperties": false, "properties": {
                    "line_items": lines, "amount": { "type": "integer", "minimum": 0, "description": "Refund this much instead of the computed share" }, "reason": text() } },
                "refund": { "type": "object", "additionalProperties": false, "required": ["amount"], "properties": {
                    "amount": { "type": "integer", "minimum": 1, "description": "Minor units" }, "reason": text() } },
                "adjust": { "type": "object", "additionalProperties": false, "required": ["type", "amount"], "properties": {
                    "type": { "type": "string", "pattern": "^[a-z0-9_]{1,64}$" }, "amount": { "type": "integer", "description": "Signed minor units: negative is money back to the buyer" },
                    "status": { "type": "string", "enum": ["pending", "completed", "failed"] }, "description": text() } },
                "order_details": { "type": "object", "required": ["order", "status", "platform", "created_at", "version"], "properties": {
                    "order": { "type": "object", "description": "The UCP order (shopping/order.json) without its ucp envelope" },
                    "status": { "type": "string", "enum": statuses }, "platform": { "type": "string" },
                    "created_at": { "type": "string", "format": "date-time" }, "version": { "type": "integer" },
                    "payment": { "type": ["object", "null"], "properties": { "handler_id": { "type": "string" }, "currency": { "type": "string" },
                        "amount": { "type": "integer" }, "refunded": { "type": "integer" } } } } },
                "refund": { "type": "object", "required": ["key", "order_id", "amount", "state", "request", "created_at"], "properties": {
                    "key": { "type": "string", "description": "Our processor key, and the id of the adjustment that records it" },
                    "order_id": { "type": "string" }, "amount": { "type": "integer" }, "state": { "type": "string", "enum": refund_states },
                    "request": { "type": "string", "description": "The operation that asked for it (refund, cancel, return…)" },
                    "description": { "type": ["string", "null"] },
                    "created_at": { "type": "string", "format": "date-time" }, "ended_at": { "type": ["string", "null"], "format": "date-time" } } },
                "refund_list": { "type": "object", "required": ["refunds"], "properties": {
                    "refunds": { "type": "array", "items": { "$ref": "#/components/schemas/refund" } },
                    "next": { "type": ["string", "null"], "description": "After a full page: the before of the next one" } } },
                "order_list": { "type": "object", "required": ["orders"], "properties": {
                    "orders": { "type": "array", "items": { "type": "object", "required": ["id", "status", "created_at", "total"] } },
                    "next": { "type": "string" } } }
            }
        }
    })
}
