//! The commerce core of ucpd: the catalog model, money and the storage traits the use cases
//! need. (Capability negotiation is protocol, and lives in `ucp-protocol`.)
//!
//! This crate does no I/O. It knows nothing of HTTP, JSON-RPC or SQL; the transports in
//! `ucp-server` and the backends in `ucp-store` depend on it, never the other way round.

pub mod catalog;
pub mod checkout;
pub mod money;
pub mod store;
