//! The audit line (issue 8 item 5): one `ucpd::audit` event per operation call, written at the
//! end of `dispatch::run`, naming the platform, the principal's credential (if a trust layer
//! authenticated one), the operation, the resource id and the outcome. Never secrets, tokens,
//! credentials, payloads or buyer data.
//!
//! The principal comes with the call (`dispatch::Invocation::principal`), so a call that runs as
//! a task of its own (`complete_checkout`) names it too.

use crate::error::ApiError;
use crate::operations::Operation;
use crate::trust::{Credential, Principal};

/// Who made a call, as its audit line names them.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The authenticated principal's platform and credential, if a trust step established one.
    principal: Option<(String, Credential)>,
}

impl Caller {
    pub fn of(principal: Option<&Principal>) -> Caller {
        Caller { principal: principal.map(|principal| (principal.platform.clone(), principal.credential)) }
    }
}

/// Writes the audit line of one call.
pub fn record<T>(
    operation: Operation,
    platform: Option<&str>,
    caller: &Caller,
    id: Option<&str>,
    result: &Result<T, ApiError>,
) {
    let outcome = match result {
        Ok(_) => "ok",
        Err(error) => error.kind.mapping().ucp_code.unwrap_or(error.kind.mapping().rest_code),
    };
    let principal = caller.principal.as_ref();
    tracing::info!(
        target: "ucpd::audit",
        platform = platform.unwrap_or("-"),
        principal = principal.map_or("-", |(platform, _)| platform.as_str()),
        credential = principal.map_or("none", |(_, credential)| credential.name()),
        operation = operation.name(),
        resource = id.unwrap_or("-"),
        outcome,
        "audit"
    );
}
