//! `ucpd webhooks list|retry`: the order-webhook outbox of the data directory's database.

use std::path::PathBuf;

use clap::Subcommand;
use ucp_domain::store::WebhookOutbox;
use ucp_domain::webhook::{EventStatus, Retried, RetrySelector};

#[derive(Debug, Subcommand)]
pub(crate) enum WebhooksCommand {
    /// List webhook events, newest first, with their delivery state and last attempt.
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// Only events in this state: pending, delivered, dead or superseded (dead-lettered,
        /// and its order changed since: a later event carries it).
        #[arg(long)]
        status: Option<String>,
        /// At most this many events.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Make an event (by its Webhook-Id) or every dead-lettered one due now, with a fresh
    /// retry horizon. A running server sends them within its poll interval. An event whose
    /// order has changed since is superseded and not sent (the platform would get an older
    /// order after a newer one); its order's latest event is made due in its place when that
    /// one is dead-lettered too.
    Retry {
        #[command(flatten)]
        store: StoreArgs,
        /// The event's id (its Webhook-Id).
        #[arg(required_unless_present = "dead", conflicts_with = "dead")]
        id: Option<String>,
        /// Every dead-lettered event.
        #[arg(long)]
        dead: bool,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct StoreArgs {
    /// Directory of the database [config: data_dir; default ./ucpd-data].
    #[arg(long, env = "UCPD_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// TOML configuration file.
    #[arg(long, env = "UCPD_CONFIG")]
    config: Option<PathBuf>,
}

fn open(args: &StoreArgs) -> anyhow::Result<ucp_store::SqliteStore> {
    let mut settings = crate::load_settings(args.config.as_ref())?;
    if let Some(data_dir) = &args.data_dir {
        settings.data_dir = data_dir.clone();
    }
    let database = settings.data_dir.join(ucp_server::startup::DATABASE_FILE);
    if !database.exists() {
        anyhow::bail!("no database at {} (start `ucpd serve` once, or pass --data-dir)", database.display());
    }
    Ok(ucp_store::SqliteStore::open(&database, 1)?)
}

fn time_of(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|instant| instant.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| ms.to_string())
}

pub(crate) async fn run(command: WebhooksCommand) -> anyhow::Result<std::process::ExitCode> {
    match command {
        WebhooksCommand::List { store, status, limit } => {
            let status = match status.as_deref() {
                None => None,
                Some(text) => Some(EventStatus::parse(text).ok_or_else(|| {
                    anyhow::anyhow!("unknown --status {text:?}; use pending, delivered, dead or superseded")
                })?),
            };
            let events = open(&store)?.list_events(status, limit.clamp(1, 10_000)).await?;
            if events.is_empty() {
                out!("no webhook events");
            }
            for event in events {
                let last = match (event.last_status, &event.last_error) {
                    (Some(code), Some(error)) => format!("last: {code} {error}"),
                    (Some(code), None) => format!("last: {code}"),
                    (None, Some(error)) => format!("last: {error}"),
                    (None, None) => "no attempt yet".to_owned(),
                };
                let when = match event.status {
                    EventStatus::Pending => format!("next {}", time_of(event.next_attempt_at_ms)),
                    EventStatus::Delivered => format!("at {}", event.delivered_at_ms.map(time_of).unwrap_or_default()),
                    EventStatus::Dead => "dead-lettered".to_owned(),
                    EventStatus::Superseded => "dead-lettered; its order changed since (not sent again)".to_owned(),
                };
                let latency = event.last_latency_ms.map(|ms| format!(" ({ms} ms)")).unwrap_or_default();
                out!(
                    "{}  {:<9}  {}  order {}  created {}  attempts {}  {}  {}{}  -> {}",
                    event.id,
                    event.status.as_str(),
                    event.event_type,
                    event.order_id,
                    time_of(event.created_at_ms),
                    event.attempts,
                    when,
                    last,
                    latency,
                    event.url
                );
            }
        }
        WebhooksCommand::Retry { store, id, dead } => {
            let selector = match (id, dead) {
                (_, true) => RetrySelector::Dead,
                (Some(id), false) => RetrySelector::Event(id),
                (None, false) => anyhow::bail!("name an event id or pass --dead"),
            };
            let now = time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000;
            let retried = open(&store)?.retry_events(&selector, i64::try_from(now).unwrap_or(i64::MAX)).await?;
            if retried == Retried::default() {
                note!("{}", if dead { "no dead-lettered webhook event" } else { "no such webhook event" });
                return Ok(std::process::ExitCode::FAILURE);
            }
            // Superseded: sending it would take the platform's view of its order back.
            match (dead, retried.superseded, retried.due) {
                (false, 1, due) => out!(
                    "webhook event superseded, not sent: its order changed since, and its latest event {}",
                    if due == 1 { "is due again in its place" } else { "was delivered or is still pending" }
                ),
                (_, 0, due) => out!("{due} webhook event(s) due again"),
                (_, superseded, due) => out!(
                    "{due} webhook event(s) due again; {superseded} superseded, not sent: their order changed since, \
                     and a later event carries it"
                ),
            }
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
