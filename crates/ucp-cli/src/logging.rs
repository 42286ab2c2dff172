//! Where ucpd's log lines go: stderr, through a buffer that a thread of its own writes out.
//!
//! Every operation call writes an audit line, so the log's cost is paid per request. A request
//! appends its formatted line to a shared buffer under a lock and goes on; the log thread writes
//! the buffer out every [`INTERVAL`], or as soon as it holds [`FLUSH_AT`] bytes, in one `write`.
//! Nobody is woken per line: `tracing_appender`'s channel woke its thread (a futex wake and a
//! context switch) for almost every line under load, which with the line's own `write` was
//! 7.7 % of a `get_product` (BENCHMARKS.md, "Where the time went at 100,000 products").
//!
//! Not lossy: a request that finds [`MAX_BUFFERED`] bytes waiting (stderr blocked) waits until
//! the thread has written them out, rather than dropping audit lines. Lines reach stderr at most
//! [`INTERVAL`] after they are logged, and [`LogGuard`] writes out the rest when ucpd exits.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest a line waits in the buffer.
const INTERVAL: Duration = Duration::from_millis(20);
/// A buffer this full is written out at once.
const FLUSH_AT: usize = 64 * 1024;
/// A buffer this full makes loggers wait for the log thread.
const MAX_BUFFERED: usize = 4 * 1024 * 1024;

/// The lines not yet written, and whether ucpd is exiting.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    closing: bool,
}

#[derive(Default)]
struct Shared {
    pending: Mutex<Pending>,
    /// Wakes the log thread: the buffer is full, or ucpd is exiting.
    full: Condvar,
    /// Wakes loggers waiting for room.
    drained: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A logger that panicked mid-append leaves at worst a partial line.
        self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Installs the global subscriber: the `UCPD_LOG` filter (default `info`), lines as text or as
/// JSON (`UCPD_LOG_FORMAT=json`), colours only on a terminal, written out by the log thread
/// (or straight to stderr if that thread cannot be started).
pub(crate) fn init() -> Option<LogGuard> {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("UCPD_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,tower_http=warn"));
    let ansi = std::io::stderr().is_terminal();
    let json = std::env::var("UCPD_LOG_FORMAT").is_ok_and(|format| format == "json");
    match to(std::io::stderr()) {
        Ok((writer, guard)) => {
            install(filter, ansi, json, writer);
            Some(guard)
        }
        Err(error) => {
            install(filter, ansi, json, std::io::stderr);
            tracing::warn!(%error, "could not start the log thread; logging straight to stderr");
            None
        }
    }
}

fn install<W>(filter: tracing_subscriber::EnvFilter, ansi: bool, json: bool, writer: W)
where
    W: for<'w> tracing_subscriber::fmt::MakeWriter<'w> + Send + Sync + 'static,
{
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(writer);
    if json {
        builder.json().init();
    } else if ansi {
        builder.init();
    } else {
        // `Line` writes each request's id itself, from the request's task: no span needed.
        ucp_server::layers::log_request_ids_in_spans(false);
        builder.fmt_fields(crate::log_fields::Fields).event_format(crate::log_line::Line).init();
    }
}

/// The `MakeWriter` of the fmt subscriber: each event's line is appended whole.
#[derive(Clone)]
pub(crate) struct LogWriter {
    shared: Arc<Shared>,
}

/// Writes out what is left and stops the log thread when dropped.
pub(crate) struct LogGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// Starts the log thread writing to `out`.
pub(crate) fn to(out: impl Write + Send + 'static) -> std::io::Result<(LogWriter, LogGuard)> {
    let shared = Arc::new(Shared::default());
    let thread = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new().name("ucpd-log".into()).spawn(move || write_out(&shared, out))?
    };
    Ok((LogWriter { shared: Arc::clone(&shared) }, LogGuard { shared, thread: Some(thread) }))
}

/// The log thread: takes the buffer every interval (or when woken) and writes it out.
fn write_out(shared: &Shared, mut out: impl Write) {
    let mut taken = Vec::new();
    loop {
        let closing = {
            let mut pending = shared.lock();
            if pending.bytes.len() < FLUSH_AT && !pending.closing {
                pending = shared
                    .full
                    .wait_timeout(pending, INTERVAL)
                    .map_or_else(|error| error.into_inner().0, |woken| woken.0);
            }
            std::mem::swap(&mut pending.bytes, &mut taken);
            pending.closing
        };
        shared.drained.notify_all();
        if !taken.is_empty() {
            // Nowhere to report a failed write to stderr; the next lines are tried anyway.
            let _ = out.write_all(&taken).and_then(|()| out.flush());
            taken.clear();
            taken.shrink_to(FLUSH_AT * 2);
        }
        if closing && shared.lock().bytes.is_empty() {
            return;
        }
    }
}

impl Write for &LogWriter {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        let mut pending = self.shared.lock();
        while pending.bytes.len() >= MAX_BUFFERED && !pending.closing {
            self.shared.full.notify_one();
            pending = self.shared.drained.wait(pending).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        let before = pending.bytes.len();
        pending.bytes.extend_from_slice(line);
        if before < FLUSH_AT && pending.bytes.len() >= FLUSH_AT {
            self.shared.full.notify_one();
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogWriter {
    type Writer = &'a LogWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self
    }
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.full.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    /// A `Write` the test can read back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_arrive_soon_and_whole_and_the_guard_writes_out_the_rest() {
        let captured = Captured::default();
        let (writer, guard) = to(captured.clone()).unwrap();
        (&writer).write_all(b"ready\n").unwrap();
        let started = Instant::now();
        while captured.0.lock().unwrap().is_empty() {
            assert!(started.elapsed() < Duration::from_secs(5), "a lone line is written out within the interval");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(captured.0.lock().unwrap().as_slice(), b"ready\n");

        // More than the cap from several threads: every line arrives whole, none is lost.
        let line = format!("{}\n", "x".repeat(999));
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..2_000 {
                        (&writer).write_all(line.as_bytes()).unwrap();
                    }
                });
            }
        });
        drop(guard);
        let written = captured.0.lock().unwrap();
        assert_eq!(written.len(), 6 + 8_000 * 1_000);
        assert!(written[6..].chunks(1_000).all(|chunk| chunk == line.as_bytes()));
    }
}
