//! One delivery attempt: the request order.md §3 describes, signed with our key (RFC 9421
//! covering `@method`, `@authority`, `@path`, `content-type`, `content-digest`, `ucp-agent`,
//! `webhook-id` and `webhook-timestamp`, so a captured delivery cannot be replayed as another
//! event), sent through the SSRF guard with a timeout.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use ucp_domain::webhook::WebhookEvent;
use ucp_protocol::envelope::Ucp;

use crate::keys::SigningKey;
use crate::signatures::base::Target;
use crate::ssrf::{Dns, error_chain};

/// The components our webhook signatures cover, in order.
pub const COVERED: [&str; 8] = [
    "@method",
    "@authority",
    "@path",
    "content-type",
    "content-digest",
    "ucp-agent",
    "webhook-id",
    "webhook-timestamp",
];

/// What an attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// The platform answered 2xx.
    Delivered { status: u16 },
    /// Worth trying again later: a non-2xx answer, a timeout, a refused or unresolvable host.
    Failed { status: Option<u16>, error: String },
    /// Can never succeed as it is (the URL is not one we may post to): dead-lettered now.
    Refused { error: String },
}

/// Sends webhook requests: our signing key, our profile URL, the guarded client.
#[derive(Clone)]
pub struct Sender {
    client: reqwest::Client,
    dns: Dns,
    allow_loopback: bool,
    key: SigningKey,
    /// `UCP-Agent`: `profile="<our /.well-known/ucp>"`.
    agent: HeaderValue,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Sender").field("kid", &self.key.kid).finish_non_exhaustive()
    }
}

impl Sender {
    pub(crate) fn new(
        guard: (Dns, bool),
        key: SigningKey,
        base_url: &str,
        timeout: Duration,
    ) -> Result<Sender, String> {
        let (dns, allow_loopback) = guard;
        let client = dns.guarded_client(allow_loopback, timeout)?;
        let agent = HeaderValue::from_str(&format!("profile=\"{base_url}/.well-known/ucp\""))
            .map_err(|_| format!("the public URL {base_url:?} cannot appear in a UCP-Agent header"))?;
        Ok(Sender { client, dns, allow_loopback, key, agent })
    }

    /// The body of `event`: its order snapshot under a `ucp` envelope that lists only the order
    /// capability (checklist 158), at the versions negotiated when the order was placed.
    ///
    /// The stored snapshot is spliced in as it is (what `OrderBody` would serialize: the
    /// envelope, then the order's own fields), so an attempt never parses the order again.
    pub fn body(event: &WebhookEvent) -> Result<Vec<u8>, String> {
        let target = &event.target;
        let ucp = Ucp::success(&target.version, [(target.capability.as_str(), target.capability_version.as_str())]);
        let fields = event
            .order_json
            .trim()
            .strip_prefix('{')
            .ok_or_else(|| "the stored order is not a JSON object".to_owned())?
            .trim_start();
        let mut body = Vec::with_capacity(event.order_json.len() + 160);
        body.extend_from_slice(br#"{"ucp":"#);
        serde_json::to_writer(&mut body, &ucp).map_err(|error| format!("rendering: {error}"))?;
        if !fields.starts_with('}') {
            body.push(b',');
        }
        body.extend_from_slice(fields.as_bytes());
        Ok(body)
    }

    /// Posts `event` once, signed at `now` (Unix seconds).
    pub async fn deliver(&self, event: &WebhookEvent, now: i64) -> Delivery {
        let url = match self.check_url(&event.target.url) {
            Ok(url) => url,
            Err(error) => return Delivery::Refused { error },
        };
        if let Some(host) = url.host_str()
            && let Err(error) = self.dns.vet(host, self.allow_loopback).await
        {
            let error = format!("webhook {}", error.message);
            // An address the guard refuses is refused for good; a name may resolve elsewhere.
            if matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))) {
                return Delivery::Refused { error };
            }
            return Delivery::Failed { status: None, error };
        }
        let body = match Self::body(event) {
            Ok(body) => body,
            Err(error) => return Delivery::Refused { error },
        };
        let headers = match self.headers(event, &url, &body, now) {
            Ok(headers) => headers,
            Err(error) => return Delivery::Refused { error },
        };
        match self.client.post(url).headers(headers).body(body).send().await {
            Ok(response) if response.status().is_success() => {
                Delivery::Delivered { status: response.status().as_u16() }
            }
            Ok(response) => {
                let status = response.status();
                let error = if status.is_redirection() {
                    format!("answered {status}; webhooks do not follow redirects")
                } else {
                    format!("answered {status}")
                };
                Delivery::Failed { status: Some(status.as_u16()), error }
            }
            Err(error) if error.is_timeout() => Delivery::Failed { status: None, error: "timed out".into() },
            Err(error) => Delivery::Failed { status: None, error: error_chain(&error) },
        }
    }

    /// https, or http to loopback in development mode; no user info.
    fn check_url(&self, text: &str) -> Result<url::Url, String> {
        let url = url::Url::parse(text).map_err(|_| format!("webhook_url {text:?} is not an absolute URL"))?;
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!("webhook_url {text:?} must not carry user info"));
        }
        let loopback = match url.host() {
            Some(url::Host::Domain(domain)) => domain == "localhost",
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            None => return Err(format!("webhook_url {text:?} has no host")),
        };
        match url.scheme() {
            "https" => Ok(url),
            "http" if self.allow_loopback && loopback => Ok(url),
            _ => Err(format!("webhook_url {text:?} must use https")),
        }
    }

    fn headers(&self, event: &WebhookEvent, url: &url::Url, body: &[u8], now: i64) -> Result<HeaderMap, String> {
        let mut headers = HeaderMap::new();
        let value = |text: String| HeaderValue::from_str(&text).map_err(|_| format!("header value {text:?}"));
        headers.insert(HeaderName::from_static("content-type"), HeaderValue::from_static("application/json"));
        headers.insert(HeaderName::from_static("ucp-agent"), self.agent.clone());
        headers.insert(HeaderName::from_static("webhook-id"), value(event.id.clone())?);
        headers.insert(HeaderName::from_static("webhook-timestamp"), value((event.created_at_ms / 1000).to_string())?);
        let host = url.host_str().unwrap_or_default();
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        };
        let target = Target::Request { method: "POST", authority: &authority, path: url.path(), query: url.query() };
        let mut components = COVERED.to_vec();
        if url.query().is_some() {
            components.insert(3, "@query");
        }
        if !crate::signatures::sign_request_with(&self.key, target, &mut headers, body, &components, now) {
            return Err("the webhook could not be signed".into());
        }
        Ok(headers)
    }
}
