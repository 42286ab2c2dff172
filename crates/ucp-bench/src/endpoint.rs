//! UCP calls over MCP (`tools/call`) or REST, each ending in the UCP body or a failure kind.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cli::CommonArgs;
use crate::driver::client;

/// The outcome of one UCP call: the UCP body, or a failure kind.
pub(crate) type CallResult = Result<Value, String>;

pub(crate) struct Endpoint {
    http: reqwest::Client,
    mcp_url: String,
    rest_base: String,
    profile: String,
    agent_header: String,
    signer: Option<crate::sign::Signer>,
}

impl Endpoint {
    pub(crate) fn new(common: &CommonArgs, profile: &str) -> anyhow::Result<Self> {
        let base = common.url.trim_end_matches('/');
        Ok(Endpoint {
            http: client(common)?,
            mcp_url: format!("{base}{}", common.mcp_path),
            rest_base: format!("{base}{}", common.rest_path),
            profile: profile.to_owned(),
            agent_header: format!("profile=\"{profile}\""),
            signer: common.sign.then(crate::sign::Signer::new),
        })
    }

    /// A `tools/call` whose UCP body is `result.structuredContent`.
    pub(crate) async fn mcp_tool(&self, name: &str, mut arguments: Value, idempotent: bool) -> CallResult {
        let mut meta = json!({ "ucp-agent": { "profile": self.profile } });
        if idempotent {
            meta["idempotency-key"] = Value::String(uuid::Uuid::new_v4().to_string());
        }
        arguments["meta"] = meta;
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
        let body = body.to_string();
        let mut request = self.http.post(&self.mcp_url).header("content-type", "application/json");
        if let Some(signer) = &self.signer {
            // Google's shape: a UCP-Agent header and an Idempotency-Key on every POST, signed.
            let key = uuid::Uuid::new_v4().to_string();
            for (name, value) in signer.headers("POST", &self.mcp_url, Some(body.as_bytes()), Some(&key)) {
                request = request.header(name, value);
            }
            request = request.header("ucp-agent", &self.agent_header).header("idempotency-key", key);
        }
        let response = request.body(body).send().await.map_err(transport_kind)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(transport_kind)?;
        if status != StatusCode::OK {
            return Err(format!("http_{}", status.as_u16()));
        }
        let mut value: Value = serde_json::from_slice(&bytes).map_err(|_| "bad_json".to_owned())?;
        if let Some(error) = value.get("error") {
            return Err(format!("rpc_{}", error["code"].as_i64().unwrap_or(0)));
        }
        let structured = value["result"]["structuredContent"].take();
        if structured.is_null() {
            return Err("no_structured_content".into());
        }
        Ok(structured)
    }

    /// A REST call whose UCP body is the response body.
    pub(crate) async fn rest(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        idempotent: bool,
    ) -> CallResult {
        let url = format!("{}{path}", self.rest_base);
        let mut request = self
            .http
            .request(method.clone(), &url)
            .header("ucp-agent", &self.agent_header)
            .header("request-id", uuid::Uuid::new_v4().to_string());
        let key = (idempotent || self.signer.is_some()).then(|| uuid::Uuid::new_v4().to_string());
        if let Some(key) = &key {
            request = request.header("idempotency-key", key);
        }
        let body = body.map(Value::to_string);
        if let Some(signer) = &self.signer {
            for (name, value) in
                signer.headers(method.as_str(), &url, body.as_deref().map(str::as_bytes), key.as_deref())
            {
                request = request.header(name, value);
            }
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body);
        }
        let response = request.send().await.map_err(transport_kind)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(transport_kind)?;
        let value: Option<Value> = serde_json::from_slice(&bytes).ok();
        if !status.is_success() {
            // A REST protocol error is {code, content}; a UCP error response keeps its messages.
            let code = value
                .as_ref()
                .and_then(|v| v.get("code").and_then(Value::as_str).map(str::to_owned).or_else(|| first_error_code(v)))
                .unwrap_or_default();
            return Err(format!("http_{}{}{code}", status.as_u16(), if code.is_empty() { "" } else { "_" }));
        }
        value.ok_or_else(|| "bad_json".to_owned())
    }
}

pub(crate) fn transport_kind(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "transport_timeout".into()
    } else if error.is_connect() {
        "transport_connect".into()
    } else {
        "transport_other".into()
    }
}

/// The code of the first error message of a UCP body, if the body is an error response.
pub(crate) fn first_error_code(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    let error = messages.iter().find(|m| m["type"] == "error")?;
    Some(error["code"].as_str().unwrap_or("error_message").to_owned())
}

/// A UCP body that is the resource-less error response (`ucp.status: "error"`).
pub(crate) fn ucp_error(body: &Value) -> Option<String> {
    if body["ucp"]["status"] == "error" {
        return Some(first_error_code(body).unwrap_or_else(|| "ucp_error".into()));
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn error_codes_come_from_error_messages() {
        let body = json!({ "ucp": { "status": "error" }, "messages": [{ "type": "error", "code": "out_of_stock" }] });
        assert_eq!(ucp_error(&body).as_deref(), Some("out_of_stock"));
        assert_eq!(ucp_error(&json!({ "ucp": { "status": "success" } })), None);
    }
}
