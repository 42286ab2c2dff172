//! `ucpd`: the UCP merchant server and its catalog tools. Each subcommand parses flags and
//! calls a library function; nothing here is needed by a test.

#![allow(clippy::print_stdout)]

mod logging;
mod orders;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ucp_catalog_io::{demo, import};
use ucp_domain::store::CatalogStore;
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
    DemoCatalog(DemoArgs),
    /// Load a Google Merchant Center feed (TSV/CSV text or RSS 2.0 XML) or JSON lines into the store.
    Import(ImportArgs),
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

#[derive(Debug, clap::Args)]
struct DemoArgs {
    /// How many products to generate.
    #[arg(long, default_value_t = 1000)]
    products: u64,
    /// Output file ("-" for standard output).
    #[arg(long, short)]
    output: PathBuf,
    /// Seed of the generator: the same seed always gives the same catalog.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Currency of the prices.
    #[arg(long, default_value = "USD")]
    currency: String,
    /// Base URL for product pages and images.
    #[arg(long, default_value = "https://demo.ucpd.dev")]
    base_url: String,
}

#[derive(Debug, clap::Args)]
struct ImportArgs {
    /// The feed file.
    file: PathBuf,
    /// Directory of the store to load into [config: data_dir].
    #[arg(long, env = "UCPD_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// TOML configuration file.
    #[arg(long, env = "UCPD_CONFIG")]
    config: Option<PathBuf>,
    /// Feed format: gmc-text (tsv, csv), gmc-xml (rss, xml) or jsonl; detected when absent.
    #[arg(long)]
    format: Option<String>,
    /// Currency of prices that name none [default: catalog.currency].
    #[arg(long)]
    currency: Option<String>,
    /// Fail, writing nothing, if any row is skipped.
    #[arg(long)]
    strict: bool,
}

/// mimalloc rather than glibc's malloc: allocation was about a sixth of the server's CPU on a
/// catalog read, and glibc's consolidation of freed large buffers showed on every answer
/// (BENCHMARKS.md, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
            eprintln!("ucpd: cannot start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(args).await,
            Command::DemoCatalog(args) => demo_catalog(args),
            Command::Import(args) => import_feed(args).await,
            Command::Routes(args) => routes(args),
            Command::Keys(command) => keys(command),
            Command::Platforms(PlatformsCommand::HashKey { key }) => hash_key(key),
            Command::Orders(args) => orders::run(args).await,
            Command::Webhooks(command) => webhooks::run(command).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("ucpd: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
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

fn hash_key(key: Option<String>) -> anyhow::Result<std::process::ExitCode> {
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
    println!("{}", ucp_server::auth::hash_key_hex(&key));
    Ok(std::process::ExitCode::SUCCESS)
}

fn demo_catalog(args: DemoArgs) -> anyhow::Result<std::process::ExitCode> {
    let options = demo::DemoOptions {
        products: args.products,
        seed: args.seed,
        currency: args.currency,
        base_url: args.base_url,
    };
    let bar = progress_bar(args.products, "products");
    let mut progress = |done: u64| bar.set_position(done);
    let written = if args.output.as_os_str() == "-" {
        let stdout = std::io::stdout();
        let mut writer = std::io::BufWriter::new(stdout.lock());
        let written = demo::write_json_lines(&options, &mut writer, &mut progress)?;
        writer.flush()?;
        written
    } else {
        let file =
            std::fs::File::create(&args.output).with_context(|| format!("creating {}", args.output.display()))?;
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
        let written = demo::write_json_lines(&options, &mut writer, &mut progress)?;
        writer.flush()?;
        written
    };
    bar.finish_and_clear();
    eprintln!("wrote {written} products to {}", args.output.display());
    Ok(std::process::ExitCode::SUCCESS)
}

async fn import_feed(args: ImportArgs) -> anyhow::Result<std::process::ExitCode> {
    let mut settings = load_settings(args.config.as_ref())?;
    if let Some(data_dir) = args.data_dir {
        settings.data_dir = data_dir;
    }
    let file = std::fs::File::open(&args.file).with_context(|| format!("opening {}", args.file.display()))?;
    let length = file.metadata().map(|metadata| metadata.len()).unwrap_or(0);
    let format = match &args.format {
        Some(name) => import::FeedFormat::from_name(name)
            .with_context(|| format!("unknown --format {name:?}; use gmc-text, gmc-xml or jsonl"))?,
        None => import::detect_format(&args.file, BufReader::new(file).fill_buf()?),
    };
    let options =
        import::ImportOptions { default_currency: args.currency.unwrap_or_else(|| settings.catalog.currency.clone()) };
    let feed = args.file.display().to_string();
    // The feed is staged next to the database: a big one needs about its own size on disk,
    // which a temporary directory (often in memory) may not have.
    let data_dir = settings.data_dir.clone();
    let new_data_dir = !data_dir.exists();
    std::fs::create_dir_all(&data_dir).with_context(|| format!("creating {}", data_dir.display()))?;
    let forget_data_dir = || {
        if new_data_dir {
            let _ = std::fs::remove_dir(&data_dir);
        }
    };
    let started = std::time::Instant::now();

    // The feed is read on a thread of its own, which hands products to the store as it goes:
    // each attempt one transaction, and only the last one can commit (an earlier attempt is
    // abandoned when a later row changes a product it wrote). The store is opened only once
    // there is a product to write.
    let bar = progress_bar(length, "bytes");
    let progress: Box<dyn FnMut(import::ImportProgress) + Send> = {
        let bar = bar.clone();
        Box::new(move |progress| match progress {
            import::ImportProgress::Read { bytes } => bar.set_position(bytes),
            import::ImportProgress::Rebuilt { products, of } => {
                bar.set_length(of);
                bar.set_position(products);
            }
        })
    };
    // Opened by the import itself: once, or twice if its first reading guessed wrong.
    let path = args.file.clone();
    let open = move || Ok(BufReader::with_capacity(1 << 20, std::fs::File::open(&path)?));
    let mut feed_import = import::FeedImport::start(open, format, options, data_dir.clone(), args.strict, progress)
        .map_err(|error| anyhow::anyhow!("{feed}: {error}"))?;
    let mut store = None;
    let mut imported = None;
    loop {
        let (returned, attempt) = tokio::task::spawn_blocking(move || {
            let attempt = feed_import.next_attempt();
            (feed_import, attempt)
        })
        .await?;
        feed_import = returned;
        let Some(products) = attempt else { break };
        let store = match &mut store {
            Some(store) => store,
            empty => empty
                .insert(ucp_store::SqliteStore::open_for_import(&data_dir.join(ucp_server::startup::DATABASE_FILE))?),
        };
        imported = Some(store.import_products(products).await);
    }
    let built = tokio::task::spawn_blocking(move || feed_import.finish()).await?;
    bar.finish_and_clear();
    let built = match built {
        Ok(built) => built,
        Err(error) => {
            if store.is_none() {
                forget_data_dir();
            }
            anyhow::bail!("{feed}: {error}");
        }
    };
    report_skipped(&feed, &built)?;
    if let Some(code) = refusal(&feed, args.strict, &built) {
        // The staging directory goes with `built`, which leaves the data directory empty if
        // this import made it.
        drop(built);
        if store.is_none() {
            forget_data_dir();
        }
        return Ok(code);
    }
    let summary = imported
        .context("no import attempt was made")?
        .map_err(|error| anyhow::anyhow!("import failed, the catalog was not changed: {error}"))?;
    println!(
        "imported {feed} in {:.1}s: {} rows, {} products ({} new, {} updated), {} variants, {} rows skipped",
        started.elapsed().as_secs_f64(),
        built.rows(),
        summary.products_inserted + summary.products_updated,
        summary.products_inserted,
        summary.products_updated,
        summary.variants,
        built.skipped()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// Prints each skipped row of the feed, in line order.
fn report_skipped(feed: &str, built: &import::BuiltFeed) -> anyhow::Result<()> {
    let mut stderr = std::io::BufWriter::new(std::io::stderr().lock());
    let mut written = Ok(());
    built.for_each_skipped(&mut |skipped| {
        if written.is_ok() {
            written = writeln!(stderr, "{feed}: skipped {skipped}");
        }
    })?;
    written?;
    stderr.flush()?;
    Ok(())
}

/// Why an import that wrote nothing was refused (`--strict` with skipped rows, or no valid
/// product), printed; `None` if neither applies.
fn refusal(feed: &str, strict: bool, built: &import::BuiltFeed) -> Option<std::process::ExitCode> {
    if strict && built.skipped() > 0 {
        eprintln!("import failed: {} rows skipped and --strict is set; the catalog was not changed", built.skipped());
    } else if built.products() == 0 {
        eprintln!("import failed: {feed} holds no valid product; the catalog was not changed");
    } else {
        return None;
    }
    Some(std::process::ExitCode::FAILURE)
}

fn routes(args: RoutesArgs) -> anyhow::Result<std::process::ExitCode> {
    let settings = load_settings(args.config.as_ref())?;
    println!("MCP endpoint: POST {} (tools/call, params.name = the operation)", settings.http.mcp_path);
    println!("REST endpoint: {}", settings.http.rest_path);
    println!();
    println!("{:<18} {:<15} {:<18} {:<6} REST PATH", "OPERATION", "CAPABILITY", "MCP TOOL", "METHOD");
    for operation in ucp_server::operations::Operation::ALL {
        let enabled = ucp_server::operations::is_enabled(&settings.capabilities.enabled, operation.capability());
        println!(
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
            Ok(kid) => println!("generated signing key {kid} in {}", data_dir.display()),
            Err(kid) => {
                eprintln!("a signing key exists already ({kid}); use `ucpd keys rotate` to replace it");
                return Ok(std::process::ExitCode::FAILURE);
            }
        },
        KeysCommand::Rotate(_) => {
            std::fs::create_dir_all(data_dir).with_context(context)?;
            let (old, new) = KeyRing::rotate(data_dir, grace_secs, now).with_context(context)?;
            println!("new current key {new}; {old} stays published for {days} days (restart the server to publish)");
        }
        KeysCommand::List(_) => {
            let rows = KeyRing::list(data_dir, grace_secs, now).with_context(context)?;
            if rows.is_empty() {
                println!(
                    "no signing key in {} (one is made on first start or by `ucpd keys generate`)",
                    data_dir.display()
                );
            }
            for (kid, state) in rows {
                println!("{kid}  {state}");
            }
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// A progress bar on a terminal; nothing otherwise.
fn progress_bar(length: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    if let Ok(style) = ProgressStyle::with_template(&format!("{{bar:40}} {{pos}}/{{len}} {unit} ({{eta}})")) {
        bar.set_style(style);
    }
    bar
}
