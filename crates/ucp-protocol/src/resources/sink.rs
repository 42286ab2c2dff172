//! Where a catalog body is written ([`Sink`]): its JSON and, when the transport mirrors it as
//! text, its escape, written alongside from the rendered pieces' escapes
//! ([`super::rendered`]).

use serde::Serialize;

use super::Message;
use crate::escape::escape_into;

/// Where a catalog body is written: its JSON, and (when the transport mirrors the body as
/// text, as MCP's `content[0].text` does) the same JSON escaped as the inside of a JSON string,
/// written alongside from escaped pieces rather than escaped again at the end.
pub struct Sink {
    json: Vec<u8>,
    escaped: Option<Vec<u8>>,
}

impl Sink {
    /// A sink sized for about `capacity` bytes of JSON; `mirror` also writes the escape.
    pub fn new(capacity: usize, mirror: bool) -> Sink {
        let escaped = mirror.then(|| Vec::with_capacity(capacity + capacity / 4));
        Sink { json: Vec::with_capacity(capacity), escaped }
    }

    /// The JSON, and its escape when mirrored.
    pub fn into_parts(self) -> (Vec<u8>, Option<Vec<u8>>) {
        (self.json, self.escaped)
    }

    pub(super) fn mirrored(&self) -> bool {
        self.escaped.is_some()
    }

    /// Appends JSON text that has no rendering of its own (punctuation, the envelope).
    pub(crate) fn text(&mut self, json: &[u8]) {
        self.json.extend_from_slice(json);
        if let Some(escaped) = &mut self.escaped {
            escape_into(escaped, json);
        }
    }

    /// Appends a piece and, when mirrored, its escape.
    pub(super) fn piece(&mut self, json: &[u8], escaped: Option<&[u8]>) {
        self.json.extend_from_slice(json);
        if let (Some(out), Some(escaped)) = (&mut self.escaped, escaped) {
            out.extend_from_slice(escaped);
        }
    }

    /// Appends `value` as serde_json writes it.
    pub(crate) fn serialize(&mut self, value: &impl Serialize) -> serde_json::Result<()> {
        let start = self.json.len();
        serde_json::to_writer(&mut self.json, value)?;
        if let Some(escaped) = &mut self.escaped {
            escape_into(escaped, &self.json[start..]);
        }
        Ok(())
    }

    /// Appends `,"name":` and `value`.
    pub(crate) fn member(&mut self, name: &str, value: &impl Serialize) -> serde_json::Result<()> {
        self.text(b",");
        self.serialize(&name)?;
        self.text(b":");
        self.serialize(value)
    }

    /// Appends `{"ucp":` and the envelope: how every catalog body begins.
    pub(crate) fn open_body(&mut self, ucp: &impl Serialize) -> serde_json::Result<()> {
        self.text(b"{\"ucp\":");
        self.serialize(ucp)
    }

    /// Appends `,"products":[`, each item as `write` writes it, joined by commas, and `]`.
    pub(crate) fn products<T>(
        &mut self,
        items: &[T],
        mut write: impl FnMut(&mut Sink, &T) -> serde_json::Result<()>,
    ) -> serde_json::Result<()> {
        self.text(b",\"products\":[");
        for (position, item) in items.iter().enumerate() {
            if position > 0 {
                self.text(b",");
            }
            write(self, item)?;
        }
        self.text(b"]");
        Ok(())
    }

    /// Appends the body's `messages` (when it has any) and its closing brace: how every catalog
    /// body ends.
    pub(crate) fn close_body(&mut self, messages: &[Message]) -> serde_json::Result<()> {
        if !messages.is_empty() {
            self.member("messages", &messages)?;
        }
        self.text(b"}");
        Ok(())
    }

    /// Takes back the last byte written (a closing brace), so members can follow it.
    pub(crate) fn reopen(&mut self) {
        if self.json.last() == Some(&b'}') {
            self.json.pop();
            if let Some(escaped) = &mut self.escaped {
                escaped.pop();
            }
        }
    }
}
