//! The Universal Commerce Protocol on the wire, for both sides of a connection: the request
//! and response types of every operation with their conversions to and from domain types, the
//! `ucp` envelope, messages and error responses, the business and platform profiles, the
//! negotiation algorithm, and the operation registry.
//!
//! This crate knows serde and the domain, nothing else: no HTTP framework, no runtime, no
//! storage. A server renders its answers with it; a client (`ucpd check`) reads them with it.
//!
//! - [`operation`] and [`capability`]: the registry. Every property of an [`Operation`] or a
//!   [`Capability`] is an exhaustive `match`, so adding one does not compile until each
//!   transport and the dispatcher know it.
//! - [`requests`]: the payload of every operation, with the checks a business applies after
//!   parsing; [`tool_schema`] derives the `tools/list` input schemas from them (output schemas
//!   are still written by hand there, until the response bodies are typed here too).
//! - [`envelope`], [`message`], [`error_response`]: what every response body shares;
//!   [`escape`], the JSON string escape of a body mirrored as text (MCP's `content[0].text`).
//! - [`profile`] and [`negotiation`]: who speaks what, and what both sides share (overview §5).

pub mod capability;
pub mod envelope;
pub mod error_response;
pub mod escape;
pub mod message;
pub mod negotiation;
pub mod operation;
pub mod profile;
pub mod requests;
pub mod resources;
pub mod tool_schema;

pub use capability::Capability;
pub use operation::Operation;

/// The protocol version we implement and advertise.
pub const PROTOCOL_VERSION: &str = "2026-04-08";
/// The namespace of the standard capabilities.
pub const UCP_NAMESPACE: &str = "dev.ucp";
