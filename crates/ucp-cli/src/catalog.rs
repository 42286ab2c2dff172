//! `ucpd demo-catalog` and `ucpd import`: the catalog in, with a progress bar on a terminal.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ucp_catalog_io::{demo, import};
use ucp_domain::store::CatalogStore;
use ucp_server::Settings;

#[derive(Debug, clap::Args)]
pub(crate) struct DemoArgs {
    /// How many products to generate.
    #[arg(long, default_value_t = 1000)]
    pub(crate) products: u64,
    /// Output file ("-" for standard output).
    #[arg(long, short)]
    pub(crate) output: PathBuf,
    /// Seed of the generator: the same seed always gives the same catalog.
    #[arg(long, default_value_t = 42)]
    pub(crate) seed: u64,
    /// Currency of the prices.
    #[arg(long, default_value = "USD")]
    pub(crate) currency: String,
    /// Base URL for product pages and images.
    #[arg(long, default_value = "https://demo.ucpd.dev")]
    pub(crate) base_url: String,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// The feed file.
    pub(crate) file: PathBuf,
    /// Directory of the store to load into [config: data_dir].
    #[arg(long, env = "UCPD_DATA_DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// TOML configuration file.
    #[arg(long, env = "UCPD_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Feed format: gmc-text (tsv, csv), gmc-xml (rss, xml) or jsonl; detected when absent.
    #[arg(long)]
    pub(crate) format: Option<String>,
    /// The catalog's currency, which must be the server's [config: catalog.currency; default
    /// USD]: prices that name none are in it, and a product priced in another is skipped (the
    /// server serves prices as stored and charges them in catalog.currency). Read from the
    /// same --config and UCPD_* variables as `ucpd serve`; this flag only confirms it.
    #[arg(long)]
    pub(crate) currency: Option<String>,
    /// Fail, writing nothing, if any row is skipped (a value left out of a row it imports, such
    /// as an additional image that is no URL, is only a warning).
    #[arg(long)]
    pub(crate) strict: bool,
}

/// mimalloc rather than glibc's malloc: allocation was about a sixth of the server's CPU on a
/// catalog read, and glibc's consolidation of freed large buffers showed on every answer
/// (BENCHMARKS.md, "The allocator"), through `ucp-alloc`, which calls mimalloc's plain entry
/// points where they align as asked (BENCHMARKS.md, "The allocator's plain path").
#[global_allocator]
static ALLOCATOR: ucp_alloc::Mimalloc = ucp_alloc::Mimalloc;

pub(crate) fn demo_catalog(args: DemoArgs) -> anyhow::Result<std::process::ExitCode> {
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
        let written = demo::write_json_lines(&options, &mut writer, &mut progress).map_err(crate::on_stdout)?;
        writer.flush().map_err(crate::on_stdout)?;
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
    note!("wrote {written} products to {}", args.output.display());
    Ok(std::process::ExitCode::SUCCESS)
}

pub(crate) async fn import_feed(args: ImportArgs) -> anyhow::Result<std::process::ExitCode> {
    let mut settings = Settings::load(args.config.as_deref(), std::env::vars())?;
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
    // The catalog's currency is the server's setting, read as `serve` reads it: a flag that
    // names another would import products the server serves in one currency and charges in
    // another.
    let currency = settings.catalog.currency.clone();
    if let Some(flag) = &args.currency
        && !flag.trim().eq_ignore_ascii_case(&currency)
    {
        anyhow::bail!(
            "--currency {flag} is not the catalog's currency {currency}: the server serves and charges prices in \
             catalog.currency; set it in the configuration file or UCPD_CATALOG__CURRENCY, for `ucpd serve` too"
        );
    }
    let options = import::ImportOptions { currency };
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
    report_rows(&feed, format, &settings.catalog.currency, &built)?;
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
    let warnings = match built.warnings() {
        0 => String::new(),
        warnings => format!(", {warnings} values left out"),
    };
    out!(
        "imported {feed} in {:.1}s: {} rows, {} products ({} new, {} updated), {} variants, {} rows skipped{warnings}",
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

/// Prints each skipped row of the feed and each value left out of a row, in line order, then
/// a hint for what a merchant is likely to have to change: the catalog's currency, when rows
/// were skipped for theirs, or a comma inside an image URL of a text feed.
fn report_rows(
    feed: &str,
    format: import::FeedFormat,
    currency: &str,
    built: &import::BuiltFeed,
) -> anyhow::Result<()> {
    let mut stderr = std::io::BufWriter::new(std::io::stderr().lock());
    let mut written = Ok(());
    built.for_each_skipped(&mut |skipped| {
        if written.is_ok() {
            written = writeln!(stderr, "{feed}: skipped {skipped}");
        }
    })?;
    let mut images = false;
    built.for_each_warning(&mut |warning| {
        images |= warning.field == "additional_image_link";
        if written.is_ok() {
            written = writeln!(stderr, "{feed}: warning: {warning}");
        }
    })?;
    written?;
    if images && format == import::FeedFormat::MerchantCenterText {
        writeln!(
            stderr,
            "{feed}: a text feed separates the URLs of additional_image_link with commas: write a comma inside a \
             URL as %2C"
        )?;
    }
    if let Some(hint) = currency_hint(currency, &built.foreign_currencies()?) {
        writeln!(stderr, "{feed}: {hint}")?;
    }
    stderr.flush()?;
    Ok(())
}

/// What to do when rows were skipped for a price in another currency than the catalog's
/// (`foreign`: each currency with how many rows, the most first); `None` if none was.
fn currency_hint(currency: &str, foreign: &[(String, u64)]) -> Option<String> {
    let (most, _) = foreign.first()?;
    let counts: Vec<String> = foreign.iter().map(|(code, rows)| format!("{code} ({rows})")).collect();
    Some(format!(
        "rows priced in {} were skipped: the catalog's currency is {currency} (catalog.currency). If the shop \
         sells in {most}, set `currency = \"{most}\"` under [catalog] in the configuration file, or \
         UCPD_CATALOG__CURRENCY={most}, for `ucpd serve` too, and import again",
        counts.join(", ")
    ))
}

/// Why an import that wrote nothing was refused (`--strict` with skipped rows, or no valid
/// product), printed; `None` if neither applies.
fn refusal(feed: &str, strict: bool, built: &import::BuiltFeed) -> Option<std::process::ExitCode> {
    if strict && built.skipped() > 0 {
        note!("import failed: {} rows skipped and --strict is set; the catalog was not changed", built.skipped());
    } else if built.products() == 0 {
        note!("import failed: {feed} holds no valid product; the catalog was not changed");
    } else {
        return None;
    }
    Some(std::process::ExitCode::FAILURE)
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
