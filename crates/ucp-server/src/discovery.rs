//! The business profile served at `/.well-known/ucp`, and the registry of capabilities we
//! can offer. The profile is built once at start from configuration (never from a request's
//! Host header) and served with `Cache-Control: public` and a strong `ETag`.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use sha2::{Digest, Sha256};
use ucp_protocol::capability::Capability;
use ucp_protocol::negotiation::OfferedCapability;
use ucp_protocol::profile::{self, BusinessUcp, CapabilityEntry, Extends, ServiceBinding, Transport};

use crate::config::Settings;
use crate::keys::KeyRing;

pub use ucp_protocol::{PROTOCOL_VERSION, UCP_NAMESPACE};

/// A capability name accepted in `capabilities.enabled`.
#[derive(Debug, Clone, Copy)]
pub struct KnownCapability {
    pub short_name: &'static str,
}

/// The short names of [`Capability::ALL`], for `config.rs` until it calls
/// `Capability::from_short_name`.
pub const KNOWN_CAPABILITIES: &[KnownCapability] = &{
    let mut known = [KnownCapability { short_name: "" }; Capability::ALL.len()];
    let mut index = 0;
    while index < known.len() {
        known[index].short_name = Capability::ALL[index].short_name();
        index += 1;
    }
    known
};

/// One namespace we advertise in: the standard one, or a configured alias.
#[derive(Debug, Clone)]
pub struct Namespace {
    pub prefix: String,
    pub version: String,
    pub spec_base: String,
    pub schema_base: String,
}

/// What discovery and negotiation need to know about ourselves, built once at start.
#[derive(Debug, Clone)]
pub struct BusinessProfile {
    /// The serialized profile and its ETag.
    pub body: bytes::Bytes,
    pub etag: String,
    pub max_age_secs: u64,
    /// Every (capability, namespace) we offer, for negotiation.
    pub offered: Vec<OfferedCapability>,
    /// Full capability name → short name (`dev.ucp.shopping.catalog.search` → `catalog.search`).
    pub short_names: std::collections::BTreeMap<String, Capability>,
    /// Protocol versions a platform may speak to us.
    pub accepted_versions: Vec<String>,
    /// Base URL, e.g. `https://shop.example`, with no trailing slash.
    pub base_url: String,
    pub mcp_endpoint: String,
    pub rest_endpoint: String,
}

impl BusinessProfile {
    /// Builds the profile for `base_url` (already validated) from the settings.
    pub fn build(
        settings: &Settings,
        base_url: &str,
        keys: &KeyRing,
        payment_handlers: serde_json::Value,
    ) -> BusinessProfile {
        let namespaces = namespaces(settings);
        let mcp_endpoint = format!("{base_url}{}", settings.http.mcp_path);
        let rest_endpoint = format!("{base_url}{}", settings.http.rest_path);
        let enabled: Vec<Capability> = Capability::ALL
            .into_iter()
            .filter(|capability| crate::operations::is_enabled(&settings.capabilities.enabled, *capability))
            .collect();

        let mut services = std::collections::BTreeMap::new();
        let mut capabilities = std::collections::BTreeMap::new();
        let mut offered = Vec::new();
        let mut short_names = std::collections::BTreeMap::new();
        for namespace in &namespaces {
            let binding = |transport: Transport, schema: &str, endpoint: &str| ServiceBinding {
                version: namespace.version.clone(),
                transport,
                spec: format!("{}/{}/specification/overview", namespace.spec_base, namespace.version),
                schema: format!("{}/{}/services/shopping/{schema}", namespace.schema_base, namespace.version),
                endpoint: endpoint.to_owned(),
            };
            services.insert(
                format!("{}.shopping", namespace.prefix),
                vec![
                    binding(Transport::Mcp, "mcp.openrpc.json", &mcp_endpoint),
                    binding(Transport::Rest, "rest.openapi.json", &rest_endpoint),
                ],
            );
            for capability in &enabled {
                let name = capability.name_in(&namespace.prefix);
                let extends: Vec<String> =
                    capability.extends().iter().map(|parent| parent.name_in(&namespace.prefix)).collect();
                let entry = CapabilityEntry {
                    version: namespace.version.clone(),
                    spec: format!(
                        "{}/{}/specification/{}",
                        namespace.spec_base,
                        namespace.version,
                        capability.spec_path()
                    ),
                    schema: format!(
                        "{}/{}/schemas/{}",
                        namespace.schema_base,
                        namespace.version,
                        capability.schema_path()
                    ),
                    extends: Extends::of(&extends),
                };
                capabilities.insert(name.clone(), vec![entry]);
                offered.push(OfferedCapability { name: name.clone(), version: namespace.version.clone(), extends });
                short_names.insert(name, *capability);
            }
        }
        // The current key and the rotated-out ones still in their grace period, under both
        // member names (04-08 `signing_keys`, draft `keys`).
        let jwks = keys.public_jwks();
        let document = profile::BusinessProfile {
            ucp: BusinessUcp { version: PROTOCOL_VERSION.to_owned(), services, capabilities, payment_handlers },
            signing_keys: jwks.clone(),
            keys: jwks,
        };
        // Through a `Value`, so members come out sorted as they always have (the ETag hashes
        // these bytes).
        let body = serde_json::to_value(&document).and_then(|value| serde_json::to_vec(&value)).unwrap_or_default();
        let body = bytes::Bytes::from(body);
        let etag = format!("\"{}\"", hex::encode(&Sha256::digest(&body)[..16]));
        let mut accepted_versions: Vec<String> = vec![PROTOCOL_VERSION.to_owned()];
        for namespace in &namespaces {
            if !accepted_versions.contains(&namespace.version) {
                accepted_versions.push(namespace.version.clone());
            }
        }
        BusinessProfile {
            body,
            etag,
            max_age_secs: settings.http.profile_max_age_secs,
            offered,
            short_names,
            accepted_versions,
            base_url: base_url.to_owned(),
            mcp_endpoint,
            rest_endpoint,
        }
    }
}

fn namespaces(settings: &Settings) -> Vec<Namespace> {
    let mut namespaces = vec![Namespace {
        prefix: UCP_NAMESPACE.into(),
        version: PROTOCOL_VERSION.into(),
        spec_base: "https://ucp.dev".into(),
        schema_base: "https://ucp.dev".into(),
    }];
    for alias in &settings.capabilities.aliases {
        namespaces.push(Namespace {
            prefix: alias.namespace.clone(),
            version: alias.version.clone(),
            spec_base: strip_version_suffix(&alias.spec_base, &alias.version, "specification"),
            schema_base: strip_version_suffix(&alias.schema_base, &alias.version, "schemas"),
        });
    }
    namespaces
}

/// Accepts `https://host` as well as `https://host/<version>/<kind>` for alias bases.
fn strip_version_suffix(base: &str, version: &str, kind: &str) -> String {
    let base = base.trim_end_matches('/');
    base.strip_suffix(&format!("/{version}/{kind}")).unwrap_or(base).to_owned()
}

/// `GET /.well-known/ucp`.
pub(crate) async fn get_profile(State(profile): State<Arc<BusinessProfile>>, headers: HeaderMap) -> Response {
    // Weak comparison (RFC 9110 §13.1.2): a proxy that compresses the body may weaken the tag
    // it passes on (`W/"…"`), and a client may send several headers or a list.
    let not_modified =
        headers.get_all(header::IF_NONE_MATCH).iter().filter_map(|value| value.to_str().ok()).any(|value| {
            value
                .split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == profile.etag)
        });
    let mut response = if not_modified {
        Response::builder().status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(profile.body.clone()))
    }
    .unwrap_or_default();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={}", profile.max_age_secs)) {
        headers.insert(header::CACHE_CONTROL, value);
    }
    if let Ok(value) = HeaderValue::from_str(&profile.etag) {
        headers.insert(header::ETAG, value);
    }
    response
}
