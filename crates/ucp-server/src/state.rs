//! What every handler shares. Cheap to clone: one `Arc` (every layer of the stack takes a copy
//! per request, so a clone must cost one reference count, not one per field).

use std::sync::Arc;

use ucp_domain::checkout::PricingRules;
use ucp_domain::store::{CatalogStore, CommerceStore};

use crate::config::Settings;
use crate::cursor::CursorCodec;
use crate::discovery::BusinessProfile;
use crate::layers::allowed::Allowed;
use crate::platform::PlatformResolver;

/// The application every handler and layer reads; derefs to [`Shared`].
#[derive(Debug, Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> AppState {
        AppState(Arc::new(shared))
    }

    /// Changes the state while it is still held once (while the application is built).
    pub fn get_mut(&mut self) -> Option<&mut Shared> {
        Arc::get_mut(&mut self.0)
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What the state holds.
#[derive(Debug)]
pub struct Shared {
    /// The commerce core every operation calls.
    pub core: ucp_domain::Commerce,
    /// The legal links every checkout carries.
    pub links: Arc<ucp_protocol::resources::Links>,
    pub settings: Arc<Settings>,
    pub profile: Arc<BusinessProfile>,
    pub catalog: Arc<dyn CatalogStore>,
    pub commerce: Arc<dyn CommerceStore>,
    pub pricing_rules: Arc<PricingRules>,
    pub payments: Arc<crate::payment::Handlers>,
    pub mailer: crate::mailer::Mailer,
    pub clock: crate::clock::Clock,
    pub platforms: PlatformResolver,
    /// RFC 9421: the signature settings and our current signing key.
    pub signatures: Arc<crate::signatures::Signatures>,
    pub cursors: CursorCodec,
    /// The buyer pages' tokens and URLs (`continue_url`, order permalinks).
    pub pages: Arc<crate::page_links::PageTokens>,
    pub allowed: Arc<Allowed>,
    /// The buyer pages' Content-Security-Policy (`layers::page_content_security_policy`).
    pub page_policy: axum::http::HeaderValue,
    /// The precomputed `tools/list` result, serialized.
    pub tools_list_result: Arc<String>,
    /// Requests in flight; when none is left, new requests get 503 with `Retry-After`.
    pub in_flight: Arc<tokio::sync::Semaphore>,
    /// Stored idempotency for state-changing calls (`dispatch::run`).
    pub idempotency: crate::idempotency::Idempotency,
    /// Credentials, identity binding and the platform allow-list (`crate::auth`).
    pub auth: Arc<crate::auth::Authenticator>,
    /// Per-IP and per-platform rate limits (`[limits.rate]`).
    pub rate_limits: crate::layers::RateLimiters,
    /// The merchant's admin credential (`[admin]`; `crate::admin`).
    pub admin: Arc<crate::admin::AdminKeys>,
    /// Calls, errors, latency and the funnel per platform (`crate::traffic`).
    pub traffic: Arc<crate::traffic::Traffic>,
    /// The console's session cookies and form tokens (`crate::admin::session`).
    pub console: Arc<crate::admin::session::ConsoleKeys>,
    /// The order webhooks' outbox (the console's deliveries page reads it).
    pub outbox: Arc<dyn ucp_domain::store::WebhookOutbox>,
}

/// The discovery handler needs only the profile.
impl axum::extract::FromRef<AppState> for Arc<BusinessProfile> {
    fn from_ref(state: &AppState) -> Arc<BusinessProfile> {
        state.profile.clone()
    }
}
