//! `ucpd-bench`: a closed-loop load driver for ucpd.
//!
//! - `purchase`: create_checkout → update_checkout → complete_checkout per worker, over MCP or REST;
//!   counts completed orders and records the latency of each call type.
//! - `ping`: the JSON-RPC `ping` baseline through the MCP stack, from the same tool.
//! - `catalog`: search_catalog / lookup_catalog / get_product over MCP or REST.
//! - `bare-server`: a bare axum server answering ucpd's ping bytes (the transport's ceiling).
//! - `--sign` on any of them: RFC 9421-signed requests (`sign`); `jwk` prints the test key.
//!
//! Each run prints one `BENCH_RESULT key=value ...` line (machine-readable) and a small table.

#![allow(clippy::print_stdout)]

mod bare;
mod catalog;
mod cli;
mod driver;
mod endpoint;
mod fixed;
mod purchase;
mod report;
mod sign;
mod stats;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let threads = match &cli.command {
        Command::Purchase(args) => args.common.threads,
        Command::Ping(args) => args.threads,
        Command::Catalog(args) => args.common.threads,
        Command::Jwk => {
            println!("{}", sign::Signer::new().jwk());
            return Ok(());
        }
        Command::BareServer(args) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if let Some(threads) = args.threads {
                builder.worker_threads(threads.max(1));
            }
            return builder.enable_all().build()?.block_on(bare::serve(args.clone()));
        }
    }
    .max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Purchase(args) => purchase::purchase(args).await,
            Command::Ping(args) => fixed::ping(args).await,
            Command::Catalog(args) => catalog::catalog(args).await,
            Command::Jwk | Command::BareServer(_) => Ok(()),
        }
    })
}
