//! Payment handlers: what we advertise and how a complete turns a token into money.
//!
//! `PaymentProcessor` is the port; the sandbox handler answers deterministically by token,
//! and the HTTP processor calls an external service with a timeout and retries (the same
//! idempotency key on every try, so a retry never charges twice). Raw credentials never
//! leave this module: they are neither stored nor logged.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
pub use ucp_domain::payment::{
    Charge, CheckoutContext, Handler, OfferedHandler, PaymentOutcome as Outcome, PaymentProcessor,
    ProcessorUnavailable, Refund, RefundError, SANDBOX_HANDLER, SANDBOX_ID, TOKEN_3DS, TOKEN_DECLINE, TOKEN_SUCCESS,
};

use crate::config::{HttpProcessorSettings, Settings};

/// The configured handlers (the domain's, which complete charges through) and how each is
/// advertised (its `config` object in profiles and checkouts).
#[derive(Debug, Clone, Default)]
pub struct Handlers {
    pub domain: Arc<ucp_domain::payment::Handlers>,
    configs: HashMap<String, Value>,
}

impl Handlers {
    pub fn from_settings(settings: &Settings) -> Result<Handlers, String> {
        let mut handlers = Vec::new();
        let mut configs = HashMap::new();
        if settings.payments.sandbox.unwrap_or(settings.demo) {
            handlers.push(ucp_domain::payment::sandbox_handler());
            configs.insert(
                SANDBOX_ID.to_owned(),
                json!({
                    "environment": "sandbox",
                    "description": "Test payments: no money moves. Send a token credential {\"type\": \"token\", \"token\": …} with one of these tokens.",
                    "test_tokens": {
                        TOKEN_SUCCESS: "approved",
                        TOKEN_DECLINE: "declined: complete answers payment_failed (recoverable)",
                        TOKEN_3DS: "needs 3-D Secure: complete answers requires_escalation with a continue_url where the buyer approves",
                    }
                }),
            );
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
                processor: Arc::new(processor),
                currencies: http.currencies.iter().map(|code| code.to_uppercase()).collect(),
                countries: http.countries.iter().map(|code| code.to_uppercase()).collect(),
            });
            configs.insert(http.id.clone(), json!({}));
        }
        Ok(Handlers { domain: Arc::new(ucp_domain::payment::Handlers { handlers }), configs })
    }

    pub fn by_id(&self, id: &str) -> Option<&Handler> {
        self.domain.by_id(id)
    }

    /// `payment_handlers` as advertised in the profile: every configured handler.
    pub fn advertised(&self) -> Value {
        self.render(self.domain.handlers.iter().map(|handler| (handler, &handler.instrument_types[..])))
    }

    /// `payment_handlers` of a checkout: the handlers it offers, each with the instrument types
    /// it offers there (ours and the platform's: checklist 139).
    pub fn offered(&self, offered: &[OfferedHandler]) -> Value {
        self.render(offered.iter().filter_map(|offered| {
            let handler = self.domain.handlers.iter().find(|handler| handler.id == offered.id)?;
            Some((handler, &offered.instrument_types[..]))
        }))
    }

    fn render<'a>(&self, handlers: impl Iterator<Item = (&'a Handler, &'a [String])>) -> Value {
        let mut map = serde_json::Map::new();
        for (handler, instrument_types) in handlers {
            let entry = json!({
                "id": handler.id,
                "version": crate::discovery::PROTOCOL_VERSION,
                "available_instruments": instrument_types.iter().map(|kind| json!({ "type": kind })).collect::<Vec<_>>(),
                "config": self.configs.get(&handler.id).cloned().unwrap_or_else(|| json!({})),
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

/// A failed call as a charge, a confirmation or a lookup reads it: a refusal and no answer
/// alike (only a refund tells them apart).
fn unavailable(failed: RefundError) -> ProcessorUnavailable {
    match failed {
        RefundError::Refused(reason) => ProcessorUnavailable(reason),
        RefundError::Unavailable(unavailable) => unavailable,
    }
}

/// An external processor: `POST {url}` with the charge, answered with
/// `{"status": "approved"|"declined"|"requires_action", "reference": "…", "reason": "…"}`;
/// `POST {url}/confirm` with `{"reference": …}`; `POST {url}/refund` with
/// `{"reference", "amount", "currency"}` (partial refunds: `amount` in minor units);
/// `POST {url}/lookup` with `{"idempotency_key": …}` (our key of a charge), answered like a
/// charge (the payment's state now, its confirmation included), `"refunded"`, or
/// `"not_found"` when no charge was made under that key. Every request carries an
/// `Idempotency-Key` header.
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

    /// Posts `body` under our key, retried on no answer; a failure is a refusal (a 4xx) or
    /// unavailable (what became of the request is unknown), as [`RefundError`] tells them.
    async fn post(&self, path: &str, body: &Value, idempotency_key: &str) -> Result<Value, RefundError> {
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
                    return response.json().await.map_err(|error| {
                        RefundError::Unavailable(ProcessorUnavailable(format!("unreadable answer: {error}")))
                    });
                }
                Ok(response) if response.status().is_server_error() => {
                    last_error = format!("answered {}", response.status())
                }
                // A timeout, a key still in flight, too many requests: not a refusal.
                Ok(response) if matches!(response.status().as_u16(), 408 | 409 | 425 | 429) => {
                    last_error = format!("answered {}", response.status())
                }
                // A refusal, unless an earlier try went unanswered: what it did is unknown, and
                // this answer may be about it ("already refunded").
                Ok(response) if !last_error.is_empty() => {
                    let status = response.status();
                    return Err(RefundError::Unavailable(ProcessorUnavailable(format!(
                        "answered {status} after an earlier try went unanswered ({last_error})"
                    ))));
                }
                Ok(response) => return Err(RefundError::Refused(format!("answered {}", response.status()))),
                Err(error) => last_error = error.to_string(),
            }
            tracing::warn!(attempt, error = %last_error, "payment processor call failed");
        }
        Err(RefundError::Unavailable(ProcessorUnavailable(last_error)))
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
        let answer = self.post("", &body, &charge.idempotency_key).await.map_err(unavailable)?;
        HttpProcessor::outcome(&answer)
    }

    async fn confirm(&self, reference: &str, charge: &Charge) -> Result<Outcome, ProcessorUnavailable> {
        let answer = self
            .post("/confirm", &json!({ "reference": reference }), &format!("{}-confirm", charge.idempotency_key))
            .await
            .map_err(unavailable)?;
        HttpProcessor::outcome(&answer)
    }

    /// `POST {url}/refund` with `{"reference", "amount", "currency"}` under our own key (one
    /// per refund, the same on every retry); any 2xx answer is taken as done, a 4xx as a
    /// refusal.
    async fn refund(&self, refund: &Refund) -> Result<(), RefundError> {
        let body = json!({ "reference": refund.reference, "amount": refund.amount, "currency": refund.currency });
        self.post("/refund", &body, &refund.idempotency_key).await.map(|_| ())
    }

    async fn lookup(&self, idempotency_key: &str) -> Result<Option<Outcome>, ProcessorUnavailable> {
        let answer = self
            .post("/lookup", &json!({ "idempotency_key": idempotency_key }), &format!("lookup-{idempotency_key}"))
            .await
            .map_err(unavailable)?;
        match answer["status"].as_str() {
            Some("not_found") => Ok(None),
            Some("refunded") => Ok(Some(Outcome::Declined { reason: "The payment was refunded.".into() })),
            _ => HttpProcessor::outcome(&answer).map(Some),
        }
    }
}
