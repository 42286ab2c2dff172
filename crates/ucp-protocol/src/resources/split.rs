//! A product serialized once, with where its variants sit: serde_json's compact output,
//! written through a formatter that notes the positions as it writes them, so nothing
//! searches the JSON afterwards. (A walk over the written JSON to find them cost two thirds of
//! the serialization itself; serializing each variant again cost as much.)

use std::cell::Cell;
use std::io::{self, Write};
use std::ops::Range;

use serde::Serialize;
use serde_json::ser::Formatter;

/// A document's compact JSON and where the elements of its top-level `variants` array are.
pub(crate) struct Split {
    pub(crate) json: Vec<u8>,
    /// The members before `variants`: `json[..before]`, without the comma before it.
    pub(crate) before: usize,
    /// Each variant's JSON.
    pub(crate) variants: Vec<Range<usize>>,
    /// The members after the variants, each with its leading comma, and the closing brace:
    /// `json[after..]`.
    pub(crate) after: usize,
}

/// Serializes `document` as `serde_json::to_vec` does and marks its `variants` member. `None`
/// when it has none at the top level, or it is the first member (which a product's never is).
pub(crate) fn split(document: &impl Serialize) -> Option<Split> {
    let written = Cell::new(0);
    let mut marks = Marks {
        written: &written,
        depth: 0,
        key_start: 0,
        key: String::new(),
        in_key: false,
        at_variants: false,
        in_variants: false,
        member_start: None,
        variants: Vec::new(),
        array_end: None,
    };
    let mut out = Tally { json: Vec::with_capacity(4096), written: &written };
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, &mut marks);
    document.serialize(&mut serializer).ok()?;
    let (before, after) = (marks.member_start?, marks.array_end?);
    let json = out.json;
    (before > 1 && json.get(before) == Some(&b',')).then_some(Split { json, before, variants: marks.variants, after })
}

/// A `Vec` that publishes its length after every write, for [`Marks`] to read.
struct Tally<'a> {
    json: Vec<u8>,
    written: &'a Cell<usize>,
}

impl Write for Tally<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.json.extend_from_slice(bytes);
        self.written.set(self.json.len());
        Ok(bytes.len())
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write(bytes).map(|_| ())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// serde_json's compact formatter (every method writes what its default writes), noting the
/// positions of the top-level `variants` member and of its array's elements.
struct Marks<'a> {
    written: &'a Cell<usize>,
    /// Containers open around what is written next.
    depth: usize,
    /// Where the current top-level key starts (at its comma), and its text so far.
    key_start: usize,
    key: String,
    in_key: bool,
    /// The top-level key just written is `variants`.
    at_variants: bool,
    /// The variants array is being written.
    in_variants: bool,
    member_start: Option<usize>,
    variants: Vec<Range<usize>>,
    array_end: Option<usize>,
}

impl Marks<'_> {
    fn at(&self) -> usize {
        self.written.get()
    }
}

impl Formatter for &mut Marks<'_> {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.depth == 1 && self.at_variants && self.member_start.is_none() {
            self.in_variants = true;
            self.member_start = Some(self.key_start);
        }
        self.depth += 1;
        writer.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth -= 1;
        writer.write_all(b"]")?;
        if self.depth == 1 && self.in_variants {
            self.in_variants = false;
            self.array_end = Some(self.at());
        }
        Ok(())
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if !first {
            writer.write_all(b",")?;
        }
        if self.depth == 2 && self.in_variants {
            let at = self.at();
            self.variants.push(at..at);
        }
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        if self.depth == 2 && self.in_variants {
            let at = self.at();
            if let Some(variant) = self.variants.last_mut() {
                variant.end = at;
            }
        }
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth += 1;
        writer.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth -= 1;
        writer.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if self.depth == 1 {
            self.key_start = self.at();
            self.key.clear();
            self.in_key = true;
        }
        if first { Ok(()) } else { writer.write_all(b",") }
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        if self.depth == 1 {
            self.in_key = false;
            self.at_variants = self.key == "variants";
        }
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        if self.in_key && self.key.len() <= "variants".len() {
            self.key.push_str(fragment);
        }
        writer.write_all(fragment.as_bytes())
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        char_escape: serde_json::ser::CharEscape,
    ) -> io::Result<()> {
        if self.in_key {
            // A key with an escape is not `variants`.
            self.key.push('\\');
        }
        serde_json::ser::CompactFormatter.write_char_escape(writer, char_escape)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::split;

    /// Members in a fixed order (serde_json's own map may sort its keys).
    #[derive(serde::Serialize)]
    struct Document {
        id: &'static str,
        m: serde_json::Value,
        s: &'static str,
        n: f64,
        variants: Vec<serde_json::Value>,
        z: Option<u8>,
        #[serde(rename = "\"variants\"")]
        quoted: Vec<u8>,
    }

    #[test]
    fn the_top_level_variants_are_marked_and_the_json_is_serde_jsons() {
        let document = Document {
            id: "a\\",
            m: json!({"variants": [1]}),
            s: ",\"variants\":[",
            n: -1.5e3,
            variants: vec![json!({"a": "]}\"", "variants": [[2]]}), json!({"b": [[]], "c": "\\"}), json!(7)],
            z: None,
            quoted: vec![3],
        };
        let split = split(&document).expect("a variants member");
        assert_eq!(split.json, serde_json::to_vec(&document).unwrap());
        let json = &split.json;
        assert_eq!(&json[..split.before], br#"{"id":"a\\","m":{"variants":[1]},"s":",\"variants\":[","n":-1500.0"#);
        assert_eq!(&json[split.before..split.variants[0].start], b",\"variants\":[");
        let variants: Vec<&[u8]> = split.variants.iter().map(|range| &json[range.clone()]).collect();
        assert_eq!(variants, [&br#"{"a":"]}\"","variants":[[2]]}"#[..], br#"{"b":[[]],"c":"\\"}"#, b"7"]);
        assert_eq!(&json[split.variants[2].end..split.after], b"]");
        assert_eq!(&json[split.after..], br#","z":null,"\"variants\"":[3]}"#);
    }

    #[test]
    fn without_a_top_level_variants_member_there_is_no_split() {
        assert!(split(&json!({"id": "x", "tags": ["variants"], "m": {"variants": []}})).is_none());
        assert!(split(&json!([{"variants": []}])).is_none());
        assert!(split(&json!("variants")).is_none());
    }
}
