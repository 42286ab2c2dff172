//! `ucpd orders …`: the merchant's order operations, as a client of a running server's admin
//! API (`/admin/api/orders…`), so the command and the server share one code path (the same
//! `Commerce` methods, the processor's refunds, the webhooks) and never race on the database.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::{Value, json};

#[derive(Debug, clap::Args)]
pub(crate) struct OrdersArgs {
    /// Base URL of the running server.
    #[arg(long, env = "UCPD_ADMIN_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// An admin key ([admin] api_keys); default: <data dir>/admin-key of a demo start.
    #[arg(long, env = "UCPD_ADMIN_KEY", hide_env_values = true)]
    key: Option<String>,
    /// Where a demo start keeps its admin key.
    #[arg(long, env = "UCPD_DATA_DIR", default_value = "ucpd-data")]
    data_dir: PathBuf,
    /// The change's Idempotency-Key (default: a new one per run). Sent again with the same
    /// change, it gets the first run's result without changing the order twice; a run whose
    /// outcome is unknown (no answer, a 5xx) prints the key to repeat it with.
    #[arg(long, global = true)]
    idempotency_key: Option<String>,
    #[command(subcommand)]
    command: OrdersCommand,
}

#[derive(Debug, clap::Subcommand)]
enum OrdersCommand {
    /// Orders, newest first.
    List {
        /// processing, partial, fulfilled, canceled or closed.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        limit: Option<usize>,
        /// The `next` of the previous page.
        #[arg(long)]
        before: Option<String>,
    },
    /// One order: the UCP order, its status and payment.
    Show { id: String },
    /// Record a shipment: the units count as fulfilled.
    Ship {
        id: String,
        /// LINE_ID[:QUANTITY] (quantity 1 when omitted); repeat for several lines.
        #[arg(long = "line", required = true)]
        lines: Vec<String>,
        #[arg(long)]
        carrier: Option<String>,
        #[arg(long)]
        tracking_number: String,
        #[arg(long)]
        tracking_url: String,
        #[arg(long)]
        description: Option<String>,
    },
    /// Record a delivery of shipped units (default: every unit in transit).
    Deliver {
        id: String,
        #[arg(long = "line")]
        lines: Vec<String>,
        /// A failed delivery attempt instead.
        #[arg(long)]
        failed: bool,
        #[arg(long)]
        description: Option<String>,
    },
    /// Record fulfilled units coming back.
    Return {
        id: String,
        #[arg(long = "line", required = true)]
        lines: Vec<String>,
        #[arg(long)]
        description: Option<String>,
    },
    /// Cancel units not yet shipped (default: all) and refund them.
    Cancel {
        id: String,
        #[arg(long = "line")]
        lines: Vec<String>,
        /// Refund this much (minor units) instead of the computed share.
        #[arg(long)]
        amount: Option<i64>,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Refund an amount (minor units) through the order's payment handler.
    Refund {
        id: String,
        #[arg(long)]
        amount: i64,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Refunds asked of the processor, newest first, with their keys: to reconcile the
    /// abandoned ones (the error that abandoned each names its key).
    Refunds {
        /// pending, recorded, recorded_later, refused, abandoned or dismissed (default: all).
        #[arg(long)]
        state: Option<String>,
        #[arg(long)]
        limit: Option<u64>,
        /// Where the page starts: the `next` of a full page.
        #[arg(long)]
        before: Option<String>,
    },
    /// Record an abandoned refund on its order, once the processor shows it made under its
    /// key; the processor is not asked again.
    RecordRefund { key: String },
    /// Dismiss an abandoned refund the processor shows it did not make: the same request made
    /// again asks the processor anew under the same key.
    DismissRefund { key: String },
    /// Record another adjustment (credit, price_adjustment, dispute…); signed minor units.
    Adjust {
        id: String,
        #[arg(long = "type")]
        kind: String,
        #[arg(long, allow_hyphen_values = true)]
        amount: i64,
        /// pending, completed (default) or failed.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        description: Option<String>,
    },
}

/// `LINE_ID[:QUANTITY]` as `{"id", "quantity"}`.
fn line(text: &str) -> anyhow::Result<Value> {
    let (id, quantity) = match text.rsplit_once(':') {
        Some((id, quantity)) => {
            (id, quantity.parse::<i64>().with_context(|| format!("--line {text}: the quantity is not a number"))?)
        }
        None => (text, 1),
    };
    Ok(json!({ "id": id, "quantity": quantity }))
}

fn lines(texts: &[String]) -> anyhow::Result<Option<Value>> {
    if texts.is_empty() {
        return Ok(None);
    }
    Ok(Some(Value::Array(texts.iter().map(|text| line(text)).collect::<anyhow::Result<_>>()?)))
}

/// A JSON object of the fields that are set.
fn object(fields: &[(&str, Option<Value>)]) -> Value {
    Value::Object(fields.iter().filter_map(|(name, value)| Some(((*name).to_owned(), value.clone()?))).collect())
}

/// `?name=value&…` of the pairs that are set, encoded (empty when none is).
fn query(pairs: &[(&str, Option<String>)]) -> String {
    let set: Vec<(&str, &str)> = pairs.iter().filter_map(|(name, value)| Some((*name, value.as_deref()?))).collect();
    if set.is_empty() {
        return String::new();
    }
    let mut url = reqwest::Url::parse("http://query.invalid/").expect("a valid URL");
    url.query_pairs_mut().extend_pairs(set);
    format!("?{}", url.query().unwrap_or_default())
}

/// `text` as one path segment, percent-encoded.
fn segment(text: &str) -> String {
    let mut url = reqwest::Url::parse("http://segment.invalid/").expect("a valid URL");
    url.path_segments_mut().expect("a URL with a path").clear().push(text);
    url.path().trim_start_matches('/').to_owned()
}

fn text(value: &Option<String>) -> Option<Value> {
    value.as_ref().map(|value| json!(value))
}

pub(crate) async fn run(args: OrdersArgs) -> anyhow::Result<std::process::ExitCode> {
    let key = match &args.key {
        Some(key) => key.clone(),
        None => {
            let path = args.data_dir.join("admin-key");
            std::fs::read_to_string(&path)
                .map(|key| key.trim().to_owned())
                .with_context(|| format!("no --key / UCPD_ADMIN_KEY, and no demo key at {}", path.display()))?
        }
    };
    let (path, body) = match &args.command {
        OrdersCommand::List { status, limit, before } => {
            let pairs = [
                ("status", status.clone()),
                ("limit", limit.map(|limit| limit.to_string())),
                ("before", before.clone()),
            ];
            (format!("/orders{}", query(&pairs)), None)
        }
        OrdersCommand::Show { id } => (format!("/orders/{}", segment(id)), None),
        OrdersCommand::Refunds { state, limit, before } => {
            let pairs =
                [("state", state.clone()), ("limit", limit.map(|limit| limit.to_string())), ("before", before.clone())];
            (format!("/refunds{}", query(&pairs)), None)
        }
        OrdersCommand::RecordRefund { key } => (format!("/refunds/{}/record", segment(key)), Some(json!({}))),
        OrdersCommand::DismissRefund { key } => (format!("/refunds/{}/dismiss", segment(key)), Some(json!({}))),
        OrdersCommand::Ship { id, lines: given, carrier, tracking_number, tracking_url, description } => (
            format!("/orders/{}/ship", segment(id)),
            Some(object(&[
                ("line_items", lines(given)?),
                ("carrier", text(carrier)),
                ("tracking_number", Some(json!(tracking_number))),
                ("tracking_url", Some(json!(tracking_url))),
                ("description", text(description)),
            ])),
        ),
        OrdersCommand::Deliver { id, lines: given, failed, description } => (
            format!("/orders/{}/{}", segment(id), if *failed { "fail-delivery" } else { "deliver" }),
            Some(object(&[("line_items", lines(given)?), ("description", text(description))])),
        ),
        OrdersCommand::Return { id, lines: given, description } => (
            format!("/orders/{}/return", segment(id)),
            Some(object(&[("line_items", lines(given)?), ("description", text(description))])),
        ),
        OrdersCommand::Cancel { id, lines: given, amount, reason } => (
            format!("/orders/{}/cancel", segment(id)),
            Some(object(&[
                ("line_items", lines(given)?),
                ("amount", amount.map(|amount| json!(amount))),
                ("reason", text(reason)),
            ])),
        ),
        OrdersCommand::Refund { id, amount, reason } => (
            format!("/orders/{}/refund", segment(id)),
            Some(object(&[("amount", Some(json!(amount))), ("reason", text(reason))])),
        ),
        OrdersCommand::Adjust { id, kind, amount, status, description } => (
            format!("/orders/{}/adjust", segment(id)),
            Some(object(&[
                ("type", Some(json!(kind))),
                ("amount", Some(json!(amount))),
                ("status", text(status)),
                ("description", text(description)),
            ])),
        ),
    };
    let client = reqwest::Client::builder().timeout(Duration::from_secs(30)).build()?;
    let url = format!("{}/admin/api{path}", args.url.trim_end_matches('/'));
    // A change carries a key, so a run whose outcome is unknown can be repeated safely.
    let idempotency = body.as_ref().map(|_| args.idempotency_key.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()));
    let repeat = |text: String| match &idempotency {
        Some(key) => format!(
            "{text}\nthe change may or may not have been made: repeat the same command with --idempotency-key {key} to \
             get its result without changing the order twice"
        ),
        None => text,
    };
    let request = match body {
        Some(body) => {
            client.post(&url).json(&body).header("idempotency-key", idempotency.as_deref().unwrap_or_default())
        }
        None => client.get(&url),
    };
    let response = match request.bearer_auth(key).send().await {
        Ok(response) => response,
        Err(error) => bail!(repeat(format!("cannot reach {url}: {error}"))),
    };
    let status = response.status();
    let answer: Value = match response.json().await {
        Ok(answer) => answer,
        Err(_) => bail!(repeat(format!("{url} answered {status} without JSON"))),
    };
    if !status.is_success() {
        let text = format!(
            "{} ({status}): {}",
            answer["code"].as_str().unwrap_or("error"),
            answer["message"].as_str().unwrap_or("no message")
        );
        bail!(if status.is_server_error() { repeat(text) } else { text });
    }
    out!("{}", serde_json::to_string_pretty(&answer)?);
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    // Ids, keys and query values reach the server as given: encoded, never read as path or
    // query syntax.
    #[test]
    fn path_segments_and_query_values_are_encoded() {
        assert_eq!(super::segment("ord_1"), "ord_1");
        assert_eq!(super::segment("a/b?c#d e"), "a%2Fb%3Fc%23d%20e");
        assert_eq!(super::query(&[("state", Some("a&b=c d".into())), ("limit", None)]), "?state=a%26b%3Dc+d");
        assert_eq!(super::query(&[("limit", None)]), "");
    }
}
