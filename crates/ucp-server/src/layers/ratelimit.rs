//! Rate limits (issue 8 item 5; checklist 48, 49): per client IP before the body is read, and
//! per platform once the platform is known (the authenticated [`Principal`] when a trust layer
//! set one, else the profile URL the request claims). A refusal is 429 with `Retry-After`, and
//! on MCP a JSON-RPC -32000 error with `data.retry_after`.
//!
//! The client IP is the socket's peer, or, when the peer is one of `limits.rate.trusted_proxies`,
//! the right-most `X-Forwarded-For` entry that is not a trusted proxy. Limits are GCRA buckets
//! (`governor`) in keyed limiters whose key set is bounded: keys are hashed (with a per-process
//! random seed) into `limits.rate.max_keys` slots, so a flood of new clients or invented profile
//! URLs costs a fixed amount of memory; colliding clients share a bucket.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request};
use serde::Deserialize;

use super::scope::Step;
use super::{RawBody, Scope};
use crate::trust::Principal;

/// The per-IP step, before the body is read.
pub(super) async fn by_ip(scope: &Scope, request: Request) -> Step {
    let limiters = &scope.state.rate_limits;
    if !limiters.enabled() {
        return Ok(request);
    }
    let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>().copied() else {
        return Ok(request);
    };
    let ip = limiters.client_ip(peer.ip(), request.headers());
    match limiters.check_ip(ip) {
        Ok(()) => Ok(request),
        Err(error) => {
            tracing::warn!(client = %ip, "rate limited by address");
            Err(super::reject(scope.binding, request, &error).await)
        }
    }
}

/// The per-platform step, after the body is read and the trust steps ran. The body has been
/// read, so a refusal needs no peek at it.
#[allow(
    clippy::result_large_err,
    reason = "a step hands on a Request or answers a Response, both about as large, each moved once"
)]
pub(super) fn by_platform(scope: &Scope, request: Request) -> Step {
    let limiters = &scope.state.rate_limits;
    if !limiters.enabled() {
        return Ok(request);
    }
    let platform = match request.extensions().get::<Principal>() {
        Some(principal) => Some(principal.platform.clone()),
        None => claimed_profile(scope, &request),
    };
    let Some(platform) = platform else { return Ok(request) };
    match limiters.check_platform(&platform) {
        Ok(()) => Ok(request),
        Err(error) => {
            tracing::warn!(%platform, "rate limited by platform");
            Err(super::render(scope.binding, &super::RpcId::of(&request), &error))
        }
    }
}

/// The profile URL named by `UCP-Agent`, else by MCP `params.arguments.meta["ucp-agent"].profile`
/// (read from the raw body without building a JSON tree).
fn claimed_profile(scope: &Scope, request: &Request) -> Option<String> {
    if let Some(header) = request.headers().get("ucp-agent") {
        return scope.state.platforms.profile_url(Some(header), None).ok();
    }
    #[derive(Deserialize)]
    struct Envelope {
        params: Option<Params>,
    }
    #[derive(Deserialize)]
    struct Params {
        arguments: Option<Arguments>,
    }
    #[derive(Deserialize)]
    struct Arguments {
        meta: Option<Meta>,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "ucp-agent")]
        agent: Option<Agent>,
    }
    #[derive(Deserialize)]
    struct Agent {
        profile: Option<String>,
    }
    let RawBody(bytes) = request.extensions().get::<RawBody>()?;
    let envelope: Envelope = serde_json::from_slice(bytes).ok()?;
    envelope.params?.arguments?.meta?.agent?.profile
}
