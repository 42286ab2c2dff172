//! Order webhooks (order.md §3, security.md §2; checklist 88, 153-158), business → platform.
//!
//! - Capture ([`target`]): when an order is placed, the platform profile's order capability
//!   `config.webhook_url` and what was negotiated become the order's `WebhookTarget`, only
//!   when the order capability is in the negotiated intersection (checklist 157). It rides
//!   into the core on `Caller::order_webhook` and is stored with the order.
//! - Outbox: the store writes the event in the transaction of the change itself
//!   (`ucp-store` `sqlite/outbox/`), so an event exists if and only if the change committed,
//!   and nothing on the request path waits for a platform.
//! - Delivery ([`Dispatcher`], [`deliver::Sender`]): a background task leases due events,
//!   renders each from its stored order snapshot (the order as it was at that change; the
//!   same bytes on every attempt), signs it with our key, posts it through the SSRF guard, logs
//!   the attempt, and backs off exponentially with jitter until `[webhooks] horizon_secs`,
//!   then dead-letters. At least once: a platform dedupes by `Webhook-Id`.

pub mod deliver;
mod dispatcher;

pub use dispatcher::Dispatcher;

use ucp_domain::webhook::WebhookTarget;

use crate::discovery::BusinessProfile;
use crate::operations::Capability;
use crate::platform::{Negotiated, PlatformProfile};

/// Where order webhooks for this platform go, if anywhere: the `webhook_url` of the order
/// capability the platform negotiated with us, with the versions to render events at.
pub fn target(ours: &BusinessProfile, platform: &PlatformProfile, negotiated: &Negotiated) -> Option<WebhookTarget> {
    let (name, version) = negotiated
        .capabilities
        .iter()
        .find(|(name, _)| ours.short_names.get(*name).copied() == Some(Capability::Order))?;
    let url = platform.webhook_urls.get(name)?;
    Some(WebhookTarget {
        url: url.clone(),
        version: negotiated.version.clone(),
        capability: name.clone(),
        capability_version: version.clone(),
    })
}
