//! The accept loop and the per-connection server (slowloris limits, issue 8 item 5): at most
//! `limits.connections.max_connections` connections at once (further ones wait in the kernel's
//! backlog), a header read timeout, an idle timeout, and graceful shutdown. The body read
//! timeout is the body layer's (`layers::body`), which sees where a request's body starts.
//!
//! [`serve_connection`] takes any accepted stream (`AsyncRead + AsyncWrite`), so a TLS acceptor
//! can wrap the TCP stream first and put what it learned (a client certificate) into the
//! [`ConnectionFacts`] every request of the connection receives as extensions.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::ConnectInfo;
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::app::App;
use crate::config::ConnectionLimits;
use crate::trust::ClientCertificate;

/// How long connections get to finish their requests once shutdown starts.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `app` (a router, or an [`App`]) on `listener` until `shutdown` resolves, then lets open connections finish
/// (each within [`SHUTDOWN_GRACE`]). Every request carries `ConnectInfo<std::net::SocketAddr>`.
///
/// With `tls`, each connection first completes its TLS handshake (within the acceptor's
/// handshake timeout; dropped at shutdown), and every request of a connection whose client
/// proved a certificate carries it as a [`crate::trust::ClientCertificate`] extension.
pub async fn serve(
    listener: TcpListener,
    app: impl Into<App>,
    limits: &ConnectionLimits,
    tls: Option<crate::tls::TlsAcceptor>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app.into();
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let stopping = CancellationToken::new();
    let stop = stopping.clone();
    let signal = tokio::spawn(async move {
        shutdown.await;
        stop.cancel();
    });
    loop {
        let place = tokio::select! {
            place = places.clone().acquire_owned() => match place {
                Ok(place) => place,
                Err(_) => break,
            },
            () = stopping.cancelled() => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors and the like: wait a moment rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stopping.cancelled() => break,
        };
        let _ = stream.set_nodelay(true);
        let mut facts = ConnectionFacts { peer, certificate: None };
        let app = app.clone();
        let limits = limits.clone();
        let stopping = stopping.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_connection(stream, app, facts, &limits, stopping).await,
                Some(acceptor) => {
                    let accepted = tokio::select! {
                        accepted = acceptor.accept(stream) => accepted,
                        () = stopping.cancelled() => return,
                    };
                    match accepted {
                        Ok((stream, certificate)) => {
                            if let Some(certificate) = certificate {
                                facts.certificate = Some(Arc::new(certificate));
                            }
                            serve_connection(stream, app, facts, &limits, stopping).await;
                        }
                        // Plain HTTP on the TLS port, an unknown client CA, a timeout: the
                        // client's problem, so not a warning.
                        Err(error) => tracing::debug!(%peer, %error, "TLS handshake failed"),
                    }
                }
            }
            drop(place);
        });
    }
    signal.abort();
    // Every connection holds a place: all places back means all connections closed.
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE + Duration::from_secs(1), places.acquire_many(all)).await;
    Ok(())
}

/// Serves one connection until the client closes it, it idles past
/// `limits.idle_timeout_ms`, a request's header block takes longer than
/// `limits.header_read_timeout_ms`, or `shutdown` is cancelled (then in-flight requests finish
/// first). Every request of the connection gets its `facts` as extensions.
pub async fn serve_connection<I>(
    io: I,
    app: App,
    facts: ConnectionFacts,
    limits: &ConnectionLimits,
    shutdown: CancellationToken,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let moves = Arc::new(AtomicU64::new(0));
    let io = Watched { io, moves: Arc::clone(&moves) };
    let service = app.map_request(move |mut request: Request<Incoming>| {
        let extensions = request.extensions_mut();
        extensions.insert(ConnectInfo(facts.peer));
        if let Some(certificate) = &facts.certificate {
            extensions.insert(ClientCertificate::clone(certificate));
        }
        request
    });
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(Duration::from_millis(limits.header_read_timeout_ms));
    builder.http2().timer(TokioTimer::new());
    let connection = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(service));
    tokio::pin!(connection);

    let idle = Duration::from_millis(limits.idle_timeout_ms);
    let mut ticks = tokio::time::interval((idle / 4).max(Duration::from_millis(25)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut closing: Option<Instant> = None;
    // The count of reads and writes the last tick saw, and since when it has not moved.
    let (mut seen, mut quiet_since) = (0, Instant::now());
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(error = %error, "connection ended with an error");
                }
                return;
            }
            _ = ticks.tick() => {
                if let Some(since) = closing {
                    if since.elapsed() > SHUTDOWN_GRACE {
                        return;
                    }
                    continue;
                }
                let moved = moves.load(Ordering::Relaxed);
                if moved != seen {
                    (seen, quiet_since) = (moved, Instant::now());
                    continue;
                }
                let quiet_for = quiet_since.elapsed();
                if quiet_for >= idle {
                    tracing::debug!(idle_ms = quiet_for.as_millis() as u64, "closing an idle connection");
                    // Nothing moved for the whole idle period: there is nothing to finish.
                    return;
                }
            }
            () = shutdown.cancelled(), if closing.is_none() => {
                connection.as_mut().graceful_shutdown();
                closing = Some(Instant::now());
            }
        }
    }
}

/// What every request of a connection is told about it, as request extensions.
#[derive(Debug, Clone)]
pub struct ConnectionFacts {
    /// As `ConnectInfo<SocketAddr>`, which the rate limits key by.
    pub peer: std::net::SocketAddr,
    /// The verified client certificate of a TLS connection, as [`ClientCertificate`].
    pub certificate: Option<Arc<ClientCertificate>>,
}

/// An accepted stream that counts the reads and writes that moved bytes. The connection's
/// idle ticker notes when the count last changed, so a connection is closed between
/// `idle_timeout_ms` and a quarter more after its last byte; a read or a write costs an
/// increment rather than a clock read (two per request).
struct Watched<I> {
    io: I,
    /// Reads and writes that moved bytes; only this stream writes it.
    moves: Arc<AtomicU64>,
}

impl<I> Watched<I> {
    fn touch(&self) {
        let moved = self.moves.load(Ordering::Relaxed);
        self.moves.store(moved.wrapping_add(1), Ordering::Relaxed);
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Watched<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buffer.filled().len();
        let poll = Pin::new(&mut self.io).poll_read(context, buffer);
        if matches!(poll, Poll::Ready(Ok(()))) && buffer.filled().len() > before {
            self.touch();
        }
        poll
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Watched<I> {
    fn poll_write(mut self: Pin<&mut Self>, context: &mut Context<'_>, bytes: &[u8]) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write(context, bytes);
        if matches!(poll, Poll::Ready(Ok(written)) if written > 0) {
            self.touch();
        }
        poll
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffers: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.io).poll_write_vectored(context, buffers);
        if matches!(poll, Poll::Ready(Ok(written)) if written > 0) {
            self.touch();
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(context)
    }
}
