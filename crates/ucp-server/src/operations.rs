//! The operation registry now lives in `ucp-protocol` (a client needs it too); this module
//! keeps the old path working.

pub use ucp_protocol::capability::Capability;
pub use ucp_protocol::operation::{Operation, Payload, RestMethod};

/// Whether `capability` is listed in `capabilities.enabled` (short names).
pub fn is_enabled(enabled: &[String], capability: Capability) -> bool {
    enabled.iter().any(|name| Capability::from_short_name(name) == Some(capability))
}
