//! `purchase`: create_checkout → update_checkout → complete_checkout in a loop per worker.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::cli::{PurchaseArgs, Transport};
use crate::driver::{Rng, WorkerReport, drive};
use crate::endpoint::{CallResult, Endpoint, ucp_error};
use crate::report::finish;

pub(crate) fn read_items(spec: &str) -> anyhow::Result<Vec<String>> {
    let text = if Path::new(spec).is_file() {
        std::fs::read_to_string(spec).with_context(|| format!("reading {spec}"))?
    } else {
        spec.replace(',', "\n")
    };
    let items: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_owned)
        .collect();
    if items.is_empty() {
        bail!("--items gave no variant ids");
    }
    Ok(items)
}

pub(crate) fn address() -> Value {
    json!({
        "street_address": "1 Infinite Loop", "address_locality": "Cupertino", "address_region": "CA",
        "postal_code": "95014", "address_country": "US"
    })
}

pub(crate) fn update_payload(item: &str, line_id: Option<&str>) -> Value {
    let mut line = json!({ "item": { "id": item }, "quantity": 1 });
    if let Some(id) = line_id {
        line["id"] = Value::String(id.to_owned());
    }
    json!({
        "line_items": [line],
        "buyer": { "email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace" },
        "fulfillment": { "methods": [{ "type": "shipping", "destinations": [address()], "groups": [{ "selected_option_id": "standard" }] }] }
    })
}

pub(crate) fn payment_payload() -> Value {
    json!({ "payment": { "instruments": [{ "id": "pi_1", "handler_id": "sandbox", "type": "card", "credential": { "type": "token", "token": "tok_sandbox_success" } }] } })
}

/// `keyed`: whether an MCP call carries an idempotency key (a REST call always does).
pub(crate) async fn create(endpoint: &Endpoint, transport: Transport, item: &str, keyed: bool) -> CallResult {
    let checkout = json!({ "line_items": [{ "item": { "id": item }, "quantity": 1 }] });
    let body = match transport {
        Transport::Mcp => endpoint.mcp_tool("create_checkout", json!({ "checkout": checkout }), keyed).await?,
        Transport::Rest => endpoint.rest(reqwest::Method::POST, "/checkout-sessions", Some(&checkout), true).await?,
    };
    if let Some(code) = ucp_error(&body) {
        return Err(code);
    }
    Ok(body)
}

pub(crate) async fn update(
    endpoint: &Endpoint,
    transport: Transport,
    id: &str,
    payload: Value,
    keyed: bool,
) -> CallResult {
    let body = match transport {
        Transport::Mcp => endpoint.mcp_tool("update_checkout", json!({ "id": id, "checkout": payload }), keyed).await?,
        Transport::Rest => {
            endpoint.rest(reqwest::Method::PUT, &format!("/checkout-sessions/{id}"), Some(&payload), true).await?
        }
    };
    if let Some(code) = ucp_error(&body) {
        return Err(code);
    }
    if body["status"] != "ready_for_complete" {
        return Err(format!(
            "status_{}_{}",
            body["status"].as_str().unwrap_or("none"),
            first_message_code(&body).unwrap_or_default()
        ));
    }
    Ok(body)
}

pub(crate) async fn complete(endpoint: &Endpoint, transport: Transport, id: &str) -> CallResult {
    let payload = payment_payload();
    let body = match transport {
        Transport::Mcp => {
            endpoint.mcp_tool("complete_checkout", json!({ "id": id, "checkout": payload }), true).await?
        }
        Transport::Rest => {
            endpoint
                .rest(reqwest::Method::POST, &format!("/checkout-sessions/{id}/complete"), Some(&payload), true)
                .await?
        }
    };
    if let Some(code) = ucp_error(&body) {
        return Err(code);
    }
    if body["status"] != "completed" || body["order"]["id"].as_str().is_none() {
        return Err(format!(
            "status_{}_{}",
            body["status"].as_str().unwrap_or("none"),
            first_message_code(&body).unwrap_or_default()
        ));
    }
    Ok(body)
}

pub(crate) fn first_message_code(body: &Value) -> Option<String> {
    body["messages"].as_array()?.first()?["code"].as_str().map(str::to_owned)
}

pub(crate) async fn purchase_worker(
    endpoint: Arc<Endpoint>,
    items: Arc<Vec<String>>,
    transport: Transport,
    keyed: bool,
    seed: usize,
    deadline: Instant,
) -> WorkerReport {
    let mut report = WorkerReport::default();
    let mut rng = Rng::new(seed as u64 + 1);
    while Instant::now() < deadline {
        let item = &items[rng.below(items.len())];

        let started = Instant::now();
        let created = create(&endpoint, transport, item, keyed).await;
        report.record("create", started.elapsed());
        let created = match created {
            Ok(body) => body,
            Err(kind) => {
                report.errors.add(format!("create:{kind}"));
                continue;
            }
        };
        let Some(id) = created["id"].as_str() else {
            report.errors.add("create:no_id".to_owned());
            continue;
        };
        let line_id = created["line_items"][0]["id"].as_str();

        let started = Instant::now();
        let updated = update(&endpoint, transport, id, update_payload(item, line_id), keyed).await;
        report.record("update", started.elapsed());
        if let Err(kind) = updated {
            report.errors.add(format!("update:{kind}"));
            continue;
        }

        let started = Instant::now();
        let completed = complete(&endpoint, transport, id).await;
        report.record("complete", started.elapsed());
        match completed {
            Ok(_) => report.ok += 1,
            Err(kind) => report.errors.add(format!("complete:{kind}")),
        }
    }
    report
}

pub(crate) async fn purchase(args: PurchaseArgs) -> anyhow::Result<()> {
    let items = Arc::new(read_items(&args.items)?);
    let endpoint = Arc::new(Endpoint::new(&args.common, &args.profile)?);
    let transport = args.transport;
    // REST sends a key on every call whatever the flag says (the binding requires one).
    let keyed = args.keys_on_every_call || transport == Transport::Rest;
    let (report, elapsed) = drive(&args.common, |seed, deadline| {
        purchase_worker(endpoint.clone(), items.clone(), transport, keyed, seed, deadline)
    })
    .await;
    let seconds = elapsed.as_secs_f64();
    let mut line = format!(
        "BENCH_RESULT op=purchase transport={} keys={} concurrency={} seconds={seconds:.3} orders={} orders_per_s={:.1}",
        transport.name(),
        if keyed { "every" } else { "complete" },
        args.common.concurrency,
        report.ok,
        report.ok as f64 / seconds
    );
    let mut table = vec![format!(
        "purchase over {} — {} workers, {seconds:.1} s, {} variant ids: {} completed orders, {:.1} orders/s",
        transport.name(),
        args.common.concurrency,
        items.len(),
        report.ok,
        report.ok as f64 / seconds
    )];
    table
        .push(format!("{:<10} {:>9} {:>9} {:>9} {:>9} {:>9}", "call", "calls", "p50 ms", "p90 ms", "p99 ms", "max ms"));
    for call in ["create", "update", "complete"] {
        let mut latencies = report.latencies.get(call).cloned().unwrap_or_default();
        latencies.sort();
        let (p50, p90, p99, max) =
            (latencies.quantile_ms(0.50), latencies.quantile_ms(0.90), latencies.quantile_ms(0.99), latencies.max_ms());
        line.push_str(&format!(
            " {call}_calls={} {call}_p50_ms={p50:.2} {call}_p90_ms={p90:.2} {call}_p99_ms={p99:.2} {call}_max_ms={max:.2}",
            latencies.len()
        ));
        table.push(format!("{call:<10} {:>9} {p50:>9.2} {p90:>9.2} {p99:>9.2} {max:>9.2}", latencies.len()));
    }
    finish(line, table, &report.errors);
    Ok(())
}
