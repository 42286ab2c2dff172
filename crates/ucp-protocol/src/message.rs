//! UCP messages (`shopping/types/message.json`): what is wrong or worth knowing about a
//! resource, and where.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ucp_domain::checkout as domain;

/// `type` of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageType {
    Error,
    Warning,
    Info,
}

/// `severity` of an error message: who can resolve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Recoverable,
    RequiresBuyerInput,
    RequiresBuyerReview,
    Unrecoverable,
}

/// One message on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    #[serde(rename = "type")]
    pub kind: MessageType,
    #[serde(default)]
    pub code: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// JSONPath of the member the message is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A warning's text format; left out for plain text, the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<ContentType>,
    /// A warning's rendering contract: `notice` (the default, left out) or `disclosure` (the
    /// platform must display it near `path` and must not hide it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presentation: Option<String>,
    /// A warning's required visual element (a warning symbol, an energy class label).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_url: Option<String>,
    /// Where to read more about a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// `content_type` of a warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContentType {
    Plain,
    Markdown,
}

impl Message {
    /// An error nobody can resolve by changing the request.
    pub fn unrecoverable(code: &str, content: &str) -> Message {
        Message {
            kind: MessageType::Error,
            code: code.to_owned(),
            content: content.to_owned(),
            severity: Some(Severity::Unrecoverable),
            path: None,
            content_type: None,
            presentation: None,
            image_url: None,
            url: None,
        }
    }
}

impl From<domain::MessageKind> for MessageType {
    fn from(kind: domain::MessageKind) -> MessageType {
        match kind {
            domain::MessageKind::Error => MessageType::Error,
            domain::MessageKind::Warning => MessageType::Warning,
            domain::MessageKind::Info => MessageType::Info,
        }
    }
}

impl From<domain::Severity> for Severity {
    fn from(severity: domain::Severity) -> Severity {
        match severity {
            domain::Severity::Recoverable => Severity::Recoverable,
            domain::Severity::RequiresBuyerInput => Severity::RequiresBuyerInput,
            domain::Severity::RequiresBuyerReview => Severity::RequiresBuyerReview,
            domain::Severity::Unrecoverable => Severity::Unrecoverable,
        }
    }
}

impl From<&domain::Message> for Message {
    fn from(message: &domain::Message) -> Message {
        let display = message.disclosure.as_deref();
        Message {
            kind: message.kind.into(),
            code: message.code.clone(),
            content: message.content.clone(),
            severity: message.severity.map(Severity::from),
            path: message.path.clone(),
            content_type: display.filter(|display| display.markdown).map(|_| ContentType::Markdown),
            presentation: display.map(|_| "disclosure".to_owned()),
            image_url: display.and_then(|display| display.image_url.clone()),
            url: display.and_then(|display| display.url.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_messages_render_with_type_severity_and_path() {
        let message = domain::Message::error(
            "missing",
            domain::Severity::RequiresBuyerInput,
            "Email is missing",
            Some("$.buyer.email".into()),
        );
        assert_eq!(
            serde_json::to_value(Message::from(&message)).unwrap(),
            serde_json::json!({
                "type": "error", "code": "missing", "content": "Email is missing",
                "severity": "requires_buyer_input", "path": "$.buyer.email"
            })
        );
        let info = domain::Message::info("note", "Shipping is free", None);
        assert_eq!(
            serde_json::to_string(&Message::from(&info)).unwrap(),
            r#"{"type":"info","code":"note","content":"Shipping is free"}"#
        );
        let display = domain::WarningDisplay {
            markdown: true,
            image_url: Some("https://shop.example/p65.png".into()),
            url: Some("https://www.p65warnings.ca.gov".into()),
        };
        let disclosure = domain::Message::disclosure("prop65", "**WARNING**", display.into(), "$.product".into());
        assert_eq!(
            serde_json::to_value(Message::from(&disclosure)).unwrap(),
            serde_json::json!({
                "type": "warning", "code": "prop65", "content": "**WARNING**", "path": "$.product",
                "content_type": "markdown", "presentation": "disclosure",
                "image_url": "https://shop.example/p65.png", "url": "https://www.p65warnings.ca.gov"
            })
        );
        let plain = domain::Message::disclosure("allergens", "Contains nuts", Default::default(), "$".into());
        assert_eq!(
            serde_json::to_string(&Message::from(&plain)).unwrap(),
            r#"{"type":"warning","code":"allergens","content":"Contains nuts","path":"$","presentation":"disclosure"}"#
        );
    }
}
