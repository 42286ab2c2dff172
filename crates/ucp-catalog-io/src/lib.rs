//! Catalog data in and out of ucpd, with no storage and no network:
//! `import` reads Google Merchant Center feeds (text and RSS 2.0 XML) and our own JSON-lines
//! form into validated [`ucp_domain::catalog::Product`]s; `demo` generates a realistic,
//! deterministic catalog of any size.

pub mod demo;
pub mod import;
