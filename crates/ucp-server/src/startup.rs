//! Building and running the server: bind, open the store, seed the demo catalog on an empty
//! store, build the profile from configuration, serve until the shutdown future resolves.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use tokio::net::TcpListener;
use ucp_domain::store::CatalogStore;
use ucp_store::SqliteStore;

use crate::config::Settings;
use crate::cursor::CursorCodec;
use crate::discovery::BusinessProfile;
use crate::keys::{KeyRing, load_or_create_cursor_secret};
use crate::layers::{self, Allowed, Binding};
use crate::platform::PlatformResolver;
use crate::state::AppState;
use crate::{discovery, mcp};

/// Name of the SQLite database file in the data directory.
pub const DATABASE_FILE: &str = "ucpd.db";

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {address}: {source}")]
    Bind { address: SocketAddr, source: std::io::Error },
    #[error("data directory {path}: {source}")]
    DataDir { path: String, source: std::io::Error },
    #[error("store: {0}")]
    Store(#[from] ucp_domain::store::StoreError),
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Tls(#[from] crate::tls::TlsError),
}

/// A server bound to its port, ready to run.
#[derive(Debug)]
pub struct Application {
    listener: TcpListener,
    app: crate::app::App,
    state: AppState,
    /// Set when ucpd terminates TLS itself (`[tls]`).
    tls: Option<crate::tls::TlsAcceptor>,
    /// Delivers order webhooks (`[webhooks] enabled`).
    webhooks: Option<crate::webhooks::Dispatcher>,
}

impl Application {
    pub async fn build(settings: Settings) -> Result<Application, StartError> {
        settings
            .check_capabilities(|name| {
                crate::discovery::KNOWN_CAPABILITIES.iter().any(|capability| capability.short_name == name)
            })
            .map_err(|error| StartError::Config(error.0))?;
        let data_dir = settings.data_dir.clone();
        let data_dir_error = |source| StartError::DataDir { path: data_dir.display().to_string(), source };
        std::fs::create_dir_all(&data_dir).map_err(data_dir_error)?;
        let database = data_dir.join(DATABASE_FILE);
        crate::hardening::secure_data_dir(&data_dir, &database).map_err(data_dir_error)?;
        // Bad certificate files fail the start before anything binds.
        let tls =
            if settings.tls.enabled() { Some(crate::tls::TlsAcceptor::from_settings(&settings.tls)?) } else { None };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let listener = TcpListener::bind(settings.listen)
            .await
            .map_err(|source| StartError::Bind { address: settings.listen, source })?;
        let local_addr =
            listener.local_addr().map_err(|source| StartError::Bind { address: settings.listen, source })?;

        let readers = std::thread::available_parallelism().map(|cores| cores.get() * 2).unwrap_or(4).clamp(2, 16);
        let store = Arc::new(SqliteStore::open_with(&database, readers, settings.store.group_commit_max_jobs)?);
        store.set_catalog_cache_bytes(settings.store.catalog_cache_mb.saturating_mul(1024 * 1024));
        store.set_wait_timeout(std::time::Duration::from_millis(settings.store.wait_timeout_ms));
        crate::hardening::secure_database_files(&database).map_err(data_dir_error)?;
        let catalog: Arc<dyn CatalogStore> = store.clone();
        let idempotency_store: Arc<dyn ucp_domain::store::IdempotencyStore> = store.clone();
        let traffic = Arc::new(crate::traffic::Traffic::new(store.clone()));
        let outbox: Arc<dyn ucp_domain::store::WebhookOutbox> = store.clone();
        let commerce: Arc<dyn ucp_domain::store::CommerceStore> = store;
        if settings.demo && catalog.product_count().await? == 0 {
            seed_demo(&catalog, &settings).await?;
        }

        let grace_secs = i64::try_from(settings.signatures.key_grace_days.saturating_mul(86_400)).unwrap_or(i64::MAX);
        let keys = KeyRing::load(&data_dir, grace_secs, time::OffsetDateTime::now_utc().unix_timestamp())
            .map_err(data_dir_error)?;
        let cursor_secret = load_or_create_cursor_secret(&data_dir).map_err(data_dir_error)?;
        let base_url = match &settings.public_url {
            Some(url) => url.as_str().to_owned(),
            None => format!("{scheme}://{local_addr}"),
        };
        if !base_url.starts_with("https://") {
            tracing::warn!(%base_url, "the profile advertises a plain-http base URL: fine for local use, never for production (set --public-url https://…)");
        }
        if settings.dev_insecure_profiles {
            tracing::warn!(
                "DEVELOPMENT MODE: platform profiles may be fetched over plain HTTP from loopback addresses (--dev-insecure-profiles); never enable this in production"
            );
        }
        let payments = crate::payment::Handlers::from_settings(&settings).map_err(StartError::Config)?;
        let profile = BusinessProfile::build(&settings, &base_url, &keys, payments.advertised());
        let signatures = Arc::new(crate::signatures::Signatures {
            settings: settings.signatures.clone(),
            key: keys.current.clone(),
        });
        let platforms =
            PlatformResolver::new(&settings.profiles, settings.dev_insecure_profiles).map_err(StartError::Config)?;
        let auth = crate::auth::Authenticator::new(&settings, &base_url).map_err(StartError::Config)?;
        let webhooks = if settings.webhooks.enabled {
            let timeout = std::time::Duration::from_millis(settings.webhooks.timeout_ms);
            let sender =
                crate::webhooks::deliver::Sender::new(platforms.guard(), keys.current.clone(), &base_url, timeout)
                    .map_err(StartError::Config)?;
            Some(crate::webhooks::Dispatcher::new(outbox.clone(), sender, &settings.webhooks))
        } else {
            None
        };
        let allowed = Allowed::of(&settings.http, &base_url, local_addr, scheme);
        let tools = mcp::tool_list(&settings.capabilities.enabled);
        let in_flight = Arc::new(tokio::sync::Semaphore::new(settings.http.max_concurrent_requests.max(1)));
        let pricing_rules = Arc::new(settings.pricing_rules());
        warn_of_unmatched_disclosures(&pricing_rules.disclosures, catalog.as_ref()).await;
        let mailer = crate::mailer::Mailer::new(data_dir.join("outbox"), &settings.business_name);
        let clock = crate::clock::Clock::default();
        let pages = Arc::new(crate::page_links::PageTokens::new(&cursor_secret, &base_url));
        let admin = admin_keys(&settings, &data_dir).map_err(data_dir_error)?;
        let console = crate::admin::session::ConsoleKeys::new(
            &cursor_secret,
            &admin.fingerprint(),
            base_url.starts_with("https://"),
        );
        let cursors = CursorCodec::new(cursor_secret);
        let core = core_of(
            &settings,
            CorePorts {
                catalog: &catalog,
                commerce: &commerce,
                clock: &clock,
                payments: &payments,
                rules: &pricing_rules,
                mailer: &mailer,
                cursors: &cursors,
                pages: &pages,
            },
        )?;
        let idempotency =
            crate::idempotency::Idempotency::new(idempotency_store, clock.clone(), settings.idempotency.clone());
        // The pages show the disclosures' symbols, from wherever the merchant keeps them.
        let page_policy = layers::page_content_security_policy(
            settings.disclosures.iter().filter_map(|disclosure| disclosure.image_url.as_deref()),
        );
        let mut state = AppState::new(crate::state::Shared {
            admin: Arc::new(admin),
            traffic,
            console: Arc::new(console),
            outbox,
            idempotency,
            core,
            links: Arc::default(),
            in_flight,
            rate_limits: crate::layers::RateLimiters::new(&settings.limits.rate),
            commerce,
            pricing_rules,
            payments: Arc::new(payments),
            mailer,
            clock,
            settings: Arc::new(settings),
            profile: Arc::new(profile),
            catalog,
            platforms,
            signatures,
            cursors,
            pages,
            allowed: Arc::new(allowed),
            page_policy,
            tools_list_result: Arc::new(serde_json::json!({ "tools": tools }).to_string()),
            auth: Arc::new(auth),
        });
        let links = Arc::new(crate::purchase::links(&state));
        if let Some(shared) = state.get_mut() {
            shared.links = links;
        }
        let app = crate::app::App::new(router(state.clone()), &state);
        Ok(Application { listener, app, state, tls, webhooks })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or_else(|_| self.state.settings.listen)
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` resolves, then finishes in-flight requests.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> std::io::Result<()> {
        // Catalog changes made by another process (an import) reach this instance's search
        // index and read caches within a second: reads never ask the database themselves.
        let catalog = Arc::clone(&self.state.catalog);
        let refresher = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                if let Err(error) = catalog.refresh().await {
                    tracing::warn!(%error, "catalog refresh failed");
                }
            }
        });
        tracing::info!(
            listen = %self.local_addr(),
            tls = self.tls.is_some(),
            profile = %format!("{}/.well-known/ucp", self.state.profile.base_url),
            mcp = %self.state.profile.mcp_endpoint,
            "ucpd ready"
        );
        // Expired carts and checkouts become canceled in storage, so every instance (and a
        // restart) sees the same state; reads also refuse expired sessions on their own.
        // Idempotency records past their retention go in the same sweep.
        // Finished webhook events past `webhooks.retention_secs` go in it too.
        let core = self.state.core.clone();
        let idempotency = self.state.idempotency.clone();
        let outbox = Arc::clone(&self.state.outbox);
        let webhook_retention_secs = self.state.settings.webhooks.retention_secs;
        let retention_secs = self.state.settings.limits.session_retention_secs;
        let sweep_every = self.state.settings.checkout.sweep_interval_secs.max(1);
        let sweeper = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(std::time::Duration::from_secs(sweep_every));
            loop {
                ticks.tick().await;
                match core.expire_sessions().await {
                    Ok(0) => {}
                    Ok(expired) => tracing::info!(expired, "expired carts and checkouts swept"),
                    Err(error) => tracing::warn!(%error, "sweeping expired sessions failed"),
                }
                match idempotency.sweep().await {
                    Ok(0) => {}
                    Ok(swept) => tracing::info!(swept, "idempotency records past their retention swept"),
                    Err(error) => tracing::warn!(%error, "sweeping idempotency records failed"),
                }
                match core.delete_expired_sessions(retention_secs).await {
                    Ok(0) => {}
                    Ok(deleted) => tracing::info!(deleted, "expired carts and checkouts past retention deleted"),
                    Err(error) => tracing::warn!(%error, "deleting expired sessions failed"),
                }
                if webhook_retention_secs != 0 {
                    prune_webhook_events(outbox.as_ref(), webhook_retention_secs).await;
                }
            }
        });
        let recovery = tokio::spawn(recover_payments(self.state.core.clone(), sweep_every));
        // Traffic counters reach the store every few seconds (and once more at shutdown).
        let traffic = Arc::clone(&self.state.traffic);
        let flusher = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(crate::traffic::FLUSH_INTERVAL);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                traffic.tick().await;
            }
        });
        // Order webhooks leave from the outbox in the background, never on a request's path.
        let webhooks = self.webhooks.map(crate::webhooks::Dispatcher::spawn);
        let connections = self.state.settings.limits.connections.clone();
        let served = crate::listener::serve(self.listener, self.app, &connections, self.tls, shutdown).await;
        refresher.abort();
        sweeper.abort();
        recovery.abort();
        flusher.abort();
        if let Err(error) = self.state.traffic.flush().await {
            tracing::warn!(%error, "flushing traffic counters at shutdown failed");
        }
        if let Some(webhooks) = webhooks {
            webhooks.abort();
        }
        served
    }
}

/// Deletes the finished webhook events created more than `retention_secs` ago, a write of at
/// most [`PRUNE_BATCH`] at a time, so the writer is never held long and an old backlog (a
/// retention just turned on) goes within one sweep.
async fn prune_webhook_events(outbox: &dyn ucp_domain::store::WebhookOutbox, retention_secs: u64) {
    const PRUNE_BATCH: u64 = 500;
    let retention_ms = i64::try_from(retention_secs.saturating_mul(1_000)).unwrap_or(i64::MAX);
    let before_ms = crate::clock::unix_ms().saturating_sub(retention_ms);
    let mut pruned = 0;
    loop {
        match outbox.prune_finished(before_ms, PRUNE_BATCH).await {
            Ok(batch) => {
                pruned += batch;
                if batch < PRUNE_BATCH {
                    break;
                }
            }
            Err(error) => {
                tracing::warn!(%error, "deleting webhook events past their retention failed");
                break;
            }
        }
    }
    if pruned > 0 {
        tracing::info!(pruned, "finished webhook events past their retention deleted");
    }
}

/// The recovery sweeper (issue 9 item 3): every `every_secs`, checkouts stuck in
/// `complete_in_progress` past `payments.recovery_after_secs` are settled by asking their
/// processor (`Commerce::recover_payments`), and so are merchants' refunds pending as long
/// (`Commerce::recover_refunds`), in batches, the first right at start so a
/// restart after a crash settles what the crash left. Its own task: a slow processor never
/// holds up the expiry sweep.
async fn recover_payments(core: ucp_domain::Commerce, every_secs: u64) {
    const BATCH: u64 = 100;
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(every_secs));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        match core.recover_payments(BATCH).await {
            Ok(recovered) if recovered.is_empty() => {}
            Ok(recovered) => tracing::info!(
                placed = recovered.placed,
                refunded = recovered.refunded,
                released = recovered.released,
                unresolved = recovered.unresolved,
                "settled checkouts stuck in complete_in_progress"
            ),
            Err(error) => tracing::warn!(%error, "recovering stuck checkouts failed"),
        }
        match core.recover_refunds(BATCH).await {
            Ok(settled) if settled.is_empty() => {}
            Ok(settled) => tracing::info!(
                recorded = settled.recorded,
                refused = settled.refused,
                abandoned = settled.abandoned,
                unresolved = settled.unresolved,
                "settled merchants' pending refunds"
            ),
            Err(error) => tracing::warn!(%error, "settling pending refunds failed"),
        }
    }
}

/// What the commerce core is built from (borrowed while the state is put together).
struct CorePorts<'a> {
    catalog: &'a Arc<dyn CatalogStore>,
    commerce: &'a Arc<dyn ucp_domain::store::CommerceStore>,
    clock: &'a crate::clock::Clock,
    payments: &'a crate::payment::Handlers,
    rules: &'a Arc<ucp_domain::checkout::PricingRules>,
    mailer: &'a crate::mailer::Mailer,
    cursors: &'a CursorCodec,
    pages: &'a Arc<crate::page_links::PageTokens>,
}

fn core_of(settings: &Settings, ports: CorePorts<'_>) -> Result<ucp_domain::Commerce, StartError> {
    let exchange_rates =
        settings.catalog.exchange_rates.iter().map(|(code, rate)| (code.as_str().to_owned(), *rate)).collect();
    let core_settings = ucp_domain::commerce::CommerceSettings {
        currency: settings.catalog.currency.clone(),
        exchange_rates,
        default_page_size: settings.catalog.default_page_size,
        max_page_size: settings.catalog.max_page_size,
        max_lookup_ids: settings.catalog.max_lookup_ids,
        cart_ttl_secs: settings.checkout.cart_ttl_secs,
        checkout_ttl_secs: settings.checkout.checkout_ttl_secs,
        payment_recovery_secs: i64::try_from(settings.payments.recovery_after_secs).unwrap_or(i64::MAX),
    };
    let ports = ucp_domain::commerce::Ports {
        catalog: Arc::clone(ports.catalog),
        store: Arc::clone(ports.commerce),
        clock: Arc::new(ports.clock.clone()),
        payments: Arc::clone(&ports.payments.domain),
        rules: Arc::clone(ports.rules),
        notifier: Arc::new(ports.mailer.clone()),
        cursors: Arc::new(ports.cursors.clone()),
        pages: Arc::clone(ports.pages) as Arc<dyn ucp_domain::commerce::PageLinks>,
    };
    Ok(ucp_domain::Commerce::new(ports, core_settings))
}

/// The HTTP routes, each group behind the one middleware stack (`layers`) in its binding's
/// error shape: MCP, REST (with discovery and the 404 fallback), and the handoff pages.
pub fn router(state: AppState) -> Router {
    let mcp_path = state.settings.http.mcp_path.clone();
    let profile_and_fallback = Router::new().route("/.well-known/ucp", get(discovery::get_profile)).fallback(not_found);
    let routes = Router::new()
        .merge(layers::binding_stack(profile_and_fallback, &state, Binding::Rest))
        .merge(layers::binding_stack(Router::new().route(&mcp_path, any(mcp::endpoint)), &state, Binding::Mcp))
        .merge(layers::binding_stack(crate::rest::router(&state), &state, Binding::Rest))
        .merge(layers::binding_stack(crate::handoff::router(), &state, Binding::Page))
        .merge(crate::admin::router(&state))
        .merge(layers::admin_stack(crate::health::metrics(&state), &state, Binding::Rest))
        .merge(layers::probe_stack(crate::health::probes()));
    layers::shared(routes).with_state(state)
}

/// The admin keys: configured, or on a demo start one generated into the data directory.
fn admin_keys(settings: &Settings, data_dir: &std::path::Path) -> std::io::Result<crate::admin::AdminKeys> {
    if !settings.admin.api_keys.is_empty() {
        return Ok(crate::admin::AdminKeys::from_hex(&settings.admin.api_keys));
    }
    if settings.demo && crate::hardening::is_demo_start(settings) {
        let (keys, _) = crate::admin::AdminKeys::demo(data_dir)?;
        let path = data_dir.join(crate::admin::keys::DEMO_KEY_FILE);
        tracing::info!(key_file = %path.display(), "demo start: the admin API and console take the key in this file");
        return Ok(keys);
    }
    Ok(crate::admin::AdminKeys::default())
}

async fn not_found(uri: axum::http::Uri) -> Response {
    let body = serde_json::json!({ "code": "not_found", "content": format!("no route for {}", uri.path()) });
    (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// Logs each disclosure product id the catalog cannot match (a legal notice that silently
/// shows nowhere is worse than a warning at start; the catalog may still gain the product).
async fn warn_of_unmatched_disclosures(disclosures: &ucp_domain::disclosure::Disclosures, catalog: &dyn CatalogStore) {
    /// Most problems logged one by one; the rest are counted.
    const LOGGED: usize = 20;
    if disclosures.is_empty() {
        return;
    }
    match disclosures.unmatched(catalog).await {
        Ok(problems) => {
            problems.iter().take(LOGGED).for_each(|problem| tracing::warn!("{problem}"));
            if problems.len() > LOGGED {
                tracing::warn!(more = problems.len() - LOGGED, "more disclosure product ids do not match");
            }
        }
        Err(error) => tracing::warn!(%error, "could not check the disclosures' product ids against the catalog"),
    }
}

async fn seed_demo(catalog: &Arc<dyn CatalogStore>, settings: &Settings) -> Result<(), StartError> {
    let options = ucp_catalog_io::demo::DemoOptions {
        products: settings.demo_products,
        currency: settings.catalog.currency.clone(),
        ..Default::default()
    };
    let products: Vec<_> = ucp_catalog_io::demo::generate(&options).collect();
    let summary = catalog.upsert_products(products).await?;
    tracing::info!(
        products = summary.products_inserted,
        variants = summary.variants,
        "seeded the empty store with the demo catalog"
    );
    Ok(())
}
