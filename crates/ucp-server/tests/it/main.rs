//! The one integration-test binary: boots the real server on 127.0.0.1:0 with a throwaway
//! SQLite store and talks real HTTP to it.

#![allow(unreachable_pub)]

mod abuse;
mod abuse_profiles;
mod admin;
mod auth;
mod cart;
mod catalog;
mod catalog_filters_unknown;
mod checkout;
mod checkout_asks;
mod checkout_edges;
mod checkout_invariants;
mod concurrency;
mod conformance_more;
mod conformance_rest;
mod console;
mod console_browser;
mod console_forms;
mod disclosures;
mod discount_codes;
mod discovery;
mod fuzz;
mod handoff;
mod handoff_browser;
mod handoff_tokens;
mod hardening;
mod helpers;
mod idempotency;
mod layers;
mod mcp_transport;
mod mtls;
mod negotiation;
mod order_ops;
mod order_refunds;
mod order_restock;
mod orders;
mod payments;
mod recovery;
mod refunds_pending;
mod refunds_reconcile;
mod refunds_units;
mod rest;
mod schema;
mod signatures;
mod tls;
mod webhook_retention;
mod webhooks;
