//! The `ucp` member every response body carries: the negotiated version, whether the body is
//! a resource or an error response, and the capabilities relevant to the operation.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

/// `ucp.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Success,
    Error,
}

/// One version of a capability in `ucp.capabilities`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CapabilityVersion {
    pub version: String,
}

/// The `ucp` member of a response body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ucp {
    pub version: String,
    pub status: Status,
    /// Capability name → versions; absent on an error response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<BTreeMap<String, Vec<CapabilityVersion>>>,
    /// The payment handlers offered for a checkout (`payment_handler.json` entries by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_handlers: Option<serde_json::Value>,
}

impl Ucp {
    /// The envelope of a successful response naming `capabilities` (name, version).
    pub fn success<'a>(version: &str, capabilities: impl IntoIterator<Item = (&'a str, &'a str)>) -> Ucp {
        let capabilities = capabilities
            .into_iter()
            .map(|(name, version)| (name.to_owned(), vec![CapabilityVersion { version: version.to_owned() }]))
            .collect();
        Ucp {
            version: version.to_owned(),
            status: Status::Success,
            capabilities: Some(capabilities),
            payment_handlers: None,
        }
    }

    /// The envelope of an error response: version and status only.
    pub fn error(version: &str) -> Ucp {
        Ucp { version: version.to_owned(), status: Status::Error, capabilities: None, payment_handlers: None }
    }
}

/// A `ucp` member serialized once, with its escape as the inside of a JSON string (for MCP's
/// `content[0].text` mirror). The envelope is settled per platform, so a catalog answer copies
/// both rather than serializing and escaping the member again (about 1,800 instructions of a
/// cached `get_product`).
#[derive(Debug, Clone)]
pub struct RenderedUcp {
    json: Box<RawValue>,
    escaped: Box<[u8]>,
}

impl RenderedUcp {
    pub fn new(ucp: &Ucp) -> RenderedUcp {
        // A wire type serializes infallibly (string keys, no non-finite floats).
        let json = serde_json::value::to_raw_value(ucp).unwrap_or_else(|_| RawValue::NULL.to_owned());
        let escaped = crate::escape::escaped(json.get().as_bytes()).into_boxed_slice();
        RenderedUcp { json, escaped }
    }

    /// The member's JSON.
    pub fn json(&self) -> &RawValue {
        &self.json
    }

    /// The member's JSON escaped, without quotes.
    pub fn escaped(&self) -> &[u8] {
        &self.escaped
    }
}

impl Serialize for RenderedUcp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_and_error_envelopes_serialize_as_before() {
        let ucp = Ucp::success("2026-04-08", [("dev.ucp.shopping.cart", "2026-04-08")]);
        assert_eq!(
            serde_json::to_value(&ucp).unwrap(),
            serde_json::json!({
                "version": "2026-04-08",
                "status": "success",
                "capabilities": { "dev.ucp.shopping.cart": [{ "version": "2026-04-08" }] }
            })
        );
        let ucp = Ucp::error("2026-04-08");
        assert_eq!(serde_json::to_string(&ucp).unwrap(), r#"{"version":"2026-04-08","status":"error"}"#);
    }
}
