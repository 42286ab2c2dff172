//! How a text log line is laid out: what tracing-subscriber's `Full` format writes without
//! colours (the timestamp, the level, the spans with their fields, the target, then the
//! event's fields), written piece by piece instead of through `core::fmt`.
//!
//! Every operation call writes an audit line. The default format writes each part through
//! `write!` (the timestamp alone as six formatted numbers, the target and the colons through
//! `nu_ansi_term` styles that are empty without colours): about 5,000 instructions of an audit
//! line's 9,500, a twentieth of a cached `get_product`. Here the date and time up to the second
//! are formatted once per second per thread, and the rest are copies. The line is the same
//! byte for byte (the tests compare the two).
//!
//! A request's id is not a span here: the server lends it to the request's task
//! (`ucp_server::layers::with_request_id`) and `Line` writes it where the request's span would
//! be, `request{request_id=…}:`, before any span of its own.

use std::cell::Cell;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The `FormatEvent` of ucpd's text log lines (`fmt().event_format(Line)`), without colours.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Line;

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, context: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        // A `log` record's own level and target, not tracing-log's.
        let normalized = event.normalized_metadata();
        let metadata = normalized.as_ref().unwrap_or_else(|| event.metadata());
        write_time(&mut writer, SystemTime::now())?;
        writer.write_str(level(metadata.level()))?;
        writer.write_char(' ')?;
        // The request's id first, where its span would be: outermost (`ucp_server::layers::trace`).
        // Not while requests open that span too, which the loop below writes.
        let mut any = false;
        let written = if ucp_server::layers::request_ids_in_spans() {
            None
        } else {
            ucp_server::layers::with_request_id(|id| {
                writer.write_str("request{request_id=")?;
                writer.write_str(id)?;
                writer.write_str("}:")
            })
        };
        if let Some(written) = written {
            written?;
            any = true;
        }
        if let Some(scope) = context.event_scope() {
            for span in scope.from_root() {
                writer.write_str(span.metadata().name())?;
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>()
                    && !fields.fields.is_empty()
                {
                    writer.write_char('{')?;
                    writer.write_str(&fields.fields)?;
                    writer.write_char('}')?;
                }
                writer.write_char(':')?;
                any = true;
            }
        }
        if any {
            writer.write_char(' ')?;
        }
        writer.write_str(metadata.target())?;
        writer.write_str(": ")?;
        context.format_fields(writer.by_ref(), event)?;
        writer.write_char('\n')
    }
}

/// The level as the default writes it, right-aligned in five columns.
fn level(level: &Level) -> &'static str {
    match *level {
        Level::TRACE => "TRACE",
        Level::DEBUG => "DEBUG",
        Level::INFO => " INFO",
        Level::WARN => " WARN",
        Level::ERROR => "ERROR",
    }
}

thread_local! {
    /// The last second this thread wrote, and its `YYYY-MM-DDTHH:MM:SS`.
    static SECOND: Cell<(u64, [u8; 19])> = const { Cell::new((u64::MAX, [0; 19])) };
}

/// `now` as tracing-subscriber's `SystemTime` writes it (RFC 3339 in UTC with microseconds),
/// and a space.
fn write_time(writer: &mut Writer<'_>, now: SystemTime) -> fmt::Result {
    let since = now.duration_since(UNIX_EPOCH).ok();
    let second = since.and_then(|since| {
        let seconds = since.as_secs();
        let (cached, text) = SECOND.get();
        if cached == seconds {
            return Some(text);
        }
        let text = date_time(seconds)?;
        SECOND.set((seconds, text));
        Some(text)
    });
    let (Some(since), Some(second)) = (since, second) else {
        // Before 1970 or after 9999: the default's own formatter (it is the clock's fault).
        tracing_subscriber::fmt::time::SystemTime.format_time(writer)?;
        return writer.write_char(' ');
    };
    let mut text = [0u8; 28];
    text[..19].copy_from_slice(&second);
    text[19] = b'.';
    digits(&mut text[20..26], since.subsec_micros());
    text[26] = b'Z';
    text[27] = b' ';
    // ASCII digits and punctuation only.
    writer.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
}

/// `YYYY-MM-DDTHH:MM:SS` of `seconds` since 1970 in UTC, for years up to 9999.
fn date_time(seconds: u64) -> Option<[u8; 19]> {
    let (year, month, day, hour, minute, second) = ucp_domain::time::civil(i64::try_from(seconds).ok()?);
    if year > 9_999 {
        return None;
    }
    let mut text = *b"0000-00-00T00:00:00";
    // Each in range for its field (the year checked above), so none is cut.
    for (field, value) in
        [(0..4, year), (5..7, month), (8..10, day), (11..13, hour), (14..16, minute), (17..19, second)]
    {
        digits(&mut text[field], value as u32);
    }
    Some(text)
}

/// Writes `value`'s last `into.len()` decimal digits into `into`, zero-padded.
fn digits(into: &mut [u8], mut value: u32) {
    for place in into.iter_mut().rev() {
        *place = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::log_fields::Fields;
    use crate::log_fields::tests::Memory;

    /// Lines at every level, inside nested spans (one without fields) and outside any.
    fn log_everything() {
        tracing::info!(target: "ucpd::audit", platform = "-", operation = "ping", outcome = "ok", "audit");
        let span = tracing::info_span!("request", request_id = %"e729-8af3");
        let _request = span.enter();
        tracing::info!(target: "ucpd::audit", platform = "https://agent.example/p.json", outcome = "ok", "audit");
        let inner = tracing::warn_span!("fetch");
        let _inner = inner.enter();
        tracing::trace!(n = 1, "trace");
        tracing::debug!(n = 2, "debug");
        tracing::warn!(reason = "slow", "warn");
        tracing::error!(error = %"boom", "error");
        tracing::info!("");
    }

    /// What a text subscriber writes for [`log_everything`], each line's timestamp apart.
    fn written(ours: bool) -> Vec<(String, String)> {
        let memory = Memory::default();
        let builder = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(Level::TRACE)
            .with_writer(memory.clone())
            .fmt_fields(Fields);
        if ours {
            tracing::subscriber::with_default(builder.event_format(Line).finish(), log_everything);
        } else {
            tracing::subscriber::with_default(builder.finish(), log_everything);
        }
        let text = String::from_utf8(memory.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|line| {
                let (time, rest) = line.split_once(' ').unwrap();
                (time.to_owned(), rest.to_owned())
            })
            .collect()
    }

    #[test]
    fn lines_are_what_the_default_format_writes() {
        let (ours, default) = (written(true), written(false));
        assert_eq!(ours.len(), 7);
        let rest = |lines: &[(String, String)]| lines.iter().map(|(_, rest)| rest.clone()).collect::<Vec<_>>();
        assert_eq!(rest(&ours), rest(&default));
        assert!(ours[1].1.starts_with(" INFO request{request_id=e729-8af3}: ucpd::audit: audit platform="), "{ours:?}");
        for ((time, _), (default_time, _)) in ours.iter().zip(&default) {
            // The same shape (the values are the next test's).
            assert_eq!(time.len(), default_time.len(), "{time} {default_time}");
            let shape = |time: &str| {
                time.bytes().map(|byte| if byte.is_ascii_digit() { b'0' } else { byte }).collect::<Vec<_>>()
            };
            assert_eq!(shape(time), shape(default_time));
        }
    }

    #[tokio::test]
    async fn a_requests_lines_carry_its_id_where_its_span_would_be() {
        use axum::Router;
        use axum::body::Body;
        use axum::routing::get;
        use tower::ServiceExt;

        let memory = Memory::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(memory.clone())
            .fmt_fields(Fields)
            .event_format(Line)
            .finish();
        // The test runtime runs on this thread: the handler logs through this subscriber.
        let _default = tracing::subscriber::set_default(subscriber);
        ucp_server::layers::log_request_ids_in_spans(false);
        let router: Router = ucp_server::layers::shared(Router::new().route(
            "/",
            get(|| async {
                tracing::info!(target: "ucpd::audit", outcome = "ok", "audit");
                let inner = tracing::warn_span!("fetch");
                inner.in_scope(|| tracing::warn!(reason = "slow", "warn"));
            }),
        ));
        let request = axum::http::Request::get("/").header("request-id", "client-42").body(Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        ucp_server::layers::log_request_ids_in_spans(true);
        assert_eq!(response.headers()["x-request-id"], "client-42");
        tracing::info!("outside");

        let text = String::from_utf8(memory.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().map(|line| line.split_once(' ').unwrap().1).collect();
        assert_eq!(
            lines,
            [
                " INFO request{request_id=client-42}: ucpd::audit: audit outcome=\"ok\"",
                " WARN request{request_id=client-42}:fetch: ucpd::log_line::tests: warn reason=\"slow\"",
                " INFO ucpd::log_line::tests: outside",
            ]
        );
    }

    #[test]
    fn the_time_is_what_the_default_timer_writes() {
        use time::OffsetDateTime;
        // Across leap days, centuries, year ends and the last representable year.
        let mut seconds: Vec<u64> =
            vec![0, 59, 86_399, 86_400, 951_782_400, 951_868_799, 4_107_542_400, 253_402_300_799];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..2_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            seconds.push(state % 253_402_300_800);
        }
        for second in seconds {
            let expected = OffsetDateTime::from_unix_timestamp(second as i64).unwrap();
            let text = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                expected.year(),
                u8::from(expected.month()),
                expected.day(),
                expected.hour(),
                expected.minute(),
                expected.second()
            );
            assert_eq!(date_time(second).map(|ours| String::from_utf8(ours.to_vec()).unwrap()), Some(text));
        }
        assert_eq!(date_time(253_402_300_800), None, "year 10000 falls back to the default");

        let mut line = String::new();
        let at = UNIX_EPOCH + Duration::new(1_764_774_512, 123_456_789);
        write_time(&mut Writer::new(&mut line), at).unwrap();
        assert_eq!(line, "2025-12-03T15:08:32.123456Z ");
    }
}
