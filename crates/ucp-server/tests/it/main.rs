//! The one integration-test binary: boots the real server on 127.0.0.1:0 with a throwaway
//! SQLite store and talks real HTTP to it.

#![allow(unreachable_pub)]

mod catalog;
mod checkout;
mod discovery;
mod fuzz;
mod helpers;
mod mcp_transport;
mod negotiation;
mod schema;
