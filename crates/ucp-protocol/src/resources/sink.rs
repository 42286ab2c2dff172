//! Where a catalog body is written ([`Sink`]): its JSON and, when the transport mirrors it as
//! text, its escape, written alongside from the rendered pieces' escapes
//! ([`super::rendered`]).

use serde::Serialize;

use super::Message;
use crate::envelope::{RenderedUcp, Ucp};
use crate::escape::{escape_into, json_string};

/// Fixed JSON text and its escape, the escape made by the compiler ([`escape_const`]):
/// `(json, escaped)` for [`Sink::literal`].
///
/// [`escape_const`]: crate::escape::escape_const
macro_rules! literal {
    ($json:expr) => {{
        const JSON: &[u8] = $json;
        const ESCAPED: [u8; $crate::escape::escaped_len(JSON)] = $crate::escape::escape_const(JSON);
        (JSON, &ESCAPED as &'static [u8])
    }};
}
pub(crate) use literal;

/// A body's `ucp` member as a [`Sink`] writes it: serialized (and escaped when mirrored), or
/// copied with its escape when it was rendered beforehand ([`RenderedUcp`]).
pub trait UcpMember: Serialize {
    fn rendered(&self) -> Option<&RenderedUcp> {
        None
    }
}

impl UcpMember for Ucp {}

impl UcpMember for serde_json::Value {}

impl UcpMember for RenderedUcp {
    fn rendered(&self) -> Option<&RenderedUcp> {
        Some(self)
    }
}

impl<T: UcpMember + ?Sized> UcpMember for &T {
    fn rendered(&self) -> Option<&RenderedUcp> {
        (**self).rendered()
    }
}

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

    /// Appends fixed JSON text (a key, punctuation) and, when mirrored, its escape, both made
    /// at compile time by [`literal!`].
    pub(crate) fn literal(&mut self, (json, escaped): (&[u8], &[u8])) {
        self.piece(json, Some(escaped));
    }

    /// Appends `text` as a JSON string literal (what serde_json writes for it).
    pub(crate) fn string(&mut self, text: &str) {
        let start = self.json.len();
        json_string(&mut self.json, text);
        if let Some(escaped) = &mut self.escaped {
            escape_into(escaped, &self.json[start..]);
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
        self.literal(literal!(b","));
        self.string(name);
        self.literal(literal!(b":"));
        self.serialize(value)
    }

    /// Appends `{"ucp":` and the envelope: how every catalog body begins.
    pub(crate) fn open_body(&mut self, ucp: &impl UcpMember) -> serde_json::Result<()> {
        self.literal(literal!(b"{\"ucp\":"));
        match ucp.rendered() {
            Some(rendered) => {
                self.piece(rendered.json().get().as_bytes(), Some(rendered.escaped()));
                Ok(())
            }
            None => self.serialize(ucp),
        }
    }

    /// Appends `,"products":[`, each item as `write` writes it, joined by commas, and `]`.
    pub(crate) fn products<T>(
        &mut self,
        items: &[T],
        mut write: impl FnMut(&mut Sink, &T) -> serde_json::Result<()>,
    ) -> serde_json::Result<()> {
        self.literal(literal!(b",\"products\":["));
        for (position, item) in items.iter().enumerate() {
            if position > 0 {
                self.literal(literal!(b","));
            }
            write(self, item)?;
        }
        self.literal(literal!(b"]"));
        Ok(())
    }

    /// Appends the body's `messages` (when it has any) and its closing brace: how every catalog
    /// body ends.
    pub(crate) fn close_body(&mut self, messages: &[Message]) -> serde_json::Result<()> {
        if !messages.is_empty() {
            self.member("messages", &messages)?;
        }
        self.literal(literal!(b"}"));
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
