//! Payment handlers: what we advertise and how a complete turns a token into money.
//!
//! `PaymentProcessor` is the port; the sandbox handler answers deterministically by token,
//! and the HTTP processor calls an external service with a timeout and retries (the same
//! idempotency key on every try, so a retry never charges twice). Raw credentials never
//! leave this module: they are neither stored nor logged.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::config::{HttpProcessorSettings, Settings};

/// The sandbox handler's name and instance id.
pub const SANDBOX_HANDLER: &str = "dev.ucpd.sandbox";
pub const SANDBOX_ID: &str = "sandbox";
pub const TOKEN_SUCCESS: &str = "tok_sandbox_success";
pub const TOKEN_DECLINE: &str = "tok_sandbox_decline";
pub const TOKEN_3DS: &str = "tok_sandbox_3ds";

/// What a processor is asked to do.
#[derive(Debug, Clone)]
pub struct Charge {
    pub checkout_id: String,
    pub amount: i64,
    pub currency: String,
    pub token: String,
    /// Same value on every retry of one complete.
    pub idempotency_key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Approved {
        reference: String,
    },
    Declined {
        reason: String,
    },
    /// The buyer must authenticate (3-D Secure); `reference` names the pending challenge.
    RequiresAction {
        reference: String,
    },
}

#[derive(Debug, thiserror::Error)]
#[error("payment processor unavailable: {0}")]
pub struct ProcessorUnavailable(pub String);

#[async_trait]
pub trait PaymentProcessor: Send + Sync + std::fmt::Debug {
    /// Authorizes and captures `charge`.
    async fn charge(&self, charge: &Charge) -> Result<Outcome, ProcessorUnavailable>;
    /// Completes a charge that needed buyer authentication, once the buyer passed it.
    async fn confirm(&self, reference: &str, charge: &Charge) -> Result<Outcome, ProcessorUnavailable>;
    /// Gives back an approved charge that could not become an order (stock ran out).
    async fn refund(&self, reference: &str) -> Result<(), ProcessorUnavailable>;
}

/// One advertised handler instance and the processor behind it.
#[derive(Debug, Clone)]
pub struct Handler {
    pub name: String,
    pub id: String,
    pub instrument_types: Vec<String>,
    pub config: Value,
    pub processor: Arc<dyn PaymentProcessor>,
    /// Checkout currencies it takes (empty: any).
    pub currencies: Vec<String>,
    /// Shipping countries it serves (empty: any).
    pub countries: Vec<String>,
}

/// What decides which handlers a checkout offers.
#[derive(Debug, Clone, Copy)]
pub struct CheckoutContext<'a> {
    pub currency: &'a str,
    /// The selected shipping country, or the context's, if known.
    pub country: Option<&'a str>,
    /// Handler names the platform declares; empty means it declares none (no restriction).
    pub platform_handlers: &'a [String],
}

/// The handlers configured for this business.
#[derive(Debug, Clone, Default)]
pub struct Handlers {
    pub handlers: Vec<Handler>,
}

impl Handlers {
    pub fn from_settings(settings: &Settings) -> Result<Handlers, String> {
        let mut handlers = Vec::new();
        if settings.payments.sandbox.unwrap_or(settings.demo) {
            handlers.push(Handler {
                name: SANDBOX_HANDLER.into(),
                id: SANDBOX_ID.into(),
                instrument_types: vec!["card".into()],
                config: json!({
                    "environment": "sandbox",
                    "description": "Test payments: no money moves. Send a token credential {\"type\": \"token\", \"token\": …} with one of these tokens.",
                    "test_tokens": {
                        TOKEN_SUCCESS: "approved",
                        TOKEN_DECLINE: "declined: complete answers payment_failed (recoverable)",
                        TOKEN_3DS: "needs 3-D Secure: complete answers requires_escalation with a continue_url where the buyer approves",
                    }
                }),
                processor: Arc::new(Sandbox),
                currencies: Vec::new(),
                countries: Vec::new(),
            });
        }
        for http in &settings.payments.http {
            let processor = HttpProcessor::new(http)?;
            handlers.push(Handler {
                name: http.name.clone(),
                id: http.id.clone(),
                instrument_types: if http.instrument_types.is_empty() {
                    vec!["card".into()]
                } else {
                    http.instrument_types.clone()
                },
                config: json!({}),
                processor: Arc::new(processor),
                currencies: http.currencies.iter().map(|code| code.to_uppercase()).collect(),
                countries: http.countries.iter().map(|code| code.to_uppercase()).collect(),
            });
        }
        Ok(Handlers { handlers })
    }

    pub fn by_id(&self, id: &str) -> Option<&Handler> {
        self.handlers.iter().find(|handler| handler.id == id)
    }

    /// `payment_handlers` as advertised in the profile: every configured handler.
    pub fn advertised(&self) -> Value {
        Handlers::render(self.handlers.iter())
    }

    /// The handlers a checkout offers (checklist 25, 139): those the platform can use (when it
    /// declares any), that take the checkout's currency and serve its shipping country.
    pub fn for_checkout<'a>(&'a self, context: CheckoutContext<'a>) -> impl Iterator<Item = &'a Handler> + 'a {
        self.handlers.iter().filter(move |handler| {
            (context.platform_handlers.is_empty() || context.platform_handlers.contains(&handler.name))
                && (handler.currencies.is_empty() || handler.currencies.iter().any(|code| code == context.currency))
                && match (context.country, handler.countries.is_empty()) {
                    (_, true) => true,
                    (Some(country), false) => handler.countries.iter().any(|code| code.eq_ignore_ascii_case(country)),
                    (None, false) => true,
                }
        })
    }

    /// `payment_handlers` of a checkout response.
    pub fn advertised_for(&self, context: CheckoutContext<'_>) -> Value {
        Handlers::render(self.for_checkout(context))
    }

    fn render<'a>(handlers: impl Iterator<Item = &'a Handler>) -> Value {
        let mut map = serde_json::Map::new();
        for handler in handlers {
            let entry = json!({
                "id": handler.id,
                "version": crate::discovery::PROTOCOL_VERSION,
                "available_instruments": handler.instrument_types.iter().map(|kind| json!({ "type": kind })).collect::<Vec<_>>(),
                "config": handler.config,
            });
            match map.get_mut(&handler.name).and_then(Value::as_array_mut) {
                Some(entries) => entries.push(entry),
                None => {
                    map.insert(handler.name.clone(), json!([entry]));
                }
            }
        }
        Value::Object(map)
    }
}

/// Deterministic test processor: the token decides.
#[derive(Debug)]
pub struct Sandbox;

#[async_trait]
impl PaymentProcessor for Sandbox {
    async fn charge(&self, charge: &Charge) -> Result<Outcome, ProcessorUnavailable> {
        let reference = format!("sbx_{}", &uuid::Uuid::new_v4().simple().to_string()[..16]);
        Ok(match charge.token.as_str() {
            TOKEN_SUCCESS => Outcome::Approved { reference },
            TOKEN_3DS => Outcome::RequiresAction { reference },
            TOKEN_DECLINE => Outcome::Declined { reason: "The card was declined (sandbox).".into() },
            _ => Outcome::Declined {
                reason: format!("Unknown sandbox token; use {TOKEN_SUCCESS}, {TOKEN_DECLINE} or {TOKEN_3DS}."),
            },
        })
    }

    async fn confirm(&self, reference: &str, _charge: &Charge) -> Result<Outcome, ProcessorUnavailable> {
        Ok(Outcome::Approved { reference: reference.to_owned() })
    }

    async fn refund(&self, _reference: &str) -> Result<(), ProcessorUnavailable> {
        Ok(())
    }
}

/// An external processor: `POST {url}` with the charge, answered with
/// `{"status": "approved"|"declined"|"requires_action", "reference": "…", "reason": "…"}`;
/// `POST {url}/confirm` and `POST {url}/refund` with `{"reference": …}`.
#[derive(Debug)]
pub struct HttpProcessor {
    client: reqwest::Client,
    url: String,
    retries: u32,
}

impl HttpProcessor {
    pub fn new(settings: &HttpProcessorSettings) -> Result<HttpProcessor, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(settings.timeout_ms))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("payment processor {}: {error}", settings.id))?;
        Ok(HttpProcessor {
            client,
            url: settings.url.as_str().trim_end_matches('/').to_owned(),
            retries: settings.retries,
        })
    }

    async fn post(&self, path: &str, body: &Value, idempotency_key: &str) -> Result<Value, ProcessorUnavailable> {
        let mut last_error = String::new();
        for attempt in 0..=self.retries {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(100 * 2u64.pow(attempt - 1))).await;
            }
            let sent = self
                .client
                .post(format!("{}{path}", self.url))
                .header("idempotency-key", idempotency_key)
                .json(body)
                .send()
                .await;
            match sent {
                Ok(response) if response.status().is_success() => {
                    return response
                        .json()
                        .await
                        .map_err(|error| ProcessorUnavailable(format!("unreadable answer: {error}")));
                }
                Ok(response) if response.status().is_server_error() => {
                    last_error = format!("answered {}", response.status())
                }
                Ok(response) => return Err(ProcessorUnavailable(format!("answered {}", response.status()))),
                Err(error) => last_error = error.to_string(),
            }
            tracing::warn!(attempt, error = %last_error, "payment processor call failed");
        }
        Err(ProcessorUnavailable(last_error))
    }

    fn outcome(answer: &Value) -> Result<Outcome, ProcessorUnavailable> {
        let reference = answer["reference"].as_str().unwrap_or_default().to_owned();
        match answer["status"].as_str() {
            Some("approved") => Ok(Outcome::Approved { reference }),
            Some("requires_action") => Ok(Outcome::RequiresAction { reference }),
            Some("declined") => Ok(Outcome::Declined {
                reason: answer["reason"].as_str().unwrap_or("The payment was declined.").to_owned(),
            }),
            other => Err(ProcessorUnavailable(format!("unknown status {other:?}"))),
        }
    }
}

#[async_trait]
impl PaymentProcessor for HttpProcessor {
    async fn charge(&self, charge: &Charge) -> Result<Outcome, ProcessorUnavailable> {
        let body = json!({
            "checkout_id": charge.checkout_id,
            "amount": charge.amount,
            "currency": charge.currency,
            "token": charge.token,
        });
        let answer = self.post("", &body, &charge.idempotency_key).await?;
        HttpProcessor::outcome(&answer)
    }

    async fn confirm(&self, reference: &str, charge: &Charge) -> Result<Outcome, ProcessorUnavailable> {
        let answer = self
            .post("/confirm", &json!({ "reference": reference }), &format!("{}-confirm", charge.idempotency_key))
            .await?;
        HttpProcessor::outcome(&answer)
    }

    async fn refund(&self, reference: &str) -> Result<(), ProcessorUnavailable> {
        self.post("/refund", &json!({ "reference": reference }), &format!("refund-{reference}")).await.map(|_| ())
    }
}
