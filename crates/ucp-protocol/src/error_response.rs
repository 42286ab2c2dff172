//! The resource-less error response (`shopping/types/error_response.json`): a business
//! outcome with `ucp.status` `error`, its messages, and where a buyer can continue.

use serde::{Deserialize, Serialize};

use crate::envelope::Ucp;
use crate::message::Message;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
