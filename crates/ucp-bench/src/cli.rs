//! The command line: subcommands, their flags and the duration parser.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "ucpd-bench", version, about)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// The purchase flow: create_checkout → update_checkout → complete_checkout, in a loop per worker.
    Purchase(PurchaseArgs),
    /// The JSON-RPC ping baseline through the MCP endpoint.
    Ping(CommonArgs),
    /// One catalog operation over MCP or REST.
    Catalog(CatalogArgs),
    /// Print the public JWK of the `--sign` test key (for the platform profile's signing_keys).
    Jwk,
    /// A bare axum server answering ucpd's ping bytes: the transport's ceiling for `ping`.
    BareServer(BareArgs),
}

#[derive(Debug, Clone, Args)]
pub(crate) struct BareArgs {
    /// Port on 127.0.0.1 (0 = any free port; the ready line names it).
    #[arg(long, default_value_t = 0)]
    pub(crate) port: u16,
    /// The path it answers POSTs on (ucpd's MCP endpoint).
    #[arg(long, default_value = "/ucp/mcp")]
    pub(crate) mcp_path: String,
    /// Runtime worker threads (ucpd uses tokio's default: one per core).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
}

#[derive(Debug, Clone, Args)]
pub(crate) struct CommonArgs {
    /// Base URL of ucpd, e.g. http://127.0.0.1:8080.
    #[arg(long)]
    pub(crate) url: String,
    /// Concurrent workers (each one request in flight at a time).
    #[arg(long, default_value_t = 16)]
    pub(crate) concurrency: usize,
    /// Measured duration (e.g. 10s, 500ms, 1m).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub(crate) duration: Duration,
    /// Unmeasured warm-up before the measured run, same load (0s = none).
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub(crate) warmup: Duration,
    /// Runtime worker threads of the load generator.
    #[arg(long, default_value_t = 2)]
    pub(crate) threads: usize,
    /// MCP endpoint path.
    #[arg(long, default_value = "/ucp/mcp")]
    pub(crate) mcp_path: String,
    /// REST endpoint base path.
    #[arg(long, default_value = "/ucp/v1")]
    pub(crate) rest_path: String,
    /// Per-request timeout.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub(crate) timeout: Duration,
    /// Sign every request (RFC 9421, Google's shape) with the test key `ucpd-bench jwk` prints.
    #[arg(long)]
    pub(crate) sign: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Transport {
    Mcp,
    Rest,
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Mcp => "mcp",
            Transport::Rest => "rest",
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct PurchaseArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Platform profile URL (meta["ucp-agent"].profile / the UCP-Agent header).
    #[arg(long)]
    pub(crate) profile: String,
    #[arg(long, value_enum, default_value = "mcp")]
    pub(crate) transport: Transport,
    /// In-stock variant ids: a file with one id per line, or a comma-separated list.
    #[arg(long)]
    pub(crate) items: String,
    /// Over MCP, an idempotency key on create_checkout and update_checkout too, as Google
    /// sends; without it only complete_checkout carries one. REST sends one on every call
    /// (the binding requires it).
    #[arg(long)]
    pub(crate) keys_on_every_call: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum CatalogOp {
    Search,
    Lookup,
    GetProduct,
}

#[derive(Debug, Args)]
pub(crate) struct CatalogArgs {
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    #[arg(long)]
    pub(crate) profile: String,
    #[arg(long, value_enum, default_value = "mcp")]
    pub(crate) transport: Transport,
    #[arg(long, value_enum)]
    pub(crate) op: CatalogOp,
    /// JSON file {"products":[ids…],"variants":[ids…]} (needed for lookup and get_product).
    #[arg(long)]
    pub(crate) ids: Option<String>,
}

pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
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
}
