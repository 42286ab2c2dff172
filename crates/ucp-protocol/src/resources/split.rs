//! A product serialized once, with where its variants sit: serde_json's compact output,
//! written through a formatter that notes the positions as it writes them, so nothing
//! searches the JSON afterwards. (A walk over the written JSON to find them cost two thirds of
//! the serialization itself; serializing each variant again cost as much.)
//!
//! Asked to, the formatter also writes the JSON's escape (the inside of a JSON string of it,
//! what MCP's text mirror holds) beside it, cut in the same places. It knows what each write
//! is: punctuation, numbers and the fragments of a string between its escapes need none, a
//! string's quotes become `\"` and an escape's backslash `\\`. So the escape costs a copy,
//! not a scan of the JSON for the bytes to escape (a seventh of a cold search).

use std::cell::Cell;
use std::io::{self, Write};
use std::ops::Range;

use serde::Serialize;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter};

use crate::escape::escape_into;

/// A document's compact JSON cut around the elements of its top-level `variants` array.
pub(crate) struct Cuts {
    pub(crate) bytes: Vec<u8>,
    /// The members before `variants`: `bytes[..before]`, without the comma before it.
    pub(crate) before: usize,
    /// Each variant.
    pub(crate) variants: Vec<Range<usize>>,
    /// The members after the variants, each with its leading comma, and the closing brace:
    /// `bytes[after..]`.
    pub(crate) after: usize,
    /// In the JSON (not its escape): each variant's `availability` member, from its leading
    /// comma to its value's end, when it has one (and it is not the variant's first member).
    pub(crate) availability: Vec<Option<Range<usize>>>,
}

/// A document's JSON, and its escape when asked for, each with its cuts.
pub(crate) struct Split {
    pub(crate) json: Cuts,
    pub(crate) escaped: Option<Cuts>,
}

/// Serializes `document` as `serde_json::to_vec` does (and escapes it when `escape`), and
/// marks its `variants` member. `None` when it has none at the top level, or it is the first
/// member (which a product's never is).
pub(crate) fn split(document: &impl Serialize, escape: bool) -> Option<Split> {
    let written = Cell::new(0);
    let mut marks = Marks {
        written: &written,
        escaped: escape.then(|| Vec::with_capacity(4608)),
        depth: 0,
        key_start: At::default(),
        key: String::new(),
        in_key: false,
        at_variants: false,
        in_variants: false,
        member_start: None,
        variants: Vec::new(),
        array_end: None,
        variant_key_start: 0,
        variant_key: String::new(),
        in_variant_key: false,
        at_availability: false,
        availability: Vec::new(),
    };
    let mut out = Tally { json: Vec::with_capacity(4096), written: &written };
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, &mut marks);
    document.serialize(&mut serializer).ok()?;
    let (before, after) = (marks.member_start?, marks.array_end?);
    if before.json <= 1 || out.json.get(before.json) != Some(&b',') {
        return None;
    }
    let json = Cuts {
        bytes: out.json,
        before: before.json,
        variants: marks.variants.iter().map(|(start, end)| start.json..end.json).collect(),
        after: after.json,
        availability: marks.availability,
    };
    let escaped = marks.escaped.map(|bytes| Cuts {
        bytes,
        before: before.escaped,
        variants: marks.variants.iter().map(|(start, end)| start.escaped..end.escaped).collect(),
        after: after.escaped,
        availability: Vec::new(),
    });
    Some(Split { json, escaped })
}

/// A position in the JSON and in its escape.
#[derive(Debug, Clone, Copy, Default)]
struct At {
    json: usize,
    escaped: usize,
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

/// serde_json's compact formatter (every method writes what its default writes), writing the
/// escape alongside when asked to, and noting the positions of the top-level `variants` member
/// and of its array's elements.
struct Marks<'a> {
    written: &'a Cell<usize>,
    escaped: Option<Vec<u8>>,
    /// Containers open around what is written next.
    depth: usize,
    /// Where the current top-level key starts (at its comma), and its text so far.
    key_start: At,
    key: String,
    in_key: bool,
    /// The top-level key just written is `variants`.
    at_variants: bool,
    /// The variants array is being written.
    in_variants: bool,
    member_start: Option<At>,
    variants: Vec<(At, At)>,
    array_end: Option<At>,
    /// Where the current key of a variant starts (at its comma, in the JSON), and its text.
    variant_key_start: usize,
    variant_key: String,
    in_variant_key: bool,
    /// The variant's key just written is `availability`.
    at_availability: bool,
    /// Each variant's `availability` member, as [`Cuts::availability`].
    availability: Vec<Option<Range<usize>>>,
}

impl Marks<'_> {
    fn at(&self) -> At {
        At { json: self.written.get(), escaped: self.escaped.as_ref().map_or(0, Vec::len) }
    }

    /// Writes `json` (ASCII that needs no escape) to both.
    fn both<W: ?Sized + Write>(&mut self, writer: &mut W, json: &[u8]) -> io::Result<()> {
        if let Some(escaped) = &mut self.escaped {
            escaped.extend_from_slice(json);
        }
        writer.write_all(json)
    }
}

/// Formatter methods that write what needs no escape (a number): the same to both.
macro_rules! plain {
    ($($method:ident($type:ty)),* $(,)?) => {$(
        fn $method<W: ?Sized + Write>(&mut self, writer: &mut W, value: $type) -> io::Result<()> {
            if let Some(escaped) = &mut self.escaped {
                CompactFormatter.$method(escaped, value)?;
            }
            CompactFormatter.$method(writer, value)
        }
    )*};
}

impl Formatter for &mut Marks<'_> {
    plain!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str),
    );

    fn write_null<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.both(writer, b"null")
    }

    fn begin_string<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if let Some(escaped) = &mut self.escaped {
            escaped.extend_from_slice(b"\\\"");
        }
        writer.write_all(b"\"")
    }

    fn end_string<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.begin_string(writer)
    }

    fn write_string_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        if self.in_key && self.key.len() <= "variants".len() {
            self.key.push_str(fragment);
        }
        if self.in_variant_key && self.variant_key.len() <= "availability".len() {
            self.variant_key.push_str(fragment);
        }
        // serde_json cuts a string at every character it escapes: a fragment holds none.
        self.both(writer, fragment.as_bytes())
    }

    fn write_char_escape<W: ?Sized + Write>(&mut self, writer: &mut W, char_escape: CharEscape) -> io::Result<()> {
        if self.in_key {
            // A key with an escape is not `variants`.
            self.key.push('\\');
        }
        if self.in_variant_key {
            self.variant_key.push('\\');
        }
        match &mut self.escaped {
            Some(escaped) => {
                let mut json = Vec::with_capacity(6);
                CompactFormatter.write_char_escape(&mut json, char_escape)?;
                escape_into(escaped, &json);
                writer.write_all(&json)
            }
            None => CompactFormatter.write_char_escape(writer, char_escape),
        }
    }

    fn write_raw_fragment<W: ?Sized + Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        if let Some(escaped) = &mut self.escaped {
            escape_into(escaped, fragment.as_bytes());
        }
        writer.write_all(fragment.as_bytes())
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.depth == 1 && self.at_variants && self.member_start.is_none() {
            self.in_variants = true;
            self.member_start = Some(self.key_start);
        }
        self.depth += 1;
        self.both(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth -= 1;
        self.both(writer, b"]")?;
        if self.depth == 1 && self.in_variants {
            self.in_variants = false;
            self.array_end = Some(self.at());
        }
        Ok(())
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if !first {
            self.both(writer, b",")?;
        }
        if self.depth == 2 && self.in_variants {
            let at = self.at();
            self.variants.push((at, at));
            self.availability.push(None);
        }
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        if self.depth == 2 && self.in_variants {
            let at = self.at();
            if let Some(variant) = self.variants.last_mut() {
                variant.1 = at;
            }
        }
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.both(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.depth -= 1;
        self.both(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if self.depth == 1 {
            self.key_start = self.at();
            self.key.clear();
            self.in_key = true;
        }
        // A member of a variant (not its first: a member that has no comma cannot be cut out).
        if self.depth == 3 && self.in_variants && !first {
            self.variant_key_start = self.written.get();
            self.variant_key.clear();
            self.in_variant_key = true;
        }
        if first { Ok(()) } else { self.both(writer, b",") }
    }

    fn end_object_key<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        if self.depth == 1 {
            self.in_key = false;
            self.at_variants = self.key == "variants";
        }
        if self.in_variant_key {
            self.in_variant_key = false;
            self.at_availability = self.variant_key == "availability";
        }
        Ok(())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.both(writer, b":")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        if self.depth == 3 && self.in_variants && self.at_availability {
            self.at_availability = false;
            let member = self.variant_key_start..self.written.get();
            if let Some(slot) = self.availability.last_mut() {
                *slot = Some(member);
            }
        }
        Ok(())
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
        let split = split(&document, true).expect("a variants member");
        let json = &split.json.bytes;
        assert_eq!(*json, serde_json::to_vec(&document).unwrap());
        let cuts = &split.json;
        assert_eq!(&json[..cuts.before], br#"{"id":"a\\","m":{"variants":[1]},"s":",\"variants\":[","n":-1500.0"#);
        assert_eq!(&json[cuts.before..cuts.variants[0].start], b",\"variants\":[");
        let variants: Vec<&[u8]> = cuts.variants.iter().map(|range| &json[range.clone()]).collect();
        assert_eq!(variants, [&br#"{"a":"]}\"","variants":[[2]]}"#[..], br#"{"b":[[]],"c":"\\"}"#, b"7"]);
        assert_eq!(&json[cuts.variants[2].end..cuts.after], b"]");
        assert_eq!(&json[cuts.after..], br#","z":null,"\"variants\"":[3]}"#);

        // The escape is the JSON's, cut in the same places.
        let escape = |bytes: &[u8]| {
            let mut out = Vec::new();
            crate::escape::escape_into(&mut out, bytes);
            out
        };
        let escaped = split.escaped.as_ref().expect("asked for");
        assert_eq!(escaped.bytes, escape(json));
        assert_eq!(escaped.bytes[..escaped.before], escape(&json[..cuts.before]));
        assert_eq!(escaped.bytes[escaped.after..], escape(&json[cuts.after..]));
        for (mine, theirs) in escaped.variants.iter().zip(&cuts.variants) {
            assert_eq!(escaped.bytes[mine.clone()], escape(&json[theirs.clone()]));
        }
        assert!(super::split(&document, false).expect("a variants member").escaped.is_none());
    }

    #[test]
    fn every_kind_of_value_is_escaped_as_the_json_is() {
        let document = json!({
            "variants": [{"text": "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} é 😀 </script>"}],
            "numbers": [0, -1, 18446744073709551615u64, -9223372036854775808i64, 1.5, -0.0, 1e300, 2.5e-8],
            "others": [true, false, null, {}, []],
            "id": "x",
        });
        let split = split(&document, true).expect("a variants member");
        assert_eq!(split.json.bytes, serde_json::to_vec(&document).unwrap());
        let mut expected = Vec::new();
        crate::escape::escape_into(&mut expected, &split.json.bytes);
        assert_eq!(split.escaped.expect("asked for").bytes, expected);
    }

    #[test]
    fn without_a_top_level_variants_member_there_is_no_split() {
        assert!(split(&json!({"id": "x", "tags": ["variants"], "m": {"variants": []}}), true).is_none());
        assert!(split(&json!([{"variants": []}]), true).is_none());
        assert!(split(&json!("variants"), true).is_none());
    }
}
