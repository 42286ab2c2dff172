//! How a text log line writes its fields (and a span's): what tracing-subscriber's
//! `DefaultFields` writes without colours, with a short path for the common value.
//!
//! Every operation call writes an audit line of seven string fields. The default formatter
//! sends each through `core::fmt` twice over (an ANSI style around the name, the value's
//! `Debug`), which was about a tenth of a cached `get_product`'s instructions. Here a string
//! of printable ASCII with no quote or backslash (a platform URL, an operation name, an
//! outcome) is written as `name="value"` directly: what its `Debug` is. Anything else takes
//! the default's way, so the line is the same byte for byte (the tests compare the two), and a
//! logged value still cannot smuggle a terminal escape into the log.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::Writer;

/// The `FormatFields` of ucpd's text log lines (`fmt().fmt_fields(Fields)`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Fields;

impl<'writer> MakeVisitor<Writer<'writer>> for Fields {
    type Visitor = Visitor<'writer>;

    fn make_visitor(&self, writer: Writer<'writer>) -> Visitor<'writer> {
        Visitor { writer, empty: true, result: Ok(()) }
    }
}

pub(crate) struct Visitor<'writer> {
    writer: Writer<'writer>,
    /// Nothing written yet: no separating space before the next field.
    empty: bool,
    result: fmt::Result,
}

impl Visitor<'_> {
    /// Whether `field` is written, after writing the space before it when it is.
    fn start(&mut self, field: &Field) -> bool {
        // tracing-log's metadata fields, which the line's prefix already shows.
        if self.result.is_err() || field.name().starts_with("log.") {
            return false;
        }
        if self.empty {
            self.empty = false;
        } else {
            self.result = self.writer.write_char(' ');
        }
        self.result.is_ok()
    }

    /// The field's name as written: a raw identifier without its `r#`.
    fn name(field: &Field) -> &'static str {
        let name = field.name();
        name.strip_prefix("r#").unwrap_or(name)
    }
}

/// A string whose `Debug` is itself in quotes, and which holds no control character.
fn plain(text: &str) -> bool {
    text.bytes().all(|byte| (0x20..0x7f).contains(&byte) && byte != b'"' && byte != b'\\')
}

/// The message as the default writes it: as it is, but for the characters a terminal would
/// act on, written as escapes.
fn write_message(writer: &mut Writer<'_>, text: &str) -> fmt::Result {
    if text.bytes().all(|byte| (0x20..0x7f).contains(&byte)) {
        return writer.write_str(text);
    }
    for character in text.chars() {
        match character {
            '\x1b' => writer.write_str("\\x1b")?,
            '\x07' => writer.write_str("\\x07")?,
            '\x08' => writer.write_str("\\x08")?,
            '\x0c' => writer.write_str("\\x0c")?,
            '\x7f' => writer.write_str("\\x7f")?,
            '\u{80}'..='\u{9f}' => write!(writer, "\\u{{{:x}}}", character as u32)?,
            other => writer.write_char(other)?,
        }
    }
    Ok(())
}

/// A writer that writes what it is given as [`write_message`] does.
struct Escaping<'a, 'writer>(&'a mut Writer<'writer>);

impl fmt::Write for Escaping<'_, '_> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        write_message(self.0, text)
    }
}

impl Visit for Visitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if !self.start(field) {
            return;
        }
        self.result = if field.name() == "message" {
            write_message(&mut self.writer, value)
        } else if plain(value) {
            let writer = &mut self.writer;
            writer
                .write_str(Self::name(field))
                .and_then(|()| writer.write_str("=\""))
                .and_then(|()| writer.write_str(value))
                .and_then(|()| writer.write_char('"'))
        } else {
            write!(self.writer, "{}={:?}", Self::name(field), value)
        };
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if !self.start(field) {
            return;
        }
        self.result = if field.name() == "message" {
            // Escaped as it is written, piece by piece (a piece is whole characters), rather
            // than formatted into a string of its own first: the audit line's `"audit"`.
            fmt::Write::write_fmt(&mut Escaping(&mut self.writer), format_args!("{value:?}"))
        } else {
            // The name and `=` as they are: one argument through `fmt` rather than three.
            let writer = &mut self.writer;
            writer
                .write_str(Self::name(field))
                .and_then(|()| writer.write_char('='))
                .and_then(|()| write!(writer, "{value:?}"))
        };
    }
}

impl VisitOutput<fmt::Result> for Visitor<'_> {
    fn finish(self) -> fmt::Result {
        self.result
    }
}

impl VisitFmt for Visitor<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        &mut self.writer
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    /// Lines written to memory (the log line tests' writer too).
    #[derive(Clone, Default)]
    pub(crate) struct Memory(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Memory {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Memory {
        type Writer = Memory;

        fn make_writer(&'a self) -> Memory {
            self.clone()
        }
    }

    /// Events and spans of every kind of value, in a span of fields of its own.
    fn log_everything() {
        let span = tracing::info_span!("request", request_id = %"e729-8af3", attempt = 2);
        let _entered = span.enter();
        let odd = "quote \" backslash \\ escape \x1b[31m bell \x07 del \x7f c1 \u{85} é tab\t";
        tracing::info!(target: "ucpd::audit", platform = "https://agent.example/profile.json", principal = "-",
            operation = "get_product", resource = odd, outcome = "ok", "audit");
        tracing::warn!(count = 3u64, ratio = 0.5, flag = true, signed = -4i64, shown = %odd, debugged = ?odd,
            r#type = "raw", "a message with {} and {:?}", odd, odd);
        tracing::info!(message = odd);
        tracing::error!("{odd}");
        tracing::info!("");
    }

    /// What a text subscriber writes for [`log_everything`] with `fields`, without timestamps.
    fn written<N>(fields: N) -> String
    where
        N: for<'writer> tracing_subscriber::fmt::FormatFields<'writer> + Send + Sync + 'static,
    {
        let memory = Memory::default();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .without_time()
            .with_writer(memory.clone())
            .fmt_fields(fields)
            .finish();
        tracing::subscriber::with_default(subscriber, log_everything);
        String::from_utf8(memory.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn lines_are_what_the_default_fields_write() {
        let ours = written(Fields);
        let default = written(tracing_subscriber::fmt::format::DefaultFields::new());
        assert_eq!(ours, default);
        assert!(ours.contains(r#"operation="get_product""#), "{ours}");
        assert!(ours.contains("request{request_id=e729-8af3 attempt=2}"), "{ours}");
        let audit = ours.lines().next().unwrap();
        assert!(!audit.contains('\x1b') && audit.contains(r#"\u{1b}[31m"#), "{audit}");
        assert_eq!(ours.lines().count(), 5, "{ours}");
    }
}
