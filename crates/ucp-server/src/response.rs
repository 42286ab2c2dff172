//! Pieces every UCP response body shares: the `ucp` envelope and the resource-less error
//! response (`shopping/types/error_response.json`).

use serde_json::{Value, json};

/// The negotiated version and the capabilities relevant to one operation.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub version: String,
    /// (capability name, version), only those negotiated and relevant to the operation.
    pub capabilities: Vec<(String, String)>,
}

impl Envelope {
    /// The `ucp` member of a successful response.
    pub fn ucp(&self) -> Value {
        let capabilities: serde_json::Map<String, Value> =
            self.capabilities.iter().map(|(name, version)| (name.clone(), json!([{ "version": version }]))).collect();
        json!({ "version": self.version, "status": "success", "capabilities": capabilities })
    }
}

/// A business outcome with no resource: `ucp.status` is `error` and one unrecoverable message.
pub fn error_response(version: &str, code: &str, content: &str, continue_url: Option<&str>) -> Value {
    let mut body = json!({
        "ucp": { "version": version, "status": "error" },
        "messages": [{ "type": "error", "code": code, "content": content, "severity": "unrecoverable" }],
    });
    if let Some(url) = continue_url {
        body["continue_url"] = format!("{url}/").into();
    }
    body
}
