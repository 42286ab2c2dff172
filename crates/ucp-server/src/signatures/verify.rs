//! Verifying a request's signatures against the signer's published keys: the UCP coverage
//! rules (`security.md` §2 "Our verifier policy"), the `created` / `expires` windows, accepted
//! tags, and one valid signature among several being enough.

use super::base::{self, Message, SignatureInput, Target};
use super::keys::KeySet;
use crate::error::{ApiError, ErrorKind};

/// The rules a signature is held to.
#[derive(Debug, Clone)]
pub struct Rules<'a> {
    /// Unix seconds now.
    pub now: i64,
    /// How far `created` may be in the future.
    pub max_skew_secs: i64,
    /// `tag` values accepted besides none.
    pub accepted_tags: &'a [String],
    /// Require `ucp-agent` coverage when the header is present.
    pub require_ucp_agent: bool,
}

/// The signature that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub label: String,
    pub kid: String,
}

/// Why no signature verified; `key_not_found` is set when some signature named a `keyid` the
/// key set does not have (the caller may refresh the profile once and retry).
#[derive(Debug, Clone)]
pub struct Failure {
    pub error: ApiError,
    pub unknown_kid: bool,
}

fn invalid(reason: impl Into<String>) -> ApiError {
    ApiError::new(ErrorKind::SignatureInvalid, reason)
}

/// Verifies the request: `Ok` when at least one signature with an accepted tag verifies.
/// Otherwise the error of the first signature that was tried (or `signature_invalid` when
/// every signature was skipped for its tag).
pub fn verify_request(
    message: &Message<'_>,
    has_body: bool,
    inputs: &[SignatureInput],
    keys: &KeySet,
    rules: &Rules<'_>,
) -> Result<Verified, Failure> {
    let signatures = base::parse_signatures(message.headers).map_err(|error| Failure { error, unknown_kid: false })?;
    let mut first: Option<ApiError> = None;
    let mut unknown_kid = false;
    for input in inputs {
        if let Some(tag) = &input.tag
            && !rules.accepted_tags.iter().any(|accepted| accepted == tag)
        {
            continue;
        }
        match verify_one(message, has_body, input, &signatures, keys, rules) {
            Ok(verified) => return Ok(verified),
            Err(error) => {
                unknown_kid |= error.kind == ErrorKind::KeyNotFound;
                first.get_or_insert(error);
            }
        }
    }
    let error = first.unwrap_or_else(|| invalid("no signature carries an accepted tag (none, or ucp-rest-request)"));
    Err(Failure { error, unknown_kid })
}

fn verify_one(
    message: &Message<'_>,
    has_body: bool,
    input: &SignatureInput,
    signatures: &[(String, Vec<u8>)],
    keys: &KeySet,
    rules: &Rules<'_>,
) -> Result<Verified, ApiError> {
    let label = &input.label;
    let value = signatures
        .iter()
        .find(|(name, _)| name == label)
        .map(|(_, value)| value)
        .ok_or_else(|| invalid(format!("Signature has no member {label} to match Signature-Input")))?;
    check_coverage(message, has_body, input, rules)?;
    if let Some(created) = input.created
        && created > rules.now + rules.max_skew_secs
    {
        return Err(invalid(format!("signature {label} was created {}s in the future", created - rules.now)));
    }
    if let Some(expires) = input.expires
        && expires <= rules.now
    {
        return Err(invalid(format!("signature {label} expired {}s ago", rules.now - expires)));
    }
    let kid = input.keyid.as_deref().ok_or_else(|| invalid(format!("signature {label} has no keyid")))?;
    let published = keys.find(kid).ok_or_else(|| {
        ApiError::new(ErrorKind::KeyNotFound, format!("keyid {kid:?} is not among the signer profile's keys"))
    })?;
    let key = published
        .key
        .as_ref()
        .map_err(|reason| ApiError::new(ErrorKind::AlgorithmUnsupported, format!("key {kid:?}: {reason}")))?;
    if let Some(alg) = &input.alg
        && alg != key.rfc9421_name()
    {
        return Err(ApiError::new(
            ErrorKind::AlgorithmUnsupported,
            format!("signature {label} names alg {alg:?}, but key {kid:?} is {}", key.rfc9421_name()),
        ));
    }
    let base = base::signature_base(message, input)?;
    if !key.verify(base.as_bytes(), value) {
        return Err(invalid(format!(
            "signature {label} does not verify with key {kid:?} (ECDSA values are raw r‖s, not DER)"
        )));
    }
    Ok(Verified { label: label.clone(), kid: kid.to_owned() })
}

/// `@method`, `@authority`, `@path` always; `@query` with a query; `content-digest` and
/// `content-type` with a body; `idempotency-key`, `signature-agent` and (by policy)
/// `ucp-agent` when those headers are sent.
fn check_coverage(
    message: &Message<'_>,
    has_body: bool,
    input: &SignatureInput,
    rules: &Rules<'_>,
) -> Result<(), ApiError> {
    let covers = |name: &str| input.components.iter().any(|component| component == name);
    let mut required: Vec<&str> = vec!["@method", "@authority", "@path"];
    if let Target::Request { query: Some(_), .. } = message.target {
        required.push("@query");
    }
    if has_body {
        required.extend(["content-digest", "content-type"]);
    }
    for header in ["idempotency-key", "signature-agent"] {
        if message.headers.contains_key(header) {
            required.push(header);
        }
    }
    if rules.require_ucp_agent && message.headers.contains_key("ucp-agent") {
        required.push("ucp-agent");
    }
    let missing: Vec<&str> = required.into_iter().filter(|name| !covers(name)).collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(invalid(format!("signature {} does not cover {}", input.label, missing.join(", "))))
    }
}
