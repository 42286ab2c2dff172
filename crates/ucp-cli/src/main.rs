//! `ucpd`: the UCP merchant server and its catalog tools. Each subcommand parses flags and
//! calls a library function; nothing here is needed by a test.

#![allow(clippy::print_stdout)]

/// `println!` that hands a failed write back as an error rather than panicking: a closed pipe
/// (`ucpd orders list | head -1`) ends the command quietly (`main`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*).map_err($crate::StdoutFailed)?
    }};
}

/// A line on standard error, which may be gone (`2>&-`, a closed pipe): then the line is lost,
/// rather than `eprintln!`'s panic ending the command halfway.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// A write to standard output that failed: only this, and not any other broken pipe (a
/// processor's, a socket's), ends a command quietly.
#[derive(Debug)]
struct StdoutFailed(std::io::Error);

impl std::fmt::Display for StdoutFailed {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The OS error is the source, which `{:#}` prints after this.
        formatter.write_str("writing to standard output")
    }
}

/// An error of a write to standard output that may also be the data's own (the demo catalog's
/// options): a broken pipe is [`StdoutFailed`], anything else as it is.
fn on_stdout(error: std::io::Error) -> anyhow::Error {
    if error.kind() == std::io::ErrorKind::BrokenPipe { StdoutFailed(error).into() } else { error.into() }
}

impl std::error::Error for StdoutFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

mod catalog;
mod log_fields;
mod log_line;
mod logging;
mod orders;

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use ucp_server::{Application, Settings};

mod webhooks;

/// A Universal Commerce Protocol (UCP) merchant server: discovery at /.well-known/ucp and a
/// stateless MCP endpoint over an embedded SQLite catalog.
///
/// Settings are layered: built-in defaults < the TOML file (--config) < UCPD_* environment
/// variables < flags. Every config key has a variable: upper-case it, prefix UCPD_, join
/// nested keys with "__" (e.g. UCPD_CATALOG__MAX_PAGE_SIZE=20). Logging: UCPD_LOG (an
/// env-filter, default "info"), UCPD_LOG_FORMAT=json for JSON lines.
#[derive(Debug, Parser)]
#[command(name = "ucpd", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (discovery + MCP). An empty store is seeded with the demo catalog.
    Serve(ServeArgs),
    /// Write a generated, deterministic demo catalog as JSON lines (our import format).
    DemoCatalog(catalog::DemoArgs),
    /// Load a Google Merchant Center feed (TSV/CSV text or RSS 2.0 XML) or JSON lines into the store.
    Import(catalog::ImportArgs),
    /// Print every operation with its capability, MCP tool and REST route.
    Routes(RoutesArgs),
    /// Manage the business signing keys (ES256) published in the profile and used to sign
    /// responses. A running server picks up a rotation at its next start.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Onboarded platforms: hash an API key for `[[platforms]] api_keys`.
    #[command(subcommand)]
    Platforms(PlatformsCommand),
    /// The merchant's order operations (list, show, ship, deliver, return, cancel, refund,
    /// adjust) through a running server's admin API.
    Orders(orders::OrdersArgs),
    /// Order webhooks: list the outbox with each event's delivery state, and send dead-lettered
    /// (or any) events again.
    #[command(subcommand)]
    Webhooks(webhooks::WebhooksCommand),
}

#[derive(Debug, Subcommand)]
enum PlatformsCommand {
    /// Print the SHA-256 hash of an API key, as `[[platforms]] api_keys` stores it (the
    /// same as `printf %s KEY | sha256sum`). Reads the key from standard input when no
    /// argument is given, so it stays out of the shell history.
    HashKey {
        /// The key (prefer standard input).
        key: Option<String>,
        /// Make a new random key (192 bits) and print it and its hash, as `key: …` and
        /// `hash: …` lines.
        #[arg(long, conflicts_with = "key")]
        generate: bool,
    },
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Create the signing key if there is none (`ucpd serve` also does on first start).
    Generate(KeysArgs),
    /// Make a new current key; the old one stays published for the grace period
    /// [config: signatures.key_grace_days; default 7], then drops out of the profile.
    Rotate(KeysArgs),
    /// List the keys: the current one and the retired ones with the end of their grace period.
    List(KeysArgs),
}

#[derive(Debug, clap::Args)]
struct KeysArgs {
    /// Directory of the keys [config: data_dir; default ./ucpd-data].
    #[arg(long, env = "UCPD_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// TOML configuration file.
    #[arg(long, env = "UCPD_CONFIG")]
    config: Option<PathBuf>,
    /// Days a rotated-out key stays published [config: signatures.key_grace_days].
    #[arg(long)]
    grace_days: Option<u64>,
}

#[derive(Debug, clap::Args)]
struct RoutesArgs {
    /// TOML configuration file (for the endpoint paths).
    #[arg(long, env = "UCPD_CONFIG")]
    config: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on [config: listen; default 127.0.0.1:8080].
    #[arg(long, env = "UCPD_LISTEN")]
    listen: Option<std::net::SocketAddr>,
    /// Directory for the database, keys and secrets [config: data_dir; default ./ucpd-data].
    #[arg(long, env = "UCPD_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// TOML configuration file.
    #[arg(long, env = "UCPD_CONFIG")]
    config: Option<PathBuf>,
    /// Public base URL advertised in the profile, e.g. https://shop.example [config: public_url].
    /// Without it the profile advertises the listen address over plain http (local use only).
    #[arg(long, env = "UCPD_PUBLIC_URL")]
    public_url: Option<String>,
    /// Do not seed an empty store with the demo catalog [config: demo = false].
    #[arg(long)]
    no_demo: bool,
    /// Products in the demo catalog seeded on first start [config: demo_products; default 1000].
    #[arg(long, env = "UCPD_DEMO_PRODUCTS")]
    demo_products: Option<u64>,
    /// DEVELOPMENT ONLY: fetch platform profiles over plain http from loopback addresses
    /// [config: dev_insecure_profiles].
    #[arg(long)]
    dev_insecure_profiles: bool,
    /// PEM certificate chain (leaf first): serve https on the listen address; needs --tls-key
    /// [config: tls.cert_file].
    #[arg(long, value_name = "PEM")]
    tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert [config: tls.key_file].
    #[arg(long, value_name = "PEM")]
    tls_key: Option<PathBuf>,
    /// PEM file of a CA whose client certificates are accepted (mTLS; repeatable; replaces
    /// tls.client_ca_files). Clients without a certificate still connect.
    #[arg(long, value_name = "PEM")]
    tls_client_ca: Vec<PathBuf>,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Held to the end of main: dropping it writes out the log lines still buffered.
    let _log_writer = logging::init();
    // Store reads run on the blocking pool, at most one per reader connection (four on two
    // cores) at a time, and an import's preparer beside them. Each thread that ever ran one
    // keeps its own allocator heap: at 32 threads the pool churned to 17 under a catalog load,
    // and 8 saved 10-20 MB of RSS at 100,000 products (BENCHMARKS.md, "What a cached product
    // costs").
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().max_blocking_threads(8).build() {
        Ok(runtime) => runtime,
        Err(error) => {
            note!("ucpd: cannot start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::DemoCatalog(args) => catalog::demo_catalog(args),
            Command::Import(args) => catalog::import_feed(args).await,
            Command::Routes(args) => routes(args),
            Command::Keys(command) => keys(command),
            Command::Platforms(PlatformsCommand::HashKey { key, generate }) => hash_key(key, generate),
            Command::Orders(args) => orders::run(args).await,
            Command::Webhooks(command) => webhooks::run(command).await,
        }
    });
    match result {
        Ok(code) => code,
        // The reader of our output went away (`| head`): what it wanted, it has.
        Err(error) if is_broken_pipe(&error) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            note!("ucpd: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.downcast_ref::<StdoutFailed>().is_some_and(|failed| failed.0.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn load_settings(config: Option<&PathBuf>) -> anyhow::Result<Settings> {
    Ok(Settings::load(config.map(PathBuf::as_path), std::env::vars())?)
}

async fn serve(args: ServeArgs) -> anyhow::Result<std::process::ExitCode> {
    let mut settings = load_settings(args.config.as_ref())?;
    if let Some(listen) = args.listen {
        settings.listen = listen;
    }
    if let Some(data_dir) = args.data_dir {
        settings.data_dir = data_dir;
    }
    if let Some(public_url) = args.public_url {
        settings.public_url = Some(public_url.parse().map_err(ucp_server::config::ConfigError)?);
    }
    if args.no_demo {
        settings.demo = false;
        settings.origin.demo_set = true;
    }
    if let Some(products) = args.demo_products {
        settings.demo_products = products;
    }
    if args.dev_insecure_profiles {
        settings.dev_insecure_profiles = true;
    }
    if let Some(cert) = args.tls_cert {
        settings.tls.cert_file = Some(cert);
    }
    if let Some(key) = args.tls_key {
        settings.tls.key_file = Some(key);
    }
    if !args.tls_client_ca.is_empty() {
        settings.tls.client_ca_files = args.tls_client_ca;
    }
    settings.validate()?;
    ucp_server::hardening::harden(&mut settings).map_err(ucp_server::config::ConfigError)?;
    let application = Application::build(settings).await?;
    application.run_until_stopped(shutdown_signal()).await.context("serving")?;
    tracing::info!("ucpd stopped");
    Ok(std::process::ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {},
            _ = terminate.recv() => {},
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}

/// Keys shorter than this are easy to guess at the admin API's or a platform's door.
const SHORT_KEY_CHARS: usize = 20;

fn hash_key(key: Option<String>, generate: bool) -> anyhow::Result<std::process::ExitCode> {
    if generate {
        let key = ucp_server::auth::new_key();
        out!("key: {key}");
        out!("hash: {}", ucp_server::auth::hash_key_hex(&key));
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let key = match key {
        Some(key) => key,
        None => {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line).context("reading the key from standard input")?;
            line.trim_end_matches(['\r', '\n']).to_owned()
        }
    };
    if key.trim().is_empty() {
        anyhow::bail!("the key is empty");
    }
    if key.chars().count() < SHORT_KEY_CHARS {
        note!(
            "warning: a key of under {SHORT_KEY_CHARS} characters can be guessed; `ucpd platforms hash-key --generate` makes a random one"
        );
    }
    out!("{}", ucp_server::auth::hash_key_hex(&key));
    Ok(std::process::ExitCode::SUCCESS)
}

fn routes(args: RoutesArgs) -> anyhow::Result<std::process::ExitCode> {
    let settings = load_settings(args.config.as_ref())?;
    out!("MCP endpoint: POST {} (tools/call, params.name = the operation)", settings.http.mcp_path);
    out!("REST endpoint: {}", settings.http.rest_path);
    out!();
    out!("{:<18} {:<15} {:<18} {:<6} REST PATH", "OPERATION", "CAPABILITY", "MCP TOOL", "METHOD");
    for operation in ucp_server::operations::Operation::ALL {
        let enabled = ucp_server::operations::is_enabled(&settings.capabilities.enabled, operation.capability());
        out!(
            "{:<18} {:<15} {:<18} {:<6} {}{}{}",
            operation.name(),
            operation.capability().short_name(),
            operation.name(),
            operation.rest_method().as_str(),
            settings.http.rest_path,
            operation.rest_path(),
            if enabled { "" } else { "   (disabled)" }
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn keys(command: KeysCommand) -> anyhow::Result<std::process::ExitCode> {
    use ucp_server::keys::KeyRing;
    let (KeysCommand::Generate(args) | KeysCommand::Rotate(args) | KeysCommand::List(args)) = &command;
    let mut settings = load_settings(args.config.as_ref())?;
    if let Some(data_dir) = &args.data_dir {
        settings.data_dir = data_dir.clone();
    }
    let days = args.grace_days.unwrap_or(settings.signatures.key_grace_days);
    let grace_secs = i64::try_from(days.saturating_mul(86_400)).unwrap_or(i64::MAX);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or_default();
    let data_dir = &settings.data_dir;
    let context = || format!("keys in {}", data_dir.display());
    match command {
        KeysCommand::Generate(_) => match KeyRing::generate(data_dir).with_context(context)? {
            Ok(kid) => out!("generated signing key {kid} in {}", data_dir.display()),
            Err(kid) => {
                note!("a signing key exists already ({kid}); use `ucpd keys rotate` to replace it");
                return Ok(std::process::ExitCode::FAILURE);
            }
        },
        KeysCommand::Rotate(_) => {
            std::fs::create_dir_all(data_dir).with_context(context)?;
            let (old, new) = KeyRing::rotate(data_dir, grace_secs, now).with_context(context)?;
            out!("new current key {new}; {old} stays published for {days} days (restart the server to publish)");
        }
        KeysCommand::List(_) => {
            let rows = KeyRing::list(data_dir, grace_secs, now).with_context(context)?;
            if rows.is_empty() {
                out!(
                    "no signing key in {} (one is made on first start or by `ucpd keys generate`)",
                    data_dir.display()
                );
            }
            for (kid, state) in rows {
                out!("{kid}  {state}");
            }
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
