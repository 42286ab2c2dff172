//! The resource-less error response (`shopping/types/error_response.json`): a business
//! outcome with `ucp.status` `error`, its messages, and where a buyer can continue.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ucp_domain::commerce::Refusal;

use crate::envelope::Ucp;
use crate::message::Message;

/// `ucp.status` is `error`; at least one message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorResponse {
    pub ucp: Ucp,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_url: Option<String>,
}

impl ErrorResponse {
    /// One unrecoverable error message under protocol `version`.
    pub fn unrecoverable(version: &str, code: &str, content: &str, continue_url: Option<String>) -> ErrorResponse {
        ErrorResponse { ucp: Ucp::error(version), messages: vec![Message::unrecoverable(code, content)], continue_url }
    }

    /// A business outcome of the core; the buyer can carry on at the shop's root
    /// (`base_url` + `/`).
    pub fn refusal(version: &str, refusal: &Refusal, base_url: Option<&str>) -> ErrorResponse {
        ErrorResponse::unrecoverable(
            version,
            refusal.code.as_str(),
            &refusal.content,
            base_url.map(|url| format!("{url}/")),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_like_the_official_shape() {
        let body = ErrorResponse::unrecoverable("2026-04-08", "not_found", "No such cart", None);
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            serde_json::json!({
                "ucp": { "version": "2026-04-08", "status": "error" },
                "messages": [{ "type": "error", "code": "not_found", "content": "No such cart", "severity": "unrecoverable" }]
            })
        );
    }
}
