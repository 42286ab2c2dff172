//! `ucpd-bench`: a closed-loop load driver for ucpd.
//!
//! - `purchase`: create_checkout → update_checkout → complete_checkout per worker, over MCP or REST;
//!   counts completed orders and records the latency of each call type.
//! - `ping`: the JSON-RPC `ping` baseline through the MCP stack, from the same tool.
//! - `catalog`: search_catalog / lookup_catalog / get_product over MCP or REST.
//!
//! Each run prints one `BENCH_RESULT key=value ...` line (machine-readable) and a small table.

#![allow(clippy::print_stdout)]

mod stats;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::stats::{Latencies, Tally};

#[derive(Debug, Parser)]
#[command(name = "ucpd-bench", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The purchase flow: create_checkout → update_checkout → complete_checkout, in a loop per worker.
    Purchase(PurchaseArgs),
    /// The JSON-RPC ping baseline through the MCP endpoint.
    Ping(CommonArgs),
    /// One catalog operation over MCP or REST.
    Catalog(CatalogArgs),
}

#[derive(Debug, Clone, Args)]
struct CommonArgs {
    /// Base URL of ucpd, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    url: String,
    /// Concurrent workers (each one request in flight at a time).
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
    /// Measured duration (e.g. 10s, 500ms, 1m).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    duration: Duration,
    /// Unmeasured warm-up before the measured run, same load (0s = none).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    warmup: Duration,
    /// Runtime worker threads of the load generator.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// MCP endpoint path.
    #[arg(long, default_value = "/ucp/mcp")]
    mcp_path: String,
    /// REST endpoint base path.
    #[arg(long, default_value = "/ucp/v1")]
    rest_path: String,
    /// Per-request timeout.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Transport {
    Mcp,
    Rest,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Mcp => "mcp",
            Transport::Rest => "rest",
        }
    }
}

#[derive(Debug, Args)]
struct PurchaseArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Platform profile URL (meta["ucp-agent"].profile / the UCP-Agent header).
    #[arg(long)]
    profile: String,
    #[arg(long, value_enum, default_value = "mcp")]
    transport: Transport,
    /// In-stock variant ids: a file with one id per line, or a comma-separated list.
    #[arg(long)]
    items: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum CatalogOp {
    Search,
    Lookup,
    GetProduct,
}

#[derive(Debug, Args)]
struct CatalogArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[arg(long)]
    profile: String,
    #[arg(long, value_enum, default_value = "mcp")]
    transport: Transport,
    #[arg(long, value_enum)]
    op: CatalogOp,
    /// JSON file {"products":[ids…],"variants":[ids…]} (needed for lookup and get_product).
    #[arg(long)]
    ids: Option<String>,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(n) = text.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = text.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = text.strip_suffix('m') {
        (n, 60.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number.trim().parse().map_err(|_| format!("not a duration: {text:?} (e.g. 10s, 500ms, 1m)"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("not a duration: {text:?}"));
    }
    Ok(Duration::from_secs_f64(value * scale))
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let threads = match &cli.command {
        Command::Purchase(args) => args.common.threads,
        Command::Ping(args) => args.threads,
        Command::Catalog(args) => args.common.threads,
    }
    .max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Purchase(args) => purchase(args).await,
            Command::Ping(args) => ping(args).await,
            Command::Catalog(args) => catalog(args).await,
        }
    })
}

fn client(common: &CommonArgs) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(common.concurrency * 2)
        .tcp_nodelay(true)
        .timeout(common.timeout)
        .build()?)
}

/// What one worker measured.
#[derive(Default)]
struct WorkerReport {
    /// Latency per call type (create, update, complete; or the one operation).
    latencies: BTreeMap<&'static str, Latencies>,
    /// Successful units: completed orders, or good responses.
    ok: u64,
    /// Failures by "call:kind".
    errors: Tally,
    /// Response bytes (catalog and ping).
    bytes: u64,
}

impl WorkerReport {
    fn merge(&mut self, other: WorkerReport) {
        for (name, latencies) in other.latencies {
            self.latencies.entry(name).or_default().extend(latencies);
        }
        self.ok += other.ok;
        self.errors.merge(other.errors);
        self.bytes += other.bytes;
    }

    fn record(&mut self, call: &'static str, elapsed: Duration) {
        self.latencies.entry(call).or_default().push(elapsed);
    }
}

/// Runs `concurrency` copies of `worker` for warm-up (discarded) then the measured duration.
/// Workers stop starting new units at the deadline and finish the one in flight.
async fn drive<F, Fut>(common: &CommonArgs, worker: F) -> (WorkerReport, Duration)
where
    F: Fn(usize, Instant) -> Fut,
    Fut: std::future::Future<Output = WorkerReport> + Send + 'static,
{
    if !common.warmup.is_zero() {
        let deadline = Instant::now() + common.warmup;
        let handles: Vec<_> = (0..common.concurrency).map(|index| tokio::spawn(worker(index, deadline))).collect();
        for handle in handles {
            let _ = handle.await;
        }
    }
    let start = Instant::now();
    let deadline = start + common.duration;
    let handles: Vec<_> = (0..common.concurrency).map(|index| tokio::spawn(worker(index + 1000, deadline))).collect();
    let mut total = WorkerReport::default();
    for handle in handles {
        match handle.await {
            Ok(report) => total.merge(report),
            Err(error) => total.errors.add(format!("worker:panic:{error}")),
        }
    }
    (total, start.elapsed())
}

/// A small xorshift generator, seeded per worker (no dependency; quality is irrelevant here).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}

// ---------------------------------------------------------------------------------------------
// Calls

/// The outcome of one UCP call: the UCP body, or a failure kind.
type CallResult = Result<Value, String>;

struct Endpoint {
    http: reqwest::Client,
    mcp_url: String,
    rest_base: String,
    profile: String,
    agent_header: String,
}

impl Endpoint {
    fn new(common: &CommonArgs, profile: &str) -> anyhow::Result<Self> {
        let base = common.url.trim_end_matches('/');
        Ok(Endpoint {
            http: client(common)?,
            mcp_url: format!("{base}{}", common.mcp_path),
            rest_base: format!("{base}{}", common.rest_path),
            profile: profile.to_owned(),
            agent_header: format!("profile=\"{profile}\""),
        })
    }

    /// A `tools/call` whose UCP body is `result.structuredContent`.
    async fn mcp_tool(&self, name: &str, mut arguments: Value, idempotent: bool) -> CallResult {
        let mut meta = json!({ "ucp-agent": { "profile": self.profile } });
        if idempotent {
            meta["idempotency-key"] = Value::String(uuid::Uuid::new_v4().to_string());
        }
        arguments["meta"] = meta;
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
        let response = self
            .http
            .post(&self.mcp_url)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .map_err(transport_kind)?;
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
    async fn rest(&self, method: reqwest::Method, path: &str, body: Option<&Value>, idempotent: bool) -> CallResult {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.rest_base))
            .header("ucp-agent", &self.agent_header)
            .header("request-id", uuid::Uuid::new_v4().to_string());
        if idempotent {
            request = request.header("idempotency-key", uuid::Uuid::new_v4().to_string());
        }
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
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

fn transport_kind(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "transport_timeout".into()
    } else if error.is_connect() {
        "transport_connect".into()
    } else {
        "transport_other".into()
    }
}

/// The code of the first error message of a UCP body, if the body is an error response.
fn first_error_code(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    let error = messages.iter().find(|m| m["type"] == "error")?;
    Some(error["code"].as_str().unwrap_or("error_message").to_owned())
}

/// A UCP body that is the resource-less error response (`ucp.status: "error"`).
fn ucp_error(body: &Value) -> Option<String> {
    if body["ucp"]["status"] == "error" {
        return Some(first_error_code(body).unwrap_or_else(|| "ucp_error".into()));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// purchase

fn read_items(spec: &str) -> anyhow::Result<Vec<String>> {
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

fn address() -> Value {
    json!({
        "street_address": "1 Infinite Loop", "address_locality": "Cupertino", "address_region": "CA",
        "postal_code": "95014", "address_country": "US"
    })
}

fn update_payload(item: &str, line_id: Option<&str>) -> Value {
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

fn payment_payload() -> Value {
    json!({ "payment": { "instruments": [{ "id": "pi_1", "handler_id": "sandbox", "type": "card", "credential": { "type": "token", "token": "tok_sandbox_success" } }] } })
}

async fn create(endpoint: &Endpoint, transport: Transport, item: &str) -> CallResult {
    let checkout = json!({ "line_items": [{ "item": { "id": item }, "quantity": 1 }] });
    let body = match transport {
        Transport::Mcp => endpoint.mcp_tool("create_checkout", json!({ "checkout": checkout }), false).await?,
        Transport::Rest => endpoint.rest(reqwest::Method::POST, "/checkout-sessions", Some(&checkout), true).await?,
    };
    if let Some(code) = ucp_error(&body) {
        return Err(code);
    }
    Ok(body)
}

async fn update(endpoint: &Endpoint, transport: Transport, id: &str, payload: Value) -> CallResult {
    let body = match transport {
        Transport::Mcp => endpoint.mcp_tool("update_checkout", json!({ "id": id, "checkout": payload }), false).await?,
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

async fn complete(endpoint: &Endpoint, transport: Transport, id: &str) -> CallResult {
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

fn first_message_code(body: &Value) -> Option<String> {
    body["messages"].as_array()?.first()?["code"].as_str().map(str::to_owned)
}

async fn purchase_worker(
    endpoint: Arc<Endpoint>,
    items: Arc<Vec<String>>,
    transport: Transport,
    seed: usize,
    deadline: Instant,
) -> WorkerReport {
    let mut report = WorkerReport::default();
    let mut rng = Rng::new(seed as u64 + 1);
    while Instant::now() < deadline {
        let item = &items[rng.below(items.len())];

        let started = Instant::now();
        let created = create(&endpoint, transport, item).await;
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
        let updated = update(&endpoint, transport, id, update_payload(item, line_id)).await;
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

async fn purchase(args: PurchaseArgs) -> anyhow::Result<()> {
    let items = Arc::new(read_items(&args.items)?);
    let endpoint = Arc::new(Endpoint::new(&args.common, &args.profile)?);
    let transport = args.transport;
    let (report, elapsed) = drive(&args.common, |seed, deadline| {
        purchase_worker(endpoint.clone(), items.clone(), transport, seed, deadline)
    })
    .await;
    let seconds = elapsed.as_secs_f64();
    let mut line = format!(
        "BENCH_RESULT op=purchase transport={} concurrency={} seconds={seconds:.3} orders={} orders_per_s={:.1}",
        transport.name(),
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

/// Prints the table, the errors and the BENCH_RESULT line (last, with `errors` and `error_kinds`).
fn finish(mut line: String, table: Vec<String>, errors: &Tally) {
    for row in table {
        println!("{row}");
    }
    if errors.total() > 0 {
        println!("failures by kind:");
        for (kind, count) in errors.iter() {
            println!("  {kind:<50} {count}");
        }
    }
    line.push_str(&format!(" errors={} error_kinds={}", errors.total(), errors.compact()));
    println!("{line}");
}

// ---------------------------------------------------------------------------------------------
// ping and catalog: fixed bodies, response checked by cheap byte scans (same for every transport)

struct Request {
    method: reqwest::Method,
    url: String,
    body: String,
}

/// How a response is judged good: HTTP status and the absence of error markers.
#[derive(Clone, Copy)]
enum Check {
    Ping,
    McpTool,
    Rest,
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else { return true };
    let mut start = 0;
    while let Some(offset) = haystack[start..].iter().position(|&b| b == first) {
        let at = start + offset;
        if haystack[at + 1..].starts_with(rest) {
            return true;
        }
        start = at + 1;
    }
    false
}

fn judge(check: Check, status: StatusCode, body: &[u8]) -> Result<(), String> {
    if status != StatusCode::OK {
        return Err(format!("http_{}", status.as_u16()));
    }
    match check {
        Check::Ping => {
            if !contains(body, b"\"result\"") {
                return Err("no_result".into());
            }
        }
        Check::McpTool => {
            if contains(body, b"\"error\":{") && !contains(body, b"\"result\"") {
                return Err("rpc_error".into());
            }
            if contains(body, b"\"isError\":true") {
                return Err("is_error".into());
            }
            if contains(body, b"\"status\":\"error\"") {
                return Err("ucp_error".into());
            }
        }
        Check::Rest => {
            if contains(body, b"\"status\":\"error\"") {
                return Err("ucp_error".into());
            }
        }
    }
    Ok(())
}

async fn fixed_worker(
    http: reqwest::Client,
    requests: Arc<Vec<Request>>,
    headers: Arc<Vec<(&'static str, String)>>,
    check: Check,
    name: &'static str,
    seed: usize,
    deadline: Instant,
) -> WorkerReport {
    let mut report = WorkerReport::default();
    let mut next = (seed * 7919) % requests.len();
    while Instant::now() < deadline {
        let request = &requests[next];
        next = (next + 1) % requests.len();
        let mut builder = http.request(request.method.clone(), &request.url).body(request.body.clone());
        for (header, value) in headers.iter() {
            builder = builder.header(*header, value);
        }
        if matches!(check, Check::Rest) {
            builder = builder.header("request-id", uuid::Uuid::new_v4().to_string());
        }
        let started = Instant::now();
        let outcome = match builder.send().await {
            Ok(response) => {
                let status = response.status();
                match response.bytes().await {
                    Ok(bytes) => {
                        report.bytes += bytes.len() as u64;
                        judge(check, status, &bytes)
                    }
                    Err(error) => Err(transport_kind(error)),
                }
            }
            Err(error) => Err(transport_kind(error)),
        };
        report.record(name, started.elapsed());
        match outcome {
            Ok(()) => report.ok += 1,
            Err(kind) => report.errors.add(format!("{name}:{kind}")),
        }
    }
    report
}

async fn run_fixed(
    common: &CommonArgs,
    op: &'static str,
    transport: Transport,
    requests: Vec<Request>,
    headers: Vec<(&'static str, String)>,
    check: Check,
) -> anyhow::Result<()> {
    if requests.is_empty() {
        bail!("no request bodies for {op}");
    }
    let http = client(common)?;
    let requests = Arc::new(requests);
    let headers = Arc::new(headers);
    let (report, elapsed) = drive(common, |seed, deadline| {
        fixed_worker(http.clone(), requests.clone(), headers.clone(), check, op, seed, deadline)
    })
    .await;
    let seconds = elapsed.as_secs_f64();
    let mut latencies = report.latencies.get(op).cloned().unwrap_or_default();
    latencies.sort();
    let total = latencies.len() as u64;
    let rps = total as f64 / seconds;
    let (p50, p90, p99, max) =
        (latencies.quantile_ms(0.50), latencies.quantile_ms(0.90), latencies.quantile_ms(0.99), latencies.max_ms());
    let avg_bytes = report.bytes.checked_div(total).unwrap_or(0);
    let line = format!(
        "BENCH_RESULT op={op} transport={} concurrency={} seconds={seconds:.3} requests={total} ok={} rps={rps:.1} \
         p50_ms={p50:.2} p90_ms={p90:.2} p99_ms={p99:.2} max_ms={max:.2} avg_body_bytes={avg_bytes}",
        transport.name(),
        common.concurrency,
        report.ok
    );
    let table = vec![
        format!("{op} over {} — {} workers, {seconds:.1} s", transport.name(), common.concurrency),
        format!(
            "{:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>10}",
            "requests", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "avg bytes"
        ),
        format!("{total:>10} {rps:>10.1} {p50:>9.2} {p90:>9.2} {p99:>9.2} {max:>9.2} {avg_bytes:>10}"),
    ];
    finish(line, table, &report.errors);
    Ok(())
}

async fn ping(common: CommonArgs) -> anyhow::Result<()> {
    let url = format!("{}{}", common.url.trim_end_matches('/'), common.mcp_path);
    let requests = vec![Request {
        method: reqwest::Method::POST,
        url,
        body: r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned(),
    }];
    let headers = vec![("content-type", "application/json".to_owned())];
    run_fixed(&common, "ping", Transport::Mcp, requests, headers, Check::Ping).await
}

/// The search queries and filters of bench/search.lua (24 × 6 bodies).
const QUERIES: &[&str] = &[
    "running shoes",
    "wool sweater",
    "coffee maker",
    "espresso machine",
    "throw blanket",
    "rain jacket",
    "hiking boots",
    "chefs knife",
    "jigsaw puzzle",
    "trekking poles",
    "merino wool socks",
    "noise-cancelling earbuds",
    "water bottle",
    "yoga mat",
    "sleeping bag",
    "board game",
    "cotton hoodie",
    "leather belt",
    "cast iron skillet",
    "remote control car",
    "headlamp",
    "backpack",
    "denim jeans",
    "tote bag",
];

fn search_filters() -> Vec<Option<Value>> {
    vec![
        None,
        None,
        Some(json!({ "price": { "min": 1000, "max": 5000 } })),
        Some(json!({ "categories": ["Apparel & Accessories"] })),
        Some(json!({ "categories": ["Home & Garden", "Sporting Goods"], "price": { "max": 20000 } })),
        Some(json!({ "categories": ["Footwear"], "price": { "min": 5000 } })),
    ]
}

fn catalog_payloads(op: CatalogOp, ids: Option<&str>) -> anyhow::Result<Vec<Value>> {
    let (products, variants) = match ids {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
            let value: Value = serde_json::from_str(&text).with_context(|| format!("parsing {path}"))?;
            let list = |key: &str| -> Vec<String> {
                value[key]
                    .as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                    .unwrap_or_default()
            };
            (list("products"), list("variants"))
        }
        None => (Vec::new(), Vec::new()),
    };
    Ok(match op {
        CatalogOp::Search => search_filters()
            .into_iter()
            .flat_map(|filter| {
                QUERIES.iter().map(move |query| {
                    let mut catalog = json!({ "query": query });
                    if let Some(filter) = &filter {
                        catalog["filters"] = filter.clone();
                    }
                    catalog
                })
            })
            .collect(),
        CatalogOp::Lookup => {
            if products.is_empty() || variants.is_empty() {
                bail!("lookup needs --ids with products and variants");
            }
            let sets = (products.len().min(variants.len()) / 5).clamp(1, 200);
            (0..sets)
                .map(|set| {
                    let mut ids = Vec::new();
                    for k in 0..5 {
                        ids.push(products[(set * 5 + k) % products.len()].clone());
                        ids.push(variants[(set * 5 + k + 3) % variants.len()].clone());
                    }
                    json!({ "ids": ids })
                })
                .collect()
        }
        CatalogOp::GetProduct => {
            if products.is_empty() {
                bail!("get_product needs --ids with products");
            }
            products.iter().map(|id| json!({ "id": id })).collect()
        }
    })
}

async fn catalog(args: CatalogArgs) -> anyhow::Result<()> {
    let (tool, path, op): (&str, &str, &'static str) = match args.op {
        CatalogOp::Search => ("search_catalog", "/catalog/search", "search"),
        CatalogOp::Lookup => ("lookup_catalog", "/catalog/lookup", "lookup"),
        CatalogOp::GetProduct => ("get_product", "/catalog/product", "get_product"),
    };
    let payloads = catalog_payloads(args.op, args.ids.as_deref())?;
    let base = args.common.url.trim_end_matches('/');
    let (requests, headers, check) = match args.transport {
        Transport::Mcp => {
            let url = format!("{base}{}", args.common.mcp_path);
            let requests = payloads
                .into_iter()
                .enumerate()
                .map(|(index, catalog)| Request {
                    method: reqwest::Method::POST,
                    url: url.clone(),
                    body: json!({ "jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": { "name": tool,
                        "arguments": { "meta": { "ucp-agent": { "profile": args.profile } }, "catalog": catalog } } })
                    .to_string(),
                })
                .collect();
            (requests, vec![("content-type", "application/json".to_owned())], Check::McpTool)
        }
        Transport::Rest => {
            let url = format!("{base}{}{path}", args.common.rest_path);
            let requests = payloads
                .into_iter()
                .map(|catalog| Request { method: reqwest::Method::POST, url: url.clone(), body: catalog.to_string() })
                .collect();
            let headers = vec![
                ("content-type", "application/json".to_owned()),
                ("ucp-agent", format!("profile=\"{}\"", args.profile)),
            ];
            (requests, headers, Check::Rest)
        }
    };
    run_fixed(&args.common, op, args.transport, requests, headers, check).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert!(parse_duration("fast").is_err());
    }

    #[test]
    fn byte_search() {
        assert!(contains(b"abc\"status\":\"error\"x", b"\"status\":\"error\""));
        assert!(!contains(b"\"status\":\"in_stock\"", b"\"status\":\"error\""));
        assert!(!contains(b"", b"x"));
    }

    #[test]
    fn error_codes_come_from_error_messages() {
        let body = json!({ "ucp": { "status": "error" }, "messages": [{ "type": "error", "code": "out_of_stock" }] });
        assert_eq!(ucp_error(&body).as_deref(), Some("out_of_stock"));
        assert_eq!(ucp_error(&json!({ "ucp": { "status": "success" } })), None);
    }

    #[test]
    fn search_has_144_bodies() {
        assert_eq!(catalog_payloads(CatalogOp::Search, None).unwrap().len(), 144);
    }
}
