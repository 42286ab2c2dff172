//! The MCP endpoint: our own small JSON-RPC 2.0 layer over a single HTTP POST, stateless
//! (no session, no `initialize` needed, any `Accept` header), as Google and generic MCP
//! clients call it. See `spec/transport-mcp.md`.

mod message;
mod pieces;
pub(crate) mod schemas;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};
use ucp_protocol::escape;

use self::message::{Agent, Arguments, Message, Meta, PAYLOAD_MEMBERS, Params, Text};
use self::pieces::Pieces;
use crate::error::{ApiError, ErrorKind};
use crate::layers::{self, RawBody, RpcId, rpc_error};
use crate::operations::{self, Operation};
use crate::state::AppState;
use crate::trust::Principal;
use crate::{dispatch, idempotency};

/// MCP protocol revisions we answer `initialize` with; the first is the newest.
const MCP_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Every request to the MCP path, whatever its method. The layers in front (`crate::layers`)
/// have admitted it, checked Host and Origin, read the body into [`RawBody`] and recorded the
/// JSON-RPC id; errors from here on echo that id too.
pub(crate) async fn endpoint(State(state): State<AppState>, request: Request) -> Response {
    // The id is looked for in the body only if one of these refusals needs it.
    let slot = request.extensions().get::<RpcId>().cloned().unwrap_or_default();
    let (mut parts, _body) = request.into_parts();
    if parts.method != Method::POST {
        let mut response = rpc_error(
            &slot.get(),
            &ApiError::new(
                ErrorKind::MethodNotAllowed,
                format!(
                    "{} is not supported on the MCP endpoint: send JSON-RPC requests with POST (no SSE stream, no sessions)",
                    parts.method
                ),
            ),
        );
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    if let Err(error) = check_headers(&parts.headers) {
        return rpc_error(&slot.get(), &error);
    }
    let Some(RawBody(bytes)) = parts.extensions.remove::<RawBody>() else {
        return rpc_error(&slot.get(), &ApiError::internal("the MCP route is missing the body layer"));
    };
    let principal = parts.extensions.remove::<Principal>();
    handle(&state, &parts.headers, principal, &bytes).await
}

/// [`endpoint`] as a service, for the path the listener dispatches without the router
/// (`crate::app`): a `POST` to the MCP path, the one agents call most.
#[derive(Debug, Clone)]
pub struct Endpoint(pub AppState);

impl layers::Endpoint for Endpoint {
    fn answer(self, request: Request) -> impl Future<Output = Response> + Send {
        endpoint(State(self.0), request)
    }
}

fn check_headers(headers: &HeaderMap) -> Result<(), ApiError> {
    layers::require_json(headers)?;
    if let Some(version) = headers.get("mcp-protocol-version") {
        let version = version.to_str().unwrap_or_default();
        if !MCP_VERSIONS.contains(&version) {
            return Err(ApiError::new(
                ErrorKind::UnsupportedProtocolVersion,
                format!("MCP-Protocol-Version {version:?} is not supported; supported: {}", MCP_VERSIONS.join(", ")),
            ));
        }
    }
    Ok(())
}

async fn handle(state: &AppState, headers: &HeaderMap, principal: Option<Principal>, bytes: &Bytes) -> Response {
    let message = match Message::parse(bytes) {
        Ok(message) => message,
        Err(error) => {
            return rpc_error(
                &Value::Null,
                &ApiError::new(ErrorKind::Parse, format!("body is not valid JSON: {error}")),
            );
        }
    };
    let (jsonrpc, id, method, params) = match message {
        Message::Object { jsonrpc, id, method, params } => (jsonrpc, id, method, params),
        // A client's answer to a server request: accepted, with nothing to say (MCP Streamable
        // HTTP: 202 and no body), though we send no requests it could answer.
        Message::Response => {
            return Response::builder().status(StatusCode::ACCEPTED).body(Body::empty()).unwrap_or_default();
        }
        Message::Array => {
            return rpc_error(
                &Value::Null,
                &ApiError::new(
                    ErrorKind::InvalidRequest,
                    "batch requests are not supported; send one JSON-RPC object per POST",
                ),
            );
        }
        Message::Other => {
            return rpc_error(
                &Value::Null,
                &ApiError::new(ErrorKind::InvalidRequest, "body must be a JSON-RPC 2.0 request object"),
            );
        }
    };
    let id = match id {
        None => None,
        // MCP narrows JSON-RPC: a request's id is a string or an integer, never null (an
        // answer with a null id is indistinguishable from a parse error's). An integer past
        // 64 bits, or a fraction or exponent, could not be echoed unchanged.
        Some(id) if crate::layers::is_echoable_id(&id) => Some(id),
        Some(_) => {
            return rpc_error(
                &Value::Null,
                &ApiError::new(
                    ErrorKind::InvalidRequest,
                    "id must be a string or an integer of at most 64 bits (MCP: never null)",
                ),
            );
        }
    };
    let echo = id.clone().unwrap_or(Value::Null);
    if Text::as_str(&jsonrpc) != Some("2.0") {
        return rpc_error(&echo, &ApiError::new(ErrorKind::InvalidRequest, "jsonrpc must be \"2.0\""));
    }
    let Some(method) = Text::as_str(&method) else {
        return rpc_error(&echo, &ApiError::new(ErrorKind::InvalidRequest, "method must be a string"));
    };
    let Some(id) = id else {
        // A notification: nothing to answer.
        return Response::builder().status(StatusCode::ACCEPTED).body(Body::empty()).unwrap_or_default();
    };
    let params = match params {
        None | Some(Params::Null) => None,
        Some(Params::Object { name, protocol_version, arguments }) => Some((name, protocol_version, arguments)),
        Some(Params::Other) => return rpc_error(&id, &ApiError::invalid_params("params must be an object")),
    };
    let (name, protocol_version, arguments) = params.unwrap_or((None, None, None));
    let result = match method {
        "initialize" => Ok(rpc_result(&id, &initialize(state, Text::as_str(&protocol_version)).to_string())),
        "ping" => Ok(rpc_result(&id, "{}")),
        "tools/list" => Ok(rpc_result(&id, &state.tools_list_result)),
        // Boxed: the operations' futures are large, and unboxed they would make every
        // request's future (a `ping` too) as large, to be moved on each poll path.
        "tools/call" => {
            let call = ToolCall { name: Text::as_str(&name), arguments, body: bytes };
            Box::pin(call_tool(state, headers, principal, call)).await.and_then(|reply| tool_result(&id, reply))
        }
        _ => Err(ApiError::new(ErrorKind::MethodNotFound, format!("method {method:?} is not supported"))),
    };
    result.unwrap_or_else(|error| rpc_error(&id, &error))
}

/// The JSON-RPC answer `{structuredContent, content: [{type: "text", text}]}` around a
/// serialized UCP body: the body once as it is and once escaped as the text mirror (written by
/// the operation beside the body when it could, [`dispatch::Reply::text`]), never parsed, and
/// sent as pieces around the envelope's bytes rather than copied into one buffer ([`Pieces`]).
fn tool_result(id: &Value, reply: dispatch::Reply) -> Result<Response, ApiError> {
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    push_id(&mut head, id);
    head.extend_from_slice(b",\"result\":{\"structuredContent\":");
    let text = reply.text.unwrap_or_else(|| escape::escaped(&reply.body));
    let body = Pieces::new([
        Bytes::from(head),
        Bytes::from(reply.body),
        Bytes::from_static(b",\"content\":[{\"type\":\"text\",\"text\":\""),
        Bytes::from(text),
        Bytes::from_static(b"\"}]}}"),
    ]);
    let mut response = Response::new(Body::new(body));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

fn initialize(state: &AppState, requested: Option<&str>) -> Value {
    let requested = requested.unwrap_or_default();
    let version = MCP_VERSIONS.iter().find(|version| **version == requested).unwrap_or(&MCP_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "ucpd", "title": state.settings.business_name, "version": env!("CARGO_PKG_VERSION") },
        "instructions": "UCP merchant server. Every tools/call needs arguments.meta[\"ucp-agent\"].profile (your platform profile URL). Discovery: /.well-known/ucp."
    })
}

/// The tools of the operations whose capability we advertise, for `tools/list`.
pub fn tool_list(enabled: &[String]) -> Vec<Value> {
    Operation::ALL
        .into_iter()
        .filter(|operation| operations::is_enabled(enabled, operation.capability()))
        .map(|operation| {
            json!({
                "name": operation.name(),
                "title": operation.name().replace('_', " "),
                "description": operation.description(),
                "inputSchema": schemas::input_schema(operation),
                "outputSchema": schemas::output_schema(operation),
                "annotations": { "readOnlyHint": operation.read_only(), "openWorldHint": false },
            })
        })
        .collect()
}

/// A `tools/call`'s params as [`Message::parse`] read them, and the body they are in.
struct ToolCall<'a> {
    name: Option<&'a str>,
    arguments: Option<Arguments<'a>>,
    body: &'a Bytes,
}

async fn call_tool(
    state: &AppState,
    headers: &HeaderMap,
    principal: Option<Principal>,
    call: ToolCall<'_>,
) -> Result<dispatch::Reply, ApiError> {
    let name = call.name.ok_or_else(|| ApiError::invalid_params("params.name must name a tool"))?;
    let operation = Operation::from_name(name)
        .filter(|operation| operations::is_enabled(&state.settings.capabilities.enabled, operation.capability()))
        .ok_or_else(|| {
            ApiError::invalid_params(format!("unknown tool {name:?}; tools/list names the tools this server offers"))
        })?;
    let (meta, target, mut payloads) = match call.arguments {
        Some(Arguments::Object { meta, id, payloads }) => (meta, id, payloads),
        Some(Arguments::Other) => return Err(ApiError::invalid_params("params.arguments must be an object")),
        None => {
            return Err(ApiError::invalid_params("params.arguments is required (with meta[\"ucp-agent\"].profile)"));
        }
    };
    let (agent, meta_key) = match meta {
        Some(Meta::Object { agent, idempotency_key }) => (agent, idempotency_key),
        Some(Meta::Other) => return Err(ApiError::invalid_params("arguments.meta must be an object")),
        None => return Err(ApiError::invalid_params("arguments.meta is required, with meta[\"ucp-agent\"].profile")),
    };
    let profile = match agent {
        Some(Agent::Object { profile }) => match profile {
            Some(Text::Str(profile)) if !profile.is_empty() => profile.into_owned(),
            _ => {
                return Err(ApiError::invalid_params(
                    "arguments.meta[\"ucp-agent\"].profile must be the URL of your platform profile",
                ));
            }
        },
        _ => {
            return Err(ApiError::invalid_params(
                "arguments.meta[\"ucp-agent\"] is required: {\"profile\": \"https://…\"}",
            ));
        }
    };
    let idempotency_key = match meta_key {
        Some(Text::Str(key)) if idempotency::is_valid_key(&key) => Some(key.into_owned()),
        Some(_) => {
            return Err(ApiError::invalid_params(format!(
                "arguments.meta[\"idempotency-key\"] must be a string of 1-{} printable ASCII characters (a UUID)",
                idempotency::MAX_KEY_LEN
            )));
        }
        None if operation.requires_idempotency_key() => {
            return Err(ApiError::invalid_params(format!(
                "{name} requires arguments.meta[\"idempotency-key\"] (a UUID)"
            )));
        }
        // Google's HTTP Idempotency-Key is generated apart from the meta key: it stands in
        // only on a state-changing call without one, and is ignored on reads (checklist 46).
        None if !operation.read_only() => header_key(headers)?,
        None => None,
    };
    let target_id = if operation.takes_id() {
        match target {
            Some(Value::String(id)) if !id.is_empty() => Some(id),
            Some(_) => return Err(ApiError::invalid_params("arguments.id must be a non-empty string")),
            None => return Err(ApiError::invalid_params(format!("{name} requires arguments.id"))),
        }
    } else {
        None
    };
    let member = dispatch::payload_member(operation);
    let payload = member
        .and_then(|member| PAYLOAD_MEMBERS.iter().position(|known| *known == member))
        .and_then(|index| payloads[index].take())
        .map(|payload| payload.0);
    // What a key's fingerprint covers: all of the arguments, read again from the body only for
    // a call that is fingerprinted (a state-changing call with a key).
    let arguments = match &idempotency_key {
        Some(_) if !operation.read_only() => whole_arguments(call.body)?,
        _ => serde_json::Map::new(),
    };
    let invocation = dispatch::Invocation {
        operation,
        headers,
        meta_profile: Some(profile),
        idempotency_key,
        id: target_id,
        payload,
        payload_label: member.map(|member| format!("arguments.{member}")).unwrap_or_default(),
        arguments: idempotency::Arguments::Mcp(&arguments),
        principal,
        mirror: true,
    };
    dispatch::run(state, invocation).await
}

/// The HTTP `Idempotency-Key` header, when it stands in for a missing meta key.
/// A tool call's `params.arguments` as a parsed object, from the body it came in (which
/// [`Message::parse`] read as one JSON value with an object there).
fn whole_arguments(body: &Bytes) -> Result<serde_json::Map<String, Value>, ApiError> {
    let message: Value = serde_json::from_slice(body).map_err(ApiError::unreadable)?;
    match message {
        Value::Object(mut message) => match message.remove("params") {
            Some(Value::Object(mut params)) => match params.remove("arguments") {
                Some(Value::Object(arguments)) => Ok(arguments),
                _ => Err(ApiError::internal("the tool call's arguments are no longer an object")),
            },
            _ => Err(ApiError::internal("the tool call's params are no longer an object")),
        },
        _ => Err(ApiError::internal("the tool call is no longer an object")),
    }
}

fn header_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else { return Ok(None) };
    match value.to_str() {
        Ok(key) if idempotency::is_valid_key(key) => Ok(Some(key.to_owned())),
        _ => Err(ApiError::invalid_params(format!(
            "the Idempotency-Key header must be 1-{} printable ASCII characters (a UUID)",
            idempotency::MAX_KEY_LEN
        ))),
    }
}

/// A JSON-RPC success response around an already serialized `result`.
fn rpc_result(id: &Value, result: &str) -> Response {
    rpc_answer(id, result.len(), |answer| answer.extend_from_slice(result.as_bytes()))
}

/// A JSON-RPC success response whose `result` `write` appends, in one buffer.
fn rpc_answer(id: &Value, result_len: usize, write: impl FnOnce(&mut Vec<u8>)) -> Response {
    let mut body = Vec::with_capacity(result_len + 64);
    body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    push_id(&mut body, id);
    body.extend_from_slice(b",\"result\":");
    write(&mut body);
    body.push(b'}');
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// Appends a JSON-RPC id (a string, a number or null) as JSON.
fn push_id(body: &mut Vec<u8>, id: &Value) {
    match id {
        Value::String(id) => escape::json_string(body, id),
        // Written in place, as serde_json writes numbers: `to_string` formats into a `String`
        // of its own first. Writing to a `Vec` cannot fail.
        Value::Number(id) => {
            let _ = serde_json::to_writer(&mut *body, id);
        }
        _ => body.extend_from_slice(b"null"),
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;

    use super::*;

    /// The size of the future `call` returns, without calling it.
    fn future_size<'a, F: Future>(
        _call: impl FnOnce(&'a AppState, &'a HeaderMap, Option<Principal>, ToolCall<'a>) -> F,
    ) -> usize {
        std::mem::size_of::<F>()
    }

    /// `tools/call` boxes its call's future, so every call copies that future into the box:
    /// the operations that hold large futures (the purchase flow, a keyed call, a profile
    /// fetch) are boxed where they are awaited. Unboxed, this was 160 KB.
    #[test]
    fn a_tool_call_future_stays_small() {
        let size = future_size(call_tool);
        assert!(size <= 16 * 1024, "call_tool's future is {size} bytes");
    }

    /// Every operation's payload member is one the message reader keeps.
    #[test]
    fn every_payload_member_is_read() {
        for operation in Operation::ALL {
            if let Some(member) = dispatch::payload_member(operation) {
                assert!(PAYLOAD_MEMBERS.contains(&member), "{member} of {}", operation.name());
            }
        }
    }
}
