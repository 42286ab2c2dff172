//! `bare-server`: the transport's ceiling. A minimal axum server that answers `POST /ucp/mcp`
//! with the bytes ucpd answers a JSON-RPC `ping` with, after reading the request body, and
//! nothing else: no middleware, no JSON parsing. `bench/run.sh` measures it with the same wrk
//! script, in the same run, as ucpd's ping, so their ratio says how much of the transport's
//! throughput our stack leaves.

use axum::Router;
use axum::body::Bytes;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::post;

use crate::cli::BareArgs;

/// What ucpd answers `{"jsonrpc":"2.0","id":1,"method":"ping"}` with.
pub(crate) const PING_ANSWER: &str = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;

/// Serves until the process is stopped; prints `bare-server ready on ADDR` once listening.
pub(crate) async fn serve(args: BareArgs) -> anyhow::Result<()> {
    let router = Router::new().route(&args.mcp_path, post(answer));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port)).await?;
    println!("bare-server ready on {}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}

async fn answer(body: Bytes) -> impl IntoResponse {
    // The body is read in full, as ucpd's body layer does; its content is not looked at.
    drop(body);
    ([(header::CONTENT_TYPE, "application/json")], PING_ANSWER)
}
