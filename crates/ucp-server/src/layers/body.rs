//! The body layer: reads the request body once, up to `http.max_body_bytes`, and hands it on
//! as [`RawBody`] (the bytes as received, before any JSON parsing: what a signature or a
//! content digest covers). On MCP it also recovers the JSON-RPC id into [`RpcId`], so every
//! later error can echo it.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::Response;
use futures_util::{FutureExt, StreamExt};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::{Binding, Scope};
use crate::error::{ApiError, ErrorKind};

/// The request body as received, read by the body layer. The request's own body is the same
/// bytes again, so extractors (`Form`) still work.
#[derive(Debug, Clone)]
pub struct RawBody(pub Bytes);

/// The JSON-RPC id of an MCP request, once known: the panic layer installs an empty slot, and
/// the body layer (or an early refusal's peek) fills it with the body. `null` until then, and
/// for bodies without an id we echo ([`is_echoable_id`]). The body is kept (a reference to the same bytes)
/// and scanned for its id only when something asks for it: a request answered in full never
/// pays for a second parse of its body.
#[derive(Debug, Clone, Default)]
pub struct RpcId(Arc<Slot>);

#[derive(Debug, Default)]
struct Slot {
    body: OnceLock<Bytes>,
    id: OnceLock<Value>,
}

impl RpcId {
    /// The id to echo for `request`: `null` when unknown.
    pub fn of<B>(request: &axum::http::Request<B>) -> Value {
        request.extensions().get::<RpcId>().map(RpcId::get).unwrap_or(Value::Null)
    }

    pub fn get(&self) -> Value {
        match self.0.body.get() {
            Some(body) => self.0.id.get_or_init(|| scan_id(body)).clone(),
            None => Value::Null,
        }
    }

    /// Whether the body (or its first bytes) the id is to be found in was recorded already.
    pub fn is_known(&self) -> bool {
        self.0.body.get().is_some()
    }

    /// Records the body the id is to be found in (a whole body or its first bytes); the first
    /// call wins.
    pub fn record(&self, bytes: &Bytes) {
        let _ = self.0.body.set(bytes.clone());
    }
}

/// The step: the request with its [`RawBody`], or the refusal.
pub(super) async fn read(scope: &Scope, request: Request) -> super::scope::Step {
    let limit = scope.state.settings.http.max_body_bytes;
    let (mut parts, body) = request.into_parts();
    let slot = parts.extensions.get_or_insert_default::<RpcId>().clone();
    // The whole body within `limits.connections.body_read_timeout_ms` (slowloris): a stalled
    // upload gives back its place among the requests in flight.
    let deadline = std::time::Duration::from_millis(scope.state.settings.limits.connections.body_read_timeout_ms);
    // A small body has usually arrived with the headers: read what is there first, and arm the
    // timer (a clock read, and a timer registered and removed) only for a body still on its way.
    let mut collecting = std::pin::pin!(collect(body, limit));
    let arrived = collecting.as_mut().now_or_never();
    let read = match arrived {
        Some(read) => Ok(read),
        None => tokio::time::timeout(deadline, collecting).await,
    };
    let read = match read {
        Ok(read) => read,
        Err(_) => {
            let error = ApiError::new(
                ErrorKind::InvalidRequest,
                format!("the request body did not arrive within {} ms", deadline.as_millis()),
            );
            return Err(super::render(scope.binding, &slot.get(), &error));
        }
    };
    if scope.binding == Binding::Mcp {
        match &read {
            Ok(bytes) | Err(Unread::TooLarge(bytes)) => slot.record(bytes),
            Err(Unread::Failed) => slot.record(&Bytes::new()),
        }
    }
    let error = match read {
        Ok(bytes) => {
            parts.extensions.insert(RawBody(bytes.clone()));
            return Ok(Request::from_parts(parts, Body::from(bytes)));
        }
        Err(Unread::TooLarge(_)) => {
            ApiError::new(ErrorKind::PayloadTooLarge, format!("request body is larger than {limit} bytes"))
        }
        Err(Unread::Failed) => read_error(),
    };
    Err(super::render::render(scope.binding, &slot.get(), &error))
}

/// How much of a refused MCP request's body is read to find its id, and for how long.
const PEEK_BYTES: usize = 4 * 1024;
const PEEK_TIME: Duration = Duration::from_millis(100);

/// Refuses `request` in the binding's shape, from any layer. On MCP the id is echoed even when
/// the body layer has not run yet: it is then looked for in the body's first
/// [`PEEK_BYTES`], read for at most [`PEEK_TIME`] (so a refusal never costs a full read).
pub async fn reject(binding: Binding, request: Request, error: &ApiError) -> Response {
    let slot = request.extensions().get::<RpcId>().cloned().unwrap_or_default();
    if binding == Binding::Mcp && !slot.is_known() {
        let prefix = match tokio::time::timeout(PEEK_TIME, collect(request.into_body(), PEEK_BYTES)).await {
            Ok(Ok(bytes) | Err(Unread::TooLarge(bytes))) => bytes,
            Ok(Err(Unread::Failed)) | Err(_) => Bytes::new(),
        };
        slot.record(&prefix);
    }
    super::render::render(binding, &slot.get(), error)
}

fn read_error() -> ApiError {
    ApiError::new(ErrorKind::InvalidRequest, "the request body could not be read")
}

pub(super) enum Unread {
    /// Over the limit: the bytes read so far (at most the limit and one frame).
    TooLarge(Bytes),
    /// The connection failed mid-body.
    Failed,
}

/// The body, up to `limit` bytes.
pub(super) async fn collect(body: Body, limit: usize) -> Result<Bytes, Unread> {
    let mut stream = body.into_data_stream();
    let mut first: Option<Bytes> = None;
    let mut buffer: Vec<u8> = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| Unread::Failed)?;
        let total = first.as_ref().map_or(buffer.len(), Bytes::len) + chunk.len();
        // One frame (the usual case) is kept as is, without a copy.
        match first.take() {
            None if buffer.is_empty() => first = Some(chunk),
            None => buffer.extend_from_slice(&chunk),
            Some(previous) => {
                buffer.extend_from_slice(&previous);
                buffer.extend_from_slice(&chunk);
            }
        }
        if total > limit {
            return Err(Unread::TooLarge(first.unwrap_or_else(|| Bytes::from(buffer))));
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(buffer)))
}

/// The top-level `id` of a JSON-RPC request when it is one we echo ([`is_echoable_id`]), `null`
/// otherwise. Works on a prefix of the body too: the other members are skipped without being
/// built. Of an id named twice, the last, as the endpoint's parse keeps.
pub(super) fn scan_id(bytes: &[u8]) -> Value {
    let mut found = None;
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    // A prefix, or a body that is not an object, ends in an error after (or instead of) the id.
    let _ = IdSeed(&mut found).deserialize(&mut deserializer);
    found.filter(is_echoable_id).unwrap_or(Value::Null)
}

/// Whether `id` is a JSON-RPC id we take and can echo unchanged: a string, or an integer of at
/// most 64 bits (MCP: a string or an integer, never null). A fraction, an exponent or a longer
/// integer would come back re-encoded (`1e3` as `1000.0`), so they are not ids to us.
pub(crate) fn is_echoable_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(number) => number.is_i64() || number.is_u64(),
        _ => false,
    }
}

struct IdSeed<'a>(&'a mut Option<Value>);

impl<'de> DeserializeSeed<'de> for IdSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IdSeed<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a JSON-RPC request object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "id" {
                *self.0 = Some(map.next_value()?);
                continue;
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_id_is_found_in_whole_bodies_and_prefixes() {
        assert_eq!(scan_id(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#), json!(7));
        assert_eq!(scan_id(br#"{"params":{"id":"inner"},"id":"outer"}"#), json!("outer"));
        assert_eq!(scan_id(br#"{"jsonrpc":"2.0","id":"late","method":"ping","params":{"pad":"xx"#), json!("late"));
        assert_eq!(scan_id(br#"{"i\u0064":3}"#), json!(3));
        assert_eq!(scan_id(br#"{"id":1.5,"id":4,"method":"ping"}"#), json!(4), "the last, as the endpoint reads it");
        for no_id in [
            &br#"{"id":{"a":1}}"#[..],
            br#"{"id":null}"#,
            br#"{"id":1.5}"#,
            br#"{"id":1e3}"#,
            br#"{"id":-0}"#,
            br#"{"id":123456789012345678901234567890}"#,
            b"[1]",
            b"{",
            b"",
            br#"{"method":"ping"}"#,
        ] {
            assert_eq!(scan_id(no_id), Value::Null, "{}", String::from_utf8_lossy(no_id));
        }
    }

    #[tokio::test]
    async fn bodies_over_the_limit_keep_their_first_bytes() {
        let body = Body::from(vec![b'x'; 100]);
        assert!(matches!(collect(body, 10).await, Err(Unread::TooLarge(prefix)) if prefix.len() == 100));
        assert_eq!(collect(Body::from("abc"), 3).await.ok(), Some(Bytes::from("abc")));
        assert_eq!(collect(Body::empty(), 0).await.ok(), Some(Bytes::new()));
    }
}
