//! RFC 8785 (JCS) canonical JSON of a parsed value, written straight into a sink (the
//! fingerprint's hash) in one pass: members sorted by their names' UTF-16 code units, every
//! number as ECMAScript formats an IEEE double (`ryu-js`), strings with only `"`, `\` and the
//! control characters escaped (the short escapes where JSON has them, `\u00xx` otherwise).
//!
//! The same bytes as `serde_jcs::to_vec` (a test compares the two over many values), which
//! serializes each object into a buffer of its own and copies it into its parent's: each
//! byte was copied once per level of nesting above it, so a keyed call of 1 MiB nested a
//! hundred levels deep (unknown members are fingerprinted too) cost ~100 MiB of copying, and
//! every write went through a boxed writer. Here each byte is written once.

use serde_json::Value;

/// Where canonical bytes go.
pub(super) trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for sha2::Sha256 {
    fn put(&mut self, bytes: &[u8]) {
        sha2::Digest::update(self, bytes);
    }
}

/// A number JCS cannot write (not finite); a parsed `Value` never holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NotFinite;

impl std::fmt::Display for NotFinite {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("a number that is not finite has no canonical JSON")
    }
}

/// Writes the canonical JSON of `value` into `sink`.
pub(super) fn write(value: &Value, sink: &mut impl Sink) -> Result<(), NotFinite> {
    match value {
        Value::Null => sink.put(b"null"),
        Value::Bool(true) => sink.put(b"true"),
        Value::Bool(false) => sink.put(b"false"),
        Value::Number(number) => number_into(number, sink)?,
        Value::String(text) => string_into(text, sink),
        Value::Array(items) => {
            sink.put(b"[");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    sink.put(b",");
                }
                write(item, sink)?;
            }
            sink.put(b"]");
        }
        Value::Object(map) => object_into(map.iter(), sink)?,
    }
    Ok(())
}

/// Writes an object of `members` (names unique), in canonical member order.
pub(super) fn object_into<'a>(
    members: impl Iterator<Item = (&'a String, &'a Value)>,
    sink: &mut impl Sink,
) -> Result<(), NotFinite> {
    let mut members: Vec<(&String, &Value)> = members.collect();
    members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    sink.put(b"{");
    for (index, (name, value)) in members.into_iter().enumerate() {
        if index > 0 {
            sink.put(b",");
        }
        string_into(name, sink);
        sink.put(b":");
        write(value, sink)?;
    }
    sink.put(b"}");
    Ok(())
}

#[expect(clippy::cast_precision_loss, reason = "JCS writes every number as an IEEE double, as serde_jcs does")]
fn number_into(number: &serde_json::Number, sink: &mut impl Sink) -> Result<(), NotFinite> {
    let value = if let Some(value) = number.as_u64() {
        value as f64
    } else if let Some(value) = number.as_i64() {
        value as f64
    } else {
        number.as_f64().ok_or(NotFinite)?
    };
    if !value.is_finite() {
        return Err(NotFinite);
    }
    sink.put(ryu_js::Buffer::new().format_finite(value).as_bytes());
    Ok(())
}

/// Writes `text` as a JSON string: runs of bytes that need no escape as they are.
pub(super) fn string_into(text: &str, sink: &mut impl Sink) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    sink.put(b"\"");
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut unicode = *b"\\u00xx";
    for (index, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\x08' => b"\\b",
            b'\x0c' => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => {
                unicode[4] = HEX[usize::from(byte >> 4)];
                unicode[5] = HEX[usize::from(byte & 0xf)];
                &unicode
            }
            _ => continue,
        };
        sink.put(&bytes[start..index]);
        sink.put(escape);
        start = index + 1;
    }
    sink.put(&bytes[start..]);
    sink.put(b"\"");
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;

    /// A small deterministic generator (xorshift64*), so a failure names its seed.
    struct Values(u64);

    impl Values {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn pick<T: Clone>(&mut self, items: &[T]) -> T {
            let index = usize::try_from(self.next() % items.len() as u64).unwrap();
            items[index].clone()
        }

        /// Names and strings that order differently in UTF-8 and UTF-16 (U+E000 against a
        /// surrogate pair), need every kind of escape, or none.
        fn text(&mut self) -> String {
            let pieces = [
                "",
                "a",
                "b",
                "B",
                "é",
                "\u{e000}",
                "\u{1f600}",
                "\u{ff}",
                "\u{1}",
                "\u{1f}",
                "\"",
                "\\",
                "/",
                "\u{7f}",
                "\u{2028}",
                "\n",
                "\t",
                "\u{8}",
                "\u{c}",
                "\r",
                "line_items",
                "€",
                "10",
            ];
            (0..self.next() % 4).map(|_| self.pick(&pieces)).collect()
        }

        fn value(&mut self, depth: u32) -> Value {
            let numbers = [
                json!(0),
                json!(-0.0),
                json!(1),
                json!(-1),
                json!(0.1),
                json!(1e21),
                json!(1e-7),
                json!(123_456_789.125),
                json!(5e-324),
                json!(1.797_693_134_862_315_7e308),
                json!(u64::MAX),
                json!(i64::MIN),
                json!(9_007_199_254_740_993_u64),
                json!(4500),
            ];
            match self.next() % if depth == 0 { 4 } else { 6 } {
                0 => Value::Null,
                1 => Value::Bool(self.next().is_multiple_of(2)),
                2 => self.pick(&numbers),
                3 => Value::String(self.text()),
                4 => Value::Array((0..self.next() % 4).map(|_| self.value(depth - 1)).collect()),
                _ => {
                    let mut map = Map::new();
                    for _ in 0..self.next() % 6 {
                        map.insert(self.text(), self.value(depth - 1));
                    }
                    Value::Object(map)
                }
            }
        }
    }

    // The canonical bytes, and so every fingerprint a record was stored under, are serde_jcs's.
    #[test]
    fn the_bytes_are_serde_jcs_bytes() {
        for seed in 1..=3_000_u64 {
            let value = Values(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1).value(5);
            let mut ours = Vec::new();
            write(&value, &mut ours).unwrap();
            let theirs = serde_jcs::to_vec(&value).unwrap();
            assert_eq!(String::from_utf8(ours).unwrap(), String::from_utf8(theirs).unwrap(), "seed {seed}: {value}");
        }
    }

    #[test]
    fn the_fingerprint_is_the_hash_of_serde_jcs_bytes() {
        use sha2::{Digest, Sha256};

        use crate::idempotency::{Arguments, fingerprint};
        use crate::operations::Operation;
        for seed in 1..=300_u64 {
            let mut values = Values(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut arguments = Map::new();
            arguments.insert("meta".into(), json!({ "idempotency-key": seed }));
            arguments.insert("checkout".into(), values.value(4));
            arguments.insert(values.text(), values.value(3));
            let without_meta: Map<String, Value> =
                arguments.iter().filter(|(name, _)| *name != "meta").map(|(n, v)| (n.clone(), v.clone())).collect();
            let expected = |arguments: Value| {
                let bytes =
                    serde_jcs::to_vec(&json!({ "operation": "complete_checkout", "arguments": arguments })).unwrap();
                hex::encode(Sha256::digest(bytes))
            };
            let mcp = fingerprint(Operation::CompleteCheckout, Arguments::Mcp(&arguments)).unwrap();
            assert_eq!(mcp, expected(Value::Object(without_meta)), "seed {seed}");
            let body = values.value(4);
            let rest = fingerprint(Operation::CompleteCheckout, Arguments::Rest(Some(&body))).unwrap();
            assert_eq!(rest, expected(body), "seed {seed}");
        }
        let none = fingerprint(Operation::CompleteCheckout, Arguments::Rest(None)).unwrap();
        assert_eq!(none, {
            let bytes = serde_jcs::to_vec(&json!({ "operation": "complete_checkout", "arguments": {} })).unwrap();
            hex::encode(Sha256::digest(bytes))
        });
    }
}
