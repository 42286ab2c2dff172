//! ucpd's HTTP server: the business profile at `/.well-known/ucp`, platform-profile
//! negotiation, and the stateless MCP endpoint, over one commerce core.

pub mod admin;
pub mod app;
pub mod auth;
pub mod catalog;
pub mod clock;
pub mod config;
pub mod cursor;
pub mod discovery;
pub mod dispatch;
pub mod error;
pub mod handoff;
pub mod hardening;
pub mod health;
pub mod idempotency;
pub mod keys;
pub mod layers;
pub mod listener;
pub mod mailer;
pub mod mcp;
pub mod operations;
pub mod page_links;
pub mod payment;
pub mod platform;
pub mod purchase;
pub mod response;
pub mod rest;
pub mod signatures;
mod ssrf;
pub mod startup;
pub mod state;
pub mod terms;
pub mod tls;
pub mod traffic;
pub mod trust;
pub mod webhooks;

pub use config::Settings;
pub use startup::{Application, StartError};
