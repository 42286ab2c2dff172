//! Pieces every UCP response body shares: the `ucp` envelope and the resource-less error
//! response, rendered with the wire types of `ucp_protocol`.

use serde_json::Value;
use ucp_protocol::envelope::{RenderedUcp, Ucp};
use ucp_protocol::error_response::ErrorResponse;

/// The negotiated version and the capabilities relevant to one operation.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub version: String,
    /// (capability name, version), only those negotiated and relevant to the operation.
    pub capabilities: Vec<(String, String)>,
    /// The `ucp` member of a successful response, serialized once: the envelope is settled per
    /// cached platform profile ([`crate::terms`]), so a catalog answer copies it.
    rendered: RenderedUcp,
}

impl Envelope {
    pub fn new(version: String, capabilities: Vec<(String, String)>) -> Envelope {
        let wire = Ucp::success(&version, capabilities.iter().map(|(name, version)| (name.as_str(), version.as_str())));
        Envelope { version, capabilities, rendered: RenderedUcp::new(&wire) }
    }

    /// The typed `ucp` member of a successful response.
    pub fn wire(&self) -> Ucp {
        Ucp::success(&self.version, self.capabilities.iter().map(|(name, version)| (name.as_str(), version.as_str())))
    }

    /// The `ucp` member of a successful response.
    pub fn ucp(&self) -> Value {
        to_value(&self.wire())
    }

    /// The `ucp` member of a successful response, as JSON and its escape, made with the envelope.
    pub fn ucp_json(&self) -> &RenderedUcp {
        &self.rendered
    }
}

/// A business outcome with no resource: `ucp.status` is `error` and one unrecoverable message.
/// `continue_url` is the business's base URL; the buyer continues at its root.
pub fn error_response(version: &str, code: &str, content: &str, continue_url: Option<&str>) -> Value {
    let body = ErrorResponse::unrecoverable(version, code, content, continue_url.map(|url| format!("{url}/")));
    to_value(&body)
}

/// Wire types serialize infallibly (string keys, no non-finite floats); `Null` is unreachable.
fn to_value(body: &impl serde::Serialize) -> Value {
    serde_json::to_value(body).unwrap_or(Value::Null)
}

/// What an operation answered: the UCP body (resource or error response), and whether the
/// call created the resource (REST answers 201 only then).
#[derive(Debug)]
pub struct Reply {
    /// The body's JSON, UTF-8 (made from a `String` or written by serde_json and byte-exact
    /// copies of its output): bytes, so an answer is never checked for UTF-8 on its way to the
    /// wire (a scan of every byte: a tenth of a cached `search_catalog`).
    pub body: Vec<u8>,
    pub created: bool,
    /// The body as the inside of a JSON string (MCP's `content[0].text`), when the operation
    /// wrote it alongside (a catalog answer to a transport that mirrors: see
    /// [`crate::dispatch::Invocation::mirror`]); the transport escapes the body otherwise.
    pub text: Option<Vec<u8>>,
}

impl From<String> for Reply {
    fn from(body: String) -> Reply {
        Reply { body: body.into_bytes(), created: false, text: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rendered_envelope_is_the_serialized_one() {
        let envelope = Envelope::new(
            "2026-04-08".to_owned(),
            vec![
                ("dev.ucp.shopping.catalog.search".to_owned(), "2026-04-08".to_owned()),
                ("dev.ucp.shopping.catalog.lookup".to_owned(), "2026-04-08".to_owned()),
            ],
        );
        let json = envelope.ucp_json().json().get();
        let rendered: Value = serde_json::from_str(json).unwrap();
        assert_eq!(rendered, envelope.ucp());
        assert_eq!(json, serde_json::to_string(&envelope.wire()).unwrap());
        assert_eq!(rendered["version"], "2026-04-08");
        // The escape is the inside of the JSON string of the JSON, as the MCP mirror holds it.
        let quoted = serde_json::to_string(json).unwrap();
        assert_eq!(envelope.ucp_json().escaped(), &quoted.as_bytes()[1..quoted.len() - 1]);
    }
}
