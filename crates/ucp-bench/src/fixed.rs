//! `ping`, and the engine behind it and `catalog`: fixed request bodies sent round-robin, each
//! response judged by cheap byte scans (the same for every transport).

use std::sync::Arc;
use std::time::Instant;

use anyhow::bail;
use reqwest::StatusCode;

use crate::cli::{CommonArgs, Transport};
use crate::driver::{WorkerReport, client, drive};
use crate::endpoint::transport_kind;
use crate::report::finish;

pub(crate) struct Request {
    pub(crate) method: reqwest::Method,
    pub(crate) url: String,
    pub(crate) body: String,
    /// Headers of this request only (its signature, with `--sign`).
    pub(crate) own_headers: Vec<(&'static str, String)>,
}

/// How a response is judged good: HTTP status and the absence of error markers.
#[derive(Clone, Copy)]
pub(crate) enum Check {
    Ping,
    McpTool,
    Rest,
}

pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

/// The bytes at each end of a body where its envelope is.
const EDGE: usize = 1024;

/// Whether `needle` is in the envelope of `body`: its first and last KB, all of a body of up to
/// 2 KB (every error answer). The first KB holds the JSON-RPC `error` or `result` and UCP's
/// `ucp.status`; the last holds a REST body's trailing `messages`, and on MCP the end of the
/// escaped text mirror. A catalog answer is tens of KB of products in between. Reading every
/// byte, four times on MCP and once on REST, cost this client (on the server's cores) more
/// than the server's search, and that difference, not the server, was most of what "REST
/// against MCP" measured. (An "error" message inside a large answer whose status is "success"
/// goes unseen; catalog answers carry none.)
fn in_envelope(body: &[u8], needle: &[u8]) -> bool {
    if body.len() <= 2 * EDGE {
        return contains(body, needle);
    }
    contains(&body[..EDGE], needle) || contains(&body[body.len() - EDGE..], needle)
}

pub(crate) fn judge(check: Check, status: StatusCode, body: &[u8]) -> Result<(), String> {
    if status != StatusCode::OK {
        return Err(format!("http_{}", status.as_u16()));
    }
    match check {
        Check::Ping => {
            if !in_envelope(body, b"\"result\"") {
                return Err("no_result".into());
            }
        }
        Check::McpTool => {
            if in_envelope(body, b"\"error\":{") && !in_envelope(body, b"\"result\"") {
                return Err("rpc_error".into());
            }
            if in_envelope(body, b"\"isError\":true") {
                return Err("is_error".into());
            }
            if in_envelope(body, b"\"status\":\"error\"") {
                return Err("ucp_error".into());
            }
        }
        Check::Rest => {
            if in_envelope(body, b"\"status\":\"error\"") {
                return Err("ucp_error".into());
            }
        }
    }
    Ok(())
}

pub(crate) async fn fixed_worker(
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
        for (header, value) in headers.iter().chain(&request.own_headers) {
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

pub(crate) async fn run_fixed(
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

pub(crate) async fn ping(common: CommonArgs) -> anyhow::Result<()> {
    let url = format!("{}{}", common.url.trim_end_matches('/'), common.mcp_path);
    let requests = vec![Request {
        method: reqwest::Method::POST,
        url,
        body: r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_owned(),
        own_headers: Vec::new(),
    }];
    let headers = vec![("content-type", "application/json".to_owned())];
    run_fixed(&common, "ping", Transport::Mcp, requests, headers, Check::Ping).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_search() {
        assert!(contains(b"abc\"status\":\"error\"x", b"\"status\":\"error\""));
        assert!(!contains(b"\"status\":\"in_stock\"", b"\"status\":\"error\""));
        assert!(!contains(b"", b"x"));
    }

    #[test]
    fn a_large_answer_is_judged_by_its_envelope() {
        let products = "{\"title\":\"x\"},".repeat(1000);
        let ok = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"structuredContent\":{{\"ucp\":{{\"status\":\"success\"}},\"products\":[{products}]}}}}}}"
        );
        assert!(ok.len() > 4 * EDGE);
        assert_eq!(judge(Check::McpTool, StatusCode::OK, ok.as_bytes()), Ok(()));
        let failed = ok.replace("\"success\"", "\"error\"");
        assert_eq!(judge(Check::McpTool, StatusCode::OK, failed.as_bytes()), Err("ucp_error".to_owned()));
        let rest = format!("{{\"ucp\":{{\"status\":\"error\"}},\"products\":[{products}]}}");
        assert_eq!(judge(Check::Rest, StatusCode::OK, rest.as_bytes()), Err("ucp_error".to_owned()));
        let rpc = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#;
        assert_eq!(judge(Check::McpTool, StatusCode::OK, rpc), Err("rpc_error".to_owned()));
    }
}
