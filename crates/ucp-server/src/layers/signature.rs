//! The signature layer (after the body layer): RFC 9421 verification of MCP and REST
//! operation requests with keys from the signer's profile, RFC 9530 `Content-Digest` over the
//! exact bytes in [`RawBody`] (before any JSON parsing), and the signing of our responses.
//!
//! A `Content-Digest`, when one is sent, is checked on every operation request whatever the
//! policy (checklist 65): a body that is not the body its sender hashed is refused
//! (`digest_mismatch`), signed or not. Without signatures to verify, a digest in algorithms we
//! do not compute is ignored, as RFC 9530 lets a recipient do.
//!
//! Policy per platform (`[signatures]`, `config/signatures.rs`): `off` verifies no signature;
//! `log` verifies what is sent and logs failures; `enforce` refuses an unsigned request with
//! `signature_missing` and a bad one with its code (`security.md` §2 Errors). A verified
//! request carries a [`Principal`] with [`Credential::Signature`] for the authentication step.
//! Discovery, `openapi.json` and the handoff pages are never checked.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{Method, header};
use axum::response::Response;
use serde::Deserialize;

use super::{Binding, RawBody, Scope};
use crate::config::{ResponseSigning, SignaturePolicy};
use crate::error::{ApiError, ErrorKind};
use crate::signatures::base::{self, Message, Target};
use crate::signatures::{digest, verify};
use crate::state::AppState;
use crate::trust::{Credential, Principal};

/// The searcher for a tool's name in a body, built once: `memmem::find` builds one per call.
static COMPLETE_CHECKOUT: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"complete_checkout"));

/// The step: the request (with a [`Principal`] when a signature verified) and whether its
/// response is to be signed ([`sign_response`], once the handler answered), or the refusal.
pub(super) async fn check(scope: &Scope, mut request: Request) -> Result<(Request, bool), Response> {
    let state = &scope.state;
    let settings = &state.signatures.settings;
    if !is_operation_route(scope.binding, request.uri().path(), state) {
        return Ok((request, false));
    }
    let body = body_of(&request);
    // Hashed once, here: the signature check below reuses the outcome.
    let digest = digest::check(request.headers(), &body);
    if let Some(error) = refused(&digest) {
        return Err(super::reject(scope.binding, request, error).await);
    }
    let verifying = settings.any_verification();
    let needs_profile = verifying && !request.headers().contains_key("ucp-agent");
    // Only a body that names `complete_checkout` somewhere can be that call: the others are not
    // parsed a second time just to learn they are not.
    let may_complete =
        settings.sign_responses == ResponseSigning::CompleteCheckout && COMPLETE_CHECKOUT.find(&body).is_some();
    let peek = if scope.binding == Binding::Mcp && (needs_profile || may_complete) {
        serde_json::from_slice::<Peek>(&body).unwrap_or_default()
    } else {
        Peek::default()
    };
    let sign = match settings.sign_responses {
        ResponseSigning::None => false,
        ResponseSigning::All => true,
        ResponseSigning::CompleteCheckout => match scope.binding {
            Binding::Mcp => peek.tool() == Some("complete_checkout"),
            Binding::Rest | Binding::Page => {
                request.method() == Method::POST && request.uri().path().ends_with("/complete")
            }
        },
    };
    if verifying {
        // `Body` is not `Sync`: the checks borrow the head only.
        let (mut parts, request_body) = request.into_parts();
        // Boxed: verification may fetch the signer's profile (a large future).
        let checked = Box::pin(check_request(state, &parts, &body, digest, peek.profile())).await;
        if let Ok(Some(principal)) = &checked {
            parts.extensions.insert(principal.clone());
        }
        request = Request::from_parts(parts, request_body);
        if let Err(error) = checked {
            return Err(super::reject(scope.binding, request, &error).await);
        }
    }
    Ok((request, sign))
}

/// The step when no signature is verified and none of our responses is signed: a sent
/// `Content-Digest` is still checked (checklist 65).
pub(super) async fn check_digest(scope: &Scope, request: Request) -> Result<Request, Response> {
    if !request.headers().contains_key("content-digest")
        || !is_operation_route(scope.binding, request.uri().path(), &scope.state)
    {
        return Ok(request);
    }
    match refused(&digest::check(request.headers(), &body_of(&request))) {
        Some(error) => Err(super::reject(scope.binding, request, error).await),
        None => Ok(request),
    }
}

/// The bytes the body layer read ([`RawBody`]), shared, not copied.
fn body_of(request: &Request) -> Bytes {
    request.extensions().get::<RawBody>().map(|raw| raw.0.clone()).unwrap_or_default()
}

/// The digest outcome that refuses a request whatever the signature policy: a mismatch. A
/// digest in algorithms we do not compute (`algorithm_unsupported`) refuses only a request whose
/// signature is verified, which needs one we can check.
fn refused(digest: &Result<bool, ApiError>) -> Option<&ApiError> {
    digest.as_ref().err().filter(|error| error.kind == ErrorKind::DigestMismatch)
}

/// MCP, and the REST operations below `http.rest_path` (not its `openapi.json`).
fn is_operation_route(binding: Binding, path: &str, state: &AppState) -> bool {
    match binding {
        Binding::Mcp => true,
        Binding::Rest => {
            let base = &state.settings.http.rest_path;
            path.strip_prefix(base.as_str()).is_some_and(|rest| rest.starts_with('/') && rest != "/openapi.json")
        }
        Binding::Page => false,
    }
}

/// `Ok(Some)` when a signature verified, `Ok(None)` when the policy lets the request through
/// without one (off, or log after logging), `Err` to refuse.
async fn check_request(
    state: &AppState,
    request: &Parts,
    body: &Bytes,
    digest: Result<bool, ApiError>,
    meta_profile: Option<&str>,
) -> Result<Option<Principal>, ApiError> {
    let header = request.headers.get("ucp-agent");
    let claimed = if header.is_some() || meta_profile.is_some() {
        // A malformed UCP-Agent is dispatch's to report; here it only means no override.
        state.platforms.profile_url(header, meta_profile).ok()
    } else {
        None
    };
    let policy = state.signatures.settings.for_platform(claimed.as_deref());
    if policy.policy == SignaturePolicy::Off {
        return Ok(None);
    }
    match verify_signed(state, request, body, digest, claimed.as_deref(), policy.require_ucp_agent).await {
        Ok(kid) => {
            let url = claimed.unwrap_or_default();
            tracing::debug!(profile = %url, %kid, "request signature verified");
            let mut profiles = vec![url.clone()];
            if let Some(raw) = meta_profile.filter(|raw| *raw != url) {
                profiles.push(raw.to_owned());
            }
            Ok(Some(Principal { platform: url, credential: Credential::Signature, profiles }))
        }
        Err(error) if policy.policy == SignaturePolicy::Log => {
            tracing::warn!(
                profile = claimed.as_deref().unwrap_or("unknown"),
                code = error.kind.mapping().ucp_code.unwrap_or_default(),
                reason = %error.message,
                "request signature not verified (signatures.policy = log: let through)"
            );
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

/// The digest's outcome (checked by the caller), then the signatures; returns the kid that
/// verified.
async fn verify_signed(
    state: &AppState,
    request: &Parts,
    body: &Bytes,
    digest: Result<bool, ApiError>,
    claimed: Option<&str>,
    require_ucp_agent: bool,
) -> Result<String, ApiError> {
    let headers = &request.headers;
    let Some(inputs) = base::parse_inputs(headers)? else {
        return Err(ApiError::new(
            ErrorKind::SignatureMissing,
            "this server requires RFC 9421 signatures: send Signature-Input, Signature and Content-Digest",
        ));
    };
    digest?;
    let url = claimed.ok_or_else(|| {
        ApiError::new(
            ErrorKind::InvalidProfileUrl,
            "a signed request names its platform profile (UCP-Agent, or MCP meta[\"ucp-agent\"].profile): its keys verify the signature",
        )
    })?;
    let profile = state.platforms.resolve(url).await?;
    let authority = request
        .uri
        .authority()
        .map(|authority| authority.as_str().to_owned())
        .or_else(|| headers.get(header::HOST).and_then(|host| host.to_str().ok()).map(str::to_owned))
        .unwrap_or_default();
    let message = Message {
        target: Target::Request {
            method: request.method.as_str(),
            authority: &authority,
            path: request.uri.path(),
            query: request.uri.query(),
        },
        headers,
    };
    let accepted_tags = &state.signatures.settings.accepted_tags;
    let max_skew_secs = i64::try_from(state.signatures.settings.max_clock_skew_secs).unwrap_or(i64::MAX);
    let rules = verify::Rules { now: state.clock.now(), max_skew_secs, accepted_tags, require_ucp_agent };
    let has_body = !body.is_empty();
    match verify::verify_request(&message, has_body, &inputs, &profile.signature_keys, &rules) {
        Ok(verified) => Ok(verified.kid),
        Err(failure) if failure.unknown_kid => match state.platforms.refresh(url).await {
            Some(fresh) => verify::verify_request(&message, has_body, &inputs, &fresh.signature_keys, &rules)
                .map(|verified| verified.kid)
                .map_err(|failure| failure.error),
            None => Err(failure.error),
        },
        Err(failure) => Err(failure.error),
    }
}

/// Adds `Content-Digest`, `Signature-Input` and `Signature` to one of our responses.
pub(super) async fn sign_response(state: &AppState, response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Response::from_parts(parts, Body::empty());
    };
    state.signatures.sign_response(parts.status.as_u16(), &mut parts.headers, &bytes, state.clock.now());
    Response::from_parts(parts, Body::from(bytes))
}

/// What the layer needs from an MCP body, read without building it: the tool and the profile.
#[derive(Debug, Default, Deserialize)]
struct Peek {
    #[serde(default)]
    params: Option<PeekParams>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekParams {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<PeekArguments>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekArguments {
    #[serde(default)]
    meta: Option<PeekMeta>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekMeta {
    #[serde(default, rename = "ucp-agent")]
    agent: Option<PeekAgent>,
}

#[derive(Debug, Default, Deserialize)]
struct PeekAgent {
    #[serde(default)]
    profile: Option<String>,
}

impl Peek {
    fn tool(&self) -> Option<&str> {
        self.params.as_ref()?.name.as_deref()
    }

    fn profile(&self) -> Option<&str> {
        self.params.as_ref()?.arguments.as_ref()?.meta.as_ref()?.agent.as_ref()?.profile.as_deref()
    }
}
