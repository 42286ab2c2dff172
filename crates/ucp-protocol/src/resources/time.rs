//! RFC 3339 timestamps from unix seconds (UTC): the domain's, which stamps order events.

pub use ucp_domain::time::rfc3339;
