//! The commerce core of ucpd: the catalog, cart, checkout and order model, the use cases
//! (`commerce::Commerce`, the one API the transports call), money, and the ports the use
//! cases need (stores, payment processors, clock, notifications).
//!
//! This crate does no I/O. It knows nothing of HTTP, JSON-RPC or SQL; the transports in
//! `ucp-server` and the backends in `ucp-store` depend on it, never the other way round.

pub mod catalog;
pub mod checkout;
pub mod commerce;
pub mod disclosure;
pub mod json;
pub mod money;
pub mod order;
pub mod payment;
pub mod store;
pub mod tax;
pub mod time;
pub mod webhook;

pub use commerce::{Commerce, Error};
